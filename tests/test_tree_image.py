"""``/image`` text against the reference session (test-vectors/shell-session.txt and
expected-shell-output-for-metadata-log-dir.txt), in Kafka 4.4's formats.

The reference pack was produced with a 2024 Kafka; Kafka 4.4 (checked with the oracle, see
tests/test_tree_oracle.py and docs/tree.md) differs in a few known ways, applied here by
:func:`kafka44`: ``acls/byId``, ``metadataVersion`` as ``Optional[...]``, no ``zkMigrationState``,
``StandardAcl[...]`` and ``cordonedDirectories=null``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import VECTORS

from metashell.image.image import MetadataImage
from metashell.image.replay import Replayer
from metashell.protocol.metadata import (
    decode_metadata_record,
    encode_metadata_record,
    max_version,
    record_keys,
)
from metashell.tree import build_root, glob
from metashell.tree.image_tree import build_image_node
from metashell.tree.node import Node, TreeContext
from metashell.tree.render import kafka_command, render_tree

FOO = bytes.fromhex("0123456789abcdef0fedcba987654321")  # ASNFZ4mrze8P7cuph2VDIQ


def uuid(text: str) -> bytes:
    from metashell.protocol.uuid import uuid_from_str

    return uuid_from_str(text)


DIRECTORY = uuid("EREREREREREiIiIiIiIiIg")
INCARNATION = uuid("MzMzMzMzMzNERERERERERA")
ACL_ID = uuid("VVVVVVVVVVVmZmZmZmZmZg")


def rec(name: str, data: dict[str, Any], version: int | None = None) -> Any:
    v = max_version(record_keys()[name]) if version is None else version
    return decode_metadata_record(encode_metadata_record(name, v, data))


def session_image() -> MetadataImage:
    """The image behind test-vectors/shell-session.txt, rebuilt from its printed state."""
    r = Replayer()
    records = [
        rec("FeatureLevelRecord", {"Name": "metadata.version", "FeatureLevel": 21}),
        rec("FeatureLevelRecord", {"Name": "group.version", "FeatureLevel": 1}),
        rec(
            "RegisterBrokerRecord",
            {
                "BrokerId": 1,
                "BrokerEpoch": 10,
                "IncarnationId": INCARNATION,
                "EndPoints": [
                    {"Name": "PLAINTEXT", "Host": "localhost", "Port": 9092, "SecurityProtocol": 0}
                ],
                "Features": [
                    {"Name": "metadata.version", "MinSupportedVersion": 1, "MaxSupportedVersion": 21}
                ],
                "Rack": None,
                "Fenced": False,
                "LogDirs": [DIRECTORY],
            },
            3,
        ),
        rec(
            "RegisterControllerRecord",
            {
                "ControllerId": 1,
                "IncarnationId": INCARNATION,
                "ZkMigrationReady": False,
                "EndPoints": [
                    {"Name": "CONTROLLER", "Host": "localhost", "Port": 9093, "SecurityProtocol": 0}
                ],
                "Features": [{"Name": "kraft.version", "MinSupportedVersion": 0, "MaxSupportedVersion": 1}],
            },
        ),
        rec("TopicRecord", {"Name": "foo", "TopicId": FOO}),
        rec(
            "PartitionRecord",
            {
                "PartitionId": 0,
                "TopicId": FOO,
                "Replicas": [1],
                "Isr": [1],
                "Leader": 1,
                "LeaderEpoch": 1,
                "PartitionEpoch": 1,
                "Directories": [DIRECTORY],
            },
        ),
        rec(
            "ConfigRecord",
            {"ResourceType": 4, "ResourceName": "1", "Name": "ssl.keystore.password", "Value": "hunter2"},
        ),
        rec("ConfigRecord", {"ResourceType": 4, "ResourceName": "", "Name": "num.io.threads", "Value": "8"}),
        rec(
            "ConfigRecord",
            {"ResourceType": 2, "ResourceName": "foo", "Name": "cleanup.policy", "Value": "compact"},
        ),
        rec(
            "ClientQuotaRecord",
            {
                "Entity": [
                    {"EntityType": "user", "EntityName": "alice"},
                    {"EntityType": "client-id", "EntityName": "app(1)"},
                ],
                "Key": "producer_byte_rate",
                "Value": 2048.0,
            },
        ),
        rec(
            "ClientQuotaRecord",
            {
                "Entity": [{"EntityType": "user", "EntityName": None}],
                "Key": "consumer_byte_rate",
                "Value": 1e7,
            },
        ),
        rec(
            "AccessControlEntryRecord",
            {
                "Id": ACL_ID,
                "ResourceType": 2,
                "ResourceName": "foo",
                "PatternType": 3,
                "Principal": "User:alice",
                "Host": "*",
                "Operation": 3,
                "PermissionType": 3,
            },
        ),
        rec(
            "UserScramCredentialRecord",
            {
                "Name": "alice",
                "Mechanism": 1,
                "Salt": b"\x01\x02\x03",
                "StoredKey": b"\x04\x05",
                "ServerKey": b"\x06\x07",
                "Iterations": 4096,
            },
        ),
        rec(
            "DelegationTokenRecord",
            {
                "Owner": "User:alice",
                "Requester": "User:alice",
                "Renewers": ["User:bob"],
                "IssueTimestamp": 1,
                "MaxTimestamp": 2,
                "ExpirationTimestamp": 3,
                "TokenId": "tok1",
            },
        ),
    ]
    for i, record in enumerate(records):
        r.replay(record, i)
    assert not r.warnings, r.warnings
    r.end_batch(42, 3, 1700000002000)
    return r.image


def kafka44(text: str) -> str:
    """Turn a 2024 reference output into Kafka 4.4's (facts confirmed with the 4.4.0 jars)."""
    text = re.sub(r"(?m)^( *)metadataVersion:\n( *)(\S+)$", r"\1metadataVersion:\n\2Optional[\3]", text)
    text = re.sub(r"(?m)^ *zkMigrationState:\n *\S+\n", "", text)
    text = re.sub(r"(?m)^/image/features/zkMigrationState\n", "", text)
    text = re.sub(r"(?m)^acls:\n", "acls:\n  byId:\n", text)
    text = re.sub(r"(?m)^/image/acls\n", "/image/acls\n/image/acls/byId\n", text)
    text = re.sub(r"StandardAcl\((.*)\)", r"StandardAcl[\1]", text)
    text = re.sub(r"(BrokerRegistration\(.*directories=\[[^]]*\])\)", r"\1, cordonedDirectories=null)", text)
    return text


