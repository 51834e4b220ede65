"""``doctor`` as the integrity tool of record (issue 53): CONSISTENT on directories as Kafka leaves
them, retention-trimmed included, and INCONSISTENT, naming the file and byte, on damaged copies --
without ``--salvage``, with every damaged batch listed, and ``--exit-code`` as monitoring plugins
report (0 CONSISTENT, 1 CONSISTENT WITH NOTES, 2 INCONSISTENT, 3 NO DATA).

The directories are copies of fixtures real Kafka 4.4 wrote, then trimmed as Kafka's retention
trims them or damaged as a disk or a hand would."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from test_cli import run_cli
from test_damage_fuzz import Damage, damaged_copy, damages, whole_copy

from metashell.log.headers import batch_headers

SOURCE = FIXTURES / "kafka-4.4"


def _copy(tmp_path: Path, src: Path = SOURCE) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def _part(d: Path) -> Path:
    return d / "__cluster_metadata-0"


def _doctor(d: Path, *more: str) -> tuple[int, dict[str, Any], str]:
    status, out, err = run_cli("-d", str(d), "--json", "doctor", "--exit-code", *more)
    return status, json.loads(out), err


def _found(doc: dict[str, Any]) -> dict[str, list[str]]:
    return {f["key"]: f["items"] for f in doc["findings"]}


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture_is_consistent(name: str) -> None:
    status, doc, err = _doctor(FIXTURES / name)
    assert status == 0 and doc["word"] == "CONSISTENT", (doc, err)


def test_a_retention_trimmed_directory_is_consistent(tmp_path: Path) -> None:
    """As Kafka leaves it once the snapshot at 155 is the log start: the two segments wholly below it
    and the older snapshots deleted, and leader-epoch-checkpoint truncated from the start (epoch 1's
    entry moved up to 155, though its segment still holds epoch 1 from offset 130)."""
    d = _copy(tmp_path)
    part = _part(d)
    for name in ("00000000000000000000.log", "00000000000000000065.log"):
        (part / name).unlink()
    for snap in ("00000000000000000050-0000000001.checkpoint", "00000000000000000096-0000000001.checkpoint"):
        (part / snap).unlink()
    (part / "leader-epoch-checkpoint").write_text("0\n2\n1 155\n2 165\n")
    status, doc, err = _doctor(d)
    assert status == 0 and doc["word"] == "CONSISTENT", (doc, err)
    unchecked = _found(doc)["snapshot-unchecked"]
    assert any("retention deleted what came before" in u for u in unchecked), unchecked


def test_flipped_bytes_are_each_named_without_salvage(tmp_path: Path) -> None:
    """One batch damaged below the newest snapshot (no load reads it) and one after it (every load
    reads it, and refuses): doctor runs without --salvage and names both, file, byte and base offset."""
    d = _copy(tmp_path)
    old, last = _part(d) / "00000000000000000065.log", _part(d) / "00000000000000000215.log"
    hit = [(old, batch_headers([old])[2]), (last, batch_headers([last])[-2])]
    assert hit[1][1].base_offset >= 230  # after the newest snapshot
    for segment, h in hit:
        data = bytearray(segment.read_bytes())
        data[h.position + 70] ^= 0x5A  # inside the records: the CRC covers them
        segment.write_bytes(bytes(data))
    status, doc, err = _doctor(d)
    assert status == 2 and doc["word"] == "INCONSISTENT", doc
    damaged = _found(doc)["damaged-batches"]
    assert len(damaged) == 2
    for item, (segment, h) in zip(damaged, hit, strict=True):
        assert item.startswith(
            f"{segment.name} byte {h.position} (base offset {h.base_offset}): CRC mismatch"
        )
    assert "doctor reads what is whole around it" in err  # the load's refusal, said once
    status, _out, err = run_cli("-d", str(d), "health")
    assert status == 1 and last.name in err  # every other command still refuses the damaged log


def test_a_deleted_middle_segment_is_a_gap(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    gone = _part(d) / "00000000000000000130.log"
    first = batch_headers([gone])[0].base_offset
    gone.unlink()
    status, doc, _err = _doctor(d)
    assert status == 2
    (gap,) = _found(doc)["log-gaps"]
    assert gap.startswith(f"offsets {first}..") and "missing" in gap


def test_health_on_a_log_with_a_hole_says_its_image_is_partial(tmp_path: Path) -> None:
    """The image loaded across a deleted segment lacks what it held: health's verdict says so in its
    line and its JSON, instead of a bare HEALTHY/CRITICAL over a partial image.  (The newer snapshots
    go too: with one past the hole, the load would start there and its image be whole.)"""
    d = _copy(tmp_path)
    for name in ("00000000000000000130.log", "00000000000000000155-0000000001.checkpoint"):
        (_part(d) / name).unlink()
    (_part(d) / "00000000000000000230-0000000002.checkpoint").unlink()
    status, out, _err = run_cli("-d", str(d), "--json", "health")
    report = json.loads(out)
    assert status == 0 and report["missingFromLog"], report
    assert "partial image: offsets " in report["verdict"]
    whole = json.loads(run_cli("-d", str(SOURCE), "--json", "health")[1])
    assert whole["missingFromLog"] == [] and "partial" not in whole["verdict"]


def test_a_snapshot_the_log_does_not_continue_is_inconsistent(tmp_path: Path) -> None:
    """Only an old snapshot, and the log starting after it (the segment holding its end and every
    newer snapshot gone): the image is partial, so doctor cannot say CONSISTENT."""
    d = _copy(tmp_path)
    part = _part(d)
    oldest = min(part.glob("*.checkpoint"))
    end = int(oldest.name.split("-")[0])
    for snap in part.glob("*.checkpoint"):
        if snap != oldest:
            snap.unlink()
    for seg in sorted(part.glob("*.log")):
        if int(seg.name.split(".")[0]) <= end:
            seg.unlink()
    status, doc, _err = _doctor(d)
    assert status == 2 and doc["word"] == "INCONSISTENT", doc
    assert _found(doc)["partial-image"], doc


def test_a_forged_epoch_outside_the_crc(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    segment = _part(d) / "00000000000000000215.log"
    last = batch_headers([segment])[-1]
    data = bytearray(segment.read_bytes())
    data[last.position + 12 : last.position + 16] = struct.pack(">i", 7)
    segment.write_bytes(bytes(data))
    status, doc, _err = _doctor(d)
    assert status == 2
    items = _found(doc)["epoch-order"]
    assert any(f"byte {last.position}: leader epoch 7" in i and "quorum-state" in i for i in items), items


def test_a_directory_of_empty_files_is_no_data(tmp_path: Path) -> None:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    for name in ("00000000000000000000.log", "00000000000000000000.index", "leader-epoch-checkpoint"):
        (part / name).write_bytes(b"")
    status, doc, _err = _doctor(tmp_path)
    assert status == 3 and doc["word"] == "NO DATA" and not doc["clean"]


def test_history_and_log_on_a_trimmed_directory_start_where_the_log_continues(tmp_path: Path) -> None:
    """Retention left an old snapshot (50) behind the log start (130): a replay from it ran across
    offsets 50..129, which no file holds. history and log now start at the snapshot the log
    continues from (155), and say that what came before is not on disk."""
    d = _copy(tmp_path)
    part = _part(d)
    for name in (
        "00000000000000000000.log",
        "00000000000000000065.log",
        "00000000000000000096-0000000001.checkpoint",
    ):
        (part / name).unlink()
    (part / "leader-epoch-checkpoint").write_text("0\n2\n1 155\n2 165\n")
    status, out, err = run_cli("-d", str(d), "history", "/configs/topic/orders")
    assert status == 0, err
    lines = out.splitlines()
    assert lines and all(int(ln.split()[0]) >= 154 for ln in lines), out  # nothing from snapshot 50
    assert "(snapshot: the state at this offset; older records are not on disk)" in lines[0]
    status, out, err = run_cli("-d", str(d), "log")
    assert status == 0 and int(out.split()[0]) == 154 and "gap" not in err, err
    status, out, err = run_cli("-d", str(d), "log", "--from", "-1000d")  # before the oldest record
    assert status == 0 and int(out.split()[0]) >= 154
    assert "is before the oldest record on disk: from offset 49" in err  # snapshot 50 rebuilds 49
    status, out, err = run_cli("-d", str(d), "log", "--from", "10", "--to", "20")  # all of it before
    assert status == 1 and out == "" and "before the earliest this directory can rebuild, offset 49" in err


@pytest.fixture(scope="module")
def whole_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The damage fuzz's directory: its fixture with the snapshots removed (every segment is read)."""
    return whole_copy(tmp_path_factory)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(d=damages())
