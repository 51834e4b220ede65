"""The words ``log --type`` takes for record types, resolved to schema names before a log is read.

An operator types what they remember: ``PartitionChangeRecord`` (the schema name Kafka's
dump-log prints), ``PARTITION_CHANGE_RECORD`` (Kafka's ``MetadataRecordType``), ``PartitionChange``
or ``partition_change``, ``noop``; a control record by its name (``LeaderChange``). A word that names
no type used to match nothing, and ``log`` printed nothing with status 0, which reads as "no such
record in the log": now it is a usage error offering the nearest names. ``!TYPE`` excludes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from metashell.protocol.control import CONTROL_TYPES
from metashell.protocol.metadata import record_types

from .suggest import close_matches

__all__ = ["TypeFilter", "parse_type_filter", "record_type_words", "type_names"]


def _canon(word: str) -> str:
    """``PARTITION_CHANGE_RECORD``, ``PartitionChange`` and ``partitionchangerecord`` alike."""
    word = word.replace("_", "").replace("-", "").lower()
    return word.removesuffix("record") or word


@cache
def type_names() -> dict[str, str]:
    """Canonical word -> the name ``iter_log`` matches: every metadata and control record type."""
    names = {_canon(name): name for name in record_types().values()}
    names.update({_canon(name): name for name, _schema in CONTROL_TYPES.values()})
    return names


@dataclass(frozen=True)
class TypeFilter:
    """Schema names to show (None: every type) and to leave out."""

    include: frozenset[str] | None
    exclude: frozenset[str]


def parse_type_filter(raw: str, command: str = "log") -> TypeFilter:
    """``raw``: comma-separated type words, each optionally ``!``-prefixed to exclude it."""
    names = type_names()
    include: set[str] = set()
    exclude: set[str] = set()
    for word in (w.strip() for w in raw.split(",")):
        if not word:
            continue
        negated = word.startswith("!")
        bare = word[1:].strip() if negated else word
        name = names.get(_canon(bare))
        if name is None:
            near = close_matches(_canon(bare), list(names), n=3, cutoff=0.6)
            hint = f" (did you mean {', '.join(names[n] for n in near)}?)" if near else ""
            raise ValueError(f"{command}: --type {bare}: no such record type{hint}")
        (exclude if negated else include).add(name)
    return TypeFilter(frozenset(include) if include else None, frozenset(exclude))


def record_type_words() -> list[str]:
    """What ``log --type`` completes: the schema names dump-log prints, sorted."""
    return sorted(set(type_names().values()))
