"""The ``kraft-metadata`` Spark data source, run by real PySpark in local mode (2 cores).

On every fixture and corpus directory: each image table equals what the in-process loader's image
holds (zero differences); ``records`` has exactly the files, offsets and payloads that Kafka's
``kafka-dump-log --cluster-metadata-decoder`` prints; ``partition_history`` at several offsets
equals the in-process image loaded up to that offset.  Plus splitting large files, ``asOf``,
redaction and a corrupt segment that becomes a row of ``errors``.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, corpus_dirs
from crc32c import crc32c
from test_cli import one_line, run_cli

from metashell.image.image import MetadataImage
from metashell.image.kafka_names import (
    ACL_OPERATION_NAMES,
    CONFIG_RESOURCE_TYPE_NAMES,
    LEADER_RECOVERY_STATE_NAMES,
    METADATA_VERSION_FEATURE,
    SCRAM_MECHANISM_NAMES,
)
from metashell.image.loader import load_directory
from metashell.protocol.kafka_json import record_type_name
from metashell.protocol.uuid import uuid_to_str
from metashell.spark.image_rows import node_rows

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]

FIXTURE_DIRS = [
    pytest.param(p, id=p.name) for p in sorted(FIXTURES.iterdir()) if (p / "__cluster_metadata-0").is_dir()
]
SPARK_FIXTURES = [
    p
    for p in FIXTURE_DIRS
    if not (p.id.startswith(("kafka-3.", "kafka-4.")) and p.id.count("-") == 1)
    or p.id in ("kafka-3.3", "kafka-4.4")
]
"""The fixtures each per-directory Spark job runs on: of the twelve release lines, the oldest and the
newest. The tables come from the loader and decoders, which the other ten are checked with record
for record elsewhere (test_dump_log_oracle, test_native_differential, test_doctor), and each line
would cost three Spark jobs; the fleet test below still reads every fixture."""
ALL_DIRS = SPARK_FIXTURES + corpus_dirs()


def table(spark: Any, name: str, path: Any, **options: str) -> list[dict[str, Any]]:
    reader = spark.read.format("kraft-metadata").option("table", name)
    for k, v in options.items():
        reader = reader.option(k, v)
    return [
        r.asDict(recursive=True) for r in reader.load(path if isinstance(path, list) else str(path)).collect()
    ]


def expected_tables(img: MetadataImage) -> dict[str, set[Any]]:
    """The image, written independently of metashell.spark.images: what each table must hold."""

    def ints(v: Any) -> tuple[int, ...]:
        return tuple(v)

    out: dict[str, set[Any]] = {}
    out["topics"] = {(uuid_to_str(t.id), t.name, len(t.partitions)) for t in img.topics.by_id.values()}
    out["partitions"] = {
        (
            t.name,
            i,
            p.leader,
            p.leader_epoch,
            p.partition_epoch,
            ints(p.replicas),
            ints(p.isr),
            ints(p.elr),
            ints(p.last_known_elr),
            ints(p.adding_replicas),
            ints(p.removing_replicas),
            tuple(uuid_to_str(d) for d in p.directories),
            LEADER_RECOVERY_STATE_NAMES[p.leader_recovery_state],
        )
        for t in img.topics.by_id.values()
        for i, p in t.partitions.items()
    }
    out["brokers"] = {
        (
            b.id,
            b.epoch,
            b.rack,
            b.fenced,
            b.in_controlled_shutdown,
            tuple(sorted((e.name, e.host, e.port) for e in b.listeners.values())),
        )
        for b in img.cluster.brokers.values()
    }
    out["controllers"] = {
        (
            c.id,
            tuple(
                sorted(
                    (e.name, e.host, e.port)
                    for e in (c.listeners.values() if isinstance(c.listeners, dict) else c.listeners)
                )
            ),
        )
        for c in img.cluster.controllers.values()
    }
    out["configs"] = {(CONFIG_RESOURCE_TYPE_NAMES[t], n, k) for (t, n), kv in img.configs.items() for k in kv}
    out["acls"] = {
        (uuid_to_str(i), a.resource_name, a.principal, a.host, ACL_OPERATION_NAMES[a.operation])
        for i, a in img.acls.items()
    }
    out["quotas"] = {(k, v) for kv in img.client_quotas.values() for k, v in kv.items()}
    out["features"] = {(n, lv) for n, lv in img.features.finalized.items()}
    if img.features.metadata_version is not None:
        out["features"].add((METADATA_VERSION_FEATURE, img.features.metadata_version))
    out["scram_users"] = {(u, SCRAM_MECHANISM_NAMES[m]) for (m, u) in img.scram}
    pid = img.producer_ids
    out["producer_ids"] = {(pid.next_producer_id, pid.broker_id)} if pid.next_producer_id >= 0 else set()
    out["nodes"] = {
        (r["role"], r["leader_id"], tuple(r["voters"]), r["last_epoch"]) for r in node_rows(img, True)
    }
    return out


def got_tables(spark: Any, path: Path, **options: str) -> dict[str, set[Any]]:
    out: dict[str, set[Any]] = {}
    out["topics"] = {
        (r["topic_id"], r["topic_name"], r["partition_count"])
        for r in table(spark, "topics", path, **options)
    }
    out["partitions"] = {
        (
            r["topic_name"],
            r["partition_id"],
            r["leader"],
            r["leader_epoch"],
            r["partition_epoch"],
            tuple(r["replicas"]),
            tuple(r["isr"]),
            tuple(r["elr"]),
            tuple(r["last_known_elr"]),
            tuple(r["adding_replicas"]),
            tuple(r["removing_replicas"]),
            tuple(r["directories"]),
            r["leader_recovery_state"],
        )
        for r in table(spark, "partitions", path, **options)
    }
    out["brokers"] = {
        (
            r["broker_id"],
            r["broker_epoch"],
            r["rack"],
            r["fenced"],
            r["in_controlled_shutdown"],
            tuple(sorted((e["name"], e["host"], e["port"]) for e in r["listeners"])),
        )
        for r in table(spark, "brokers", path, **options)
    }
    out["controllers"] = {
        (r["controller_id"], tuple(sorted((e["name"], e["host"], e["port"]) for e in r["listeners"])))
        for r in table(spark, "controllers", path, **options)
    }
    out["configs"] = {
        (r["resource_type"], r["resource_name"], r["name"]) for r in table(spark, "configs", path, **options)
    }
    out["acls"] = {
        (r["acl_id"], r["resource_name"], r["principal"], r["host"], r["operation"])
        for r in table(spark, "acls", path, **options)
    }
    out["quotas"] = {(r["key"], r["value"]) for r in table(spark, "quotas", path, **options)}
    out["features"] = {(r["name"], r["level"]) for r in table(spark, "features", path, **options)}
    out["scram_users"] = {
        (r["user_name"], r["mechanism"]) for r in table(spark, "scram_users", path, **options)
    }
    out["producer_ids"] = {
        (r["next_producer_id"], r["broker_id"]) for r in table(spark, "producer_ids", path, **options)
    }
    out["nodes"] = {
        (r["role"], r["leader_id"], tuple(r["voters"]), r["last_epoch"])
        for r in table(spark, "nodes", path, **options)
    }
    return out


@pytest.mark.parametrize("path", ALL_DIRS)
def test_every_image_table_equals_the_in_process_image(spark: Any, path: Path) -> None:
    img = load_directory(path, salvage=True).image
    want, got = expected_tables(img), got_tables(spark, path)
    assert sum(len(v) for v in want.values()) > 0
    for name in want:
        assert got[name] == want[name], (name, got[name] ^ want[name])


def test_as_of_gives_the_image_after_that_offset(spark: Any) -> None:
    path = FIXTURES / "kafka-4.4-broker"
    for offset in (60, 200, 300):
        want = expected_tables(load_directory(path, until_offset=offset).image)
        got = got_tables(spark, path, asOf=str(offset))
        assert got == want, offset
        assert {r["offset"] for r in table(spark, "topics", path, asOf=str(offset))} == {offset}


def test_config_values_and_scram_secrets_are_redacted_unless_asked(spark: Any) -> None:
    path = FIXTURES / "kafka-4.4-broker"  # its throttle rates are dynamic broker configs no ConfigDef types
    img = load_directory(path).image
    secret = {
        (CONFIG_RESOURCE_TYPE_NAMES[t], n, k): v for (t, n), kv in img.configs.items() for k, v in kv.items()
    }
    rows = table(spark, "configs", path)
    assert any(r["sensitive"] for r in rows)
    for r in rows:
        assert r["value"] == (
            "[redacted]" if r["sensitive"] else secret[(r["resource_type"], r["resource_name"], r["name"])]
        )
    shown = table(spark, "configs", path, redact="false")
    assert all(r["value"] == secret[(r["resource_type"], r["resource_name"], r["name"])] for r in shown)
    scram = [
        json.loads(r["record_json"])
        for r in table(spark, "records", path)
        if r["record_type"] == "UserScramCredentialRecord"
    ]
    assert scram and all(d["salt"] == d["storedKey"] == d["serverKey"] == "[redacted]" for d in scram)
    clear = [
        json.loads(r["record_json"])
        for r in table(spark, "records", path, redact="false")
        if r["record_type"] == "UserScramCredentialRecord"
    ]
    assert all(d["salt"] != "[redacted]" for d in clear)


def _files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.suffix in (".log", ".checkpoint") and p.is_file())


@pytest.mark.kafka
@pytest.mark.parametrize("path", ALL_DIRS)
def test_records_are_what_kafka_dump_log_prints(spark: Any, path: Path, kafka_oracle: Any) -> None:
    from test_dump_log_oracle import _norm, parse_dump

    rows = table(spark, "records", path, redact="false")
    by_file: dict[str, dict[int, dict[str, Any]]] = {}
    for r in rows:
        assert r["offset"] not in by_file.setdefault(r["file"], {}), (
            "offset twice in one file",
            r["file"],
            r["offset"],
        )
        by_file[r["file"]][r["offset"]] = r
    files = [f for f in _files(path) if f.name != "bootstrap.checkpoint" or f.parent.name.startswith("__")]
    for f in _files(path):
        _k_batches, k_records = parse_dump(kafka_oracle.dump_log(f))
        mine = {o: r for o, r in by_file.get(str(f), {}).items()}
        assert sorted(mine) == sorted(k_records), f
        for offset, k in k_records.items():
            r = mine[offset]
            if isinstance(k, dict):
                assert (record_type_name(r["record_type"]), r["record_version"]) == (
                    k["type"],
                    k["version"],
                ), (f, offset)
                assert _norm(json.loads(r["record_json"])) == _norm(k["data"]), (f, offset)
            elif k[0] != "undecodable":
                assert r["is_control"] and r["record_type"] == k[0], (f, offset)
                assert _norm(json.loads(r["record_json"])) == _norm(k[1]), (f, offset)
    assert set(by_file) <= {str(f) for f in files} | {str(f) for f in _files(path)}


def test_records_have_their_keys_typed(spark: Any) -> None:
    path = FIXTURES / "demo"
    rows = table(spark, "records", path)
    topics = [r for r in rows if r["record_type"] == "TopicRecord"]
    assert topics and all(r["topic_name"] and r["topic_id"] for r in topics)
    parts = [r for r in rows if r["record_type"] == "PartitionRecord"]
    assert parts and all(r["topic_id"] and r["partition_id"] is not None for r in parts)
    configs = [r for r in rows if r["record_type"] == "ConfigRecord"]
    assert configs and all(r["resource_type"] and r["config_name"] for r in configs)
    assert {r["file_kind"] for r in rows} == {"log", "snapshot", "bootstrap"}
    snap = [r for r in rows if r["file_kind"] == "snapshot"]
    assert all(
        r["in_snapshot"] and r["log_offset"] == int(Path(r["file"]).name.split("-")[0]) - 1 for r in snap
    )
    assert all(r["cluster_id"] == "ojQnLEycTOSMI2Fga2yOXA" and r["node_id"] == 1 for r in rows)


def test_big_files_split_at_batch_boundaries_give_the_same_rows(spark: Any) -> None:
    path = FIXTURES / "kafka-4.4-broker"
    whole = table(spark, "records", path)
    parts = spark.read.format("kraft-metadata").option("splitBytes", "700").load(str(path))
    assert parts.rdd.getNumPartitions() > 3 * len(_files(path))
    split = [r.asDict(recursive=True) for r in parts.collect()]

    def key(r: dict[str, Any]) -> tuple[str, int]:
        return (r["file"], r["offset"])

    assert sorted(split, key=key) == sorted(whole, key=key)


def test_many_paths_globs_and_a_fleet_root(spark: Any) -> None:
    one = table(spark, "topics", FIXTURES / "demo")
    two = table(spark, "topics", [str(FIXTURES / "demo"), str(FIXTURES / "kafka-4.4-broker")])
    fleet = table(spark, "topics", str(FIXTURES))  # every metadata dir below
    globbed = table(spark, "topics", str(FIXTURES / "kafka-4.4-*"))
    assert {r["source_dir"] for r in two} == {
        str(FIXTURES / d / "__cluster_metadata-0") for d in ("demo", "kafka-4.4-broker")
    }
    assert len({r["source_dir"] for r in fleet}) == len(FIXTURE_DIRS)
    assert {Path(r["source_dir"]).parent.name for r in globbed} == {"kafka-4.4-broker", "kafka-4.4-split-c1"}
    assert len(one) < len(two) < len(fleet)
    single = table(
        spark, "records", str(FIXTURES / "demo" / "__cluster_metadata-0" / "00000000000000000050.log")
    )
    assert (
        single
        and {r["file_kind"] for r in single} == {"log"}
        and single[0]["cluster_id"] == one[0]["cluster_id"]
    )


def test_snapshots_and_broker_events(spark: Any) -> None:
    from metashell.log import open_metadata_dir

    path = FIXTURES / "kafka-4.4-broker"
    d = open_metadata_dir(path)
    snaps = {r["end_offset"]: r for r in table(spark, "snapshots", path)}
    assert set(snaps) == {s.end_offset for s in d.snapshots}
    for s in d.snapshots:
        r = snaps[s.end_offset]
        assert (r["epoch"], r["size_bytes"]) == (s.epoch, s.size) and r["record_count"] > 0
        assert r["last_contained_timestamp"] is not None
    events = table(spark, "broker_events", path)
    kinds = {r["event"] for r in events}
    assert {"register", "unfence"} <= kinds
    assert all(r["broker_id"] in (4, 5, 6) or r["broker_id"] >= 0 for r in events)


def test_a_corrupt_segment_becomes_a_row_of_errors_and_the_rest_is_read(spark: Any, tmp_path: Path) -> None:
    copy = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", copy)
    seg = copy / "__cluster_metadata-0" / "00000000000000000026.log"
    data = bytearray(seg.read_bytes())
    data[300] ^= 0xFF  # inside a batch: its CRC no longer matches
    seg.write_bytes(bytes(data))
    errors = table(spark, "errors", copy)
    bad = [e for e in errors if e["severity"] == "error"]
    assert len(bad) == 1 and bad[0]["file"] == str(seg) and 0 <= bad[0]["position"] <= 300
    assert "crc" in bad[0]["message"].lower() or "corrupt" in bad[0]["message"].lower()
    rows = table(spark, "records", copy)
    others = [r for r in rows if r["file"] != str(seg)]
    assert len(others) == len(
        [
            r
            for r in table(spark, "records", FIXTURES / "demo")
            if not r["file"].endswith("00000000000000000026.log")
        ]
    )
    with pytest.raises(Exception, match="(?i)crc|corrupt"):
        table(spark, "records", copy, errors="fail")


def _transactions_open(rows: list[dict[str, Any]], offset: int) -> bool:
    state = False
    for r in sorted((r for r in rows if r["replayed"] and not r["in_snapshot"]), key=lambda r: r["offset"]):
        if r["offset"] > offset:
            break
        if r["record_type"] == "BeginTransactionRecord":
            state = True
        elif r["record_type"] in ("EndTransactionRecord", "AbortTransactionRecord"):
            state = False
    return state


def _state_at(history: list[dict[str, Any]], offset: int) -> set[Any]:
    """What ``state_at`` computes, in Python over the collected history (one Spark job per dataset)."""
    last: dict[tuple[str, int], dict[str, Any]] = {}
    for r in sorted(history, key=lambda r: r["offset"]):
        if r["offset"] <= offset:
            last[(r["topic_id"], r["partition_id"])] = r
    return {_partition_key(r) for r in last.values() if not r["deleted"]}


def _partition_key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (
        r["topic_name"],
        r["partition_id"],
        r["leader"],
        r["leader_epoch"],
        r["partition_epoch"],
        tuple(r["replicas"]),
        tuple(r["isr"]),
        tuple(r["elr"]),
        tuple(r["last_known_elr"]),
        tuple(r["adding_replicas"]),
        tuple(r["removing_replicas"]),
        tuple(r["directories"]),
        r["leader_recovery_state"],
    )


@pytest.mark.parametrize("path", ALL_DIRS)
def test_partition_history_equals_the_image_loaded_up_to_an_offset(spark: Any, path: Path) -> None:
    from metashell.spark import partition_history

    records = spark.read.format("kraft-metadata").load(str(path))
    history = [r.asDict(recursive=True) for r in partition_history(records).collect()]
    rows = [
        r.asDict()
        for r in records.select("offset", "record_type", "replayed", "in_snapshot", "log_offset").collect()
    ]
    replayed = sorted({r["log_offset"] for r in rows if r["replayed"]})
    if not replayed:
        pytest.skip("nothing to replay")
    points = sorted({replayed[0], replayed[-1], *(replayed[len(replayed) * k // 8] for k in range(1, 8))})
    points = [p for p in points if not _transactions_open(rows, p)]
    compared = 0
    for offset in points:
        img = load_directory(path, until_offset=offset, salvage=True).image
        if img.provenance.offset != offset:
            continue  # the loader cannot stop there (inside a batch of a transaction): not comparable
        want = expected_tables(img)["partitions"]
        got = _state_at(history, offset)
        assert got == want, (offset, sorted(got ^ want)[:6])
        compared += 1
    assert compared >= 2


def test_state_at_in_spark_equals_the_image_at_that_offset(spark: Any) -> None:
    from metashell.spark import partition_history, state_at

    path = FIXTURES / "kafka-4.4-broker"
    history = partition_history(spark.read.format("kraft-metadata").load(str(path)))
    for offset in (140, 300):
        want = expected_tables(load_directory(path, until_offset=offset).image)["partitions"]
        got = {_partition_key(r.asDict(recursive=True)) for r in state_at(history, offset).collect()}
        assert got == want


def test_partition_history_rows_say_what_changed(spark: Any) -> None:
    from metashell.spark import partition_history

    path = FIXTURES / "kafka-4.4-broker"
    h = partition_history(spark.read.format("kraft-metadata").load(str(path)))
    rows = sorted(
        (r.asDict() for r in h.where("topic_name = 'orders' and partition_id = 0").collect()),
        key=lambda r: r["offset"],
    )
    assert rows[0]["change"] in ("created", "snapshot") and rows[0]["changed"] == []
    changes = rows[1:]
    assert changes and all(r["change"] == "changed" and r["changed"] for r in changes)
    assert [r["partition_epoch"] for r in rows] == list(
        range(rows[0]["partition_epoch"], rows[0]["partition_epoch"] + len(rows))
    )
    for before, after in itertools.pairwise(rows):
        assert after["leader_epoch"] == before["leader_epoch"] + ("leader" in after["changed"])
    deleted = h.where("deleted").collect()
    assert all(r["change"] == "deleted" and r["record_type"] == "RemoveTopicRecord" for r in deleted)


def test_a_stream_restarted_inside_a_snapshot_says_so() -> None:
    """A checkpoint at offset N, and the controllers now serve a snapshot ending after N: the
    records in between are gone, and the stream says which ones instead of skipping them."""
    from metashell.errors import MetashellError
    from metashell.spark.stream import LiveStreamReader

    reader = LiveStreamReader({"bootstrap.controllers": "127.0.0.1:1"})
    reader._snapshot_end = 500
    reader._check(0)  # a new query starts with the snapshot's records
    reader._check(500)  # a checkpoint at the snapshot's end loses nothing
    with pytest.raises(MetashellError, match=r"offsets 120\.\.499 are now inside the controllers' snapshot"):
        reader._check(120)
    with pytest.raises(MetashellError, match="bootstrap.controllers"):
        LiveStreamReader({})


def test_a_sparse_file_is_planned_by_its_data_not_its_size(tmp_path: Path) -> None:
    """A 1 TiB segment with 4 KiB on disk was planned as 16,384 tasks: it is one unit now."""
    from metashell.spark.inputs import Dataset, Unit, _split

    sparse = tmp_path / "00000000000000000000.log"
    with open(sparse, "wb") as f:
        f.write(b"\0" * 4096)
        f.truncate(1 << 40)
    ds = Dataset(str(tmp_path), "file", None, None)
    unit = Unit(ds, str(sparse), "log", size=1 << 40, replay_seq=0, lenient_tail=True)
    assert _split(unit, 64 << 20) == [unit]


def test_small_units_are_packed_into_two_tasks_a_core() -> None:
    """A task costs Spark about as much as decoding 1 MB: a fleet of small directories is packed
    into a few tasks per core of the session, never split across more, and in order."""
    from metashell.spark.inputs import MIN_PARTITIONS, min_partitions, pack

    assert min_partitions(None) == MIN_PARTITIONS
    assert [min_partitions(n) for n in (1, 2, 8)] == [2, 4, 16]
    items = list(range(40))
    for least in (1, 2, 4, 16):
        groups = pack(items, [1 << 20] * 40, least=least)
        assert [i for g in groups for i in g] == items
        assert least <= len(groups) <= 2 * least
    assert len(pack(items, [1 << 20] * 40, split_bytes=4 << 20, least=2)) == 10  # a task's bytes bound


def test_the_session_sizes_the_tasks_and_min_partitions_overrides(spark: Any) -> None:
    from metashell.spark.inputs import find_datasets, plan_units

    fleet = [str(p.values[0]) for p in FIXTURE_DIRS]
    units = len(plan_units(find_datasets(fleet)))
    cores = spark.sparkContext.defaultParallelism
    planned = spark.read.format("kraft-metadata").load(fleet).rdd.getNumPartitions()
    assert 2 * cores <= planned <= 4 * cores < units
    more = spark.read.format("kraft-metadata").option("minPartitions", "9").load(fleet)
    assert more.rdd.getNumPartitions() >= 9
    with pytest.raises(Exception, match="minpartitions must be a whole number of at least 1, not '0'"):
        spark.read.format("kraft-metadata").option("minPartitions", "0").load(fleet).count()


# --------------------------------------------------------------------------------------------------
# Hostile values (issue 28): each becomes a row of ``errors`` naming the file, never a failed job.


def _first_batch_with_a_late_record(path: Path, base_ts: int, delta: int) -> None:
    """Give the first batch of ``path`` the base timestamp ``base_ts`` and its first record the
    timestamp delta ``delta`` (a one-byte varint, so nothing moves), with the CRC recomputed."""
    data = bytearray(path.read_bytes())
    assert data[21 + 1] & 0x07 == 0, "the fixture's first batch is uncompressed"
    struct.pack_into(">qq", data, 27, base_ts, min(base_ts + delta, (1 << 63) - 1))
    record = 61
    length_bytes = 1 if data[record] < 0x80 else 2
    assert data[record + length_bytes] == 0 and data[record + length_bytes + 1] == 0  # attributes, delta 0
    data[record + length_bytes + 1] = delta * 2  # zigzag
    size = struct.unpack_from(">i", data, 8)[0]
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21 : 12 + size])))
    path.write_bytes(bytes(data))


def _unit_rows(path: Path, name: str) -> list[dict[str, Any]]:
    """``name``'s rows of every file of ``path``, decoded in-process as an executor does."""
    from metashell.spark.decode import read_file_table
    from metashell.spark.inputs import find_datasets, plan_units

    return [
        row
        for unit in plan_units(find_datasets([str(path)]))
        for batch in read_file_table(name, unit)
        for row in batch.to_pylist()
    ]


