"""The TUI's one screen: the header and the facts line, the tree beside the detail pane, the command
line and the footer.  It only lays the widgets out; each owns its state, and the app wires them."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from metashell.tree.node import Node

from .command_line import CommandLine
from .detail_pane import DetailPane
from .metadata_tree import MetadataTree

__all__ = ["MainScreen"]


class MainScreen(Screen[None]):
    """The default screen (``MetashellApp.get_default_screen``); ``root`` gives the tree's root node
    now (an ``at`` or a live change replaces it)."""

    class Ready(Message):
        """Its widgets are mounted: the app may fill the tree and draw the first screen (the app's
        own mount comes before its default screen's widgets are there)."""

    def __init__(self, root: Callable[[], Node]) -> None:
        super().__init__(id="_default")
        self._root = root

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="facts", markup=False)
        with Horizontal():
            yield MetadataTree(self._root, id="tree")
            yield DetailPane()
        yield CommandLine()
        yield Footer()

    def on_mount(self) -> None:
        self.post_message(self.Ready())