def test_doctor_never_calls_damage_consistent(
    whole_log: Path, tmp_path_factory: pytest.TempPathFactory, d: Damage
) -> None:
    """The damage fuzz's damages (a torn write, a flipped byte, a forged base offset, a lying
    lastOffsetDelta or record count resealed under a new CRC, a wrong batch length), anywhere in a
    real Kafka 4.4 log: doctor, without --salvage, is INCONSISTENT naming the damaged file -- or,
    for the very last batch of the log, which Kafka's recovery truncates, notes it."""
    work, damaged, seg, count, index, batches, _pos, _size = damaged_copy(whole_log, tmp_path_factory, d)
    status, out, err = run_cli("-d", str(work), "--json", "doctor", "--exit-code")
    assert "internal error" not in err and "Traceback" not in err, err
    doc = json.loads(out)
    # the log's last batch, or a batch of the last segment that reads as cut short (torn, or a length
    # past the file's end): as the load and Kafka's recovery, doctor takes it for a torn tail (a note)
    last = seg == count - 1 and (index == batches - 1 or d.kind in ("torn", "batch_length"))
    if doc["word"] != "INCONSISTENT":
        assert last, (d, doc["verdict"])
        return
    assert status == 2
    items = [i for f in doc["findings"] if f["severity"] == "error" for i in f["items"]]
    assert any(damaged.name in i for i in items), (d, items)


def test_doctor_on_a_path_that_is_not_there_is_one_line() -> None:
    status, out, err = run_cli("-d", "/nonexistent/metashell-doctor", "doctor")
    assert status == 1 and out == "" and err.count("\n") == 1 and "no such file or directory" in err
