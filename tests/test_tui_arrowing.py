"""Arrowing down the tree (``tui/arrowing.py``): a lone highlight is drawn at once, a quick run of
them only where the cursor stops."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from conftest import FIXTURES
from textual.widgets import Tree

from metashell.shell.sources import open_directory
from metashell.tui import arrowing
from metashell.tui.app import MetashellApp


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
        for callback, live in self.pending:
            if live:
                callback()
        self.pending.clear()


def test_a_lone_highlight_is_drawn_at_once_a_quick_run_where_it_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock, timers, drawn = Clock(), Timers(), []
    monkeypatch.setattr(arrowing.time, "monotonic", clock)
    a = arrowing.Arrowing(drawn.append, timers.later)
    a.highlighted("/brokers")
    assert drawn == ["/brokers"]
    for path in ("/configs", "/controllers", "/features"):  # queued keys: each right behind the last
        clock.now += 0.001
        a.highlighted(path)
    assert drawn == ["/brokers"]
    timers.fire()
    assert drawn == ["/brokers", "/features"]
    clock.now += 1.0  # the cursor rested: the next key is drawn at once again
    a.highlighted("/topics")
    assert drawn == ["/brokers", "/features", "/topics"]


def test_arrow_keys_in_a_run_end_with_the_row_the_cursor_is_on() -> None:
    app = MetashellApp(open_directory(str(FIXTURES / "kafka-3.8"), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.press(*["down"] * 6)
            await pilot.pause(arrowing.REST * 3)
            tree = app.query_one("#tree", Tree)
            assert tree.cursor_node is not None and app.selected == tree.cursor_node.data

    asyncio.run(main())


def test_a_draw_put_off_is_dropped_when_something_else_is_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    clock, timers, drawn = Clock(), Timers(), []
    monkeypatch.setattr(arrowing.time, "monotonic", clock)
    a = arrowing.Arrowing(drawn.append, timers.later)
    a.highlighted("/acls")
    clock.now += 0.001
    a.highlighted("/acls/x")  # put off
    a.cancel()  # go_to drew a topic meanwhile
    timers.fire()
    assert drawn == ["/acls"]


def test_go_to_after_a_run_of_keys_keeps_what_go_to_drew() -> None:
    """The clean CI run's race (test_tui_hostile: visit every node, then go_to): the draw put off
    for the last row of the run landed after go_to's and replaced it."""
    app = MetashellApp(open_directory(str(FIXTURES / "kafka-3.8"), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            tree = app.query_one("#tree", Tree)
            for _ in range(4):  # a run of highlights, right behind one another
                tree.action_cursor_down()
            await pilot.pause()
            app.go_to("/features")
            await pilot.pause(arrowing.REST * 3)
            assert app.selected == "/features"
            assert "metadata.version" in app.shown_text()

    asyncio.run(main())


def test_a_run_that_comes_back_to_the_row_shown_leaves_it_shown() -> None:
    """Down (drawn at once), down (put off), up: the cursor is back on the row drawn, whose
    highlight the app skips as already shown; the row put off must not be drawn after it."""
    app = MetashellApp(open_directory(str(FIXTURES / "kafka-3.8"), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            tree = app.query_one("#tree", Tree)
            await pilot.pause(arrowing.REST * 3)
            for move in ("down", "down", "up"):  # queued right behind one another
                getattr(tree, f"action_cursor_{move}")()
            await pilot.pause(arrowing.REST * 3)
            assert tree.cursor_node is not None and tree.cursor_node.data == app.selected

    asyncio.run(main())
