"""How the answers (``health``, ``history``, ``log``, ``describe``, ``ls -l``) spell the same things,
so that a broker's state or a replica list reads the same in each."""

from __future__ import annotations

from typing import Any

__all__ = ["broker_state", "id_list"]


def id_list(values: Any) -> str:
    """``[1,2,3]`` for a list or tuple of ids; anything else (None, a number) as it prints."""
    if isinstance(values, (list, tuple)):
        return "[" + ",".join(map(str, values)) + "]"
    return str(values)


def broker_state(fenced: bool, in_controlled_shutdown: bool) -> str:
    """A registered broker's state in one word or phrase."""
    return "fenced" if fenced else "in controlled shutdown" if in_controlled_shutdown else "live"
