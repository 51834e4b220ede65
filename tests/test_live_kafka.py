"""Live mode against REAL Kafka controllers (scripts/kafka_harness.py), Kafka 3.9.2 and 4.4.0.

Clusters (one running at a time -- the machine is small -- and each started once per version):

* ``quorum``: 3 controllers + 1 broker, PLAINTEXT, StandardAuthorizer (ANONYMOUS super user), and
  controllers that snapshot every 3 s and delete old segments/snapshots after 15 s, so the log
  starts after a snapshot and every new client is served by FetchSnapshot;
* ``sasl``: one combined node whose controller listener is SASL_PLAINTEXT (SCRAM/PLAIN user
  ``admin``), with an authorizer, to check credentials and ACL failures;
* ``ssl``: one combined node whose controller listener is SSL with the harness's self-signed CA.

Run with ``pytest tests/test_live_kafka.py -m kafka``; skipped when Java/Maven are unavailable.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import kafka_harness  # on sys.path through conftest
import pytest
from conftest import KAFKA_VERSIONS, REPO, get_dist, kafka_unavailable, native_core

from metashell.image.live_feed import LiveSession
from metashell.image.loader import load_directory
from metashell.live import (
    AuthenticationError,
    AuthorizationError,
    ClientConfig,
    LiveConnectionError,
    LiveError,
    LiveSource,
    LiveWarning,
    SnapshotLoaded,
)
from metashell.tree import build_root, iter_find

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


# ---------------------------------------------------------------------------------------------------
# one cluster at a time


class ClusterPool:
    """Keeps at most one cluster running; asking for another stops the current one first."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.key: tuple[Any, ...] | None = None
        self.cluster: Any = None

    def get(self, key: tuple[Any, ...], make: Callable[[Path], Any]) -> Any:
        if self.key == key:
            return self.cluster
        self.close()
        workdir = self.root / "-".join(map(str, key))
        cluster = make(workdir)
        try:
            cluster.start(timeout=240)
        except kafka_harness.KafkaUnavailable as e:
            cluster.kill_all()
            kafka_unavailable(str(e))
        except BaseException:
            cluster.kill_all()
            raise
        self.key, self.cluster = key, cluster
        return cluster

    def close(self) -> None:
        if self.cluster is not None:
            try:
                self.cluster.stop(timeout=30)
            finally:
                self.cluster.kill_all()
        self.key = self.cluster = None


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterPool]:
    p = ClusterPool(tmp_path_factory.mktemp("live-kafka"))
    yield p
    p.close()


@pytest.fixture(scope="module", params=KAFKA_VERSIONS)
def dist(request: pytest.FixtureRequest) -> Any:
    """Module-scoped so pytest runs every test of one version before switching (one cluster at a time)."""
    return get_dist(request.param)


def _quorum(dist: Any, workdir: Path) -> Any:
    common = {
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "true",
    }
    ctrl = dict(
        common,
        **{
            "metadata.log.max.snapshot.interval.ms": 3000,
            "metadata.log.segment.ms": 8000,
            "metadata.max.retention.ms": 15000,
        },
    )
    return kafka_harness.KafkaCluster(
        dist,
        workdir,
        mode="split",
        controllers=3,
        brokers=1,
        controller_overrides=ctrl,
        broker_overrides=common,
    )


@pytest.fixture
def quorum(pool: ClusterPool, dist: Any) -> Any:
    c = pool.get(("quorum", dist.version), lambda wd: _quorum(dist, wd))
    for n in c.nodes:  # a previous test may have killed one
        if not n.is_running():
            n.start(wait=True, timeout=180)
    return c


@pytest.fixture
def sasl(pool: ClusterPool, dist: Any) -> Any:
    common = {"authorizer.class.name": AUTHORIZER, "super.users": "User:admin;User:ANONYMOUS"}
    return pool.get(
        ("sasl", dist.version),
        lambda wd: kafka_harness.KafkaCluster(
            dist,
            wd,
            mode="combined",
            security="sasl_scram",
            controller_overrides=common,
            broker_overrides=common,
        ),
    )


@pytest.fixture
def tls(pool: ClusterPool, dist: Any) -> Any:
    return pool.get(
        ("ssl", dist.version),
        lambda wd: kafka_harness.KafkaCluster(dist, wd, mode="combined", security="ssl"),
    )


