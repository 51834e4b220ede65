"""One line saying what a node holds: ``ls -l``'s last column and the TUI's tree and tables.

A partition's leader, ISR and replicas; a broker's state and first listener; an ACL in one line; a
feature's level; a scalar's value; a topic directory's other key (its name under /topicIds).
"""

from __future__ import annotations

from metashell.image.wording import id_list

from .node import Node

__all__ = ["SUMMARY_MAX", "summarize"]

SUMMARY_MAX = 100


def summarize(node: Node, redact: bool | None = None) -> str:
    """One line saying what ``node`` holds, at most :data:`SUMMARY_MAX` characters."""
    if node.brief is not None:
        text = node.brief()
    elif node.is_dir:
        text = _dir_summary(node)
    else:
        value = node.to_json(redact)  # the text only for a plain value: a record's is its JSON
        text = _leaf_summary(node.kind, value, "" if isinstance(value, dict | list) else node.text(redact))
    return text if len(text) <= SUMMARY_MAX else text[: SUMMARY_MAX - 3] + "..."


def _leaf_summary(kind: str, value: object, text: str) -> str:
    if not isinstance(value, dict):
        return "" if isinstance(value, list) else text.split("\n", 1)[0]
    v = value
    if kind == "partition":
        leader = v.get("leader")
        out = f"leader {'none' if leader in (None, -1) else leader}  isr {id_list(v.get('isr'))}  replicas {id_list(v.get('replicas'))}"
        if v.get("elr") or v.get("lastKnownElr"):
            out += f"  elr {id_list(v.get('elr'))}"
        if v.get("addingReplicas") or v.get("removingReplicas"):
            out += (
                f"  adding {id_list(v.get('addingReplicas'))} removing {id_list(v.get('removingReplicas'))}"
            )
        return out
    if kind in ("broker", "controller"):
        state = ""
        if kind == "broker":
            state = (
                "fenced" if v.get("fenced") else "shutting down" if v.get("inControlledShutdown") else "live"
            )
            state += f"  epoch {v.get('epoch')}  "
        listeners = v.get("listeners") or []
        first = listeners[0] if listeners and isinstance(listeners[0], dict) else None
        proto = f"{first.get('securityProtocol')}://" if first and first.get("securityProtocol") else ""
        where = (
            f"{first.get('name')} {proto}{first.get('host')}:{first.get('port')}" if first else "no listener"
        )
        more = f" (+{len(listeners) - 1})" if len(listeners) > 1 else ""
        return f"{state}{where}{more}"
    if kind == "acl":
        return (
            f"{v.get('permissionType')} {v.get('principal')} {v.get('operation')} "
            f"{v.get('resourceType')}:{v.get('resourceName')} ({v.get('patternType')}) from {v.get('host')}"
        )
    if kind == "feature":
        level = v.get("level")
        return f"level {level}" + (f" ({v['version']})" if v.get("version") else "")
    if kind == "finding":
        return f"{v.get('count')} [{v.get('severity')}] {v.get('title')}"
    if kind == "health":
        return str(v.get("verdict", ""))
    if kind == "scram":
        return f"iterations {v.get('iterations')}"
    if kind == "token":
        return f"owner {v.get('owner')}  expires {v.get('expirationTime', v.get('expirationTimestamp'))}"
    return ""


def _dir_summary(node: Node) -> str:
    """``ls -l`` on a topic names the other key: its name under /topicIds, its partition count under
    /topics."""
    if node.kind != "topic":
        return ""
    name = node.child("name")
    return name.text(True) if name is not None and name.text(True) != node.name else ""
