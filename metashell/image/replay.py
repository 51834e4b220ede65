"""Replay decoded metadata records into a :class:`MetadataImage`, with Kafka's semantics.

Kafka replays a record into a ``MetadataDelta`` (``metadata/.../image/*Delta.java``) and publishes
a new immutable image per commit.  The :class:`Replayer` mutates one image in place instead, one
record at a time, and reproduces what Kafka's published images contain.  The reference is Kafka
4.4.0 itself: the rules below were read from the bytecode of ``kafka-metadata-4.4.0.jar``
(``javap -c``: PartitionRegistration, BrokerRegistration, ClusterDelta, TopicsDelta, TopicDelta,
FeaturesDelta, ConfigurationDelta, ScramDelta, MetadataDelta, MetadataBatchLoader) and are checked
against Kafka 4.4's metadata shell by ``tests/test_image_oracle.py``:

* every record handler validates first and mutates last, so a record Kafka rejects with an
  exception (a "fault": PartitionChange for an unknown partition, broker epoch mismatch, ...)
  leaves the image untouched; the fault is recorded as a :class:`ReplayWarning` with its offset and
  loading continues, as Kafka's ``LoggingFaultHandler`` does;
* PartitionChangeRecord (``PartitionRegistration.merge``): null / -1 / -2 mean "unchanged", any
  Leader other than -2 bumps the leader epoch, the partition epoch always goes up by one;
  directories are the record's when given, else the old ones (not remapped when only the replicas
  change); all-MIGRATING or empty directories become MIGRATING per (new) replica; any remaining
  length mismatch is a fault;
* 4.x records: ClearElrRecord empties ELR and last-known ELR of every partition that has one (a
  merge, so partition epoch + 1) for one topic or, with an empty name, all topics; an unknown name
  is a fault.  UnregisterControllerRecord removes the controller (no error when unknown).
  ZkMigrationStateRecord is ignored by 4.4 (kept here for display only).  A FeatureLevelRecord for
  ``kraft.version`` is ignored; metadata.version levels below 7 (3.3-IV3) are faults;
* metadata transactions (FORMATS.md 5.3): records after BeginTransaction are buffered, applied on
  EndTransaction and dropped on AbortTransaction; provenance is only published outside
  transactions (:meth:`Replayer.end_batch`), as ``MetadataBatchLoader`` only publishes then;
* unknown record types and undecodable values become warnings and are skipped.

Hot path: ``replay_entries`` decodes and dispatches (api key -> bound method) in one loop; int lists
become interned tuples so a million partitions share a few tuple objects.  Nothing is logged per
record and decoded record dicts are not kept (except while a transaction is open).

Deliberate differences from Kafka 4.4 (each only reachable through logs the controller does not
write, or through a Kafka bug):

1. A PartitionRecord/PartitionChangeRecord for an unknown *topic* is one fault here; Kafka's
   ``TopicsDelta`` then holds a ``TopicDelta`` without an image, ``TopicDelta.apply`` throws a
   NullPointerException and the whole delta (the batch, in ``--snapshot`` mode) is lost.  The
   replayer notes such topics in :attr:`Replayer.orphan_topics`; the file-mode loader uses that to
   drop those deltas exactly as Kafka's shell does (``loader.py``, "Deltas Kafka cannot apply").
2. ``ScramDelta.apply`` bug: when, within one delta, the credentials of a mechanism all get removed
   and then (in HashMap order) another user of that mechanism is added, Kafka loses the added user.
   metashell keeps it.
3. metadata.version levels newer than 34 (4.5-IV0) are kept with an "unknown" warning (Kafka: fault).
4. Config keys Kafka's shell does not know (``DefaultSupportedConfigChecker``: unknown TOPIC /
   GROUP / CLIENT_METRICS keys, every BROKER_LOGGER key) are kept in the image; ``/image`` must hide
   them (``model.kafka_shell_shows_config``).
5. Kafka 4.4's shell keeps an empty image for a log that does not set metadata.version before its
   first commit (pre-3.3 logs, a segment read alone); metashell loads whatever is there.
6. RemoveTopicRecord deletes the topic's TOPIC configs even if they were created within the same
   delta; removing an ACL twice in one delta is a fault here, not in Kafka.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from metashell.errors import DecodeError, located
from metashell.protocol.control import ControlRecord, decode_control_record
from metashell.protocol.metadata import (
    MetadataRecord,
    ReplayDecoders,
    UnknownRecordType,
    UnsupportedRecordVersion,
    decode_metadata_record,
)
from metashell.protocol.registry import DECODE_ERRORS
from metashell.protocol.uuid import uuid_java_order, uuid_to_str

from .image import MetadataImage, SnapshotInfo
from .model import (
    CONFIG_RESOURCE_TOPIC,
    CONFIG_RESOURCE_TYPE_NAMES,
    EMPTY,
    METADATA_VERSION_FEATURE,
    METADATA_VERSION_NAMES,
    MIGRATING_DIR,
    NO_LEADER_CHANGE,
    SECURITY_PROTOCOL_NAMES,
    Acl,
    BrokerRegistration,
    ControllerRegistration,
    DelegationToken,
    Endpoint,
    Partition,
    ScramCredential,
    Topic,
    Voter,
)
from .timeline import MISSING, Journal, kept

BEGIN_TRANSACTION, END_TRANSACTION, ABORT_TRANSACTION = 23, 24, 25
_TXN_KEYS = frozenset((BEGIN_TRANSACTION, END_TRANSACTION, ABORT_TRANSACTION))
_MINIMUM_MV = 7  # MetadataVersion.MINIMUM_VERSION (3.3-IV3) in Kafka 4.x
KRAFT_VERSION_FEATURE = "kraft.version"


@dataclass(frozen=True, slots=True)
class ReplayWarning:
    """Something the loader skipped or Kafka would have reported as a fault.

    ``kind``: ``"fault"`` (Kafka's replay would throw; the record was not applied), ``"decode"``
    (bytes that do not decode), ``"unknown"`` (record type, version or value newer than known), or
    ``"log"`` or one of the log layer's tags (``"torn-tail"``, ``"gap"``, ``"partial-image"``, ...)
    for file-level problems; those carry the byte ``position`` in the file instead of an offset.
    """

    message: str
    offset: int | None = None
    source: str | None = None
    kind: str = "fault"
    position: int | None = None

    def __str__(self) -> str:
        return located(self.message, self.source, self.offset, self.position)


_FAST_PATH_MISS = (LookupError, TypeError, *DECODE_ERRORS)
"""A record the fast path cannot take: a prefix the decoder table does not serve, a null value, or
bytes the generated decoder rejects (decode_metadata_record then reports it properly)."""

# The two hottest records are decoded straight into tuples of these fields (no dict, no key
# lookups): a million PartitionRecords in a big snapshot, PartitionChangeRecords in the log.
_PARTITION_FIELDS = (
    "PartitionId",
    "TopicId",
    "Replicas",
    "Isr",
    "RemovingReplicas",
    "AddingReplicas",
    "Leader",
    "LeaderRecoveryState",
    "LeaderEpoch",
    "PartitionEpoch",
    "Directories",
    "EligibleLeaderReplicas",
    "LastKnownElr",
)
_PARTITION_CHANGE_FIELDS = (
    "PartitionId",
    "TopicId",
    "Isr",
    "Leader",
    "Replicas",
    "RemovingReplicas",
    "AddingReplicas",
    "LeaderRecoveryState",
    "Directories",
    "EligibleLeaderReplicas",
    "LastKnownElr",
)
_DECODERS = ReplayDecoders(
    {"PartitionRecord": _PARTITION_FIELDS, "PartitionChangeRecord": _PARTITION_CHANGE_FIELDS}
)


class Fault(Exception):
    """Raised inside a handler when Kafka's replay would throw; the record is not applied."""


def _principal_ok(text: str | None) -> bool:
    """``SecurityUtils.parseKafkaPrincipal`` accepts ``Type:name`` only."""
    return bool(text) and ":" in text  # type: ignore[operator]


class Replayer:
    """Applies records to ``image`` (a new empty image by default).

    Public surface::

        r = Replayer()                      # or Replayer(existing_image)
        r.source = "00000000000000000000.log"   # names warnings; set by the loader per file
        r.replay(record, offset)            # a decoded MetadataRecord
        r.replay_value(value_bytes, offset) # decode + replay (warnings on bad bytes)
        r.replay_control(ctl, offset, epoch) / r.replay_control_bytes(key, value, offset, epoch)
        r.end_batch(last_offset, epoch, max_timestamp)    # publish provenance (outside txns)
        r.finish_snapshot(SnapshotInfo)                   # provenance after a snapshot
        r.warnings, r.fault_count, r.in_transaction
    """

    def __init__(self, image: MetadataImage | None = None, *, source: str | None = None) -> None:
        self._image = image if image is not None else MetadataImage()
        self.source = source
        self.snapshot_mode = False
        """True while a snapshot is replayed: transaction markers are then faults, as in Kafka
        (``MetadataDelta.replay`` does not know them; only the log loader does)."""
        self.warnings: list[ReplayWarning] = []
        self.fault_count = 0
        self.max_warnings = 10_000
        """Warnings beyond this are counted (``fault_count``/``dropped_warnings``) but not kept."""
        self.dropped_warnings = 0
        self._txn: list[tuple[MetadataRecord, int]] | None = None
        self._txn_offset: int | None = None
        self.orphan_topics: set[bytes] = set()
        """Topic ids whose partitions were named by a record although the topic does not exist, since
        the loader last cleared the set.  In Kafka each leaves a ``TopicDelta`` without an image in
        the pending delta (a TopicRecord or RemoveTopicRecord for the id replaces or removes it), so
        the whole delta fails to apply."""
        self.journal: Journal | None = None
        """When set, every change to the image is written down here (``timeline.py``)."""
        self._ints: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._intern = self._ints.setdefault
        self._topics_by_id = self._image.topics.by_id
        self._migrating: dict[int, tuple[Any, ...]] = {}
        self._handlers: dict[int, Callable[[dict[str, Any], int], None]] = {
            0: self._register_broker,
            1: self._unregister_broker,
            2: self._topic,
            3: self._partition,
            4: self._config,
            5: self._partition_change,
            7: self._fence_broker,
            8: self._unfence_broker,
            9: self._remove_topic,
            10: self._delegation_token,
            11: self._scram,
            12: self._feature_level,
            14: self._client_quota,
            15: self._producer_ids,
            17: self._broker_registration_change,
            18: self._acl,
            19: self._remove_acl,
            20: self._noop,
            21: self._zk_migration_state,
            22: self._remove_scram,
            26: self._remove_delegation_token,
            27: self._register_controller,
            28: self._clear_elr,
            29: self._unregister_controller,
        }
        # Handlers for what _DECODERS produces: tuples for the positional records, dicts otherwise.
        self._fast_handlers: dict[int, Callable[[Any, int], None]] = {
            **self._handlers,
            3: self._partition_tuple,
            5: self._partition_change_tuple,
        }

    # ------------------------------------------------------------------ entry points

    @property
    def image(self) -> MetadataImage:
        return self._image

    @image.setter
    def image(self, image: MetadataImage) -> None:
        self._image = image
        self._topics_by_id = image.topics.by_id

    @property
    def in_transaction(self) -> bool:
        return self._txn is not None

    def abandon_transaction(self, why: str) -> None:
        """Drop an open metadata transaction (its buffered records are never applied)."""
        if self._txn is not None:
            self.warn(
                f"{why} inside a metadata transaction started at offset {self._txn_offset}; its "
                f"{len(self._txn)} record(s) were dropped",
                None,
            )
            self._txn = None
            self._txn_offset = None

    def replay(self, record: MetadataRecord, offset: int) -> None:
        """Apply one decoded data record (or buffer it inside an open metadata transaction)."""
        key = record.api_key
        if self._txn is not None and key not in _TXN_KEYS:
            self._txn.append((record, offset))
            return
        handler = self._handlers.get(key)
        if handler is None:
            if key in _TXN_KEYS:
                self._transaction_marker(key, offset)
            else:
                self.warn(f"skipped {record.name} (api key {key}): no replay rule for it", offset, "unknown")
            return
        try:
            handler(record.data, offset)
        except Fault as e:
            self.warn(f"{record.name}: {e}", offset)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            self.warn(f"{record.name}: malformed record ({type(e).__name__}: {e})", offset)

    def replay_entries(self, entries: Iterable[tuple[int, int, bytes | None, bytes | None]]) -> int:
        """Decode and replay ``(offset, timestamp, key, value)`` records; returns how many.

        Same result as ``replay_value`` per record, with the dispatch inlined: this loop is where a
        large load spends its time.
        """
        decode = decode_metadata_record
        handlers = self._handlers
        fast_handlers = self._fast_handlers
        replay = self.replay
        table = _DECODERS
        n = 0
        # A null value (None) fails both decoders with TypeError and goes to replay_value, which
        # reports it; typing it as bytes here keeps the checks out of the per-record loop.
        for off, _ts, _key, value in cast("Iterable[tuple[int, int, bytes | None, bytes]]", entries):
            n += 1
            if self._txn is None:
                # Fast path: the generated decoder found by the value's 3-byte prefix (arrays as
                # tuples, positional tuples for partition records, no MetadataRecord); anything
                # unusual takes the checked path below.
                try:
                    api_key, name, fn, _positional = table[value[:3]]
                    data, end = fn(value, 3, len(value))
                except _FAST_PATH_MISS:
                    pass
                else:
                    if end == len(value):
                        handler = fast_handlers.get(api_key)
                        if handler is not None:
                            try:
                                handler(data, off)
                            except Fault as e:
                                self.warn(f"{name}: {e}", off)
                            except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                                self.warn(f"{name}: malformed record ({type(e).__name__}: {e})", off)
                            continue
            try:
                rec = decode(value)
            except (DecodeError, TypeError):
                self.replay_value(value, off)  # the slow path reports what is wrong
                continue
            if self._txn is None:
                handler = handlers.get(rec.api_key)
                if handler is not None:
                    try:
                        handler(rec.data, off)
                    except Fault as e:
                        self.warn(f"{rec.name}: {e}", off)
                    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
                        self.warn(f"{rec.name}: malformed record ({type(e).__name__}: {e})", off)
                    continue
            replay(rec, off)
        return n

    def replay_value(self, value: bytes | None, offset: int) -> None:
        """Decode a metadata record value and replay it; bad bytes become a warning."""
        if value is None:
            self.warn("metadata record with a null value", offset, "decode")
            return
        try:
            record = decode_metadata_record(value)
        except (UnknownRecordType, UnsupportedRecordVersion) as e:
            self.warn(f"skipped record: {e.message}", offset, "unknown")
            return
        except DecodeError as e:
            self.warn(f"skipped undecodable record: {e}", offset, "decode")
            return
        self.replay(record, offset)

    def replay_control(self, ctl: ControlRecord, offset: int, epoch: int) -> None:
        """Quorum bookkeeping from control records (the image itself ignores them, as Kafka's does).

        LeaderChange sets the leader (epoch = the batch's partitionLeaderEpoch) and voter ids;
        KRaftVersion and KRaftVoters update the kraft.version and the voter set.
        """
        data = ctl.data
        if data is None:
            return
        q = self._image.quorum
        name = ctl.name
        if name in ("LeaderChange", "KRaftVersion", "KRaftVoters"):
            self.keep_state(q)
        if name == "LeaderChange":
            q.leader_id = data.get("LeaderId")
            q.leader_epoch = epoch
            voter_ids = tuple(v.get("VoterId") for v in data.get("Voters") or ())
            # Keep richer voter info (endpoints from KRaftVoters) when the ids are the same.
            if tuple(v.id for v in q.voters) != voter_ids:
                q.voters = tuple(
                    Voter(v.get("VoterId"), v.get("VoterDirectoryId") or MIGRATING_DIR)
                    for v in data.get("Voters") or ()
                )
            q.granting_voters = tuple(v.get("VoterId") for v in data.get("GrantingVoters") or ())
            q.source = "LeaderChange"
        elif name == "KRaftVersion":
            q.kraft_version = data.get("KRaftVersion")
            q.source = "KRaftVersion"
        elif name == "KRaftVoters":
            voters = []
            for v in data.get("Voters") or ():
                eps = tuple(
                    Endpoint(e.get("Name"), e.get("Host"), e.get("Port"), None)
                    for e in v.get("Endpoints") or ()
                )
                feat = v.get("KRaftVersionFeature") or {}
                voters.append(
                    Voter(
                        v.get("VoterId"),
                        v.get("VoterDirectoryId") or MIGRATING_DIR,
                        eps,
                        (feat.get("MinSupportedVersion", 0), feat.get("MaxSupportedVersion", 0)),
                    )
                )
            q.voters = tuple(voters)
            q.source = "KRaftVoters"

    def replay_control_bytes(
        self, key: bytes | None, value: bytes | None, offset: int, epoch: int
    ) -> ControlRecord | None:
        """Decode and apply a control record; returns it (None when undecodable)."""
        try:
            ctl = decode_control_record(key, value)
        except DecodeError as e:
            self.warn(f"skipped undecodable control record: {e}", offset, "decode")
            return None
        self.replay_control(ctl, offset, epoch)
        return ctl

    def end_batch(self, last_offset: int, epoch: int, max_timestamp: int) -> bool:
        """A batch was fully handed over: publish its provenance unless a transaction is open.

        Mirrors ``MetadataBatchLoader.maybeFlushBatches``: nothing is published while a metadata
        transaction is in progress; otherwise the image's provenance becomes (last offset of the
        batch, its partitionLeaderEpoch, its max timestamp).  Returns True when published.
        """
        p = self._image.provenance
        p.batches += 1
        if self._txn is not None:
            return False
        p.offset = last_offset
        p.epoch = epoch
        p.timestamp = max_timestamp
        return True

    def finish_snapshot(self, info: SnapshotInfo) -> None:
        """The snapshot's records were all replayed: set provenance (FORMATS.md 5.4)."""
        self.abandon_transaction("snapshot ends")
        p = self._image.provenance
        p.snapshot = info
        p.offset = info.end_offset - 1
        p.epoch = info.epoch
        p.timestamp = info.last_contained_log_timestamp

    def warn(self, message: str, offset: int | None, kind: str = "fault") -> None:
        if kind == "fault":
            self.fault_count += 1
        if len(self.warnings) < self.max_warnings:
            self.warnings.append(ReplayWarning(message, offset, self.source, kind))
        else:
            self.dropped_warnings += 1

    # ------------------------------------------------------------------ helpers

    def _keep_slot(self, mapping: dict[Any, Any], key: Any) -> None:
        """Journal ``mapping[key]`` before it is set or deleted."""
        j = self.journal
        if j is not None:
            j.append((mapping, key, mapping.get(key, MISSING)))

    def keep_state(self, obj: Any) -> None:
        """Journal a slotted object's state before it is changed in place (the loader does too,
        before quorum-state changes the quorum)."""
        j = self.journal
        if j is not None:
            j.append(kept(obj))

    def _set(self, mapping: dict[Any, Any], key: Any, value: Any) -> None:
        self._keep_slot(mapping, key)
        mapping[key] = value

    def _pop(self, mapping: dict[Any, Any], key: Any) -> Any:
        """``mapping.pop(key, None)``, journaled."""
        value = mapping.pop(key, None)
        if value is not None and self.journal is not None:
            self.journal.append((mapping, key, value))
        return value

    def _t(self, values: list[Any] | tuple[Any, ...] | None) -> tuple[Any, ...]:
        """An interned tuple for an int (or uuid) list; the shared EMPTY for empty/None."""
        if not values:
            return EMPTY
        t = tuple(values)
        return self._ints.setdefault(t, t)

    def _migrating_dirs(self, n: int) -> tuple[Any, ...]:
        t = self._migrating.get(n)
        if t is None:
            t = self._migrating[n] = (MIGRATING_DIR,) * n
        return t

    def _topic_or_fault(self, topic_id: bytes, what: str) -> Topic:
        topic = self._image.topics.by_id.get(topic_id)
        if topic is None:
            raise Fault(f"{what}: no topic with id {uuid_to_str(topic_id)}")
        return topic

    def _broker_or_fault(self, broker_id: int, epoch: int, action: str) -> BrokerRegistration:
        broker = self._image.cluster.brokers.get(broker_id)
        if broker is None:
            raise Fault(f"tried to {action} broker {broker_id}, but that broker was not registered")
        if broker.epoch != epoch:
            raise Fault(
                f"tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not "
                f"match the current broker epoch, {broker.epoch}"
            )
        return broker

    @staticmethod
    def _features(items: list[dict[str, Any]] | None) -> dict[str, tuple[int, int]]:
        return {f["Name"]: (f["MinSupportedVersion"], f["MaxSupportedVersion"]) for f in items or ()}

    def _sorted_dirs(self, dirs: list[bytes] | None) -> tuple[Any, ...]:
        if not dirs:
            return EMPTY
        return self._t(sorted(dirs, key=uuid_java_order))

    def _transaction_marker(self, key: int, offset: int) -> None:
        if self.snapshot_mode:
            names = {
                BEGIN_TRANSACTION: "BeginTransactionRecord",
                END_TRANSACTION: "EndTransactionRecord",
                ABORT_TRANSACTION: "AbortTransactionRecord",
            }
            self.warn(f"{names[key]} in a snapshot: unknown metadata record type for a snapshot", offset)
            return
        if key == BEGIN_TRANSACTION:
            if self._txn is not None:
                self.warn(
                    f"BeginTransactionRecord while a transaction started at offset {self._txn_offset} "
                    "is still open",
                    offset,
                )
                return
            self._txn = []
            self._txn_offset = offset
            return
        if self._txn is None:
            name = "EndTransactionRecord" if key == END_TRANSACTION else "AbortTransactionRecord"
            self.warn(f"{name} without an open transaction", offset)
            return
        buffered = self._txn
        self._txn = None
        self._txn_offset = None
        if key == END_TRANSACTION:
            replay = self.replay
            for record, rec_offset in buffered:
                replay(record, rec_offset)

    # ------------------------------------------------------------------ cluster

    def _register_broker(self, d: dict[str, Any], offset: int) -> None:
        listeners = {
            e["Name"]: Endpoint(e["Name"], e["Host"], e["Port"], e["SecurityProtocol"])
            for e in d["EndPoints"] or ()
        }
        if "" in listeners:
            raise Fault("broker listeners must be named")
        cordoned = d.get("CordonedLogDirs")
        broker = BrokerRegistration(
            d["BrokerId"],
            d["BrokerEpoch"],
            d["IncarnationId"],
            listeners,
            self._features(d["Features"]),
            d["Rack"],
            d.get("Fenced", True),
            d.get("InControlledShutdown", False),
            d.get("IsMigratingZkBroker", False),
            self._sorted_dirs(d.get("LogDirs")),
            None if cordoned is None else self._t(cordoned),
        )  # kept in record order (unsorted)
        self._set(self._image.cluster.brokers, broker.id, broker)

    def _unregister_broker(self, d: dict[str, Any], offset: int) -> None:
        # ClusterDelta: the broker epoch is not checked, an unknown id is not an error.
        self._pop(self._image.cluster.brokers, d["BrokerId"])

    def _fence_broker(self, d: dict[str, Any], offset: int) -> None:
        broker = self._broker_or_fault(d["Id"], d["Epoch"], "fence")
        self.keep_state(broker)
        broker.fenced = True

    def _unfence_broker(self, d: dict[str, Any], offset: int) -> None:
        broker = self._broker_or_fault(d["Id"], d["Epoch"], "unfence")
        self.keep_state(broker)
        broker.fenced = False

    def _broker_registration_change(self, d: dict[str, Any], offset: int) -> None:
        broker = self._broker_or_fault(d["BrokerId"], d["BrokerEpoch"], "change")
        fenced = d.get("Fenced", 0)
        if fenced not in (-1, 0, 1):
            raise Fault(f"unknown value for fenced field: {fenced}")
        shutdown = d.get("InControlledShutdown", 0)
        if shutdown not in (0, 1):
            raise Fault(f"unknown value for inControlledShutdown field: {shutdown}")
        log_dirs = d.get("LogDirs")
        cordoned = d.get("CordonedLogDirs")
        self.keep_state(broker)
        if fenced:
            broker.fenced = fenced == 1
        if shutdown:
            broker.in_controlled_shutdown = True
        if log_dirs:  # null or empty = no change
            broker.directories = self._sorted_dirs(log_dirs)
        if cordoned is not None:  # v3+ (Kafka 4.3): null = no change; not sorted
            broker.cordoned_directories = self._t(cordoned)

    def _register_controller(self, d: dict[str, Any], offset: int) -> None:
        listeners = {}
        for e in d["EndPoints"] or ():
            if e["SecurityProtocol"] not in SECURITY_PROTOCOL_NAMES:
                raise Fault(f"unknown security protocol {e['SecurityProtocol']} for listener {e['Name']}")
            listeners[e["Name"]] = Endpoint(e["Name"], e["Host"], e["Port"], e["SecurityProtocol"])
        c = ControllerRegistration(
            d["ControllerId"],
            d["IncarnationId"],
            d["ZkMigrationReady"],
            listeners,
            self._features(d["Features"]),
        )
        self._set(self._image.cluster.controllers, c.id, c)

    def _unregister_controller(self, d: dict[str, Any], offset: int) -> None:
        # Kafka 4.4 (KIP-1312): ClusterDelta marks the controller removed; no error if unknown.
        self._pop(self._image.cluster.controllers, d["ControllerId"])

    # ------------------------------------------------------------------ topics

    def _topic(self, d: dict[str, Any], offset: int) -> None:
        # TopicsDelta: a TopicRecord (re)creates the topic with no partitions, replacing any topic
        # with the same id; byName is updated for the new name (an old name is not removed).
        topics = self._image.topics
        self.orphan_topics.discard(d["TopicId"])
        topic = Topic(d["Name"], d["TopicId"], {})
        self._set(topics.by_id, topic.id, topic)
        self._set(topics.by_name, topic.name, topic)

    def _partition_tuple(self, t: tuple[Any, ...], offset: int) -> None:
        """PartitionRecord as a ``_PARTITION_FIELDS`` tuple (the snapshot hot path).  Anything that
        could fault is handed to :meth:`_partition`, which reports it."""
        pid, tid, rep, isr, rem, add, leader, lrs, le, pe, dirs, elr, lke = t
        topic = self._topics_by_id.get(tid)
        if topic is None or (dirs and len(dirs) != len(rep)) or (lrs != 0 and lrs != 1):
            self._partition(dict(zip(_PARTITION_FIELDS, t, strict=False)), offset)
            return
        intern = self._intern
        replicas = intern(rep, rep) if rep else EMPTY
        if not dirs or dirs.count(MIGRATING_DIR) == len(dirs):  # defaultToMigrating
            directories = self._migrating_dirs(len(replicas))
        else:
            directories = intern(dirs, dirs)
        j = self.journal
        if j is not None:  # _keep_slot, inline: a million of these per snapshot
            j.append((topic.partitions, pid, topic.partitions.get(pid, MISSING)))
        topic.partitions[pid] = Partition(
            replicas,
            directories,
            replicas if isr == rep else intern(isr, isr) if isr else EMPTY,
            intern(rem, rem) if rem else EMPTY,
            intern(add, add) if add else EMPTY,
            intern(elr, elr) if elr else EMPTY,
            intern(lke, lke) if lke else EMPTY,
            leader,
            lrs,
            le,
            pe,
        )

    def _partition_change_tuple(self, t: tuple[Any, ...], offset: int) -> None:
        """PartitionChangeRecord as a ``_PARTITION_CHANGE_FIELDS`` tuple: the common ISR / leader /
        ELR change.  Replica or directory changes, bad recovery states and unknown partitions are
        handed to :meth:`_partition_change` (same merge, with its checks and faults)."""
        pid, tid, isr, leader, rep, rem, add, lrs, dirs, elr, lke = t
        topic = self._topics_by_id.get(tid)
        p = None if topic is None else topic.partitions.get(pid)
        if p is None or rep is not None or dirs is not None or lrs < -1 or lrs > 1:
            self._partition_change(dict(zip(_PARTITION_CHANGE_FIELDS, t, strict=False)), offset)
            return
        j = self.journal
        if j is not None:  # timeline.kept(p), inline: the hot path of a long log
            j.append(
                (
                    p,
                    p.adding_replicas,
                    p.directories,
                    p.elr,
                    p.isr,
                    p.last_known_elr,
                    p.leader,
                    p.leader_epoch,
                    p.leader_recovery_state,
                    p.partition_epoch,
                    p.removing_replicas,
                    p.replicas,
                )
            )
        intern = self._intern
        if isr is not None:
            p.isr = intern(isr, isr) if isr else EMPTY
        if rem is not None:
            p.removing_replicas = intern(rem, rem) if rem else EMPTY
        if add is not None:
            p.adding_replicas = intern(add, add) if add else EMPTY
        if elr is not None:
            p.elr = intern(elr, elr) if elr else EMPTY
        if lke is not None:
            p.last_known_elr = intern(lke, lke) if lke else EMPTY
        if leader != NO_LEADER_CHANGE:
            p.leader = leader
            p.leader_epoch += 1
        if lrs != -1:
            p.leader_recovery_state = lrs
        p.partition_epoch += 1

    def _partition(self, d: dict[str, Any], offset: int) -> None:
        # Hot path (a million of these in a big snapshot): interning is inlined.
        topic = self._topics_by_id.get(d["TopicId"])
        if topic is None:
            self.orphan_topics.add(d["TopicId"])
            raise Fault(f"partition {d['PartitionId']}: no topic with id {uuid_to_str(d['TopicId'])}")
        intern = self._intern
        v = d["Replicas"]
        replicas = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d.get("Directories")
        if v and (len(v) != len(replicas)):
            raise Fault(f"partition {d['PartitionId']}: {len(v)} directories for {len(replicas)} replicas")
        if not v or v.count(MIGRATING_DIR) == len(v):  # defaultToMigrating
            directories = self._migrating_dirs(len(replicas))
        else:
            directories = intern(x, x) if (x := tuple(v)) else EMPTY
        lrs = d["LeaderRecoveryState"]
        if lrs != 0 and lrs != 1:
            raise Fault(f"partition {d['PartitionId']}: unknown leader recovery state {lrs}")
        v = d["Isr"]
        if v == d["Replicas"]:  # the usual case: a fully in-sync partition
            isr = replicas
        else:
            isr = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d["RemovingReplicas"]
        removing = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d["AddingReplicas"]
        adding = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d.get("EligibleLeaderReplicas")
        elr = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d.get("LastKnownElr")
        lke = intern(x, x) if v and (x := tuple(v)) else EMPTY
        self._keep_slot(topic.partitions, d["PartitionId"])
        topic.partitions[d["PartitionId"]] = Partition(
            replicas,
            directories,
            isr,
            removing,
            adding,
            elr,
            lke,
            d["Leader"],
            lrs,
            d["LeaderEpoch"],
            d["PartitionEpoch"],
        )

    def _partition_change(self, d: dict[str, Any], offset: int) -> None:
        """``PartitionRegistration.merge``: each field null/-1/-2 = unchanged; partitionEpoch + 1."""
        topic = self._topics_by_id.get(d["TopicId"])
        pid = d["PartitionId"]
        p = None if topic is None else topic.partitions.get(pid)
        if p is None:
            if topic is None:
                self.orphan_topics.add(d["TopicId"])
            raise Fault(f"unable to find partition {uuid_to_str(d['TopicId'])}:{pid}")
        rep = d["Replicas"]
        dirs = d.get("Directories")
        lrs = d["LeaderRecoveryState"]
        self.keep_state(p)
        if rep is not None or dirs is not None or lrs < -1 or lrs > 1:
            self._partition_change_checked(d, p, rep, dirs, lrs)
        # Common case (ISR / leader / ELR changes): nothing can fail, mutate directly.
        intern = self._intern
        v = d["Isr"]
        if v is not None:
            p.isr = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d["RemovingReplicas"]
        if v is not None:
            p.removing_replicas = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d["AddingReplicas"]
        if v is not None:
            p.adding_replicas = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d.get("EligibleLeaderReplicas")
        if v is not None:
            p.elr = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d.get("LastKnownElr")
        if v is not None:
            p.last_known_elr = intern(x, x) if v and (x := tuple(v)) else EMPTY
        leader = d["Leader"]
        if leader != NO_LEADER_CHANGE:
            p.leader = leader
            p.leader_epoch += 1
        if lrs != -1:
            p.leader_recovery_state = lrs
        p.partition_epoch += 1

    def _partition_change_checked(
        self, d: dict[str, Any], p: Partition, rep: list[Any] | None, dirs: list[Any] | None, lrs: int
    ) -> None:
        """The replica/directory part of ``PartitionRegistration.merge`` (Kafka 4.4.0), which can
        fault: validate, then set both.

        New directories = the record's when it has them (non-null), else the old ones -- they are
        *not* remapped when only the replicas change; all-MIGRATING (or empty) directories become a
        MIGRATING array sized to the new replicas; any other length mismatch is a fault.
        """
        pid = d["PartitionId"]
        t = self._t
        replicas = p.replicas if rep is None else t(rep)
        if dirs is None:
            directories = p.directories
        else:
            if rep is not None and dirs and len(rep) != len(dirs):
                raise Fault(f"partition {pid}: {len(dirs)} directories for {len(rep)} replicas")
            directories = t(dirs)
        if directories.count(MIGRATING_DIR) == len(directories):
            directories = self._migrating_dirs(len(replicas))
        if directories and len(directories) != len(replicas):
            raise Fault(f"partition {pid}: the lengths for replicas and directories do not match")
        if lrs < -1 or lrs > 1:
            raise Fault(f"partition {pid}: unknown leader recovery state {lrs}")
        p.replicas = replicas
        p.directories = directories

    def _remove_topic(self, d: dict[str, Any], offset: int) -> None:
        topics = self._image.topics
        self.orphan_topics.discard(d["TopicId"])
        topic: Topic | None = self._pop(topics.by_id, d["TopicId"])
        if topic is None:
            raise Fault(f"unable to delete topic with id {uuid_to_str(d['TopicId'])}: no such topic found")
        if topics.by_name.get(topic.name) is topic:
            self._pop(topics.by_name, topic.name)
        self._pop(self._image.configs, (CONFIG_RESOURCE_TOPIC, topic.name))

    def _clear_elr(self, d: dict[str, Any], offset: int) -> None:
        """Kafka 4.x (KIP-966) ``TopicsDelta/TopicDelta.replay(ClearElrRecord)``: every partition
        with a non-empty ELR or last-known ELR gets both emptied through a PartitionChangeRecord
        merge, hence partitionEpoch + 1; an empty name means every topic."""
        name = d["TopicName"]
        topics = self._image.topics
        if name:
            topic = topics.by_name.get(name)
            if topic is None:
                raise Fault(f"unable to clear elr for topic with name {name}: no such topic found")
            targets: Any = (topic,)
        else:
            targets = topics.by_id.values()
        for topic in targets:
            for p in topic.partitions.values():
                if p.elr or p.last_known_elr:
                    self.keep_state(p)
                    p.elr = EMPTY
                    p.last_known_elr = EMPTY
                    p.partition_epoch += 1

    # ------------------------------------------------------------------ configs, quotas, security

    def _config(self, d: dict[str, Any], offset: int) -> None:
        rtype = d["ResourceType"]
        if rtype not in CONFIG_RESOURCE_TYPE_NAMES:
            rtype = 0  # ConfigResource.Type.forId -> UNKNOWN
        key = (rtype, d["ResourceName"])
        value = d["Value"]
        self._put_or_remove(self._image.configs, key, d["Name"], value, value is None)

    def _client_quota(self, d: dict[str, Any], offset: int) -> None:
        entity_map: dict[str, str | None] = {}
        for e in d["Entity"] or ():
            entity_map[e["EntityType"]] = e["EntityName"]
        entity = tuple(sorted(entity_map.items()))
        self._put_or_remove(self._image.client_quotas, entity, d["Key"], d["Value"], d["Remove"])

    def _put_or_remove(
        self, areas: dict[Any, dict[str, Any]], key: Any, name: str, value: Any, remove: bool
    ) -> None:
        """Set or delete one key of a config resource / quota entity; an emptied one disappears, as
        in Kafka's ConfigurationsDelta and ClientQuotasDelta."""
        values = areas.get(key)
        if remove:
            if values is not None and name in values:
                self._keep_slot(values, name)
                del values[name]
                if not values:
                    self._keep_slot(areas, key)
                    del areas[key]
            return
        if values is None:
            self._keep_slot(areas, key)
            values = areas[key] = {}
        self._keep_slot(values, name)
        values[name] = value

    def _acl(self, d: dict[str, Any], offset: int) -> None:
        acl = Acl(
            d["Id"],
            d["ResourceType"],
            d["ResourceName"],
            d["PatternType"],
            d["Principal"],
            d["Host"],
            d["Operation"],
            d["PermissionType"],
        )
        self._set(self._image.acls, acl.id, acl)

    def _remove_acl(self, d: dict[str, Any], offset: int) -> None:
        if self._pop(self._image.acls, d["Id"]) is None:
            raise Fault(
                f"failed to find existing ACL with ID {uuid_to_str(d['Id'])} in either image or changes"
            )

    def _scram(self, d: dict[str, Any], offset: int) -> None:
        cred = ScramCredential(
            d["Mechanism"], d["Name"], d["Salt"], d["StoredKey"], d["ServerKey"], d["Iterations"]
        )
        self._set(self._image.scram, (cred.mechanism, cred.name), cred)

    def _remove_scram(self, d: dict[str, Any], offset: int) -> None:
        self._pop(self._image.scram, (d["Mechanism"], d["Name"]))

    def _delegation_token(self, d: dict[str, Any], offset: int) -> None:
        renewers = tuple(d["Renewers"] or ())
        for principal in (d["Owner"], d["Requester"], *renewers):
            if not _principal_ok(principal):
                raise Fault(
                    f"expected a principal in format principalType:principalName but got {principal!r}"
                )
        token = DelegationToken(
            d["TokenId"],
            d["Owner"],
            d["Requester"],
            renewers,
            d["IssueTimestamp"],
            d["MaxTimestamp"],
            d["ExpirationTimestamp"],
        )
        self._set(self._image.delegation_tokens, token.token_id, token)

    def _remove_delegation_token(self, d: dict[str, Any], offset: int) -> None:
        self._pop(self._image.delegation_tokens, d["TokenId"])

    # ------------------------------------------------------------------ features, producer ids, misc

    def _feature_level(self, d: dict[str, Any], offset: int) -> None:
        name = d["Name"]
        level = d["FeatureLevel"]
        features = self._image.features
        if name == METADATA_VERSION_FEATURE:
            # Kafka 4.4 FeaturesDelta: MetadataVersion.fromFeatureLevel, which knows 7 (3.3-IV3) to
            # 34 (4.5-IV0); anything lower is a fault.  Levels newer than known are kept (and
            # reported) so that a newer cluster still loads -- a deliberate difference.
            if level < _MINIMUM_MV:
                raise Fault(
                    f"invalid metadata.version feature level {level}: the minimum is {_MINIMUM_MV} (3.3-IV3)"
                )
            if level not in METADATA_VERSION_NAMES:
                self.warn(
                    f"unknown metadata.version feature level {level} (newer than Kafka 4.4)",
                    offset,
                    "unknown",
                )
            self.keep_state(features)
            features.metadata_version = level
        elif name == KRAFT_VERSION_FEATURE:
            pass  # Kafka 4.4 ignores it (kraft.version lives in raft)
        elif level == 0:
            self._pop(features.finalized, name)
        else:
            self._set(features.finalized, name, level)

    def _zk_migration_state(self, d: dict[str, Any], offset: int) -> None:
        # Kafka 4.4's MetadataDelta ignores this record (ZooKeeper migration is gone); the value is
        # kept for display only, never validated.
        self.keep_state(self._image.features)
        self._image.features.zk_migration_state = d["ZkMigrationState"]

    def _producer_ids(self, d: dict[str, Any], offset: int) -> None:
        ids = self._image.producer_ids
        self.keep_state(ids)
        ids.next_producer_id = d["NextProducerId"]
        ids.broker_id = d["BrokerId"]
        ids.broker_epoch = d["BrokerEpoch"]

    def _noop(self, d: dict[str, Any], offset: int) -> None:
        pass
