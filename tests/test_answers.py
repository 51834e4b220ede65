"""``health`` and ``describe`` on the fixtures (clusters stopped by the fixture generator, so their
partitions are leaderless) and on small hand-made images whose answer is known by construction.
The same commands are checked against ``kafka-topics --describe`` on a live cluster in
``test_answers_kafka.py``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from partitions import partition
from test_cli import run_cli

from metashell.image.health import check_health, effective_min_isr
from metashell.image.image import MetadataImage
from metashell.image.loader import load_directory
from metashell.image.model import BrokerRegistration, Partition, Topic
from metashell.shell.session import Settings, Shell
from metashell.tree import build_root

DEMO = FIXTURES / "demo"


def broker(bid: int, fenced: bool = False, shutdown: bool = False) -> BrokerRegistration:
    return BrokerRegistration(
        bid, 10 + bid, bytes(16), {}, {"metadata.version": (7, 33)}, None, fenced, shutdown, False, ()
    )


def part(
    replicas: tuple[int, ...],
    isr: tuple[int, ...],
    leader: int,
    adding: tuple[int, ...] = (),
    removing: tuple[int, ...] = (),
    elr: tuple[int, ...] = (),
) -> Partition:
    return partition(
        leader=leader,
        leader_epoch=3,
        partition_epoch=5,
        replicas=replicas,
        isr=isr,
        elr=elr,
        adding_replicas=adding,
        removing_replicas=removing,
    )


def image_with(
    partitions: dict[str, dict[int, Partition]],
    brokers: list[BrokerRegistration],
    configs: dict[tuple[int, str], dict[str, str]] | None = None,
) -> MetadataImage:
    img = MetadataImage()
    for b in brokers:
        img.cluster.brokers[b.id] = b
    for n, (name, parts) in enumerate(sorted(partitions.items())):
        t = Topic(name, bytes([n + 1]) * 16, parts)
        img.topics.by_id[t.id] = t
        img.topics.by_name[name] = t
    img.configs.update(configs or {})
    img.features.metadata_version = 21
    return img


def run(img: MetadataImage, line: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(build_root(img), out, err, Settings())
    status = shell.run_line(line)
    return status, out.getvalue(), err.getvalue()


def test_healthy_cluster() -> None:
    img = image_with(
        {
            "t": {
                0: part((1, 2, 3), (1, 2, 3), 1),
                1: part((2, 3, 1), (2, 3, 1), 2),
                2: part((3, 1, 2), (3, 1, 2), 3),
            }
        },
        [broker(1), broker(2), broker(3)],
        {(4, ""): {"min.insync.replicas": "2"}},
    )
    report = check_health(img)
    assert report.healthy and report.verdict().startswith("HEALTHY: 3 broker(s), 1 topic(s), 3 partition(s)")
    assert run(img, "health --exit-code") == (0, report.verdict() + "\n", "")


def test_each_rule_on_a_known_image() -> None:
    img = image_with(
        {
            "a": {
                0: part((1, 2, 3), (1,), 1),  # under-replicated, under min ISR (2)
                1: part((2, 1), (2, 1), 2),  # at min ISR
                2: part((3, 1), (3,), 3),
            },  # leader fenced -> offline
            "b": {0: part((1, 2, 4), (1, 2), 1, adding=(4,), removing=(3,))},  # reassigning, RF 2: not URP
            "c": {0: part((2,), (), -1, elr=(2,))},
        },  # offline, ELR in use
        [broker(1), broker(2), broker(3, fenced=True), broker(4, shutdown=True), broker(5)],
        {(4, ""): {"min.insync.replicas": "2"}, (2, "c"): {"min.insync.replicas": "1"}},
    )
    found: dict[str, list[Any]] = {
        f.key: [(i.topic, i.partition) for i in f.items]
        if f.items and hasattr(f.items[0], "topic")
        else f.items
        for f in check_health(img).findings
    }
    assert found["offline-partitions"] == [("a", 2), ("c", 0)]
    assert found["under-replicated-partitions"] == [("a", 0), ("a", 2), ("c", 0)]
    assert found["under-min-isr-partitions"] == [("a", 0), ("a", 2), ("c", 0)]
    assert found["reassignments"] == [("b", 0)]
    assert found["eligible-leader-replicas"] == [("c", 0)]
    assert [b["broker"] for b in found["fenced-brokers"]] == [3]
    assert [b["broker"] for b in found["shutting-down-brokers"]] == [4]
    assert [b["broker"] for b in found["brokers-without-replicas"]] == [5]
    assert effective_min_isr(img, "c") == (1, "topic") and effective_min_isr(img, "a") == (
        2,
        "cluster default",
    )

    status, out, _ = run(img, "describe --at-min-isr-partitions")
    assert status == 0 and [ln.split("\tLeader")[0] for ln in out.splitlines()] == [
        "\tTopic: a\tPartition: 1",
        "\tTopic: b\tPartition: 0",
    ]
    _, out, _ = run(img, "describe b")
    assert out.splitlines() == [
        "Topic: b\tTopicId: AgICAgICAgICAgICAgICAg\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: ",
        (
            "\tTopic: b\tPartition: 0\tLeader: 1\tReplicas: 1,2,4\tIsr: 1,2\tAdding Replicas: 4\tRemoving Replicas: 3"
            "\tElr: \tLastKnownElr: "
        ),
    ]
    status, out, _ = run(img, "health --exit-code")
    assert status == 2 and out.startswith("CRITICAL: 2 offline partition(s)")  # monitoring: 2 CRITICAL


def test_min_isr_unknown_is_said_not_guessed() -> None:
    img = image_with({"t": {0: part((1, 2), (1,), 1)}}, [broker(1), broker(2)])
    found = {f.key: f for f in check_health(img).findings}
    assert "under-min-isr-partitions" not in found and found["min-isr-unknown"].count == 1
    _, out, _ = run(img, "describe --under-min-isr-partitions")
    assert out == ""


def test_health_on_the_demo() -> None:
    status, out, err = run_cli("-d", str(DEMO), "health")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("CRITICAL: 12 offline partition(s) (no live leader)")
    assert any(ln.startswith("  broker 1 (epoch 13): fenced since") for ln in lines)
    assert "  12 of them belong to a finding above" in lines  # listed once, under "offline"
    assert sum(1 for ln in lines if ln.startswith("  orders-0:")) == 1
    assert run_cli("-d", str(DEMO), "health", "--exit-code")[0] == 2  # CRITICAL
    status, out, _ = run_cli("-d", str(DEMO), "--json", "health")
    doc = json.loads(out)
    assert doc["healthy"] is False and doc["partitions"] == 12
    assert [f["count"] for f in doc["findings"] if f["key"] == "offline-partitions"] == [12]


def test_describe_on_the_demo() -> None:
    status, out, _ = run_cli("-d", str(DEMO), "describe", "orders")
    lines = out.splitlines()
    assert status == 0 and len(lines) == 7
    assert (
        lines[0].startswith("Topic: orders\tTopicId: ")
        and "\tPartitionCount: 6\tReplicationFactor: 1\t" in lines[0]
    )
    assert (
        lines[1] == "\tTopic: orders\tPartition: 0\tLeader: none\tReplicas: 1\tIsr: \tElr: 1\tLastKnownElr: 1"
    )
    status, out, _ = run_cli("-d", str(DEMO), "describe", "--topics-with-overrides")
    assert status == 0 and all(ln.startswith("Topic: ") for ln in out.splitlines())
    status, out, err = run_cli("-d", str(DEMO), "describe", "nope", "pay*")
    assert status == 1 and err == "describe: topic 'nope' does not exist\n"
    assert out.startswith("Topic: payments\t")
    status, out, _ = run_cli("-d", str(DEMO), "--json", "describe", "--unavailable-partitions", "clickstream")
    doc = json.loads(out)
    assert doc["topic"] == "clickstream" and [p["partition"] for p in doc["partitions"]] == [0, 1]


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture_answers(fixture: str) -> None:
    img = load_directory(FIXTURES / fixture).image
    report = check_health(img)
    assert report.partitions == img.topics.partition_count()
    status, out, _ = run(img, "describe")
    assert status == 0 and out.count("\tPartition: ") == report.partitions


def test_health_subtree_matches_the_command() -> None:
    status, out, _ = run_cli("-d", str(DEMO), "--json", "cat", "/health/summary", "/health/fenced-brokers")
    summary, fenced = (json.loads(line)["value"] for line in out.splitlines())
    _, whole, _ = run_cli("-d", str(DEMO), "--json", "health")
    doc = json.loads(whole)
    assert status == 0 and summary["verdict"] == doc["verdict"]
    assert [f["key"] for f in summary["findings"]] == [f["key"] for f in doc["findings"]]
    # /health is the image's findings; the command adds what only the log knows (causes, since when)
    from_log = next(f for f in doc["findings"] if f["key"] == "fenced-brokers")
    for item in from_log["items"]:
        since = item.pop("fencedSince")
        item["text"] = item["text"].split(" since ")[0]
        assert since["offset"] == 70
    assert fenced == from_log
    _, out, _ = run_cli("-d", str(DEMO), "ls", "/health")
    assert out.split()[0] == "summary" and "offline-partitions" in out.split()


def test_describe_acl_on_the_fixture() -> None:
    """kafka-4.4-split-c1 holds literal, prefixed, wildcard and DENY bindings made by real Kafka."""
    fixture = str(FIXTURES / "kafka-4.4-split-c1")

    def last(*args: str) -> str:
        status, out, err = run_cli("-d", fixture, "describe", "acl", *args)
        assert status == 0, err
        return out.splitlines()[-1]

    assert last(
        "--principal",
        "User:mallory",
        "--resource",
        "topic:payments",
        "--operation",
        "read",
        "--host",
        "10.0.0.66",
    ).startswith("Decision: DENIED (a DENY binding")
    assert last(
        "--principal",
        "User:mallory",
        "--resource",
        "topic:payments",
        "--operation",
        "read",
        "--host",
        "10.0.0.1",
    ).startswith("Decision: DENIED (no binding allows it")
    assert last(
        "--principal", "User:bob", "--resource", "topic:payments", "--operation", "describe"
    ).startswith("Decision: ALLOWED")  # WRITE on the prefix "pay" implies DESCRIBE
    assert last("--principal", "User:bob", "--resource", "group:nobody", "--operation", "read").startswith(
        "Decision: DENIED (no binding exists for this resource"
    )
    status, out, _ = run_cli("-d", fixture, "--json", "describe", "acl", "--principal", "User:alice")
    doc = json.loads(out)
    assert doc["decision"] is None and {b["principal"] for b in doc["bindings"]} == {"User:alice", "User:*"}
    status, _, err = run_cli("-d", fixture, "describe", "acl", "--resource", "queue:x")
    assert status == 1 and "the type must be one of" in err


def test_no_eligible_leader() -> None:
    img = image_with(
        {"d": {0: part((1, 2), (), -1), 1: part((1, 2), (), -1, elr=(2,)), 2: part((1, 2), (2,), -1)}},
        [broker(1, fenced=True), broker(2)],
    )
    found = {
        f.key: [(i.topic, i.partition) for i in f.items]
        for f in check_health(img).findings
        if f.key in ("no-eligible-leader", "offline-partitions")
    }
    assert found == {"offline-partitions": [("d", 0), ("d", 1), ("d", 2)], "no-eligible-leader": [("d", 0)]}


def test_metadata_with_no_records_is_no_data_not_healthy(tmp_path: Path) -> None:
    """All files 0 bytes: ``health`` said "HEALTHY: 0 broker(s)" and ``--exit-code`` passed it."""
    part_dir = tmp_path / "__cluster_metadata-0"
    part_dir.mkdir()
    (part_dir / "00000000000000000000.log").write_bytes(b"")
    (part_dir / "00000000000000000000.index").write_bytes(b"")
    status, out, _err = run_cli("-d", str(tmp_path), "-c", "health --exit-code")
    assert status == 3 and out.startswith("NO DATA: the metadata holds no record"), out  # UNKNOWN
    status, out, _err = run_cli("-d", str(tmp_path), "-c", "doctor --exit-code")
    assert status == 3 and out.startswith("NO DATA: the directory holds no snapshot and no batch"), out
    status, out, _err = run_cli("-d", str(tmp_path), "--json", "-c", "health")
    doc = json.loads(out)
    assert doc["healthy"] is False and doc["noData"] is True and doc["verdict"].startswith("NO DATA")
    # records, but nothing registered yet (only the control records of a new quorum)
    report = check_health(load_directory(FIXTURES / "demo", until_offset=0).image)
    assert not report.healthy and report.verdict().startswith("NO DATA: no broker, controller or topic")


def test_every_finding_says_what_next() -> None:
    """Each ``add(KEY, ...)`` in the health rules has a next step (a finding without one would
    raise): a new rule must say what to run next."""
    import re

    from metashell.image import health
    from metashell.image.health_report import NEXT_STEPS

    source = Path(health.__file__).read_text()
    keys = set(re.findall(r'add\(\s*"([a-z-]+)"', source))
    assert len(keys) >= 14 and keys == set(NEXT_STEPS), keys ^ set(NEXT_STEPS)


def test_each_finding_names_the_next_command_for_its_first_item() -> None:
    status, out, _err = run_cli("-d", str(FIXTURES / "demo"), "health")
    assert status == 0
    steps = [line.strip() for line in out.splitlines() if line.startswith("  next: ")]
    assert "next: history /brokers/1 (when it was fenced, after a controlled shutdown or not)" in steps
    assert any("history /topics/clickstream/0" in s for s in steps)
    _status, out, _err = run_cli("-d", str(FIXTURES / "demo"), "--json", "health")
    assert all(f["next"] for f in json.loads(out)["findings"])


# -- causes (issue 25, item 6) ----------------------------------------------------------------------


def test_health_says_why_the_demo_is_offline_and_since_when_its_broker_is_fenced() -> None:
    """The demo's broker was stopped: health joins the offline partitions to that cause, with the
    time and offset of the fence, and says the fence followed a controlled shutdown."""
    status, out, _ = run_cli("-d", str(DEMO), "health")
    lines = out.splitlines()
    assert status == 0
    assert (
        "  cause: the cluster was stopped: every broker was fenced after a controlled shutdown; the last, "
        "broker 1, at 2026-11-22T03:55:59.509Z (offset 70)"
    ) in lines
    assert (
        "  broker 1 (epoch 13): fenced since 2026-11-22T03:55:59.509Z (offset 70), after a controlled shutdown"
        in lines
    )
    assert lines[-1] != "" and not any(ln.startswith("leaders per broker") for ln in lines)
    _, out, _ = run_cli("-d", str(DEMO), "--json", "health")
    findings = {f["key"]: f for f in json.loads(out)["findings"]}
    assert findings["offline-partitions"]["causes"][0].startswith("the cluster was stopped")
    assert findings["fenced-brokers"]["items"][0]["fencedSince"] == {
        "offset": 70,
        "timestamp": 1795319759509,
        "afterControlledShutdown": True,
        "registeredFenced": False,
        "fromSnapshot": False,
    }


def test_health_causes_are_true_for_the_point_shown() -> None:
    """At offset 60 the broker is shutting down, not yet fenced: the cause says so, and nothing
    from after offset 60 leaks in."""
    _, out, _ = run_cli("-d", str(DEMO), "--at", "60", "health")
    assert "  cause: 3 of them have every replica on a fenced, shutting-down or unregistered broker: " in out
    assert "1 (in controlled shutdown)" in out and "offset 70" not in out and "stopped" not in out
    _, out, _ = run_cli("-d", str(DEMO), "--at", "69", "health")  # the fence is at 70
    assert "fenced since" not in out


def test_the_leaders_line_has_a_label() -> None:
    img = image_with({"t": {0: part((1, 2), (1,), 1), 1: part((2, 1), (2, 1), 2)}}, [broker(1), broker(2)])
    _, out, _ = run(img, "health")
    assert out.splitlines()[-1] == "partition leaders per live broker: broker 1: 1, broker 2: 1"


def test_a_live_broker_in_no_isr_and_a_shared_endpoint_are_findings() -> None:
    from metashell.image.model import Endpoint

    b1, b2, b3 = broker(1), broker(2), broker(3)
    b1.listeners = {"PLAINTEXT": Endpoint("PLAINTEXT", "kafka", 9092, 0)}
    b2.listeners = {"PLAINTEXT": Endpoint("PLAINTEXT", "kafka", 9092, 0)}
    b3.listeners = {"PLAINTEXT": Endpoint("PLAINTEXT", "kafka-3", 9092, 0)}
    img = image_with({"t": {0: part((1, 3), (1,), 1), 1: part((2, 3), (2,), 2)}}, [b1, b2, b3])
    found = {f.key: f for f in check_health(img).findings}
    assert [i["broker"] for i in found["brokers-in-no-isr"].items] == [3]
    assert [i["text"] for i in found["duplicate-endpoints"].items] == [
        "kafka:9092 is advertised by brokers 1, 2"
    ]
    assert found["brokers-in-no-isr"].next_step.startswith("describe broker 3;")
    assert found["duplicate-endpoints"].next_step.startswith("describe broker 1 ")


def test_a_fence_by_fence_broker_record_is_a_crash_with_its_time(tmp_path: Path) -> None:
    """Older controllers fence with FenceBrokerRecord (its id field is ``Id``, not ``BrokerId``):
    history and health both see it, and no controlled shutdown came first."""
    from metashell.log.encoding import build_batch
    from metashell.protocol.metadata import encode_metadata_record as enc

    register = {
        "BrokerId": 1,
        "BrokerEpoch": 5,
        "IncarnationId": bytes(16),
        "EndPoints": [{"Name": "PLAINTEXT", "Host": "b1", "Port": 9092, "SecurityProtocol": 0}],
        "Features": [],
        "Rack": None,
        "Fenced": False,
    }
    part_dir = tmp_path / "__cluster_metadata-0"
    part_dir.mkdir()
    (part_dir / "00000000000000000000.log").write_bytes(
        build_batch(0, 1, [enc("RegisterBrokerRecord", 0, register)], 1_700_000_000_000)
        + build_batch(1, 1, [enc("FenceBrokerRecord", 0, {"Id": 1, "Epoch": 5})], 1_700_000_060_000)
    )
    _, out, _ = run_cli("-d", str(part_dir), "history", "/brokers/1")
    assert out.splitlines()[-1].split()[-2:] == ["broker", "fenced"]
    _, out, _ = run_cli("-d", str(part_dir), "health")
    assert "fenced since 2023-11-14T22:14:20.000Z (offset 1), without a controlled shutdown" in out
