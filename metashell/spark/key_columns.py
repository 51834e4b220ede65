"""The key columns of the ``records`` table, and the broker events, from a record's decoded data.

Each record type has a function giving its topic id and name, partition, broker, controller,
resource, config name, principal, user and feature (``None`` where it has none), or a reason in
:data:`KEYLESS` not to; ``tests/test_spark_tables.py`` fails when a new type has neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metashell.image.kafka_names import ACL_RESOURCE_TYPE_NAMES, CONFIG_RESOURCE_TYPE_NAMES
from metashell.protocol.uuid import uuid_text

NO_KEYS = (None,) * 11
"""(topic_id, topic_name, partition_id, broker_id, controller_id, resource_type, resource_name,
config_name, principal, user_name, feature_name): the typed key columns of a ``records`` row."""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def _tid(d: dict[str, Any]) -> str | None:
    topic_id = d.get("TopicId")
    return uuid_text(topic_id) if isinstance(topic_id, bytes) else None


def _quota_entity(d: dict[str, Any]) -> str:
    return ",".join(
        f"{e.get('EntityType')}={e.get('EntityName') or '<default>'}" for e in d.get("Entity") or ()
    )


def _config_type(d: dict[str, Any]) -> str:
    return CONFIG_RESOURCE_TYPE_NAMES.get(d.get("ResourceType", -1), str(d.get("ResourceType")))


def _acl_type(d: dict[str, Any]) -> str:
    return ACL_RESOURCE_TYPE_NAMES.get(d.get("ResourceType", -1), str(d.get("ResourceType")))


def _token_keys(d: dict[str, Any]) -> tuple[Any, ...]:
    """A delegation token's key columns (its creation and its removal alike)."""
    return (
        None,
        None,
        None,
        None,
        None,
        "DELEGATION_TOKEN",
        d.get("TokenId"),
        None,
        d.get("Owner"),
        None,
        None,
    )


_KEYS: dict[str, Callable[[dict[str, Any]], tuple[Any, ...]]] = {
    "PartitionChangeRecord": lambda d: (_tid(d), None, _int(d.get("PartitionId")), *NO_KEYS[3:]),
    "PartitionRecord": lambda d: (_tid(d), None, _int(d.get("PartitionId")), *NO_KEYS[3:]),
    "TopicRecord": lambda d: (_tid(d), d.get("Name"), *NO_KEYS[2:]),
    "RemoveTopicRecord": lambda d: (_tid(d), *NO_KEYS[1:]),
    "RegisterBrokerRecord": lambda d: (None, None, None, _int(d.get("BrokerId")), *NO_KEYS[4:]),
    "UnregisterBrokerRecord": lambda d: (None, None, None, _int(d.get("BrokerId")), *NO_KEYS[4:]),
    "BrokerRegistrationChangeRecord": lambda d: (None, None, None, _int(d.get("BrokerId")), *NO_KEYS[4:]),
    "FenceBrokerRecord": lambda d: (None, None, None, _int(d.get("Id")), *NO_KEYS[4:]),
    "UnfenceBrokerRecord": lambda d: (None, None, None, _int(d.get("Id")), *NO_KEYS[4:]),
    "RegisterControllerRecord": lambda d: (None, None, None, None, d.get("ControllerId"), *NO_KEYS[5:]),
    "UnregisterControllerRecord": lambda d: (None, None, None, None, d.get("ControllerId"), *NO_KEYS[5:]),
    "ClearElrRecord": lambda d: (None, d.get("TopicName") or None, *NO_KEYS[2:]),
    "ProducerIdsRecord": lambda d: (None, None, None, _int(d.get("BrokerId")), *NO_KEYS[4:]),
    "ConfigRecord": lambda d: (
        None,
        None,
        None,
        None,
        None,
        _config_type(d),
        d.get("ResourceName"),
        d.get("Name"),
        None,
        None,
        None,
    ),
    "AccessControlEntryRecord": lambda d: (
        None,
        None,
        None,
        None,
        None,
        _acl_type(d),
        d.get("ResourceName"),
        None,
        d.get("Principal"),
        None,
        None,
    ),
    "ClientQuotaRecord": lambda d: (
        None,
        None,
        None,
        None,
        None,
        "CLIENT_QUOTA",
        _quota_entity(d),
        d.get("Key"),
        None,
        None,
        None,
    ),
    "UserScramCredentialRecord": lambda d: (*NO_KEYS[:9], d.get("Name"), None),
    "RemoveUserScramCredentialRecord": lambda d: (*NO_KEYS[:9], d.get("Name"), None),
    "DelegationTokenRecord": _token_keys,
    "RemoveDelegationTokenRecord": _token_keys,
    "FeatureLevelRecord": lambda d: (*NO_KEYS[:10], d.get("Name")),
}


KEYLESS = {
    "NoOpRecord": "a heartbeat: it is about nothing",
    "ZkMigrationStateRecord": "the cluster's migration state, one per cluster",
    "BeginTransactionRecord": "a transaction marker (is_transaction_marker)",
    "EndTransactionRecord": "a transaction marker (is_transaction_marker)",
    "AbortTransactionRecord": "a transaction marker (is_transaction_marker)",
    "RemoveAccessControlEntryRecord": "only the ACL's id, which no key column holds (join on record_json)",
}
"""Record types without key columns, with the reason (``tests/test_spark_tables.py`` fails when a
type is in neither this nor ``_KEYS``)."""


def key_columns_of(name: str) -> Callable[[dict[str, Any]], tuple[Any, ...]] | None:
    """The key-column function of record type ``name`` (None: it has none, see :data:`KEYLESS`)."""
    return _KEYS.get(name)


def _other_keys(d: dict[str, Any]) -> tuple[Any, ...]:
    """A record type without keys of its own: a topic id or broker id if it carries one."""
    return (_tid(d), None, _int(d.get("PartitionId")), _int(d.get("BrokerId")), *NO_KEYS[4:])


def keys_of(name: str, d: dict[str, Any]) -> tuple[Any, ...]:
    """The key columns of a metadata record, from its decoded data (one function per type)."""
    return _KEYS.get(name, _other_keys)(d)


def broker_event(name: str, d: dict[str, Any]) -> tuple[int, int | None, str] | None:
    """(broker id, epoch, event) when the record registers, fences, unfences, shuts down or
    unregisters a broker."""
    if name == "RegisterBrokerRecord":
        return d["BrokerId"], d.get("BrokerEpoch"), "register"
    if name == "UnregisterBrokerRecord":
        return d["BrokerId"], d.get("BrokerEpoch"), "unregister"
    if name == "FenceBrokerRecord":
        return d["Id"], d.get("Epoch"), "fence"
    if name == "UnfenceBrokerRecord":
        return d["Id"], d.get("Epoch"), "unfence"
    if name == "BrokerRegistrationChangeRecord":
        if d.get("InControlledShutdown") == 1:
            return d["BrokerId"], d.get("BrokerEpoch"), "controlled_shutdown"
        if d.get("Fenced") == 1:
            return d["BrokerId"], d.get("BrokerEpoch"), "fence"
        if d.get("Fenced") == -1:
            return d["BrokerId"], d.get("BrokerEpoch"), "unfence"
    return None
