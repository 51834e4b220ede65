"""The ``partitions`` table, built column by column from an image: a million partitions are its
usual size, so it is not made of named rows as the other image tables are (:mod:`.image_rows`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import attrgetter
from typing import Any

import pyarrow as pa

from metashell.image.image import MetadataImage
from metashell.image.kafka_names import LEADER_RECOVERY_STATE_NAMES, enum_name
from metashell.protocol.uuid import uuid_to_str

from .rows import ROWS_PER_BATCH
from .schemas import PARTITIONS

__all__ = ["partition_batches"]


#: The columns read straight off a partition's attribute of the same name: the schema's, between the
#: partition id and the two columns converted on the way (directories, the recovery state's name).
_PARTITION_FIELDS = tuple(
    PARTITIONS.names[PARTITIONS.names.index("partition_id") + 1 : PARTITIONS.names.index("directories")]
)


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
        for f in _PARTITION_FIELDS:
            values = list(map(attrgetter(f), parts))
            kind = types[f]
            columns.append(
                _distinct_column(values, kind)
                if isinstance(kind, pa.ListType)
                else pa.array(values, type=kind)
            )
        columns.append(
            _distinct_column(
                [p.directories for p in parts], types["directories"], lambda ds: [uuid_to_str(d) for d in ds]
            )
        )
        columns.append(
            _distinct_column(
                [p.leader_recovery_state for p in parts],
                types["leader_recovery_state"],
                lambda code: enum_name(LEADER_RECOVERY_STATE_NAMES, code),
            )
        )
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
