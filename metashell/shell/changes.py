"""Values of a subtree compared across two points or two sources (``diff``, ``watch``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from metashell.times import iso_utc as iso_time
from metashell.tree import Node
from metashell.tree.paths import resolve
from metashell.tree.values import tree_values

_BOOKKEEPING = ("/quorum", "/provenance", "/local")
"""What says how a view was assembled (the quorum as the files on this node tell it, what was read),
not what the metadata holds: across time, every point differs there, and it buried the change."""

_NUMBER = re.compile(r"(\d+)")


def values_at(root: Node, comps: list[str], redact: bool, across_time: bool = False) -> dict[str, str]:
    node = resolve(root, comps)
    values = {} if node is None else dict(tree_values(node, comps, redact))
    if across_time:
        values = {
            path: v
            for path, v in values.items()
            if not path.startswith(_BOOKKEEPING) and not path.endswith(" source")
        }
    return values


def side(root: Node) -> tuple[str | None, str]:
    """(cluster id, "offset N, TIME") of the image ``root`` shows: what a diff header names."""
    image = root.ctx.image
    prov = image.provenance
    when = iso_time(prov.timestamp) or "no time"
    return image.quorum.cluster_id, f"offset {prov.offset}, {when}"


def as_json(path: str, text: str | None) -> object:
    """A value for ``diff --json`` and ``watch --json``: a record's field (``PATH field``, whose
    text is JSON) as the JSON value itself; a leaf (a config value: a string in Kafka, whatever it
    looks like) as its text."""
    if text is None or " " not in path:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def natural(path: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key: numbers in a path by value (partition 2 before 10), the rest as text."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in _NUMBER.split(path) if part)


def object_changes(
    left: dict[str, str], right: dict[str, str], depth: int = 0
) -> Iterator[tuple[str, str, str | None, str | None]]:
    """:func:`_diff_values`, with an object that appears or disappears whole with several values
    (a topic, a partition, a broker: a directory the other side has no value in, at ``depth``
    components or deeper: the watched path) given as one ``created`` or ``deleted`` change of
    its path.  A single new value (a config set) stays itself: it says more."""
    left_dirs, right_dirs = directories(left), directories(right)
    changes = list(diff_values(left, right))
    groups: dict[str, int] = {}
    wholes: list[str | None] = []
    for kind, path, _old, _new in changes:
        whole = None
        if kind != "changed":
            whole = first_unknown(path, left_dirs if kind == "added" else right_dirs, depth)
            if whole == path:
                whole = None
        wholes.append(whole)
        if whole is not None:
            groups[whole] = groups.get(whole, 0) + 1
    said: set[str] = set()
    for (kind, path, old, new), whole in zip(changes, wholes, strict=True):
        if whole is not None and groups[whole] > 1:
            if whole not in said:
                said.add(whole)
                yield ("created" if kind == "added" else "deleted"), whole, None, None
            continue
        yield kind, path, old, new


def prefixes(path: str) -> list[str]:
    """The paths a value path (``/a/b/c`` or ``/a/b field``) lies in or names, outermost first:
    ``/a``, ``/a/b``, ``/a/b/c``."""
    parts = path.split(" ", 1)[0].split("/")
    return ["/".join(parts[:i]) for i in range(2, len(parts) + 1)]


def directories(values: dict[str, str]) -> set[str]:
    """Every path the value paths lie in or name."""
    return {prefix for key in values for prefix in prefixes(key)}


def first_unknown(path: str, known: set[str], depth: int = 0) -> str | None:
    """The outermost path ``path`` lies in or names, ``depth`` components deep or deeper, that
    ``known`` lacks (None: all of them are known)."""
    return next((p for p in prefixes(path)[max(0, depth - 1) :] if p not in known), None)


def diff_values(
    left: dict[str, str], right: dict[str, str]
) -> Iterator[tuple[str, str, str | None, str | None]]:
    """(kind, path, old, new) in path order (numbers by value): removed, added or changed."""
    for path in sorted(left.keys() | right.keys(), key=natural):
        old, new = left.get(path), right.get(path)
        if old == new:
            continue
        yield ("removed" if new is None else "added" if old is None else "changed"), path, old, new