def test_a_time_past_what_spark_holds_is_null_with_a_warning(tmp_path: Path) -> None:
    copy = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", copy)
    seg = copy / "__cluster_metadata-0" / "00000000000000000000.log"
    _first_batch_with_a_late_record(seg, (1 << 63) - 10, 1)  # fits Kafka's int64, not microseconds
    records = _unit_rows(copy, "records")
    assert len(records) == len(_unit_rows(FIXTURES / "demo", "records"))
    late = [r for r in records if r["file"] == str(seg) and r["batch_position"] == 0]
    assert late and all(r["timestamp"] is None for r in late)
    (warning,) = [e for e in _unit_rows(copy, "errors") if e["kind"] == "timestamp-range"]
    assert warning["file"] == str(seg) and warning["position"] == 0 and warning["severity"] == "warning"
    assert "9223372036854775799 ms" in warning["message"]  # the latest: base + delta


def test_a_time_past_64_bits_is_a_corrupt_batch_everywhere(tmp_path: Path) -> None:
    """Base timestamp plus delta beyond int64: Java would wrap it; metashell names the batch."""
    from metashell.errors import MetashellError

    copy = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", copy)
    seg = copy / "__cluster_metadata-0" / "00000000000000000000.log"
    _first_batch_with_a_late_record(seg, (1 << 63) - 1, 3)
    (error,) = [e for e in _unit_rows(copy, "errors") if e["severity"] == "error"]
    assert error["file"] == str(seg) and 0 <= error["position"] < 100  # the batch's records
    assert "record 0: timestamp 9223372036854775810 is outside the 64-bit range" in error["message"]
    assert not [r for r in _unit_rows(copy, "records") if r["file"] == str(seg)]
    with pytest.raises(MetashellError, match=r"00000000000000000000\.log.*outside the 64-bit range"):
        load_directory(copy, until_offset=5)  # before the snapshot: the log is replayed
    status, _out, err = run_cli("-d", str(copy), "-c", "log --to 2")
    assert status == 1 and re.search(r"00000000000000000000\.log.*outside the 64-bit range", one_line(err))


