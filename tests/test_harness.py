"""Real-Kafka tests of the harness (scripts/kafka_harness.py) and the oracle runner (scripts/oracle.py).

Nothing is mocked: Kafka comes from Maven Central, nodes run on 127.0.0.1.  Clusters are shared per
module to keep the run short on a small machine.
"""

from __future__ import annotations

import re
import socket
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kafka_harness
import pytest
from conftest import KAFKA_VERSIONS, get_dist
from kafka_harness import KafkaCluster

from metashell.image.loader import load_file

pytestmark = pytest.mark.kafka

TOPIC = "harness-topic"
IMAGE_CHILDREN = {
    "acls",
    "clientQuotas",
    "cluster",
    "configs",
    "delegationToken",
    "features",
    "producerIds",
    "provenance",
    "scram",
    "topics",
}


def small_metadata_log(version: str) -> dict[str, Any]:
    """Thresholds that make even a tiny cluster roll metadata segments and write snapshots."""
    # A segment must hold the largest batch: creating a topic is ONE batch (1 + partitions records),
    # so 4 KiB segments mean at most ~30 partitions per topic.
    p: dict[str, Any] = {
        "metadata.log.max.record.bytes.between.snapshots": 2000,
        "metadata.max.idle.interval.ms": 500,
    }
    if int(version.split(".")[0]) >= 4:
        p["internal.metadata.log.segment.bytes"] = 4096
    else:
        p["metadata.log.segment.min.bytes"] = 4096
        p["metadata.log.segment.bytes"] = 4096
    return p


def metadata_files(cluster: KafkaCluster) -> set[str]:
    return {p.name for p in cluster.nodes[0].metadata_dir.iterdir()}


# --------------------------------------------------------------------------------------------------
# one combined node per version: create a topic, stop, read the files with Kafka's own tools


@pytest.fixture(scope="module", params=KAFKA_VERSIONS)
def stopped_combined(request: pytest.FixtureRequest, kafka_cluster_module: Any) -> dict[str, Any]:
    version = request.param
    overrides = small_metadata_log(version)
    cluster = kafka_cluster_module(
        version, "combined", broker_overrides=overrides, controller_overrides=overrides
    )
    created = cluster.admin(
        "kafka-topics",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "--create",
        "--topic",
        TOPIC,
        "--partitions",
        "20",
        "--replication-factor",
        "1",
    )
    for i in range(2):  # more bytes: roll a segment or two
        cluster.admin(
            "kafka-topics",
            "--bootstrap-server",
            cluster.bootstrap_servers,
            "--create",
            "--topic",
            f"filler-{i}",
            "--partitions",
            "20",
            check=True,
        )
    listed = cluster.admin("kafka-topics", "--bootstrap-server", cluster.bootstrap_servers, "--list")
    cluster.stop()
    return {"cluster": cluster, "created": created, "listed": listed, "version": version}


def test_combined_node_starts_and_writes_metadata_log(stopped_combined: dict[str, Any]) -> None:
    cluster: KafkaCluster = stopped_combined["cluster"]
    assert stopped_combined["created"].returncode == 0, stopped_combined["created"].stderr[-2000:]
    assert TOPIC in stopped_combined["listed"].stdout.split()
    assert not any(n.is_running() for n in cluster.nodes)
    node = cluster.nodes[0]
    assert node.roles == ("broker", "controller")
    assert (node.log_dir / "meta.properties").is_file()
    logs = sorted(node.metadata_dir.glob("*.log"))
    assert logs, f"no .log in {node.metadata_dir}"
    # the small thresholds rolled segments and produced a snapshot
    assert len(logs) >= 2, [p.name for p in logs]
    assert any(not p.name.startswith("00000000000000000000-") for p in node.metadata_dir.glob("*.checkpoint"))
    assert node.start_seconds is not None and node.start_seconds < 120


