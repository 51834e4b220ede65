"""Live mode against an in-process fake controller, for faults a real controller cannot be made to
produce on demand (diverging epochs, a cut-off last batch, a snapshot deleted mid-download, odd
ApiVersions answers, a controller that hangs or hangs up).  Everything that *can* be tested
against real Kafka is in test_live_kafka.py.

The fake speaks the real wire protocol through ``metashell.protocol.messages`` (decode_request /
encode_response) and keeps a log of real record batches.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from metashell.live import (
    AuthorizationError,
    ClientConfig,
    LiveConnectionError,
    LiveError,
    LiveSource,
    RecordsCommitted,
    SnapshotLoaded,
)
from metashell.live.connection import Connection, Endpoint
from metashell.live.events import ImageReset, LiveWarning
from metashell.log.encoding import build_batch
from metashell.log.scan import iter_batches
from metashell.protocol import messages
from metashell.protocol.control import encode_control_record
from metashell.protocol.metadata import encode_metadata_record
from metashell.protocol.uuid import METADATA_TOPIC_ID

pytestmark = pytest.mark.timeout(60)

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"
NONE = {"Epoch": -1, "EndOffset": -1}
NO_SNAPSHOT = {"EndOffset": -1, "Epoch": -1}


def topic_record(name: str) -> bytes:
    tid = (name.encode() * 16)[:16]
    return encode_metadata_record("TopicRecord", 0, {"Name": name, "TopicId": tid})


def noop() -> bytes:
    return encode_metadata_record("NoOpRecord", 0, {})


class FakeController:
    """A scripted KRaft controller: one node, a log of batches, a high watermark, snapshots."""

    def __init__(self, node_id: int = 1, epoch: int = 1, cluster_id: str = CLUSTER) -> None:
        self.node_id = node_id
        self.epoch = epoch
        self.leader_id = node_id
        self.cluster_id = cluster_id
        self.batches: list[bytes] = []
        self.next_offset = 0
        self.hw = 0
        self.log_start = 0
        self.snapshot: tuple[int, int, bytes] | None = None  # (end offset, epoch, bytes)
        self.snapshot_page = 64
        self.api_versions_max = 4
        self.api_keys: dict[int, tuple[int, int]] = {
            1: (4, 17),
            18: (0, 4),
            55: (0, 2),
            59: (0, 1),
            60: (0, 1),
            17: (0, 1),
            36: (0, 2),
        }
        self.describe_cluster_error = 0
        self.peers: dict[int, tuple[str, int]] = {}
        #: hooks: (api, version, body) -> response body, or "close", or None for the default
        self.hooks: dict[str, Callable[[int, dict[str, Any]], Any]] = {}
        self.requests: list[tuple[str, int, dict[str, Any]]] = []
        self.cond = threading.Condition()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    # -- log ----------------------------------------------------------------------------------------

    def append(
        self, values: list[bytes], epoch: int | None = None, commit: bool = True, control: bool = False
    ) -> int:
        with self.cond:
            b = build_batch(
                self.next_offset,
                self.epoch if epoch is None else epoch,
                values,
                int(time.time() * 1000),
                control=control,
            )
            self.batches.append(b)
            self.next_offset += len(values)
            if commit:
                self.hw = self.next_offset
            self.cond.notify_all()
            return self.next_offset - 1

    def commit(self, upto: int | None = None) -> None:
        with self.cond:
            self.hw = self.next_offset if upto is None else upto
            self.cond.notify_all()

    def records_from(self, offset: int, max_bytes: int | None = None) -> bytes:
        """The batches from ``offset``: up to ``max_bytes`` (the first one whole), as Kafka answers."""
        out = bytearray()
        for raw in self.batches:
            if max_bytes is not None and out and len(out) + len(raw) > max_bytes:
                break
            b = next(iter_batches(raw, "fake", decode=False))  # a test may serve a bad record
            if b.last_offset >= offset:
                out += raw
        return bytes(out)

    def kill(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass
        with self.cond:
            self.cond.notify_all()

    # -- server -------------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c: socket.socket) -> None:
        try:
            while not self.closed:
                head = self._read(c, 4)
                if head is None:
                    return
                frame = self._read(c, struct.unpack(">i", head)[0])
                if frame is None:
                    return
                api, version, header, body = messages.decode_request(frame)
                self.requests.append((api, version, body))
                corr = header["CorrelationId"]
                if api == "ApiVersions" and version > self.api_versions_max:
                    resp = messages.encode_response(
                        "ApiVersions",
                        0,
                        corr,
                        {
                            "ErrorCode": 35,
                            "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": self.api_versions_max}],
                        },
                    )
                    c.sendall(resp)
                    continue
                hook = self.hooks.get(api)
                out = hook(version, body) if hook else None
                if out is None:
                    out = getattr(self, f"_{api}")(version, body)
                if out == "close":
                    c.close()
                    return
                if out == "hang":
                    time.sleep(30)
                    return
                if isinstance(out, bytes):
                    c.sendall(out)
                    continue
                c.sendall(messages.encode_response(api, version, corr, out))
        except OSError:
            return

    @staticmethod
    def _read(c: socket.socket, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            chunk = c.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    # -- default handlers ---------------------------------------------------------------------------

    def _ApiVersions(self, version: int, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "ErrorCode": 0,
            "ApiKeys": [
                {"ApiKey": k, "MinVersion": lo, "MaxVersion": hi}
                for k, (lo, hi) in sorted(self.api_keys.items())
            ],
        }

    def _DescribeCluster(self, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if self.describe_cluster_error:
            return {"ErrorCode": self.describe_cluster_error, "ErrorMessage": "nope", "ClusterId": ""}
        brokers = [{"BrokerId": self.node_id, "Host": "127.0.0.1", "Port": self.port}]
        brokers += [{"BrokerId": i, "Host": h, "Port": p} for i, (h, p) in self.peers.items()]
        return {
            "ErrorCode": 0,
            "EndpointType": 2,
            "ClusterId": self.cluster_id,
            "ControllerId": self.leader_id,
            "Brokers": brokers,
        }

    def _partition(self, **kw: Any) -> dict[str, Any]:
        p = {
            "PartitionIndex": 0,
            "ErrorCode": 0,
            "HighWatermark": self.hw,
            "LastStableOffset": -1,
            "LogStartOffset": self.log_start,
            "DivergingEpoch": NONE,
            "CurrentLeader": {"LeaderId": self.leader_id, "LeaderEpoch": self.epoch},
            "SnapshotId": NO_SNAPSHOT,
            "AbortedTransactions": [],
            "PreferredReadReplica": -1,
            "Records": b"",
        }
        p.update(kw)
        return p

    def fetch_response(
        self, partition: dict[str, Any], top_error: int = 0, endpoints: list[Any] | None = None
    ) -> dict[str, Any]:
        return {
            "ErrorCode": top_error,
            "Responses": [{"TopicId": METADATA_TOPIC_ID, "Partitions": [partition]}],
            "NodeEndpoints": endpoints or [],
        }

    def _Fetch(self, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if body.get("ClusterId") not in (None, self.cluster_id):
            return {"ErrorCode": 104, "Responses": []}
        part = body["Topics"][0]["Partitions"][0]
        if self.leader_id != self.node_id:
            leader = {"LeaderId": self.leader_id, "LeaderEpoch": self.epoch}
            eps = [
                {"NodeId": i, "Host": h, "Port": p} for i, (h, p) in self.peers.items() if i == self.leader_id
            ]
            return self.fetch_response(
                self._partition(ErrorCode=6, CurrentLeader=leader), endpoints=eps if version >= 17 else None
            )
        if part["CurrentLeaderEpoch"] < self.epoch:
            return self.fetch_response(self._partition(ErrorCode=74))
        offset = part["FetchOffset"]
        if self.snapshot and (offset < self.log_start or (offset == 0 and self.snapshot[0] > 0)):
            return self.fetch_response(
                self._partition(SnapshotId={"EndOffset": self.snapshot[0], "Epoch": self.snapshot[1]})
            )
        deadline = time.monotonic() + body["MaxWaitMs"] / 1000
        with self.cond:
            while offset >= self.next_offset and time.monotonic() < deadline and not self.closed:
                self.cond.wait(max(0.0, deadline - time.monotonic()))
            if part["CurrentLeaderEpoch"] != self.epoch:  # a new epoch began while parked
                return self.fetch_response(self._partition(ErrorCode=74))
            records = self.records_from(offset, part.get("PartitionMaxBytes"))
            return self.fetch_response(self._partition(Records=records))

    def _FetchSnapshot(self, version: int, body: dict[str, Any]) -> dict[str, Any]:
        part = body["Topics"][0]["Partitions"][0]
        assert self.snapshot is not None
        end, epoch, data = self.snapshot
        sid = part["SnapshotId"]
        if (sid["EndOffset"], sid["Epoch"]) != (end, epoch):
            p = {"Index": 0, "ErrorCode": 98, "SnapshotId": sid}
        else:
            pos = part["Position"]
            chunk = data[pos : pos + min(body["MaxBytes"], self.snapshot_page)]
            p = {
                "Index": 0,
                "ErrorCode": 0,
                "SnapshotId": sid,
                "Size": len(data),
                "Position": pos,
                "CurrentLeader": {"LeaderId": self.leader_id, "LeaderEpoch": self.epoch},
                "UnalignedRecords": chunk,
            }
        return {"ErrorCode": 0, "Topics": [{"Name": "__cluster_metadata", "Partitions": [p]}]}

    def _DescribeQuorum(self, version: int, body: dict[str, Any]) -> dict[str, Any]:
        nodes = [
            {"NodeId": i, "Listeners": [{"Name": "CONTROLLER", "Host": h, "Port": p}]}
            for i, (h, p) in [(self.node_id, ("127.0.0.1", self.port)), *self.peers.items()]
        ]
        return {
            "ErrorCode": 0,
            "Topics": [
                {
                    "TopicName": "__cluster_metadata",
                    "Partitions": [
                        {
                            "PartitionIndex": 0,
                            "ErrorCode": 0,
                            "LeaderId": self.leader_id,
                            "LeaderEpoch": self.epoch,
                            "HighWatermark": self.hw,
                            "CurrentVoters": [],
                            "Observers": [],
                        }
                    ],
                }
            ],
            "Nodes": nodes,
        }


def make_snapshot(end_offset: int, epoch: int, values: list[bytes]) -> bytes:
    header = encode_control_record("SnapshotHeader", {"Version": 0, "LastContainedLogTimestamp": 1234})
    footer = encode_control_record("SnapshotFooter", {"Version": 0})
    out = build_batch(0, epoch, [header], 1234, control=True)
    out += build_batch(1, epoch, values, 1234)
    out += build_batch(1 + len(values), epoch, [footer], 1234, control=True)
    return out


class Collector:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.cond = threading.Condition()

    def __call__(self, event: Any) -> None:
        with self.cond:
            self.events.append(event)
            self.cond.notify_all()

    def offsets(self) -> list[int]:
        return [
            e[0]
            for ev in self.events
            if isinstance(ev, RecordsCommitted)
            for cb in ev.batches
            for e in cb.records()
        ]

    def values(self) -> list[bytes | None]:
        return [
            e[3]
            for ev in self.events
            if isinstance(ev, RecordsCommitted)
            for cb in ev.batches
            for e in cb.records()
        ]

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def wait_for(self, pred: Callable[[], bool], timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred():
                left = deadline - time.monotonic()
                assert left > 0, f"timed out; events: {self.events[-5:]}"
                self.cond.wait(left)


def wait_until(pred: Callable[[], object], timeout: float = 120) -> None:
    """Poll ``pred`` until it holds; the timeout only stops a test that would hang."""
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def ctrl() -> Iterator[FakeController]:
    c = FakeController()
    yield c
    c.kill()


def start(endpoints: str, **kw: Any) -> tuple[LiveSource, Collector]:
    col = Collector()
    src = LiveSource(endpoints, max_wait_ms=kw.pop("max_wait_ms", 200), **kw)
    src.start(col)
    return src, col


# ---------------------------------------------------------------------------------------------------
# wire client


def test_api_versions_fallback_to_server_max(ctrl: FakeController) -> None:
    ctrl.api_versions_max = 2
    with Connection(Endpoint("127.0.0.1", ctrl.port), ClientConfig()).connect() as conn:
        assert conn.api_versions_version == 2
        assert conn.version("Fetch") == 17
    sent = [v for api, v, _ in ctrl.requests if api == "ApiVersions"]
    assert sent == [4, 2]
    first = next(b for api, _, b in ctrl.requests if api == "ApiVersions")
    assert first["ClientSoftwareName"] == "metashell"


def test_version_selection_respects_minimum(ctrl: FakeController) -> None:
    ctrl.api_keys[1] = (0, 12)  # a server whose Fetch cannot carry a topic id
    with Connection(Endpoint("127.0.0.1", ctrl.port), ClientConfig()).connect() as conn:
        with pytest.raises(LiveError, match=r"supports Fetch v0-12 but metashell needs v13"):
            conn.version("Fetch")
        assert conn.version("DescribeQuorum") == 2


def test_correlation_id_mismatch_is_an_error(ctrl: FakeController) -> None:
    ctrl.hooks["DescribeQuorum"] = lambda v, b: messages.encode_response(
        "DescribeQuorum", v, 999, {"ErrorCode": 0, "Topics": []}
    )
    with (
        Connection(Endpoint("127.0.0.1", ctrl.port), ClientConfig()).connect() as conn,
        pytest.raises(LiveError, match="correlation id 999"),
    ):
        conn.request("DescribeQuorum", {"Topics": []})


def test_connection_refused_is_one_line() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    t0 = time.monotonic()
    with pytest.raises(LiveConnectionError) as ei:
        LiveSource(f"127.0.0.1:{port}").connect()
    assert str(ei.value) == f"cannot connect to 127.0.0.1:{port}: connection refused"
    assert time.monotonic() - t0 < 5


def test_all_endpoints_unreachable_lists_each() -> None:
    ports = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        ports.append(s.getsockname()[1])
        s.close()
    with pytest.raises(LiveConnectionError) as ei:
        LiveSource(",".join(f"127.0.0.1:{p}" for p in ports)).connect()
    msg = str(ei.value)
    assert msg.startswith("no controller reachable: ") and "\n" not in msg
    assert all(str(p) in msg for p in ports)


def test_unexpected_close_is_one_line(ctrl: FakeController) -> None:
    ctrl.hooks["ApiVersions"] = lambda v, b: "close"
    with pytest.raises(
        LiveConnectionError,
        match=r"closed the connection during version negotiation \(is it a "
        r"TLS listener\? check security.protocol\)",
    ):
        LiveSource(ctrl.endpoint).connect()


def test_request_timeout_is_one_line(ctrl: FakeController) -> None:
    ctrl.hooks["ApiVersions"] = lambda v, b: "hang"
    cfg = ClientConfig.from_properties({"request.timeout.ms": "300"})
    t0 = time.monotonic()
    with pytest.raises(LiveConnectionError, match=r"no answer from .* to version negotiation within 0.3s"):
        LiveSource(ctrl.endpoint, cfg).connect()
    assert time.monotonic() - t0 < 5


def test_the_first_endpoint_that_answers_wins(ctrl: FakeController) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = s.getsockname()[1]
    s.close()
    src = LiveSource(f"127.0.0.1:{dead},{ctrl.endpoint}").connect()
    assert src.status.cluster_id == CLUSTER
    src.stop()


# ---------------------------------------------------------------------------------------------------
# bootstrap (KIP-919)


def test_broker_endpoint_is_named(ctrl: FakeController) -> None:
    ctrl.describe_cluster_error = 114
    with pytest.raises(LiveError) as ei:
        LiveSource(ctrl.endpoint).connect()
    assert str(ei.value) == (
        f"{ctrl.endpoint}: this is a broker endpoint; give the controller listener "
        "(controller.listener.names)"
    )


def test_old_controller_falls_back_with_a_warning(ctrl: FakeController) -> None:
    ctrl.describe_cluster_error = 35
    ctrl.append([topic_record("a")])
    src, col = start(ctrl.endpoint)
    try:
        col.wait_for(lambda: col.offsets() == [0])
        warnings = [str(w) for w in col.of(LiveWarning)]
        assert any(
            "cannot list the controllers (UNSUPPORTED_VERSION: nope); using the bootstrap" in w
            for w in warnings
        )
        fetch = next(b for api, _, b in ctrl.requests if api == "Fetch")
        assert fetch["ClusterId"] is None  # unknown without DescribeCluster
    finally:
        src.stop()


def test_no_describe_cluster_v1_falls_back(ctrl: FakeController) -> None:
    ctrl.api_keys[60] = (0, 0)
    ctrl.append([topic_record("a")])
    src, col = start(ctrl.endpoint)
    try:
        col.wait_for(lambda: col.offsets() == [0])
        assert any("does not support DescribeCluster v1" in str(w) for w in col.of(LiveWarning))
    finally:
        src.stop()


def test_wrong_cluster_id_is_refused(ctrl: FakeController) -> None:
    with pytest.raises(LiveError) as ei:
        LiveSource(ctrl.endpoint, cluster_id="AAAAAAAAAAAAAAAAAAAAAA").connect()
    assert (
        str(ei.value)
        == f"wrong cluster: {ctrl.endpoint} belongs to cluster {CLUSTER}, not AAAAAAAAAAAAAAAAAAAAAA"
    )


def test_inconsistent_cluster_id_from_fetch(ctrl: FakeController) -> None:
    ctrl.describe_cluster_error = 35  # no cluster id from DescribeCluster: Fetch does the check
    src = LiveSource(ctrl.endpoint, cluster_id="AAAAAAAAAAAAAAAAAAAAAA", max_wait_ms=100)
    with pytest.raises(
        LiveError, match="wrong cluster: .* is not a controller of cluster AAAAAAAAAAAAAAAAAAAAAA"
    ):
        src.run_until_caught_up(timeout=10)
    assert src.status.state == "failed"


def test_cluster_authorization_failed_is_one_line(ctrl: FakeController) -> None:
    ctrl.hooks["Fetch"] = lambda v, b: {"ErrorCode": 31, "Responses": []}
    with pytest.raises(AuthorizationError) as ei:
        LiveSource(ctrl.endpoint).run_until_caught_up(timeout=10)
    assert "CLUSTER_ACTION on the CLUSTER resource" in str(ei.value)


# ---------------------------------------------------------------------------------------------------
# streaming


def test_first_fetch_is_an_observer_fetch(ctrl: FakeController) -> None:
    ctrl.epoch = 7
    ctrl.append([topic_record("a"), topic_record("b")])
    src = LiveSource(ctrl.endpoint, max_wait_ms=100)
    st = src.run_until_caught_up(timeout=10)
    assert st.applied_offset == 1 and st.leader_epoch == 7 and st.high_watermark == 2
    fetches = [(v, b) for api, v, b in ctrl.requests if api == "Fetch"]
    v, first = fetches[0]
    assert v == 17
    part = first["Topics"][0]["Partitions"][0]
    assert first["Topics"][0]["TopicId"] == METADATA_TOPIC_ID
    assert first["ReplicaState"] == {"ReplicaId": -1, "ReplicaEpoch": -1}
    assert first["ClusterId"] == CLUSTER
    assert (part["FetchOffset"], part["LastFetchedEpoch"], part["CurrentLeaderEpoch"]) == (0, 0, 0)
    # FENCED_LEADER_EPOCH taught the epoch; the next fetch uses it
    assert fetches[1][1]["Topics"][0]["Partitions"][0]["CurrentLeaderEpoch"] == 7


def test_fetch_v13_sends_replica_id_minus_one(ctrl: FakeController) -> None:
    ctrl.api_keys[1] = (4, 13)
    ctrl.append([topic_record("a")])
    LiveSource(ctrl.endpoint, max_wait_ms=100).run_until_caught_up(timeout=10)
    v, first = next((v, b) for api, v, b in ctrl.requests if api == "Fetch")
    assert v == 13 and first["ReplicaId"] == -1


def test_records_wait_for_the_high_watermark(ctrl: FakeController) -> None:
    ctrl.append([topic_record("a")])
    ctrl.append([topic_record("b"), topic_record("c")], commit=False)
    src, col = start(ctrl.endpoint)
    try:
        col.wait_for(lambda: col.offsets() == [0])
        time.sleep(0.3)
        assert col.offsets() == [0]
        ctrl.commit(2)  # HW inside the second batch: only offset 1 is committed
        col.wait_for(lambda: col.offsets() == [0, 1])
        time.sleep(0.2)
        assert col.offsets() == [0, 1]
        ctrl.append([topic_record("d")])
        col.wait_for(lambda: col.offsets() == [0, 1, 2, 3])
        partial = [cb for ev in col.of(RecordsCommitted) for cb in ev.batches if not cb.complete]
        assert len(partial) == 2  # the batch cut by the HW, then its rest
        assert src.status.lag == 0
    finally:
        src.stop()


def test_truncated_last_batch_is_ignored(ctrl: FakeController) -> None:
    for name in ("a", "b", "c"):
        ctrl.append([topic_record(name)])
    calls = []

    def cut(version: int, body: dict[str, Any]) -> dict[str, Any] | None:
        calls.append(1)
        if len(calls) == 2:  # after the epoch round trip: all of batch 0, half of batch 1
            data = ctrl.records_from(0)
            first = len(ctrl.batches[0])
            return ctrl.fetch_response(ctrl._partition(Records=data[: first + 30]))
        return None

    ctrl.hooks["Fetch"] = cut
    src, col = start(ctrl.endpoint)
    try:
        col.wait_for(lambda: col.offsets() == [0, 1, 2])
        assert not col.of(LiveWarning)
        offsets = [
            b["Topics"][0]["Partitions"][0]["FetchOffset"] for api, _, b in ctrl.requests if api == "Fetch"
        ]
        assert offsets[:3] == [0, 0, 1]
    finally:
        src.stop()


def test_batch_starting_before_the_fetch_offset_is_not_redelivered(ctrl: FakeController) -> None:
    ctrl.append([topic_record("a"), topic_record("b")])
    ctrl.append([topic_record("c")])

    def from_zero(version: int, body: dict[str, Any]) -> dict[str, Any] | None:
        part = body["Topics"][0]["Partitions"][0]
        if part["FetchOffset"] > 0 and part["CurrentLeaderEpoch"] == ctrl.epoch:
            # a leader may send whole batches that start before the fetch offset
            return ctrl.fetch_response(ctrl._partition(Records=ctrl.records_from(0)))
        return None

    ctrl.hooks["Fetch"] = from_zero
    src, col = start(ctrl.endpoint)
    try:
        col.wait_for(lambda: len(col.offsets()) >= 3)
        time.sleep(0.3)
        assert col.offsets() == [0, 1, 2]
    finally:
        src.stop()


def test_diverging_epoch_truncates_pending_records(ctrl: FakeController) -> None:
    ctrl.append([topic_record("a")])  # offset 0, committed
    ctrl.append([topic_record("lost1"), topic_record("lost2")], commit=False)  # 1-2, epoch 1, never committed
    src, col = start(ctrl.endpoint)
    try:
        col.wait_for(lambda: col.offsets() == [0])
        col.wait_for(lambda: src._observer.fetch_offset == 3)
        sent = []

        def diverge(version: int, body: dict[str, Any]) -> dict[str, Any] | None:
            part = body["Topics"][0]["Partitions"][0]
            if part["CurrentLeaderEpoch"] == 2 and part["LastFetchedEpoch"] == 1 and part["FetchOffset"] == 3:
                sent.append(1)
                return ctrl.fetch_response(ctrl._partition(DivergingEpoch={"Epoch": 1, "EndOffset": 1}))
            return None

        # new leader epoch 2 whose log diverged after offset 0 (one atomic change)
        with ctrl.cond:
            ctrl.hooks["Fetch"] = diverge
            ctrl.epoch = 2
            ctrl.batches = ctrl.batches[:1]
            ctrl.next_offset = 1
            ctrl.append([topic_record("new1"), topic_record("new2")], epoch=2)
        col.wait_for(lambda: len(col.offsets()) >= 3)
        time.sleep(0.2)
        assert sent
        assert col.offsets() == [0, 1, 2]
        assert col.values()[1:] == [topic_record("new1"), topic_record("new2")]
        assert not col.of(ImageReset)
    finally:
        src.stop()


def test_snapshot_paged_download_and_restart_when_it_vanishes(ctrl: FakeController) -> None:
    values = [topic_record(f"t{i}") for i in range(10)]
    snap = make_snapshot(12, 1, values)
    ctrl.snapshot = (12, 1, snap)
    ctrl.log_start = ctrl.next_offset = ctrl.hw = 12
    ctrl.append([topic_record("after")])  # offset 12
    pages = []

    def flaky(version: int, body: dict[str, Any]) -> dict[str, Any] | None:
        pages.append(body["Topics"][0]["Partitions"][0]["Position"])
        if len(pages) == 3:  # the leader deleted the snapshot mid-download
            return {
                "ErrorCode": 0,
                "Topics": [
                    {
                        "Name": "__cluster_metadata",
                        "Partitions": [
                            {"Index": 0, "ErrorCode": 98, "SnapshotId": {"EndOffset": 12, "Epoch": 1}}
                        ],
                    }
                ],
            }
        return None

    ctrl.hooks["FetchSnapshot"] = flaky
    src, col = start(ctrl.endpoint)
    try:
        col.wait_for(lambda: col.offsets() == [12])
        loaded = col.of(SnapshotLoaded)
        assert len(loaded) == 1
        assert loaded[0].read_bytes() == snap and loaded[0].snapshot_id.end_offset == 12
        assert pages[:4] == [0, 64, 128, 0]  # restarted from position 0 after SNAPSHOT_NOT_FOUND
        assert src.status.snapshot_id is not None
        v = next(v for api, v, _ in ctrl.requests if api == "FetchSnapshot")
        assert v == 1
    finally:
        src.stop()


def test_not_leader_follows_node_endpoints() -> None:
    a, b = FakeController(node_id=1, epoch=3), FakeController(node_id=2, epoch=3)
    try:
        a.leader_id = b.leader_id = 2
        a.peers = {2: ("127.0.0.1", b.port)}
        a.hooks["DescribeCluster"] = lambda v, body: {
            "ErrorCode": 0,
            "ClusterId": CLUSTER,
            "ControllerId": -1,
            "Brokers": [{"BrokerId": 1, "Host": "127.0.0.1", "Port": a.port}],
        }
        b.append([topic_record("x")], epoch=3)
        src = LiveSource(a.endpoint, max_wait_ms=100)
        st = src.run_until_caught_up(timeout=10)
        assert st.leader_id == 2 and st.endpoint == b.endpoint and st.applied_offset == 0
    finally:
        a.kill()
        b.kill()


def test_unknown_leader_is_found_through_describe_quorum_nodes() -> None:
    a, b = FakeController(node_id=1, epoch=4), FakeController(node_id=2, epoch=4)
    try:
        for c in (a, b):
            c.api_keys[1] = (4, 16)  # no NodeEndpoints in Fetch responses before v17
            c.describe_cluster_error = 35  # and no controller list from DescribeCluster
            c.leader_id = 2
        a.peers = {2: ("127.0.0.1", b.port)}
        b.append([topic_record("x")], epoch=4)
        st = LiveSource(a.endpoint, max_wait_ms=100).run_until_caught_up(timeout=10)
        assert st.leader_id == 2 and st.endpoint == b.endpoint and st.applied_offset == 0
        assert any(api == "DescribeQuorum" for api, _, _ in a.requests)
    finally:
        a.kill()
        b.kill()


def test_controller_death_moves_to_another_controller() -> None:
    a, b = FakeController(node_id=1), FakeController(node_id=2)
    try:
        a.peers = {2: ("127.0.0.1", b.port)}
        for c in (a, b):
            c.append([topic_record("x")])
        src, col = start(a.endpoint)
        col.wait_for(lambda: col.offsets() == [0])
        a.kill()
        with b.cond:
            b.leader_id = 2
            b.epoch = 2
        b.append([topic_record("y")], epoch=2)
        col.wait_for(lambda: col.offsets() == [0, 1], timeout=15)
        assert src.status.leader_id == 2 and src.status.leader_epoch == 2
        src.stop()
    finally:
        a.kill()
        b.kill()


def test_one_shot_waits_for_the_high_watermark_at_start(ctrl: FakeController) -> None:
    for i in range(5):
        ctrl.append([topic_record(f"t{i}")])
    col = Collector()
    st = LiveSource(ctrl.endpoint, max_wait_ms=100).run_until_caught_up(col, timeout=10)
    assert st.caught_up and st.start_high_watermark == 5
    assert col.offsets() == [0, 1, 2, 3, 4]


def test_one_shot_times_out_when_nothing_commits(ctrl: FakeController) -> None:
    ctrl.append([topic_record("a")], commit=False)
    ctrl.hw = -1
    # the controller answers: the message names what never came (it said the quorum did not answer)
    with pytest.raises(LiveConnectionError, match="timed out after 1s waiting for a high watermark: ") as e:
        LiveSource(ctrl.endpoint, max_wait_ms=100).run_until_caught_up(timeout=1)
    assert f"{ctrl.endpoint} answers" in str(e.value) and "reports nothing committed" in str(e.value)


def test_a_timeout_says_the_high_watermark_the_leader_reported(ctrl: FakeController) -> None:
    """Issue 55: a leader reporting a high watermark of 6,000,000 over a log of one record (what no
    real controller can be made to do): the timeout names the leader, its epoch, that high
    watermark and how far the client got, instead of "nothing committed"."""
    ctrl.append([topic_record("a")])
    ctrl.hw = 6_000_000
    with pytest.raises(LiveConnectionError) as e:
        LiveSource(ctrl.endpoint, max_wait_ms=100).run_until_caught_up(timeout=1)
    said = str(e.value)
    assert "nothing committed" not in said, said
    assert "reports high watermark 6000000" in said and "applied up to offset 0" in said, said
    assert f"leader {ctrl.leader_id} (epoch {ctrl.epoch})" in said, said


def test_describe_quorum_uses_a_separate_connection(ctrl: FakeController) -> None:
    ctrl.append([topic_record("a")])
    src, col = start(ctrl.endpoint)
    try:
        col.wait_for(lambda: col.offsets() == [0])
        q = src.describe_quorum()
        assert q["LeaderId"] == 1 and q["HighWatermark"] == 1
    finally:
        src.stop()


def test_stop_interrupts_a_long_poll(ctrl: FakeController) -> None:
    src, _col = start(ctrl.endpoint, max_wait_ms=20_000)
    time.sleep(0.5)
    t0 = time.monotonic()
    src.stop()
    assert time.monotonic() - t0 < 2
    assert src.status.state == "stopped"


# ---------------------------------------------------------------------------------------------------
# SASL answers a real controller only gives when misconfigured


def _sasl_config(mechanism: str) -> ClientConfig:
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    return ClientConfig.from_properties(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": f'org.apache.kafka.common.security.{module} required username="u" password="pw-123";',
        }
    )


def test_unsupported_sasl_mechanism_is_one_line(ctrl: FakeController) -> None:
    ctrl.hooks["SaslHandshake"] = lambda v, b: {"ErrorCode": 33, "Mechanisms": ["PLAIN"]}
    with pytest.raises(LiveError) as ei:
        LiveSource(ctrl.endpoint, _sasl_config("SCRAM-SHA-512")).connect()
    assert str(ei.value) == (
        f"{ctrl.endpoint} does not enable SASL mechanism SCRAM-SHA-512 (enabled: PLAIN); check sasl.mechanism"
    )


def test_sasl_against_a_plaintext_listener_is_one_line(ctrl: FakeController) -> None:
    ctrl.hooks["SaslHandshake"] = lambda v, b: {"ErrorCode": 34, "Mechanisms": []}
    with pytest.raises(
        LiveError, match=r"does not expect SASL authentication \(is the listener PLAINTEXT or SSL"
    ):
        LiveSource(ctrl.endpoint, _sasl_config("PLAIN")).connect()


def test_sasl_authentication_failed_is_one_line_without_the_password(ctrl: FakeController) -> None:
    ctrl.hooks["SaslHandshake"] = lambda v, b: {"ErrorCode": 0, "Mechanisms": ["PLAIN"]}
    seen = []

    def auth(version: int, body: dict[str, Any]) -> dict[str, Any]:
        seen.append((version, body["AuthBytes"]))
        return {"ErrorCode": 58, "ErrorMessage": "Authentication failed: Invalid username or password"}

    ctrl.hooks["SaslAuthenticate"] = auth
    with pytest.raises(LiveError) as ei:
        LiveSource(ctrl.endpoint, _sasl_config("PLAIN")).connect()
    assert str(ei.value) == (
        f"SASL authentication failed on {ctrl.endpoint} (PLAIN, user 'u'): "
        "Authentication failed: Invalid username or password"
    )
    assert "pw-123" not in str(ei.value)
    assert seen == [(2, b"\0u\0pw-123")]
    # ApiVersions first (allowed before authentication), then the handshake
    assert [api for api, _, _ in ctrl.requests][:3] == ["ApiVersions", "SaslHandshake", "SaslAuthenticate"]


# ---------------------------------------------------------------------------------------------------
# error answers to Fetch


def test_top_level_fetch_error_is_one_line(ctrl: FakeController) -> None:
    ctrl.hooks["Fetch"] = lambda v, b: {"ErrorCode": 42, "Responses": []}
    with pytest.raises(LiveError) as ei:
        LiveSource(ctrl.endpoint).run_until_caught_up(timeout=10)
    assert str(ei.value) == f"{ctrl.endpoint} rejected Fetch: INVALID_REQUEST"


def test_partition_error_is_one_line(ctrl: FakeController) -> None:
    ctrl.hooks["Fetch"] = lambda v, b: ctrl.fetch_response(ctrl._partition(ErrorCode=3))
    with pytest.raises(
        LiveError,
        match=r"rejected Fetch of __cluster_metadata-0: UNKNOWN_TOPIC_OR_PARTITION "
        r"\(offset 0, epoch 0\)",
    ):
        LiveSource(ctrl.endpoint).run_until_caught_up(timeout=10)


def test_old_broker_without_describe_cluster_v1_is_named(ctrl: FakeController) -> None:
    ctrl.api_keys[60] = (0, 0)
    ctrl.api_keys[3] = (0, 12)  # Metadata: only brokers serve it
    with pytest.raises(LiveError, match="this is a broker endpoint"):
        LiveSource(ctrl.endpoint).connect()


def test_an_advertised_host_that_cannot_be_encoded_is_one_line() -> None:
    """The leader's advertised host has a 64-character label: the resolver's IDNA step raised a
    UnicodeError (chained tracebacks); now it is a connection failure like any other."""
    a = FakeController(node_id=1, epoch=4)
    try:
        a.api_keys[1] = (4, 16)
        a.describe_cluster_error = 35
        a.leader_id = 2
        a.peers = {2: ("a" * 64, 9093)}
        with pytest.raises(LiveError) as e:
            LiveSource(a.endpoint, max_wait_ms=100).run_until_caught_up(timeout=3)
        assert "UnicodeError" not in str(e.value) and "\n" not in str(e.value)
    finally:
        a.kill()


def starts_after_a_snapshot(ctrl: FakeController) -> None:
    """``ctrl``'s log starts after a snapshot ending at offset 12 (topic t); one record follows."""
    ctrl.snapshot = (12, 1, make_snapshot(12, 1, [topic_record("t")]))
    ctrl.log_start = ctrl.next_offset = ctrl.hw = 12
    ctrl.append([topic_record("after")])


