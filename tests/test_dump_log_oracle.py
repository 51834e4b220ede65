"""Differential test: every batch header and every record, decoded by metashell and by Kafka.

Kafka's ``DumpLogSegments --cluster-metadata-decoder`` (run from real jars by scripts/oracle.py) is
the oracle.  For every fixture and corpus file we compare, per batch, the header fields Kafka
prints, and per record, the JSON payload (Kafka's JsonConverter form) field by field.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from metashell.log.files import iter_file_batches
from metashell.protocol.control import decode_control_record
from metashell.protocol.kafka_json import control_to_kafka_json, record_type_name, to_kafka_json
from metashell.protocol.metadata import decode_metadata_record

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO / "scripts"))

_BATCH = re.compile(
    r"^baseOffset: (-?\d+) lastOffset: (-?\d+) count: (\d+) .*?partitionLeaderEpoch: (-?\d+) "
    r"isTransactional: (\w+) isControl: (\w+) .*?position: (\d+) CreateTime: (-?\d+) "
    r"size: (\d+) magic: (\d+) compresscodec: (\w+) crc: (\d+) isvalid: (\w+)"
)
_RECORD = re.compile(
    r"^\| offset: (-?\d+) CreateTime: (-?\d+) keySize: (-?\d+) valueSize: (-?\d+) .*?"
    r"headerKeys: \[[^\]]*\] (?:payload: (.*)|(\w+):? (\{.*\})|controlType: (\w+)\(-?\d+\))$"
)
CONTROL_TYPES = {
    "LeaderChange": "LEADER_CHANGE",
    "SnapshotHeader": "SNAPSHOT_HEADER",
    "SnapshotFooter": "SNAPSHOT_FOOTER",
    "KRaftVersion": "KRAFT_VERSION",
    "KRaftVoters": "KRAFT_VOTERS",
}
"""Control record names as releases before 4.0 print them: the type alone (``controlType:
LEADER_CHANGE(2)``), no payload."""


def kafka_files() -> list[Path]:
    roots = [REPO / "fixtures", SHARED / "corpus", SHARED / "reference" / "test-vectors" / "metadata-log-dir"]
    out: list[Path] = []
    for root in roots:
        if root.is_dir():
            out += sorted(p for p in root.rglob("*") if p.suffix in (".log", ".checkpoint") and p.is_file())
    return out


def parse_dump(text: str) -> tuple[list[tuple[Any, ...]], dict[int, Any]]:
    """Kafka's dump as (batch header tuples, {offset: payload or (control name, json)})."""
    batches: list[tuple[Any, ...]] = []
    records: dict[int, Any] = {}
    for line in text.splitlines():
        m = _BATCH.match(line)
        if m:
            g = m.groups()
            batches.append(
                (
                    int(g[0]),
                    int(g[1]),
                    int(g[2]),
                    int(g[3]),
                    g[4] == "true",
                    g[5] == "true",
                    int(g[6]),
                    int(g[7]),
                    int(g[8]),
                    int(g[9]),
                    g[10],
                    int(g[11]),
                    g[12] == "true",
                )
            )
            continue
        m = _RECORD.match(line)
        if m:
            offset = int(m.group(1))
            if m.group(5) is not None:
                payload = m.group(5)
                # the oracle's Kafka may be older than the data (4.4.0's dumper runs from 4.3.1)
                records[offset] = json.loads(payload) if payload.startswith("{") else ("undecodable", payload)
            elif m.group(8) is not None:
                records[offset] = ("controlType", m.group(8))
            else:
                records[offset] = (m.group(6), json.loads(m.group(7)))
    return batches, records


def ours(path: Path) -> tuple[list[tuple[Any, ...]], dict[int, Any]]:
    batches: list[tuple[Any, ...]] = []
    records: dict[int, Any] = {}
    for b in iter_file_batches(path, lenient_tail=path.suffix == ".log"):
        batches.append(
            (
                b.base_offset,
                b.last_offset,
                b.records_count,
                b.partition_leader_epoch,
                b.is_transactional,
                b.is_control,
                b.position,
                b.max_timestamp,
                b.size,
                b.magic,
                b.compression_name,
                b.crc,
                b.crc_valid(),
            )
        )
        for offset, _ts, key, value in b.entries():
            if b.is_control:
                ctl = decode_control_record(key, value)
                records[offset] = (ctl.name, control_to_kafka_json(ctl))
            else:
                assert value is not None  # a data record always has a value
                rec = decode_metadata_record(value)
                records[offset] = {
                    "type": record_type_name(rec.name),
                    "version": rec.version,
                    "data": to_kafka_json(rec.name, rec.version, rec.data),
                }
    return batches, records


FILES = kafka_files()


_DUMPED: set[str] = set()
"""The releases whose dump of this module's files is kept already (:func:`_dump`)."""


