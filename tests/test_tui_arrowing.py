"""Arrowing down the tree (``tui/arrowing.py``): a lone highlight is drawn at once, a quick run of
them only where the cursor stops."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from conftest import FIXTURES
from textual.widgets import Tree
from tui_wait import settled

from metashell.shell.sources import open_directory
from metashell.tui import arrowing
from metashell.tui.app import MetashellApp
from metashell.tui.selection import Selection


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Timers:
    """``set_timer`` stood in for: the callbacks wait until :meth:`fire`."""

    def __init__(self) -> None:
        self.pending: list[list[Any]] = []

    def later(self, _delay: float, callback: Callable[[], None]) -> Any:
        entry: list[Any] = [callback, True]

        class Timer:
            def stop(self) -> None:
                entry[1] = False

        self.pending.append(entry)
        return Timer()

    def fire(self) -> None:
        """The timers due now fire (one a callback sets again waits for the next fire)."""
        due, self.pending = self.pending, []
        for callback, live in due:
            if live:
                callback()


class Pane:
    """The detail pane stood in for: draws the selection's path, as the app's ``_draw`` does."""

    def __init__(self, selection: Selection) -> None:
        self.selection = selection
        self.drawn: list[str] = []

    def draw(self) -> None:
        self.drawn.append(self.selection.path)
        self.selection.drawn()


def test_a_lone_highlight_is_drawn_at_once_a_quick_run_where_it_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock, timers, selection = Clock(), Timers(), Selection()
    pane = Pane(selection)
    monkeypatch.setattr(arrowing.time, "monotonic", clock)  # type: ignore[attr-defined]
    a = arrowing.Arrowing(selection, pane.draw, timers.later)
    a.highlighted("/brokers")
    assert pane.drawn == ["/brokers"] and selection.settled
    for path in ("/configs", "/controllers", "/features"):  # queued keys: each right behind the last
        clock.now += 0.001
        a.highlighted(path)
    assert pane.drawn == ["/brokers"] and selection.owed and selection.path == "/features"
    timers.fire()  # too soon after the last key: looks again later
    assert pane.drawn == ["/brokers"] and selection.owed
    clock.now += arrowing.REST
    timers.fire()
    assert pane.drawn == ["/brokers", "/features"] and selection.settled
    clock.now += 1.0  # the cursor rested: the next key is drawn at once again
    a.highlighted("/topics")
    assert pane.drawn == ["/brokers", "/features", "/topics"]


def test_arrow_keys_in_a_run_end_with_the_row_the_cursor_is_on() -> None:
    app = MetashellApp(open_directory(str(FIXTURES / "kafka-3.8"), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            await pilot.press(*["down"] * 6)
            await settled(pilot)
            tree = app.query_one("#tree", Tree)
            assert tree.cursor_node is not None and app.selected == tree.cursor_node.data

    asyncio.run(main())


def test_a_draw_owed_is_paid_by_whatever_draws_next_and_answered_by_a_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock, timers, selection = Clock(), Timers(), Selection()
    pane = Pane(selection)
    monkeypatch.setattr(arrowing.time, "monotonic", clock)  # type: ignore[attr-defined]
    a = arrowing.Arrowing(selection, pane.draw, timers.later)
    a.highlighted("/acls")
    clock.now += 0.001
    a.highlighted("/acls/x")  # put off
    pane.draw()  # the health report redrew the choice meanwhile: the debt is paid, by the newest path
    clock.now += 1.0
    timers.fire()
    assert pane.drawn == ["/acls", "/acls/x"] and selection.settled
    a.highlighted("/brokers")  # drawn at once
    clock.now += 0.001
    a.highlighted("/brokers/1")  # put off again
    selection.answered()  # a command's output: newer than the choice
    clock.now += 1.0
    timers.fire()
    assert pane.drawn == ["/acls", "/acls/x", "/brokers"] and selection.settled and selection.command_shown


EVENTS = ("focus highlights the root", "the cursor reaches the target", "health redraws /", "a timer looks")


@pytest.mark.parametrize("order", list(itertools.permutations(EVENTS)), ids=lambda o: "|".join(o))
@pytest.mark.parametrize("gap", [0.0, 0.001, 1.0], ids=["at-once", "queued", "rested"])
def test_the_start_path_is_drawn_whatever_order_the_events_come_in(
    monkeypatch: pytest.MonkeyPatch, order: tuple[str, ...], gap: float
) -> None:
    """Issue 52's race at the level of the state: ``--path X`` drew X, then the root's highlight
    (queued by focusing the tree), X's own highlight and the health report came in an order that
    depends on the machine's speed.  In every order, and however far apart, the pane ends on X."""
    clock, timers, selection = Clock(), Timers(), Selection()
    pane = Pane(selection)
    monkeypatch.setattr(arrowing.time, "monotonic", clock)  # type: ignore[attr-defined]
    a = arrowing.Arrowing(selection, pane.draw, timers.later)
    target = "/topics/orders/3"
    ticket = selection.place(target)  # go_to: chosen and drawn at once
    pane.draw()
    cursor = {"on": "/"}

    def highlight(path: str) -> None:  # as MetashellApp._highlighted filters them
        if path != cursor["on"] or selection.stale(path) or path == selection.placing:
            return
        a.highlighted(path)

    for event in order:
        clock.now += gap
        if event == EVENTS[0]:
            highlight("/")
        elif event == EVENTS[1]:
            cursor["on"] = target
            selection.placed(ticket)
            highlight(target)
        elif event == EVENTS[2]:
            if selection.path in ("/", "/health") and not selection.command_shown:
                pane.draw()
        else:
            timers.fire()
    clock.now += 1.0
    timers.fire()
    assert selection.path == target and pane.drawn[-1] == target and selection.settled


def test_go_to_after_a_run_of_keys_keeps_what_go_to_drew() -> None:
    """The clean CI run's race (test_tui_hostile: visit every node, then go_to): the draw put off
    for the last row of the run landed after go_to's and replaced it."""
    app = MetashellApp(open_directory(str(FIXTURES / "kafka-3.8"), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            tree = app.query_one("#tree", Tree)
            for _ in range(4):  # a run of highlights, right behind one another
                tree.action_cursor_down()
            await settled(pilot)
            app.go_to("/features")
            await settled(pilot)
            assert app.selected == "/features"
            assert "metadata.version" in app.shown_text()

    asyncio.run(main())


def test_a_run_that_comes_back_to_the_row_shown_leaves_it_shown() -> None:
    """Down (drawn at once), down (put off), up: the cursor is back on the row drawn, whose
    highlight the app skips as already shown; the row put off must not be drawn after it."""
    app = MetashellApp(open_directory(str(FIXTURES / "kafka-3.8"), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            tree = app.query_one("#tree", Tree)
            await settled(pilot)
            for move in ("down", "down", "up"):  # queued right behind one another
                getattr(tree, f"action_cursor_{move}")()
            await settled(pilot)
            assert tree.cursor_node is not None and tree.cursor_node.data == app.selected

    asyncio.run(main())
