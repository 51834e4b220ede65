"""The committed fixtures (made by scripts/make_fixtures.py from real Kafka) are what they claim to be.

Why: later issues test metashell against these directories, so they must (a) together contain every
record type Kafka can write, (b) each have snapshots *and* a log tail after the newest snapshot, (c)
decode completely with the project's own batch reader and record decoders, and (d) agree with
``fixtures/manifest.json`` and ``fixtures/README.md``, which document them.  Nothing here needs Java.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from metashell.log.scan import iter_batches
from metashell.protocol.control import decode_control_record
from metashell.protocol.metadata import decode_metadata_record, record_types

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MANIFEST = FIXTURES / "manifest.json"

#: Record types no fixture holds, with the reason (also stated in fixtures/README.md).
NOT_PRODUCIBLE: dict[str, str] = {
    "c:Abort": "producer transaction markers; never written to __cluster_metadata",
    "c:Commit": "producer transaction markers; never written to __cluster_metadata",
}

#: Control record types the KRaft layer writes.
CONTROL_TYPES = {
    "c:LeaderChange",
    "c:SnapshotHeader",
    "c:SnapshotFooter",
    "c:KRaftVersion",
    "c:KRaftVoters",
    "c:Abort",
    "c:Commit",
}

KEPT_ROOT_FILES = {"meta.properties", "bootstrap.checkpoint", "__cluster_metadata-0"}
KEPT_PARTITION_FILES = {"quorum-state", "leader-epoch-checkpoint", "partition.metadata"}
MAX_FIXTURE_BYTES = 5 * 1024 * 1024
MAX_TOTAL_BYTES = 20 * 1024 * 1024


def fixture_dirs() -> list[Path]:
    if not FIXTURES.is_dir():
        return []
    return sorted(p for p in FIXTURES.iterdir() if (p / "__cluster_metadata-0").is_dir())


def manifest() -> dict[str, dict[str, Any]]:
    return json.loads(MANIFEST.read_text())


def params() -> list[Any]:
    dirs = fixture_dirs()
    if not dirs:
        return [
            pytest.param(None, id="no-fixtures", marks=pytest.mark.skip(reason="fixtures/ has no fixture"))
        ]
    return [pytest.param(d, id=d.name) for d in dirs]


def decoded_types(path: Path) -> Counter[str]:
    """Record-type counts of one .log/.checkpoint file, every record fully decoded by metashell."""
    counts: Counter[str] = Counter()
    for batch in iter_batches(path.read_bytes(), source=str(path)):
        for rec in batch.records():
            if batch.is_control:
                counts["c:" + decode_control_record(rec.key, rec.value).name] += 1
            else:
                assert rec.value is not None, f"{path}: data record without value at offset {rec.offset}"
                counts[decode_metadata_record(rec.value).name] += 1
    return counts


def scan(fixture: Path) -> tuple[Counter[str], int, list[int]]:
    """(type counts of all segments + snapshots, log end offset, snapshot end offsets)."""
    part = fixture / "__cluster_metadata-0"
    counts: Counter[str] = Counter()
    log_end = -1
    for seg in sorted(part.glob("*.log")):
        counts += decoded_types(seg)
        for batch in iter_batches(seg.read_bytes(), source=str(seg), decode=False):
            log_end = max(log_end, batch.last_offset + 1)
    snaps = sorted(int(p.name[:20]) for p in part.glob("*.checkpoint"))
    for snap in part.glob("*.checkpoint"):
        counts += decoded_types(snap)
    return counts, log_end, snaps


def test_fixture_set_is_documented() -> None:
    dirs = {d.name for d in fixture_dirs()}
    assert len(dirs) >= 4, f"need at least 4 fixtures, found {sorted(dirs)}"
    m = manifest()
    assert set(m) == dirs, "fixtures/manifest.json and the fixture directories disagree"
    assert len({e["kafka_version"] for e in m.values()}) >= 2, "fixtures must come from >= 2 Kafka versions"
    readme = (FIXTURES / "README.md").read_text()
    for name in dirs:
        assert f"`{name}`" in readme, f"fixtures/README.md does not describe {name}"
    for name in NOT_PRODUCIBLE:
        assert name.removeprefix("c:") in readme, f"fixtures/README.md does not explain why {name} is absent"


@pytest.mark.parametrize("fixture", params())
def test_only_reader_files_are_kept(fixture: Path) -> None:
    assert {p.name for p in fixture.iterdir()} <= KEPT_ROOT_FILES
    assert (fixture / "meta.properties").is_file()
    for f in (fixture / "__cluster_metadata-0").iterdir():
        assert f.name.endswith((".log", ".checkpoint")) or f.name in KEPT_PARTITION_FILES, f
    size = sum(p.stat().st_size for p in fixture.rglob("*") if p.is_file())
    assert size < MAX_FIXTURE_BYTES, f"{fixture.name} is {size} bytes"


def test_fixtures_stay_small() -> None:
    total = sum(p.stat().st_size for p in FIXTURES.rglob("*") if p.is_file())
    assert total < MAX_TOTAL_BYTES, f"fixtures/ holds {total} bytes"


@pytest.mark.parametrize("fixture", params())
def test_records_decode_and_match_manifest(fixture: Path) -> None:
    counts, log_end, _snaps = scan(fixture)
    entry = manifest()[fixture.name]
    assert dict(counts) == entry["record_types"]
    assert log_end == entry["log_end_offset"]
    assert not any(n.startswith("Unknown") for n in counts), counts


@pytest.mark.parametrize("fixture", params())
def test_has_segments_snapshots_and_a_tail(fixture: Path) -> None:
    """Several segments, at least one real snapshot (not just the (0,0) bootstrap one), and log
    records after the newest snapshot - so loaders must combine a snapshot with a log tail."""
    _counts, log_end, snaps = scan(fixture)
    segments = list((fixture / "__cluster_metadata-0").glob("*.log"))
    assert len(segments) >= 2, f"{fixture.name}: only {len(segments)} segment(s)"
    real = [s for s in snaps if s > 0]
    assert real, f"{fixture.name}: no snapshot beyond the bootstrap one"
    assert log_end > max(real), f"{fixture.name}: no log tail after the newest snapshot ({max(real)})"


def test_union_covers_every_record_type() -> None:
    union: Counter[str] = Counter()
    for d in fixture_dirs():
        union += Counter(manifest()[d.name]["record_types"])
    expected = set(record_types().values()) | CONTROL_TYPES
    missing = expected - set(union) - set(NOT_PRODUCIBLE)
    assert not missing, f"no fixture contains {sorted(missing)}"
    unexpectedly_present = set(NOT_PRODUCIBLE) & set(union)
    assert not unexpectedly_present, f"listed as not producible but present: {unexpectedly_present}"


#: Control records under their schemas' names (the manifest names them ``c:Type``).
CONTROL_SCHEMAS = {
    "c:LeaderChange": "LeaderChangeMessage",
    "c:SnapshotHeader": "SnapshotHeaderRecord",
    "c:SnapshotFooter": "SnapshotFooterRecord",
    "c:KRaftVersion": "KRaftVersionRecord",
    "c:KRaftVoters": "VotersRecord",
}

#: (schema, version) that no fixture holds, with why (also in fixtures/README.md).
NOT_WRITTEN_VERSIONS: dict[tuple[str, int], str] = {
    ("LeaderChangeMessage", 1): (
        "defined by KIP-853, but Kafka up to 4.4 writes version 0 (LeaderState sets it; every 4.x "
        "fixture, dynamic quorums included, holds v0)"
    ),
}


def test_every_record_version_in_the_schemas_is_in_some_fixture() -> None:
    """Issue 27: each version of each metadata and control record in the bundled schemas is held by
    a fixture made by real Kafka, or listed with the reason no release writes it."""
    from metashell.protocol.schema import bundled_schemas

    held: dict[str, set[int]] = {}
    for entry in manifest().values():
        for name, versions in entry["record_versions"].items():
            held.setdefault(CONTROL_SCHEMAS.get(name, name), set()).update(versions)
    wanted = set(record_types().values()) | set(CONTROL_SCHEMAS.values())
    schemas = bundled_schemas()
    missing = [
        (name, v)
        for name in sorted(wanted)
        for v in range(schemas[name].valid_versions.lo, schemas[name].valid_versions.hi + 1)
        if v not in held.get(name, set()) and (name, v) not in NOT_WRITTEN_VERSIONS
    ]
    assert not missing, f"no fixture holds {missing}: make one, or list it with the reason"
    listed_but_held = [k for k in NOT_WRITTEN_VERSIONS if k[1] in held.get(k[0], set())]
    assert not listed_but_held, f"listed as never written but held by a fixture: {listed_but_held}"
    readme = (FIXTURES / "README.md").read_text()
    for name, version in NOT_WRITTEN_VERSIONS:
        assert f"{name} v{version}" in readme, f"fixtures/README.md does not explain {name} v{version}"
