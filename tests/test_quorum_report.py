"""``quorum`` (issue 26, in part): one node's place in the quorum and the timeline of leaders and
voters, from its directory alone -- checked on fixtures made by real Kafka, where the scripts that
made them know what happened (``fixtures/README.md``: the split cluster's controller 3 was removed
from the voters and added back with ``kafka-metadata-quorum``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, corpus_dirs, shared_required
from test_cli import run_cli


def _report(path: Path) -> dict:
    status, out, err = run_cli("-d", str(path), "--json", "quorum")
    assert status == 0, err
    doc: dict = json.loads(out)
    return doc


def test_a_dynamic_quorum_s_timeline_shows_the_controller_removed_and_added_back() -> None:
    doc = _report(FIXTURES / "kafka-4.4-split-c1")
    assert doc["nodeId"] == 1 and doc["role"] == "voter" and doc["voters"] == [1, 2, 3]
    events = doc["timeline"]
    leaders = [(e["epoch"], e["summary"].split(",")[0]) for e in events if e["kind"] == "LeaderChange"]
    assert leaders == [(1, "leader 3"), (2, "leader 2"), (3, "leader 1")]
    assert doc["quorumState"]["leaderId"] == 1 and doc["quorumState"]["leaderEpoch"] == 3
    voters = [(e["offset"], e["summary"].count("@")) for e in events if e["kind"] == "KRaftVoters"]
    assert voters == [(2, 3), (290, 2), (291, 3)]  # removed at 290, back at 291
    assert [e["summary"] for e in events if e["kind"] == "KRaftVersion"] == ["kraft.version 1"]
    _, out, _ = run_cli("-d", str(FIXTURES / "kafka-4.4-split-c1"), "quorum")
    assert out.startswith("node 1 (cluster ") and "\ntimeline (leaders, voters, kraft.version):\n" in out


def test_a_broker_is_an_observer() -> None:
    doc = _report(FIXTURES / "kafka-4.4-broker")
    assert doc["role"] == "observer" and doc["nodeId"] not in doc["voters"]


def test_a_quorum_state_past_the_log_is_said() -> None:
    cluster = shared_required("corpus", "ftmhxp+real-time-data-streaming-pipeline@kafka1")
    _, out, _ = run_cli("-d", str(cluster), "quorum")
    assert "quorum-state is at epoch 5, past the log's last epoch 2" in out


@pytest.mark.parametrize("directory", [*sorted(p for p in FIXTURES.iterdir() if p.is_dir()), *corpus_dirs()])
def test_every_directory_has_a_report(directory: Path) -> None:
    doc = _report(directory)
    assert doc["logEndOffset"] is None or doc["logEndOffset"] >= (doc["logStartOffset"] or 0)
    assert all(e["kind"] in ("LeaderChange", "KRaftVoters", "KRaftVersion") for e in doc["timeline"])
    offsets = [e["offset"] for e in doc["timeline"]]
    assert offsets == sorted(offsets)
