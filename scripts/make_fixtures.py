#!/usr/bin/env python3
"""Generate the metadata-log fixtures in ``fixtures/`` by driving real Apache Kafka clusters.

Why: metashell must read what real Kafka writes, not what we think it writes.  Every fixture here is
a ``metadata.log.dir`` copied from a stopped node of a real cluster (started by
``scripts/kafka_harness.py`` from Maven Central jars) after the cluster was driven through Kafka's own
Admin/Producer client API: topics, partition increases, deletions, reassignments (finished and in
flight), ACLs, client quotas, SCRAM users, delegation tokens, broker/cluster/topic/client-metrics/
group configs, feature upgrades, broker kills (fencing), controlled shutdowns, leader and controller
fail-overs, broker/controller unregistration and KRaft voter changes.  Tiny segment and snapshot
thresholds make every directory hold several ``.log`` segments, ``.checkpoint`` snapshots *and* a
log tail after the newest snapshot.

The client operations are a small Java program (``scripts/java/FixtureOps.java``) compiled against
the exact Kafka version under test -- Kafka 4.4.0's admin CLI jars are not on Maven Central, and one
long-lived JVM per phase is much faster on a 2-core box than dozens of CLI start-ups.  The rest is
in ``scripts/fixtures/``, one module per concern: ``ops`` (that JVM), ``cluster`` (the clusters and
the waits scenarios share), ``demo_split`` and ``zk_migration`` (the scenarios), ``release_line``
(one workload on each release line, 3.3 to 4.4), ``upgrade_chain`` (one node rolled from 3.3 to
4.4), ``inventory`` (what a fixture holds).  This script lists the scenarios and runs them.

Only the files a metadata reader needs are kept (``meta.properties``, ``bootstrap.checkpoint``,
``__cluster_metadata-0/{*.log,*.checkpoint,quorum-state,leader-epoch-checkpoint,partition.metadata}``);
``.index``/``.timeindex`` and producer ``.snapshot`` files are dropped.  ``fixtures/manifest.json``
records, per fixture, the Kafka version, mode, node and a count of every record type it contains
(tests/test_fixtures.py checks the committed files against it).

Usage::

    python scripts/make_fixtures.py                       # all fixtures
    python scripts/make_fixtures.py --only demo           # one scenario
    python scripts/make_fixtures.py --version 3.9.2       # the scenarios of one Kafka version
    python scripts/make_fixtures.py --only kafka-3.5      # one release line (about a minute)
    python scripts/make_fixtures.py --summary             # print record-type inventory of fixtures/
    python scripts/make_fixtures.py --reinventory         # recompute the manifest's inventories
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).resolve().parent
REPO = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))

from fixtures.cluster import Log
from fixtures.demo_split import Scenario, run_demo, run_split
from fixtures.inventory import copy_metadata_dir, coverage_table, inventory
from fixtures.release_line import RELEASES, fixture_name, run_release_line
from fixtures.upgrade_chain import CHAIN, run_upgrade_chain
from fixtures.zk_migration import run_zk_migration
from kafka_harness import HarnessError, KafkaDist

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "demo",
        "4.4.0",
        "combined",
        {"demo": 1},
        "single combined node (dynamic quorum, --standalone): a few topics, configs, ACLs, quotas, "
        "SCRAM users",
        run_demo,
    ),
    Scenario(
        "kafka-4.4-split",
        "4.4.0",
        "split",
        {"kafka-4.4-split-c1": 1, "kafka-4.4-broker": 4},
        "3 controllers (dynamic quorum, SASL/SCRAM controller listener) + 2 brokers, MV 4.0-IV3 -> "
        "4.4-IV2, everything",
        run_split,
    ),
    Scenario(
        "kafka-3.9-split",
        "3.9.2",
        "split",
        {"kafka-3.9-split-c1": 1, "kafka-3.9-broker": 4},
        "3 controllers (static quorum) + 2 brokers, MV 3.3-IV0 -> 3.9-IV0, everything",
        run_split,
    ),
    Scenario(
        "kafka-3.9-zk-migration",
        "3.9.2",
        "zk-migration",
        {"kafka-3.9-zk-migration": 3000},
        "ZooKeeper cluster migrated to a KRaft controller that crashed mid-migration (aborted "
        "metadata transaction), dual-write, then finalized",
        run_zk_migration,
    ),
    *(
        Scenario(
            fixture_name(v),
            v,
            "split",
            {fixture_name(v): 1},
            f"release line {fixture_name(v)[6:]}: 3 controllers + 2 brokers, its default metadata.version, the "
            "one workload every line runs (scripts/fixtures/release_line.py)",
            run_release_line,
        )
        for v in RELEASES
    ),
    Scenario(
        "kafka-upgrade-chain",
        CHAIN[0],
        "combined",
        {"kafka-upgrade-chain": 1},
        "one combined node rolled " + " -> ".join(CHAIN) + ", kafka-features upgrade at each step "
        "(scripts/fixtures/upgrade_chain.py)",
        run_upgrade_chain,
    ),
)


def command_for(scenario: str) -> str:
    """The command that makes a scenario's fixtures (the manifest records it with each)."""
    return f"python scripts/make_fixtures.py --only {scenario}"


