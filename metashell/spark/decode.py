"""Executor side of the file tables: one unit (a byte range of one file) into Arrow record batches.

Decoding is stateless -- every row is made from its record and the batch it sits in -- so units
of any dataset run anywhere, in any order.  What needs state (a topic's name for a partition
change, the value a change replaced, which copy of an offset replay keeps) is left to joins and
windows in Spark (:mod:`metashell.spark.history`).

A corrupt batch ends the unit: ``errors="rows"`` turns it into a row of the ``errors`` table (the
file and byte offset, the decoder's one line), ``errors="fail"`` raises it (``--fail-fast``).
Survivable problems (a torn tail of the last segment) are ``warning`` rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from metashell.engine import current as current_engine
from metashell.errors import DecodeError, MetashellError, out_of_memory
from metashell.log.files import first_batch_at_or_after, iter_file_batches
from metashell.log.problems import CorruptBatchError, LogWarning
from metashell.log.records import INT64_MAX
from metashell.protocol.control import decode_control_record
from metashell.protocol.kafka_json import control_to_kafka_json, to_kafka_json, to_kafka_json_text
from metashell.protocol.metadata import decode_metadata_record
from metashell.tree.redact import REDACTED_RECORDS, redact_record_json

from .inputs import Unit
from .key_columns import NO_KEYS, broker_event, keys_of
from .schemas import ERRORS

if TYPE_CHECKING:
    from metashell.log.bulk import BatchRun

    from .tables import Table

__all__ = ["ROWS_PER_BATCH", "RowBuffer", "add_record_rows", "read_file_table", "record_row"]

ROWS_PER_BATCH = 8192
TRANSACTION_MARKERS = frozenset({"BeginTransactionRecord", "EndTransactionRecord", "AbortTransactionRecord"})
"""The record types that are transaction markers (``is_transaction_marker``), for both engines."""
_to_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Rows(Protocol):
    """Where a sink puts its rows: :class:`RowBuffer`, or the native core's columns
    (:class:`.native_records.NativeRecordRows`)."""

    def add(self, row: tuple[Any, ...]) -> None: ...
    def __len__(self) -> int: ...
    def full(self) -> bool: ...
    def take(self) -> pa.RecordBatch: ...


class RowBuffer:
    """Rows gathered as tuples, handed out as Arrow record batches of the table's schema (turned
    into columns by one ``zip`` when taken: appending to 30 column lists per row cost more)."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.rows: list[tuple[Any, ...]] = []
        self.add = self.rows.append

    def __len__(self) -> int:
        return len(self.rows)

    def full(self) -> bool:
        """Rows enough for a record batch."""
        return len(self.rows) >= ROWS_PER_BATCH

    def take(self) -> pa.RecordBatch:
        columns = list(zip(*self.rows, strict=True)) if self.rows else [() for _ in self.schema]
        batch = pa.RecordBatch.from_arrays(
            [pa.array(c, type=f.type) for c, f in zip(columns, self.schema, strict=True)], schema=self.schema
        )
        self.rows = []
        self.add = self.rows.append
        return batch


_MAX_MS = INT64_MAX // 1000
"""The latest time a Spark timestamp (microseconds in 64 bits) holds: the year 294247."""


def _when(ms: int) -> int | None:
    """Milliseconds since the epoch as Arrow's microseconds (None for Kafka's -1: no time, and for
    a time past :data:`_MAX_MS`, of which the ``errors`` table has a warning)."""
    return ms * 1000 if 0 <= ms <= _MAX_MS else None


def _late(batch: Any) -> str | None:
    """A warning when a record of ``batch`` has a timestamp no Spark timestamp can hold."""
    if (
        batch.max_timestamp <= _MAX_MS
        and batch.base_timestamp <= _MAX_MS
        and not (batch.stats or (0, 0, 0))[2]
    ):
        return None
    late = max(ts for _o, ts, _k, _v in batch.entries())
    if late <= _MAX_MS:
        return None
    return (
        f"batch at base offset {batch.base_offset}: a record's timestamp {late} ms is past what a "
        "Spark timestamp holds (the year 294247); its timestamp is null"
    )


