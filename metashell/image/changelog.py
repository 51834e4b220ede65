"""The metadata log as a list of records people can read: ``log [--from A] [--to B] [--type T]``.

Each record comes with its batch coordinates (file, byte position, base offset, leader epoch, append
time) and a one-line summary ("topic orders created, 6 partitions", "partition orders-3: isr [1,2,3]
-> [1,3]", "broker 2 fenced").  Summaries that say what a change replaced need the state before it,
so the reader follows topic names and partition leader/ISR/replicas from the first record it reads
(the whole log the files hold, as ``history`` does); records before ``--from`` are read, not shown.

``--json`` gives the record exactly as ``kafka-dump-log --cluster-metadata-decoder`` prints its
payload (``{"type", "version", "data"}`` in Kafka's JSON form) plus the batch coordinates.
Records of a metadata transaction are marked; an aborted transaction's records say so when the
AbortTransactionRecord is reached (Kafka's replay discards them).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from metashell.errors import MetashellError
from metashell.log.directory import ReadPlan
from metashell.log.problems import WarnFn, unheard
from metashell.log.reader import PlanReader
from metashell.protocol.control import decode_control_record
from metashell.protocol.kafka_json import record_type_name, to_kafka_json
from metashell.protocol.metadata import decode_metadata_record
from metashell.protocol.record_type import RecordType
from metashell.protocol.uuid import uuid_to_str

from .image import MetadataImage
from .kafka_names import CONFIG_RESOURCE_TYPE_NAMES
from .partition_fields import Kind, kafka_field
from .wording import (
    PARTITION_NO_CHANGE,
    PARTITION_WORDS,
    config_words,
    id_list,
    partition_change_words,
    partition_created_words,
    registration_refresh_words,
)

_SCALARS = tuple(f for f in PARTITION_WORDS if kafka_field(f).kind in (Kind.INT, Kind.RECOVERY_STATE))
"""The worded fields that are numbers, not lists."""

__all__ = ["LogEntry", "control_words", "iter_log"]


@dataclass
class LogEntry:
    offset: int
    timestamp: int
    epoch: int
    record: str  # the schema name (PartitionChangeRecord) or the control record's name
    version: int
    summary: str
    source: str
    position: int
    base_offset: int
    control: bool
    transaction: str | None  # None, "open" (inside Begin..End), or "aborted" (the abort marker)
    payload: dict[str, Any]  # kafka-dump-log's JSON

    def as_json(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "timestamp": self.timestamp,
            "leaderEpoch": self.epoch,
            "batch": {"file": self.source, "position": self.position, "baseOffset": self.base_offset},
            "control": self.control,
            "transaction": self.transaction,
            "summary": self.summary,
            **self.payload,
        }


#: The record types whose ``log`` summary is their name alone, and why; every other type has a
#: ``_<SchemaName>`` method below.  ``tests/test_record_type_tables.py`` fails on a type in neither.
SAID_BY_NAME: dict[RecordType, str] = {
    RecordType.DELEGATION_TOKEN_RECORD: "its fields are a token's: shown by cat, redacted",
    RecordType.REMOVE_DELEGATION_TOKEN_RECORD: "its one field is a token id",
    RecordType.USER_SCRAM_CREDENTIAL_RECORD: "a credential: shown by cat, redacted",
    RecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD: "a credential's name and mechanism, in the payload",
    RecordType.CLIENT_QUOTA_RECORD: "an entity of several parts and a value: the payload says it whole",
    RecordType.ACCESS_CONTROL_ENTRY_RECORD: "a binding of seven fields: the payload and describe acl say it",
    RecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD: "its one field is the binding's id",
    RecordType.NO_OP_RECORD: "changes nothing",
    RecordType.ZK_MIGRATION_STATE_RECORD: "one number, in the payload",
    RecordType.BEGIN_TRANSACTION_RECORD: "a marker: the transaction column says what it opens",
    RecordType.END_TRANSACTION_RECORD: "a marker: the transaction column says what it closes",
    RecordType.ABORT_TRANSACTION_RECORD: "a marker: the transaction column says what it aborts",
}


class _Summaries:
    """One-line summaries, following just enough state to say what a change replaced.

    ``base``: the image just before the first record read, when the reader does not start at the
    beginning of what the files hold; names and partition states not seen yet come from it.
    """

    def __init__(self, base: MetadataImage | None = None, redact: Any = None) -> None:
        self.base = base
        self.redact = redact
        self.names: dict[bytes, str] = {}
        self.parts: dict[tuple[bytes, int], dict[str, Any]] = {}

    def say(self, name: str, d: dict[str, Any]) -> str:
        handler = getattr(self, "_" + name, None)
        return handler(d) if handler is not None else name.removesuffix("Record")

    def _topic(self, tid: bytes) -> str:
        name = self.names.get(tid)
        if name is None and self.base is not None:
            topic = self.base.topics.by_id.get(tid)
            name = None if topic is None else topic.name
        return uuid_to_str(tid) if name is None else name

    def _state(self, key: tuple[bytes, int]) -> dict[str, Any]:
        state = self.parts.get(key)
        if state is None:
            state = self.parts[key] = {}
            topic = None if self.base is None else self.base.topics.by_id.get(key[0])
            p = None if topic is None else topic.partitions.get(key[1])
            if p is not None:
                for kafka in PARTITION_WORDS:
                    value = getattr(p, kafka_field(kafka).name)
                    state[kafka] = list(value) if type(value) is tuple else value
        return state

    def _TopicRecord(self, d: dict[str, Any]) -> str:
        self.names[d["TopicId"]] = d["Name"]
        return f"topic {d['Name']} created"

    def _RemoveTopicRecord(self, d: dict[str, Any]) -> str:
        return f"topic {self._topic(d['TopicId'])} deleted"

    def _PartitionRecord(self, d: dict[str, Any]) -> str:
        key = (d["TopicId"], d["PartitionId"])
        self.parts[key] = {f: d.get(f) or [] for f in PARTITION_WORDS if f not in _SCALARS}
        self.parts[key]["Leader"] = d["Leader"]
        self.parts[key]["LeaderRecoveryState"] = d.get("LeaderRecoveryState", 0)
        words = partition_created_words(d["Leader"], d["Replicas"], d["Isr"])
        return f"partition {self._topic(d['TopicId'])}-{d['PartitionId']} created: {words}"

    def _PartitionChangeRecord(self, d: dict[str, Any]) -> str:
        state = self._state((d["TopicId"], d["PartitionId"]))
        changes = {}
        for field in PARTITION_WORDS:
            v = d.get(field)
            if v is None or PARTITION_NO_CHANGE.get(field) == v:
                continue
            old = state.get(field)
            state[field] = v
            if old != v:
                changes[field] = (old, v)
        return f"partition {self._topic(d['TopicId'])}-{d['PartitionId']}: {partition_change_words(changes)}"

    def _UnregisterControllerRecord(self, d: dict[str, Any]) -> str:
        return f"controller {d['ControllerId']} unregistered"

    def _RegisterControllerRecord(self, d: dict[str, Any]) -> str:
        listeners = ", ".join(f"{e['Name']}://{e['Host']}:{e['Port']}" for e in d.get("EndPoints") or ())
        ready = ", zk migration ready" if d.get("ZkMigrationReady") else ""
        incarnation = uuid_to_str(d["IncarnationId"])
        return f"controller {d['ControllerId']} registered, incarnation {incarnation}, {listeners or 'no listener'}{ready}"

    def _RegisterBrokerRecord(self, d: dict[str, Any]) -> str:
        return f"broker {d['BrokerId']} registered, epoch {d['BrokerEpoch']}"

    def _UnregisterBrokerRecord(self, d: dict[str, Any]) -> str:
        return f"broker {d['BrokerId']} unregistered"

    def _FenceBrokerRecord(self, d: dict[str, Any]) -> str:
        return f"broker {d['Id']} fenced"

    def _UnfenceBrokerRecord(self, d: dict[str, Any]) -> str:
        return f"broker {d['Id']} unfenced"

    def _BrokerRegistrationChangeRecord(self, d: dict[str, Any]) -> str:
        what = {1: "fenced", -1: "unfenced"}.get(d.get("Fenced", 0))
        if d.get("InControlledShutdown") == 1:
            what = "in controlled shutdown"
        return f"broker {d['BrokerId']} " + (what or registration_refresh_words(d))

    def _ConfigRecord(self, d: dict[str, Any]) -> str:
        value = d["Value"]
        if self.redact is not None:
            value = self.redact(d["ResourceType"], d["Name"], value)
        rtype = CONFIG_RESOURCE_TYPE_NAMES.get(d["ResourceType"], str(d["ResourceType"])).lower()
        return config_words(rtype, d["ResourceName"], d["Name"], value)

    def _FeatureLevelRecord(self, d: dict[str, Any]) -> str:
        return f"feature {d['Name']} level {d['FeatureLevel']}"

    def _ClearElrRecord(self, d: dict[str, Any]) -> str:
        return f"elr cleared: topic {d['TopicName']}" if d["TopicName"] else "elr cleared: every topic"

    def _ProducerIdsRecord(self, d: dict[str, Any]) -> str:
        return (
            f"producer ids below {d['NextProducerId']} handed out (the last block to broker {d['BrokerId']})"
        )


def control_words(name: str, data: dict[str, Any]) -> str:
    """A control record in words: who leads and who voted, the voter set, kraft.version."""

    def ids(entries: Any) -> str:
        return id_list([e.get("VoterId") for e in entries or ()])

    if name == "LeaderChange":
        voters, granted = ids(data.get("Voters")), ids(data.get("GrantingVoters"))
        return f"leader {data.get('LeaderId')}, voters {voters}, granted by {granted}"
    if name == "KRaftVoters":
        each = [
            f"{v.get('VoterId')}@"
            + ",".join(f"{e.get('Host')}:{e.get('Port')}" for e in v.get("Endpoints") or ())
            for v in data.get("Voters") or ()
        ]
        return "voters " + (" ".join(each) or "none")
    if name == "KRaftVersion":
        return f"kraft.version {data.get('KRaftVersion')}"
    return name


def iter_log(
    plan: ReadPlan,
    *,
    first: int | None = None,
    last: int | None = None,
    types: frozenset[str] | None = None,
    exclude: frozenset[str] = frozenset(),
    base: MetadataImage | None = None,
    payloads: bool = True,
    salvage: bool = False,
    redact: Any = None,
    warn: WarnFn = unheard,
) -> Iterator[LogEntry]:
    """The records of ``plan`` from ``first`` to ``last`` (inclusive), of ``types`` (schema names or
    Kafka's type names, case-insensitive) when given.  ``base``: the image at ``first - 1`` when
    ``plan`` starts at ``first`` (``log.plans.log_plan``) rather than with a snapshot.  ``exclude``:
    names never shown (``--type '!NoOpRecord'``).  ``payloads``:
    decode each record into kafka-dump-log's JSON (``LogEntry.payload``; ``{}`` without).  ``salvage``:
    stop before the first damaged batch instead of failing, as a ``--salvage`` load does.  ``redact``:
    ``redact(resource_type, key, value)``, the shell's redaction of a config value in a summary.
    ``warn``: hears the read's warnings (a torn tail; by default none: the session told them when
    it loaded the same files)."""
    summaries = _Summaries(base, redact)
    txn: str | None = None
    wanted = None if types is None else {t.lower() for t in types}
    unwanted = {t.lower() for t in exclude}
    reader = PlanReader(plan, warn=warn, keep_index=False, salvage=salvage)
    for kind, batch, records, step in reader:
        in_snapshot = kind == "snapshot"
        for off, ts, key, value in records:
            offset = step.snapshot.end_offset - 1 if in_snapshot and step.snapshot else off
            if last is not None and offset > last and not in_snapshot:
                return
            payload: dict[str, Any]
            shown = not (first is not None and (offset < first or in_snapshot))
            try:
                if batch.is_control:
                    ctl = decode_control_record(key, value)
                    name, version, summary = ctl.name, 0, control_words(ctl.name, ctl.data or {})
                    payload = {"type": ctl.name, "data": dict(ctl.data or {})} if shown and payloads else {}
                else:
                    rec = decode_metadata_record(value)  # type: ignore[arg-type]
                    name, version = rec.name, rec.version
                    summary = summaries.say(rec.name, rec.data)  # before the filters: it follows state
                    shown = shown and (
                        wanted is None or name.lower() in wanted or record_type_name(name).lower() in wanted
                    )
                    payload = (
                        {
                            "type": record_type_name(rec.name),
                            "version": rec.version,
                            "data": to_kafka_json(rec.name, rec.version, rec.data),
                        }
                        if shown and payloads
                        else {}
                    )
            except (MetashellError, TypeError, KeyError):
                continue
            marker = txn
            if name == "BeginTransactionRecord":
                txn = marker = "open"
            elif name == "EndTransactionRecord":
                txn, marker = None, "open"
            elif name == "AbortTransactionRecord":
                txn, marker = None, "aborted"
                summary = "transaction aborted: the records since BeginTransaction are discarded"
            if not shown or (wanted is not None and batch.is_control and name.lower() not in wanted):
                continue
            if unwanted and name.lower() in unwanted:
                continue
            yield LogEntry(
                offset,
                ts,
                batch.partition_leader_epoch,
                name,
                version,
                summary,
                batch.source,
                batch.position,
                batch.base_offset,
                batch.is_control,
                marker,
                payload,
            )
