"""Replay semantics, one record type at a time (FORMATS.md 5.2/5.3, Kafka 4.4 for keys 28-29).

Records are built with the project's encoder and decoded again, so each test exercises exactly
what the loader feeds the replayer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metashell.image.image import MetadataImage, SnapshotInfo
from metashell.image.kafka_names import metadata_version_name
from metashell.image.model import EMPTY, LOST_DIR, MIGRATING_DIR, UNASSIGNED_DIR
from metashell.image.replay import Replayer
from metashell.protocol.control import decode_control_record, encode_control_record
from metashell.protocol.metadata import decode_metadata_record, encode_metadata_record, max_version

T1 = bytes(range(1, 17))
T2 = bytes(range(17, 33))
D1 = b"\x11" * 8 + b"\x22" * 8
D2 = b"\x33" * 16
D3 = b"\x80" + b"\x00" * 15  # negative msb: sorts first in Java Uuid order
INC = b"3" * 8 + b"D" * 8


def rec(name: str, data: dict[str, Any], version: int | None = None) -> Any:
    from metashell.protocol.metadata import record_keys

    v = max_version(record_keys()[name]) if version is None else version
    return decode_metadata_record(encode_metadata_record(name, v, data))


def play(r: Replayer, *records: Any, start: int = 0) -> Replayer:
    for i, record in enumerate(records):
        r.replay(record, start + i)
    return r


def topic_with_partition(r: Replayer, **overrides: Any) -> Replayer:
    part = {
        "PartitionId": 0,
        "TopicId": T1,
        "Replicas": [1, 2, 3],
        "Isr": [1, 2, 3],
        "Leader": 1,
        "LeaderEpoch": 0,
        "PartitionEpoch": 0,
        "Directories": [D1, D2, D1],
    }
    part.update(overrides)
    return play(r, rec("TopicRecord", {"Name": "foo", "TopicId": T1}), rec("PartitionRecord", part))


def broker(bid: int = 1, epoch: int = 10, **extra: Any) -> Any:
    data = {
        "BrokerId": bid,
        "BrokerEpoch": epoch,
        "IncarnationId": INC,
        "EndPoints": [
            {"Name": "PLAINTEXT", "Host": "localhost", "Port": 9092, "SecurityProtocol": 0},
            {"Name": "SSL", "Host": "h", "Port": 9093, "SecurityProtocol": 1},
        ],
        "Features": [{"Name": "metadata.version", "MinSupportedVersion": 1, "MaxSupportedVersion": 21}],
        "Rack": None,
        "Fenced": True,
        "LogDirs": [D2, D1, D3],
    }
    data.update(extra)
    return rec("RegisterBrokerRecord", data)


def faults(r: Replayer) -> list[str]:
    return [w.message for w in r.warnings if w.kind == "fault"]


# ---------------------------------------------------------------------------- brokers


def test_register_broker_builds_registration_with_sorted_dirs() -> None:
    r = play(Replayer(), broker(Rack="r1", InControlledShutdown=True))
    b = r.image.cluster.brokers[1]
    assert (b.id, b.epoch, b.incarnation_id, b.rack) == (1, 10, INC, "r1")
    assert sorted(b.listeners) == ["PLAINTEXT", "SSL"]
    ep = b.listeners["SSL"]
    assert (ep.name, ep.host, ep.port, ep.security_protocol) == ("SSL", "h", 9093, 1)
    assert b.supported_features == {"metadata.version": (1, 21)}
    assert b.fenced is True and b.in_controlled_shutdown is True and b.is_migrating_zk_broker is False
    assert b.directories == (D3, D1, D2)  # Java Uuid order: signed msb first
    assert b.cordoned_directories is None
    assert not r.warnings


def test_register_broker_old_versions_use_defaults() -> None:
    r = play(
        Replayer(),
        rec(
            "RegisterBrokerRecord",
            {
                "BrokerId": 2,
                "BrokerEpoch": 5,
                "IncarnationId": INC,
                "EndPoints": [],
                "Features": [],
                "Rack": None,
            },
            0,
        ),
    )
    b = r.image.cluster.brokers[2]
    assert b.fenced is True and b.in_controlled_shutdown is False and b.directories == EMPTY


def test_register_broker_replaces_previous_registration() -> None:
    r = play(Replayer(), broker(epoch=10, Fenced=False), broker(epoch=11, LogDirs=[]))
    b = r.image.cluster.brokers[1]
    assert b.epoch == 11 and b.fenced is True and b.directories == EMPTY


def test_register_broker_v4_cordoned_dirs() -> None:
    r = play(Replayer(), broker(CordonedLogDirs=[D2]))
    assert r.image.cluster.brokers[1].cordoned_directories == (D2,)


def test_unregister_broker_ignores_epoch_and_unknown_ids() -> None:
    r = play(
        Replayer(),
        broker(),
        rec("UnregisterBrokerRecord", {"BrokerId": 1, "BrokerEpoch": 999}),
        rec("UnregisterBrokerRecord", {"BrokerId": 7, "BrokerEpoch": 1}),
    )
    assert r.image.cluster.brokers == {} and not r.warnings


def test_fence_and_unfence_check_epoch() -> None:
    r = play(Replayer(), broker(Fenced=True), rec("UnfenceBrokerRecord", {"Id": 1, "Epoch": 10}))
    assert r.image.cluster.brokers[1].fenced is False
    play(r, rec("FenceBrokerRecord", {"Id": 1, "Epoch": 10}), start=5)
    assert r.image.cluster.brokers[1].fenced is True
    play(
        r,
        rec("UnfenceBrokerRecord", {"Id": 1, "Epoch": 9}),
        rec("FenceBrokerRecord", {"Id": 3, "Epoch": 1}),
        start=10,
    )
    assert r.image.cluster.brokers[1].fenced is True
    assert [w.offset for w in r.warnings] == [10, 11] and r.fault_count == 2
    assert "did not match the current broker epoch, 10" in faults(r)[0]
    assert "was not registered" in faults(r)[1]


def test_broker_registration_change_fields() -> None:
    r = play(Replayer(), broker(Fenced=True))
    b = r.image.cluster.brokers[1]
    change = "BrokerRegistrationChangeRecord"
    play(r, rec(change, {"BrokerId": 1, "BrokerEpoch": 10, "Fenced": -1}))
    assert b.fenced is False and b.in_controlled_shutdown is False
    play(r, rec(change, {"BrokerId": 1, "BrokerEpoch": 10, "Fenced": 0, "InControlledShutdown": 1}))
    assert b.fenced is False and b.in_controlled_shutdown is True
    play(r, rec(change, {"BrokerId": 1, "BrokerEpoch": 10, "Fenced": 1}))
    assert b.fenced is True and b.in_controlled_shutdown is True  # no way back except re-registering
    play(r, rec(change, {"BrokerId": 1, "BrokerEpoch": 10, "LogDirs": []}))
    assert b.directories == (D3, D1, D2)  # empty = no change
    play(r, rec(change, {"BrokerId": 1, "BrokerEpoch": 10, "LogDirs": [D2, D3]}))
    assert b.directories == (D3, D2)
    play(r, rec(change, {"BrokerId": 1, "BrokerEpoch": 10, "CordonedLogDirs": [D3]}))
    assert b.cordoned_directories == (D3,)
    play(r, rec(change, {"BrokerId": 1, "BrokerEpoch": 10}))
    assert b.cordoned_directories == (D3,)  # null = no change
    assert not r.warnings


@pytest.mark.parametrize(
    "data, message",
    [
        ({"Fenced": 2}, "unknown value for fenced field: 2"),
        ({"InControlledShutdown": -1}, "unknown value for inControlledShutdown field: -1"),
        ({"BrokerEpoch": 11}, "did not match"),
    ],
)
def test_broker_registration_change_faults_leave_broker_untouched(data: dict[str, Any], message: str) -> None:
    r = play(Replayer(), broker(Fenced=True))
    record = {"BrokerId": 1, "BrokerEpoch": 10, "LogDirs": [D2]}
    record.update(data)
    play(r, rec("BrokerRegistrationChangeRecord", record), start=3)
    b = r.image.cluster.brokers[1]
    assert b.fenced is True and b.directories == (D3, D1, D2)
    assert message in faults(r)[0] and r.warnings[0].offset == 3


# ---------------------------------------------------------------------------- controllers


def controller(cid: int = 3, protocol: int = 0) -> Any:
    return rec(
        "RegisterControllerRecord",
        {
            "ControllerId": cid,
            "IncarnationId": INC,
            "ZkMigrationReady": True,
            "EndPoints": [
                {"Name": "CONTROLLER", "Host": "localhost", "Port": 9093, "SecurityProtocol": protocol}
            ],
            "Features": [{"Name": "kraft.version", "MinSupportedVersion": 0, "MaxSupportedVersion": 1}],
        },
    )


def test_register_and_unregister_controller() -> None:
    r = play(Replayer(), controller(3), controller(4))
    c = r.image.cluster.controllers[3]
    assert (c.id, c.incarnation_id, c.zk_migration_ready) == (3, INC, True)
    assert c.listeners["CONTROLLER"].port == 9093 and c.supported_features == {"kraft.version": (0, 1)}
    play(
        r,
        rec("UnregisterControllerRecord", {"ControllerId": 3}),
        rec("UnregisterControllerRecord", {"ControllerId": 99}),
    )
    assert list(r.image.cluster.controllers) == [4] and not r.warnings


def test_register_controller_unknown_security_protocol_is_a_fault() -> None:
    r = play(Replayer(), controller(3, protocol=42))
    assert r.image.cluster.controllers == {} and "unknown security protocol 42" in faults(r)[0]


# ---------------------------------------------------------------------------- topics and partitions


def test_topic_and_partition_record() -> None:
    r = topic_with_partition(Replayer(), LeaderRecoveryState=1, EligibleLeaderReplicas=[2], LastKnownElr=[3])
    t = r.image.topics.by_name["foo"]
    assert r.image.topics.by_id[T1] is t and t.name == "foo" and t.id == T1
    p = t.partitions[0]
    assert (p.replicas, p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2, 3), (1, 2, 3), 1, 0, 0)
    assert p.directories == (D1, D2, D1) and p.removing_replicas is EMPTY and p.adding_replicas is EMPTY
    assert (p.elr, p.last_known_elr, p.leader_recovery_state) == ((2,), (3,), 1)


def test_partition_record_v0_gets_migrating_directories_and_empty_elr() -> None:
    r = play(
        Replayer(),
        rec("TopicRecord", {"Name": "foo", "TopicId": T1}),
        rec(
            "PartitionRecord",
            {
                "PartitionId": 4,
                "TopicId": T1,
                "Replicas": [1, 2],
                "Isr": [1],
                "Leader": 1,
                "LeaderEpoch": 3,
                "PartitionEpoch": 7,
            },
            0,
        ),
    )
    p = r.image.topics.by_id[T1].partitions[4]
    assert (
        list(p.directories) == [MIGRATING_DIR, MIGRATING_DIR] and p.elr is EMPTY and p.last_known_elr is EMPTY
    )


def test_partition_lists_are_interned() -> None:
    r = play(
        Replayer(),
        rec("TopicRecord", {"Name": "foo", "TopicId": T1}),
        *[
            rec(
                "PartitionRecord",
                {"PartitionId": i, "TopicId": T1, "Replicas": [1, 2], "Isr": [1, 2], "Leader": 1},
                0,
            )
            for i in range(3)
        ],
    )
    parts = r.image.topics.by_id[T1].partitions
    assert parts[0].replicas is parts[2].replicas is parts[1].isr


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"Directories": [D1]}, "1 directories for 3 replicas"),
        ({"LeaderRecoveryState": 2}, "unknown leader recovery state 2"),
        ({"TopicId": T2}, "no topic with id"),
    ],
)
def test_partition_record_faults(overrides: dict[str, Any], message: str) -> None:
    r = topic_with_partition(Replayer(), **overrides)
    assert r.image.topics.by_id[T1].partitions == {} and message in faults(r)[0]


def change(r: Replayer, offset: int = 100, **fields: Any) -> Replayer:
    data = {"PartitionId": 0, "TopicId": T1}
    data.update(fields)
    return play(r, rec("PartitionChangeRecord", data), start=offset)


def test_partition_change_leader_and_epochs() -> None:
    r = topic_with_partition(Replayer())
    p = r.image.topics.by_id[T1].partitions[0]
    change(r, Leader=1)  # same leader still bumps the leader epoch
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (1, 1, 1)
    change(r, Isr=[1, 2])  # -2 default: leader unchanged
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.isr) == (1, 1, 2, (1, 2))
    change(r, Leader=-1)
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (-1, 2, 3)
    change(r, LeaderRecoveryState=1)
    assert p.leader_recovery_state == 1 and p.partition_epoch == 4
    change(r)  # empty change: partition epoch only
    assert (p.leader_recovery_state, p.isr, p.partition_epoch) == (1, (1, 2), 5)
    assert not r.warnings


def test_partition_change_replicas_and_directories_kafka_4_4() -> None:
    """Kafka 4.4.0's merge: directories are NOT remapped when only the replicas change."""
    r = topic_with_partition(Replayer(), Directories=[D1, D2, D3])
    p = r.image.topics.by_id[T1].partitions[0]
    change(r, Replicas=[3, 4, 1], AddingReplicas=[4], RemovingReplicas=[2])
    assert p.replicas == (3, 4, 1) and p.directories == (D1, D2, D3)  # positional, unchanged
    assert p.adding_replicas == (4,) and p.removing_replicas == (2,)
    change(r, Replicas=[3, 1], Directories=[LOST_DIR, D2], AddingReplicas=[], RemovingReplicas=[])
    assert list(p.directories) == [LOST_DIR, D2] and p.adding_replicas is EMPTY
    change(r, Directories=[D1, D1])
    assert list(p.directories) == [D1, D1] and list(p.replicas) == [3, 1]
    change(r, Directories=[])  # empty list: MIGRATING per replica
    assert list(p.directories) == [MIGRATING_DIR, MIGRATING_DIR]
    change(r, Replicas=[1, 2, 3])  # all-MIGRATING dirs follow the replicas
    assert p.directories == (MIGRATING_DIR,) * 3
    change(r, Directories=[MIGRATING_DIR])  # all-MIGRATING, any length, no Replicas
    assert p.directories == (MIGRATING_DIR,) * 3
    assert not r.warnings
    change(r, offset=76, Directories=[MIGRATING_DIR], Replicas=[5, 6])  # checkDirectories: fault
    change(r, Directories=[D1, D2, D3])
    change(r, offset=77, Replicas=[5])  # 3 dirs for 1 replica: fault
    assert p.replicas == (1, 2, 3) and [w.offset for w in r.warnings] == [76, 77]
    assert "1 directories for 2 replicas" in faults(r)[0] and "do not match" in faults(r)[1]
    assert UNASSIGNED_DIR != MIGRATING_DIR


