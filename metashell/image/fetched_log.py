"""Committed log batches fetched from the leader, applied by the path a directory's segment takes:
one code path for both feeds (issue 58).

The live client checks every whole committed batch on arrival (framing and CRC when it is fetched,
its records when it is committed: ``Observer._entries_of``) and, with the native engine, keeps no
record of it.  A run of such batches that lie one after the other in one Fetch response is applied
here from its bytes: the native bulk sink (``native/src/load/batches.rs``) takes every plain batch
that continues the log exactly, as it does for a segment read by ``log/reader.py``, and the
loader's ``apply_batch`` takes the rest (the run's first batch, control batches, transactions and
whatever the sink leaves to Python).  A session catching up a million records thus applies them
as a directory load does, instead of as a million tuples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from metashell.log.batch import RecordBatch
from metashell.log.batch_index import BatchIndex
from metashell.log.bulk import LogCursor
from metashell.log.problems import unheard
from metashell.log.scan import BatchScan, Tail

from .batch_loader import ImageLoader
from .native_batches import log_sink

__all__ = ["FetchedRun", "apply_fetched_run", "contiguous_runs", "fetched_cursor"]


class FetchedRun(NamedTuple):
    """Batches that lie back to back in one buffer (one slice of a Fetch response)."""

    buf: bytes
    start: int
    end: int
    base_offset: int
    """The first batch's base offset."""
    last_offset: int
    """The last batch's last offset."""


def contiguous_runs(batches: Sequence[RecordBatch]) -> list[FetchedRun]:
    """``batches`` grouped into runs that lie back to back in one buffer: each run is applied
    (``apply_fetched_run``) and kept (``LiveSpool.append``) whole, not a batch at a time."""
    runs: list[FetchedRun] = []
    first: RecordBatch | None = None
    end = 0
    for i, b in enumerate(batches):
        if first is not None and b._buf is first._buf and b._start == end:
            end += b.size
            continue
        if first is not None:
            runs.append(
                FetchedRun(first._buf, first._start, end, first.base_offset, batches[i - 1].last_offset)
            )
        first, end = b, b._start + b.size
    if first is not None:
        runs.append(FetchedRun(first._buf, first._start, end, first.base_offset, batches[-1].last_offset))
    return runs


def fetched_cursor(loader: ImageLoader, source: str, kind: str) -> LogCursor | None:
    """The cursor through which the native sink takes the plain batches of fetched bytes, as a
    segment's ("log") or a snapshot file's ("snapshot", its CRCs checked again as a file's are);
    None on the Python engine."""
    sink = log_sink(loader)
    if sink is None:
        return None
    return LogCursor(sink, BatchIndex(), source, 1 << 63, kind == "snapshot", 0, kind)


def apply_fetched_run(loader: ImageLoader, data: bytes, source: str) -> int:
    """Apply ``data``, whole committed batches already checked by the live client, in order;
    returns the last offset applied (-1 when ``data`` holds no batch).  The live client checked
    them on arrival, so nothing here is new to say (a warning would be told twice)."""
    scan = BatchScan(source, False, unheard, False, False, torn_ok=False)
    scan.bulk = cursor = fetched_cursor(loader, source, "log")
    last = -1
    for batch in scan.run(data, 0, 0, True, Tail(data, 0)):
        loader.apply_batch(batch)
        last = batch.last_offset
        if cursor is not None:
            cursor.next_offset, cursor.ready = last + 1, True  # Python read one: the sink goes on
        del batch  # it holds the buffer: not while the sink applies what follows
    # the sink's batches come after Python's first: where it stopped is the run's end
    return last if cursor is None else max(last, cursor.next_offset - 1)