@pytest.fixture(scope="module")
def root() -> Node:
    return build_root(session_image(), redact=False)


SESSION_LEAVES = {
    "/image/provenance": "offset 42, epoch 3, time 2023-11-14T22:13:22Z[UTC]",
    "/image/features/metadataVersion": "Optional[3.9-IV0]",
    "/image/features/finalized_group.version": "1",
    "/image/topics/byName/foo/0": (
        "PartitionRegistration(replicas=[1], directories=[EREREREREREiIiIiIiIiIg], isr=[1], removingReplicas=[], "
        "addingReplicas=[], elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=1, "
        "partitionEpoch=1)"
    ),
    "/image/topics/by?ame/foo/id": "ASNFZ4mrze8P7cuph2VDIQ",
    "/image/cluster/brokers/1": (
        "BrokerRegistration(id=1, epoch=10, incarnationId=MzMzMzMzMzNERERERERERA, listeners=[Endpoint("
        "listenerName='PLAINTEXT', securityProtocol=PLAINTEXT, host='localhost', port=9092)], supportedFeatures="
        "{metadata.version: 1-21}, rack=Optional.empty, fenced=false, inControlledShutdown=false, "
        "isMigratingZkBroker=false, directories=[EREREREREREiIiIiIiIiIg], cordonedDirectories=null)"
    ),
    "/image/cluster/controllers/1": (
        "ControllerRegistration(id=1, incarnationId=MzMzMzMzMzNERERERERERA, zkMigrationReady=false, listeners="
        "[Endpoint(listenerName='CONTROLLER', securityProtocol=PLAINTEXT, host='localhost', port=9093)], "
        "supportedFeatures={kraft.version: 0-1})"
    ),
    "/image/configs/BROKER:1/ssl.keystore.password": "hunter2",
    "/image/configs/BROKER/num.io.threads": "8",
    "/image/scram/SCRAM-SHA-256/alice": "ScramCredentialData(salt=010203, storedKey=0405, serverKey=0607, "
    "iterations=4096)",
    "/image/delegationToken/tok1": (
        "DelegationTokenDatatokenId=tok1(owner=User:alice(tokenRequester=User:alice"
        "(renewers=User:bob, issueTimestamp=1, maxTimestamp=2), expiryTimestamp=3"
    ),
    "/image/acls/byId/VVVVVVVVVVVmZmZmZmZmZg": (
        "StandardAcl[resourceType=TOPIC, resourceName=foo, patternType=LITERAL, principal=User:alice, host=*, "
        "operation=READ, permissionType=ALLOW]"
    ),
    "/image/clientQuotas/clientId(app\\(1\\))_user(alice)/producer_byte_rate": "2048.0",
    "/image/producerIds/nextProducerId": "-1",
}


