"""--salvage: loading around corruption, on copies of a directory written by real Kafka 4.4.

Without --salvage, corruption before the end of the log, and a damaged snapshot, fail the load with
one line naming the file and offset (and pointing at --salvage).  With it, the log is loaded up to
the first corrupt batch, a damaged snapshot is replaced by the newest intact one, and warnings and
``/provenance`` say what was skipped.  The images a salvage load shows are checked against images
Kafka's log really held: the same directory loaded intact, up to the same offset.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest
from conftest import FIXTURES
from crc32c import crc32c
from test_cli import one_line, run_cli
from test_image_loader import image_state, prov

from metashell.image.loader import load_directory, load_file
from metashell.log import open_metadata_dir
from metashell.log.problems import CorruptBatchError, IncompleteSnapshotError
from metashell.log.scan import iter_batches

SOURCE = FIXTURES / "kafka-4.4-broker"
PART = "__cluster_metadata-0"


def copy(tmp_path: Path) -> Path:
    shutil.copytree(SOURCE, tmp_path / "logdir")
    return tmp_path / "logdir"


def newest_snapshot(root: Path) -> Path:
    return max((root / PART).glob("*.checkpoint"))


def batch_positions(path: Path) -> list[tuple[int, int, int]]:
    """(byte position, size, base offset) of every batch in ``path``."""
    return [(b.position, b.size, b.base_offset) for b in iter_batches(path.read_bytes(), str(path))]


def flip_inside_batch(path: Path, index: int) -> tuple[int, int]:
    """Corrupt batch ``index`` of ``path`` (a byte of its records flipped: the CRC no longer matches);
    returns that batch's (byte position, base offset)."""
    pos, size, base = batch_positions(path)[index]
    data = bytearray(path.read_bytes())
    data[pos + size - 3] ^= 0xFF
    path.write_bytes(bytes(data))
    return pos, base


def test_intact_fixture_has_what_the_tests_need() -> None:
    d = open_metadata_dir(SOURCE)
    assert len([s for s in d.snapshots if not s.is_bootstrap]) >= 2
    older = sorted(s.end_offset for s in d.snapshots if not s.is_bootstrap)[-2]
    assert len([s for s in d.segments if s.base_offset >= older]) >= 2


