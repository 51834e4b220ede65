#!/usr/bin/env python3
"""TUI benchmark (issue 15): first screen, expanding ``/topics`` and path search on a million partitions.

    python bench/tui.py                 # full size: the load.py directory (100k topics, 1M partitions)
    python bench/tui.py --scale 0.1     # quick run

The app runs headless under Textual's own test driver (``App.run_test``, 160x50), in this process:

* **first action**: ``/topics`` expanded right after the first screen, while the background work
  below still runs (it shares the GIL);
* **first screen**: from opening the directory as ``--tui -d`` does until the app has mounted and
  drawn its tree and detail pane (the moment its first refresh has been drawn,
  ``MetashellApp.first_screen_at``) -- on a long log that is the newest snapshot's image, the end of
  the log loading behind it (``tui/catch_up.py``); compared with the one-shot load of the whole
  directory alone (``open_directory`` without the app, journal included);
* **the end shown**: until that background load is in and the session has moved to the end;
* **background**: the health report (badges, verdict) and the search list, in a worker thread after the
  first screen (the UI answers meanwhile, sharing the GIL); the figures below are taken after it;
* **a held arrow key**: as many down-arrow key events queued at once as rows to ``/topics`` (what a
  terminal sends while the key is held), until ``/topics`` is drawn (``tui/arrowing.py``);
* **expand /topics**: the 100k-child directory expanded (the first page of tree nodes added) and drawn;
* **jump to a topic far down /topics** (``go_to``: pages through until it is there) and draw its table;
* **search**: the palette's candidates for a few queries (``search_paths``: names first), the first
  one building the name list.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import metagen
from textual import events

from metashell.shell.sources import open_directory
from metashell.tui.app import MetashellApp
from metashell.tui.catch_up import open_behind


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    metagen.add_size_arguments(ap)
    args = ap.parse_args()
    data = metagen.ensure(metagen.params_from(args), args.out)
    root = str(data.root)
    t0 = time.perf_counter()
    alone = open_directory(root, lambda _w: None, True)
    load_s = time.perf_counter() - t0
    del alone  # one image at a time: its garbage must not be collected during the app's timings
    gc.collect()
    rows: dict[str, float] = {}

    async def run() -> None:
        t = opened = time.perf_counter()
        source = open_behind(root, lambda _w: None, True) or open_directory(root, lambda _w: None, True)
        loaded = time.perf_counter()
        app = MetashellApp(source)
        async with app.run_test(size=(160, 50)) as pilot:
            while app.first_screen_at is None:
                await asyncio.sleep(0.005)
            at = f" at {app.shell.point}, the snapshot" if source.behind else ""
            rows[f"first screen{at} (load + mount + draw)"] = app.first_screen_at - t
            rows["  of which the app (mount + draw)"] = app.first_screen_at - loaded
            from textual.widgets import Tree

            # the first action right after the first screen, typed (arrows to /topics, Enter),
            # while the background work runs
            children = app.query_one("#tree", Tree).root.children
            first = next(c for c in children if c.data == "/topics")
            t = time.perf_counter()
            await pilot.press(*["down"] * (children.index(first) + 1), "enter")
            await pilot.pause()
            assert first.is_expanded
            rows["keys to /topics and Enter at once (background work running)"] = time.perf_counter() - t
            first.collapse()
            while source.behind is not None:
                await asyncio.sleep(0.005)
            await pilot.pause()
            if at:
                rows["the end of the log shown (loaded behind the first screen)"] = (
                    time.perf_counter() - opened
                )
            t = time.perf_counter()
            while app.health is None or not app.searchable_ready():
                await asyncio.sleep(0.005)
            await app.workers.wait_for_complete()
            await pilot.pause()
            rows["then, in a thread: health badges and the search list"] = time.perf_counter() - t

            tree = app.query_one("#tree", Tree)
            topics = next(c for c in tree.root.children if c.data == "/topics")
            # a held arrow key: the terminal sends keys faster than rows are drawn, and they queue
            app.go_to("/")
            await pilot.pause()
            t = time.perf_counter()
            for _ in range(tree.root.children.index(topics) + 1):
                app.post_message(events.Key("down", None))
            while app.selected != "/topics":
                await asyncio.sleep(0.005)
            await pilot.pause()
            rows["arrow keys queued at once (a held key) until /topics is drawn"] = time.perf_counter() - t

            async def timed(what: str, action: Callable[[], object]) -> None:
                t, c = time.perf_counter(), time.process_time()
                action()
                await pilot.pause()
                rows[what] = time.perf_counter() - t
                rows[f"  of which CPU ({what.split(' (')[0]})"] = time.process_time() - c

            ids = next(c for c in tree.root.children if c.data == "/topicIds")
            names = sorted(app.shell.root.ctx.image.topics.by_name)
            await timed("expand /topics (first page drawn)", topics.expand)
            await timed("expand /topicIds (100k ids, first page drawn)", ids.expand)
            await timed(
                "jump to the middle topic of /topics (table drawn)",
                lambda: app.go_to(f"/topics/{names[len(names) // 2]}"),
            )
            for query in ("orders", "ship", "0100151", "zz9"):
                t = time.perf_counter()
                hits = list(app.search_paths(query))[:50]
                rows[f"search {query!r} ({len(hits)} shown)"] = time.perf_counter() - t
            await pilot.press("q")

    asyncio.run(run())
    print("\n" + metagen.machine_line(root))
    print(f"one-shot load alone: {load_s:.2f} s")
    for what, s in rows.items():
        print(f"{what:<55} {s:8.3f} s")
    metagen.save_results(args.out, "tui", {"load_s": load_s, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
