"""The history of one thing in the metadata log: every record that changed it, with old -> new.

``history`` answers "what happened to orders-3?" (or to a topic, a broker, a config key) by reading
the whole log the files still hold -- from offset 0 when the segments start there, else from the
oldest snapshot -- and following that one thing's state, so each change is shown against what it
replaced.  A PartitionChangeRecord carries only the fields that changed; the old values come from
the state followed so far.  Things that no longer exist (a deleted topic) have a history too.

Targets are tree paths: ``/topics/<name>[/<partition>]``, ``/topicIds/<id>[/<partition>]``,
``/brokers/<id>``, ``/configs/<type>/<name>[/<key>]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from metashell.errors import MetashellError
from metashell.log.directory import PlanStep, ReadPlan
from metashell.log.files import iter_file_batches
from metashell.log.problems import WarnFn, unheard
from metashell.protocol.metadata import decode_metadata_record
from metashell.protocol.record_type import RecordType
from metashell.protocol.uuid import uuid_from_str, uuid_to_str

from .kafka_names import CONFIG_RESOURCE_TYPE_NAMES
from .partition_fields import FIELDS as PARTITION_FIELDS
from .partition_fields import Kind
from .wording import (
    PARTITION_NO_CHANGE,
    config_words,
    partition_change_words,
    partition_created_words,
    registration_refresh_words,
)

__all__ = ["Change", "HistoryError", "Target", "broker_history", "history", "parse_target"]

_CONFIG_DIRS = {"topic": 2, "broker": 4, "broker-logger": 8, "client-metrics": 16, "group": 32}
_DEFAULT = "<default>"
_PARTITION_FIELDS = tuple(f.kafka for f in PARTITION_FIELDS)
"""A partition's state as ``history`` follows it: every field, by Kafka's name."""


#: The record types ``history`` follows (``_Follower.apply``), and why it reads no other: each
#: metadata record type is in one of the two (``tests/test_record_type_tables.py``), so a new type
#: is a decision here, not a silent gap (as ClearElrRecord was: a partition's ELR clears went untold).
HISTORY_FOLLOWS: frozenset[RecordType] = frozenset(
    {
        RecordType.TOPIC_RECORD,
        RecordType.REMOVE_TOPIC_RECORD,
        RecordType.PARTITION_RECORD,
        RecordType.PARTITION_CHANGE_RECORD,
        RecordType.CLEAR_ELR_RECORD,
        RecordType.CONFIG_RECORD,
        RecordType.REGISTER_BROKER_RECORD,
        RecordType.UNREGISTER_BROKER_RECORD,
        RecordType.FENCE_BROKER_RECORD,
        RecordType.UNFENCE_BROKER_RECORD,
        RecordType.BROKER_REGISTRATION_CHANGE_RECORD,
    }
)
HISTORY_IGNORES: dict[RecordType, str] = {
    RecordType.DELEGATION_TOKEN_RECORD: "no path history follows holds tokens",
    RecordType.REMOVE_DELEGATION_TOKEN_RECORD: "no path history follows holds tokens",
    RecordType.USER_SCRAM_CREDENTIAL_RECORD: "no path history follows holds credentials",
    RecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD: "no path history follows holds credentials",
    RecordType.FEATURE_LEVEL_RECORD: "features are not a path history follows (log --type FeatureLevel)",
    RecordType.CLIENT_QUOTA_RECORD: "quotas are not a path history follows (log --type ClientQuota)",
    RecordType.PRODUCER_IDS_RECORD: "cluster-wide, not a topic, partition, broker or config",
    RecordType.ACCESS_CONTROL_ENTRY_RECORD: "ACLs are not a path history follows (log --type AccessControlEntry)",
    RecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD: "ACLs are not a path history follows",
    RecordType.NO_OP_RECORD: "changes nothing",
    RecordType.ZK_MIGRATION_STATE_RECORD: "cluster-wide, not a path history follows",
    RecordType.BEGIN_TRANSACTION_RECORD: "a marker: the records inside are followed as they come",
    RecordType.END_TRANSACTION_RECORD: "a marker",
    RecordType.ABORT_TRANSACTION_RECORD: "a marker (what it aborts is read as the loader reads it)",
    RecordType.REGISTER_CONTROLLER_RECORD: "controllers are not a path history follows (/brokers only)",
    RecordType.UNREGISTER_CONTROLLER_RECORD: "controllers are not a path history follows (/brokers only)",
}


class HistoryError(MetashellError):
    """A path whose history cannot be followed (not a topic, partition, broker or config)."""


@dataclass(frozen=True)
class Target:
    kind: str  # partition, topic, broker, config
    topic: str | None = None  # a name (or None when given by id)
    topic_id: bytes | None = None
    partition: int | None = None
    broker: int | None = None
    config: tuple[int, str] | None = None
    key: str | None = None


@dataclass
class Change:
    """One record that changed the target."""

    offset: int
    timestamp: int
    epoch: int
    record: str
    summary: str
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    from_snapshot: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "timestamp": self.timestamp,
            "epoch": self.epoch,
            "record": self.record,
            "summary": self.summary,
            "fromSnapshot": self.from_snapshot,
            "changes": {k: [_plain(o), _plain(n)] for k, (o, n) in self.changes.items()},
        }


def _plain(v: Any) -> Any:
    if isinstance(v, bytes) and len(v) == 16:
        return uuid_to_str(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def parse_target(components: list[str]) -> Target:
    """The target of a normalized tree path (its components)."""
    c = components
    try:
        if len(c) in (2, 3) and c[0] == "topics":
            return Target(
                "partition" if len(c) == 3 else "topic",
                topic=c[1],
                partition=int(c[2]) if len(c) == 3 else None,
            )
        if len(c) in (2, 3) and c[0] == "topicIds":
            return Target(
                "partition" if len(c) == 3 else "topic",
                topic_id=uuid_from_str(c[1]),
                partition=int(c[2]) if len(c) == 3 else None,
            )
        if len(c) == 2 and c[0] == "brokers":
            return Target("broker", broker=int(c[1]))
        if len(c) in (3, 4) and c[0] == "configs" and c[1] in _CONFIG_DIRS:
            name = "" if c[2] == _DEFAULT else c[2]
            return Target("config", config=(_CONFIG_DIRS[c[1]], name), key=c[3] if len(c) == 4 else None)
    except ValueError:
        pass
    raise HistoryError(
        "history follows /topics/NAME[/PARTITION], /topicIds/ID[/PARTITION], /brokers/ID "
        "and /configs/TYPE/NAME[/KEY]"
    )


_LIST_FIELDS = frozenset(f.kafka for f in PARTITION_FIELDS if f.kind is Kind.BROKER_IDS)
"""The fields that are broker id lists: never set means empty, not unknown."""


class _Follower:
    """Follows the target's state record by record and says what each record changed."""

    def __init__(self, target: Target, redact: Any = None) -> None:
        self.t = target
        self.redact = redact
        self.topic_ids: set[bytes] = {target.topic_id} if target.topic_id else set()
        self.topic_names: set[str] = {target.topic} if target.topic else set()
        self.partition: dict[str, Any] | None = None
        self.broker: dict[str, Any] | None = None
        self.configs: dict[str, str | None] = {}

    def apply(self, name: str, d: dict[str, Any]) -> tuple[str, dict[str, tuple[Any, Any]]] | None:
        t = self.t
        if name == "TopicRecord" and (d["Name"] == t.topic or d["TopicId"] in self.topic_ids):
            self.topic_ids.add(d["TopicId"])
            self.topic_names.add(d["Name"])
            if t.kind == "topic":
                return f"topic {d['Name']} created (id {uuid_to_str(d['TopicId'])})", {}
            return None
        if name == "RemoveTopicRecord" and d["TopicId"] in self.topic_ids:
            self.partition = None
            return f"topic {t.topic or uuid_to_str(d['TopicId'])} deleted", {}
        if name in ("PartitionRecord", "PartitionChangeRecord") and d["TopicId"] in self.topic_ids:
            if t.kind == "topic":
                return (f"partition {d['PartitionId']} created", {}) if name == "PartitionRecord" else None
            if d["PartitionId"] != t.partition:
                return None
            return self._partition(name, d)
        if t.kind == "broker" and d.get("BrokerId", d.get("Id")) == t.broker:  # Fence/Unfence: "Id"
            return self._broker(name, d)
        if name == "ConfigRecord":
            return self._config(d)
        if (
            name == "ClearElrRecord"
            and t.kind == "partition"
            and (d["TopicName"] in self.topic_names or not d["TopicName"])
        ):
            return self._clear_elr()
        return None

    def _clear_elr(self) -> tuple[str, dict[str, tuple[Any, Any]]] | None:
        """ClearElrRecord (Kafka 4.x) for the partition's topic, or every topic: as the replayer
        applies it (``replay/topics.py``), a partition with an ELR or a last-known ELR gets both
        emptied and its partition epoch bumped; one with neither is not touched."""
        old = self.partition
        if old is None or not (old.get("EligibleLeaderReplicas") or old.get("LastKnownElr")):
            return None
        changes: dict[str, tuple[Any, Any]] = {
            f: (old.get(f), []) for f in ("EligibleLeaderReplicas", "LastKnownElr") if old.get(f)
        }
        if isinstance(old.get("PartitionEpoch"), int):
            changes["PartitionEpoch"] = (old["PartitionEpoch"], old["PartitionEpoch"] + 1)
        self.partition = {**old, **{f: new for f, (_o, new) in changes.items()}}
        return "cleared: " + partition_change_words(changes), changes

    def _partition(self, name: str, d: dict[str, Any]) -> tuple[str, dict[str, tuple[Any, Any]]]:
        old = self.partition or {}
        changes: dict[str, tuple[Any, Any]] = {}
        if name == "PartitionRecord":
            new = {f: d.get(f, [] if f in _LIST_FIELDS else None) for f in _PARTITION_FIELDS}
            new = {f: [] if v is None and f in _LIST_FIELDS else v for f, v in new.items()}
            self.partition = new
            changes = {f: (old.get(f), v) for f, v in new.items() if old.get(f) != v and f != "Directories"}
            what = "created" if not old else "replaced"
            words = partition_created_words(new["Leader"], new["Replicas"], new["Isr"])
            return f"partition {what}: {words}", changes
        new = dict(old)
        for f in _PARTITION_FIELDS:
            if f not in d or f == "Directories":
                continue
            v = d[f]
            if v is None or PARTITION_NO_CHANGE.get(f) == v:
                continue
            if old.get(f) != v:
                changes[f] = (old.get(f), v)
            new[f] = v
        self.partition = new
        # history reads from the start: a list field never set is empty, not unknown
        told = {k: ([] if o is None and k in _LIST_FIELDS else o, n) for k, (o, n) in changes.items()}
        return partition_change_words(told), changes

    def _broker(self, name: str, d: dict[str, Any]) -> tuple[str, dict[str, tuple[Any, Any]]] | None:
        old = self.broker or {}
        if name == "RegisterBrokerRecord":
            new = {
                "epoch": d["BrokerEpoch"],
                "fenced": d.get("Fenced", True),
                "inControlledShutdown": d.get("InControlledShutdown", False),
            }
            self.broker = new
            changes = {k: (old.get(k), v) for k, v in new.items() if old.get(k) != v}
            return f"broker registered, epoch {d['BrokerEpoch']}", changes
        if name == "UnregisterBrokerRecord":
            self.broker = None
            return "broker unregistered", {}
        new = dict(old)
        if name == "FenceBrokerRecord":
            new["fenced"] = True
        elif name == "UnfenceBrokerRecord":
            new["fenced"] = False
        elif name == "BrokerRegistrationChangeRecord":
            if d.get("Fenced") in (1, -1):
                new["fenced"] = d["Fenced"] == 1
            if d.get("InControlledShutdown") == 1:
                new["inControlledShutdown"] = True
        else:
            return None
        self.broker = new
        changes = {k: (old.get(k), v) for k, v in new.items() if old.get(k) != v}
        words = {"fenced": ("fenced", "unfenced"), "inControlledShutdown": ("in controlled shutdown", "")}
        said = [words[k][0] if v else words[k][1] for k, (_o, v) in changes.items() if k in words]
        if not any(said):
            said = [registration_refresh_words(d)]
        return "broker " + ", ".join(s for s in said if s), changes

    def _config(self, d: dict[str, Any]) -> tuple[str, dict[str, tuple[Any, Any]]] | None:
        t = self.t
        resource = (d["ResourceType"], d["ResourceName"])
        wanted = t.config if t.kind == "config" else ((2, t.topic) if t.kind == "topic" and t.topic else None)
        if wanted is None or resource != wanted or (t.key is not None and d["Name"] != t.key):
            return None
        key = d["Name"]
        old = self.configs.get(key)
        self.configs[key] = d["Value"]
        old_told, new_told = old, d["Value"]
        if self.redact is not None:  # the shell's redaction: a secret is never told, old or new
            old_told, new_told = self.redact(resource[0], key, old), self.redact(resource[0], key, new_told)
        rtype = CONFIG_RESOURCE_TYPE_NAMES.get(resource[0], str(resource[0])).lower()
        return config_words(rtype, resource[1], key, new_told), {key: (old_told, new_told)}


