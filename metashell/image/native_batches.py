"""The native engine's batch loop, on the loader's side: the sink that applies runs of plain log
batches straight from a segment's bytes (``native/src/load/batches.rs``; the reader's side is
:mod:`metashell.log.bulk`).

Each batch is applied as the loader's ``apply_batch`` (:mod:`.batch_loader`) applies it: its records by the native replay loop (the replayer's own Python method for any record
the native rules do not take), then, for a log batch, what ``end_batch`` publishes and the journal's
mark (a directory's snapshot batch is only counted: the snapshot is published at its end), under
the image's lock.  The provenance is read once a call and written back at its end, and the marks
come back as columns for :meth:`Timeline.extend_marks <.timeline.Timeline.extend_marks>`: no
Python call per batch.  A ``--snapshot`` file's batches are Kafka's deltas: the loop keeps the
loader's delta state as ``FileDeltas.apply`` does (``native/src/load/file_deltas.rs``), and leaves the
batches of a delta to drop (the second pass) to Python.  The Python engine and time travel (records
past a point) read every batch in Python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from . import pacing
from .replay.native import _CONSTANTS, NATIVE

if TYPE_CHECKING:
    from metashell.log.bulk import BulkSink

    from .file_deltas import FileDeltas
    from .replay import Replayer
    from .timeline import Timeline

__all__ = ["LoaderState", "log_sink"]


class LoaderState(Protocol):
    """What the loop needs of :class:`~.batch_loader.ImageLoader`, which makes the sink (so this
    module names the loader's state, not the loader)."""

    replayer: Replayer
    timeline: Timeline | None
    file: FileDeltas | None
    """A lone file's deltas (``file_deltas.py``), which the loop keeps too; None otherwise."""


def log_sink(loader: LoaderState) -> BulkSink | None:
    """The sink for ``loader``'s reads, or None where every batch must go through Python."""
    if NATIVE is None:
        return None
    apply = NATIVE.apply_log_batches
    file = loader.file  # a lone file's deltas are kept by the loop too
    pace = pacing.current()

    def sink(buf: bytes, pos: int, end: int, base: int, limits: tuple[int, int, int, bool, int, bool]) -> Any:
        if pace is not None:
            pace()
        if file is not None and file.skipping:
            return pos, 0, limits[0], (), None  # the batches of a delta Kafka drops: Python skips them
        r = loader.replayer
        if file is not None and not limits[5]:  # a lone file's snapshot batches are deltas too
            limits = (*limits[:5], True)
        log = limits[5]  # else a directory's snapshot: its batches are only counted
        timeline = loader.timeline if log else None
        hooks = (
            r._replay_one_native,
            r.image.provenance,
            None if timeline is None else timeline.entries,
            file,
        )
        with r.image.lock:
            *done, marks = apply(buf, pos, end, base, limits, r, _CONSTANTS, r.intern_cache(), hooks)
            if marks is not None and timeline is not None:
                timeline.extend_marks(*marks)
        return done

    return sink
