"""The Textual app: the virtual filesystem as a tree beside a detail pane, with the shell's command
line under them.

* **Tree** (left): lazy -- a directory's children are listed when it is expanded, a page of
  :data:`PAGE` at a time ("... N more" loads the next page), so ``/topics`` with 100 000 topics
  expands at once.
* **Detail** (right): the highlighted node, rendered by :mod:`metashell.tui.detail`.
* **Command line** (``:`` focuses it): any shell command, run by the same
  :class:`~metashell.shell.commands.Shell` as the REPL and one-shot mode; its output replaces the
  detail pane, and ``cd`` (or ``at``) moves the tree.
* **Search** (``/`` or Ctrl-P, Textual's command palette): paths by name -- topics, brokers,
  controllers, configs, ACL principals -- matched on names first, so it stays quick on a million
  partitions (partitions are reached by expanding their topic).
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from platformdirs import user_downloads_path
from rich.console import Console, RenderableType
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.widgets import Footer, Header, Input, Static, Tree
from textual.widgets.tree import TreeNode
from textual.worker import Worker

from metashell.image.health import HealthReport, PartitionRef, check_health
from metashell.image.model import metadata_version_name
from metashell.image.timepoint import iso_time
from metashell.safe_text import visible, visible_output
from metashell.shell.pager import pager_command
from metashell.shell.registry import TuiMode
from metashell.shell.session import CommandStopped, Settings, Shell
from metashell.shell.sources import Source
from metashell.tree import Node
from metashell.tree.paths import join, normalize, resolve

from .command_runner import PaneWriter, line_mode
from .detail import detail
from .help import HelpScreen, help_rows
from .search import PathSearch, index_paths, search

__all__ = ["PAGE", "MetashellApp"]

PAGE = 200
"""Children added to the tree per page when a directory is expanded."""

_MORE = "\0more"
"""Tree data of a gap node (children not added yet): the marker, ``start:stop``, a NUL, the path."""

_BADGES = {
    "offline-partitions": "offline",
    "under-replicated-partitions": "under-replicated",
    "fenced-brokers": "fenced",
    "shutting-down-brokers": "shutting down",
}
"""Health findings shown as badges in the tree."""


def _is_gap(data: str | None) -> bool:
    return data is not None and data.startswith(_MORE)


class MetashellApp(App[int]):
    """``metashell --tui``."""

    TITLE = "metashell"
    CSS = """
    #tree { width: 40%; min-width: 24; border-right: solid $primary-darken-2; }
    #detail-scroll { width: 1fr; padding: 0 1; }
    #facts { height: 1; padding: 0 1; background: $panel; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    #command { dock: bottom; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+q", "quit", "Quit", show=False, key_display="Ctrl-Q"),
        Binding("colon", "command_line", "Command", key_display=":"),
        Binding("slash", "command_palette", "Search", key_display="/"),
        # Textual's own Ctrl-P did not reach the app (the focused tree took it); docs/tui.md promises it
        Binding("ctrl+p", "command_palette", "Search", show=False, key_display="Ctrl-P", priority=True),
        Binding("h", "history", "History"),
        Binding("o", "open_pager", "Pager"),
        Binding("y", "copy_path", "Copy path"),
        Binding("Y", "copy_value", "Copy value", show=False),
        Binding("p", "pause", "Pause (live)", show=False),
        Binding("left_square_bracket", "go_back", "Back", show=False, key_display="["),
        Binding("right_square_bracket", "go_forward", "Forward", show=False, key_display="]"),
        Binding("question_mark", "help", "Keys", key_display="?"),
        Binding("escape", "stop_or_focus_tree", "Tree", show=False, key_display="Escape"),
    ]
    KEY_HELP: ClassVar[dict[str, str]] = {
        "quit": "quit, restoring the terminal",
        "command_line": "the command line: any shell command (ls, cd, cat, find, describe, health, at ...)",
        "command_palette": "search paths by name (topics, brokers, configs, ACL principals ...)",
        "history": "history of the selected topic, partition, broker or config",
        "open_pager": "open what the detail pane shows in $PAGER (default: less -R)",
        "copy_path": "copy the selected path to the clipboard",
        "copy_value": "copy the selected file's value to the clipboard",
        "pause": "live mode: pause and resume following the quorum",
        "go_back": "back to the previously visited path",
        "go_forward": "forward again",
        "help": "this screen",
        "stop_or_focus_tree": "stop a running command (watch); back to the tree",
    }
    """What each key does, longer than the footer's word (the ``?`` screen)."""
    COMMANDS = App.COMMANDS | {PathSearch}

    def __init__(self, source: Source, *, redact: bool = True, start_path: str = "/") -> None:
        super().__init__()
        self.source = source
        self.redact = redact
        self.start_path = start_path
        self.output = io.StringIO()
        self.errors = io.StringIO()
        self.shell = Shell(source.root, self.output, self.errors, Settings(redact=redact))
        self.shell.attach(source)
        self.selected = "/"
        self.health: HealthReport | None = None
        self.paused = False
        self._visited: list[str] = []
        self._ahead: list[str] = []
        self.shown: RenderableType = Text("")
        """What the detail pane shows (for tests and the screenshot)."""
        self._command_shown = False
        self._leader: tuple[int, int] | None = None
        self.leader_changes: list[tuple[int, int]] = []
        """Live mode: (leader, epoch) each time the quorum's changed while the TUI ran."""
        self._names: list[str] | None = None
        self.badges: dict[str, str] = {}
        """Tree paths with a health badge (offline, under-replicated, fenced ...)."""
        self.changed: dict[str, bool] = {}
        """Live mode: paths that just appeared (marked for a few seconds)."""
        self._slash_paths: dict[str, tuple[str, ...]] = {}
        """Paths with a name that holds a ``/`` (only hostile metadata has one), with their real
        components: splitting such a path on ``/`` would reach another node."""
        self._command_worker: Worker[None] | None = None
        self._streamed = Text()
        self.first_screen_at: float | None = None
        """``time.perf_counter()`` when the first screen had been drawn (for the benchmark)."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Textual's notification, but literal text by default: messages here quote paths, hosts and
        leaders from the metadata, and markup in them (``[@click=...]``) must not act."""
        super().notify(
            visible(message), title=visible(title), severity=severity, timeout=timeout, markup=markup
        )

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="facts", markup=False)
        with Horizontal():
            tree: Tree[str] = Tree("/", data="/", id="tree")
            tree.show_root = True
            yield tree
            with VerticalScroll(id="detail-scroll"):
                yield Static(id="detail", markup=False)
        yield Input(
            placeholder=": a shell command (ls, cd, cat, find, describe, health, at, history ...)",
            id="command",
        )
        yield Footer()

    def on_mount(self) -> None:
        self._refresh_header()
        tree = self.query_one("#tree", Tree)
        self._fill(tree.root, "/")
        tree.root.expand()
        tree.focus()
        self.go_to(self.start_path)
        # health and the search list take a second at a million partitions: after the first screen
        self.call_after_refresh(self._first_screen_drawn)
        if self.source.travel is None and self.source.refresh is not None:  # live: follow the log
            self.set_interval(1.0, self._follow)

    def _status_line(self) -> str:
        """Most important first, for the title bar cuts what does not fit (80 columns): where in
        time the view is and the connection's state, then the verdict for that point, the cluster
        id last."""
        parts = [f"at {self.shell.point}" if self.shell.point else ""]
        if self.paused:  # status() would apply what arrived: only count it
            pending = self.source.pending() if self.source.pending is not None else 0
            parts.append(f"PAUSED: {pending} change(s) since")
        elif self.source.status is not None:
            parts.append(self.source.status())
        if self.health is not None:
            parts.append(self.health.verdict().split(";")[0].split(" (")[0])
        elif self.shell.point:
            parts.append("health: checking")
        parts.append(f"cluster {self.source.cluster_id}" if self.source.cluster_id else "")
        return visible("  |  ".join(x for x in parts if x))

    def facts_line(self) -> str:
        """The header's second line: where the view stands in the log (last applied offset, its
        epoch and append time), the metadata.version, and the source."""
        image = self.shell.root.ctx.image
        p = image.provenance
        when = f" at {iso_time(p.timestamp)}" if p.timestamp >= 0 else ""
        mv = metadata_version_name(image.features.metadata_version)
        where = f"offset {p.offset} (epoch {p.epoch}){when}"
        return visible("  |  ".join((where, f"metadata.version {mv}", self.source.description)))

    def _refresh_header(self) -> None:
        """Both header lines, recomputed together (the title bar and :meth:`facts_line`)."""
        self.sub_title = self._status_line()
        with contextlib.suppress(NoMatches):  # a live tick may land while the app is torn down
            self.query_one("#facts", Static).update(self.facts_line())

    # ------------------------------------------------------------------ health and live

    def _first_screen_drawn(self) -> None:
        self.first_screen_at = time.perf_counter()
        self.set_timer(0.05, self._background)

    def _background(self) -> None:
        self.run_worker(self._check_health, thread=True, exclusive=True, group="health")

    class HealthReady(Message):
        """The background health report is in (posted from the worker thread)."""

        def __init__(self, report: HealthReport, image: object) -> None:
            super().__init__()
            self.report = report
            self.image = image  # which image it judged: one the session has left is dropped

    def _check_health(self) -> None:
        """In a thread: the health report (a second at a million partitions), then badges; then the
        names search goes through, so the first search does not wait for them.

        The report is *posted*, never handed over with ``call_from_thread``: that waits for the app's
        loop, and when the app has already quit the loop never runs it, so the thread blocked for ever
        and the interpreter could not exit (it joins executor threads at exit)."""
        image = self.shell.root.ctx.image
        report = check_health(image)
        self.post_message(self.HealthReady(report, image))
        self._searchable()
        gc.freeze()  # the report and the name list are long-lived: keep the collector off them

    @on(HealthReady)
    def _on_health_ready(self, message: HealthReady) -> None:
        if message.image is not self.shell.root.ctx.image:  # judged before an `at` moved the session
            return
        self._health_done(message.report)

    def _health_done(self, report: HealthReport) -> None:
        self.health = report
        bad: dict[str, str] = {}
        for f in report.findings:
            badge = _BADGES.get(f.key)
            if badge is None:
                continue
            for item in f.items:  # partitions (PartitionRef) or brokers ({"broker": id, ...})
                path = (
                    f"/topics/{item.topic}"
                    if isinstance(item, PartitionRef)
                    else f"/brokers/{item['broker']}"
                )
                bad.setdefault(path, badge)
        self.badges = bad
        self._relabel(self.query_one("#tree", Tree).root)
        self._refresh_header()
        if self.selected == "/" and not self._command_shown:  # the overview gains the verdict
            self.show("/")

    def _relabel(self, item: TreeNode[str]) -> None:
        for child in item.children:
            if child.data and not _is_gap(child.data):
                child.set_label(self._label(child.data))
                if child.children:
                    self._relabel(child)

    def _path(self, comps: list[str] | tuple[str, ...]) -> str:
        """The tree's path string for ``comps``, remembering the components when a name holds ``/``."""
        path = join(comps)
        if any("/" in c for c in comps):
            self._slash_paths[path] = tuple(comps)
        return path

    def _comps(self, path: str) -> list[str]:
        """The components a tree path stands for (see :meth:`_path`)."""
        comps = self._slash_paths.get(path)
        return list(comps) if comps is not None else normalize("/", path)

    def _node(self, path: str) -> Node | None:
        return resolve(self.shell.root, self._comps(path))

    def _name_of(self, path: str) -> str:
        """The name a tree row at ``path`` stands for."""
        comps = self._comps(path)
        return comps[-1] if comps else "/"

    def _label(self, path: str) -> Text:
        """A tree row: the node's whole name (a hostile one may hold ``/``), then its badges."""
        label = Text(visible(self._name_of(path)))
        badge = self.badges.get(path)
        if badge is not None:
            label.append(f"  {badge}", style="bold red" if badge in ("offline", "fenced") else "yellow")
        if path in self.changed:
            label.append("  *", style="bold green")
        return label

    def _follow(self) -> None:
        """Live mode, every second: apply what the quorum committed; refresh what is shown."""
        assert self.source.refresh is not None
        if self.paused or self.command_running():  # a command's thread reads (watch: moves) the image
            self._refresh_header()
            return
        self._tell_leader_change()
        image = self.shell.root.ctx.image
        before = image.provenance.offset
        self.source.refresh()
        after = image.provenance.offset
        if after != before:
            self._names = None
            tree = self.query_one("#tree", Tree)
            self._refill(tree.root, "/")
            self.show(self.selected)
            self.run_worker(self._check_health, thread=True, exclusive=True, group="health")
        self._refresh_header()

    def _tell_leader_change(self) -> None:
        """Live mode: a notification when the quorum's leader changes (or is lost, or is back)."""
        if self.source.leader is None:
            return
        leader, epoch = self.source.leader()
        was, self._leader = self._leader, (leader, epoch)
        if was is None or was == (leader, epoch):
            return
        if leader < 0:
            self.notify(
                f"the quorum lost its leader {was[0]} (epoch {was[1]})", severity="warning", timeout=8
            )
        else:
            before = f"{was[0]}, epoch {was[1]}" if was[0] >= 0 else "none"
            self.notify(f"quorum leader {leader}, epoch {epoch} (was {before})", timeout=8)
        self.leader_changes.append((leader, epoch))

    def _refill(self, item: TreeNode[str], path: str, mark: bool = True) -> None:
        """Bring the children of an expanded ``item`` up to date, keeping what is expanded.
        ``mark``: flag what was added (live changes), not what a move in time brought back."""
        node = self._node(path)
        names = set(node.child_names()) if node is not None and node.is_dir else set()
        present = {self._name_of(c.data): c for c in item.children if c.data and not _is_gap(c.data)}
        for name, child in present.items():
            if name not in names:
                child.remove()
        added = sorted(names - present.keys())
        if added and len(present) < PAGE:
            base = self._comps(path)
            for name in added[:PAGE]:
                child_path = self._path([*base, name])
                sub = node.child(name) if node is not None else None
                if mark:
                    self.changed[child_path] = True
                if sub is not None and sub.is_dir:
                    item.add(self._label(child_path), data=child_path, allow_expand=True)
                else:
                    item.add_leaf(self._label(child_path), data=child_path)
            if mark:
                marked = list(self.changed)  # these, not what is marked when the timer fires
                self.set_timer(5.0, lambda: self._unmark(marked))
        for child in item.children:
            if child.is_expanded and child.data:
                self._refill(child, child.data, mark)

    def _unmark(self, paths: list[str]) -> None:
        for p in paths:
            self.changed.pop(p, None)
        self._relabel(self.query_one("#tree", Tree).root)

    def action_pause(self) -> None:
        """Stop following the live log (and start again); the status counts what arrived meanwhile."""
        self.paused = not self.paused
        self._refresh_header()

    # ------------------------------------------------------------------ the tree

    def _fill(
        self,
        item: TreeNode[str],
        path: str,
        start: int = 0,
        stop: int | None = None,
        before: TreeNode[str] | None = None,
    ) -> None:
        """Add a page of ``path``'s children ``[start, stop)`` under ``item`` (before ``before``),
        and a "... N more" node for the rest of the range."""
        node = self._node(path)
        if node is None or not node.is_dir:
            return
        names = node.child_names()
        stop = len(names) if stop is None else min(stop, len(names))
        end = min(stop, start + PAGE)
        base = self._comps(path)
        for name in names[start:end]:
            child = node.child(name)
            if child is None:
                continue
            child_path = self._path([*base, name])
            if child.is_dir:
                item.add(self._label(child_path), data=child_path, allow_expand=True, before=before)
            else:
                item.add_leaf(self._label(child_path), data=child_path, before=before)
        if end < stop:
            self._gap(item, path, end, stop, before)

    def _gap(
        self, item: TreeNode[str], path: str, start: int, stop: int, before: TreeNode[str] | None
    ) -> None:
        """A node standing for children ``[start, stop)`` not added yet (select it to add them)."""
        item.add_leaf(
            Text(f"... {stop - start} more", style="italic"),
            data=f"{_MORE}{start}:{stop}\0{path}",
            before=before,
        )

    @staticmethod
    def _gap_range(data: str) -> tuple[int, int, str]:
        span, path = data[len(_MORE) :].split("\0", 1)
        start, stop = span.split(":")
        return int(start), int(stop), path

    def _open_gap(self, gap: TreeNode[str], at: int | None = None) -> None:
        """Replace a gap node by the page of children it stands for (the one holding index ``at``)."""
        parent = gap.parent
        assert gap.data is not None and parent is not None
        start, stop, path = self._gap_range(gap.data)
        siblings = list(parent.children)
        after = siblings.index(gap) + 1
        before = siblings[after] if after < len(siblings) else None
        gap.remove()
        page = start if at is None else at - (at - start) % PAGE
        if page > start:
            self._gap(parent, path, start, page, before)
        self._fill(parent, path, page, stop, before)

    @on(Tree.NodeExpanded)
    def _expanded(self, event: Tree.NodeExpanded[str]) -> None:
        item = event.node
        if item.data is not None and not item.children:
            self._fill(item, item.data)

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[str]) -> None:
        if _is_gap(event.node.data):
            self._open_gap(event.node)

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        data = event.node.data
        if data is not None and not _is_gap(data) and data != self.selected:
            self.show(data)

    def show(self, path: str) -> None:
        """Put ``path``'s node in the detail pane."""
        node = self._node(path)
        self.selected = path
        if node is None:
            self._put(Text(f"{visible(path)}: no such file or directory", style="red"))
            return
        self._put(detail(self._comps(path), node, self.redact, health=self.health))

    def _put(self, renderable: RenderableType, *, command: bool = False) -> None:
        self.shown = renderable
        self._command_shown = command
        self.query_one("#detail", Static).update(renderable)

    def go_to(self, path: str, *, remember: bool = True) -> None:
        """Expand the tree down to ``path``, highlight it and show it."""
        if remember and (not self._visited or self._visited[-1] != path):
            self._visited.append(path)
            self._ahead.clear()
        comps = self._comps(path)
        tree = self.query_one("#tree", Tree)
        item = tree.root
        for i, name in enumerate(comps):
            if not item.children:
                self._fill(item, self._path(comps[:i]))
            item.expand()
            found = next((c for c in item.children if c.data == self._path(comps[: i + 1])), None)
            if found is None:
                found = self._page_to(item, self._path(comps[:i]), name)
            if found is None:
                break
            item = found
        target = item

        def place() -> None:  # line numbers exist once the expanded tree is laid out again
            tree.move_cursor(target)
            tree.scroll_to_node(target, animate=False)

        self.call_after_refresh(place)
        self.show(item.data or "/")

    def _page_to(self, item: TreeNode[str], path: str, name: str) -> TreeNode[str] | None:
        """Add the page of ``item``'s children that holds ``name`` (a topic far down /topics): only
        that page, with gap nodes standing for what is before and after it."""
        node = self._node(path)
        if node is None or not node.is_dir:
            return None
        try:
            index = node.child_names().index(name)
        except ValueError:
            return None
        for gap in list(item.children):
            if gap.data and _is_gap(gap.data):
                start, stop, _path = self._gap_range(gap.data)
                if start <= index < stop:
                    self._open_gap(gap, index)
                    break
        want = self._path([*self._comps(path), name])
        return next((c for c in item.children if c.data == want), None)

    # ------------------------------------------------------------------ search

    def search_paths(self, query: str) -> Iterable[str]:
        """Candidate paths for the palette (:func:`.search.search` over the tree's own paths)."""
        return search(self._searchable(), query, self._children_of)

    def _children_of(self, path: str) -> Iterable[tuple[str, str]]:
        node = self._node(path)
        if node is None or not node.is_dir:
            return []
        base = self._comps(path)
        return [(name, self._path([*base, name])) for name in node.child_names()]

    def searchable_ready(self) -> bool:
        """Whether the search list is built (it is built in the background after the first screen)."""
        return self._names is not None

    def _searchable(self) -> list[str]:
        if self._names is None:
            self._names = index_paths(self.shell.root, self._path)
        return self._names

    # ------------------------------------------------------------------ the command line

    def action_command_line(self) -> None:
        self.query_one("#command", Input).focus()

    def action_focus_tree(self) -> None:
        self.query_one("#tree", Tree).focus()

    @on(Input.Submitted, "#command")
    def _command(self, event: Input.Submitted) -> None:
        line = event.value.strip().lstrip(":").strip()  # vim hands type ":ls"
        event.input.value = ""
        if not line:
            return
        if line in ("exit", "quit"):
            self.exit(0)
            return
        self.run_command(line)
        self.action_focus_tree()  # the answer is read by moving in the tree: arrows must work at once

    def run_command(self, line: str) -> int | None:
        """Run ``line`` through the shell's command engine, as its commands' TUI modes say
        (:mod:`.command_runner`); the output goes to the detail pane.  Returns the status of a line
        run inline, None for one handed to a worker (its output arrives later)."""
        if self.command_running():
            self._put(Text("a command is running: Escape stops it", style="red"), command=True)
            return 1
        how = line_mode(line)
        if how.mode is TuiMode.REFUSE:
            self._put(Text(visible(how.refusal), style="red"), command=True)
            return 1
        self.output.seek(0)
        self.output.truncate()
        self.errors.seek(0)
        self.errors.truncate()
        if how.mode is TuiMode.INLINE:
            self.shell.stop.clear()
            cwd, point = self.shell.cwd, self.shell.point
            status = self.shell.run_line(line)
            self._command_finished(cwd, point)
            return status
        streaming = how.mode is TuiMode.STREAM
        self._streamed = Text()
        verb = "Escape stops it" if streaming else "Escape stops it; the tree stays usable"
        self._put(Text(visible(f"running: {line}  ({verb})"), style="italic"), command=True)
        self.shell.stop.clear()
        self._command_worker = self.run_worker(
            lambda: self._run_in_thread(line, streaming), thread=True, exclusive=True, group="command"
        )
        return None

    def command_running(self) -> bool:
        """Whether a command handed to a worker is still running."""
        worker = self._command_worker
        return worker is not None and not worker.is_finished

    class CommandOutput(Message):
        """Lines a streaming command wrote (posted from its thread)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class CommandDone(Message):
        """A command run on a worker ended (posted from its thread)."""

        def __init__(self, cwd: str, point: str | None, offset: int, streamed: bool) -> None:
            super().__init__()
            self.cwd, self.point, self.offset, self.streamed = cwd, point, offset, streamed

    def _run_in_thread(self, line: str, streaming: bool) -> None:
        """In a worker thread: run ``line``; a streaming command writes through a
        :class:`PaneWriter` that posts its lines; the end is posted as :class:`CommandDone`."""
        cwd, point = self.shell.cwd, self.shell.point
        offset = self.shell.root.ctx.image.provenance.offset
        saved = self.shell.out, self.shell.err
        if streaming:
            writer = PaneWriter(lambda text: self.post_message(self.CommandOutput(text)))
            self.shell.out = self.shell.err = writer  # type: ignore[assignment]
        try:
            with contextlib.suppress(CommandStopped):
                self.shell.run_line(line)
        finally:
            if self.shell.stop.is_set():
                self.shell.stop.clear()  # what was asked to stop has stopped
                self.shell.note("(stopped)")
            self.shell.out.flush()
            self.shell.out, self.shell.err = saved
            self.post_message(self.CommandDone(cwd, point, offset, streaming))

    @on(CommandOutput)
    def _on_command_output(self, message: CommandOutput) -> None:
        self._streamed.append(visible_output(message.text))
        self._put(self._streamed, command=True)
        with contextlib.suppress(NoMatches):
            self.query_one("#detail-scroll", VerticalScroll).scroll_end(animate=False)

    @on(CommandDone)
    def _on_command_done(self, message: CommandDone) -> None:
        self._command_worker = None
        if self.shell.root.ctx.image.provenance.offset != message.offset:  # watch applied live changes
            self._names = None
            self._refill(self.query_one("#tree", Tree).root, "/")
        if message.streamed:
            return
        self._command_finished(message.cwd, message.point)

    def action_stop_or_focus_tree(self) -> None:
        """Escape: stop a running command (``watch``), else go back to the tree."""
        if self.command_running():
            self.shell.stop.set()
            if self._command_worker is not None:
                self._command_worker.cancel()
        self.action_focus_tree()

    def _command_finished(self, cwd: str, point: str | None) -> None:
        """After a command: its output in the detail pane, and the tree moved if it moved the
        session (``cd``, ``at``)."""
        text = Text(visible_output(self.output.getvalue()))
        if self.errors.getvalue():
            text.append(visible_output(self.errors.getvalue()), style="red")
        if point != self.shell.point:  # `at` moved the session: rebuild the tree over the new image
            self._names = None
            self.health, self.badges = None, {}  # the end's verdict and badges beside the past's tables lied
            tree = self.query_one("#tree", Tree)
            self._refill(tree.root, "/", mark=False)  # what is expanded stays expanded
            self._relabel(tree.root)
            self._refresh_header()
            self.run_worker(self._check_health, thread=True, exclusive=True, group="health")
        if cwd != self.shell.cwd or point != self.shell.point:
            self.go_to(self.shell.cwd)
        if self.output.getvalue() or self.errors.getvalue():
            self._put(text, command=True)

    def action_go_back(self) -> None:
        if len(self._visited) > 1:
            self._ahead.append(self._visited.pop())
            self.go_to(self._visited[-1], remember=False)

    def action_go_forward(self) -> None:
        if self._ahead:
            path = self._ahead.pop()
            self._visited.append(path)
            self.go_to(path, remember=False)

    def action_history(self) -> None:
        """The history of the selected topic, partition, broker or config (``history PATH``)."""
        self.run_command(f"history {_quoted(self.selected)}")

    def action_help(self) -> None:
        """The ``?`` screen: keys and shell commands, filtered as you type."""
        keys = [
            (b.key_display or b.key, self.KEY_HELP.get(b.action, b.description))
            for b in self.BINDINGS
            if isinstance(b, Binding)
        ]
        self.push_screen(HelpScreen(help_rows(keys)))

    # ------------------------------------------------------------------ the pager

    def action_open_pager(self) -> None:
        """Page what the detail pane shows (a file's whole value) in ``$PAGER``, the screen suspended."""
        command = _tui_pager()
        if command is None:
            self.notify("paging is off (PAGER is empty or cat)", severity="warning")
            return
        try:
            with self.suspend():
                subprocess.run(command, input=self.shown_text(), text=True, check=False)
        except SuspendNotSupported:
            self.notify("this terminal cannot hand the screen to a pager", severity="warning")
        except OSError as e:
            self.notify(visible(f"cannot run {command[0]}: {e.strerror or e}"), severity="error")

    def shown_text(self, width: int = 200) -> str:
        """The detail pane as plain text: a file's whole value, otherwise the pane rendered without
        styles (control characters were made visible when it was built)."""
        node = self._node(self.selected)
        if node is not None and not node.is_dir and not self._command_shown:
            return visible_output(node.text(self.redact))
        console = Console(
            file=io.StringIO(), width=width, color_system=None, force_terminal=False, legacy_windows=False
        )
        console.print(self.shown)
        assert isinstance(console.file, io.StringIO)
        return console.file.getvalue()

    # ------------------------------------------------------------------ copy

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        self.deliver_screenshot(filename, path)

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """Save an SVG of the screen (Ctrl-P "Screenshot") to ``path``, else the Downloads folder,
        else the current directory; returns the file's path.

        Written on the app's own thread.  Textual's default hands the file to a delivery thread that
        then waits for the app to take its "saved" message: quitting right after a screenshot left
        that thread, and so the whole process, waiting for ever at exit.  (Its default also fails
        where there is no Downloads folder, as on most servers.)"""
        downloads = user_downloads_path()
        directory = path or str(downloads if downloads.is_dir() else Path.cwd())
        try:
            saved = self.save_screenshot(filename, directory, time_format)
        except OSError as e:
            self.notify(
                visible(f"screenshot not saved: {e.strerror or e}"), title="Screenshot", severity="error"
            )
            return None
        self.notify(f"saved to {visible(saved)}", title="Screenshot")
        return saved

    def action_copy_path(self) -> None:
        self.copy_to_clipboard(self.selected)
        self.notify(f"copied {visible(self.selected)}")

    def action_copy_value(self) -> None:
        node = self._node(self.selected)
        if node is not None and not node.is_dir:
            self.copy_to_clipboard(node.text(self.redact))
            self.notify(f"copied the value of {visible(self.selected)}")


def _tui_pager() -> list[str] | None:
    """``$METASHELL_PAGER`` or ``$PAGER`` as the REPL reads them, but ``less -R`` by default: the
    REPL's ``-F`` (quit when it fits) would hand the screen straight back."""
    if "METASHELL_PAGER" in os.environ or "PAGER" in os.environ:
        return pager_command()
    return ["less", "-R"]


def _quoted(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'" if any(c in path for c in " '\";|") else path
