"""What is wrong with a cluster, read from its metadata image: the first question of an incident.

:func:`check_health` walks the image once (partitions, brokers, controllers, features, quorum) and
returns :class:`Finding` objects, each with a severity, a count and the affected items; the shell
renders them (``health``), the tree shows them (``/health``), scripts read them (``--json``).  The
partition rules are those of ``kafka-topics --describe`` (``TopicCommand.PartitionDescription``):

* **offline** (``--unavailable-partitions``): no leader, or a leader that is not a live broker
  (registered and unfenced);
* **under-replicated**: ISR smaller than the replication factor, which is the replica count minus
  the replicas being added by a reassignment;
* **under min ISR**: no leader, or ISR smaller than the effective ``min.insync.replicas``; at min
  ISR: ISR size equal to it.  The effective value is the topic's override, else the cluster-wide
  dynamic default; when neither is in the metadata the brokers' ``server.properties`` decide and
  the value is *unknown* here (reported, not guessed).

Only the image is read: this module sits in the image layer so the shell, the TUI and the Spark
jobs share one definition of "unhealthy".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from operator import itemgetter
from typing import Any

from metashell.protocol.uuid import uuid_to_str

from .gcpause import gc_paused
from .health_report import CRITICAL, INFO, NO_LEADER, WARNING, Finding, HealthReport, PartitionRef
from .image import MetadataImage
from .kafka_names import CONFIG_RESOURCE_TOPIC
from .model import RESERVED_DIRS, Partition
from .salvage_point import salvage_point
from .wording import broker_state

__all__ = [
    "CRITICAL",
    "INFO",
    "WARNING",
    "Finding",
    "HealthReport",
    "PartitionRef",
    "check_health",
    "effective_min_isr",
    "is_under_replicated",
    "live_brokers",
    "replication_factor",
]

_TOPIC_PARTITION = itemgetter(0, 1)
_NAME = itemgetter(0)
_BROKER = 4
_NO_LEADER = NO_LEADER
METADATA_VERSION = "metadata.version"


# -- rules shared with `describe` --------------------------------------------------------------------


def live_brokers(image: MetadataImage) -> set[int]:
    """Registered, unfenced brokers: what ``describeCluster`` returns and a leader must be."""
    return {b.id for b in image.cluster.brokers.values() if not b.fenced}


def replication_factor(p: Partition) -> int:
    """TopicCommand's ``getReplicationFactor``: replicas minus those a reassignment is adding."""
    return len(p.replicas) - len(p.adding_replicas)


def is_under_replicated(p: Partition) -> bool:
    return replication_factor(p) > len(p.isr)


def effective_min_isr(image: MetadataImage, topic: str) -> tuple[int | None, str]:
    """(value, where it comes from) of ``min.insync.replicas`` for ``topic``; (None, "unknown") when
    the metadata does not hold it (the brokers' static configuration decides)."""
    for key, origin in (((CONFIG_RESOURCE_TOPIC, topic), "topic"), ((_BROKER, ""), "cluster default")):
        raw = image.configs.get(key, {}).get("min.insync.replicas")
        if raw is not None:
            try:
                return int(raw), origin
            except ValueError:
                return None, f"{origin} (not a number: {raw!r})"
    return None, "unknown"


# -- the check ---------------------------------------------------------------------------------------


def check_health(image: MetadataImage, pace: Callable[[], None] | None = None) -> HealthReport:
    """One pass over the image; findings with a zero count are left out.  ``pace``: called every
    few thousand topics, so that a caller running this beside a UI can let the UI go first (the
    TUI waits there while keys are being pressed)."""
    with gc_paused():  # up to hundreds of thousands of small tuples: no collections in between
        return _check_health(image, pace)


