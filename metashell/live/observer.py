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
import tempfile
import time
from collections import deque
from collections.abc import Callable
from typing import Any, BinaryIO

from metashell.errors import DecodeError
from metashell.live import errors as E
from metashell.live.connection import Connection, Endpoint
from metashell.live.errors import (
    KafkaProtocolError,
    LiveConnectionError,
    LiveError,
)
from metashell.live.events import (
    CommittedBatch,
    ImageReset,
    RecordsCommitted,
    SnapshotId,
    SnapshotLoaded,
)
from metashell.log.offset_rules import check_snapshot_file
from metashell.log.problems import LogWarning
from metashell.log.records import CHECK_KEEPS_NOTHING, Entry
from metashell.log.scan import iter_batches
from metashell.protocol.uuid import METADATA_TOPIC_ID

from .quorum_client import (
    METADATA_TOPIC,
    Pending,
    QuorumClient,
    Redirect,
    Refetch,
)

log = logging.getLogger("metashell.live")

#: Raft ignores MaxBytes (it sends at most 8 MiB); we state it anyway.
FETCH_MAX_BYTES = 8 * 1024 * 1024
SNAPSHOT_PAGE_BYTES = 8 * 1024 * 1024
#: Fetch responses held for records above the high watermark (they wait there for it to advance):
#: past this, no more is taken until the leader commits what is held.  A controller that never
#: advanced its high watermark made memory grow without limit (3.5 GB in a minute).
MAX_PENDING_BYTES = 256 * 1024 * 1024
#: ... and batches held, whatever their size (a held batch costs a few hundred bytes of objects
#: beside its bytes: a million one-record batches held 400 MB).
MAX_PENDING_BATCHES = 100_000
#: Committed records are handed over in events of about this many (whole batches): a leader that
#: commits 256 MiB of tiny records at once must not have them all decoded into one event
#: (~200 bytes of Python objects per record: 5 GB).  The consumer's queue bounds the events
#: (``image.live_feed.MAX_QUEUED_RECORDS``).
DELIVER_CHUNK_RECORDS = 8192
#: The largest snapshot live mode downloads (into a temporary file, read back a chunk at a time).  A
#: snapshot of a million partitions is a few hundred MB; a controller announcing more than this is
#: refused with one line, where an endless download grew by 5 GB a minute until memory ran out.
MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024 * 1024
BACKOFF_START = 0.05
BACKOFF_MAX = 1.0


