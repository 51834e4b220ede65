"""The tables' columns, declared once as Arrow schemas; Spark's DDL is derived from them.

Executors yield ``pyarrow.RecordBatch`` objects, and Spark's Python data source requires their
Arrow types to match the declared schema exactly (an int32 where bigint was declared fails), so the
Arrow schema is the single source of truth and :func:`spark_ddl` writes the Spark side from it.

Which table has which schema, and how its rows are made, is :mod:`.tables`.  Every table
starts with the dataset columns (which cluster, which node, which directory); the
image tables add ``offset``, the last log offset the image holds.
"""

from __future__ import annotations

import pyarrow as pa

from metashell.image.partition_fields import FIELDS as PARTITION_FIELDS
from metashell.image.partition_fields import Kind

__all__ = ["spark_ddl"]

_DATASET = [
    pa.field("cluster_id", pa.string()),
    pa.field("node_id", pa.int32()),
    pa.field("source_dir", pa.string()),
]
_IMAGE = [*_DATASET, pa.field("offset", pa.int64())]
_TS = pa.timestamp("us", tz="UTC")
_INTS = pa.list_(pa.int32())
_LISTENERS = pa.list_(
    pa.struct(
        [
            ("name", pa.string()),
            ("host", pa.string()),
            ("port", pa.int32()),
            ("security_protocol", pa.string()),
        ]
    )
)
_FEATURES = pa.list_(
    pa.struct([("name", pa.string()), ("min_version", pa.int32()), ("max_version", pa.int32())])
)

RECORDS = pa.schema(
    [
        *_DATASET,
        pa.field("file", pa.string()),
        pa.field("file_kind", pa.string()),  # log, snapshot, bootstrap
        pa.field("batch_position", pa.int64()),
        pa.field("batch_base_offset", pa.int64()),
        pa.field("offset", pa.int64()),  # as in the file (kafka-dump-log's offset)
        pa.field("log_offset", pa.int64()),  # where it stands in the log: a snapshot's end offset - 1
        pa.field("leader_epoch", pa.int32()),
        pa.field("timestamp", _TS),
        pa.field("in_snapshot", pa.bool_()),
        pa.field("is_control", pa.bool_()),
        pa.field("is_transaction_marker", pa.bool_()),
        pa.field("replay_seq", pa.int32()),  # the file's place in replay order; null: not replayed
        pa.field("replayed", pa.bool_()),  # part of the replay (before overlaps are resolved)
        pa.field("record_type", pa.string()),
        pa.field("record_version", pa.int32()),
        pa.field("record_json", pa.string()),  # Kafka's JSON form of the record's data (redacted)
        pa.field("topic_id", pa.string()),
        pa.field("topic_name", pa.string()),
        pa.field("partition_id", pa.int32()),
        pa.field("broker_id", pa.int32()),
        pa.field("controller_id", pa.int32()),
        pa.field("resource_type", pa.string()),
        pa.field("resource_name", pa.string()),
        pa.field("config_name", pa.string()),
        pa.field("principal", pa.string()),
        pa.field("user_name", pa.string()),
        pa.field("feature_name", pa.string()),
    ]
)

ERRORS = pa.schema(
    [
        *_DATASET,
        pa.field("file", pa.string()),
        pa.field("position", pa.int64()),  # byte offset in the file
        pa.field("severity", pa.string()),  # error (the rest of the unit was not read) or warning
        pa.field("kind", pa.string()),
        pa.field("message", pa.string()),
    ]
)

BROKER_EVENTS = pa.schema(
    [
        *_DATASET,
        pa.field("file", pa.string()),
        pa.field("offset", pa.int64()),
        pa.field("log_offset", pa.int64()),
        pa.field("timestamp", _TS),
        pa.field("in_snapshot", pa.bool_()),
        pa.field("broker_id", pa.int32()),
        pa.field("broker_epoch", pa.int64()),
        pa.field("event", pa.string()),  # register, fence, unfence, controlled_shutdown, unregister
        pa.field("record_type", pa.string()),
    ]
)

SNAPSHOTS = pa.schema(
    [
        *_DATASET,
        pa.field("file", pa.string()),
        pa.field("kind", pa.string()),  # snapshot or bootstrap
        pa.field("end_offset", pa.int64()),
        pa.field("epoch", pa.int32()),
        pa.field("last_contained_timestamp", _TS),
        pa.field("record_count", pa.int64()),
        pa.field("batch_count", pa.int64()),
        pa.field("size_bytes", pa.int64()),
    ]
)

TOPICS = pa.schema(
    [
        *_IMAGE,
        pa.field("topic_id", pa.string()),
        pa.field("topic_name", pa.string()),
        pa.field("partition_count", pa.int32()),
        pa.field("replication_factor", pa.int32()),
    ]
)