@dataclass
class FileContext:
    """What a file table's sink needs of the unit being read (see :mod:`.tables`)."""

    out: Rows
    head: tuple[Any, ...]
    unit: Unit
    in_snapshot: bool
    snap_offset: int | None
    redact: bool
    records: int = 0
    batches: int = 0
    bulk: BatchRun | None = None  # takes runs of batches whole (the native records table)
    last_contained: int | None = None  # the snapshot header's time (snapshots table)


def read_file_table(
    table: str | Table, unit: Unit, *, redact: bool = True, errors: str = "rows"
) -> Iterator[pa.RecordBatch]:
    """The rows of a file ``table`` (records, errors, broker_events, snapshots ...) that ``unit``
    holds."""
    if isinstance(table, str):
        from .tables import table as lookup

        table = lookup(table)
    assert table.sink is not None and table.schema is not None, f"{table.name} is not a file table"
    ds = unit.dataset
    head = (ds.cluster_id, ds.node_id, ds.path)
    problems = RowBuffer(ERRORS)

    def problem(position: int, severity: str, kind: str, message: str) -> None:
        problems.add((*head, unit.file, position, severity, kind, message))

    def warned(w: LogWarning) -> None:
        problem(w.position if w.position is not None else -1, "warning", w.kind, w.message)

    in_snapshot = unit.kind != "log"
    snap_offset = (
        (unit.snapshot_end_offset - 1) if in_snapshot and unit.snapshot_end_offset is not None else None
    )
    context = FileContext(RowBuffer(table.schema), head, unit, in_snapshot, snap_offset, redact)
    sink = table.sink(context)
    out = context.out  # the sink may have chosen another (the native records rows)
    at = unit.lo
    try:
        start = first_batch_at_or_after(unit.file, unit.lo)
        if start is not None:
            for batch in iter_file_batches(
                unit.file,
                position=start,
                warn=warned,
                lenient_tail=unit.lenient_tail and unit.hi is None,
                bulk=context.bulk,
            ):
                if unit.hi is not None and batch.position >= unit.hi:
                    break
                at = batch.position
                context.batches += 1
                sink(batch)
                late = _late(batch) if table.reports_problems else None
                if late:
                    problem(at, "warning", "timestamp-range", late)
                while out.full():  # the native records rows may hold several
                    yield out.take()
    except (MetashellError, OSError) as e:
        if errors == "fail":
            raise MetashellError(str(e) if unit.file in str(e) else f"{unit.file}: {e}") from None
        if isinstance(e, CorruptBatchError) and e.offset is not None:
            at, message = e.offset, e.message
        elif isinstance(
            e, DecodeError
        ):  # a record of the batch at ``at``: offsets inside it mean nothing here
            message = f"a record of the batch at byte {at}: {e.message}"
        else:
            message = str(e)
        problem(at, "error", type(e).__name__, message)
    except (MemoryError, SystemError) as e:
        if not out_of_memory(e):
            raise
        # not a property of the file, so never an ``errors`` row: the job stops with one line
        # saying where the worker was and what to raise (PySpark turns the limit into RLIMIT_AS)
        raise MetashellError(
            f"{unit.file}: out of memory in a Spark worker reading the batch at byte {at} "
            "(spark.executor.pyspark.memory, or the executor's memory, is too small for it)"
        ) from None
    if table.finish is not None:
        table.finish(context)
    while len(out):
        yield out.take()
    if table.reports_problems and len(problems):
        yield problems.take()


def add_record_rows(
    out: Rows,
    head: tuple[Any, ...],
    file: str,
    kind: str,
    batch: Any,
    entries: Any,
    *,
    snap_offset: int | None,
    replay_seq: int | None,
    replay_from: int,
    redact: bool,
) -> None:
    """Add a ``records`` row to ``out`` for each of ``entries`` (offset, timestamp, key, value) of
    ``batch`` (a batch header: files and live fetches alike).  ``snap_offset``: the log offset a
    snapshot's records stand at (None for log records)."""
    lead = (*head, file, kind)
    for entry in entries:
        out.add(lead + record_row(batch, entry, snap_offset, replay_seq, replay_from, redact))


