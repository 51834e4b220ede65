"""``quorum`` across nodes: time and peak memory of 1 and 3 nodes of a big log, and of a fleet of
small directories (issue 53's targets: three nodes at most 1.5x one node's memory, and time linear
in the number of directories).

The big log is ``bench/metagen.py``'s (at ``--scale`` 1.0: 100k topics x 10 partitions, a 1M-record
tail); each node is a copy of it whose segments and snapshots are hard links (metashell only reads
them) and whose ``meta.properties`` names its own node id and directory id.  The fleet is
``--fleet-scale`` copies, with node ids 101..100+N (the first three are the voters), compared in one ``quorum``.  Each figure is one
child process's wall time and peak RSS (``wait4``), the median of ``--repeat`` runs.

    python bench/quorum.py [--scale 1.0] [--fleet 10,30,100] [--fleet-scale 0.002] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import measure
from metagen import GenParams, ensure, machine_line, save_results

PART = "__cluster_metadata-0"


def node_copies(source: Path, where: Path, count: int) -> list[Path]:
    """``count`` nodes of ``source``'s log: files hard-linked, ``meta.properties`` each its own."""
    shutil.rmtree(where, ignore_errors=True)
    nodes = []
    for n in range(1, count + 1):
        node = where / f"node{n}"
        (node / PART).mkdir(parents=True)
        for f in (source / PART).iterdir():
            (node / PART / f.name).hardlink_to(f)
        props = (source / "meta.properties").read_text().splitlines()
        own = {"node.id": str(100 + n), "directory.id": uuid.uuid4().hex[:22]}  # metagen's voters: 101-103
        lines = [f"{k}={own[k]}" if (k := ln.split("=", 1)[0]) in own else ln for ln in props]
        (node / "meta.properties").write_text("\n".join(lines) + "\n")
        nodes.append(node)
    return nodes


def quorum_run(nodes: list[Path], repeat: int) -> dict[str, float]:
    cmd = [sys.executable, "-m", "metashell", *[a for n in nodes for a in ("-d", str(n))], "quorum"]
    runs = [measure("quorum", "metashell", cmd) for _ in range(repeat)]
    bad = [m for m in runs if m.returncode != 0]
    if bad:
        raise SystemExit(f"quorum failed: {bad[0].stderr[-2000:]}")
    return {
        "nodes": len(nodes),
        "wall_s": round(statistics.median(m.wall for m in runs), 3),
        "rss_mb": round(statistics.median(m.rss_mb for m in runs), 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(prog="bench/quorum.py", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--scale", type=float, default=1.0, help="the big log (1.0: 1M partitions, 1M-record tail)"
    )
    ap.add_argument("--fleet", default="10,30,100", help="fleet sizes of small directories")
    ap.add_argument("--fleet-scale", type=float, default=0.002)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = ap.parse_args()
    print(machine_line("quorum across nodes"))

    def params(scale: float) -> GenParams:
        return GenParams(
            topics=max(1, round(100_000 * scale)),
            partitions=10,
            tail_records=max(0, round(1_000_000 * scale)),
            overlap_records=max(100, round(5000 * scale)),
        )

    big = ensure(params(args.scale), args.out)
    results: dict[str, list[dict[str, float]]] = {"big": [], "fleet": []}
    for count in (1, 3):
        nodes = node_copies(Path(big.root), args.out / "quorum-nodes", count)
        row = quorum_run(nodes, args.repeat)
        results["big"].append(row)
        print(f"big log, {count} node(s): {row['wall_s']:.2f} s, peak RSS {row['rss_mb']:.0f} MB")
    small = ensure(params(args.fleet_scale), args.out)
    for count in (int(c) for c in args.fleet.split(",")):
        nodes = node_copies(Path(small.root), args.out / "quorum-fleet", count)
        row = quorum_run(nodes, args.repeat)
        results["fleet"].append(row)
        print(
            f"fleet of {count} small directories: {row['wall_s']:.2f} s "
            f"({row['wall_s'] / count * 1000:.0f} ms a directory), peak RSS {row['rss_mb']:.0f} MB"
        )
    save_results(args.out, "quorum", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
