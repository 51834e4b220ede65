"""KRaft nodes and clusters on 127.0.0.1: format, start, stop, kill, and the admin tools against them.

Layout of a cluster work dir: ``node-<id>/{server.properties,server.log,format.log,metadata/,data/}``
where ``metadata/`` is the metadata log dir (meta.properties + ``__cluster_metadata-0``) and
``data/`` holds topic partitions (brokers only); ``tls/`` holds the CA and certs in ``ssl`` mode.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

from .common import (
    SASL_PASSWORD,
    SASL_USER,
    SERVER_HEAP,
    HarnessError,
    free_ports,
    major,
    parent_death_signal,
    random_kafka_uuid,
    tail,
    write_properties,
)
from .dist import KafkaDist
from .tls import make_tls_material

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


def track_live(cluster: KafkaCluster) -> None:
    """Kill ``cluster`` at exit if it is still running then (a subclass that starts its nodes its
    own way calls this first, as :meth:`KafkaCluster.start` does)."""
    with _LIVE_LOCK:
        _LIVE_CLUSTERS.add(cluster)


READY_MARKER = "Kafka Server started"


class KafkaNode:
    """One KRaft JVM (broker, controller or both) with its own config, dirs and log file."""

    def __init__(
        self,
        cluster: KafkaCluster,
        node_id: int,
        roles: tuple[str, ...],
        home: Path,
        broker_port: int | None,
        controller_port: int | None,
    ) -> None:
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
        #: the Kafka this node runs (None: the cluster's), for a node left on an older release
        self.dist: KafkaDist | None = None
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
        dist = self.dist or self.cluster.dist
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        self._stopping = False
        self.start_seconds = None
        cmd = dist.java_cmd(
            "kafka.Kafka",
            str(self.config_path),
            heap=self.cluster.heap,
            kind="server",
            jvm_args=self.cluster.jvm_args,
        )
        with open(self.log_path, "ab") as out:
            out.write(f"\n===== metashell harness: starting node {self.node_id} =====\n".encode())
            out.flush()
            self.process = subprocess.Popen(
                cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.home,
                preexec_fn=parent_death_signal,  # noqa: PLW1509 - see docstring
            )
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
                    f"log {self.log_path}:\n{tail(self.log_path)}"
                )
            if READY_MARKER in self.log_text():
                self.start_seconds = round(time.monotonic() - self._started_at, 1)
                return
            if time.monotonic() > deadline:
                raise HarnessError(
                    f"Kafka node {self.node_id} not ready after {timeout}s; log {self.log_path}:\n"
                    f"{tail(self.log_path)}"
                )
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

    def __init__(
        self,
        dist: KafkaDist,
        workdir: Path,
        mode: str = "combined",
        controllers: int | None = None,
        brokers: int | None = None,
        security: str = "plaintext",
        broker_overrides: dict[str, Any] | None = None,
        controller_overrides: dict[str, Any] | None = None,
        *,
        cluster_id: str | None = None,
        release_version: str | None = None,
        format_args: Iterable[str] = (),
        heap: str = SERVER_HEAP,
        jvm_args: Iterable[str] = (),
        scram_mechanism: str = "SCRAM-SHA-256",
    ) -> None:
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
            scram = (
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                f'username="{SASL_USER}" password="{SASL_PASSWORD}";'
            )
            plain = (
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'username="{SASL_USER}" password="{SASL_PASSWORD}" user_{SASL_USER}="{SASL_PASSWORD}";'
            )
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
        if major(self.dist.version) >= 4:
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
            cmd = self.dist.java_cmd(
                storage, "format", "-t", self.cluster_id, "-c", str(node.config_path), *extra
            )
            procs.append(
                (
                    node,
                    subprocess.Popen(
                        cmd,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                        text=True,
                    ),
                )
            )
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
        track_live(self)
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

    def wait_for_leader_files(
        self, timeout: float = 90, exclude: Iterable[int] = (), starting: bool = False
    ) -> int:
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
                    raise HarnessError(
                        f"controller {n.node_id} exited during start-up; log {n.log_path}:\n"
                        f"{tail(n.log_path)}"
                    )
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

    def admin(
        self, tool: str, *args: Any, timeout: float = 120, input: str | None = None, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run a Kafka CLI by script name (``kafka-topics``...) or main class; caller adds endpoints.

        Raises :class:`HarnessError` (with the log tail) first if a node has crashed, instead of
        letting the tool time out against a dead cluster.
        """
        self.check_alive()
        return self.dist.run(self.dist.tool_class(tool), *args, timeout=timeout, input=input, check=check)

    def create_topic(self, name: str, partitions: int = 1, replication: int = 1) -> None:
        """``kafka-topics --create`` through the broker listener; raises with the tool's output."""
        proc = self.admin(
            "kafka-topics",
            "--bootstrap-server",
            self.bootstrap_servers,
            "--create",
            "--topic",
            name,
            "--partitions",
            str(partitions),
            "--replication-factor",
            str(replication),
        )
        if proc.returncode != 0:
            raise HarnessError(f"kafka-topics --create {name}: {proc.stdout}{proc.stderr}")
        self.wait_topic_served(name)

    def wait_topic_served(self, name: str, timeout: float = 60) -> None:
        """Wait until every running broker answers for topic ``name``.

        ``kafka-topics --create`` returns once the controller has committed the topic; a broker
        learns of it when it next fetches the metadata log, a moment later. A tool that asks a
        broker about the topic in between is told UnknownTopicOrPartition (``kafka-configs
        --alter`` describes the topic's configs first, and failed so in CI on Kafka 3.9). Asking
        each broker until it answers turns that race into a condition.
        """
        deadline = time.monotonic() + timeout
        for node in self.brokers:
            while node.is_running():
                proc = self.admin(
                    "kafka-topics",
                    "--bootstrap-server",
                    f"127.0.0.1:{node.broker_port}",
                    "--describe",
                    "--topic",
                    name,
                )
                if proc.returncode == 0 and name in proc.stdout:
                    break
                if time.monotonic() > deadline:
                    raise HarnessError(
                        f"broker {node.node_id} does not serve topic {name} {timeout:.0f} s after it was "
                        f"created: {proc.stdout}{proc.stderr[-2000:]}"
                    )

    def check_alive(self) -> None:
        """Raise with the log tail if any node exited without being stopped or killed by us."""
        for n in self.nodes:
            if n.crashed():
                assert n.process is not None
                raise HarnessError(
                    f"Kafka node {n.node_id} died (exit {n.process.returncode}); "
                    f"log {n.log_path}:\n{tail(n.log_path)}"
                )

    def client_properties(self, for_: str = "broker") -> dict[str, Any]:
        """Client settings to reach the broker listener (always PLAINTEXT) or the controller listener."""
        if for_ == "broker":
            return {"security.protocol": "PLAINTEXT"}
        if for_ != "controller":
            raise ValueError(f"for_ must be broker or controller, not {for_!r}")
        p: dict[str, Any] = {"security.protocol": self.controller_protocol}
        if self.security == "sasl_scram":
            p["sasl.mechanism"] = self.scram_mechanism
            p["sasl.jaas.config"] = (
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                f'username="{SASL_USER}" password="{SASL_PASSWORD}";'
            )
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
        proc = self.admin(
            "kafka-metadata-quorum",
            "--bootstrap-controller",
            self.controller_bootstrap,
            "--command-config",
            cfg,
            "describe",
            "--status",
            timeout=timeout,
        )
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
            (
                f"Kafka {self.dist.version} {self.mode} cluster, security={self.security}, "
                f"cluster.id={self.cluster_id}"
            ),
            f"bootstrap servers (PLAINTEXT): {self.bootstrap_servers}",
            f"controller bootstrap ({self.controller_protocol}): {self.controller_bootstrap}",
        ]
        for n in self.nodes:
            lines.append(
                f"  node {n.node_id} [{','.join(n.roles)}] pid={n.pid} metadata={n.log_dir} log={n.log_path}"
            )
        if self.security != "plaintext":
            lines.append(f"controller client config: {self.workdir / 'controller-client.properties'}")
        return "\n".join(lines)
