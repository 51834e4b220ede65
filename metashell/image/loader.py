"""Feed the image: from a metadata directory, from one file, or from live batches.

This is the glue between ``metashell.log`` (which files, which batches, which records: a
``ReadPlan`` walked by a ``PlanReader``) and :class:`~metashell.image.replay.Replayer` (what each
record does).  The image layer decodes record values here, so the log layer stays format-only.

Entry points
------------
``load_directory(path, until_offset=None) -> LoadResult``
    ``--directory``: the newest snapshot plus the log after it (Kafka's startup rules, FORMATS 1.2),
    as Kafka's raft client delivers it to its metadata loader: the snapshot sets provenance to
    (end offset - 1, snapshot epoch, SnapshotHeader timestamp), then every log batch -- control
    batches included -- publishes (last offset, partitionLeaderEpoch, max timestamp), except while a
    metadata transaction is open.  ``meta.properties`` and ``quorum-state`` fill ``image.quorum``.
``load_file(path) -> LoadResult``
    ``--snapshot FILE``, exactly as Kafka's shell reads one ``.checkpoint`` or ``.log``
    (``SnapshotFileReader``): every data batch is a commit that publishes its own (last offset,
    epoch, max timestamp) -- also inside a ``.checkpoint``, whose offsets are file-relative -- while
    control batches only report leader changes.  This keeps ``/image/provenance`` identical to the
    Java shell's.  Deltas Kafka cannot apply are dropped as Kafka drops them (below).
``ImageLoader.apply_batch(batch, records)``
    The live client's entry point: one fetched batch (a ``metashell.log.batch.RecordBatch`` or
    anything with ``base_offset``, ``last_offset_delta``, ``partition_leader_epoch``,
    ``max_timestamp``, ``is_control``) and its ``(offset, timestamp, key, value)`` records.
    ``apply_committed(committed_batch)`` takes a live ``CommittedBatch``; ``apply_snapshot(...)``
    (or ``begin_snapshot()``/``finish_snapshot(...)``) loads a FetchSnapshot, which replaces the
    image's content *in place* (FORMATS 5.4; the tree keeps its reference to the image);
    ``reset()`` empties it (live ``ImageReset``).  Each batch is applied under ``image.lock``.

Deltas Kafka cannot apply
-------------------------
A segment read alone (a ``.log`` whose topics were created in an earlier segment) may change
partitions of topics the image does not know.  Kafka's ``TopicsDelta`` then holds a ``TopicDelta``
without an image, ``MetadataDelta.apply`` throws, and ``MetadataLoader`` keeps the previous image:
every record of that delta -- the whole batch in ``--snapshot`` mode, or the batches of a metadata
transaction -- is lost, not just the bad one, and provenance does not move.  The replayer applies
records in place and cannot take a batch back, so ``load_file`` replays the file again with such
deltas skipped (``ImageLoader(skip_deltas=...)``), until no new one turns up -- usually one extra
pass, and only for files that have the problem.  Each dropped delta is one warning.  Directory and
live loads keep the records (Kafka's raft client groups batches into deltas by timing, so there is
no one answer to copy, and a complete log never has the problem).

Kafka's catch-up gate
---------------------
In ``--snapshot`` mode Kafka's ``MetadataLoader`` publishes nothing while it is "catching up": until
it flushes a delta (applied, dropped, or an aborted transaction's empty one) whose last offset is at
least the high watermark minus one, the high watermark being the last offset of the file's last
batch, control batches included.  A file that ends inside a metadata transaction (a ZooKeeper
migration's), or with two control batches after its last data batch, never gets there: the shell
keeps the empty image and its one-shot mode waits forever.  ``load_file`` records that as
``provenance.caught_up = False`` with one warning; ``/image`` then shows the empty image, like Kafka,
and the friendly tree what was read.

Warnings from both layers end up in one ordered list of :class:`ReplayWarning` (log-layer ones keep
their ``kind`` tag -- "torn-tail", "gap", "partial-image", ... -- and byte ``position``); nothing
here raises for bad records.  Corruption in the middle of a file still raises the log layer's
``CorruptBatchError`` (a ``MetashellError`` naming the file and byte offset).

Time travel (design)
--------------------
Kafka records are not invertible (a PartitionChangeRecord does not say what it replaced), so a
point in the past is reached one of two ways:

* **undone**, from the newest snapshot to the end of the log: a directory load with
  ``timeline=True`` has the replayer journal every change it makes after the snapshot
  (``timeline.py``: the value each change replaced, ~150 bytes a change), and
  ``LoadResult.timeline.move_to(T)`` swaps the journal's values in and out of the one image --
  a move costs the changes between the two points, not a reload;
* **rebuilt**, before that snapshot: ``rebuild_at(result, T)`` replays the newest snapshot whose
  end offset - 1 <= T (``MetadataLogDir.plan(T)``) plus the log up to T into a new image.  Every
  load keeps a per-batch index (``LoadResult.index``: kind, file, byte position, base/last offset,
  epoch, max timestamp, control flag, record count -- ~100 bytes a batch, no record data), and
  ``ReadPlan.seek(index)`` starts each segment at the batch holding the first needed offset; the
  reader stops at T, cutting the last batch at T's record, and provenance then says offset T.

``load_directory(path, until_offset=T)`` does the latter from scratch; it is the reference both are
tested against at every offset of every fixture.
"""