def test_partition_record_all_migrating_directories_follow_replicas() -> None:
    r = topic_with_partition(Replayer(), Directories=[MIGRATING_DIR] * 3)
    assert r.image.topics.by_id[T1].partitions[0].directories == (MIGRATING_DIR,) * 3


def test_partition_change_elr_fields() -> None:
    r = topic_with_partition(Replayer())
    p = r.image.topics.by_id[T1].partitions[0]
    change(r, EligibleLeaderReplicas=[2, 3], LastKnownElr=[1])
    assert (p.elr, p.last_known_elr) == ((2, 3), (1,))
    change(r, Isr=[1])
    assert (p.elr, p.last_known_elr) == ((2, 3), (1,))
    change(r, EligibleLeaderReplicas=[])
    assert (p.elr, p.last_known_elr) == (EMPTY, (1,))


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"PartitionId": 9}, "unable to find partition"),
        ({"TopicId": T2}, "unable to find partition"),
        ({"Directories": [D1]}, "do not match"),
        ({"Replicas": [1, 2], "Directories": [D1, D2, D3]}, "3 directories for 2 replicas"),
        ({"LeaderRecoveryState": 5, "Leader": 3}, "unknown leader recovery state 5"),
    ],
)
def test_partition_change_faults_leave_partition_untouched(fields: dict[str, Any], message: str) -> None:
    r = topic_with_partition(Replayer())
    p = r.image.topics.by_id[T1].partitions[0]
    before = p.copy()
    change(r, offset=42, **fields)
    assert p == before
    assert message in faults(r)[0] and r.warnings[0].offset == 42


