"""``doctor`` (issue 26): clean on every fixture and corpus directory, and it finds each fault
planted in a small log written with metashell's own encoders (faults no real Kafka writes on demand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, corpus_dirs
from test_cli import run_cli
from test_image_loader import rec, write_snapshot

from metashell.log.encoding import build_batch

T1 = b"\x11" * 16
DIR1 = b"\x21" * 16


def _broker(bid: int) -> bytes:
    return rec(
        "RegisterBrokerRecord",
        3,
        {
            "BrokerId": bid,
            "BrokerEpoch": 1,
            "IncarnationId": bytes([bid]) * 16,
            "EndPoints": [{"Name": "PLAINTEXT", "Host": f"b{bid}", "Port": 9092, "SecurityProtocol": 0}],
            "Features": [],
            "Rack": None,
            "Fenced": False,
            "LogDirs": [DIR1],
        },
    )


def _partition(pid: int, replicas: list[int], isr: list[int], leader: int) -> bytes:
    return rec(
        "PartitionRecord",
        1,
        {
            "PartitionId": pid,
            "TopicId": T1,
            "Replicas": replicas,
            "Isr": isr,
            "Leader": leader,
            "LeaderEpoch": 0,
            "PartitionEpoch": 0,
            "Directories": [DIR1] * len(replicas),
        },
    )


BASE = [
    rec("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 20}),
    _broker(1),
    _broker(2),
    rec("TopicRecord", 0, {"Name": "orders", "TopicId": T1}),
    _partition(0, [1, 2], [1, 2], 1),
]


def _dir(tmp_path: Path, batches: list[tuple[int, int, list[Any], bool]]) -> Path:
    """A metadata directory whose one segment holds ``batches``: (base offset, epoch, records, control)."""
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    data = b"".join(build_batch(b, e, recs, 1_700_000_000_000 + b, control=c) for b, e, recs, c in batches)
    (part / "00000000000000000000.log").write_bytes(data)
    return part


def _doctor(path: Path, *more: str) -> tuple[int, dict[str, Any]]:
    status, out, err = run_cli("-d", str(path), "--json", "doctor", "--exit-code", *more)
    assert err == "" or "warning" in err, err
    return status, json.loads(out)


def _found(doc: dict[str, Any]) -> dict[str, list[str]]:
    return {f["key"]: f["items"] for f in doc["findings"]}


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_every_fixture_is_consistent(fixture: str) -> None:
    status, doc = _doctor(FIXTURES / fixture)
    assert status == 0 and doc["clean"], doc
    assert "snapshots against the log" in doc["checked"]


@pytest.mark.parametrize("fixture", ["kafka-3.7", "kafka-4.4"])
def test_a_failed_log_directory_is_information_not_an_inconsistency(fixture: str) -> None:
    """The release lines fail broker 4's second log directory (JBOD, 3.7 on): Kafka drops it from
    the broker's registration and leaves its replicas there, offline.  doctor names them as
    information; the metadata is consistent."""
    status, doc = _doctor(FIXTURES / fixture)
    items = _found(doc)["foreign-directories"]
    severity = {f["key"]: f["severity"] for f in doc["findings"]}["foreign-directories"]
    assert status == 0 and doc["clean"] and severity == "info"
    assert items and all(
        ": replica 4 in directory " in i and i.endswith("which broker 4 does not list") for i in items
    )


@pytest.mark.parametrize("directory", corpus_dirs())
def test_every_corpus_directory_is_consistent(directory: Path) -> None:
    """The one finding on the corpus is information: the pre-3.3 log has no metadata.version."""
    status, doc = _doctor(directory)
    assert status == 0 and doc["clean"], doc
    assert set(_found(doc)) <= {"no-metadata-version"}


def test_a_clean_small_log(tmp_path: Path) -> None:
    status, doc = _doctor(_dir(tmp_path, [(0, 1, BASE, False)]))
    assert status == 0 and doc["verdict"].startswith("CONSISTENT") and doc["findings"] == []


def test_partition_and_reference_faults(tmp_path: Path) -> None:
    records = [
        *BASE,
        _partition(1, [1, 2], [2], 1),  # leader not in the ISR
        _partition(2, [1, 2], [1, 3], 1),  # ISR outside the replicas
        _partition(3, [1, 7], [1], 1),  # broker 7 is not registered
        rec(
            "ConfigRecord",
            0,
            {"ResourceType": 2, "ResourceName": "gone", "Name": "retention.ms", "Value": "1"},
        ),
    ]
    status, doc = _doctor(_dir(tmp_path, [(0, 1, records, False)]))
    found = _found(doc)
    assert status == 2 and doc["verdict"].startswith("INCONSISTENT")
    assert found["leader-not-in-isr"] == ["orders-1: leader 1 is not in its ISR [2]"]
    assert found["isr-outside-replicas"] == ["orders-2: replicas [1, 2], isr [1, 3], elr []"]
    assert found["replicas-on-unknown-brokers"] == ["broker 7: 1 replica(s)"]
    assert found["orphan-topic-configs"] == ["topic 'gone' has 1 config(s) but no such topic exists"]


def test_an_epoch_that_goes_back_and_a_checkpoint_that_disagrees(tmp_path: Path) -> None:
    noop = [rec("NoOpRecord", 0, {})]
    part = _dir(tmp_path, [(0, 1, BASE, False), (5, 3, noop, False), (6, 2, noop, False)])
    (part / "leader-epoch-checkpoint").write_text("0\n2\n1 0\n3 4\n")
    status, doc = _doctor(part)
    found = _found(doc)
    assert status == 2
    items = found["epoch-order"]  # the rules quorum holds a rebuild source to (image/log_validity.py)
    assert any(i.endswith("leader epoch 2 at offset 6 after epoch 3: epochs go backwards") for i in items), (
        items
    )
    assert any(
        i.endswith("leader epoch 3 begins at offset 5, leader-epoch-checkpoint says 4") for i in items
    ), items
    assert all(i.startswith("00000000000000000000.log byte ") for i in items)


def test_a_transaction_left_open(tmp_path: Path) -> None:
    begin = rec("BeginTransactionRecord", 0, {"Name": "x"})
    status, doc = _doctor(_dir(tmp_path, [(0, 1, BASE, False), (5, 1, [begin], False)]))
    assert status == 2 and _found(doc)["open-transaction"][0].startswith(
        "the log ends inside a metadata transaction"
    )


def test_a_snapshot_that_differs_from_the_log_before_it(tmp_path: Path) -> None:
    """A snapshot at offset 5 that lacks broker 2, which the log before it registered."""
    part = _dir(tmp_path, [(0, 1, BASE, False)])
    write_snapshot(part / "00000000000000000005-0000000001.checkpoint", 1, [BASE[0], BASE[1], *BASE[3:]], 0)
    status, doc = _doctor(part)
    found = _found(doc)
    assert status == 2
    assert found["snapshot-differs"] == [
        "00000000000000000005-0000000001.checkpoint: differs from replaying the log to offset 4: brokers (2)"
    ]
    _, out, _ = run_cli("-d", str(part), "doctor")
    assert out.startswith("INCONSISTENT: 1 snapshot(s) that differ from replaying the older data")


def test_a_name_cannot_forge_a_line_of_the_report(tmp_path: Path) -> None:
    config = {
        "ResourceType": 2,
        "ResourceName": "gone\nCONSISTENT: forged",
        "Name": "retention.ms",
        "Value": "1",
    }
    _, out, _ = run_cli(
        "-d", str(_dir(tmp_path, [(0, 1, [*BASE, rec("ConfigRecord", 0, config)], False)])), "doctor"
    )
    assert "\nCONSISTENT" not in out and "gone\\nCONSISTENT: forged" in out
