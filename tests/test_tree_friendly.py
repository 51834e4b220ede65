"""The operator-friendly tree: layout, JSON forms, redaction, names of defaults and escaping."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_tree_image import FOO, rec, session_image

from metashell.image.replay import Replayer
from metashell.tree import build_root, glob
from metashell.tree.friendly import parse_quota_entity_dir_name, quota_entity_dir_name
from metashell.tree.node import Node
from metashell.tree.redact import is_sensitive_config
from metashell.tree.render import kafka_command


@pytest.fixture(scope="module")
def root() -> Node:
    return build_root(session_image(), source_info={"mode": "test"})


def cat(root: Node, path: str, redact: bool | None = None) -> str:
    [(_, node)] = glob(root, "/", path)
    return node.text(redact)


def test_top_level(root: Node) -> None:
    assert root.name == "/" and root.is_dir
    assert root.child_names() == [
        "acls",
        "brokers",
        "configs",
        "controllers",
        "delegationTokens",
        "features",
        "health",
        "image",
        "local",
        "producerIds",
        "provenance",
        "quorum",
        "quotas",
        "scram",
        "topicIds",
        "topics",
    ]


def test_broker_and_controller_records(root: Node) -> None:
    broker = json.loads(cat(root, "/brokers/1"))
    assert broker["epoch"] == 10 and broker["fenced"] is False and broker["rack"] is None
    assert broker["listeners"] == [
        {"name": "PLAINTEXT", "host": "localhost", "port": 9092, "securityProtocol": "PLAINTEXT"}
    ]
    assert broker["supportedFeatures"] == {"metadata.version": {"min": 1, "max": 21}}
    assert broker["logDirs"] == ["EREREREREREiIiIiIiIiIg"] and broker["cordonedLogDirs"] is None
    assert glob(root, "/", "/brokers/1")[0][1].kind == "broker"
    assert json.loads(cat(root, "/controllers/1"))["listeners"][0]["name"] == "CONTROLLER"
    assert glob(root, "/", "/brokers/01") == []  # friendly names are canonical


def test_topics_and_topic_ids(root: Node) -> None:
    assert kafka_command(root, "ls", ["/topics/foo"]) == "0\nconfigs\nid\nname\n"
    assert cat(root, "/topics/foo/id") == "ASNFZ4mrze8P7cuph2VDIQ"
    part = json.loads(cat(root, "/topics/foo/0"))
    assert part == {
        "topic": "foo",
        "topicId": "ASNFZ4mrze8P7cuph2VDIQ",
        "partition": 0,
        "leader": 1,
        "leaderEpoch": 1,
        "partitionEpoch": 1,
        "replicas": [1],
        "isr": [1],
        "elr": [],
        "lastKnownElr": [],
        "addingReplicas": [],
        "removingReplicas": [],
        "leaderRecoveryState": "RECOVERED",
        "directories": ["EREREREREREiIiIiIiIiIg"],
    }
    assert cat(root, "/topics/foo/configs/cleanup.policy") == "compact"
    assert cat(root, "/topicIds/ASNFZ4mrze8P7cuph2VDIQ/0") == cat(root, "/topics/foo/0")
    assert glob(root, "/", "/topicIds/nope") == []


def test_configs_and_redaction(root: Node) -> None:
    assert kafka_command(root, "ls", ["/configs"]) == "broker\nbroker-logger\nclient-metrics\ngroup\ntopic\n"
    assert kafka_command(root, "ls", ["/configs/broker"]) == "1\n<default>\n"
    assert cat(root, "/configs/broker/<default>/num.io.threads") == "8"
    assert cat(root, "/configs/broker/1/ssl.keystore.password") == "[redacted]"
    assert cat(root, "/configs/broker/1/ssl.keystore.password", redact=False) == "hunter2"
    node = glob(root, "/", "/configs/broker/1/ssl.keystore.password")[0][1]
    assert node.to_json() == "[redacted]" and node.to_json(False) == "hunter2" and node.kind == "config"
    unredacted = build_root(session_image(), redact=False)
    assert cat(unredacted, "/configs/broker/1/ssl.keystore.password") == "hunter2"


@pytest.mark.parametrize(
    "key,secret",
    [
        ("ssl.keystore.password", True),
        ("ssl.key.password", True),
        ("ssl.truststore.password", True),
        ("sasl.jaas.config", True),
        ("password.encoder.secret", True),
        ("delegation.token.secret.key", True),
        ("listener.name.external.ssl.keystore.password", True),
        ("listener.name.sasl_ssl.plain.sasl.jaas.config", True),
        ("ssl.keystore.key", True),
        ("ssl.keystore.certificate.chain", True),
        ("ssl.truststore.certificates", True),
        ("listener.name.x.ssl.keystore.certificate.chain", True),
        ("some.custom.secret", True),
        ("sasl.oauthbearer.client.credentials.client.secret", True),
        ("num.io.threads", False),
        ("ssl.keystore.location", False),
        ("ssl.keystore.type", False),
        ("sasl.enabled.mechanisms", False),
        ("custom.api.token", True),
        ("confluent.license", True),
        ("passw\u0130rd", True),
        ("SSL.KEYSTORE.LOCATION", True),
    ],
)
def test_sensitive_keys(key: str, secret: bool) -> None:
    assert is_sensitive_config(4, key) is secret  # broker configs


def test_scram_and_tokens(root: Node) -> None:
    scram = json.loads(cat(root, "/scram/SCRAM-SHA-256/alice"))
    assert scram == {
        "user": "alice",
        "mechanism": "SCRAM-SHA-256",
        "iterations": 4096,
        "salt": "[redacted]",
        "storedKey": "[redacted]",
        "serverKey": "[redacted]",
    }
    assert json.loads(cat(root, "/scram/SCRAM-SHA-256/alice", redact=False))["salt"] == "010203"
    assert kafka_command(root, "ls", ["/scram"]) == "SCRAM-SHA-256\nSCRAM-SHA-512\n"
    token = json.loads(cat(root, "/delegationTokens/tok1"))
    assert token["owner"] == "User:alice" and token["renewers"] == ["User:bob"]
    assert token["expirationTimestamp"] == 3 and token["expirationTime"] == "1970-01-01T00:00:00.003Z"


def test_quotas(root: Node) -> None:
    assert kafka_command(root, "ls", ["/quotas"]) == "user=<default>\nuser=alice,client-id=app(1)\n"
    assert cat(root, "/quotas/user=<default>/consumer_byte_rate") == "1.0E7"
    node = glob(root, "/", "/quotas/user=alice,client-id=app(1)/producer_byte_rate")[0][1]
    assert node.text() == "2048.0" and node.to_json() == 2048.0 and node.kind == "quota"


@pytest.mark.parametrize(
    "entity",
    [
        (("user", "alice"),),
        (("user", None),),
        (("client-id", "a,b/c%d"), ("user", "CN=x,O=y")),
        (("client-id", None), ("user", "<default>")),
        (("ip", "10.0.0.1"),),
    ],
)
def test_quota_entity_names_round_trip(entity: Any) -> None:
    name = quota_entity_dir_name(entity)
    assert "/" not in name
    assert parse_quota_entity_dir_name(name) == tuple(sorted(entity))


def test_features_acls_producer_ids(root: Node) -> None:
    assert kafka_command(root, "ls", ["/features"]) == "group.version\nmetadata.version\n"
    node = glob(root, "/", "/features/metadata.version")[0][1]
    assert node.text() == "3.9-IV0 (21)" and node.to_json() == {"level": 21, "version": "3.9-IV0"}
    assert cat(root, "/features/group.version") == "1"
    acl = json.loads(cat(root, "/acls/VVVVVVVVVVVmZmZmZmZmZg"))
    assert acl["operation"] == "READ" and acl["principal"] == "User:alice" and acl["patternType"] == "LITERAL"
    assert json.loads(cat(root, "/producerIds"))["nextProducerId"] == -1


def test_provenance_quorum_local(root: Node) -> None:
    prov = json.loads(cat(root, "/provenance"))
    assert prov["offset"] == 42 and prov["epoch"] == 3 and prov["time"] == "2023-11-14T22:13:22.000Z"
    assert prov["source"] == {"mode": "memory", "location": None} and prov["salvaged"] == []
    quorum = json.loads(cat(root, "/quorum"))
    assert set(quorum) >= {"clusterId", "leaderId", "leaderEpoch", "voters"}
    assert cat(root, "/local/version")


def test_live_extras_are_merged() -> None:
    root = build_root(session_image(), source_info={"quorum": lambda: {"highWatermark": 99, "lag": 0}})
    quorum = json.loads(glob(root, "/", "/quorum")[0][1].text())
    assert quorum["highWatermark"] == 99 and quorum["lag"] == 0


def test_tree_follows_a_changing_image() -> None:
    r = Replayer()
    root = build_root(r.image)
    assert kafka_command(root, "ls", ["/topics"]) == ""
    topics = root.child("topics")
    r.replay(rec("TopicRecord", {"Name": "foo", "TopicId": FOO}), 0)
    assert topics.child_names() == ["foo"]  # nodes read the image at call time


def test_dir_json_is_the_child_list(root: Node) -> None:
    assert root.child("scram").to_json() == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
