"""Which config values are secrets, and the config keys Kafka 4.4 keeps in its image.

Kafka marks secrets with ``ConfigDef.Type.PASSWORD``.  The table below is every PASSWORD-type key of
Kafka 4.4.0's ConfigDefs, read from the jars (``KafkaConfig.configDef()``, ``LogConfig``,
``GroupConfig``, ``ClientMetricsConfigs``; only the broker has any), plus keys older releases had.
A config value is redacted when its key

* is such a key, or ends with ``.<such key>`` -- this covers the per-listener and per-mechanism
  variants (``listener.name.external.ssl.keystore.password``,
  ``listener.name.sasl_ssl.plain.sasl.jaas.config``) and client-side prefixes; or
* contains ``password``, ``secret`` or ``jaas`` (whatever the resource type), or names key material
  (``ssl.keystore.key``, ``ssl.keystore.certificate.chain``, ``ssl.truststore.certificates``,
  ``*.private.key*``).

A rule of thumb wins over precision here: hiding a harmless value costs a ``--no-redact``, leaking a
keystore password costs an incident.
"""

from __future__ import annotations

REDACTED = "[redacted]"

PASSWORD_KEYS: frozenset[str] = frozenset({
    # Kafka 4.4.0 KafkaConfig.configDef(): every key of type PASSWORD
    "delegation.token.secret.key",
    "sasl.jaas.config",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.client.credentials.client.secret",
    "ssl.key.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.keystore.password",
    "ssl.truststore.certificates",
    "ssl.truststore.password",
    # PASSWORD keys of 3.x releases that may still sit in a metadata log
    "delegation.token.master.key",
    "password.encoder.secret",
    "password.encoder.old.secret",
})
"""PASSWORD-type config keys (Kafka 4.4.0 ConfigDefs; TOPIC, GROUP, CLIENT_METRICS have none)."""

_SUBSTRINGS = ("password", "secret", "jaas", "private.key", "credentials")
_SUFFIXES = tuple("." + k for k in PASSWORD_KEYS)


def is_sensitive_config(key: str) -> bool:
    """True when the value of config ``key`` must be hidden unless redaction is off."""
    k = key.lower()
    if k in PASSWORD_KEYS or k.endswith(_SUFFIXES):
        return True
    return any(s in k for s in _SUBSTRINGS)


def redact_config(key: str, value: str | None, redact: bool) -> str | None:
    """``value``, or ``[redacted]`` when redacting a sensitive key (None stays None)."""
    if redact and value is not None and is_sensitive_config(key):
        return REDACTED
    return value


# --------------------------------------------------------------------------------------------
# Kafka 4.4's image only keeps supported config keys (DefaultSupportedConfigChecker)

TOPIC_CONFIG_NAMES: frozenset[str] = frozenset({
    "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
    "compression.zstd.level", "delete.retention.ms", "errors.deadletterqueue.group.enable",
    "file.delete.delay.ms", "flush.messages", "flush.ms", "follower.replication.throttled.replicas",
    "index.interval.bytes", "internal.segment.bytes", "leader.replication.throttled.replicas",
    "local.retention.bytes", "local.retention.ms", "max.compaction.lag.ms",
    "max.decompressed.message.bytes", "max.message.bytes", "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms", "min.insync.replicas", "preallocate", "remote.copy.lag.bytes",
    "remote.copy.lag.ms", "remote.log.copy.disable", "remote.log.delete.on.disable",
    "remote.storage.enable", "retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes",
    "segment.jitter.ms", "segment.ms", "unclean.leader.election.enable",
})
"""``LogConfig.configNames()`` of Kafka 4.4.0 (read from the jar)."""

CLIENT_METRICS_CONFIG_NAMES: frozenset[str] = frozenset({"interval.ms", "match", "metrics"})
"""``ClientMetricsConfigs.configNames()`` of Kafka 4.4.0."""

GROUP_CONFIG_NAMES: frozenset[str] = frozenset({
    "consumer.assignment.interval.ms", "consumer.assignor.offload.enable", "consumer.heartbeat.interval.ms",
    "consumer.session.timeout.ms", "errors.deadletterqueue.copy.record.enable",
    "errors.deadletterqueue.topic.name", "share.assignment.interval.ms", "share.assignor.offload.enable",
    "share.auto.offset.reset", "share.delivery.count.limit", "share.heartbeat.interval.ms",
    "share.isolation.level", "share.partition.max.record.locks", "share.record.lock.duration.ms",
    "share.renew.acknowledge.enable", "share.session.timeout.ms", "streams.acceptable.recovery.lag",
    "streams.assignment.interval.ms", "streams.assignor.name", "streams.assignor.offload.enable",
    "streams.heartbeat.interval.ms", "streams.initial.rebalance.delay.ms", "streams.num.standby.replicas",
    "streams.num.warmup.replicas", "streams.rack.aware.assignment.tags", "streams.session.timeout.ms",
    "streams.task.offset.interval.ms",
})
"""``GroupConfig.configNames()`` of Kafka 4.4.0."""

_BROKER, _TOPIC, _CLIENT_METRICS, _GROUP = 4, 2, 16, 32


def kafka_keeps_config(resource_type: int, key: str) -> bool:
    """Kafka 4.4's ``DefaultSupportedConfigChecker``: its metadata loader ignores ConfigRecords for
    keys it does not support, so they never appear in ``/image``: every BROKER key is kept, TOPIC /
    CLIENT_METRICS / GROUP keys only when known, BROKER_LOGGER and unknown resource types never."""
    if resource_type == _BROKER:
        return True
    if resource_type == _TOPIC:
        return key in TOPIC_CONFIG_NAMES
    if resource_type == _CLIENT_METRICS:
        return key in CLIENT_METRICS_CONFIG_NAMES
    if resource_type == _GROUP:
        return key in GROUP_CONFIG_NAMES
    return False
