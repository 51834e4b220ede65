"""Kafka's ``--snapshot`` file mode: a lone file read as the deltas Kafka's shell applies.

Kafka's shell reads one ``.log`` or ``.checkpoint`` file through its ``MetadataLoader``: every batch
is part of a delta, a delta is published when a batch leaves no metadata transaction open, a delta
that changes partitions of topics the image does not know is dropped whole, and nothing is
published until a flushed delta reaches the file's last offset (``loader.py``, "Deltas Kafka cannot
apply" and "Kafka's catch-up gate").  :class:`FileDeltas` is that bookkeeping for one pass over a
file; the loader (``batch_loader.ImageLoader(kafka_file_mode=True)``) owns one and hands it each
data batch, and directory and live loads have none.  The native batch loop keeps the same state
for the runs it applies (``native/src/load/file_deltas.rs``), reading and writing these attributes
by name: ``skip_deltas``, ``bad_deltas``, ``delta_start``, ``last_flush``, ``last_batch_offset``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from metashell.log.records import Entry

if TYPE_CHECKING:
    from .replay import Replayer

__all__ = ["FileDeltas"]


class FileDeltas:
    """The deltas of one pass over a lone file."""

    __slots__ = (
        "bad_deltas",
        "delta_start",
        "last_batch_offset",
        "last_flush",
        "skip_deltas",
        "skipping_until",
    )

    def __init__(self, skip_deltas: Iterable[tuple[int, int]] = ()) -> None:
        self.skip_deltas: dict[int, int] = dict(skip_deltas)
        """Deltas (first batch's base offset -> last offset) to drop, as Kafka does (a pass found them)."""
        self.bad_deltas: list[tuple[int, int, tuple[bytes, ...]]] = []
        """Deltas found that Kafka cannot apply: (first offset, last offset, topic ids)."""
        self.delta_start: int | None = None
        self.skipping_until: int | None = None
        self.last_flush: int | None = None
        """Last offset of the last delta Kafka's loader would flush."""
        self.last_batch_offset: int | None = None
        """Last offset of the last batch read (the file reader's high watermark)."""

    @property
    def skipping(self) -> bool:
        """Whether the batches being read belong to a delta Kafka drops (``skip_deltas``)."""
        return self.skipping_until is not None

    @property
    def caught_up(self) -> bool:
        """Whether Kafka's loader would leave its catching-up state on this file."""
        hwm = self.last_batch_offset
        return hwm is not None and self.last_flush is not None and self.last_flush >= hwm - 1

    def apply(self, r: Replayer, batch: Any, records: Iterable[Entry], last_offset: int) -> int:
        """A data batch: part of the delta Kafka publishes when no metadata transaction is open;
        its records are replayed unless the delta is one to drop.  Returns the records counted."""
        p = r.image.provenance
        if self.skipping_until is None and batch.base_offset in self.skip_deltas:
            self.skipping_until = self.skip_deltas[batch.base_offset]
        if self.skipping_until is not None:
            n = sum(1 for _ in records)
            p.records += n
            p.batches += 1
            if last_offset >= self.skipping_until:
                self.skipping_until = None
                self.last_flush = last_offset
            return n
        if self.delta_start is None:
            self.delta_start = batch.base_offset
            r.orphan_topics.clear()
        n = r.replay_entries(records)
        p.records += n
        if r.end_batch(last_offset, batch.partition_leader_epoch, batch.max_timestamp):
            if r.orphan_topics:
                self.bad_deltas.append((self.delta_start, last_offset, tuple(r.orphan_topics)))
            self.delta_start = None
            self.last_flush = last_offset
        return n
