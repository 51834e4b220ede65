"""How the TUI runs a line typed on its ``:`` command line, as the command registry says.

Each command declares its :class:`~metashell.shell.registry.TuiMode`.  Quick commands, and those
that move the session's one image (``at``; ``diff``/``log`` visiting another point), run on the UI
thread: the tree reads that image, so nothing may read it while it moves.  Commands that may read a
million partitions run on a worker thread and show their output when they end; ``watch`` runs on a
worker until Escape stops it, its lines streaming into the detail pane (it used to run on the UI
thread and freeze the TUI for good, Ctrl-C included).  ``clear`` is refused.

Toolong and Harlequin run slow work the same way: ``@work(thread=True)`` workers whose results come
back to the app as messages, never by touching widgets from the thread.
"""

from __future__ import annotations

import contextlib
import io
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from rich.console import RenderableType
from rich.text import Text
from textual.css.query import NoMatches
from textual.message import Message
from textual.worker import Worker

from metashell.errors import MetashellError
from metashell.safe_text import visible, visible_output
from metashell.shell import registry
from metashell.shell.registry import TuiMode
from metashell.shell.session import CommandStopped
from metashell.shell.words import split_commands, split_pipe, split_segments

from . import catch_up
from .detail_pane import DetailPane
from .faces import HasSession, RunsLater, ShowsHealth
from .metadata_tree import MetadataTree

__all__ = ["CommandDone", "CommandOutput", "CommandRunner", "LineMode", "PaneWriter", "is_prose", "line_mode"]


class RunnerApp(HasSession, RunsLater, ShowsHealth, Protocol):
    """What running a ``:`` line reads and moves: the session's output, the tree, the pane."""

    output: io.StringIO
    errors: io.StringIO
    badges: dict[str, str]

    @property
    def tree_view(self) -> MetadataTree: ...
    @property
    def detail_pane(self) -> DetailPane: ...
    def show_in_pane(
        self, renderable: RenderableType, *, command: bool = False, wrap: bool = False
    ) -> None: ...
    def go_to(self, path: str, *, remember: bool = True) -> None: ...


@dataclass(frozen=True)
class LineMode:
    """How to run one command line: its mode, and for a refused line the one-line reason."""

    mode: TuiMode
    refusal: str = ""


def _command_names(line: str) -> list[str] | None:
    """The command names of a whole line (``a; b | c``: ``a``, ``b``), or None when it does not
    parse (the shell itself then says what is wrong with it)."""
    try:
        return [
            words[0].literal
            for segment in split_segments(line)
            for words in split_commands(split_pipe(segment)[0])
            if words
        ]
    except MetashellError:
        return None


def is_prose(line: str) -> bool:
    """Whether every command of ``line`` writes sentences (``Command.prose``): wrapped in the pane."""
    names = _command_names(line)
    if names is None:
        return True  # the shell's one-line complaint
    table = registry.commands()
    return bool(names) and all(n in table and table[n].prose for n in names)


def line_mode(line: str) -> LineMode:
    """The mode of a whole line (``a; b | c``): the slowest of its commands' modes; inline when
    any of them moves the image, which a worker must not do beside the tree."""
    names = _command_names(line)
    if names is None:
        return LineMode(TuiMode.INLINE)
    table = registry.commands()
    known = [table[n] for n in names if n in table]
    refused = next((c for c in known if c.tui is TuiMode.REFUSE), None)
    if refused is not None:
        return LineMode(TuiMode.REFUSE, f"{refused.name}: not available in the TUI")
    streams = any(c.tui is TuiMode.STREAM for c in known)
    moves = any(c.moves_image for c in known)
    if streams and moves:
        return LineMode(
            TuiMode.REFUSE, "watch runs until Escape: give it a line of its own (not with at, diff or log)"
        )
    if streams:
        return LineMode(TuiMode.STREAM)
    if moves or not known or all(c.tui is TuiMode.INLINE for c in known):
        return LineMode(TuiMode.INLINE)
    return LineMode(TuiMode.WORKER)


class PaneWriter(io.TextIOBase):
    """The output stream of a streaming command: what is written is handed to ``deliver`` (which
    posts it to the app as a message) a line at a time; the rest waits for the next newline or
    :meth:`flush`."""

    def __init__(self, deliver: Callable[[str], object]) -> None:
        super().__init__()
        self._deliver = deliver
        self._pending: list[str] = []
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            self._pending.append(text)
            if "\n" not in text:
                return len(text)
            chunk = "".join(self._pending)
            self._pending.clear()
        self._deliver(chunk)
        return len(text)

    def flush(self) -> None:
        with self._lock:
            chunk = "".join(self._pending)
            self._pending.clear()
        if chunk:
            self._deliver(chunk)


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


