"""A ``Partition`` for a test, from the field table: the test names the fields it is about, and a
field Kafka adds later takes its empty value here instead of breaking every test that makes one."""

from __future__ import annotations

from typing import Any

from metashell.image.model import MIGRATING_DIR, Partition
from metashell.image.partition_fields import FIELDS, Kind

_EMPTY = {Kind.INT: 0, Kind.RECOVERY_STATE: 0, Kind.BROKER_IDS: (), Kind.DIRECTORY_IDS: None}


def partition(cls: type[Partition] = Partition, /, **given: Any) -> Partition:
    """A partition (of ``cls``, a subclass if a test needs one) with ``given`` fields (by slot
    name); the rest empty: no replica list, epochs and leader 0, RECOVERED, and a MIGRATING
    directory per replica."""
    unknown = set(given) - {f.name for f in FIELDS}
    assert not unknown, f"not partition fields: {sorted(unknown)}"
    values = {f.name: given.get(f.name, _EMPTY[f.kind]) for f in FIELDS}
    if values["directories"] is None:
        values["directories"] = (MIGRATING_DIR,) * len(values["replicas"])
    return cls(**values)