def test_topic_record_replaces_same_id_and_remove_topic_drops_configs() -> None:
    r = topic_with_partition(Replayer())
    play(
        r,
        rec("ConfigRecord", {"ResourceType": 2, "ResourceName": "foo", "Name": "retention.ms", "Value": "1"}),
        rec("ConfigRecord", {"ResourceType": 2, "ResourceName": "bar", "Name": "retention.ms", "Value": "2"}),
    )
    play(r, rec("TopicRecord", {"Name": "foo", "TopicId": T1}))
    assert r.image.topics.by_id[T1].partitions == {}
    play(r, rec("RemoveTopicRecord", {"TopicId": T1}))
    assert r.image.topics.by_id == {} and r.image.topics.by_name == {}
    assert list(r.image.configs) == [(2, "bar")]
    play(r, rec("RemoveTopicRecord", {"TopicId": T1}), start=9)
    assert "no such topic found" in faults(r)[0] and r.warnings[0].offset == 9


def test_remove_topic_keeps_a_newer_topic_with_the_same_name() -> None:
    r = play(
        Replayer(),
        rec("TopicRecord", {"Name": "foo", "TopicId": T1}),
        rec("TopicRecord", {"Name": "foo", "TopicId": T2}),
        rec("RemoveTopicRecord", {"TopicId": T1}),
    )
    assert r.image.topics.by_name["foo"].id == T2 and list(r.image.topics.by_id) == [T2]


