#!/usr/bin/env python3
"""Live mode against a real controller holding a million partitions (issue 58), beside the offline
load of the same metadata, on both engines, in one run.

How the controller gets a million partitions, really and repeatably: ``bench/metagen.py`` writes its
1M-partition directory in *boot* shape (a static quorum, so no KRaft voters in the snapshot; broker
ids from 1001; every one of those brokers fenced by the last batch, so the booting controller has
nothing to fence and places nothing on brokers that are not there), the harness formats a real
cluster (Kafka 4.4: one controller, one broker) with that directory's cluster id, the generated
``__cluster_metadata-0`` replaces the controller's, and the controller boots on it: it recovers the
segments, loads the snapshot, replays the 1M-record tail, wins its election and serves the log.
The broker (id 2, hosting none of those partitions) fetches it all like any broker.

Then, per engine, each in a fresh process (its peak RSS its own):

* **offline**: ``metashell -d <the controller's directory> health`` with the cluster stopped (the
  files the live session will be served);
* **live first answer**: ``metashell -q <controller> health`` with the cluster up: connect, fetch
  the snapshot and the log up to the high watermark, answer;
* **lag under load**: a live session catches up, then Kafka's own AdminClient creates topics of 10
  partitions (replication 1, on the broker) at ``--rate`` partitions a second for ``--seconds``;
  for every batch that creates a topic, the delay from its MaxTimestamp (when the active controller
  built the batch, before it committed: an upper bound) to the moment the session applied it.

The network copy alone (``FetchSnapshot`` of the snapshot's bytes, no decode) is measured apart.

    python bench/live_million.py                  # 1M partitions (100k topics x 10), both engines
    python bench/live_million.py --scale 0.05     # 50k partitions, a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "scripts"))

import metagen
from load import measure, own_peak_rss_mb

JAVA = r"""
import java.util.*;
import org.apache.kafka.clients.admin.*;

public class CreateLoop {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        int rate = Integer.parseInt(args[1]);       // partitions a second
        double seconds = Double.parseDouble(args[2]);
        String prefix = args[3];
        int perTopic = 10, perTick = Math.max(1, rate / perTopic / 10);  // 10 ticks a second
        long start = System.nanoTime();
        int topics = 0;
        try (Admin admin = Admin.create(p)) {
            for (int tick = 0; tick < seconds * 10; tick++) {
                long due = start + tick * 100_000_000L;
                long wait = due - System.nanoTime();
                if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                List<NewTopic> batch = new ArrayList<>();
                for (int i = 0; i < perTick; i++)
                    batch.add(new NewTopic(String.format("%s-%07d", prefix, topics++), perTopic, (short) 1));
                admin.createTopics(batch).all().get();
            }
        }
        double took = (System.nanoTime() - start) / 1e9;
        System.out.println(topics + " " + took);
    }
}
"""


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


#: The JVM flags ``kafka-run-class.sh`` gives a server by default (its KAFKA_JVM_PERFORMANCE_OPTS),
#: in place of the harness's start-up flags (serial GC, C1 only: quick for tests, not how anyone
#: runs a controller holding a million partitions, and the suspected cause of the lag runs' rare
#: outliers of about a second).  Each node also logs its collections (``gc-PID.log`` in the work
#: directory): the lag runs report the controller's longest pause beside the lag.
KAFKA_SERVER_JVM = (
    "-XX:-UseSerialGC",
    "-XX:TieredStopAtLevel=4",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
)

_PAUSE = re.compile(r"Pause .* (\d+(?:\.\d+)?)ms$")


def gc_pauses(log: Path, start: int) -> tuple[list[float], int]:
    """The pauses (ms) a node's GC log records from byte ``start``, and where it ends now."""
    with open(log, "rb") as f:
        f.seek(start)
        text = f.read()
    pauses = [
        float(m.group(1)) for line in text.decode(errors="replace").splitlines() if (m := _PAUSE.search(line))
    ]
    return pauses, start + len(text)


