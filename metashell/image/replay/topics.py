"""Topics and partitions: Kafka's ``TopicsDelta``, ``TopicDelta`` and ``PartitionRegistration.merge``."""

from __future__ import annotations

from typing import Any

from metashell.image.kafka_names import CONFIG_RESOURCE_TOPIC
from metashell.protocol.record_type import RecordType
from metashell.protocol.uuid import uuid_to_str

from ..model import EMPTY, MIGRATING_DIR, Partition, Topic
from ..partition import journal_entry, make_partition, merge_change
from ..partition_records import DECODERS, PARTITION_CHANGE_FIELDS, PARTITION_FIELDS
from ..timeline import MISSING
from .state import Fault, ReplayState, fast_rule, rule

__all__ = ["DECODERS", "PARTITION_CHANGE_FIELDS", "PARTITION_FIELDS", "TopicRules"]

# Where the fields the rules check are in the decoded tuples (read by place, not unpacked whole: a
# field Kafka adds to the records then changes nothing here).
_REPLICAS, _RECOVERY, _DIRECTORIES = (
    PARTITION_FIELDS.index(f) for f in ("Replicas", "LeaderRecoveryState", "Directories")
)
_C_REPLICAS, _C_RECOVERY, _C_DIRECTORIES = (
    PARTITION_CHANGE_FIELDS.index(f) for f in ("Replicas", "LeaderRecoveryState", "Directories")
)


def _record_tuple(d: dict[str, Any], fields: tuple[str, ...]) -> tuple[Any, ...]:
    """A record decoded as a dict, as the positional tuple of ``fields`` the fast rules take (arrays
    as tuples, which interning needs; a field an older version lacks is None): what the generated
    ``make_partition`` and ``merge_change`` read."""
    return tuple(tuple(v) if type(v) is list else v for v in map(d.get, fields))


