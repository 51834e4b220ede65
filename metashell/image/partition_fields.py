"""A partition's fields, declared once: Kafka's ``PartitionRegistration`` as metashell keeps it.

Kafka adds a partition field every few releases (directories in 3.7, the ELRs in 3.8).  Every
place that lays out or merges a partition follows this table instead of spelling the fields out:

* ``scripts/gen_partition_fields.py`` writes the Python ``Partition`` class, its journal entry and
  its merge (``image/partition.py``) and the native core's slot constants
  (``native/src/replay/slots.rs``) from it, and the decoders' field lists from the schemas
  (``image/partition_records.py``); ``--check`` (a test) keeps all three up to date;
* the Spark tables and the change log read it at run time (``spark/schemas.py``,
  ``spark/history.py``, ``image/changelog.py``).

A new field is its schema, one row here and its merge rule in each language where it is not one of
the rules below (a new nullable array, the likeliest, needs none);
``tests/test_partition_fields.py`` fails at each place a decision is missing.

The rows are in the order ``Partition(...)`` takes its arguments and the Spark tables show the
columns; a partition's ``__slots__`` (and so a journal entry, and the native core's slot indices) are
the names sorted.  The records' own field order is their schemas' (``partition_records``).
"""

# No ``from __future__ import annotations``: a NamedTuple on the start path would compile its
# string annotations (``test_cli``: a one-shot command compiles none).
from enum import Enum
from typing import NamedTuple

__all__ = ["FIELDS", "SLOTS", "UNCHANGED", "Kind", "Merge", "PartitionField", "field", "kafka_field"]


class Kind(Enum):
    """What a field holds in the image (and so in a journal entry, a Spark column...)."""

    BROKER_IDS = "broker ids"
    """An int32 array, kept as an interned tuple (``model.EMPTY`` when empty)."""
    DIRECTORY_IDS = "directory ids"
    """A uuid array, kept as an interned tuple of 16-byte ``bytes``, one per replica."""
    INT = "int"
    """An int32."""
    RECOVERY_STATE = "recovery state"
    """Kafka's int8 ``LeaderRecoveryState`` code, kept as recorded; named (``RECOVERED``...) in
    tables, as Kafka's shell names it."""


class Merge(Enum):
    """How ``PartitionRegistration.merge`` takes a PartitionChangeRecord's value (Kafka 4.4)."""

    CHECKED = "checked"
    """Replicas and directories: validated together, set together (``_partition_change_checked``)."""
    UNLESS_NULL = "unless null"
    """A nullable array: null keeps the old value, anything else replaces it."""
    LEADER = "leader"
    """``NO_LEADER_CHANGE`` (-2) keeps the leader; any other value sets it and bumps its epoch."""
    UNLESS_MINUS_ONE = "unless -1"
    """An int8 enum: -1 keeps the old value."""
    BUMPED_BY_LEADER = "bumped by leader"
    """Not in the change record: + 1 whenever the leader field changes it."""
    BUMPED = "bumped"
    """Not in the change record: + 1 on every change."""


class PartitionField(NamedTuple):
    """One field of ``PartitionRegistration``.

    ``name`` is the slot of ``Partition`` and the Spark column; ``kafka`` the PartitionRecord's (and
    PartitionChangeRecord's) field; ``default`` what an older record version that lacks it means
    (None: every version has it).  A named tuple, not a dataclass: a one-shot command reads this
    table, and ``dataclasses`` costs it ``inspect`` (``test_cli`` holds its imports)."""

    name: str
    kafka: str
    kind: Kind
    merge: Merge
    default: str | None = None
    doc: str = ""
    often_replicas: bool = False
    """Most often equal to the replica list (an in-sync partition's ISR): a new partition compares
    it with the replicas first and shares their tuple, without an interning lookup."""

    @property
    def in_change_record(self) -> bool:
        """Whether a PartitionChangeRecord carries this field (the epochs are counted, not carried)."""
        return self.merge not in (Merge.BUMPED, Merge.BUMPED_BY_LEADER)

    @property
    def spark_name(self) -> str:
        """The field as the Spark history's record struct names it: Kafka's, camel-cased."""
        return self.kafka[0].lower() + self.kafka[1:]


FIELDS: tuple[PartitionField, ...] = (
    PartitionField("leader", "Leader", Kind.INT, Merge.LEADER),
    PartitionField("leader_epoch", "LeaderEpoch", Kind.INT, Merge.BUMPED_BY_LEADER),
    PartitionField("partition_epoch", "PartitionEpoch", Kind.INT, Merge.BUMPED),
    PartitionField("replicas", "Replicas", Kind.BROKER_IDS, Merge.CHECKED, doc="the assigned replicas"),
    PartitionField(
        "isr", "Isr", Kind.BROKER_IDS, Merge.UNLESS_NULL, doc="the in-sync replicas", often_replicas=True
    ),
    PartitionField(
        "elr",
        "EligibleLeaderReplicas",
        Kind.BROKER_IDS,
        Merge.UNLESS_NULL,
        default="empty",
        doc="eligible leader replicas (KIP-966, 3.8+)",
    ),
    PartitionField(
        "last_known_elr",
        "LastKnownElr",
        Kind.BROKER_IDS,
        Merge.UNLESS_NULL,
        default="empty",
        doc="the last known ELR (KIP-966, 3.8+)",
    ),
    PartitionField("adding_replicas", "AddingReplicas", Kind.BROKER_IDS, Merge.UNLESS_NULL, default="empty"),
    PartitionField(
        "removing_replicas", "RemovingReplicas", Kind.BROKER_IDS, Merge.UNLESS_NULL, default="empty"
    ),
    PartitionField(
        "directories",
        "Directories",
        Kind.DIRECTORY_IDS,
        Merge.CHECKED,
        default="MIGRATING per replica",
        doc="each replica's log directory (KIP-858, 3.7+)",
    ),
    PartitionField(
        "leader_recovery_state",
        "LeaderRecoveryState",
        Kind.RECOVERY_STATE,
        Merge.UNLESS_MINUS_ONE,
        default="0 (RECOVERED)",
        doc="KIP-704: 1 while an unclean leader recovers",
    ),
)
"""Every field, in the order ``Partition(...)`` takes them and the Spark tables show them: the
leader and the epochs, the replica lists, the directories, the recovery state."""

SLOTS: tuple[str, ...] = tuple(sorted(f.name for f in FIELDS))
"""``Partition.__slots__``: the order of a journal entry's values and of the native slot indices."""

_BY_NAME = {f.name: f for f in FIELDS}
_BY_KAFKA = {f.kafka: f for f in FIELDS}


def field(name: str) -> PartitionField:
    """The field whose slot is ``name`` (KeyError for any other name)."""
    return _BY_NAME[name]


def kafka_field(kafka: str) -> PartitionField:
    """The field Kafka's records name ``kafka`` (KeyError for any other name)."""
    return _BY_KAFKA[kafka]


UNCHANGED: dict[str, int] = {
    f.kafka: -2 if f.merge is Merge.LEADER else -1
    for f in FIELDS
    if f.merge in (Merge.LEADER, Merge.UNLESS_MINUS_ONE)
}
"""A PartitionChangeRecord's "unchanged" values of its scalar fields, by Kafka name
(``NO_LEADER_CHANGE`` for the leader, -1 for the recovery state): Kafka's defaults for them."""