def refused_in_one_line(ctrl: FakeController, pattern: str) -> None:
    """A live client of ``ctrl`` stops with one line matching ``pattern``."""
    with pytest.raises(LiveError, match=pattern) as e:
        LiveSource(ctrl.endpoint, max_wait_ms=100).run_until_caught_up(timeout=10)
    assert "\n" not in str(e.value)


def test_a_snapshot_over_the_cap_is_refused_with_one_line(ctrl: FakeController) -> None:
    """FetchSnapshot had no size cap: a controller announcing an endless snapshot grew memory by
    5 GB a minute (the disk, now that a download goes to a temporary file).  An announced size over
    MAX_SNAPSHOT_BYTES is refused before a page is kept."""
    from metashell.live.observer import MAX_SNAPSHOT_BYTES

    starts_after_a_snapshot(ctrl)
    real = ctrl._FetchSnapshot

    def huge(version: int, body: dict[str, Any]) -> dict[str, Any]:
        resp = real(version, body)
        resp["Topics"][0]["Partitions"][0]["Size"] = MAX_SNAPSHOT_BYTES + 1
        return resp

    ctrl.hooks["FetchSnapshot"] = huge
    refused_in_one_line(ctrl, f"more than the {MAX_SNAPSHOT_BYTES} live mode downloads")