def boot_cluster(dist, gen: metagen.GenResult, work: Path, heap: str):
    """A real cluster (1 controller, 1 broker) formatted with the generated directory's cluster id,
    the controller's metadata log replaced by the generated one (copied: Kafka appends to it),
    its JVMs run as Kafka's own scripts run them (:data:`KAFKA_SERVER_JVM`)."""
    import kafka_harness as kh

    props = dict(
        line.split("=", 1)
        for line in Path(gen.root, "meta.properties").read_text().splitlines()
        if "=" in line
    )
    overrides = {
        "auto.leader.rebalance.enable": False,  # the generated brokers are gone: nothing to balance
        "broker.session.timeout.ms": 60_000,
    }
    cluster = kh.KafkaCluster(
        dist,
        work,
        mode="split",
        controllers=1,
        brokers=1,
        cluster_id=props["cluster.id"].strip(),
        heap=heap,
        jvm_args=(*KAFKA_SERVER_JVM, f"-Xlog:gc:file={work}/gc-%p.log:uptime"),
        controller_overrides=overrides,
        broker_overrides=overrides,
    )
    cluster.format()
    controller = cluster.controllers[0]
    shutil.rmtree(controller.metadata_dir, ignore_errors=True)
    shutil.copytree(Path(gen.metadata_dir), controller.metadata_dir)
    return cluster


def lag_child(controllers: str, brokers: str, rate: int, seconds: float, prefix: str) -> dict:
    """In its own process: a live session caught up, then the load; delays per created topic."""
    import kafka_harness as kh

    from metashell.engine import current
    from metashell.image.live_feed import LiveSession
    from metashell.live.events import RecordsCommitted
    from metashell.protocol.metadata import decode_metadata_record

    dist = kh.KafkaDist(os.environ.get("BENCH_KAFKA", kh.DEFAULT_VERSION)).ensure()
    #: per topic, the part of its delay before the Fetch response that committed it arrived (the
    #: controller's and the network's) and the part after (metashell's)
    parts: list[tuple[float, float]] = []
    created = 0
    lock = threading.Lock()

    armed = threading.Event()  # not during the catch-up: decoding it here would slow it down

    def on_applied(event: RecordsCommitted, applied_at: float) -> None:
        nonlocal created
        if not armed.is_set():
            return
        now_ms = applied_at * 1000
        for cb in event.batches:
            if cb.is_control:
                continue
            for _off, _ts, _key, value in cb.records():
                rec = decode_metadata_record(value)
                if rec.name == "TopicRecord" and str(rec.data.get("Name", "")).startswith(prefix):
                    with lock:
                        arrived_ms = event.received_at * 1000
                        parts.append((arrived_ms - cb.max_timestamp, now_ms - arrived_ms))
                        created += 1

    t0 = time.perf_counter()
    session = LiveSession(
        controllers,
        None,
        lambda m: print(f"warning: {m}", file=sys.stderr),
        auto_apply=True,
        on_applied=on_applied,
    )
    try:
        session.wait_caught_up(600)
        caught_up = time.perf_counter() - t0
        armed.set()
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "CreateLoop.java"
            src.write_text(JAVA)
            cmd = dist.java_cmd(str(src), brokers, str(rate), str(seconds), prefix)
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
        if out.returncode != 0:
            sys.exit(f"the load failed:\n{out.stdout}\n{out.stderr[-3000:]}")
        topics, took = out.stdout.split()[-2:]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with lock:
                if created >= int(topics):
                    break
            time.sleep(0.05)
    finally:
        session.close()

    delays = [sum(p) for p in parts]
    return {
        "engine": current().describe(),
        "caught_up_s": caught_up,
        "topics": int(topics),
        "partitions_per_s": int(topics) * 10 / float(took),
        "seen": created,
        "p50_ms": percentile(delays, 0.5),
        "p99_ms": percentile(delays, 0.99),
        "max_ms": max(delays) if delays else float("nan"),
        # the slowest topic's delay split: until its commit reached the session, then to the image
        "max_split_ms": list(max(parts, key=sum)) if parts else [],
        "metashell_max_ms": max((m for _k, m in parts), default=float("nan")),
        "mean_ms": statistics.fmean(delays) if delays else float("nan"),
        "rss_mb": own_peak_rss_mb(),
    }


