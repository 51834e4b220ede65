"""How a metadata log behaves over time: records of each type per window, what churns most (topics,
partitions, brokers, and by which kind of change), the snapshots beside the log, and how fast the
log grows.  The ``stats`` command prints it; it is a fold over the records ``log --all --json``
lists (``changelog.iter_log``), so the two always agree (``tests/test_stats.py`` counts one against
the other on every fixture).

Kinds of churn are read off the records' own fields, as kafka-dump-log names them: a
PartitionChangeRecord carries a field only when it changes it (``leader``, ``isr``, ``replicas``
...), a BrokerRegistrationChangeRecord's ``fenced`` is 1 (fence) or -1 (unfence) and its
``inControlledShutdown`` 1 when a shutdown starts.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metashell.errors import MetashellError
from metashell.image.changelog import LogEntry

#: PartitionChangeRecord fields and the kind of churn each one's presence is.
PARTITION_CHANGE_KINDS: Mapping[str, str] = {
    "leader": "leader",
    "isr": "isr",
    "replicas": "reassignment",
    "addingReplicas": "reassignment",
    "removingReplicas": "reassignment",
    "eligibleLeaderReplicas": "elr",
    "lastKnownElr": "elr",
    "leaderRecoveryState": "recovery",
    "directories": "directories",
}

#: Record types that are churn of a broker, and its kind.
BROKER_KINDS: Mapping[str, str] = {
    "REGISTER_BROKER_RECORD": "registration",
    "UNREGISTER_BROKER_RECORD": "unregistration",
    "FENCE_BROKER_RECORD": "fence",
    "UNFENCE_BROKER_RECORD": "unfence",
}

#: ConfigRecord's resource types (KIP-631): 2 a topic, 4 a broker (name "" the cluster default).
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4


@dataclass
class SnapshotStat:
    """A ``.checkpoint`` file beside the log: where it ends, its size, and the time of the last
    record it holds (its SnapshotHeader's ``LastContainedLogTimestamp``; None when unreadable)."""

    file: str
    end_offset: int
    epoch: int
    bytes: int
    last_contained_ms: int | None


@dataclass
class LogStats:
    window_ms: int
    records: int = 0
    batches: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    first_ms: int | None = None
    last_ms: int | None = None
    by_type: Counter[str] = field(default_factory=Counter)
    #: window start (ms since the epoch, a multiple of ``window_ms``) -> records of each type
    windows: dict[int, Counter[str]] = field(default_factory=dict)
    topics: dict[str, Counter[str]] = field(default_factory=dict)
    partitions: dict[tuple[str, int], Counter[str]] = field(default_factory=dict)
    brokers: dict[int, Counter[str]] = field(default_factory=dict)
    snapshots: list[SnapshotStat] = field(default_factory=list)
    log_bytes: int = 0

    def span_ms(self) -> int:
        if self.first_ms is None or self.last_ms is None:
            return 0
        return max(0, self.last_ms - self.first_ms)

    def as_json(self, top: int) -> dict[str, Any]:
        """``stats --json``: the same numbers as the text, every type and window, the ``top``
        churners of each kind."""
        return {
            "windowSeconds": self.window_ms // 1000,
            "records": self.records,
            "batches": self.batches,
            "firstOffset": self.first_offset,
            "lastOffset": self.last_offset,
            "firstTimestamp": self.first_ms,
            "lastTimestamp": self.last_ms,
            "byType": dict(sorted(self.by_type.items())),
            "windows": [
                {"start": start, "records": sum(c.values()), "byType": dict(sorted(c.items()))}
                for start, c in sorted(self.windows.items())
            ],
            "churn": {
                "topics": [{"topic": k, **_churn_json(c)} for k, c in top_churn(self.topics, top)],
                "partitions": [
                    {"topic": k[0], "partition": k[1], **_churn_json(c)}
                    for k, c in top_churn(self.partitions, top)
                ],
                "brokers": [{"broker": k, **_churn_json(c)} for k, c in top_churn(self.brokers, top)],
            },
            "snapshots": [
                {
                    "file": s.file,
                    "endOffset": s.end_offset,
                    "epoch": s.epoch,
                    "bytes": s.bytes,
                    "lastContainedTimestamp": s.last_contained_ms,
                }
                for s in self.snapshots
            ],
            "growth": self.growth(),
        }

    def growth(self) -> dict[str, Any]:
        """The log's bytes, and records and bytes per hour over its time span (None: no span)."""
        span = self.span_ms()
        return {
            "logBytes": self.log_bytes,
            "recordsPerHour": _per_hour(self.records, span),
            "bytesPerHour": _per_hour(self.log_bytes, span),
        }


def _churn_json(c: Counter[str]) -> dict[str, Any]:
    return {"changes": sum(c.values()), "kinds": dict(sorted(c.items()))}


def _per_hour(n: int, span_ms: int) -> float | None:
    return None if span_ms <= 0 else round(n * 3_600_000 / span_ms, 1)


def top_churn(table: Mapping[Any, Counter[str]], top: int) -> list[tuple[Any, Counter[str]]]:
    """The ``top`` entries with the most changes (ties by name, so the order is the same each run)."""
    return sorted(table.items(), key=lambda kv: (-sum(kv[1].values()), str(kv[0])))[:top]


def collect(
    entries: Iterable[LogEntry],
    *,
    window_ms: int,
    topic_names: Mapping[str, str],
    snapshots: Iterable[SnapshotStat] = (),
    log_bytes: int = 0,
) -> LogStats:
    """The statistics of ``entries`` (with their payloads: ``iter_log(..., payloads=True)``).
    ``topic_names``: topic id (as kafka-dump-log prints it) -> name, for topics the log itself
    does not create; a topic whose name is known nowhere keeps its id."""
    stats = LogStats(window_ms=window_ms, snapshots=list(snapshots), log_bytes=log_bytes)
    names = dict(topic_names)
    last_batch: tuple[str, int] | None = None
    for e in entries:
        kind = str(e.payload.get("type") or e.record)
        data = e.payload.get("data") or {}
        stats.records += 1
        if (e.source, e.position) != last_batch:
            stats.batches += 1
            last_batch = (e.source, e.position)
        if stats.first_offset is None:
            stats.first_offset = e.offset
        stats.last_offset = e.offset
        if e.timestamp >= 0:
            stats.first_ms = e.timestamp if stats.first_ms is None else min(stats.first_ms, e.timestamp)
            stats.last_ms = e.timestamp if stats.last_ms is None else max(stats.last_ms, e.timestamp)
            start = e.timestamp - e.timestamp % window_ms
            stats.windows.setdefault(start, Counter())[kind] += 1
        stats.by_type[kind] += 1
        if isinstance(data, dict):
            _churn(stats, kind, data, names)
    return stats


def _churn(stats: LogStats, kind: str, data: dict[str, Any], names: dict[str, str]) -> None:
    def topic(tid: Any) -> str:
        return names.get(str(tid), str(tid))

    def note(table: dict[Any, Counter[str]], key: Any, what: str) -> None:
        table.setdefault(key, Counter())[what] += 1

    if kind == "TOPIC_RECORD":
        names[str(data.get("topicId"))] = str(data.get("name"))
        note(stats.topics, str(data.get("name")), "created")
    elif kind == "REMOVE_TOPIC_RECORD":
        note(stats.topics, topic(data.get("topicId")), "deleted")
    elif kind in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
        name, pid = topic(data.get("topicId")), int(data.get("partitionId", -1))
        if kind == "PARTITION_RECORD":
            whats = ["created"]
        else:
            whats = sorted({PARTITION_CHANGE_KINDS[f] for f in data if f in PARTITION_CHANGE_KINDS}) or [
                "other"
            ]
        for what in whats:
            note(stats.partitions, (name, pid), what)
            note(stats.topics, name, what)
    elif kind == "CONFIG_RECORD":
        resource, rname = data.get("resourceType"), str(data.get("resourceName", ""))
        if resource == TOPIC_RESOURCE:
            note(stats.topics, rname, "config")
        elif resource == BROKER_RESOURCE and rname.isdigit():
            note(stats.brokers, int(rname), "config")
    elif kind in BROKER_KINDS and "brokerId" in data:
        note(stats.brokers, int(data["brokerId"]), BROKER_KINDS[kind])
    elif kind == "BROKER_REGISTRATION_CHANGE_RECORD" and "brokerId" in data:
        broker = int(data["brokerId"])
        fenced = data.get("fenced", 0)
        if fenced == 1:
            note(stats.brokers, broker, "fence")
        elif fenced == -1:
            note(stats.brokers, broker, "unfence")
        if data.get("inControlledShutdown") == 1:
            note(stats.brokers, broker, "controlled shutdown")
        if fenced not in (1, -1) and data.get("inControlledShutdown") != 1:
            note(stats.brokers, broker, "registration change")


#: A SnapshotHeader batch is small; more than this before the first batch ends is not one.
_HEADER_BATCH_LIMIT = 1 << 20


def snapshot_stat(path: Path, end_offset: int, epoch: int, size: int) -> SnapshotStat:
    """``path``'s figures; its time from the first batch alone (the SnapshotHeader), never the
    whole file; a file that does not start with a readable header has no time."""
    from metashell.log.scan import iter_batches
    from metashell.protocol.control import decode_control_record

    when = None
    try:
        with open(path, "rb") as f:
            head = f.read(12)
            if len(head) == 12:
                (length,) = struct.unpack(">i", head[8:12])
                if 0 < length <= _HEADER_BATCH_LIMIT:
                    buf = head + f.read(length)
                    for batch in iter_batches(buf, str(path)):
                        if batch.is_control:
                            for _off, _ts, key, value in batch.entries():
                                ctl = decode_control_record(key, value)
                                if ctl.name == "SnapshotHeader" and ctl.data:
                                    when = int(ctl.data.get("LastContainedLogTimestamp", -1))
                        break
    except (OSError, ValueError, struct.error, MetashellError):  # a damaged header: no time (doctor says why)
        when = None
    return SnapshotStat(path.name, end_offset, epoch, size, when if when is not None and when >= 0 else None)
