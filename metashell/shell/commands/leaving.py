"""``exit``, ``quit`` and ``clear``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..registry import Command, TuiMode
from ..session import ExitShell
from ..spec import CommandSpec, Parsed

if TYPE_CHECKING:
    from ..session import Shell


def run_exit(shell: Shell, p: Parsed) -> None:
    raise ExitShell(0)


def run_clear(shell: Shell, p: Parsed) -> None:
    """Clear the screen (only when output is a terminal: never a control sequence into a pipe)."""
    isatty = getattr(shell.out, "isatty", None)
    if isatty is not None and isatty():
        shell.write("\x1b[H\x1b[2J\x1b[3J", raw=True)


EXIT_COMMAND = Command(
    CommandSpec("exit", "Exit the metadata shell.", shell_only=True),
    run=run_exit,
    tui=TuiMode.INLINE,
)


QUIT_COMMAND = Command(
    CommandSpec("quit", "Exit the metadata shell (like exit).", shell_only=True),
    run=run_exit,
    tui=TuiMode.INLINE,
)


CLEAR_COMMAND = Command(
    CommandSpec("clear", "Clear the screen.", shell_only=True),
    run=run_clear,
    tui=TuiMode.REFUSE,
)