_PARTITION_FIELD_TYPES = {
    Kind.INT: pa.int32(),
    Kind.BROKER_IDS: _INTS,
    Kind.DIRECTORY_IDS: pa.list_(pa.string()),
    Kind.RECOVERY_STATE: pa.string(),  # Kafka's name for the code
}
"""A partition field's column type, by what it holds (``image/partition_fields.py``)."""

PARTITIONS = pa.schema(
    [
        *_IMAGE,
        pa.field("topic_id", pa.string()),
        pa.field("topic_name", pa.string()),
        pa.field("partition_id", pa.int32()),
        *(pa.field(f.name, _PARTITION_FIELD_TYPES[f.kind]) for f in PARTITION_FIELDS),
    ]
)

BROKERS = pa.schema(
    [
        *_IMAGE,
        pa.field("broker_id", pa.int32()),
        pa.field("broker_epoch", pa.int64()),
        pa.field("incarnation_id", pa.string()),
        pa.field("rack", pa.string()),
        pa.field("fenced", pa.bool_()),
        pa.field("in_controlled_shutdown", pa.bool_()),
        pa.field("is_migrating_zk_broker", pa.bool_()),
        pa.field("listeners", _LISTENERS),
        pa.field("features", _FEATURES),
        pa.field("log_dirs", pa.list_(pa.string())),
        pa.field("cordoned_log_dirs", pa.list_(pa.string())),  # Kafka 4.3+; null: not reported
    ]
)

CONTROLLERS = pa.schema(
    [
        *_IMAGE,
        pa.field("controller_id", pa.int32()),
        pa.field("incarnation_id", pa.string()),
        pa.field("zk_migration_ready", pa.bool_()),
        pa.field("listeners", _LISTENERS),
        pa.field("features", _FEATURES),
    ]
)

CONFIGS = pa.schema(
    [
        *_IMAGE,
        pa.field("resource_type", pa.string()),
        pa.field("resource_name", pa.string()),
        pa.field("name", pa.string()),
        pa.field("value", pa.string()),
        pa.field("sensitive", pa.bool_()),
    ]
)

ACLS = pa.schema(
    [
        *_IMAGE,
        pa.field("acl_id", pa.string()),
        pa.field("resource_type", pa.string()),
        pa.field("resource_name", pa.string()),
        pa.field("pattern_type", pa.string()),
        pa.field("principal", pa.string()),
        pa.field("host", pa.string()),
        pa.field("operation", pa.string()),
        pa.field("permission_type", pa.string()),
    ]
)

QUOTAS = pa.schema(
    [
        *_IMAGE,
        pa.field("entity", pa.string()),
        pa.field("user", pa.string()),
        pa.field("client_id", pa.string()),
        pa.field("ip", pa.string()),
        pa.field("key", pa.string()),
        pa.field("value", pa.float64()),
    ]
)

FEATURES = pa.schema([*_IMAGE, pa.field("name", pa.string()), pa.field("level", pa.int32())])

NODES = pa.schema(
    [
        *_IMAGE,
        pa.field("role", pa.string()),  # voter, observer, unknown
        pa.field("leader_id", pa.int32()),
        pa.field("leader_epoch", pa.int32()),
        pa.field("voters", _INTS),
        pa.field("kraft_version", pa.int32()),
        pa.field("last_epoch", pa.int32()),
        pa.field("snapshot_end_offset", pa.int64()),
        pa.field("metadata_version", pa.string()),
    ]
)

SCRAM_USERS = pa.schema(
    [
        *_IMAGE,
        pa.field("user_name", pa.string()),
        pa.field("mechanism", pa.string()),
        pa.field("iterations", pa.int32()),
    ]
)

CHURN = pa.schema(
    [
        *_IMAGE,
        pa.field("section", pa.string()),  # type, window, topic, partition, broker
        pa.field("window_start", _TS),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("broker", pa.int32()),
        pa.field("kind", pa.string()),  # a record type, or a kind of change (leader, isr, fence ...)
        pa.field("count", pa.int64()),
    ]
)

PRODUCER_IDS = pa.schema(
    [
        *_IMAGE,
        pa.field("next_producer_id", pa.int64()),
        pa.field("broker_id", pa.int32()),
        pa.field("broker_epoch", pa.int64()),
    ]
)


def _ddl_type(t: pa.DataType) -> str:
    if pa.types.is_string(t):
        return "string"
    if pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "bigint"
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_timestamp(t):
        return "timestamp"
    if pa.types.is_list(t):
        return f"array<{_ddl_type(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(f"{f.name}: {_ddl_type(f.type)}" for f in t) + ">"
    raise TypeError(f"no Spark type for {t}")


def spark_ddl(schema: pa.Schema) -> str:
    """``cluster_id string, node_id int, ...``: what ``DataSource.schema()`` returns."""
    return ", ".join(f"{f.name} {_ddl_type(f.type)}" for f in schema)