@pytest.fixture
def old_mv(pool: ClusterPool, dist: Any) -> Any:
    """A controller whose metadata.version predates controller registrations (3.7-IV0)."""
    return pool.get(
        ("old-mv", dist.version),
        lambda wd: kafka_harness.KafkaCluster(dist, wd, mode="combined", release_version="3.6-IV2"),
    )


# ---------------------------------------------------------------------------------------------------
# helpers


def admin(cluster: Any, tool: str, *args: str) -> str:
    proc = cluster.admin(tool, "--bootstrap-server", cluster.bootstrap_servers, *args, timeout=180)
    assert proc.returncode == 0, f"{tool} {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr[-2000:]}"
    return proc.stdout


def dump(image: Any) -> list[str]:
    """``find /`` plus ``cat`` of every leaf (unredacted)."""
    out = []
    for path, node in iter_find("/", build_root(image, source_info={}, redact=False)):
        out.append(path)
        if not node.is_dir:
            out.append("  " + node.text(False))
    return out


#: Leaves that describe how an image was loaded, not the metadata (see the leader-kill test).
LOAD_NODES = ("/provenance", "/quorum")


def without(lines: list[str], drop: tuple[str, ...]) -> list[str]:
    """A dump without the given leaves (each is a path line followed by its text line)."""
    out: list[str] = []
    skip = False
    for line in lines:
        if skip:
            skip = False
            continue
        if line in drop:
            skip = True
            continue
        out.append(line)
    return out


def paths(image: Any) -> set[str]:
    return {p for p, _ in iter_find("/", build_root(image, source_info={}, redact=False))}


def text(image: Any, path: str) -> str:
    for p, node in iter_find("/", build_root(image, source_info={}, redact=False)):
        if p == path:
            return node.text(False)
    raise KeyError(path)


