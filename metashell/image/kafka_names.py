"""Kafka's names for the codes in metadata records, and what Kafka's shell knows.

Enum tables (security protocols, ACL resource types and operations, config resource types, SCRAM
mechanisms, leader recovery states, ZooKeeper migration states), the release name of every
metadata.version level, and the config keys Kafka's own shell shows under ``/image``.
:func:`enum_name` is the one policy for a code Kafka does not know: ``UNKNOWN``.
"""

from __future__ import annotations

SECURITY_PROTOCOL_NAMES = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}


LEADER_RECOVERY_STATE_NAMES = {0: "RECOVERED", 1: "RECOVERING"}


CONFIG_RESOURCE_TYPE_NAMES = {
    0: "UNKNOWN",
    2: "TOPIC",
    4: "BROKER",
    8: "BROKER_LOGGER",
    16: "CLIENT_METRICS",
    32: "GROUP",
}


CONFIG_RESOURCE_TOPIC = 2


ZK_MIGRATION_STATE_NAMES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION", 4: "ZK"}


SCRAM_MECHANISM_NAMES = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}


ACL_RESOURCE_TYPE_NAMES = {
    0: "UNKNOWN",
    1: "ANY",
    2: "TOPIC",
    3: "GROUP",
    4: "CLUSTER",
    5: "TRANSACTIONAL_ID",
    6: "DELEGATION_TOKEN",
    7: "USER",
}


ACL_PATTERN_TYPE_NAMES = {0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}


ACL_OPERATION_NAMES = {
    0: "UNKNOWN",
    1: "ANY",
    2: "ALL",
    3: "READ",
    4: "WRITE",
    5: "CREATE",
    6: "DELETE",
    7: "ALTER",
    8: "DESCRIBE",
    9: "CLUSTER_ACTION",
    10: "DESCRIBE_CONFIGS",
    11: "ALTER_CONFIGS",
    12: "IDEMPOTENT_WRITE",
    13: "CREATE_TOKENS",
    14: "DESCRIBE_TOKENS",
}


ACL_PERMISSION_TYPE_NAMES = {0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}


METADATA_VERSION_FEATURE = "metadata.version"


METADATA_VERSION_NAMES = {
    1: "3.0-IV1",
    2: "3.1-IV0",
    3: "3.2-IV0",
    4: "3.3-IV0",
    5: "3.3-IV1",
    6: "3.3-IV2",
    7: "3.3-IV3",
    8: "3.4-IV0",
    9: "3.5-IV0",
    10: "3.5-IV1",
    11: "3.5-IV2",
    12: "3.6-IV0",
    13: "3.6-IV1",
    14: "3.6-IV2",
    15: "3.7-IV0",
    16: "3.7-IV1",
    17: "3.7-IV2",
    18: "3.7-IV3",
    19: "3.7-IV4",
    20: "3.8-IV0",
    21: "3.9-IV0",
    22: "4.0-IV0",
    23: "4.0-IV1",
    24: "4.0-IV2",
    25: "4.0-IV3",
    26: "4.1-IV0",
    27: "4.1-IV1",
    28: "4.2-IV0",
    29: "4.2-IV1",
    30: "4.3-IV0",
    31: "4.4-IV0",
    32: "4.4-IV1",
    33: "4.4-IV2",
    34: "4.5-IV0",
}
"""``MetadataVersion`` feature levels (Kafka 4.4 source; 1-6 only exist in 3.x releases)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Config keys Kafka 4.4's metadata shell keeps (``DefaultSupportedConfigChecker``, wired into the
# shell's MetadataLoader): ``ConfigurationDelta.replay`` silently drops a ConfigRecord whose key is not
# supported for its resource type.  TOPIC = ``LogConfig.configNames()``, CLIENT_METRICS =
# ``ClientMetricsConfigs.configNames()``, GROUP = ``GroupConfig.configNames()`` (printed from the 4.4.0
# jars); BROKER accepts every key; BROKER_LOGGER and UNKNOWN none.  metashell's image keeps every
# config (operators want to see them all); ``/image`` hides what Kafka's shell would not show.
_TOPIC_CONFIG_NAMES = _words("""
    cleanup.policy compression.gzip.level compression.lz4.level compression.type compression.zstd.level
    delete.retention.ms errors.deadletterqueue.group.enable file.delete.delay.ms flush.messages flush.ms
    follower.replication.throttled.replicas index.interval.bytes internal.segment.bytes
    leader.replication.throttled.replicas local.retention.bytes local.retention.ms max.compaction.lag.ms
    max.decompressed.message.bytes max.message.bytes message.timestamp.after.max.ms
    message.timestamp.before.max.ms message.timestamp.type min.cleanable.dirty.ratio min.compaction.lag.ms
    min.insync.replicas preallocate remote.copy.lag.bytes remote.copy.lag.ms remote.log.copy.disable
    remote.log.delete.on.disable remote.storage.enable retention.bytes retention.ms segment.bytes
    segment.index.bytes segment.jitter.ms segment.ms unclean.leader.election.enable
""")


_CLIENT_METRICS_CONFIG_NAMES = frozenset(("interval.ms", "match", "metrics"))


_GROUP_CONFIG_NAMES = _words("""
    consumer.assignment.interval.ms consumer.assignor.offload.enable consumer.heartbeat.interval.ms
    consumer.session.timeout.ms errors.deadletterqueue.copy.record.enable errors.deadletterqueue.topic.name
    share.assignment.interval.ms share.assignor.offload.enable share.auto.offset.reset
    share.delivery.count.limit share.heartbeat.interval.ms share.isolation.level
    share.partition.max.record.locks share.record.lock.duration.ms share.renew.acknowledge.enable
    share.session.timeout.ms streams.acceptable.recovery.lag streams.assignment.interval.ms
    streams.assignor.name streams.assignor.offload.enable streams.heartbeat.interval.ms
    streams.initial.rebalance.delay.ms streams.num.standby.replicas streams.num.warmup.replicas
    streams.rack.aware.assignment.tags streams.session.timeout.ms streams.task.offset.interval.ms
""")


KAFKA_SHELL_CONFIG_NAMES: dict[int, frozenset[str] | None] = {
    2: _TOPIC_CONFIG_NAMES,
    4: None,
    16: _CLIENT_METRICS_CONFIG_NAMES,
    32: _GROUP_CONFIG_NAMES,
}
"""Resource type id -> config keys Kafka 4.4's shell keeps (None = every key; absent type = none)."""


def kafka_shell_shows_config(resource_type: int, name: str) -> bool:
    """True when Kafka 4.4's metadata shell keeps this config key in its image (see above)."""
    if resource_type not in KAFKA_SHELL_CONFIG_NAMES:
        return False
    names = KAFKA_SHELL_CONFIG_NAMES[resource_type]
    return names is None or name in names


def enum_name(names: dict[int, str], code: int, default: str = "UNKNOWN") -> str:
    """Kafka's name for ``code``, or ``default`` when Kafka would not know it either."""
    return names.get(code, default)


def metadata_version_name(level: int | None) -> str:
    """Release name of a metadata.version level (``3.9-IV0``); unknown levels print as the number."""
    if level is None:
        return "unknown"
    return METADATA_VERSION_NAMES.get(level, str(level))
