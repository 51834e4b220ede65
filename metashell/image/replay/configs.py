"""Configs and client quotas: Kafka's ``ConfigurationsDelta`` and ``ClientQuotasDelta``."""

from __future__ import annotations

from typing import Any

from metashell.image.kafka_names import CONFIG_RESOURCE_TYPE_NAMES
from metashell.protocol.record_type import RecordType

from .state import ReplayState, rule


class ConfigRules(ReplayState):
    """ConfigRecord and ClientQuotaRecord: keys set and removed; an emptied resource or entity goes."""

    @rule(RecordType.CONFIG_RECORD)
    def _config(self, d: dict[str, Any], offset: int) -> None:
        rtype = d["ResourceType"]
        if rtype not in CONFIG_RESOURCE_TYPE_NAMES:
            rtype = 0  # ConfigResource.Type.forId -> UNKNOWN
        key = (rtype, d["ResourceName"])
        value = d["Value"]
        self._put_or_remove(self._image.configs, key, d["Name"], value, value is None)

    @rule(RecordType.CLIENT_QUOTA_RECORD)
    def _client_quota(self, d: dict[str, Any], offset: int) -> None:
        entity_map: dict[str, str | None] = {}
        for e in d["Entity"] or ():
            entity_map[e["EntityType"]] = e["EntityName"]
        entity = tuple(sorted(entity_map.items()))
        self._put_or_remove(self._image.client_quotas, entity, d["Key"], d["Value"], d["Remove"])

    def _put_or_remove(
        self, areas: dict[Any, dict[str, Any]], key: Any, name: str, value: Any, remove: bool
    ) -> None:
        """Set or delete one key of a config resource / quota entity; an emptied one disappears, as
        in Kafka's ConfigurationsDelta and ClientQuotasDelta."""
        values = areas.get(key)
        if remove:
            if values is not None and name in values:
                self._keep_slot(values, name)
                del values[name]
                if not values:
                    self._keep_slot(areas, key)
                    del areas[key]
            return
        if values is None:
            self._keep_slot(areas, key)
            values = areas[key] = {}
        self._keep_slot(values, name)
        values[name] = value
