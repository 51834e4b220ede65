"""Runs of plain batches handed over whole: the reader's side of the native engine's batch loop.

A log tail is mostly batches that need no decision: whole, valid, continuing the log exactly, with
records that keep KRaft's invariants.  With the native engine the loader gives the reader a *sink*
that applies a run of such batches in one call (``metashell.image.native_batches``); the scan
offers it the buffer before each batch it would otherwise read in Python
(:meth:`BatchScan.run <metashell.log.scan.BatchScan.run>`), and the sink stops at the first batch
that is anything else, which the scan then reads as always.  This module keeps what the reader
must know of the batches the sink applied: the log's next offset, the index rows, the counters.

The reader turns a cursor on for a log segment only after it has read a batch of it itself (the
first batch of a file, gaps and overlaps, time travel and every warning stay on the Python path),
so the sink only ever continues a log exactly where Python left it.  A snapshot gets a cursor too,
after its first batch (the header): its data batches must continue the snapshot's offsets (else
the reader says it is corrupt); a directory's loader only counts each (it publishes the snapshot at
its end), a lone file's applies each as one of Kafka's deltas.  The sink takes at most
:data:`MAX_BATCHES` a call; the scan then reads one batch itself and offers the rest again.
"""

from collections.abc import Callable
from typing import Any, Protocol

from metashell.log.batch_index import BatchIndex
from metashell.log.compression import LIMITS
from metashell.log.progress import LOAD
from metashell.log.records import INT64_MAX

__all__ = ["MAX_BATCHES", "BatchRun", "BulkSink", "LogCursor"]


class BatchRun(Protocol):
    """What the scan offers its buffer to before each batch: the loader's :class:`LogCursor`, or
    the Spark ``records`` table's (``metashell.spark.native_records``)."""

    @property
    def ready(self) -> bool:
        """Whether to offer the buffer now."""
        ...

    def run(self, buf: bytes, pos: int, end: int, base: int) -> int:
        """Take the batches of ``buf[pos:end]`` it can (``base``: the file position of ``buf[0]``);
        returns where the scan goes on."""
        ...


BulkSink = Callable[[bytes, int, int, int, tuple[int, int, int, bool, int, bool]], Any]
"""``sink(buf, pos, end, base, (next offset, offset bound, max records, verify CRC, max batches,
log))``: applies the plain batches of ``buf[pos:end]`` (``base``: the file position of ``buf[0]``)
and returns ``_native.apply_log_batches``'s answer.  ``log``: log batches (their offsets continue
the log, each is published); else a snapshot's (each only counted: ``apply_batch(publish=False)``,
unless the loader reads a lone file, whose batches are all published)."""

MAX_BATCHES = 1024
"""Batches one call applies at most: the image's lock is held for the call (a few milliseconds)."""


class LogCursor:
    """Where the log stands while a segment is read, shared by the reader and the scan."""

    __slots__ = (
        "batches",
        "first_position",
        "high",
        "index",
        "kind",
        "next_offset",
        "ready",
        "records",
        "sink",
        "source",
        "verify_crc",
    )

    def __init__(
        self,
        sink: BulkSink,
        index: BatchIndex,
        source: str,
        high: int,
        verify_crc: bool,
        first_position: int,
        kind: str = "log",
    ) -> None:
        self.sink = sink
        self.kind = kind
        """"log", or "snapshot" for a directory's snapshot (read whole, published once at its end)."""
        self.index = index
        self.source = source
        self.high = min(high, INT64_MAX)  # no bound: 1 << 63; a last offset there goes to Python
        self.verify_crc = verify_crc
        self.first_position = first_position
        self.ready = False
        """Set by the reader once it has read a batch of this segment and the log continues."""
        self.next_offset = 0
        self.batches = self.records = 0
        """Applied by the sink since the reader last took them (:meth:`take`)."""

    def run(self, buf: bytes, pos: int, end: int, base: int) -> int:
        """Offer ``buf[pos:end]`` to the sink; returns where the scan goes on."""
        log = self.kind == "log"
        limits = (self.next_offset, self.high, LIMITS.max_records, self.verify_crc, MAX_BATCHES, log)
        stop, records, next_offset, columns, error = self.sink(buf, pos, end, base, limits)
        if stop != pos:
            self.index.extend(self.kind, self.source, columns)
            self.batches += len(columns[0]) // 8
            self.records += records
            self.next_offset = next_offset
            LOAD.position = base + stop - self.first_position
            LOAD.step_records += records
        if error is not None:
            raise error
        return int(stop)

    def take(self) -> tuple[int, int]:
        """(batches, records) applied since the last call, which the reader adds to its counts."""
        taken = self.batches, self.records
        self.batches = self.records = 0
        return taken
