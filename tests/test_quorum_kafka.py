"""Quorum forensics on a real Kafka quorum (issue 26): the three incidents, each checked by Kafka.

One dynamic quorum (kraft.version 1) of three 4.4 controllers and one broker lives through all
three, in the order an operator would meet them, and its directories are copied at each point:

1. **A controller is added, then removed** with ``kafka-metadata-quorum add-controller`` and
   ``remove-controller``.  The added controller runs Kafka 4.3, as a retired node often does: its
   ``ControllerRegistration`` outlives its removal, and Kafka's own ``kafka-features upgrade
   --dry-run`` then refuses a 4.4 metadata.version because of it.  ``quorum`` must show both voter
   changes at the offsets the log holds them, and ``upgrade-check`` must name the same blocker.
2. **A controller lags**: one follower is killed while topics keep being created.  ``quorum`` on the
   copies must give each voter the log end offset that ``kafka-metadata-quorum describe
   --replication`` reported just before the copy, and the committed prefix its high watermark.
3. **A majority is lost**: the leader is killed too.  The node ``quorum`` advises must hold every
   record of the broker's metadata log (a broker holds what the quorum sent it), and following its
   printed rebuild steps on the three controllers' directories must bring the quorum back with every
   topic.

NoOp records are turned off (``metadata.max.idle.interval.ms=0``) so that a quiet cluster's log
stands still while it is compared with what Kafka reported.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, get_dist

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(1200)]

OLD_RELEASE = "4.3.1"
"""The retired controller's Kafka: its registration supports metadata.version up to 4.3 only."""
TARGET = "4.4-IV0"
ELR = "eligible.leader.replicas.version"


def metashell(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metashell", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=REPO,
    )


def replication_table(text: str) -> dict[int, dict[str, str]]:
    """``kafka-metadata-quorum describe --replication``: NodeId -> its columns."""
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    head = next(i for i, cols in enumerate(lines) if cols and cols[0] == "NodeId")
    names = lines[head]
    return {int(cols[0]): dict(zip(names, cols, strict=False)) for cols in lines[head + 1 :]}


@dataclass
class Incident:
    """What the run left behind: copies of every node's metadata dir at each point, and Kafka's view."""

    root: Path
    copies: dict[str, dict[int, Path]] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)

    def copy(self, point: str, nodes: list[Any]) -> dict[int, Path]:
        out = {}
        for node in nodes:
            dest = self.root / point / f"node-{node.node_id}"
            shutil.copytree(node.log_dir, dest)
            out[node.node_id] = dest
        self.copies[point] = out
        return out