def test_clear_elr_one_topic_and_all_topics() -> None:
    r = topic_with_partition(Replayer(), EligibleLeaderReplicas=[2], LastKnownElr=[3])
    play(
        r,
        rec("TopicRecord", {"Name": "bar", "TopicId": T2}),
        rec(
            "PartitionRecord",
            {
                "PartitionId": 0,
                "TopicId": T2,
                "Replicas": [1],
                "Isr": [1],
                "Leader": 1,
                "PartitionEpoch": 0,
                "LastKnownElr": [1],
            },
        ),
        rec(
            "PartitionRecord",
            {"PartitionId": 1, "TopicId": T2, "Replicas": [1], "Isr": [1], "Leader": 1, "PartitionEpoch": 0},
        ),
    )
    foo0 = r.image.topics.by_id[T1].partitions[0]
    bar0, bar1 = r.image.topics.by_id[T2].partitions[0], r.image.topics.by_id[T2].partitions[1]
    play(r, rec("ClearElrRecord", {"TopicName": "foo"}))
    assert (foo0.elr, foo0.last_known_elr, foo0.partition_epoch, foo0.leader_epoch) == (EMPTY, EMPTY, 1, 0)
    assert bar0.last_known_elr == (1,)
    play(r, rec("ClearElrRecord", {"TopicName": ""}))
    assert bar0.last_known_elr is EMPTY and bar0.partition_epoch == 1
    assert bar1.partition_epoch == 0 and foo0.partition_epoch == 1  # nothing to clear: untouched
    play(r, rec("ClearElrRecord", {"TopicName": "nope"}), start=50)
    assert "no such topic found" in faults(r)[0]


