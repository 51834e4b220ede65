"""One Kafka version's jars in the local cache, and running its main classes and tools.

A dist is ``<cache>/<version>/``: ``libs/`` (what Maven copied), ``rebuilt/`` (recompiled modules,
see :mod:`harness.rebuild`), logging configs, and ``complete.json`` (the stamp: jar list in
classpath order and what the resolution substituted, pinned or excluded).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .common import (
    DEFAULT_VERSION,
    JVM_FLAGS,
    TOOL_HEAP,
    HarnessError,
    KafkaUnavailable,
    cache_root,
    file_lock,
    java_executable,
    major,
    version_key,
)
from .rebuild import _javac, find_javac, rebuild_substitutes
from .resolve import Resolution, lock_digest, resolve

#: Bumped when the cache dir layout changes; a dist of another layout is fetched again.
CACHE_LAYOUT = 3

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


def _run_java(
    cmd: list[str], label: str, timeout: float, input: str | None, check: bool, cwd: Path | None
) -> subprocess.CompletedProcess[str]:
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            cwd=cwd,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HarnessError(f"{label} timed out after {timeout}s") from exc
    if check and proc.returncode != 0:
        raise HarnessError(f"{label} exited {proc.returncode}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return proc


_NO_CLASS_ARCHIVE = frozenset({"org.apache.kafka.shell.MetadataShell"})
"""Main classes started without a class archive.  Kafka's metadata shell has a race in one-shot
mode (its command can run before the loader learns the high watermark, and it then waits for
ever): started 40% faster it lost the race on 2 runs in 3 for some corpus files, each a 120 s
timeout, where it starts plainly without a hang."""


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
        self.resolution: Resolution | None = None  # set when ensure() resolved (not read from cache)

    def __repr__(self) -> str:
        return f"KafkaDist({self.version!r}, dir={str(self.dir)!r})"

    # -- download ---------------------------------------------------------------------------

    def is_ready(self) -> bool:
        try:
            stamp = json.loads(self._stamp.read_text())
        except (OSError, ValueError):
            return False
        # A dist fetched under another lock (or before the lock changed) is fetched again.
        return stamp.get("layout") == CACHE_LAYOUT and stamp.get("lock", "") == lock_digest(self.version)

    def ensure(self, *, use_lock: bool = True) -> KafkaDist:
        """Download (once) the jars into the cache; safe if several processes race.

        The jars are the ones ``scripts/kafka-locks/<version>.json`` names, when the repository
        still serves them (see :mod:`harness.resolve`).  The finished dist appears atomically (built
        in a temp dir, then renamed); a dist of an older cache layout is replaced the same way.
        """
        if self.is_ready():
            return self
        java_executable()
        mvn = shutil.which("mvn")
        if not mvn:
            raise KafkaUnavailable("mvn not found on PATH (Maven is needed to fetch Kafka jars)")
        with file_lock(self.root / f".{self.version}.lock"):
            if self.is_ready():
                return self
            started = time.monotonic()
            tmp = Path(tempfile.mkdtemp(prefix=f".{self.version}-", dir=self.root))
            try:
                self.resolution = resolve(mvn, tmp, self.version, use_lock=use_lock)
                rebuilt, errors = rebuild_substitutes(mvn, tmp, self.version, self.resolution.substitutes)
                self._write_log_configs(tmp)
                stamp = self._make_stamp(tmp, self.resolution, rebuilt, errors)
                stamp["download_seconds"] = round(time.monotonic() - started, 1)
                (tmp / "complete.json").write_text(json.dumps(stamp, indent=1) + "\n")
                os.chmod(tmp, 0o755)  # mkdtemp made it private; the cache is shared
                if self.dir.exists():  # a half-done or older-layout dir (we hold the lock)
                    old = self.dir.with_name(f".{self.version}-old-{os.getpid()}")
                    os.rename(self.dir, old)
                    shutil.rmtree(old, ignore_errors=True)
                os.rename(tmp, self.dir)
                self._classes = None
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return self

    def _make_stamp(
        self, base: Path, res: Resolution, rebuilt: dict[str, str], errors: dict[str, str]
    ) -> dict[str, Any]:
        """The complete.json content: ``jars`` are paths relative to the dist dir, in classpath order."""
        replaced = {f"{m}-{v}.jar" for m, v in rebuilt.items()}
        jars = [f"libs/{p.name}" for p in sorted((base / "libs").glob("*.jar")) if p.name not in replaced]
        jars += [f"rebuilt/{p.name}" for p in sorted((base / "rebuilt").glob("*.jar"))]
        stamp: dict[str, Any] = {
            "layout": CACHE_LAYOUT,
            "version": self.version,
            "lock": lock_digest(self.version),
            "substitutes": res.substitutes,
            "rebuilt": rebuilt,
            "resolution": res.summary(),
            "jars": jars,
            "bytes": sum((base / j).stat().st_size for j in jars),
            "fetched_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        }
        if errors:
            stamp["rebuild_errors"] = errors
        return stamp

    def describe_jars(self) -> str:
        """One line saying which jars run as "Kafka VERSION": what the oracle reports with its answers."""
        info = self.info
        res = info.get("resolution", {})
        notes = [f"{m} rebuilt from {v} sources" for m, v in info.get("rebuilt", {}).items()]
        notes += [
            f"{m} from {v}"
            for m, v in info.get("substitutes", {}).items()
            if m not in info.get("rebuilt", {})
        ]
        notes += [f"{k} {p['wanted']}->{p['used']}" for k, p in res.get("pinned", {}).items()]
        notes += [f"without {k}" for k in res.get("excluded", {})]
        source = res.get("source", "resolved")
        return f"Kafka {self.version} ({source}{': ' + '; '.join(notes) if notes else ''})"

    def _write_log_configs(self, base: Path) -> None:
        if major(self.version) >= 4:
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
        if major(self.version) >= 4:
            return f"-Dlog4j2.configurationFile={self.dir / f'log4j2-{kind}.xml'}"
        return f"-Dlog4j.configuration=file:{self.dir / f'log4j-{kind}.properties'}"

    def java_cmd(
        self,
        main_class: str,
        *args: str,
        heap: str = TOOL_HEAP,
        kind: str = "tools",
        jvm_args: Iterable[str] = (),
        extra_classpath: Iterable[Path] = (),
    ) -> list[str]:
        """The full java command line for ``main_class`` with our classpath and flags."""
        classpath = os.pathsep.join([self.classpath, *map(str, extra_classpath)])
        return [
            java_executable(),
            f"-Xmx{heap}",
            *JVM_FLAGS,
            self.log_config_flag(kind),
            *jvm_args,
            "-cp",
            classpath,
            main_class,
            *[str(a) for a in args],
        ]

    def run(
        self,
        main_class: str,
        *args: Any,
        timeout: float = 120,
        input: str | None = None,
        check: bool = False,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a Kafka main class to completion and capture stdout/stderr as text.

        ``main_class`` may also be a script name such as ``kafka-topics`` (see :meth:`tool_class`).
        In a partly-published release the class may run from the fallback dist (see
        :meth:`dist_for`); ``proc.args`` shows the real command.
        """
        main_class = self.tool_class(main_class)
        dist = self.dist_for(main_class)
        cmd = dist.java_cmd(main_class, *[str(a) for a in args])
        label = f"{main_class} {' '.join(map(str, args))}"
        if main_class in _NO_CLASS_ARCHIVE:
            return _run_java(cmd, label, timeout, input, check, cwd)
        return dist._run_archived(cmd, main_class, label, timeout, input, check, cwd)

    def _run_archived(
        self,
        cmd: list[str],
        main_class: str,
        label: str,
        timeout: float,
        input: str | None,
        check: bool,
        cwd: Path | None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``cmd`` with an AppCDS archive of the classes its JVM loads (JDK 13+ dynamic archive).

        The oracle starts a JVM per tool call (hundreds per test run, ~1 s each, most of it loading
        and verifying the same classes).  The first run of a command line (flags, classpath, main
        class: the key) writes the archive as it exits 0; later runs map it and start ~40% faster.
        The archive only changes how classes are loaded, never what runs.  A JVM that finds it stale
        (new jars) ignores it; one that crashes on it (a damaged file can abort the JVM) has it
        deleted and runs again without.  ``-Xlog:cds`` is off: no CDS warning may land on stdout,
        which is the tool's answer."""
        head = cmd[: cmd.index(main_class) + 1]
        key = hashlib.sha256("\0".join(head).encode()).hexdigest()[:24]
        final = self.root / "cds" / f"{key}.jsa"
        quiet = ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
        if final.exists():
            proc = _run_java(
                [cmd[0], f"-XX:SharedArchiveFile={final}", *quiet, *cmd[1:]],
                label,
                timeout,
                input,
                False,
                cwd,
            )
            if proc.returncode >= 0 and "A fatal error has been detected" not in proc.stdout:
                if check and proc.returncode != 0:
                    raise HarnessError(
                        f"{label} exited {proc.returncode}:\n{(proc.stdout + proc.stderr)[-3000:]}"
                    )
                return proc
            final.unlink(missing_ok=True)
            return _run_java(cmd, label, timeout, input, check, cwd)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f"{key}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            dump = [cmd[0], f"-XX:ArchiveClassesAtExit={tmp}", *quiet, *cmd[1:]]
            proc = _run_java(dump, label, timeout, input, False, cwd)
            if proc.returncode == 0 and tmp.exists() and tmp.stat().st_size > 0:
                os.replace(tmp, final)
                return proc
        finally:
            tmp.unlink(missing_ok=True)
        # A failed dump can change the exit status (a classpath directory cannot be archived: the
        # JVM then exits 1): this run's answer is not trusted; run again as it would have run.
        return _run_java(cmd, label, timeout, input, check, cwd)

    def run_program(
        self,
        source: Path,
        *args: Any,
        beside: str,
        timeout: float = 120,
        check: bool = False,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Compile (once; cached by the source's hash) and run a one-file Java program whose class
        has the file's name, against the jars that run the class ``beside`` (so that a program built
        from, say, the metadata shell's classes runs where ``MetadataShell`` itself runs)."""
        dist = self.dist_for(self.tool_class(beside))
        classes = dist.compile_program(source)
        cmd = dist.java_cmd(source.stem, *[str(a) for a in args], extra_classpath=[classes])
        label = f"{source.stem} {' '.join(map(str, args))}"
        # no class archive: the program's classes are a directory, which CDS cannot archive
        return _run_java(cmd, label, timeout, None, check, cwd)

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
        except OSError:  # another process built it first
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
            self._fallback = KafkaDist(max(subs.values(), key=version_key), self.root).ensure()
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
