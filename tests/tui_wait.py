"""Waiting in TUI tests: for a condition, never for time.

A test that pauses for 0.05 s and then asserts passes only where the machine ran the app's events
within 0.05 s: on a loaded CI machine it fails, and it hides races in the app (issue 52). These
helpers poll a condition with a deadline far beyond any real wait, so a pass does not depend on the
machine's speed and a failure says what never came.

``METASHELL_TUI_NO_SLACK=1`` (set by ``test_tui_contention``) takes the slack out of Textual's
``pilot.pause()``: no idle wait and no delay, only the screen's queued messages processed. A test
that still passes then waits for what it needs, not for time.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

__all__ = ["NO_SLACK", "palette_hit", "run_keys", "run_line", "settled", "until"]

NO_SLACK = os.environ.get("METASHELL_TUI_NO_SLACK", "") not in ("", "0")

DEADLINE = 120.0
"""Seconds a condition may take: a bound for a hung app, not a speed anyone expects."""


async def until(
    pilot: Pilot[Any], condition: Callable[[], object], what: str, timeout: float = DEADLINE
) -> None:
    """Wait until ``condition()`` holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not so after {timeout:.0f} s"
        await asyncio.sleep(0.005)  # the app's loop runs meanwhile (the same loop as the test's)
        await pilot.pause()


async def settled(pilot: Pilot[Any], timeout: float = DEADLINE) -> None:
    """Wait until the app shows what its state says, with nothing still to come
    (:meth:`MetashellApp.settled`: the choice drawn where the cursor is, no command running, the
    health report in), then let the screen process what that queued."""
    app = pilot.app
    await until(pilot, app.settled, "the TUI settled", timeout)  # type: ignore[attr-defined]
    await pilot.pause()


async def run_keys(pilot: Pilot[Any], *keys: str) -> None:
    """Press ``keys`` that run a shell line (``h``; ``:``, the line and Enter), then wait until the
    app has taken the line and settled (its output shown, what it set off done)."""
    app: Any = pilot.app
    taken = app.commands.taken
    await pilot.press(*keys)
    await until(pilot, lambda: app.commands.taken > taken, f"the TUI ran a line for {keys!r}")
    await settled(pilot)


async def run_line(pilot: Pilot[Any], line: str) -> None:
    """``:line`` and Enter, waited for as :func:`run_keys` does."""
    await run_keys(pilot, "colon", *line, "enter")


def palette_hit(app: Any) -> str:
    """The command palette's highlighted hit (what Enter takes) once its search has finished; ""
    while it is still searching or has no hit."""
    from textual.command import CommandList
    from textual.css.query import NoMatches

    try:
        hits = app.screen.query_one(CommandList)
    except NoMatches:
        return ""
    if hits.has_class("--populating") or hits.highlighted is None:
        return ""
    return str(hits.get_option_at_index(hits.highlighted).prompt)


def _pause_without_slack() -> None:
    """Textual's ``Pilot.pause`` with neither its delay nor its wait for an idle CPU."""

    async def pause(self: Pilot[Any], delay: float | None = None) -> None:
        await self._wait_for_screen()
        await asyncio.sleep(0)
        self.app.screen._on_timer_update()

    Pilot.pause = pause  # type: ignore[method-assign]


if NO_SLACK:
    _pause_without_slack()