# ---------------------------------------------------------------------------- configs and quotas


def test_config_set_delete_and_resource_disappearing() -> None:
    cfg = "ConfigRecord"
    r = play(
        Replayer(),
        rec(cfg, {"ResourceType": 4, "ResourceName": "", "Name": "log.retention.ms", "Value": "5"}),
        rec(cfg, {"ResourceType": 4, "ResourceName": "1", "Name": "a", "Value": "x"}),
        rec(cfg, {"ResourceType": 4, "ResourceName": "1", "Name": "b", "Value": "y"}),
        rec(cfg, {"ResourceType": 99, "ResourceName": "z", "Name": "k", "Value": "v"}),
    )
    assert r.image.configs == {
        (4, ""): {"log.retention.ms": "5"},
        (4, "1"): {"a": "x", "b": "y"},
        (0, "z"): {"k": "v"},
    }
    play(
        r,
        rec(cfg, {"ResourceType": 4, "ResourceName": "1", "Name": "a", "Value": None}),
        rec(cfg, {"ResourceType": 4, "ResourceName": "1", "Name": "nope", "Value": None}),
        rec(cfg, {"ResourceType": 8, "ResourceName": "x", "Name": "nope", "Value": None}),
    )
    assert r.image.configs[(4, "1")] == {"b": "y"}
    play(r, rec(cfg, {"ResourceType": 4, "ResourceName": "1", "Name": "b", "Value": None}))
    assert (4, "1") not in r.image.configs and not r.warnings


def test_client_quota_set_remove_and_default_entities() -> None:
    q = "ClientQuotaRecord"
    alice_app = [
        {"EntityType": "user", "EntityName": "alice"},
        {"EntityType": "client-id", "EntityName": "app"},
    ]
    default_user = [{"EntityType": "user", "EntityName": None}]
    r = play(
        Replayer(),
        rec(q, {"Entity": alice_app, "Key": "producer_byte_rate", "Value": 1024.0, "Remove": False}),
        rec(q, {"Entity": alice_app, "Key": "consumer_byte_rate", "Value": 1e7, "Remove": False}),
        rec(q, {"Entity": default_user, "Key": "request_percentage", "Value": 1e-4, "Remove": False}),
    )
    alice = (("client-id", "app"), ("user", "alice"))
    assert r.image.client_quotas == {
        alice: {"producer_byte_rate": 1024.0, "consumer_byte_rate": 1e7},
        (("user", None),): {"request_percentage": 1e-4},
    }
    play(
        r,
        rec(
            q,
            {"Entity": list(reversed(alice_app)), "Key": "producer_byte_rate", "Value": 0.0, "Remove": True},
        ),
    )
    assert r.image.client_quotas[alice] == {"consumer_byte_rate": 1e7}
    play(r, rec(q, {"Entity": alice_app, "Key": "consumer_byte_rate", "Value": 0.0, "Remove": True}))
    assert alice not in r.image.client_quotas and not r.warnings


# ---------------------------------------------------------------------------- ACLs, SCRAM, tokens

ACL_ID = b"U" * 8 + b"f" * 8


def test_acl_add_and_remove() -> None:
    acl = {
        "Id": ACL_ID,
        "ResourceType": 2,
        "ResourceName": "foo",
        "PatternType": 3,
        "Principal": "User:alice",
        "Host": "*",
        "Operation": 3,
        "PermissionType": 3,
    }
    r = play(Replayer(), rec("AccessControlEntryRecord", acl))
    a = r.image.acls[ACL_ID]
    assert (
        a.resource_type,
        a.resource_name,
        a.pattern_type,
        a.principal,
        a.host,
        a.operation,
        a.permission_type,
    ) == (2, "foo", 3, "User:alice", "*", 3, 3)
    play(r, rec("RemoveAccessControlEntryRecord", {"Id": ACL_ID}))
    assert r.image.acls == {} and not r.warnings
    play(r, rec("RemoveAccessControlEntryRecord", {"Id": ACL_ID}))
    assert "failed to find existing ACL" in faults(r)[0]


