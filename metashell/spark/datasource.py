"""``spark.read.format("kraft-metadata")``: the Python Data Source that turns metadata logs into rows.

The driver only lists files and plans (:mod:`.inputs`); each input partition is decoded in an
executor -- a byte range of one file for ``records``, ``errors``, ``broker_events`` and
``snapshots`` (:mod:`.decode`), one whole dataset replayed for the image tables (:mod:`.images`)
-- and comes back as Arrow record batches.

Options (keys are case-insensitive, as Spark passes them):

``table``       records (default), errors, broker_events, snapshots, topics, partitions, brokers,
                controllers, configs, acls, quotas, features, scram_users, producer_ids
``redact``      ``false`` shows secrets (sensitive config values, SCRAM salts and keys)
``asOf``        image tables: the image after this log offset or ISO-8601 time, not at the end
``errors``      ``rows`` (default: a corrupt file ends its unit; the ``errors`` table says where)
                or ``fail`` (raise: ``--fail-fast``)
``splitBytes``  files larger than this are read as several partitions (default 64 MiB)
``minPartitions`` small files are packed into this many tasks or more (default: two a core of the
                session :func:`metashell.spark.register` was given, else 16)

``readStream`` takes ``bootstrap.controllers`` (and ``config``, a client properties file for TLS
or SASL) instead of paths: see :mod:`.stream`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from .inputs import (
    DEFAULT_SPLIT_BYTES,
    Dataset,
    InputError,
    Unit,
    dataset_bytes,
    find_datasets,
    min_partitions,
    pack,
    plan_units,
    unit_bytes,
)
from .schemas import spark_ddl
from .tables import Source, Table, tables

__all__ = ["KraftMetadataDataSource"]

NAME = "kraft-metadata"


def _paths(options: dict[str, str]) -> list[str]:
    if "paths" in options:
        value = json.loads(options["paths"])
        return [value] if isinstance(value, str) else list(value)
    if "path" in options:
        return [options["path"]]
    raise InputError("kraft-metadata: give the metadata directories or files to load(...)")


def _flag(options: dict[str, str], key: str, default: bool) -> bool:
    value = options.get(key.lower())
    return default if value is None else value.strip().lower() not in ("false", "0", "no", "off")


def _count(options: dict[str, str], key: str, default: int) -> int:
    value = options.get(key)
    if value is None:
        return default
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(f"kraft-metadata: {key} must be a whole number of at least 1, not {value!r}")
    return n


class _Part(InputPartition):
    """One task's work: file ranges (file tables) or datasets (image tables), packed by size."""

    def __init__(self, items: list[Unit] | list[Dataset]) -> None:
        super().__init__(len(items))
        self.items = items


class KraftMetadataDataSource(DataSource):
    """Registered as ``kraft-metadata`` by :func:`metashell.spark.register`."""

    @classmethod
    def name(cls) -> str:
        return NAME

    TABLES: ClassVar[Mapping[str, Table] | None] = None
    """The tables this class reads (None: the registry of the process it runs in); see
    :func:`source_class`."""
    PARALLELISM: ClassVar[int | None] = None
    """The cores of the session the class was registered with (None: not known), which sizes the
    tasks (:func:`.inputs.min_partitions`): planning runs in a Python worker, which has no
    SparkContext to ask."""

    def _table(self) -> Table:
        name = self.options.get("table", "records").strip().lower()
        known = type(self).TABLES or tables()
        found = known.get(name)
        if found is None or found.schema is None:
            readable = ", ".join(n for n, t in known.items() if t.schema is not None)
            derived = "; ".join(
                f"{t.name} is metashell.spark.{t.name}({t.derived_from})"
                for t in known.values()
                if t.source is Source.DERIVED
            )
            raise InputError(f"kraft-metadata: no table {name!r} (tables: {readable}; {derived})")
        return found

    def schema(self) -> str:
        schema = self._table().schema
        assert schema is not None
        return spark_ddl(schema)

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self._table(), dict(self.options), self.PARALLELISM)

    def simpleStreamReader(self, schema: Any) -> Any:
        """``readStream``: committed records of a live quorum (:mod:`.stream`)."""
        if self._table().name != "records":
            raise InputError("kraft-metadata: a stream has the records table only")
        from .stream import LiveStreamReader

        return LiveStreamReader(dict(self.options))


