"""The ``?`` screen: every key and every shell command in one list, filtered as you type.

Textual's own key panel lists only the focused widget's bindings; an operator at 3 a.m. wants to
type "hist" and see both the ``h`` key and the ``history`` command, so the list joins the app's
bindings with the command engine's own declarations (:mod:`metashell.shell.registry`, the same
texts ``help`` prints in the REPL).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from metashell.shell.registry import specs

__all__ = ["HelpScreen", "help_rows"]

EXTRA_KEYS = (
    ("Enter", "expand or collapse the highlighted directory; load the next page of a '... N more' node"),
    ("Up/Down, PgUp/PgDn", "move in the tree"),
    ("Ctrl-P", "command palette: jump to a path, change the theme, save an SVG screenshot"),
    ("Escape", "back to the tree (from the command line or this screen)"),
)


def help_rows(bindings: Iterable[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(kind, key or command, what it does): the app's keys first, then the shell's commands."""
    rows = [("key", key, what) for key, what in bindings]
    rows += [("key", key, what) for key, what in EXTRA_KEYS]
    rows += [("command", f":{name}", s.description) for name, s in specs().items()]
    return rows


def matches(row: tuple[str, str, str], query: str) -> bool:
    """Every word of the query appears in the row (case-insensitive)."""
    text = " ".join(row).lower()
    return all(word in text for word in query.lower().split())


class HelpScreen(ModalScreen[None]):
    """Keys and commands, narrowed by the filter at the top."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    #help-box { width: 90%; height: 80%; border: round $primary; background: $surface; padding: 0 1; }
    #help-table { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_help", "Close"),
        Binding("ctrl+q", "app.quit", "Quit", show=False),
    ]

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows
        self.shown: list[tuple[str, str, str]] = list(rows)
        """The rows the table holds now (for tests)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static("Keys and commands -- type to filter, Escape to close")
            yield Input(placeholder="filter: e.g. hist, copy, topic", id="help-filter")
            yield DataTable(id="help-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one("#help-table", DataTable)
        table.add_columns("", "key / command", "what it does")
        self._show("")
        self.query_one("#help-filter", Input).focus()

    @on(Input.Changed, "#help-filter")
    def _filter(self, event: Input.Changed) -> None:
        self._show(event.value)

    def _show(self, query: str) -> None:
        table = self.query_one("#help-table", DataTable)
        table.clear()
        self.shown = [r for r in self.rows if matches(r, query)]
        for row in self.shown:
            table.add_row(*row)

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
