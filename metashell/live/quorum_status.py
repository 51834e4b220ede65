"""The live quorum as ``kafka-metadata-quorum describe --status`` and ``--replication`` show it.

Both come from one DescribeQuorum response of the leader (``LiveSource.describe_quorum``), read
the way Kafka's ``MetadataQuorumCommand`` reads its ``QuorumInfo``: the leader is the voter whose
id is the leader id; a replica's lag is the leader's log end offset less its own; the largest
follower lag is the leader's against the voter with the smallest log end offset, and its time the
gap between their last caught-up times (0 when that voter is the leader, -1 when either time is
unknown).  A voter's endpoints are the listeners the response's ``Nodes`` give it (v2).  Times
are milliseconds since the epoch; -1 is unknown, as Kafka prints it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from metashell.protocol.uuid import uuid_to_str

__all__ = ["QuorumStatus", "Replica", "quorum_status"]

_ZERO_UUID = bytes(16)


@dataclass(frozen=True)
class Replica:
    node_id: int
    directory_id: bytes
    log_end_offset: int
    last_fetch: int
    last_caught_up: int
    status: str  # Leader, Follower, Observer
    endpoints: tuple[str, ...]

    def lag(self, leader: Replica | None) -> int | None:
        return None if leader is None else leader.log_end_offset - self.log_end_offset

    def as_status_json(self) -> str:
        """``{"id": 1, "directoryId": "...", "endpoints": ["CONTROLLER://host:9093"]}``, as Kafka's
        ``--status`` prints a replica (no directory id when it is zero, no endpoints when none)."""
        parts = [f'"id": {self.node_id}']
        if self.directory_id != _ZERO_UUID:
            parts.append(f'"directoryId": "{uuid_to_str(self.directory_id)}"')
        if self.endpoints:
            parts.append('"endpoints": [' + ", ".join(json.dumps(e) for e in self.endpoints) + "]")
        return "{" + ", ".join(parts) + "}"


@dataclass(frozen=True)
class QuorumStatus:
    cluster_id: str | None
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[Replica, ...]
    observers: tuple[Replica, ...]
    asked: str  # the controller that answered

    @property
    def leader(self) -> Replica | None:
        return next((v for v in self.voters if v.node_id == self.leader_id), None)

    @property
    def max_follower_lag(self) -> int | None:
        leader, slowest = self.leader, min(self.voters, key=lambda v: v.log_end_offset, default=None)
        return None if leader is None or slowest is None else leader.log_end_offset - slowest.log_end_offset

    @property
    def max_follower_lag_time_ms(self) -> int | None:
        leader, slowest = self.leader, min(self.voters, key=lambda v: v.log_end_offset, default=None)
        if leader is None or slowest is None:
            return None
        if slowest is leader:
            return 0
        if leader.last_caught_up < 0 or slowest.last_caught_up < 0:
            return -1
        return leader.last_caught_up - slowest.last_caught_up

    def replicas(self) -> Iterator[Replica]:
        """The leader, the other voters, the observers: ``--replication``'s order."""
        leader = self.leader
        if leader is not None:
            yield leader
        yield from (v for v in self.voters if v is not leader)
        yield from self.observers

    def status_lines(self) -> list[str]:
        def known(value: int | None) -> str:
            return "unknown (no leader)" if value is None else str(value)

        return [
            f"ClusterId:              {self.cluster_id or 'unknown'}",
            f"LeaderId:               {self.leader_id}",
            f"LeaderEpoch:            {self.leader_epoch}",
            f"HighWatermark:          {self.high_watermark}",
            f"MaxFollowerLag:         {known(self.max_follower_lag)}",
            f"MaxFollowerLagTimeMs:   {known(self.max_follower_lag_time_ms)}",
            "CurrentVoters:          [" + ", ".join(v.as_status_json() for v in self.voters) + "]",
            "CurrentObservers:       [" + ", ".join(o.as_status_json() for o in self.observers) + "]",
        ]

    def replication_lines(self) -> list[str]:
        head = [
            "NodeId",
            "DirectoryId",
            "LogEndOffset",
            "Lag",
            "LastFetchTimestamp",
            "LastCaughtUpTimestamp",
            "Status",
        ]
        leader = self.leader
        rows = [
            [
                str(r.node_id),
                uuid_to_str(r.directory_id),
                str(r.log_end_offset),
                "?" if r.lag(leader) is None else str(r.lag(leader)),
                str(r.last_fetch),
                str(r.last_caught_up),
                r.status,
            ]
            for r in self.replicas()
        ]
        widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
        return [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in (head, *rows)
        ]

    def lines(self) -> list[str]:
        """``--status``, a blank line, ``--replication``: what an operator runs the tool twice for."""
        return [*self.status_lines(), "", *self.replication_lines()]

    def as_json(self) -> dict[str, Any]:
        leader = self.leader

        def replica(r: Replica) -> dict[str, Any]:
            return {
                "nodeId": r.node_id,
                "directoryId": uuid_to_str(r.directory_id),
                "logEndOffset": r.log_end_offset,
                "lag": r.lag(leader),
                "lastFetchTimestamp": r.last_fetch,
                "lastCaughtUpTimestamp": r.last_caught_up,
                "status": r.status,
                "endpoints": list(r.endpoints),
            }

        return {
            "clusterId": self.cluster_id,
            "leaderId": self.leader_id,
            "leaderEpoch": self.leader_epoch,
            "highWatermark": self.high_watermark,
            "maxFollowerLag": self.max_follower_lag,
            "maxFollowerLagTimeMs": self.max_follower_lag_time_ms,
            "voters": [replica(r) for r in self.replicas() if r.status != "Observer"],
            "observers": [replica(r) for r in self.observers],
            "askedController": self.asked,
        }


def _endpoints(nodes: list[dict[str, Any]]) -> dict[int, tuple[str, ...]]:
    out = {}
    for node in nodes:
        names = []
        for listener in node.get("Listeners") or ():
            host = str(listener.get("Host", ""))
            host = f"[{host}]" if ":" in host else host
            names.append(f"{listener.get('Name')}://{host}:{listener.get('Port')}")
        out[int(node["NodeId"])] = tuple(names)
    return out


def quorum_status(described: dict[str, Any], cluster_id: str | None) -> QuorumStatus:
    """``described``: ``LiveSource.describe_quorum()`` (the partition entry, plus ``Nodes`` and
    ``Endpoint``, the controller that answered)."""
    leader_id = int(described.get("LeaderId", -1))
    endpoints = _endpoints(described.get("Nodes") or [])

    def replicas(key: str, status: str) -> tuple[Replica, ...]:
        return tuple(
            Replica(
                node_id=int(r["ReplicaId"]),
                directory_id=bytes(r.get("ReplicaDirectoryId") or _ZERO_UUID),
                log_end_offset=int(r.get("LogEndOffset", -1)),
                last_fetch=int(r.get("LastFetchTimestamp", -1)),
                last_caught_up=int(r.get("LastCaughtUpTimestamp", -1)),
                status=("Leader" if int(r["ReplicaId"]) == leader_id else "Follower")
                if status == "voter"
                else status,
                endpoints=endpoints.get(int(r["ReplicaId"]), ()),
            )
            for r in described.get(key) or ()
        )

    return QuorumStatus(
        cluster_id=cluster_id,
        leader_id=leader_id,
        leader_epoch=int(described.get("LeaderEpoch", -1)),
        high_watermark=int(described.get("HighWatermark", -1)),
        voters=replicas("CurrentVoters", "voter"),
        observers=replicas("Observers", "Observer"),
        asked=str(described.get("Endpoint", "")),
    )
