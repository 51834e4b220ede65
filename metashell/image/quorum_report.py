"""``quorum``: one node's place in the controller quorum, and the history of leaders and voters.

Kafka's snapshots keep only the latest voter set, and ``kafka-metadata-quorum`` needs a working
quorum.  A node's own directory still says a lot when the quorum is down (issue 26):

* who the node is (``meta.properties``), what it last believed (``quorum-state``: leader, epoch,
  voted for, voters), and so whether it is a voter or an observer;
* what its log holds: first and last offsets, the last epoch, its snapshots;
* a **timeline**: every leader election the log recorded (``LeaderChange``: epoch, leader, who
  voted, when), every voter-set change (``KRaftVoters``, KIP-853) and ``kraft.version`` change, with
  offsets.  Only control batches are decoded.

Several nodes at once (divergence, what a lost majority would lose) build on this report.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from metashell.errors import MetashellError
from metashell.log.directory import MetadataLogDir, SnapshotFile
from metashell.log.files import iter_file_batches
from metashell.log.headers import BatchHeader, batch_headers
from metashell.log.problems import unheard
from metashell.protocol.control import decode_control_record
from metashell.times import iso_utc

from .changelog import control_words

__all__ = ["NodeReport", "TimelineEvent", "leader_history", "node_report", "timeline"]


@dataclass(frozen=True)
class TimelineEvent:
    """One control record that changed who leads or who votes."""

    offset: int
    epoch: int
    timestamp: int
    kind: str  # LeaderChange, KRaftVoters, KRaftVersion
    words: str
    data: dict[str, Any]
    source: str

    def line(self) -> str:
        when = iso_utc(self.timestamp) or "-"
        return f"{self.offset:>10}  {when}  epoch {self.epoch:<4} {self.kind:<13} {self.words}"

    def as_json(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "epoch": self.epoch,
            "timestamp": self.timestamp,
            "kind": self.kind,
            "summary": self.words,
            "source": self.source,
        }


@dataclass
class NodeReport:
    node_id: int | None
    cluster_id: str | None
    role: str
    """``voter``, ``observer``, or ``unknown`` (no voter set anywhere in the directory)."""
    quorum_state: dict[str, Any]
    log_start: int | None
    log_end: int | None
    """The offset after the last batch (Kafka's log end offset)."""
    last_epoch: int | None
    snapshots: list[SnapshotFile]
    voters: list[int]
    events: list[TimelineEvent] = field(default_factory=list)

    def lines(self) -> Iterator[str]:
        who = "unknown" if self.node_id is None else str(self.node_id)
        yield f"node {who} (cluster {self.cluster_id or 'unknown'}): {self.role}"
        qs = self.quorum_state
        if qs:
            listed = qs.get("voters")
            voters = "not listed (kraft.version 1 keeps them in the log)" if listed is None else str(listed)
            yield (
                f"  quorum-state: leader {qs.get('leaderId')}, epoch {qs.get('leaderEpoch')}, "
                f"voted for {qs.get('votedId')}, voters {voters}"
            )
            epoch = qs.get("leaderEpoch")
            if isinstance(epoch, int) and self.last_epoch is not None and epoch > self.last_epoch:
                yield (
                    f"  quorum-state is at epoch {epoch}, past the log's last epoch {self.last_epoch}: "
                    "elections after its last record, and no leader of them wrote to this log"
                )
        if self.log_start is None:
            yield "  log: no batch"
        else:
            yield f"  log: offsets {self.log_start}..{(self.log_end or 0) - 1}, log end offset {self.log_end}, last epoch {self.last_epoch}"
        for snap in self.snapshots:
            yield f"  snapshot: {snap.path.name} (end offset {snap.end_offset}, epoch {snap.epoch})"
        yield ""
        summary = leader_history(self.events)
        if summary is not None:
            yield "leaders: " + summary
        yield "timeline (leaders, voters, kraft.version):"
        if not self.events:
            yield "  (no LeaderChange, KRaftVoters or KRaftVersion record in these files)"
        for e in self.events:
            yield "  " + e.line()

    def as_json(self) -> dict[str, Any]:
        return {
            "nodeId": self.node_id,
            "clusterId": self.cluster_id,
            "role": self.role,
            "quorumState": self.quorum_state,
            "logStartOffset": self.log_start,
            "logEndOffset": self.log_end,
            "lastEpoch": self.last_epoch,
            "snapshots": [
                {"file": s.path.name, "endOffset": s.end_offset, "epoch": s.epoch} for s in self.snapshots
            ],
            "voters": self.voters,
            "timeline": [e.as_json() for e in self.events],
        }


def timeline(d: MetadataLogDir) -> list[TimelineEvent]:
    """Every leader election and voter-set or kraft.version change in ``d``'s snapshots and log, in
    offset order.  A snapshot's control records are stamped with its end offset - 1."""
    events: dict[tuple[int, str, str], TimelineEvent] = {}
    files: list[tuple[Any, int | None]] = [
        (s.path, s.end_offset - 1) for s in d.snapshots if not s.is_bootstrap
    ]
    files += [(s.path, None) for s in d.segments]
    for path, stamp in files:
        for e in _control_events(path, stamp):
            events.setdefault((e.offset, e.kind, e.words), e)  # the same record in a snapshot and the log
    ordered = sorted(events.values(), key=lambda e: (e.offset, e.kind))
    # a snapshot repeats the voter set and kraft.version it holds: only a change is an event
    last: dict[str, str] = {}
    changes = []
    for e in ordered:
        if e.kind != "LeaderChange" and last.get(e.kind) == e.words:
            continue
        last[e.kind] = e.words
        changes.append(e)
    return changes


def leader_history(events: list[TimelineEvent]) -> str | None:
    """The leader elections of a timeline in one sentence: how many over how long, per hour, the
    largest jump in epoch (elections that wrote no LeaderChange: votes that failed), and the longest
    time one leader held.  59 elections in nine hours, listed raw, did not read as a flapping quorum."""
    changes = [e for e in events if e.kind == "LeaderChange" and e.timestamp >= 0]
    if len(changes) < 2:
        return None
    span_h = max((changes[-1].timestamp - changes[0].timestamp) / 3_600_000, 1e-9)
    jumps = [b.epoch - a.epoch for a, b in itertools.pairwise(changes)]
    held = [(b.timestamp - a.timestamp, a) for a, b in itertools.pairwise(changes)]
    longest, who = max(held, key=lambda t: t[0])
    leader = who.data.get("LeaderId")
    rate = len(changes) / span_h
    said = (
        f"{len(changes)} leader elections in {_duration(span_h * 3_600_000)} "
        + (f"({rate:.1f} an hour); " if rate >= 0.5 else f"({rate * 24:.1f} a day); ")
        + f"epochs rose by up to {max(jumps)} between two of them"
        + (" (elections that wrote no LeaderChange: votes that failed)" if max(jumps) > 1 else "")
        + f"; the longest stable leader: {leader}, for {_duration(longest)} from epoch {who.epoch}"
    )
    return ("FLAPPING: " if rate > 2 and len(changes) > 5 else "") + said


def _duration(ms: float) -> str:
    s = int(ms // 1000)
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    return f"{s / 3600:.1f} h"


def _control_events(path: Any, stamp: int | None) -> Iterator[TimelineEvent]:
    try:
        # headers only: the records of a control batch are decoded when it is one (a million-record
        # log holds a few hundred of them)
        for batch in iter_file_batches(path, decode=False, lenient_tail=True, warn=unheard):
            if not batch.is_control:
                continue
            for off, ts, key, value in batch.entries():
                try:
                    ctl = decode_control_record(key, value)
                except MetashellError:
                    continue
                if ctl.name not in ("LeaderChange", "KRaftVoters", "KRaftVersion"):
                    continue
                data = dict(ctl.data or {})
                yield TimelineEvent(
                    off if stamp is None else stamp,
                    batch.partition_leader_epoch,
                    ts,
                    ctl.name,
                    control_words(ctl.name, data),
                    data,
                    path.name,
                )
    except (OSError, MetashellError):
        return  # the load reports what cannot be read


def node_report(d: MetadataLogDir, headers: list[BatchHeader] | None = None) -> NodeReport:
    """What ``d`` says about its node and the quorum (see the module docstring).  ``headers``: its
    segments' :func:`~metashell.log.headers.batch_headers`, when read already."""
    if headers is None:
        headers = batch_headers(s.path for s in d.segments)
    start = headers[0].base_offset if headers else None
    end = headers[-1].last_offset + 1 if headers else None
    last_epoch = headers[-1].epoch if headers else None
    snaps = sorted((s for s in d.snapshots if not s.is_bootstrap), key=lambda s: s.end_offset)
    if start is None and snaps:
        start = end = snaps[-1].end_offset
        last_epoch = snaps[-1].epoch
    events = timeline(d)
    voter_sets = [e for e in events if e.kind == "KRaftVoters"]
    qs = d.quorum
    voters: list[int] = []
    if voter_sets:
        voters = [v.get("VoterId") for v in voter_sets[-1].data.get("Voters") or ()]
    elif qs is not None and qs.current_voters:
        voters = list(qs.current_voters)
    node = d.meta.node_id if d.meta is not None else None
    role = "unknown" if not voters or node is None else ("voter" if node in voters else "observer")
    state = (
        {
            "leaderId": qs.leader_id,
            "leaderEpoch": qs.leader_epoch,
            "votedId": qs.voted_id,
            "voters": qs.current_voters,
        }
        if qs is not None
        else {}
    )
    return NodeReport(
        node,
        d.meta.cluster_id if d.meta is not None else None,
        role,
        state,
        start,
        end,
        last_epoch,
        snaps,
        voters,
        events,
    )
