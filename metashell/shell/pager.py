"""Paging long output in the REPL, as ``git`` and ``psql`` do, without ever freezing the screen.

A command's output is held back for a moment (:data:`HOLD_SECONDS`), so that a quick command whose
output is longer than the screen opens the pager at its first line, as ``git log`` does.  After
that moment, whatever was held is printed and the output streams straight to the terminal: a slow
command (``pwd; find / -name zzz`` on a million partitions) shows ``/`` at once instead of a frozen
prompt.  Only when the output overflows the screen is ``$PAGER`` started (default ``less -FRX``:
quit at once when it fits, keep colours, leave the text on the screen); what was already shown stays
shown and the rest streams into the pager.  Quitting the pager early (``q``) stops the command
quietly; Ctrl-C stops the command and leaves the pager to the user.

``METASHELL_PAGER`` overrides ``PAGER``; an empty value, ``cat`` or ``--no-pager`` turn paging off.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import TextIO

DEFAULT_PAGER = "less -FRX"

#: How long output may be held back before it is shown anyway (the issue's "about 0.2 s").
HOLD_SECONDS = 0.15


def pager_command() -> list[str] | None:
    """The pager to run, or None when paging is off."""
    raw = os.environ.get("METASHELL_PAGER", os.environ.get("PAGER", DEFAULT_PAGER)).strip()
    if not raw or raw == "cat":
        return None
    try:
        return shlex.split(raw)
    except ValueError:
        return None


class PagingWriter:
    """A text stream in front of the terminal: holds output for a moment, then shows it, and hands
    the rest to a pager once the screen overflows.

    Three states: *holding* (output kept in ``_held``, a timer will show it), *direct* (written to
    the terminal as it comes) and *paging* (written to the pager's stdin).  A lock serialises the
    timer thread and the command's thread; the timer only ever moves holding -> direct.
    """

    def __init__(self, out: TextIO, rows: int, command: list[str], hold: float = HOLD_SECONDS) -> None:
        self._out = out
        self._rows = max(rows - 1, 1)  # one row stays for the prompt
        self._command = command
        self._held: list[str] = []
        self._lines = 0
        self._direct = False
        self._pager: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(hold, self._show_held)
        self._timer.daemon = True
        self._timing = False

    # the TextIO subset the shell uses
    def write(self, text: str) -> int:
        written = len(text)
        with self._lock:
            if self._pager is not None:
                assert self._pager.stdin is not None
                self._pager.stdin.write(text)
                return written
            lines = text.count("\n")
            if self._lines + lines >= self._rows and self._command:
                if self._direct:  # fill the screen, then page the rest
                    cut = _after_newline(text, self._rows - self._lines)
                    self._out.write(text[:cut])
                    text = text[cut:]
                self._lines += lines
                self._start_pager(text)
                return written
            self._lines += lines
            if self._direct:
                self._out.write(text)
                self._out.flush()
            else:
                self._held.append(text)
                if not self._timing:
                    self._timing = True
                    self._timer.start()
        return written

    def flush(self) -> None:
        with self._lock:
            if self._pager is not None and self._pager.stdin is not None:
                self._pager.stdin.flush()
            elif self._direct:
                self._out.flush()

    def isatty(self) -> bool:
        return self._out.isatty()

    def fileno(self) -> int:
        return self._out.fileno()

    def _show_held(self) -> None:
        """The timer: what was held back goes to the terminal, and the rest follows it directly."""
        with self._lock:
            if self._pager is not None or self._direct:
                return
            self._direct = True
            with contextlib.suppress(OSError, ValueError):
                self._out.write("".join(self._held))
                self._out.flush()
            self._held.clear()

    def _start_pager(self, text: str) -> None:
        """Start the pager with what is not on the screen yet: the held text and ``text``."""
        env = dict(os.environ)
        env.setdefault("LESS", "FRX")
        self._out.flush()
        try:
            self._pager = subprocess.Popen(
                self._command, stdin=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", env=env
            )
        except OSError:  # no such pager: print as if there were none
            self._command = []
            self._direct = True
            self._out.write("".join(self._held) + text)
            self._out.flush()
            self._held.clear()
            return
        assert self._pager.stdin is not None
        self._pager.stdin.write("".join(self._held) + text)
        self._held.clear()

    def close(self) -> None:
        """Print what is still held back (short output), or let the pager finish; never raises."""
        self._timer.cancel()
        with self._lock:
            pager = self._pager
            if pager is None:
                self._direct = True  # a timer that already fired finds nothing more to do
                with contextlib.suppress(OSError, ValueError):
                    self._out.write("".join(self._held))
                    self._out.flush()
                self._held.clear()
                return
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):
            if pager.stdin is not None:
                pager.stdin.close()
        # The pager owns the terminal until the user quits it (as git does): Ctrl-C stopped the
        # command, and further Ctrl-Cs are the pager's business, not ours.
        while True:
            try:
                pager.wait()
                return
            except KeyboardInterrupt:
                continue


def _after_newline(text: str, count: int) -> int:
    """The index just past the ``count``-th newline of ``text`` (0 when ``count`` is 0)."""
    index = 0
    for _ in range(count):
        index = text.index("\n", index) + 1
    return index


@contextlib.contextmanager
def paged(
    get_out: Callable[[], TextIO], set_out: Callable[[TextIO], None], rows: int | None, enabled: bool = True
) -> Iterator[None]:
    """Route a command's output through a :class:`PagingWriter` while the block runs."""
    command = pager_command() if enabled else None
    out = get_out()
    if command is None or not rows or not out.isatty():
        yield
        return
    writer = PagingWriter(out, rows, command)
    set_out(writer)  # type: ignore[arg-type]
    try:
        yield
    except BrokenPipeError:
        pass  # the pager was quit before the end: the command stops, quietly
    finally:
        set_out(out)
        writer.close()