class TopicRules(ReplayState):
    """TopicRecord, PartitionRecord, PartitionChangeRecord, RemoveTopicRecord, ClearElrRecord."""

    @rule(RecordType.TOPIC_RECORD)
    def _topic(self, d: dict[str, Any], offset: int) -> None:
        # TopicsDelta: a TopicRecord (re)creates the topic with no partitions, replacing any topic
        # with the same id; byName is updated for the new name (an old name is not removed).
        topics = self._image.topics
        self.orphan_topics.discard(d["TopicId"])
        topic = Topic(d["Name"], d["TopicId"], {})
        self._set(topics.by_id, topic.id, topic)
        self._set(topics.by_name, topic.name, topic)

    @fast_rule(RecordType.PARTITION_RECORD)
    def _partition_tuple(self, t: tuple[Any, ...], offset: int) -> None:
        """PartitionRecord as a ``PARTITION_FIELDS`` tuple (the snapshot hot path).  Anything that
        could fault is handed to :meth:`_partition`, which reports it."""
        pid = t[0]
        rep = t[_REPLICAS]
        lrs = t[_RECOVERY]
        dirs = t[_DIRECTORIES]
        topic = self._topics_by_id.get(t[1])
        if topic is None or (dirs and len(dirs) != len(rep)) or (lrs != 0 and lrs != 1):
            self._partition(dict(zip(PARTITION_FIELDS, t, strict=False)), offset)
            return
        intern = self._intern
        replicas = intern(rep, rep) if rep else EMPTY
        if not dirs or dirs.count(MIGRATING_DIR) == len(dirs):  # defaultToMigrating
            directories = self._migrating_dirs(len(replicas))
        else:
            directories = intern(dirs, dirs)
        partitions = topic.partitions
        j = self.journal
        if j is not None:  # _keep_slot, inline: a million of these per snapshot
            j.append((partitions, pid, partitions.get(pid, MISSING)))
        partitions[pid] = make_partition(t, intern, replicas, directories)

    @fast_rule(RecordType.PARTITION_CHANGE_RECORD)
    def _partition_change_tuple(self, t: tuple[Any, ...], offset: int) -> None:
        """PartitionChangeRecord as a ``PARTITION_CHANGE_FIELDS`` tuple: the common ISR / leader /
        ELR change.  Replica or directory changes, bad recovery states and unknown partitions are
        handed to :meth:`_partition_change` (same merge, with its checks and faults)."""
        topic = self._topics_by_id.get(t[1])
        p = None if topic is None else topic.partitions.get(t[0])
        lrs = t[_C_RECOVERY]
        if p is None or t[_C_REPLICAS] is not None or t[_C_DIRECTORIES] is not None or lrs < -1 or lrs > 1:
            self._partition_change(dict(zip(PARTITION_CHANGE_FIELDS, t, strict=False)), offset)
            return
        j = self.journal
        if j is not None:
            j.append(journal_entry(p))
        merge_change(p, self._intern, t)

    @rule(RecordType.PARTITION_RECORD)
    def _partition(self, d: dict[str, Any], offset: int) -> None:
        topic = self._topics_by_id.get(d["TopicId"])
        if topic is None:
            self.orphan_topics.add(d["TopicId"])
            raise Fault(f"partition {d['PartitionId']}: no topic with id {uuid_to_str(d['TopicId'])}")
        intern = self._intern
        v = d["Replicas"]
        replicas = intern(x, x) if v and (x := tuple(v)) else EMPTY
        v = d.get("Directories")
        if v and (len(v) != len(replicas)):
            raise Fault(f"partition {d['PartitionId']}: {len(v)} directories for {len(replicas)} replicas")
        if not v or v.count(MIGRATING_DIR) == len(v):  # defaultToMigrating
            directories = self._migrating_dirs(len(replicas))
        else:
            directories = intern(x, x) if (x := tuple(v)) else EMPTY
        lrs = d["LeaderRecoveryState"]
        if lrs != 0 and lrs != 1:
            raise Fault(f"partition {d['PartitionId']}: unknown leader recovery state {lrs}")
        self._keep_slot(topic.partitions, d["PartitionId"])
        t = _record_tuple(d, PARTITION_FIELDS)
        topic.partitions[d["PartitionId"]] = make_partition(t, intern, replicas, directories)

    @rule(RecordType.PARTITION_CHANGE_RECORD)
    def _partition_change(self, d: dict[str, Any], offset: int) -> None:
        """``PartitionRegistration.merge``: each field null/-1/-2 = unchanged; partitionEpoch + 1."""
        topic = self._topics_by_id.get(d["TopicId"])
        pid = d["PartitionId"]
        p = None if topic is None else topic.partitions.get(pid)
        if p is None:
            if topic is None:
                self.orphan_topics.add(d["TopicId"])
            raise Fault(f"unable to find partition {uuid_to_str(d['TopicId'])}:{pid}")
        rep = d["Replicas"]
        dirs = d.get("Directories")
        lrs = d["LeaderRecoveryState"]
        self.keep_state(p)
        if rep is not None or dirs is not None or lrs < -1 or lrs > 1:
            self._partition_change_checked(d, p, rep, dirs, lrs)
        merge_change(p, self._intern, _record_tuple(d, PARTITION_CHANGE_FIELDS))

    def _partition_change_checked(
        self, d: dict[str, Any], p: Partition, rep: list[Any] | None, dirs: list[Any] | None, lrs: int
    ) -> None:
        """The replica/directory part of ``PartitionRegistration.merge`` (Kafka 4.4.0), which can
        fault: validate, then set both.

        New directories = the record's when it has them (non-null), else the old ones -- they are
        *not* remapped when only the replicas change; all-MIGRATING (or empty) directories become a
        MIGRATING array sized to the new replicas; any other length mismatch is a fault.
        """
        pid = d["PartitionId"]
        t = self._t
        replicas = p.replicas if rep is None else t(rep)
        if dirs is None:
            directories = p.directories
        else:
            if rep is not None and dirs and len(rep) != len(dirs):
                raise Fault(f"partition {pid}: {len(dirs)} directories for {len(rep)} replicas")
            directories = t(dirs)
        if directories.count(MIGRATING_DIR) == len(directories):
            directories = self._migrating_dirs(len(replicas))
        if directories and len(directories) != len(replicas):
            raise Fault(f"partition {pid}: the lengths for replicas and directories do not match")
        if lrs < -1 or lrs > 1:
            raise Fault(f"partition {pid}: unknown leader recovery state {lrs}")
        p.replicas = replicas
        p.directories = directories

    @rule(RecordType.REMOVE_TOPIC_RECORD)
    def _remove_topic(self, d: dict[str, Any], offset: int) -> None:
        topics = self._image.topics
        self.orphan_topics.discard(d["TopicId"])
        topic: Topic | None = self._pop(topics.by_id, d["TopicId"])
        if topic is None:
            raise Fault(f"unable to delete topic with id {uuid_to_str(d['TopicId'])}: no such topic found")
        if topics.by_name.get(topic.name) is topic:
            self._pop(topics.by_name, topic.name)
        self._pop(self._image.configs, (CONFIG_RESOURCE_TOPIC, topic.name))

    @rule(RecordType.CLEAR_ELR_RECORD)
    def _clear_elr(self, d: dict[str, Any], offset: int) -> None:
        """Kafka 4.x (KIP-966) ``TopicsDelta/TopicDelta.replay(ClearElrRecord)``: every partition
        with a non-empty ELR or last-known ELR gets both emptied through a PartitionChangeRecord
        merge, hence partitionEpoch + 1; an empty name means every topic."""
        name = d["TopicName"]
        topics = self._image.topics
        if name:
            topic = topics.by_name.get(name)
            if topic is None:
                raise Fault(f"unable to clear elr for topic with name {name}: no such topic found")
            targets: Any = (topic,)
        else:
            targets = topics.by_id.values()
        for topic in targets:
            for p in topic.partitions.values():
                if p.elr or p.last_known_elr:
                    self.keep_state(p)
                    p.elr = EMPTY
                    p.last_known_elr = EMPTY
                    p.partition_epoch += 1
