"""``upgrade-check`` (issue 26, in part): the controller's rules for finalizing a feature level
(``FeatureControlManager.reasonNotSupported``), on fixtures made by real Kafka and on small logs
that plant a stale controller registration and a broker-level min.insync.replicas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FIXTURES, assert_generated_current
from test_cli import run_cli
from test_image_loader import rec

from metashell.log.encoding import build_batch


def _check(path: Path, target: str) -> tuple[int, dict[str, Any]]:
    status, out, err = run_cli("-d", str(path), "--json", "upgrade-check", "--to", target, "--exit-code")
    assert err == "", err
    return status, json.loads(out)


def test_a_real_cluster_is_blocked_by_every_node_that_does_not_support_the_level() -> None:
    status, doc = _check(FIXTURES / "kafka-3.9-split-c1", "4.0-IV0")
    assert status == 1 and doc["current"] == 21 and doc["target"] == 22
    assert [b["node"] for b in doc["blockers"]] == [
        "broker 4",
        "broker 5",
        "controller 1",
        "controller 2",
        "controller 3",
    ]
    assert all(b["reason"] == "supports levels 1-21 only (its registration)" for b in doc["blockers"])
    status, doc = _check(FIXTURES / "kafka-3.9-split-c1", "21")
    assert status == 0 and not doc["blocked"]


def test_a_voter_without_registration_blocks(tmp_path: Path) -> None:
    """Controllers 1 and 2 registered (up to 3.9-IV0), voter 3 never did: the controller would refuse
    3.9-IV0 from 3.7-IV4 -- voter 3 may not support it."""
    records = [
        rec("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 19}),
        _controller(1, 21),
        _controller(2, 21),
    ]
    status, doc = _check(_dir(tmp_path, records, [1, 2, 3]), "3.9-IV0")
    assert status == 1
    assert [b["node"] for b in doc["blockers"]] == ["controller 3"]
    assert doc["blockers"][0]["reason"].startswith("has not registered")


def test_the_default_target_is_the_highest_level_every_node_supports(tmp_path: Path) -> None:
    """No --to (or --to latest): the highest level every registered node supports; the level in force
    says so (it used to say "nothing blocks it", as if something were to be done)."""
    status, out, err = run_cli("-d", str(FIXTURES / "kafka-4.4-split-c1"), "upgrade-check", "--exit-code")
    assert status == 0 and out.startswith("metadata.version 4.4-IV2 (33): already in force"), err
    records = [
        rec("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 19}),
        _controller(1, 21),
        _controller(2, 20),
    ]
    status, doc = _check(_dir(tmp_path, records, [1, 2]), "latest")
    assert status == 0 and doc["target"] == 20 and not doc["blocked"] and not doc["inForce"]


def _controller(cid: int, max_mv: int) -> bytes:
    return rec(
        "RegisterControllerRecord",
        0,
        {
            "ControllerId": cid,
            "IncarnationId": bytes([cid]) * 16,
            "ZkMigrationReady": False,
            "EndPoints": [{"Name": "CONTROLLER", "Host": f"c{cid}", "Port": 9093, "SecurityProtocol": 0}],
            "Features": [
                {"Name": "metadata.version", "MinSupportedVersion": 7, "MaxSupportedVersion": max_mv}
            ],
        },
    )


def _dir(tmp_path: Path, records: list[bytes], voters: list[int]) -> Path:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(build_batch(0, 1, records, 1_700_000_000_000))
    state: dict[str, Any] = {
        "leaderId": 1,
        "leaderEpoch": 1,
        "votedId": -1,
        "appliedOffset": 0,
        "data_version": 0,
    }
    state["currentVoters"] = [{"voterId": v} for v in voters]
    (part / "quorum-state").write_text(json.dumps(state))
    return part


def test_a_stale_controller_registration_blocks_and_says_so(tmp_path: Path) -> None:
    """After a migration, controller 3 left the voters but its registration (with an old range) stays:
    the upgrade from 3.7-IV4 to 3.9-IV0 is refused because of it."""
    records = [
        rec("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 19}),
        _controller(1, 21),
        _controller(2, 21),
        _controller(3, 19),
    ]
    status, doc = _check(_dir(tmp_path, records, [1, 2]), "3.9-IV0")
    assert status == 1
    [blocker] = doc["blockers"]
    assert blocker["node"] == "controller 3"
    assert blocker["reason"] == "supports levels 7-19 only (its registration) (stale: not a voter)"
    assert "UnregisterControllerRecord" in blocker["clear"] and "4.4-IV2" in blocker["clear"]
    _, out, _ = run_cli("-d", str(tmp_path / "__cluster_metadata-0"), "upgrade-check", "--to", "3.9-IV0")
    assert out.startswith("metadata.version 3.7-IV4 (19) -> 3.9-IV0 (21): BLOCKED")


def test_turning_elr_on_says_what_it_does_to_broker_level_min_isr(tmp_path: Path) -> None:
    elr = {"Name": "eligible.leader.replicas.version", "MinSupportedVersion": 0, "MaxSupportedVersion": 1}
    broker = rec(
        "RegisterBrokerRecord",
        3,
        {
            "BrokerId": 1,
            "BrokerEpoch": 1,
            "IncarnationId": b"\x01" * 16,
            "EndPoints": [],
            "Features": [elr],
            "Rack": None,
            "Fenced": False,
        },
    )
    controller = rec(
        "RegisterControllerRecord",
        0,
        {
            "ControllerId": 1,
            "IncarnationId": b"\x02" * 16,
            "ZkMigrationReady": False,
            "EndPoints": [],
            "Features": [elr],
        },
    )
    records = [
        rec("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 23}),  # what ELR 1 needs
        broker,
        controller,
        rec(
            "ConfigRecord",
            0,
            {"ResourceType": 4, "ResourceName": "1", "Name": "min.insync.replicas", "Value": "2"},
        ),
    ]
    status, doc = _check(_dir(tmp_path, records, [1]), "eligible.leader.replicas.version=1")
    assert status == 0, doc
    assert any("deletes the broker-level min.insync.replicas of broker(s) 1" in c for c in doc["changes"])
    assert any("no cluster-level min.insync.replicas" in c for c in doc["changes"])


def test_a_target_that_names_no_level_is_refused() -> None:
    status, _, err = run_cli("-d", str(FIXTURES / "demo"), "upgrade-check", "--to", "banana")
    assert status == 1 and "give a metadata.version (3.9-IV0 or 21), FEATURE=LEVEL, or latest" in err


def test_a_level_whose_dependencies_are_not_finalized_is_blocked() -> None:
    """Kafka's own table (feature_rules.py, from its enums): ELR 1 needs metadata.version 4.0-IV1."""
    status, doc = _check(FIXTURES / "kafka-3.9-split-c1", "eligible.leader.replicas.version=1")
    assert status == 1 and doc["blocked"]
    cluster = [b for b in doc["blockers"] if b["node"] == "cluster"]
    assert [b["reason"] for b in cluster] == [
        "eligible.leader.replicas.version=1 depends on metadata.version 4.0-IV1 (23); it is 3.9-IV0 (21)"
    ]
    assert cluster[0]["clear"].endswith("upgrade --metadata 4.0-IV1")


def test_lowering_metadata_version_below_what_a_finalized_feature_needs_is_blocked() -> None:
    status, doc = _check(FIXTURES / "kafka-4.4-split-c1", "4.0-IV0")
    assert status == 1
    reasons = [b["reason"] for b in doc["blockers"] if b["node"] == "cluster"]
    assert (
        "eligible.leader.replicas.version is at level 1, which depends on metadata.version 4.0-IV1 (23)"
        in reasons
    )


def test_unknown_features_and_levels_are_named() -> None:
    _, doc = _check(FIXTURES / "kafka-4.4-split-c1", "no.such.feature=1")
    assert doc["blockers"][0]["reason"] == "Kafka 4.4.0 has no feature named no.such.feature"
    _, doc = _check(FIXTURES / "kafka-4.4-split-c1", "transaction.version=9")
    assert doc["blockers"][0]["reason"].startswith("transaction.version has no level 9")


def test_the_dependency_table_is_generated_from_kafka() -> None:
    """Regenerated against the cached 4.4.0 jars when present (the kafka tests fetch them)."""
    assert_generated_current("gen_feature_rules.py", ("4.4.0",))
