#!/usr/bin/env python3
"""Time-travel benchmark (issue 14): ``at``, ``history`` and ``log`` on a million-partition log.

    python bench/time_travel.py                # full size: the load.py directory (1M partitions, 1M-record tail)
    python bench/time_travel.py --scale 0.1    # quick run

The directory is the one ``bench/load.py`` generates (``bench/metagen.py``, cached under bench/out/).
Child processes load it the way the CLI does, without and with the journal that makes moving
through time cheap (``image/timeline.py``), in turn (``--repeat``, 5 of each), so its cost in load
time and peak RSS is measured on its own: the ratio of the medians.  In one more, after a load with
the journal, each command runs through the shell's command engine (output into a counting sink):

* ``history`` of one partition and of one topic (every record that changed it, old -> new);
* ``log --type PartitionChangeRecord`` over the last 2,000 offsets of the tail, and ``log`` of 2,000
  offsets in the middle of the tail;
* ``at`` back and forth 10 times between points spread over the tail (each move timed), ``at`` an ISO
  time, and ``at`` back to the end;
* ``diff --from A --to B /brokers``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import io
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import metagen


class Sink(io.TextIOBase):
    def __init__(self) -> None:
        self.lines = 0

    def write(self, text: str) -> int:
        self.lines += text.count("\n")
        return len(text)


def _child(root: str, timeline: bool, commands: bool) -> dict:
    """Runs in a child process: load (and run the commands); returns figures as JSON on stdout."""
    from load import own_peak_rss_mb

    from metashell.shell.session import Settings, Shell
    from metashell.shell.sources import open_directory

    t0 = time.perf_counter()
    source = open_directory(root, lambda _w: None, True, timeline=timeline)
    load_s = time.perf_counter() - t0
    out: dict = {
        "load_s": round(load_s, 2),
        "rss_mb": round(own_peak_rss_mb()),
    }
    if not commands:
        return out
    assert source.travel is not None
    end_load = source.travel.end()
    timeline_obj = end_load.timeline
    assert timeline_obj is not None
    out["journal_entries"] = timeline_obj.changes()
    out["journal_mb_estimate"] = round(timeline_obj.memory_bytes() / 2**20)
    image = source.image
    # the partition the tail changed most often (a history worth reading), and its topic
    from collections import Counter

    from metashell.image.model import Partition

    # what each change is of: a partition, or (a native run's change of a waiting row) a topic's
    # rows and a partition id; found without making any topic's partitions
    counts: Counter[tuple[int, int | None]] = Counter()
    for e in timeline_obj.entries:
        if type(e) is not tuple:
            counts.update((id(o), pid) for o, pid in e.targets())
        elif type(e[0]) is Partition:
            counts[(id(e[0]), None)] += 1
    busiest = counts.most_common(1)[0][0]
    key, pid = busiest
    topics = list(image.topics.by_id.values())
    if pid is None:
        topic, pid = next((t.name, i) for t in topics for i, p in t._partitions.items() if id(p) == key)
    else:
        topic = next(t.name for t in topics if id(t._pending) == key)
    out["history_changes"] = counts[busiest]
    start, end = timeline_obj.start, image.provenance.offset
    shell = Shell(source.root, io.StringIO(), io.StringIO(), Settings())
    shell.attach(source)

    def run(line: str) -> tuple[float, int]:
        sink = Sink()
        shell.out = sink  # type: ignore[assignment]
        t = time.perf_counter()
        status = shell.run_line(line, remember=False)
        elapsed = time.perf_counter() - t
        assert status in (0, 1), (line, status)
        return elapsed, sink.lines

    rows = []
    middle = (start + end) // 2
    for line in (
        f"history /topics/{topic}/{pid}",
        f"history /topics/{topic}",
        f"log --type PartitionChangeRecord --from {end - 2000}",
        f"log --from {middle} --to {middle + 2000}",
    ):
        s, n = run(line)
        rows.append({"command": line, "s": round(s, 3), "lines": n})
    points = [start + (end - start) * f // 100 for f in (25, 75, 10, 90, 50, 60, 30, 80, 5, 95)]
    moves = []
    for p in points:
        s, _n = run(f"at {p}")
        moves.append(round(s, 3))
    rows.append({"command": "at (10 points across the tail, back and forth)", "s": max(moves), "each": moves})
    ts = image.provenance.timestamp
    when = _dt.datetime.fromtimestamp((ts - 60_000) / 1000, _dt.UTC).isoformat(timespec="seconds")
    for line in (f"at {when}", "at", f"diff --from {middle} --to {middle + 500} /brokers"):
        s, n = run(line)
        rows.append({"command": line, "s": round(s, 3), "lines": n})
    out["rows"] = rows
    return out


def _spawn(root: str, timeline: bool, commands: bool) -> dict:
    code = (
        f"import sys, json; sys.path.insert(0, {str(REPO / 'bench')!r}); import time_travel as t; "
        f"print(json.dumps(t._child({root!r}, {timeline}, {commands})))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    metagen.add_size_arguments(ap)
    ap.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="loads without and with the journal, taken in turn (default 5 of each): their medians are compared",
    )
    args = ap.parse_args()
    params = metagen.params_from(args)
    data = metagen.ensure(params, args.out)
    root = str(data.root)
    # in turn, so that a machine busy for a while slows both alike; one load of each is not a
    # measurement here (two loads of the same kind differed by 30% on this VM)
    loads: dict[bool, list[dict]] = {False: [], True: []}
    for _ in range(max(1, args.repeat)):
        for timeline in (False, True):
            loads[timeline].append(_spawn(root, timeline, False))
    with_tl = _spawn(root, True, True)
    print("\n" + metagen.machine_line(root))
    median = {k: statistics.median(r["load_s"] for r in v) for k, v in loads.items()}
    for timeline, label in ((False, "without journal"), (True, "with journal   ")):
        runs = loads[timeline]
        print(
            f"load {label}: {median[timeline]:.2f} s median of {len(runs)} "
            f"({min(r['load_s'] for r in runs):.2f}-{max(r['load_s'] for r in runs):.2f}), "
            f"peak RSS {max(r['rss_mb'] for r in runs)} MB"
        )
    print(
        f"journal cost: {median[True] / median[False]:.2f}x the load without it "
        f"({with_tl['journal_entries']:,} changes, ~{with_tl['journal_mb_estimate']} MB estimated)"
    )
    print(f"\n{'command':<62} {'s':>7} {'lines':>8}")
    print("-" * 79)
    for r in with_tl["rows"]:
        print(f"{r['command']:<62} {r['s']:>7.3f} {r.get('lines', ''):>8}")
        if "each" in r:
            print(f"    each move: {', '.join(f'{x:.3f}' for x in r['each'])}")
    results = {"without": loads[False], "with": loads[True], "ratio": round(median[True] / median[False], 3)}
    metagen.save_results(args.out, "time-travel", {**results, "commands": with_tl})
    return 0


if __name__ == "__main__":
    sys.exit(main())