from __future__ import annotations

import bisect
import contextlib
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metashell.errors import DecodeError
from metashell.log.directory import PlanStep, ReadPlan, SnapshotFile, open_metadata_dir, plan_file
from metashell.log.files import open_regular
from metashell.log.problems import IncompleteSnapshotError, LogWarning, Salvaged
from metashell.log.reader import BatchIndexEntry, BatchRead, PlanReader
from metashell.log.records import Entry
from metashell.protocol.uuid import uuid_from_str, uuid_to_str

from .gcpause import gc_paused
from .image import MetadataImage, ProducerIdsImage, SnapshotInfo
from .model import Voter
from .replay import Replayer, ReplayWarning
from .timeline import Timeline

__all__ = ["ImageLoader", "LoadResult", "load_directory", "load_file", "load_plan", "rebuild_at"]

_CONTROL_SNAPSHOT_HEADER = 3


@dataclass
class LoadResult:
    """What a load produced.

    ``image``: the metadata image.  ``warnings``: everything skipped or suspicious, in order (print
    each with ``str(w)``).  ``fault_count``: records Kafka's replay would have rejected.
    ``index``: per-batch index for time travel.  ``plan``: the read plan (``plan.directory`` has
    the listing, meta.properties and quorum-state).  ``partial``: the image lacks the state
    before the first log offset (no snapshot covers it).  ``until_offset``: set for time travel.
    """

    image: MetadataImage
    warnings: list[ReplayWarning]
    fault_count: int
    index: Sequence[BatchIndexEntry]
    plan: ReadPlan
    mode: str
    files: list[str] = field(default_factory=list)
    records: int = 0
    batches: int = 0
    partial: bool = False
    until_offset: int | None = None
    elapsed: float = 0.0
    salvage: bool = False
    timeline: Timeline | None = None
    """The journal of the log after the snapshot (directory loads with ``timeline=True``): moves
    ``image`` to earlier offsets in place (``timeline.py``)."""

    @property
    def faults(self) -> list[ReplayWarning]:
        return [w for w in self.warnings if w.kind == "fault"]


