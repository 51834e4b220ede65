"""The value objects of the metadata image: brokers, controllers, topics, partitions, ACLs, ...

Kafka keeps its image in immutable Java objects rebuilt from deltas.  metashell replays millions of
records in a Python process, so these classes are deliberately small and *mutable*:

* every class uses ``__slots__`` (no per-object ``__dict__``: a partition costs ~120 bytes);
* integer lists (replicas, ISR, ELR, ...) are tuples, interned by the replayer so that a million
  partitions over a handful of brokers share a handful of tuple objects, and the empty list is
  always the one shared ``EMPTY`` tuple;
* uuids are 16-byte ``bytes`` (text form only at display time, ``protocol.uuid.uuid_to_str``);
* enum-like fields (security protocol, leader recovery state, ACL codes, ...) keep Kafka's numeric
  code, exactly as recorded; the ``*_NAMES`` tables and :func:`enum_name` give Kafka's names, with
  Kafka's fallback (``UNKNOWN``) for codes it does not know.

Nothing here knows about records; ``replay/`` (one module of rules per domain) builds and mutates these objects.
"""

from __future__ import annotations

from typing import Any

EMPTY: tuple[Any, ...] = ()
"""The one shared empty tuple for every empty int / uuid list."""

MIGRATING_DIR = bytes(16)
"""``DirectoryId.MIGRATING``: the replica's directory is unknown (pre-JBOD or migrated log)."""
UNASSIGNED_DIR = bytes(15) + b"\x01"
"""``DirectoryId.UNASSIGNED``: a new replica that has not been placed in a directory yet."""
LOST_DIR = bytes(15) + b"\x02"
"""``DirectoryId.LOST``: the directory hosting the replica is offline."""

NO_LEADER = -1
NO_LEADER_CHANGE = -2

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


class _Slotted:
    """Shared helpers: equality and repr over the slots (handy in tests and the REPL)."""

    __slots__: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Endpoint(_Slotted):
    """A listener of a broker, controller or voter.  ``security_protocol`` is Kafka's id (or None
    for voters, whose endpoints carry no protocol)."""

    __slots__ = ("host", "name", "port", "security_protocol")

    def __init__(self, name: str, host: str | None, port: int, security_protocol: int | None) -> None:
        self.name = name
        self.host = host
        self.port = port
        self.security_protocol = security_protocol


class BrokerRegistration(_Slotted):
    """``BrokerRegistration``: replaced wholesale by RegisterBrokerRecord, patched by
    Fence/Unfence/BrokerRegistrationChange records.

    ``listeners`` maps listener name -> :class:`Endpoint` (Kafka keys them by name too);
    ``supported_features`` maps feature name -> ``(min, max)``; ``directories`` is sorted in Java
    ``Uuid`` order like Kafka's; ``cordoned_directories`` (4.3+) is None until a record sets it.
    """

    __slots__ = (
        "cordoned_directories",
        "directories",
        "epoch",
        "fenced",
        "id",
        "in_controlled_shutdown",
        "incarnation_id",
        "is_migrating_zk_broker",
        "listeners",
        "rack",
        "supported_features",
    )

    def __init__(
        self,
        id: int,
        epoch: int,
        incarnation_id: bytes,
        listeners: dict[str, Endpoint],
        supported_features: dict[str, tuple[int, int]],
        rack: str | None,
        fenced: bool,
        in_controlled_shutdown: bool,
        is_migrating_zk_broker: bool,
        directories: tuple[Any, ...],
        cordoned_directories: tuple[Any, ...] | None = None,
    ) -> None:
        self.id = id
        self.epoch = epoch
        self.incarnation_id = incarnation_id
        self.listeners = listeners
        self.supported_features = supported_features
        self.rack = rack
        self.fenced = fenced
        self.in_controlled_shutdown = in_controlled_shutdown
        self.is_migrating_zk_broker = is_migrating_zk_broker
        self.directories = directories
        self.cordoned_directories = cordoned_directories


class ControllerRegistration(_Slotted):
    """``ControllerRegistration`` (KIP-919), replaced by RegisterControllerRecord."""

    __slots__ = ("id", "incarnation_id", "listeners", "supported_features", "zk_migration_ready")

    def __init__(
        self,
        id: int,
        incarnation_id: bytes,
        zk_migration_ready: bool,
        listeners: dict[str, Endpoint],
        supported_features: dict[str, tuple[int, int]],
    ) -> None:
        self.id = id
        self.incarnation_id = incarnation_id
        self.zk_migration_ready = zk_migration_ready
        self.listeners = listeners
        self.supported_features = supported_features


