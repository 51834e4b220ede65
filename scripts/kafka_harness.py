#!/usr/bin/env python3
"""Real Apache Kafka for tests and fixtures: fetch it from Maven Central, run KRaft nodes on 127.0.0.1.

Why this exists: metashell must agree with what *real* Kafka writes and prints.  Instead of a
tarball download (not on Maven Central) we let Maven resolve the server jars and every runtime
dependency from a tiny generated pom, cache them outside the repository, and start the JVMs
ourselves with a minimal classpath, small heaps and quiet logging.

Importable API (other scripts and tests code against these names)::

    dist = KafkaDist("4.4.0"); dist.ensure()          # dist.classpath, dist.version
    dist.run("kafka.tools.DumpLogSegments", "--files", f, timeout=60)
    with KafkaCluster(dist, workdir, mode="combined") as cluster:
        cluster.start()
        cluster.admin("kafka-topics", "--bootstrap-server", cluster.bootstrap_servers,
                      "--create", "--topic", "t")

CLI::

    python scripts/kafka_harness.py fetch 4.4.0 3.9.2
    python scripts/kafka_harness.py start --mode split --security ssl --version 3.9.2 --dir /tmp/k

Versions: 3.9.2 and 4.3.1 are complete on Maven Central.  4.4.0 is only partly published there
(kafka_2.13 and the server modules, but no kafka-tools / kafka-shell / kafka-tools-api): the dist
then uses those modules from 4.3.1 (``info["substitutes"]``), recompiles kafka-shell's 4.3.1
sources against the 4.4.0 jars so the metadata-shell oracle reads 4.4 metadata
(``info["rebuilt"]``), and runs the admin tools and DumpLogSegments from the complete 4.3.1
release (they talk to the 4.4.0 cluster over the wire).  ``dist.tool_version(tool)`` says which.

Layout of a cluster work dir: ``node-<id>/{server.properties,server.log,format.log,metadata/,data/}``
where ``metadata/`` is the metadata log dir (meta.properties + ``__cluster_metadata-0``) and
``data/`` holds topic partitions (brokers only); ``tls/`` holds the CA and certs in ``ssl`` mode.
"""

from __future__ import annotations

import argparse
import atexit
import base64
import contextlib
import ctypes
import datetime as _dt
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Self

SUPPORTED_VERSIONS: tuple[str, ...] = ("3.9.2", "4.3.1", "4.4.0")
DEFAULT_VERSION = "4.4.0"
SCALA_VERSION = "2.13"

#: Credentials of the SCRAM/PLAIN admin user created at format time in ``sasl_scram`` mode.
SASL_USER = "admin"
SASL_PASSWORD = "admin-secret"

#: JVM flags for servers and tools: the machine is small, start-up speed matters more than peak
#: throughput (C1 only, serial GC).
JVM_FLAGS: tuple[str, ...] = (
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
    "-Djava.awt.headless=true",
    "-Djava.net.preferIPv4Stack=true",
)
SERVER_HEAP = "384m"
TOOL_HEAP = "256m"

#: Kafka CLI script name -> candidate main classes (first one present in the jars wins).  Kafka
#: moved most commands from Scala ``kafka.admin`` to Java ``org.apache.kafka.tools`` between 3.x and
#: 4.x, so we resolve by looking inside the jars instead of hard-coding a version table.
TOOL_CLASSES: dict[str, tuple[str, ...]] = {
    "kafka-topics": ("org.apache.kafka.tools.TopicCommand", "kafka.admin.TopicCommand"),
    "kafka-configs": ("org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand"),
    "kafka-acls": ("org.apache.kafka.tools.AclCommand", "kafka.admin.AclCommand"),
    "kafka-features": ("org.apache.kafka.tools.FeatureCommand", "kafka.admin.FeatureCommand"),
    "kafka-reassign-partitions": (
        "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
        "kafka.admin.ReassignPartitionsCommand",
    ),
    "kafka-delegation-tokens": (
        "org.apache.kafka.tools.DelegationTokenCommand",
        "kafka.admin.DelegationTokenCommand",
    ),
    "kafka-metadata-quorum": ("org.apache.kafka.tools.MetadataQuorumCommand",),
    "kafka-leader-election": (
        "org.apache.kafka.tools.LeaderElectionCommand",
        "kafka.admin.LeaderElectionCommand",
    ),
    "kafka-cluster": ("org.apache.kafka.tools.ClusterTool", "kafka.tools.ClusterTool"),
    "kafka-storage": ("kafka.tools.StorageTool", "org.apache.kafka.tools.StorageTool"),
    "kafka-metadata-shell": ("org.apache.kafka.shell.MetadataShell",),
    "kafka-dump-log": ("kafka.tools.DumpLogSegments", "org.apache.kafka.tools.DumpLogSegments"),
    "kafka-broker-api-versions": (
        "org.apache.kafka.tools.BrokerApiVersionsCommand",
        "kafka.admin.BrokerApiVersionsCommand",
    ),
    "kafka-log-dirs": ("org.apache.kafka.tools.LogDirsCommand", "kafka.admin.LogDirsCommand"),
    "kafka-console-producer": ("org.apache.kafka.tools.ConsoleProducer", "kafka.tools.ConsoleProducer"),
    "kafka-console-consumer": (
        "org.apache.kafka.tools.consumer.ConsoleConsumer",
        "kafka.tools.ConsoleConsumer",
    ),
    "kafka-consumer-groups": (
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "kafka.admin.ConsumerGroupCommand",
    ),
    "kafka-transactions": ("org.apache.kafka.tools.TransactionsCommand",),
    "kafka-producer-perf-test": ("org.apache.kafka.tools.ProducerPerformance",),
    "kafka-get-offsets": ("org.apache.kafka.tools.GetOffsetShell", "kafka.tools.GetOffsetShell"),
    "kafka-delete-records": (
        "org.apache.kafka.tools.DeleteRecordsCommand",
        "kafka.admin.DeleteRecordsCommand",
    ),
    "kafka-client-metrics": ("org.apache.kafka.tools.ClientMetricsCommand",),
    "kafka-groups": ("org.apache.kafka.tools.GroupsCommand",),
    "kafka-share-groups": ("org.apache.kafka.tools.consumer.group.ShareGroupCommand",),
    "kafka-streams-groups": ("org.apache.kafka.tools.streams.StreamsGroupCommand",),
}


class HarnessError(RuntimeError):
    """Something went wrong running Kafka (message includes the tail of the relevant log)."""


class KafkaUnavailable(HarnessError):
    """Java or Maven is missing, or the jars could not be downloaded: tests skip on this."""


# --------------------------------------------------------------------------------------------------
# small helpers


