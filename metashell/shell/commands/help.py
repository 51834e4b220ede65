"""``help`` and ``man``: the texts come from the registry's declarations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import registry
from ..registry import Command, CompletionContext, TuiMode
from ..spec import CommandSpec, Parsed, Positional

if TYPE_CHECKING:
    from ..session import Shell


def run_help(shell: Shell, p: Parsed) -> None:
    if p.args:
        run_man(shell, p)
        return
    shell.write(registry.help_text() + "\n")


def run_man(shell: Shell, p: Parsed) -> None:
    name = p.args[0].literal
    if name not in registry.commands():
        shell.error(f"man: unknown command {name}. Type help to get a list of commands.")
        return
    shell.write(registry.man_text(name) + "\n")


def command_names(context: CompletionContext, words: list[str], partial: str) -> list[str]:
    """``help``/``man`` complete a command's name."""
    return [n for n in registry.names() if n.startswith(partial)]


HELP_COMMAND = Command(
    CommandSpec(
        "help",
        "Display this help message.",
        Positional("cmd", "Show this command's help text instead (like man).", "?"),
        shell_only=True,
    ),
    run=run_help,
    tui=TuiMode.INLINE,
    complete=command_names,
    prose=True,
)


MAN_COMMAND = Command(
    CommandSpec(
        "man",
        "Show the help text for a specific command.",
        Positional("cmd", "The command to get help text for.", "1"),
        shell_only=True,
    ),
    run=run_man,
    tui=TuiMode.INLINE,
    complete=command_names,
    prose=True,
)
