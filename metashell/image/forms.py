"""One form per image object: what the tree, ``describe``, the TUI and Spark show of it.

A broker, a controller, a partition, an ACL, a SCRAM credential, a delegation token, listeners and
supported features each have one function here that turns the image's object into a JSON-ready
dict with camelCase keys named like Kafka's fields (uuids as Kafka's base64 text, enums by Kafka's
names, ``UNKNOWN`` for a code Kafka would not know, times in milliseconds with an ISO twin).  There
used to be two ACL forms that disagreed on unknown codes and four listener forms.

:data:`SHOWN` and :data:`OMITTED` say, for each model class, which form key shows each of its
fields, or why a field is left out; ``tests/test_image_forms.py`` fails when a model gains a field
that neither lists.
"""

from __future__ import annotations

from typing import Any

from metashell.java_order import java_sorted
from metashell.protocol.uuid import uuid_to_str
from metashell.times import iso_utc

from .kafka_names import (
    ACL_OPERATION_NAMES,
    ACL_PATTERN_TYPE_NAMES,
    ACL_PERMISSION_TYPE_NAMES,
    ACL_RESOURCE_TYPE_NAMES,
    LEADER_RECOVERY_STATE_NAMES,
    SCRAM_MECHANISM_NAMES,
    SECURITY_PROTOCOL_NAMES,
    enum_name,
)
from .model import (
    Acl,
    BrokerRegistration,
    ControllerRegistration,
    DelegationToken,
    Endpoint,
    Partition,
    ScramCredential,
)

REDACTED = "[redacted]"

__all__ = [
    "OMITTED",
    "SHOWN",
    "acl_form",
    "broker_form",
    "controller_form",
    "features_form",
    "listeners_form",
    "partition_form",
    "scram_form",
    "token_form",
]


def _uuids(values: Any) -> list[str] | None:
    return None if values is None else [uuid_to_str(v) for v in values]


