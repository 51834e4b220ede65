"""What every domain's replay rules share: the image, the journal, the warnings, and helpers.

Each domain module (``cluster``, ``topics``, ``configs``, ``security``, ``features``, ``quorum``,
``transactions``) is a class of rules over this state; :class:`~metashell.image.replay.Replayer`
combines them.  A rule is a method marked with :func:`rule` (or :func:`fast_rule` for the decoded
tuples of the partition records); it validates first and mutates last, and raises :class:`Fault`
where Kafka's replay would throw.  The replayer turns faults into warnings in one place.
"""

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

from metashell.errors import located
from metashell.protocol.metadata import MetadataRecord
from metashell.protocol.record_type import RecordType
from metashell.protocol.uuid import uuid_java_order, uuid_to_str

from ..image import MetadataImage
from ..model import EMPTY, MIGRATING_DIR, BrokerRegistration, Topic
from ..timeline import MISSING, Journal, kept

F = TypeVar("F", bound=Callable[..., None])

IGNORED: dict[RecordType, str] = {
    RecordType.NO_OP_RECORD: "a heartbeat of the controller's log (KIP-835): no state",
}
"""Record types replayed as nothing, with the reason (the others each have a rule; the native
replay loop skips these too, after its decoder has read them whole)."""


def rule(record_type: RecordType) -> Callable[[F], F]:
    """Mark a method as the replay rule of ``record_type`` (its decoded data as a dict)."""

    def mark(fn: F) -> F:
        fn._replays = record_type  # type: ignore[attr-defined]
        return fn

    return mark


def fast_rule(record_type: RecordType) -> Callable[[F], F]:
    """Mark a method as the rule for ``record_type`` decoded by the fast path (a positional
    tuple: the partition record contract in :mod:`.topics`)."""

    def mark(fn: F) -> F:
        fn._replays_fast = record_type  # type: ignore[attr-defined]
        return fn

    return mark


class ReplayWarning(NamedTuple):
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


class Fault(Exception):
    """Raised inside a rule when Kafka's replay would throw; the record is not applied."""


FAULTS = (Fault, KeyError, TypeError, ValueError, AttributeError, IndexError)
"""What a rule may raise for a record it cannot apply: a fault, or a malformed record's data."""


class ReplayState:
    """The state the rules share, and the helpers that journal every change."""

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
        self.defer_partitions = True
        """The native engine may keep the partitions of the topics it makes as rows until they are
        read (``Topic.partitions``, ``native/src/replay/deferred.rs``); not a topic made while journaling.
        A journalled change of a waiting row is kept as the old row (``native/src/replay/journal.rs``)."""
        self._ints: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._intern = self._ints.setdefault
        self._topics_by_id = self._image.topics.by_id
        self._migrating: dict[int, tuple[Any, ...]] = {}

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

    def warn(self, message: str, offset: int | None, kind: str = "fault") -> None:
        if kind == "fault":
            self.fault_count += 1
        if len(self.warnings) < self.max_warnings:
            self.warnings.append(ReplayWarning(message, offset, self.source, kind))
        else:
            self.dropped_warnings += 1

    @property
    def image(self) -> MetadataImage:
        return self._image

    @image.setter
    def image(self, image: MetadataImage) -> None:
        self._image = image
        self._topics_by_id = image.topics.by_id

    def replay(self, record: MetadataRecord, offset: int) -> None:
        """Apply one decoded record (the replayer's; a transaction's end replays what it held)."""
        raise NotImplementedError
