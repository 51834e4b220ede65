#!/usr/bin/env python3
"""Load benchmark: metashell vs Kafka's own metadata shell on a big generated metadata directory.

    python bench/load.py                      # full size: 100k topics x 10 partitions + 1M-record tail
    python bench/load.py --scale 0.1 --no-java   # quick run
    python bench/load.py --help

What it does (see bench/README.md):

1. Generates (once, cached under bench/out/) a realistic ``__cluster_metadata-0`` directory with
   metashell's own encoders (``bench/metagen.py``): a KRaft snapshot holding every topic and
   partition, plus a log tail of controller-style batches after it.
2. Times, each in its own subprocess and for the same files, with wall time and peak RSS
   (``os.wait4`` rusage of that one child, so nothing else on the machine is counted):

   * ``snapshot``: ``python -m metashell --snapshot FILE -c "ls /"`` and Kafka's Java shell
     ``kafka-metadata-shell --snapshot FILE ls /`` on the .checkpoint;
   * ``combined``: the same two on one file holding the snapshot followed by every tail batch (the
     Java shell reads one file only: this is how it gets the directory's full workload);
   * ``directory``: ``python -m metashell -d DIR -c "ls /"`` (snapshot + the log segments, the same
     records as ``combined``), compared with Java on the combined file.

   The Java shell runs with Kafka's own launcher flags (``kafka-run-class.sh``: G1), ``-Xmx4g`` and
   its tools logging (WARN).  With ``--verify`` an extra, untimed Java run per file logs the
   loader at INFO to prove it applied the whole file.
3. Prints a table (scenario, tool, wall s, CPU s, peak RSS MB, ratios metashell/Java) and saves it
   as JSON in bench/out/.

Until ``metashell/__main__.py`` exists the metashell side runs the same loader entry points the CLI
uses (``metashell.image.loader.load_directory`` / ``load_file``) in a fresh interpreter.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "scripts"))

import metagen

DEFAULT_OUT = REPO / "bench" / "out"
SHELL_CLASS = "org.apache.kafka.shell.MetadataShell"
#: KAFKA_JVM_PERFORMANCE_OPTS of kafka-run-class.sh (what `kafka-metadata-shell.sh` runs with).
KAFKA_JVM_OPTS = (
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
)
#: Kafka's tools log config, but with the metadata loader at INFO: its "finished catching up to the
#: current high water mark of N" line proves the Java shell loaded the whole file.
_LOG4J2 = """<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders><Console name="err" target="SYSTEM_ERR"><PatternLayout pattern="[%d] %p %m (%c)%n"/></Console></Appenders>
  <Loggers>
    <Logger name="org.apache.kafka.image.loader.MetadataLoader" level="{loader}"/>
    <Logger name="org.apache.kafka.metadata.util.SnapshotFileReader" level="WARN"/>
    <Root level="WARN"><AppenderRef ref="err"/></Root>
  </Loggers>
</Configuration>
"""
_LOG4J1 = """log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.image.loader.MetadataLoader={loader}
"""

#: Fallback metashell child when there is no CLI yet: the loader calls the CLI makes.
_LOADER_CHILD = """
import sys
from metashell.image.loader import load_directory, load_file
mode, path = sys.argv[1], sys.argv[2]
result = load_directory(path) if mode == "directory" else load_file(path)
print("image\\nlocal")
"""

#: Verification child: load, then print counts and some partitions as JSON.
_VERIFY_CHILD = """
import json, sys
from metashell.image.loader import load_directory, load_file
mode, path, names = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
r = load_directory(path) if mode == "directory" else load_file(path)
img = r.image
parts = []
for name, p in names:
    t = img.topics.by_name.get(name)
    st = None if t is None else t.partitions.get(p)
    parts.append(None if st is None else {"topic": name, "partition": p, "replicas": list(st.replicas),
                 "isr": list(st.isr), "leader": st.leader, "leader_epoch": st.leader_epoch,
                 "partition_epoch": st.partition_epoch})
