"""Loading whole directories and files into the image: reference vectors, synthetic logs, corpus."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from metashell.image.image import MetadataImage
from metashell.image.kafka_names import LEADER_RECOVERY_STATE_NAMES, metadata_version_name
from metashell.image.loader import ImageLoader, load_directory, load_file, load_plan, rebuild_at
from metashell.log.batch import RecordBatch
from metashell.log.directory import PlanStep, ReadPlan, open_metadata_dir
from metashell.log.encoding import build_batch
from metashell.log.files import iter_file_batches
from metashell.log.scan import iter_batches
from metashell.protocol.control import encode_control_record
from metashell.protocol.metadata import decode_metadata_record, encode_metadata_record
from metashell.protocol.uuid import uuid_from_str, uuid_to_str

SHARED = Path(__file__).resolve().parents[2] / "shared"
VECTORS = SHARED / "reference" / "test-vectors"
VECTOR_DIR = VECTORS / "metadata-log-dir"
CORPUS = SHARED / "corpus"
needs_vectors = pytest.mark.skipif(not VECTOR_DIR.is_dir(), reason="../shared reference pack is absent")
CORPUS_DIRS = sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []

T1 = bytes(range(1, 17))
T2 = bytes(range(17, 33))
INC = b"3" * 8 + b"D" * 8


# ------------------------------------------------------------------------------------------ helpers


def image_state(img: MetadataImage) -> dict[str, Any]:
    """Everything in the image except provenance and quorum bookkeeping, comparable with ==."""
    return {
        "brokers": img.cluster.brokers,
        "controllers": img.cluster.controllers,
        "topics": {k: (t.name, t.partitions) for k, t in img.topics.by_id.items()},
        "by_name": {n: t.id for n, t in img.topics.by_name.items()},
        "configs": img.configs,
        "quotas": img.client_quotas,
        "acls": img.acls,
        "scram": img.scram,
        "tokens": img.delegation_tokens,
        "features": (img.features.finalized, img.features.metadata_version, img.features.zk_migration_state),
        "producer_ids": img.producer_ids.next_producer_id,
    }


def rec(name: str, version: int, data: dict[str, Any]) -> bytes:
    return encode_metadata_record(name, version, data)


def ctl(name: str, data: dict[str, Any]) -> tuple[bytes, bytes]:
    return encode_control_record(name, data)


LEADER_CHANGE = ctl(
    "LeaderChange",
    {"Version": 0, "LeaderId": 1, "Voters": [{"VoterId": 1}], "GrantingVoters": [{"VoterId": 1}]},
)


def topic(name: str, tid: bytes) -> bytes:
    return rec("TopicRecord", 0, {"Name": name, "TopicId": tid})


def partition(tid: bytes, pid: int, leader: int = 1, epoch: int = 0, version: int = 0) -> bytes:
    return rec(
        "PartitionRecord",
        version,
        {
            "PartitionId": pid,
            "TopicId": tid,
            "Replicas": [1, 2],
            "Isr": [1, 2],
            "Leader": leader,
            "LeaderEpoch": epoch,
            "PartitionEpoch": epoch,
        },
    )


def config(name: str, value: str | None, resource: str = "foo") -> bytes:
    return rec("ConfigRecord", 0, {"ResourceType": 2, "ResourceName": resource, "Name": name, "Value": value})


def write_log(path: Path, batches: list[tuple[int, int, list[Any], int, bool]]) -> Path:
    """batches: (base offset, epoch, records, timestamp, control)."""
    path.write_bytes(b"".join(build_batch(b, e, recs, ts, control=c) for b, e, recs, ts, c in batches))
    return path


def write_snapshot(
    path: Path, epoch: int, records: list[bytes], header_ts: int, batch_ts: int = 5000
) -> Path:
    header = ctl("SnapshotHeader", {"Version": 0, "LastContainedLogTimestamp": header_ts})
    footer = ctl("SnapshotFooter", {"Version": 0})
    path.write_bytes(
        build_batch(0, epoch, [header], batch_ts, control=True)
        + build_batch(1, epoch, records, batch_ts)
        + build_batch(1 + len(records), epoch, [footer], batch_ts, control=True)
    )
    return path


def prov(img: MetadataImage) -> tuple[int, int, int]:
    p = img.provenance
    return p.offset, p.epoch, p.timestamp


# ------------------------------------------------------------------------------------------ reference vectors


def _expected_blocks() -> list[str]:
    text = (VECTORS / "expected-shell-output-for-metadata-log-dir.txt").read_text()
    return [b for b in re.split(r"^>> tree /image\n", text, flags=re.MULTILINE)[1:]]


def _kafka_time_ms(text: str) -> int:
    """'2023-11-14T22:13:26.5Z[UTC]' -> epoch milliseconds."""
    dt = datetime.fromisoformat(text.split("[")[0])
    return round(dt.timestamp() * 1000)


def _check_against_expected_tree(img: MetadataImage, block: str) -> None:
    m = re.search(r"provenance:\n\s+offset (-?\d+), epoch (-?\d+), time (\S+)", block)
    assert m, block
    assert prov(img) == (int(m.group(1)), int(m.group(2)), _kafka_time_ms(m.group(3)))
    mv = re.search(r"metadataVersion:\n\s+(\S+)", block).group(1)
    assert metadata_version_name(img.features.metadata_version) == mv
    assert re.search(r"zkMigrationState:\n\s+NONE", block) and img.features.zk_migration_state == 0
    pid = int(re.search(r"nextProducerId:\n\s+(-?\d+)", block).group(1))
    assert img.producer_ids.next_producer_id == pid
    # configs: "  TOPIC:foo:\n    cleanup.policy:\n      compact"
    cfg = re.search(r"^configs:\n((?:  .*\n)*)", block, re.MULTILINE).group(1)
    expected_cfg: dict[tuple[int, str], dict[str, str]] = {}
    for res, key, value in re.findall(r"^  TOPIC:(\S+):\n    (\S+):\n      (\S+)$", cfg, re.MULTILINE):
        expected_cfg.setdefault((2, res), {})[key] = value
    assert img.configs == expected_cfg
    assert not img.cluster.brokers and not img.cluster.controllers and not img.acls and not img.scram
    assert not img.client_quotas and not img.delegation_tokens and not img.features.finalized
    # topics/byName/foo
    names = re.findall(r"^  byName:\n((?:    .*\n)*)", block, re.MULTILINE)[0]
    topic_names = re.findall(r"^    (\S+):$", names, re.MULTILINE)
    assert sorted(img.topics.by_name) == topic_names
    for tname in topic_names:
        t = img.topics.by_name[tname]
        tid = re.search(
            rf"^    {re.escape(tname)}:\n(?:      .*\n)*?      id:\n        (\S+)", names, re.MULTILINE
        ).group(1)
        assert uuid_to_str(t.id) == tid and img.topics.by_id[uuid_from_str(tid)] is t
        for pid_text, fields in re.findall(
            r"^      (\d+):\n        PartitionRegistration\((.*)\)$", names, re.MULTILINE
        ):
            p = t.partitions[int(pid_text)]
            kv = dict(re.findall(r"(\w+)=(\[[^\]]*\]|[^,]+)", fields))

            def ints(s: str) -> tuple[int, ...]:
                return tuple(int(x) for x in s.strip("[]").split(", ") if x)

            assert p.replicas == ints(kv["replicas"]) and p.isr == ints(kv["isr"])
            assert p.removing_replicas == ints(kv["removingReplicas"])
            assert p.adding_replicas == ints(kv["addingReplicas"])
            assert p.elr == ints(kv["elr"]) and p.last_known_elr == ints(kv["lastKnownElr"])
            assert [uuid_to_str(d) for d in p.directories] == kv["directories"].strip("[]").split(", ")
            assert (p.leader, p.leader_epoch, p.partition_epoch) == (
                int(kv["leader"]),
                int(kv["leaderEpoch"]),
                int(kv["partitionEpoch"]),
            )
            assert LEADER_RECOVERY_STATE_NAMES[p.leader_recovery_state] == kv["leaderRecoveryState"]


@needs_vectors
def test_reference_directory_matches_kafka_after_snapshot_and_after_log() -> None:
    after_snapshot, after_log = _expected_blocks()
    result = load_directory(VECTOR_DIR)
    assert result.warnings == [] and result.fault_count == 0 and not result.partial
    _check_against_expected_tree(result.image, after_log)
    p = result.image.provenance
    assert p.snapshot.end_offset == 8 and p.snapshot.epoch == 1
    assert [Path(s).name for s in p.sources] == [
        "00000000000000000008-0000000001.checkpoint",
        "00000000000000000008.log",
    ]
    # time travel to the snapshot's last offset gives the first expected tree
    _check_against_expected_tree(rebuild_at(result, 7).image, after_snapshot)
    _check_against_expected_tree(load_directory(VECTOR_DIR, until_offset=7).image, after_snapshot)
    # the log from offset 0 alone (no snapshot) reaches the same state as the snapshot
    _check_against_expected_tree(
        load_file(VECTOR_DIR / "__cluster_metadata-0" / "00000000000000000000.log").image, after_snapshot
    )


@needs_vectors
def test_reference_directory_quorum_from_small_files_and_control_records() -> None:
    q = load_directory(VECTOR_DIR.parent / "metadata-log-dir" / "__cluster_metadata-0").image.quorum
    assert q.cluster_id == "MkU3OEVBNTcwNTJENDM2Qg" and q.node_id == 1
    assert q.directory_id == uuid_from_str("EREREREREREiIiIiIiIiIg")
    assert (q.leader_id, q.leader_epoch, q.kraft_version) == (1, 2, 1)
    assert [v.id for v in q.voters] == [1] and q.voters[0].endpoints[0].port == 9093


@needs_vectors
def test_load_file_follows_the_java_shell() -> None:
    part = VECTOR_DIR / "__cluster_metadata-0"
    # .checkpoint read as plain batches (SnapshotFileReader): relative offsets, batch time
    snap = load_file(part / "00000000000000000008-0000000001.checkpoint")
    assert prov(snap.image) == (6, 1, 1700000005000) and snap.warnings == []
    assert snap.image.provenance.snapshot.last_contained_log_timestamp == 1700000002000
    assert snap.image.configs == {(2, "foo"): {"cleanup.policy": "compact"}}
    # a .log: control batches do not move provenance
    log0 = load_file(part / "00000000000000000000.log")
    assert prov(log0.image) == (7, 1, 1700000002000)
    assert image_state(log0.image) == image_state(snap.image)


# ------------------------------------------------------------------------------------------ synthetic logs


def test_transaction_spanning_batches_publishes_only_when_closed(tmp_path: Path) -> None:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    write_log(
        part / "00000000000000000000.log",
        [
            (0, 1, [LEADER_CHANGE], 1000, True),
            (1, 1, [rec("BeginTransactionRecord", 0, {"Name": "t"}), topic("foo", T1)], 2000, False),
            (3, 1, [partition(T1, 0), rec("EndTransactionRecord", 0, {})], 3000, False),
            (5, 1, [rec("BeginTransactionRecord", 0, {}), topic("bar", T2)], 4000, False),
            (7, 1, [rec("AbortTransactionRecord", 0, {})], 5000, False),
            (8, 2, [LEADER_CHANGE], 6000, True),
            (9, 2, [rec("BeginTransactionRecord", 0, {}), config("k", "v")], 7000, False),
        ],
    )
    result = load_directory(tmp_path)
    img = result.image
    assert sorted(img.topics.by_name) == ["foo"] and 0 in img.topics.by_name["foo"].partitions
    assert img.configs == {}  # still inside the last transaction
    assert prov(img) == (8, 2, 6000)  # the control batch published, not batch 9
    assert result.fault_count == 0
    assert any("ends inside a metadata transaction" in w.message for w in result.warnings)
    for offset, expected in [(2, (0, 1, 1000)), (4, (4, 1, 3000)), (6, (4, 1, 3000)), (7, (7, 1, 5000))]:
        assert prov(rebuild_at(result, offset).image) == expected, offset
    assert sorted(rebuild_at(result, 4).image.topics.by_name) == ["foo"]
    assert rebuild_at(result, 3).image.topics.by_id == {}  # transaction not closed yet


def foo_snapshot_at_10(tmp_path: Path, *records: bytes) -> Path:
    """A metadata directory whose snapshot ends at offset 9 (epoch 3) with topic foo (id T1) and
    ``records`` after it; its partition directory."""
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    write_snapshot(
        part / "00000000000000000010-0000000003.checkpoint",
        3,
        [
            rec("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 21}),
            topic("foo", T1),
            *records,
        ],
        9999,
    )
    return part


def test_snapshot_then_log_and_partial_log(tmp_path: Path) -> None:
    part = foo_snapshot_at_10(tmp_path, partition(T1, 0, epoch=4), config("retention.ms", "1"))
    write_log(
        part / "00000000000000000010.log",
        [
            (
                10,
                3,
                [rec("PartitionChangeRecord", 0, {"PartitionId": 0, "TopicId": T1, "Leader": 2})],
                11000,
                False,
            ),
            (11, 3, [rec("RemoveTopicRecord", 0, {"TopicId": T1}), topic("bar", T2)], 12000, False),
        ],
    )
    result = load_directory(part)
    img = result.image
    assert prov(img) == (12, 3, 12000) and result.warnings == [] and not result.partial
    assert sorted(img.topics.by_name) == ["bar"] and img.configs == {}
    at10 = rebuild_at(result, 10).image
    p = at10.topics.by_name["foo"].partitions[0]
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (2, 5, 5) and prov(at10) == (10, 3, 11000)
    at9 = rebuild_at(result, 9).image
    assert prov(at9) == (9, 3, 9999) and at9.configs == {(2, "foo"): {"retention.ms": "1"}}
    # without the snapshot the log alone is partial
    (part / "00000000000000000010-0000000003.checkpoint").unlink()
    partial = load_directory(part)
    assert partial.partial and any(w.kind == "partial-image" for w in partial.warnings)
    assert partial.fault_count == 2  # PartitionChange and RemoveTopic for an unknown topic
    assert {w.offset for w in partial.faults} == {10, 11}


def test_a_partition_of_a_topic_removed_in_the_same_batch_is_a_fault(tmp_path: Path) -> None:
    """A PartitionRecord after a RemoveTopicRecord of its topic, in the batch where a partition of
    that topic was just added, names a topic that is gone: a fault, on both engines (the native
    replay kept the last topic it had found across the RemoveTopicRecord, which Python applies, and
    added the partition to the removed topic)."""
    part = foo_snapshot_at_10(tmp_path, partition(T1, 0))
    remove = rec("RemoveTopicRecord", 0, {"TopicId": T1})
    change = rec("PartitionChangeRecord", 2, {"PartitionId": 1, "TopicId": T1, "Leader": 2})
    write_log(
        part / "00000000000000000010.log",
        [
            (10, 3, [partition(T1, 1, version=2)], 11000, False),  # the loader's first log batch
            (11, 3, [partition(T1, 2, version=2), remove, partition(T1, 3, version=2), change], 12000, False),
            (15, 3, [partition(T1, 4, version=2)], 13000, False),
        ],
    )
    result = load_directory(part, timeline=True)
    assert [
        (w.offset, "no topic with id" in str(w) or "unable to find" in str(w)) for w in result.faults
    ] == [
        (13, True),
        (14, True),
        (15, True),
    ]
    assert result.image.topics.by_name == {} and result.image.topics.by_id == {}


def test_file_mode_drops_deltas_kafka_cannot_apply(tmp_path: Path) -> None:
    """A lone later segment naming partitions of a topic it never created: Kafka's loader fails to
    apply that whole delta (one batch, or a whole transaction) and keeps the image from before it."""
    change = rec("PartitionChangeRecord", 0, {"PartitionId": 0, "TopicId": T1, "Leader": 2})
    seg = write_log(
        tmp_path / "00000000000000000010.log",
        [
            (10, 3, [config("a", "1"), change], 1000, False),  # dropped whole
            (12, 3, [config("b", "2")], 2000, False),  # applied
            (13, 3, [rec("BeginTransactionRecord", 0, {}), topic("bar", T2)], 3000, False),
            (15, 3, [partition(T1, 1), rec("EndTransactionRecord", 0, {})], 4000, False),  # txn dropped
            (17, 3, [topic("foo", T1), change, config("c", "3")], 5000, False),  # topic known again
        ],
    )
    result = load_file(seg)
    img = result.image
    assert img.configs == {(2, "foo"): {"b": "2", "c": "3"}}
    assert sorted(img.topics.by_name) == ["foo"] and img.topics.by_name["foo"].partitions == {}
    assert prov(img) == (19, 3, 5000)
    dropped = [w for w in result.warnings if "dropped" in w.message]
    assert [w.offset for w in dropped] == [10, 13]
    assert "offsets 10..11 dropped" in dropped[0].message and uuid_to_str(T1) in dropped[0].message
    # a directory load keeps what it can (no single answer to copy there), as before
    part = tmp_path / "d" / "__cluster_metadata-0"
    part.mkdir(parents=True)
    (part / seg.name).write_bytes(seg.read_bytes())
    whole = load_directory(part).image
    assert whole.configs == {(2, "foo"): {"a": "1", "b": "2", "c": "3"}}
    assert sorted(whole.topics.by_name) == ["bar", "foo"]


def test_torn_tail_and_bad_records_are_warnings(tmp_path: Path) -> None:
    seg = write_log(
        tmp_path / "00000000000000000000.log",
        [
            (0, 1, [topic("foo", T1), b"\x01\x63\x00", b"\x01\x02\x00"], 1000, False),
            (3, 1, [config("k", "v")], 2000, False),
        ],
    )
    seg.write_bytes(seg.read_bytes()[:-5])  # cut the last batch
    result = load_file(seg)
    kinds = [(w.kind, w.offset) for w in result.warnings]
    assert ("unknown", 1) in kinds and ("decode", 2) in kinds and "torn-tail" in [k for k, _ in kinds]
    assert result.fault_count == 0 and "foo" in result.image.topics.by_name and result.image.configs == {}
    assert prov(result.image) == (2, 1, 1000)
    assert any("byte offset" in str(w) for w in result.warnings if w.kind == "torn-tail")


def test_live_batches_and_snapshot_replacing_the_image() -> None:
    loader = ImageLoader()
    stream = build_batch(0, 1, [LEADER_CHANGE], 100, control=True) + build_batch(
        1, 1, [topic("old", T1), partition(T1, 0)], 200
    )
    for batch in iter_batches(stream, "fetch"):
        loader.apply_batch(batch, batch.entries())
    assert sorted(loader.image.topics.by_name) == ["old"] and prov(loader.image) == (2, 1, 200)
    assert loader.image.quorum.leader_id == 1
    before = loader.image
    loader.apply_batch(
        RecordBatch.parse(
            build_batch(
                3,
                1,
                [
                    rec("ProducerIdsRecord", 0, {"BrokerId": 1, "BrokerEpoch": 1, "NextProducerId": 5000}),
                    rec("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 21}),
                    rec("FeatureLevelRecord", 0, {"Name": "group.version", "FeatureLevel": 1}),
                    rec("BeginTransactionRecord", 0, {}),
                ],
                300,
            )
        )
    )
    assert loader.replayer.in_transaction
    snap = build_batch(
        0, 4, [ctl("SnapshotHeader", {"Version": 0, "LastContainedLogTimestamp": 777})], 900, control=True
    ) + build_batch(1, 4, [topic("new", T2), rec("EndTransactionRecord", 0, {})], 900)
    loader.apply_snapshot([(b, None) for b in iter_batches(snap, "snapshot")], 50, 4, "snapshot")
    img = loader.image
    assert img is before  # replaced in place
    assert sorted(img.topics.by_name) == ["new"] and img.topics.by_id.keys() == {T2}
    assert prov(img) == (49, 4, 777) and img.quorum.leader_id == 1  # quorum info survives
    # finishSnapshot semantics: finalized features go, metadata.version and producer ids stay
    assert img.features.finalized == {} and img.features.metadata_version == 21
    assert img.producer_ids.next_producer_id == 5000
    # the open transaction was dropped; a transaction marker inside a snapshot is a fault
    assert [w.offset for w in loader.warnings] == [None, 2] and loader.replayer.fault_count == 2
    assert not loader.replayer.in_transaction and not loader.replayer.snapshot_mode
    tail = build_batch(50, 4, [config("k", "v", "new")], 1000)
    batch = RecordBatch.parse(tail)
    loader.apply_batch(batch)
    assert prov(img) == (50, 4, 1000) and img.configs == {(2, "new"): {"k": "v"}}
    # begin_snapshot() followed by log batches (no finish): the log's transactions still work
    loader.begin_snapshot()
    loader.apply_batch(
        RecordBatch.parse(
            build_batch(
                0,
                5,
                [rec("BeginTransactionRecord", 0, {}), topic("t", T1), rec("EndTransactionRecord", 0, {})],
                2000,
            )
        )
    )
    assert sorted(img.topics.by_name) == ["t"] and loader.replayer.fault_count == 2
    loader.reset()
    assert img.is_empty() and prov(img) == (-1, -1, -1) and loader.image is img


def test_not_a_directory_and_missing_file_raise_user_errors(tmp_path: Path) -> None:
    from metashell.errors import MetashellError

    with pytest.raises(MetashellError):
        load_directory(tmp_path / "nope")
    with pytest.raises(MetashellError):
        load_file(tmp_path / "nope.log")


# ------------------------------------------------------------------------------------------ corpus


def _readme_rows() -> dict[str, dict[str, Any]]:
    rows = {}
    for line in (CORPUS / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 7 or not (CORPUS / cells[0]).is_dir():
            continue
        mv_cell = cells[2]
        mv = None if mv_cell.startswith("none") else int(mv_cell.split()[0])
        feats = dict(re.findall(r"([\w.]+)=(\d+)", mv_cell))
        notes = cells[6]
        qs = re.search(r"leader=(\d+) epoch=(\d+) voters=\[([\d, ]*)\]", notes)
        brokers = re.search(r"RegisterBroker ids=\[([\d, ]*)\]", notes).group(1)
        controllers = re.search(r"RegisterController ids=\[([\d, ]*)\]", notes).group(1)

        def ids(s: str) -> list[int]:
            return sorted(int(x) for x in s.split(",") if x.strip())

        rows[cells[0]] = {
            "mv": mv,
            "features": {k: int(v) for k, v in feats.items()},
            "records": int(cells[3].split()[0]),
            "checkpoints": int(cells[4]),
            "leader": int(qs.group(1)),
            "epoch": int(qs.group(2)),
            "voters": ids(qs.group(3)),
            "brokers": ids(brokers),
            "controllers": ids(controllers),
        }
    return rows


def _independent_topic_count(directory: Path) -> tuple[set[bytes], set[tuple[bytes, int]]]:
    """Topics and partitions by scanning every record of the log directly (no image code)."""
    d = open_metadata_dir(directory)
    topics: set[bytes] = set()
    parts: set[tuple[bytes, int]] = set()
    for seg in d.segments:
        for batch in iter_file_batches(seg.path, lenient_tail=seg is d.segments[-1], warn=lambda w: None):
            if batch.is_control:
                continue
            for _off, _ts, _key, value in batch.entries():
                assert value is not None  # a data record always has a value
                r = decode_metadata_record(value)
                if r.name == "TopicRecord":
                    topics.add(r.data["TopicId"])
                elif r.name == "RemoveTopicRecord":
                    topics.discard(r.data["TopicId"])
                    parts = {p for p in parts if p[0] != r.data["TopicId"]}
                elif r.name == "PartitionRecord":
                    parts.add((r.data["TopicId"], r.data["PartitionId"]))
    return topics, parts


@pytest.mark.skipif(not CORPUS_DIRS, reason="../shared/corpus is absent")
@pytest.mark.parametrize("directory", CORPUS_DIRS, ids=lambda p: p.name)
def test_corpus_directory_loads_with_zero_faults(directory: Path) -> None:
    row = _readme_rows()[directory.name]
    result = load_directory(directory)
    img = result.image
    assert result.fault_count == 0, [str(w) for w in result.faults[:5]]
    assert result.warnings == [], [str(w) for w in result.warnings[:5]]
    assert img.features.metadata_version == row["mv"]
    assert img.features.finalized == row["features"]
    assert sorted(img.cluster.brokers) == row["brokers"]
    assert sorted(img.cluster.controllers) == row["controllers"]
    q = img.quorum
    assert (q.leader_id, q.leader_epoch, sorted(v.id for v in q.voters)) == (
        row["leader"],
        row["epoch"],
        row["voters"],
    )
    assert img.provenance.offset == row["records"] - 1  # every log offset is covered
    if row["checkpoints"] == 0:
        assert result.records == row["records"] and img.provenance.snapshot is None
    topics, parts = _independent_topic_count(directory)
    assert set(img.topics.by_id) == topics
    assert {(t.id, p) for t in img.topics.by_id.values() for p in t.partitions} == parts
    assert {t.name for t in img.topics.by_id.values()} == set(img.topics.by_name)


@pytest.mark.skipif(not CORPUS_DIRS, reason="../shared/corpus is absent")
@pytest.mark.parametrize(
    "directory", [d for d in CORPUS_DIRS if list(d.glob("*/*.checkpoint"))], ids=lambda p: p.name
)
def test_corpus_snapshots_equal_replaying_the_log(directory: Path) -> None:
    """Kafka wrote each snapshot from its own image: replaying the log up to the snapshot's last
    offset must give exactly the snapshot's content, and snapshot + tail must equal the full log."""
    d = open_metadata_dir(directory)
    if not d.segments or d.segments[0].base_offset != 0:
        pytest.skip("the log no longer starts at offset 0")
    full_plan = ReadPlan(
        [
            PlanStep("log", s.path, str(s.path), lenient_tail=s is d.segments[-1], base_offset=s.base_offset)
            for s in d.segments
        ],
        None,
        0,
    )
    full = load_plan(full_plan)
    assert full.fault_count == 0
    assert image_state(full.image) == image_state(load_directory(directory).image)
    for snap in d.snapshots:
        if snap.is_bootstrap:
            continue
        from_snapshot = load_plan(
            ReadPlan(
                [PlanStep("snapshot", snap.path, str(snap.path), snapshot=snap)],
                snap,
                snap.end_offset,
                directory=None,
            )
        )
        from_log = load_plan(full_plan, until_offset=snap.end_offset - 1)
        assert image_state(from_snapshot.image) == image_state(from_log.image), snap.name
        assert prov(from_snapshot.image)[:2] == prov(from_log.image)[:2] == (snap.end_offset - 1, snap.epoch)