def cache_root() -> Path:
    """Where jars and oracle results live (outside the repo): $METASHELL_KAFKA_CACHE or ~/.cache."""
    env = os.environ.get("METASHELL_KAFKA_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "metashell" / "kafka"


def java_executable() -> str:
    """The ``java`` to use: $JAVA_HOME/bin/java if set, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise KafkaUnavailable("java not found on PATH (install a JDK 17+ or set JAVA_HOME)")
    return found


_JAVA_MAJOR: dict[str, int] = {}


def check_java(min_major: int = 17) -> int:
    """Return the Java major version; raise :class:`KafkaUnavailable` if missing or too old.

    Kafka 4.x brokers need Java 17; we require it for every version to keep one rule.
    """
    java = java_executable()
    if java not in _JAVA_MAJOR:
        try:
            out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60,
                                 check=False).stderr
        except (OSError, subprocess.SubprocessError) as exc:
            raise KafkaUnavailable(f"cannot run {java}: {exc}") from exc
        m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
        if not m:
            raise KafkaUnavailable(f"cannot parse `java -version`: {out.strip()[:200]}")
        major = int(m.group(1))
        _JAVA_MAJOR[java] = int(m.group(2) or 0) if major == 1 else major
    if _JAVA_MAJOR[java] < min_major:
        raise KafkaUnavailable(f"Java {_JAVA_MAJOR[java]} found at {java}; Kafka needs Java {min_major}+")
    return _JAVA_MAJOR[java]


def free_ports(count: int) -> list[int]:
    """Pick ``count`` distinct free TCP ports on 127.0.0.1 (all sockets held open until all chosen)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def random_kafka_uuid() -> str:
    """A Kafka-style Uuid string (url-safe base64 of 16 bytes, no padding, never starting with '-')."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a text file, for error messages."""
    try:
        data = path.read_bytes()[-65536:].decode("utf-8", "replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(data.splitlines()[-lines:])


def _prop_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def write_properties(path: Path, props: Mapping[str, Any]) -> Path:
    """Write a Java .properties file (values with booleans as true/false, None entries dropped)."""
    lines = []
    for key, value in props.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        lines.append(f"{key}={_prop_escape(str(value))}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float = 1800) -> Iterator[None]:
    """An exclusive advisory lock, so two processes never download into the same cache dir."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise HarnessError(f"timed out waiting for lock {path}") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _parent_death_signal() -> None:
    """preexec_fn: have the kernel SIGTERM our JVMs if the Python process dies without cleanup.

    Only async-signal-safe work happens here (one prctl call), so it is fine with threads.  Note the
    signal fires when the *thread* that started the node exits: start clusters from a long-lived
    thread (the main thread in pytest and the scripts).
    """
    with contextlib.suppress(OSError, AttributeError):  # best effort: not Linux / no glibc
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


# --------------------------------------------------------------------------------------------------
# the distribution (jars from Maven Central)

_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>metashell.harness</groupId>
  <artifactId>kafka-runtime-{version}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencyManagement>
    <dependencies>
{managed}
    </dependencies>
  </dependencyManagement>
  <dependencies>
{deps}
  </dependencies>
</project>
"""

#: Every Kafka module a 3.9-4.x server/tools classpath may pull in.  They are all pinned to the
#: requested version in <dependencyManagement> so the tools' transitive deps cannot drag in an older
#: kafka-clients etc. (pins for modules nobody depends on are inert).
KAFKA_MODULES: tuple[str, ...] = (
    "kafka-clients", "kafka-server-common", "kafka-group-coordinator-api", "kafka-group-coordinator",
    "kafka-transaction-coordinator", "kafka-metadata", "kafka-storage-api", "kafka-tools-api",
    "kafka-raft", "kafka-storage", "kafka-server", "kafka-coordinator-common", "kafka-share-coordinator",
    "kafka-shell", "kafka-tools", f"kafka_{SCALA_VERSION}", "kafka-streams", "kafka-log4j-appender",
    "kafka-clients-admin",
)
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
_UNRESOLVED = re.compile(r"org\.apache\.kafka:([A-Za-z0-9_.-]+):jar:([0-9][^,\s:]*)")


#: Substituted modules we recompile from the older release's sources (see KafkaDist._rebuild_substitutes).
#: Only the shell: kafka-tools uses internal APIs that really change between releases.
REBUILD_FROM_SOURCES: tuple[str, ...] = ("kafka-shell",)
#: Bumped when the cache dir layout changes; older dists are upgraded in place by ensure().
CACHE_LAYOUT = 2


def _rewrite_moved_imports(java_files: list[Path], src_root: Path, known: set[str]) -> int:
    """Point imports of Kafka classes that no longer exist at the unique class of the same simple name.

    Between Kafka releases many utility classes only move package (e.g. ``common.utils.Exit`` ->
    ``common.utils.internals.Exit``, ``kafka.tools.TerseFailure`` -> ``server.util.TerseFailure``).
    """
    own = {str(f.relative_to(src_root))[:-5].replace("/", ".") for f in java_files}
    by_simple: dict[str, list[str]] = {}
    for c in known:
        if "." in c:
            by_simple.setdefault(c.rsplit(".", 1)[1], []).append(c)

    def exists(fq: str) -> bool:
        parts = fq.split(".")
        prefixes = (".".join(parts[:i]) for i in range(len(parts), 1, -1))
        return any(p in known or p in own for p in prefixes)

    count = 0

    def fix(m: re.Match[str]) -> str:
        nonlocal count
        static, fq = m.group(1), m.group(2)
        if fq.endswith(".*"):
            return m.group(0)
        cls = fq.rsplit(".", 1)[0] if static else fq
        if not cls.startswith(("org.apache.kafka.", "kafka.")) or exists(cls):
            return m.group(0)
        cands = by_simple.get(cls.rsplit(".", 1)[1], [])
        if len(cands) > 1:
            cands = [c for c in cands if c.startswith("org.apache.kafka.")]
        if len(cands) != 1:
            return m.group(0)  # javac will report it
        count += 1
        return f"import {static or ''}{cands[0]}{fq[len(cls):]};"

    pattern = re.compile(r"^import\s+(static\s+)?([\w.*]+);", re.MULTILINE)
    for f in java_files:
        text = f.read_text(encoding="utf-8")
        new = pattern.sub(fix, text)
        if new != text:
            f.write_text(new, encoding="utf-8")
    return count


def _dep_xml(group: str, artifact: str, version: str, indent: str = "    ") -> str:
    return (f"{indent}<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version></dependency>")


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.-]", v))


def newest_release_before(artifact: str, version: str) -> str | None:
    """Newest release of org.apache.kafka:``artifact`` on Maven Central older than ``version``
    with the same major version (used when a release is only partly published)."""
    import urllib.request

    url = f"{MAVEN_CENTRAL}/org/apache/kafka/{artifact}/maven-metadata.xml"
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            text = resp.read().decode()
    except OSError:
        return None
    versions = [v for v in re.findall(r"<version>([^<]+)</version>", text) if re.fullmatch(r"[0-9.]+", v)]
    older = [v for v in versions if _major(v) == _major(version) and _version_key(v) < _version_key(version)]
    return max(older, key=_version_key) if older else None

_LOG4J1_SERVER = """\
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.Target=System.out
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.org.apache.kafka.clients.NetworkClient=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.state.change.logger=WARN
"""

_LOG4J1_TOOLS = """\
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
"""

_LOG4J2_TEMPLATE = """\
<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <Console name="out" target="{target}">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
    </Console>
  </Appenders>
  <Loggers>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Logger name="org.apache.kafka.clients.NetworkClient" level="WARN"/>
    <Logger name="kafka.log.LogCleaner" level="WARN"/>
    <Logger name="state.change.logger" level="WARN"/>
    <Root level="{level}"><AppenderRef ref="out"/></Root>
  </Loggers>
</Configuration>
"""


def _major(version: str) -> int:
    return int(version.split(".")[0])


def find_javac() -> str | None:
    """The JDK's ``javac`` (on PATH, else under ``$JAVA_HOME``), or None."""
    javac = shutil.which("javac")
    if javac is None and os.environ.get("JAVA_HOME"):
        cand = Path(os.environ["JAVA_HOME"]) / "bin" / "javac"
        javac = str(cand) if cand.exists() else None
    return javac


def _javac(javac: str, out: Path, classpath: str, *sources: str, what: str, timeout: float) -> None:
    """Compile ``sources`` (files or ``@argfile``) for Java 17 into ``out``."""
    proc = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "--release", "17", "-d", str(out),
                           "-cp", classpath, *sources], capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise HarnessError(f"javac failed for {what}: {(proc.stdout + proc.stderr)[-800:]}")


def _run_java(cmd: list[str], label: str, timeout: float, input: str | None, check: bool,
              cwd: Path | None) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input,
                              stdin=None if input is not None else subprocess.DEVNULL, cwd=cwd, check=False)
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(f"{label} timed out after {timeout}s") from exc
    if check and proc.returncode != 0:
        raise HarnessError(f"{label} exited {proc.returncode}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return proc


class KafkaDist:
    """One Apache Kafka version's jars (server, shell, tools, logging backend) in the local cache."""

    def __init__(self, version: str = DEFAULT_VERSION, cache_dir: Path | None = None) -> None:
        self.version = version
        self.root = Path(cache_dir) if cache_dir else cache_root()
        self.dir = self.root / version
        self.libs = self.dir / "libs"
        self._stamp = self.dir / "complete.json"
        self._classes: dict[str, str] | None = None
        self._fallback: KafkaDist | None = None
        self._rebuild_errors: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"KafkaDist({self.version!r}, dir={str(self.dir)!r})"

    # -- download ---------------------------------------------------------------------------

    def maven_dependencies(self) -> list[tuple[str, str, str]]:
        """(groupId, artifactId, version) we ask Maven for; transitive runtime deps come along."""
        v = self.version
        deps = [
            ("org.apache.kafka", f"kafka_{SCALA_VERSION}", v),
            ("org.apache.kafka", "kafka-shell", v),
            ("org.apache.kafka", "kafka-tools", v),
        ]
        if _major(v) >= 4:
            # Kafka 4.x ships log4j2 (with the slf4j 1.x binding: its slf4j-api is still 1.7.36).
            deps += [
                ("org.apache.logging.log4j", "log4j-core", "2.24.3"),
                ("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3"),
            ]
        else:
            # Kafka 3.x ships reload4j (log4j 1.2 API) behind slf4j 1.7.
            deps += [("org.slf4j", "slf4j-reload4j", "1.7.36")]
        return deps

    def is_ready(self) -> bool:
        try:
            return json.loads(self._stamp.read_text()).get("layout") == CACHE_LAYOUT
        except (OSError, ValueError):
            return False

    def ensure(self) -> KafkaDist:
        """Download (once) the jars into the cache; safe if several processes race.

        The finished dist appears atomically (built in a temp dir, then renamed).  A dist from an
        older cache layout is upgraded in place *additively* (nothing other processes may be using
        is deleted or moved).
        """
        if self.is_ready():
            return self
        java_executable()
        mvn = shutil.which("mvn")
        if not mvn:
            raise KafkaUnavailable("mvn not found on PATH (Maven is needed to fetch Kafka jars)")
        with _file_lock(self.root / f".{self.version}.lock"):
            if self.is_ready():
                return self
            if self._stamp.exists() and (self.dir / "libs").is_dir():
                self._upgrade_in_place(mvn)
                return self
            started = time.monotonic()
            tmp = Path(tempfile.mkdtemp(prefix=f".{self.version}-", dir=self.root))
            try:
                substitutes = self._resolve(mvn, tmp)
                rebuilt = self._rebuild_substitutes(mvn, tmp, substitutes)
                self._write_log_configs(tmp)
                stamp = self._make_stamp(tmp, substitutes, rebuilt)
                stamp["download_seconds"] = round(time.monotonic() - started, 1)
                (tmp / "complete.json").write_text(json.dumps(stamp, indent=1) + "\n")
                os.chmod(tmp, 0o755)  # mkdtemp made it private; the cache is shared
                if self.dir.exists():  # a half-done dir from a crashed run (we hold the lock)
                    shutil.rmtree(self.dir)
                os.rename(tmp, self.dir)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return self

    def _make_stamp(self, base: Path, substitutes: dict[str, str], rebuilt: dict[str, str]) -> dict[str, Any]:
        """The complete.json content: ``jars`` are paths relative to the dist dir, in classpath order."""
        replaced = {f"{m}-{v}.jar" for m, v in rebuilt.items()}
        jars = [f"libs/{p.name}" for p in sorted((base / "libs").glob("*.jar")) if p.name not in replaced]
        jars += [f"rebuilt/{p.name}" for p in sorted((base / "rebuilt").glob("*.jar"))]
        stamp: dict[str, Any] = {
            "layout": CACHE_LAYOUT,
            "version": self.version,
            "substitutes": substitutes,
            "rebuilt": rebuilt,
            "jars": jars,
            "bytes": sum((base / j).stat().st_size for j in jars),
            "fetched_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        }
        if self._rebuild_errors:
            stamp["rebuild_errors"] = self._rebuild_errors
        return stamp

    def _upgrade_in_place(self, mvn: str) -> None:
        old = json.loads(self._stamp.read_text())
        substitutes = dict(old.get("substitutes") or {})
        rebuilt = self._rebuild_substitutes(mvn, self.dir, substitutes)
        stamp = self._make_stamp(self.dir, substitutes, rebuilt)
        stamp["download_seconds"] = old.get("download_seconds")
        (self.dir / "classes.tsv").unlink(missing_ok=True)
        tmp = self._stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(stamp, indent=1) + "\n")
        os.replace(tmp, self._stamp)
        self._classes = None

    def _resolve(self, mvn: str, tmp: Path) -> dict[str, str]:
        """Run Maven on a generated pom; returns {artifact: version} substituted for missing ones.

        Some releases are only partly on Maven Central (e.g. 4.4.0 has kafka_2.13 but, at the time of
        writing, no kafka-tools/kafka-shell/kafka-tools-api): those modules fall back to the newest
        older release of the same major version, recorded in ``info["substitutes"]``.
        """
        substitutes: dict[str, str] = {}
        for _attempt in range(3):
            pins = {a: substitutes.get(a, self.version) for a in KAFKA_MODULES}
            managed = "\n".join(_dep_xml("org.apache.kafka", a, v, "      ") for a, v in pins.items())
            deps = "\n".join(
                _dep_xml(g, a, pins.get(a, v) if g == "org.apache.kafka" else v)
                for g, a, v in self.maven_dependencies()
            )
            (tmp / "pom.xml").write_text(_POM.format(version=self.version, managed=managed, deps=deps))
            shutil.rmtree(tmp / "libs", ignore_errors=True)
            cmd = [
                mvn, "-q", "-B", "-U", "-f", str(tmp / "pom.xml"),
                "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies",
                f"-DoutputDirectory={tmp / 'libs'}", "-DincludeScope=runtime",
            ]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=tmp, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise KafkaUnavailable(f"mvn could not fetch Kafka {self.version}: {exc}") from exc
            out = proc.stdout + proc.stderr
            if proc.returncode == 0 and any((tmp / "libs").glob("kafka_*.jar")):
                return substitutes
            missing = {a for a, v in _UNRESOLVED.findall(out) if v == self.version and a not in substitutes}
            if not missing or "could not be resolved" not in out:
                break
            for artifact in sorted(missing):
                older = newest_release_before(artifact, self.version)
                if older is None:
                    raise KafkaUnavailable(f"org.apache.kafka:{artifact}:{self.version} is not on Maven "
                                           "Central and no older release of the same major exists")
                substitutes[artifact] = older
        errors = [ln for ln in out.splitlines() if "ERROR" in ln][:3] or out.strip().splitlines()[-3:]
        raise KafkaUnavailable(f"mvn could not fetch Kafka {self.version}: " + " | ".join(errors))

    def _rebuild_substitutes(self, mvn: str, tmp: Path, substitutes: dict[str, str]) -> dict[str, str]:
        """Recompile substituted modules listed in :data:`REBUILD_FROM_SOURCES` against this version.

        The metadata shell is the oracle for ``/image``; an older kafka-shell jar cannot run on this
        version's kafka-clients (classes moved), and a complete older release cannot read newer
        metadata (unknown metadata.version levels make it drop the features image and topics).  The
        shell itself is a thin layer over kafka-metadata's image node classes, so we compile the
        older kafka-shell *sources* against this version's jars, rewriting imports of classes that
        merely moved package.  Returns {module: source version} for what was rebuilt; failures are
        recorded in ``info["rebuild_errors"]`` and leave the module running from the fallback.
        """
        rebuilt: dict[str, str] = {}
        self._rebuild_errors = {}
        javac = find_javac()
        for module in REBUILD_FROM_SOURCES:
            src_version = substitutes.get(module)
            if src_version is None:
                continue
            if javac is None:
                self._rebuild_errors[module] = "javac not found"
                continue
            try:
                self._rebuild_one(mvn, javac, tmp, module, src_version)
                rebuilt[module] = src_version
            except (HarnessError, OSError, subprocess.SubprocessError) as exc:
                self._rebuild_errors[module] = str(exc)[-1000:]
        return rebuilt

    def _rebuild_one(self, mvn: str, javac: str, tmp: Path, module: str, src_version: str) -> None:
        work = Path(tempfile.mkdtemp(prefix=f".rebuild-{module}-", dir=tmp))
        try:
            self._rebuild_in(work, mvn, javac, tmp, module, src_version)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _rebuild_in(self, work: Path, mvn: str, javac: str, tmp: Path, module: str, src_version: str) -> None:
        proc = subprocess.run(
            [mvn, "-q", "-B", "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy",
             f"-Dartifact=org.apache.kafka:{module}:{src_version}:jar:sources", f"-DoutputDirectory={work}"],
            capture_output=True, text=True, timeout=600, cwd=tmp, check=False)
        src_jar = work / f"{module}-{src_version}-sources.jar"
        if proc.returncode != 0 or not src_jar.exists():
            raise HarnessError(f"no sources for {module} {src_version}: {(proc.stdout + proc.stderr)[-300:]}")
        src = work / "src"
        with zipfile.ZipFile(src_jar) as zf:
            zf.extractall(src)
        libs = tmp / "libs"
        old_jar = f"{module}-{src_version}.jar"
        cp_jars = sorted(p for p in libs.glob("*.jar") if p.name != old_jar)
        known: set[str] = set()
        for jar in cp_jars:
            with zipfile.ZipFile(jar) as zf:
                known.update(n[:-6].replace("/", ".") for n in zf.namelist()
                             if n.endswith(".class") and "$" not in n)
        java_files = sorted(src.rglob("*.java"))
        _rewrite_moved_imports(java_files, src, known)
        out = work / "classes"
        out.mkdir()
        argfile = work / "sources.txt"
        argfile.write_text("\n".join(str(f) for f in java_files) + "\n")
        _javac(javac, out, os.pathsep.join(map(str, cp_jars)), f"@{argfile}", what=module, timeout=900)
        for res in src.rglob("*"):  # non-Java resources (service files, properties) come along
            if res.is_file() and res.suffix != ".java" and "META-INF/MANIFEST" not in str(res):
                dest = out / res.relative_to(src)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(res, dest)
        (tmp / "rebuilt").mkdir(exist_ok=True)
        new_jar = tmp / "rebuilt" / f"{module}-{self.version}-rebuilt-from-{src_version}.jar"
        part = new_jar.with_suffix(f".{os.getpid()}.part")
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(out.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(out).as_posix())
        os.replace(part, new_jar)  # the old jar stays in libs/ (others may use libs/*); not on our classpath

    def _write_log_configs(self, base: Path) -> None:
        if _major(self.version) >= 4:
            server = _LOG4J2_TEMPLATE.format(target="SYSTEM_OUT", level="INFO")
            (base / "log4j2-server.xml").write_text(server)
            (base / "log4j2-tools.xml").write_text(_LOG4J2_TEMPLATE.format(target="SYSTEM_ERR", level="WARN"))
        else:
            (base / "log4j-server.properties").write_text(_LOG4J1_SERVER)
            (base / "log4j-tools.properties").write_text(_LOG4J1_TOOLS)

    @property
    def info(self) -> dict[str, Any]:
        """The stamp written after download: jar list, total bytes, download seconds."""
        return json.loads(self._stamp.read_text())

    # -- running -----------------------------------------------------------------------------

    @property
    def classpath(self) -> str:
        if not self.is_ready():
            raise HarnessError(f"Kafka {self.version} not downloaded; call ensure() first")
        return os.pathsep.join(str(self.dir / j) for j in self.info["jars"])

    def log_config_flag(self, kind: str = "tools") -> str:
        """The JVM -D flag pointing the logging backend at our quiet config (``server``/``tools``)."""
        if _major(self.version) >= 4:
            return f"-Dlog4j2.configurationFile={self.dir / f'log4j2-{kind}.xml'}"
        return f"-Dlog4j.configuration=file:{self.dir / f'log4j-{kind}.properties'}"

    def java_cmd(self, main_class: str, *args: str, heap: str = TOOL_HEAP, kind: str = "tools",
                 jvm_args: Iterable[str] = (), extra_classpath: Iterable[Path] = ()) -> list[str]:
        """The full java command line for ``main_class`` with our classpath and flags."""
        classpath = os.pathsep.join([self.classpath, *map(str, extra_classpath)])
        return [
            java_executable(), f"-Xmx{heap}", *JVM_FLAGS, self.log_config_flag(kind), *jvm_args,
            "-cp", classpath, main_class, *[str(a) for a in args],
        ]

    def run(self, main_class: str, *args: Any, timeout: float = 120, input: str | None = None,
            check: bool = False, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run a Kafka main class to completion and capture stdout/stderr as text.

        ``main_class`` may also be a script name such as ``kafka-topics`` (see :meth:`tool_class`).
        In a partly-published release the class may run from the fallback dist (see
        :meth:`dist_for`); ``proc.args`` shows the real command.
        """
        main_class = self.tool_class(main_class)
        dist = self.dist_for(main_class)
        cmd = dist.java_cmd(main_class, *[str(a) for a in args])
        return _run_java(cmd, f"{main_class} {' '.join(map(str, args))}", timeout, input, check, cwd)

    def run_program(self, source: Path, *args: Any, beside: str, timeout: float = 120,
                    check: bool = False, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Compile (once; cached by the source's hash) and run a one-file Java program whose class
        has the file's name, against the jars that run the class ``beside`` (so that a program built
        from, say, the metadata shell's classes runs where ``MetadataShell`` itself runs)."""
        dist = self.dist_for(self.tool_class(beside))
        classes = dist.compile_program(source)
        cmd = dist.java_cmd(source.stem, *[str(a) for a in args], extra_classpath=[classes])
        return _run_java(cmd, f"{source.stem} {' '.join(map(str, args))}", timeout, None, check, cwd)

    def compile_program(self, source: Path) -> Path:
        """``javac`` one Java file against this dist's classpath; returns the classes directory."""
        digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
        out = self.root / "programs" / self.version / f"{source.stem}-{digest}"
        if (out / f"{source.stem}.class").exists():
            return out
        javac = find_javac()
        if javac is None:
            raise HarnessError(f"javac (a JDK) is needed to build {source.name}")
        part = out.with_name(f"{out.name}.{os.getpid()}.part")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        try:
            _javac(javac, part, self.classpath, str(source), what=source.name, timeout=300)
        except HarnessError:
            shutil.rmtree(part, ignore_errors=True)
            raise
        try:
            os.replace(part, out)
        except OSError:          # another process built it first
            shutil.rmtree(part, ignore_errors=True)
        return out

    # -- class lookup ------------------------------------------------------------------------

    def class_jars(self) -> dict[str, str]:
        """Every top-level class name in the downloaded jars -> jar file name (cached on disk)."""
        if self._classes is None:
            index = self.dir / "classes.tsv"
            if index.exists():
                self._classes = dict(ln.split("\t", 1) for ln in index.read_text().splitlines() if ln)
            else:
                names: dict[str, str] = {}
                for jar in self.info["jars"]:
                    with zipfile.ZipFile(self.dir / jar) as zf:
                        for n in zf.namelist():
                            if n.endswith(".class") and "$" not in n:
                                names.setdefault(n[:-6].replace("/", "."), Path(jar).name)
                tmp = index.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text("".join(f"{c}\t{j}\n" for c, j in sorted(names.items())))
                os.replace(tmp, index)
                self._classes = names
        return self._classes

    def has_class(self, name: str) -> bool:
        return name in self.class_jars()

    @property
    def substitutes(self) -> dict[str, str]:
        """Modules missing from Maven Central for this version -> older version used instead."""
        return dict(self.info.get("substitutes") or {})

    @property
    def fallback(self) -> KafkaDist | None:
        """For a partly-published release: the newest complete older release (downloaded on demand)."""
        subs = self.substitutes
        if not subs:
            return None
        if self._fallback is None:
            self._fallback = KafkaDist(max(subs.values(), key=_version_key), self.root).ensure()
        return self._fallback

    def dist_for(self, main_class: str) -> KafkaDist:
        """The dist whose classpath runs ``main_class`` coherently.

        Classes from this version's own jars (kafka.Kafka, StorageTool) run here.  Classes that only
        exist in substituted jars (kafka-tools/kafka-shell of an older release) cannot run against
        this version's kafka-clients (internal APIs move between releases), so they run from the
        complete fallback release instead.  Admin tools speak the wire protocol, so this is safe.
        """
        jar = self.class_jars().get(main_class)
        subs = self.substitutes
        if subs and (jar is None or any(jar.startswith(f"{a}-{v}.") for a, v in subs.items())):
            fb = self.fallback
            assert fb is not None
            return fb.dist_for(main_class)
        return self

    def tool_class(self, tool: str) -> str:
        """Main class behind a Kafka script name (``kafka-topics`` -> ...TopicCommand) in this version.

        A fully qualified class name is returned unchanged.  In a partly-published release the
        lookup also searches the fallback release's jars.
        """
        if "." in tool:
            return tool
        name = tool.removesuffix(".sh")
        candidates = TOOL_CLASSES.get(name, ())
        for cand in candidates:
            if self.has_class(cand) and not self.substitutes:
                return cand
        for cand in candidates:  # partly published: prefer what the fallback release runs
            if self.has_class(cand) and self.dist_for(cand) is self:
                return cand
        fb = self.fallback
        if fb is not None:
            for cand in candidates:
                if fb.has_class(cand):
                    return cand
        raise HarnessError(f"no main class known for {tool!r} in Kafka {self.version}")

    def tool_version(self, tool: str) -> str:
        """The Kafka version whose jars actually run ``tool`` (differs only for partial releases)."""
        return self.dist_for(self.tool_class(tool)).version


# --------------------------------------------------------------------------------------------------
# TLS material


def make_tls_material(directory: Path, password: str = "changeit") -> dict[str, Path]:
    """Create a self-signed CA and a server cert for 127.0.0.1/localhost in ``directory``.

    Writes PEM files Kafka reads directly (``ssl.keystore.type=PEM``): ``ca.pem`` (truststore),
    ``server.pem`` (unencrypted PKCS#8 key followed by the cert chain), plus ``server.key``/
    ``server.crt`` and PKCS12 files (``server.p12``, ``truststore.p12``) for other clients.
    """
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.UTC) - _dt.timedelta(days=1)
    later = now + _dt.timedelta(days=3650)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "metashell test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(later)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(later)
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                              ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    cert_pem = cert.public_bytes(pem)
    ca_pem = ca_cert.public_bytes(pem)
    files = {
        "ca": directory / "ca.pem",
        "ca_key": directory / "ca.key",
        "server_pem": directory / "server.pem",
        "server_key": directory / "server.key",
        "server_crt": directory / "server.crt",
        "server_p12": directory / "server.p12",
        "truststore_p12": directory / "truststore.p12",
    }
    files["ca"].write_bytes(ca_pem)
    files["ca_key"].write_bytes(
        ca_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    files["server_pem"].write_bytes(key_pem + cert_pem + ca_pem)
    files["server_key"].write_bytes(key_pem)
    files["server_crt"].write_bytes(cert_pem + ca_pem)
    enc = serialization.BestAvailableEncryption(password.encode())
    files["server_p12"].write_bytes(
        pkcs12.serialize_key_and_certificates(b"localhost", key, cert, [ca_cert], enc))
    with contextlib.suppress(Exception):  # cryptography >= 45 only
        files["truststore_p12"].write_bytes(pkcs12.serialize_java_truststore(
            [pkcs12.PKCS12Certificate(ca_cert, b"ca")], enc))
    return files


# --------------------------------------------------------------------------------------------------
# nodes and clusters

#: Started clusters (strong refs on purpose: a cluster nobody references must still die at exit).
_LIVE_CLUSTERS: set[KafkaCluster] = set()
_LIVE_LOCK = threading.Lock()


def _kill_all_at_exit() -> None:
    with _LIVE_LOCK:
        clusters = list(_LIVE_CLUSTERS)
    for c in clusters:
        with contextlib.suppress(Exception):
            c.kill_all()


atexit.register(_kill_all_at_exit)

READY_MARKER = "Kafka Server started"


class KafkaNode:
    """One KRaft JVM (broker, controller or both) with its own config, dirs and log file."""

    def __init__(self, cluster: KafkaCluster, node_id: int, roles: tuple[str, ...], home: Path,
                 broker_port: int | None, controller_port: int | None) -> None:
        self.cluster = cluster
        self.node_id = node_id
        self.roles = roles
        self.home = home
        #: metadata log dir (``metadata.log.dir``): meta.properties + ``__cluster_metadata-0``
        self.log_dir = home / "metadata"
        #: data dir (``log.dirs``) for topic partitions on brokers; same as log_dir on controllers
        self.data_dir = home / "data" if "broker" in roles else self.log_dir
        self.config_path = home / "server.properties"
        self.log_path = home / "server.log"
        self.broker_port = broker_port
        self.controller_port = controller_port
        self.process: subprocess.Popen[bytes] | None = None
        self._stopping = False  # set by stop()/kill(): an exit is then expected, not a crash
        self._log_offset = 0
        self.start_seconds: float | None = None

    def __repr__(self) -> str:
        return f"KafkaNode({self.node_id}, roles={','.join(self.roles)}, running={self.is_running()})"

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    @property
    def metadata_dir(self) -> Path:
        """``<log_dir>/__cluster_metadata-0``."""
        return self.log_dir / "__cluster_metadata-0"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self, wait: bool = True, timeout: float = 120) -> None:
        """Start the JVM (storage must be formatted); with ``wait``, block until it is ready."""
        if self.is_running():
            return
        dist = self.cluster.dist
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self._stopping = False
        self.start_seconds = None
        cmd = dist.java_cmd("kafka.Kafka", str(self.config_path), heap=self.cluster.heap, kind="server",
                            jvm_args=self.cluster.jvm_args)
        with open(self.log_path, "ab") as out:
            out.write(f"\n===== metashell harness: starting node {self.node_id} =====\n".encode())
            out.flush()
            self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=self.home,
                                            preexec_fn=_parent_death_signal)  # noqa: PLW1509 - see docstring
        self._started_at = time.monotonic()
        if wait:
            self.wait_ready(timeout)

    def crashed(self) -> bool:
        """The JVM exited although nobody asked it to (fatal fault, OOM...)."""
        return self.process is not None and self.process.poll() is not None and not self._stopping

    def log_text(self, since_start: bool = True) -> str:
        try:
            with open(self.log_path, "rb") as fh:
                if since_start:
                    fh.seek(self._log_offset)
                return fh.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def is_ready(self) -> bool:
        return self.is_running() and READY_MARKER in self.log_text()

    def wait_ready(self, timeout: float = 120) -> None:
        """Wait for ``Kafka Server started`` (brokers log it only once unfenced)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process is None:
                raise HarnessError(f"node {self.node_id} was never started")
            if self.process.poll() is not None:
                raise HarnessError(
                    f"Kafka node {self.node_id} exited with {self.process.returncode} during start-up; "
                    f"log {self.log_path}:\n{tail(self.log_path)}")
            if READY_MARKER in self.log_text():
                self.start_seconds = round(time.monotonic() - self._started_at, 1)
                return
            if time.monotonic() > deadline:
                raise HarnessError(
                    f"Kafka node {self.node_id} not ready after {timeout}s; log {self.log_path}:\n"
                    f"{tail(self.log_path)}")
            time.sleep(0.25)

    def stop(self, timeout: float = 60) -> None:
        """Controlled shutdown (SIGTERM); SIGKILL if it does not exit within ``timeout``."""
        self._stopping = True
        if not self.is_running():
            return
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """Hard kill (SIGKILL): no controlled shutdown, like a crashed machine."""
        self._stopping = True
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


class KafkaCluster:
    """A KRaft cluster on 127.0.0.1: ``combined`` (N broker+controller nodes, default 1) or ``split``.

    ``split``: ``controllers`` controller-only nodes (default 3, ids 1..C) and ``brokers`` broker-only
    nodes (default 2, ids C+1..C+B).  ``combined``: ``controllers`` combined nodes (default 1) plus
    ``brokers`` extra broker-only nodes (default 0).

    ``security`` secures the *controller* listener: ``plaintext``, ``sasl_scram`` (SASL_PLAINTEXT,
    SCRAM-SHA-256/512 user created at format time) or ``ssl`` (self-signed CA made here).  The broker
    listener stays PLAINTEXT so admin tools need no client config.
    """

    def __init__(self, dist: KafkaDist, workdir: Path, mode: str = "combined",
                 controllers: int | None = None, brokers: int | None = None,
                 security: str = "plaintext", broker_overrides: dict[str, Any] | None = None,
                 controller_overrides: dict[str, Any] | None = None, *, cluster_id: str | None = None,
                 release_version: str | None = None, format_args: Iterable[str] = (),
                 heap: str = SERVER_HEAP, jvm_args: Iterable[str] = (),
                 scram_mechanism: str = "SCRAM-SHA-256") -> None:
        if mode not in ("combined", "split"):
            raise ValueError(f"mode must be combined or split, not {mode!r}")
        if security not in ("plaintext", "sasl_scram", "ssl"):
            raise ValueError(f"security must be plaintext, sasl_scram or ssl, not {security!r}")
        self.dist = dist
        self.workdir = Path(workdir).resolve()
        self.mode = mode
        self.security = security
        self.broker_overrides = dict(broker_overrides or {})
        self.controller_overrides = dict(controller_overrides or {})
        self.cluster_id = cluster_id or random_kafka_uuid()
        self.release_version = release_version
        self.format_args = list(format_args)
        self.heap = heap
        self.jvm_args = list(jvm_args)
        self.scram_mechanism = scram_mechanism
        if mode == "combined":
            n_ctrl = 1 if controllers is None else controllers
            n_brok = 0 if brokers is None else brokers
        else:
            n_ctrl = 3 if controllers is None else controllers
            n_brok = 2 if brokers is None else brokers
        if n_ctrl < 1:
            raise ValueError("need at least one controller")
        ports = free_ports(n_ctrl * (2 if mode == "combined" else 1) + n_brok)
        self.nodes: list[KafkaNode] = []
        for i in range(n_ctrl):
            nid = i + 1
            roles = ("broker", "controller") if mode == "combined" else ("controller",)
            bport = ports.pop() if mode == "combined" else None
            self.nodes.append(KafkaNode(self, nid, roles, self.workdir / f"node-{nid}", bport, ports.pop()))
        for j in range(n_brok):
            nid = n_ctrl + j + 1
            home = self.workdir / f"node-{nid}"
            self.nodes.append(KafkaNode(self, nid, ("broker",), home, ports.pop(), None))
        self.tls: dict[str, Path] = {}
        self._formatted = False

    # -- endpoints ---------------------------------------------------------------------------

    @property
    def brokers(self) -> list[KafkaNode]:
        return [n for n in self.nodes if n.is_broker]

    @property
    def controllers(self) -> list[KafkaNode]:
        return [n for n in self.nodes if n.is_controller]

    def node(self, node_id: int) -> KafkaNode:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise KeyError(node_id)

    @property
    def bootstrap_servers(self) -> str:
        """PLAINTEXT broker listener endpoints (for admin tools)."""
        return ",".join(f"127.0.0.1:{n.broker_port}" for n in self.brokers)

    @property
    def controller_bootstrap(self) -> str:
        """Controller listener endpoints (secured per ``security``)."""
        return ",".join(f"127.0.0.1:{n.controller_port}" for n in self.controllers)

    @property
    def quorum_voters(self) -> str:
        return ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in self.controllers)

    @property
    def inter_node_mechanism(self) -> str:
        """SASL mechanism the nodes themselves use on the controller listener (``sasl_scram`` mode).

        SCRAM credentials live in the metadata log, so a controller can only verify them after it has
        replayed the bootstrap records, which needs a quorum leader, which needs the voters to talk:
        with several nodes SCRAM-only deadlocks (Kafka logs "invalid credentials" forever).  The
        nodes therefore use PLAIN (static JAAS user) among themselves when there is more than one
        node; clients (metashell, admin tools) still authenticate with SCRAM-SHA-256/512.
        """
        return self.scram_mechanism if len(self.nodes) == 1 else "PLAIN"

    @property
    def controller_protocol(self) -> str:
        return {"plaintext": "PLAINTEXT", "sasl_scram": "SASL_PLAINTEXT", "ssl": "SSL"}[self.security]

    # -- configuration -----------------------------------------------------------------------

    def _security_props(self) -> dict[str, Any]:
        """Server-side settings for the CONTROLLER listener (also used as its client settings)."""
        p: dict[str, Any] = {}
        if self.security == "sasl_scram":
            scram = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
                     f'username="{SASL_USER}" password="{SASL_PASSWORD}";')
            plain = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
                     f'username="{SASL_USER}" password="{SASL_PASSWORD}" user_{SASL_USER}="{SASL_PASSWORD}";')
            p["sasl.mechanism.controller.protocol"] = self.inter_node_mechanism
            p["listener.name.controller.sasl.enabled.mechanisms"] = "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN"
            p["listener.name.controller.scram-sha-256.sasl.jaas.config"] = scram
            p["listener.name.controller.scram-sha-512.sasl.jaas.config"] = scram
            p["listener.name.controller.plain.sasl.jaas.config"] = plain
        elif self.security == "ssl":
            for prefix in ("listener.name.controller.", ""):
                p[prefix + "ssl.keystore.type"] = "PEM"
                p[prefix + "ssl.keystore.location"] = self.tls["server_pem"]
                p[prefix + "ssl.truststore.type"] = "PEM"
                p[prefix + "ssl.truststore.location"] = self.tls["ca"]
                p[prefix + "ssl.client.auth"] = "none"
        return p

    def node_properties(self, node: KafkaNode) -> dict[str, Any]:
        """The full server.properties of ``node`` (before overrides are applied last)."""
        listeners, advertised, proto_map = [], [], [f"CONTROLLER:{self.controller_protocol}"]
        if node.is_broker:
            listeners.append(f"BROKER://127.0.0.1:{node.broker_port}")
            advertised.append(f"BROKER://127.0.0.1:{node.broker_port}")
            proto_map.append("BROKER:PLAINTEXT")
        if node.is_controller:
            listeners.append(f"CONTROLLER://127.0.0.1:{node.controller_port}")
        rf = max(1, min(len(self.brokers), 1))
        p: dict[str, Any] = {
            "process.roles": ",".join(node.roles),
            "node.id": node.node_id,
            "controller.quorum.voters": self.quorum_voters,
            "controller.listener.names": "CONTROLLER",
            "listeners": ",".join(listeners),
            "listener.security.protocol.map": ",".join(proto_map),
            "metadata.log.dir": node.log_dir,
            "log.dirs": node.data_dir,
            "num.network.threads": 2,
            "num.io.threads": 2,
            "num.recovery.threads.per.data.dir": 1,
            "background.threads": 2,
            "log.cleaner.threads": 1,
            "log.cleaner.dedupe.buffer.size": 4 * 1024 * 1024,
            "num.partitions": 1,
            "auto.create.topics.enable": False,
            "offsets.topic.replication.factor": rf,
            "offsets.topic.num.partitions": 1,
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 1,
            "group.initial.rebalance.delay.ms": 0,
        }
        if _major(self.dist.version) >= 4:
            p["share.coordinator.state.topic.replication.factor"] = rf
            p["share.coordinator.state.topic.min.isr"] = 1
        if node.is_broker:
            p["advertised.listeners"] = ",".join(advertised)
            p["inter.broker.listener.name"] = "BROKER"
        p.update(self._security_props())
        if node.is_broker:
            p.update(self.broker_overrides)
        if node.is_controller:
            p.update(self.controller_overrides)
        return p

    def format(self) -> None:
        """Write configs and run ``kafka-storage format`` (StorageTool) for every node, in parallel."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.security == "ssl" and not self.tls:
            self.tls = make_tls_material(self.workdir / "tls")
        extra: list[str] = []
        if self.security == "sasl_scram":
            for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
                extra += ["--add-scram", f"{mech}=[name={SASL_USER},password={SASL_PASSWORD}]"]
        if self.release_version:
            extra += ["--release-version", self.release_version]
        extra += self.format_args
        storage = self.dist.tool_class("kafka-storage")
        procs = []
        for node in self.nodes:
            node.home.mkdir(parents=True, exist_ok=True)
            write_properties(node.config_path, self.node_properties(node))
            cmd = self.dist.java_cmd(storage, "format", "-t", self.cluster_id, "-c", str(node.config_path),
                                     *extra)
            procs.append((node, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                 stdin=subprocess.DEVNULL, text=True)))
        errors = []
        for node, proc in procs:
            out, _ = proc.communicate(timeout=180)
            (node.home / "format.log").write_text(out)
            if proc.returncode != 0:
                errors.append(f"node {node.node_id}: {out.strip()[-2000:]}")
        if errors:
            raise HarnessError("kafka-storage format failed:\n" + "\n".join(errors))
        self._formatted = True

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout: float = 120) -> KafkaCluster:
        """Format storage (first time), start all JVMs, wait until every node is ready.

        Controllers start first; broker-only nodes start once the quorum has a leader (a 4.x broker
        started mid-election can miss the final leader change and give up after 60 s), and a broker
        that dies during start-up is restarted (up to ``broker_start_attempts`` times).
        """
        self.dist.ensure()
        if not self._formatted:
            self.format()
        with _LIVE_LOCK:
            _LIVE_CLUSTERS.add(self)
        t0 = time.monotonic()
        deadline = t0 + timeout
        try:
            for node in self.controllers:
                node.start(wait=False)
            brokers_only = [n for n in self.nodes if not n.is_controller]
            if brokers_only:
                self.wait_for_leader_files(timeout=max(1.0, deadline - time.monotonic()), starting=True)
                for node in brokers_only:
                    node.start(wait=False)
            for node in self.controllers:
                node.wait_ready(max(1.0, deadline - time.monotonic()))
            for node in brokers_only:
                self._wait_broker(node, deadline)
        except BaseException:
            self.kill_all()
            raise
        self.start_seconds = round(time.monotonic() - t0, 1)
        return self

    broker_start_attempts = 3

    def _wait_broker(self, node: KafkaNode, deadline: float) -> None:
        for attempt in range(self.broker_start_attempts):
            try:
                node.wait_ready(max(1.0, deadline - time.monotonic()))
                return
            except HarnessError:
                if node.is_running() or attempt == self.broker_start_attempts - 1:
                    raise
                node.start(wait=False)

    def leader_from_files(self) -> tuple[int, int] | None:
        """(leader id, epoch) from the running controllers' ``quorum-state`` files, newest epoch wins.

        Cheap (no JVM): good as a start-up gate; :meth:`wait_for_leader` asks the quorum itself.
        """
        best: tuple[int, int] | None = None
        for n in self.controllers:
            if not n.is_running():
                continue
            try:
                state = json.loads((n.metadata_dir / "quorum-state").read_text())
            except (OSError, ValueError):
                continue
            leader, epoch = int(state.get("leaderId", -1)), int(state.get("leaderEpoch", -1))
            if leader >= 0 and (best is None or epoch > best[1]):
                best = (leader, epoch)
        if best is not None:
            with contextlib.suppress(KeyError):
                if self.node(best[0]).is_running():
                    return best
        return None

    def wait_for_leader_files(self, timeout: float = 90, exclude: Iterable[int] = (),
                              starting: bool = False) -> int:
        """Wait until :meth:`leader_from_files` names a running leader not in ``exclude``.

        With ``starting``, a controller JVM that exits meanwhile is a start-up failure (raised with
        the tail of its log) instead of something to wait out.
        """
        excluded = set(exclude)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.leader_from_files()
            if found is not None and found[0] not in excluded:
                return found[0]
            for n in self.controllers if starting else ():
                if n.process is not None and n.process.poll() is not None:
                    raise HarnessError(f"controller {n.node_id} exited during start-up; log {n.log_path}:\n"
                                       f"{tail(n.log_path)}")
            time.sleep(0.25)
        raise HarnessError(f"no quorum leader in quorum-state files after {timeout}s")

    def stop(self, timeout: float = 60) -> None:
        """Controlled shutdown: brokers first (they need a controller to shut down cleanly)."""
        for group in ([n for n in self.nodes if not n.is_controller], self.controllers):
            for n in group:
                if n.is_running():
                    assert n.process is not None
                    n.process.send_signal(signal.SIGTERM)
            for n in group:
                n.stop(timeout)
        with _LIVE_LOCK:
            _LIVE_CLUSTERS.discard(self)

    def kill_all(self) -> None:
        for n in self.nodes:
            with contextlib.suppress(Exception):
                n.kill()
        with _LIVE_LOCK:
            _LIVE_CLUSTERS.discard(self)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop(timeout=30)
        finally:
            self.kill_all()

    # -- tools -------------------------------------------------------------------------------

    def admin(self, tool: str, *args: Any, timeout: float = 120, input: str | None = None,
              check: bool = False) -> subprocess.CompletedProcess[str]:
        """Run a Kafka CLI by script name (``kafka-topics``...) or main class; caller adds endpoints.

        Raises :class:`HarnessError` (with the log tail) first if a node has crashed, instead of
        letting the tool time out against a dead cluster.
        """
        self.check_alive()
        return self.dist.run(self.dist.tool_class(tool), *args, timeout=timeout, input=input, check=check)

    def check_alive(self) -> None:
        """Raise with the log tail if any node exited without being stopped or killed by us."""
        for n in self.nodes:
            if n.crashed():
                assert n.process is not None
                raise HarnessError(f"Kafka node {n.node_id} died (exit {n.process.returncode}); "
                                   f"log {n.log_path}:\n{tail(n.log_path)}")

    def client_properties(self, for_: str = "broker") -> dict[str, Any]:
        """Client settings to reach the broker listener (always PLAINTEXT) or the controller listener."""
        if for_ == "broker":
            return {"security.protocol": "PLAINTEXT"}
        if for_ != "controller":
            raise ValueError(f"for_ must be broker or controller, not {for_!r}")
        p: dict[str, Any] = {"security.protocol": self.controller_protocol}
        if self.security == "sasl_scram":
            p["sasl.mechanism"] = self.scram_mechanism
            p["sasl.jaas.config"] = ('org.apache.kafka.common.security.scram.ScramLoginModule required '
                                     f'username="{SASL_USER}" password="{SASL_PASSWORD}";')
        elif self.security == "ssl":
            p["ssl.truststore.type"] = "PEM"
            p["ssl.truststore.location"] = self.tls["ca"]
        return p

    def client_config_file(self, path: Path | str, for_: str = "broker") -> Path:
        """Write client properties for the broker or controller listener and return the path."""
        return write_properties(Path(path), self.client_properties(for_))

    def quorum_status(self, timeout: float = 60) -> dict[str, str]:
        """``kafka-metadata-quorum describe --status`` via the controller listener, as a dict."""
        cfg = self.client_config_file(self.workdir / "controller-client.properties", "controller")
        proc = self.admin("kafka-metadata-quorum", "--bootstrap-controller", self.controller_bootstrap,
                          "--command-config", cfg, "describe", "--status", timeout=timeout)
        if proc.returncode != 0:
            raise HarnessError(f"kafka-metadata-quorum failed: {(proc.stdout + proc.stderr)[-1500:]}")
        out: dict[str, str] = {}
        for line in proc.stdout.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                out[key.strip()] = value.strip()
        return out

    def wait_for_leader(self, timeout: float = 90, exclude: Iterable[int] = ()) -> int:
        """Wait until the quorum has a leader that is running and not in ``exclude``; return its id."""
        excluded = set(exclude)
        deadline = time.monotonic() + timeout
        last = ""
        with contextlib.suppress(HarnessError):  # cheap gate first: no JVM until a leader is likely
            self.wait_for_leader_files(timeout=timeout / 2, exclude=excluded)
        while time.monotonic() < deadline:
            try:
                status = self.quorum_status(timeout=max(10.0, min(60.0, deadline - time.monotonic())))
                leader = int(status.get("LeaderId", "-1"))
                last = str(status)
                if leader >= 0 and leader not in excluded:
                    with contextlib.suppress(KeyError):
                        if self.node(leader).is_running():
                            return leader
            except (HarnessError, ValueError) as exc:
                last = str(exc)
            time.sleep(1)
        raise HarnessError(f"no quorum leader (excluding {sorted(excluded)}) after {timeout}s: {last}")

    def active_controller(self, timeout: float = 90) -> KafkaNode:
        return self.node(self.wait_for_leader(timeout))

    def describe(self) -> str:
        """Human-readable endpoints summary (printed by the CLI ``start`` command)."""
        lines = [
            (f"Kafka {self.dist.version} {self.mode} cluster, security={self.security}, "
             f"cluster.id={self.cluster_id}"),
            f"bootstrap servers (PLAINTEXT): {self.bootstrap_servers}",
            f"controller bootstrap ({self.controller_protocol}): {self.controller_bootstrap}",
        ]
        for n in self.nodes:
            lines.append(
                f"  node {n.node_id} [{','.join(n.roles)}] pid={n.pid} metadata={n.log_dir} log={n.log_path}")
        if self.security != "plaintext":
            lines.append(f"controller client config: {self.workdir / 'controller-client.properties'}")
        return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# CLI


def _cli_fetch(args: argparse.Namespace) -> int:
    for version in args.versions or [DEFAULT_VERSION]:
        dist = KafkaDist(version)
        was_ready = dist.is_ready()
        dist.ensure()
        info = dist.info
        how = "cached" if was_ready else f"downloaded in {info['download_seconds']}s"
        print(f"Kafka {version}: {len(info['jars'])} jars, {info['bytes'] / 1e6:.1f} MB in {dist.libs} "
              f"({how})")
    return 0


def _cli_start(args: argparse.Namespace) -> int:
    dist = KafkaDist(args.version).ensure()
    workdir = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="metashell-kafka-"))
    overrides = dict(kv.split("=", 1) for kv in args.set or [])
    cluster = KafkaCluster(dist, workdir, mode=args.mode, security=args.security,
                           controllers=args.controllers, brokers=args.brokers,
                           broker_overrides=overrides, controller_overrides=overrides)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download Kafka jars into the cache")
    f.add_argument("versions", nargs="*", help=f"versions (default {DEFAULT_VERSION})")
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
        return _cli_fetch(args) if args.cmd == "fetch" else _cli_start(args)
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