print(json.dumps({"summary": img.summary(), "faults": r.fault_count,
                  "warnings": [str(w) for w in r.warnings[:5]], "n_warnings": len(r.warnings),
                  "provenance": [img.provenance.offset, img.provenance.epoch], "parts": parts}))
"""


class BenchError(Exception):
    """A one-line failure for the user (printed as ``bench: <message>``, exit 1)."""


@dataclass
class Measurement:
    scenario: str
    tool: str
    command: list[str]
    wall: float
    rss_mb: float
    cpu: float  # user + system seconds of the child (robust to a busy machine, unlike wall)
    returncode: int
    stdout: str
    stderr: str
    note: str = ""


# --------------------------------------------------------------------------------------------------
# measuring one child process


#: Starts the measured command in a child it forks (not vfork), waits for it and writes that child's
#: rusage to the file named first.  Linux carries a process's peak RSS into what it execs (the
#: ``ru_maxrss`` of a command started by ``subprocess`` from a benchmark that read a big file, such
#: as a million-partition Kafka's log, began at the benchmark's own peak: every live figure of one
#: run read 337 MB).  A child forked from this small launcher starts from the launcher's few MB.
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    except OSError as e:
        print(f"{sys.argv[2]}: {e}", file=sys.stderr)
    os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{ru.ru_maxrss} {ru.ru_utime + ru.ru_stime}")
code = os.waitstatus_to_exitcode(status)
os._exit(code if code >= 0 else 128 - code)
"""