def _dump(oracle: Any, path: Path, release: str, files: list[Path]) -> str:
    """``kafka-dump-log`` of ``release`` on ``path``; the first call of a release has its tool dump
    ``files`` (those the tests ask it about) in one JVM, each file's answer kept for the others."""
    if release not in _DUMPED:
        oracle.dump_logs(files, version=release)
        _DUMPED.add(release)
    return str(oracle.dump_log(path, version=release))


@pytest.mark.kafka
@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.parent.name}/{p.name}" for p in FILES])
def test_records_equal_kafka_dump_log(path: Path, kafka_oracle: Any) -> None:
    assert_equal_to_dump(path, _dump(kafka_oracle, path, kafka_oracle.DEFAULT_VERSION, FILES))


def writers() -> list[tuple[str, Path]]:
    """(release, file) for every fixture file, with the Kafka release that wrote it (its manifest)."""
    fixtures = REPO / "fixtures"
    manifest = json.loads((fixtures / "manifest.json").read_text())
    return [
        (entry["kafka_version"], p)
        for name, entry in sorted(manifest.items())
        if entry["scenario"] != "kafka-upgrade-chain"  # written by seven releases: 4.4's tool reads it above
        for p in sorted((fixtures / name / "__cluster_metadata-0").iterdir())
        if p.suffix in (".log", ".checkpoint")
    ]


WRITERS = writers()


@pytest.mark.kafka
@pytest.mark.parametrize(
    ("release", "path"), WRITERS, ids=[f"{v}/{p.parent.parent.name}/{p.name}" for v, p in WRITERS]
)
def test_records_equal_the_writing_release_s_dump_log(release: str, path: Path, kafka_oracle: Any) -> None:
    """Each fixture also against ``kafka-dump-log`` of the release that wrote it (issue 27): 3.3's
    tool on 3.3's files, and so on (4.4's runs on every file above)."""
    from conftest import get_dist

    get_dist(release)
    written = [p for v, p in WRITERS if v == release]
    assert_equal_to_dump(path, _dump(kafka_oracle, path, release, written))


def assert_equal_to_dump(path: Path, dump: str) -> None:
    """metashell's batches and records of ``path`` equal those in Kafka's ``dump``."""
    k_batches, k_records = parse_dump(dump)
    o_batches, o_records = ours(path)
    assert k_batches, f"Kafka printed no batch for {path}"
    # Kafka prints CreateTime of a batch as its max timestamp (for CreateTime batches)
    assert o_batches == k_batches
    assert sorted(o_records) == sorted(k_records)
    unknown_to_kafka = {o for o, r in k_records.items() if isinstance(r, tuple) and r[0] == "undecodable"}
    for o in unknown_to_kafka:
        # only record types newer than the oracle's Kafka may be undecodable to it, never to us
        assert "Unknown metadata id" in k_records[o][1] and isinstance(o_records[o], dict), k_records[o]
    for o, r in k_records.items():
        if isinstance(r, tuple) and r[0] == "controlType":  # an older dumper: the control type alone
            o_records[o] = ("controlType", CONTROL_TYPES.get(o_records[o][0], o_records[o][0]))
    mismatches = [
        (o, o_records[o], k_records[o])
        for o in k_records
        if o not in unknown_to_kafka and _norm(o_records[o]) != _norm(k_records[o])
    ]
    assert not mismatches, f"{len(mismatches)} record(s) differ; first: {mismatches[0]}"


def _norm(v: Any) -> Any:
    """Compare numbers numerically (Jackson prints 1024.0, Python may hold 1024)."""
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


LOG_FILES = [p for p in FILES if p.suffix == ".log"]


@pytest.mark.kafka
@pytest.mark.parametrize("path", LOG_FILES, ids=[f"{p.parent.parent.name}/{p.name}" for p in LOG_FILES])
def test_log_json_equals_kafka_dump_log(path: Path, kafka_oracle: Any) -> None:
    """``metashell -s FILE log --all --json --no-redact``: every record's type, version and data are what
    ``kafka-dump-log --cluster-metadata-decoder`` prints for it (control records by name)."""
    from test_cli import run_cli

    _, k_records = parse_dump(kafka_oracle.dump_log(path))
    _status, out, err = run_cli("-s", str(path), "--no-redact", "log", "--all", "--json")
    mine = {d["offset"]: d for d in map(json.loads, out.splitlines())}
    assert mine, err
    assert sorted(mine) == sorted(k_records)
    for offset, kafka in k_records.items():
        d = mine[offset]
        if isinstance(kafka, tuple):
            if kafka[0] == "undecodable":
                continue
            assert d["control"] and d["type"] == kafka[0]
        else:
            assert _norm({"type": d["type"], "version": d["version"], "data": d["data"]}) == _norm(kafka), (
                offset
            )
