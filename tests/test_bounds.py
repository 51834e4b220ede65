"""The memory bounds of docs/safety.md, measured: each runs in a child process under an address
space limit (``RLIMIT_AS``) a few MB above what the interpreter needed before the work began, and
must finish, or refuse with its one line, inside it.

A bound that did not hold fails here with the loader's "out of memory" line (or a child killed by
its MemoryError), not by a timing or an RSS figure that varies from machine to machine.  The live
ones talk to the in-process fake controller of test_live_fake (in this process, unlimited): real
Kafka cannot be made to keep appending without committing, or to announce a 4 GiB snapshot.
"""

from __future__ import annotations

import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from conftest import REPO, address_limited_env
from test_live_fake import FakeController, starts_after_a_snapshot, topic_record
from test_log_hostile import _tiny_record, frame

from metashell.log.compression import LIMITS
from metashell.log.encoding import build_batch
from metashell.protocol.metadata import encode_metadata_record

MIB = 1 << 20

_LIMIT = """
import resource
def limit(headroom_mb):
    vm = next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmSize')) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + headroom_mb * (1 << 20),) * 2)
"""

_CLI_CHILD = (
    _LIMIT
    + """
import sys
from metashell.cli import main
import metashell.image.loader, metashell.shell.commands, metashell.shell.sources, metashell.tree
limit(int(sys.argv[1]))
sys.exit(main(sys.argv[2:]))
"""
)


