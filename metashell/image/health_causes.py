"""Why ``health``'s findings happened, read from the log: effects joined to their causes.

:func:`~.health.check_health` reads only the image, so it can say *what* is wrong ("12 offline
partitions", "broker 1 fenced") but not *why*.  The log says why: when each fenced broker was fenced,
and whether a controlled shutdown came first.  At 3 a.m. "every broker was fenced after a controlled
shutdown, the last at 03:55:59" (someone stopped the cluster) and "broker 2 was fenced without a
shutdown" (it crashed or lost its session) lead to different next steps.

One pass over the broker records (:func:`~.history.broker_history`; no partition record is decoded),
stopped at the point shown, so the answer is true for the image being judged.
"""

from __future__ import annotations

from dataclasses import dataclass

from metashell.log.directory import ReadPlan
from metashell.times import iso_utc

from .health_report import Finding, HealthReport, PartitionRef
from .history import broker_history
from .image import MetadataImage

__all__ = ["Fencing", "explain", "fencings"]


@dataclass(frozen=True)
class Fencing:
    """The change that left a broker fenced: where, when, and what came before it."""

    broker: int
    offset: int
    timestamp: int
    after_shutdown: bool
    """The broker was in controlled shutdown when it was fenced (a stop, not a crash)."""
    registered_fenced: bool
    """It was registered fenced and never unfenced (a broker that never caught up)."""
    from_snapshot: bool
    """Only a snapshot holds it: it happened at or before ``offset``, the snapshot's end."""

    def words(self) -> str:
        when = iso_utc(self.timestamp) or "an unknown time"
        at = (
            f"at or before offset {self.offset} (a snapshot)"
            if self.from_snapshot
            else f"offset {self.offset}"
        )
        if self.registered_fenced:
            how = "registered fenced and never unfenced"
        elif self.after_shutdown:
            how = "after a controlled shutdown"
        else:
            how = "without a controlled shutdown (a crash, or a lost session)"
        return f"since {when} ({at}), {how}"

    def as_json(self) -> dict[str, object]:
        return {
            "offset": self.offset,
            "timestamp": self.timestamp,
            "afterControlledShutdown": self.after_shutdown,
            "registeredFenced": self.registered_fenced,
            "fromSnapshot": self.from_snapshot,
        }


def fencings(plan: ReadPlan, brokers: list[int], upto: int) -> dict[int, Fencing]:
    """For each broker of ``brokers`` fenced at offset ``upto``, the change that fenced it."""
    found: dict[int, Fencing] = {}
    shutting: dict[int, bool] = {}
    for broker, change in broker_history(plan, brokers):
        if change.offset > upto:
            break  # changes come in offset order: the rest is after the point shown
        fenced = change.changes.get("fenced")
        shutdown = change.changes.get("inControlledShutdown")
        was_shutting = shutting.get(broker, False)
        if shutdown is not None:
            shutting[broker] = bool(shutdown[1])
        if change.record == "RegisterBrokerRecord":
            shutting[broker] = False
        if fenced is not None and fenced[1]:
            found[broker] = Fencing(
                broker,
                change.offset,
                change.timestamp,
                was_shutting or shutting.get(broker, False),
                change.record == "RegisterBrokerRecord",
                change.from_snapshot,
            )
        elif fenced is not None or change.record == "UnregisterBrokerRecord":
            found.pop(broker, None)
    return found


def explain(report: HealthReport, image: MetadataImage, plan: ReadPlan) -> None:
    """Add the log's causes to ``report``'s findings, for the point ``image`` shows."""
    by_key = {f.key: f for f in report.findings}
    fenced = by_key.get("fenced-brokers")
    found: dict[int, Fencing] = {}
    if fenced is not None:
        found = fencings(plan, [item["broker"] for item in fenced.items], image.provenance.offset)
        for item in fenced.items:
            f = found.get(item["broker"])
            if f is not None:
                item["fencedSince"] = f.as_json()
                item["text"] += f" {f.words()}"
    offline = by_key.get("offline-partitions")
    if offline is not None:
        offline.causes.extend(_offline_causes(offline, image, found))


def _offline_causes(offline: Finding, image: MetadataImage, found: dict[int, Fencing]) -> list[str]:
    brokers = image.cluster.brokers
    if brokers and all(b.fenced for b in brokers.values()):
        known = [found[b] for b in sorted(brokers) if b in found]
        last = max(known, key=lambda f: f.offset, default=None)
        when = (
            f"; the last, broker {last.broker}, at {iso_utc(last.timestamp)} (offset {last.offset})"
            if last
            else ""
        )
        if known and len(known) == len(brokers) and all(f.after_shutdown for f in known):
            return [f"the cluster was stopped: every broker was fenced after a controlled shutdown{when}"]
        return [f"no broker is live: every registered broker is fenced{when}"]
    down = {b for b, reg in brokers.items() if reg.fenced or reg.in_controlled_shutdown}
    stranded = [
        ref
        for ref in offline.items
        if isinstance(ref, PartitionRef) and all(r in down or r not in brokers for r in ref.state.replicas)
    ]
    if not stranded:
        return []
    hosts = sorted({r for ref in stranded for r in ref.state.replicas})
    said = ", ".join(f"{b} ({_state(b, image, found)})" for b in hosts[:5])
    more = f" and {len(hosts) - 5} more" if len(hosts) > 5 else ""
    what = "every replica on a fenced, shutting-down or unregistered broker"
    return [f"{len(stranded)} of them have {what}: {said}{more}"]


def _state(broker: int, image: MetadataImage, found: dict[int, Fencing]) -> str:
    reg = image.cluster.brokers.get(broker)
    if reg is None:
        return "not registered"
    if broker in found:
        return f"fenced {found[broker].words()}"
    return "fenced" if reg.fenced else "in controlled shutdown"
