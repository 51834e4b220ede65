"""The detail pane while the cursor runs down the tree: only where it stops is drawn.

A node's detail costs 30-350 ms to draw at a million partitions (``/topicIds`` lists 100k ids,
``/image`` renders Kafka's text); held down, an arrow key queues a highlight per row, and drawing
each one in turn made arrowing down the root's 17 directories take over 2 s. A highlight that comes
as soon as the UI is free again after the last one (keys were waiting) is drawn only once the
cursor has rested for :data:`REST` s; a lone key is drawn at once, as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["REST", "Arrowing"]

REST = 0.06
"""Seconds without a new highlight after which the row the cursor rests on is drawn."""


class _Timer(Protocol):
    def stop(self) -> None: ...


class Arrowing:
    """Calls ``draw(path)`` for a highlight at once, or for the last of a quick run of them."""

    def __init__(
        self, draw: Callable[[str], None], later: Callable[[float, Callable[[], None]], _Timer]
    ) -> None:
        """``later(delay, callback)``: the app's ``set_timer``."""
        self._draw = draw
        self._later = later
        self._free_at = 0.0  # when the UI was last done drawing a highlight
        self._timer: _Timer | None = None
        self._path = ""

    def highlighted(self, path: str) -> None:
        self.cancel()
        if time.monotonic() - self._free_at < REST:  # right behind the last one: keys are queued
            self._path = path
            self._timer = self._later(REST, self._rested)
            self._free_at = time.monotonic()
            return
        self._draw(path)
        self._free_at = time.monotonic()

    def cancel(self) -> None:
        """Forget a draw put off: something else was drawn since (``go_to``, a command), and the
        row the cursor rested on must not replace it."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _rested(self) -> None:
        self._timer = None
        self._draw(self._path)
        self._free_at = time.monotonic()
