"""The command registry: every command as one object that says what it is.

Kafka's shell keeps one registry (``Commands.TYPES``) of command types, each declaring its name,
description, arguments and completion beside its handler; the parser, the help and the completion
are built from it.  metashell does the same: :data:`HOMES` is the one table of commands, each
name resolved lazily to the :class:`Command` its module of :mod:`metashell.shell.commands` defines
(``NAME_COMMAND``), and the REPL, one-shot mode, completion, ``help``/``man``, the CLI and the TUI
read only this registry.  A command also declares what the callers must know about
it: whether it reads other points of the log (one-shot mode then keeps the load's journal), whether
it moves the session's shared image, and how the TUI runs it (:class:`TuiMode`).

Adding a command is its ``Command`` in a module of ``metashell/shell/commands/`` and its line in
:data:`HOMES` (one-shot mode then imports that module alone); ``tests/test_shell_registry.py`` walks
the package and fails when a command is defined without its line, or lacks a man page, a
completion or a TUI mode.
"""

import enum
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from metashell.tree import Node

from . import spec
from .spec import CommandSpec, Parsed
from .words import Word


class TuiMode(enum.Enum):
    """How the TUI runs a command typed on its ``:`` line."""

    INLINE = "inline"
    """On the UI thread: quick, or it moves the session's image, which the tree reads."""
    WORKER = "worker"
    """On a worker thread (it may read a million partitions); its output shows when it ends."""
    STREAM = "stream"
    """On a worker thread until stopped (``watch``): output streams in, Escape stops it."""
    REFUSE = "refuse"
    """Meaningless in the TUI (``clear``): refused with one line."""


class CompletionContext(NamedTuple):
    """What completion may look at: the session's tree and working directory, and with several
    ``-d`` the nodes' labels."""

    root: Node
    cwd: str
    nodes: tuple[str, ...] = ()


ArgCompleter = Callable[[CompletionContext, list[str], str], Iterable[str]]
"""(context, the command's words so far, the partial word) -> candidate words.  A candidate that
ends in ``/`` is a directory (completion continues inside it)."""


class Command(NamedTuple):
    """One command: its declaration, its behaviour, and what it is."""

    spec: CommandSpec
    #: ``run(shell, args)``, ``shell`` the session's :class:`~metashell.shell.session.Shell`; typed
    #: in each command's module, as the registry, which the session reads, never imports it back
    run: Callable[[Any, Parsed], None]
    tui: TuiMode
    travels: bool = False
    """Reads other points of the log (``at``, ``diff``, ``log``, ``history PATH``)."""
    reads_log: bool = False
    """Reads the log's records (``log``, ``history``, ``stats``): a one-shot live session keeps
    what it applies (its journal and spool) when such a command is asked for."""
    moves_image: bool = False
    """Moves the session's one image, even for a moment (``at``; ``diff --from``, ``log --from``
    visit a point and come back): the TUI must run it inline, never beside the tree reading it."""
    complete: ArgCompleter | None = None
    """Candidates for a positional word; None: paths of the tree (the default of most commands)."""
    option_values: Mapping[str, Callable[[CompletionContext], Iterable[str]]] | None = None
    """Candidates for an option's value, by its dest (``log --type``: the record types;
    ``describe acl --principal``: the principals the metadata names)."""
    prose: bool = False
    """Its output is sentences (``health``, ``help``): the TUI wraps it to the pane.  Otherwise one
    output line stays one screen line (a ``log`` row, a ``describe`` line), scrolled sideways."""

    @property
    def name(self) -> str:
        return self.spec.name


HOMES: Mapping[str, str] = {
    "at": "at",
    "bundle": "bundle",
    "cat": "navigation",
    "cd": "navigation",
    "clear": "leaving",
    "describe": "describe",
    "diff": "diff",
    "doctor": "doctor",
    "exit": "leaving",
    "find": "navigation",
    "grep": "grep",
    "health": "health",
    "help": "help",
    "history": "history",
    "log": "log",
    "ls": "navigation",
    "man": "help",
    "node": "node",
    "pwd": "navigation",
    "quit": "leaving",
    "quorum": "quorum",
    "stats": "stats",
    "tree": "navigation",
    "upgrade-check": "upgrade_check",
    "watch": "watch",
}
"""Every command: its name -> the module of :mod:`metashell.shell.commands` that defines it, as
:func:`attribute` names it.  Resolved one entry at a time, so running one command imports one
module (a one-shot ``cat`` need not import ``describe``'s ACL rules or ``log``'s summaries)."""

_RESOLVED: dict[str, Command] = {}


def attribute(name: str) -> str:
    """The module attribute that holds command ``name``: ``upgrade-check`` -> ``UPGRADE_CHECK_COMMAND``."""
    return name.upper().replace("-", "_") + "_COMMAND"


def find(name: str) -> Command | None:
    """The command called ``name``, or None; imports only its module."""
    found = _RESOLVED.get(name)
    if found is None and name in HOMES:
        module = importlib.import_module(f"{__package__}.commands.{HOMES[name]}")
        found = getattr(module, attribute(name))
        assert isinstance(found, Command) and found.name == name, f"{module.__name__}.{attribute(name)}"
        _RESOLVED[name] = found
    return found


def commands() -> Mapping[str, Command]:
    """Every command, by name (importing every command module the first time)."""
    return {name: command(name) for name in HOMES}


def command(name: str) -> Command:
    found = find(name)
    if found is None:
        raise KeyError(name)
    return found


def names() -> list[str]:
    return sorted(commands())


def specs() -> dict[str, CommandSpec]:
    return {name: c.spec for name, c in sorted(commands().items())}


class _SpecsByName(Mapping[str, CommandSpec]):
    """The specs as :func:`spec.parse` reads them: looking one up imports its module only; listing
    them (for "unknown command, did you mean") imports them all."""

    def __getitem__(self, name: str) -> CommandSpec:
        return command(name).spec

    def __iter__(self) -> Iterator[str]:
        return iter(specs())

    def __len__(self) -> int:
        return len(commands())


def parse(words: list[Word]) -> Parsed:
    """Parse one command's words against the registry (:func:`spec.parse`)."""
    return spec.parse(words, _SpecsByName())


def man_text(name: str) -> str:
    return spec.man_text(commands()[name].spec)


def help_text() -> str:
    return spec.help_text(specs())


def travelling(words: Iterable[str]) -> bool:
    """Whether any of ``words`` names a command that reads other points of the log."""
    return any(w in HOMES and command(w).travels for w in words)


def reading_log(words: Iterable[str]) -> bool:
    """Whether any of ``words`` names a command that reads the log's records."""
    return any(w in HOMES and command(w).reads_log for w in words)
