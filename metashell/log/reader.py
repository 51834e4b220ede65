"""Walk a :class:`ReadPlan`: yield every batch to replay, in order, with its provenance.

The reader knows files and batches, not metadata records: it hands out each batch's header and its
records as ``(offset, timestamp, key, value)`` tuples, and the image layer decodes the values.  It
applies the plan's offset rules (skip log records below the snapshot's end offset, stop at
``until_offset``), reports what Kafka would complain about as :class:`LogWarning` (gaps,
a snapshot ahead of the log, a snapshot without header/footer, KRaft record invariants, files that
vanished while Kafka was running) and keeps a small per-batch index for cheap re-reading later.

Offsets that cannot be true are corruption, not warnings: a batch outside its segment's offsets, one
that repeats offsets already read, or one whose lastOffsetDelta disagrees with its record count.
baseOffset is covered by no CRC, and believing a forged one applies the later records over a gap
or drops records, which would show an image that never existed (``--salvage`` stops before it).
"""

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from metashell.log.batch import RecordBatch
from metashell.log.batch_index import BatchIndex, BatchIndexEntry
from metashell.log.directory import PlanStep, ReadPlan
from metashell.log.files import DEFAULT_CHUNK, iter_file_batches
from metashell.log.offset_rules import check_continuity, check_offsets, check_snapshot_offsets
from metashell.log.problems import (
    CorruptBatchError,
    IncompleteSnapshotError,
    InvariantWarnings,
    LogWarning,
    Salvaged,
    WarnFn,
)
from metashell.log.progress import LOAD
from metashell.log.records import CLEAN_STATS, Entry

if TYPE_CHECKING:  # the native engine's batch loop: imported when a sink is given
    from metashell.log.bulk import BulkSink, LogCursor

__all__ = ["BatchIndexEntry", "BatchRead", "PlanReader", "read_plan"]

_CONTROL_SNAPSHOT_HEADER = 3
_CONTROL_SNAPSHOT_FOOTER = 4
_new_tuple = tuple.__new__


class BatchRead(NamedTuple):
    """One batch to replay.

    ``kind`` is the step's kind ("snapshot", "log" or "bootstrap"); ``batch.source`` and
    ``batch.position`` say where it was read; ``records`` are the batch's records to apply, as
    ``(offset, timestamp, key, value)`` (log records below the plan's start offset, or above its
    ``until_offset``, already removed); ``step`` is the plan step (``step.snapshot`` gives a
    snapshot's end offset and epoch).
    """

    kind: str
    batch: RecordBatch
    records: list[Entry]
    step: PlanStep


def _control_type(key: bytes | None) -> int:
    return int.from_bytes(key[2:4], "big", signed=True) if key is not None and len(key) >= 4 else -1


