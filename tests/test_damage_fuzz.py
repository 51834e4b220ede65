"""A damaged log never loads as if it were whole: hypothesis damages any batch of any segment of a
multi-segment directory written by real Kafka 4.4, and every load is checked against an independent
replay: the same directory with the log cut off, on disk, right before the damaged batch.

Damage: a batch cut off (a torn write, possibly leaving 17 bytes or fewer), a flipped byte under the
CRC, a forged baseOffset (no CRC covers it: small shifts, far jumps), a lying lastOffsetDelta or
record count with the CRC resealed, a wrong batchLength.

* A normal load either fails with one located error naming the damaged file and batch (damage
  before the log's end), or, for damage at the very end of the last segment (which Kafka's log
  recovery would truncate), succeeds with a warning at that batch and the truncated image.  It never
  succeeds with any other image.
* A ``--salvage`` load always succeeds with exactly the truncated image.
"""

from __future__ import annotations

import shutil
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import FIXTURES
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_image_loader import image_state

from metashell.errors import MetashellError
from metashell.image.loader import load_directory
from metashell.log.scan import iter_batches

SOURCE = FIXTURES / "kafka-4.4-broker"
PART = "__cluster_metadata-0"

KINDS = ("torn", "crc", "base_offset", "last_offset_delta", "records_count", "batch_length")


@dataclass(frozen=True)
class Damage:
    segment: int  # index among the segments
    batch: int  # index among the segment's batches
    kind: str
    amount: int


def _segments(root: Path) -> list[Path]:
    return sorted((root / PART).glob("*.log"))


def whole_copy(factory: pytest.TempPathFactory) -> Path:
    """The fixture with its snapshots removed, so that every segment is replayed."""
    root = factory.mktemp("intact") / "logdir"
    shutil.copytree(SOURCE, root)
    for snap in (root / PART).glob("*.checkpoint"):
        snap.unlink()
    assert len(_segments(root)) >= 4
    return root


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return whole_copy(tmp_path_factory)


def _batches(path: Path) -> list[tuple[int, int, int]]:
    """(position, size, base offset) of each batch."""
    return [(b.position, b.size, b.base_offset) for b in iter_batches(path.read_bytes(), str(path))]


def _shifted(old: int, amount: int) -> int:
    """``old + amount`` as an int32, never ``old`` itself (the damage must change something)."""
    new = (old + amount + 2**31) % 2**32 - 2**31
    return new if new != old else (old + 2**31 + 1) % 2**32 - 2**31


def _reseal(data: bytearray, pos: int) -> None:
    size = struct.unpack_from(">i", data, pos + 8)[0] + 12
    struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : pos + size])))


def _damage(path: Path, pos: int, size: int, d: Damage) -> None:
    data = bytearray(path.read_bytes())
    if d.kind == "torn":
        del data[pos + 1 + d.amount % (size - 1) :]
    elif d.kind == "crc":
        data[pos + 21 + d.amount % (size - 21)] ^= 1 + d.amount % 255
    elif d.kind == "base_offset":
        base = struct.unpack_from(">q", data, pos)[0]
        shift = d.amount if d.amount else 1
        struct.pack_into(">q", data, pos, (base + shift) % (1 << 63))
    elif d.kind == "last_offset_delta":
        delta = struct.unpack_from(">i", data, pos + 23)[0]
        struct.pack_into(">i", data, pos + 23, _shifted(delta, d.amount))
        _reseal(data, pos)
    elif d.kind == "records_count":
        count = struct.unpack_from(">i", data, pos + 57)[0]
        struct.pack_into(">i", data, pos + 57, _shifted(count, d.amount))
        _reseal(data, pos)
    else:  # batch_length
        length = struct.unpack_from(">i", data, pos + 8)[0]
        struct.pack_into(">i", data, pos + 8, _shifted(length, d.amount))
    path.write_bytes(bytes(data))


def _truncated(intact: Path, where: Path, seg: int, pos: int) -> Path:
    """The independent replay's input: ``intact`` with the log cut off at byte ``pos`` of segment
    ``seg`` (later segments removed)."""
    shutil.copytree(intact, where)
    segments = _segments(where)
    with open(segments[seg], "r+b") as f:
        f.truncate(pos)
    for later in segments[seg + 1 :]:
        later.unlink()
    return where


@st.composite
def damages(draw: st.DrawFn) -> Damage:
    segment = draw(st.integers(0, 5))
    return Damage(
        segment,
        draw(st.integers(0, 200)),
        draw(st.sampled_from(KINDS)),
        draw(st.sampled_from([-(2**40), -3, -2, -1, 1, 2, 3, 17, 2**24 + 1, 2**40]) | st.integers(-500, 500)),
    )


class Damaged(NamedTuple):
    """A copy of a whole log with one damage applied: where, and in which batch."""

    root: Path
    file: Path
    segment: int
    segments: int
    batch: int
    batches: int
    position: int
    size: int


def damaged_copy(whole: Path, factory: pytest.TempPathFactory, d: Damage) -> Damaged:
    """``whole`` copied, and ``d`` applied to the batch it names (segment and batch modulo the counts)."""
    segments = _segments(whole)
    seg = d.segment % len(segments)
    batches = _batches(segments[seg])
    index = d.batch % len(batches)
    pos, size, _base = batches[index]
    work = factory.mktemp("damaged") / "logdir"
    shutil.copytree(whole, work)
    damaged = _segments(work)[seg]
    _damage(damaged, pos, size, d)
    return Damaged(work, damaged, seg, len(segments), index, len(batches), pos, size)


_reference_cache: dict[tuple[int, int], tuple[object, int]] = {}


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(d=damages())
def test_damage_anywhere_never_passes_for_a_real_log(
    intact: Path, tmp_path_factory: pytest.TempPathFactory, d: Damage
) -> None:
    work, damaged, seg, count, index, _batches_in_it, pos, size = damaged_copy(intact, tmp_path_factory, d)
    key = (seg, index)
    if key not in _reference_cache:
        ref_root = _truncated(intact, tmp_path_factory.mktemp("reference") / "logdir", seg, pos)
        ref = load_directory(ref_root)
        _reference_cache[key] = (image_state(ref.image), ref.image.provenance.offset)
    expected, expected_offset = _reference_cache[key]

    try:
        loaded = load_directory(work)
    except MetashellError as e:
        assert getattr(e, "source", None) == str(damaged), (d, str(e))
        # the batch, or a record inside it
        offset = getattr(e, "offset", None)
        assert offset is not None and pos <= offset <= pos + size, (d, str(e))
    else:
        # only damage at the very end of the log may load: as Kafka's recovery, cut at that batch
        assert seg == count - 1, (d, [str(w) for w in loaded.warnings])
        assert image_state(loaded.image) == expected, d
        assert any(
            w.source == str(damaged) and w.position is not None and pos <= w.position <= pos + size
            for w in loaded.warnings
        ), d

    salvaged = load_directory(work, salvage=True)
    assert image_state(salvaged.image) == expected, d
    assert salvaged.image.provenance.offset == expected_offset, d