def _quorum_tool(cluster: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return cluster.admin(
        "kafka-metadata-quorum", "--bootstrap-controller", cluster.controller_bootstrap, *args
    )


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from fixtures.cluster import FixtureCluster, wait_until
    from kafka_harness import KafkaNode, free_ports, write_properties

    dist = get_dist("4.4.0")
    old = get_dist(OLD_RELEASE)
    work = tmp_path_factory.mktemp("quorum-incident")
    quiet = {"metadata.max.idle.interval.ms": 0}
    cluster = FixtureCluster(
        dist,
        work / "cluster",
        mode="split",
        controllers=3,
        brokers=1,
        dynamic_quorum=True,
        release_version="4.0-IV0",  # below what eligible leader replicas need
        broker_overrides=quiet,
        controller_overrides=quiet,
    )
    result = Incident(work / "copies")
    try:
        cluster.start(timeout=240)
        broker = cluster.node(4)

        def topics(*names: str) -> None:
            for name in names:
                cluster.create_topic(name, partitions=2)

        def voters() -> set[int]:
            proc = _quorum_tool(cluster, "describe", "--status")
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("CurrentVoters:")), "")
            return {int(v["id"]) for v in json.loads(line.partition(":")[2] or "[]")}

        topics("orders", "payments")

        # -- 1. a controller on the old release is added, then removed ---------------------------
        (port,) = free_ports(1)
        extra = KafkaNode(cluster, 5, ("controller",), cluster.workdir / "node-5", None, port)
        extra.dist = old
        props = cluster.node_properties(extra)
        props["controller.quorum.bootstrap.servers"] = cluster.controller_bootstrap
        extra.home.mkdir(parents=True)
        write_properties(extra.config_path, props)
        fmt = old.run(
            "kafka-storage",
            "format",
            "-t",
            cluster.cluster_id,
            "-c",
            extra.config_path,
            "--no-initial-controllers",
            timeout=180,
        )
        assert fmt.returncode == 0, fmt.stdout + fmt.stderr
        cluster.nodes.append(extra)
        extra.start(timeout=180)
        proc = cluster.admin(
            "kafka-metadata-quorum",
            "--bootstrap-controller",
            cluster.controller_bootstrap,
            "--command-config",
            extra.config_path,
            "add-controller",
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        wait_until("controller 5 a voter", lambda: 5 in voters(), 90)
        directory_id = _directory_id(extra.log_dir)
        proc = _quorum_tool(
            cluster, "remove-controller", "--controller-id", "5", "--controller-directory-id", directory_id
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        wait_until("controller 5 removed", lambda: 5 not in voters(), 90)
        extra.stop()
        cluster.nodes.remove(extra)
        refused = cluster.admin(
            "kafka-features",
            "--bootstrap-server",
            cluster.bootstrap_servers,
            "upgrade",
            "--metadata",
            TARGET,
            "--dry-run",
        )
        result.facts["features_dry_run"] = refused.stdout + refused.stderr
        refused = cluster.admin(
            "kafka-features",
            "--bootstrap-server",
            cluster.bootstrap_servers,
            "upgrade",
            "--feature",
            f"{ELR}=1",
            "--dry-run",
        )
        result.facts["elr_dry_run"] = refused.stdout + refused.stderr
        result.facts["removed_directory_id"] = directory_id

        # -- 2. a follower is killed while topics keep being created -----------------------------
        leader = int(cluster.quorum_status()["LeaderId"])
        lagging = next(n for n in (3, 2, 1) if n != leader)
        cluster.node(lagging).kill()
        topics("audit", "clicks", "ledger")
        time.sleep(2)
        replication = _quorum_tool(cluster, "describe", "--replication")
        assert replication.returncode == 0, replication.stdout + replication.stderr
        result.facts["replication"] = replication_table(replication.stdout)
        result.facts["high_watermark"] = int(cluster.quorum_status()["HighWatermark"])
        result.facts["leader"], result.facts["lagging"] = leader, lagging
        result.copy("lagging", [*cluster.controllers, broker])

        # -- 3. the leader is killed too: the majority is lost ------------------------------------
        cluster.node(leader).kill()
        time.sleep(3)
        survivor = next(n for n in (1, 2, 3) if n not in (leader, lagging))
        result.facts["survivor"] = survivor
        result.copy("lost", [*cluster.controllers, broker])

        # -- the rebuild, following metashell's printed steps on the nodes' own directories -----
        # the old leader's disk is gone too: its step formats it again with its voter directory id
        cluster.node(survivor).stop()
        lost = cluster.node(leader)
        shutil.move(lost.log_dir, work / "lost-disk")
        given = [cluster.node(survivor), cluster.node(lagging), broker]
        report = _report({n.node_id: n.log_dir for n in given})
        # two of three voters are here: a majority, so the steps are printed only when asked
        assert report["verdict"]["majorityHere"] and report["rebuild"] is None, report["verdict"]
        source = report["verdict"]["rebuildFrom"]
        plan = _report({n.node_id: n.log_dir for n in given}, "--rebuild-from", source)["rebuild"]
        result.facts["plan"] = plan
        env = {f"NODE{leader}_CONFIG": str(lost.config_path), f"NODE{leader}_LOG_DIR": str(lost.log_dir)}
        for step in plan["steps"]:
            for command in step["commands"]:
                if command.startswith("kafka-metadata-quorum.sh"):
                    continue  # the check below asks Kafka the same
                if command.startswith("kafka-storage.sh"):
                    words = [
                        w.replace(f'"$NODE{leader}_CONFIG"', env[f"NODE{leader}_CONFIG"])
                        for w in command.split()
                    ]
                    proc = dist.run("kafka-storage", *words[1:], timeout=180)
                else:
                    proc = subprocess.run(
                        ["bash", "-c", command],
                        env={**os.environ, **env},
                        capture_output=True,
                        text=True,
                        check=False,
                    )
                assert proc.returncode == 0, f"{command}: {proc.stdout} {proc.stderr}"
        first = int(plan["from"])
        cluster.node(first).start(wait=False)
        for n in cluster.controllers:
            if n.node_id != first:
                n.start(wait=False)
        for n in cluster.controllers:
            n.wait_ready(180)
        cluster.wait_for_leader(timeout=120)
        wait_until(
            "every voter caught up",
            lambda: all(
                row["Lag"] == "0"
                for nid, row in replication_table(
                    _quorum_tool(cluster, "describe", "--replication").stdout
                ).items()
                if nid in (1, 2, 3)
            ),
            120,
        )
        listed = cluster.admin("kafka-topics", "--bootstrap-server", cluster.bootstrap_servers, "--list")
        result.facts["topics_after_rebuild"] = set(listed.stdout.split())
        result.facts["voters_after_rebuild"] = voters()
        yield result
    finally:
        cluster.kill_all()


def _directory_id(log_dir: Path) -> str:
    """The node's directory id, as metashell reads ``meta.properties``."""
    from metashell.log.directory import open_metadata_dir

    meta = open_metadata_dir(log_dir).meta
    assert meta is not None and meta.directory_id, f"no directory.id in {log_dir}/meta.properties"
    return meta.directory_id


def _dirs(paths: dict[int, Path]) -> list[str | Path]:
    return [a for p in paths.values() for a in ("-d", p)]


def _report(paths: dict[int, Path], *options: str) -> dict[str, Any]:
    proc = metashell(*_dirs(paths), "quorum", "--json", *options)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _salvaged_report(paths: dict[int, Path]) -> dict[str, Any]:
    """``--salvage quorum --json``: what an operator runs when a node's log refuses to load."""
    proc = metashell(*_dirs(paths), "--salvage", "quorum", "--json")
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout))


