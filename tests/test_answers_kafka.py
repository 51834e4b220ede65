"""``health`` and ``describe`` against a REAL degraded Kafka 4.4 cluster, with Kafka's own
``kafka-topics --describe`` as the oracle on the same cluster.

The cluster: one combined node (1) and two brokers (2, 3); cluster-wide ``min.insync.replicas=2``;
topics ``spread`` (RF 3), ``strict`` (RF 3, ``min.insync.replicas=3``), ``pair`` (RF 2), ``lonely``
(both partitions only on broker 3) and ``loose`` (RF 1 on broker 1, ``min.insync.replicas=1``,
300 KB of records).  ``loose-0`` is reassigned onto broker 3 under a 1 byte/s throttle, so the
reassignment stays in flight; then broker 3 is stopped (controlled shutdown: fenced, out of every
ISR, ``lonely`` offline).  metashell reads the running
controller's metadata directory; every filter of ``describe`` must print exactly the partition
lines Kafka prints, and ``health`` must name exactly those partitions and broker 3.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from test_cli import run_cli

from metashell.image.health import check_health
from metashell.image.loader import load_directory

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

VERSION = "4.4.0"
FILTERS = (
    "--under-replicated-partitions",
    "--unavailable-partitions",
    "--under-min-isr-partitions",
    "--at-min-isr-partitions",
)


def _partition_lines(text: str) -> list[str]:
    return sorted(line.rstrip("\n") for line in text.splitlines() if line.startswith("\tTopic: "))


_PATTERN = re.compile(r"ResourcePattern\(resourceType=(\w+), name=(.*?), patternType=(\w+)\)")
_BINDING = re.compile(r"\(principal=(.*?), host=(.*?), operation=(\w+), permissionType=(\w+)\)")


def _acl_set(text: str) -> set[tuple[str, ...]]:
    """The bindings of ``kafka-acls --list`` output (ours prints the same words)."""
    out: set[tuple[str, ...]] = set()
    resource: tuple[str, ...] = ()
    for line in text.splitlines():
        if m := _PATTERN.search(line):
            resource = m.groups()
        elif m := _BINDING.search(line):
            out.add(resource + m.groups())
    return out


@pytest.fixture(scope="module")
def degraded(kafka_cluster_module: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    secured = {
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
    }
    cluster = kafka_cluster_module(
        VERSION, "combined", brokers=2, broker_overrides=secured, controller_overrides=secured
    )
    bs = cluster.bootstrap_servers

    def admin(tool: str, *args: str) -> str:
        return cluster.admin(tool, "--bootstrap-server", bs, *args, check=True).stdout

    def topics(*args: str) -> str:
        return admin("kafka-topics", "--describe", *args)

    admin(
        "kafka-configs",
        "--entity-type",
        "brokers",
        "--entity-default",
        "--alter",
        "--add-config",
        "min.insync.replicas=2",
    )
    for acl in (
        ("--allow-principal", "User:alice", "--operation", "Read", "--topic", "spread"),
        ("--allow-principal", "User:alice", "--operation", "Read", "--group", "spread-app"),
        (
            "--allow-principal",
            "User:bob",
            "--operation",
            "Write",
            "--topic",
            "pa",
            "--resource-pattern-type",
            "prefixed",
        ),
        (
            "--deny-principal",
            "User:mallory",
            "--deny-host",
            "10.0.0.66",
            "--operation",
            "Read",
            "--topic",
            "pair",
        ),
        ("--allow-principal", "User:*", "--operation", "Describe", "--topic", "*"),
    ):
        admin("kafka-acls", "--add", "--force", *acl)
    admin("kafka-topics", "--create", "--topic", "spread", "--partitions", "6", "--replication-factor", "3")
    admin(
        "kafka-topics",
        "--create",
        "--topic",
        "strict",
        "--partitions",
        "3",
        "--replication-factor",
        "3",
        "--config",
        "min.insync.replicas=3",
    )
    admin("kafka-topics", "--create", "--topic", "pair", "--replica-assignment", "1:2,2:3,3:1,1:3")
    admin("kafka-topics", "--create", "--topic", "lonely", "--replica-assignment", "3,3")
    admin(
        "kafka-topics",
        "--create",
        "--topic",
        "loose",
        "--replica-assignment",
        "1",
        "--config",
        "min.insync.replicas=1",
    )
    # Data in loose-0 and a 1 byte/s throttle: moving it onto broker 3 never finishes.
    cluster.admin(
        "kafka-console-producer",
        "--bootstrap-server",
        bs,
        "--topic",
        "loose",
        input="".join(f"{i:06d} " + "x" * 1000 + "\n" for i in range(300)),
        check=True,
    )
    plan = tmp_path_factory.mktemp("reassign") / "plan.json"
    plan.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": "loose", "partition": 0, "replicas": [1, 3]}]})
    )
    admin("kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--execute", "--throttle", "1")
    deadline = time.monotonic() + 120
    while "Adding Replicas: 3" not in topics("--topic", "loose"):
        assert time.monotonic() < deadline, "the reassignment never showed"
        time.sleep(1)
    cluster.node(3).stop()
    while len(_partition_lines(topics("--unavailable-partitions"))) < 2:
        assert time.monotonic() < deadline, "broker 3's partitions never went offline"
        time.sleep(1)
    kafka: dict[str, Any] = {f: _partition_lines(topics(f)) for f in FILTERS}
    kafka["all"] = topics()
    for topic in ("spread", "pair", "lonely"):
        kafka[f"acls-{topic}"] = _acl_set(
            admin("kafka-acls", "--list", "--topic", topic, "--resource-pattern-type", "match")
        )
    kafka["acls-alice"] = _acl_set(admin("kafka-acls", "--list", "--principal", "User:alice"))
    return {"cluster": cluster, "dir": cluster.node(1).metadata_dir, "kafka": kafka}


@pytest.mark.parametrize("option", FILTERS)
def test_describe_filters_print_what_kafka_topics_prints(degraded: dict[str, Any], option: str) -> None:
    status, out, err = run_cli("-d", str(degraded["dir"]), "describe", option)
    assert status == 0, err
    assert _partition_lines(out) == degraded["kafka"][option] != []


def test_describe_everything_matches_kafka(degraded: dict[str, Any]) -> None:
    status, out, err = run_cli("-d", str(degraded["dir"]), "describe")
    assert status == 0, err
    kafka = degraded["kafka"]["all"]
    assert _partition_lines(out) == _partition_lines(kafka)
    # topic lines: everything but Configs (kafka-topics adds broker-level settings there)
    heads = sorted(line.split("\tConfigs:")[0] for line in out.splitlines() if line.startswith("Topic: "))
    assert heads == sorted(
        line.split("\tConfigs:")[0] for line in kafka.splitlines() if line.startswith("Topic: ")
    )
    assert "\tConfigs: min.insync.replicas=3" in out


def test_health_names_the_known_damage(degraded: dict[str, Any]) -> None:
    report = check_health(load_directory(degraded["dir"]).image)
    found = {f.key: f for f in report.findings}

    def parts(key: str) -> list[str]:
        return (
            sorted(f"\tTopic: {i.topic}\tPartition: {i.partition}" for i in found[key].items)
            if key in found
            else []
        )

    def kafka(option: str) -> list[str]:
        return sorted(line.split("\tLeader")[0] for line in degraded["kafka"][option])

    assert (
        parts("offline-partitions")
        == kafka("--unavailable-partitions")
        == ["\tTopic: lonely\tPartition: 0", "\tTopic: lonely\tPartition: 1"]
    )
    assert parts("under-replicated-partitions") == kafka("--under-replicated-partitions")
    assert parts("under-min-isr-partitions") == kafka("--under-min-isr-partitions")
    assert [i["broker"] for i in found["fenced-brokers"].items] == [3]
    assert [(i.topic, i.partition) for i in found["reassignments"].items] == [("loose", 0)]
    assert "min-isr-unknown" not in found  # the cluster default is in the metadata
    assert not report.healthy and report.verdict().startswith("CRITICAL: 2 offline partition(s)")

    status, out, _ = run_cli("-d", str(degraded["dir"]), "health", "--exit-code")
    assert status == 2 and "lonely-0: leader none" in out  # CRITICAL, as monitoring plugins say
    status, out, _ = run_cli("-d", str(degraded["dir"]), "--json", "health")
    assert status == 0 and json.loads(out)["healthy"] is False


def test_describe_broker(degraded: dict[str, Any]) -> None:
    status, out, err = run_cli("-d", str(degraded["dir"]), "--json", "describe", "broker", "*")
    assert status == 0, err
    brokers = {b["id"]: b for b in map(json.loads, out.splitlines())}
    assert set(brokers) == {1, 2, 3}
    assert brokers[3]["state"] == "fenced" and brokers[3]["partitionsLed"] == 0
    assert brokers[1]["state"] == "live" and brokers[1]["partitionsLed"] > 0
    status, _, err = run_cli("-d", str(degraded["dir"]), "describe", "broker", "9")
    assert status == 1 and "describe: broker '9' does not exist" in err


@pytest.mark.parametrize("topic", ["spread", "pair", "lonely"])
def test_acls_matching_a_resource_are_kafkas(degraded: dict[str, Any], topic: str) -> None:
    """``describe acl --resource topic:T`` lists what ``kafka-acls --list --topic T
    --resource-pattern-type match`` lists: literal, wildcard and prefixed bindings alike."""
    status, out, err = run_cli("-d", str(degraded["dir"]), "describe", "acl", "--resource", f"topic:{topic}")
    assert status == 0, err
    assert _acl_set(out) == degraded["kafka"][f"acls-{topic}"] != set()


def test_acls_of_a_principal_and_decisions(degraded: dict[str, Any]) -> None:
    _, out, _ = run_cli("-d", str(degraded["dir"]), "describe", "acl", "--principal", "User:alice")
    mine = _acl_set(out)
    assert {b for b in mine if b[3] == "User:alice"} == degraded["kafka"]["acls-alice"]
    assert any(b[3] == "User:*" for b in mine)  # the wildcard principal applies to alice too

    def decision(*args: str) -> str:
        _, out, _ = run_cli("-d", str(degraded["dir"]), "describe", "acl", *args)
        return out.splitlines()[-1]

    assert decision(
        "--principal", "User:alice", "--resource", "topic:spread", "--operation", "read"
    ).startswith("Decision: ALLOWED")
    assert decision(
        "--principal", "User:alice", "--resource", "topic:spread", "--operation", "write"
    ).startswith("Decision: DENIED")
    assert decision("--principal", "User:bob", "--resource", "topic:pair", "--operation", "write").startswith(
        "Decision: ALLOWED"
    )  # the prefixed "pa" binding
    assert decision(
        "--principal",
        "User:mallory",
        "--resource",
        "topic:pair",
        "--operation",
        "read",
        "--host",
        "10.0.0.66",
    ).startswith("Decision: DENIED (a DENY binding")
    assert decision(
        "--principal", "User:carol", "--resource", "topic:pair", "--operation", "describe"
    ).startswith("Decision: ALLOWED")  # User:* may describe every topic