def _starts_like_a_batch(path: Path) -> bool:
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
        self.kafka_file_mode = kafka_file_mode
        self.keep_timeline = keep_timeline and not kafka_file_mode
        """Journal the log batches (after the snapshot) into :attr:`timeline`."""
        self.timeline: Timeline | None = None
        self._snapshot_header_ts: int | None = None
        self.skip_deltas: dict[int, int] = dict(skip_deltas)
        """File mode: deltas (first batch's base offset -> last offset) to drop, as Kafka does."""
        self.bad_deltas: list[tuple[int, int, tuple[bytes, ...]]] = []
        """File mode: deltas found that Kafka cannot apply: (first offset, last offset, topic ids)."""
        self._delta_start: int | None = None
        self._skipping_until: int | None = None
        self.last_flush: int | None = None
        """File mode: last offset of the last delta Kafka's loader would flush."""
        self.last_batch_offset: int | None = None
        """File mode: last offset of the last batch read (the file reader's high watermark)."""

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
        if self.kafka_file_mode:
            self.last_batch_offset = batch_last
        if batch.is_control:
            for off, _ts, key, value in records:
                n += 1
                ctl = r.replay_control_bytes(key, value, off, epoch)
                if ctl is not None and ctl.type == _CONTROL_SNAPSHOT_HEADER and ctl.data:
                    self._snapshot_header_ts = ctl.data.get("LastContainedLogTimestamp")
            publish = publish and not self.kafka_file_mode
        elif self.kafka_file_mode and publish:
            return self._apply_file_delta(batch, records, last_offset)
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

    def _apply_file_delta(self, batch: Any, records: Iterable[Entry], last_offset: int) -> int:
        """A data batch in ``--snapshot`` mode: part of the delta Kafka publishes when no metadata
        transaction is open; see "Deltas Kafka cannot apply" in the module docstring."""
        r = self.replayer
        p = r.image.provenance
        if self._skipping_until is None and batch.base_offset in self.skip_deltas:
            self._skipping_until = self.skip_deltas[batch.base_offset]
        if self._skipping_until is not None:
            n = sum(1 for _ in records)
            p.records += n
            p.batches += 1
            if last_offset >= self._skipping_until:
                self._skipping_until = None
                self.last_flush = last_offset
            return n
        if self._delta_start is None:
            self._delta_start = batch.base_offset
            r.orphan_topics.clear()
        n = r.replay_entries(records)
        p.records += n
        if r.end_batch(last_offset, batch.partition_leader_epoch, batch.max_timestamp):
            if r.orphan_topics:
                self.bad_deltas.append((self._delta_start, last_offset, tuple(r.orphan_topics)))
            self._delta_start = None
            self.last_flush = last_offset
        return n

    @property
    def kafka_caught_up(self) -> bool:
        """File mode: whether Kafka's loader would leave its catching-up state on this file
        (module docstring, "Kafka's catch-up gate")."""
        hwm = self.last_batch_offset
        return hwm is not None and self.last_flush is not None and self.last_flush >= hwm - 1

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
        reader = PlanReader(plan, warn=self.log_warning, until_offset=until_offset, salvage=salvage)
        items = reader.__iter__()  # the generator itself (iter() would type it as a plain Iterator)
        reserve = bytearray(_MEMORY_RESERVE)
        try:
            self._read(reader, items)
        except MemoryError:
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
        with gc_paused():
            for item in items:
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
            if snapshot_step is not None:
                self._finish_snapshot_step(snapshot_step)

    def _finish_snapshot_step(self, step: Any) -> None:
        snap = step.snapshot
        self.finish_snapshot(step.source, snap.end_offset, snap.epoch)


# ---------------------------------------------------------------------- quorum from small files


def _apply_meta_properties(image: MetadataImage, plan: ReadPlan) -> None:
    """meta.properties -> cluster id, node id, directory id (before the log: they hold at every
    offset, so the journal of the quorum's changes carries them too)."""
    d = plan.directory
    if d is None or d.meta is None:
        return
    q = image.quorum
    q.cluster_id = d.meta.cluster_id
    q.node_id = d.meta.node_id
    if d.meta.directory_id:
        with contextlib.suppress(ValueError):
            q.directory_id = uuid_from_str(d.meta.directory_id)


def _apply_quorum_state(
    image: MetadataImage, plan: ReadPlan, time_travel: bool, keep: Callable[[Any], None]
) -> None:
    """quorum-state -> leader and voters when it is at least as recent as the control records
    replayed (never for time travel).  ``keep(quorum)`` journals the quorum before quorum-state
    changes it: that change belongs to the end of the log."""
    d = plan.directory
    if d is None:
        return
    q = image.quorum
    qs = d.quorum
    if qs is None or time_travel:
        return
    keep(q)
    if qs.leader_epoch is not None and (q.leader_epoch is None or qs.leader_epoch >= q.leader_epoch):
        q.leader_id = qs.leader_id if qs.leader_id is not None and qs.leader_id >= 0 else None
        q.leader_epoch = qs.leader_epoch
        q.source = "quorum-state"
    if not q.voters and qs.current_voters:
        q.voters = tuple(Voter(v) for v in qs.current_voters)


# ---------------------------------------------------------------------- public functions


