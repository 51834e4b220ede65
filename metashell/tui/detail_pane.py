"""The detail pane: what the tree's chosen node is, or what a command answered.

A widget that owns what it shows (``shown``) and how it lays it out, so the app only says *what* to
show (:meth:`MetashellApp.show_in_pane`) and the command runner asks it to scroll, without either
querying the DOM for the pane's parts.
"""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import ScrollableContainer
from textual.widgets import Static

__all__ = ["DetailPane"]


class DetailPane(ScrollableContainer):
    """A scrollable pane around one ``Static`` (``#detail``); text from the metadata is never markup."""

    def __init__(self, *, id: str = "detail-scroll") -> None:
        super().__init__(id=id)
        self.shown: RenderableType = Text("")
        """What the pane shows (for the pager, the tests and the screenshot)."""

    def compose(self) -> ComposeResult:
        yield Static(id="detail", markup=False)

    def show(self, renderable: RenderableType, *, sideways: bool = False) -> None:
        """Show ``renderable``.  ``sideways``: text that never wraps (a ``log`` row is one line,
        scrolled sideways when wider than the pane); otherwise it fits the pane's width."""
        self.shown = renderable
        if sideways and isinstance(renderable, Text):
            renderable.no_wrap = True
            renderable.overflow = "ignore"
        body = self.query_one("#detail", Static)
        body.styles.width = "auto" if sideways else "1fr"
        body.update(renderable)

    def scroll_to_bottom(self, *, after_refresh: bool = False) -> None:
        """Scroll to the end (a streamed ``watch``; ``history`` opened at its newest entry), now or
        once the new content has its size."""
        if after_refresh:
            self.call_after_refresh(lambda: self.scroll_end(animate=False))
        else:
            self.scroll_end(animate=False)
