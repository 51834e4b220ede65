"""Answers for incidents: the text of ``health`` and ``describe``.

The analysis lives in :mod:`metashell.image.health` (one definition of "offline" or
"under-replicated" for the shell, the TUI and Spark); this module only turns it into lines.
``describe`` prints exactly what ``kafka-topics --describe`` prints (``TopicCommand``: tab-separated
fields, ``Leader: none``, ``Elr:``/``LastKnownElr:``, ``Adding/Removing Replicas`` during a
reassignment) with its filters, so that its output can be diffed against Kafka's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from metashell.image.acls import AclDecision, AclQuery
from metashell.image.forms import REDACTED, acl_form, broker_form
from metashell.image.health import (
    HealthReport,
    PartitionRef,
    effective_min_isr,
    is_under_replicated,
    live_brokers,
    replication_factor,
)
from metashell.image.image import MetadataImage
from metashell.image.kafka_names import ACL_OPERATION_NAMES, CONFIG_RESOURCE_TOPIC
from metashell.image.model import Partition, Topic
from metashell.image.wording import broker_state
from metashell.protocol.uuid import uuid_to_str
from metashell.tree.redact import is_sensitive_config

from ..safe_text import visible
from .spec import CommandError
from .suggest import close_matches

#: How many items of a finding ``health`` prints before "... and N more".
HEALTH_ITEMS = 10


# -- health ------------------------------------------------------------------------------------------


def health_lines(report: HealthReport, show_all: bool = False) -> Iterator[str]:
    """The verdict, then one section per finding (worst first) with its first items.

    A partition is listed once, under the worst finding it has: an offline partition is usually
    under-replicated and under min ISR too, and repeating it buries the next problem.
    """
    yield report.verdict()
    seen: set[int] = set()  # a partition in several findings is one PartitionRef object in each
    for f in report.findings:
        yield ""
        yield f"{f.title}: {f.count} [{f.severity}]"
        if f.detail:
            yield f"  ({f.detail})"
        for cause in f.causes:
            yield f"  cause: {visible(cause)}"
        yield f"  next: {visible(f.next_step)}"  # it may quote a topic name
        fresh = [i for i in f.items if id(i) not in seen] if seen else f.items
        if len(fresh) < f.count:
            yield f"  {f.count - len(fresh)} of them belong to a finding above"
        for n, item in enumerate(fresh):
            if not show_all and n == HEALTH_ITEMS:
                yield f"  ... and {len(fresh) - HEALTH_ITEMS} more (health --all lists every one)"
                break
            # one item, one line: a name's newline or tab is escaped (it could forge another line)
            yield "  " + visible(
                item.line() if isinstance(item, PartitionRef) else str(item.get("text", item))
            )
        seen.update(id(i) for i in fresh if isinstance(i, PartitionRef))
    if report.leaders_per_broker and not report.healthy:
        yield ""
        yield "partition leaders per live broker: " + ", ".join(
            f"broker {b}: {n}" for b, n in sorted(report.leaders_per_broker.items())
        )


# -- describe: topics ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicFilters:
    """``kafka-topics --describe``'s report options."""

    under_replicated: bool = False
    unavailable: bool = False
    under_min_isr: bool = False
    at_min_isr: bool = False
    with_overrides: bool = False

    @property
    def partition_reports(self) -> bool:
        return self.under_replicated or self.unavailable or self.under_min_isr or self.at_min_isr


def _ids(ids: tuple[int, ...]) -> str:
    return ",".join(map(str, ids))


def topic_overrides(image: MetadataImage, topic: str, redact: bool) -> list[tuple[str, str]]:
    """The topic's configuration overrides, sorted, with secrets redacted as everywhere."""
    configs = image.configs.get((CONFIG_RESOURCE_TOPIC, topic), {})
    return [
        (k, REDACTED if redact and is_sensitive_config(CONFIG_RESOURCE_TOPIC, k) else v)
        for k, v in sorted(configs.items())
    ]