def load_plan(
    plan: ReadPlan,
    *,
    mode: str = "directory",
    until_offset: int | None = None,
    salvage: bool = False,
    timeline: bool = False,
) -> LoadResult:
    """Replay ``plan`` (from ``MetadataLogDir.plan`` or ``plan_file``) into a new image.

    ``mode``: "directory" (raft-loader semantics) or "file" (Kafka's ``--snapshot`` semantics).
    ``salvage``: load around corruption instead of failing (see :func:`_salvage_run`).
    ``timeline``: keep the journal that moves the image back in time (directory mode only).
    """
    t0 = time.perf_counter()
    until = plan.until_offset if until_offset is None else until_offset
    loader, reader, rejected = _salvage_run(plan, mode, until, salvage, timeline)
    img = loader.image
    tl = loader.timeline
    if rejected:
        img.provenance.salvaged[:0] = rejected
        loader.replayer.warnings[:0] = [
            ReplayWarning(
                f"{s.reason}; --salvage: skipped this snapshot, loaded from "
                f"{_described(reader.plan)} instead",
                None,
                s.source,
                "salvaged",
                s.position,
            )
            for s in rejected
        ]
    # quorum-state is about the end of the log: not for a point before it
    d = reader.plan.directory
    before_end = until is not None and (
        (reader.log_last_offset is not None and until < reader.log_last_offset)
        or (d is not None and bool(d.segments) and d.segments[-1].base_offset > until)
    )
    _apply_quorum_state(img, reader.plan, before_end, loader.replayer.keep_state)
    snap = reader.plan.snapshot
    if mode == "file" and snap is not None:
        # Kafka's shell reads the snapshot as plain batches; still say which snapshot it was.
        ts = loader._snapshot_header_ts
        img.provenance.snapshot = SnapshotInfo(
            str(snap.path), snap.end_offset, snap.epoch, -1 if ts is None else ts
        )
    r = loader.replayer
    for first, last, topic_ids in loader.bad_deltas:
        names = ", ".join(uuid_to_str(t) for t in sorted(topic_ids))
        r.warn(
            f"offsets {first}..{last} dropped: they change partitions of topic(s) {names}, which do not "
            "exist, so Kafka cannot apply this delta and its shell keeps the image from before it",
            first,
            "fault",
        )
    if mode == "file" and not loader.kafka_caught_up and img.features.metadata_version is not None:
        img.provenance.caught_up = False
        flushed = "none" if loader.last_flush is None else f"the last one ends at offset {loader.last_flush}"
        r.warn(
            f"Kafka's shell shows the empty image for this file, and waits forever in one-shot mode: its "
            f"loader publishes once a delta it applies ends at the file's last offset "
            f"({loader.last_batch_offset}) or the one before, and {flushed}; /image shows the same",
            None,
            "log",
        )
    if r.in_transaction:
        r.warn(
            f"the log ends inside a metadata transaction started at offset {r._txn_offset}: its "
            f"{len(r._txn or ())} record(s) are not applied (Kafka would wait for its end)",
            None,
            "log",
        )
    if r.dropped_warnings:
        r.warnings.append(
            ReplayWarning(f"{r.dropped_warnings} further warning(s) not shown", None, None, "log")
        )
    result = LoadResult(
        img,
        r.warnings,
        r.fault_count,
        reader.index,
        reader.plan,
        mode,
        list(reader.files_read),
        reader.records,
        reader.batches,
        reader.plan.partial,
        until,
        time.perf_counter() - t0,
        salvage,
    )
    if tl is not None:
        r.journal = None
        tl.finish(
            {str(s.path): s.base_offset for s in d.segments} if d is not None else {}, _batch_enterer(result)
        )
        result.timeline = tl
    return result


def _batch_enterer(result: LoadResult) -> Callable[[int, list[Any]], None]:
    """``enter(offset, journal)`` for :class:`Timeline`: replay the log batch holding ``offset`` up
    to it onto the image, journaled, found through the load's batch index."""
    logs = [e for e in result.index if e.kind == "log"]
    lasts = [e.last_offset for e in logs]

    def enter(offset: int, journal: list[Any]) -> None:
        i = bisect.bisect_left(lasts, offset)
        if i == len(logs) or logs[i].base_offset > offset:
            return  # a gap in the log: nothing holds this offset
        e = logs[i]
        step = PlanStep("log", Path(e.source), e.source, skip_below=e.base_offset, position=e.position)
        loader = ImageLoader(result.image)
        loader.replayer.journal = journal
        for item in PlanReader(ReadPlan([step]), until_offset=offset, keep_index=False):
            loader.apply_batch(item.batch, item.records, last_offset=offset)
            break

    return enter


def _described(plan: ReadPlan) -> str:
    if plan.snapshot is not None:
        return f"the older snapshot {plan.snapshot.name}"
    return "the log alone" if plan.steps else "nothing (no other snapshot or log)"


