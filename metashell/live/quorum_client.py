"""The controller quorum as a client sees it: connections, discovery (KIP-919), the leader.

A :class:`QuorumClient` holds one connection to the node it fetches from, learns the cluster id
and the controllers' endpoints (DescribeCluster, else the bootstrap endpoints in turn), follows
leader hints, rotates through the candidates after a failure, and turns error codes into one-line
errors.  :class:`~.observer.Observer` adds the Fetch loop on top.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from metashell.live import errors as E
from metashell.live.config import ClientConfig
from metashell.live.connection import Connection, Endpoint
from metashell.live.errors import (
    AuthorizationError,
    ConfigError,
    KafkaProtocolError,
    LiveConnectionError,
    LiveError,
)
from metashell.live.events import (
    LiveEvent,
    LiveStatus,
    LiveWarning,
    StatusChanged,
)
from metashell.live.tls import TlsSettings, build_tls
from metashell.log.batch import RecordBatch

log = logging.getLogger("metashell.live")

METADATA_TOPIC = "__cluster_metadata"
#: Long-poll time when nothing is pending.
MAX_WAIT_MS = 500
#: Poll time while records wait for the high watermark (Fetch < v18): raft before KIP-1166 does not
#: wake a parked fetch when only the high watermark moves, so poll briefly instead of waiting for the
#: next append (up to metadata.max.idle.interval.ms = 500 ms away).
PENDING_WAIT_MS = 5


EventSink = Callable[[LiveEvent], None]

_BROKER_HINT = "this is a broker endpoint; give the controller listener (controller.listener.names)"


class Redirect(Exception):
    """Leadership moved (or is unknown): go to ``leader_id`` at ``epoch``."""

    def __init__(self, leader_id: int, epoch: int, why: str) -> None:
        super().__init__(why)
        self.leader_id = leader_id
        self.epoch = epoch
        self.why = why


class Refetch(Exception):
    """Start over with a new Fetch (the snapshot vanished while downloading, ...)."""


@dataclass
class Pending:
    batch: RecordBatch
    lo: int  # first offset still to deliver
    hi: int  # exclusive end (may be cut by a divergence)


class QuorumClient:
    """Connection, discovery and leader following (the Fetch loop is :class:`~.observer.Observer`)."""

    def __init__(
        self,
        endpoints: list[Endpoint],
        config: ClientConfig,
        sink: EventSink,
        *,
        cluster_id: str | None = None,
        max_wait_ms: int = MAX_WAIT_MS,
        pending_wait_ms: int = PENDING_WAIT_MS,
    ) -> None:
        if not endpoints:
            raise ConfigError("no controller endpoint given")
        self.bootstrap_endpoints = list(endpoints)
        self.config = config
        self.sink = sink
        self.expected_cluster_id = cluster_id
        self.max_wait_ms = max_wait_ms
        self.pending_wait_ms = pending_wait_ms
        self.tls: TlsSettings | None = build_tls(config) if config.uses_tls else None
        if self.tls:
            for w in self.tls.warnings:
                self._warn(w)
        self._stop = threading.Event()
        self._conn: Connection | None = None
        self._conn_lock = threading.Lock()
        # discovery
        self.cluster_id: str | None = cluster_id
        self.controllers: dict[int, Endpoint] = {}
        self.describe_cluster_ok = False
        self.leader_id = -1
        self.epoch = 0
        self.target: Endpoint = endpoints[0]
        self._rotation = 0
        # log position
        self.fetch_offset = 0
        self.last_fetched_epoch = 0
        self.delivered_next = 0  # next offset to hand to the sink
        self.high_watermark = -1
        self.log_start_offset = -1
        #: batches fetched and not yet delivered, oldest first (taken from the front as the high
        #: watermark passes them: a deque, as a catch-up holds up to MAX_PENDING_BATCHES)
        self.pending: deque[Pending] = deque()
        #: bytes of the fetch responses taken since ``pending`` was last empty (each pending batch
        #: keeps its response's buffer alive): an upper bound of what waiting records hold
        self.pending_bytes = 0
        self._told_full = False
        self._epoch_was_unknown = True
        self.status = LiveStatus()

    # -- plumbing -----------------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        log.warning("%s", message)
        self.sink(LiveWarning(message))

    def _set_status(self, **changes: Any) -> None:
        new = self.status.evolve(**changes)
        self.status = new
        self.sink(StatusChanged(new))

    def _publish_position(self, state: str | None = None) -> None:
        st = self.status
        changes: dict[str, Any] = {}
        values = {
            "leader_id": self.leader_id,
            "leader_epoch": self.epoch,
            "endpoint": str(self.target) if self._conn else st.endpoint,
            "high_watermark": self.high_watermark,
            "applied_offset": self.delivered_next - 1,
            "fetch_offset": self.fetch_offset,
            "log_start_offset": self.log_start_offset,
            "cluster_id": self.cluster_id,
            "controllers": {k: str(v) for k, v in sorted(self.controllers.items())},
        }
        if state is not None:
            values["state"] = state
        if st.start_high_watermark < 0 and self.high_watermark >= 0:
            values["start_high_watermark"] = self.high_watermark
        for k, v in values.items():
            if getattr(st, k) != v:
                changes[k] = v
        if changes:
            self._set_status(**changes)

    def stop(self) -> None:
        self._stop.set()
        with self._conn_lock:
            conn = self._conn
        if conn is not None:
            conn.abort()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _open(self, ep: Endpoint) -> Connection:
        conn = Connection(ep, self.config, self.tls)
        with self._conn_lock:
            self._conn = conn
        if self._stop.is_set():
            raise LiveConnectionError("stopped")
        return conn.connect()

    def _drop_connection(self) -> None:
        with self._conn_lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    # -- bootstrap (KIP-919) ------------------------------------------------------------------------

    def bootstrap(self) -> None:
        """Try the endpoints in order until one answers; learn cluster id and controllers.

        Raises a one-line LiveError for everything retrying cannot fix, and when no endpoint answers.
        """
        self._set_status(state="connecting")
        failures: list[str] = []
        for ep in self.bootstrap_endpoints:
            if self._stop.is_set():
                raise LiveConnectionError("stopped")
            try:
                conn = self._open(ep)
            except (LiveConnectionError, KafkaProtocolError) as e:
                failures.append(str(e))
                self._drop_connection()
                continue
            except LiveError:
                self._drop_connection()
                raise
            self.target = ep
            try:
                self._describe_cluster(conn)
            except (LiveConnectionError, KafkaProtocolError) as e:
                failures.append(str(e))
                self._drop_connection()
                continue
            self._publish_position()
            return
        if len(failures) == 1:
            raise LiveConnectionError(failures[0])
        raise LiveConnectionError("no controller reachable: " + "; ".join(failures))

    def _describe_cluster(self, conn: Connection) -> None:
        ep = conn.endpoint
        if not conn.supports("DescribeCluster", 1):
            if conn.supports("Metadata"):
                raise LiveError(f"{ep}: {_BROKER_HINT}")
            self._warn(
                f"{ep} does not support DescribeCluster v1 (Kafka before 3.7): cannot list the "
                "controllers; using the bootstrap endpoints directly"
            )
            return
        resp = conn.request(
            "DescribeCluster", {"IncludeClusterAuthorizedOperations": False, "EndpointType": 2}
        )
        code = resp["ErrorCode"]
        if code == E.NONE:
            cid = resp.get("ClusterId")
            if self.expected_cluster_id and cid and cid != self.expected_cluster_id:
                raise LiveError(
                    f"wrong cluster: {ep} belongs to cluster {cid}, not {self.expected_cluster_id}"
                )
            self.cluster_id = cid or self.cluster_id
            self.controllers = {
                b["BrokerId"]: Endpoint(b["Host"], b["Port"]) for b in resp.get("Brokers") or []
            }
            self.describe_cluster_ok = True
            leader = resp.get("ControllerId", -1)
            if leader is not None and leader >= 0 and leader in self.controllers:
                self.leader_id = leader
                self.target = self.controllers[leader]
            return
        msg = resp.get("ErrorMessage")
        detail = f"{E.error_name(code)}{': ' + msg if msg else ''}"
        if code == E.MISMATCHED_ENDPOINT_TYPE or (code == E.INVALID_REQUEST and conn.supports("Metadata")):
            raise LiveError(f"{ep}: {_BROKER_HINT}")
        if code == E.CLUSTER_AUTHORIZATION_FAILED:
            self._warn(
                f"{ep} denied DescribeCluster (needs ALTER on CLUSTER): cannot list the controllers; "
                "using the bootstrap endpoints directly"
            )
            return
        if code in (E.UNSUPPORTED_VERSION, E.UNSUPPORTED_ENDPOINT_TYPE, E.INVALID_REQUEST):
            self._warn(f"{ep} cannot list the controllers ({detail}); using the bootstrap endpoints directly")
            return
        self._warn(f"DescribeCluster on {ep} failed ({detail}); using the bootstrap endpoints directly")

    def _candidates(self) -> list[Endpoint]:
        seen: list[Endpoint] = []
        for ep in list(self.controllers.values()) + self.bootstrap_endpoints:
            if ep not in seen:
                seen.append(ep)
        return seen

    def _next_candidate(self, failed: Endpoint | None = None) -> None:
        """After a failure: the known leader's endpoint if it is not the one that failed, else rotate."""
        if self.leader_id in self.controllers and self.controllers[self.leader_id] != failed:
            self.target = self.controllers[self.leader_id]
            return
        cands = self._candidates()
        self._rotation = (self._rotation + 1) % len(cands)
        if cands[self._rotation] == failed and len(cands) > 1:
            self._rotation = (self._rotation + 1) % len(cands)
        self.target = cands[self._rotation]

    def _follow(self, r: Redirect) -> None:
        if r.epoch > self.epoch or (r.epoch == self.epoch and r.leader_id >= 0):
            self.epoch = r.epoch
            self.leader_id = r.leader_id
        log.info("leader hint from %s: %s (leader %s, epoch %s)", self.target, r.why, r.leader_id, r.epoch)
        if r.leader_id >= 0 and r.leader_id not in self.controllers:
            self._refresh_controllers()
        if r.leader_id >= 0 and r.leader_id in self.controllers:
            self.target = self.controllers[r.leader_id]
        elif r.why == E.error_name(E.FENCED_LEADER_EPOCH) and r.leader_id >= 0 and self._epoch_was_unknown:
            pass  # we only learned the epoch; this node may well be the leader: ask it again
        else:
            self._next_candidate(failed=self.target)
        self._publish_position(state="reconnecting" if r.leader_id < 0 else None)

    def _refresh_controllers(self) -> None:
        """A leader we have no endpoint for (no NodeEndpoints before Fetch v17, or a voter added since
        we started): ask the node we are connected to -- DescribeCluster, else DescribeQuorum v2 Nodes."""
        conn = self._conn
        if conn is None or not conn.is_open:
            return
        try:
            if self.describe_cluster_ok:
                resp = conn.request(
                    "DescribeCluster", {"IncludeClusterAuthorizedOperations": False, "EndpointType": 2}
                )
                if resp["ErrorCode"] == E.NONE:
                    for b in resp.get("Brokers") or []:
                        self.controllers[b["BrokerId"]] = Endpoint(b["Host"], b["Port"])
                    return
            if conn.supports("DescribeQuorum", 2):
                resp = conn.request(
                    "DescribeQuorum",
                    {"Topics": [{"TopicName": METADATA_TOPIC, "Partitions": [{"PartitionIndex": 0}]}]},
                )
                known = set(self.controllers.values()) | set(self.bootstrap_endpoints)
                for node in resp.get("Nodes") or []:
                    listeners = [Endpoint(x["Host"], x["Port"]) for x in node.get("Listeners") or []]
                    if listeners and node["NodeId"] not in self.controllers:
                        # the listener we already use for other nodes is the right one, if we can tell
                        same = [ep for ep in listeners if ep in known]
                        self.controllers[node["NodeId"]] = (same or listeners)[0]
        except LiveError as e:
            log.info("could not refresh the controller list from %s: %s", conn.endpoint, e)
            if not conn.is_open:
                self._drop_connection()

    def _learn_endpoints(self, nodes: list[dict[str, Any]] | None) -> None:
        for n in nodes or []:
            self.controllers[n["NodeId"]] = Endpoint(n["Host"], n["Port"])

    def _check_top_level(self, api: str, code: int, ep: Endpoint) -> None:
        if code == E.NONE:
            return
        if code == E.INCONSISTENT_CLUSTER_ID:
            raise LiveError(
                f"wrong cluster: {ep} is not a controller of cluster {self.cluster_id} "
                "(INCONSISTENT_CLUSTER_ID)"
            )
        if code == E.CLUSTER_AUTHORIZATION_FAILED:
            raise AuthorizationError(
                f"not authorized to read the metadata log on {ep}: the principal needs "
                "CLUSTER_ACTION on the CLUSTER resource (CLUSTER_AUTHORIZATION_FAILED)"
            )
        if (
            code in (E.UNKNOWN_TOPIC_ID, E.UNKNOWN_TOPIC_OR_PARTITION, E.INVALID_REQUEST)
            and not self.describe_cluster_ok
            and self._conn is not None
            and self._conn.supports("Metadata")
        ):
            raise LiveError(f"{ep}: {_BROKER_HINT}")
        if code in (E.UNKNOWN_SERVER_ERROR, E.BROKER_NOT_AVAILABLE, E.NOT_LEADER_OR_FOLLOWER):
            raise LiveConnectionError(f"{ep} answered {api} with {E.error_name(code)}")
        raise KafkaProtocolError(f"{ep} rejected {api}: {E.error_name(code)}", code)

    def _partition_error(self, api: str, code: int, ep: Endpoint) -> None:
        if code == E.UNKNOWN_SERVER_ERROR:
            raise LiveConnectionError(f"{ep} answered {api} with UNKNOWN_SERVER_ERROR")
        if code == E.CLUSTER_AUTHORIZATION_FAILED:
            self._check_top_level(api, code, ep)
        if (
            code in (E.UNKNOWN_TOPIC_ID, E.UNKNOWN_TOPIC_OR_PARTITION)
            and self._conn is not None
            and self._conn.supports("Metadata")
        ):
            raise LiveError(f"{ep}: {_BROKER_HINT}")
        raise KafkaProtocolError(
            f"{ep} rejected {api} of {METADATA_TOPIC}-0: {E.error_name(code)} "
            f"(offset {self.fetch_offset}, epoch {self.last_fetched_epoch})",
            code,
        )
