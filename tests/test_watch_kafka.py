"""``watch`` against a REAL running Kafka 4.4 node: live from its controller listener (``-q``) and
on the metadata directory it keeps appending to (``-d``).  A topic is created and a config changed
while metashell watches; both must show up, and ``--count`` must end the watch."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

import pytest
from conftest import REPO

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

VERSION = "4.4.0"


@pytest.fixture(scope="module")
def running(kafka_cluster_module: Any) -> Any:
    return kafka_cluster_module(VERSION, "combined")


def _watch(args: list[str], path: str, count: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "metashell",
            *args,
            "-c",
            f"watch --json --count {count} --interval 0.3 {path}",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4)  # loaded and watching
    return proc


def _finish(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"watch did not end: {out} {err}")
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("mode", ["live", "directory"])
def test_watch_sees_a_new_topic_and_a_config_change(running: Any, mode: str) -> None:
    node = running.nodes[0]
    source = ["-q", running.controller_bootstrap] if mode == "live" else ["-d", str(node.metadata_dir)]
    topic = f"watched-{mode}"
    proc = _watch(source, f"/topics/{topic}", 1)
    running.admin(
        "kafka-topics",
        "--bootstrap-server",
        running.bootstrap_servers,
        "--create",
        "--topic",
        topic,
        "--partitions",
        "1",
        "--replication-factor",
        "1",
        check=True,
    )
    (created,) = _finish(proc)  # one event for the new topic, not one per field
    running.wait_topic_served(topic)  # kafka-configs asks the broker, which learns after the controller
    assert created == {**created, "path": f"/topics/{topic}", "change": "created", "old": None, "new": None}
    assert created["offset"] > 0

    proc = _watch(source, f"/configs/topic/{topic}", 1)
    running.admin(
        "kafka-configs",
        "--bootstrap-server",
        running.bootstrap_servers,
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
        "--add-config",
        "retention.ms=123456",
        check=True,
    )
    (event,) = _finish(proc)
    assert event == {
        **event,
        "path": f"/configs/topic/{topic}/retention.ms",
        "change": "added",
        "old": None,
        "new": "123456",
    }