def copy_child(controllers: str) -> dict:
    """In its own process: the live client alone, its events dropped: the snapshot and the log
    fetched and checked on arrival (framing, CRCs, records), nothing applied: the network copy."""
    from metashell.live import LiveSource
    from metashell.live.events import SnapshotLoaded, StatusChanged

    done = threading.Event()
    sizes = {"snapshot_bytes": 0}

    def sink(event: object) -> None:
        if isinstance(event, SnapshotLoaded):
            sizes["snapshot_bytes"] = event.size
            event.close()
        elif isinstance(event, StatusChanged) and event.status.state == "streaming":
            done.set()

    t0 = time.perf_counter()
    source = LiveSource(controllers)
    source.start(sink)
    try:
        if not done.wait(600):
            sys.exit("the copy never caught up")
        took = time.perf_counter() - t0
    finally:
        source.stop()
    return {"s": took, "rss_mb": own_peak_rss_mb(), **sizes}


#: The first answer: the image alone (``pwd``) and ``health`` (which reads every partition, and with
#: a log its causes), one-shot (no journal) and as an interactive session has them, with the journal
#: ``at`` and ``diff`` go back along and the records ``log`` and ``history`` read (``at`` first: it
#: travels).
ANSWERS = {
    "pwd": ["pwd"],
    "pwd, journal": ["-c", "at; pwd"],
    "health": ["health"],
    "health, journal": ["-c", "at; health"],
}


def run_metashell(engine: str, args: list[str], answer: str = "one-shot") -> dict:
    env = {**os.environ, "METASHELL_ENGINE": engine}
    cmd = [sys.executable, "-m", "metashell", *args, *ANSWERS[answer]]
    m = measure("live-million", "metashell", cmd, env=env)
    if m.returncode not in (0, 1) or "Traceback" in m.stderr:
        sys.exit(f"metashell {' '.join(args)} failed ({m.returncode}):\n{m.stderr[-3000:]}")
    return {"s": m.wall, "rss_mb": m.rss_mb, "first_line": m.stdout.splitlines()[0] if m.stdout else ""}