def listeners_form(listeners: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name in java_sorted(listeners):
        ep = listeners[name]
        out.append(
            {
                "name": ep.name,
                "host": ep.host,
                "port": ep.port,
                "securityProtocol": enum_name(
                    SECURITY_PROTOCOL_NAMES, ep.security_protocol, str(ep.security_protocol)
                ),
            }
        )
    return out


def features_form(features: dict[str, tuple[int, int]]) -> dict[str, dict[str, int]]:
    return {n: {"min": features[n][0], "max": features[n][1]} for n in java_sorted(features)}


def broker_form(b: Any) -> dict[str, Any]:
    return {
        "id": b.id,
        "epoch": b.epoch,
        "incarnationId": uuid_to_str(b.incarnation_id),
        "rack": b.rack,
        "fenced": b.fenced,
        "inControlledShutdown": b.in_controlled_shutdown,
        "isMigratingZkBroker": b.is_migrating_zk_broker,
        "listeners": listeners_form(b.listeners),
        "supportedFeatures": features_form(b.supported_features),
        "logDirs": _uuids(b.directories),
        "cordonedLogDirs": _uuids(b.cordoned_directories),
    }


def controller_form(c: Any) -> dict[str, Any]:
    return {
        "id": c.id,
        "incarnationId": uuid_to_str(c.incarnation_id),
        "zkMigrationReady": c.zk_migration_ready,
        "listeners": listeners_form(c.listeners),
        "supportedFeatures": features_form(c.supported_features),
    }


def partition_form(topic: Any, index: int, p: Any) -> dict[str, Any]:
    return {
        "topic": topic.name,
        "topicId": uuid_to_str(topic.id),
        "partition": index,
        "leader": p.leader,
        "leaderEpoch": p.leader_epoch,
        "partitionEpoch": p.partition_epoch,
        "replicas": list(p.replicas),
        "isr": list(p.isr),
        "elr": list(p.elr),
        "lastKnownElr": list(p.last_known_elr),
        "addingReplicas": list(p.adding_replicas),
        "removingReplicas": list(p.removing_replicas),
        "leaderRecoveryState": enum_name(
            LEADER_RECOVERY_STATE_NAMES, p.leader_recovery_state, str(p.leader_recovery_state)
        ),
        "directories": _uuids(p.directories),
    }


def acl_form(a: Any) -> dict[str, Any]:
    return {
        "id": uuid_to_str(a.id),
        "resourceType": enum_name(ACL_RESOURCE_TYPE_NAMES, a.resource_type),
        "resourceName": a.resource_name,
        "patternType": enum_name(ACL_PATTERN_TYPE_NAMES, a.pattern_type),
        "principal": a.principal,
        "host": a.host,
        "operation": enum_name(ACL_OPERATION_NAMES, a.operation),
        "permissionType": enum_name(ACL_PERMISSION_TYPE_NAMES, a.permission_type),
    }


def scram_form(s: Any, redact: bool) -> dict[str, Any]:
    def secret(b: bytes) -> str:
        return REDACTED if redact else b.hex()

    return {
        "user": s.name,
        "mechanism": enum_name(SCRAM_MECHANISM_NAMES, s.mechanism),
        "iterations": s.iterations,
        "salt": secret(s.salt),
        "storedKey": secret(s.stored_key),
        "serverKey": secret(s.server_key),
    }


def token_form(t: Any) -> dict[str, Any]:
    return {
        "tokenId": t.token_id,
        "owner": t.owner,
        "requester": t.requester,
        "renewers": list(t.renewers),
        "issueTimestamp": t.issue_timestamp,
        "issueTime": iso_utc(t.issue_timestamp),
        "maxTimestamp": t.max_timestamp,
        "maxTime": iso_utc(t.max_timestamp),
        "expirationTimestamp": t.expiration_timestamp,
        "expirationTime": iso_utc(t.expiration_timestamp),
    }


SHOWN: dict[type, dict[str, str]] = {
    BrokerRegistration: {
        "id": "id",
        "epoch": "epoch",
        "incarnation_id": "incarnationId",
        "rack": "rack",
        "fenced": "fenced",
        "in_controlled_shutdown": "inControlledShutdown",
        "is_migrating_zk_broker": "isMigratingZkBroker",
        "listeners": "listeners",
        "supported_features": "supportedFeatures",
        "directories": "logDirs",
        "cordoned_directories": "cordonedLogDirs",
    },
    ControllerRegistration: {
        "id": "id",
        "incarnation_id": "incarnationId",
        "zk_migration_ready": "zkMigrationReady",
        "listeners": "listeners",
        "supported_features": "supportedFeatures",
    },
    Partition: {
        "leader": "leader",
        "leader_epoch": "leaderEpoch",
        "partition_epoch": "partitionEpoch",
        "replicas": "replicas",
        "isr": "isr",
        "elr": "elr",
        "last_known_elr": "lastKnownElr",
        "adding_replicas": "addingReplicas",
        "removing_replicas": "removingReplicas",
        "leader_recovery_state": "leaderRecoveryState",
        "directories": "directories",
    },
    Acl: {
        "id": "id",
        "resource_type": "resourceType",
        "resource_name": "resourceName",
        "pattern_type": "patternType",
        "principal": "principal",
        "host": "host",
        "operation": "operation",
        "permission_type": "permissionType",
    },
    ScramCredential: {
        "name": "user",
        "mechanism": "mechanism",
        "iterations": "iterations",
        "salt": "salt",
        "stored_key": "storedKey",
        "server_key": "serverKey",
    },
    DelegationToken: {
        "token_id": "tokenId",
        "owner": "owner",
        "requester": "requester",
        "renewers": "renewers",
        "issue_timestamp": "issueTimestamp",
        "max_timestamp": "maxTimestamp",
        "expiration_timestamp": "expirationTimestamp",
    },
    Endpoint: {
        "name": "name",
        "host": "host",
        "port": "port",
        "security_protocol": "securityProtocol",
    },
}
"""Model class -> (field -> the form key that shows it)."""

OMITTED: dict[type, dict[str, str]] = {}
"""Model class -> (field -> why no form shows it).  Empty: every field is shown."""
