"""The look of the TUI's main screens, pinned with pytest-textual-snapshot (SVG screenshots under
``tests/__snapshots__``; ``pytest --snapshot-update`` rewrites them after a deliberate change)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import REPO
from tui_wait import run_line, settled

from metashell.shell.sources import open_directory
from metashell.tui.app import MetashellApp


@pytest.fixture
def demo_app(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(REPO)  # the header names the directory as given: the same everywhere

    def make(**kwargs: Any) -> MetashellApp:
        return MetashellApp(open_directory("fixtures/demo", lambda _w: None, True), **kwargs)

    return make


async def _settle(pilot: Any) -> None:
    await settled(pilot)  # the start path drawn, the health report and badges in


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_first_screen(snap_compare: Any, demo_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(demo_app(), terminal_size=size, run_before=_settle)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_a_topic(snap_compare: Any, demo_app: Any, size: tuple[int, int]) -> None:
    assert snap_compare(demo_app(start_path="/topics/orders"), terminal_size=size, run_before=_settle)


def test_a_broker_record(snap_compare: Any, demo_app: Any) -> None:
    assert snap_compare(demo_app(start_path="/brokers/1"), terminal_size=(160, 50), run_before=_settle)


def test_command_output(snap_compare: Any, demo_app: Any) -> None:
    async def run(pilot: Any) -> None:
        await _settle(pilot)
        await run_line(pilot, "describe --unavailable-partitions")  # on a worker: waited for

    assert snap_compare(demo_app(), terminal_size=(160, 50), run_before=run)
