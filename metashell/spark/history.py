"""``partition_history``: the full state of every partition after every change, computed in Spark.

A PartitionChangeRecord carries only what changed (Kafka's ``PartitionRegistration.merge``: a
missing field, a Leader of -2, a LeaderRecoveryState of -1 mean "unchanged"), so the state after
each change is a forward fill over the partition's records ordered by offset:

* a PartitionRecord (a new partition, or every partition of a snapshot that replay starts from)
  starts a new *segment* and sets every field;
* each PartitionChangeRecord in the segment takes the last non-null value of each field; the
  partition epoch goes up by one per change and the leader epoch by one per change that names a
  leader (both counted with running sums);
* a RemoveTopicRecord ends every partition of its topic (a ``deleted`` row);
* a ClearElrRecord (Kafka 4.x) empties ELR and last-known ELR of the partitions of its topic (all
  topics when unnamed) that have one, a merge that bumps their partition epoch;
* directories that are empty or all MIGRATING become one MIGRATING entry per replica.

Only *replayed* records count (the ``records`` table's ``replayed``: the whole log the files hold,
from offset 0 or from the oldest snapshot, as ``history`` reads it); when segments overlap, the
first copy of an offset in replay order wins, as the loader's reader does.  Records of an aborted
metadata transaction are dropped; a change to a partition replay never created is a fault in Kafka
and is dropped here too.  Topic names come from TopicRecords by a join.

All of this is joins and windows: decoding stays stateless and the work is spread by dataset and
partition.  The few record types it needs are read once and kept (``localCheckpoint``) for the
joins.  The state at log offset N is the last row at or before N of each partition that is not
``deleted`` (:func:`state_at`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import reduce

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, StringType, StructField, StructType

from metashell.image.partition_fields import FIELDS as PARTITION_FIELDS
from metashell.image.partition_fields import Kind, Merge, field

__all__ = ["partition_history", "replayed_records", "state_at"]

MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"
_INTS = ArrayType(IntegerType())
_JSON_TYPES = {
    Kind.INT: IntegerType(),
    Kind.BROKER_IDS: _INTS,
    Kind.DIRECTORY_IDS: ArrayType(StringType()),  # base64 uuids, as Kafka's JSON writes them
    Kind.RECOVERY_STATE: IntegerType(),
}
"""How a partition field reads from a record's JSON, by what it holds."""
_FIELDS = StructType(
    [
        StructField("partitionId", IntegerType()),
        StructField("topicId", StringType()),
        *(StructField(f.spark_name, _JSON_TYPES[f.kind]) for f in PARTITION_FIELDS),
    ]
)
_STATE = [
    (f.name, f.spark_name)
    for f in PARTITION_FIELDS
    if f.merge in (Merge.CHECKED, Merge.UNLESS_NULL, Merge.UNLESS_MINUS_ONE)
]
"""The fields a change carries and a forward fill keeps (null: unchanged), as (column, JSON field)."""
_LEADER, _LEADER_EPOCH, _PARTITION_EPOCH = (
    next(f for f in PARTITION_FIELDS if f.merge is m)
    for m in (Merge.LEADER, Merge.BUMPED_BY_LEADER, Merge.BUMPED)
)
_ELRS = [field("elr"), field("last_known_elr")]
"""What a ClearElrRecord empties."""


def _all_migrating_as_replicas(dirs: Column) -> Column:
    """Directories that are empty or all MIGRATING: one MIGRATING entry per replica."""
    all_migrating = F.forall(dirs, lambda d: d == F.lit(MIGRATING))
    return F.when(
        dirs.isNull() | (F.size(dirs) == 0) | all_migrating,
        F.array_repeat(F.lit(MIGRATING), F.size(field("replicas").name)),
    ).otherwise(dirs)


