"""The in-memory metadata image: everything the tree shows, updated one record at a time.

Kafka's ``MetadataImage`` is immutable and rebuilt from a ``MetadataDelta`` per commit.  metashell
mutates one image in place (``replay.Replayer``), which is much cheaper in Python, while keeping the
exact observable semantics of Kafka's deltas.  The areas mirror Kafka's image classes:

=====================  =================================================================
``image.cluster``      ``brokers`` {id: BrokerRegistration}, ``controllers`` {id: ControllerRegistration}
``image.topics``       ``by_id`` {16-byte uuid: Topic}, ``by_name`` {name: Topic} (same objects)
``image.configs``      {(resource type id, resource name): {key: value}}; ``""`` = cluster default
``image.client_quotas`` {entity: {key: float}}; entity = sorted tuple of (type, name or None)
``image.acls``         {16-byte uuid: Acl}
``image.scram``        {(mechanism id, user): ScramCredential}
``image.delegation_tokens`` {token id: DelegationToken}
``image.features``     ``finalized`` {name: level} (without metadata.version), ``metadata_version``
                       (level or None), ``zk_migration_state``
``image.producer_ids`` ``next_producer_id`` (-1 when empty), ``broker_id``, ``broker_epoch``
``image.quorum``       cluster id, node id, leader, epoch, voters (quorum-state + control records)
``image.provenance``   last offset / epoch / timestamp applied, the snapshot and files read
=====================  =================================================================

Readers (the tree, the shell) only read these attributes; only the replayer writes them.
"""

from __future__ import annotations

from _thread import RLock  # threading.RLock's own lock, without importing threading

from metashell.log.problems import Salvaged

from .model import (
    Acl,
    BrokerRegistration,
    ControllerRegistration,
    DelegationToken,
    ScramCredential,
    Topic,
    Voter,
)

ConfigKey = tuple[int, str]
QuotaEntity = tuple[tuple[str, "str | None"], ...]


class ClusterImage:
    __slots__ = ("brokers", "controllers")

    def __init__(self) -> None:
        self.brokers: dict[int, BrokerRegistration] = {}
        self.controllers: dict[int, ControllerRegistration] = {}


class TopicsImage:
    """Topics by id and by name; both maps hold the same :class:`Topic` objects."""

    __slots__ = ("by_id", "by_name")

    def __init__(self) -> None:
        self.by_id: dict[bytes, Topic] = {}
        self.by_name: dict[str, Topic] = {}

    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.by_id.values())


class FeaturesImage:
    """Finalized features.  ``metadata_version`` is the feature level (None until a
    FeatureLevelRecord for metadata.version is replayed); ``finalized`` holds every other feature."""

    __slots__ = ("finalized", "metadata_version", "zk_migration_state")

    def __init__(self) -> None:
        self.finalized: dict[str, int] = {}
        self.metadata_version: int | None = None
        self.zk_migration_state: int = 0


class ProducerIdsImage:
    """``nextProducerId`` plus the broker id/epoch of the last ProducerIdsRecord (informational)."""

    __slots__ = ("broker_epoch", "broker_id", "next_producer_id")

    def __init__(self) -> None:
        self.next_producer_id = -1
        self.broker_id: int | None = None
        self.broker_epoch: int | None = None


class QuorumInfo:
    """What is known about the KRaft quorum.

    ``cluster_id``/``node_id`` come from ``meta.properties``; ``leader_id``/``leader_epoch`` from
    ``quorum-state`` and then from LeaderChange control records; ``voters`` from ``quorum-state``,
    LeaderChange (ids only) or KRaftVoters records (with directory ids and endpoints);
    ``kraft_version`` from KRaftVersion records.  ``source`` says which of these spoke last.
    """

    __slots__ = (
        "cluster_id",
        "directory_id",
        "granting_voters",
        "kraft_version",
        "leader_epoch",
        "leader_id",
        "node_id",
        "source",
        "voters",
    )

    def __init__(self) -> None:
        self.cluster_id: str | None = None
        self.node_id: int | None = None
        self.directory_id: bytes | None = None
        self.leader_id: int | None = None
        self.leader_epoch: int | None = None
        self.voters: tuple[Voter, ...] = ()
        self.granting_voters: tuple[int, ...] = ()
        self.kraft_version: int | None = None
        self.source: str | None = None


class SnapshotInfo:
    """The snapshot the image was loaded from: its file, id (end offset exclusive, epoch) and the
    SnapshotHeader's last contained log timestamp."""

    __slots__ = ("end_offset", "epoch", "last_contained_log_timestamp", "path")

    def __init__(
        self, path: str | None, end_offset: int, epoch: int, last_contained_log_timestamp: int
    ) -> None:
        self.path = path
        self.end_offset = end_offset
        self.epoch = epoch
        self.last_contained_log_timestamp = last_contained_log_timestamp

    def __repr__(self) -> str:
        return (
            f"SnapshotInfo(path={self.path!r}, end_offset={self.end_offset}, epoch={self.epoch}, "
            f"last_contained_log_timestamp={self.last_contained_log_timestamp})"
        )


