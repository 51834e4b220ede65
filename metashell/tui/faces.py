"""The parts of the app that the TUI's helpers see, as protocols.

A helper (catching up with the end of the log, following a live log, the status line, the node
picker ...) is handed the app, but types it by what it uses: these faces, combined in a protocol of
its own module.  So no helper imports :mod:`.app` (which imports every helper: they would form an
import circle, ``tests/test_import_cycles.py``), and what a helper may touch is written down where
it is.  This module imports no other module of the TUI.

Textual's own methods are typed by what the helpers call; their full signatures are Textual's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from metashell.image.health import HealthReport
from metashell.shell.session import Shell
from metashell.shell.source import Source

__all__ = ["HasSession", "Notifies", "RunsLater", "ShowsHealth"]


class Notifies(Protocol):
    """Textual's toasts."""

    @property
    def notify(self) -> Callable[..., None]:
        """``App.notify(message, *, title, severity, timeout)``."""
        ...


class RunsLater(Protocol):
    """Textual's scheduling: a worker thread, a call on the UI thread, a timer."""

    @property
    def run_worker(self) -> Callable[..., Any]:
        """``App.run_worker(work, *, thread, exclusive, group)``."""
        ...

    @property
    def call_later(self) -> Callable[..., Any]:
        """``App.call_later(callback, *args)``."""
        ...

    @property
    def set_timer(self) -> Callable[..., Any]:
        """``App.set_timer(delay, callback)``."""
        ...

    @property
    def post_message(self) -> Callable[..., Any]:
        """``App.post_message(message)``: safe from any thread."""
        ...


class HasSession(Protocol):
    """The shell session and the source it reads."""

    shell: Shell
    source: Source


class ShowsHealth(Protocol):
    """The health report shown, and how the header and the report are refreshed."""

    health: HealthReport | None

    def check_health(self) -> None:
        """Work the report out again, behind the UI."""
        ...

    def refresh_header(self) -> None:
        """Both header lines, recomputed together."""
        ...
