"""Executor side of the file tables: one unit (a byte range of one file) into Arrow record batches.

Decoding is stateless -- every row is made from its record and the batch it sits in (the builders:
:mod:`.rows`) -- so units of any dataset run anywhere, in any order.  What needs state (a topic's
name for a partition change, the value a change replaced, which copy of an offset replay keeps) is
left to joins and windows in Spark (:mod:`metashell.spark.history`).

A corrupt batch ends the unit: ``errors="rows"`` turns it into a row of the ``errors`` table (the
file and byte offset, the decoder's one line), ``errors="fail"`` raises it (``--fail-fast``).
Survivable problems (a torn tail of the last segment) are ``warning`` rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from metashell.errors import DecodeError, MetashellError, out_of_memory
from metashell.log.files import first_batch_at_or_after, iter_file_batches
from metashell.log.problems import CorruptBatchError, LogWarning

from .inputs import Unit
from .rows import FileContext, RowBuffer, late_timestamp
from .schemas import ERRORS
from .tables import Table
from .tables import table as lookup

__all__ = ["read_file_table"]


def read_file_table(
    table: str | Table, unit: Unit, *, redact: bool = True, errors: str = "rows"
) -> Iterator[pa.RecordBatch]:
    """The rows of a file ``table`` (records, errors, broker_events, snapshots ...) that ``unit``
    holds."""
    if isinstance(table, str):
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
                late = late_timestamp(batch) if table.reports_problems else None
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