_AS_THE_IMAGE_SHOWS: dict[Kind, Callable[[Column], Column]] = {
    Kind.INT: lambda c: c,
    Kind.BROKER_IDS: lambda c: F.coalesce(c, F.array().cast(_INTS)),  # absent from older versions: empty
    Kind.DIRECTORY_IDS: _all_migrating_as_replicas,
    Kind.RECOVERY_STATE: lambda c: F.when(c == 1, F.lit("RECOVERING")).otherwise(F.lit("RECOVERED")),
}
"""A partition field's filled value as the ``partitions`` table shows it, by what it holds."""
_DATASET = ["cluster_id", "node_id", "source_dir"]
_HISTORY_TYPES = (
    "PartitionRecord",
    "PartitionChangeRecord",
    "TopicRecord",
    "RemoveTopicRecord",
    "ClearElrRecord",
    "BeginTransactionRecord",
    "EndTransactionRecord",
    "AbortTransactionRecord",
)
_RECORD_COLUMNS = [
    "file",
    "batch_position",
    "offset",
    "log_offset",
    "timestamp",
    "in_snapshot",
    "replay_seq",
    "replayed",
    "record_type",
    "record_json",
    "topic_id",
    "topic_name",
    "partition_id",
]


def replayed_records(records: DataFrame) -> DataFrame:
    """The records replay applies, once each: overlapping copies of a log offset resolved (first
    in replay order) and the records of aborted metadata transactions left out."""
    r = records.where(F.col("replayed"))
    log = r.where(~F.col("in_snapshot"))
    first = Window.partitionBy("source_dir", "offset").orderBy("replay_seq", "batch_position")
    log = log.withColumn("_copy", F.row_number().over(first)).where(F.col("_copy") == 1).drop("_copy")
    # aborted transactions: a record after a BeginTransaction whose next closing marker is an Abort
    marker = (
        F.when(F.col("record_type") == "BeginTransactionRecord", F.lit("begin"))
        .when(F.col("record_type") == "EndTransactionRecord", F.lit("end"))
        .when(F.col("record_type") == "AbortTransactionRecord", F.lit("abort"))
    )
    close = F.when(F.col("record_type").isin("EndTransactionRecord", "AbortTransactionRecord"), marker)
    # running frames only (a frame ending before the current row, or reaching to the end, makes
    # Spark recompute it row by row): the last marker so far, and -- in reverse order -- the next close
    upto = Window.partitionBy("source_dir").orderBy("offset").rowsBetween(Window.unboundedPreceding, 0)
    ahead = (
        Window.partitionBy("source_dir")
        .orderBy(F.col("offset").desc())
        .rowsBetween(Window.unboundedPreceding, 0)
    )
    log = (
        log.withColumn("_open", F.last(marker, ignorenulls=True).over(upto))
        .withColumn("_close", F.last(close, ignorenulls=True).over(ahead))
        .where(
            ~((F.col("_open") == "begin") & (F.col("_close") == "abort"))
            | F.col("_open").isNull()
            | (F.col("_close").isNull())
        )
        .drop("_open", "_close")
    )
    return log.unionByName(r.where(F.col("in_snapshot")))


def _fill(column: str, segment: WindowSpec) -> Column:
    return F.last(F.col(column), ignorenulls=True).over(segment)


