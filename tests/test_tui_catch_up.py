"""The TUI on a long log (``tui/catch_up.py``): the newest snapshot first, labelled as such, then the
end of the log once it has loaded behind the first screen; a damaged log after the snapshot keeps
the session at the snapshot and says so, never passing the snapshot off as the end.  The threshold
is lowered so that a small fixture takes the path a million-partition directory takes."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import FIXTURES
from tui_wait import until
from tui_wait import until as wait_until

from metashell.cli import main
from metashell.image import pacing
from metashell.image.loader import load_directory
from metashell.shell.sources import open_directory
from metashell.tui import catch_up
from metashell.tui.app import MetashellApp

FIXTURE = FIXTURES / "kafka-3.8"  # newest snapshot at offset 96, log up to 188 after it
SNAPSHOT_POINT = "95"


@pytest.fixture
def long_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every log after a snapshot counts as long."""
    monkeypatch.setattr(catch_up, "SNAPSHOT_FIRST_BYTES", 0)


def run_app(source: Any, until: Any, timeout: float = 60.0) -> tuple[MetashellApp, dict[str, Any]]:
    """The app on ``source``; what it showed first (the end's load held back until then: a small
    fixture's would beat the first look), then waits until ``until(app)``."""
    app = MetashellApp(source)
    first: dict[str, Any] = {}
    looked = threading.Event()
    load_end = source.travel._load_end

    def held() -> Any:
        looked.wait(timeout)
        return load_end()

    source.travel._load_end = held

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: app.first_screen_at is not None, "the first screen")
            first.update(
                point=app.shell.point,
                title=app.sub_title,
                offset=app.shell.root.ctx.image.provenance.offset,
                refused=app.commands.run_command("history"),
                shown=str(app.shown),
            )
            looked.set()
            await wait_until(pilot, lambda: until(app), "the end of the log came", timeout)
            await pilot.pause()

    asyncio.run(main())
    return app, first


def test_only_a_long_log_after_the_newest_snapshot_is_shown_from_the_snapshot(tmp_path: Path) -> None:
    assert catch_up.snapshot_point(str(FIXTURE)) is None  # 10 kB of log: loaded whole at once
    assert catch_up.snapshot_point(str(tmp_path)) is None  # not a metadata directory: the open says so
    assert catch_up.open_behind(str(FIXTURE), lambda _w: None, True) is None


def test_the_snapshot_comes_first_labelled_then_the_end(long_logs: None) -> None:
    source = catch_up.open_behind(str(FIXTURE), lambda _w: None, True)
    assert source is not None and source.behind == catch_up.LOADING
    end = load_directory(FIXTURE).image.provenance.offset

    app, first = run_app(source, lambda app: app.source.behind is None and app.health is not None)
    assert first["point"] == f"@{SNAPSHOT_POINT}" and first["offset"] == int(SNAPSHOT_POINT)
    assert f"at @{SNAPSHOT_POINT}" in first["title"] and catch_up.LOADING in first["title"]
    assert first["refused"] == 1 and "still loading" in first["shown"]  # history would wait on the UI
    assert app.shell.point is None and app.shell.root.ctx.image.provenance.offset == end > int(SNAPSHOT_POINT)
    assert "at @" not in app.sub_title and catch_up.LOADING not in app.sub_title
    assert app.source.travel is not None and app.source.travel.end().timeline is not None  # `at` works


def test_a_damaged_log_after_the_snapshot_keeps_the_snapshot_and_says_so(
    long_logs: None, tmp_path: Path
) -> None:
    copy = tmp_path / "d"
    shutil.copytree(FIXTURE, copy)
    segment = copy / "__cluster_metadata-0" / "00000000000000000146.log"
    data = bytearray(segment.read_bytes())
    data[100] ^= 0xFF  # inside the segment's first batch, well after the snapshot: not a torn tail
    segment.write_bytes(bytes(data))
    with pytest.raises(Exception, match="CRC|corrupt"):
        load_directory(copy)
    source = catch_up.open_behind(str(copy), lambda _w: None, True)
    assert source is not None

    app, _first = run_app(source, lambda app: app.source.behind != catch_up.LOADING)
    assert app.shell.point == f"@{SNAPSHOT_POINT}"
    assert app.shell.root.ctx.image.provenance.offset == int(SNAPSHOT_POINT)
    assert "could not be loaded" in app.sub_title and f"at @{SNAPSHOT_POINT}" in app.sub_title
    errors = [n for n in app._notifications if n.severity == "error"]
    assert (
        len(errors) == 1 and "\n" not in errors[0].message and "00000000000000000146.log" in errors[0].message
    )


