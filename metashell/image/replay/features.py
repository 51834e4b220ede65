"""Features and producer ids: ``FeaturesDelta`` and ``ProducerIdsDelta``."""

from __future__ import annotations

from typing import Any

from metashell.image.kafka_names import METADATA_VERSION_FEATURE, METADATA_VERSION_NAMES
from metashell.protocol.record_type import RecordType

from .state import Fault, ReplayState, rule

_MINIMUM_MV = 7  # MetadataVersion.MINIMUM_VERSION (3.3-IV3) in Kafka 4.x
KRAFT_VERSION_FEATURE = "kraft.version"


class FeatureRules(ReplayState):
    """FeatureLevelRecord, ProducerIdsRecord, and the ZooKeeper migration state kept for display."""

    @rule(RecordType.FEATURE_LEVEL_RECORD)
    def _feature_level(self, d: dict[str, Any], offset: int) -> None:
        name = d["Name"]
        level = d["FeatureLevel"]
        features = self._image.features
        if name == METADATA_VERSION_FEATURE:
            # Kafka 4.4 FeaturesDelta: MetadataVersion.fromFeatureLevel, which knows 7 (3.3-IV3) to
            # 34 (4.5-IV0); anything lower is a fault.  Levels newer than known are kept (and
            # reported) so that a newer cluster still loads -- a deliberate difference.
            if level < _MINIMUM_MV:
                raise Fault(
                    f"invalid metadata.version feature level {level}: the minimum is {_MINIMUM_MV} (3.3-IV3)"
                )
            if level not in METADATA_VERSION_NAMES:
                self.warn(
                    f"unknown metadata.version feature level {level} (newer than Kafka 4.4)",
                    offset,
                    "unknown",
                )
            self.keep_state(features)
            features.metadata_version = level
        elif name == KRAFT_VERSION_FEATURE:
            pass  # Kafka 4.4 ignores it (kraft.version lives in raft)
        elif level == 0:
            self._pop(features.finalized, name)
        else:
            self._set(features.finalized, name, level)

    @rule(RecordType.ZK_MIGRATION_STATE_RECORD)
    def _zk_migration_state(self, d: dict[str, Any], offset: int) -> None:
        # Kafka 4.4's MetadataDelta ignores this record (ZooKeeper migration is gone); the value is
        # kept for display only, never validated.
        self.keep_state(self._image.features)
        self._image.features.zk_migration_state = d["ZkMigrationState"]

    @rule(RecordType.PRODUCER_IDS_RECORD)
    def _producer_ids(self, d: dict[str, Any], offset: int) -> None:
        ids = self._image.producer_ids
        self.keep_state(ids)
        ids.next_producer_id = d["NextProducerId"]
        ids.broker_id = d["BrokerId"]
        ids.broker_epoch = d["BrokerEpoch"]
