"""The ``n`` screen: several nodes' directories side by side, and a switcher between them.

With ``-d A -d B -d C`` the TUI shows one node's tree at a time (the most up to date, by Raft's
rule).  At 3 a.m. the question is first *which* node to look at: this screen puts the quorum
comparison (:mod:`metashell.image.quorum_nodes`) in one table, a row per node (its role, log end
offset and last epoch, what it holds beyond a majority, where it parts from the others, what
rebuilding from it would lose), and Enter shows the highlighted node, as ``:node ID`` does, through
the same command engine.  ``:quorum`` prints the whole comparison with the timeline.

Every cell is a :class:`~rich.text.Text` made safe: a node named after its directory is data from
the disk, and must not act as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from metashell.safe_text import visible
from metashell.shell.words import quote_word

from .faces import HasSession

if TYPE_CHECKING:
    from metashell.image.quorum_nodes import NodeLog, QuorumAnalysis


__all__ = ["COLUMNS", "NodesScreen", "node_rows", "show_nodes"]

COLUMNS = (
    "",
    "node",
    "role",
    "log end",
    "last epoch",
    "beyond majority",
    "parts from",
    "rebuilt from it, loses",
)


def _cell(value: object) -> Text:
    return Text(visible(str(value)), no_wrap=True)


def node_rows(analysis: QuorumAnalysis, shown: str | None) -> list[tuple[str, list[Text]]]:
    """(label, cells) per node, in label order: the table's rows."""
    best = analysis.most_up_to_date.label
    rows = []
    for n in sorted(analysis.nodes, key=lambda n: n.label):
        r = n.report
        mark = ("shown " if n.label == shown else "") + ("newest" if n.label == best else "")
        cells = [
            mark.strip(),
            n.label,
            r.role,
            "-" if r.log_end is None else r.log_end,
            "-" if r.last_epoch is None else r.last_epoch,
            _beyond(analysis, n),
            _parts(analysis, n.label),
            _loses(analysis, n),
        ]
        rows.append((n.label, [_cell(c) for c in cells]))
    return rows


def _loses(analysis: QuorumAnalysis, n: NodeLog) -> str:
    """What rebuilding from ``n`` would lose; a node whose files do not validate is never a source."""
    if not n.validity.whole:
        return "not a source: its files do not validate (:quorum says why)"
    return "; ".join(f"{o}: {a}..{b - 1}" for o, a, b in analysis.losses(n)) or "nothing"


def _beyond(analysis: QuorumAnalysis, n: NodeLog) -> str:
    if analysis.majority_end is None:
        return "?"
    extra = (n.report.log_end or 0) - (analysis.safe_end or 0)
    return f"{extra} offset(s)" if extra > 0 else ""


def _parts(analysis: QuorumAnalysis, label: str) -> str:
    said = [
        f"{b if a == label else a} at {where}"
        for (a, b), where in sorted(analysis.divergence.items())
        if where is not None and label in (a, b)
    ]
    return ", ".join(said)


def summary(analysis: QuorumAnalysis) -> Text:
    held = (
        "too few voters' directories to say what a majority holds"
        if analysis.majority_end is None
        else f"a majority of the voters holds offsets up to {analysis.majority_end - 1}"
    )
    voters = ",".join(map(str, analysis.voters)) or "unknown"
    return Text(
        visible(
            f"{len(analysis.nodes)} node(s), voters [{voters}]; {held}; most up to date: node "
            f"{analysis.most_up_to_date.label}.  Enter shows a node; :quorum prints it all."
        )
    )


class NodesScreen(ModalScreen[str | None]):
    """The nodes side by side; dismissed with the label of the node to show, or None."""

    DEFAULT_CSS = """
    NodesScreen { align: center middle; }
    #nodes-box { width: 95%; height: 70%; border: round $primary; background: $surface; padding: 0 1; }
    #nodes-table { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("ctrl+q", "app.quit", "Quit", show=False),
    ]

    def __init__(self, analysis: QuorumAnalysis, shown: str | None) -> None:
        super().__init__()
        self.analysis = analysis
        self.shown = shown

    def compose(self) -> ComposeResult:
        with Vertical(id="nodes-box"):
            yield Static(summary(self.analysis), id="nodes-summary")
            yield DataTable(id="nodes-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one("#nodes-table", DataTable)
        table.add_columns(*COLUMNS)
        labels = []
        for label, cells in node_rows(self.analysis, self.shown):
            table.add_row(*cells, key=label)
            labels.append(label)
        if self.shown in labels:
            table.move_cursor(row=labels.index(self.shown))
        table.focus()

    @on(DataTable.RowSelected)
    def _chosen(self, event: DataTable.RowSelected) -> None:
        self.dismiss(event.row_key.value)

    def action_close(self) -> None:
        self.dismiss(None)


class NodesApp(HasSession, Protocol):
    """What the node picker needs: the session's nodes, a screen, and the ``:`` command line."""

    @property
    def push_screen(self) -> Callable[..., Any]: ...
    def run_command(self, line: str) -> int | None: ...


def show_nodes(app: NodesApp) -> None:
    """The ``n`` key: push the screen; the node chosen is shown by ``:node LABEL``."""
    source = app.shell.source
    if source is None or source.quorum is None:  # the app offers the key only with several -d
        return

    def show(label: str | None) -> None:
        if label is not None and label != source.node:
            app.run_command(f"node {quote_word(label)}")

    app.push_screen(NodesScreen(source.quorum(), source.node), show)