def topic_line(image: MetadataImage, topic: Topic, redact: bool) -> str:
    """``TopicCommand.TopicDescription.printDescription``."""
    first = topic.partitions[min(topic.partitions)] if topic.partitions else None
    configs = ",".join(f"{visible(k)}={visible(v)}" for k, v in topic_overrides(image, topic.name, redact))
    return (
        f"Topic: {visible(topic.name)}\tTopicId: {uuid_to_str(topic.id)}\tPartitionCount: {len(topic.partitions)}"
        f"\tReplicationFactor: {replication_factor(first) if first else 0}\tConfigs: {configs}"
    )


def partition_line(topic: str, pid: int, p: Partition) -> str:
    """``TopicCommand.PartitionDescription.printDescription``."""
    text = (
        f"\tTopic: {visible(topic)}\tPartition: {pid}\tLeader: {'none' if p.leader < 0 else p.leader}"
        f"\tReplicas: {_ids(p.replicas)}\tIsr: {_ids(p.isr)}"
    )
    if p.adding_replicas or p.removing_replicas:
        text += (
            f"\tAdding Replicas: {_ids(p.adding_replicas)}\tRemoving Replicas: {_ids(p.removing_replicas)}"
        )
    return text + f"\tElr: {_ids(p.elr)}\tLastKnownElr: {_ids(p.last_known_elr)}"


def describe_topics(
    image: MetadataImage, topics: list[Topic], filters: TopicFilters, redact: bool
) -> Iterator[str]:
    """The lines of ``kafka-topics --describe`` for ``topics`` (already sorted by name)."""
    live = live_brokers(image)
    for topic in topics:
        if not filters.partition_reports:
            if not filters.with_overrides or image.configs.get((CONFIG_RESOURCE_TOPIC, topic.name)):
                yield topic_line(image, topic, redact)
            if filters.with_overrides:
                continue
        for pid, p in shown_partitions(image, topic, filters, live):
            yield partition_line(topic.name, pid, p)


def shown_partitions(
    image: MetadataImage, topic: Topic, filters: TopicFilters, live: set[int] | None = None
) -> Iterator[tuple[int, Partition]]:
    """The partitions of ``topic`` that ``describe`` shows with ``filters``, in partition order
    (none with ``--topics-with-overrides``, which shows topic lines only)."""
    if filters.with_overrides and not filters.partition_reports:
        return
    if live is None:
        live = live_brokers(image)
    min_isr = (
        effective_min_isr(image, topic.name)[0] if (filters.under_min_isr or filters.at_min_isr) else None
    )
    for pid in sorted(topic.partitions):
        p = topic.partitions[pid]
        if not filters.partition_reports or _reported(p, filters, live, min_isr):
            yield pid, p


def _reported(p: Partition, f: TopicFilters, live: set[int], min_isr: int | None) -> bool:
    has_leader = p.leader >= 0
    return (
        (f.under_replicated and is_under_replicated(p))
        or (f.unavailable and (not has_leader or p.leader not in live))
        or (f.under_min_isr and (not has_leader or (min_isr is not None and len(p.isr) < min_isr)))
        or (f.at_min_isr and min_isr is not None and len(p.isr) == min_isr)
    )


# -- describe: brokers --------------------------------------------------------------------------------


def describe_broker(image: MetadataImage, broker_id: int) -> dict[str, Any]:
    """What an operator asks about one broker: registration, state, and what it leads and hosts."""
    b = image.cluster.brokers[broker_id]
    led = hosted = in_isr = 0
    # replicas in a directory the registration no longer lists: a failed JBOD directory (KIP-858),
    # which Kafka counts offline (the same rule as health's failed-log-directories)
    offline: Counter[bytes] = Counter()
    for topic in image.topics.by_id.values():
        for p in topic.partitions.values():
            if broker_id in p.replicas:
                hosted += 1
                if p.leader == broker_id:
                    led += 1
                if broker_id in p.isr:
                    in_isr += 1
                i = p.replicas.index(broker_id)
                if i < len(p.directories) and b.unlists(p.directories[i]):
                    offline[p.directories[i]] += 1
    state = broker_state(b.fenced, b.in_controlled_shutdown)
    form = broker_form(b)
    return {
        "id": b.id,
        "state": state,
        "epoch": b.epoch,
        "rack": b.rack,
        "listeners": form["listeners"],
        "supportedFeatures": form["supportedFeatures"],
        "logDirs": form["logDirs"],
        "cordonedLogDirs": form["cordonedLogDirs"],
        "offlineLogDirs": {uuid_to_str(d): n for d, n in sorted(offline.items())},
        "partitionsLed": led,
        "partitionsHosted": hosted,
        "partitionsInIsr": in_isr,
    }