def test_scram_put_and_remove() -> None:
    cred = {
        "Name": "alice",
        "Mechanism": 1,
        "Salt": b"\x01\x02\x03",
        "StoredKey": b"\x04\x05",
        "ServerKey": b"\x06\x07",
        "Iterations": 4096,
    }
    r = play(
        Replayer(),
        rec("UserScramCredentialRecord", cred),
        rec("UserScramCredentialRecord", dict(cred, Mechanism=2, Iterations=8192)),
    )
    c = r.image.scram[(1, "alice")]
    assert (c.salt, c.stored_key, c.server_key, c.iterations) == (
        b"\x01\x02\x03",
        b"\x04\x05",
        b"\x06\x07",
        4096,
    )
    play(
        r,
        rec("RemoveUserScramCredentialRecord", {"Name": "alice", "Mechanism": 1}),
        rec("RemoveUserScramCredentialRecord", {"Name": "bob", "Mechanism": 1}),
    )
    assert list(r.image.scram) == [(2, "alice")] and not r.warnings


def test_delegation_token_put_remove_and_bad_principal() -> None:
    tok = {
        "Owner": "User:alice",
        "Requester": "User:alice",
        "Renewers": ["User:bob"],
        "IssueTimestamp": 1,
        "MaxTimestamp": 2,
        "ExpirationTimestamp": 3,
        "TokenId": "tok1",
    }
    r = play(Replayer(), rec("DelegationTokenRecord", tok))
    t = r.image.delegation_tokens["tok1"]
    assert (t.owner, t.requester, t.renewers, t.issue_timestamp, t.max_timestamp, t.expiration_timestamp) == (
        "User:alice",
        "User:alice",
        ("User:bob",),
        1,
        2,
        3,
    )
    play(
        r,
        rec("RemoveDelegationTokenRecord", {"TokenId": "tok1"}),
        rec("DelegationTokenRecord", dict(tok, TokenId="tok2", Owner="alice")),
    )
    assert r.image.delegation_tokens == {} and "principalType:principalName" in faults(r)[0]


# ---------------------------------------------------------------------------- features, producer ids


def test_feature_levels() -> None:
    fl = "FeatureLevelRecord"
    r = play(
        Replayer(),
        rec(fl, {"Name": "metadata.version", "FeatureLevel": 21}),
        rec(fl, {"Name": "group.version", "FeatureLevel": 1}),
        rec(fl, {"Name": "transaction.version", "FeatureLevel": 2}),
        rec(fl, {"Name": "transaction.version", "FeatureLevel": 0}),
    )
    f = r.image.features
    assert f.metadata_version == 21 and metadata_version_name(21) == "3.9-IV0"
    assert f.finalized == {"group.version": 1} and not r.warnings
    play(r, rec(fl, {"Name": "metadata.version", "FeatureLevel": 7}))
    assert f.metadata_version == 7 and metadata_version_name(7) == "3.3-IV3"
    play(r, rec(fl, {"Name": "metadata.version", "FeatureLevel": 5}), start=20)  # below 4.x's minimum
    assert f.metadata_version == 7 and "invalid metadata.version" in faults(r)[0]
    play(r, rec(fl, {"Name": "kraft.version", "FeatureLevel": 1}))  # ignored by Kafka 4.4
    assert "kraft.version" not in f.finalized
    play(r, rec(fl, {"Name": "metadata.version", "FeatureLevel": 99}), start=30)
    assert f.metadata_version == 99 and r.warnings[-1].kind == "unknown"
    assert metadata_version_name(99) == "99" and metadata_version_name(None) == "unknown"


def test_zk_migration_state_producer_ids_noop() -> None:
    r = play(
        Replayer(),
        rec("ZkMigrationStateRecord", {"ZkMigrationState": 3}),
        rec("ProducerIdsRecord", {"BrokerId": 1, "BrokerEpoch": 7, "NextProducerId": 2000}),
        rec("NoOpRecord", {}),
    )
    assert r.image.features.zk_migration_state == 3
    ids = r.image.producer_ids
    assert (ids.next_producer_id, ids.broker_id, ids.broker_epoch) == (2000, 1, 7)
    play(r, rec("ZkMigrationStateRecord", {"ZkMigrationState": 9}))  # Kafka 4.4 ignores the record
    assert r.image.features.zk_migration_state == 9 and not r.warnings


def test_empty_image_defaults() -> None:
    image = MetadataImage()
    assert image.is_empty()
    assert (image.provenance.offset, image.provenance.epoch, image.provenance.timestamp) == (-1, -1, -1)
    assert image.producer_ids.next_producer_id == -1 and image.features.metadata_version is None
    assert image.features.zk_migration_state == 0


# ---------------------------------------------------------------------------- transactions


