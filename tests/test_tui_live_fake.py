"""The TUI following a live log (the in-process fake controller of test_live_fake), with Textual's
pilot: cases real Kafka cannot be made to order (test_tui_kafka follows a real quorum)."""

from __future__ import annotations

import asyncio

from test_live_fake import FakeController, topic_record
from tui_wait import until

from metashell.shell.sources import open_live
from metashell.tui import live_follow
from metashell.tui.app import MetashellApp


def test_records_applied_by_the_header_are_drawn_when_following_resumes() -> None:
    """Resuming (``p``) redraws the header, whose live status applies what arrived while paused;
    following then compared the offset with the one before its own refresh, saw no change and
    left the listing stale for good (the flood test of test_bounds_by_mode caught it 1 time in 5).
    It now compares with the offset last drawn."""
    ctrl = FakeController()
    ctrl.append([topic_record("first")])
    source = open_live(ctrl.endpoint, None, lambda _w: None, True)
    app = MetashellApp(source, start_path="/topics")

    def shown() -> str:
        return str(app.shown)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "first" in shown(), "the first topic listed")
            await pilot.press("p")
            ctrl.append([topic_record("second")])
            await until(
                pilot, lambda: source.pending is not None and source.pending() > 0, "the new topic queued"
            )
            await pilot.press("p")  # the header's status applies it
            assert "second" in app.shell.root.ctx.image.topics.by_name  # applied, not yet drawn
            live_follow.follow(app)
            await until(pilot, lambda: "second" in shown(), "the new topic listed")
            await pilot.press("q")

    try:
        asyncio.run(main())
    finally:
        source.close()
        ctrl.kill()


def test_at_in_a_live_tui_holds_the_view_until_at_alone() -> None:
    """``:at 1`` in a live TUI moves the view back over what the session applied and holds it:
    a topic the leader creates meanwhile is not applied (following ticks apply nothing) until
    ``:at`` brings the view back to the end."""
    from tui_wait import run_line

    ctrl = FakeController()
    for name in ("a", "b", "c"):
        ctrl.append([topic_record(name)])
    source = open_live(ctrl.endpoint, None, lambda _w: None, True)
    app = MetashellApp(source, start_path="/topics")

    def topics() -> set[str]:
        return set(app.shell.root.ctx.image.topics.by_name)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "c" in str(app.shown), "the topics listed")
            await run_line(pilot, "at 1")
            await until(pilot, lambda: app.shell.point == "@1", "the view at offset 1")
            assert topics() == {"a", "b"} and "at @1" in app.sub_title
            ctrl.append([topic_record("d")])
            await until(
                pilot, lambda: source.pending is not None and source.pending() > 0, "the new topic queued"
            )
            live_follow.follow(app)  # a following tick while held applies nothing
            await pilot.pause()
            assert topics() == {"a", "b"}
            await run_line(pilot, "at")
            await until(pilot, lambda: app.shell.point is None and "d" in topics(), "back at the end")
            await pilot.press("q")

    try:
        asyncio.run(main())
    finally:
        source.close()
        ctrl.kill()
