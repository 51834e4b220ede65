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

import io
import threading
from collections.abc import Callable
from dataclasses import dataclass

from metashell.errors import MetashellError
from metashell.shell import registry
from metashell.shell.registry import TuiMode
from metashell.shell.words import split_commands, split_pipe, split_segments

__all__ = ["LineMode", "PaneWriter", "line_mode"]


@dataclass(frozen=True)
class LineMode:
    """How to run one command line: its mode, and for a refused line the one-line reason."""

    mode: TuiMode
    refusal: str = ""


def line_mode(line: str) -> LineMode:
    """The mode of a whole line (``a; b | c``): the slowest of its commands' modes; inline when
    any of them moves the image, which a worker must not do beside the tree."""
    try:
        names = [
            words[0].literal
            for segment in split_segments(line)
            for words in split_commands(split_pipe(segment)[0])
            if words
        ]
    except MetashellError:
        return LineMode(TuiMode.INLINE)  # the shell itself says what is wrong with the line
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
