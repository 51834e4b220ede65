"""The table registry: every table of the ``kraft-metadata`` source, declared once.

PySpark's own data source examples key each table's schema and its row code by the same name; here
a :class:`Table` is that pair plus how it is read: decoded file by file (:attr:`Source.FILE`),
replayed one dataset at a time (:attr:`Source.IMAGE`), or computed by Spark from another table
(:attr:`Source.DERIVED`).  The data source, ``export``, ``report`` and the CLI take their table
lists from here, in the order tables are registered (the order ``export`` writes them), and the
reader carries the :class:`Table` itself to the executors, so a table registered by a user's (or a
test's) module is read like the built-in ones.  Adding a table is one :func:`register` call.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from . import image_rows, schemas
from .churn import churn_rows
from .native_records import records_sink
from .rows import FileContext, broker_event_sink, check_sink, snapshot_finish, snapshot_sink

if TYPE_CHECKING:
    from metashell.image.image import MetadataImage
    from metashell.image.loader import LoadResult

    from .inputs import Dataset

__all__ = ["Source", "Table", "names", "register", "table", "tables"]


class Source(enum.Enum):
    FILE = "file"
    """Decoded file by file, a file cut into units read in parallel (``records``, ``errors`` ...)."""
    IMAGE = "image"
    """One dataset replayed into an image per task (``topics``, ``partitions`` ...)."""
    DERIVED = "derived"
    """Computed by Spark from another table (``partition_history`` from ``records``)."""


ImageRows = Callable[["MetadataImage", bool], Iterable[Mapping[str, Any]]]
ImageBatches = Callable[["MetadataImage", tuple[Any, ...]], Iterator[pa.RecordBatch]]
FileSink = Callable[[FileContext], Callable[[Any], None]]
DatasetRows = Callable[["Dataset", "LoadResult", bool], Iterable[Mapping[str, Any]]]


@dataclass(frozen=True)
class Table:
    """One table: its name, columns, and the code that makes its rows."""

    name: str
    source: Source
    doc: str
    schema: pa.Schema | None = None
    """The columns (None for a derived table: Spark computes them)."""
    rows: ImageRows | None = None
    """IMAGE: (image, redact) -> one mapping per row, keyed by the columns after the image ones."""
    batches: ImageBatches | None = None
    """IMAGE: a faster path to the same rows as whole Arrow batches (``partitions``)."""
    sink: FileSink | None = None
    """FILE: given the unit's context, a function that adds one batch's rows."""
    finish: Callable[[FileContext], None] | None = None
    """FILE: rows added once the unit's batches are read (``snapshots``: the file's own row)."""
    snapshot_files_only: bool = False
    """FILE: only snapshot and bootstrap files are planned, each whole."""
    reports_problems: bool = False
    """FILE: the rows are the problems found reading (``errors``), and each dataset is checked too."""
    dataset_rows: DatasetRows | None = None
    """IMAGE: rows that need the dataset's log as well as its image (``churn``): (dataset, its
    load, redact) -> one mapping per row."""
    derive: Callable[[Any], Any] | None = None
    """DERIVED: the DataFrame of the table it is computed from -> this table's DataFrame."""
    derived_from: str | None = None


_TABLES: dict[str, Table] = {}


def register(t: Table) -> Table:
    """Add ``t`` (after the tables already registered: the order ``export`` writes them in)."""
    if t.name in _TABLES:
        raise ValueError(f"table {t.name!r} registered twice")
    if (t.source is Source.DERIVED) != (t.schema is None):
        raise ValueError(f"table {t.name!r}: a derived table has no schema, and only a derived one")
    _TABLES[t.name] = t
    return t


def unregister(name: str) -> None:
    """Remove a table (a test's own, when the test ends)."""
    _TABLES.pop(name, None)


def tables() -> Mapping[str, Table]:
    return _TABLES


def names(*sources: Source) -> list[str]:
    """Table names in registration order, of the given sources (all when none is given)."""
    return [n for n, t in _TABLES.items() if not sources or t.source in sources]


def table(name: str) -> Table:
    """The table called ``name``; a KeyError whose message lists them all."""
    found = _TABLES.get(name)
    if found is None:
        raise KeyError(f"no table {name!r} (tables: {', '.join(_TABLES)})")
    return found


def _partition_history(records: Any) -> Any:
    from .history import partition_history

    return partition_history(records)


def _partition_batches(image: MetadataImage, head: tuple[Any, ...]) -> Iterator[pa.RecordBatch]:
    from .partition_columns import partition_batches  # pyarrow compute, imported when used

    return partition_batches(image, head)


for _t in (
    Table(
        "records",
        Source.FILE,
        "every record of every file, with its offsets, time and key columns",
        schemas.RECORDS,
        sink=records_sink,
    ),
    Table(
        "partition_history",
        Source.DERIVED,
        "every partition's state after each change",
        derive=_partition_history,
        derived_from="records",
    ),
    Table(
        "broker_events",
        Source.FILE,
        "registrations, fencing, controlled shutdowns",
        schemas.BROKER_EVENTS,
        sink=broker_event_sink,
    ),
    Table(
        "snapshots",
        Source.FILE,
        "one row per snapshot or bootstrap file",
        schemas.SNAPSHOTS,
        sink=snapshot_sink,
        finish=snapshot_finish,
        snapshot_files_only=True,
    ),
    Table("topics", Source.IMAGE, "topics of the image", schemas.TOPICS, rows=image_rows.topic_rows),
    Table(
        "partitions",
        Source.IMAGE,
        "partitions of the image",
        schemas.PARTITIONS,
        batches=_partition_batches,
    ),
    Table("brokers", Source.IMAGE, "registered brokers", schemas.BROKERS, rows=image_rows.broker_rows),
    Table(
        "controllers",
        Source.IMAGE,
        "registered controllers",
        schemas.CONTROLLERS,
        rows=image_rows.controller_rows,
    ),
    Table("configs", Source.IMAGE, "config overrides", schemas.CONFIGS, rows=image_rows.config_rows),
    Table("acls", Source.IMAGE, "ACL bindings", schemas.ACLS, rows=image_rows.acl_rows),
    Table("quotas", Source.IMAGE, "client quotas", schemas.QUOTAS, rows=image_rows.quota_rows),
    Table("features", Source.IMAGE, "finalized features", schemas.FEATURES, rows=image_rows.feature_rows),
    Table(
        "scram_users",
        Source.IMAGE,
        "SCRAM credentials (no secrets)",
        schemas.SCRAM_USERS,
        rows=image_rows.scram_user_rows,
    ),
    Table(
        "producer_ids",
        Source.IMAGE,
        "the producer id block",
        schemas.PRODUCER_IDS,
        rows=image_rows.producer_id_rows,
    ),
    Table(
        "nodes",
        Source.IMAGE,
        "each directory's node: voter or observer, leader and voters, last epoch",
        schemas.NODES,
        rows=image_rows.node_rows,
    ),
    Table(
        "churn",
        Source.IMAGE,
        "records per type and hour, and changes per topic, partition and broker by kind (stats)",
        schemas.CHURN,
        dataset_rows=churn_rows,
    ),
    Table(
        "errors",
        Source.FILE,
        "what could not be read, and warnings",
        schemas.ERRORS,
        sink=check_sink,
        reports_problems=True,
    ),
):
    register(_t)
