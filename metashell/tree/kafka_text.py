"""Kafka 4.4's ``toString`` forms of image objects, as its metadata shell prints them under ``/image``.

Every function here was checked byte for byte against the Kafka 4.4.0 jars (kafka-metadata 4.4.0,
kafka-shell 4.3.1 -- the newest published shell jar) on generated files; see docs/tree.md for the
facts and tests/test_tree_kafka_text.py / tests/test_tree_oracle.py for the comparisons.

Points that changed since the 2024 reference (FORMATS.md 8.2):

* ``StandardAcl`` is a Java record: ``StandardAcl[resourceType=..., ...]`` (square brackets);
* ``BrokerRegistration`` ends with ``cordonedDirectories=null`` or ``=[uuid, ...]``;
* ``metadataVersion`` prints an ``Optional``: ``Optional[3.9-IV0]`` / ``Optional.empty``;
* there is no ``zkMigrationState`` leaf and ``acls`` has a ``byId`` level.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from metashell.image.kafka_names import (
    ACL_OPERATION_NAMES,
    ACL_PATTERN_TYPE_NAMES,
    ACL_PERMISSION_TYPE_NAMES,
    ACL_RESOURCE_TYPE_NAMES,
    LEADER_RECOVERY_STATE_NAMES,
    METADATA_VERSION_NAMES,
    SECURITY_PROTOCOL_NAMES,
    enum_name,
)
from metashell.java_order import java_sorted
from metashell.protocol.uuid import uuid_to_str

from .javafmt import java_utc_zoned

REDACTED = "[redacted]"


def java_bool(b: bool) -> str:
    return "true" if b else "false"


def java_optional(value: object) -> str:
    """``Optional.toString``."""
    return "Optional.empty" if value is None else f"Optional[{value}]"


def java_int_list(values: Iterable[int]) -> str:
    """``List<Integer>.toString`` / ``Arrays.toString(int[])``: ``[1, 2]``, ``[]``."""
    return "[" + ", ".join(str(v) for v in values) + "]"


def java_uuid_list(values: Iterable[bytes] | None) -> str:
    """``List<Uuid>.toString`` (``null`` for a null list)."""
    if values is None:
        return "null"
    return "[" + ", ".join(uuid_to_str(v) for v in values) + "]"


def version_range(rng: tuple[int, int]) -> str:
    """``VersionRange.toString``: ``min`` when min == max, ``min+`` when max is 32767, else ``min-max``."""
    lo, hi = rng
    if lo == hi:
        return str(lo)
    if hi == 32767:
        return f"{lo}+"
    return f"{lo}-{hi}"


def endpoint(ep: Any) -> str:
    """``Endpoint.toString`` (org.apache.kafka.common.Endpoint)."""
    proto = SECURITY_PROTOCOL_NAMES.get(ep.security_protocol, str(ep.security_protocol))
    return f"Endpoint(listenerName='{ep.name}', securityProtocol={proto}, host='{ep.host}', port={ep.port})"


def _listeners(listeners: dict[str, Any]) -> str:
    return ", ".join(endpoint(listeners[name]) for name in java_sorted(listeners))


def _features(features: dict[str, tuple[int, int]]) -> str:
    return ", ".join(f"{name}: {version_range(features[name])}" for name in java_sorted(features))


def broker_registration(b: Any) -> str:
    """``BrokerRegistration.toString`` (Kafka 4.4: with ``cordonedDirectories``)."""
    return (
        f"BrokerRegistration(id={b.id}, epoch={b.epoch}, incarnationId={uuid_to_str(b.incarnation_id)}, "
        f"listeners=[{_listeners(b.listeners)}], supportedFeatures={{{_features(b.supported_features)}}}, "
        f"rack={java_optional(b.rack)}, fenced={java_bool(b.fenced)}, "
        f"inControlledShutdown={java_bool(b.in_controlled_shutdown)}, "
        f"isMigratingZkBroker={java_bool(b.is_migrating_zk_broker)}, "
        f"directories={java_uuid_list(b.directories)}, "
        f"cordonedDirectories={java_uuid_list(b.cordoned_directories)})"
    )


def controller_registration(c: Any) -> str:
    """``ControllerRegistration.toString``."""
    return (
        f"ControllerRegistration(id={c.id}, incarnationId={uuid_to_str(c.incarnation_id)}, "
        f"zkMigrationReady={java_bool(c.zk_migration_ready)}, listeners=[{_listeners(c.listeners)}], "
        f"supportedFeatures={{{_features(c.supported_features)}}})"
    )


def partition_registration(p: Any) -> str:
    """``PartitionRegistration.toString``."""
    lrs = enum_name(LEADER_RECOVERY_STATE_NAMES, p.leader_recovery_state, str(p.leader_recovery_state))
    return (
        f"PartitionRegistration(replicas={java_int_list(p.replicas)}, "
        f"directories={java_uuid_list(p.directories)}, isr={java_int_list(p.isr)}, "
        f"removingReplicas={java_int_list(p.removing_replicas)}, "
        f"addingReplicas={java_int_list(p.adding_replicas)}, elr={java_int_list(p.elr)}, "
        f"lastKnownElr={java_int_list(p.last_known_elr)}, leader={p.leader}, "
        f"leaderRecoveryState={lrs}, leaderEpoch={p.leader_epoch}, partitionEpoch={p.partition_epoch})"
    )


def standard_acl(a: Any) -> str:
    """``StandardAcl.toString`` (a Java record in Kafka 4.x: square brackets)."""
    return (
        f"StandardAcl[resourceType={enum_name(ACL_RESOURCE_TYPE_NAMES, a.resource_type)}, "
        f"resourceName={a.resource_name}, "
        f"patternType={enum_name(ACL_PATTERN_TYPE_NAMES, a.pattern_type)}, "
        f"principal={a.principal}, host={a.host}, "
        f"operation={enum_name(ACL_OPERATION_NAMES, a.operation)}, "
        f"permissionType={enum_name(ACL_PERMISSION_TYPE_NAMES, a.permission_type)}]"
    )


def scram_credential(s: Any, redact: bool) -> str:
    """``ScramCredentialDataNode.print``: lower-case hex; every field ``[redacted]`` when redacting
    (Kafka's own redacted layout)."""
    if redact:
        return (
            f"ScramCredentialData(salt={REDACTED}, storedKey={REDACTED}, serverKey={REDACTED}, "
            f"iterations={REDACTED})"
        )
    return (
        f"ScramCredentialData(salt={s.salt.hex()}, storedKey={s.stored_key.hex()}, "
        f"serverKey={s.server_key.hex()}, iterations={s.iterations})"
    )


def delegation_token(t: Any, redact: bool) -> str:
    """``DelegationTokenDataNode.print``, odd parentheses included; every field ``[redacted]`` when
    redacting (Kafka's own redacted layout)."""

    def f(value: object) -> str:
        return REDACTED if redact else str(value)

    renewers = REDACTED if redact else " ".join(t.renewers)
    return (
        f"DelegationTokenDatatokenId={f(t.token_id)}(owner={f(t.owner)}(tokenRequester={f(t.requester)}"
        f"(renewers={renewers}, issueTimestamp={f(t.issue_timestamp)}, maxTimestamp={f(t.max_timestamp)})"
        f", expiryTimestamp={f(t.expiration_timestamp)}"
    )


def provenance(p: Any) -> str:
    """``ProvenanceNode.print``: ``offset 42, epoch 3, time 2023-11-14T22:13:22Z[UTC]``."""
    return f"offset {p.offset}, epoch {p.epoch}, time {java_utc_zoned(p.timestamp)}"


def metadata_version(level: int | None) -> str:
    """``FeaturesImage.metadataVersion()`` is an ``Optional<MetadataVersion>`` in Kafka 4.4."""
    if level is None:
        return "Optional.empty"
    return f"Optional[{METADATA_VERSION_NAMES.get(level, str(level))}]"


# --------------------------------------------------------------------------------------------
# client quota entity names (ClientQuotasImageNode)


def _escape_quota(name: str) -> str:
    return name.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def quota_entity_name(entity: Iterable[tuple[str, str | None]]) -> str:
    """``ClientQuotasImageNode.clientQuotaEntityToString``: ``clientId(..)_ip(..)_user(..)``.

    Deliberate difference: Kafka drops default entities (name null) from the name, which produces
    empty or colliding names that its own ``tree``/``find``/``cat`` cannot open; metashell prints
    them with empty parentheses (``user()``), see docs/tree.md.
    """
    parts = dict(entity)
    out = []
    for etype, label in (("client-id", "clientId"), ("ip", "ip"), ("user", "user")):
        if etype in parts:
            value = parts[etype]
            out.append(f"{label}({'' if value is None else _escape_quota(value)})")
    return "_".join(out)


def parse_quota_entity_name(text: str) -> dict[str, str] | None:
    """``ClientQuotasImageNode.decodeEntity``: the inverse of :func:`quota_entity_name`, accepting the
    components in any order (as Kafka does); None when ``text`` is not an entity name."""
    entries: dict[str, str] = {}
    i, n = 0, len(text)
    prefixes = (("clientId(", "client-id"), ("ip(", "ip"), ("user(", "user"))
    while True:
        if i >= n:
            return None
        for prefix, etype in prefixes:  # noqa: B007 - the one that matched is used below
            if text.startswith(prefix, i):
                i += len(prefix)
                break
        else:
            return None
        value: list[str] = []
        while True:
            if i >= n:
                return None
            c = text[i]
            i += 1
            if c == "\\":
                if i >= n:
                    return None
                value.append(text[i])
                i += 1
            elif c == ")":
                break
            else:
                value.append(c)
        entries[etype] = "".join(value)
        if i >= n:
            return entries
        if text[i] != "_":
            return None
        i += 1
