"""Search by name (``/`` or Ctrl-P): the paths come from the tree itself.

The list used to name the top-level folders it searched, and named ``clientQuotas`` where the
tree says ``quotas``, so no quota could be found, and partitions were never in it.  Now the index
is every path of the tree down to :data:`DEPTH` levels, except the subtrees in :data:`SKIPPED`
(each with its reason), so a folder added to the tree is searched without a list to update.  A
topic's partitions are not indexed (a million of them would cost a hundred MB): a query with a
``/`` (``payment-failed/0``) finds the paths that match what is before it and lists their children
that match what follows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from textual.command import Hit, Hits, Provider
from textual.content import Content

from metashell.safe_text import visible
from metashell.tree import Node

__all__ = ["DEPTH", "SKIPPED", "PathSearch", "index_paths", "search"]

DEPTH = 3
"""How deep the index goes: ``/configs/topic/orders``, ``/quotas/user=alice/consumer_byte_rate``."""

SKIPPED = {
    "image": "Kafka's own view repeats every node of the tree under Kafka's names",
    "local": "the build and the files read, not the metadata",
    "nodes": "the other nodes' trees (several -d): each would be loaded to be searched",
}
"""Top-level folders left out of the index, with the reason."""

NOT_DESCENDED = {"topic": "its partitions: a query 'TOPIC/N' lists them"}
"""Node kinds whose children are not indexed (the partitions of a topic), with the reason."""

FIRST = ("topics", "brokers")
"""Searched first (the palette keeps the index's order among equal scores): what an operator
looks for most; every other folder follows in the tree's order."""

MAX_HITS = 200


def index_paths(
    root: Node, path_of: Callable[[list[str]], str], pace: Callable[[], None] | None = None
) -> list[str]:
    """Every path of the tree to :data:`DEPTH` levels, shallow ones first (the palette keeps this
    order among equal scores: ``/topics/payments`` before ``/configs/topic/payments``).  ``pace``:
    called every few thousand paths (the TUI's background thread lets keys go first there)."""
    out: list[str] = []
    queue: deque[tuple[list[str], Node]] = deque()
    names = root.child_names()
    for name in sorted(names, key=lambda n: FIRST.index(n) if n in FIRST else len(FIRST)):
        child = root.child(name)
        if child is not None and name not in SKIPPED:
            queue.append(([name], child))
    while queue:
        comps, node = queue.popleft()
        out.append(path_of(comps))
        if pace is not None and not len(out) & 4095:
            pace()
        if not node.is_dir or len(comps) >= DEPTH or node.kind in NOT_DESCENDED:
            continue
        for name in node.child_names():
            child = node.child(name)
            if child is not None:
                queue.append(([*comps, name], child))
    return out


def search(
    paths: list[str],
    query: str,
    children: Callable[[str], Iterable[tuple[str, str]]],
) -> list[str]:
    """Candidates for ``query``: names containing it (cheap on 100 000 topics), else names holding
    its letters in order.  ``head/tail`` lists the children (``children(path)``: (name, path)) of
    the paths matching ``head`` whose names start with ``tail``."""
    q = query.lower()
    if not q:
        return paths[:50]
    if "/" in q.strip("/"):
        head, tail = q.strip("/").rsplit("/", 1)
        parents = [p for p in paths if p.lower().endswith(head) or head in _last(p)]
        found: list[str] = []
        for parent in parents[:50]:
            found += [path for name, path in children(parent) if name.lower().startswith(tail)]
            if len(found) >= MAX_HITS:
                break
        return found[:MAX_HITS]
    plain = [p for p in paths if q in _last(p)]
    return plain if plain else [p for p in paths if _subsequence(q, p.lower())][:MAX_HITS]


def _last(path: str) -> str:
    return path.rsplit("/", 1)[-1].lower()


def _subsequence(query: str, text: str) -> bool:
    it = iter(text)
    return all(ch in it for ch in query)


@runtime_checkable
class Searchable(Protocol):
    """What the palette needs of the app: candidate paths, and a way to go to one."""

    def search_paths(self, query: str) -> Iterable[str]: ...
    def go_to(self, path: str, *, remember: bool = True) -> None: ...


class PathSearch(Provider):
    """Command-palette hits: paths whose last name contains what was typed (fuzzy among those).

    A hit shows the path as literal text with its control characters made visible: Textual's own
    ``Matcher.highlight`` parses the candidate as markup and would send a topic name's escape
    sequences (OSC 52, CSI 2J ...) to the terminal raw."""

    async def search(self, query: str) -> Hits:
        app = self.app
        assert isinstance(app, Searchable)
        matcher = self.matcher(query)
        shown = 0
        for path in app.search_paths(query):
            text = visible(path)
            score, offsets = matcher.fuzzy_search.match(matcher.query, text)
            if score > 0:
                display = Content(text)
                for offset in offsets:
                    display = display.stylize(matcher.match_style, offset, offset + 1)
                yield Hit(score, display, lambda p=path: app.go_to(p), text=text, help="jump to path")
                shown += 1
                if shown >= 50:
                    return
