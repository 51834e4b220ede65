"""What ``health`` answers with: findings (what is wrong, how bad, which items, what to run next)
and the report that gathers them.  The rules that find them are in :mod:`.health`; the shell, the
TUI and the tree render these, and ``--json`` is :meth:`HealthReport.as_json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .model import Partition
from .wording import id_list

CRITICAL, WARNING, INFO = "critical", "warning", "info"
NO_LEADER = -1


class PartitionRef(NamedTuple):
    """One partition of one topic, as the findings list them (a tuple: a large cluster can have
    hundreds of thousands of them, made in the hot loop with ``tuple.__new__``)."""

    topic: str
    partition: int
    state: Partition

    def as_json(self) -> dict[str, Any]:
        p = self.state
        out: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "leader": None if p.leader == NO_LEADER else p.leader,
            "replicas": list(p.replicas),
            "isr": list(p.isr),
        }
        if p.elr or p.last_known_elr:
            out["elr"] = list(p.elr)
            out["lastKnownElr"] = list(p.last_known_elr)
        if p.adding_replicas or p.removing_replicas:
            out["addingReplicas"] = list(p.adding_replicas)
            out["removingReplicas"] = list(p.removing_replicas)
        return out

    def line(self) -> str:
        p = self.state
        leader = "none" if p.leader == NO_LEADER else str(p.leader)
        text = (
            f"{self.topic}-{self.partition}: leader {leader}, replicas {id_list(p.replicas)}, "
            f"isr {id_list(p.isr)}"
        )
        if p.elr or p.last_known_elr:
            text += f", elr {id_list(p.elr)}, last known elr {id_list(p.last_known_elr)}"
        if p.adding_replicas or p.removing_replicas:
            text += f", adding {id_list(p.adding_replicas)}, removing {id_list(p.removing_replicas)}"
        return text


@dataclass
class Finding:
    """One kind of problem: ``key`` is a stable identifier for scripts, ``title`` says it for people,
    ``items`` are the affected things (``PartitionRef`` or plain dicts), ``count`` how many there are."""

    key: str
    severity: str
    title: str
    count: int
    items: list[Any] = field(default_factory=list)
    detail: str = ""
    causes: list[str] = field(default_factory=list)
    """Why it happened, when the log says (``health_causes.explain``): "the cluster was stopped...".
    Empty when only the image was read."""

    @property
    def next_step(self) -> str:
        """What to run next: a command of this shell, or Kafka's own (as text, never run), about
        the first item listed (``history /topics/orders/0``, ``history /brokers/1``)."""
        text = NEXT_STEPS[self.key]
        first = self.items[0] if self.items else None
        if isinstance(first, PartitionRef):
            text = text.replace("TOPIC/PARTITION", f"{first.topic}/{first.partition}")
            text = text.replace("--partition PARTITION", f"--partition {first.partition}")
            text = text.replace("TOPIC", first.topic)
        elif isinstance(first, dict) and "broker" in first:
            text = text.replace("ID", str(first["broker"]))
        elif isinstance(first, dict) and "brokers" in first:
            text = text.replace("describe broker ", f"describe broker {first['brokers'][0]} ")
        return text

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "severity": self.severity,
            "title": self.title,
            "count": self.count,
            "detail": self.detail or None,
            "next": self.next_step,
            "causes": self.causes,
            "items": [i.as_json() if isinstance(i, PartitionRef) else i for i in self.items],
        }


NEXT_STEPS: dict[str, str] = {
    "offline-partitions": "describe --unavailable-partitions; history /topics/TOPIC/PARTITION says when the leader went",
    "no-eligible-leader": (
        "history /topics/TOPIC/PARTITION; only then, knowing it may lose data: kafka-leader-election.sh "
        "--election-type UNCLEAN --topic TOPIC --partition PARTITION"
    ),
    "under-min-isr-partitions": "describe --under-min-isr-partitions; health --all lists every one",
    "under-replicated-partitions": "describe --under-replicated-partitions",
    "eligible-leader-replicas": "history /topics/TOPIC/PARTITION (which replicas left the ISR, and when)",
    "reassignments": "describe TOPIC; kafka-reassign-partitions.sh --verify with the plan that started it",
    "fenced-brokers": "history /brokers/ID (when it was fenced, after a controlled shutdown or not)",
    "shutting-down-brokers": "history /brokers/ID; describe broker ID",
    "unsupported-features": "cat /features; describe broker (each node's supported range)",
    "voters-unregistered": "cat /quorum; ls /controllers",
    "brokers-in-no-isr": "describe broker ID; history /brokers/ID (restarted or throttled?)",
    "failed-log-directories": (
        "describe broker ID (its directories); replace the disk and restart the broker, or move the "
        "replicas with kafka-reassign-partitions.sh"
    ),
    "duplicate-endpoints": "describe broker (each broker's listeners); fix advertised.listeners",
    "min-isr-unknown": (
        "kafka-configs.sh --describe --entity-type brokers --entity-default (the brokers' static "
        "server.properties decide otherwise)"
    ),
    "not-preferred-leader": "kafka-leader-election.sh --election-type PREFERRED --all-topic-partitions",
    "brokers-without-replicas": "describe broker ID; kafka-reassign-partitions.sh moves replicas onto it",
    "leader-skew": "kafka-leader-election.sh --election-type PREFERRED --all-topic-partitions",
}
"""Each finding's next step, by key: a finding without one fails ``test_every_finding_says_what_next``."""