def _needles(target: Target) -> frozenset[bytes] | None:
    """Byte strings every record that changes ``target`` contains (None: no such test).

    Topic and partition records carry the topic id; TopicRecord and ConfigRecord carry the name.
    Broker ids are varints and the cluster-default config has an empty name: those scan everything.
    """
    if target.kind in ("topic", "partition"):
        return frozenset(n for n in ((target.topic or "").encode(), target.topic_id or b"") if n)
    if target.kind == "config" and target.config and target.config[1]:
        return frozenset((target.config[1].encode(),))
    return None


def _batches(
    plan: ReadPlan, follower: _Follower | None, warn: WarnFn = unheard
) -> Iterator[tuple[Any, list[Any], PlanStep]]:
    """``(batch, records, step)`` of the data batches of ``plan`` that may change the follower's
    target (every data batch without one).  Batches are framed without decoding their records; only
    those whose bytes hold one of the target's needles are decoded -- a partition's history in a
    million-partition snapshot decodes one batch, not all of them."""
    fixed = _needles(follower.t) if follower is not None else None
    next_offset = 0
    for step in plan.steps:
        if step.only_if_empty:
            continue
        lenient = step.lenient_tail
        for batch in iter_file_batches(
            step.path,
            step.source,
            position=step.position,
            lenient_tail=lenient,
            warn=warn,
            decode=False,
        ):
            low = 0
            if step.kind == "log":  # offsets below the snapshot, or read already, are skipped
                low = max(next_offset, step.skip_below)
                last = batch.base_offset + batch.last_offset_delta
                if last < low:
                    continue
                next_offset = last + 1
            if batch.is_control:
                continue
            if fixed is not None and follower and not batch.records_contain(fixed | follower.topic_ids):
                continue
            records = batch.entries()
            if records and records[0][0] < low:
                records = [r for r in records if r[0] >= low]
            yield batch, records, step