def test_transaction_commit_applies_buffered_records() -> None:
    r = Replayer()
    play(
        r, rec("BeginTransactionRecord", {"Name": "demo"}), rec("TopicRecord", {"Name": "foo", "TopicId": T1})
    )
    assert r.in_transaction and r.image.topics.by_id == {}
    assert r.end_batch(1, 1, 1000) is False and r.image.provenance.offset == -1
    play(
        r,
        rec("ConfigRecord", {"ResourceType": 2, "ResourceName": "foo", "Name": "k", "Value": "v"}),
        rec("EndTransactionRecord", {}),
        start=2,
    )
    assert (
        not r.in_transaction
        and "foo" in r.image.topics.by_name
        and r.image.configs == {(2, "foo"): {"k": "v"}}
    )
    assert r.end_batch(3, 1, 2000) is True and r.image.provenance.offset == 3


def test_transaction_abort_drops_buffered_records() -> None:
    r = play(
        Replayer(),
        rec("TopicRecord", {"Name": "keep", "TopicId": T2}),
        rec("BeginTransactionRecord", {}),
        rec("TopicRecord", {"Name": "foo", "TopicId": T1}),
        rec("AbortTransactionRecord", {"Reason": "test"}),
        rec("NoOpRecord", {}),
    )
    assert list(r.image.topics.by_name) == ["keep"] and not r.in_transaction and not r.warnings


def test_transaction_faults() -> None:
    r = play(
        Replayer(),
        rec("EndTransactionRecord", {}),
        rec("AbortTransactionRecord", {}),
        rec("BeginTransactionRecord", {}),
        rec("BeginTransactionRecord", {}),
        rec("TopicRecord", {"Name": "foo", "TopicId": T1}),
        rec("EndTransactionRecord", {}),
    )
    assert [w.offset for w in r.warnings] == [0, 1, 3]
    assert "without an open transaction" in faults(r)[0] and "still open" in faults(r)[2]
    assert "foo" in r.image.topics.by_name


def test_faults_inside_a_committed_transaction_keep_their_offsets() -> None:
    r = play(
        Replayer(),
        rec("BeginTransactionRecord", {}),
        rec("PartitionChangeRecord", {"PartitionId": 0, "TopicId": T1}),
        rec("EndTransactionRecord", {}),
        start=10,
    )
    assert r.warnings[0].offset == 11


def test_snapshot_provenance_and_open_transaction_dropped() -> None:
    r = play(
        Replayer(), rec("BeginTransactionRecord", {}), rec("TopicRecord", {"Name": "foo", "TopicId": T1})
    )
    r.finish_snapshot(SnapshotInfo("x.checkpoint", 8, 1, 1700000002000))
    p = r.image.provenance
    assert (p.offset, p.epoch, p.timestamp) == (7, 1, 1700000002000) and p.snapshot.end_offset == 8
    assert not r.in_transaction and r.image.topics.by_id == {} and r.fault_count == 1


# ---------------------------------------------------------------------------- bytes and control records


def test_replay_value_warns_on_bad_and_unknown_records() -> None:
    r = Replayer(source="x.log")
    r.replay_value(b"\x01\x63\x00", 5)  # api key 99
    r.replay_value(b"\x01\x02\x00\x04", 6)  # truncated TopicRecord
    r.replay_value(None, 7)
    r.replay_value(encode_metadata_record("TopicRecord", 0, {"Name": "foo", "TopicId": T1}), 8)
    assert [(w.offset, w.kind) for w in r.warnings] == [(5, "unknown"), (6, "decode"), (7, "decode")]
    assert str(r.warnings[0]).startswith("x.log: offset 5: ")
    assert r.fault_count == 0 and "foo" in r.image.topics.by_name


def test_control_records_update_quorum() -> None:
    r = Replayer()
    key, value = encode_control_record(
        "KRaftVoters",
        {
            "Version": 0,
            "Voters": [
                {
                    "VoterId": 1,
                    "VoterDirectoryId": D1,
                    "Endpoints": [{"Name": "CONTROLLER", "Host": "localhost", "Port": 9093}],
                    "KRaftVersionFeature": {"MinSupportedVersion": 0, "MaxSupportedVersion": 1},
                }
            ],
        },
    )
    r.replay_control_bytes(key, value, 2, 1)
    key, value = encode_control_record("KRaftVersion", {"Version": 0, "KRaftVersion": 1})
    r.replay_control_bytes(key, value, 1, 1)
    q = r.image.quorum
    assert q.kraft_version == 1 and q.voters[0].id == 1 and q.voters[0].directory_id == D1
    assert q.voters[0].endpoints[0].port == 9093 and q.voters[0].kraft_version_range == (0, 1)
    lc = bytes.fromhex("00000000000102000000010002000000010000")
    ctl = r.replay_control_bytes(b"\x00\x00\x00\x02", lc, 8, 2)
    assert ctl is not None and ctl.name == "LeaderChange"
    assert (q.leader_id, q.leader_epoch, q.granting_voters) == (1, 2, (1,))
    assert q.voters[0].endpoints  # same voter ids: endpoints kept
    assert decode_control_record(b"\x00\x00\x00\x04", b"\x00\x00\x00").name == "SnapshotFooter"
    assert r.replay_control_bytes(b"\x00", b"", 9, 2) is None and r.warnings[0].kind == "decode"
    assert r.image.is_empty()


