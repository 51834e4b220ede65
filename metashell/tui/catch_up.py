"""The TUI's first screen on a long log: the newest snapshot first, the end of the log behind it.

A million-partition directory's snapshot loads in about a second and the million records after it
in two more; an operator opening the TUI at 3 a.m. should not stare at nothing meanwhile. So when
the log after the newest snapshot is long (:data:`SNAPSHOT_FIRST_BYTES`), the command line opens
the directory at that snapshot's point -- ``--at``'s machinery, so the header says ``at @N`` and
every view is the image at that offset, true for the point it shows -- and the app, once its first
screen is drawn, loads the end of the log in a thread (``Traveller.end``, with the time-travel
journal) and then moves the session there as ``at`` does: tree, header and health follow.

If the operator has moved meanwhile (``at`` somewhere), the session stays where they put it and
``at`` alone reaches the end at once.  If the log after the snapshot cannot be loaded (a damaged
segment), the session stays at the snapshot, the header says why, and the error is shown in one
line: the snapshot's image is never passed off as the end of the log.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from textual.worker import get_current_worker

from metashell.errors import MetashellError
from metashell.image.pacing import paced
from metashell.log.directory import open_metadata_dir
from metashell.safe_text import visible
from metashell.shell.registry import travelling
from metashell.shell.source import Source
from metashell.shell.sources import open_directory

from .faces import HasSession, Notifies, RunsLater, ShowsHealth
from .ui_first import UiFirst

__all__ = ["LOADING", "SNAPSHOT_FIRST_BYTES", "open_behind", "refusal", "snapshot_point", "start"]

SNAPSHOT_FIRST_BYTES = 16 << 20
"""Log bytes after the newest snapshot from which the TUI shows the snapshot first (about half a
second of replay on the native engine: below that the whole load is as quick as the first screen)."""

LOADING = "loading the end of the log"
"""The header's words while the end is loading (``Source.behind``)."""

RETRY_S = 0.2
"""How often the move to the end is tried again while a command runs."""


class CatchUpApp(HasSession, Notifies, RunsLater, ShowsHealth, Protocol):
    """What loading the end of the log behind the first screen reads and moves."""

    ui_first: UiFirst

    def command_running(self) -> bool: ...
    def run_command(self, line: str) -> int | None: ...


def snapshot_point(path: str) -> str | None:
    """``--at`` for the newest snapshot of directory ``path`` when at least
    :data:`SNAPSHOT_FIRST_BYTES` of log segments hold offsets after it; else None (and None for a
    path that is not a metadata directory: opening it says what is wrong)."""
    try:
        d = open_metadata_dir(path)
    except (MetashellError, OSError):
        return None
    snaps = [s for s in d.snapshots if not s.is_bootstrap]
    if not snaps:
        return None
    end = max(s.end_offset for s in snaps)
    starts = [s.base_offset for s in d.segments[1:]] + [None]
    after = sum(s.size for s, nxt in zip(d.segments, starts, strict=True) if nxt is None or nxt > end)
    return str(end - 1) if after >= SNAPSHOT_FIRST_BYTES else None


def open_behind(path: str, warn: Callable[[str], None], redact: bool) -> Source | None:
    """Directory ``path`` opened at its newest snapshot, the end of its log still to load (the app
    loads it: :func:`start`); None when the log after the snapshot is short."""
    at = snapshot_point(path)
    if at is None:
        return None
    source = open_directory(path, warn, redact, at=at)
    source.behind = LOADING
    return source


def start(app: CatchUpApp) -> bool:
    """After the first screen: load the end in a thread if the session opened behind it; false when
    there is nothing to load (the caller starts the health report instead)."""
    if app.source.behind is None or app.source.travel is None:
        return False
    app.run_worker(lambda: _load_end(app), thread=True, exclusive=True, group="end")
    return True


def refusal(app: HasSession, line: str) -> str | None:
    """Why ``line`` cannot run yet: while the end loads, a command that reads other points of the
    log (``at``, ``history``, ``diff`` ...) would wait for that load on the UI thread, keys and all."""
    if app.source.behind != LOADING or not travelling(re.findall(r"[a-z]+", line)):
        return None
    return f"{line.strip()}: the end of the log is still loading (the header says when it is in)"


class _Abandoned(Exception):
    """The app quit while the end was loading: the load stops at its next pace (quitting does not
    wait seconds for a load nobody will see)."""


def _load_end(app: CatchUpApp) -> None:
    """In the worker thread. The outcome goes back through ``call_later``, which posts it: a
    thread must never wait for the app's loop (:mod:`.health_behind` says why)."""
    travel = app.source.travel
    assert travel is not None
    worker = get_current_worker()

    def pace() -> None:  # keys first: the load waits while they come, and stops when the app quits
        if worker.is_cancelled:
            raise _Abandoned
        app.ui_first.pace()

    try:
        with paced(pace):
            travel.end()
    except _Abandoned:
        return
    except (MetashellError, MemoryError) as e:
        app.call_later(_failed, app, e)
        return
    app.call_later(_arrived, app)


def _failed(app: CatchUpApp, error: BaseException) -> None:
    """The end could not be loaded: stay at the snapshot, say so in the header and in one line."""
    line = visible(" ".join(str(error).split()))
    app.source.behind = "the end of the log could not be loaded"
    app.notify(f"{line} -- showing the snapshot's image", title="metashell", severity="error", timeout=60)
    app.check_health()
    app.refresh_header()


def _arrived(app: CatchUpApp) -> None:
    """The end is loaded: move there, unless the operator has moved the session elsewhere."""
    if app.command_running():  # the command reads the image: move once it is done
        app.set_timer(RETRY_S, lambda: _arrived(app))
        return
    app.source.behind = None
    assert app.source.travel is not None
    for w in app.source.travel.end_warnings_untold()[:5]:  # told here, not again by `at`'s output
        app.notify(w, title="metashell: the log", severity="warning", timeout=20)
    if app.shell.point != app.source.point:  # moved by hand: `at` alone goes to the end now
        app.notify("the end of the log is loaded: 'at' goes there", title="metashell")
        app.refresh_header()
        return
    app.run_command("at")
    app.notify("the end of the log is loaded: this is the end now", title="metashell")