def record_row(
    batch: Any,
    entry: tuple[int, int, Any, Any],
    snap_offset: int | None,
    replay_seq: int | None,
    replay_from: int,
    redact: bool,
) -> tuple[Any, ...]:
    """The ``records`` row of one record (offset, timestamp, key, value) of ``batch``, after its
    constant columns (dataset, file, file kind): the Python engine's, and the native one's for the
    records it leaves to Python."""
    offset, ts, key, value = entry
    in_snapshot = snap_offset is not None
    log_offset = snap_offset if snap_offset is not None else offset
    replayed = replay_seq is not None and (in_snapshot or offset >= replay_from)
    if batch.is_control:
        ctl = decode_control_record(key, value)
        name, version, keys, marker = ctl.name, ctl.version, NO_KEYS, False
        text = _to_json(control_to_kafka_json(ctl))
    else:
        rec = decode_metadata_record(value)
        name, version = rec.name, rec.version
        if redact and name in REDACTED_RECORDS:
            text = _to_json(redact_record_json(name, to_kafka_json(name, version, rec.data)))
        else:
            text = to_kafka_json_text(name, version, rec.data)
        keys, marker = keys_of(name, rec.data), name in TRANSACTION_MARKERS
    return (
        batch.position,
        batch.base_offset,
        offset,
        log_offset,
        batch.partition_leader_epoch,
        _when(ts),
        in_snapshot,
        batch.is_control,
        marker,
        replay_seq,
        replayed,
        name,
        version,
        text,
        *keys,
    )


def record_sink(c: FileContext) -> Callable[[Any], None]:
    """``records``: a row per record (made by the native core when it runs)."""
    unit = c.unit
    native = current_engine().native
    if native is not None:
        from .native_records import native_record_sink

        return native_record_sink(c, native)

    def records(batch: Any) -> None:
        add_record_rows(
            c.out,
            c.head,
            unit.file,
            unit.kind,
            batch,
            batch.entries(),
            snap_offset=c.snap_offset,
            replay_seq=unit.replay_seq,
            replay_from=unit.replay_from,
            redact=c.redact,
        )

    return records


def broker_event_sink(c: FileContext) -> Callable[[Any], None]:
    """``broker_events``: a row per record that registers, fences, unfences, shuts down or
    unregisters a broker."""
    out, head, file, snap_offset, in_snapshot = c.out, c.head, c.unit.file, c.snap_offset, c.in_snapshot

    def broker_events(batch: Any) -> None:
        if batch.is_control:
            return
        for offset, ts, _key, value in batch.entries():
            rec = decode_metadata_record(value)
            event = broker_event(rec.name, rec.data)
            if event is not None:
                log_offset = snap_offset if snap_offset is not None else offset
                out.add(
                    (
                        *head,
                        file,
                        offset,
                        log_offset,
                        _when(ts),
                        in_snapshot,
                        event[0],
                        event[1],
                        event[2],
                        rec.name,
                    )
                )

    return broker_events


def snapshot_sink(c: FileContext) -> Callable[[Any], None]:
    """``snapshots``: counts the records and finds the header's time; :func:`snapshot_finish`
    adds the file's row."""

    def snapshots(batch: Any) -> None:
        entries = batch.entries()
        c.records += len(entries)
        if batch.is_control and c.last_contained is None:
            for _offset, _ts, key, value in entries:
                ctl = decode_control_record(key, value)
                if ctl.name == "SnapshotHeader" and ctl.data:
                    c.last_contained = _when(int(ctl.data.get("LastContainedLogTimestamp", -1)))

    return snapshots


def snapshot_finish(c: FileContext) -> None:
    unit = c.unit
    if unit.lo == 0 and c.in_snapshot:
        c.out.add(
            (
                *c.head,
                unit.file,
                unit.kind,
                unit.snapshot_end_offset,
                unit.snapshot_epoch,
                c.last_contained,
                c.records,
                c.batches,
                unit.size,
            )
        )


def check_sink(c: FileContext) -> Callable[[Any], None]:
    """``errors``: decode the records too, so that a bad one is found (the rows are the problems)."""

    def check(batch: Any) -> None:
        for _offset, _ts, key, value in batch.entries():
            if batch.is_control:
                decode_control_record(key, value)
            else:
                decode_metadata_record(value)

    return check
