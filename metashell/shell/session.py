"""A shell session: what it holds and how it runs a command line.

:class:`Shell` holds what a session needs (the tree root, the working directory, the history, the
output streams and settings), splits a command line into commands and pipes, and runs each through
the command registry (:mod:`.registry`; the commands themselves are in :mod:`.commands`).  Without
options every command prints exactly what Kafka's ``kafka-metadata-shell`` prints (FORMATS.md
section 8).  The differences, all deliberate, are listed in :data:`DIFFERENCES`.

Output discipline: results go to ``out``; every error is one line on ``err`` (Kafka prints its
errors among the results on stdout) and makes the command's status 1.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO, cast

from metashell.errors import MetashellError, out_of_memory
from metashell.image.image import MetadataImage
from metashell.log.directory import ReadPlan
from metashell.tree import Node, glob_components, join
from metashell.tree.paths import is_glob, normalize

from ..safe_text import visible, visible_output
from . import registry
from .colour import Painter
from .output import colorize_json, json_line
from .sources import open_other
from .spec import CommandError, CommandUsageError, Parsed
from .suggest import close_matches
from .words import Word, split_commands, split_pipe, split_segments

if TYPE_CHECKING:
    from threading import Event

    from .source import Source
    from .travel import Moves, Traveller

DIFFERENCES = (
    "Errors go to stderr, one line each, and make the exit status 1 (Kafka: stdout, exit 0).",
    "find on a glob prints the matched paths (Kafka prints the glob text, e.g. '/image/to*/byId').",
    "All commands work in one-shot mode (Kafka only allows cat, find, ls and tree there).",
    "ls lays out columns whenever stdout is a terminal, one-shot mode included (Kafka: REPL only).",
    "tree without a path shows the working directory (Kafka: 'too few arguments').",
    "Extra options: ls -l, find -name/-type, tree -L, --json on ls/cat/find/tree/pwd/history.",
    "Usage errors name the command and show its usage; unknown commands suggest the closest name.",
    "Backslashes typed outside quotes reach the glob layer (JLine strips them in Kafka).",
    "history is persistent across sessions and numbered from 0 over the whole file.",
    "help/man texts describe metashell's options; 'help CMD' is accepted as 'man CMD'.",
    "Secrets print as [redacted] unless --no-redact (Kafka's shell never redacts).",
)
"""Every deliberate difference from Kafka's shell, for the docs."""

_SUGGEST_MAX_NAMES = 10_000
_BARE_KINDS = frozenset({"kafka", "scalar", "config", "quota", "feature"})


class CommandStopped(Exception):
    """Raised in a command's thread when the session was asked to stop it (:attr:`Shell.stop`, the
    TUI's Escape): the command's next write ends it."""


def _from_memory_error(e: BaseException) -> bool:
    """Whether ``e`` was caused by running out of memory: an ``ImportError`` (or a library's own
    error) raised while a MemoryError was being handled, or from one, said "internal error in diff:
    ImportError" where the rule is one out-of-memory line."""
    seen: set[int] = set()
    chain: BaseException | None = e
    while chain is not None and id(chain) not in seen:
        if out_of_memory(chain):
            return True
        seen.add(id(chain))
        chain = chain.__cause__ or chain.__context__
    return False


class ExitShell(Exception):
    """Raised by ``exit``: the REPL or the one-shot runner stops."""

    def __init__(self, status: int = 0) -> None:
        super().__init__(status)
        self.status = status


def _no_width() -> int | None:
    """Not a terminal: no columns."""
    return None


class Settings:
    """Per-session output settings: ``json`` (global --json), ``redact``, ``color`` (ANSI colours
    around JSON: a terminal, NO_COLOR unset) and ``width`` (the terminal's columns, for ``ls``)."""

    __slots__ = ("color", "json", "redact", "width")

    def __init__(
        self,
        json: bool = False,
        redact: bool = True,
        color: bool = False,
        width: Callable[[], int | None] = _no_width,
    ) -> None:
        self.json = json
        self.redact = redact
        self.color = color
        self.width = width

    def for_pipe(self) -> Settings:
        """The same settings for output into a pipe, which is not a terminal: no colour, no columns."""
        return Settings(self.json, self.redact)

    def __repr__(self) -> str:
        return f"Settings(json={self.json}, redact={self.redact}, color={self.color})"


def effective_paths(args: list[Word]) -> list[Word]:
    """Kafka's ``CommandUtils.getEffectivePaths``: drop empty words; none means ``.``."""
    kept = [a for a in args if a.text]
    return kept or [Word(".", ".")]


