"""Live mode (``-q``): every second, apply what the quorum committed and refresh what is shown.

Not while paused (``p``) or while a command runs: a command's thread reads the image (``watch``
moves it), and the two must not change it under each other.
"""

from __future__ import annotations

from typing import Protocol

from . import status
from .faces import ShowsHealth
from .metadata_tree import MetadataTree

__all__ = ["FollowingApp", "follow"]


class FollowingApp(status.StatusApp, ShowsHealth, Protocol):
    """What following a live log reads and moves: the offset drawn, the tree, the detail pane."""

    drawn_offset: int | None

    @property
    def tree_view(self) -> MetadataTree: ...
    @property
    def command_shown(self) -> bool: ...
    def command_running(self) -> bool: ...
    def draw_selected(self) -> None: ...


def follow(app: FollowingApp) -> None:
    """On the UI thread, once a second (the app's interval)."""
    assert app.source.refresh is not None
    if app.paused or app.command_running():
        app.refresh_header()
        return
    status.tell_leader_change(app)
    image = app.shell.root.ctx.image
    app.source.refresh()
    if image.provenance.offset != app.drawn_offset:  # moved since drawn, by this refresh or another
        app.drawn_offset = image.provenance.offset
        app.tree_view.forget_index()
        tree = app.tree_view
        tree.refill(tree.root, "/")
        if not app.command_shown:
            app.draw_selected()  # the choice, as the new image has it
        app.check_health()
    app.refresh_header()
