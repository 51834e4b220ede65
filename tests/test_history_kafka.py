"""Time travel against a history written by a REAL Kafka 4.4 cluster, checked against what the
test did to it.

The cluster: one combined node (1) and two brokers (2, 3).  The script, each step waited for in the
controller's own metadata directory and the log's end offset noted after it:

1. create topic ``orders`` (3 partitions, RF 3) and topic ``gone``;
2. set ``retention.ms=1000`` on ``orders``;
3. kill broker 3 (SIGKILL, no controlled shutdown): the controller fences it when its session
   expires and takes it out of every ISR;
4. restart broker 3: registered again, unfenced, back in the ISRs;
5. reassign ``orders-0`` onto brokers 1 and 2;
6. delete ``gone`` and ``retention.ms``;
7. delete ``orders``.

Then, on a copy of the directory: ``--at`` each noted offset shows exactly what the script had done
by then (and equals a load stopped at that offset, the journal moving one image back and forth);
``history`` of a partition, a broker, a config key and the deleted topics tells the same story
in order; ``log`` lists the records of each step; ``diff`` between two steps shows that step's change.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from typing import Any

import pytest
from test_cli import run_cli
from test_image_loader import image_state

from metashell.image.image import MetadataImage
from metashell.image.loader import load_directory
from metashell.shell.sources import open_directory

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

VERSION = "4.4.0"


def _wait(what: str, probe: Callable[[], Any], timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def scripted(kafka_cluster_module: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cluster = kafka_cluster_module(VERSION, "combined", brokers=2)
    bs = cluster.bootstrap_servers
    live_dir = cluster.node(1).metadata_dir

    def admin(tool: str, *args: str) -> str:
        return cluster.admin(tool, "--bootstrap-server", bs, *args, check=True).stdout

    def image() -> MetadataImage:
        return load_directory(live_dir).image

    def step(name: str, done: Callable[[MetadataImage], bool], timeout: float = 120) -> None:
        def probe() -> MetadataImage | None:
            img = image()
            return img if done(img) else None

        offsets[name] = _wait(name, probe, timeout).provenance.offset

    def parts(img: MetadataImage, topic: str) -> dict[int, Any]:
        t = img.topics.by_name.get(topic)
        return {} if t is None else t.partitions

    offsets: dict[str, int] = {}
    admin("kafka-topics", "--create", "--topic", "orders", "--partitions", "3", "--replication-factor", "3")
    admin("kafka-topics", "--create", "--topic", "gone", "--partitions", "1", "--replication-factor", "1")
    step("created", lambda i: len(parts(i, "orders")) == 3 and "gone" in i.topics.by_name)
    cluster.wait_topic_served("orders")  # kafka-configs asks a broker, which learns after the controller
    admin(
        "kafka-configs",
        "--entity-type",
        "topics",
        "--entity-name",
        "orders",
        "--alter",
        "--add-config",
        "retention.ms=1000",
    )
    step("configured", lambda i: i.configs.get((2, "orders"), {}).get("retention.ms") == "1000")
    cluster.node(3).kill()
    step(
        "killed",
        lambda i: i.cluster.brokers[3].fenced and all(3 not in p.isr for p in parts(i, "orders").values()),
        timeout=180,
    )
    cluster.node(3).start()
    step(
        "restarted",
        lambda i: not i.cluster.brokers[3].fenced and all(3 in p.isr for p in parts(i, "orders").values()),
        timeout=180,
    )
    plan = tmp_path_factory.mktemp("reassign") / "plan.json"
    plan.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1, 2]}]})
    )
    admin("kafka-reassign-partitions", "--reassignment-json-file", str(plan), "--execute")
    step(
        "reassigned",
        lambda i: (
            parts(i, "orders")[0].replicas == (1, 2)
            and not parts(i, "orders")[0].adding_replicas
            and not parts(i, "orders")[0].removing_replicas
        ),
    )
    admin("kafka-topics", "--delete", "--topic", "gone")
    admin(
        "kafka-configs",
        "--entity-type",
        "topics",
        "--entity-name",
        "orders",
        "--alter",
        "--delete-config",
        "retention.ms",
    )
    step("cleaned", lambda i: "gone" not in i.topics.by_name and (2, "orders") not in i.configs)
    admin("kafka-topics", "--delete", "--topic", "orders")
    step("deleted", lambda i: "orders" not in i.topics.by_name)
    copy = tmp_path_factory.mktemp("history") / "meta"
    shutil.copytree(live_dir, copy)
    return {"dir": copy, "offsets": offsets}


def test_at_each_step_shows_what_the_script_had_done(scripted: dict[str, Any]) -> None:
    d, off = scripted["dir"], scripted["offsets"]
    assert list(off.values()) == sorted(off.values())
    source = open_directory(str(d), lambda _w: None, True)
    assert source.travel is not None
    last = source.image.provenance.offset
    for name in (
        "deleted",
        "created",
        "killed",
        "reassigned",
        "configured",
        "restarted",
        "cleaned",
        "created",
    ):
        root, label = source.travel.move(str(off[name]))
        img = root.ctx.image
        assert img.provenance.offset == off[name]
        assert label == (None if off[name] == last else f"@{off[name]}")
        assert image_state(img) == image_state(load_directory(d, until_offset=off[name]).image), name
        orders = img.topics.by_name.get("orders")
        config = img.configs.get((2, "orders"), {})
        if name == "deleted":
            assert orders is None
            continue
        assert orders is not None and sorted(orders.partitions) == [0, 1, 2]
        assert ("gone" in img.topics.by_name) == (name != "cleaned")
        assert config.get("retention.ms") == (
            "1000" if name in ("configured", "killed", "restarted", "reassigned") else None
        )
        assert img.cluster.brokers[3].fenced == (name == "killed")
        in_isr = [3 in p.isr for p in orders.partitions.values()]
        assert in_isr == (
            [False] * 3
            if name == "killed"
            else [True, True, True]
            if name in ("created", "configured", "restarted")
            else in_isr
        )
        assert (orders.partitions[0].replicas == (1, 2)) == (name in ("reassigned", "cleaned"))

    status, out, err = run_cli("-d", str(d), "--at", str(off["killed"]), "--json", "cat", "/brokers/3")
    assert status == 0, err
    assert json.loads(out)["value"]["fenced"] is True


def test_history_tells_the_story_in_order(scripted: dict[str, Any]) -> None:
    d, off = scripted["dir"], scripted["offsets"]

    def history(path: str) -> list[dict[str, Any]]:
        status, out, err = run_cli("-d", str(d), "--json", "history", path)
        assert status == 0, err
        return [json.loads(line) for line in out.splitlines()]

    p0 = history("/topics/orders/0")
    assert p0[0]["summary"].startswith("partition created") and p0[0]["offset"] <= off["created"]
    assert (
        p0[-1]["summary"] == "topic orders deleted" and off["reassigned"] < p0[-1]["offset"] <= off["deleted"]
    )
    shrink = [c for c in p0 if off["configured"] < c["offset"] <= off["killed"] and "Isr" in c["changes"]]
    assert shrink and 3 in shrink[0]["changes"]["Isr"][0] and 3 not in shrink[-1]["changes"]["Isr"][1]
    grow = [c for c in p0 if off["killed"] < c["offset"] <= off["restarted"] and "Isr" in c["changes"]]
    assert grow and 3 in grow[-1]["changes"]["Isr"][1]
    moved = [
        c for c in p0 if off["restarted"] < c["offset"] <= off["reassigned"] and "Replicas" in c["changes"]
    ]
    assert moved and moved[-1]["changes"]["Replicas"][1] == [1, 2]

    b3 = history("/brokers/3")
    fenced = [c for c in b3 if c["changes"].get("fenced", [None, None])[1] is True]
    assert any(off["configured"] < c["offset"] <= off["killed"] for c in fenced)
    again = [c for c in b3 if off["killed"] < c["offset"] <= off["restarted"]]
    assert any(c["summary"].startswith("broker registered") for c in again)
    assert any(c["changes"].get("fenced", [None, None])[1] is False for c in again)

    retention = history("/configs/topic/orders/retention.ms")
    assert [(c["changes"]["retention.ms"][1]) for c in retention] == ["1000", None]
    assert off["created"] < retention[0]["offset"] <= off["configured"]
    assert off["reassigned"] < retention[1]["offset"] <= off["cleaned"]

    gone = history("/topics/gone")
    assert [c["summary"].split(" (")[0] for c in gone] == [
        "topic gone created",
        "partition 0 created",
        "topic gone deleted",
    ]


def test_log_and_diff_show_each_step(scripted: dict[str, Any]) -> None:
    d, off = scripted["dir"], scripted["offsets"]
    status, out, err = run_cli(
        "-d",
        str(d),
        "log",
        "--from",
        str(off["created"] + 1),
        "--to",
        str(off["configured"]),
        "--type",
        "ConfigRecord",
    )
    assert status == 0, err
    assert [line.split(None, 5)[-1] for line in out.splitlines()] == [
        "topic orders config retention.ms = 1000"
    ]
    status, out, _ = run_cli(
        "-d",
        str(d),
        "log",
        "--from",
        str(off["reassigned"] + 1),
        "--to",
        str(off["deleted"]),
        "--type",
        "RemoveTopicRecord",
    )
    assert [line.split(None, 5)[-1] for line in out.splitlines()] == [
        "topic gone deleted",
        "topic orders deleted",
    ]

    status, out, _ = run_cli(
        "-d", str(d), "diff", "--from", str(off["created"]), "--to", str(off["configured"]), "/configs"
    )
    assert status == 1 and out.splitlines()[2:] == ["+/configs/topic/orders/retention.ms: 1000"]
    status, out, _ = run_cli(
        "-d",
        str(d),
        "diff",
        "--from",
        str(off["restarted"]),
        "--to",
        str(off["reassigned"]),
        "/topics/orders/0",
    )
    assert status == 1 and "+/topics/orders/0 replicas: [1,2]" in out.splitlines()
    status, out, _ = run_cli("-d", str(d), "diff", "--from", str(off["cleaned"]), "--to", str(off["cleaned"]))
    assert status == 0 and out == ""
