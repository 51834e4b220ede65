#!/usr/bin/env python3
"""Answers benchmark: how long the incident commands take on a big image, after it is loaded.

    python bench/answers.py                  # full size: 100k topics x 10 partitions (1M partitions)
    python bench/answers.py --scale 0.1      # quick run

The directory is the one ``bench/load.py`` generates (``bench/metagen.py``, cached under
bench/out/; ~2% of partitions under-replicated).  It is loaded once, in this process, through the
same entry point as the CLI; then each command runs through the shell's command engine with its
output going to a sink that notes when the first line arrived and counts lines.  Reported per
command: time to the first line, total time, lines; ``--repeat N`` keeps the best of N.

Measured: ``health``, ``describe --under-replicated-partitions``, ``describe --unavailable-partitions``,
``find /`` (time to first line: it streams), ``ls -l /topics/<one>``, ``grep -r`` in one topic's
configs, ``cat /health/summary``, then time travel: ``history`` of one partition, ``log`` of 2,000
offsets of PartitionChangeRecords in the middle of the tail, ``at`` the middle, back to the end and
to the middle again (a cached point), and a ``diff`` between two points.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import io
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import metagen

from metashell.shell.session import Settings, Shell
from metashell.shell.sources import open_directory


class Sink(io.TextIOBase):
    """Counts lines and notes when the first one arrived."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.lines = 0

    def write(self, text: str) -> int:
        if self.first is None and text:
            self.first = time.perf_counter()
        self.lines += text.count("\n")
        return len(text)

    def flush(self) -> None:
        pass


def run(shell: Shell, line: str) -> tuple[float, float, int]:
    sink = Sink()
    shell.out = sink  # type: ignore[assignment]
    t0 = time.perf_counter()
    shell.run_line(line, remember=False)
    t1 = time.perf_counter()
    first = (sink.first or t1) - t0
    return first, t1 - t0, sink.lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    metagen.add_size_arguments(ap)
    ap.add_argument("--repeat", type=int, default=3, help="runs per command; the best is kept")
    args = ap.parse_args()
    params = metagen.params_from(args)
    data = metagen.ensure(params, args.out)
    t0 = time.perf_counter()
    source = open_directory(data.root, lambda _w: None, True)
    load_s = time.perf_counter() - t0
    image = source.image
    topic = sorted(image.topics.by_name)[len(image.topics.by_name) // 2]
    partitions, topics = (
        image.topics.partition_count(),
        len(image.topics.by_id),
    )  # before `at` moves the image
    shell = Shell(source.root, io.StringIO(), io.StringIO(), Settings())
    shell.attach(source)
    end = image.provenance.offset
    tail_start = data.snapshot_end_offset
    middle = (tail_start + end) // 2
    commands = [
        "health",
        "describe --under-replicated-partitions",
        "describe --unavailable-partitions",
        "find /",
        f"ls -l /topics/{topic}",
        f"grep -r . /topics/{topic}/configs",
        "cat /health/summary",
        f"history /topics/{topic}/0",
        f"log --type PartitionChangeRecord --from {middle} --to {middle + 2000}",
        f"at {middle}",
        "at",
        f"at {middle}",
        f"diff --from {middle} --to {middle + 100} /brokers",
    ]
    rows = []
    for line in commands:
        best = min((run(shell, line) for _ in range(args.repeat)), key=lambda r: r[1])
        rows.append(
            {
                "command": line,
                "first_line_s": round(best[0], 4),
                "total_s": round(best[1], 3),
                "lines": best[2],
            }
        )
    print(
        "\n"
        + metagen.machine_line(f"{partitions:,} partitions in {topics:,} topics, loaded in {load_s:.1f} s")
    )
    print(f"{'command':<45} {'first line s':>12} {'total s':>9} {'lines':>10}")
    print("-" * 79)
    for r in rows:
        print(f"{r['command']:<45} {r['first_line_s']:>12.4f} {r['total_s']:>9.3f} {r['lines']:>10,}")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"answers-{_dt.datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps({"partitions": partitions, "load_s": load_s, "rows": rows}, indent=1))
    print(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
