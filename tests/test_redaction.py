"""Redaction follows Kafka's rule, checked against Kafka's own classes (issue 12, point 4).

``scripts/java/ConfigKeys.java check KEY...`` asks Kafka (KafkaConfig.configType +
maybeSensitive for brokers, LogConfig / GroupConfig / ClientMetricsConfigs for the others) whether
each key's value is sensitive.  metashell must redact every value Kafka would, and show every value
Kafka shows for keys it knows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import KAFKA_VERSIONS, SCRIPTS, assert_generated_current

from metashell.tree.config_keys import KNOWN, PASSWORD
from metashell.tree.redact import is_sensitive_config

TYPES = (4, 2, 32, 16)  # columns of ConfigKeys' output: BROKER, TOPIC, GROUP, CLIENT_METRICS
TRICKY = [
    "custom.api.token",
    "confluent.license",
    "passw\u0130rd",
    "SSL.KEYSTORE.PASSWORD",
    "Ssl.keystore.location",
    "listener.name.external.ssl.keystore.password",
    "listener.name.external.ssl.keystore.location",
    "listener.name.sasl_ssl.plain.sasl.jaas.config",
    "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config",
    "listener.name.x.ssl.keystore.certificate.chain",
    "listener.name.x.num.io.threads",
    "listener.name.x",
    "listener.name.",
    "sasl.jaas.config ",
    "retention.ms\u200b",
    "",
    "log.retention.hours",
    "consumer.session.timeout.ms",
    "interval.ms",
    "metrics",
    "match",
    "cleanup.policy",
    "password",
]


def kafka_sensitivity(version: str, keys: list[str]) -> dict[str, list[bool | None]]:
    from conftest import get_dist

    dist = get_dist(version)
    out = dist.run_program(
        SCRIPTS / "java" / "ConfigKeys.java", "check", *keys, beside="kafka.Kafka", check=True, timeout=300
    ).stdout
    result: dict[str, list[bool | None]] = {}
    for key, line in zip(keys, out.split("\n"), strict=False):
        cols = line.split("\t")[-4:]
        result[key] = [None if c == "-" else c == "1" for c in cols]
    return result


@pytest.mark.kafka
@pytest.mark.parametrize("version", KAFKA_VERSIONS)
def test_redaction_is_at_least_as_strict_as_kafka(version: str) -> None:
    keys = sorted({k for ks in KNOWN.values() for k in ks} | set(TRICKY))
    keys = [k for k in keys if "\t" not in k and "\n" not in k]
    kafka = kafka_sensitivity(version, keys)
    leaks, over = [], []
    for key in keys:
        for rtype, sensitive in zip(TYPES, kafka[key], strict=True):
            if sensitive is None:  # this release has no such resource type
                continue
            ours = is_sensitive_config(rtype, key)
            if sensitive and not ours:
                leaks.append((rtype, key))
            elif ours and not sensitive and key in KNOWN[rtype] and key not in PASSWORD[rtype]:
                over.append((rtype, key))
    assert not leaks, f"values Kafka {version} redacts but metashell shows: {leaks[:20]}"
    assert not over, f"known non-secret keys metashell hides: {over[:20]}"


def test_generated_table_is_current_when_kafka_is_cached() -> None:
    """The table is generated, not hand-edited (regenerated against the cached jars when present)."""
    assert_generated_current("gen_config_keys.py", ("3.9.2", "4.4.0"))


def test_rule_per_resource_type() -> None:
    assert is_sensitive_config(8, "kafka.server.ReplicaManager") is False  # logger levels
    assert is_sensitive_config(99, "anything") is True  # unknown type
    assert is_sensitive_config(2, "retention.ms") is False
    assert is_sensitive_config(2, "custom.api.token") is True
    assert is_sensitive_config(32, "consumer.session.timeout.ms") is False


def test_unknown_broker_config_is_redacted_in_the_shell(tmp_path: Path) -> None:
    import io

    from test_terminal_safety import write_log

    from metashell.cli import run

    write_log(tmp_path, "x")
    out: Any = io.StringIO()
    run(
        ["-d", str(tmp_path), "-c", "cat /configs/broker/*/*"],
        stdout=out,
        stderr=io.StringIO(),
        stdin=io.StringIO(""),
    )
    assert out.getvalue().split() == ["[redacted]"]  # broker config key "x" is unknown
    out = io.StringIO()
    run(
        ["-d", str(tmp_path), "--no-redact", "-c", "cat /configs/broker/*/*"],
        stdout=out,
        stderr=io.StringIO(),
        stdin=io.StringIO(""),
    )
    assert out.getvalue().split() == ["x"]


def test_log_json_hides_scram_salts_and_keys_unless_asked() -> None:
    """``log --json`` printed a SCRAM credential's salt, stored key and server key in the clear."""
    import json

    from conftest import FIXTURES
    from test_cli import run_cli

    args = ("-d", str(FIXTURES / "demo"), "-c", "log --json --type UserScramCredentialRecord")
    status, out, _err = run_cli(*args)
    docs = [json.loads(line)["data"] for line in out.splitlines()]
    assert status == 0 and docs
    assert all(d[k] == "[redacted]" for d in docs for k in ("salt", "storedKey", "serverKey"))
    assert all(isinstance(d["iterations"], int) and d["name"] for d in docs)
    status, out, _err = run_cli("--no-redact", *args)
    assert all(json.loads(line)["data"]["salt"] != "[redacted]" for line in out.splitlines())
