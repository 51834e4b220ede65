"""How the answers (``health``, ``history``, ``log``, ``describe``, ``ls -l``) spell the same things,
so that a broker's state or a replica list reads the same in each."""

from __future__ import annotations

from typing import Any

from .partition_fields import UNCHANGED

__all__ = [
    "PARTITION_NO_CHANGE",
    "PARTITION_WORDS",
    "broker_state",
    "config_words",
    "id_list",
    "leader_word",
    "partition_change_words",
    "partition_created_words",
    "registration_refresh_words",
]


def id_list(values: Any) -> str:
    """``[1,2,3]`` for a list or tuple of ids; anything else (None, a number) as it prints."""
    if isinstance(values, (list, tuple)):
        return "[" + ",".join(map(str, values)) + "]"
    return str(values)


def broker_state(fenced: bool, in_controlled_shutdown: bool) -> str:
    """A registered broker's state in one word or phrase."""
    return "fenced" if fenced else "in controlled shutdown" if in_controlled_shutdown else "live"


# -- changes: the words ``log`` and ``history`` share -------------------------------------------------

#: Partition fields in the order a change is told (the leader first: it is what clients feel), and
#: the word for each.  PartitionChangeRecord's directories are not told (a uuid per replica).
PARTITION_WORDS: dict[str, str] = {
    "Leader": "leader",
    "Isr": "isr",
    "Replicas": "replicas",
    "EligibleLeaderReplicas": "elr",
    "LastKnownElr": "last known elr",
    "AddingReplicas": "adding",
    "RemovingReplicas": "removing",
    "LeaderRecoveryState": "recovery state",
}
PARTITION_NO_CHANGE = UNCHANGED
"""PartitionChangeRecord's "no change" values (Kafka's defaults for its tagged fields)."""
UNKNOWN = "?"
"""An old value the reader has not seen (``log --from`` in the middle of a log without a base)."""


def leader_word(leader: Any) -> str:
    """A partition's leader: ``none`` for -1 (Kafka's ``NO_LEADER``), ``?`` when unknown."""
    if leader is None:
        return UNKNOWN
    return "none" if leader == -1 else str(leader)


def _value_word(field: str, value: Any) -> str:
    if field == "Leader":
        return leader_word(value)
    return UNKNOWN if value is None else id_list(value)


def partition_change_words(changes: dict[str, tuple[Any, Any]]) -> str:
    """``leader 1 -> none; isr [1] -> []; elr [] -> [1]``: each changed field, in one order."""
    said = [
        f"{word} {_value_word(field, changes[field][0])} -> {_value_word(field, changes[field][1])}"
        for field, word in PARTITION_WORDS.items()
        if field in changes
    ]
    return "; ".join(said) or "no visible change (an epoch bump)"


def partition_created_words(leader: Any, replicas: Any, isr: Any) -> str:
    return f"leader {leader_word(leader)}, replicas {id_list(replicas)}, isr {id_list(isr)}"


def config_words(resource_type: str, resource_name: str, key: str, value: str | None) -> str:
    """``topic orders config retention.ms = 86400000`` (``deleted`` for a null value; a cluster
    default's empty name is ``<default>``).  ``value`` arrives already redacted when secret."""
    target = f"{resource_type} {resource_name or '<default>'}"
    return f"{target} config {key} deleted" if value is None else f"{target} config {key} = {value}"


def registration_refresh_words(d: dict[str, Any]) -> str:
    """A BrokerRegistrationChangeRecord that neither fences, unfences nor starts a shutdown: which
    other fields it set (``registration changed (LogDirs)``), or ``registration refreshed``."""
    other = sorted(
        k
        for k, v in d.items()
        if k not in ("BrokerId", "BrokerEpoch", "Fenced", "InControlledShutdown") and v not in (None, 0, [])
    )
    return f"registration changed ({', '.join(other)})" if other else "registration refreshed"
