"""Hostile files: lying lengths, decompression bombs, zero-filled and non-regular files (issue 12).

Every input is built here (valid v2 batches with a recomputed CRC32C, so that only the property under
test is hostile).  Memory is measured as the peak RSS of a separate ``metashell`` process (a small
wrapper reports ``ru_maxrss`` of its one child), never by timing anything.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import cramjam
import pytest
from conftest import FIXTURES, REPO, address_limited_env
from crc32c import crc32c

from metashell.log.compression import LIMITS, InflateLimitError, _xxh32, decompress_records
from metashell.log.files import NotARegularFileError, iter_file_batches
from metashell.log.problems import CorruptBatchError, LogWarning
from metashell.log.scan import iter_batches

#: The bound the issue states for any single hostile batch.
RSS_BOUND_MB = 300
MIB = 1 << 20

_WRAPPER = (
    "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, "
    "text=True); sys.stdout.write(p.stdout); sys.stderr.write(p.stderr); "
    "print('MAXRSS', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(p.returncode)"
)


def run_measured(*args: str) -> tuple[int, str, float]:
    """Run ``metashell ARGS`` in its own process: (exit status, stderr, peak RSS in MB)."""
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "metashell", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    err, _, rss = proc.stderr.rpartition("MAXRSS ")
    return proc.returncode, err, int(rss) / 1024


def demo_copy(tmp_path: Path) -> Path:
    """A private copy of the demo fixture (log dir layout) to damage."""
    shutil.copytree(FIXTURES / "demo", tmp_path, dirs_exist_ok=True)
    return tmp_path


def frame(area: bytes, attributes: int = 0, count: int = 1, base_offset: int = 0) -> bytes:
    """A v2 batch around ``area`` (the records area as stored), CRC32C computed."""
    body = struct.pack(">hiqqqhii", attributes, count - 1, 0, 0, -1, -1, -1, count) + area
    return struct.pack(">qiibI", base_offset, len(body) + 9, 0, 2, crc32c(body)) + body


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def bomb(codec: str, inflated: int = 1 << 30) -> bytes:
    """A compressed records area of under 5 MB that inflates to ``inflated`` bytes of zeros."""
    if codec == "gzip":
        co = zlib.compressobj(9, zlib.DEFLATED, 31)
        chunk = bytes(16 * MIB)
        return b"".join(co.compress(chunk) for _ in range(inflated // len(chunk))) + co.flush()
    if codec == "snappy":  # xerial stream, one raw block whose preamble claims the whole size
        block = _uvarint(inflated) + b"\x00\x00"
        return b"\x82SNAPPY\x00" + struct.pack(">iii", 1, 1, len(block)) + block
    if codec == "lz4":  # one frame of repeated 4 MiB blocks
        desc = b"\x60\x70"
        block = bytes(cramjam.lz4.compress_block(bytes(4 * MIB), store_size=False))
        blocks = (struct.pack("<I", len(block)) + block) * (inflated // (4 * MIB))
        return struct.pack("<I", 0x184D2204) + desc + bytes([(_xxh32(desc) >> 8) & 0xFF]) + blocks + bytes(4)
    if codec == "zstd":  # concatenated frames
        return bytes(cramjam.zstd.compress(bytes(16 * MIB))) * (inflated // (16 * MIB))
    raise ValueError(codec)


CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
VALID = frame(b"", count=0, base_offset=1)  # a valid (empty) batch: "something follows"


@pytest.mark.parametrize("codec", list(CODECS))
def test_decompression_bomb_is_capped_in_memory(codec: str) -> None:
    area = bomb(codec)
    assert len(area) < 5 * MIB
    with pytest.raises(InflateLimitError, match=f"{codec} records inflate beyond {8 * MIB} bytes"):
        decompress_records(CODECS[codec], area, limit=8 * MIB)


@pytest.mark.parametrize("codec", list(CODECS))
def test_bomb_in_a_file_is_one_located_error_in_bounded_memory(codec: str, tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(frame(bomb(codec), attributes=CODECS[codec]) + VALID)
    status, err, rss = run_measured("-s", str(path), "-c", "ls /")
    assert status == 1, err
    assert err.count("\n") == 1 and err.startswith(
        f"error: {path}: byte offset 0: batch at base offset 0: {codec} records inflate beyond 67108864 bytes"
    ), err
    assert rss < RSS_BOUND_MB, f"{codec} bomb: peak RSS {rss:.0f} MB"


def test_bomb_as_the_torn_tail_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(frame(bomb("zstd"), attributes=4))
    status, err, rss = run_measured("-s", str(path), "-c", "ls /")
    assert status == 0 and "warning:" in err and "zstd records inflate beyond" in err
    assert rss < RSS_BOUND_MB


def test_the_cap_is_an_option(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(frame(bomb("gzip", 32 * MIB), attributes=1) + VALID)
    status, err, _ = run_measured("-s", str(path), "--max-batch-bytes", "16M", "-c", "ls /")
    assert status == 1 and "inflate beyond 16777216 bytes" in err
    status, err, _ = run_measured("-s", str(path), "--max-batch-bytes", "64M", "-c", "ls /")
    assert "inflate beyond" not in err  # now it inflates, and fails as the garbage it is
    status, err, _ = run_measured("-s", str(path), "--max-batch-bytes", "12", "-c", "ls /")
    assert status == 2 and err.count("\n") == 1


def test_lying_batch_length_allocates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "liar.log"
    with open(path, "wb") as f:  # 4 KiB on disk, header claims 2 GiB
        f.write(struct.pack(">qiib", 0, 0x7FFFFFFF, 0, 2) + bytes(100))
        f.truncate(4096)
    status, err, rss = run_measured("-s", str(path), "-c", "ls /")
    assert status == 0 and "batch length 2147483647 is beyond the largest batch" in err
    assert rss < 100, f"peak RSS {rss:.0f} MB"
    # (a length beyond the file is a torn write to Kafka too, so a lone file only warns; where the
    # scan is strict, the cap is an error: test_cap_applies_to_in_memory_buffers_too)


def test_length_beyond_the_file_is_not_read(tmp_path: Path) -> None:
    """Under the cap but beyond the end of the file: the torn tail, without reading 60 MB."""
    path = tmp_path / "torn.log"
    path.write_bytes(struct.pack(">qiib", 0, 60 * MIB, 0, 2) + bytes(100))
    warnings: list[str] = []
    assert list(iter_file_batches(path, warn=lambda w: warnings.append(str(w)), lenient_tail=True)) == []
    assert "partial" in warnings[0]
    with pytest.raises(CorruptBatchError, match="cut off"):  # not a log's last segment: damage
        list(iter_file_batches(path))


def test_cap_applies_to_in_memory_buffers_too() -> None:
    buf = struct.pack(">qiib", 0, LIMITS.max_batch_bytes, 0, 2) + bytes(100) + VALID
    with pytest.raises(CorruptBatchError, match="beyond the largest batch"):
        list(iter_batches(buf, "buf"))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_non_regular_files_are_refused(device: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"{device} does not exist on this system")
    with pytest.raises(NotARegularFileError):
        list(iter_file_batches(device))
    status, err, rss = run_measured("-s", device, "-c", "ls /")
    expected = f"error: {device}: not a regular file (a device, FIFO or socket cannot be a metadata log)\n"
    assert (status, err) == (1, expected)
    assert rss < 100


def test_sparse_zero_filled_segment_ends_at_once(tmp_path: Path) -> None:
    """A 20 GB sparse segment after one real batch: holes are skipped (SEEK_DATA), not read."""
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        f.write(VALID)
        f.truncate(20 * (1 << 30))
    batches = list(iter_file_batches(path, lenient_tail=True))
    assert len(batches) == 1
    status, err, rss = run_measured("-s", str(path), "-c", "ls /")
    assert status == 0 and rss < 100, err


def test_zero_filled_tail_that_is_not_sparse_is_looked_at_boundedly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metashell.log import files

    monkeypatch.setattr(files, "ZERO_TAIL_LOOK", 2 * MIB)
    path = tmp_path / "z.log"
    path.write_bytes(VALID + bytes(8 * MIB) + b"\x01")  # the byte past the look is not seen
    assert len(list(iter_file_batches(path, lenient_tail=True, chunk_size=1 * MIB))) == 1


def test_corpus_and_fixtures_still_read_without_warnings() -> None:
    """The caps are far above what Kafka writes: the real files load exactly as before."""
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    assert manifest
    for path in sorted(FIXTURES.rglob("*.log")) + sorted(FIXTURES.rglob("*.checkpoint")):
        seen: list[str] = []

        def note(w: LogWarning, seen: list[str] = seen) -> None:
            seen.append(str(w))

        list(iter_file_batches(path, lenient_tail=True, warn=note))
        assert not [w for w in seen if "beyond" in w or "inflate" in w], (path, seen)


def test_flipped_base_offset_is_one_located_error(tmp_path: Path) -> None:
    """baseOffset is outside the CRC: a flipped high byte must not silently empty the image."""
    from metashell.log.offset_rules import MAX_OFFSET_GAP

    segment = demo_copy(tmp_path) / "__cluster_metadata-0" / "00000000000000000026.log"
    batches = list(iter_file_batches(segment))
    pos = batches[2].position
    data = bytearray(segment.read_bytes())
    data[pos + 1] ^= 0xFF
    segment.write_bytes(data)
    status, err, _ = run_measured("-s", str(segment), "-c", "ls /topics")
    assert status == 1 and err.count("\n") == 1, err
    assert err.startswith(f"error: {segment}: byte offset {pos}: batch at base offset ") and "corrupt" in err
    # a small shift is corrupt too, and located at the forged batch itself: inside a segment Kafka
    # leaves no gap and repeats no offset (a gap between segments stays a warning: test_log_directory)
    assert MAX_OFFSET_GAP > 2
    for flip in (0x01, 0x02):
        data[pos + 1] ^= 0xFF if flip == 0x01 else 0
        data[pos + 7] ^= flip
        segment.write_bytes(data)
        status, err, _ = run_measured("-s", str(segment), "-c", "ls /topics")
        assert status == 1 and err.startswith(f"error: {segment}: byte offset {pos}: batch at base offset ")
        data[pos + 7] ^= flip


def test_deeply_nested_quorum_state_is_a_warning(tmp_path: Path) -> None:
    (demo_copy(tmp_path) / "__cluster_metadata-0" / "quorum-state").write_text("[" * 100_000 + "]" * 100_000)
    status, err, _ = run_measured("-d", str(tmp_path), "-c", "ls /topics")
    assert status == 0 and "quorum-state: JSON nested too deeply" in err and "internal error" not in err


@pytest.mark.parametrize(
    "endpoint",
    [
        "127.0.0.1",
        ":abc",
        "host:99999",
        "host:",
        ",",
        "a" * 64 + ":9093",
        "a..b:9093",
        "x" * 300 + ":1",
        "h:９０",
    ],
)
def test_malformed_controller_endpoint_is_bad_usage(endpoint: str) -> None:
    status, err, _ = run_measured("-q", endpoint, "-c", "ls /")
    assert status == 2 and err.count("\n") == 1 and "--bootstrap-controller" in err, err


def test_garbage_client_config_lines_are_reported() -> None:
    from metashell.live.config import ClientConfig
    from metashell.log.properties import parse_properties

    text = "garbage line here\nsecurity.protocol=PLAINTEXT\n\x1bjunk\nssl.truststore.type=PEM\nretries=3\n"
    config = ClientConfig.from_properties(parse_properties(text))
    assert config.ignored == ("garbage", "\x1bjunk", "retries")
    assert ClientConfig.from_properties(parse_properties("security.protocol=SSL\n")).ignored == ()


def test_garbage_meta_properties_and_wrong_typed_quorum_state_warn(tmp_path: Path) -> None:
    (demo_copy(tmp_path) / "meta.properties").write_bytes(bytes(range(256)) * 2)
    (tmp_path / "__cluster_metadata-0" / "quorum-state").write_text(
        '{"leaderId":"abc","leaderEpoch":[1],"votedId":true,"data_version":0,"currentVoters":"x"}'
    )
    status, err, _ = run_measured("-d", str(tmp_path), "-c", "ls /topics")
    assert status == 0
    for expected in (
        "leaderId 'abc' is not a number",
        "leaderEpoch [1] is not a number",
        "votedId True is not a number",
        "currentVoters is not a list",
        "meta.properties: holds none of meta.properties' keys",
    ):
        assert expected in err, err


_OOM_CHILD = """
import resource, sys
from metashell.cli import main
import metashell.image.loader, metashell.shell.commands, metashell.shell.sources, metashell.tree
import metashell.shell.progress_line
from metashell.shell import registry
registry.commands()  # every command module imported: the load, not an import, meets the limit
vm = next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmSize')) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + int(sys.argv[2]) * (1 << 20),) * 2)
sys.exit(main(['-d', sys.argv[1], 'ls', '/']))
"""


@pytest.mark.parametrize("headroom_mb", [12, 30, 35])
def test_out_of_memory_is_one_line_naming_the_file(tmp_path: Path, headroom_mb: int) -> None:
    """A genuine image too big for the memory there is (a 300k-partition directory under an address
    space limit a few MB above what the interpreter needs) fails with one line naming the file,
    not a traceback or a chain of MemoryErrors. (100k partitions loaded within 30 MB once a
    topic's partitions waited as rows: the image must outgrow the limit. At 35 MB a Rust allocation
    framing a batch's records failed and aborted the process before it was asked for fallibly.)"""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import metagen
    finally:
        sys.path.remove(str(REPO / "bench"))
    params = metagen.GenParams(topics=30_000, partitions=10, tail_records=1000, overlap_records=100)
    root = metagen.generate(params, tmp_path, log=lambda *a: None).root
    proc = subprocess.run(
        [sys.executable, "-c", _OOM_CHILD, root, str(headroom_mb)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=address_limited_env(),
    )
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr[-2000:]
    (line,) = proc.stderr.splitlines()
    assert line.startswith("error: ") and ".checkpoint" in line and "out of memory while loading" in line


def _zigzag(n: int) -> bytes:
    return _uvarint((n << 1) ^ (n >> 63))


def _tiny_record(i: int) -> bytes:
    body = b"\x00" + _zigzag(0) + _zigzag(i) + _zigzag(-1) + _zigzag(-1) + _zigzag(0)
    return _zigzag(len(body)) + body


def test_a_record_count_bomb_is_refused_by_its_count(tmp_path: Path) -> None:
    """A gzip batch declaring 2 million 7-byte records (under every byte cap): the batch cap bounds
    records too (LIMITS.max_records), so it is refused before one is decoded.  Before: 6 million
    such records cost about 900 MB and 25 s."""
    n = 2_000_000
    raw = b"".join(_tiny_record(i) for i in range(n))
    gz = zlib.compressobj(1, zlib.DEFLATED, 31)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(frame(gz.compress(raw) + gz.flush(), attributes=1, count=n))
    _status, err, rss = run_measured("-s", str(path), "-c", "ls /")
    assert f"{n} records, more than the {LIMITS.max_records} metashell reads in one batch" in err
    assert rss < 100, f"peak RSS {rss:.0f} MB"
    with pytest.raises(CorruptBatchError, match="more than the"):
        list(iter_batches(path.read_bytes(), "bomb"))


def test_gzip_members_are_read_in_linear_time() -> None:
    """One batch of 20 000 one-record gzip members (GZIPInputStream reads them all): every record
    comes out, and the work is linear (each member used to copy the rest of the input)."""
    import gzip

    n = 20_000
    area = b"".join(gzip.compress(_tiny_record(i), 1) for i in range(n))
    inflated = decompress_records(1, area)
    assert inflated == b"".join(_tiny_record(i) for i in range(n))
    (batch,) = iter_batches(frame(area, attributes=1, count=n), "members", warn=lambda w: None)
    assert len(batch.entries()) == n


def test_out_of_memory_opening_a_file_names_that_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory that runs out as the second file of the plan is opened: the message names that file
    (it named the last batch read, in the file before).  The fault is injected: a real one cannot
    be made to land exactly there."""
    from metashell.image.loader import LoadMemoryError, load_directory
    from metashell.log import open_metadata_dir
    from metashell.log.reader import PlanReader

    steps = open_metadata_dir(FIXTURES / "demo").plan().steps
    assert len(steps) >= 2
    real = PlanReader._batches

    def batches(self: PlanReader, step: Any, bulk: Any = None) -> Any:
        if step.source == steps[1].source:
            raise MemoryError
        return real(self, step, bulk)

    monkeypatch.setattr(PlanReader, "_batches", batches)
    with pytest.raises(LoadMemoryError) as caught:
        load_directory(FIXTURES / "demo")
    assert caught.value.source == steps[1].source != steps[0].source
    assert "out of memory while loading" in str(caught.value) and steps[1].source in str(caught.value)


@pytest.mark.parametrize(
    "message",
    [
        "error return without exception set",
        "NULL result without error in call",
        "<built-in function compile> returned NULL without setting an exception",
    ],
)
def test_a_c_library_failing_without_an_error_is_out_of_memory(
    monkeypatch: pytest.MonkeyPatch, message: str
) -> None:
    """Under a memory limit a C extension whose allocation fails may return failure without setting
    MemoryError, and CPython raises ``SystemError: error return without exception set`` (the busy CI
    run on the pure-Python engine said ``internal error: SystemError``): the load names the file as
    for a MemoryError.  Another SystemError is still a bug, and says so."""
    from metashell.image.loader import LoadMemoryError, load_directory
    from metashell.log import open_metadata_dir
    from metashell.log.reader import PlanReader

    steps = open_metadata_dir(FIXTURES / "demo").plan().steps
    real = PlanReader._batches

    def failing(text: str) -> Any:
        def batches(self: PlanReader, step: Any, bulk: Any = None) -> Any:
            if step.source == steps[-1].source:
                raise SystemError(text)
            return real(self, step, bulk)

        return batches

    monkeypatch.setattr(PlanReader, "_batches", failing(message))
    with pytest.raises(LoadMemoryError) as caught:
        load_directory(FIXTURES / "demo")
    assert "out of memory while loading" in str(caught.value) and steps[-1].source in str(caught.value)
    monkeypatch.setattr(PlanReader, "_batches", failing("some other bug"))
    with pytest.raises(SystemError):
        load_directory(FIXTURES / "demo")