def _salvage_run(
    plan: ReadPlan, mode: str, until: int | None, salvage: bool, timeline: bool = False
) -> tuple[ImageLoader, PlanReader, list[Salvaged]]:
    """:func:`_run`, falling back past damaged snapshots when ``salvage`` is set.

    A directory's snapshot that turns out corrupt or cut short (``IncompleteSnapshotError``) fails
    a normal load.  A salvage load starts again on a fresh image with the plan Kafka would have
    made without that snapshot (the next older one, or the log alone), so the image shown is one
    that existed; the rejected snapshots are returned for ``/provenance``.
    """
    rejected: list[Salvaged] = []
    excluded: set[Path] = set()
    while True:
        try:
            loader, reader = _run(plan, mode, until, salvage, timeline)
            return loader, reader, rejected
        except IncompleteSnapshotError as e:
            d = plan.directory
            snap = e.snapshot
            if not isinstance(snap, SnapshotFile) or d is None:
                raise
            if not salvage:
                raise IncompleteSnapshotError(
                    f"{e.message} (--salvage loads from the newest intact snapshot instead)",
                    e.source,
                    e.offset,
                    snap,
                ) from None
            excluded.add(snap.path)
            rejected.append(Salvaged(e.source or str(snap.path), e.offset, e.message, (snap.name,)))
            plan = d.plan(until, exclude=excluded)


_MAX_FILE_PASSES = 20


def _run(
    plan: ReadPlan, mode: str, until: int | None, salvage: bool = False, timeline: bool = False
) -> tuple[ImageLoader, PlanReader]:
    """Replay the plan; in file mode again, without the deltas Kafka cannot apply, while new ones
    turn up (dropping a delta can orphan later records too)."""
    skip: dict[int, int] = {}
    bad: list[tuple[int, int, tuple[bytes, ...]]] = []
    for _ in range(_MAX_FILE_PASSES):
        loader = ImageLoader(
            kafka_file_mode=(mode == "file"), skip_deltas=skip.items(), keep_timeline=timeline
        )
        _apply_meta_properties(loader.image, plan)
        reader = loader.run_plan(plan, until_offset=until, salvage=salvage)
        if not loader.bad_deltas:
            break
        bad += loader.bad_deltas
        skip.update((first, last) for first, last, _ids in loader.bad_deltas)
    loader.bad_deltas = sorted(bad)
    return loader, reader


def load_directory(
    path: str | Path, *, until_offset: int | None = None, salvage: bool = False, timeline: bool = False
) -> LoadResult:
    """``--directory``: a ``__cluster_metadata-0`` folder or its parent log dir.

    Raises ``MetadataDirError`` when the path is not a metadata directory and ``CorruptBatchError``
    for corruption in the middle of a file (``IncompleteSnapshotError`` for a damaged snapshot);
    everything else is a warning in the result.  With ``salvage``, corruption is loaded around
    instead: the log up to the first corrupt batch, the newest intact snapshot.
    """
    return load_plan(
        open_metadata_dir(path).plan(until_offset),
        mode="directory",
        until_offset=until_offset,
        salvage=salvage,
        timeline=timeline,
    )


def load_file(path: str | Path, *, salvage: bool = False, until_offset: int | None = None) -> LoadResult:
    """``--snapshot FILE``: one ``.checkpoint`` or ``.log``, with the Java shell's semantics
    (``salvage``: the batches before the first corrupt one; ``until_offset``: read up to it).

    A non-empty file that does not even start like a record batch (``meta.properties``,
    ``quorum-state``, a file that is not Kafka's) is an error, not an empty tree with a warning.
    """
    result = load_plan(plan_file(path), mode="file", salvage=salvage, until_offset=until_offset)
    if result.batches == 0 and not _starts_like_a_batch(Path(path)):
        for w in result.warnings:
            if w.kind in ("corrupt-tail", "torn-tail", "salvaged") and w.position == 0:
                reason = w.message.split("; ignoring it")[0].split("; --salvage")[0]
                raise NotAMetadataFileError(
                    f"not a KRaft metadata log or snapshot (no record batch at its start: {reason})",
                    str(path),
                    0,
                )
    return result


def rebuild_at(result: LoadResult, offset: int) -> LoadResult:
    """The image as of log ``offset`` (time travel), reusing ``result``'s plan and batch index.

    For a directory load, the newest snapshot not past ``offset`` is used and each segment is
    entered at the indexed batch holding the first needed offset.  For a single file, the file is
    re-read up to ``offset``.
    """
    d = result.plan.directory
    if d is not None:
        plan = d.plan(offset)
        if result.index:
            plan = plan.seek(result.index)
    else:
        plan = result.plan
    return load_plan(plan, mode=result.mode, until_offset=offset, salvage=result.salvage)
