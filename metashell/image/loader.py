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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from metashell.engine import require as require_engine
from metashell.log.directory import (
    PlanStep,
    ReadPlan,
    SnapshotFile,
    directory_of,
    open_metadata_dir,
    plan_file,
)
from metashell.log.problems import IncompleteSnapshotError, Salvaged
from metashell.log.reader import BatchIndexEntry, PlanReader
from metashell.protocol.uuid import uuid_from_str, uuid_to_str

from .batch_loader import (
    ImageLoader,
    LoadMemoryError,
    LoadResult,
    NotAMetadataFileError,
    starts_like_a_batch,
)
from .image import MetadataImage, SnapshotInfo
from .model import Voter
from .replay import ReplayWarning

__all__ = [
    "ImageLoader",
    "LoadMemoryError",
    "LoadResult",
    "load_directory",
    "load_file",
    "load_plan",
    "rebuild_at",
]


# ---------------------------------------------------------------------- quorum from small files


def _apply_meta_properties(image: MetadataImage, plan: ReadPlan) -> None:
    """meta.properties -> cluster id, node id, directory id (before the log: they hold at every
    offset, so the journal of the quorum's changes carries them too)."""
    d = directory_of(plan)
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
    d = directory_of(plan)
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
    require_engine()  # METASHELL_ENGINE=native without the native core: say so, never fall back
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
    d = directory_of(reader.plan)
    before_end = until is not None and (
        (reader.log_last_offset is not None and until < reader.log_last_offset)
        or (d is not None and bool(d.segments) and d.segments[-1].base_offset > until)
    )
    _apply_quorum_state(img, reader.plan, before_end, loader.replayer.keep_state)
    snap = reader.plan.snapshot
    if mode == "file" and snap is not None:
        # Kafka's shell reads the snapshot as plain batches; still say which snapshot it was.
        ts = loader.snapshot_header_timestamp
        img.provenance.snapshot = SnapshotInfo(
            str(snap.path), snap.end_offset, snap.epoch, -1 if ts is None else ts
        )
    r = loader.replayer
    file = loader.file
    for first, last, topic_ids in file.bad_deltas if file is not None else ():
        names = ", ".join(uuid_to_str(t) for t in sorted(topic_ids))
        r.warn(
            f"offsets {first}..{last} dropped: they change partitions of topic(s) {names}, which do not "
            "exist, so Kafka cannot apply this delta and its shell keeps the image from before it",
            first,
            "fault",
        )
    if file is not None and not file.caught_up and img.features.metadata_version is not None:
        img.provenance.caught_up = False
        flushed = "none" if file.last_flush is None else f"the last one ends at offset {file.last_flush}"
        r.warn(
            f"Kafka's shell shows the empty image for this file, and waits forever in one-shot mode: its "
            f"loader publishes once a delta it applies ends at the file's last offset "
            f"({file.last_batch_offset}) or the one before, and {flushed}; /image shows the same",
            None,
            "log",
        )
    if r.open_transaction is not None:
        began, held = r.open_transaction
        r.warn(
            f"the log ends inside a metadata transaction started at offset {began}: its "
            f"{held} record(s) are not applied (Kafka would wait for its end)",
            None,
            "log",
        )
    if r.dropped_warnings:
        r.warnings.append(
            ReplayWarning(f"{r.dropped_warnings} further warning(s) not shown", None, None, "log")
        )
    result = LoadResult(
        image=img,
        warnings=r.warnings,
        fault_count=r.fault_count,
        index=reader.index,
        plan=reader.plan,
        mode=mode,
        files=list(reader.files_read),
        records=reader.records,
        batches=reader.batches,
        partial=reader.plan.partial,
        until_offset=until,
        elapsed=time.perf_counter() - t0,
        salvage=salvage,
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
    to it onto the image, journaled, found through the load's batch index.  The log's rows are
    listed on the first call: a load that never travels into a batch (most) never makes them (a
    row object per log batch, hundreds of thousands, and the collections that walk them)."""
    logs: list[BatchIndexEntry] = []
    lasts: list[int] = []

    def enter(offset: int, journal: list[Any]) -> None:
        if not logs:
            logs.extend(e for e in result.index if e.kind == "log")
            lasts.extend(e.last_offset for e in logs)
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
            d = directory_of(plan)
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
        file = loader.file
        if file is None or not file.bad_deltas:
            break
        bad += file.bad_deltas
        skip.update((first, last) for first, last, _ids in file.bad_deltas)
    if loader.file is not None:
        loader.file.bad_deltas = sorted(bad)
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
    if result.batches == 0 and not starts_like_a_batch(Path(path)):
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
    d = directory_of(result.plan)
    if d is not None:
        plan = d.plan(offset)
        if result.index:
            plan = plan.seek(result.index)
    else:
        plan = result.plan
    return load_plan(plan, mode=result.mode, until_offset=offset, salvage=result.salvage)
