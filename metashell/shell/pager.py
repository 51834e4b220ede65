"""Paging long output in the REPL, as ``git`` and ``psql`` do.

A command's output is held back until it fills the screen; if it ends before that it is printed as
is, otherwise ``$PAGER`` (default ``less -FRX``: quit at once when it fits, keep colours, leave the
text on the screen) is started and everything, held back and still to come, is streamed into it.
Output is streamed, not collected: ``find /`` on a million partitions shows its first screen while
the walk goes on.  Quitting the pager early (``q``) stops the command quietly; Ctrl-C stops both.

``METASHELL_PAGER`` overrides ``PAGER``; an empty value, ``cat`` or ``--no-pager`` turn paging off.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Callable, Iterator
from typing import TextIO

DEFAULT_PAGER = "less -FRX"


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
    """A text stream that passes short output through and pipes long output into a pager."""

    def __init__(self, out: TextIO, rows: int, command: list[str]) -> None:
        self._out = out
        self._rows = max(rows - 1, 1)
        self._command = command
        self._held: list[str] = []
        self._lines = 0
        self._pager: subprocess.Popen[str] | None = None

    # the TextIO subset the shell uses
    def write(self, text: str) -> int:
        if self._pager is not None:
            assert self._pager.stdin is not None
            self._pager.stdin.write(text)
            return len(text)
        self._held.append(text)
        self._lines += text.count("\n")
        if self._lines >= self._rows:
            self._start_pager()
        return len(text)

    def flush(self) -> None:
        if self._pager is not None and self._pager.stdin is not None:
            self._pager.stdin.flush()

    def isatty(self) -> bool:
        return self._out.isatty()

    def fileno(self) -> int:
        return self._out.fileno()

    def _start_pager(self) -> None:
        env = dict(os.environ)
        env.setdefault("LESS", "FRX")
        try:
            self._pager = subprocess.Popen(
                self._command, stdin=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", env=env
            )
        except OSError:  # no such pager: print as if there were none
            self._command = []
            self._rows = 1 << 62
            self._out.write("".join(self._held))
            self._held.clear()
            return
        assert self._pager.stdin is not None
        self._pager.stdin.write("".join(self._held))
        self._held.clear()

    def close(self) -> None:
        """Print what was held back (short output), or let the pager finish; never raises."""
        if self._pager is None:
            self._out.write("".join(self._held))
            self._held.clear()
            self._out.flush()
            return
        pager = self._pager
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