def test_a_lone_surrogate_in_the_cluster_id_is_kept_escaped_and_said(spark: Any, tmp_path: Path) -> None:
    """``cluster.id=\\uD800...`` in meta.properties (Java reads it) failed every table of the job."""
    copy = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", copy)
    meta = copy / "meta.properties"
    meta.write_text(meta.read_text().replace("cluster.id=", "cluster.id=\\uD800"))
    topics = table(spark, "topics", copy)
    assert topics and {t["cluster_id"] for t in topics} == {"\\ud800ojQnLEycTOSMI2Fga2yOXA"}
    assert len(table(spark, "records", copy)) == len(table(spark, "records", FIXTURES / "demo"))
    notes = [e for e in table(spark, "errors", copy) if e["kind"] == "meta-properties"]
    assert len(notes) == 1 and notes[0]["file"] == str(meta) and "lone surrogate" in notes[0]["message"]


def test_a_replay_that_fails_is_a_row_of_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The image tables have no rows of a dataset whose replay fails: ``errors`` says so (it only
    went to an executor's stderr).  The failure is forced in-process: no real file makes replay fail
    where decoding succeeds, which is the point of the check."""
    from metashell.errors import MetashellError
    from metashell.spark import images
    from metashell.spark.inputs import find_datasets

    def failing(ds: Any, as_of: Any = None) -> Any:
        raise MetashellError("no memory left for the image")

    monkeypatch.setattr(images, "load_of", failing)
    (ds,) = find_datasets([str(FIXTURES / "demo")])
    rows = [r for b in images.check_dataset(ds) for r in b.to_pylist()]
    assert len(rows) == 1 and rows[0]["severity"] == "error" and rows[0]["file"] == ds.path
    assert "replay failed: no memory left for the image" in rows[0]["message"]
    with pytest.raises(MetashellError):
        list(images.check_dataset(ds, errors="fail"))
