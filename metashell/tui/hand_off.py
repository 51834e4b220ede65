"""What leaves the TUI: the pager, screenshots and the clipboard.

The app's actions (``o``, Ctrl-P "Screenshot", ``y``/``Y``) call these; they only read what the app
shows and hand it on.
"""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from platformdirs import user_downloads_path
from rich.console import Console, RenderableType
from textual.app import SuspendNotSupported

from metashell.safe_text import visible, visible_output
from metashell.shell.pager import pager_command

from .faces import Notifies
from .metadata_tree import MetadataTree


class HandOffApp(Notifies, Protocol):
    """What handing the screen or its text elsewhere reads: the choice and the detail pane."""

    redact: bool

    @property
    def shown(self) -> RenderableType: ...
    @property
    def selected(self) -> str: ...
    @property
    def command_shown(self) -> bool: ...
    @property
    def tree_view(self) -> MetadataTree: ...
    @property
    def suspend(self) -> Callable[[], Any]:
        """Textual's ``App.suspend()``: a context manager."""
        ...

    @property
    def copy_to_clipboard(self) -> Callable[[str], None]: ...
    @property
    def save_screenshot(self) -> Callable[..., str]: ...
    def shown_text(self, width: int = 200) -> str: ...


__all__ = ["copy_path", "copy_value", "open_pager", "save_screenshot", "shown_text"]


def open_pager(app: HandOffApp) -> None:
    """Page what the detail pane shows (a file's whole value) in ``$PAGER``, the screen suspended."""
    command = _tui_pager()
    if command is None:
        app.notify("paging is off (PAGER is empty or cat)", severity="warning")
        return
    try:
        with app.suspend():
            subprocess.run(command, input=app.shown_text(), text=True, check=False)
    except SuspendNotSupported:
        app.notify("this terminal cannot hand the screen to a pager", severity="warning")
    except OSError as e:
        app.notify(visible(f"cannot run {command[0]}: {e.strerror or e}"), severity="error")


def shown_text(app: HandOffApp, width: int = 200) -> str:
    """The detail pane as plain text: a file's whole value, otherwise the pane rendered without
    styles (control characters were made visible when it was built)."""
    node = app.tree_view.node_at(app.selected)
    if node is not None and not node.is_dir and not app.command_shown:
        return visible_output(node.text(app.redact))
    console = Console(
        file=io.StringIO(), width=width, color_system=None, force_terminal=False, legacy_windows=False
    )
    console.print(app.shown)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def save_screenshot(
    app: HandOffApp, filename: str | None = None, path: str | None = None, time_format: str | None = None
) -> str | None:
    """Save an SVG of the screen (Ctrl-P "Screenshot") to ``path``, else the Downloads folder,
    else the current directory; returns the file's path.

    Written on the app's own thread.  Textual's default hands the file to a delivery thread that
    then waits for the app to take its "saved" message: quitting right after a screenshot left
    that thread, and so the whole process, waiting for ever at exit.  (Its default also fails
    where there is no Downloads folder, as on most servers.)"""
    downloads = user_downloads_path()
    directory = path or str(downloads if downloads.is_dir() else Path.cwd())
    try:
        saved = app.save_screenshot(filename, directory, time_format)
    except OSError as e:
        app.notify(visible(f"screenshot not saved: {e.strerror or e}"), title="Screenshot", severity="error")
        return None
    app.notify(f"saved to {visible(saved)}", title="Screenshot")
    return saved


def copy_path(app: HandOffApp) -> None:
    app.copy_to_clipboard(app.selected)
    app.notify(f"copied {visible(app.selected)}")


def copy_value(app: HandOffApp) -> None:
    node = app.tree_view.node_at(app.selected)
    if node is not None and not node.is_dir:
        app.copy_to_clipboard(node.text(app.redact))
        app.notify(f"copied the value of {visible(app.selected)}")


def _tui_pager() -> list[str] | None:
    """``$METASHELL_PAGER`` or ``$PAGER`` as the REPL reads them, but ``less -R`` by default: the
    REPL's ``-F`` (quit when it fits) would hand the screen straight back."""
    if "METASHELL_PAGER" in os.environ or "PAGER" in os.environ:
        return pager_command()
    return ["less", "-R"]
