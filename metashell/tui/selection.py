"""Which path the TUI shows: one piece of state, changed in one place, that the detail pane follows.

Every way of moving -- ``go_to`` (a start path, ``cd``, search, back and forward), an arrow key, a
command's output, the background health report -- goes through :class:`Selection`, and what the
detail pane draws follows from it, never from the order in which events and timers arrive:

* a draw always draws the path chosen *now* (:attr:`Selection.path`), never a path remembered
  when the draw was put off;
* ``owed`` says a draw is due for that path; whatever draws it (a key, the end of a run of keys,
  the health report) pays it, and nothing can drop it without drawing something newer;
* while ``go_to`` waits for the tree to lay its target out (:attr:`Selection.placing`), a
  highlight of any other row describes the cursor *before* the move and is stale.

The race this replaced (a fresh-machine CI run): ``--path X`` drew X, the highlight that focusing the
tree had queued for the root then drew ``/``, X's own highlight was put off behind it by a timer,
and the health report landing meanwhile redrew ``/`` and cancelled that timer: whether an operator
saw X depended on how fast their machine ran three events.
"""

from __future__ import annotations

__all__ = ["Selection"]


class Selection:
    """The path chosen, what the pane shows, and whether a draw is owed."""

    def __init__(self, path: str = "/") -> None:
        self.path = path
        """The path chosen last (the newest choice wins, whoever made it)."""
        self.shown: str | None = None
        """The path whose detail the pane shows; None before the first draw and while a command's
        output is shown."""
        self.command_shown = False
        """The pane shows a command's output (it answered the last choice: no draw is owed)."""
        self.owed = True
        """A draw of :attr:`path` is due."""
        self.placing: str | None = None
        """``go_to``'s target while the tree's cursor has not been moved onto it yet."""
        self._placings = 0

    def choose(self, path: str) -> None:
        """``path`` is the newest choice; a draw is owed unless the pane already shows it."""
        self.path = path
        self.owed = path != self.shown or self.command_shown

    def drawn(self) -> None:
        """The pane now shows :attr:`path`'s detail."""
        self.shown = self.path
        self.command_shown = False
        self.owed = False

    def answered(self) -> None:
        """The pane now shows a command's output: newer than the choice, which is no longer owed
        (moving the cursor draws a node again)."""
        self.shown = None
        self.command_shown = True
        self.owed = False

    def place(self, path: str) -> int:
        """``go_to(path)``: chosen now, the cursor moved there once the tree is laid out; returns
        the ticket :meth:`placed` takes (a later ``go_to`` makes an earlier one's move void)."""
        self.choose(path)
        self.placing = path
        self._placings += 1
        return self._placings

    def current(self, ticket: int) -> bool:
        """Whether ``ticket`` is the newest ``go_to``'s (only that one moves the cursor)."""
        return ticket == self._placings and self.placing is not None

    def placed(self, ticket: int) -> None:
        """The cursor is on the target of ``go_to`` number ``ticket``."""
        if ticket == self._placings:
            self.placing = None

    def stale(self, path: str) -> bool:
        """Whether a highlight of ``path`` predates a ``go_to`` still moving the cursor."""
        return self.placing is not None and path != self.placing

    @property
    def settled(self) -> bool:
        """Nothing is owed and no ``go_to`` is under way: the pane shows the choice (or a
        command's answer to it), and the cursor is where it was put.  Tests wait for this."""
        return not self.owed and self.placing is None