@pytest.mark.parametrize("path", sorted(SESSION_LEAVES))
def test_session_leaf_text(root: Node, path: str) -> None:
    assert kafka_command(root, "cat", [path], redact=False) == SESSION_LEAVES[path] + "\n"


def test_session_listings(root: Node) -> None:
    assert kafka_command(root, "ls", ["/image"]) == (
        "acls\nclientQuotas\ncluster\nconfigs\ndelegationToken\nfeatures\nproducerIds\nprovenance\nscram\ntopics\n"
    )
    assert kafka_command(
        root, "ls", ["/image/topics", "/image/cluster", "/image/features/metadataVersion"]
    ) == ("metadataVersion\n\ntopics:\nbyId\nbyName\n\ncluster:\nbrokers\ncontrollers\n")
    assert kafka_command(root, "ls", ["/nope"]) == "ls: /nope: no such file or directory.\n"
    assert kafka_command(root, "ls", ["/image/t*"]) == "byId\nbyName\n"
    assert kafka_command(root, "ls", ["/image/{acls,scram}"]) == (
        "acls:\nbyId\n\nscram:\nSCRAM-SHA-256\nSCRAM-SHA-512\n"
    )
    assert kafka_command(root, "ls", ["/image/configs"]) == "BROKER\nBROKER:1\nTOPIC:foo\n"
    assert kafka_command(root, "cat", ["/image/topics"]) == "cat: /image/topics: Is a directory\n"
    assert kafka_command(root, "cat", ["/nope"]) == "cat: /nope: No such file or directory.\n"
    assert kafka_command(root, "tree", ["/nope"]) == "tree: /nope: No such file or directory.\n"
    assert kafka_command(root, "tree", ["/image/topics/byName/foo/name"]) == "foo\n"
    assert kafka_command(root, "tree", ["/image/features"]) == (
        "finalized_group.version:\n  1\nmetadataVersion:\n  Optional[3.9-IV0]\n"
    )


def test_session_find_echoes_the_glob(root: Node) -> None:
    expected = kafka44("""/image/to*
/image/to*/byId
/image/to*/byId/ASNFZ4mrze8P7cuph2VDIQ
/image/to*/byId/ASNFZ4mrze8P7cuph2VDIQ/0
/image/to*/byId/ASNFZ4mrze8P7cuph2VDIQ/id
/image/to*/byId/ASNFZ4mrze8P7cuph2VDIQ/name
/image/to*/byName
/image/to*/byName/foo
/image/to*/byName/foo/0
/image/to*/byName/foo/id
/image/to*/byName/foo/name
""")
    assert kafka_command(root, "find", ["/image/to*"]) == expected
    assert kafka_command(root, "find", ["/nope"]) == "find: /nope: no such file or directory.\n"


def test_default_quota_entity_is_named_and_reachable(root: Node) -> None:
    """Kafka names the default-user entity "" (and then fails on it); metashell says user()."""
    assert kafka_command(root, "ls", ["/image/clientQuotas"]) == "clientId(app\\(1\\))_user(alice)\nuser()\n"
    assert kafka_command(root, "cat", ["/image/clientQuotas/user()/consumer_byte_rate"]) == "1.0E7\n"
    # components in any order, like Kafka's decodeEntity
    assert (
        kafka_command(
            root, "cat", ["/image/clientQuotas/user(alice)_clientId(app\\(1\\))/producer_byte_rate"]
        )
        == "2048.0\n"
    )
    assert "user():\n  consumer_byte_rate:\n    1.0E7\n" in kafka_command(
        root, "tree", ["/image/clientQuotas"]
    )


def test_redaction_under_image() -> None:
    root = build_root(session_image())  # redact=True is the default
    assert kafka_command(root, "cat", ["/image/configs/BROKER:1/ssl.keystore.password"]) == "[redacted]\n"
    assert kafka_command(root, "cat", ["/image/configs/BROKER/num.io.threads"]) == "8\n"
    assert kafka_command(root, "cat", ["/image/scram/SCRAM-SHA-256/alice"]) == (
        "ScramCredentialData(salt=[redacted], storedKey=[redacted], serverKey=[redacted], iterations=[redacted])\n"
    )
    assert kafka_command(root, "cat", ["/image/delegationToken/tok1"]) == (
        "DelegationTokenDatatokenId=[redacted](owner=[redacted](tokenRequester=[redacted](renewers=[redacted], "
        "issueTimestamp=[redacted], maxTimestamp=[redacted]), expiryTimestamp=[redacted]\n"
    )
    # per call override
    assert (
        kafka_command(root, "cat", ["/image/configs/BROKER:1/ssl.keystore.password"], redact=False)
        == "hunter2\n"
    )


