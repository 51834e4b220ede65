#!/usr/bin/env python3
"""Live mode latency: how long from a metadata change being written by the active controller until
metashell's live image holds it.

Method: a 3-controller + 1-broker KRaft cluster (scripts/kafka_harness.py, or one you give with
``--bootstrap-controller``/``--bootstrap-server``) and a live session applying records as they
arrive (``auto_apply``).  A tiny Java program (Kafka's own AdminClient, run from the harness
classpath) alters one topic config ``--changes`` times, one ``incrementalAlterConfigs`` call after
the other, so every change is its own controller commit.  For each of those ConfigRecords the delay
is ``time applied to the image - batch MaxTimestamp``; MaxTimestamp is when the active controller
built the batch, *before* it was replicated and committed, so this over-states commit->image by the
replication time (an upper bound).  Timestamps have millisecond resolution.

    python bench/live_latency.py                    # Kafka 4.4.0, 1000 changes
    python bench/live_latency.py --version 3.9.2 --changes 2000
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from metashell.image.live_feed import LiveSession
from metashell.live.events import RecordsCommitted
from metashell.protocol.metadata import decode_metadata_record

TOPIC = "latency-bench"
KEY = "retention.ms"

JAVA = r"""
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.config.ConfigResource;

public class AlterLoop {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        int n = Integer.parseInt(args[1]);
        long base = Long.parseLong(args[2]);
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, args[3]);
        try (Admin admin = Admin.create(p)) {
            for (int i = 0; i < n; i++) {
                AlterConfigOp op = new AlterConfigOp(new ConfigEntry(args[4], Long.toString(base + i)),
                                                     AlterConfigOp.OpType.SET);
                admin.incrementalAlterConfigs(Map.of(r, List.of(op))).all().get();
            }
        }
        System.out.println("done " + n);
    }
}
"""


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", default="4.4.0", help="Kafka version for the harness cluster")
    ap.add_argument("--changes", type=int, default=1000)
    ap.add_argument("--bootstrap-controller", help="use this running cluster's controllers ...")
    ap.add_argument("--bootstrap-server", help="... and this broker listener for the admin client")
    args = ap.parse_args()

    import kafka_harness as kh

    dist = kh.KafkaDist(args.version).ensure()
    cluster = None
    workdir = None
    if args.bootstrap_controller and args.bootstrap_server:
        controllers, brokers = args.bootstrap_controller, args.bootstrap_server
    else:
        workdir = Path(tempfile.mkdtemp(prefix="metashell-latency-"))
        cluster = kh.KafkaCluster(dist, workdir, mode="split", controllers=3, brokers=1)
        print(f"starting Kafka {args.version}: 3 controllers + 1 broker ...", flush=True)
        cluster.start(timeout=300)
        controllers, brokers = cluster.controller_bootstrap, cluster.bootstrap_servers
    try:
        return run(dist, controllers, brokers, args.changes)
    finally:
        if cluster is not None:
            cluster.stop(timeout=30)
            cluster.kill_all()


def run(dist, controllers: str, brokers: str, changes: int) -> int:
    base = int(time.time()) * 1000
    last_value = str(base + changes - 1).encode()
    delays: list[float] = []
    done = threading.Event()

    def on_applied(event: RecordsCommitted, applied_at: float) -> None:
        now_ms = applied_at * 1000
        for cb in event.batches:
            if cb.is_control:
                continue
            for _off, _ts, _key, value in cb.records():
                rec = decode_metadata_record(value)
                d = rec.data
                if rec.name == "ConfigRecord" and d.get("ResourceName") == TOPIC and d.get("Name") == KEY:
                    delays.append(now_ms - cb.max_timestamp)
                    if d.get("Value", "").encode() == last_value:
                        done.set()

    session = LiveSession(
        controllers,
        None,
        lambda m: print(f"warning: {m}", file=sys.stderr),
        auto_apply=True,
        on_applied=on_applied,
    )
    try:
        session.wait_caught_up(120)
        proc = dist.run(
            "kafka-topics",
            "--bootstrap-server",
            brokers,
            "--create",
            "--topic",
            TOPIC,
            "--partitions",
            "1",
            timeout=180,
        )
        if proc.returncode != 0 and "already exists" not in proc.stdout + proc.stderr:
            print(proc.stdout, proc.stderr, file=sys.stderr)
            return 1
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "AlterLoop.java"
            src.write_text(JAVA)
            cmd = dist.java_cmd(str(src), brokers, str(changes), str(base), TOPIC, KEY)
            t0 = time.monotonic()
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
            elapsed = time.monotonic() - t0
        if out.returncode != 0:
            print(out.stdout, out.stderr[-3000:], file=sys.stderr)
            return 1
        if not done.wait(30):
            print(f"only {len(delays)} of {changes} changes arrived", file=sys.stderr)
            return 1
        fetch_version = None
        obs = session.source._observer
        if obs is not None and obs._conn is not None:
            fetch_version = obs._conn.version("Fetch")
    finally:
        session.close()
    values = sorted(delays)
    print(
        f"Kafka {dist.version}: {len(values)} config changes in {elapsed:.1f}s "
        f"({len(values) / elapsed:.0f}/s), Fetch v{fetch_version}"
    )
    print(
        f"commit->image delay (ms, upper bound): p50 {percentile(values, 0.5):.1f}  "
        f"p90 {percentile(values, 0.9):.1f}  p99 {percentile(values, 0.99):.1f}  "
        f"max {values[-1]:.1f}  mean {statistics.fmean(values):.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