def wait_for(session: LiveSession, pred: Callable[[], bool], timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while True:
        session.sync()
        if pred():
            return
        if session.source.error is not None:
            raise session.source.error
        assert time.monotonic() < deadline, f"timed out waiting for {what}; status {session.status}"
        time.sleep(0.05)


def copy_metadata_dir(src: Path, dst: Path) -> Path:
    """Copy a live controller's metadata dir, tolerating files Kafka deletes while we copy."""
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    for f in sorted(src.iterdir()):
        if f.name.endswith(".deleted") or not f.is_file():
            continue
        with contextlib.suppress(FileNotFoundError):
            shutil.copy2(f, dst / f.name)
    return dst


CLI = "import sys; from metashell.cli import main; sys.exit(main(sys.argv[1:]))"


def run_cli(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", CLI, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )
    return proc, time.monotonic() - t0


def assert_one_line_failure(
    proc: subprocess.CompletedProcess[str], elapsed: float, needle: str, secret: str | None = None
) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("warning:")]
    assert len(lines) == 1, proc.stderr
    assert needle in lines[0], lines[0]
    assert "Traceback" not in proc.stderr
    assert elapsed < 30, elapsed
    if secret:
        assert secret not in proc.stdout + proc.stderr


# ---------------------------------------------------------------------------------------------------
# the 3-controller quorum


def test_bootstrap_learns_cluster_and_controllers(quorum: Any) -> None:
    src = LiveSource(quorum.controller_bootstrap.split(",")[0])
    src.connect()
    try:
        st = src.status
        assert st.cluster_id == quorum.cluster_id
        assert sorted(st.controllers) == [1, 2, 3]
        assert {int(ep.rsplit(":", 1)[1]) for ep in st.controllers.values()} == {
            n.controller_port for n in quorum.controllers
        }
    finally:
        src.stop()


def test_changes_appear_in_the_live_tree(quorum: Any) -> None:
    session = LiveSession(quorum.controller_bootstrap)
    try:
        session.wait_caught_up(60)
        admin(quorum, "kafka-topics", "--create", "--topic", "live-t1", "--partitions", "3")
        quorum.wait_topic_served("live-t1")  # kafka-configs asks the broker, which learns a moment later
        admin(
            quorum,
            "kafka-configs",
            "--alter",
            "--entity-type",
            "topics",
            "--entity-name",
            "live-t1",
            "--add-config",
            "retention.ms=123456",
        )
        admin(
            quorum,
            "kafka-acls",
            "--add",
            "--allow-principal",
            "User:bob",
            "--operation",
            "Read",
            "--topic",
            "live-t1",
        )
        admin(
            quorum,
            "kafka-configs",
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "carol",
            "--add-config",
            "SCRAM-SHA-256=[iterations=4096,password=carol-secret]",
        )
        img = session.image

        def arrived() -> bool:
            p = paths(img)
            return (
                "/image/topics/byName/live-t1/2" in p
                and "/image/configs/TOPIC:live-t1/retention.ms" in p
                and "/image/scram/SCRAM-SHA-256/carol" in p
                and any(q.startswith("/image/acls/byId/") for q in p)
            )

        wait_for(session, arrived, what="topic, config, ACL and SCRAM user")
        assert text(img, "/image/configs/TOPIC:live-t1/retention.ms") == "123456"
        acls = [text(img, p) for p in paths(img) if p.startswith("/image/acls/byId/")]
        assert any("User:bob" in a and "live-t1" in a for a in acls)
        assert "carol-secret" not in "".join(dump(img))
        st = session.status
        assert st.lag == 0 or st.lag is not None
        assert "leader" in session.status_text()
    finally:
        session.close()


def test_follows_a_new_leader_and_matches_an_offline_load(quorum: Any, tmp_path: Path) -> None:
    session = LiveSession(quorum.controller_bootstrap)
    old = -1
    try:
        session.wait_caught_up(60)
        old = session.status.leader_id
        assert old in (1, 2, 3)
        quorum.node(old).kill()
        admin(quorum, "kafka-topics", "--create", "--topic", "after-kill", "--partitions", "2")
        wait_for(
            session,
            lambda: "/image/topics/byName/after-kill/1" in paths(session.image),
            timeout=120,
            what="a topic created after the leader died",
        )
        st = session.status
        assert st.leader_id not in (-1, old) and st.leader_epoch > 0
        # Freeze the live image (nothing is applied until sync) and load a survivor's directory
        # up to the same offset: the trees must be identical.
        offset = session.image.provenance.offset
        survivor = next(n for n in quorum.controllers if n.node_id != old)
        offline = offline_at(survivor.metadata_dir, offset, tmp_path)
        # Every node byte for byte -- Kafka's /image mirror included -- except the two that describe
        # the *load* rather than the metadata: /provenance (files read, snapshot path, record counts)
        # and /quorum (meta.properties node/directory id and quorum-state exist only on disk).
        live_dump, offline_dump = dump(session.image), dump(offline.image)
        assert without(live_dump, LOAD_NODES) == without(offline_dump, LOAD_NODES)
        if "/provenance" in live_dump:
            keys = ("offset", "epoch", "timestamp")
            live_json = json.loads(text(session.image, "/provenance"))
            offline_json = json.loads(text(offline.image, "/provenance"))
            assert {k: live_json[k] for k in keys} == {k: offline_json[k] for k in keys}
            assert set(live_json) == set(offline_json)  # one schema whatever the source
        if "/quorum" in live_dump:
            # the offline leader depends on whether a LeaderChange record lies after the snapshot used
            q = json.loads(text(session.image, "/quorum"))
            assert (q["clusterId"], q["leaderId"], q["leaderEpoch"]) == (
                quorum.cluster_id,
                st.leader_id,
                st.leader_epoch,
            )
    finally:
        session.close()
        if old > 0:
            quorum.node(old).start(wait=True, timeout=180)


def offline_at(node_dir: Path, offset: int, where: Path) -> Any:
    """An offline load of a copy of a running controller's directory up to ``offset`` (copied again
    until the copy holds it: the node may not have flushed it yet)."""
    for attempt in range(20):
        copy = copy_metadata_dir(node_dir, where / f"copy-{attempt}")
        offline = load_directory(copy, until_offset=offset)
        if offline.image.provenance.offset == offset:
            return offline
        time.sleep(0.5)
    raise AssertionError(f"{node_dir} never held offset {offset}")


#: A live session in its own process (so that it runs the engine asked for): caught up, it says
#: "ready", reads a topic name on stdin, follows until that topic is in the image, and prints its
#: ``dump`` and offset as JSON.
_LIVE_DUMP = r"""
import json, sys, time
from metashell.image.live_feed import LiveSession
from metashell.tree import build_root, iter_find

session = LiveSession(sys.argv[1])
try:
    session.wait_caught_up(120)
    print("ready", flush=True)
    wanted = sys.stdin.readline().strip()
    deadline = time.monotonic() + 180
    while True:
        session.sync()
        if wanted in session.image.topics.by_name:
            break
        if session.source.error is not None:
            raise session.source.error
        assert time.monotonic() < deadline, "the topic never arrived"
        time.sleep(0.05)
    out = []
    for path, node in iter_find("/", build_root(session.image, source_info={}, redact=False)):
        out.append(path)
        if not node.is_dir:
            out.append("  " + node.text(False))
    print(json.dumps({"offset": session.image.provenance.offset, "leader": session.status.leader_id, "dump": out}))
finally:
    session.close()
"""


@pytest.mark.parametrize("engine", ["python", "native"])
def test_a_live_session_equals_the_directory_on_each_engine_across_a_fail_over(
    quorum: Any, tmp_path: Path, engine: str
) -> None:
    """The live feed on each engine (on the native one, committed batches go by the directory's bulk
    path, ``image/fetched_log.py``), caught up after records past the snapshot, then following
    through the leader's death to a topic created under the new leader, makes the image an offline
    load of a survivor's directory makes up to the same offset, node for node."""
    if engine == "native":
        native_core()
    topic = f"same-on-{engine}"
    # a config with it (one request: a second tool could ask a broker that does not know the topic yet)
    admin(
        quorum,
        "kafka-topics",
        "--create",
        "--topic",
        topic,
        "--partitions",
        "3",
        "--config",
        "retention.ms=4321",
    )
    env = {**os.environ, "METASHELL_ENGINE": engine}
    proc = subprocess.Popen(
        [sys.executable, "-c", _LIVE_DUMP, quorum.controller_bootstrap],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    old = -1
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read() if proc.stderr else ""
        old = quorum.wait_for_leader()
        quorum.node(old).kill()
        after = f"after-fail-over-on-{engine}"
        admin(quorum, "kafka-topics", "--create", "--topic", after, "--partitions", "2")
        out, err = proc.communicate(f"{after}\n", timeout=300)
        assert proc.returncode == 0, err[-3000:]
        live = json.loads(out.strip().splitlines()[-1])
        assert live["leader"] not in (-1, old)
        assert f"/image/topics/byName/{topic}/2" in live["dump"]
        survivor = next(n for n in quorum.controllers if n.node_id != old)
        offline = offline_at(survivor.metadata_dir, live["offset"], tmp_path)
        assert without(live["dump"], LOAD_NODES) == without(dump(offline.image), LOAD_NODES)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        if old > 0:
            quorum.node(old).start(wait=True, timeout=180)


def test_a_session_left_behind_the_log_start_is_served_the_newer_snapshot(
    quorum: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session that stops taking records (a REPL left at its prompt: the queue is full) while the
    leader snapshots and deletes the segments it would fetch next is, when it goes on, served the
    newer snapshot (Fetch answers with a SnapshotId below the log start): the image is replaced and
    equals the directory's, nothing between is lost or applied twice."""
    from metashell.image import live_feed
    from metashell.log.directory import open_metadata_dir

    monkeypatch.setattr(live_feed, "MAX_QUEUED_RECORDS", 1)  # one queued event holds the live thread
    session = LiveSession(quorum.controller_bootstrap)
    try:
        session.wait_caught_up(60)
        first = session.status.snapshot_id
        observer = session.source._observer
        assert observer is not None
        n = 0

        def log_start() -> int:
            d = open_metadata_dir(quorum.active_controller().metadata_dir)
            return d.segments[0].base_offset if d.segments else -1

        deadline = time.monotonic() + 240
        while log_start() <= observer.fetch_offset:  # new records roll and retire segments
            assert time.monotonic() < deadline, (log_start(), observer.fetch_offset)
            admin(quorum, "kafka-topics", "--create", "--topic", f"behind-{n}", "--partitions", "1")
            n += 1
        session.wait_caught_up(120)  # applies what was queued; the observer goes on and is behind
        wait_for(
            session,
            lambda: f"/image/topics/byName/behind-{n - 1}/0" in paths(session.image),
            timeout=120,
            what="the last topic created while the session held",
        )
        assert session.status.snapshot_id != first  # served a newer snapshot
        offline = offline_at(
            quorum.active_controller().metadata_dir, session.image.provenance.offset, tmp_path
        )
        assert without(dump(session.image), LOAD_NODES) == without(dump(offline.image), LOAD_NODES)
    finally:
        session.close()


def test_log_that_starts_after_a_snapshot_is_served_by_fetch_snapshot(quorum: Any) -> None:
    # Placed after the test above, whose topics made the controllers snapshot and delete the start
    # of their log (about 50 s of a fresh cluster): that is usually so already when this starts.
    admin(quorum, "kafka-topics", "--create", "--topic", "snap-t", "--partitions", "2")
    # wait until the controllers have deleted the start of their log
    deadline = time.monotonic() + 120
    while True:
        events: list[Any] = []
        src = LiveSource(quorum.controller_bootstrap, max_wait_ms=200)
        st = src.run_until_caught_up(events.append, timeout=60)
        snaps = [e for e in events if isinstance(e, SnapshotLoaded)]
        if st.log_start_offset > 0 and snaps:
            break
        assert time.monotonic() < deadline, f"log never started after a snapshot: {st}"
        time.sleep(3)
    assert snaps[0].snapshot_id.end_offset >= st.log_start_offset
    session = LiveSession(quorum.controller_bootstrap)
    try:
        session.wait_caught_up(60)
        assert session.image.provenance.snapshot is not None
        assert "/image/topics/byName/snap-t/1" in paths(session.image)
        admin(quorum, "kafka-topics", "--create", "--topic", "after-snap", "--partitions", "1")
        wait_for(
            session,
            lambda: "/image/topics/byName/after-snap/0" in paths(session.image),
            what="a record after the snapshot",
        )
    finally:
        session.close()


def test_the_client_is_not_a_quorum_member(quorum: Any) -> None:
    src = LiveSource(quorum.controller_bootstrap).start()
    try:
        assert src.wait_caught_up(60)
        q = src.describe_quorum()
        voters = sorted(v["ReplicaId"] for v in q["CurrentVoters"])
        observers = sorted(o["ReplicaId"] for o in q["Observers"])
        assert voters == [1, 2, 3]
        assert observers == [4]  # the broker only
    finally:
        src.stop()


def _quorum_tool(cluster: Any, *args: str) -> str:
    proc = cluster.admin(
        "kafka-metadata-quorum", "--bootstrap-controller", cluster.controller_bootstrap, *args, timeout=180
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_quorum_in_a_live_session_says_what_kafka_metadata_quorum_says(quorum: Any) -> None:
    """``quorum`` with ``-q``: ``describe --status`` and ``--replication`` from the leader, as
    Kafka's own tool prints them for the same cluster.  Offsets and times move between the two
    runs (an idle controller appends every 500 ms), so those are compared as "not behind Kafka's
    earlier answer"; ids, directory ids, roles and endpoints exactly."""
    status = _quorum_tool(quorum, "describe", "--status")
    replication = _quorum_tool(quorum, "describe", "--replication")
    proc, _ = run_cli("-q", quorum.controller_bootstrap, "-c", "quorum", timeout=120)
    assert proc.returncode == 0, proc.stderr
    ours = proc.stdout.split("\n\n")
    theirs_status = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    ours_status = dict(line.split(":", 1) for line in ours[0].splitlines() if ":" in line)
    assert list(ours_status) == list(theirs_status)
    for key in ("ClusterId", "LeaderId", "LeaderEpoch", "CurrentVoters", "CurrentObservers"):
        # Kafka 3.9's tool prints an unknown directory id as null; 4.x's, as metashell, leaves it out
        theirs = (
            theirs_status[key]
            .strip()
            .replace('"directoryId": null, ', "")
            .replace(', "directoryId": null', "")
        )
        assert ours_status[key].strip() == theirs, key
    assert int(ours_status["HighWatermark"]) >= int(theirs_status["HighWatermark"])

    def table(text: str) -> dict[str, dict[str, str]]:
        rows = [line.split() for line in text.splitlines() if line.strip()]
        head = next(i for i, cols in enumerate(rows) if cols[:1] == ["NodeId"])
        return {cols[0]: dict(zip(rows[head], cols, strict=True)) for cols in rows[head + 1 :]}

    mine, kafkas = table(ours[1]), table(replication)
    assert list(mine) == list(kafkas)  # leader, followers, observers, in Kafka's order
    for node, row in kafkas.items():
        assert (mine[node]["DirectoryId"], mine[node]["Status"]) == (row["DirectoryId"], row["Status"])
        assert int(mine[node]["LogEndOffset"]) >= int(row["LogEndOffset"])
    doc = json.loads(
        run_cli("-q", quorum.controller_bootstrap, "--json", "-c", "quorum", timeout=120)[0].stdout
    )
    assert doc["voters"][0]["nodeId"] == doc["leaderId"]
    assert [o["nodeId"] for o in doc["observers"]] == [4]
    # beside it, every node's own directory (read after the leader answered, and logs only grow):
    # on disk at least what the leader saw that node hold, and the leader's at least the high watermark
    disks = [str(n.metadata_dir) for n in quorum.nodes]
    args = [w for d in disks for w in ("-d", d)]
    doc = json.loads(
        run_cli("-q", quorum.controller_bootstrap, *args, "--json", "-c", "quorum", timeout=120)[0].stdout
    )
    assert [d["directory"] for d in doc["directories"]] == disks
    for node, disk in zip(quorum.nodes, doc["directories"], strict=True):
        assert disk["problem"] is None and disk["nodeId"] == node.node_id, disk
        assert disk["logEndOffset"] >= disk["leaderLogEndOffset"] >= 0, disk
        if node.node_id == doc["leaderId"]:
            assert disk["behindHighWatermark"] <= 0, disk
    proc, _ = run_cli("-q", quorum.controller_bootstrap, *args, "-c", "quorum", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Directories, read now" in proc.stdout and all(d in proc.stdout for d in disks)


def test_error_lines(quorum: Any) -> None:
    # a broker endpoint
    proc, elapsed = run_cli("-q", quorum.bootstrap_servers, "-c", "ls /")
    assert_one_line_failure(
        proc, elapsed, "this is a broker endpoint; give the controller listener (controller.listener.names)"
    )
    # an unreachable host
    dead = kafka_harness.free_ports(1)[0]
    proc, elapsed = run_cli("-q", f"127.0.0.1:{dead}", "-c", "ls /")
    assert_one_line_failure(proc, elapsed, f"cannot connect to 127.0.0.1:{dead}: connection refused")
    # a wrong cluster id (the API's cluster_id check; the CLI has no flag for it)
    with pytest.raises(LiveError, match=f"wrong cluster: .* belongs to cluster {quorum.cluster_id}, not "):
        LiveSource(quorum.controller_bootstrap, cluster_id="AAAAAAAAAAAAAAAAAAAAAA").connect()


def test_one_shot_cli_prints_the_live_tree(quorum: Any) -> None:
    admin(quorum, "kafka-topics", "--create", "--topic", "cli-t", "--partitions", "1")
    proc, _ = run_cli("-q", quorum.controller_bootstrap, "-c", "ls /image/topics/byName", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "cli-t" in proc.stdout.split()


# ---------------------------------------------------------------------------------------------------
# SASL


def _sasl_props(mechanism: str, user: str, password: str) -> dict[str, str]:
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": f"org.apache.kafka.common.security.{module} required "
        f'username="{user}" password="{password}";',
    }


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"])
def test_sasl_mechanisms(sasl: Any, mechanism: str) -> None:
    cfg = ClientConfig.from_properties(
        _sasl_props(mechanism, kafka_harness.SASL_USER, kafka_harness.SASL_PASSWORD)
    )
    session = LiveSession(sasl.controller_bootstrap, cfg)
    try:
        session.wait_caught_up(60)
        assert "/image/scram/SCRAM-SHA-512/admin" in paths(session.image)
    finally:
        session.close()


def test_sasl_from_a_config_file_via_the_cli(sasl: Any, tmp_path: Path) -> None:
    cfg = sasl.client_config_file(tmp_path / "client.properties", for_="controller")
    proc, _ = run_cli(
        "-q", sasl.controller_bootstrap, "--config", str(cfg), "-c", "ls /image/scram", timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "SCRAM-SHA-256" in proc.stdout


def test_wrong_password_is_one_line(sasl: Any, tmp_path: Path) -> None:
    f = tmp_path / "bad.properties"
    props = _sasl_props("SCRAM-SHA-256", kafka_harness.SASL_USER, "not-the-password")
    f.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    proc, elapsed = run_cli("-q", sasl.controller_bootstrap, "--config", str(f), "-c", "ls /")
    assert_one_line_failure(proc, elapsed, "SASL authentication failed on", secret="not-the-password")
    with pytest.raises(AuthenticationError, match=r"\(SCRAM-SHA-256, user 'admin'\)"):
        LiveSource(sasl.controller_bootstrap, ClientConfig.from_file(f)).connect()


def test_user_without_cluster_action_is_refused(sasl: Any) -> None:
    admin(
        sasl,
        "kafka-configs",
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "reader",
        "--add-config",
        "SCRAM-SHA-256=[iterations=4096,password=reader-secret]",
    )
    cfg = ClientConfig.from_properties(_sasl_props("SCRAM-SHA-256", "reader", "reader-secret"))
    deadline = time.monotonic() + 60
    while True:  # the credential reaches the controller a moment after the broker acknowledged it
        events: list[Any] = []
        try:
            LiveSource(sasl.controller_bootstrap, cfg, max_wait_ms=200).run_until_caught_up(events.append, 30)
        except AuthorizationError as e:
            assert "CLUSTER_ACTION on the CLUSTER resource" in str(e)
            assert any(
                "denied DescribeCluster (needs ALTER on CLUSTER)" in str(w)
                for w in events
                if isinstance(w, LiveWarning)
            )
            return
        except AuthenticationError:
            assert time.monotonic() < deadline
            time.sleep(1)
            continue
        pytest.fail("a user without ACLs could read the metadata log")


# ---------------------------------------------------------------------------------------------------
# TLS


def test_tls_with_the_harness_ca(tls: Any, tmp_path: Path) -> None:
    cfg = tls.client_config_file(tmp_path / "tls.properties", for_="controller")
    session = LiveSession(tls.controller_bootstrap, str(cfg))
    try:
        session.wait_caught_up(60)
        assert session.status.cluster_id == tls.cluster_id
    finally:
        session.close()
    # the same through "localhost" (hostname verification checks the DNS SAN) and a PKCS12 store
    port = tls.controllers[0].controller_port
    p12 = tls.tls.get("truststore_p12")
    props = {"security.protocol": "SSL"}
    if p12 is not None and Path(p12).exists():
        props |= {
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": str(p12),
            "ssl.truststore.password": "changeit",
        }
    else:
        props |= {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(tls.tls["ca"])}
    st = LiveSource(
        f"localhost:{port}", ClientConfig.from_properties(props), max_wait_ms=200
    ).run_until_caught_up(timeout=60)
    assert st.caught_up


def test_tls_errors_are_one_line(tls: Any, tmp_path: Path) -> None:
    # a client that does not trust the harness CA (system CAs only)
    f = tmp_path / "untrusted.properties"
    f.write_text("security.protocol=SSL\n")
    proc, elapsed = run_cli("-q", tls.controller_bootstrap, "--config", str(f), "-c", "ls /")
    assert_one_line_failure(proc, elapsed, "presented a certificate that is not trusted")
    # PLAINTEXT against the TLS listener
    with pytest.raises(LiveConnectionError, match="check security.protocol"):
        LiveSource(tls.controller_bootstrap).connect()


# ---------------------------------------------------------------------------------------------------
# a cluster without controller registrations (metadata.version < 3.7-IV0)


def test_old_metadata_version_falls_back_to_the_bootstrap_endpoints(old_mv: Any) -> None:
    events: list[Any] = []
    src = LiveSource(old_mv.controller_bootstrap, max_wait_ms=200)
    st = src.run_until_caught_up(events.append, timeout=60)
    warnings = [str(e) for e in events if isinstance(e, LiveWarning)]
    assert any(
        "cannot list the controllers (UNSUPPORTED_VERSION" in w and "using the bootstrap endpoints" in w
        for w in warnings
    ), warnings
    assert st.caught_up and st.leader_id == 1
    assert st.cluster_id is None  # nobody told us; Fetch goes without ClusterId
