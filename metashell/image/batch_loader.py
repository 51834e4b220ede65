"""Batches into the image: Kafka's ``MetadataBatchLoader``, for files and for live fetches alike.

:class:`ImageLoader` takes a batch and its records, decodes the values and hands them to the
:class:`~metashell.image.replay.Replayer`, publishing provenance as Kafka's loader does; it also
loads a live FetchSnapshot in place and keeps the per-batch index time travel uses.  The public
functions that drive it over a directory or a file are in :mod:`.loader`, which also explains
the rules (deltas Kafka cannot apply, the catch-up gate, time travel).
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from pathlib import Path
from typing import Any

from metashell.errors import DecodeError, out_of_memory
from metashell.log.directory import ReadPlan
from metashell.log.files import open_regular
from metashell.log.problems import LogWarning
from metashell.log.reader import BatchIndexEntry, BatchRead, PlanReader
from metashell.log.records import Entry

from . import pacing
from .file_deltas import FileDeltas
from .gcpause import gc_paused
from .image import MetadataImage, ProducerIdsImage, SnapshotInfo
from .native_batches import log_sink
from .replay import Replayer, ReplayWarning
from .timeline import Timeline

_CONTROL_SNAPSHOT_HEADER = 3


class LoadResult:
    """What a load produced.

    ``image``: the metadata image.  ``warnings``: everything skipped or suspicious, in order (print
    each with ``str(w)``).  ``fault_count``: records Kafka's replay would have rejected.
    ``index``: per-batch index for time travel.  ``plan``: the read plan (``plan.directory`` has
    the listing, meta.properties and quorum-state).  ``partial``: the image lacks the state
    before the first log offset (no snapshot covers it).  ``until_offset``: set for time travel.
    ``timeline``: the journal of the log after the snapshot (directory loads with
    ``timeline=True``), which moves ``image`` to earlier offsets in place (``timeline.py``).
    """

    __slots__ = (
        "batches",
        "elapsed",
        "fault_count",
        "files",
        "image",
        "index",
        "mode",
        "partial",
        "plan",
        "records",
        "salvage",
        "timeline",
        "until_offset",
        "warnings",
    )

    def __init__(
        self,
        *,
        image: MetadataImage,
        warnings: list[ReplayWarning],
        fault_count: int,
        index: Sequence[BatchIndexEntry],
        plan: ReadPlan,
        mode: str,
        files: list[str] | None = None,
        records: int = 0,
        batches: int = 0,
        partial: bool = False,
        until_offset: int | None = None,
        elapsed: float = 0.0,
        salvage: bool = False,
    ) -> None:
        self.image = image
        self.warnings = warnings
        self.fault_count = fault_count
        self.index = index
        self.plan = plan
        self.mode = mode
        self.files: list[str] = [] if files is None else files
        self.records = records
        self.batches = batches
        self.partial = partial
        self.until_offset = until_offset
        self.elapsed = elapsed
        self.salvage = salvage
        self.timeline: Timeline | None = None

    def __repr__(self) -> str:
        return f"LoadResult(mode={self.mode!r}, records={self.records}, batches={self.batches})"

    @property
    def faults(self) -> list[ReplayWarning]:
        return [w for w in self.warnings if w.kind == "fault"]


def starts_like_a_batch(path: Path) -> bool:
    """Whether the file's first bytes carry record-batch magic 2 (a damaged log, not another file)."""
    try:
        with open_regular(path) as f:
            head = f.read(17)
    except OSError:
        return False
    return len(head) == 17 and head[16] == 2


class NotAMetadataFileError(DecodeError):
    """``--snapshot`` was given a file that holds no record batch at all (e.g. ``meta.properties``)."""


#: Set aside while loading and released when memory runs out, so that the error message can still be
#: built and the reader closed (a MemoryError while handling a MemoryError prints a traceback chain).
#: Reserved as ``bytes``: calloc maps zero pages without touching them (``bytearray`` writes every
#: byte, 3 ms of each load), and the address space it holds is what an exhausted process lacks.
_MEMORY_RESERVE = 4 << 20


class LoadMemoryError(DecodeError):
    """The machine ran out of memory while loading: says where, and how big the image had grown."""

    @classmethod
    def at(cls, reader: PlanReader, image: MetadataImage) -> LoadMemoryError:
        source, position = reader.where()
        try:
            counts = image.summary()
            grown = f" ({counts['topics']:,} topic(s), {counts['partitions']:,} partition(s) so far)"
        except MemoryError:
            grown = ""
        return cls(
            f"out of memory while loading{grown}: this image needs more memory than the machine has",
            source,
            position,
        )