def _clear_elr_rows(r: DataFrame, parts: DataFrame) -> DataFrame:
    """ClearElrRecord (Kafka 4.x): a change row emptying ELR and last-known ELR for every partition
    of the named topic (every topic when the name is empty) that exists at that offset."""
    clears = r.where(F.col("record_type") == "ClearElrRecord").select(
        "source_dir",
        F.col("log_offset").alias("_at"),
        F.col("offset").alias("_off"),
        F.col("timestamp").alias("_ts"),
        F.coalesce(F.get_json_object("record_json", "$.topicName"), F.lit("")).alias("_name"),
    )
    topics = r.where(F.col("record_type") == "TopicRecord").select(
        "source_dir", "topic_id", "topic_name", F.col("log_offset").alias("_created")
    )
    removed = (
        r.where(F.col("record_type") == "RemoveTopicRecord")
        .groupBy("source_dir", "topic_id")
        .agg(F.min("log_offset").alias("_removed"))
    )
    born = (
        parts.where(F.col("_new"))
        .groupBy("source_dir", "topic_id", "partition_id")
        .agg(F.min("log_offset").alias("_born"))
    )
    alive = topics.join(removed, ["source_dir", "topic_id"], "left")
    hits = (
        clears.join(alive, "source_dir")
        .where(
            (F.col("_created") < F.col("_at"))
            & (F.col("_removed").isNull() | (F.col("_removed") > F.col("_at")))
            & ((F.col("_name") == "") | (F.col("_name") == F.col("topic_name")))
        )
        .join(born, ["source_dir", "topic_id"])
        .where(F.col("_born") < F.col("_at"))
    )
    empty = F.array().cast(_INTS)
    return hits.select(
        "source_dir",
        "topic_id",
        "partition_id",
        F.col("_at").alias("log_offset"),
        F.col("_off").alias("offset"),
        F.col("_ts").alias("timestamp"),
        F.lit("ClearElrRecord").alias("record_type"),
        F.lit(False).alias("in_snapshot"),
        F.lit(False).alias("_new"),
        F.lit(True).alias("_clear"),
        F.struct(
            *[
                (empty if f.name in [e.spark_name for e in _ELRS] else F.lit(None).cast(f.dataType)).alias(
                    f.name
                )
                for f in _FIELDS.fields
            ]
        ).alias("d"),
    )


