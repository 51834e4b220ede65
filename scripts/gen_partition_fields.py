#!/usr/bin/env python3
"""Generate a partition's layout and merge, in Python and in Rust, from ``partition_fields.FIELDS``.

Writes ``metashell/image/partition_records.py`` (the two partition records' fields in their bundled
schemas' order: the replayer's positional tuples), ``metashell/image/partition.py`` (the
``Partition`` class, its journal entry, its time-travel swap and the part of
``PartitionRegistration.merge`` that cannot fail) and ``native/src/replay/slots.rs`` (the native
core's slot names, indices and the change record's fields by merge rule), so that a field's name,
order and rule are written once, and its place in a record is the schema's:

    python scripts/gen_partition_fields.py            # rewrites the three files
    python scripts/gen_partition_fields.py --check    # exit 1 if any is out of date

A new field of ``PartitionRecord.json`` is then: the schema, its row in the table, this script (and
``scripts/gen_native.py`` for the native decoders).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from generated import write_or_check

from metashell.image.partition_fields import FIELDS, SLOTS, Kind, Merge, PartitionField, field
from metashell.protocol.schema import bundled_schemas

RECORDS_TARGET = ROOT / "metashell" / "image" / "partition_records.py"
PYTHON_TARGET = ROOT / "metashell" / "image" / "partition.py"
RUST_TARGET = ROOT / "native" / "src" / "replay" / "slots.rs"
SCRIPT = "scripts/gen_partition_fields.py"
SOURCE = "metashell/image/partition_fields.py"

_SCHEMAS = bundled_schemas()
PARTITION_FIELDS = tuple(f.name for f in _SCHEMAS["PartitionRecord"].fields)
PARTITION_CHANGE_FIELDS = tuple(f.name for f in _SCHEMAS["PartitionChangeRecord"].fields)

_CARRIED = [f for f in FIELDS if f.merge is Merge.UNLESS_NULL]
"""The arrays a change carries (replaced unless null), in the table's order: made and merged by one
rule for them all (``slots::UNLESS_NULL``)."""

_PY_TYPES = {
    Kind.BROKER_IDS: "tuple[Any, ...]",
    Kind.DIRECTORY_IDS: "tuple[Any, ...]",
    Kind.INT: "int",
    Kind.RECOVERY_STATE: "int",
}


def _merged(f: PartitionField) -> bool:
    """Whether ``merge_change`` sets the field (the checked pair is set by the replayer's rule)."""
    return f.in_change_record and f.merge is not Merge.CHECKED


def _rule(f: PartitionField) -> list[str]:
    """The lines of ``merge_change`` for one field (unpacked from the change record by name)."""
    n = f.name
    if f.merge is Merge.UNLESS_NULL:
        return [f"    if {n} is not None:", f"        p.{n} = intern({n}, {n}) if {n} else EMPTY"]
    if f.merge is Merge.LEADER:
        bumped = [g.name for g in FIELDS if g.merge is Merge.BUMPED_BY_LEADER]
        return [
            f"    if {n} != NO_LEADER_CHANGE:",
            f"        p.{n} = {n}",
            *(f"        p.{b} += 1" for b in bumped),
        ]
    if f.merge is Merge.UNLESS_MINUS_ONE:
        return [f"    if {n} != -1:", f"        p.{n} = {n}"]
    raise AssertionError(f"no merge rule for {n}: {f.merge}")


def _unpack(record: tuple[str, ...], names: dict[str, str]) -> str:
    """``(a, _, b, ...) = t``: the record's fields that ``names`` names (Kafka's name: the local's),
    as locals (one unpack is cheaper than a subscript per field, on the replayer's hottest path)."""
    return "".join(f"        {names.get(k, '_')},\n" for k in record)


def _made(f: PartitionField) -> str:
    """The line of ``make_partition`` that sets one slot (its value unpacked from the record by name)."""
    n = f.name
    if f.kind is Kind.BROKER_IDS and f.merge is not Merge.CHECKED:
        if f.often_replicas:
            return f"    p.{n} = replicas if {n} == record_replicas else intern({n}, {n}) if {n} else EMPTY\n"
        return f"    p.{n} = intern({n}, {n}) if {n} else EMPTY\n"
    return f"    p.{n} = {n}\n"


def render_python() -> str:
    """``metashell/image/partition.py``."""
    params = ",\n".join(f"        {f.name}: {_PY_TYPES[f.kind]}" for f in FIELDS)
    sets = "\n".join(f"        self.{f.name} = {f.name}" for f in FIELDS)
    own = ",\n".join(f"            self.{f.name}" for f in FIELDS)
    values = "".join(f"        p.{s},\n" for s in SLOTS)
    merged = [f for f in FIELDS if _merged(f)]
    # the arrays first, then the leader and the recovery state: the order of `native/src/replay/merge.rs`
    steps = [Merge.UNLESS_NULL, Merge.LEADER, Merge.UNLESS_MINUS_ONE]
    in_order = sorted(merged, key=lambda f: steps.index(f.merge))
    merge_body = "\n".join(line for f in in_order for line in _rule(f))
    made = [f for f in FIELDS if f.merge is not Merge.CHECKED]
    make_body = "".join(_made(f) for f in FIELDS)
    # the record's replicas only to compare with (the replayer checks and makes the partition's own)
    made_names = {f.kafka: f.name for f in made} | {field("replicas").kafka: "record_replicas"}
    make_unpack = _unpack(PARTITION_FIELDS, made_names)
    merge_unpack = _unpack(PARTITION_CHANGE_FIELDS, {f.kafka: f.name for f in merged})
    bumped = "\n".join(f"    p.{f.name} += 1" for f in FIELDS if f.merge is Merge.BUMPED)
    return f'''"""``PartitionRegistration`` as the image keeps it: GENERATED, do not edit.

Made by ``python {SCRIPT}`` from the field table in ``{SOURCE}``; checked byte for byte by
the tests.  A new partition field is a row there, not an edit here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .atoms import EMPTY, NO_LEADER_CHANGE, Slotted

__all__ = ["Partition", "journal_entry", "make_partition", "merge_change", "swap_entry"]

_new = object.__new__


class Partition(Slotted):
    """``PartitionRegistration``.  Int lists are (interned) tuples, ``directories`` a tuple of
    16-byte uuids with one entry per replica (``MIGRATING_DIR`` when unknown)."""

    __slots__ = (
{"".join(f'        "{s}",{chr(10)}' for s in SLOTS)}    )

    def __init__(
        self,
{params},
    ) -> None:
{sets}

    def copy(self) -> Partition:
        return Partition(
{own},
        )


def make_partition(
    t: tuple[Any, ...],
    intern: Callable[[Any, Any], Any],
    replicas: tuple[Any, ...],
    directories: tuple[Any, ...],
) -> Partition:
    """A partition from a PartitionRecord decoded as ``PARTITION_FIELDS`` (arrays as tuples), given
    its replicas and directories (checked and made by the replayer's rule): every other array
    interned (``intern(v, v)``, the empty one ``EMPTY``), every number as recorded.  Its slots are
    set here, as ``__init__`` sets them, without a second frame per partition (a snapshot makes a
    million)."""
    (
{make_unpack}    ) = t
    p = _new(Partition)
{make_body}    return p


def journal_entry(p: Partition) -> tuple[Any, ...]:
    """``timeline.kept(p)`` spelled out (no call per slot): ``(p, *its slot values)``, what a long
    log journals for each partition change."""
    return (
        p,
{values}    )


def swap_entry(e: tuple[Any, ...]) -> tuple[Any, ...]:
    """One step of time travel: give ``e``'s partition the values ``e`` holds, and return the entry
    of the values they replace."""
    p = e[0]
    old = (
        p,
{values}    )
    (
        _,
{values}    ) = e
    return old


def merge_change(p: Partition, intern: Callable[[Any, Any], Any], t: tuple[Any, ...]) -> None:
    """The part of ``PartitionRegistration.merge`` that cannot fail, for a PartitionChangeRecord
    decoded as ``PARTITION_CHANGE_FIELDS`` (arrays as tuples), shared by the replayer's two paths:
    each field's rule is its ``Merge`` in the table (None, -1 or ``NO_LEADER_CHANGE`` = unchanged),
    and every change bumps the partition epoch.  Arrays are interned (``intern(v, v)``), the empty
    one is ``EMPTY``."""
    (
{merge_unpack}    ) = t
{merge_body}
{bumped}
'''


def _const(name: str) -> str:
    return name.upper()


def _with_carried(order: list[str], count: str, what: str) -> str:
    """``with_carried``: the struct's own values by name and the carried arrays made by ``carried``
    (in ``UNLESS_NULL``'s order), put in ``order``."""
    made = "".join(f"        let {f.name} = carried(&UNLESS_NULL[{i}])?;\n" for i, f in enumerate(_CARRIED))
    carried = {f.name for f in _CARRIED}
    placed = ", ".join(n if n in carried else f"self.{n}" for n in order)
    return f"""    /// The values in {what}: these, and each carried array made by `carried` (in
    /// `UNLESS_NULL`'s order, the order Python's `make_partition` interns them).
    #[inline]
    pub fn with_carried<E>(self, mut carried: impl FnMut(&UnlessNull) -> Result<T, E>) -> Result<[T; {count}], E> {{
{made}        Ok([{placed}])
    }}
"""


def render_rust() -> str:
    """``native/src/replay/slots.rs``."""
    n = len(SLOTS)
    names = "".join(f'    "{s}",\n' for s in SLOTS)
    indices = "".join(f"pub const {_const(s)}: usize = {i};\n" for i, s in enumerate(SLOTS))
    struct = "".join(f"    pub {f.name}: T,\n" for f in FIELDS if f not in _CARRIED)
    record = "".join(
        f"    pub const {_const(f.name)}: usize = {PARTITION_FIELDS.index(f.kafka)};\n" for f in FIELDS
    )
    change = "".join(
        f"    pub const {_const(f.name)}: usize = {PARTITION_CHANGE_FIELDS.index(f.kafka)};\n"
        for f in FIELDS
        if f.in_change_record
    )
    arrays = [f for f in FIELDS if f.kind in (Kind.BROKER_IDS, Kind.DIRECTORY_IDS)]
    array_indices = "".join(f"    pub const {_const(f.name)}: usize = {i};\n" for i, f in enumerate(arrays))
    array_struct = "".join(f"    pub {f.name}: T,\n" for f in arrays if f not in _CARRIED)
    carried = "".join(
        f"    UnlessNull {{ record: record::{_const(f.name)}, field: change::{_const(f.name)}, slot: {_const(f.name)}, "
        f"array: array::{_const(f.name)}, often_replicas: {str(f.often_replicas).lower()} }},\n"
        for f in _CARRIED
    )
    slots_with = _with_carried(list(SLOTS), "COUNT", "slot order")
    arrays_with = _with_carried([f.name for f in arrays], "array::COUNT", "row order (`array`)")
    return f"""//! `Partition`'s slots and the partition records' fields: GENERATED, do not edit.
//!
//! Made by `python {SCRIPT}` from the field table in `{SOURCE}`;
//! checked byte for byte by the tests. A slot's index is its place in `Partition.__slots__` (the
//! order of a journal entry's values, and of `Maker::offsets`).
// A table: each slot's index is declared whether or not a rule names it.
#![allow(dead_code)]

/// How many slots a `Partition` has.
pub const COUNT: usize = {n};

/// `Partition.__slots__`, in order.
pub const NAMES: [&str; COUNT] = [
{names}];

{indices}
/// One value per slot that has a rule of its own, by name; the arrays a change carries
/// (`UNLESS_NULL`) are made by one rule for them all. The only place where values are put in slot
/// order (`with_carried`): a new field with a rule of its own is a compile error where a partition
/// is made, a new carried array is made by the loop that makes the others.
pub struct Slots<T> {{
{struct}}}

impl<T> Slots<T> {{
{slots_with}}}

/// Each field's place in a decoded PartitionRecord (`PARTITION_FIELDS`).
pub mod record {{
{record}}}

/// Each carried field's place in a decoded PartitionChangeRecord (`PARTITION_CHANGE_FIELDS`).
pub mod change {{
{change}}}

/// The array fields' places in a waiting partition's row (`deferred::Row`).
pub mod array {{
    /// How many array fields a partition has.
    pub const COUNT: usize = {len(arrays)};
{array_indices}}}

/// One value per array field with a rule of its own, by name (the carried ones as in `Slots`): the
/// only place where a row's arrays are put in row order.
pub struct Arrays<T> {{
{array_struct}}}

impl<T> Arrays<T> {{
{arrays_with}}}

/// An array a PartitionChangeRecord carries and replaces unless it is null (`Merge.UNLESS_NULL`),
/// which a PartitionRecord gives as is: where it is in each decoded record, in a partition and in a
/// waiting row.
pub struct UnlessNull {{
    pub record: usize,
    pub field: usize,
    pub slot: usize,
    pub array: usize,
    /// Most often the replica list (`PartitionField.often_replicas`): a new partition shares it.
    pub often_replicas: bool,
}}

/// The carried arrays, in the table's order (the order Python's `make_partition` and `merge_change`
/// intern them).
pub const UNLESS_NULL: [UnlessNull; {len(_CARRIED)}] = [
{carried}];
"""


_IDS = ("PartitionId", "TopicId")
"""The key of a partition, not a field of its registration."""


def _decoded_everywhere() -> None:
    """Every field of the two schemas has a row, and every row a place in the schemas it belongs to."""
    known = {f.kafka for f in FIELDS}
    for record, fields in (
        ("PartitionRecord", PARTITION_FIELDS),
        ("PartitionChangeRecord", PARTITION_CHANGE_FIELDS),
    ):
        for name in fields:
            if name not in known and name not in _IDS:
                sys.exit(f"{record}.{name} has no row in {SOURCE}: add one (its kind and merge rule)")
    for f in FIELDS:
        records = [("PartitionRecord", PARTITION_FIELDS)]
        if f.in_change_record:
            records.append(("PartitionChangeRecord", PARTITION_CHANGE_FIELDS))
        for record, fields in records:
            if f.kafka not in fields:
                sys.exit(f"{f.kafka} (a row of {SOURCE}) is not a field of {record}'s bundled schema")


def render_records() -> str:
    """``metashell/image/partition_records.py``: the records' fields in their schemas' order."""

    def listed(fields: tuple[str, ...]) -> str:
        return "".join(f'    "{name}",\n' for name in fields)

    return f'''"""The field order of the two hottest records as the replayer decodes them: GENERATED, do not edit.

Made by ``python {SCRIPT}`` from the bundled schemas (``PartitionRecord.json``,
``PartitionChangeRecord.json``): each record's fields in its schema's order, so that a field Kafka
adds is decoded where the schema puts it.  Apart from ``topics`` (whose rules take these tuples) so
that the image model's generated code can name each field's place.
"""

from __future__ import annotations

from metashell.protocol.metadata import ReplayDecoders

__all__ = ["DECODERS", "PARTITION_CHANGE_FIELDS", "PARTITION_FIELDS"]

# The two hottest records are decoded straight into tuples of these fields (no dict, no key
# lookups): a million PartitionRecords in a big snapshot, PartitionChangeRecords in the log.
PARTITION_FIELDS = (
{listed(PARTITION_FIELDS)})
PARTITION_CHANGE_FIELDS = (
{listed(PARTITION_CHANGE_FIELDS)})
DECODERS = ReplayDecoders(
    {{"PartitionRecord": PARTITION_FIELDS, "PartitionChangeRecord": PARTITION_CHANGE_FIELDS}}
)
'''


def main() -> int:
    _decoded_everywhere()
    parser = argparse.ArgumentParser(description=(__doc__ or "").strip().split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the files are up to date")
    args = parser.parse_args()
    status = 0
    targets = ((RECORDS_TARGET, render_records), (PYTHON_TARGET, render_python), (RUST_TARGET, render_rust))
    for target, render in targets:
        status |= write_or_check(target, render(), check=args.check, script=SCRIPT)
    return status


if __name__ == "__main__":
    sys.exit(main())