def _records(
    plan: ReadPlan,
    follower: _Follower | None,
    wanted: Callable[[bytes], bool] | None = None,
    warn: WarnFn = unheard,
) -> Iterator[tuple[int, int, int, bool, Any]]:
    """``(offset, timestamp, epoch, from a snapshot, record)`` of each record of ``plan`` that may
    change the follower's target (:func:`_batches`) and that ``wanted`` keeps (its raw value), decoded;
    a record in a snapshot stands at the snapshot's end offset - 1."""
    for batch, records, step in _batches(plan, follower, warn):
        in_snapshot = step.kind == "snapshot"
        for off, ts, _key, value in records:
            if value is None or (wanted is not None and not wanted(value)):
                continue
            try:
                rec = decode_metadata_record(value)
            except MetashellError:
                continue
            offset = step.snapshot.end_offset - 1 if in_snapshot and step.snapshot else off
            yield offset, ts, batch.partition_leader_epoch, in_snapshot, rec


def history(plan: ReadPlan, target: Target, redact: Any = None, warn: WarnFn = unheard) -> Iterator[Change]:
    """Every change to ``target`` in ``plan`` (see :func:`full_plan`), oldest first.

    ``redact(resource_type, key, value)`` replaces secret config values (the shell's redaction).
    ``warn``: hears the reads' warnings (a torn tail; by default none is told: a session told them
    when it loaded the same files).
    """
    if target.kind == "broker" and target.broker is not None:  # one pass over the broker records
        yield from (change for _broker, change in broker_history(plan, [target.broker], warn))
        return
    follower = _Follower(target, redact)
    for offset, ts, epoch, in_snapshot, rec in _records(plan, follower, warn=warn):
        said = follower.apply(rec.name, rec.data)
        if said is not None:
            yield Change(offset, ts, epoch, rec.name, said[0], said[1], in_snapshot)


