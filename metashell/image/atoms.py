"""The values every model object shares: the ``Slotted`` base, the shared empty tuple, Kafka's
reserved directory ids and leader codes.

Apart from :mod:`model` so that the generated ``partition`` module can use them without importing
``model``, which re-exports ``Partition`` beside the hand-written classes.
"""

from __future__ import annotations

from typing import Any

EMPTY: tuple[Any, ...] = ()
"""The one shared empty tuple for every empty int / uuid list."""

MIGRATING_DIR = bytes(16)
"""``DirectoryId.MIGRATING``: the replica's directory is unknown (pre-JBOD or migrated log)."""
UNASSIGNED_DIR = bytes(15) + b"\x01"
"""``DirectoryId.UNASSIGNED``: a new replica that has not been placed in a directory yet."""
LOST_DIR = bytes(15) + b"\x02"
"""``DirectoryId.LOST``: the directory hosting the replica is offline."""
RESERVED_DIRS = frozenset({MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR})
"""The ids that name no real directory (``DirectoryId.reserved``): never "not listed" by a broker."""

NO_LEADER = -1
NO_LEADER_CHANGE = -2


class Slotted:
    """Shared helpers: equality and repr over the fields (handy in tests and the REPL).  The fields
    are the slots, unless a class names others (``_fields``: a property in place of its slots)."""

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if "_fields" not in cls.__dict__:
            cls._fields = cls.__slots__

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._fields}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in self._fields)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({fields})"
