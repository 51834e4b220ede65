"""The detail pane while the cursor runs down the tree: only where it rests is drawn.

A node's detail costs 30-350 ms to draw at a million partitions (``/topicIds`` lists 100k ids,
``/image`` renders Kafka's text); held down, an arrow key queues a highlight per row, and drawing
each one in turn made arrowing down the root's 17 directories take over 2 s. So a highlight that
comes right behind the last draw (keys were waiting) only makes its row the choice and leaves the
draw *owed* (:class:`~.selection.Selection`); the draw is paid once the cursor has rested for
:data:`REST` s, and it draws whatever is chosen *then*. A lone key is drawn at once.

The timer here only says *when* to look again; *what* is drawn, and whether anything is, is the
selection's state at that moment. Anything else that draws the choice meanwhile (``go_to``, the
health report) pays the debt, a command's output answers it, and a timer that finds nothing owed
does nothing: the order in which they arrive cannot change what the pane ends up showing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from .selection import Selection

__all__ = ["REST", "Arrowing"]

REST = 0.06
"""Seconds without a new highlight after which the owed row is drawn."""


class Arrowing:
    """Makes each highlighted row the choice; draws it at once, or when a quick run of them rests."""

    def __init__(
        self,
        selection: Selection,
        draw: Callable[[], None],
        later: Callable[[float, Callable[[], None]], object],
    ) -> None:
        """``draw()`` draws the selection's path; ``later(delay, callback)``: the app's ``set_timer``."""
        self._selection = selection
        self._draw = draw
        self._later = later
        self._free_at = 0.0  # when the UI was last done drawing a highlight
        self._moved_at = 0.0  # the last highlight
        self._timer: object | None = None  # a look is due (never stopped: it checks the state)

    def highlighted(self, path: str) -> None:
        """The cursor is on ``path``'s row."""
        self._selection.choose(path)
        now = time.monotonic()
        self._moved_at = now
        if not self._selection.owed:  # a run that came back to the row shown
            return
        if now - self._free_at < REST:  # right behind the last draw: keys are queued
            self._look_later()
            return
        self._pay()

    def _look_later(self) -> None:
        if self._timer is None:
            self._timer = self._later(REST, self._rested)

    def _rested(self) -> None:
        self._timer = None
        if not self._selection.owed:  # drawn or answered meanwhile
            return
        if time.monotonic() - self._moved_at < REST:  # still moving: look again
            self._look_later()
            return
        self._pay()

    def _pay(self) -> None:
        self._draw()
        self._free_at = time.monotonic()