def broker_lines(info: dict[str, Any]) -> Iterator[str]:
    rack = visible(info["rack"]) if info["rack"] else "none"
    yield f"Broker: {info['id']}\tState: {info['state']}\tEpoch: {info['epoch']}\tRack: {rack}"
    for e in info["listeners"]:
        where = f"{visible(str(e['securityProtocol']))}://{visible(str(e['host']))}:{e['port']}"
        yield f"\tListener: {visible(str(e['name']))}\t{where}"
    yield (
        f"\tPartitions: leads {info['partitionsLed']}, hosts {info['partitionsHosted']}, "
        f"in ISR of {info['partitionsInIsr']}"
    )
    yield "\tLogDirs: " + (",".join(visible(str(d)) for d in info["logDirs"] or ()) or "none")
    if info["cordonedLogDirs"]:  # Kafka 4.3+ (KIP-1066): no new partitions are placed there
        yield "\tCordoned: " + ",".join(visible(str(d)) for d in info["cordonedLogDirs"])
    for d, n in info["offlineLogDirs"].items():
        yield f"\tOffline: {n} replica(s) in {d}, a directory the broker no longer lists (failed)"
    yield "\tFeatures: " + ", ".join(
        f"{visible(k)} {v['min']}..{v['max']}" for k, v in info["supportedFeatures"].items()
    )


# -- describe: ACLs -----------------------------------------------------------------------------------

_RESOURCE_TYPES = ("TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER")


def acl_query(opts: dict[str, object]) -> AclQuery:
    """``--principal/--resource/--operation/--host`` as an :class:`AclQuery` (names upper-cased as
    Kafka spells them; ``cluster`` alone means Kafka's one cluster resource)."""
    resource_type = resource_name = None
    raw = opts.get("resource")
    if isinstance(raw, str):
        kind, sep, name = raw.partition(":")
        resource_type = kind.strip().upper()
        if resource_type not in _RESOURCE_TYPES:
            raise CommandError(
                f"describe acl: --resource {raw}: the type must be one of "
                f"{', '.join(t.lower() for t in _RESOURCE_TYPES)}"
            )
        resource_name = name if sep else ("kafka-cluster" if resource_type == "CLUSTER" else None)
        if resource_name == "":
            raise CommandError(f"describe acl: --resource {raw}: give TYPE:NAME")
    op = opts.get("operation")
    operation = op.strip().upper() if isinstance(op, str) else None
    if operation is not None and operation not in ACL_OPERATION_NAMES.values():
        near = close_matches(operation, list(ACL_OPERATION_NAMES.values()), n=2, cutoff=0.6)
        hint = f" (did you mean {' or '.join(near)}?)" if near else ""
        raise CommandError(f"describe acl: --operation {op}: not an ACL operation{hint}")
    principal = opts.get("principal")
    host = opts.get("host")
    return AclQuery(
        principal if isinstance(principal, str) else None,
        resource_type,
        resource_name,
        host if isinstance(host, str) else None,
        operation,
    )


def acl_lines(decision: AclDecision) -> Iterator[str]:
    """The bindings grouped by resource pattern, in ``kafka-acls --list``'s words, then the decision."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for a in decision.bindings:
        j = acl_form(a)
        groups.setdefault((j["resourceType"], j["resourceName"], j["patternType"]), []).append(j)
    for (rtype, name, pattern), items in groups.items():
        yield (
            f"Current ACLs for resource `ResourcePattern(resourceType={visible(rtype)}, "
            f"name={visible(name)}, patternType={visible(pattern)})`:"
        )
        for j in items:
            yield (
                f"\t(principal={visible(j['principal'])}, host={visible(j['host'])}, "
                f"operation={visible(j['operation'])}, permissionType={visible(j['permissionType'])})"
            )
        yield ""
    if not decision.bindings:
        yield "No ACL binding applies."
    if decision.result is not None:
        yield f"Decision: {decision.result} ({visible(decision.reason)})"