#: Api keys of the records that change a broker's registration (Register, Unregister, Fence,
#: Unfence, BrokerRegistrationChange): a broker's history decodes no other record.
_BROKER_RECORDS = frozenset(
    {
        RecordType.REGISTER_BROKER_RECORD,
        RecordType.UNREGISTER_BROKER_RECORD,
        RecordType.FENCE_BROKER_RECORD,
        RecordType.UNFENCE_BROKER_RECORD,
        RecordType.BROKER_REGISTRATION_CHANGE_RECORD,
    }
)


def _is_broker_record(value: bytes) -> bool:
    """The value's second byte is its api key (frame version 0 and keys below 128 are one byte)."""
    return len(value) > 1 and value[1] in _BROKER_RECORDS


def broker_history(
    plan: ReadPlan, broker_ids: Iterable[int], warn: WarnFn = unheard
) -> Iterator[tuple[int, Change]]:
    """Every change to each broker of ``broker_ids``, oldest first, in one pass over ``plan``:
    ``health`` asks this for "fenced since when, and after a controlled shutdown or not" of every
    fenced broker without reading the log once per broker."""
    followers = {b: _Follower(Target("broker", broker=b)) for b in broker_ids}
    if not followers:
        return
    for offset, ts, epoch, in_snapshot, rec in _records(plan, None, _is_broker_record, warn):
        d = rec.data
        broker = d.get("BrokerId", d.get("Id"))  # FenceBrokerRecord and UnfenceBrokerRecord: "Id"
        follower = followers.get(broker) if isinstance(broker, int) else None
        said = follower.apply(rec.name, d) if follower is not None else None
        if said is not None and isinstance(broker, int):
            yield broker, Change(offset, ts, epoch, rec.name, said[0], said[1], in_snapshot)