def test_oracle_shell_ls_image(stopped_combined: dict[str, Any], kafka_oracle: Any) -> None:
    cluster: KafkaCluster = stopped_combined["cluster"]
    version = stopped_combined["version"]
    first_log = cluster.nodes[0].metadata_dir / "00000000000000000000.log"
    before = metadata_files(cluster)
    out = kafka_oracle.java_shell(first_log, "ls", "/image", version=version)
    assert set(out.split()) == IMAGE_CHILDREN

    # The topic is in the first segment (it was created right after start-up) and in the newest
    # snapshot -- unless Kafka's loader never catches up on that file, where its shell shows the
    # empty image (see "Kafka's catch-up gate" in metashell/image/loader.py); where the segment
    # rolled decides that, at random.  metashell predicts which it is.
    def kafka_ls(path: Path, target: str, shown: Callable[[str], bool], caught_up: bool) -> str:
        """Kafka's shell's ``ls``; where metashell says its loader catches up, asked again while the
        answer is empty: its one-shot mode can run the command before the image is published (a
        race the oracle's module docstring describes), which only ever hides what is there."""
        out = kafka_oracle.java_shell(path, "ls", target, version=version)
        for _ in range(5):
            if shown(out) or not caught_up:
                break
            out = kafka_oracle.java_shell(path, "ls", target, version=version, use_cache=False)
        return out

    caught_up = load_file(first_log).image.provenance.caught_up
    found = kafka_ls(first_log, "/image/topics/byName", lambda out: TOPIC in out.split(), caught_up)
    assert (TOPIC in found.split()) == caught_up, found
    snaps = sorted(cluster.nodes[0].metadata_dir.glob("*.checkpoint"))
    caught_up = load_file(snaps[-1]).image.provenance.caught_up

    def all_partitions(out: str) -> bool:
        return {str(i) for i in range(20)} <= set(out.split())

    partitions = kafka_ls(snaps[-1], f"/image/topics/byName/{TOPIC}", all_partitions, caught_up)
    assert all_partitions(partitions) == caught_up, partitions
    assert metadata_files(cluster) == before, "the oracle wrote next to the input"


