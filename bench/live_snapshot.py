#!/usr/bin/env python3
"""A fetched snapshot's cost (issue 58): what a live session does with the leader's snapshot, beside
the offline load of the same file, on both engines, each run in a fresh process (its peak RSS is
its own).

    python bench/live_snapshot.py                 # the load.py directory's snapshot (1M partitions)
    python bench/live_snapshot.py --scale 0.1     # a smaller one

Three ways to the image of the same snapshot bytes:

* ``file``: ``load_file`` on the snapshot file (the offline ``-s`` load, read in chunks);
* ``batches``: the live path before issue 58: every batch's records decoded on arrival, then the
  batches applied one by one (``ImageLoader.apply_snapshot``);
* ``fetched``: the live path now: the snapshot downloaded into a temporary file, checked whole on
  arrival with no record kept, then read again a chunk at a time and applied by the directory's
  path (``image/fetched_snapshot.py``, the native bulk sink).

The network copy (``FetchSnapshot`` pages) is not in these figures: ``bench/live_latency.py`` and
``bench/quorum.py`` run real Kafka.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import metagen
from load import own_peak_rss_mb

WAYS = ("file", "batches", "fetched")


def one(way: str, path: str) -> dict[str, float]:
    """Seconds to the image (and to read every partition, which a deferred load makes), peak RSS."""
    from metashell.image.batch_loader import ImageLoader
    from metashell.image.fetched_snapshot import apply_fetched_snapshot
    from metashell.image.image import MetadataImage
    from metashell.image.loader import load_file
    from metashell.log.offset_rules import check_snapshot_file
    from metashell.log.problems import unheard
    from metashell.log.scan import iter_batches

    end, epoch = (int(x) for x in Path(path).name.split(".")[0].split("-"))
    t = time.perf_counter()
    if way == "file":
        image = load_file(path).image
    else:
        loader = ImageLoader(MetadataImage())
        if way == "batches":  # the old path: the whole snapshot in memory, every batch decoded
            batches = list(iter_batches(Path(path).read_bytes(), "fetched"))
            loader.apply_snapshot(((b, None) for b in batches), end, epoch, "fetched")
            del batches
        else:
            with open(path, "rb") as f:  # the live client's download is a file too
                check_snapshot_file(f, "fetched", unheard)  # what the live client does on arrival
                apply_fetched_snapshot(loader, f, end, epoch, "fetched")
        image = loader.image
    loaded = time.perf_counter() - t
    partitions = sum(len(topic.partitions) for topic in image.topics.by_id.values())
    return {
        "s": loaded,
        "read_s": time.perf_counter() - t,
        "partitions": partitions,
        "rss_mb": own_peak_rss_mb(),
    }


def in_child(way: str, path: str, engine: str) -> dict[str, float]:
    env = {**os.environ, "METASHELL_ENGINE": engine}
    cmd = [sys.executable, __file__, "--child", json.dumps([way, path])]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"{way} on the {engine} engine failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    metagen.add_size_arguments(ap)
    ap.add_argument("--engines", default="python,native")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the fastest counts")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        way, path = json.loads(args.child)
        print(json.dumps(one(way, path)))
        return 0
    root = metagen.ensure(metagen.params_from(args), args.out).root
    snap = str(max((Path(root) / "__cluster_metadata-0").glob("*-*.checkpoint")))
    print(metagen.machine_line(f"{snap} ({Path(snap).stat().st_size / 1e6:.0f} MB)"))
    results: dict[str, dict[str, dict[str, float]]] = {}
    for engine in args.engines.split(","):
        results[engine] = {}
        for way in WAYS:
            runs = [in_child(way, snap, engine) for _ in range(args.repeat)]
            best = {k: min(r[k] for r in runs) for k in ("s", "read_s", "rss_mb")}
            results[engine][way] = {**best, "partitions": runs[0]["partitions"]}
        file = results[engine]["file"]
        for way in WAYS:
            r = results[engine][way]
            print(
                f"  {engine:<7} {way:<8} {r['s']:6.2f} s to the image ({r['read_s']:5.2f} s with every "
                f"partition read), peak {r['rss_mb']:5.0f} MB; {r['s'] / file['s']:4.2f}x the file's time, "
                f"{r['rss_mb'] / file['rss_mb']:4.2f}x its memory"
            )
    metagen.save_results(args.out, "live_snapshot", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