@dataclass
class HealthReport:
    """Every finding, worst first, plus the counts the verdict line quotes."""

    findings: list[Finding]
    brokers: int
    topics: int
    partitions: int
    leaders_per_broker: dict[int, int]
    no_data: str = ""
    """Why there is nothing to judge (no broker, controller or topic), or "": an empty image is not
    a healthy cluster, and ``health --exit-code`` must not pass it."""
    as_of: str = ""
    """A salvaged image's point (:mod:`.salvage_point`): every verdict on it says so."""
    missing: list[str] = field(default_factory=list)
    """Offsets the load found in no file (a deleted segment, a snapshot the log does not continue):
    the image lacks what they held, so every verdict on it says so (``doctor`` names the files)."""

    @property
    def problems(self) -> list[Finding]:
        """Findings that make the cluster unhealthy (critical or warning)."""
        return [f for f in self.findings if f.severity in (CRITICAL, WARNING)]

    @property
    def healthy(self) -> bool:
        return not self.problems and not self.no_data

    @property
    def exit_status(self) -> int:
        """``health --exit-code``, as monitoring plugins report (Nagios, Icinga, Sensu): 0 HEALTHY,
        1 DEGRADED (warnings), 2 CRITICAL, 3 NO DATA (nothing to judge)."""
        if self.no_data:
            return 3
        if any(f.severity == CRITICAL for f in self.findings):
            return 2
        return 1 if self.problems else 0

    def as_json(self, with_items: bool = True) -> dict[str, Any]:
        return {
            "healthy": self.healthy,
            "verdict": self.verdict(),
            "brokers": self.brokers,
            "topics": self.topics,
            "partitions": self.partitions,
            "noData": bool(self.no_data),
            "asOf": self.as_of or None,
            "missingFromLog": self.missing,
            "leadersPerBroker": {str(b): n for b, n in sorted(self.leaders_per_broker.items())},
            "findings": [
                f.as_json()
                if with_items
                else {"key": f.key, "severity": f.severity, "title": f.title, "count": f.count}
                for f in self.findings
            ],
        }

    def verdict(self) -> str:
        said = self._verdict()
        if self.missing:
            said += f"; partial image: {'; '.join(self.missing)} (doctor names the files)"
        return f"{said}; {self.as_of}" if self.as_of else said

    def _verdict(self) -> str:
        scope = f"{self.brokers} broker(s), {self.topics} topic(s), {self.partitions} partition(s)"
        if self.no_data:
            return f"NO DATA: {self.no_data}"
        if self.healthy:
            return f"HEALTHY: {scope}, no problem found"
        worst = "CRITICAL" if any(f.severity == CRITICAL for f in self.findings) else "DEGRADED"
        return f"{worst}: " + "; ".join(f"{f.count} {f.title}" for f in self.problems) + f" ({scope})"
