"""The row builders of the file tables: what one batch of a file adds to each table's rows.

Every row is made from its record and the batch it sits in (decoding is stateless: what needs
state is left to joins and windows in Spark, :mod:`metashell.spark.history`).  A table's entry in
:mod:`.tables` names its sink here; :mod:`.decode` reads a unit's batches into it, and the native
core's ``records`` rows (:mod:`.native_records`) hand it the records they leave to Python.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from metashell.log.records import INT64_MAX
from metashell.protocol.control import decode_control_record
from metashell.protocol.kafka_json import control_to_kafka_json, to_kafka_json, to_kafka_json_text
from metashell.protocol.metadata import decode_metadata_record
from metashell.tree.redact import REDACTED_RECORDS, redact_record_json

from .inputs import Unit
from .key_columns import NO_KEYS, broker_event, keys_of

if TYPE_CHECKING:
    from metashell.log.bulk import BatchRun

__all__ = [
    "ROWS_PER_BATCH",
    "TRANSACTION_MARKERS",
    "FileContext",
    "RowBuffer",
    "Rows",
    "add_record_rows",
    "broker_event_sink",
    "check_sink",
    "record_row",
    "record_sink",
    "snapshot_finish",
    "snapshot_sink",
]

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


def late_timestamp(batch: Any) -> str | None:
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
    """``records``, the Python engine's: a row per record made here (the native engine's sink,
    :func:`.native_records.records_sink`, chooses between the two)."""
    unit = c.unit

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
