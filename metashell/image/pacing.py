"""Where a long load steps aside for an interactive UI that shares its process.

The TUI loads the end of a long log in a thread behind its first screen (``tui/catch_up.py``).
That thread and the UI share the GIL: a load that never stops would hold keys back for seconds.
So the loader calls a *pace* function between runs of batches -- the UI's
:meth:`~metashell.tui.ui_first.UiFirst.pace`, which waits while keys are being pressed and while
the UI is busy answering one -- when the thread running the load has set one (:func:`paced`).
Everything else loads with no pace at all. A context variable, not a parameter: the load is many
calls deep (``Traveller.end`` -> ``load_directory`` -> the loader -> the native batch sink) and
only the thread that asked to be paced is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["current", "paced"]

_PACE: ContextVar[Callable[[], None] | None] = ContextVar("metashell_pace", default=None)


@contextmanager
def paced(pace: Callable[[], None]) -> Iterator[None]:
    """Loads in this thread (and context) call ``pace`` between runs of batches."""
    token = _PACE.set(pace)
    try:
        yield
    finally:
        _PACE.reset(token)


def current() -> Callable[[], None] | None:
    """The pace loads in this context keep, if any."""
    return _PACE.get()
