"""``metashell-spark export``: every table of many metadata directories, partitioned by cluster id.

Stages, each with a progress line:

1. plan on the driver: find the datasets and cut their files into units (no log is read);
2. ``records`` decoded in executors and written; ``partition_history`` is then computed from the
   *written* records (a Parquet scan, not a second decode);
3. ``broker_events`` and ``snapshots`` (file tables), then the image tables (one replay per dataset;
   a Python worker keeps its last image, so the tables of one directory share a replay);
4. ``errors``: every file checked again for what could not be read (file, byte offset, message).

A corrupt file never ends the job (its rows stop where it breaks and ``errors`` says where) unless
``fail_fast``.  The summary gives rows per table, files read, errors and warnings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .inputs import DEFAULT_SPLIT_BYTES, find_datasets, plan_units
from .tables import Source, names
from .tables import table as table_named

__all__ = ["PARTITION_COLUMN", "UNKNOWN_CLUSTER", "ExportSummary", "all_tables", "export"]


PARTITION_COLUMN = "cluster_key"
"""The column an export is partitioned by: the cluster id, or ``unknown`` for a directory without
one.  Never null: a null Hive partition value is ``__HIVE_DEFAULT_PARTITION__``, which Spark types
``VOID`` when every directory lacks an id (the export died) and pandas cannot unify with other
values.  ``cluster_id`` itself stays in the files, nullable."""

UNKNOWN_CLUSTER = "unknown"
TIMESTAMP_TYPE_CONF = "spark.sql.parquet.outputTimestampType"


def _cluster_key(df: Any) -> Any:
    from pyspark.sql import functions as F

    return F.coalesce(F.col("cluster_id").cast("string"), F.lit(UNKNOWN_CLUSTER))


def all_tables() -> list[str]:
    """What ``export`` writes by default, in the order it writes them: every registered table."""
    return names()


@dataclass
class ExportSummary:
    datasets: int = 0
    clusters: int = 0
    """Distinct cluster ids (directories sharing a default id count once: ``report`` tells them apart)."""
    without_id: int = 0
    files: int = 0
    units: int = 0
    bytes: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    warnings: int = 0

    def lines(self) -> list[str]:
        out = [
            (
                f"exported {self.datasets} metadata dir(s) ({self.clusters} cluster id(s), {self.without_id} "
                f"dir(s) without one): {self.files} file(s), {self.bytes:,} bytes"
            )
        ]
        width = max(len(t) for t in self.rows) if self.rows else 0
        for table, n in self.rows.items():
            out.append(f"  {table:<{width}}  {n:>12,} rows  {self.seconds.get(table, 0):7.1f} s")
        if self.errors:
            out.append(
                f"WARNING: {len(self.errors)} error(s) (the errors table has each, with its directory):"
            )
            out += [f"  {e['file']} at byte {e['position']}: {e['message']}" for e in self.errors[:20]]
        out.append(f"{len(self.errors)} error(s), {self.warnings} warning(s)")
        return out


def _errors_schema(spark: Any) -> Any:
    from .schemas import ERRORS, spark_ddl

    return spark_ddl(ERRORS)


def _reader(
    spark: Any,
    table: str,
    paths: list[str],
    redact: bool,
    fail_fast: bool,
    split_bytes: int,
    as_of: str | None,
) -> Any:
    r = (
        spark.read.format("kraft-metadata")
        .option("table", table)
        .option("redact", str(redact).lower())
        .option("errors", "fail" if fail_fast else "rows")
        .option("splitBytes", str(split_bytes))
    )
    if as_of:
        r = r.option("asOf", as_of)
    return r.load(paths)


def export(
    spark: Any,
    paths: list[str],
    out: str,
    *,
    tables: Iterable[str] | None = None,
    fmt: str = "parquet",
    redact: bool = True,
    fail_fast: bool = False,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    as_of: str | None = None,
    progress: Callable[[str], None] = print,
) -> ExportSummary:
    """Write ``tables`` of the metadata under ``paths`` to ``out/<table>`` (partitioned by
    :data:`PARTITION_COLUMN`) in ``fmt`` (parquet, or delta when Delta Lake is on the session)."""
    every = all_tables()
    asked = set(every if tables is None else tables)
    wanted = [t for t in every if t in asked]
    unknown = asked - set(every)
    if unknown:
        raise ValueError(f"no table {', '.join(sorted(unknown))} (tables: {', '.join(every)})")
    summary = ExportSummary()
    t0 = time.perf_counter()
    datasets = find_datasets(paths)
    units = plan_units(datasets, split_bytes)
    summary.datasets, summary.units = len(datasets), len(units)
    summary.clusters = len({ds.cluster_id for ds in datasets if ds.cluster_id is not None})
    summary.without_id = sum(ds.cluster_id is None for ds in datasets)
    summary.files = len({u.file for u in units})
    summary.bytes = sum(u.size for u in units if u.lo == 0)
    progress(
        f"[plan] {summary.datasets} metadata dir(s), {summary.clusters} cluster id(s), {summary.files} file(s), "
        f"{summary.bytes:,} bytes in {summary.units} unit(s) ({time.perf_counter() - t0:.1f} s)"
    )
    steps = len(wanted)

    def write(i: int, table: str, df: Any) -> None:
        t = time.perf_counter()
        target = f"{out.rstrip('/')}/{table}"
        keyed = df.withColumn(PARTITION_COLUMN, _cluster_key(df))
        keyed.write.mode("overwrite").format(fmt).partitionBy(PARTITION_COLUMN).save(target)
        n = (
            spark.read.format(fmt).schema(df.schema).load(target).count()
        )  # schema: an empty table has no file
        summary.rows[table] = n
        summary.seconds[table] = time.perf_counter() - t
        progress(f"[{i}/{steps}] {table}: {n:,} rows ({summary.seconds[table]:.1f} s)")

    # Timestamps as Parquet's TIMESTAMP_MICROS, UTC-adjusted: Spark's default INT96 reads back in
    # pandas and DuckDB as naive times, and a reader cannot tell they are UTC
    saved = spark.conf.get(TIMESTAMP_TYPE_CONF, None)
    spark.conf.set(TIMESTAMP_TYPE_CONF, "TIMESTAMP_MICROS")
    try:
        for i, name in enumerate(wanted, 1):
            t = table_named(name)
            if t.derive is not None and t.derived_from is not None:
                source = t.derived_from
                base = (
                    spark.read.format(fmt).load(f"{out.rstrip('/')}/{source}")
                    if source in summary.rows
                    else _reader(spark, source, paths, redact, fail_fast, split_bytes, None)
                )
                write(i, name, t.derive(base))
            else:
                image = t.source is Source.IMAGE
                write(
                    i,
                    name,
                    _reader(spark, name, paths, redact, fail_fast, split_bytes, as_of if image else None),
                )
            if t.reports_problems:
                found = spark.read.format(fmt).schema(_errors_schema(spark)).load(f"{out.rstrip('/')}/errors")
                summary.errors = [
                    r.asDict() for r in found.where("severity = 'error'").orderBy("file").collect()
                ]
                summary.warnings = found.where("severity = 'warning'").count()
    finally:
        if saved is None:
            spark.conf.unset(TIMESTAMP_TYPE_CONF)
        else:
            spark.conf.set(TIMESTAMP_TYPE_CONF, saved)
    return summary
