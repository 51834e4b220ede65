"""The health report, worked out behind the UI: a second at a million partitions, so never on the
UI thread.

A worker thread judges the image the session shows, works out the tree's badges, then builds the
search's list of names (so the first search does not wait for them), pausing at the UI's pace
points while keys come (:mod:`.ui_first`).  The report is *posted* to the app
(:class:`HealthReady`), never handed over with ``call_from_thread``: that waits for the app's loop,
and when the app has already quit the loop never runs it, so the thread blocked for ever and the
interpreter could not exit (it joins executor threads at exit).
"""

from __future__ import annotations

import gc
from typing import Protocol

from textual.message import Message

from metashell.image.health import HealthReport, check_health

from .faces import HasSession, RunsLater
from .metadata_tree import MetadataTree, health_badges
from .ui_first import UiFirst

__all__ = ["HealthReady", "work_out"]


class HealthReady(Message):
    """The background health report is in (posted from the worker thread)."""

    def __init__(self, report: HealthReport, image: object, badges: dict[str, str]) -> None:
        super().__init__()
        self.report = report
        self.image = image  # which image it judged: one the session has left is dropped
        self.badges = badges  # worked out in the thread: 300k partitions' paths at 1M


class HealthApp(HasSession, RunsLater, Protocol):
    """What the report's thread reads, and where it posts the report."""

    ui_first: UiFirst

    @property
    def tree_view(self) -> MetadataTree: ...


def work_out(app: HealthApp) -> None:
    """In a worker thread: the report (kept in the tree's memo, so ``/health`` and its findings
    then open at once), the badges, then the names for search."""
    ctx = app.shell.root.ctx
    image = ctx.image
    pace = app.ui_first.pace
    report = ctx.memo("health", lambda: check_health(image, pace))
    pace()
    badges = health_badges(report, pace)
    app.post_message(HealthReady(report, image, badges))
    pace()
    app.tree_view.search_index(pace)
    gc.freeze()  # the report and the name list are long-lived: keep the collector off them
