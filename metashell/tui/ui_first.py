"""Background work that steps aside for the UI.

The TUI works out the health report, the badges and the search list in a thread after the first
screen.  That thread shares the GIL with the UI: at a million partitions, the first keys pressed after
the first screen waited seconds for it (arrowing down the root's directories took 35 s).  The thread
now calls :meth:`UiFirst.pace` every few thousand items, and waits there while keys are being pressed
and while the UI thread is busy answering one (its heartbeat, every :data:`HEARTBEAT` s, stops while
it works).
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["GIVE_UP", "HEARTBEAT", "TYPING", "UiFirst"]

TYPING = 0.5
"""Seconds after a key or click during which background work waits."""
HEARTBEAT = 0.1
"""Seconds between the UI thread's heartbeats; background work waits while they are late."""
GIVE_UP = 3.0
"""A heartbeat this late is not a busy UI but a gone one: background work goes on."""


class UiFirst:
    """What the UI thread tells background work (input, heartbeat), and where that work waits."""

    def __init__(self, running: Callable[[], bool]) -> None:
        self._running = running
        self.last_input = 0.0
        """``time.monotonic()`` of the last key or click."""
        self.alive = time.monotonic()
        """The UI thread's last heartbeat."""

    def input(self) -> None:
        """On the UI thread: a key or a click arrived."""
        self.last_input = time.monotonic()

    def beat(self) -> None:
        """On the UI thread, every :data:`HEARTBEAT` s while it is free."""
        self.alive = time.monotonic()

    def pace(self) -> None:
        """In the background thread: wait while keys are being pressed or the UI is busy."""
        while self._running():
            now = time.monotonic()
            typing = now - self.last_input < TYPING
            silent = now - self.alive
            if not typing and not HEARTBEAT * 2 < silent < GIVE_UP:
                return
            time.sleep(0.02)