def measure(
    scenario: str, tool: str, cmd: list[str], *, timeout: float = 3600, env: dict[str, str] | None = None
) -> Measurement:
    """Run ``cmd`` to completion; wall time and the child's own peak RSS (through
    :data:`_LAUNCHER`, so not the benchmark's)."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r", suffix=".rusage") as usage,
    ):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-S", "-c", _LAUNCHER, usage.name, *cmd],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        try:
            _pid, status, _launcher = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        maxrss_kb, cpu = (usage.read().split() or ["0", "0"])[:2]
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    return Measurement(
        scenario,
        tool,
        cmd,
        wall,
        int(maxrss_kb) / 1024.0,
        float(cpu),
        proc.returncode,
        stdout,
        stderr,
    )


def own_peak_rss_mb() -> float:
    """This process's own peak RSS: its address space's high-water mark (``VmHWM``), not
    ``ru_maxrss``, which starts at the peak of the process that started it (see ``_LAUNCHER``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def warm_page_cache(paths: list[str]) -> None:
    """Read the files once so that neither tool pays for the first (cold) disk read."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(16 << 20):
                pass


# --------------------------------------------------------------------------------------------------
# commands


def metashell_has_cli() -> bool:
    return importlib.util.find_spec("metashell.__main__") is not None


def metashell_cmd(mode: str, path: str, profile: Path | None = None) -> list[str]:
    prefix = [sys.executable]
    if profile is not None:
        prefix += ["-m", "cProfile", "-o", str(profile)]
    if metashell_has_cli():
        flag = "-d" if mode == "directory" else "--snapshot"
        if profile is not None:
            return prefix + [
                str(Path(importlib.util.find_spec("metashell.__main__").origin)),
                flag,
                path,
                "-c",
                "ls /",
            ]
        return prefix + ["-m", "metashell", flag, path, "-c", "ls /"]
    if profile is not None:
        child = DEFAULT_OUT / "_loader_child.py"
        child.write_text(_LOADER_CHILD)
        return prefix + [str(child), mode, path]
    return prefix + ["-c", _LOADER_CHILD, mode, path]


def engines_to_run(asked: str) -> list[str]:
    """The engines of ``--engines`` that this installation has; says which one is missing and why."""
    from metashell.engine import import_native

    engines = [e.strip() for e in asked.split(",") if e.strip()]
    if "native" in engines:
        native, why = import_native()
        if native is None:
            print(f"engine native: not run: {why}", file=sys.stderr)
            engines.remove("native")
        else:
            print(f"engine native: {why}", file=sys.stderr)
    return engines


_FLOOR_CHILD = """
import sys
from pathlib import Path
from crc32c import crc32c
total = 0
for name in sys.argv[1:]:
    data = Path(name).read_bytes()
    total += len(data)
    crc32c(data)
print(total)
"""


def floor_cmd(info: metagen.GenResult) -> list[str]:
    """Reading every file of the directory and CRC32C-checking its bytes: the floor any loader
    stands on (issue 24 measures the native engine against a multiple of it)."""
    meta = Path(info.metadata_dir)
    files = sorted(str(p) for p in meta.iterdir() if p.suffix in (".log", ".checkpoint"))
    return [sys.executable, "-c", _FLOOR_CHILD, *files]


def java_setup(version: str, out: Path, loader_level: str = "WARN") -> tuple[list[str], str]:
    """(java command prefix up to the main class, Kafka version that actually runs the shell).

    ``loader_level`` INFO makes the metadata loader log each batch and, at the end, "finished
    catching up to the current high water mark of N" (verification runs only: it costs time).

    Raises BenchError (one line) when Java or the Kafka jars are not available.
    """
    try:
        from kafka_harness import HarnessError, KafkaDist, java_executable
    except ImportError as e:
        raise BenchError(f"cannot import scripts/kafka_harness.py ({e})") from None
    try:
        dist = KafkaDist(version).ensure()
        dist = dist.dist_for(SHELL_CLASS) if hasattr(dist, "dist_for") else dist
        java = java_executable()
        classpath = dist.classpath
    except (HarnessError, OSError, subprocess.SubprocessError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise BenchError(
            f"Kafka {version} jars are not available ({first}); use --no-java to skip the Java side"
        ) from None
    out.mkdir(parents=True, exist_ok=True)
    if int(dist.version.split(".")[0]) >= 4:
        cfg = out / f"log4j2-bench-{loader_level.lower()}.xml"
        cfg.write_text(_LOG4J2.replace("{loader}", loader_level))
        log_flag = f"-Dlog4j2.configurationFile={cfg}"
    else:
        cfg = out / f"log4j-bench-{loader_level.lower()}.properties"
        cfg.write_text(_LOG4J1.replace("{loader}", loader_level))
        log_flag = f"-Dlog4j.configuration=file:{cfg}"
    return [java, *KAFKA_JVM_OPTS, log_flag, "-cp", classpath, SHELL_CLASS], dist.version


# --------------------------------------------------------------------------------------------------
# verification


def verify(info: metagen.GenResult, mode: str, path: str) -> str:
    """Load with metashell (untimed) and compare counts and sample partitions with the generator's."""
    samples = info.samples_snapshot if mode == "snapshot" else info.samples
    expected = info.expected_snapshot if mode == "snapshot" else info.expected
    names = [[s["topic"], s["partition"]] for s in samples]
    proc = subprocess.run(
        [sys.executable, "-c", _VERIFY_CHILD, mode, path, json.dumps(names)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return f"FAILED: metashell exited {proc.returncode}: {tail}"
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    problems = []
    for k, v in expected.items():
        if got["summary"].get(k) != v:
            problems.append(f"{k}: {got['summary'].get(k)} != expected {v}")
    for want, have in zip(samples, got["parts"], strict=False):
        if want != have:
            problems.append(f"partition {want['topic']}:{want['partition']}: {have} != expected {want}")
    if got["faults"]:
        problems.append(f"{got['faults']} replay fault(s): {got['warnings']}")
    if problems:
        return "FAILED: " + "; ".join(problems[:3])
    return f"ok ({len(samples)} sample partitions and all counts match; {got['n_warnings']} warning(s))"


def java_loaded_all(stderr: str, last_offset: int) -> str:
    """Check the Java loader's own log line that it caught up with the whole file ("" = ok).

    Kafka's one-shot mode runs its command as soon as the loader has caught up, before the image
    reaches the shell's publisher, so on big files its output shows an empty image: the load itself
    is complete, which this line proves.
    """
    marker = "finished catching up to the current high water mark of "
    for line in stderr.splitlines():
        if marker in line:
            hwm = int(line.split(marker, 1)[1].split()[0])
            return "" if hwm >= last_offset else f"Java loaded only up to offset {hwm} of {last_offset}"
    return "could not confirm that the Java shell loaded the whole file"


def combined_file(info: metagen.GenResult, out: Path) -> Path:
    """One file with the snapshot's batches followed by every log batch after its end offset.

    Kafka's shell reads a single file, applying every batch in order (control batches only report
    leader changes), so this gives it the directory's workload; metashell loads it to the same image
    as the directory.  The snapshot's batches are renumbered to end where the log tail begins
    (baseOffset is outside the CRC): a file whose offsets jump inside it is corrupt to metashell.
    """
    from metashell.log.files import iter_file_batches

    path = out / f"{Path(info.root).name}.combined-contiguous.log"
    if path.exists():
        return path
    tmp = path.with_suffix(f".tmp-{os.getpid()}")
    snapshot = list(iter_file_batches(info.snapshot, decode=False))
    offset = info.snapshot_end_offset - sum(b.last_offset_delta + 1 for b in snapshot)
    with open(tmp, "wb") as fh:
        for batch in snapshot:
            fh.write(offset.to_bytes(8, "big") + batch.raw()[8:])
            offset += batch.last_offset_delta + 1
        for seg in info.segments:
            for batch in iter_file_batches(seg, decode=False):
                if batch.base_offset >= info.snapshot_end_offset:
                    fh.write(batch.raw())
    os.replace(tmp, path)
    return path


# --------------------------------------------------------------------------------------------------
# report


SCENARIOS = ("snapshot", "combined", "directory")
REFERENCE = {"snapshot": ("snapshot",), "combined": ("combined",), "directory": ("combined", "snapshot")}
"""The Java line(s) each scenario is compared with, first available wins.  Java cannot read a
directory: its equivalent is the combined file (the same batches in one file), which is slow for
Kafka's shell (a new image per batch), so by default the directory is compared with Java's
snapshot load -- half the records."""


def table(rows: list[tuple[str, Measurement]], java: dict[str, Measurement]) -> str:
    head = (
        f"{'scenario':<40} {'tool':<20} {'wall s':>7} {'CPU s':>7} {'peak RSS MB':>11} {'wall ratio':>10} "
        f"{'RSS ratio':>9}"
    )
    lines = [head, "-" * len(head)]
    for sc, m in rows:
        ref = next((java[k] for k in REFERENCE[sc] if k in java), None)
        if ref is not None and ref.returncode == 0 and m.returncode == 0:
            wr = f"{m.wall / ref.wall:.2f}x"
            rr = f"{m.rss_mb / ref.rss_mb:.2f}x"
        else:
            wr = rr = "-"
        lines.append(
            f"{m.scenario:<40} {m.tool:<20} {m.wall:>7.2f} {m.cpu:>7.2f} {m.rss_mb:>11.0f} {wr:>10} {rr:>9}"
        )
    if "combined" in java:
        lines.append(
            "ratios: metashell / Kafka's Java shell on the same records (snapshot: the .checkpoint; "
            "combined file and directory: Java on the combined file)"
        )
    else:
        lines.append(
            "ratios: metashell / Kafka's Java shell on the snapshot file (Java cannot read a directory; "
            "the directory line has the log tail on top: see --combined)"
        )
    return "\n".join(lines)


def _git_head() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return ""


def _count(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 100_000 else f"{n / 1e3:.0f}k" if n >= 10_000 else f"{n:,}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--topics", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=10, help="partitions per topic (default 10)")
    ap.add_argument("--tail-records", type=int, default=1_000_000, help="log records after the snapshot")
    ap.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply --topics and --tail-records (e.g. 0.1 for a quick run)",
    )
    ap.add_argument("--seed", type=int, default=metagen.GenParams.seed)
    ap.add_argument("--segment-mb", type=int, default=16, help="log segment size (MiB)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="cache for generated data and results")
    ap.add_argument("--regenerate", action="store_true", help="rebuild the cached directory")
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--no-java", action="store_true", help="skip Kafka's Java shell")
    ap.add_argument("--kafka-version", default="4.4.0")
    ap.add_argument("--java-heap", default="4g", help="-Xmx for the Java shell (default 4g)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per line, interleaved; the fastest wall (and CPU) and the highest RSS are reported",
    )
    ap.add_argument(
        "--only",
        choices=SCENARIOS,
        action="append",
        help="run only this scenario (repeatable; default: snapshot and directory)",
    )
    ap.add_argument(
        "--combined",
        action="store_true",
        help="also run the combined-file scenario (Kafka's shell needs ~6 min for it at full size)",
    )
    ap.add_argument(
        "--verify",
        action="store_true",
        help="also check metashell's image against the generator's counts and sample partitions",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="run the metashell side under cProfile (slower) and print the top functions",
    )
    ap.add_argument(
        "--engines",
        default="python,native",
        help="metashell engines to run side by side (METASHELL_ENGINE; default python,native; the "
        "native one only where it is built)",
    )
    ap.add_argument("--json", type=Path, help="write results here (default bench/out/results-<time>.json)")
    args = ap.parse_args(argv)

    params = metagen.GenParams(
        topics=max(1, round(args.topics * args.scale)),
        partitions=args.partitions,
        tail_records=max(0, round(args.tail_records * args.scale)),
        overlap_records=max(100, round(5000 * args.scale)),
        segment_bytes=args.segment_mb << 20,
        seed=args.seed,
    )
    try:
        java_prefix: list[str] = []
        java_version = ""
        if not args.no_java and not args.generate_only:
            java_prefix, java_version = java_setup(args.kafka_version, args.out)
        info = metagen.ensure(
            params,
            args.out,
            regenerate=args.regenerate,
            log=lambda msg: print(msg, file=sys.stderr, flush=True),
        )
    except BenchError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    parts = info.expected_snapshot["partitions"]
    print(
        f"data: {info.root}\n  snapshot {Path(info.snapshot).name}: {info.snapshot_records:,} records, "
        f"{info.snapshot_bytes / 2**20:.0f} MiB, {parts:,} partitions in {info.expected_snapshot['topics']:,} "
        f"topics\n  log: {len(info.segments)} segment(s), {info.log_bytes / 2**20:.0f} MiB, "
        f"{info.tail_records:,} records in {info.tail_batches:,} batches after the snapshot "
        f"(generated in {info.seconds:.0f} s)",
        flush=True,
    )
    if args.generate_only:
        return 0

    wanted = set(args.only or ("snapshot", "directory")) | ({"combined"} if args.combined else set())
    scenarios = [sc for sc in SCENARIOS if sc in wanted]
    combined = str(combined_file(info, args.out)) if "combined" in scenarios else ""
    paths = {"snapshot": info.snapshot, "combined": combined, "directory": info.root}
    load_before = os.getloadavg()
    warm_page_cache([info.snapshot, *info.segments, *([combined] if combined else [])])
    if args.verify:
        for sc in scenarios:
            print(f"verify {sc}: {verify(info, sc, paths[sc])}", flush=True)

    last_offsets = {"snapshot": info.snapshot_records + 3, "combined": info.last_offset}
    labels = {
        "snapshot": f"snapshot file ({_count(parts)} partitions)",
        "combined": f"snapshot + {_count(info.tail_records)} tail, one file",
        "directory": f"directory (snapshot + {_count(info.tail_records)} tail)",
    }
    rows: list[tuple[str, Measurement]] = []
    java: dict[str, Measurement] = {}

    if args.verify and java_prefix:
        for sc in (s for s in scenarios if s in last_offsets):
            vprefix, _ = java_setup(args.kafka_version, args.out, loader_level="INFO")
            cmd = [vprefix[0], f"-Xmx{args.java_heap}", *vprefix[1:], "--snapshot", paths[sc], "ls", "/"]
            vm = measure(sc, "java-verify", cmd)
            problem = (
                java_loaded_all(vm.stderr, last_offsets[sc])
                if vm.returncode == 0
                else f"exit {vm.returncode}"
            )
            print(
                f"verify {sc} (Kafka's shell): {problem or 'ok (its loader applied the whole file)'}",
                flush=True,
            )

    # The lines to run: (scenario, tool, command); repeats are interleaved (round-robin) so that
    # load from other users of the machine spreads over all lines alike.
    tool_ms = "metashell" + ("" if metashell_has_cli() else " (loader)")
    java_tool = f"kafka {java_version} (java)"
    lines: list[tuple[str, str, list[str]]] = []
    envs: dict[int, dict[str, str]] = {}
    engines = engines_to_run(args.engines)
    for sc in scenarios:
        if sc in last_offsets and java_prefix:
            cmd = [
                java_prefix[0],
                f"-Xmx{args.java_heap}",
                *java_prefix[1:],
                "--snapshot",
                paths[sc],
                "ls",
                "/",
            ]
            lines.append((sc, java_tool, cmd))
        for engine in engines:
            lines.append((sc, f"{tool_ms} {engine}", metashell_cmd(sc, paths[sc])))
            envs[len(lines) - 1] = {**os.environ, "METASHELL_ENGINE": engine}
        if sc == "directory":
            lines.append((sc, "floor: read + CRC32C", floor_cmd(info)))
    runs: dict[int, list[Measurement]] = {i: [] for i in range(len(lines))}
    for r in range(args.repeat):
        for i, (sc, tool, cmd) in enumerate(lines):
            if runs[i] and runs[i][-1].returncode != 0:
                continue
            print(
                f"  running {tool} ({labels[sc]}){f' #{r + 1}' if args.repeat > 1 else ''} ...",
                file=sys.stderr,
                flush=True,
            )
            runs[i].append(measure(labels[sc], tool, cmd, env=envs.get(i)))
    for i, (sc, tool, _cmd) in enumerate(lines):
        m = min(runs[i], key=lambda x: (x.returncode != 0, x.wall))  # fastest run: least disturbed
        m.rss_mb = max(x.rss_mb for x in runs[i] if x.returncode == m.returncode)
        m.cpu = min(x.cpu for x in runs[i] if x.returncode == m.returncode)
        if m.returncode != 0:
            tail = (m.stderr.strip().splitlines() or ["(no output)"])[-1]
            m.note = f"exit {m.returncode}: {tail}"
        elif tool == java_tool:
            java[sc] = m
        rows.append((sc, m))
    profiles: list[Path] = []
    if args.profile:
        for sc in scenarios:
            prof = args.out / f"profile-{sc}.prof"
            print(f"  profiling metashell ({sc}) ...", file=sys.stderr, flush=True)
            pm = measure(sc, "profile", metashell_cmd(sc, paths[sc], prof))
            if pm.returncode == 0:
                profiles.append(prof)

    print()
    load_after = os.getloadavg()
    print(
        f"{_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, load average {load_before[0]:.1f} before / {load_after[0]:.1f} after"
        f" (a busy machine inflates wall times; CPU s = user+sys of the child)"
    )
    print(table(rows, java))
    for _sc, m in rows:
        if m.note:
            print(f"note: {m.tool} / {m.scenario}: {m.note}")
    for prof in profiles:
        import pstats

        print(f"\n== cProfile top 25 by own time: {prof}")
        pstats.Stats(str(prof)).sort_stats("tottime").print_stats(25)

    results = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_before": load_before[0],
            "loadavg_after": load_after[0],
        },
        "commit": _git_head(),
        "params": asdict(params),
        "java_heap": args.java_heap,
        "kafka_shell_version": java_version,
        "data": {
            "snapshot_records": info.snapshot_records,
            "snapshot_bytes": info.snapshot_bytes,
            "tail_records": info.tail_records,
            "tail_batches": info.tail_batches,
            "log_bytes": info.log_bytes,
            "segments": len(info.segments),
        },
        "rows": [
            {"key": sc, **{k: v for k, v in asdict(m).items() if k not in ("stdout", "stderr")}}
            for sc, m in rows
        ],
    }
    dest = args.json or args.out / f"results-{time.strftime('%Y%m%d-%H%M%S')}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nresults: {dest}")
    return 0 if all(m.returncode == 0 for _sc, m in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