@pytest.mark.parametrize("damage", ["truncated", "no-footer", "corrupt", "forged-offset"])
def test_damaged_newest_snapshot(tmp_path: Path, damage: str) -> None:
    """A torn or cut-short newest snapshot never silently wins: a normal load fails naming it, a
    salvage load uses the older snapshot plus the log, which gives exactly the intact image."""
    root = copy(tmp_path)
    snap = newest_snapshot(root)
    batches = batch_positions(snap)
    data = snap.read_bytes()
    if damage == "truncated":
        snap.write_bytes(data[: len(data) // 2])
    elif damage == "no-footer":
        snap.write_bytes(data[: batches[-1][0]])  # cut at a batch boundary: the footer is gone
    elif damage == "forged-offset":  # the data batch's baseOffset, which no CRC covers
        forged = bytearray(data)
        struct.pack_into(">q", forged, batches[1][0], batches[1][2] + 1000)
        snap.write_bytes(bytes(forged))
    else:
        flip_inside_batch(snap, len(batches) // 2)

    with pytest.raises(IncompleteSnapshotError) as err:
        load_directory(root)
    assert snap.name in str(err.value) and "--salvage" in str(err.value)
    status, out, stderr = run_cli("-d", str(root), "ls", "/")
    assert status == 1 and out == "" and len(stderr.splitlines()) == 1
    assert one_line(stderr).startswith(f"error: {snap}") and "--salvage" in stderr

    intact = load_directory(SOURCE)
    salvaged = load_directory(root, salvage=True)
    assert image_state(salvaged.image) == image_state(intact.image)
    assert prov(salvaged.image) == prov(intact.image)
    p = salvaged.image.provenance
    assert p.snapshot is not None and p.snapshot.path != str(snap)  # the older one
    assert [s.skipped for s in p.salvaged] == [(snap.name,)]
    assert [w.kind for w in salvaged.warnings][:1] == ["salvaged"]

    status, out, stderr = run_cli("-d", str(root), "--salvage", "--json", "cat", "/provenance")
    assert status == 0
    shown = json.loads(out)["value"]["salvaged"]
    assert len(shown) == 1 and shown[0]["file"] == str(snap) and shown[0]["skipped"] == [snap.name]
    assert "--salvage: skipped this snapshot, loaded from the older snapshot" in stderr


@pytest.mark.parametrize("which", [0, 1, 2], ids=["header", "data", "footer"])
def test_a_snapshot_batch_that_does_not_continue_the_snapshot_is_an_error(tmp_path: Path, which: int) -> None:
    """A snapshot's batches are contiguous from offset 0 (every snapshot of the fixtures and the
    corpus): a batch's baseOffset moved (no CRC covers it) loaded silently, on both engines (the
    data batch through the native batch loop). It is one located error now, for a lone file too."""
    root = copy(tmp_path)
    snap = newest_snapshot(root)
    pos, _size, base = batch_positions(snap)[which]
    data = bytearray(snap.read_bytes())
    struct.pack_into(">q", data, pos, base + 7)
    snap.write_bytes(bytes(data))
    for args in (["-d", str(root)], ["-s", str(snap)]):
        status, out, err = run_cli(*args, "ls", "/")
        assert status == 1 and out == "" and err.count("\n") == 1, err
        assert err.startswith(f"error: {snap}: byte offset {pos}: "), err
        assert f"snapshot batch at base offset {base + 7} does not continue the snapshot" in err
    salvaged = load_file(snap, salvage=True)
    assert [w.kind for w in salvaged.warnings][:1] == ["salvaged"]


def test_corrupt_batch_in_a_middle_segment(tmp_path: Path) -> None:
    """Salvage keeps the log up to the corrupt batch: the image is the intact log's image at the
    offset before it, and the later segments are listed as skipped."""
    root = copy(tmp_path)
    (newest_snapshot(root)).unlink()  # make the log after the older snapshot matter
    d = open_metadata_dir(root)
    segments = [s for s in d.segments if s.base_offset >= d.latest_snapshot().end_offset]
    middle = segments[0].path
    assert len(segments) >= 2, "need a segment after the corrupted one"
    pos, base = flip_inside_batch(middle, 2)

    with pytest.raises(CorruptBatchError) as err:
        load_directory(root)
    assert err.value.source == str(middle) and err.value.offset == pos and "--salvage" in str(err.value)

    salvaged = load_directory(root, salvage=True)
    expected = load_directory(SOURCE, until_offset=base - 1)
    assert image_state(salvaged.image) == image_state(expected.image)
    assert salvaged.image.provenance.offset == base - 1
    (item,) = salvaged.image.provenance.salvaged
    assert (item.source, item.position) == (str(middle), pos)
    assert item.skipped == (f"the rest of {middle}", *(str(s.path) for s in segments[1:]))
    (warning,) = [w for w in salvaged.warnings if w.kind == "salvaged"]
    assert warning.source == str(middle) and warning.position == pos

    status, out, stderr = run_cli("-d", str(root), "--salvage", "--json", "cat", "/provenance")
    assert status == 0 and json.loads(out)["value"]["offset"] == base - 1
    assert f"byte offset {pos}" in stderr and "--salvage: loaded everything before it" in stderr


def test_single_file_salvage(tmp_path: Path) -> None:
    """-s FILE --salvage: the batches before the first corrupt one (a snapshot file read as Kafka's
    shell reads it, so its damage is not an IncompleteSnapshotError)."""
    snap = tmp_path / newest_snapshot(SOURCE).name
    shutil.copy(newest_snapshot(SOURCE), snap)
    batches = batch_positions(snap)
    pos, _ = flip_inside_batch(snap, len(batches) // 2)
    with pytest.raises(CorruptBatchError) as err:
        load_file(snap)
    assert not isinstance(err.value, IncompleteSnapshotError) and err.value.offset == pos
    result = load_file(snap, salvage=True)
    assert result.batches == len(batches) // 2 and result.image.provenance.salvaged[0].position == pos


def test_salvage_is_for_files_only() -> None:
    status, _, err = run_cli("-q", "127.0.0.1:9093", "--salvage", "ls")
    assert status == 2 and "--salvage applies to files" in err


def test_salvage_changes_nothing_on_intact_data() -> None:
    for fixture in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        normal, salvaged = load_directory(fixture), load_directory(fixture, salvage=True)
        assert image_state(salvaged.image) == image_state(normal.image)
        assert [str(w) for w in salvaged.warnings] == [str(w) for w in normal.warnings]
        assert not salvaged.image.provenance.salvaged


def _log_only(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A copy of the fixture with its snapshots removed: every segment is replayed."""
    root = copy(tmp_path)
    for snap in (root / PART).glob("*.checkpoint"):
        snap.unlink()
    return root, sorted((root / PART).glob("*.log"))


@pytest.mark.parametrize("left", [30, 10, 3], ids=["torn-batch", "torn-header", "17-bytes-or-fewer"])
def test_a_torn_batch_before_the_last_segment_is_an_error(tmp_path: Path, left: int) -> None:
    """The end of a segment that is not the last one cut off inside its last batch: one located
    error, exit 1 (it loaded with exit 0, the later segments applied over the gap); --salvage stops
    at the offset before the torn batch."""
    root, segments = _log_only(tmp_path)
    victim = segments[1]
    pos, size, base = batch_positions(victim)[-1]
    with open(victim, "r+b") as f:
        f.truncate(pos + (left if left < 18 else size - left))
    status, _, err = run_cli("-d", str(root), "ls", "/brokers")
    assert status == 1 and one_line(err).startswith(f"error: {victim}: byte offset {pos}: "), err
    assert "--salvage" in err
    salvaged = load_directory(root, salvage=True)
    expected = load_directory(SOURCE, until_offset=base - 1)
    assert image_state(salvaged.image) == image_state(expected.image)
    assert salvaged.image.provenance.offset == base - 1


def test_a_forged_base_offset_in_a_segments_first_batch_is_an_error(tmp_path: Path) -> None:
    """2**40 as the baseOffset of the first batch of 00000000000000000000.log (outside the CRC): it
    loaded as an empty image with 10 001 warnings and exit 0."""
    root, segments = _log_only(tmp_path)
    data = bytearray(segments[0].read_bytes())
    struct.pack_into(">q", data, 0, 2**40)
    segments[0].write_bytes(bytes(data))
    status, _, err = run_cli("-d", str(root), "ls", "/brokers")
    assert status == 1 and err.count("\n") == 1, err
    assert err.startswith(f"error: {segments[0]}: byte offset 0: batch at base offset {2**40}: ")
    status, out, err = run_cli("-d", str(root), "--salvage", "ls", "/topics")
    assert status == 0 and out == "" and err.count("warning:") == 1


def test_a_lying_last_offset_delta_with_a_resealed_crc_is_an_error(tmp_path: Path) -> None:
    """lastOffsetDelta raised by 50, CRC recomputed: it dropped the rest of the log with exit 0."""
    root, segments = _log_only(tmp_path)
    pos, size, base = batch_positions(segments[2])[3]
    data = bytearray(segments[2].read_bytes())
    delta = struct.unpack_from(">i", data, pos + 23)[0]
    struct.pack_into(">i", data, pos + 23, delta + 50)
    struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : pos + size])))
    segments[2].write_bytes(bytes(data))
    status, _, err = run_cli("-d", str(root), "ls", "/brokers")
    assert status == 1 and f"byte offset {pos}: batch at base offset {base}: lastOffsetDelta" in err
    salvaged = load_directory(root, salvage=True)
    assert salvaged.image.provenance.offset == base - 1


def test_log_follows_salvage(tmp_path: Path) -> None:
    """``log`` under ``--salvage`` lists the records before the damage (it read the log again without
    salvage, and its error told the user to use the --salvage they had given)."""
    root, segments = _log_only(tmp_path)
    pos, size, base = batch_positions(segments[1])[-1]
    with open(segments[1], "r+b") as f:
        f.truncate(pos + size - 5)
    status, out, err = run_cli("-d", str(root), "--salvage", "-c", "log")
    assert status == 0, err
    offsets = [int(line.split()[0]) for line in out.splitlines()]
    assert offsets[-1] == base - 1 and offsets == sorted(offsets)


def test_a_salvaged_verdict_carries_its_point(tmp_path: Path) -> None:
    """``--salvage health`` said HEALTHY (or CRITICAL) for a point far before the log's end, and only
    stderr said so: the verdict line, ``--json`` and the TUI's title now carry "as of offset N"."""
    import asyncio

    from tui_wait import settled

    from metashell.log.headers import batch_headers
    from metashell.shell.sources import open_directory
    from metashell.tui.app import MetashellApp

    root = tmp_path / "kafka-4.4"  # its log runs 20 offsets past its newest snapshot
    shutil.copytree(FIXTURES / "kafka-4.4", root)
    last = max((root / PART).glob("*.log"))
    headers = batch_headers([last])
    hit = headers[-2]  # after the newest snapshot, and not the last batch (a torn tail is not damage)
    assert hit.base_offset >= int(newest_snapshot(root).name.split("-")[0])  # (its end offset)
    data = bytearray(last.read_bytes())
    data[hit.position + 70] ^= 0xFF
    last.write_bytes(bytes(data))
    end = headers[-1].last_offset
    status, out, _err = run_cli("-d", str(root), "--salvage", "health")
    first = out.splitlines()[0]
    assert status == 0 and f"; as of offset {hit.base_offset - 1} (" in first
    assert first.endswith(f"{end - hit.base_offset + 1} later offset(s) unreadable (--salvage)"), first
    _status, out, _err = run_cli("-d", str(root), "--salvage", "--json", "health")
    assert json.loads(out)["asOf"].startswith(f"as of offset {hit.base_offset - 1} (")
    app = MetashellApp(open_directory(str(root), lambda _w: None, True, salvage=True))

    async def main() -> None:
        async with app.run_test(size=(160, 40)) as pilot:
            await settled(pilot)
            assert f"as of offset {hit.base_offset - 1} (" in app.sub_title

    asyncio.run(main())