TOPICS = {"orders", "payments", "audit", "clicks", "ledger"}


def _dump_log_offsets(segment: Path, kind: str) -> list[int]:
    """Offsets of ``kind`` control records by Kafka's own kafka-dump-log."""
    dist = get_dist("4.4.0")
    proc = dist.run("kafka-dump-log", "--cluster-metadata-decoder", "--files", segment, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return [int(m.group(1)) for m in re.finditer(rf"offset: (\d+) .*{kind}", proc.stdout)]


def test_the_timeline_shows_the_controller_added_then_removed(incident: Incident) -> None:
    nodes = incident.copies["lagging"]
    report = _report(nodes)
    changes = [e for e in report["timeline"] if e["kind"] == "KRaftVoters"]
    sets = [sorted(int(v.split("@")[0]) for v in e["summary"].split()[1:]) for e in changes]
    assert sets == [[1, 2, 3], [1, 2, 3, 5], [1, 2, 3]]
    segment = min((nodes[1] / "__cluster_metadata-0").glob("*.log"))
    assert [e["offset"] for e in changes] == _dump_log_offsets(segment, "KRaftVoters")
    assert all(e["nodes"] == ["1", "2", "3", "4"] for e in changes)


def test_upgrade_check_names_the_stale_registration_kafka_refuses_on(incident: Incident) -> None:
    refused = incident.facts["features_dry_run"]
    kafka = re.search(r"Controller (\d+) only supports versions (\d+)-(\d+)", refused)
    assert kafka, refused
    proc = metashell("-d", incident.copies["lagging"][1], "upgrade-check", "--to", TARGET, "--json")
    assert proc.returncode == 0, proc.stderr
    check = json.loads(proc.stdout)
    assert check["blocked"]
    (blocker,) = check["blockers"]
    assert blocker["node"] == f"controller {kafka.group(1)}"
    assert f"supports levels {kafka.group(2)}-{kafka.group(3)} only" in blocker["reason"]
    assert "stale: not a voter" in blocker["reason"]
    assert "UnregisterControllerRecord" in blocker["clear"]


def test_upgrade_check_names_the_dependency_kafka_refuses_on(incident: Incident) -> None:
    refused = incident.facts["elr_dry_run"]
    kafka = re.search(
        rf"{ELR} could not be set to 1 because it depends on metadata.version level (\d+)", refused
    )
    assert kafka, refused
    proc = metashell("-d", incident.copies["lagging"][1], "upgrade-check", "--to", f"{ELR}=1", "--json")
    assert proc.returncode == 0, proc.stderr
    reasons = [b["reason"] for b in json.loads(proc.stdout)["blockers"]]
    assert reasons == [f"{ELR}=1 depends on metadata.version 4.0-IV1 ({kafka.group(1)}); it is 4.0-IV0 (22)"]


def test_a_lagging_controller_shows_what_kafka_reported(incident: Incident) -> None:
    report = _report(incident.copies["lagging"])
    replication = incident.facts["replication"]
    ends = {n["nodeId"]: n["logEndOffset"] for n in report["nodes"]}
    for voter in (1, 2, 3):
        assert ends[voter] == int(replication[voter]["LogEndOffset"]), (voter, replication)
    lagging, leader = incident.facts["lagging"], incident.facts["leader"]
    assert ends[leader] - ends[lagging] == int(replication[lagging]["Lag"]) > 0
    assert report["majorityLogEndOffset"] == incident.facts["high_watermark"]
    losses = report["rebuildLosses"][str(lagging)]
    assert {loss["node"] for loss in losses} >= {str(leader)}


def test_the_advised_node_holds_every_record_a_broker_holds(incident: Incident) -> None:
    from metashell.log.headers import batch_headers

    copies = incident.copies["lost"]
    report = _report(copies)
    advised = int(report["verdict"]["rebuildFrom"])
    assert advised != incident.facts["lagging"]

    def keys(node: int) -> set[tuple[int, int, int, int]]:
        segments = sorted((copies[node] / "__cluster_metadata-0").glob("*.log"))
        return {(h.base_offset, h.last_offset, h.epoch, h.crc) for h in batch_headers(segments)}

    broker = keys(4)
    assert broker and broker <= keys(advised)
    assert not broker <= keys(incident.facts["lagging"])  # the lagging node would not have done


def test_following_the_rebuild_steps_brings_the_quorum_back(incident: Incident) -> None:
    plan = incident.facts["plan"]
    assert plan["from"] == str(incident.facts["survivor"])
    assert plan["kraftVersion"] == 1
    assert incident.facts["voters_after_rebuild"] == {1, 2, 3}
    assert incident.facts["topics_after_rebuild"] >= TOPICS


def _text(paths: dict[int, Path], *options: str) -> str:
    proc = metashell(*_dirs(paths), "quorum", *options)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_verdicts_on_what_real_kafka_left(incident: Incident) -> None:
    """Issue 53: the verdict first, on the copies real Kafka left. With the lagging node's copy, the
    three voters are here and agree on what a majority holds: MAJORITY, and no playbook. With the
    leader's disk lost, the survivor and the lagging node are still two of three: MAJORITY. The
    survivor alone is NO MAJORITY, and only then come the steps, from it."""
    survivor, lagging, leader = (incident.facts[k] for k in ("survivor", "lagging", "leader"))
    report = _report(incident.copies["lagging"])
    assert report["verdict"]["verdict"] == "MAJORITY" and report["rebuild"] is None, report["verdict"]
    lost = incident.copies["lost"]
    two = {n: lost[n] for n in (survivor, lagging, 4)}
    report = _report(two)
    assert report["verdict"]["verdict"] == "MAJORITY" and report["verdict"]["votersHere"] == sorted(
        [survivor, lagging]
    )
    alone = {n: lost[n] for n in (survivor, 4)}
    report = _report(alone)
    assert report["verdict"]["verdict"] == "NO MAJORITY"
    assert report["rebuild"] is not None and report["rebuild"]["from"] == str(survivor)
    assert leader not in report["verdict"]["votersHere"]
    out = os.environ.get("METASHELL_DOCS_OUT")  # docs/quorum.md's outputs, with the copies' paths named
    if out:
        keep = ("survivor", "lagging", "leader", "high_watermark", "replication")
        Path(out, "facts.json").write_text(json.dumps({k: incident.facts[k] for k in keep}, default=str))
        for name, paths in (("lagging", incident.copies["lagging"]), ("two", two), ("alone", alone)):
            text = _text(paths).replace(
                str(incident.root / ("lagging" if name == "lagging" else "lost")), "/incident"
            )
            Path(out, f"quorum-{name}.txt").write_text(text)


def test_doctor_agrees_with_kafka_dump_log_on_a_damaged_copy(incident: Incident, tmp_path: Path) -> None:
    """doctor is CONSISTENT (or with notes) on every copy Kafka left, and on a copy with bytes flipped in two batches
    names exactly the batches kafka-dump-log calls ``isvalid: false``, by byte position."""
    from metashell.log.headers import batch_headers

    for copies in incident.copies.values():
        for path in copies.values():
            proc = metashell("-d", path, "--json", "doctor")
            assert proc.returncode == 0, proc.stderr
            assert json.loads(proc.stdout)["word"] in ("CONSISTENT", "CONSISTENT WITH NOTES"), (
                path,
                proc.stdout,
            )
    node = tmp_path / "damaged"
    shutil.copytree(incident.copies["lagging"][1], node)
    segment = min((node / "__cluster_metadata-0").glob("*.log"))
    headers = batch_headers([segment])
    hit = [headers[len(headers) // 3], headers[len(headers) // 2]]
    data = bytearray(segment.read_bytes())
    for h in hit:
        data[h.position + 70] ^= 0x5A
    segment.write_bytes(bytes(data))
    dumped = get_dist("4.4.0").run("kafka-dump-log", "--files", segment, timeout=180)
    assert dumped.returncode == 0, dumped.stderr
    invalid = [int(m.group(1)) for m in re.finditer(r"position: (\d+) .*isvalid: false", dumped.stdout)]
    assert invalid == [h.position for h in hit]
    proc = metashell("-d", node, "--json", "doctor", "--exit-code")
    assert proc.returncode == 2, proc.stderr
    found = {f["key"]: f["items"] for f in json.loads(proc.stdout)["findings"]}
    assert [int(i.split(" byte ")[1].split()[0]) for i in found["damaged-batches"]] == invalid


def test_damaged_copies_of_the_quorum_kafka_left(incident: Incident, tmp_path: Path) -> None:
    """Issue 53 on the real quorum's copies: a node given twice (a symlink) is refused; a hostile
    ``cluster.id`` stays one shell word in every printed step; a node with a flipped byte mid-log,
    or a deleted middle segment, is named and never the rebuild source."""
    import shlex

    from metashell.log.headers import batch_headers

    lagging = incident.copies["lagging"]
    voters = {n: p for n, p in lagging.items() if n in (1, 2, 3)}
    first = min(voters)
    link = tmp_path / "again"
    link.symlink_to(voters[first])
    proc = metashell("-d", voters[first], "-d", link, "quorum")
    assert proc.returncode == 1 and "are the same directory" in proc.stderr, proc.stderr

    hostile = "abc;echo INJECTED;#"
    copies = {}
    for n, path in voters.items():
        copies[n] = tmp_path / f"node-{n}"
        shutil.copytree(path, copies[n])
        props = copies[n] / "meta.properties"
        props.write_text(
            "".join(
                f"cluster.id={hostile}\n" if ln.startswith("cluster.id=") else ln
                for ln in props.read_text().splitlines(keepends=True)
            )
        )
    alone = {incident.facts["survivor"]: copies[incident.facts["survivor"]]}  # no majority: the steps
    report = _report(alone)
    commands = [c for s in report["rebuild"]["steps"] for c in s["commands"]]
    formats = [c for c in commands if c.startswith("kafka-storage.sh format")]
    assert len(formats) == 2, commands  # the two voters whose directories were not given
    for fmt in formats:
        words = shlex.split(fmt)
        assert words[words.index("--cluster-id") + 1] == hostile, fmt
    for command in commands:  # outside quotes, only the steps' own "&&" joins commands
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        assert {w for w in lexer if w and set(w) <= set(";&|")} <= {"&&"}, command

    damaged = copies[incident.facts["survivor"]]
    part = damaged / "__cluster_metadata-0"
    segments = sorted(part.glob("*.log"))
    middle = segments[len(segments) // 2]
    headers = batch_headers([middle])
    data = bytearray(middle.read_bytes())
    data[headers[len(headers) // 2].position + 70] ^= 0x5A
    middle.write_bytes(bytes(data))
    report = _salvaged_report(copies)  # the damage refuses a plain load, as its error line says
    survivor = str(incident.facts["survivor"])
    assert survivor in report["verdict"]["notCandidates"], report["verdict"]
    assert report["verdict"]["rebuildFrom"] != survivor
    if len(segments) >= 3:
        shutil.copyfile(voters[incident.facts["survivor"]] / "__cluster_metadata-0" / middle.name, middle)
        middle.unlink()
        report = _salvaged_report(copies)
        assert survivor in report["verdict"]["notCandidates"], report["verdict"]
