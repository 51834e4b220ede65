"""The metadata record types (Kafka's ``MetadataRecordType``): GENERATED, do not edit.

Made by ``python scripts/gen_record_types.py`` from the schemas bundled in
``metashell/protocol/schemas/metadata``; checked byte for byte by the tests.
"""

from __future__ import annotations

import enum


class RecordType(enum.IntEnum):
    """A metadata record's api key, by its schema's name."""

    REGISTER_BROKER_RECORD = 0
    UNREGISTER_BROKER_RECORD = 1
    TOPIC_RECORD = 2
    PARTITION_RECORD = 3
    CONFIG_RECORD = 4
    PARTITION_CHANGE_RECORD = 5
    FENCE_BROKER_RECORD = 7
    UNFENCE_BROKER_RECORD = 8
    REMOVE_TOPIC_RECORD = 9
    DELEGATION_TOKEN_RECORD = 10
    USER_SCRAM_CREDENTIAL_RECORD = 11
    FEATURE_LEVEL_RECORD = 12
    CLIENT_QUOTA_RECORD = 14
    PRODUCER_IDS_RECORD = 15
    BROKER_REGISTRATION_CHANGE_RECORD = 17
    ACCESS_CONTROL_ENTRY_RECORD = 18
    REMOVE_ACCESS_CONTROL_ENTRY_RECORD = 19
    NO_OP_RECORD = 20
    ZK_MIGRATION_STATE_RECORD = 21
    REMOVE_USER_SCRAM_CREDENTIAL_RECORD = 22
    BEGIN_TRANSACTION_RECORD = 23
    END_TRANSACTION_RECORD = 24
    ABORT_TRANSACTION_RECORD = 25
    REMOVE_DELEGATION_TOKEN_RECORD = 26
    REGISTER_CONTROLLER_RECORD = 27
    CLEAR_ELR_RECORD = 28
    UNREGISTER_CONTROLLER_RECORD = 29


SCHEMA_NAMES: dict[RecordType, str] = {
    RecordType.REGISTER_BROKER_RECORD: "RegisterBrokerRecord",
    RecordType.UNREGISTER_BROKER_RECORD: "UnregisterBrokerRecord",
    RecordType.TOPIC_RECORD: "TopicRecord",
    RecordType.PARTITION_RECORD: "PartitionRecord",
    RecordType.CONFIG_RECORD: "ConfigRecord",
    RecordType.PARTITION_CHANGE_RECORD: "PartitionChangeRecord",
    RecordType.FENCE_BROKER_RECORD: "FenceBrokerRecord",
    RecordType.UNFENCE_BROKER_RECORD: "UnfenceBrokerRecord",
    RecordType.REMOVE_TOPIC_RECORD: "RemoveTopicRecord",
    RecordType.DELEGATION_TOKEN_RECORD: "DelegationTokenRecord",
    RecordType.USER_SCRAM_CREDENTIAL_RECORD: "UserScramCredentialRecord",
    RecordType.FEATURE_LEVEL_RECORD: "FeatureLevelRecord",
    RecordType.CLIENT_QUOTA_RECORD: "ClientQuotaRecord",
    RecordType.PRODUCER_IDS_RECORD: "ProducerIdsRecord",
    RecordType.BROKER_REGISTRATION_CHANGE_RECORD: "BrokerRegistrationChangeRecord",
    RecordType.ACCESS_CONTROL_ENTRY_RECORD: "AccessControlEntryRecord",
    RecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD: "RemoveAccessControlEntryRecord",
    RecordType.NO_OP_RECORD: "NoOpRecord",
    RecordType.ZK_MIGRATION_STATE_RECORD: "ZkMigrationStateRecord",
    RecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD: "RemoveUserScramCredentialRecord",
    RecordType.BEGIN_TRANSACTION_RECORD: "BeginTransactionRecord",
    RecordType.END_TRANSACTION_RECORD: "EndTransactionRecord",
    RecordType.ABORT_TRANSACTION_RECORD: "AbortTransactionRecord",
    RecordType.REMOVE_DELEGATION_TOKEN_RECORD: "RemoveDelegationTokenRecord",
    RecordType.REGISTER_CONTROLLER_RECORD: "RegisterControllerRecord",
    RecordType.CLEAR_ELR_RECORD: "ClearElrRecord",
    RecordType.UNREGISTER_CONTROLLER_RECORD: "UnregisterControllerRecord",
}
"""Each type's schema name (what kafka-dump-log prints)."""