class Shell:
    """One shell session over a tree."""

    def __init__(
        self,
        root: Node | Callable[[], Node],
        out: TextIO,
        err: TextIO,
        settings: Settings | None = None,
        history: list[str] | None = None,
    ) -> None:
        self._root = root
        self.out = out
        self.err = err
        self.settings = settings or Settings()
        self.cwd = "/"
        self.previous_cwd = "/"
        #: ``at`` and ``diff --from/--to``: other points of the log (None for live sources).
        self.travel: Traveller | None = None
        #: what ``at`` and ``diff --from/--to`` move: ``travel``, or a live session's own travel
        self.moves: Moves | None = None
        #: where the session is in the log (``@42``), None at its end.
        self.point: str | None = None
        #: ``diff --with``: another source's root.
        self.open_other: Callable[[str], Node] | None = None
        #: ``watch``: brings the image up to date and returns a new root when it had to reload (a
        #: directory), or None when the image was updated in place (live); None: cannot watch.
        self.refresh: Callable[[], Node | None] | None = None
        #: the whole log the source's files hold, for ``history PATH`` and ``log`` (None when live).
        self.full_plan: Callable[[int | None], ReadPlan] | None = None
        self.salvage = False  # --salvage: `log` stops before damage as the load did
        #: the opened source (several ``-d``: its ``nodes``, the ``node`` shown and ``quorum``)
        self.source: Source | None = None
        self.history: list[str] = history if history is not None else []
        self.status = 0
        self._stop: Event | None = None
        self._heard: list[object] = []  # warnings a command's own file reads heard (`heard`)

    def attach(self, source: Source) -> None:
        """Use what an opened source offers: its tree, time travel, its log, refreshing, and
        ``diff --with`` another source (one place for the CLI, the TUI and the benchmarks)."""
        self._root = source.root
        self.travel = source.travel
        self.moves = source.moves
        self.point = source.point
        self.full_plan = source.full_plan
        self.salvage = source.salvage
        self.refresh = source.refresh
        self.open_other = lambda other: open_other(other, self.settings.redact)
        self.source = source

    @property
    def stop(self) -> Event:
        """Set to stop a command that runs until stopped (``watch`` in the TUI: Escape).  Made when
        first asked for (the TUI asks, on its own thread, before it starts a command's thread): a
        one-shot answer never needs it, and so does not import ``threading``."""
        if self._stop is None:
            from threading import Event

            self._stop = Event()
        return self._stop

    @property
    def root(self) -> Node:
        return self._root() if callable(self._root) and not isinstance(self._root, Node) else self._root

    def write(self, text: str, *, raw: bool = False) -> None:
        """Print ``text``; control characters other than newline and tab are made visible unless
        ``raw`` (text that is already safe and carries our own colour sequences)."""
        if self._stop is not None and self._stop.is_set():
            raise CommandStopped
        if text:
            self.out.write(text if raw else visible_output(text))

    def write_painted(self, text: str, painter: Painter) -> None:
        """Print ``text`` made safe, then coloured line by line by ``painter`` when colour is on
        (``shell/colour.py``): the colour sequences are ours, never the metadata's."""
        safe = visible_output(text)
        if self.settings.color:
            safe = "\n".join(painter(line) for line in safe.split("\n"))
        self.write(safe, raw=True)

    def note(self, message: str) -> None:
        """One informational line on stderr that does not fail the command."""
        self.out.flush()
        self.err.write(visible(message.rstrip("\n")) + "\n")
        self.err.flush()

    def error(self, message: str) -> None:
        """One error line on stderr (stdout flushed first so the order on a terminal is right)."""
        self.status = 1
        self.note(message)

    def run_line(self, line: str, remember: bool = True) -> int:
        """Run every ``;``-separated command of ``line``; return the worst status (0 if all
        succeeded; ``--exit-code`` statuses are 0-3, as monitoring plugins report, so they combine by
        the worst rather than bit by bit).

        ``remember`` appends the line to the in-memory history first (JLine adds the line before
        running it, so ``history`` shows itself).  :class:`ExitShell` propagates.
        """
        if remember and line.strip():
            self.history.append(line.rstrip("\n"))
        if "|" not in line:
            segments: list[tuple[str, str | None]] = [(line, None)]
        else:
            segments = [split_pipe(seg) for seg in split_segments(line)]
        status = 0
        for text, pipe_to in segments:
            try:
                commands = split_commands(text)
            except MetashellError as e:
                self.error(str(e))
                return 1
            if pipe_to is not None:
                status = max(status, self._run_piped(commands, pipe_to))
                continue
            for words in commands:
                status = max(status, self.run_words(words))
        return status

    def _run_piped(self, commands: list[list[Word]], shell_command: str) -> int:
        """``CMD | SHELL-COMMAND``: the commands' output goes to ``sh -c SHELL-COMMAND``, whose own
        output goes where ours would (the terminal directly, or copied into ``out`` when that is not
        a file, e.g. in tests).  Errors stay on our stderr.  Status: ours, else the pipe's."""
        if not shell_command:
            self.error("|: a shell command must follow the pipe (e.g. ls /topics | wc -l)")
            return 1
        try:
            target = self.out.fileno()
        except (AttributeError, OSError, ValueError):
            target = None
        self.out.flush()
        import subprocess  # only for a pipe: a one-shot start does not pay for it

        proc = subprocess.Popen(
            shell_command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=target if target is not None else subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        assert proc.stdin is not None
        saved, self.out = self.out, cast(TextIO, proc.stdin)
        settings = self.settings
        self.settings = settings.for_pipe()
        status = 0
        try:
            for words in commands:
                status |= self.run_words(words)
        except BrokenPipeError:
            pass  # `| head -1`: the reader has what it wanted
        finally:
            self.out = saved
            self.settings = settings
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
            captured = proc.stdout.read() if proc.stdout is not None else ""
            code = proc.wait()
        if captured:
            self.out.write(captured)
        return status or (1 if code else 0)

    def run_words(self, words: list[Word]) -> int:
        """Run one command given as words; return its status (0/1)."""
        self.status = 0
        if not words:
            return 0
        try:
            parsed = registry.parse(words)
            if parsed.help:
                self.write(parsed.spec.help_text() + "\n")
            else:
                registry.command(parsed.spec.name).run(self, parsed)
        except CommandUsageError as e:
            self.error(str(e))
            self.status = 2  # usage, as the command line's own (README: 0 success, 1 error, 2 usage)
        except (CommandError, MetashellError) as e:
            self.error(str(e))
        except (BrokenPipeError, ExitShell, CommandStopped):
            raise  # the reader went away / exit / stopped: the caller stops
        except MemoryError as e:  # loading, moving in time, diffing, rendering: one line, not "internal"
            said = " ".join(str(e).split())  # the loader's names the file and batch
            e.__traceback__ = None  # let what the command made go before the line is made
            del e
            self._out_of_memory(words[0].text, said)
        except Exception as e:  # noqa: BLE001 - a bug in one command must not end the session
            if _from_memory_error(e):  # an import or a library that failed for want of memory
                e.__traceback__ = None
                del e
                self._out_of_memory(words[0].text, "")
            else:
                self.error(
                    f"internal error in {words[0].text}: {type(e).__name__}: {' '.join(str(e).split())}"
                )
        self._tell_end_warnings()
        self.out.flush()
        return self.status

    def _out_of_memory(self, command: str, said: str) -> None:
        """One line for a command that ran out of memory, naming the command; if even that line
        cannot be made, a line with nothing of the input in it."""
        try:
            self.error(
                f"{command}: out of memory{': ' + said if said else ''} (the command needs more memory "
                "than this process may use: ulimit -v, a container limit)"
            )
        except MemoryError:
            self.status = 1
            self.err.write("error: out of memory\n")

    def heard(self, warning: object) -> None:
        """The ``warn`` of a command that reads the files itself (``history``, ``log``): what it
        hears is told after its output, unless the session has told it already."""
        self._heard.append(warning)

    def _tell_end_warnings(self) -> None:
        """Warnings about the files this command was the first to read (a torn tail, say) are told
        after its output, once a session: from a session opened at an earlier point, ``history``,
        ``diff``, ``log`` or ``doctor`` read the end, which its opening load did not."""
        heard, self._heard = self._heard, []
        if self.travel is not None:
            for warning in self.travel.untold(heard) + self.travel.end_warnings_untold():
                self.note(f"warning: {warning}")

    # -- what commands use ------------------------------------------------------------------
    def replace_root(self, root: Node) -> None:
        """Show another tree (``at``; ``watch`` on a directory that had to be reloaded)."""
        self._root = root

    def pause(self, seconds: float) -> bool:
        """Wait between looks (``watch``); False when the session was asked to stop meanwhile
        (:attr:`stop`: the TUI's Escape; in the REPL Ctrl-C interrupts the wait itself)."""
        return not self.stop.wait(seconds)

    def wants_json(self, parsed: Parsed) -> bool:
        return self.settings.json or bool(parsed.opts.get("json"))

    def emit_json(self, obj: object) -> None:
        line = json_line(obj)  # no control characters left: JSON escapes C0, json_line the rest
        self.write((colorize_json(line) if self.settings.color else line) + "\n", raw=True)

    def glob(self, pattern: str) -> list[tuple[list[str], Node]]:
        return glob_components(self.root, self.cwd, pattern)

    def did_you_mean(self, typed: str) -> str:
        """`` Did you mean /topics/orders?`` when :meth:`_nearest_path` has one."""
        near = self.nearest_path(typed)
        return f" Did you mean {visible(near)}?" if near else ""

    def nearest_path(self, typed: str) -> str | None:
        """The path ``typed`` with its first missing component replaced by a close sibling (a path
        without globs, in a directory of at most 10 000 names); None when there is none."""
        comps = normalize(self.cwd, typed)
        node: Node | None = self.root
        fixed: list[str] = []
        for i, comp in enumerate(comps):
            if node is None or not node.is_dir or is_glob(comp):
                return None
            child = node.child(comp)
            if child is None:
                if node.child_count() > _SUGGEST_MAX_NAMES:
                    return None
                close = close_matches(comp, node.child_names(), n=1, cutoff=0.7)
                if not close:
                    return None
                return join([*fixed, close[0], *comps[i + 1 :]])
            fixed.append(comp)
            node = child
        return None

    def leaf_text(self, node: Node) -> str:
        """A leaf's text, made safe, then coloured: write it with ``raw=True``."""
        text = visible_output(node.text(self.settings.redact))
        if self.settings.color and text[:1] in "{[" and node.kind not in _BARE_KINDS:
            return colorize_json(text)
        return text

    def image(self) -> MetadataImage:
        image: MetadataImage = self.root.ctx.image
        return image
