"""The ``records`` table made by the native core: a batch's rows in one call, as Arrow buffers.

:func:`.rows.add_record_rows` makes a row per record in Python: decode the value, write Kafka's
JSON, read the key columns, then turn 30 lists of Python objects into Arrow arrays, about 25 us a
row. Here ``metashell._native.add_record_rows`` frames the batch, writes each record's JSON from its
bytes with the generated writers, reads its key columns from the same :data:`.key_columns.KEY_SOURCES`,
and appends to columns it holds in Rust; :meth:`NativeRecordRows.take` hands them to pyarrow as
buffers, with no Python object per value.

What the native core does not take it hands back, record by record, to :func:`.rows.record_row`
(the Python engine's own row), which makes it in its place: control records, SCRAM credentials to
redact, a client quota's entity, a record it refuses (Python then says what is wrong with it). A
sensitive config's value it redacts itself, asking :func:`.is_sensitive_config` once per resource
type and name. So the table is the same whichever engine made it, row for row and in the same
order; ``tests/test_spark_native.py`` compares the two on every fixture and corpus directory and on
damaged records.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

import pyarrow as pa

from metashell.engine import current as current_engine
from metashell.image.forms import REDACTED
from metashell.log.batch import ATTR_TIMESTAMP_TYPE
from metashell.log.compression import LIMITS
from metashell.protocol.metadata import record_keys, record_types
from metashell.tree.redact import REDACTED_RECORDS, is_sensitive_config

from .key_columns import KEY_COLUMNS, KEY_SOURCES, OTHER_KEYS, PYTHON_ONLY_SOURCES, RESOURCE_TYPE_NAMES
from .rows import ROWS_PER_BATCH, TRANSACTION_MARKERS, FileContext, add_record_rows, record_row, record_sink
from .schemas import RECORDS

__all__ = ["NativeRecordRows", "native_record_sink", "record_rules"]

HEAD = 5
"""The constant columns a row starts with: cluster, node, directory, file, file kind."""
MAX_HELD = 256 << 20
"""Text a batch of rows may hold before it is handed out (Arrow's string offsets are 32-bit)."""
MAX_SET_ASIDE = 4
"""Record batches a run may fill and set aside before the reader hands them out.  A run that stopped
at the first full one left the next batch to the scan, which decoded its records as Python tuples
for nothing (a snapshot's batches hold thousands: half the fleet's snapshot rows went that way)."""


def _sources(sources: dict[str, tuple[str, str]]) -> list[tuple[int, str, str]]:
    return [(KEY_COLUMNS.index(column), how, arg) for column, (how, arg) in sources.items()]


@cache
def record_rules(native: Any, redact: bool) -> Any:
    """The native core's ``RecordRules``: names by api key, transaction markers, the types whose
    rows Python makes (SCRAM credentials when redacting, and those with a Python-only key source),
    the key columns' sources, and when redacting what a sensitive config's value is checked by and
    replaced with."""
    keys = record_keys()
    native_keys = {
        keys[name]: _sources(sources)
        for name, sources in KEY_SOURCES.items()
        if name in keys and not any(how in PYTHON_ONLY_SOURCES for how, _arg in sources.values())
    }
    python = [keys[name] for name in KEY_SOURCES if name in keys and keys[name] not in native_keys]
    config = None
    if redact:  # a config's value is redacted natively, when Python says it is sensitive
        python += [keys[name] for name in REDACTED_RECORDS if name in keys and name != "ConfigRecord"]
        config = (keys["ConfigRecord"], is_sensitive_config, REDACTED)
    return native.RecordRules(
        dict(record_types()),
        sorted(keys[name] for name in TRANSACTION_MARKERS if name in keys),
        python,
        native_keys,
        _sources(OTHER_KEYS),
        {how: {int(k): v for k, v in names.items()} for how, names in RESOURCE_TYPE_NAMES.items()},
        config,
    )


@cache
def check_columns(native: Any) -> None:
    """The native row's columns are the ``records`` schema's after its constant ones (checked once
    a process)."""
    want = [(f.name, _kind(f.type)) for f in list(RECORDS)[HEAD:]]
    got = [tuple(c) for c in native.RecordColumns.columns()]
    if got != want:
        raise RuntimeError(f"the native records row {got} is not the schema's {want}")


def _kind(t: pa.DataType) -> str:
    if pa.types.is_int64(t) or pa.types.is_timestamp(t):
        return "i64"
    if pa.types.is_int32(t):
        return "i32"
    if pa.types.is_boolean(t):
        return "bool"
    return "str"


class NativeRecordRows:
    """A :class:`.rows.RowBuffer` for the ``records`` table whose rows the native core makes
    (``add`` still takes a whole row made in Python)."""

    def __init__(self, native: Any, head: tuple[Any, ...]) -> None:
        check_columns(native)
        self.native = native
        self.head = head
        self.cols = native.RecordColumns()
        self.set_aside: list[pa.RecordBatch] = []
        """Full record batches a run made, handed out (first) by :meth:`take`."""
        self.head_arrays: list[pa.Array] = []
        """The constant columns, made once as long as the longest batch so far and sliced (no
        copy) for each: repeating a directory's path 4,096 times a batch was 5% of the work."""

    def __len__(self) -> int:
        n: int = len(self.cols)
        return n + sum(int(b.num_rows) for b in self.set_aside)

    def full(self) -> bool:
        """A record batch ready: one set aside, or rows enough (or text near what one may hold)."""
        return bool(self.set_aside) or self.filling_done()

    def filling_done(self) -> bool:
        """The rows being made fill a record batch."""
        return len(self.cols) >= ROWS_PER_BATCH or self.cols.held() >= MAX_HELD

    def add(self, row: tuple[Any, ...]) -> None:
        self.cols.push_row(row[HEAD:])

    def add_batch(
        self, rules: Any, batch: Any, consts: tuple[Any, ...], python_row: Callable[[int], tuple[Any, ...]]
    ) -> bool:
        """The rows of a data batch; False when its records area does not frame (the caller then
        reads it in Python, which says what is wrong)."""
        data, start, end, _compressed = batch._records_area()
        log_append = batch.max_timestamp if batch.attributes & ATTR_TIMESTAMP_TYPE else None
        stats = self.native.add_record_rows(
            self.cols,
            rules,
            data,
            start,
            end,
            batch.records_count,
            batch.base_offset,
            batch.base_timestamp,
            (batch.position, batch.base_offset, batch.partition_leader_epoch, log_append, *consts),
            python_row,
        )
        if stats is None:
            return False
        batch.stats = stats
        return True

    def take(self) -> pa.RecordBatch:
        """The oldest record batch: one set aside, else the rows made so far."""
        return self.set_aside.pop(0) if self.set_aside else self._take()

    def _take(self) -> pa.RecordBatch:
        n = len(self.cols)
        if not self.head_arrays or len(self.head_arrays[0]) < n:
            self.head_arrays = [
                pa.repeat(pa.scalar(v, type=f.type), max(n, ROWS_PER_BATCH))
                for v, f in zip(self.head, RECORDS, strict=False)
            ]
        arrays = [a.slice(0, n) for a in self.head_arrays]
        for (valid, values, offsets, nulls), f in zip(self.cols.take(), list(RECORDS)[HEAD:], strict=True):
            buffers = [pa.py_buffer(valid) if valid is not None else None]
            if offsets is not None:
                buffers.append(pa.py_buffer(offsets))
            buffers.append(pa.py_buffer(values))
            arrays.append(pa.Array.from_buffers(f.type, n, buffers, null_count=nulls))
        return pa.RecordBatch.from_arrays(arrays, schema=RECORDS)


class PlainBatch(NamedTuple):
    """What :func:`.rows.record_row` reads of a plain batch (never a control one) that a run
    takes: the batch itself is never made in Python."""

    position: int
    base_offset: int
    partition_leader_epoch: int
    is_control: bool = False


class RecordsRun:
    """Runs of plain batches, offered by the scan before each batch it would read in Python
    (:class:`metashell.log.bulk.BatchRun`): their rows are made in one native call, with no Python
    object per batch. A record the native writers do not take (a client quota, a SCRAM credential to redact) is
    made by :func:`.rows.record_row` from its bytes, in its place; a batch that is anything else
    (compressed, control, LogAppendTime, a bad CRC, records that do not frame, a record Python
    refuses) ends the run, and the scan reads it as always; a run also ends at the unit's end.
    When the rows fill a record batch it is set aside and the run goes on, up to
    :data:`MAX_SET_ASIDE` of them (then the run waits for the reader)."""

    def __init__(
        self,
        out: NativeRecordRows,
        rules: Any,
        consts: tuple[Any, ...],
        hi: int | None,
        python_row: Callable[..., tuple[Any, ...]],
    ) -> None:
        self.out, self.rules, self.consts, self.python_row = out, rules, consts, python_row
        self.limits = (LIMITS.max_records, True, hi, ROWS_PER_BATCH)

    def room(self) -> bool:
        """Another full record batch may be set aside."""
        return len(self.out.set_aside) < MAX_SET_ASIDE

    @property
    def ready(self) -> bool:
        return self.room() and not self.out.filling_done()

    def run(self, buf: bytes, pos: int, end: int, base: int) -> int:
        out, add = self.out, self.out.native.add_record_batches
        while True:
            stop, _taken = add(
                out.cols, self.rules, buf, pos, end, base, self.limits, self.consts, self.python_row
            )
            pos = int(stop)
            if pos >= end or not out.filling_done() or not self.room():
                return pos  # the unit's end, a batch left to the scan, or no room for a full batch
            out.set_aside.append(out._take())


def native_record_sink(c: FileContext, native: Any) -> Callable[[Any], None]:
    """``records`` by the native core: control batches, and batches whose records area does not
    frame, are read by :func:`.rows.add_record_rows` as the Python engine reads them."""
    unit = c.unit
    out = c.out = NativeRecordRows(native, (*c.head, unit.file, unit.kind))
    rules = record_rules(native, c.redact)
    snap, seq, since, redact = c.snap_offset, unit.replay_seq, unit.replay_from, c.redact
    consts = (snap, seq, since)

    def python(batch: Any) -> None:
        add_record_rows(
            out, c.head, unit.file, unit.kind, batch, batch.entries(),
            snap_offset=snap, replay_seq=seq, replay_from=since, redact=redact,
        )  # fmt: skip

    def run_row(
        position: int, base_offset: int, epoch: int, offset: int, ts: int, value: Any
    ) -> tuple[Any, ...]:
        batch = PlainBatch(position, base_offset, epoch)
        return record_row(batch, (offset, ts, None, value), snap, seq, since, redact)

    c.bulk = RecordsRun(out, rules, consts, unit.hi, run_row)

    def records(batch: Any) -> None:
        if batch.is_control:
            python(batch)
            return

        def python_row(i: int) -> tuple[Any, ...]:
            return record_row(batch, batch.entries()[i], snap, seq, since, redact)

        if not out.add_batch(rules, batch, consts, python_row):
            python(batch)

    return records


def records_sink(c: FileContext) -> Callable[[Any], None]:
    """``records``: a row per record, made by the native core when this worker's engine is native
    (:func:`native_record_sink`), else by Python (:func:`.rows.record_sink`)."""
    native = current_engine().native
    return record_sink(c) if native is None else native_record_sink(c, native)