# ---------------------------------------------------------------------------- property: never breaks

_TIDS = [T1, T2, bytes(16)]
_ids = st.sampled_from([1, 2, 3])
_id_lists = st.one_of(st.none(), st.lists(_ids, max_size=4))
_tid = st.sampled_from(_TIDS)
_records = st.one_of(
    st.builds(lambda n, t: ("TopicRecord", {"Name": n, "TopicId": t}), st.sampled_from(["a", "b"]), _tid),
    st.builds(lambda t: ("RemoveTopicRecord", {"TopicId": t}), _tid),
    st.builds(
        lambda t, p, r, d: (
            "PartitionRecord",
            {
                "PartitionId": p,
                "TopicId": t,
                "Replicas": r,
                "Isr": r,
                "Leader": r[0] if r else -1,
                "Directories": d,
            },
        ),
        _tid,
        st.integers(0, 2),
        st.lists(_ids, max_size=3, unique=True),
        st.lists(st.sampled_from([D1, D2]), max_size=3),
    ),
    st.builds(
        lambda t, p, i, r, d, e, lead, lrs: (
            "PartitionChangeRecord",
            {
                "PartitionId": p,
                "TopicId": t,
                "Isr": i,
                "Replicas": r,
                "Directories": d,
                "EligibleLeaderReplicas": e,
                "Leader": lead,
                "LeaderRecoveryState": lrs,
            },
        ),
        _tid,
        st.integers(0, 2),
        _id_lists,
        _id_lists,
        st.one_of(st.none(), st.lists(st.sampled_from([D1, D2]), max_size=3)),
        _id_lists,
        st.integers(-3, 3),
        st.integers(-2, 2),
    ),
    st.builds(lambda n: ("ClearElrRecord", {"TopicName": n}), st.sampled_from(["", "a", "b", "zz"])),
    st.builds(
        lambda k: (k, {}),
        st.sampled_from(
            ["BeginTransactionRecord", "EndTransactionRecord", "AbortTransactionRecord", "NoOpRecord"]
        ),
    ),
    st.builds(
        lambda b, e, f, s: (
            "BrokerRegistrationChangeRecord",
            {"BrokerId": b, "BrokerEpoch": e, "Fenced": f, "InControlledShutdown": s},
        ),
        _ids,
        st.integers(9, 11),
        st.integers(-2, 2),
        st.integers(-1, 2),
    ),
    st.builds(lambda b, e: ("FenceBrokerRecord", {"Id": b, "Epoch": e}), _ids, st.integers(9, 11)),
    st.builds(lambda b: ("UnregisterBrokerRecord", {"BrokerId": b, "BrokerEpoch": 0}), _ids),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_records, max_size=40))
def test_random_record_sequences_never_escape_and_keep_invariants(seq: list[Any]) -> None:
    r = play(Replayer(), broker(1), broker(2, epoch=11))
    for i, (name, data) in enumerate(seq):
        r.replay(rec(name, data), i + 10)
    img = r.image
    for tid, t in img.topics.by_id.items():
        assert t.id == tid
        for p in t.partitions.values():
            assert len(p.directories) == len(p.replicas)
    for name, t in img.topics.by_name.items():
        assert t.name == name
    assert all(w.offset is not None for w in r.warnings)


def test_every_record_type_has_a_replay_rule_or_is_ignored_with_a_reason() -> None:
    """Kafka's ``MetadataDelta.replay`` throws "Unknown metadata record type" for a type with no
    case; here a type added to the bundled schemas without a rule fails this test instead."""
    from metashell.image.replay import IGNORED, rule_of
    from metashell.image.replay.transactions import TRANSACTION_MARKERS
    from metashell.protocol.metadata import record_types
    from metashell.protocol.record_type import SCHEMA_NAMES, RecordType
    from metashell.protocol.schema import bundled_schemas

    schemas = {
        s.api_key: s.name
        for s in bundled_schemas().values()
        if s.type == "metadata" and s.api_key is not None
    }
    assert record_types() == schemas  # the generated table is the schemas'
    assert {int(t) for t in RecordType} == set(schemas)
    assert {t: SCHEMA_NAMES[t] for t in RecordType} == {RecordType(k): n for k, n in schemas.items()}
    for record_type in RecordType:
        covered = rule_of(record_type) is not None, record_type in IGNORED, record_type in TRANSACTION_MARKERS
        assert sum(covered) == 1, f"{record_type.name}: a rule, a reason to ignore it, or a marker"
    assert all(reason.strip() for reason in IGNORED.values())


def test_the_record_type_enum_is_generated_from_the_bundled_schemas() -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "scripts" / "gen_record_types.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
