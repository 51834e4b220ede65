"""The ``partitions`` table, built column by column from an image: a million partitions are its
usual size, so it is not made of named rows as the other image tables are (:mod:`.image_rows`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import Any

import pyarrow as pa

from metashell.image.image import MetadataImage
from metashell.image.kafka_names import LEADER_RECOVERY_STATE_NAMES, enum_name
from metashell.image.partition_fields import FIELDS as PARTITION_FIELDS
from metashell.image.partition_fields import Kind
from metashell.protocol.uuid import uuid_to_str

from .rows import ROWS_PER_BATCH
from .schemas import PARTITIONS

__all__ = ["partition_batches"]


_CONVERT: dict[Kind, Callable[[Any], Any] | None] = {
    Kind.INT: None,
    Kind.BROKER_IDS: None,
    Kind.DIRECTORY_IDS: lambda ds: [uuid_to_str(d) for d in ds],
    Kind.RECOVERY_STATE: lambda code: enum_name(LEADER_RECOVERY_STATE_NAMES, code),
}
"""How a partition field's value becomes its column's, by what it holds (None: as it is)."""


def _distinct_column(
    values: list[Any], type_: pa.DataType, convert: Callable[[Any], Any] | None = None
) -> pa.Array:
    """``values`` as an Arrow array, each distinct value converted once (by ``convert``, if
    given): a cluster has a few hundred distinct replica and directory lists for a million
    partitions, so numbering them in Python and letting Arrow ``take`` the rows costs a fraction
    of converting every list element by element."""
    number: dict[Any, int] = {}
    indices = [number.setdefault(v, len(number)) for v in values]
    distinct = list(number) if convert is None else list(map(convert, number))
    return pa.array(distinct, type=type_).take(pa.array(indices, type=pa.int32()))


def partition_batches(image: MetadataImage, head: tuple[Any, ...]) -> Iterator[pa.RecordBatch]:
    """The ``partitions`` table column by column, a batch per run of topics: a million partitions
    are read with one ``attrgetter`` pass per column (no row tuples to build and transpose).
    Replica and directory lists and recovery states repeat, so those columns are built from their
    distinct values (:func:`_distinct_column`); a topic's id and name are converted once and taken
    per row."""
    schema = PARTITIONS
    types = {f.name: f.type for f in schema}

    def batch(topics: list[Any]) -> pa.RecordBatch:
        which: list[int] = []
        index: list[int] = []
        parts: list[Any] = []
        for i, t in enumerate(topics):
            which += [i] * len(t.partitions)
            index += t.partitions.keys()
            parts += t.partitions.values()
        n = len(parts)
        rows = pa.array(which, type=pa.int32())
        columns = [pa.repeat(pa.scalar(v, type=f.type), n) for v, f in zip(head, schema, strict=False)]
        columns.append(pa.array([uuid_to_str(t.id) for t in topics], type=pa.string()).take(rows))
        columns.append(pa.array([t.name for t in topics], type=pa.string()).take(rows))
        columns.append(pa.array(index, type=pa.int32()))
        for f in PARTITION_FIELDS:
            values = list(map(attrgetter(f.name), parts))
            kind = types[f.name]
            if f.kind is Kind.INT:
                columns.append(pa.array(values, type=kind))
            else:  # lists and codes repeat: each distinct value converted once
                columns.append(_distinct_column(values, kind, _CONVERT[f.kind]))
        return pa.RecordBatch.from_arrays(columns, schema=schema)

    run: list[Any] = []
    size = 0
    for t in image.topics.by_id.values():
        run.append(t)
        size += len(t.partitions)
        if size >= ROWS_PER_BATCH:
            yield batch(run)
            run, size = [], 0
    if run:
        yield batch(run)