class Provenance:
    """Kafka's ``MetadataProvenance`` (``offset``, ``epoch``, ``timestamp`` of the last published
    change; -1 each in an empty image) plus where the data came from.

    ``offset`` is the last log offset covered (``endOffset - 1`` after a snapshot); ``timestamp`` is
    in milliseconds since the epoch.  ``sources`` lists the files (or ``live:host:port``) read, in
    order.  ``records``/``batches`` count what was replayed.  ``caught_up`` is False only after a
    ``--snapshot`` load of a file on which Kafka's loader never catches up, so that its shell shows
    (and waits on) the empty image; see ``loader.py``, "Kafka's catch-up gate".  ``salvaged`` lists
    what a ``--salvage`` load skipped.
    """

    __slots__ = (
        "batches",
        "caught_up",
        "epoch",
        "offset",
        "records",
        "salvaged",
        "snapshot",
        "sources",
        "timestamp",
    )

    def __init__(self) -> None:
        self.offset = -1
        self.epoch = -1
        self.timestamp = -1
        self.snapshot: SnapshotInfo | None = None
        self.sources: list[str] = []
        self.records = 0
        self.batches = 0
        self.caught_up = True
        #: What a ``--salvage`` load left out ; empty otherwise.
        self.salvaged: list[Salvaged] = []


class MetadataImage:
    """The whole image.  Create an empty one with ``MetadataImage()``; fill it with a Replayer."""

    __slots__ = (
        "acls",
        "client_quotas",
        "cluster",
        "configs",
        "delegation_tokens",
        "features",
        "lock",
        "producer_ids",
        "provenance",
        "quorum",
        "scram",
        "topics",
    )

    def __init__(self) -> None:
        self.lock = RLock()
        """Held by the loader while it applies a batch or a snapshot.  Single-threaded users can
        ignore it; in live mode (records applied on the observer's thread) readers that walk
        several maps take it to see a consistent image."""
        self.cluster = ClusterImage()
        self.topics = TopicsImage()
        self.configs: dict[ConfigKey, dict[str, str]] = {}
        self.client_quotas: dict[QuotaEntity, dict[str, float]] = {}
        self.acls: dict[bytes, Acl] = {}
        self.scram: dict[tuple[int, str], ScramCredential] = {}
        self.delegation_tokens: dict[str, DelegationToken] = {}
        self.features = FeaturesImage()
        self.producer_ids = ProducerIdsImage()
        self.quorum = QuorumInfo()
        self.provenance = Provenance()

    def clear_for_snapshot(self) -> None:
        """Forget everything a snapshot replaces, keeping object identity (readers hold references).

        Like ``MetadataDelta.finishSnapshot``: brokers, controllers, topics, configs, quotas, ACLs,
        SCRAM, tokens and finalized features go; ``metadata_version``, ``zk_migration_state`` and
        ``next_producer_id`` stay until the snapshot sets them.  Quorum info is not metadata and
        stays too; provenance is rewritten when the snapshot ends.
        """
        self.cluster.brokers.clear()
        self.cluster.controllers.clear()
        self.topics.by_id.clear()
        self.topics.by_name.clear()
        self.configs.clear()
        self.client_quotas.clear()
        self.acls.clear()
        self.scram.clear()
        self.delegation_tokens.clear()
        self.features.finalized.clear()

    def is_empty(self) -> bool:
        """True when no metadata record has changed anything (Kafka's ``MetadataImage.isEmpty``)."""
        return not (
            self.cluster.brokers
            or self.cluster.controllers
            or self.topics.by_id
            or self.configs
            or self.client_quotas
            or self.acls
            or self.scram
            or self.delegation_tokens
            or self.features.finalized
            or self.features.metadata_version is not None
            or self.producer_ids.next_producer_id != -1
        )

    def summary(self) -> dict[str, int]:
        """Counts per area (for logs, benchmarks and tests)."""
        return {
            "brokers": len(self.cluster.brokers),
            "controllers": len(self.cluster.controllers),
            "topics": len(self.topics.by_id),
            "partitions": self.topics.partition_count(),
            "configs": len(self.configs),
            "client_quotas": len(self.client_quotas),
            "acls": len(self.acls),
            "scram": len(self.scram),
            "delegation_tokens": len(self.delegation_tokens),
            "features": len(self.features.finalized),
        }