class Observer(QuorumClient):
    """Runs in one thread.  :meth:`bootstrap` then :meth:`run`; :meth:`stop` from any thread.  The
    connection, discovery and error rules are :class:`~.quorum_client.QuorumClient`'s; this class
    fetches: records, the high watermark, divergence and snapshots."""

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
            except Redirect as r:
                self._follow(r)
                sleep = r.leader_id < 0
            except Refetch as r:
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
            raise Redirect(leader.get("LeaderId", -1), leader.get("LeaderEpoch", -1), E.error_name(code))
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
            # framing and CRC are checked here; the records are decoded only as they are delivered,
            # so what waits above the high watermark costs its bytes, not ~200 bytes a record
            for batch in iter_batches(data, f"fetch from {ep}", warn=ignore_torn, decode=False):
                if batch.last_offset < self.fetch_offset:
                    continue
                lo = max(batch.base_offset, self.fetch_offset)
                self.pending.append(Pending(batch, lo, batch.last_offset + 1))
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
        records = 0
        while self.pending and hw >= 0:
            pend = self.pending[0]
            lo = max(pend.lo, self.delivered_next)
            if hw <= lo:
                break
            upto = min(pend.hi, hw)
            if upto > lo:
                b = pend.batch
                whole = lo == b.base_offset and upto == b.last_offset + 1
                try:
                    entries = self._entries_of(pend, source, whole)
                except LiveConnectionError:
                    if out:  # what parsed before it is committed and delivered
                        self.sink(RecordsCommitted(out, hw, source, received_at))
                    raise
                if entries is None:  # whole, checked: the session applies it from its bytes
                    out.append(CommittedBatch(b, None, True))
                    records += b.records_count
                else:
                    if not whole:
                        entries = [e for e in entries if lo <= e[0] < upto]
                    if entries:
                        out.append(CommittedBatch(b, entries, whole))
                        records += len(entries)
                self.delivered_next = upto
            if upto >= pend.hi:
                self.pending.popleft()
            else:
                pend.lo = upto
                break
            if records >= DELIVER_CHUNK_RECORDS:  # hand this much over before decoding more
                self.sink(RecordsCommitted(out, hw, source, received_at))
                out, records = [], 0
        if not self.pending:
            self._drop_pending()
        if out:
            self.sink(RecordsCommitted(out, hw, source, received_at))
        self._publish_position(state="streaming" if self.delivered_next >= hw >= 0 else "catching-up")

    def _drop_pending(self) -> None:
        """Nothing waits above the high watermark any more (delivered, diverged, replaced by a
        snapshot or to be fetched again): the cap and its warning start over."""
        self.pending.clear()
        self.pending_bytes = 0
        self._told_full = False

    def _entries_of(self, pend: Pending, source: str, whole: bool) -> list[Entry] | None:
        """The records of a batch about to be delivered; None for a ``whole`` batch when the engine
        checks records without making them (the session then applies it from its bytes, as a
        directory's segment).  One that does not parse (its CRC held: a controller wrote it so)
        ends this connection like a bad fetch, and is fetched again from where it starts: nothing
        after it is delivered first."""
        try:
            if whole and CHECK_KEEPS_NOTHING and not pend.batch.is_control:
                pend.batch.check()
                return None
            return pend.batch.entries()
        except DecodeError as e:
            self._drop_pending()
            self.fetch_offset = max(pend.lo, self.delivered_next)
            raise LiveConnectionError(f"bad record batch from {source}: {e}") from None

    def _diverge(self, end_offset: int, epoch: int) -> None:
        log.info("diverging epoch %s ends at %s: truncating pending records", epoch, end_offset)
        if end_offset < self.delivered_next:
            # Raft never truncates committed records; if a controller did, start over.
            self._warn(
                f"controller log diverged at offset {end_offset}, below the committed offset "
                f"{self.delivered_next}: reloading from the start"
            )
            self.sink(ImageReset(f"log diverged at offset {end_offset}"))
            self._drop_pending()
            self.fetch_offset = self.delivered_next = 0
            self.last_fetched_epoch = 0
            return
        kept: deque[Pending] = deque()
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
        source = f"snapshot {snap} from {conn.endpoint}"

        def warn(w: LogWarning) -> None:
            self._warn(str(w))

        # into an unnamed file, not memory (events.SnapshotLoaded); closed here unless handed over
        try:
            f = tempfile.TemporaryFile(prefix="metashell-snapshot-")  # noqa: SIM115
        except OSError as e:  # no writable temporary directory ($TMPDIR)
            raise LiveError(f"cannot keep snapshot {snap} while it downloads: {e}") from None
        try:
            size = self._download(conn, snap, f)
            try:  # checked whole, keeping nothing: the loader reads it again (image/fetched_snapshot.py)
                check_snapshot_file(f, source, warn)
            except DecodeError as e:
                raise LiveError(f"{e}") from None
        except BaseException:
            f.close()
            raise
        self._drop_pending()
        self.fetch_offset = self.delivered_next = snap.end_offset
        self.last_fetched_epoch = snap.epoch
        if hw >= 0:
            self.high_watermark = hw
        self.sink(SnapshotLoaded(snap, f, size, hw, source))
        self.status = self.status.evolve(snapshot_id=snap)
        self._publish_position(
            state="streaming" if self.delivered_next >= self.high_watermark >= 0 else "catching-up"
        )

    def _download(self, conn: Connection, snap: SnapshotId, out: BinaryIO) -> int:
        """Fetch the snapshot page by page into ``out``; returns its size."""
        have = 0  # bytes written to ``out``
        size = -1
        while size < 0 or have < size:
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
                                "Position": have,
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
                raise Redirect(leader.get("LeaderId", -1), leader.get("LeaderEpoch", -1), E.error_name(code))
            if code in (E.SNAPSHOT_NOT_FOUND, E.POSITION_OUT_OF_RANGE):
                raise Refetch(f"snapshot {snap}: {E.error_name(code)} after {have} bytes")
            if code != E.NONE:
                self._partition_error("FetchSnapshot", code, conn.endpoint)
            got = p.get("SnapshotId") or {}
            if (got.get("EndOffset"), got.get("Epoch")) != (snap.end_offset, snap.epoch):
                raise Refetch(f"asked for snapshot {snap}, got {got}")
            if p["Position"] != have:
                raise Refetch(f"snapshot page at position {p['Position']}, expected {have}")
            chunk = p.get("UnalignedRecords") or b""
            size = p["Size"]
            if size > MAX_SNAPSHOT_BYTES:
                raise LiveError(
                    f"{conn.endpoint} offers snapshot {snap} of {size} bytes, more than the "
                    f"{MAX_SNAPSHOT_BYTES} live mode downloads: read the node's directory with -d"
                )
            if not chunk and have < size:
                raise Refetch(f"empty snapshot page at position {have} of {size}")
            if have + len(chunk) > size:
                raise Refetch(f"snapshot {snap} longer than its announced {size} bytes")
            try:
                out.write(chunk)
                if have + len(chunk) == size:
                    out.flush()
            except OSError as e:  # a full disk: one line, not a traceback on the live thread
                raise LiveError(f"cannot keep snapshot {snap} while it downloads: {e}") from None
            have += len(chunk)
        return size