class PlanReader:
    """Iterate over ``plan``: ``for item in PlanReader(plan): ...`` yields :class:`BatchRead`.

    Warnings (the plan's first, then the reader's, in order of discovery) are appended to
    ``warnings`` and passed to ``warn`` when given.  After (or during) iteration: ``index`` holds a
    :class:`BatchIndexEntry` per batch read (when ``keep_index``), ``files_read`` the files actually
    opened, ``log_last_offset`` the last log offset seen.

    Raises ``CorruptBatchError`` for corruption in the middle of a file, and
    ``IncompleteSnapshotError`` for a directory's snapshot that is corrupt or cut short.  ``bulk``: a
    sink that applies runs of plain log and snapshot batches itself (``metashell.log.bulk``; those
    are indexed and counted, not yielded).  With
    ``salvage``, corruption in a log segment (or in the one file of a single-file plan) instead
    ends the read there: a "salvaged" warning names the place, and ``salvaged`` records what was
    left out.  (Falling back to an older snapshot is the loader's job: it needs a fresh image.)
    """

    def __init__(
        self,
        plan: ReadPlan,
        *,
        warn: WarnFn | None = None,
        until_offset: int | None = None,
        verify_crc: bool = True,
        keep_index: bool = True,
        chunk_size: int = DEFAULT_CHUNK,
        salvage: bool = False,
        bulk: "BulkSink | None" = None,
    ) -> None:
        self.plan = plan
        self.bulk = bulk
        self.salvage = salvage
        self.salvaged: list[Salvaged] = []
        self.until_offset = plan.until_offset if until_offset is None else until_offset
        self.verify_crc = verify_crc
        self.keep_index = keep_index
        self.chunk_size = chunk_size
        self._user_warn = warn
        self.warnings: list[LogWarning] = []
        self._index = BatchIndex()
        self.files_read: list[str] = []
        self.log_last_offset: int | None = None
        self.batches = 0
        self.records = 0
        self._invariants = InvariantWarnings()
        self._next_offset = 0
        self._seen_log_batch = False
        self._partial = False
        self._stop = False

    @property
    def index(self) -> BatchIndex:
        """One :class:`BatchIndexEntry` per batch read so far (stored compactly: :class:`BatchIndex`)."""
        return self._index

    def where(self) -> tuple[str | None, int | None]:
        """(file, byte offset) of the last batch read, or of the file being opened, for messages."""
        opened = self.files_read[-1] if self.files_read else None
        if self._index:
            last = self._index[-1]
            if last.source == opened:
                return last.source, last.position
        return opened, None  # a file opened after the last batch indexed: name it, not the one before

    def warn(self, w: LogWarning) -> None:
        self.warnings.append(w)
        if self._user_warn is not None:
            self._user_warn(w)

    def __iter__(self) -> Generator[BatchRead, None, None]:
        for w in self.plan.warnings:
            self.warn(w)
        yield from self._run(self.plan, replanned=False)

    # ------------------------------------------------------------------------------------------

    def _run(self, plan: ReadPlan, replanned: bool) -> Iterator[BatchRead]:
        self._next_offset = plan.start_offset  # next log offset to deliver
        self._seen_log_batch = False
        self._partial = plan.partial
        self._stop = False
        produced = self.batches  # any batch yielded decides whether bootstrap.checkpoint is needed
        LOAD.begin([(step.path, step.position) for step in plan.steps])
        for i, step in enumerate(plan.steps):
            LOAD.enter(i, self.records)
            if self._stop:
                break
            if step.only_if_empty and self.batches > produced:
                continue
            self.files_read.append(step.source)
            try:
                if step.kind == "log":
                    yield from self._log_step(step)
                else:
                    yield from self._snapshot_step(step)
            except IncompleteSnapshotError:
                raise
            except CorruptBatchError as e:
                if step.kind == "snapshot" and plan.directory is not None:
                    raise IncompleteSnapshotError(
                        f"snapshot is corrupt: {e.message}", e.source, e.offset, step.snapshot
                    ) from None
                if not self.salvage:
                    raise CorruptBatchError(
                        f"{e.message} (--salvage loads what comes before it)", e.source, e.offset
                    ) from None
                self._salvage_stop(e, plan.steps[i + 1 :])
                break
            except FileNotFoundError:
                self.files_read.pop()
                if (
                    step.kind == "snapshot"
                    and self.batches == produced
                    and not replanned
                    and plan.directory is not None
                ):
                    # Kafka deleted the snapshot (a newer one replaced it) before we opened it: list
                    # the directory again and start over, once.
                    self.warn(
                        LogWarning(
                            "file-vanished",
                            "snapshot disappeared before it could be read "
                            "(Kafka replaced it?); re-reading the directory",
                            step.source,
                        )
                    )
                    new_plan = plan.directory.reopen().plan(self.until_offset)
                    self.plan = new_plan
                    for w in new_plan.warnings:
                        if w not in self.warnings:
                            self.warn(w)
                    yield from self._run(new_plan, replanned=True)
                    return
                self.warn(
                    LogWarning(
                        "file-vanished",
                        "file disappeared while reading (deleted by a running Kafka?): skipped",
                        step.source,
                    )
                )
        if (
            plan.snapshot is not None
            and self.log_last_offset is not None
            and self.log_last_offset < plan.start_offset - 1
        ):
            self.warn(
                LogWarning(
                    "snapshot-ahead",
                    f"snapshot {plan.snapshot.name} (end offset {plan.snapshot.end_offset}) "
                    f"is ahead of the log, which ends at offset {self.log_last_offset}; Kafka would "
                    f"truncate the log",
                    str(plan.snapshot.path),
                )
            )

    def _salvage_stop(self, e: CorruptBatchError, later: list[PlanStep]) -> None:
        """--salvage: keep what was read before the corruption ``e``, skip the rest, and say so."""
        skipped = [f"the rest of {e.source}"] + [s.source for s in later if not s.only_if_empty]
        self.salvaged.append(Salvaged(e.source or "", e.offset, e.message, tuple(skipped)))
        self.warn(self.salvaged[-1].warning())
        self._stop = True

    def _batches(self, step: PlanStep, bulk: "LogCursor | None" = None) -> Iterator[RecordBatch]:
        return iter_file_batches(
            step.path,
            step.source,
            position=step.position,
            lenient_tail=step.lenient_tail,
            warn=self.warn,
            verify_crc=self.verify_crc,
            chunk_size=self.chunk_size,
            bulk=bulk,
        )

    def _check(self, batch: RecordBatch) -> None:
        w = self._invariants(batch.base_offset, batch.kraft_anomalies(), batch.source, batch.position)
        if w is not None:
            self.warn(w)

    def _take_bulk(self, cursor: "LogCursor") -> int:
        """Count the batches a snapshot's cursor applied since last asked; returns how many."""
        batches, records = cursor.take()
        self.batches, self.records = self.batches + batches, self.records + records
        return batches

    def _snapshot_step(self, step: PlanStep) -> Iterator[BatchRead]:
        kind = step.kind
        first = True
        has_header = False
        last_type = -1
        warned_before = len(self.warnings)
        index = self._index if self.keep_index else None
        cursor = None
        if self.bulk is not None and index is not None and kind == "snapshot":
            from metashell.log.bulk import LogCursor

            cursor = LogCursor(self.bulk, index, step.source, 1 << 63, self.verify_crc, step.position, kind)
        expect = 0  # the offset the next batch must start at (the cursor's too)
        for batch in self._batches(step, cursor):
            if cursor is not None:
                self._take_bulk(cursor)
                expect = cursor.next_offset
            check_snapshot_offsets(batch, expect)
            expect = batch.base_offset + batch.last_offset_delta + 1
            if cursor is not None:
                cursor.next_offset, cursor.ready = expect, True  # the header read, the next offered
            records = batch.entries()
            if (
                batch.stats is not CLEAN_STATS
                or batch.is_control
                or batch.last_offset_delta != len(records) - 1
            ):
                self._check(batch)
            if first:
                first = False
                has_header = (
                    batch.is_control
                    and _control_type(records[0][2] if records else None) == _CONTROL_SNAPSHOT_HEADER
                )
                if not has_header:
                    self.warn(
                        LogWarning(
                            "snapshot-header",
                            "does not start with a SnapshotHeader control "
                            "record (Kafka rejects such a snapshot)",
                            step.source,
                            batch.position,
                        )
                    )
            last_type = _control_type(records[-1][2]) if batch.is_control and records else -1
            if index is not None:
                index.append(
                    (
                        kind,
                        batch.source,
                        batch.position,
                        batch.base_offset,
                        batch.base_offset + batch.last_offset_delta,
                        batch.partition_leader_epoch,
                        batch.max_timestamp,
                        batch.is_control,
                        batch.records_count,
                    )
                )
            self.batches += 1
            self.records += len(records)
            LOAD.at(batch.position - step.position, self.records)
            yield _new_tuple(BatchRead, (kind, batch, records, step))
            del batch, records  # its chunk is not to be held while the native bulk applies the rest
        if cursor is not None and self._take_bulk(cursor):
            last_type = -1  # the last batch was a data batch
        if first:
            self.warn(LogWarning("snapshot-empty", "holds no batch", step.source))
            return
        if self.plan.directory is not None and step.snapshot is not None:
            torn = [w for w in self.warnings[warned_before:] if w.kind == "torn-tail"]
            if torn:
                raise IncompleteSnapshotError(
                    f"snapshot is truncated: {torn[0].message}", step.source, torn[0].position, step.snapshot
                )
            if has_header and last_type != _CONTROL_SNAPSHOT_FOOTER:
                raise IncompleteSnapshotError(
                    "snapshot is incomplete: it has a SnapshotHeader but no "
                    "SnapshotFooter (cut short at a batch boundary)",
                    step.source,
                    None,
                    step.snapshot,
                )
        if last_type != _CONTROL_SNAPSHOT_FOOTER:
            self.warn(
                LogWarning(
                    "snapshot-footer",
                    "does not end with a SnapshotFooter control record (incomplete snapshot?)",
                    step.source,
                )
            )

    def _log_step(self, step: PlanStep) -> Iterator[BatchRead]:
        """The hot loop for log segments.

        A batch that simply continues the log (the common case) costs a few comparisons; the
        reader's state lives in locals and is written back when the step ends or pauses.
        """
        start = step.skip_below
        until = self.until_offset
        index_append = self._index.append if self.keep_index else None
        clean = CLEAN_STATS
        new = _new_tuple
        next_offset = self._next_offset
        last_seen = -1 if self.log_last_offset is None else self.log_last_offset
        seen = self._seen_log_batch
        nb = nr = 0
        progress, first_position = LOAD, step.position
        high = _NO_LIMIT if step.bounds is None or step.bounds[1] is None else step.bounds[1]
        # the offset the next batch of this segment must start at: its name's for the first batch
        # (unless reading starts mid-file), then the end of the batch before it
        expect = step.bounds[0] if step.bounds is not None and not step.position else None
        first_in_file = True
        cursor = None
        if self.bulk is not None and until is None and index_append is not None:
            from metashell.log.bulk import LogCursor

            cursor = LogCursor(self.bulk, self._index, step.source, high, self.verify_crc, first_position)
        try:
            for batch in self._batches(step, cursor):
                if cursor is not None and cursor.batches:  # the sink applied batches before this one
                    done_batches, done_records = cursor.take()
                    nb, nr = nb + done_batches, nr + done_records
                    next_offset = expect = cursor.next_offset
                    last_seen = max(last_seen, cursor.next_offset - 1)
                base = batch.base_offset
                last = base + batch.last_offset_delta
                if base != expect or last >= high or last - base != batch.records_count - 1:
                    check_offsets(batch, step, expect, first_in_file)
                expect = last + 1
                first_in_file = False
                if last > last_seen:  # noqa: PLR1730 -- cheaper than a max() call per batch
                    last_seen = last
                records = batch.decoded
                if records is None:
                    records = batch.entries()
                stop = False
                if base != next_offset or not seen or until is not None:
                    # the unusual cases: first batch, before the start, gaps, overlaps, time travel
                    if until is not None and base > until:
                        self._stop = True
                        return
                    if last < start and not seen:
                        continue  # wholly below the snapshot's end offset: the snapshot holds it
                    first = not seen
                    seen = True
                    gap = check_continuity(batch, next_offset, first, self._partial)
                    if gap is not None:
                        self.warn(gap)
                    if base < next_offset:
                        records = [r for r in records if r[0] >= next_offset]
                    stop = until is not None and last > until
                    if until is not None and stop:
                        records = [r for r in records if r[0] <= until]
                attributes = batch.attributes
                if batch.stats is not clean or attributes & 0x20:  # a lying lastOffsetDelta raised above
                    self._check(batch)
                if index_append is not None:
                    index_append(
                        (
                            "log",
                            batch.source,
                            batch.position,
                            base,
                            last,
                            batch.partition_leader_epoch,
                            batch.max_timestamp,
                            attributes & 0x20 != 0,
                            batch.records_count,
                        )
                    )
                nb += 1
                nr += len(records)
                next_offset = last + 1
                progress.position, progress.step_records = batch.position - first_position, nr
                yield new(BatchRead, ("log", batch, records, step))
                if stop:
                    self._stop = True
                    return
                if cursor is not None:  # the log continues exactly here: the sink may go on from it
                    cursor.ready, cursor.next_offset = seen, next_offset
        finally:
            if cursor is not None and cursor.batches:
                done_batches, done_records = cursor.take()
                nb, nr = nb + done_batches, nr + done_records
                next_offset = cursor.next_offset
                last_seen = max(last_seen, cursor.next_offset - 1)
            self._next_offset = next_offset
            self._seen_log_batch = seen
            if last_seen >= 0:
                self.log_last_offset = last_seen
            self.batches += nb
            self.records += nr


_NO_LIMIT = 1 << 63


def read_plan(plan: ReadPlan, **kwargs: Any) -> Iterator[BatchRead]:
    """Shorthand for ``iter(PlanReader(plan, **kwargs))`` when the reader's state is not needed."""
    return iter(PlanReader(plan, **kwargs))
