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
from typing import Any, cast

from metashell.errors import DecodeError
from metashell.protocol.metadata import (
    MetadataRecord,
    UnknownRecordType,
    UnsupportedRecordVersion,
    decode_metadata_record,
)
from metashell.protocol.record_type import RecordType
from metashell.protocol.registry import DECODE_ERRORS

from ..image import MetadataImage, SnapshotInfo
from .cluster import ClusterRules
from .configs import ConfigRules
from .features import FeatureRules
from .native import NATIVE, NativeReplay
from .quorum import QuorumRules
from .security import SecurityRules
from .state import FAULTS, IGNORED, Fault, ReplayWarning
from .topics import DECODERS, TopicRules
from .transactions import TRANSACTION_MARKERS, TransactionRules

__all__ = ["IGNORED", "Fault", "ReplayWarning", "Replayer", "rule_of"]

_FAST_PATH_MISS = (LookupError, TypeError, *DECODE_ERRORS)
"""A record the fast path cannot take: a prefix the decoder table does not serve, a null value, or
bytes the generated decoder rejects (decode_metadata_record then reports it properly)."""


def _ignore(data: Any, offset: int) -> None:
    """The rule of an :data:`IGNORED` type."""


_RULE_TABLES: dict[type, tuple[dict[int, str], dict[int, str]]] = {}


def _rule_tables(cls: type) -> tuple[dict[int, str], dict[int, str]]:
    """(record type -> rule method name, the same for fast-path tuples) of ``cls``'s rules,
    gathered once per class."""
    known = _RULE_TABLES.get(cls)
    if known is not None:
        return known
    handlers: dict[int, str] = {}
    fast: dict[int, str] = {}
    for klass in reversed(cls.__mro__):
        for name, fn in vars(klass).items():
            kind = getattr(fn, "_replays", None)
            if kind is not None:
                if kind in handlers:
                    raise TypeError(f"two rules for {RecordType(kind).name}: {handlers[kind]}, {name}")
                handlers[kind] = name
            kind = getattr(fn, "_replays_fast", None)
            if kind is not None:
                fast[kind] = name
    _RULE_TABLES[cls] = handlers, fast
    return handlers, fast


def rule_of(record_type: RecordType) -> str | None:
    """The name of the rule that replays ``record_type`` (None: no rule; see :data:`IGNORED` and
    the transaction markers)."""
    return _rule_tables(Replayer)[0].get(record_type)


class Replayer(
    ClusterRules,
    TopicRules,
    ConfigRules,
    SecurityRules,
    FeatureRules,
    QuorumRules,
    TransactionRules,
    NativeReplay,
):
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

    The rules live in one class per domain (``cluster.py``, ``topics.py`` ...), each method marked
    with the record type it replays; dispatch is one dict lookup of the api key.
    """

    def __init__(self, image: MetadataImage | None = None, *, source: str | None = None) -> None:
        super().__init__(image, source=source)
        handlers, fast = _rule_tables(type(self))
        self._handlers: dict[int, Callable[[Any, int], None]] = {
            key: getattr(self, name) for key, name in handlers.items()
        }
        self._handlers.update({key: _ignore for key in IGNORED})
        # Rules for what DECODERS produces: tuples for the partition records, dicts otherwise.
        self._fast_handlers: dict[int, Callable[[Any, int], None]] = {
            **self._handlers,
            **{key: getattr(self, name) for key, name in fast.items()},
        }

    def _faulted(self, name: str, e: Exception, offset: int) -> None:
        """The one place a rule's exception becomes a warning (Kafka's ``LoggingFaultHandler``)."""
        if isinstance(e, Fault):
            self.warn(f"{name}: {e}", offset)
        else:
            self.warn(f"{name}: malformed record ({type(e).__name__}: {e})", offset)

    def replay(self, record: MetadataRecord, offset: int) -> None:
        """Apply one decoded data record (or buffer it inside an open metadata transaction)."""
        key = record.api_key
        if self._txn is not None and key not in TRANSACTION_MARKERS:
            self._txn.append((record, offset))
            return
        handler = self._handlers.get(key)
        if handler is None:
            if key in TRANSACTION_MARKERS:
                self._transaction_marker(key, offset)
            else:
                self.warn(f"skipped {record.name} (api key {key}): no replay rule for it", offset, "unknown")
            return
        try:
            handler(record.data, offset)
        except FAULTS as e:
            self._faulted(record.name, e, offset)

    def replay_entries(self, entries: Iterable[tuple[int, int, bytes | None, bytes | None]]) -> int:
        """Decode and replay ``(offset, timestamp, key, value)`` records; returns how many.

        Same result as ``replay_value`` per record, with the dispatch inlined: this loop is where a
        large load spends its time.  The native engine has its own (``native.py``).
        """
        if NATIVE is not None:
            return self._replay_entries_native(entries)
        fast_handlers = self._fast_handlers
        table = DECODERS
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
                            except FAULTS as e:
                                self._faulted(name, e, off)
                            continue
            self._replay_checked(value, off)
        return n

    def _replay_checked(self, value: bytes | None, off: int) -> None:
        """One record the fast path did not take: decoded by the checked decoder, which reports what
        is wrong with it, and replayed (or buffered in an open transaction)."""
        try:
            rec = decode_metadata_record(value)  # type: ignore[arg-type]
        except (DecodeError, TypeError):
            self.replay_value(value, off)  # the slow path reports what is wrong
            return
        if self._txn is None:
            handler = self._handlers.get(rec.api_key)
            if handler is not None:
                try:
                    handler(rec.data, off)
                except FAULTS as e:
                    self._faulted(rec.name, e, off)
                return
        self.replay(rec, off)

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