def source_class(parallelism: int | None = None) -> type[KraftMetadataDataSource]:
    """The class to register with a session: it carries the tables registered so far, and the
    session's cores (``parallelism``, which sizes the tasks).

    Spark plans a Python data source in a Python worker, which imports metashell afresh: a table
    registered by the user's own module (or a test's) is in the driver's registry only.  A class
    made here is not importable, so Spark's cloudpickle sends it by value, and with it the
    :class:`Table` objects (their row functions by reference, or by value when their module is
    registered with ``cloudpickle.register_pickle_by_value``)."""
    return type(
        "KraftMetadataDataSource",
        (KraftMetadataDataSource,),
        {"TABLES": dict(tables()), "PARALLELISM": parallelism, "__module__": __name__},
    )


class _Reader(DataSourceReader):
    """Pickled to the executors with its :class:`Table`: a table registered only in the driver's
    process (a user's or a test's module) is read like the built-in ones."""

    def __init__(self, table: Table, options: dict[str, str], parallelism: int | None = None) -> None:
        self.table = table
        self.options = {k.lower(): v for k, v in options.items()}
        self.least = _count(self.options, "minpartitions", min_partitions(parallelism))
        """Input partitions small units are packed into, at least (:func:`.inputs.pack`)."""
        self.redact = _flag(self.options, "redact", True)
        self.as_of = self.options.get("asof") or None
        self.errors = self.options.get("errors", "rows").strip().lower()
        if self.errors not in ("rows", "fail"):
            raise InputError(f"kraft-metadata: errors must be rows or fail, not {self.errors!r}")

    def partitions(self) -> list[InputPartition]:
        datasets = find_datasets(_paths(self.options))
        split = int(self.options.get("splitbytes", DEFAULT_SPLIT_BYTES))
        if self.table.source is Source.IMAGE:
            return [
                _Part(g) for g in pack(datasets, [dataset_bytes(ds) for ds in datasets], split, self.least)
            ]
        if self.table.snapshot_files_only:
            units = [u for u in plan_units(datasets, split_bytes=1 << 62) if u.kind != "log"]
        else:
            units = plan_units(datasets, split)
        sizes = [unit_bytes(u) for u in units]
        parts: list[InputPartition] = [_Part(g) for g in pack(units, sizes, split, self.least)]
        if self.table.reports_problems:  # and each dataset's own: its notes, a replay that fails
            parts += [
                _Part(g) for g in pack(datasets, [dataset_bytes(ds) for ds in datasets], split, self.least)
            ]
        # no unit (no snapshot anywhere in a young fleet): one empty partition of ours, not the
        # InputPartition(None) PySpark puts in its place, which read() would not know
        return parts or [_Part([])]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if not isinstance(partition, _Part):  # PySpark's stand-in for "no partition": no rows
            return
        for item in partition.items:
            if isinstance(item, Unit):
                from .decode import read_file_table

                yield from read_file_table(self.table, item, redact=self.redact, errors=self.errors)
                continue
            from .images import check_dataset, read_image_table

            if self.table.reports_problems:
                yield from check_dataset(item, errors=self.errors)
                continue
            try:
                yield from read_image_table(self.table, item, as_of=self.as_of, redact=self.redact)
            except Exception as e:  # one dataset's failure must not end the fleet's job
                if self.errors == "fail":
                    raise
                import sys  # the errors table has it as a row (check_dataset); the log has it too

                print(f"metashell-spark: {item.path}: {self.table.name}: {e}", file=sys.stderr)