def _check_health(image: MetadataImage, pace: Callable[[], None] | None) -> HealthReport:
    brokers = image.cluster.brokers
    live = live_brokers(image)
    offline: list[PartitionRef] = []
    under_replicated: list[PartitionRef] = []
    under_min: list[PartitionRef] = []
    elr_in_use: list[PartitionRef] = []
    reassigning: list[PartitionRef] = []
    no_clean_leader: list[PartitionRef] = []
    not_preferred: list[PartitionRef] = []
    unknown_min_isr: list[str] = []
    leader_ids: list[int] = []
    replica_sets: dict[tuple[int, ...], None] = {}  # replica lists are interned tuples: few distinct
    isr_sets: dict[tuple[int, ...], None] = {}
    dir_sets: dict[tuple[bytes, ...], None] = {}  # interned too
    partitions = 0
    no_leader = _NO_LEADER
    new = tuple.__new__
    # The hot loop of a million-partition cluster: locals only, an object made only for a problem.
    # by name (partitions are kept by id already): the lists below come out (nearly) sorted and
    # their sorts are linear -- a sort holds the GIL for its whole length, 0.4 s at a million
    # partitions in random order, during which the TUI beside it could not draw
    for done, (name, topic) in enumerate(sorted(image.topics.by_name.items(), key=_NAME)):
        if pace is not None and not done & 1023:
            pace()
        min_isr, _origin = effective_min_isr(image, name)
        if min_isr is None:
            unknown_min_isr.append(name)
            min_isr = 0
        parts = topic.partitions
        partitions += len(parts)
        for pid, p in parts.items():
            leader = p.leader
            replicas = p.replicas
            isr_size = len(p.isr)
            replica_sets[replicas] = None
            isr_sets[p.isr] = None
            dir_sets[p.directories] = None
            ref = None
            if leader == no_leader or leader not in live:
                ref = new(PartitionRef, (name, pid, p))
                offline.append(ref)
            else:
                leader_ids.append(leader)
                if replicas and replicas[0] != leader:
                    ref = new(PartitionRef, (name, pid, p))
                    not_preferred.append(ref)
            adding = p.adding_replicas
            if len(replicas) - len(adding) > isr_size:
                ref = ref or new(PartitionRef, (name, pid, p))
                under_replicated.append(ref)
            if isr_size < min_isr or (min_isr and leader == no_leader):
                ref = ref or new(PartitionRef, (name, pid, p))
                under_min.append(ref)
            if p.elr:
                ref = ref or new(PartitionRef, (name, pid, p))
                elr_in_use.append(ref)
            elif leader == no_leader and not isr_size:
                ref = ref or new(PartitionRef, (name, pid, p))
                no_clean_leader.append(ref)
            if adding or p.removing_replicas:
                ref = ref or new(PartitionRef, (name, pid, p))
                reassigning.append(ref)
    for refs in (
        offline,
        under_replicated,
        under_min,
        elr_in_use,
        reassigning,
        not_preferred,
        no_clean_leader,
    ):
        refs.sort(key=_TOPIC_PARTITION)
    unknown_min_isr.sort()
    leaders: Counter[int] = Counter(leader_ids)
    hosting = {b for replicas in replica_sets for b in replicas}
    in_some_isr = {b for isr in isr_sets for b in isr}

    findings: list[Finding] = []

    def add(key: str, severity: str, title: str, items: list[Any], detail: str = "") -> None:
        if items:
            findings.append(Finding(key, severity, title, len(items), items, detail))

    add(
        "offline-partitions",
        CRITICAL,
        "offline partition(s) (no live leader)",
        offline,
        "no leader, or a leader that is not a live (registered, unfenced) broker; clients cannot "
        "produce to or consume from them",
    )
    add(
        "no-eligible-leader",
        CRITICAL,
        "offline partition(s) with no replica eligible to lead",
        no_clean_leader,
        "empty ISR and empty ELR: only an unclean leader election (possible data loss) brings them back",
    )
    add(
        "under-min-isr-partitions",
        CRITICAL,
        "partition(s) under min.insync.replicas",
        under_min,
        "acks=all producers fail on them (min.insync.replicas from the topic override or the "
        "cluster default)",
    )
    add(
        "under-replicated-partitions",
        WARNING,
        "under-replicated partition(s)",
        under_replicated,
        "ISR smaller than the replication factor",
    )
    add(
        "eligible-leader-replicas",
        WARNING,
        "partition(s) relying on eligible leader replicas",
        elr_in_use,
        "ISR fell below min.insync.replicas; these replicas may still be elected cleanly (KIP-966)",
    )
    add("reassignments", WARNING, "partition(s) being reassigned", reassigning, "adding or removing replicas")
    fenced = [_broker_item(b) for b in sorted(brokers.values(), key=lambda b: b.id) if b.fenced]
    add(
        "fenced-brokers",
        WARNING,
        "fenced broker(s)",
        fenced,
        "registered but fenced: they lead and follow nothing until they unfence",
    )
    shutting = [
        _broker_item(b)
        for b in sorted(brokers.values(), key=lambda b: b.id)
        if b.in_controlled_shutdown and not b.fenced
    ]
    add("shutting-down-brokers", WARNING, "broker(s) in controlled shutdown", shutting)
    add(
        "brokers-in-no-isr",
        WARNING,
        "live broker(s) hosting replicas but in no ISR",
        [
            _broker_item(b)
            for b in sorted(brokers.values(), key=lambda b: b.id)
            if b.id in live and b.id in hosting and b.id not in in_some_isr
        ],
        "every replica they host is out of sync: they are not catching up (disk, network or "
        "throttle), and one more failure elsewhere loses a copy",
    )
    add(
        "failed-log-directories",
        WARNING,
        "failed log directory(ies): replicas in a directory their broker no longer lists",
        _failed_directories(image, dir_sets),
        "a JBOD broker reports a failed log directory and the controller drops it from the broker's "
        "registration (KIP-858): the replicas there are offline until it comes back or they move",
    )
    add(
        "duplicate-endpoints",
        WARNING,
        "endpoint(s) advertised by more than one broker",
        _duplicate_endpoints(image),
        "clients and followers that resolve one of these reach whichever broker answers there",
    )
    add(
        "unsupported-features",
        CRITICAL,
        "node(s) that do not support a finalized feature level",
        _unsupported_features(image),
        "a node whose supported range does not cover the finalized level cannot take part in the cluster",
    )
    add(
        "voters-unregistered",
        WARNING,
        "quorum voter(s) without a controller registration",
        _unregistered_voters(image),
    )
    add(
        "min-isr-unknown",
        INFO,
        "topic(s) whose min.insync.replicas is not in the metadata",
        [{"topic": t, "text": t} for t in unknown_min_isr],
        "neither a topic override nor a cluster default: the brokers' server.properties decide, so "
        "under-min-ISR is not judged for them",
    )
    add(
        "not-preferred-leader",
        INFO,
        "partition(s) not led by their preferred replica",
        not_preferred,
        "a preferred leader election would move leadership back",
    )
    idle = [
        _broker_item(b)
        for b in sorted(brokers.values(), key=lambda b: b.id)
        if b.id in live and b.id not in hosting
    ]
    add("brokers-without-replicas", INFO, "live broker(s) hosting no replica", idle)
    if len(live) > 1 and leaders:
        counts = {b: leaders.get(b, 0) for b in sorted(live)}
        top, low = max(counts.values()), min(counts.values())
        if top - low > max(1, (top + low) // 4):
            add(
                "leader-skew",
                INFO,
                "broker(s) leading far more partitions than others",
                [
                    {"broker": b, "leaders": n, "text": f"broker {b}: {n} leader(s)"}
                    for b, n in sorted(counts.items(), key=lambda kv: -kv[1])
                ],
                f"leaders per live broker range from {low} to {top}",
            )
    order = {CRITICAL: 0, WARNING: 1, INFO: 2}
    findings.sort(key=lambda f: order[f.severity])
    point = salvage_point(image)
    return HealthReport(
        findings,
        len(brokers),
        len(image.topics.by_id),
        partitions,
        dict(leaders),
        _no_data(image),
        point.words() if point is not None else "",
    )


def _no_data(image: MetadataImage) -> str:
    """Why the image holds nothing to judge, or "" when it holds a broker, controller or topic."""
    if image.cluster.brokers or image.cluster.controllers or image.topics.by_id:
        return ""
    prov = image.provenance
    if prov.records == 0:
        return "the metadata holds no record (its files are empty, or could not be read)"
    return f"no broker, controller or topic is registered at offset {prov.offset} ({prov.records} record(s) read)"


def _failed_directories(
    image: MetadataImage, dir_sets: dict[tuple[bytes, ...], None]
) -> list[dict[str, Any]]:
    """Directories replicas are assigned to that no registered broker lists, with their replicas.

    Kafka counts such a replica offline (``BrokerRegistration.hasOnlineDir``).  The distinct
    directory tuples are few (interned), so only a cluster with a failed directory is walked again.
    """
    brokers = image.cluster.brokers
    listed = {d for b in brokers.values() for d in b.directories} | RESERVED_DIRS
    failed = {d for dirs in dir_sets for d in dirs if d not in listed}
    if not failed:
        return []
    held: Counter[tuple[int, bytes]] = Counter()
    for topic in image.topics.by_name.values():
        for p in topic.partitions.values():
            for r, d in zip(p.replicas, p.directories, strict=False):
                if d in failed and r in brokers and brokers[r].unlists(d):
                    held[(r, d)] += 1
    return [
        {
            "broker": r,
            "directory": uuid_to_str(d),
            "replicas": n,
            "text": f"broker {r}: directory {uuid_to_str(d)}, {n} replica(s) offline",
        }
        for (r, d), n in sorted(held.items())
    ]


def _duplicate_endpoints(image: MetadataImage) -> list[dict[str, Any]]:
    """Host:port pairs that two or more registered brokers advertise (a copied server.properties)."""
    owners: dict[tuple[str, int], set[int]] = {}
    for b in image.cluster.brokers.values():
        for e in b.listeners.values():
            if e.host:  # an empty host means "this machine's default interface": not comparable
                owners.setdefault((e.host, e.port), set()).add(b.id)
    return [
        {
            "endpoint": f"{host}:{port}",
            "brokers": sorted(ids),
            "text": f"{host}:{port} is advertised by brokers {', '.join(map(str, sorted(ids)))}",
        }
        for (host, port), ids in sorted(owners.items())
        if len(ids) > 1
    ]


def _broker_item(b: Any) -> dict[str, Any]:
    state = broker_state(b.fenced, b.in_controlled_shutdown)
    return {
        "broker": b.id,
        "epoch": b.epoch,
        "fenced": b.fenced,
        "inControlledShutdown": b.in_controlled_shutdown,
        "text": f"broker {b.id} (epoch {b.epoch}): {state}",
    }


def _finalized(image: MetadataImage) -> dict[str, int]:
    levels = dict(image.features.finalized)
    if image.features.metadata_version is not None:
        levels[METADATA_VERSION] = image.features.metadata_version
    return levels


def _unsupported_features(image: MetadataImage) -> list[dict[str, Any]]:
    out = []
    levels = _finalized(image)
    nodes = [("broker", b.id, b.supported_features) for b in image.cluster.brokers.values()] + [
        ("controller", c.id, c.supported_features) for c in image.cluster.controllers.values()
    ]
    for kind, node_id, supported in sorted(nodes, key=lambda n: (n[0], n[1])):
        for feature, level in sorted(levels.items()):
            lo, hi = supported.get(feature, (0, 0))
            if level and not lo <= level <= hi:
                out.append(
                    {
                        "node": node_id,
                        "role": kind,
                        "feature": feature,
                        "level": level,
                        "supported": [lo, hi] if feature in supported else None,
                        "text": f"{kind} {node_id}: {feature} level {level} is outside its supported "
                        f"range {lo}..{hi}"
                        if feature in supported
                        else f"{kind} {node_id}: {feature} level {level} is not supported at all",
                    }
                )
    return out


def _unregistered_voters(image: MetadataImage) -> list[dict[str, Any]]:
    controllers = image.cluster.controllers
    if not controllers:  # no registrations at all: a combined-mode or pre-3.7 cluster, not a fault
        return []
    return [
        {
            "voter": v.id,
            "directoryId": uuid_to_str(v.directory_id) if v.directory_id else None,
            "text": f"voter {v.id} has no RegisterControllerRecord",
        }
        for v in image.quorum.voters
        if v.id not in controllers
    ]
