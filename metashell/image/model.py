"""The value objects of the metadata image: brokers, controllers, topics, partitions, ACLs, ...

Kafka keeps its image in immutable Java objects rebuilt from deltas.  metashell replays millions of
records in a Python process, so these classes are deliberately small and *mutable*:

* every class uses ``__slots__`` (no per-object ``__dict__``: a partition costs ~120 bytes);
* integer lists (replicas, ISR, ELR, ...) are tuples, interned by the replayer so that a million
  partitions over a handful of brokers share a handful of tuple objects, and the empty list is
  always the one shared ``EMPTY`` tuple;
* uuids are 16-byte ``bytes`` (text form only at display time, ``protocol.uuid.uuid_to_str``);
* enum-like fields (security protocol, leader recovery state, ACL codes, ...) keep Kafka's numeric
  code, exactly as recorded; ``kafka_names.py`` gives Kafka's names, with Kafka's fallback
  (``UNKNOWN``) for codes it does not know.

Nothing here knows about records; ``replay/`` (one module of rules per domain) builds and mutates
these objects.
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
RESERVED_DIRS = frozenset({MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR})
"""The ids that name no real directory (``DirectoryId.reserved``): never "not listed" by a broker."""

NO_LEADER = -1
NO_LEADER_CHANGE = -2


class _Slotted:
    """Shared helpers: equality and repr over the fields (handy in tests and the REPL).  The fields
    are the slots, unless a class names others (``_fields``: a property in place of its slots)."""

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if "_fields" not in cls.__dict__:
            cls._fields = cls.__slots__

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._fields}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self._fields)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
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

    def unlists(self, directory: bytes) -> bool:
        """Whether a replica of this broker in ``directory`` is offline because the broker's
        registration no longer lists it: a failed JBOD directory (KIP-858), Kafka's
        ``BrokerRegistration.hasOnlineDir`` turned round.  A broker that lists no directory (before
        JBOD) unlists none, and the reserved ids name no real directory."""
        return bool(self.directories) and directory not in RESERVED_DIRS and directory not in self.directories


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
    """``TopicImage``: name, 16-byte id and ``partitions`` {partition index: :class:`Partition`}.

    The native engine may keep a topic's partitions as rows (``_pending``, see
    ``native/src/replay/deferred.rs``) until they are first read: ``partitions`` makes them then, in order,
    into the same dict.  Everything outside the replay reads them through ``partitions``."""

    __slots__ = ("_partitions", "_pending", "id", "name")
    _fields = ("id", "name", "partitions")

    def __init__(self, name: str, id: bytes, partitions: dict[int, Partition] | None = None) -> None:
        self.name = name
        self.id = id
        self._partitions: dict[int, Partition] = {} if partitions is None else partitions
        self._pending: Any = None

    @property
    def partitions(self) -> dict[int, Partition]:
        pending = self._pending
        if pending is not None:
            pending.apply(self._partitions)  # a no-op once made (another reader may have)
            self._pending = None
        return self._partitions

    @partitions.setter
    def partitions(self, value: dict[int, Partition]) -> None:
        self._partitions = value
        self._pending = None


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
