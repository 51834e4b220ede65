#!/usr/bin/env python3
"""Time-travel benchmark (issue 14): ``at``, ``history`` and ``log`` on a million-partition log.

    python bench/time_travel.py                # full size: the load.py directory (1M partitions, 1M-record tail)
    python bench/time_travel.py --scale 0.1    # quick run

The directory is the one ``bench/load.py`` generates (``bench/metagen.py``, cached under bench/out/).
Two child processes load it the way the CLI does, with and without the journal that makes moving
through time cheap (``image/timeline.py``), so its cost in load time and peak RSS is measured on its
own.  In the first, after the load, each command runs through the shell's command engine (output
into a counting sink):

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
    import resource

    from metashell.shell.session import Settings, Shell
    from metashell.shell.sources import open_directory

    t0 = time.perf_counter()
    source = open_directory(root, lambda _w: None, True, timeline=timeline)
    load_s = time.perf_counter() - t0
    out: dict = {
        "load_s": round(load_s, 2),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
    }
    if not commands:
        return out
    assert source.travel is not None
    end_load = source.travel.end()
    timeline_obj = end_load.timeline
    assert timeline_obj is not None
    out["journal_entries"] = len(timeline_obj.entries)
    out["journal_mb_estimate"] = round(timeline_obj.memory_bytes() / 2**20)
    image = source.image
    # the partition the tail changed most often (a history worth reading), and its topic
    from collections import Counter

    from metashell.image.model import Partition

    counts = Counter(id(e[0]) for e in timeline_obj.entries if type(e[0]) is Partition)
    busiest = counts.most_common(1)[0][0]
    topic, pid = next(
        (t.name, i) for t in image.topics.by_id.values() for i, p in t.partitions.items() if id(p) == busiest
    )
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
    args = ap.parse_args()
    params = metagen.params_from(args)
    data = metagen.ensure(params, args.out)
    root = str(data.root)
    without = _spawn(root, False, False)
    with_tl = _spawn(root, True, True)
    print("\n" + metagen.machine_line(root))
    print(f"load without journal: {without['load_s']} s, peak RSS {without['rss_mb']} MB")
    print(
        f"load with journal:    {with_tl['load_s']} s, peak RSS {with_tl['rss_mb']} MB "
        f"({with_tl['journal_entries']:,} entries, ~{with_tl['journal_mb_estimate']} MB estimated)"
    )
    print(f"\n{'command':<62} {'s':>7} {'lines':>8}")
    print("-" * 79)
    for r in with_tl["rows"]:
        print(f"{r['command']:<62} {r['s']:>7.3f} {r.get('lines', ''):>8}")
        if "each" in r:
            print(f"    each move: {', '.join(f'{x:.3f}' for x in r['each'])}")
    metagen.save_results(args.out, "time-travel", {"without": without, "with": with_tl})
    return 0


if __name__ == "__main__":
    sys.exit(main())
