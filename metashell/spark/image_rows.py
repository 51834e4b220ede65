"""The rows of the image tables, one named-row function per table.

Each function takes the image of one dataset (and whether secrets are redacted) and yields one
mapping per row, keyed by the table's column names (:mod:`.tables` adds the dataset columns and
the offset in front).  ``tests/test_spark_tables.py`` checks that every function's keys are exactly
its table's columns, so a column added to a schema without a value fails there instead of being
silently null.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from metashell.image.forms import features_form, listeners_form
from metashell.image.image import MetadataImage
from metashell.image.kafka_names import (
    ACL_OPERATION_NAMES,
    ACL_PATTERN_TYPE_NAMES,
    ACL_PERMISSION_TYPE_NAMES,
    ACL_RESOURCE_TYPE_NAMES,
    CONFIG_RESOURCE_TYPE_NAMES,
    METADATA_VERSION_FEATURE,
    SCRAM_MECHANISM_NAMES,
    enum_name,
    metadata_version_name,
)
from metashell.log.records import INT64_MAX
from metashell.protocol.uuid import uuid_to_str
from metashell.tree.redact import is_sensitive_config, redact_config

Row = dict[str, Any]

__all__ = [
    "acl_rows",
    "broker_rows",
    "config_rows",
    "controller_rows",
    "feature_rows",
    "producer_id_rows",
    "quota_rows",
    "scram_user_rows",
    "topic_rows",
]


def _listeners(listeners: dict[str, Any]) -> list[dict[str, Any]]:
    """The listener form (:func:`~metashell.image.forms.listeners_form`) with Spark's column names."""
    return [
        {"name": e["name"], "host": e["host"], "port": e["port"], "security_protocol": e["securityProtocol"]}
        for e in listeners_form(listeners)
    ]


def _features(supported: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    """The supported-features form as Spark rows."""
    return [
        {"name": n, "min_version": f["min"], "max_version": f["max"]}
        for n, f in features_form(supported).items()
    ]


def topic_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    for t in image.topics.by_id.values():
        rf = max((len(p.replicas) - len(p.adding_replicas) for p in t.partitions.values()), default=0)
        yield {
            "topic_id": uuid_to_str(t.id),
            "topic_name": t.name,
            "partition_count": len(t.partitions),
            "replication_factor": rf,
        }


def broker_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    for b in image.cluster.brokers.values():
        yield {
            "broker_id": b.id,
            "broker_epoch": b.epoch,
            "incarnation_id": uuid_to_str(b.incarnation_id),
            "rack": b.rack,
            "fenced": b.fenced,
            "in_controlled_shutdown": b.in_controlled_shutdown,
            "is_migrating_zk_broker": b.is_migrating_zk_broker,
            "listeners": _listeners(b.listeners),
            "features": _features(b.supported_features),
            "log_dirs": [uuid_to_str(d) for d in b.directories],
            "cordoned_log_dirs": None
            if b.cordoned_directories is None
            else [uuid_to_str(d) for d in b.cordoned_directories],
        }


def controller_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    for c in image.cluster.controllers.values():
        yield {
            "controller_id": c.id,
            "incarnation_id": uuid_to_str(c.incarnation_id),
            "zk_migration_ready": c.zk_migration_ready,
            "listeners": _listeners(c.listeners),
            "features": _features(c.supported_features),
        }


def config_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    for (rtype, rname), values in image.configs.items():
        for key, value in values.items():
            yield {
                "resource_type": enum_name(CONFIG_RESOURCE_TYPE_NAMES, rtype),
                "resource_name": rname,
                "name": key,
                "value": redact_config(rtype, key, value, redact),
                "sensitive": is_sensitive_config(rtype, key),
            }


def acl_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    for a in image.acls.values():
        yield {
            "acl_id": uuid_to_str(a.id),
            "resource_type": enum_name(ACL_RESOURCE_TYPE_NAMES, a.resource_type),
            "resource_name": a.resource_name,
            "pattern_type": enum_name(ACL_PATTERN_TYPE_NAMES, a.pattern_type),
            "principal": a.principal,
            "host": a.host,
            "operation": enum_name(ACL_OPERATION_NAMES, a.operation),
            "permission_type": enum_name(ACL_PERMISSION_TYPE_NAMES, a.permission_type),
        }


def quota_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    for entity, quota in image.client_quotas.items():
        parts = dict(entity)
        text = ",".join(f"{k}={v if v is not None else '<default>'}" for k, v in entity)
        for key, rate in quota.items():
            yield {
                "entity": text,
                "user": parts.get("user"),
                "client_id": parts.get("client-id"),
                "ip": parts.get("ip"),
                "key": key,
                "value": rate,
            }


def feature_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    if image.features.metadata_version is not None:
        yield {"name": METADATA_VERSION_FEATURE, "level": image.features.metadata_version}
    for name, level in sorted(image.features.finalized.items()):
        yield {"name": name, "level": level}


def scram_user_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    for (mechanism, user), cred in image.scram.items():
        yield {
            "user_name": user,
            "mechanism": SCRAM_MECHANISM_NAMES.get(mechanism, str(mechanism)),
            "iterations": cred.iterations,
        }


def producer_id_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    pids = image.producer_ids
    if pids.next_producer_id >= 0:
        yield {
            "next_producer_id": pids.next_producer_id,
            "broker_id": pids.broker_id,
            "broker_epoch": pids.broker_epoch,
        }


def node_rows(image: MetadataImage, redact: bool) -> Iterator[Row]:
    """One row per dataset (a node's directory): its place in the quorum, as the ``quorum`` command
    says it, so that a fleet's quorums are checked in one query (issue 26)."""
    q, p = image.quorum, image.provenance
    voters = [v.id for v in q.voters]
    role = "unknown" if not voters or q.node_id is None else ("voter" if q.node_id in voters else "observer")
    yield {
        "role": role,
        "leader_id": q.leader_id,
        "leader_epoch": q.leader_epoch,
        "voters": voters,
        "kraft_version": q.kraft_version,
        "last_epoch": p.epoch if p.offset >= 0 else None,
        # a name past 64 bits (an errors row says so) gives an offset no column holds
        "snapshot_end_offset": p.snapshot.end_offset
        if p.snapshot is not None and p.snapshot.end_offset <= INT64_MAX
        else None,
        "metadata_version": metadata_version_name(image.features.metadata_version)
        if image.features.metadata_version is not None
        else None,
    }