def run_limited(headroom_mb: int, *argv: str) -> subprocess.CompletedProcess[str]:
    """``metashell ARGV`` in a child whose address space may grow by ``headroom_mb`` only."""
    return subprocess.run(
        [sys.executable, "-c", _CLI_CHILD, str(headroom_mb), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=REPO,
        env=address_limited_env(),
    )


def test_the_batch_index_stays_within_its_bound(tmp_path: Path) -> None:
    """docs/safety.md: 45 bytes per batch read.  400,000 one-record batches load under a limit of
    40 MiB (reading in 4 MiB chunks) plus 64 bytes a batch (growth and resizing included); a named
    tuple per batch (~370 bytes) needed 148 MB more and failed here."""
    n = 400_000
    one = build_batch(0, 1, [encode_metadata_record("NoOpRecord", 0, {})], 1_700_000_000_000)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(struct.pack(">q", i) + one[8:] for i in range(n)))  # baseOffset: no CRC
    proc = run_limited(40 + n * 64 // MIB, "-s", str(path), "-c", "ls /")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-2000:]
    assert "topics" in proc.stdout


def test_a_record_count_bomb_is_refused_within_64_mib(tmp_path: Path) -> None:
    """2 million 7-byte records in one gzip batch (under every byte cap): refused by their count
    before one is decoded.  Decoded, they need about 300 MB."""
    n = 2_000_000
    gz = zlib.compressobj(1, zlib.DEFLATED, 31)
    raw = b"".join(_tiny_record(i) for i in range(n))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(frame(gz.compress(raw) + gz.flush(), attributes=1, count=n))
    proc = run_limited(64, "-s", str(path), "-c", "ls /")
    assert proc.returncode == 0, proc.stderr[-2000:]  # the last segment's tail: skipped, with a warning
    (line,) = proc.stderr.splitlines()
    assert (
        line.startswith("warning: ")
        and f"{n} records, more than the {LIMITS.max_records} metashell reads in one batch" in line
    )


_LIVE_CHILD = (
    _LIMIT
    + """
import sys, time, threading
from metashell.live import observer
from metashell.live.events import RecordsCommitted
from metashell.live.source import LiveSource

observer.MAX_PENDING_BYTES = int(sys.argv[3]) << 20
seen, peak = [0], [0]
done = threading.Event()
def sink(event):
    if isinstance(event, RecordsCommitted):  # counted, not kept: the bound is the observer's
        seen[0] += sum(b.record_count for b in event.batches)
        if seen[0] >= int(sys.argv[4]):
            done.set()
src = LiveSource(sys.argv[1], max_wait_ms=100)
src.start(sink)
while seen[0] < 1:
    time.sleep(0.01)
limit(int(sys.argv[2]))  # the source's threads and connection are made: from here on, the bound
print("ready", flush=True)
deadline = time.monotonic() + 120
while not done.is_set() and time.monotonic() < deadline:
    obs = src._observer
    if obs is not None:
        peak[0] = max(peak[0], obs.pending_bytes)
    time.sleep(0.01)
src.stop()
print(seen[0], peak[0], flush=True)
sys.exit(0 if done.is_set() else 3)
"""
)


@pytest.mark.timeout(300)
def test_records_above_a_stuck_high_watermark_stay_within_the_cap() -> None:
    """A controller that appends 256 MB but never commits (memory grew by 3.5 GB a minute): with
    the cap at 16 MiB the observer lives in 16 MiB plus one 8 MiB response, plus 56 MiB; once the
    leader commits, every record arrives.  (The cap is lowered in the child so that the fake need
    not send more than the real cap, 256 MiB.)"""
    ctrl = FakeController()
    try:
        ctrl.append([topic_record("first")])
        n, size = 1000, 256 * 1024
        proc = subprocess.Popen(
            [sys.executable, "-c", _LIVE_CHILD, ctrl.endpoint, "80", "16", str(n + 1)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=address_limited_env(),
        )
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n", proc.communicate(timeout=60)[1][-2000:]
        for i in range(n):  # 256 MB appended while the child fetches, none of it committed
            ctrl.append([topic_record(f"t{i:04d}" + "x" * size)], commit=False)
            if i % 50 == 0:
                time.sleep(0.01)
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()[1][-2000:]  # alive under the limit
        ctrl.commit()
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-2000:]
        seen, peak = map(int, out.split())
        assert seen == n + 1
        assert peak <= (16 + 9) * MIB, peak  # the cap, plus the response that crossed it
    finally:
        ctrl.kill()


def test_an_announced_snapshot_over_the_cap_is_refused_within_a_small_limit() -> None:
    """A snapshot announced at 4 GiB + 1 byte is refused before a page is kept, under a 64 MiB
    limit (it used to be paged into memory: 5 GB a minute)."""
    from metashell.live.observer import MAX_SNAPSHOT_BYTES

    ctrl = FakeController()
    try:
        starts_after_a_snapshot(ctrl)
        default = ctrl._FetchSnapshot

        def huge(version: int, body: dict) -> dict:  # type: ignore[type-arg]
            resp = default(version, body)
            resp["Topics"][0]["Partitions"][0]["Size"] = MAX_SNAPSHOT_BYTES + 1
            return resp

        ctrl.hooks["FetchSnapshot"] = huge
        proc = run_limited(64, "-q", ctrl.endpoint, "-c", "ls /")
        assert proc.returncode == 1, proc.stderr[-2000:]
        (line,) = proc.stderr.splitlines()
        assert f"more than the {MAX_SNAPSHOT_BYTES} live mode downloads" in line
    finally:
        ctrl.kill()


def test_a_batch_index_append_that_runs_out_of_memory_leaves_no_ragged_row() -> None:
    """Under a memory limit one column grew and the next did not: the out-of-memory message then
    read the last row across them and became "internal error: IndexError"."""
    from array import array

    from metashell.log.batch_index import BatchIndex

    class Full(array):  # type: ignore[type-arg]
        def append(self, value: int) -> None:
            raise MemoryError

    index = BatchIndex()
    index.append(("log", "a.log", 0, 0, 0, 1, 5, False, 1))
    index._epoch = Full("i", index._epoch)
    with pytest.raises(MemoryError):
        index.append(("log", "a.log", 72, 1, 1, 1, 6, False, 1))
    assert {len(c) for c in index._columns()} == {1}
    assert index[-1].position == 0


def test_index_columns_from_the_native_batch_loop_are_rows_like_any_other() -> None:
    """``BatchIndex.extend`` (the native batch loop's rows, as column bytes) gives the rows
    ``append`` gives; columns of different lengths are refused and leave the index as it was."""
    from array import array

    from metashell.log.batch_index import BatchIndex

    rows = [("log", "b.log", 80 * i, 10 + i, 10 + i, 3, 1000 + i, False, 1) for i in range(5)]
    appended, extended = BatchIndex(), BatchIndex()
    appended.append(("log", "a.log", 0, 0, 9, 3, 999, True, 10))
    extended.append(("log", "a.log", 0, 0, 9, 3, 999, True, 10))
    for row in rows:
        appended.append(row)
    columns = tuple(
        array(code, [int(row[i]) for row in rows]).tobytes()
        for i, code in zip((2, 3, 4, 5, 6, 8), "qqqiqi", strict=True)
    )
    extended.extend("log", "b.log", columns)
    assert list(extended) == list(appended)
    with pytest.raises(ValueError):
        extended.extend("log", "c.log", (columns[0], *columns[1:5], columns[5][:-4]))
    assert list(extended) == list(appended)


#: Each mode that reads a directory's batches: the load, moves in time, the log and history
#: views, the quorum and doctor reports (Spark's workers: test_spark_bounds).
DIRECTORY_MODES = {
    "one-shot": "ls /topics",
    "at": "at 0",
    "log": "log --all",
    "history": "history /topics/t",
    "quorum": "quorum",
    "doctor": "doctor",
}


@pytest.mark.parametrize("mode", sorted(DIRECTORY_MODES))
def test_a_record_count_bomb_is_bounded_in_every_directory_mode(tmp_path: Path, mode: str) -> None:
    """The record-count bomb at the end of a directory's log (2 million 7-byte records, ~300 MB
    decoded), under a 64 MiB limit, in each mode that reads the log: each ends inside the limit
    with the one warning, never the out-of-memory line."""
    from test_live_fake import topic_record

    n = 2_000_000
    gz = zlib.compressobj(1, zlib.DEFLATED, 31)
    area = gz.compress(b"".join(_tiny_record(i) for i in range(n))) + gz.flush()
    log_dir = tmp_path / "__cluster_metadata-0"
    log_dir.mkdir()
    good = build_batch(0, 1, [topic_record("t")], 1_700_000_000_000)
    (log_dir / "00000000000000000000.log").write_bytes(
        good + frame(area, attributes=1, count=n, base_offset=1)
    )
    proc = run_limited(64, "-d", str(log_dir), "-c", DIRECTORY_MODES[mode])
    assert "out of memory" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"{n} records, more than the {LIMITS.max_records} metashell reads in one batch" in proc.stderr