def generate(scenario: Scenario, out: Path, workroot: Path, log: Log) -> dict[str, dict[str, Any]]:
    """Run one scenario, copy its nodes' metadata dirs into ``out`` and return their manifest entries."""
    dist = KafkaDist(scenario.version).ensure()
    workdir = workroot / scenario.name
    if workdir.exists():
        shutil.rmtree(workdir)
    t0 = time.monotonic()
    log(f"== {scenario.name}: Kafka {scenario.version} {scenario.mode} ({workdir})")
    try:
        cluster = scenario.run(dist, workdir, log)
    except BaseException:
        log(f"!! {scenario.name} failed; node logs are under {workdir}")
        raise
    seconds = round(time.monotonic() - t0, 1)
    entries = {}
    for fixture, node_id in scenario.outputs.items():
        node = cluster.node(node_id)
        dest = out / fixture
        copy_metadata_dir(node, dest)
        inv = inventory(dest)
        entries[fixture] = {
            "kafka_version": scenario.version,
            "mode": scenario.mode,
            "scenario": scenario.name,
            "node_id": node_id,
            "roles": list(node.roles),
            "description": scenario.description,
            "command": command_for(scenario.name),
            "generation_seconds": seconds,
            **inv,
        }
        if getattr(cluster, "oracle", None) and node_id == 1:
            entries[fixture]["oracle"] = cluster.oracle
        log(
            f"   {fixture}: {inv['bytes']} bytes, {inv['segments']} segments, {len(inv['snapshots'])} "
            f"snapshots, tail after snapshot: {inv['has_log_tail_after_snapshot']}"
        )
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", help="only scenarios of this Kafka version (3.9.2, 4.4.0)")
    parser.add_argument("--only", action="append", help="only this scenario or fixture name (repeatable)")
    parser.add_argument(
        "--out", default=str(REPO / "fixtures"), help="fixtures directory (default: fixtures/)"
    )
    parser.add_argument("--workdir", help="keep the cluster dirs (configs, server logs) here")
    parser.add_argument(
        "--reinventory",
        action="store_true",
        help="recompute what each fixture of --out holds (its manifest entry's inventory) and exit",
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="print the record-type coverage table of --out (from its manifest.json) and exit",
    )
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    if args.summary:
        print(coverage_table(json.loads((out / "manifest.json").read_text())))
        return 0
    if args.reinventory:  # after the inventory learns something new: no cluster needs to run again
        path = out / "manifest.json"
        entries = json.loads(path.read_text())
        for name, entry in entries.items():
            entry.update(inventory(out / name))
            entry["command"] = command_for(entry["scenario"])
        path.write_text(json.dumps(dict(sorted(entries.items())), indent=1) + "\n")
        return 0
    chosen = [
        sc
        for sc in SCENARIOS
        if (not args.version or sc.version == args.version)
        and (not args.only or sc.name in args.only or set(sc.outputs) & set(args.only))
    ]
    if not chosen:
        names = ", ".join(sc.name for sc in SCENARIOS)
        print(f"error: no scenario matches (scenarios: {names})", file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        print(msg, flush=True)

    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    tmp = None if args.workdir else tempfile.mkdtemp(prefix="metashell-fixtures-")
    workroot = Path(args.workdir or tmp).resolve()
    t0 = time.monotonic()
    try:
        for sc in chosen:  # one cluster at a time: the machine is small and shared
            manifest.update(generate(sc, out, workroot, log))
            manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"done in {time.monotonic() - t0:.0f}s; manifest: {manifest_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
