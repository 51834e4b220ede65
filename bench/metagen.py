"""Generate a large, realistic KRaft metadata log directory with metashell's own encoders.

Used by ``bench/load.py``; no Kafka needed.  The output looks like what a Kafka 4.x controller
(metadata.version 4.2-IV1, ELR enabled, ``kraft.version`` 1) leaves on disk after running for a
while with a big cluster::

    <out>/meta.properties                      v1 (node.id, directory.id, cluster.id)
    <out>/bootstrap.checkpoint                 what `kafka-storage format` writes
    <out>/__cluster_metadata-0/
        <endOffset:20>-<epoch:10>.checkpoint   the KRaft snapshot holding every topic/partition
        <base:20>.log (+ empty .index/.timeindex)   the log: a little before the snapshot, then
                                                    the tail of ``tail_records`` records after it
        quorum-state, leader-epoch-checkpoint, partition.metadata

Why it is shaped like this (so the benchmark measures what real directories cost):

* Snapshot: a control batch with SnapshotHeader + KRaftVersion + KRaftVoters, data batches filled
  up to 8 MiB (``KafkaRaftClient.MAX_BATCH_SIZE_BYTES``, the snapshot writer's batch limit: the
  corpus snapshots hold all their records in a single 56 KB batch), then a SnapshotFooter batch.
  Record order follows ``MetadataImage.write``: features, brokers, controllers, topics (each
  TopicRecord followed by its PartitionRecords), configs, quotas, producer ids, ACLs, SCRAM.
* Partitions: RF 3 over 12 brokers placed as Kafka's rack-unaware assignment does (start index and
  replica shift per topic: ~130 distinct replica lists), a log directory per replica (2 dirs per
  broker), ELR fields present (PartitionRecord v2 always writes them), ~2% under-replicated.
* Log tail: controller-style batches -- each controller event is one batch of 1..N records:
  AlterPartition ISR shrinks/expansions, preferred leader elections, broker rolls (controlled
  shutdown, fence, re-registration with a new epoch = its offset, unfence, ISR catch-up), config
  changes, topic creations and deletions, producer-id blocks, periodic NoOps, and LeaderChange
  control batches (new raft epoch).  Every record replays without a fault: the generator tracks
  the state it changes.
* The log starts ``overlap`` records *before* the snapshot's end offset (Kafka keeps a segment
  until all of it is below the snapshot), so a loader must skip records already in the snapshot.

Deterministic: the same parameters and seed give byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from metashell.log.encoding import build_batch
from metashell.protocol.control import encode_control_record
from metashell.protocol.metadata import encode_metadata_record
from metashell.protocol.uuid import uuid_to_str

GENERATOR_VERSION = 1
"""Bump when the output changes, so cached directories are regenerated."""

MAX_BATCH_BYTES = 8 * 1024 * 1024  # KafkaRaftClient.MAX_BATCH_SIZE_BYTES
BATCH_OVERHEAD = 61
METADATA_TOPIC_ID = bytes(15) + b"\x01"  # Uuid.METADATA_TOPIC_ID = AAAAAAAAAAAAAAAAAAAAAQ

BOOT_FIRST_BROKER = 1001
MV_LEVEL = 29  # 4.2-IV1: PartitionRecord/PartitionChangeRecord v2, ELR
V_REGISTER_BROKER = 3
V_PARTITION = 2
V_PARTITION_CHANGE = 2
V_BROKER_CHANGE = 2
FINALIZED = (
    ("eligible.leader.replicas.version", 1),
    ("group.version", 1),
    ("kraft.version", 1),
    ("share.version", 1),
    ("streams.version", 1),
    ("transaction.version", 2),
)
SUPPORTED = (
    ("eligible.leader.replicas.version", 0, 1),
    ("group.version", 0, 1),
    ("kraft.version", 0, 1),
    ("metadata.version", 7, MV_LEVEL),
    ("share.version", 0, 1),
    ("streams.version", 0, 1),
    ("transaction.version", 0, 2),
)
TOPIC_CONFIGS = (
    ("retention.ms", ("86400000", "259200000", "604800000", "2592000000", "-1")),
    ("cleanup.policy", ("compact", "delete", "compact,delete")),
    ("min.insync.replicas", ("1", "2")),
    ("segment.bytes", ("104857600", "536870912", "1073741824")),
    ("max.message.bytes", ("1048588", "5242880", "10485760")),
    ("compression.type", ("lz4", "zstd", "producer")),
    ("retention.bytes", ("1073741824", "10737418240", "-1")),
)
BROKER_CONFIGS = (
    ("log.cleaner.threads", ("1", "2", "4")),
    ("num.replica.fetchers", ("1", "2", "4")),
    ("leader.replication.throttled.rate", ("10485760", "52428800", "104857600")),
    ("follower.replication.throttled.rate", ("10485760", "52428800", "104857600")),
)
DOMAINS = (
    "orders",
    "payments",
    "users",
    "inventory",
    "shipping",
    "billing",
    "search",
    "clicks",
    "sessions",
    "notifications",
    "audit",
    "metrics",
    "ledger",
    "catalog",
    "fraud",
    "pricing",
)
KINDS = ("events", "commands", "changelog", "snapshots", "dlq", "retry", "cdc", "state")


@dataclass
class GenParams:
    topics: int = 100_000
    partitions: int = 10
    replication: int = 3
    brokers: int = 12
    tail_records: int = 1_000_000
    overlap_records: int = 5_000
    segment_bytes: int = 16 * 1024 * 1024
    seed: int = 20240917
    boot: bool = False
    """Shaped for a real controller to boot on (``bench/live_million.py``): a static quorum
    (``kraft.version`` 0: no KRaftVersion/KRaftVoters in the snapshot, no ``quorum-state``), broker
    ids from 1001 (clear of the harness's node ids), and every broker fenced by the last batch, so
    the controller has nothing to fence and no replica to place on a broker that is not there."""

    def key(self) -> str:
        """Directory name for these parameters (the cache key)."""
        return (
            f"t{self.topics}-p{self.partitions}-rf{self.replication}-b{self.brokers}-tail{self.tail_records}"
            f"-ov{self.overlap_records}-seg{self.segment_bytes >> 20}m-s{self.seed}-g{GENERATOR_VERSION}"
            + ("-boot" if self.boot else "")
        )


@dataclass
class GenResult:
    params: GenParams
    root: str  # the log dir (parent of __cluster_metadata-0)
    metadata_dir: str
    snapshot: str
    segments: list[str]
    snapshot_end_offset: int
    snapshot_epoch: int
    snapshot_records: int
    snapshot_bytes: int
    tail_records: int  # records after the snapshot end offset (control records included)
    tail_batches: int
    log_bytes: int
    last_offset: int
    last_epoch: int
    expected: dict[str, int]  # image counts after loading snapshot + tail
    expected_snapshot: dict[str, int]  # image counts after loading the snapshot alone
    samples: list[dict[str, Any]] = field(default_factory=list)  # partitions after the tail
    samples_snapshot: list[dict[str, Any]] = field(default_factory=list)  # ... in the snapshot
    seconds: float = 0.0
    record_mix: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> str:
        d = asdict(self)
        return json.dumps(d, indent=1)

    @classmethod
    def from_json(cls, text: str) -> GenResult:
        d = json.loads(text)
        d["params"] = GenParams(**d["params"])
        return cls(**d)


# --------------------------------------------------------------------------------------------------
# state the generator tracks (only what it needs to keep every tail record valid)


class _Part:
    """Mutable state of one partition that the tail touched (others are derived on demand)."""

    __slots__ = ("dirs", "isr", "leader", "leader_epoch", "partition_epoch", "replicas")

    def __init__(
        self,
        replicas: list[int],
        dirs: list[bytes],
        isr: list[int],
        leader: int,
        leader_epoch: int,
        partition_epoch: int,
    ) -> None:
        self.replicas = replicas
        self.dirs = dirs
        self.isr = isr
        self.leader = leader
        self.leader_epoch = leader_epoch
        self.partition_epoch = partition_epoch


class _Broker:
    __slots__ = ("dirs", "epoch", "fenced", "id", "incarnation", "rack", "shutdown")

    def __init__(self, id: int, epoch: int, incarnation: bytes, rack: str, dirs: list[bytes]) -> None:
        self.id = id
        self.epoch = epoch
        self.incarnation = incarnation
        self.rack = rack
        self.dirs = dirs
        self.fenced = False
        self.shutdown = False


class _Gen:
    def __init__(self, p: GenParams) -> None:
        self.p = p
        self.rng = random.Random(p.seed)
        rng = self.rng
        self.cluster_id = uuid_to_str(self.uuid())
        self.now = 1_760_000_000_000  # ms; advances with every batch
        self.epoch = 7  # raft leader epoch
        self.controllers = [101, 102, 103]
        self.controller_dirs = {c: self.uuid() for c in self.controllers}
        self.leader = 101
        first = BOOT_FIRST_BROKER if p.boot else 1
        ids = list(range(first, first + p.brokers))
        self.brokers: dict[int, _Broker] = {}
        for b in ids:
            self.brokers[b] = _Broker(
                b,
                rng.randrange(100_000, 2_000_000),
                self.uuid(),
                f"rack-{'abc'[b % 3]}",
                [self.uuid(), self.uuid()],
            )
        self.broker_ids = ids
        # topics: [name, id, start index, replica shift, alive]
        self.topic_names: list[str] = []
        self.topic_ids: list[bytes] = []
        self.topic_layout: list[tuple[int, int]] = []
        self.topic_parts: list[int] = []
        self.alive: list[bool] = []
        self.parts: dict[tuple[int, int], _Part] = {}
        self.under_replicated: set[tuple[int, int]] = set()
        self.topic_configs: dict[int, dict[str, str]] = {}
        self.broker_configs: dict[str, dict[str, str]] = {}
        self.next_producer_id = 0
        self.mix: dict[str, int] = {}
        for _t in range(p.topics):
            self._new_topic(p.partitions)

    # -- helpers ---------------------------------------------------------------------------------

    def uuid(self) -> bytes:
        while True:
            u = self.rng.randbytes(16)
            if u[:8] != bytes(8):  # Kafka reserves ids with a zero high half
                return u

    def _new_topic(self, nparts: int) -> int:
        rng = self.rng
        t = len(self.topic_names)
        self.topic_names.append(f"{rng.choice(DOMAINS)}.{rng.choice(KINDS)}.v{rng.randrange(1, 4)}-{t:07d}")
        self.topic_ids.append(self.uuid())
        self.topic_layout.append((rng.randrange(self.p.brokers), rng.randrange(self.p.brokers)))
        self.topic_parts.append(nparts)
        self.alive.append(True)
        if rng.random() < 0.2:
            n = rng.randrange(1, 4)
            self.topic_configs[t] = {k: rng.choice(vs) for k, vs in rng.sample(TOPIC_CONFIGS, n)}
        return t

    def assignment(self, t: int, p: int) -> list[int]:
        """Kafka's rack-unaware replica assignment (AdminUtils.assignReplicasToBrokersRackUnaware)."""
        n = self.p.brokers
        start, shift = self.topic_layout[t]
        shift += p // n
        first = (p + start) % n
        out = [self.broker_ids[first]]
        for j in range(self.p.replication - 1):
            out.append(self.broker_ids[(first + 1 + (shift + j) % (n - 1)) % n])
        return out

    def part(self, t: int, p: int, keep: bool = True) -> _Part:
        """The partition's current state (created from the deterministic base the first time and
        remembered when ``keep``: only partitions the log changes are kept in memory)."""
        key = (t, p)
        st = self.parts.get(key)
        if st is None:
            replicas = self.assignment(t, p)
            h = (t * 31 + p) & 0xFFFF
            dirs = [self.brokers[b].dirs[(h >> i) & 1] for i, b in enumerate(replicas)]
            isr = list(replicas)
            if h % 50 == 7:  # ~2% under-replicated
                isr.pop()
            le = h % 23
            st = _Part(replicas, dirs, isr, replicas[0], le, le + h % 7)
            if keep:
                self.parts[key] = st
        return st

    def count(self, name: str, n: int = 1) -> None:
        self.mix[name] = self.mix.get(name, 0) + n

    # -- record builders ---------------------------------------------------------------------------

    def r_feature(self, name: str, level: int) -> bytes:
        self.count("FeatureLevelRecord")
        return encode_metadata_record("FeatureLevelRecord", 0, {"Name": name, "FeatureLevel": level})

    def r_register_broker(self, b: _Broker) -> bytes:
        self.count("RegisterBrokerRecord")
        return encode_metadata_record(
            "RegisterBrokerRecord",
            V_REGISTER_BROKER,
            {
                "BrokerId": b.id,
                "IsMigratingZkBroker": False,
                "IncarnationId": b.incarnation,
                "BrokerEpoch": b.epoch,
                "EndPoints": [
                    {
                        "Name": "INTERNAL",
                        "Host": f"broker-{b.id}.kafka.svc.cluster.local",
                        "Port": 9092,
                        "SecurityProtocol": 3,
                    },
                    {
                        "Name": "EXTERNAL",
                        "Host": f"b{b.id}.kafka.example.com",
                        "Port": 9094,
                        "SecurityProtocol": 1,
                    },
                    {
                        "Name": "REPLICATION",
                        "Host": f"broker-{b.id}.kafka.svc.cluster.local",
                        "Port": 9093,
                        "SecurityProtocol": 0,
                    },
                ],
                "Features": [
                    {"Name": n, "MinSupportedVersion": lo, "MaxSupportedVersion": hi}
                    for n, lo, hi in SUPPORTED
                ],
                "Rack": b.rack,
                "Fenced": b.fenced,
                "InControlledShutdown": b.shutdown,
                "LogDirs": b.dirs,
            },
        )

    def r_register_controller(self, c: int) -> bytes:
        self.count("RegisterControllerRecord")
        return encode_metadata_record(
            "RegisterControllerRecord",
            0,
            {
                "ControllerId": c,
                "IncarnationId": self.controller_dirs[c][::-1],
                "ZkMigrationReady": False,
                "EndPoints": [
                    {
                        "Name": "CONTROLLER",
                        "Host": f"controller-{c}.kafka.svc.cluster.local",
                        "Port": 9095,
                        "SecurityProtocol": 3,
                    }
                ],
                "Features": [
                    {"Name": n, "MinSupportedVersion": lo, "MaxSupportedVersion": hi}
                    for n, lo, hi in SUPPORTED
                    if n in ("kraft.version", "metadata.version")
                ],
            },
        )

    def r_topic(self, t: int) -> bytes:
        self.count("TopicRecord")
        return encode_metadata_record(
            "TopicRecord", 0, {"Name": self.topic_names[t], "TopicId": self.topic_ids[t]}
        )

    def r_partition(self, t: int, p: int, st: _Part) -> bytes:
        self.count("PartitionRecord")
        return encode_metadata_record(
            "PartitionRecord",
            V_PARTITION,
            {
                "PartitionId": p,
                "TopicId": self.topic_ids[t],
                "Replicas": st.replicas,
                "Isr": st.isr,
                "RemovingReplicas": [],
                "AddingReplicas": [],
                "Leader": st.leader,
                "LeaderRecoveryState": 0,
                "LeaderEpoch": st.leader_epoch,
                "PartitionEpoch": st.partition_epoch,
                "Directories": st.dirs,
                "EligibleLeaderReplicas": [],
                "LastKnownElr": [],
            },
        )

    def r_change(self, t: int, p: int, **fields: Any) -> bytes:
        self.count("PartitionChangeRecord")
        fields["PartitionId"] = p
        fields["TopicId"] = self.topic_ids[t]
        return encode_metadata_record("PartitionChangeRecord", V_PARTITION_CHANGE, fields)

    def r_config(self, rtype: int, rname: str, name: str, value: str | None) -> bytes:
        self.count("ConfigRecord")
        return encode_metadata_record(
            "ConfigRecord", 0, {"ResourceType": rtype, "ResourceName": rname, "Name": name, "Value": value}
        )

    def r_broker_change(self, b: _Broker, **fields: Any) -> bytes:
        self.count("BrokerRegistrationChangeRecord")
        fields["BrokerId"] = b.id
        fields["BrokerEpoch"] = b.epoch
        return encode_metadata_record("BrokerRegistrationChangeRecord", V_BROKER_CHANGE, fields)

    def r_producer_ids(self) -> bytes:
        self.count("ProducerIdsRecord")
        b = self.brokers[self.rng.choice(self.broker_ids)]
        self.next_producer_id += 1000
        return encode_metadata_record(
            "ProducerIdsRecord",
            0,
            {"BrokerId": b.id, "BrokerEpoch": b.epoch, "NextProducerId": self.next_producer_id},
        )

    def voters(self) -> list[dict[str, Any]]:
        return [
            {
                "VoterId": c,
                "VoterDirectoryId": self.controller_dirs[c],
                "Endpoints": [
                    {"Name": "CONTROLLER", "Host": f"controller-{c}.kafka.svc.cluster.local", "Port": 9095}
                ],
                "KRaftVersionFeature": {"MinSupportedVersion": 0, "MaxSupportedVersion": 1},
            }
            for c in self.controllers
        ]

    # -- snapshot ----------------------------------------------------------------------------------

    def snapshot_records(self):  # -> Iterator[bytes]
        """Every data record of a snapshot of the current state, in MetadataImage.write order."""
        rng = self.rng
        yield self.r_feature("metadata.version", MV_LEVEL)
        for name, level in FINALIZED:
            if not (self.p.boot and name == "kraft.version"):
                yield self.r_feature(name, level)
        for b in self.broker_ids:
            yield self.r_register_broker(self.brokers[b])
        for c in self.controllers:
            yield self.r_register_controller(c)
        for t in range(len(self.topic_names)):
            if not self.alive[t]:
                continue
            yield self.r_topic(t)
            for p in range(self.topic_parts[t]):
                yield self.r_partition(t, p, self.part(t, p, keep=False))
        for rname, kv in sorted(self.broker_configs.items()):
            for k, v in sorted(kv.items()):
                yield self.r_config(4, rname, k, v)
        for t, kv in sorted(self.topic_configs.items()):
            if self.alive[t]:
                for k, v in sorted(kv.items()):
                    yield self.r_config(2, self.topic_names[t], k, v)
        for i in range(20):
            self.count("ClientQuotaRecord")
            yield encode_metadata_record(
                "ClientQuotaRecord",
                0,
                {
                    "Entity": [{"EntityType": "client-id", "EntityName": f"app-{i:02d}"}],
                    "Key": "producer_byte_rate",
                    "Value": float(1048576 * (i + 1)),
                },
            )
        self.next_producer_id = max(self.next_producer_id, 2_000_000)
        yield self.r_producer_ids()
        for i in range(100):
            self.count("AccessControlEntryRecord")
            yield encode_metadata_record(
                "AccessControlEntryRecord",
                0,
                {
                    "Id": self.uuid(),
                    "ResourceType": 2,
                    "ResourceName": f"{DOMAINS[i % len(DOMAINS)]}.",
                    "PatternType": 4,
                    "Principal": f"User:svc-{i:03d}",
                    "Host": "*",
                    "Operation": 3 + i % 2,
                    "PermissionType": 3,
                },
            )
        for i in range(5):
            self.count("UserScramCredentialRecord")
            yield encode_metadata_record(
                "UserScramCredentialRecord",
                0,
                {
                    "Name": f"svc-{i:03d}",
                    "Mechanism": 2,
                    "Salt": rng.randbytes(16),
                    "StoredKey": rng.randbytes(64),
                    "ServerKey": rng.randbytes(64),
                    "Iterations": 8192,
                },
            )

    # -- log events (each returns the records of one controller batch) -----------------------------

    def alive_topic(self) -> int:
        n = len(self.topic_names)
        while True:
            t = self.rng.randrange(n)
            if self.alive[t]:
                return t

    def ev_noop(self) -> list[bytes]:
        self.count("NoOpRecord")
        return [encode_metadata_record("NoOpRecord", 0, {})]

    def ev_isr_churn(self) -> list[bytes]:
        """An AlterPartition from a leader: some followers fell behind or caught up."""
        rng = self.rng
        out = []
        for _ in range(rng.choice((1, 1, 1, 2, 3, 5, 8, 13, 20))):
            t = self.alive_topic()
            p = rng.randrange(self.topic_parts[t])
            st = self.part(t, p)
            missing = [r for r in st.replicas if r not in st.isr and not self.brokers[r].fenced]
            if missing and (rng.random() < 0.7 or len(st.isr) == 1):
                st.isr = st.isr + [rng.choice(missing)]
            elif len(st.isr) > 1:
                st.isr = [r for r in st.isr if r != rng.choice([r for r in st.isr if r != st.leader])]
            else:
                continue
            st.partition_epoch += 1
            out.append(self.r_change(t, p, Isr=st.isr))
        return out

    def ev_leader_election(self) -> list[bytes]:
        """Preferred/unclean-free leader elections (auto leader rebalance): leader -> first ISR replica."""
        rng = self.rng
        out = []
        for _ in range(rng.choice((1, 2, 5, 10, 50, 100, 200))):
            t = self.alive_topic()
            p = rng.randrange(self.topic_parts[t])
            st = self.part(t, p)
            cands = [r for r in st.replicas if r in st.isr and r != st.leader and not self.brokers[r].fenced]
            if not cands:
                continue
            st.leader = cands[0]
            st.leader_epoch += 1
            st.partition_epoch += 1
            out.append(self.r_change(t, p, Leader=st.leader))
        return out

    def ev_config(self) -> list[bytes]:
        rng = self.rng
        out = []
        for _ in range(rng.choice((1, 1, 2, 3, 5))):
            if rng.random() < 0.85:
                t = self.alive_topic()
                kv = self.topic_configs.setdefault(t, {})
                if kv and rng.random() < 0.3:
                    k = rng.choice(sorted(kv))
                    del kv[k]
                    out.append(self.r_config(2, self.topic_names[t], k, None))
                else:
                    k, vs = rng.choice(TOPIC_CONFIGS)
                    kv[k] = rng.choice(vs)
                    out.append(self.r_config(2, self.topic_names[t], k, kv[k]))
                if not kv:
                    del self.topic_configs[t]
            else:
                rname = rng.choice(["", *(str(b) for b in self.broker_ids)])
                k, vs = rng.choice(BROKER_CONFIGS)
                self.broker_configs.setdefault(rname, {})[k] = v = rng.choice(vs)
                out.append(self.r_config(4, rname, k, v))
        return out

    def ev_create_topic(self) -> list[bytes]:
        t = self._new_topic(self.rng.choice((1, 3, 6, 12, 24)))
        out = [self.r_topic(t)]
        for k, v in sorted(self.topic_configs.get(t, {}).items()):
            out.append(self.r_config(2, self.topic_names[t], k, v))
        for p in range(self.topic_parts[t]):
            out.append(self.r_partition(t, p, self.part(t, p)))
        return out

    def ev_delete_topic(self) -> list[bytes]:
        t = self.alive_topic()
        self.alive[t] = False
        self.topic_configs.pop(t, None)
        self.count("RemoveTopicRecord")
        return [encode_metadata_record("RemoveTopicRecord", 0, {"TopicId": self.topic_ids[t]})]

    def ev_producer_ids(self) -> list[bytes]:
        return [self.r_producer_ids()]

    def broker_roll(self, offset_of_next: int, touch: int):  # -> Iterator[list[bytes]]
        """A rolling restart of one broker, as a sequence of controller batches.

        ``offset_of_next`` returns the offset the next yielded batch will start at (Kafka uses the
        offset of the RegisterBrokerRecord as the new broker epoch).  ``touch`` bounds how many of
        the broker's partitions get leader/ISR changes (a real roll touches all of them).
        """
        rng = self.rng
        b = self.brokers[rng.choice(self.broker_ids)]
        if b.fenced:
            return
        # 1. controlled shutdown: leaders move away, the broker leaves the ISRs
        b.shutdown = True
        yield [self.r_broker_change(b, InControlledShutdown=1)]
        touched: list[tuple[int, int]] = []
        batch: list[bytes] = []
        for _ in range(touch):
            t = self.alive_topic()
            p = rng.randrange(self.topic_parts[t])
            st = self.part(t, p)
            if b.id not in st.replicas or b.id not in st.isr or len(st.isr) == 1:
                continue
            st.isr = [r for r in st.isr if r != b.id]
            fields: dict[str, Any] = {"Isr": st.isr}
            if st.leader == b.id:
                st.leader = st.isr[0]
                st.leader_epoch += 1
                fields["Leader"] = st.leader
            st.partition_epoch += 1
            touched.append((t, p))
            batch.append(self.r_change(t, p, **fields))
            if len(batch) >= 500:
                yield batch
                batch = []
        if batch:
            yield batch
        # 2. fenced when its session ends
        b.fenced = True
        yield [self.r_broker_change(b, Fenced=1)]
        # 3. comes back: new registration (epoch = its offset), then unfenced
        b.epoch = offset_of_next()
        b.incarnation = self.uuid()
        b.shutdown = False
        yield [self.r_register_broker(b)]
        yield [self.r_broker_change(b, Fenced=-1)]
        b.fenced = False
        # 4. catches up: back into the ISRs
        batch = []
        for t, p in touched:
            if not self.alive[t]:
                continue
            st = self.part(t, p)
            if b.id in st.isr or b.id not in st.replicas:
                continue
            st.isr = st.isr + [b.id]
            st.partition_epoch += 1
            batch.append(self.r_change(t, p, Isr=st.isr))
            if len(batch) >= rng.choice((20, 100, 500)):
                yield batch
                batch = []
        if batch:
            yield batch

    def leader_change(self) -> tuple[bytes, bytes]:
        self.epoch += 1
        self.leader = self.rng.choice(self.controllers)
        self.count("LeaderChange")
        return encode_control_record(
            "LeaderChange",
            {
                "Version": 0,
                "LeaderId": self.leader,
                "Voters": [{"VoterId": c} for c in self.controllers],
                "GrantingVoters": [{"VoterId": c} for c in self.controllers if c != self.leader][:1]
                + [{"VoterId": self.leader}],
            },
        )

    def events(self, offset_of_next):  # -> Iterator[tuple[str, list]]
        """An endless stream of controller batches: ("data", [values]) or ("control", [(k, v)])."""
        rng = self.rng
        p = self.p
        touch = max(50, min(5000, p.topics * p.partitions // 200))
        # Weights per controller event; records per event: isr ~6, leader ~52, config ~2.4, create ~10,
        # roll ~touch/2 (+4 broker records).  Mix of the tail at full size: ~80% PartitionChange,
        # ~12% NoOp, ~7% Config, topic creations/deletions, a few dozen broker rolls, producer-id
        # blocks and raft leader changes.
        kinds = (
            ("isr", 45),
            ("noop", 60),
            ("leader", 2),
            ("config", 15),
            ("roll", 0.02),
            ("create", 2),
            ("delete", 0.7),
            ("pid", 1),
            ("raft", 0.02),
        )
        names = [k for k, _ in kinds]
        weights = [w for _, w in kinds]
        while True:
            kind = rng.choices(names, weights)[0]
            if kind == "isr":
                yield "data", self.ev_isr_churn()
            elif kind == "noop":
                yield "data", self.ev_noop()
            elif kind == "leader":
                yield "data", self.ev_leader_election()
            elif kind == "config":
                yield "data", self.ev_config()
            elif kind == "create":
                yield "data", self.ev_create_topic()
            elif kind == "delete":
                yield "data", self.ev_delete_topic()
            elif kind == "pid":
                yield "data", self.ev_producer_ids()
            elif kind == "roll":
                for recs in self.broker_roll(offset_of_next, touch):
                    yield "data", recs
            elif kind == "raft":
                yield "control", [self.leader_change()]

    # -- expected image ----------------------------------------------------------------------------

    def samples(self, keys: list[tuple[int, int]]) -> list[dict[str, Any]]:
        """The current state of some partitions, for checking a loader's result in detail."""
        out = []
        for t, p in keys:
            if not self.alive[t]:
                continue
            st = self.part(t, p, keep=False)
            out.append(
                {
                    "topic": self.topic_names[t],
                    "partition": p,
                    "replicas": list(st.replicas),
                    "isr": list(st.isr),
                    "leader": st.leader,
                    "leader_epoch": st.leader_epoch,
                    "partition_epoch": st.partition_epoch,
                }
            )
        return out

    def expected(self) -> dict[str, int]:
        alive = [t for t in range(len(self.topic_names)) if self.alive[t]]
        configs = sum(1 for t, kv in self.topic_configs.items() if kv and self.alive[t]) + sum(
            1 for kv in self.broker_configs.values() if kv
        )
        return {
            "brokers": len(self.brokers),
            "controllers": len(self.controllers),
            "topics": len(alive),
            "partitions": sum(self.topic_parts[t] for t in alive),
            "configs": configs,
        }


# --------------------------------------------------------------------------------------------------
# writing files


class _LogWriter:
    """Appends batches to ``<base>.log`` segments, rolling at ``segment_bytes``."""

    def __init__(self, directory: Path, segment_bytes: int) -> None:
        self.dir = directory
        self.segment_bytes = segment_bytes
        self.fh = None
        self.size = 0
        self.segments: list[str] = []
        self.total = 0
        self.epochs: list[tuple[int, int]] = []  # (epoch, start offset)

    def append(self, base_offset: int, epoch: int, batch: bytes) -> None:
        if self.fh is None or self.size + len(batch) > self.segment_bytes and self.size > 0:
            if self.fh is not None:
                self.fh.close()
            name = f"{base_offset:020d}"
            self.fh = open(self.dir / f"{name}.log", "wb")  # noqa: SIM115 - kept open across appends
            (self.dir / f"{name}.index").touch()
            (self.dir / f"{name}.timeindex").touch()
            self.segments.append(f"{name}.log")
            self.size = 0
        if not self.epochs or self.epochs[-1][0] != epoch:
            self.epochs.append((epoch, base_offset))
        self.fh.write(batch)
        self.size += len(batch)
        self.total += len(batch)

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()


def _pack_batches(values: list[bytes], limit: int = MAX_BATCH_BYTES):  # -> Iterator[list[bytes]]
    """Split a stream of record values into batches of at most ``limit`` bytes, as BatchAccumulator."""
    cur: list[bytes] = []
    size = BATCH_OVERHEAD
    for v in values:
        rec = len(v) + 8  # value + record framing (length, attrs, deltas, key, headers)
        if cur and size + rec > limit:
            yield cur
            cur = []
            size = BATCH_OVERHEAD
        cur.append(v)
        size += rec
    if cur:
        yield cur


def generate(p: GenParams, out: Path, log=print) -> GenResult:
    """Write the directory for ``p`` under ``out/<p.key()>/`` (atomically) and return its description."""
    started = time.monotonic()
    final = out / p.key()
    tmp = out / f".{p.key()}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    mdir = tmp / "__cluster_metadata-0"
    mdir.mkdir(parents=True)
    g = _Gen(p)

    # The log as Kafka keeps it: the first segment starts `overlap` records before the snapshot.
    end_offset = 3_000_000 + p.overlap_records  # the snapshot's end offset (exclusive)
    offset = end_offset - p.overlap_records
    writer = _LogWriter(mdir, p.segment_bytes)

    def write_data(records: list[bytes]) -> None:
        nonlocal offset
        if not records:
            return
        g.now += g.rng.randrange(1, 500)
        writer.append(offset, g.epoch, build_batch(offset, g.epoch, records, g.now))
        offset += len(records)

    def write_control(records: list[tuple[bytes, bytes]]) -> None:
        nonlocal offset
        g.now += g.rng.randrange(1, 500)
        writer.append(offset, g.epoch, build_batch(offset, g.epoch, records, g.now, control=True))
        offset += len(records)

    stream = g.events(lambda: offset)
    while offset < end_offset:
        kind, recs = next(stream)
        (write_data if kind == "data" else write_control)(recs)
    # The last batch may run past end_offset: the snapshot ends where it ended (batches are never
    # cut, so every record the state reflects is in the log).
    end_offset = offset
    mix_before = dict(g.mix)
    g.mix.clear()
    snap_epoch = g.epoch
    snap_ts = g.now
    log(
        f"  log before the snapshot: {p.overlap_records} records; writing the snapshot "
        f"({p.topics * p.partitions:,} partitions) ..."
    )

    sample_keys = [
        (t, g.rng.randrange(g.topic_parts[t]))
        for t in (g.rng.randrange(len(g.topic_names)) for _ in range(10))
    ]
    sample_keys += list(g.parts)[:10]  # some that the log before the snapshot touched

    # The snapshot of the state at end_offset - 1.
    snap_name = f"{end_offset:020d}-{snap_epoch:010d}.checkpoint"
    snap_records = 0
    with open(mdir / snap_name, "wb") as fh:
        ts = snap_ts + 5_000
        header = [
            encode_control_record("SnapshotHeader", {"Version": 0, "LastContainedLogTimestamp": snap_ts}),
        ]
        if not p.boot:
            header += [
                encode_control_record("KRaftVersion", {"Version": 0, "KRaftVersion": 1}),
                encode_control_record("KRaftVoters", {"Version": 0, "Voters": g.voters()}),
            ]
        fh.write(build_batch(0, snap_epoch, header, ts, control=True))
        rel = len(header)
        for batch in _pack_batches(g.snapshot_records()):
            fh.write(build_batch(rel, snap_epoch, batch, ts))
            rel += len(batch)
            snap_records += len(batch)
        fh.write(
            build_batch(
                rel, snap_epoch, [encode_control_record("SnapshotFooter", {"Version": 0})], ts, control=True
            )
        )
    expected_snapshot = g.expected()
    samples_snapshot = g.samples(sample_keys)
    mix_snapshot = dict(g.mix)
    g.mix.clear()
    log(
        f"  snapshot {snap_name}: {snap_records:,} records, {(mdir / snap_name).stat().st_size / 2**20:.1f} MiB; "
        f"writing the log tail ({p.tail_records:,} records) ..."
    )

    # The tail after the snapshot.
    tail_start = offset
    n_batches = 0
    g.now = snap_ts
    while offset - tail_start < p.tail_records:
        kind, recs = next(stream)
        (write_data if kind == "data" else write_control)(recs)
        n_batches += 1 if recs else 0
    if p.boot:  # every broker's session ended: nothing left for a booting controller to fence
        for b in g.brokers.values():
            b.fenced = True
        write_data([g.r_broker_change(b, Fenced=1) for b in g.brokers.values()])
        n_batches += 1
    writer.close()
    sample_keys += list(g.parts)[-10:]  # recently touched by the tail

    # Small files (a booting controller with no quorum-state starts at the log's last epoch).
    if not p.boot:
        (mdir / "quorum-state").write_text(
            json.dumps(
                {
                    "leaderId": g.leader,
                    "leaderEpoch": g.epoch,
                    "votedId": -1,
                    "votedDirectoryId": "AAAAAAAAAAAAAAAAAAAAAA",
                    "data_version": 1,
                },
                separators=(",", ":"),
            )
        )
    (mdir / "leader-epoch-checkpoint").write_text(
        f"0\n{len(writer.epochs)}\n" + "".join(f"{e} {o}\n" for e, o in writer.epochs)
    )
    (mdir / "partition.metadata").write_text(f"version: 0\ntopic_id: {uuid_to_str(METADATA_TOPIC_ID)}")
    (tmp / "meta.properties").write_text(
        "#\n#Thu Oct 09 08:53:20 UTC 2025\n"
        f"node.id={g.leader}\ndirectory.id={uuid_to_str(g.controller_dirs[g.leader])}\nversion=1\n"
        f"cluster.id={g.cluster_id}\n"
    )
    boot = [encode_control_record("SnapshotHeader", {"Version": 0, "LastContainedLogTimestamp": 0})]
    with open(tmp / "bootstrap.checkpoint", "wb") as fh:
        fh.write(build_batch(0, 0, boot, 1_759_990_000_000, control=True))
        feats = [
            encode_metadata_record(
                "FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": MV_LEVEL}
            )
        ]
        feats += [
            encode_metadata_record("FeatureLevelRecord", 0, {"Name": n, "FeatureLevel": lv})
            for n, lv in FINALIZED
            if n != "kraft.version"
        ]
        fh.write(build_batch(1, 0, feats, 1_759_990_000_000))
        fh.write(
            build_batch(
                1 + len(feats),
                0,
                [encode_control_record("SnapshotFooter", {"Version": 0})],
                1_759_990_000_000,
                control=True,
            )
        )

    mix = {k: v for k, v in sorted(g.mix.items())}
    mix["snapshot:" + "total"] = snap_records
    for k, v in sorted(mix_snapshot.items()):
        mix["snapshot:" + k] = v
    for k, v in sorted(mix_before.items()):
        mix["log-before-snapshot:" + k] = v
    result = GenResult(
        params=p,
        root=str(final),
        metadata_dir=str(final / "__cluster_metadata-0"),
        snapshot=str(final / "__cluster_metadata-0" / snap_name),
        segments=[str(final / "__cluster_metadata-0" / s) for s in writer.segments],
        snapshot_end_offset=end_offset,
        snapshot_epoch=snap_epoch,
        snapshot_records=snap_records,
        snapshot_bytes=(mdir / snap_name).stat().st_size,
        tail_records=offset - tail_start,
        tail_batches=n_batches,
        log_bytes=writer.total,
        last_offset=offset - 1,
        last_epoch=g.epoch,
        expected=g.expected(),
        expected_snapshot=expected_snapshot,
        samples=g.samples(sample_keys),
        samples_snapshot=samples_snapshot,
        seconds=round(time.monotonic() - started, 1),
        record_mix=mix,
    )
    if final.exists():
        shutil.rmtree(final)
    os.rename(tmp, final)
    # The manifest lives next to the directory, not in it: nothing but Kafka's own files inside.
    manifest_path(p, out).write_text(result.to_json())
    return result


def add_size_arguments(ap: argparse.ArgumentParser) -> None:
    """``--topics --partitions --scale --out``: the directory the after-load benchmarks use."""
    ap.add_argument("--topics", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument(
        "--scale", type=float, default=1.0, help="multiply --topics and the tail (0.1 for a quick run)"
    )
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")


def params_from(args: argparse.Namespace) -> GenParams:
    """The load.py directory at ``args.scale``: 100k topics x 10 partitions and a 1M-record tail at 1.0."""
    return GenParams(
        topics=max(1, round(args.topics * args.scale)),
        partitions=args.partitions,
        tail_records=max(0, round(1_000_000 * args.scale)),
        overlap_records=max(100, round(5000 * args.scale)),
    )


def machine_line(what: str) -> str:
    """The line that heads a benchmark's figures: when, where, on what."""
    import datetime as _dt
    import platform

    from metashell.engine import current

    return (
        f"{_dt.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"engine {current().describe()}; {what}"
    )


def save_results(out: Path, name: str, results: dict) -> Path:
    """Write a benchmark's figures to ``out/<name>-<timestamp>.json`` and say where."""
    import datetime as _dt

    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}-{_dt.datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(results, indent=1))
    print(f"\nresults: {path}")
    return path


def manifest_path(p: GenParams, out: Path) -> Path:
    return out / f"{p.key()}.json"


def ensure(p: GenParams, out: Path, regenerate: bool = False, log=print) -> GenResult:
    """The cached directory for ``p`` (generated if missing or ``regenerate``)."""
    manifest = manifest_path(p, out)
    if manifest.exists() and (out / p.key()).is_dir() and not regenerate:
        return GenResult.from_json(manifest.read_text())
    out.mkdir(parents=True, exist_ok=True)
    log(f"generating {out / p.key()} ...")
    # In a child process: the generator holds the whole image (~400 MB at full size), and Linux
    # carries a process's peak RSS over into the children it starts afterwards (ru_maxrss survives
    # fork and exec), so every peak RSS a benchmark measured after generating in-process read ~400 MB.
    child = multiprocessing.get_context("fork").Process(target=generate, args=(p, out, log))
    child.start()
    child.join()
    if child.exitcode != 0 or not manifest.exists():
        raise RuntimeError(f"generating {out / p.key()} failed (exit {child.exitcode})")
    return GenResult.from_json(manifest.read_text())


def main(argv: list[str] | None = None) -> int:
    """``python bench/metagen.py [--topics N] [--partitions N] [--scale F] [--out DIR]``: make the
    directory once and print where it is (the benchmarks do this themselves; this is for a look)."""
    ap = argparse.ArgumentParser(
        prog="bench/metagen.py",
        description="Generate a large, realistic KRaft metadata log directory (no Kafka needed).",
    )
    add_size_arguments(ap)
    args = ap.parse_args(argv)
    result = generate(params_from(args), args.out)
    print(result.root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
