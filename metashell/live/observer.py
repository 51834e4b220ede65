"""The observer loop: find the controllers (KIP-919), follow the leader, Fetch the metadata log.

FORMATS.md 6.7 is the algorithm.  The client fetches ``__cluster_metadata``-0 by topic id with
ReplicaId -1, so the leader never tracks it (it is neither voter nor observer and cannot move the
high watermark).  Records arrive up to the leader's log end; they wait in ``pending`` until the
high watermark passes them, and are then handed over once, in order.

Leader discovery needs no ACL beyond what Fetch itself needs: a Fetch with a stale
CurrentLeaderEpoch is answered FENCED_LEADER_EPOCH with the current leader and epoch, and (v17+) its
endpoint.  DescribeCluster (KIP-919) adds the cluster id and every controller's endpoint when the
controller supports it; without it the bootstrap endpoints are probed in turn.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from metashell.errors import DecodeError
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
    CommittedBatch,
    ImageReset,
    LiveEvent,
    LiveStatus,
    LiveWarning,
    RecordsCommitted,
    SnapshotId,
    SnapshotLoaded,
    StatusChanged,
)
from metashell.live.tls import TlsSettings, build_tls
from metashell.log.batch import RecordBatch
from metashell.log.problems import LogWarning
from metashell.log.scan import iter_batches
from metashell.protocol.uuid import METADATA_TOPIC_ID

log = logging.getLogger("metashell.live")

METADATA_TOPIC = "__cluster_metadata"
#: Raft ignores MaxBytes (it sends at most 8 MiB); we state it anyway.
FETCH_MAX_BYTES = 8 * 1024 * 1024
SNAPSHOT_PAGE_BYTES = 8 * 1024 * 1024
#: Fetch responses held for records above the high watermark (they wait there for it to advance):
#: past this, no more is taken until the leader commits what is held.  A controller that never
#: advanced its high watermark made memory grow without limit (3.5 GB in a minute).
MAX_PENDING_BYTES = 256 * 1024 * 1024
#: ... and batches held, whatever their size.
MAX_PENDING_BATCHES = 1_000_000
#: The largest snapshot live mode downloads (it is held in memory while it loads).  A snapshot of a
#: million partitions is a few hundred MB; a controller announcing more than this is refused with
#: one line, where an endless download grew by 5 GB a minute until memory ran out.
MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024 * 1024
#: Long-poll time when nothing is pending.
MAX_WAIT_MS = 500
#: Poll time while records wait for the high watermark (Fetch < v18): raft before KIP-1166 does not
#: wake a parked fetch when only the high watermark moves, so poll briefly instead of waiting for the
#: next append (up to metadata.max.idle.interval.ms = 500 ms away).
PENDING_WAIT_MS = 5
BACKOFF_START = 0.05
BACKOFF_MAX = 1.0

EventSink = Callable[[LiveEvent], None]

_BROKER_HINT = "this is a broker endpoint; give the controller listener (controller.listener.names)"


class _Redirect(Exception):
    """Leadership moved (or is unknown): go to ``leader_id`` at ``epoch``."""

    def __init__(self, leader_id: int, epoch: int, why: str) -> None:
        super().__init__(why)
        self.leader_id = leader_id
        self.epoch = epoch
        self.why = why


class _Refetch(Exception):
    """Start over with a new Fetch (the snapshot vanished while downloading, ...)."""


@dataclass
class _Pending:
    batch: RecordBatch
    lo: int  # first offset still to deliver
    hi: int  # exclusive end (may be cut by a divergence)


class Observer:
    """Runs in one thread.  :meth:`bootstrap` then :meth:`run`; :meth:`stop` from any thread."""

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
        self.pending: list[_Pending] = []
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

    # -- main loop ----------------------------------------------------------------------------------

    def run(self, until: Callable[[], bool] | None = None) -> None:
        """Stream until :meth:`stop` (or ``until()`` is true).  Fatal errors raise LiveError.

        Transient trouble (a dead controller, an election, a leader hint) moves to another endpoint;
        after a full round of misses it sleeps with exponential backoff and jitter.
        """
        backoff = BACKOFF_START
        misses = 0
        while not self._stop.is_set():
            if until is not None and until():
                return
            sleep = False
            try:
                if self._conn is None or not self._conn.is_open or self._conn.endpoint != self.target:
                    self._drop_connection()
                    self._open(self.target)
                self._fetch_once()
                backoff = BACKOFF_START
                misses = 0
                continue
            except _Redirect as r:
                self._follow(r)
                sleep = r.leader_id < 0
            except _Refetch as r:
                log.info("refetching: %s", r)
            except LiveConnectionError as e:
                if self._stop.is_set():
                    break
                failed = self.target
                self._drop_connection()
                self._set_status(state="reconnecting", last_error=str(e))
                log.info("%s", e)
                self._next_candidate(failed=failed)
            misses += 1
            if sleep or misses >= max(2, len(self._candidates())):
                self._sleep(backoff * (0.5 + random.random()))
                backoff = min(BACKOFF_MAX, backoff * 2)
        self._drop_connection()

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

    def _follow(self, r: _Redirect) -> None:
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

    # -- Fetch --------------------------------------------------------------------------------------

    def _fetch_once(self) -> None:
        conn = self._conn
        assert conn is not None
        version = conn.version("Fetch")
        # v18+ (KIP-1166) carries our high watermark: the leader answers a parked fetch as soon as
        # its HW moves past ours.  Older leaders only wake on appends, so poll while records wait.
        wait = self.pending_wait_ms if self.pending and version < 18 else self.max_wait_ms
        partition: dict[str, Any] = {
            "Partition": 0,
            "CurrentLeaderEpoch": max(self.epoch, self.last_fetched_epoch),
            "FetchOffset": self.fetch_offset,
            "LastFetchedEpoch": self.last_fetched_epoch,
            "LogStartOffset": -1,
            "PartitionMaxBytes": FETCH_MAX_BYTES,
        }
        if version >= 18:
            # KIP-1166: tell the leader what we know, so it answers as soon as the HW moves past it.
            partition["HighWatermark"] = self.high_watermark
        self._epoch_was_unknown = self.leader_id < 0
        body = {
            "ClusterId": self.cluster_id,
            "ReplicaId": -1,
            "MaxWaitMs": wait,
            "MinBytes": 0,
            "MaxBytes": FETCH_MAX_BYTES,
            "IsolationLevel": 0,
            "SessionId": 0,
            "SessionEpoch": -1,
            "Topics": [{"Topic": METADATA_TOPIC, "TopicId": METADATA_TOPIC_ID, "Partitions": [partition]}],
            "ForgottenTopicsData": [],
            "RackId": "",
        }
        resp = conn.request("Fetch", body, version=version, timeout=wait / 1000 + self.config.request_timeout)
        received_at = time.time()
        self._learn_endpoints(resp.get("NodeEndpoints"))
        self._check_top_level("Fetch", resp["ErrorCode"], conn.endpoint)
        topics = resp.get("Responses") or []
        if len(topics) != 1 or len(topics[0].get("Partitions") or []) != 1:
            raise KafkaProtocolError(f"{conn.endpoint} answered Fetch without the metadata partition")
        p = topics[0]["Partitions"][0]
        code = p["ErrorCode"]
        leader = p.get("CurrentLeader") or {}
        if code in E.LEADERSHIP_ERRORS:
            raise _Redirect(leader.get("LeaderId", -1), leader.get("LeaderEpoch", -1), E.error_name(code))
        if code != E.NONE:
            self._partition_error("Fetch", code, conn.endpoint)
        # this node leads at our epoch
        if leader.get("LeaderEpoch", -1) >= 0:
            self.epoch = max(self.epoch, leader["LeaderEpoch"])
        if leader.get("LeaderId", -1) >= 0:
            self.leader_id = leader["LeaderId"]
            self.controllers.setdefault(self.leader_id, conn.endpoint)
        if p.get("LogStartOffset", -1) >= 0:
            self.log_start_offset = p["LogStartOffset"]
        snap = p.get("SnapshotId") or {}
        div = p.get("DivergingEpoch") or {}
        hw = p.get("HighWatermark", -1)
        if snap.get("EndOffset", -1) >= 0 or snap.get("Epoch", -1) >= 0:
            self._load_snapshot(conn, SnapshotId(snap["EndOffset"], snap["Epoch"]), hw)
            return
        if div.get("Epoch", -1) >= 0 and div.get("EndOffset", -1) >= 0:
            self._diverge(div["EndOffset"], div["Epoch"])
            return
        self._take_records(p.get("Records") or b"", conn.endpoint)
        if hw >= 0:
            self.high_watermark = max(self.high_watermark, hw) if self.high_watermark >= 0 else hw
        self._deliver(received_at, str(conn.endpoint))

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

    def _take_records(self, data: bytes, ep: Endpoint) -> None:
        if not data:
            return

        def ignore_torn(w: LogWarning) -> None:
            if w.kind != "torn-tail":  # a cut-off last batch is normal at the end of a fetch
                self._warn(str(w))

        if self.pending_bytes >= MAX_PENDING_BYTES or len(self.pending) >= MAX_PENDING_BATCHES:
            # records above the high watermark fill the cap: take nothing more (fetch_offset stays,
            # so the same records are asked for again) until the leader commits what is held
            if not self._told_full:
                self._told_full = True
                self._warn(
                    f"{len(self.pending)} batch(es), {self.pending_bytes} bytes wait above the high "
                    f"watermark {self.high_watermark}: fetching no more until the leader commits them"
                )
            return
        took = False
        try:
            for batch in iter_batches(data, f"fetch from {ep}", warn=ignore_torn):
                if batch.last_offset < self.fetch_offset:
                    continue
                lo = max(batch.base_offset, self.fetch_offset)
                self.pending.append(_Pending(batch, lo, batch.last_offset + 1))
                took = True
                self.fetch_offset = batch.last_offset + 1
                self.last_fetched_epoch = batch.partition_leader_epoch
        except DecodeError as e:
            # keep what parsed; the next fetch starts right after it and gets the batch again
            raise LiveConnectionError(f"bad record batch from {ep}: {e}") from None
        finally:
            if took:
                self.pending_bytes += len(data)

    def _deliver(self, received_at: float, source: str) -> None:
        hw = self.high_watermark
        out: list[CommittedBatch] = []
        while self.pending and hw >= 0:
            pend = self.pending[0]
            lo = max(pend.lo, self.delivered_next)
            if hw <= lo:
                break
            upto = min(pend.hi, hw)
            if upto > lo:
                b = pend.batch
                entries = b.entries()
                if lo != b.base_offset or upto != b.last_offset + 1:
                    entries = [e for e in entries if lo <= e[0] < upto]
                if entries:
                    out.append(CommittedBatch(b, entries, lo == b.base_offset and upto == b.last_offset + 1))
                self.delivered_next = upto
            if upto >= pend.hi:
                self.pending.pop(0)
            else:
                pend.lo = upto
                break
        if not self.pending:
            self.pending_bytes = 0
            self._told_full = False
        if out:
            self.sink(RecordsCommitted(out, hw, source, received_at))
        self._publish_position(state="streaming" if self.delivered_next >= hw >= 0 else "catching-up")

    def _diverge(self, end_offset: int, epoch: int) -> None:
        log.info("diverging epoch %s ends at %s: truncating pending records", epoch, end_offset)
        if end_offset < self.delivered_next:
            # Raft never truncates committed records; if a controller did, start over.
            self._warn(
                f"controller log diverged at offset {end_offset}, below the committed offset "
                f"{self.delivered_next}: reloading from the start"
            )
            self.sink(ImageReset(f"log diverged at offset {end_offset}"))
            self.pending.clear()
            self.pending_bytes = 0
            self.fetch_offset = self.delivered_next = 0
            self.last_fetched_epoch = 0
            return
        kept: list[_Pending] = []
        for pend in self.pending:
            if pend.lo >= end_offset:
                continue
            pend.hi = min(pend.hi, end_offset)
            kept.append(pend)
        self.pending = kept
        self.fetch_offset = end_offset
        self.last_fetched_epoch = epoch

    # -- FetchSnapshot ------------------------------------------------------------------------------

    def _load_snapshot(self, conn: Connection, snap: SnapshotId, hw: int) -> None:
        self._publish_position(state="snapshot")
        data = self._download(conn, snap)
        source = f"snapshot {snap} from {conn.endpoint}"

        def warn(w: LogWarning) -> None:
            self._warn(str(w))

        try:
            batches = list(iter_batches(data, source, warn=warn))
        except DecodeError as e:
            raise LiveError(f"{e}") from None
        self.pending.clear()
        self.pending_bytes = 0
        self.fetch_offset = self.delivered_next = snap.end_offset
        self.last_fetched_epoch = snap.epoch
        if hw >= 0:
            self.high_watermark = hw
        self.sink(SnapshotLoaded(snap, data, batches, hw, source))
        self.status = self.status.evolve(snapshot_id=snap)
        self._publish_position(
            state="streaming" if self.delivered_next >= self.high_watermark >= 0 else "catching-up"
        )

    def _download(self, conn: Connection, snap: SnapshotId) -> bytes:
        buf = bytearray()
        size = -1
        while size < 0 or len(buf) < size:
            if self._stop.is_set():
                raise LiveConnectionError("stopped")
            body = {
                "ClusterId": self.cluster_id,
                "ReplicaId": -1,
                "MaxBytes": SNAPSHOT_PAGE_BYTES,
                "Topics": [
                    {
                        "Name": METADATA_TOPIC,
                        "Partitions": [
                            {
                                "Partition": 0,
                                "CurrentLeaderEpoch": max(self.epoch, self.last_fetched_epoch),
                                "SnapshotId": {"EndOffset": snap.end_offset, "Epoch": snap.epoch},
                                "Position": len(buf),
                            }
                        ],
                    }
                ],
            }
            resp = conn.request("FetchSnapshot", body)
            self._learn_endpoints(resp.get("NodeEndpoints"))
            self._check_top_level("FetchSnapshot", resp["ErrorCode"], conn.endpoint)
            topics = resp.get("Topics") or []
            if len(topics) != 1 or len(topics[0].get("Partitions") or []) != 1:
                raise KafkaProtocolError(
                    f"{conn.endpoint} answered FetchSnapshot without the metadata partition"
                )
            p = topics[0]["Partitions"][0]
            code = p["ErrorCode"]
            if code in E.LEADERSHIP_ERRORS:
                leader = p.get("CurrentLeader") or {}
                raise _Redirect(leader.get("LeaderId", -1), leader.get("LeaderEpoch", -1), E.error_name(code))
            if code in (E.SNAPSHOT_NOT_FOUND, E.POSITION_OUT_OF_RANGE):
                raise _Refetch(f"snapshot {snap}: {E.error_name(code)} after {len(buf)} bytes")
            if code != E.NONE:
                self._partition_error("FetchSnapshot", code, conn.endpoint)
            got = p.get("SnapshotId") or {}
            if (got.get("EndOffset"), got.get("Epoch")) != (snap.end_offset, snap.epoch):
                raise _Refetch(f"asked for snapshot {snap}, got {got}")
            if p["Position"] != len(buf):
                raise _Refetch(f"snapshot page at position {p['Position']}, expected {len(buf)}")
            chunk = p.get("UnalignedRecords") or b""
            size = p["Size"]
            if size > MAX_SNAPSHOT_BYTES:
                raise LiveError(
                    f"{conn.endpoint} offers snapshot {snap} of {size} bytes, more than the "
                    f"{MAX_SNAPSHOT_BYTES} live mode holds in memory: read the node's directory with -d"
                )
            if not chunk and len(buf) < size:
                raise _Refetch(f"empty snapshot page at position {len(buf)} of {size}")
            buf += chunk
            if len(buf) > size:
                raise _Refetch(f"snapshot {snap} longer than its announced {size} bytes")
        return bytes(buf)
