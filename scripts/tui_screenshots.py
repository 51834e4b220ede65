#!/usr/bin/env python3
"""Make the TUI screenshots of ``docs/img`` (SVG, as Textual draws the screen), so they match the docs.

    python scripts/tui_screenshots.py                       # corpus cluster + 1M-partition directory
    python scripts/tui_screenshots.py --big DIR              # the 1M directory from bench/metagen.py
    python scripts/tui_screenshots.py --no-big               # only the corpus cluster

Shots, each at 80x24 and 160x50:

* ``tui-first-screen-*``: the first screen on the corpus cluster of the walk-through
  (``ftmhxp+real-time-data-streaming-pipeline@kafka1``, ``docs/tui.md``), health worked out;
* ``tui-health-*``: its step 2, ``:health`` with the cause, the pane at the whole width;
* ``tui-history-*``: its step 3, ``h`` on ``/brokers/2``;
* ``tui-1m-topics-*``: the generated 1M-partition directory with ``/topics`` expanded.

The same screens were checked by eye in tmux (``tmux new -x 80 -y 24 'metashell -d DIR --tui'``).
About 15 s for the corpus shots; the 1M ones add two loads of the directory (about 15 s each).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from metashell.shell.sources import open_directory
from metashell.tui.app import MetashellApp

CORPUS = REPO.parent / "shared" / "corpus" / "ftmhxp+real-time-data-streaming-pipeline@kafka1"
SIZES = ((80, 24), (160, 50))
Steps = Callable[[MetashellApp, Any], Awaitable[None]]


async def _settle(app: MetashellApp, pilot: Any) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause(0.2)


async def _command(app: MetashellApp, pilot: Any, line: str) -> None:
    await pilot.press("colon", *line, "enter")
    while app.command_running():
        await pilot.pause(0.05)
    await pilot.pause(0.2)


async def first_screen(app: MetashellApp, pilot: Any) -> None:
    await _settle(app, pilot)


async def health(app: MetashellApp, pilot: Any) -> None:
    await _settle(app, pilot)
    await _command(app, pilot, "health")
    await pilot.press("escape", "w")
    await pilot.pause(0.2)


async def history(app: MetashellApp, pilot: Any) -> None:
    await _settle(app, pilot)
    app.go_to("/brokers/2")
    await pilot.pause(0.2)
    await pilot.press("h")
    while app.command_running():
        await pilot.pause(0.05)
    await pilot.pause(0.3)


async def topics(app: MetashellApp, pilot: Any) -> None:
    await _settle(app, pilot)
    app.go_to("/topics")
    await pilot.pause(0.2)
    app.tree_view.cursor_node.expand()  # type: ignore[union-attr]
    await pilot.pause(0.3)


def shoot(directory: Path, name: str, steps: Steps, out: Path, size: tuple[int, int]) -> Path:
    app = MetashellApp(open_directory(str(directory), lambda _w: None, True))
    target = out / f"{name}-{size[0]}x{size[1]}.svg"

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await steps(app, pilot)
            target.write_text(app.export_screenshot(title=f"metashell --tui ({size[0]}x{size[1]})"))
            await pilot.press("q")

    asyncio.run(main())
    return target


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="the walk-through's cluster")
    ap.add_argument("--big", type=Path, help="a 1M-partition directory (default: bench/metagen.py's)")
    ap.add_argument("--no-big", action="store_true", help="skip the 1M-partition shots")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "img")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    shots: list[tuple[Path, str, Steps]] = [
        (args.corpus, "tui-first-screen", first_screen),
        (args.corpus, "tui-health", health),
        (args.corpus, "tui-history", history),
    ]
    if not args.no_big:
        big = args.big
        if big is None:
            sys.path.insert(0, str(REPO / "bench"))
            import metagen

            big = metagen.ensure(metagen.GenParams(), REPO / "bench" / "out").root
        shots.append((big, "tui-1m-topics", topics))
    for directory, name, steps in shots:
        for size in SIZES:
            print(shoot(directory, name, steps, args.out, size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
