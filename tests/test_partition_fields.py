"""A partition's fields are declared once (``image/partition_fields.py``): these tests fail at each
place a new field needs a decision, instead of the field going missing there unnoticed."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest
from partitions import partition

from metashell.image.partition import Partition, merge_change
from metashell.image.partition_fields import FIELDS, SLOTS, UNCHANGED, Kind, Merge
from metashell.image.partition_records import PARTITION_CHANGE_FIELDS, PARTITION_FIELDS
from metashell.image.wording import PARTITION_WORDS
from metashell.protocol.schema import bundled_schemas

REPO = Path(__file__).resolve().parent.parent
IDS = ("PartitionId", "TopicId")

NOT_WORDED = {
    "LeaderEpoch": "counted by the leader changes the log tells",
    "PartitionEpoch": "counted: every change bumps it",
    "Directories": "a uuid per replica: the log does not tell them",
}
"""The fields ``log`` does not put in a change's words, each with why."""


def test_the_generated_layout_is_up_to_date() -> None:
    """``image/partition.py`` and ``native/src/replay/slots.rs`` come from the table, never by hand."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_partition_fields.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("record", ["PartitionRecord", "PartitionChangeRecord"])
def test_every_field_of_the_records_is_in_the_table(record: str) -> None:
    """A field Kafka adds to a partition record (a new schema) fails here until the table has it."""
    spec = bundled_schemas()[record]
    fields = [f.name for f in spec.fields if f.name not in IDS]
    known = {f.kafka for f in FIELDS}
    assert [f for f in fields if f not in known] == []
    carried = {f.kafka for f in FIELDS if f.in_change_record}
    if record == "PartitionChangeRecord":
        assert set(fields) == carried, "a change carries every field but the counted epochs"


def test_the_decoders_read_every_field_in_the_schemas_order() -> None:
    """The replayer's positional tuples (and the native indices generated from them) hold each
    record's fields exactly, in its schema's order."""
    schemas = bundled_schemas()
    assert [f.name for f in schemas["PartitionRecord"].fields] == list(PARTITION_FIELDS)
    assert [f.name for f in schemas["PartitionChangeRecord"].fields] == list(PARTITION_CHANGE_FIELDS)


def test_partition_takes_the_fields_in_the_tables_order() -> None:
    assert Partition.__slots__ == SLOTS == tuple(sorted(f.name for f in FIELDS))
    params = list(inspect.signature(Partition.__init__).parameters)[1:]
    assert params == [f.name for f in FIELDS]


def test_the_native_core_lays_partitions_out_as_python_does() -> None:
    native = pytest.importorskip("metashell._native", reason="the native core is not built here")
    assert tuple(native.partition_attributes()) == SLOTS


def test_every_merge_rule_is_one_the_generator_writes() -> None:
    """A field with a rule of its own needs it written in both languages; the rules known are these."""
    assert {f.merge for f in FIELDS} == set(Merge)
    assert [f.name for f in FIELDS if f.merge is Merge.CHECKED] == ["replicas", "directories"]
    assert set(UNCHANGED) == {f.kafka for f in FIELDS if f.merge in (Merge.LEADER, Merge.UNLESS_MINUS_ONE)}


def test_merge_change_follows_each_fields_rule() -> None:
    """null, -1 and -2 keep a value; a leader bumps the leader epoch; every change the partition's."""
    p = partition(leader=1, leader_epoch=4, partition_epoch=9, replicas=(1, 2), isr=(1, 2))
    change = dict.fromkeys(PARTITION_CHANGE_FIELDS)
    change.update({"Leader": -2, "LeaderRecoveryState": -1})
    interned: dict[object, object] = {}
    merge_change(p, interned.setdefault, tuple(change.values()))
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr, p.leader_recovery_state) == (
        1,
        4,
        10,
        (1, 2),
        0,
    )
    change.update({"Isr": (2,), "Leader": 2, "LeaderRecoveryState": 1, "EligibleLeaderReplicas": ()})
    merge_change(p, interned.setdefault, tuple(change.values()))
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr, p.elr, p.leader_recovery_state) == (
        2,
        5,
        11,
        (2,),
        (),
        1,
    )


def test_every_field_is_worded_by_log_or_says_why_not() -> None:
    kafka = [f.kafka for f in FIELDS]
    assert sorted(set(PARTITION_WORDS) | set(NOT_WORDED)) == sorted(kafka)
    assert not set(PARTITION_WORDS) & set(NOT_WORDED)


def test_the_spark_tables_have_a_column_per_field() -> None:
    pytest.importorskip("pyarrow", reason="the Spark extra is not installed")
    from metashell.spark.schemas import PARTITIONS

    names = PARTITIONS.names
    assert names[names.index("partition_id") + 1 :] == [f.name for f in FIELDS]
    assert {f.kind for f in FIELDS} == set(Kind)
