"""The field order of the two hottest records as the replayer decodes them: GENERATED, do not edit.

Made by ``python scripts/gen_partition_fields.py`` from the bundled schemas (``PartitionRecord.json``,
``PartitionChangeRecord.json``): each record's fields in its schema's order, so that a field Kafka
adds is decoded where the schema puts it.  Apart from ``topics`` (whose rules take these tuples) so
that the image model's generated code can name each field's place.
"""

from __future__ import annotations

from metashell.protocol.metadata import ReplayDecoders

__all__ = ["DECODERS", "PARTITION_CHANGE_FIELDS", "PARTITION_FIELDS"]

# The two hottest records are decoded straight into tuples of these fields (no dict, no key
# lookups): a million PartitionRecords in a big snapshot, PartitionChangeRecords in the log.
PARTITION_FIELDS = (
    "PartitionId",
    "TopicId",
    "Replicas",
    "Isr",
    "RemovingReplicas",
    "AddingReplicas",
    "Leader",
    "LeaderRecoveryState",
    "LeaderEpoch",
    "PartitionEpoch",
    "Directories",
    "EligibleLeaderReplicas",
    "LastKnownElr",
)
PARTITION_CHANGE_FIELDS = (
    "PartitionId",
    "TopicId",
    "Isr",
    "Leader",
    "Replicas",
    "RemovingReplicas",
    "AddingReplicas",
    "LeaderRecoveryState",
    "Directories",
    "EligibleLeaderReplicas",
    "LastKnownElr",
)
DECODERS = ReplayDecoders(
    {"PartitionRecord": PARTITION_FIELDS, "PartitionChangeRecord": PARTITION_CHANGE_FIELDS}
)
