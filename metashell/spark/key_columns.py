"""The key columns of the ``records`` table, and the broker events, from a record's decoded data.

Each record type declares where its topic id and name, partition, broker, controller, resource,
config name, principal, user and feature come from (:data:`KEY_SOURCES`; ``None`` where it has
none), or gives a reason in :data:`KEYLESS` not to; ``tests/test_spark_tables.py`` fails when a new
type has neither. The sources are data, not code, so that both engines read them: the functions
here for the Python engine, ``native/src/spark/records_table.rs`` for the native one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metashell.image.kafka_names import ACL_RESOURCE_TYPE_NAMES, CONFIG_RESOURCE_TYPE_NAMES
from metashell.protocol.uuid import uuid_text

NO_KEYS = (None,) * 11
"""(topic_id, topic_name, partition_id, broker_id, controller_id, resource_type, resource_name,
config_name, principal, user_name, feature_name): the typed key columns of a ``records`` row."""


KEY_COLUMNS = (
    "topic_id",
    "topic_name",
    "partition_id",
    "broker_id",
    "controller_id",
    "resource_type",
    "resource_name",
    "config_name",
    "principal",
    "user_name",
    "feature_name",
)
"""The key columns, in the order of :data:`NO_KEYS`."""

KeySource = tuple[str, str]
"""Where a key column's value comes from: ``(how, argument)``, ``how`` being

* ``uuid``: the uuid field named by the argument, as Kafka's text (null when it is not a uuid);
* ``int``: the int field (null when it is not an int);
* ``get``: the field's value as it is;
* ``text``: the string field, null when it is empty;
* ``config_type``, ``acl_type``: the int field, named as Kafka names config and ACL resource types
  (its number as text when it has no name);
* ``const``: the argument itself;
* ``quota_entity``: a client quota's entity list as ``type=name,...`` (made in Python only).

Declared as data, not code, so that the native core (``records_table.rs``) reads the same sources."""

_TOKEN: dict[str, KeySource] = {
    "resource_type": ("const", "DELEGATION_TOKEN"),
    "resource_name": ("get", "TokenId"),
    "principal": ("get", "Owner"),
}
"""A delegation token's key columns (its creation and its removal alike)."""

KEY_SOURCES: dict[str, dict[str, KeySource]] = {
    "PartitionChangeRecord": {"topic_id": ("uuid", "TopicId"), "partition_id": ("int", "PartitionId")},
    "PartitionRecord": {"topic_id": ("uuid", "TopicId"), "partition_id": ("int", "PartitionId")},
    "TopicRecord": {"topic_id": ("uuid", "TopicId"), "topic_name": ("get", "Name")},
    "RemoveTopicRecord": {"topic_id": ("uuid", "TopicId")},
    "RegisterBrokerRecord": {"broker_id": ("int", "BrokerId")},
    "UnregisterBrokerRecord": {"broker_id": ("int", "BrokerId")},
    "BrokerRegistrationChangeRecord": {"broker_id": ("int", "BrokerId")},
    "FenceBrokerRecord": {"broker_id": ("int", "Id")},
    "UnfenceBrokerRecord": {"broker_id": ("int", "Id")},
    "RegisterControllerRecord": {"controller_id": ("get", "ControllerId")},
    "UnregisterControllerRecord": {"controller_id": ("get", "ControllerId")},
    "ClearElrRecord": {"topic_name": ("text", "TopicName")},
    "ProducerIdsRecord": {"broker_id": ("int", "BrokerId")},
    "ConfigRecord": {
        "resource_type": ("config_type", "ResourceType"),
        "resource_name": ("get", "ResourceName"),
        "config_name": ("get", "Name"),
    },
    "AccessControlEntryRecord": {
        "resource_type": ("acl_type", "ResourceType"),
        "resource_name": ("get", "ResourceName"),
        "principal": ("get", "Principal"),
    },
    "ClientQuotaRecord": {
        "resource_type": ("const", "CLIENT_QUOTA"),
        "resource_name": ("quota_entity", "Entity"),
        "config_name": ("get", "Key"),
    },
    "UserScramCredentialRecord": {"user_name": ("get", "Name")},
    "RemoveUserScramCredentialRecord": {"user_name": ("get", "Name")},
    "DelegationTokenRecord": _TOKEN,
    "RemoveDelegationTokenRecord": _TOKEN,
    "FeatureLevelRecord": {"feature_name": ("get", "Name")},
}
"""The key columns of each record type (columns not named are null)."""

OTHER_KEYS: dict[str, KeySource] = {
    "topic_id": ("uuid", "TopicId"),
    "partition_id": ("int", "PartitionId"),
    "broker_id": ("int", "BrokerId"),
}
"""A record type without keys of its own: a topic id, partition or broker id if it carries one."""

RESOURCE_TYPE_NAMES = {"config_type": CONFIG_RESOURCE_TYPE_NAMES, "acl_type": ACL_RESOURCE_TYPE_NAMES}
"""The ``how`` of the sources that name a resource type, and the names."""

PYTHON_ONLY_SOURCES = frozenset({"quota_entity"})
"""Sources the native core does not read: a record type with one has its rows made in Python."""


def _quota_entity(d: dict[str, Any]) -> str:
    return ",".join(
        f"{e.get('EntityType')}={e.get('EntityName') or '<default>'}" for e in d.get("Entity") or ()
    )


def _getter(how: str, arg: str) -> Callable[[dict[str, Any]], Any]:
    """The function reading one source from a decoded record (see :data:`KeySource`)."""
    if how == "uuid":
        return lambda d: uuid_text(v) if isinstance(v := d.get(arg), bytes) else None
    if how == "int":
        return lambda d: v if isinstance(v := d.get(arg), int) else None
    if how == "get":
        return lambda d: d.get(arg)
    if how == "text":
        return lambda d: d.get(arg) or None
    if how in RESOURCE_TYPE_NAMES:
        names = RESOURCE_TYPE_NAMES[how]
        return lambda d: names.get(d.get(arg, -1), str(d.get(arg)))
    if how == "const":
        return lambda d: arg
    if how == "quota_entity":
        return _quota_entity
    raise ValueError(f"no key source {how!r}")


def _key_function(sources: dict[str, KeySource]) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    getters = [(KEY_COLUMNS.index(column), _getter(*source)) for column, source in sources.items()]

    def keys(d: dict[str, Any]) -> tuple[Any, ...]:
        out: list[Any] = [None] * len(KEY_COLUMNS)
        for i, get in getters:
            out[i] = get(d)
        return tuple(out)

    return keys


_KEYS = {name: _key_function(sources) for name, sources in KEY_SOURCES.items()}
_other_keys = _key_function(OTHER_KEYS)


KEYLESS = {
    "NoOpRecord": "a heartbeat: it is about nothing",
    "ZkMigrationStateRecord": "the cluster's migration state, one per cluster",
    "BeginTransactionRecord": "a transaction marker (is_transaction_marker)",
    "EndTransactionRecord": "a transaction marker (is_transaction_marker)",
    "AbortTransactionRecord": "a transaction marker (is_transaction_marker)",
    "RemoveAccessControlEntryRecord": "only the ACL's id, which no key column holds (join on record_json)",
}
"""Record types without key columns, with the reason (``tests/test_spark_tables.py`` fails when a
type is in neither this nor :data:`KEY_SOURCES`)."""


def key_columns_of(name: str) -> Callable[[dict[str, Any]], tuple[Any, ...]] | None:
    """The key-column function of record type ``name`` (None: it has none, see :data:`KEYLESS`)."""
    return _KEYS.get(name)


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