class Partition(_Slotted):
    """``PartitionRegistration``.  Int lists are (interned) tuples, ``directories`` a tuple of
    16-byte uuids with one entry per replica (``MIGRATING_DIR`` when unknown)."""

    __slots__ = (
        "adding_replicas",
        "directories",
        "elr",
        "isr",
        "last_known_elr",
        "leader",
        "leader_epoch",
        "leader_recovery_state",
        "partition_epoch",
        "removing_replicas",
        "replicas",
    )

    def __init__(
        self,
        replicas: tuple[Any, ...],
        directories: tuple[Any, ...],
        isr: tuple[Any, ...],
        removing_replicas: tuple[Any, ...],
        adding_replicas: tuple[Any, ...],
        elr: tuple[Any, ...],
        last_known_elr: tuple[Any, ...],
        leader: int,
        leader_recovery_state: int,
        leader_epoch: int,
        partition_epoch: int,
    ) -> None:
        self.replicas = replicas
        self.directories = directories
        self.isr = isr
        self.removing_replicas = removing_replicas
        self.adding_replicas = adding_replicas
        self.elr = elr
        self.last_known_elr = last_known_elr
        self.leader = leader
        self.leader_recovery_state = leader_recovery_state
        self.leader_epoch = leader_epoch
        self.partition_epoch = partition_epoch

    def copy(self) -> Partition:
        return Partition(
            self.replicas,
            self.directories,
            self.isr,
            self.removing_replicas,
            self.adding_replicas,
            self.elr,
            self.last_known_elr,
            self.leader,
            self.leader_recovery_state,
            self.leader_epoch,
            self.partition_epoch,
        )


class Topic(_Slotted):
    """``TopicImage``: name, 16-byte id and ``partitions`` {partition index: :class:`Partition`}."""

    __slots__ = ("id", "name", "partitions")

    def __init__(self, name: str, id: bytes, partitions: dict[int, Partition] | None = None) -> None:
        self.name = name
        self.id = id
        self.partitions = {} if partitions is None else partitions


class Acl(_Slotted):
    """``StandardAcl`` with its ``Id``; the int8 codes are kept as recorded (see the ``ACL_*`` names)."""

    __slots__ = (
        "host",
        "id",
        "operation",
        "pattern_type",
        "permission_type",
        "principal",
        "resource_name",
        "resource_type",
    )

    def __init__(
        self,
        id: bytes,
        resource_type: int,
        resource_name: str,
        pattern_type: int,
        principal: str,
        host: str,
        operation: int,
        permission_type: int,
    ) -> None:
        self.id = id
        self.resource_type = resource_type
        self.resource_name = resource_name
        self.pattern_type = pattern_type
        self.principal = principal
        self.host = host
        self.operation = operation
        self.permission_type = permission_type


class ScramCredential(_Slotted):
    """``ScramCredentialData`` keyed in the image by ``(mechanism, name)``."""

    __slots__ = ("iterations", "mechanism", "name", "salt", "server_key", "stored_key")

    def __init__(
        self, mechanism: int, name: str, salt: bytes, stored_key: bytes, server_key: bytes, iterations: int
    ) -> None:
        self.mechanism = mechanism
        self.name = name
        self.salt = salt
        self.stored_key = stored_key
        self.server_key = server_key
        self.iterations = iterations


class DelegationToken(_Slotted):
    """``DelegationTokenData`` (principals kept as the recorded ``Type:name`` strings)."""

    __slots__ = (
        "expiration_timestamp",
        "issue_timestamp",
        "max_timestamp",
        "owner",
        "renewers",
        "requester",
        "token_id",
    )

    def __init__(
        self,
        token_id: str,
        owner: str,
        requester: str,
        renewers: tuple[Any, ...],
        issue_timestamp: int,
        max_timestamp: int,
        expiration_timestamp: int,
    ) -> None:
        self.token_id = token_id
        self.owner = owner
        self.requester = requester
        self.renewers = renewers
        self.issue_timestamp = issue_timestamp
        self.max_timestamp = max_timestamp
        self.expiration_timestamp = expiration_timestamp


class Voter(_Slotted):
    """A KRaft voter: id, directory id (zero uuid when unknown), endpoints, kraft.version range."""

    __slots__ = ("directory_id", "endpoints", "id", "kraft_version_range")

    def __init__(
        self,
        id: int,
        directory_id: bytes = MIGRATING_DIR,
        endpoints: tuple[Any, ...] = EMPTY,
        kraft_version_range: tuple[int, int] | None = None,
    ) -> None:
        self.id = id
        self.directory_id = directory_id
        self.endpoints = endpoints
        self.kraft_version_range = kraft_version_range