def test_a_full_disk_while_a_snapshot_downloads_is_one_line(
    ctrl: FakeController, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A download goes to a temporary file (not memory): a disk that fills meanwhile stops live
    mode with one line naming the snapshot, not a traceback on the live thread.  (A full disk is
    the one fault here the real thing cannot be made to produce: the file is faked.)"""
    import io
    import tempfile

    class FullDisk(io.BytesIO):
        def write(self, data: Any) -> int:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", lambda **_kw: FullDisk())
    starts_after_a_snapshot(ctrl)
    refused_in_one_line(ctrl, r"cannot keep snapshot 0+12-0+1 while it downloads: .*No space")


def test_records_above_a_stuck_high_watermark_are_held_under_a_cap(
    ctrl: FakeController, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A controller that keeps appending but never advances its high watermark: what waits above it
    is held under MAX_PENDING_BYTES (memory grew by 3.5 GB a minute); once the leader commits,
    every record still arrives, once."""
    from metashell.live import observer

    monkeypatch.setattr(observer, "MAX_PENDING_BYTES", 4096)
    ctrl.append([topic_record("first")])  # offset 0, committed
    src, col = start(ctrl.endpoint, max_wait_ms=50)
    try:
        col.wait_for(lambda: col.offsets() == [0])
        obs = src._observer
        assert obs is not None
        for i in range(400):  # appended while the client fetches, never committed
            ctrl.append([topic_record(f"t{i}")], commit=False)
            if i % 20 == 0:
                time.sleep(0.05)
        time.sleep(0.5)
        held, fetched = obs.pending_bytes, obs.fetch_offset
        assert held < 4096 + 16 * 1024, held  # the cap, plus the response that crossed it
        assert fetched < 401, fetched  # it stopped taking records
        with ctrl.cond:
            ctrl.hw = ctrl.next_offset
            ctrl.cond.notify_all()
        col.wait_for(lambda: col.offsets() == list(range(401)), timeout=20)
    finally:
        src.stop()


def test_a_record_that_does_not_parse_is_fetched_again_and_nothing_after_it_arrives(
    ctrl: FakeController,
) -> None:
    """Records are decoded as they are delivered, not as they are fetched (what waits above the
    high watermark costs its bytes only).  A batch whose CRC holds but whose record does not parse
    ends the connection with its reason, nothing after it is delivered, and it is fetched again
    from where it starts: once the controller serves it whole, every record arrives, once."""
    from test_log_hostile import frame

    ctrl.append([topic_record("a")])
    with ctrl.cond:
        ctrl.batches.append(frame(b"\x7f\x7f\x7f", base_offset=1))  # one record that does not parse
        ctrl.next_offset = 2
    ctrl.append([topic_record("c")])
    src, col = start(ctrl.endpoint, max_wait_ms=50)
    try:
        wait_until(lambda: "bad record batch" in (src.status.last_error or ""))
        assert col.offsets() == [0]
        with ctrl.cond:
            ctrl.batches[1] = build_batch(1, ctrl.epoch, [topic_record("b")], int(time.time() * 1000))
        col.wait_for(lambda: col.offsets() == [0, 1, 2])
        assert [v == topic_record(n) for v, n in zip(col.values(), "abc", strict=True)] == [True] * 3
    finally:
        src.stop()


def test_committed_records_wait_for_the_shell_under_a_cap(
    ctrl: FakeController, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shell that does not apply what arrives (a REPL at its prompt, a paused TUI, ``watch``
    between looks) holds at most MAX_QUEUED_RECORDS: the live thread then waits, so memory stays
    bounded however fast the leader commits.  Once the shell applies, the rest arrives."""
    from metashell.image import live_feed
    from metashell.live import observer

    monkeypatch.setattr(live_feed, "MAX_QUEUED_RECORDS", 50)
    monkeypatch.setattr(observer, "DELIVER_CHUNK_RECORDS", 10)
    for i in range(200):
        ctrl.append([topic_record(f"t{i:03d}-{j}") for j in range(5)])
    session = live_feed.LiveSession(ctrl.endpoint, max_wait_ms=50)
    try:
        wait_until(lambda: session.pending() > 40)
        obs = session.source._observer
        assert obs is not None
        assert session.pending() <= 50 and obs.delivered_next <= 50 + 10, obs.delivered_next
        wait_until(lambda: (session.sync(), session.applied_offset)[1] == 999)
        assert len(session.image.topics.by_name) == 1000
    finally:
        session.close()


def test_a_catch_up_in_small_events_is_frozen_as_a_load_is(
    ctrl: FakeController, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catch-up that arrives as many events each below BULK_RECORDS (the Python engine's
    8,192-record events) leaves what it made out of the collector's generations, as a directory
    load does, and the collector enabled."""
    import gc

    from metashell.image import live_feed
    from metashell.live import observer

    monkeypatch.setattr(observer, "DELIVER_CHUNK_RECORDS", 10)
    for i in range(100):
        ctrl.append([topic_record(f"t{i:03d}-{j}") for j in range(5)])
    gc.unfreeze()
    session = live_feed.LiveSession(ctrl.endpoint, max_wait_ms=50)
    try:
        session.wait_caught_up(60)
        assert gc.isenabled()
        topics = list(session.image.topics.by_name.values())
        assert len(topics) == 500
        # gc.get_objects() walks the collector's generations, not the permanent one
        young = {id(o) for o in gc.get_objects()}
        assert not any(id(t) in young for t in topics), "the catch-up's topics were not frozen"
    finally:
        session.close()
        gc.unfreeze()


def test_a_catch_up_that_gives_up_leaves_the_collector_enabled(ctrl: FakeController) -> None:
    import gc

    from metashell.image import live_feed

    ctrl.append([topic_record("a")])
    ctrl.hw = 6_000_000
    session = live_feed.LiveSession(ctrl.endpoint, max_wait_ms=50)
    try:
        with pytest.raises(LiveConnectionError):
            session.wait_caught_up(0.5)
        assert gc.isenabled()
    finally:
        session.close()


@pytest.mark.parametrize("fault", [MemoryError(), SystemError("error return without exception set")])
def test_running_out_of_memory_while_following_is_one_line(
    ctrl: FakeController,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fault: Exception,
) -> None:
    """Memory that runs out in the live thread (an injected fault: a real one would take the
    machine's memory) ends the stream with one line naming the controller and offset, exit 1, where
    it was a logged traceback and a shell that waited on."""
    from metashell.cli import main
    from metashell.live import observer

    ctrl.append([topic_record("a")])

    def full(self: observer.Observer, *args: object) -> None:
        raise fault

    monkeypatch.setattr(observer.Observer, "_deliver", full)
    assert main(["-q", ctrl.endpoint, "-c", "ls /"]) == 1
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert line.startswith("error: ") and "live mode: out of memory following" in line, err
    assert "at offset 0" in line and "Traceback" not in err
