"""The tree as ``path -> value`` pairs, the form ``diff`` compares.

Every leaf under a directory gives its value; a record-like leaf (a partition, a broker, an ACL)
gives one pair per field (``/topics/orders/3 isr``), so that a difference says which field changed
rather than "the JSON differs".  Walking from the root leaves out ``/image`` (Kafka's own rendering
of the same image), ``/topicIds`` (the ``/topics`` directories again), ``/local`` (metashell's
build), ``/provenance`` and ``/health`` (about the load, and derived).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .node import Node
from .paths import join
from .render import iter_find

__all__ = ["SKIPPED_AT_ROOT", "tree_values"]

SKIPPED_AT_ROOT = frozenset({"image", "local", "provenance", "health", "topicIds", "nodes"})


def _flat(prefix: str, value: Any) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flat(f"{prefix}.{k}" if prefix else str(k), v)
    else:
        yield prefix, json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tree_values(node: Node, components: list[str], redact: bool) -> Iterator[tuple[str, str]]:
    """``(path, value)`` for every leaf under ``node`` (at ``components``), in tree order."""
    if not components and node.is_dir:
        for name in node.child_names():
            child = node.child(name)
            if name not in SKIPPED_AT_ROOT and child is not None:
                yield from _values(join([name]), child, redact)
        return
    yield from _values(join(components), node, redact)


def _values(base: str, node: Node, redact: bool) -> Iterator[tuple[str, str]]:
    for path, n in iter_find(base, node):
        if n.is_dir:
            continue
        value = n.to_json(redact)
        if isinstance(value, dict):
            for field, text in _flat("", value):
                yield f"{path} {field}", text
        else:
            yield path, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
