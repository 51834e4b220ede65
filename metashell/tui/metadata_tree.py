"""The metadata tree widget: the virtual filesystem, a page of children at a time, with badges.

A directory's children are listed when it is expanded, :data:`PAGE` at a time ("... N more" adds
the next page), so ``/topics`` with 100 000 topics expands at once.  Rows carry the health badges
(``offline``, ``fenced`` ...) and, in live mode, a ``*`` on what just appeared.  A row's data is its
path; a name holding ``/`` (only hostile metadata has one) is remembered with its real components,
since splitting such a path on ``/`` would reach another node.  The app shows what is highlighted
(``Tree.NodeHighlighted`` bubbles up to it).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style
from rich.text import Text
from textual import on
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from metashell.image.health import HealthReport, PartitionRef
from metashell.safe_text import visible
from metashell.tree import Node
from metashell.tree.paths import join, normalize, resolve

from .search import index_paths, search

__all__ = ["BADGES", "PAGE", "MetadataTree", "health_badges", "is_gap"]

_MIN_SHOWN = 7
"""A name is shortened in the middle only if at least this many of its characters stay."""

PAGE = 200
"""Children added to the tree per page when a directory is expanded."""

_MORE = "\0more"
"""Tree data of a gap node (children not added yet): the marker, ``start:stop``, a NUL, the path."""


BADGES = {
    "offline-partitions": "offline",
    "under-replicated-partitions": "under-replicated",
    "fenced-brokers": "fenced",
    "shutting-down-brokers": "shutting down",
}
"""Health findings shown as badges in the tree."""


def health_badges(report: HealthReport, pace: Callable[[], None] | None = None) -> dict[str, str]:
    """Tree path -> badge, from a health report: an offline or under-replicated partition and its
    topic, a fenced or shutting-down broker (the first finding of a path wins)."""
    bad: dict[str, str] = {}
    for f in report.findings:
        badge = BADGES.get(f.key)
        if badge is None:
            continue
        for done, item in enumerate(f.items):  # partitions (PartitionRef) or brokers ({"broker": id})
            if pace is not None and not done & 4095:
                pace()
            if isinstance(item, PartitionRef):
                bad.setdefault(f"/topics/{item.topic}", badge)
                bad.setdefault(f"/topics/{item.topic}/{item.partition}", badge)
            else:
                bad.setdefault(f"/brokers/{item['broker']}", badge)
    return bad


def is_gap(data: str | None) -> bool:
    return data is not None and data.startswith(_MORE)


_is_gap = is_gap


class MetadataTree(Tree[str]):
    """The tree over the session's root (``root_of()``: it changes when ``at`` moves the session)."""

    def __init__(self, root_of: Callable[[], Node], *, id: str | None = None) -> None:
        # set before Tree.__init__, which already labels the root (render_label reads them)
        self._root_of = root_of
        self.badges: dict[str, str] = {}
        """Tree paths with a health badge (offline, under-replicated, fenced ...)."""
        self.changed: dict[str, bool] = {}
        """Live mode: paths that just appeared (marked for a few seconds)."""
        self._slash_paths: dict[str, tuple[str, ...]] = {}
        self._index: list[str] | None = None
        super().__init__("/", data="/", id=id)
        self.show_root = True

    # -- search: the paths of this tree (.search), built once per image the tree shows

    def search(self, query: str) -> list[str]:
        """Paths matching ``query`` (:func:`.search.search` over :meth:`search_index`)."""
        return search(self.search_index(), query, self._children_of)

    def search_index(self, pace: Callable[[], None] | None = None) -> list[str]:
        """The tree's paths to :data:`.search.DEPTH` levels (built on first use: a worker thread
        builds it after the first screen, so the first search does not wait)."""
        if self._index is None:
            self._index = index_paths(self._root_of(), self.path_of, pace)
        return self._index

    @property
    def index_ready(self) -> bool:
        return self._index is not None

    def forget_index(self) -> None:
        """The tree shows another image (``at``, live changes): search it afresh."""
        self._index = None

    def _children_of(self, path: str) -> list[tuple[str, str]]:
        node = self.node_at(path)
        if node is None or not node.is_dir:
            return []
        base = self.comps_of(path)
        return [(name, self.path_of([*base, name])) for name in node.child_names()]

    # -- paging

    def expand_to(self, path: str) -> TreeNode[str]:
        """Expand the tree down to ``path`` (adding the page that holds each step); the row of
        ``path``, or of the deepest step that exists."""
        comps = self.comps_of(path)
        item = self.root
        for i, name in enumerate(comps):
            if not item.children:
                self.fill(item, self.path_of(comps[:i]))
            item.expand()
            found = next((c for c in item.children if c.data == self.path_of(comps[: i + 1])), None)
            if found is None:
                found = self.page_to(item, self.path_of(comps[:i]), name)
            if found is None:
                break
            item = found
        return item

    def put_cursor(self, item: TreeNode[str]) -> None:
        """Move the cursor onto ``item`` now: the rows are laid out first (``last_line`` builds
        them), so a row just expanded has its line number and the cursor never lands on a stale
        one (a node not yet laid out has line -1, which the tree would clamp to the root).  Not
        scrolled: before the first layout the tree has no height to scroll in (the caller scrolls
        after the refresh)."""
        if self.last_line >= 0 and item.line >= 0:
            self.cursor_line = item.line

    def relabel(self, item: TreeNode[str]) -> None:
        for child in item.children:
            if child.data and not _is_gap(child.data):
                child.set_label(self.row_label(child.data))
                if child.children:
                    self.relabel(child)

    def path_of(self, comps: list[str] | tuple[str, ...]) -> str:
        """The tree's path string for ``comps``, remembering the components when a name holds ``/``."""
        path = join(comps)
        if any("/" in c for c in comps):
            self._slash_paths[path] = tuple(comps)
        return path

    def comps_of(self, path: str) -> list[str]:
        """The components a tree path stands for (see :meth:`_path`)."""
        comps = self._slash_paths.get(path)
        return list(comps) if comps is not None else normalize("/", path)

    def node_at(self, path: str) -> Node | None:
        return resolve(self._root_of(), self.comps_of(path))

    def name_of(self, path: str) -> str:
        """The name a tree row at ``path`` stands for."""
        comps = self.comps_of(path)
        return comps[-1] if comps else "/"

    def row_label(self, path: str, name: str | None = None) -> Text:
        """A tree row: the node's whole name (a hostile one may hold ``/``; ``name``: a shortened
        one, see :meth:`render_label`), then its badges."""
        label = Text(visible(self.name_of(path)) if name is None else name)
        badge = self.badges.get(path)
        if badge is not None:
            label.append(f"  {badge}", style="bold red" if badge in ("offline", "fenced") else "yellow")
        if path in self.changed:
            label.append("  *", style="bold green")
        return label

    def render_label(self, node: TreeNode[str], base_style: Style, style: Style) -> Text:
        """A row that does not fit keeps its badge and both ends of its name: the middle gives way
        (``audit.cdc…0004845  offline``), so two long names that differ at the end never read
        alike at 80 columns, and an offline topic is never cut off before its badge."""
        full = super().render_label(node, base_style, style)
        path = node.data
        if path is None or _is_gap(path):
            return full
        depth, parent = 0, node.parent
        while parent is not None:
            depth, parent = depth + 1, parent.parent
        room = self.scrollable_content_region.width - depth * self.guide_depth - 1
        name = visible(self.name_of(path))
        over = full.cell_len - room
        if over <= 0 or len(name) - over < _MIN_SHOWN:
            return full
        keep = len(name) - over - 1  # one cell for the ellipsis
        head = (keep + 1) // 2
        short = name[:head] + "…" + name[len(name) - (keep - head) :]
        saved = node._label
        node._label = self.row_label(path, short)
        try:
            return super().render_label(node, base_style, style)
        finally:
            node._label = saved

    def refill(self, item: TreeNode[str], path: str, mark: bool = True) -> None:
        """Bring the children of an expanded ``item`` up to date, keeping what is expanded.
        ``mark``: flag what was added (live changes), not what a move in time brought back."""
        node = self.node_at(path)
        names = set(node.child_names()) if node is not None and node.is_dir else set()
        present = {self.name_of(c.data): c for c in item.children if c.data and not _is_gap(c.data)}
        for name, child in present.items():
            if name not in names:
                child.remove()
        added = sorted(names - present.keys())
        if added and len(present) < PAGE:
            base = self.comps_of(path)
            for name in added[:PAGE]:
                child_path = self.path_of([*base, name])
                sub = node.child(name) if node is not None else None
                if mark:
                    self.changed[child_path] = True
                if sub is not None and sub.is_dir:
                    item.add(self.row_label(child_path), data=child_path, allow_expand=True)
                else:
                    item.add_leaf(self.row_label(child_path), data=child_path)
            if mark:
                marked = list(self.changed)  # these, not what is marked when the timer fires
                self.set_timer(5.0, lambda: self.unmark(marked))
        for child in item.children:
            if child.is_expanded and child.data:
                self.refill(child, child.data, mark)

    def unmark(self, paths: list[str]) -> None:
        for p in paths:
            self.changed.pop(p, None)
        self.relabel(self.root)

    def fill(
        self,
        item: TreeNode[str],
        path: str,
        start: int = 0,
        stop: int | None = None,
        before: TreeNode[str] | None = None,
    ) -> None:
        """Add a page of ``path``'s children ``[start, stop)`` under ``item`` (before ``before``),
        and a "... N more" node for the rest of the range."""
        node = self.node_at(path)
        if node is None or not node.is_dir:
            return
        names = node.child_names()
        stop = len(names) if stop is None else min(stop, len(names))
        end = min(stop, start + PAGE)
        base = self.comps_of(path)
        for name in names[start:end]:
            child = node.child(name)
            if child is None:
                continue
            child_path = self.path_of([*base, name])
            if child.is_dir:
                item.add(self.row_label(child_path), data=child_path, allow_expand=True, before=before)
            else:
                item.add_leaf(self.row_label(child_path), data=child_path, before=before)
        if end < stop:
            self.add_gap(item, path, end, stop, before)

    def add_gap(
        self, item: TreeNode[str], path: str, start: int, stop: int, before: TreeNode[str] | None
    ) -> None:
        """A node standing for children ``[start, stop)`` not added yet (select it to add them)."""
        item.add_leaf(
            Text(f"... {stop - start} more", style="italic"),
            data=f"{_MORE}{start}:{stop}\0{path}",
            before=before,
        )

    @staticmethod
    def gap_range(data: str) -> tuple[int, int, str]:
        span, path = data[len(_MORE) :].split("\0", 1)
        start, stop = span.split(":")
        return int(start), int(stop), path

    def open_gap(self, gap: TreeNode[str], at: int | None = None) -> None:
        """Replace a gap node by the page of children it stands for (the one holding index ``at``)."""
        parent = gap.parent
        assert gap.data is not None and parent is not None
        start, stop, path = self.gap_range(gap.data)
        siblings = list(parent.children)
        after = siblings.index(gap) + 1
        before = siblings[after] if after < len(siblings) else None
        gap.remove()
        page = start if at is None else at - (at - start) % PAGE
        if page > start:
            self.add_gap(parent, path, start, page, before)
        self.fill(parent, path, page, stop, before)

    @on(Tree.NodeExpanded)
    def _on_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        item = event.node
        if item.data is not None and not item.children:
            self.fill(item, item.data)

    @on(Tree.NodeSelected)
    def _on_selected(self, event: Tree.NodeSelected[str]) -> None:
        if _is_gap(event.node.data):
            self.open_gap(event.node)

    def page_to(self, item: TreeNode[str], path: str, name: str) -> TreeNode[str] | None:
        """Add the page of ``item``'s children that holds ``name`` (a topic far down /topics): only
        that page, with gap nodes standing for what is before and after it."""
        node = self.node_at(path)
        if node is None or not node.is_dir:
            return None
        try:
            index = node.child_names().index(name)
        except ValueError:
            return None
        for gap in list(item.children):
            if gap.data and _is_gap(gap.data):
                start, stop, _path = self.gap_range(gap.data)
                if start <= index < stop:
                    self.open_gap(gap, index)
                    break
        want = self.path_of([*self.comps_of(path), name])
        return next((c for c in item.children if c.data == want), None)