class CommandRunner:
    """The app's side of the ``:`` command line: runs a line as :func:`line_mode` says, shows its
    output in the detail pane, and moves the tree when the command moved the session."""

    def __init__(self, app: RunnerApp) -> None:
        self.app = app
        self.worker: Worker[None] | None = None
        self._streamed = Text()
        self.scroll_to_end_once = False
        """Open the next command's output at its end (the ``h`` key: the newest history entry)."""
        self.prose = False
        """The running line writes sentences: its output wraps (:func:`is_prose`)."""
        self.taken = 0
        """How many lines were handed to :meth:`run_command` (what a test waits for after Enter)."""

    def run_command(self, line: str) -> int | None:
        """Run ``line`` through the shell's command engine, as its commands' TUI modes say
        (:mod:`.command_runner`); the output goes to the detail pane.  Returns the status of a line
        run inline, None for one handed to a worker (its output arrives later)."""
        self.taken += 1
        if self.command_running():
            self.app.show_in_pane(Text("a command is running: Escape stops it", style="red"), command=True)
            return 1
        how = line_mode(line)
        refusal = how.refusal if how.mode is TuiMode.REFUSE else catch_up.refusal(self.app, line)
        if refusal is not None:
            self.app.show_in_pane(Text(visible(refusal), style="red"), command=True)
            return 1
        self.app.output.seek(0)
        self.app.output.truncate()
        self.app.errors.seek(0)
        self.app.errors.truncate()
        self.app.shell.stop.clear()
        self.prose = is_prose(line)
        if how.mode is TuiMode.INLINE:
            cwd, point, root = self.app.shell.cwd, self.app.shell.point, self.app.shell.root
            status = self.app.shell.run_line(line)
            self.finished(cwd, point, root)
            return status
        streaming = how.mode is TuiMode.STREAM
        self._streamed = Text()
        verb = "Escape stops it" if streaming else "Escape stops it; the tree stays usable"
        self.app.show_in_pane(Text(visible(f"running: {line}  ({verb})"), style="italic"), command=True)
        self.worker = self.app.run_worker(
            lambda: self._run_in_thread(line, streaming), thread=True, exclusive=True, group="command"
        )
        return None

    def command_running(self) -> bool:
        """Whether a command handed to a worker is still running."""
        worker = self.worker
        return worker is not None and not worker.is_finished

    def _run_in_thread(self, line: str, streaming: bool) -> None:
        """In a worker thread: run ``line``; a streaming command writes through a
        :class:`PaneWriter` that posts its lines; the end is posted as :class:`CommandDone`."""
        cwd, point = self.app.shell.cwd, self.app.shell.point
        offset = self.app.shell.root.ctx.image.provenance.offset
        saved = self.app.shell.out, self.app.shell.err
        if streaming:
            writer = PaneWriter(lambda text: self.app.post_message(CommandOutput(text)))
            self.app.shell.out = self.app.shell.err = writer  # type: ignore[assignment]
        try:
            with contextlib.suppress(CommandStopped):
                self.app.shell.run_line(line)
        finally:
            if self.app.shell.stop.is_set():
                self.app.shell.stop.clear()  # what was asked to stop has stopped
                self.app.shell.note("(stopped)")
            self.app.shell.out.flush()
            self.app.shell.out, self.app.shell.err = saved
            self.app.post_message(CommandDone(cwd, point, offset, streaming))

    def show_output(self, message: CommandOutput) -> None:
        self._streamed.append(visible_output(message.text))
        self.app.show_in_pane(self._streamed, command=True)
        with contextlib.suppress(NoMatches):
            self.app.detail_pane.scroll_to_bottom()

    def done(self, message: CommandDone) -> None:
        self.worker = None
        if self.app.shell.root.ctx.image.provenance.offset != message.offset:  # watch applied live changes
            self.app.tree_view.forget_index()
            self.app.tree_view.refill(self.app.tree_view.root, "/")
        if message.streamed:
            return
        self.finished(message.cwd, message.point)

    def stop(self) -> None:
        """Escape: stop a running command (``watch``)."""
        if self.command_running():
            self.app.shell.stop.set()
            if self.worker is not None:
                self.worker.cancel()

    def finished(self, cwd: str, point: str | None, root: object = None) -> None:
        """After a command: its output in the detail pane, and the tree moved if it moved the
        session (``cd``; ``at``; ``node``, which shows another node: ``root`` is the one before)."""
        text = Text(visible_output(self.app.output.getvalue()))
        if self.app.errors.getvalue():
            text.append(visible_output(self.app.errors.getvalue()), style="red")
        switched = root is not None and root is not self.app.shell.root
        if switched and self.app.shell.source is not None:
            self.app.source = self.app.shell.source  # `node`: the header describes the node shown
        if point != self.app.shell.point or switched:  # rebuild the tree over the new image
            self.app.tree_view.forget_index()
            # the end's verdict and badges beside the past's tables lied
            self.app.health, self.app.badges = None, {}
            tree = self.app.tree_view
            tree.refill(tree.root, "/", mark=False)  # what is expanded stays expanded
            tree.relabel(tree.root)
            self.app.refresh_header()
            self.app.check_health()
        if cwd != self.app.shell.cwd or point != self.app.shell.point or switched:
            self.app.go_to(self.app.shell.cwd)
        if self.app.output.getvalue() or self.app.errors.getvalue():
            self.app.show_in_pane(text, command=True, wrap=self.prose)
        if self.scroll_to_end_once:
            self.scroll_to_end_once = False
            with contextlib.suppress(NoMatches):
                self.app.detail_pane.scroll_to_bottom(after_refresh=True)