def test_oracle_is_cached(
    stopped_combined: dict[str, Any], kafka_oracle: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = cluster_log(stopped_combined)
    version = stopped_combined["version"]
    first = kafka_oracle.java_shell(path, "ls", "/image", version=version)

    def no_jvm(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the second ask started a JVM: the answer was not cached")

    for method in ("run", "run_program"):  # no JVM: a condition, not a time (0.5 s failed loaded CI)
        monkeypatch.setattr(kafka_harness.KafkaDist, method, no_jvm)
    again = kafka_oracle.java_shell(path, "ls", "/image", version=version)
    assert again == first


def cluster_log(info: dict[str, Any]) -> Path:
    return info["cluster"].nodes[0].metadata_dir / "00000000000000000000.log"


def test_oracle_dump_log(stopped_combined: dict[str, Any], kafka_oracle: Any) -> None:
    path = cluster_log(stopped_combined)
    out = kafka_oracle.dump_log(path, version=stopped_combined["version"])
    assert out.startswith(f"Dumping {path}")
    assert '"type":"TOPIC_RECORD"' in out and f'"name":"{TOPIC}"' in out
    assert "baseOffset: 0 " in out


def test_oracle_rejects_directory(stopped_combined: dict[str, Any], kafka_oracle: Any) -> None:
    with pytest.raises(kafka_oracle.OracleError, match="not a file"):
        kafka_oracle.java_shell(stopped_combined["cluster"].nodes[0].metadata_dir, "ls", "/")


# --------------------------------------------------------------------------------------------------
# 3 controllers + 2 brokers: kill the active controller, the quorum moves on


def test_split_cluster_survives_killing_the_active_controller(kafka_cluster: Any) -> None:
    cluster: KafkaCluster = kafka_cluster("4.4.0", "split")
    assert [n.roles for n in cluster.nodes] == [("controller",)] * 3 + [("broker",)] * 2
    assert len(cluster.bootstrap_servers.split(",")) == 2
    assert len(cluster.controller_bootstrap.split(",")) == 3
    leader = cluster.wait_for_leader()
    cluster.node(leader).kill()
    assert not cluster.node(leader).is_running()
    new_leader = cluster.wait_for_leader(timeout=90, exclude=[leader])
    assert new_leader != leader
    created = cluster.admin(
        "kafka-topics",
        "--bootstrap-server",
        cluster.bootstrap_servers,
        "--create",
        "--topic",
        "after-failover",
        "--partitions",
        "2",
        "--replication-factor",
        "2",
    )
    assert created.returncode == 0, created.stderr[-2000:]
    cluster.node(leader).start(timeout=120)  # restart the killed voter; it rejoins as a follower
    assert cluster.node(leader).is_running()
    status = cluster.quorum_status()
    assert sorted(int(x) for x in _voter_ids(status["CurrentVoters"])) == [1, 2, 3]


def _voter_ids(text: str) -> list[str]:
    return re.findall(r'"id":\s*(\d+)', text) or re.findall(r"\b(\d+)\b", text)


# --------------------------------------------------------------------------------------------------
# secured controller listeners


@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_sasl_scram_controller_listener(version: str, kafka_cluster: Any, tmp_path: Path) -> None:
    cluster: KafkaCluster = kafka_cluster(version, "combined", security="sasl_scram")
    assert cluster.controller_protocol == "SASL_PLAINTEXT"
    cfg = cluster.client_config_file(tmp_path / "c.properties", for_="controller")
    text = cfg.read_text()
    assert "SCRAM-SHA-256" in text and kafka_harness.SASL_USER in text
    status = cluster.quorum_status()  # SCRAM login over the controller listener
    assert status["LeaderId"] == "1"
    bad = tmp_path / "bad.properties"
    bad.write_text(text.replace(kafka_harness.SASL_PASSWORD, "wrong-password"))
    proc = cluster.admin(
        "kafka-metadata-quorum",
        "--bootstrap-controller",
        cluster.controller_bootstrap,
        "--command-config",
        bad,
        "describe",
        "--status",
        timeout=90,
    )
    assert proc.returncode != 0
    assert "Authentication failed" in proc.stdout + proc.stderr


@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_ssl_controller_listener(version: str, kafka_cluster: Any) -> None:
    cluster: KafkaCluster = kafka_cluster(version, "combined", security="ssl")
    assert cluster.controller_protocol == "SSL"
    ctx = ssl.create_default_context(cafile=str(cluster.tls["ca"]))
    port = cluster.nodes[0].controller_port
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        cert = tls.getpeercert()
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
    assert cert is not None and ("IP Address", "127.0.0.1") in cert["subjectAltName"]
    # an untrusting client is refused
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        pytest.raises(ssl.SSLCertVerificationError),
    ):
        ssl.create_default_context().wrap_socket(raw, server_hostname="127.0.0.1")
    assert cluster.quorum_status()["LeaderId"] == "1"  # Kafka's own client, PEM truststore


# --------------------------------------------------------------------------------------------------
# dist basics (no JVM)


@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_dist_classpath_and_tools(version: str) -> None:
    dist = get_dist(version)
    assert f"kafka_2.13-{version}.jar" in dist.classpath
    for tool in (
        "kafka-topics",
        "kafka-configs",
        "kafka-acls",
        "kafka-features",
        "kafka-metadata-quorum",
        "kafka-reassign-partitions",
        "kafka-delegation-tokens",
        "kafka-leader-election",
        "kafka-storage",
        "kafka-metadata-shell",
        "kafka-dump-log",
    ):
        assert "." in dist.tool_class(tool)
    assert dist.tool_version("kafka-storage") == version
    assert dist.tool_version("kafka-metadata-shell") == version  # 4.4.0: rebuilt against 4.4.0 jars
