"""Where a batch's offsets must lie, by Kafka's rules for the metadata log.

Kafka appends each batch at the log end offset and never compacts the metadata log, so the offsets
of a segment's batches are contiguous from the offset in its name, and each batch's lastOffsetDelta
is its record count less one.  No CRC covers baseOffset: these rules are what stops a forged one
from applying records over a gap, or dropping them, without an error.
"""

from __future__ import annotations

from typing import BinaryIO

from metashell.log.batch import RecordBatch
from metashell.log.directory import PlanStep
from metashell.log.files import iter_open_file_batches
from metashell.log.problems import CorruptBatchError, LogWarning, WarnFn

MAX_OFFSET_GAP = 1 << 24
"""A batch whose baseOffset lies further than this past the previous batch's end is corrupt, not a gap:
the metadata log is never compacted, so real gaps are small (a flipped high byte is not)."""


def check_offsets(batch: RecordBatch, step: PlanStep, expect: int | None, first: bool) -> None:
    """Raise :class:`CorruptBatchError` for a batch whose offsets cannot be true.

    Kafka appends each batch at the log end offset and rolls a segment at the offset of the batch it
    is made for, so inside a segment the batches are contiguous from the offset in its name
    (``expect``: where this one must start; None for the first batch of a lone ``-s`` file or of a
    read that starts mid-file), and none reaches the next segment.  A metadata log is never
    compacted, so lastOffsetDelta is the record count less one.  baseOffset is covered by no CRC and
    a forger can reseal the rest: believing them applies records over a gap, or drops them, with no
    error.  Returns quietly when the batch is fine after all."""
    base = batch.base_offset
    last = base + batch.last_offset_delta
    count = batch.records_count
    next_base = None if step.bounds is None else step.bounds[1]
    if last - base != count - 1:
        problem = (
            f"lastOffsetDelta {batch.last_offset_delta} does not match its {count} record(s) "
            f"(a metadata log is never compacted): its offsets cannot be trusted"
        )
    elif expect is not None and base != expect and first:
        problem = (
            f"the first batch of a segment named for offset {expect} starts at {base}: its "
            f"baseOffset, which no CRC covers, is corrupt"
        )
    elif expect is not None and base > expect:
        problem = (
            f"offsets {expect}..{base - 1} are missing inside its segment (the batch before it "
            f"ended at {expect - 1}): its baseOffset, which no CRC covers, is corrupt"
        )
    elif expect is not None and base < expect:
        problem = (
            f"offsets {base}..{min(last, expect - 1)} repeat offsets already in its segment (the "
            f"batch before it ended at {expect - 1}): its baseOffset, which no CRC covers, is corrupt"
        )
    elif next_base is not None and last >= next_base:
        problem = (
            f"offsets {base}..{last} reach past offset {next_base - 1}, where the next segment "
            f"begins: its baseOffset or lastOffsetDelta is corrupt"
        )
    else:
        return
    raise CorruptBatchError(f"batch at base offset {base}: {problem}", batch.source, batch.position)


def check_continuity(batch: RecordBatch, next_offset: int, first: bool, partial: bool) -> LogWarning | None:
    """The log across segments: ``batch`` must start at ``next_offset`` (where the batch read before it
    ended; ``first``: no log batch was read before it).  A batch that repeats offsets already read,
    or jumps far past them, has a forged baseOffset (no CRC covers it): raises
    :class:`CorruptBatchError`.  A small jump is a gap: returned as a warning (not for the first
    batch of a ``partial`` plan, which has no snapshot to continue)."""
    base = batch.base_offset
    last = base + batch.last_offset_delta
    if base < next_offset and not first:
        # Kafka appends each batch at the log's end offset; one that repeats offsets already read
        # has a forged baseOffset, and skipping it would drop its records with no error
        raise CorruptBatchError(
            f"batch at base offset {base}: offsets {base}..{last} repeat offsets already "
            f"read (the batch before it ended at {next_offset - 1}): its baseOffset, "
            f"which no CRC covers, is corrupt",
            batch.source,
            batch.position,
        )
    if base - next_offset > MAX_OFFSET_GAP and not first:
        raise CorruptBatchError(
            f"batch at base offset {base} jumps {base - next_offset} offsets past the batch "
            f"before it (which ended at {next_offset - 1}): its baseOffset, which no CRC "
            f"covers, is corrupt",
            batch.source,
            batch.position,
        )
    if base > next_offset and not (first and partial):
        return LogWarning(
            "gap", f"offsets {next_offset}..{base - 1} are missing from the log", batch.source, batch.position
        )
    return None


def check_snapshot_offsets(batch: RecordBatch, expect: int) -> None:
    """Raise :class:`CorruptBatchError` for a snapshot batch that does not continue the snapshot.

    Kafka writes a snapshot's batches with offsets contiguous from 0 (its header batch first), as
    every snapshot of every release line in the fixtures and the corpus has them.  The offsets mean
    nothing to the image, but no CRC covers baseOffset: one that does not continue the batch before
    it (``expect``: where that one ended, plus one) was damaged, and the bytes beside it that no CRC
    covers either (length, leader epoch) with it, so the snapshot is not loaded as if it were whole."""
    base = batch.base_offset
    if base == expect:
        return
    where = "the snapshot starts at offset 0" if expect == 0 else f"the batch before it ended at {expect - 1}"
    raise CorruptBatchError(
        f"snapshot batch at base offset {base} does not continue the snapshot ({where}): its "
        f"baseOffset, which no CRC covers, is corrupt",
        batch.source,
        batch.position,
    )


def check_snapshot_file(f: BinaryIO, source: str, warn: WarnFn) -> int:
    """Check a snapshot downloaded into ``f`` (a live ``FetchSnapshot``) as the directory reader
    checks a snapshot file -- framing and CRCs, records that read, offsets that continue
    (:func:`check_snapshot_offsets`) -- a chunk at a time, keeping no batch and no record: the loader
    reads the file again (``image/fetched_snapshot.py``).  Returns how many batches it holds.
    Raises :class:`CorruptBatchError` (a ``DecodeError``)."""
    expect = n = 0
    for batch in iter_open_file_batches(f, source, warn=warn, decode=False, torn_ok=True):
        check_snapshot_offsets(batch, expect)
        batch.check()
        expect = batch.base_offset + batch.last_offset_delta + 1
        n += 1
    return n
