"""What each feature level depends on, by Kafka's own rules: GENERATED, do not edit.

Made by ``python scripts/gen_feature_rules.py`` from Kafka 4.4.0's Feature enum
(``FeatureVersion.dependencies``, checked by ``Feature.validateVersion``).
"""

from __future__ import annotations

RELEASE = "4.4.0"

MINIMUM_METADATA_VERSION = 7
"""``MetadataVersion.MINIMUM_VERSION``: any feature at level 1 or more needs at least this."""

LEVELS: dict[str, dict[int, dict[str, int]]] = {
    "eligible.leader.replicas.version": {
        0: {},
        1: {"metadata.version": 23},
    },
    "group.version": {
        0: {},
        1: {},
    },
    "kraft.version": {
        0: {},
        1: {},
    },
    "share.version": {
        0: {},
        1: {},
        2: {},
    },
    "streams.version": {
        0: {},
        1: {},
    },
    "transaction.version": {
        0: {},
        1: {},
        2: {},
    },
}
"""Feature -> each level it has -> the features (and levels) that level needs."""