def test_kafka_child_lookup_quirks(root: Node) -> None:
    # Integer.valueOf accepts a sign and leading zeros; finalized_<anything> is a leaf "0"
    assert kafka_command(root, "cat", ["/image/cluster/brokers/01"]) == kafka_command(
        root, "cat", ["/image/cluster/brokers/1"]
    )
    assert kafka_command(root, "cat", ["/image/features/finalized_nope"]) == "0\n"
    assert glob(root, "/", "/image/topics/byId/not-a-uuid") == []


def test_unsupported_configs_are_not_in_kafka_image() -> None:
    r = Replayer()
    for i, (rtype, name, key) in enumerate(
        [
            (2, "foo", "cleanup.policy"),
            (2, "foo", "made.up"),
            (8, "1", "kafka.server.ReplicaManager"),
            (99, "x", "k"),
            (4, "1", "anything.goes"),
            (32, "g", "nope"),
        ]
    ):
        r.replay(
            rec("ConfigRecord", {"ResourceType": rtype, "ResourceName": name, "Name": key, "Value": "v"}), i
        )
    r.replay(rec("FeatureLevelRecord", {"Name": "metadata.version", "FeatureLevel": 21}), 10)
    root = build_root(r.image, redact=False)
    assert kafka_command(root, "find", ["/image/configs"]) == (
        "/image/configs\n/image/configs/BROKER:1\n/image/configs/BROKER:1/anything.goes\n"
        "/image/configs/TOPIC:foo\n/image/configs/TOPIC:foo/cleanup.policy\n"
    )
    # ... but the friendly tree shows everything that was recorded
    assert "made.up" in kafka_command(root, "ls", ["/configs/topic/foo"])
    assert kafka_command(root, "ls", ["/configs/unknown"]) == "x\n"


def test_image_without_metadata_version_is_shown_empty_like_kafka() -> None:
    """Kafka 4.4's loader cannot publish an image lacking metadata.version (e.g. a lone later segment)."""
    r = Replayer()
    r.replay(rec("TopicRecord", {"Name": "foo", "TopicId": FOO}), 100)
    r.end_batch(100, 7, 1700000000000)
    root = build_root(r.image, redact=False)
    assert kafka_command(root, "cat", ["/image/provenance", "/image/features/metadataVersion"]) == (
        "offset -1, epoch -1, time 1969-12-31T23:59:59.999Z[UTC]\nOptional.empty\n"
    )
    assert kafka_command(root, "ls", ["/image/topics/byName"]) == ""
    assert kafka_command(root, "ls", ["/topics"]) == "foo\n"


def test_metadata_log_dir_vector() -> None:
    """expected-shell-output-for-metadata-log-dir.txt, second half (snapshot + log), in 4.4 form."""
    from metashell.image.loader import load_directory

    base = VECTORS / "metadata-log-dir"
    if not base.is_dir():
        pytest.skip(f"reference pack not available: {base} is absent")
    text = (VECTORS / "expected-shell-output-for-metadata-log-dir.txt").read_text()
    blocks = re.split(r"(?m)^>> ", text)
    finds = [b for b in blocks if b.startswith("find /")]
    trees = [b for b in blocks if b.startswith("tree /image")]
    expected_find = kafka44(
        "".join(ln + "\n" for ln in finds[-1].splitlines()[1:] if ln.startswith("/image"))
    )
    expected_tree = kafka44("\n".join(trees[-1].splitlines()[1:]) + "\n")
    root = build_root(load_directory(base).image, redact=False)
    assert kafka_command(root, "find", ["/image"]) == expected_find
    assert kafka_command(root, "tree", ["/image"]) == expected_tree


def test_image_node_standalone_context() -> None:
    ctx = TreeContext(session_image(), redact=False)
    node = build_image_node(ctx)
    assert node.name == "image" and node.is_dir
    producer_ids = node.child("producerIds")
    assert producer_ids is not None
    assert render_tree(producer_ids) == "nextProducerId:\n  -1\n"