class ImageLoader:
    """Applies batches to one image through a :class:`Replayer`.

    ``kafka_file_mode`` selects Kafka's ``--snapshot`` semantics (see the module docstring): control
    batches do not publish provenance and snapshot batches are treated as log batches.
    """

    def __init__(
        self,
        image: MetadataImage | None = None,
        *,
        kafka_file_mode: bool = False,
        skip_deltas: Iterable[tuple[int, int]] = (),
        keep_timeline: bool = False,
    ) -> None:
        self.replayer = Replayer(image)
        self.file = FileDeltas(skip_deltas) if kafka_file_mode else None
        """File mode: the deltas Kafka's shell reads a lone file as (``file_deltas.py``)."""
        self.keep_timeline = keep_timeline and not kafka_file_mode
        """Journal the log batches (after the snapshot) into :attr:`timeline`."""
        self.timeline: Timeline | None = None
        self._snapshot_header_ts: int | None = None

    @property
    def kafka_file_mode(self) -> bool:
        return self.file is not None

    @property
    def image(self) -> MetadataImage:
        return self.replayer.image

    @property
    def warnings(self) -> list[ReplayWarning]:
        return self.replayer.warnings

    def log_warning(self, w: LogWarning) -> None:
        """Record a warning from the log layer (usable as a ``PlanReader`` ``warn`` callback)."""
        r = self.replayer
        if len(r.warnings) < r.max_warnings:
            r.warnings.append(ReplayWarning(w.message, None, w.source, w.kind, w.position))
        else:
            r.dropped_warnings += 1

    # ------------------------------------------------------------------ batches

    def apply_batch(
        self,
        batch: Any,
        records: Iterable[Entry] | None = None,
        *,
        last_offset: int | None = None,
        publish: bool = True,
    ) -> int:
        """Apply one batch; returns the number of records handed to the replayer.

        ``records`` defaults to ``batch.entries()``; pass a filtered list to skip records (below a
        snapshot's end offset, past a time-travel target).  ``last_offset`` overrides the offset
        published as provenance (default: the batch's last offset).  ``publish=False`` applies the
        records without publishing provenance (snapshot batches).
        """
        if records is None:
            records = batch.entries()
        with self.replayer.image.lock:
            return self._apply(batch, records, last_offset, publish)

    def _apply(self, batch: Any, records: Iterable[Entry], last_offset: int | None, publish: bool) -> int:
        r = self.replayer
        if publish and r.snapshot_mode:
            r.snapshot_mode = False  # a log batch after begin_snapshot(): no snapshot in progress
        if publish and self.keep_timeline and self.timeline is None:
            self.timeline = Timeline(r.image)
            r.journal = self.timeline.entries
        epoch = batch.partition_leader_epoch
        n = 0
        batch_last = batch.base_offset + batch.last_offset_delta
        if last_offset is None:
            last_offset = batch_last
        file = self.file
        if file is not None:
            file.last_batch_offset = batch_last
        if batch.is_control:
            for off, _ts, key, value in records:
                n += 1
                ctl = r.replay_control_bytes(key, value, off, epoch)
                if ctl is not None and ctl.type == _CONTROL_SNAPSHOT_HEADER and ctl.data:
                    self._snapshot_header_ts = ctl.data.get("LastContainedLogTimestamp")
            publish = publish and file is None
        elif file is not None and publish:
            return file.apply(r, batch, records, last_offset)
        else:
            n = r.replay_entries(records)
        p = r.image.provenance
        p.records += n
        if publish:
            r.end_batch(last_offset, epoch, batch.max_timestamp)
            if self.timeline is not None:
                self.timeline.mark(last_offset, r.in_transaction)
        else:
            p.batches += 1
        return n

    def apply_committed(self, committed: Any) -> int:
        """Apply a live ``CommittedBatch`` (batch + the committed part of its records)."""
        return self.apply_batch(committed.batch, committed.entries, last_offset=committed.last_offset)

    def apply_snapshot(
        self,
        batches: Iterable[tuple[Any, Iterable[Entry] | None]],
        end_offset: int,
        epoch: int,
        source: str | None = None,
    ) -> None:
        """Replace the image with a snapshot given as ``(batch, records or None)`` pairs."""
        self.begin_snapshot()
        self.replayer.source = source
        with gc_paused():
            for batch, records in batches:
                self.apply_batch(batch, records, publish=False)
        self.finish_snapshot(source, end_offset, epoch)

    def begin_snapshot(self) -> None:
        """A snapshot follows: it replaces the image's content (FORMATS 5.4), in place."""
        r = self.replayer
        with r.image.lock:
            r.image.clear_for_snapshot()
            r.abandon_transaction("a snapshot replaces the image")
            r.snapshot_mode = True
        self._snapshot_header_ts = None
        self.timeline = r.journal = None  # a journal from before the snapshot no longer applies

    def reset(self) -> None:
        """Forget everything (live ``ImageReset``): the image becomes empty, in place; the records
        that follow are replayed as a log from its start."""
        r = self.replayer
        self.timeline = r.journal = None  # its changes were to the image now forgotten
        with r.image.lock:
            image = r.image
            image.clear_for_snapshot()
            image.features.metadata_version = None
            image.features.zk_migration_state = 0
            image.producer_ids = ProducerIdsImage()
            p = image.provenance
            p.offset = p.epoch = p.timestamp = -1
            p.snapshot = None
            r.abandon_transaction("image reset")
            r.snapshot_mode = False
        self._snapshot_header_ts = None

    @property
    def snapshot_header_timestamp(self) -> int | None:
        """The last SnapshotHeader's LastContainedLogTimestamp read (None: none read yet)."""
        return self._snapshot_header_ts

    def finish_snapshot(self, path: str | None, end_offset: int, epoch: int) -> None:
        """All batches of the snapshot were applied: provenance = (end_offset - 1, epoch, header time)."""
        ts = self._snapshot_header_ts
        if ts is None:
            ts = -1
            self.replayer.warn("snapshot has no SnapshotHeader: its timestamp is unknown", None, "log")
        r = self.replayer
        r.source = path
        with r.image.lock:
            r.finish_snapshot(SnapshotInfo(path, end_offset, epoch, ts))
            r.snapshot_mode = False

    # ------------------------------------------------------------------ plans

    def run_plan(
        self, plan: ReadPlan, *, until_offset: int | None = None, salvage: bool = False
    ) -> PlanReader:
        """Read every batch of ``plan`` into the image; returns the (exhausted) reader.

        Running out of memory is reported as a :class:`LoadMemoryError` naming the file and batch
        being read, not as a bare ``MemoryError``.
        """
        reader = PlanReader(
            plan, warn=self.log_warning, until_offset=until_offset, salvage=salvage, bulk=log_sink(self)
        )
        items = reader.__iter__()  # the generator itself (iter() would type it as a plain Iterator)
        reserve = bytes(_MEMORY_RESERVE)
        try:
            self._read(reader, items)
        except (MemoryError, SystemError) as e:
            if not out_of_memory(e):
                raise
            del e
            del reserve  # headroom to build the message and unwind cleanly
            try:
                error = LoadMemoryError.at(reader, self.image)
            except MemoryError:
                error = LoadMemoryError("out of memory", *reader.where())
            # close the reader now: a generator closed later, by the GC, would print its MemoryError
            try:  # noqa: SIM105 - no context manager to set up while out of memory
                items.close()
            except MemoryError:
                pass
            raise error from None
        self.image.provenance.sources = list(reader.files_read)
        self.image.provenance.salvaged = list(reader.salvaged)
        return reader

    def _read(self, reader: PlanReader, items: Generator[BatchRead, None, None]) -> None:
        r = self.replayer
        current = None  # the PlanStep being read
        snapshot_step = None  # the snapshot step to finish when it ends
        until = reader.until_offset
        pace = pacing.current()
        with gc_paused():
            for item in items:
                if pace is not None:
                    pace()
                step = item.step
                if step is not current:
                    if snapshot_step is not None:
                        self._finish_snapshot_step(snapshot_step)
                        snapshot_step = None
                    current = step
                    self.replayer.source = step.source
                    r = self.replayer
                    if item.kind == "snapshot" and not self.kafka_file_mode and step.snapshot is not None:
                        self.begin_snapshot()
                        r = self.replayer
                        r.source = step.source
                        snapshot_step = step
                batch = item.batch
                if snapshot_step is not None:
                    self.apply_batch(batch, item.records, publish=False)
                else:
                    last = None
                    if until is not None and item.kind == "log":
                        last = min(batch.base_offset + batch.last_offset_delta, until)
                    self.apply_batch(batch, item.records, last_offset=last)
                # nothing here may hold the batch (and its chunk) while the reader goes on: the
                # native bulk applies the rest of the file inside the next ``next(items)``
                del item, batch
            if snapshot_step is not None:
                self._finish_snapshot_step(snapshot_step)

    def _finish_snapshot_step(self, step: Any) -> None:
        snap = step.snapshot
        self.finish_snapshot(step.source, snap.end_offset, snap.epoch)