def test_travelling_commands_wait_only_while_the_end_loads() -> None:
    app: Any = SimpleNamespace(source=SimpleNamespace(behind=catch_up.LOADING))
    assert catch_up.refusal(app, "history /topics") is not None
    assert catch_up.refusal(app, "at 12") is not None
    assert catch_up.refusal(app, "ls /topics") is None
    app.source.behind = None
    assert catch_up.refusal(app, "history /topics") is None


def test_the_command_line_opens_a_long_log_at_its_snapshot_only_for_the_tui(
    long_logs: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """One-shot and the REPL load the whole directory; so does ``--tui`` with ``--at``/``--path``."""
    opened: list[Any] = []
    monkeypatch.setattr(MetashellApp, "run", lambda self: opened.append(self.source))
    monkeypatch.setattr("metashell.cli._is_tty", lambda _stream: True)
    assert main(["-d", str(FIXTURE), "--tui"]) == 0
    assert main(["-d", str(FIXTURE), "--tui", "--at", "100"]) == 0
    assert [(s.behind, s.point) for s in opened] == [(catch_up.LOADING, f"@{SNAPSHOT_POINT}"), (None, "@100")]
    assert main(["-d", str(FIXTURE), "-c", "cat /provenance/offset"]) == 0
    assert capsys.readouterr().out.strip() != SNAPSHOT_POINT


def test_a_paced_load_calls_its_pace_between_runs_of_batches() -> None:
    calls: list[int] = []
    with pacing.paced(lambda: calls.append(1)):
        paced_image = load_directory(FIXTURE, timeline=True).image
    assert calls and pacing.current() is None
    assert paced_image.provenance.offset == load_directory(FIXTURE).image.provenance.offset


def test_the_end_is_loaded_once_whichever_thread_asks_first() -> None:
    source = open_directory(str(FIXTURE), lambda _w: None, True, at=SNAPSHOT_POINT)
    travel = source.travel
    assert travel is not None
    loads: list[int] = []
    real = travel._load_end

    def slow() -> Any:
        loads.append(1)
        time.sleep(0.2)
        return real()

    travel._load_end = slow
    got: list[Any] = []
    threads = [threading.Thread(target=lambda: got.append(travel.end())) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and len(got) == 3 and got[0] is got[1] is got[2]


def test_quitting_while_the_end_loads_stops_the_load(long_logs: None) -> None:
    """The load stops at its next pace once the app has quit: leaving does not wait for it."""
    source = catch_up.open_behind(str(FIXTURE), lambda _w: None, True)
    assert source is not None and source.travel is not None
    quit_ = threading.Event()
    started = threading.Event()
    finished = threading.Event()
    load_end = source.travel._load_end

    def held() -> Any:
        started.set()
        quit_.wait(30)
        try:
            return load_end()
        finally:
            finished.set()

    source.travel._load_end = held
    app = MetashellApp(source)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.first_screen_at is not None, "the first screen")
            await until(pilot, started.is_set, "the load started")  # (and waits)
            await pilot.press("q")

    def quit_soon() -> None:
        while app.is_running or app.first_screen_at is None:
            time.sleep(0.01)
        quit_.set()

    waiter = threading.Thread(target=quit_soon)
    waiter.start()
    asyncio.run(main())
    waiter.join(30)
    assert finished.wait(30)
    assert source.travel._end is None and source.behind == catch_up.LOADING  # abandoned, not failed
