"""The Textual app: the virtual filesystem as a tree beside a detail pane, with the shell's command
line under them, laid out by its one screen (:mod:`.main_screen`).  The app wires the parts
together; each lives in its own module:

* **Tree** (left, :mod:`.metadata_tree`): lazy, a page of children at a time, with health badges.
* **Detail** (right, :mod:`.detail_pane`, a widget that owns what it shows; :mod:`.detail` renders
  a node): the highlighted node, or a command's output.
* **Command line** (``:``, :mod:`.command_line`, which posts each line as a message;
  :mod:`.command_runner` runs it): any shell command, run by the same
  :class:`~metashell.shell.session.Shell` as the REPL and one-shot mode, inline or on a worker as
  the command registry says; ``cd`` and ``at`` move the tree.
* **Search** (``/`` or Ctrl-P, :mod:`.search`): paths by name, from an index derived from the tree.
* **Nodes** (``n``, :mod:`.nodes`): several ``-d`` side by side, and a switcher between them.
* **A long log** (:mod:`.catch_up`): the newest snapshot first, the end loaded behind it.
* **Health** (:mod:`.health_behind`): the report and the tree's badges, worked out behind the UI.
* **Live** (:mod:`.live_follow`): what the quorum commits, applied every second.
* **Moving around**: which path is chosen and drawn is one piece of state (:mod:`.selection`);
  only where a run of arrow keys stops is drawn (:mod:`.arrowing`); back and forward (:mod:`.visits`).
* **Out of the TUI** (:mod:`.hand_off`): the pager, screenshots, the clipboard.
* Layout: ``app.tcss``; keys: :mod:`.keys`; the ``?`` screen: :mod:`.help`.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Iterable
from functools import partial
from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import events, on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Static, Tree

from metashell.image.health import HealthReport
from metashell.safe_text import visible
from metashell.shell.session import Settings, Shell
from metashell.shell.source import Source
from metashell.shell.words import quote_word

from . import catch_up, hand_off, health_behind, keys, live_follow, status
from .arrowing import Arrowing
from .command_line import CommandLine
from .command_runner import CommandDone, CommandOutput, CommandRunner
from .detail import detail
from .detail_pane import DetailPane
from .help import HelpScreen, help_rows
from .main_screen import MainScreen
from .metadata_tree import PAGE, MetadataTree, is_gap
from .nodes import show_nodes
from .search import PathSearch
from .selection import Selection
from .ui_first import HEARTBEAT, UiFirst
from .visits import Visits

__all__ = ["PAGE", "MetashellApp"]


class MetashellApp(App[int]):
    """``metashell --tui``."""

    TITLE = "metashell"
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = list(keys.BINDINGS)
    KEY_HELP: ClassVar[dict[str, str]] = keys.KEY_HELP
    COMMANDS = App.COMMANDS | {PathSearch}

    paused: reactive[bool] = reactive(False, init=False)
    """Live mode: following the quorum is paused (``p``); the header says so, and counts what arrived."""

    def __init__(self, source: Source, *, redact: bool = True, start_path: str = "/") -> None:
        super().__init__()
        self.source = source
        self.redact = redact
        self.start_path = start_path
        self.output = io.StringIO()
        self.errors = io.StringIO()
        self.shell = Shell(source.root, self.output, self.errors, Settings(redact=redact))
        self.shell.attach(source)
        self.selection = Selection()
        """The path chosen and whether its draw is owed: the one state the detail pane follows."""
        self.health: HealthReport | None = None
        self.health_due = True
        """A report for the image shown is still to come (after the first screen, ``at``, a live change)."""
        self.drawn_offset: int | None = None
        """The image's offset when the tree and the detail pane were last filled.  Live mode
        redraws when the image has moved past it, whoever applied the records (the header's status
        applies them too): comparing with the offset before its own refresh missed those."""
        self.visits = Visits()
        self.last_leader: tuple[int, int] | None = None
        self.leader_changes: list[tuple[int, int]] = []
        """Live mode: (leader, epoch) each time the quorum's changed while the TUI ran."""
        self._tree: MetadataTree | None = None
        self.commands = CommandRunner(self)
        self.ui_first = UiFirst(lambda: self.is_running)
        """Where background work waits while keys come and the UI is busy (:mod:`.ui_first`)."""
        self.first_screen_at: float | None = None
        """``time.perf_counter()`` when the first screen had been drawn (for the benchmark)."""
        self.arrowing = Arrowing(self.selection, self.draw_selected, self.set_timer)

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

    @property
    def selected(self) -> str:
        """The path chosen (:attr:`Selection.path`): changed only through :attr:`selection`."""
        return self.selection.path

    @property
    def detail_pane(self) -> DetailPane:
        """The detail pane widget."""
        return self.query_one(DetailPane)

    @property
    def shown(self) -> RenderableType:
        """What the detail pane shows (for the pager, the tests and the screenshot)."""
        return self.detail_pane.shown

    @property
    def command_shown(self) -> bool:
        """The detail pane shows a command's output, not the selected node."""
        return self.selection.command_shown

    @property
    def tree_view(self) -> MetadataTree:
        """The tree widget (kept once mounted: worker threads use it too, and must not query the DOM)."""
        if self._tree is None:
            self._tree = self.query_one("#tree", MetadataTree)
        return self._tree

    @property
    def badges(self) -> dict[str, str]:
        """Tree paths with a health badge (offline, under-replicated, fenced ...)."""
        return self.tree_view.badges

    @badges.setter
    def badges(self, value: dict[str, str]) -> None:
        self.tree_view.badges = value

    @property
    def changed(self) -> dict[str, bool]:
        """Live mode: paths that just appeared (marked for a few seconds)."""
        return self.tree_view.changed

    # ------------------------------------------------------------------ layout

    def get_default_screen(self) -> Screen[None]:
        return MainScreen(lambda: self.shell.root)

    def on_main_screen_ready(self) -> None:
        tree = self.tree_view  # kept from here on (`settled` waits for it)
        self.refresh_header()
        tree.fill(tree.root, "/")
        self.drawn_offset = self.shell.root.ctx.image.provenance.offset
        tree.root.expand()
        tree.focus()
        self.go_to(self.start_path)
        # health and the search list take a second at a million partitions: after the first screen
        self.call_after_refresh(self._first_screen_drawn)
        self.set_interval(HEARTBEAT, self.ui_first.beat)
        if self.source.travel is None and self.source.refresh is not None:  # live: follow the log
            self.set_interval(1.0, partial(live_follow.follow, self))

    def facts_line(self) -> str:
        """The header's second line (:func:`.status.facts_line`)."""
        return status.facts_line(self)

    def refresh_header(self) -> None:
        """Both header lines, recomputed together (the title bar and :meth:`facts_line`)."""
        self.sub_title = status.status_line(self)
        with contextlib.suppress(NoMatches):  # a live tick may land while the app is torn down
            self.query_one("#facts", Static).update(self.facts_line())

    # ------------------------------------------------------------------ health and live

    def _first_screen_drawn(self) -> None:
        self.first_screen_at = time.perf_counter()
        self.set_timer(0.05, self._background)

    def _background(self) -> None:
        if not catch_up.start(self):  # opened at the snapshot: the end first, then its health
            self.check_health()

    def check_health(self) -> None:
        """Work the health report out again, behind the UI (:mod:`.health_behind`; the newest wins)."""
        self.health_due = True
        self.run_worker(partial(health_behind.work_out, self), thread=True, exclusive=True, group="health")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.MouseDown):  # the user is doing something
            self.ui_first.input()
        await super().on_event(event)

    @on(health_behind.HealthReady)
    def _on_health_ready(self, message: health_behind.HealthReady) -> None:
        if message.image is not self.shell.root.ctx.image:  # judged before an `at` moved the session
            return
        self._health_done(message.report, message.badges)

    def _health_done(self, report: HealthReport, badges: dict[str, str]) -> None:
        self.health = report
        self.health_due = False
        self.badges = badges
        self.tree_view.relabel(self.tree_view.root)
        self.refresh_header()
        if self.selected in ("/", "/health") and not self.command_shown:  # now with the report
            self.draw_selected()

    def action_pause(self) -> None:
        """Stop following the live log (and start again); the status counts what arrived meanwhile."""
        self.paused = not self.paused

    def watch_paused(self) -> None:
        self.refresh_header()

    # ------------------------------------------------------------------ the tree

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        data = event.node.data
        if data is None or is_gap(data) or event.node is not self.tree_view.cursor_node:
            return  # (a highlight the cursor has since left, by go_to or later keys, is stale)
        if self.selection.stale(data):  # the cursor before a go_to, which is about to move it
            return
        if data != self.selection.placing:  # (go_to's own target is chosen and drawn already)
            self.arrowing.highlighted(data)  # a run of arrow keys draws where the cursor rests

    def settled(self) -> bool:
        """Whether the screen follows from the state with nothing still to come: the chosen path
        drawn (or answered by a command) where the cursor is, no command running, the health
        report in.  What the tests wait for, instead of waiting for time."""
        if self._tree is None:  # the screen's widgets are not mounted yet
            return False
        cursor = self.tree_view.cursor_node
        on_choice = (
            cursor is None or cursor.data is None or is_gap(cursor.data) or cursor.data == self.selected
        )
        return self.selection.settled and on_choice and not self.command_running() and not self.health_due

    def draw_selected(self) -> None:
        """Put the chosen path's node in the detail pane (whatever is chosen *now*)."""
        path = self.selection.path
        node = self.tree_view.node_at(path)
        self.selection.drawn()
        if path == "/health" and self.health is None:  # not worked out a second time, here
            self.show_in_pane(
                Text("health: the report is being worked out in the background...", style="italic")
            )
            return
        if node is None:
            self.show_in_pane(Text(f"{visible(path)}: no such file or directory", style="red"))
            return
        self.show_in_pane(detail(self.tree_view.comps_of(path), node, self.redact, health=self.health))

    def show_in_pane(self, renderable: RenderableType, *, command: bool = False, wrap: bool = False) -> None:
        """Show ``renderable`` in the detail pane.  A command's output is text that never wraps
        (a ``log`` row is one line, scrolled sideways when wider than the pane; ``w`` gives the pane
        the whole width) unless it is sentences (``wrap``: ``health``); the views of a node fit
        the pane.  A command's output answers the choice: a draw :mod:`.arrowing` had put off is
        no longer owed."""
        if command:
            self.selection.answered()
        self.detail_pane.show(renderable, sideways=command and not wrap)

    def go_to(self, path: str, *, remember: bool = True) -> None:
        """Expand the tree down to ``path``, highlight it and show it."""
        if remember:
            self.visits.went_to(path)
        tree = self.tree_view
        target = tree.expand_to(path)
        ticket = self.selection.place(target.data or "/")
        tree.put_cursor(target)  # a highlight queued before now (focus, earlier keys) is then stale

        def place() -> None:  # scrolled there once the tree has its size
            if not self.selection.current(ticket):  # a later go_to moves the cursor instead
                return
            tree.put_cursor(target)
            tree.scroll_to_node(target, animate=False)
            self.selection.placed(ticket)  # highlights of other rows are the user's again

        self.call_after_refresh(place)
        self.draw_selected()

    # ------------------------------------------------------------------ search

    def search_paths(self, query: str) -> Iterable[str]:
        """Candidate paths for the palette: the tree's own search (:meth:`MetadataTree.search`)."""
        return self.tree_view.search(query)

    def searchable_ready(self) -> bool:
        """Whether the search index is built (it is built in the background after the first screen)."""
        return self.tree_view.index_ready

    def _searchable(self) -> list[str]:
        return self.tree_view.search_index(self.ui_first.pace)

    # ------------------------------------------------------------------ the command line

    def action_command_line(self) -> None:
        self.query_one(CommandLine).focus()

    def action_focus_tree(self) -> None:
        self.tree_view.focus()

    def on_command_line_run(self, message: CommandLine.Run) -> None:
        if message.line in ("exit", "quit"):
            self.exit(0)
            return
        self.run_command(message.line)
        self.action_focus_tree()  # the answer is read by moving in the tree: arrows must work at once

    def run_command(self, line: str) -> int | None:
        """Run ``line`` as the ``:`` command line does (:class:`.command_runner.CommandRunner`)."""
        return self.commands.run_command(line)

    def command_running(self) -> bool:
        return self.commands.command_running()

    def on_command_output(self, message: CommandOutput) -> None:
        self.commands.show_output(message)

    def on_command_done(self, message: CommandDone) -> None:
        self.commands.done(message)

    def action_stop_or_focus_tree(self) -> None:
        """Escape: stop a running command (``watch``), and go back to the tree."""
        self.commands.stop()
        self.action_focus_tree()

    def action_go_back(self) -> None:
        if (path := self.visits.back()) is not None:
            self.go_to(path, remember=False)

    def action_go_forward(self) -> None:
        if (path := self.visits.forward()) is not None:
            self.go_to(path, remember=False)

    def action_history(self) -> None:
        """The history of the selected topic, partition, broker or config (``history PATH``),
        opened at its newest entry (the last line: what happened most recently)."""
        self.commands.scroll_to_end_once = True
        self.run_command(f"history {quote_word(self.selected)}")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``n`` (nodes) only with several ``-d``: one node has nothing to put side by side."""
        if action == "nodes":
            return self.shell.source is not None and self.shell.source.quorum is not None
        return True

    def action_nodes(self) -> None:
        """Several ``-d``: the nodes side by side; Enter shows one (:mod:`.nodes`)."""
        show_nodes(self)

    def action_toggle_wide(self) -> None:
        """Hide or show the tree, so that wide output (``log``, ``describe``) has the whole width."""
        tree = self.tree_view
        tree.display = not tree.display
        if tree.display:
            tree.focus()

    def action_help(self) -> None:
        """The ``?`` screen: keys and shell commands, filtered as you type."""
        keys = [
            (b.key_display or b.key, self.KEY_HELP.get(b.action, b.description))
            for b in self.BINDINGS
            if isinstance(b, Binding)
        ]
        self.push_screen(HelpScreen(help_rows(keys)))

    # ------------------------------------------------------------------ out of the TUI

    def action_open_pager(self) -> None:
        """Page what the detail pane shows (a file's whole value) in ``$PAGER``, the screen suspended."""
        hand_off.open_pager(self)

    def shown_text(self, width: int = 200) -> str:
        """The detail pane as plain text (:func:`.hand_off.shown_text`)."""
        return hand_off.shown_text(self, width)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        self.deliver_screenshot(filename, path)

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """Save an SVG of the screen (:func:`.hand_off.save_screenshot`); returns its path."""
        return hand_off.save_screenshot(self, filename, path, time_format)

    def action_copy_path(self) -> None:
        hand_off.copy_path(self)

    def action_copy_value(self) -> None:
        hand_off.copy_value(self)