def main() -> int:
    ap = argparse.ArgumentParser(prog="bench/live_million.py", description=__doc__.split("\n\n")[0])
    metagen.add_size_arguments(ap)
    ap.add_argument("--engines", default="python,native")
    ap.add_argument("--version", default=None, help="Kafka version (default: the harness's)")
    ap.add_argument("--rate", type=int, default=1000, help="partitions created a second under load")
    ap.add_argument("--seconds", type=float, default=20.0, help="how long the load runs")
    ap.add_argument("--repeat", type=int, default=3, help="offline and first-answer runs; the fastest counts")
    ap.add_argument("--heap", default="4g", help="each Kafka node's heap")
    ap.add_argument("--child-lag", help=argparse.SUPPRESS)
    ap.add_argument("--child-copy", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_copy:
        print(json.dumps(copy_child(args.child_copy)))
        return 0
    if args.child_lag:
        print(json.dumps(lag_child(*json.loads(args.child_lag))))
        return 0

    import kafka_harness as kh

    version = args.version or kh.DEFAULT_VERSION
    params = metagen.params_from(args)
    params.boot = True
    gen = metagen.ensure(params, args.out)
    print(metagen.machine_line(f"Kafka {version}, {gen.expected['partitions']:,} partitions"), flush=True)
    dist = kh.KafkaDist(version).ensure()
    work = Path(tempfile.mkdtemp(prefix="metashell-million-"))
    results: dict = {"partitions": gen.expected["partitions"], "kafka": version}
    cluster = boot_cluster(dist, gen, work, args.heap)
    finished = False
    try:
        t = time.perf_counter()
        cluster.start(timeout=1800)
        results["kafka_boot_s"] = time.perf_counter() - t
        print(f"  Kafka booted on the generated directory in {results['kafka_boot_s']:.1f} s", flush=True)
        controller = cluster.controllers[0]
        cluster.stop(timeout=300)
        for engine in args.engines.split(","):
            for answer in ANSWERS:
                where = ["-d", str(controller.metadata_dir)]
                runs = [run_metashell(engine, where, answer) for _ in range(args.repeat)]
                results.setdefault(engine, {})[f"offline {answer}"] = min(runs, key=lambda r: r["s"])
        t = time.perf_counter()
        cluster.start(timeout=1800)
        results["kafka_restart_s"] = time.perf_counter() - t
        copies = []
        for _ in range(args.repeat):
            done = subprocess.run(
                [sys.executable, __file__, "--child-copy", cluster.controller_bootstrap],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                sys.exit(f"the network copy failed:\n{done.stderr[-3000:]}")
            copies.append(json.loads(done.stdout.strip().splitlines()[-1]))
        results["copy"] = copy = min(copies, key=lambda r: r["s"])
        print(
            f"  network copy (fetched and checked, nothing applied): {copy['s']:.2f} s, "
            f"snapshot {copy['snapshot_bytes'] / 1e6:.0f} MB, peak {copy['rss_mb']:.0f} MB",
            flush=True,
        )
        for engine in args.engines.split(","):
            for answer in ANSWERS:
                where = ["-q", cluster.controller_bootstrap]
                runs = [run_metashell(engine, where, answer) for _ in range(args.repeat)]
                live = results[engine][f"live {answer}"] = min(runs, key=lambda r: r["s"])
                offline = results[engine][f"offline {answer}"]
                bound = 1.5 * offline["s"] + copy["s"]  # issue 58: 1.5x the offline load, plus the copy
                print(
                    f"  {engine:<7} {answer:<15} offline {offline['s']:6.2f} s {offline['rss_mb']:6.0f} MB | "
                    f"live {live['s']:6.2f} s {live['rss_mb']:6.0f} MB | "
                    f"{live['s'] / offline['s']:.2f}x time ({'within' if live['s'] <= bound else 'OVER'} "
                    f"1.5x + copy = {bound:.2f} s), {live['rss_mb'] / offline['rss_mb']:.2f}x memory",
                    flush=True,
                )
        controller_gc = work / f"gc-{cluster.controllers[0].pid}.log"
        gc_at = controller_gc.stat().st_size  # the pauses before the lag runs are not theirs
        for engine in args.engines.split(","):
            spec = json.dumps(
                [
                    cluster.controller_bootstrap,
                    cluster.bootstrap_servers,
                    args.rate,
                    args.seconds,
                    f"load-{engine}",
                ]
            )
            env = {**os.environ, "METASHELL_ENGINE": engine, "BENCH_KAFKA": version}
            done = subprocess.run(
                [sys.executable, __file__, "--child-lag", spec],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            if done.returncode != 0:
                sys.exit(f"lag on the {engine} engine failed:\n{done.stderr[-3000:]}")
            lag = json.loads(done.stdout.strip().splitlines()[-1])
            pauses, gc_at = gc_pauses(controller_gc, gc_at)
            lag["controller_gc_pauses"] = len(pauses)
            lag["controller_gc_max_ms"] = max(pauses, default=0.0)
            results[engine]["lag"] = lag
            print(
                f"  {engine:<7} under load: {lag['partitions_per_s']:.0f} partitions/s created, "
                f"{lag['seen']}/{lag['topics']} topics seen; commit->image p50 {lag['p50_ms']:.0f} ms, "
                f"p99 {lag['p99_ms']:.0f} ms, max {lag['max_ms']:.0f} ms (of which "
                f"{(lag['max_split_ms'] or [float('nan')])[0]:.0f} ms before its commit reached the session); metashell's own "
                f"part at most {lag['metashell_max_ms']:.0f} ms; session peak {lag['rss_mb']:.0f} MB; "
                f"the controller paused {lag['controller_gc_pauses']} times for GC meanwhile, "
                f"the longest {lag['controller_gc_max_ms']:.0f} ms",
                flush=True,
            )
        finished = True
    finally:
        cluster.stop(timeout=120)
        cluster.kill_all()
        if finished:
            shutil.rmtree(work, ignore_errors=True)
        else:  # the nodes' logs and GC logs say what went wrong (a broker died in one lag run)
            print(f"kept {work}: the cluster's logs", file=sys.stderr, flush=True)
    metagen.save_results(args.out, "live_million", results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
