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

from .atoms import (
    EMPTY,
    LOST_DIR,
    MIGRATING_DIR,
    NO_LEADER,
    NO_LEADER_CHANGE,
    RESERVED_DIRS,
    UNASSIGNED_DIR,
)
from .atoms import Slotted as _Slotted
from .partition import Partition

__all__ = [
    "EMPTY",
    "LOST_DIR",
    "MIGRATING_DIR",
    "NO_LEADER",
    "NO_LEADER_CHANGE",
    "RESERVED_DIRS",
    "UNASSIGNED_DIR",
    "Acl",
    "BrokerRegistration",
    "ControllerRegistration",
    "DelegationToken",
    "Endpoint",
    "Partition",
    "ScramCredential",
    "Topic",
    "Voter",
]


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
