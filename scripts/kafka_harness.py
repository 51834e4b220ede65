#!/usr/bin/env python3
"""Real Apache Kafka for tests and fixtures: fetch it from Maven Central, run KRaft nodes on 127.0.0.1.

Why this exists: metashell must agree with what *real* Kafka writes and prints.  Instead of a
tarball download (not on Maven Central) we let Maven resolve the server jars and every runtime
dependency from a tiny generated pom, cache them outside the repository, and start the JVMs
ourselves with a minimal classpath, small heaps and quiet logging.

The code lives in the ``harness`` package beside this file, one module per concern:
``common`` (versions, errors, process helpers), ``resolve`` (Maven, the lock in
``scripts/kafka-locks/``), ``rebuild`` (recompiling a substituted kafka-shell), ``dist`` (the cached
jars, running tools), ``tls`` (test certificates) and ``cluster`` (nodes and clusters).  This module
re-exports their API and is the CLI.

Importable API (other scripts and tests code against these names)::

    dist = KafkaDist("4.4.0"); dist.ensure()          # dist.classpath, dist.version
    dist.run("kafka.tools.DumpLogSegments", "--files", f, timeout=60)
    with KafkaCluster(dist, workdir, mode="combined") as cluster:
        cluster.start()
        cluster.admin("kafka-topics", "--bootstrap-server", cluster.bootstrap_servers,
                      "--create", "--topic", "t")

CLI::

    python scripts/kafka_harness.py fetch 4.4.0 3.9.2      # into the cache, from the locks
    python scripts/kafka_harness.py lock 4.4.0             # resolve afresh, rewrite the lock
    python scripts/kafka_harness.py start --mode split --security ssl --version 3.9.2 --dir /tmp/k

Versions: 3.9.2 and 4.3.1 are complete on Maven Central.  4.4.0 is only partly published there
(no kafka-shell): the dist takes that module from 4.3.1 (``info["substitutes"]``) and recompiles
its sources against the 4.4.0 jars so the metadata-shell oracle reads 4.4 metadata
(``info["rebuilt"]``).  ``dist.describe_jars()`` says what ran; ``dist.tool_version(tool)`` which
release's jars run a tool.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.cluster import READY_MARKER, KafkaCluster, KafkaNode, track_live
from harness.common import (
    DEFAULT_VERSION,
    JVM_FLAGS,
    SASL_PASSWORD,
    SASL_USER,
    SCALA_VERSION,
    SERVER_HEAP,
    SUPPORTED_VERSIONS,
    TOOL_HEAP,
    HarnessError,
    KafkaUnavailable,
    cache_root,
    check_java,
    free_ports,
    java_executable,
    random_kafka_uuid,
    tail,
    write_properties,
)
from harness.dist import CACHE_LAYOUT, TOOL_CLASSES, KafkaDist
from harness.rebuild import find_javac
from harness.resolve import MAVEN_CENTRAL, lock_path, repository_url, write_lock
from harness.tls import make_tls_material

__all__ = [
    "CACHE_LAYOUT",
    "DEFAULT_VERSION",
    "JVM_FLAGS",
    "MAVEN_CENTRAL",
    "READY_MARKER",
    "SASL_PASSWORD",
    "SASL_USER",
    "SCALA_VERSION",
    "SERVER_HEAP",
    "SUPPORTED_VERSIONS",
    "TOOL_CLASSES",
    "TOOL_HEAP",
    "HarnessError",
    "KafkaCluster",
    "KafkaDist",
    "KafkaNode",
    "KafkaUnavailable",
    "cache_root",
    "check_java",
    "find_javac",
    "free_ports",
    "java_executable",
    "lock_path",
    "make_tls_material",
    "random_kafka_uuid",
    "repository_url",
    "tail",
    "track_live",
    "write_properties",
]


def _cli_fetch(args: argparse.Namespace) -> int:
    for version in args.versions or [DEFAULT_VERSION]:
        dist = KafkaDist(version)
        was_ready = dist.is_ready()
        dist.ensure()
        info = dist.info
        how = "cached" if was_ready else f"downloaded in {info['download_seconds']}s"
        print(
            f"{dist.describe_jars()}: {len(info['jars'])} jars, {info['bytes'] / 1e6:.1f} MB in {dist.dir} "
            f"({how})"
        )
    return 0


def _cli_start(args: argparse.Namespace) -> int:
    dist = KafkaDist(args.version).ensure()
    workdir = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="metashell-kafka-"))
    overrides = dict(kv.split("=", 1) for kv in args.set or [])
    cluster = KafkaCluster(
        dist,
        workdir,
        mode=args.mode,
        security=args.security,
        controllers=args.controllers,
        brokers=args.brokers,
        broker_overrides=overrides,
        controller_overrides=overrides,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with cluster:
        cluster.start(timeout=args.timeout)
        cluster.client_config_file(workdir / "controller-client.properties", "controller")
        print(cluster.describe())
        print(f"started in {cluster.start_seconds}s; Ctrl-C to stop", flush=True)
        try:
            while not stop.is_set():
                for n in cluster.nodes:
                    if n.process is not None and not n.is_running():
                        print(f"node {n.node_id} exited ({n.process.returncode}); see {n.log_path}")
                        n.process = None
                stop.wait(1)
        except KeyboardInterrupt:
            pass
        print("stopping...", flush=True)
    return 0


def _cli_lock(args: argparse.Namespace) -> int:
    """Resolve each version afresh (ignoring its lock) and write the lock; the cache is untouched."""
    for version in args.versions or list(SUPPORTED_VERSIONS):
        with tempfile.TemporaryDirectory(prefix="metashell-lock-") as tmp:
            dist = KafkaDist(version, Path(tmp))
            dist.ensure(use_lock=False)
            assert dist.resolution is not None
            path = write_lock(dist.resolution)
            print(f"{path}: {len(dist.resolution.artifacts)} artifacts; {dist.describe_jars()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download Kafka jars into the cache")
    f.add_argument("versions", nargs="*", help=f"versions (default {DEFAULT_VERSION})")
    lk = sub.add_parser("lock", help="resolve afresh and rewrite scripts/kafka-locks/VERSION.json")
    lk.add_argument("versions", nargs="*", help=f"versions (default: {' '.join(SUPPORTED_VERSIONS)})")
    s = sub.add_parser("start", help="start a cluster and run until Ctrl-C")
    s.add_argument("--version", default=DEFAULT_VERSION)
    s.add_argument("--mode", choices=("combined", "split"), default="combined")
    s.add_argument("--security", choices=("plaintext", "sasl_scram", "ssl"), default="plaintext")
    s.add_argument("--controllers", type=int)
    s.add_argument("--brokers", type=int)
    s.add_argument("--dir", help="work dir (default: a new temp dir)")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="extra server property")
    s.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args(argv)
    try:
        return {"fetch": _cli_fetch, "lock": _cli_lock, "start": _cli_start}[args.cmd](args)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