def partition_history(records: DataFrame) -> DataFrame:
    """One row per partition per change: the partition's whole state after it (see the module)."""
    # the records this needs, read once: every branch below would otherwise decode the files again
    wanted = records.where(F.col("replayed") & F.col("record_type").isin(*_HISTORY_TYPES))
    r = replayed_records(wanted.select(*_DATASET, *_RECORD_COLUMNS)).localCheckpoint()
    names = (
        r.where(F.col("record_type") == "TopicRecord")
        .groupBy("source_dir", "topic_id")
        .agg(F.first("topic_name").alias("topic_name"))
    )
    parts = r.where(F.col("record_type").isin("PartitionRecord", "PartitionChangeRecord")).select(
        "source_dir",
        "topic_id",
        "partition_id",
        "log_offset",
        "offset",
        "timestamp",
        "record_type",
        "in_snapshot",
        (F.col("record_type") == "PartitionRecord").alias("_new"),
        F.lit(False).alias("_clear"),
        F.from_json("record_json", _FIELDS).alias("d"),
    )
    parts = parts.unionByName(_clear_elr_rows(r, parts))
    dataset = r.select(*_DATASET).distinct()
    key = ["source_dir", "topic_id", "partition_id"]
    ordered = Window.partitionBy(*key).orderBy("log_offset", "offset")
    parts = parts.withColumn("_segment", F.sum(F.col("_new").cast("int")).over(ordered))
    parts = parts.where(F.col("_segment") > 0)  # changes to a partition replay never created
    segment = Window.partitionBy(*key, "_segment").orderBy("log_offset", "offset")
    upto = segment.rowsBetween(Window.unboundedPreceding, 0)
    change = ~F.col("_new") & ~F.col("_clear")
    out = parts.select(
        "source_dir",
        "topic_id",
        "partition_id",
        "log_offset",
        "offset",
        "timestamp",
        "record_type",
        "in_snapshot",
        "_segment",
        "_new",
        "_clear",
        *[F.col(f"d.{src}").alias(f"_{dst}") for dst, src in _STATE],
        F.col(f"d.{_LEADER.spark_name}").alias("_leader"),
        F.col(f"d.{_LEADER_EPOCH.spark_name}").alias("_le0"),
        F.col(f"d.{_PARTITION_EPOCH.spark_name}").alias("_pe0"),
        (change & F.col(f"d.{_LEADER.spark_name}").isNotNull()).cast("int").alias("_bump"),
        change.cast("int").alias("_change"),
    )
    filled = out.select(
        "*",
        *[_fill(f"_{dst}", upto).alias(dst) for dst, _src in _STATE],
        _fill("_leader", upto).alias(_LEADER.name),
        (F.first("_le0").over(upto) + F.sum("_bump").over(upto)).cast("int").alias(_LEADER_EPOCH.name),
    )
    # a ClearElrRecord changes (and bumps the partition epoch of) only partitions that had an ELR
    had_elr = reduce(operator.or_, [F.size(F.lag(e.name).over(segment)) > 0 for e in _ELRS])
    filled = filled.withColumn("_cleared", (F.col("_clear") & had_elr).cast("int"))
    filled = filled.withColumn(
        _PARTITION_EPOCH.name,
        (F.first("_pe0").over(upto) + F.sum(F.col("_change") + F.col("_cleared")).over(upto)).cast("int"),
    ).where(~F.col("_clear") | (F.col("_cleared") == 1))
    changed = F.array_compact(
        F.array(
            *[F.when(F.col(f"_{dst}").isNotNull(), F.lit(dst)) for dst, _src in [*_STATE, (_LEADER.name, "")]]
        )
    )
    filled = filled.select(
        "source_dir",
        "topic_id",
        "partition_id",
        F.col("log_offset").alias("offset"),
        "timestamp",
        "record_type",
        F.when(F.col("in_snapshot"), F.lit("snapshot"))
        .when(F.col("_new"), F.lit("created"))
        .otherwise(F.lit("changed"))
        .alias("change"),
        F.when(F.col("_new"), F.array().cast("array<string>")).otherwise(changed).alias("changed"),
        *(_AS_THE_IMAGE_SHOWS[f.kind](F.col(f.name)).alias(f.name) for f in PARTITION_FIELDS),
        F.lit(False).alias("deleted"),
    )
    removed = r.where(F.col("record_type") == "RemoveTopicRecord").select(
        "source_dir",
        "topic_id",
        F.col("log_offset").alias("removed_at"),
        F.col("timestamp").alias("removed_time"),
    )
    last = Window.partitionBy(*key).orderBy(F.col("offset").desc())
    latest = filled.withColumn("_n", F.row_number().over(last)).where(F.col("_n") == 1).drop("_n")
    deleted = (
        latest.join(removed, ["source_dir", "topic_id"])
        .where(F.col("removed_at") > F.col("offset"))
        .withColumn("offset", F.col("removed_at"))
        .withColumn("timestamp", F.col("removed_time"))
        .withColumn("record_type", F.lit("RemoveTopicRecord"))
        .withColumn("change", F.lit("deleted"))
        .withColumn("changed", F.array().cast("array<string>"))
        .withColumn("deleted", F.lit(True))
        .drop("removed_at", "removed_time")
    )
    history = filled.unionByName(deleted.select(*filled.columns))
    return (
        history.join(names, ["source_dir", "topic_id"], "left")
        .join(dataset, "source_dir")
        .select(
            *_DATASET,
            "topic_id",
            "topic_name",
            "partition_id",
            "offset",
            "timestamp",
            "record_type",
            "change",
            "changed",
            *(f.name for f in PARTITION_FIELDS),
            "deleted",
        )
    )


def state_at(history: DataFrame, offset: int) -> DataFrame:
    """Every partition as it stood after log ``offset``: its last row at or before it, unless that
    row deleted it."""
    last = Window.partitionBy("source_dir", "topic_id", "partition_id").orderBy(F.col("offset").desc())
    return (
        history.where(F.col("offset") <= offset)
        .withColumn("_n", F.row_number().over(last))
        .where((F.col("_n") == 1) & ~F.col("deleted"))
        .drop("_n")
    )
