"""Metadata directories: small files, the read plan (Kafka's startup rules) and the plan reader."""

from __future__ import annotations

import builtins
import os
import re
import shutil
import stat
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

from metashell.errors import MetashellError
from metashell.log import (
    CorruptBatchError,
    LogWarning,
    MetadataDirError,
    PlanReader,
    build_batch,
    iter_file_batches,
    open_metadata_dir,
    parse_properties,
    plan_file,
    read_batch_at,
)
from metashell.log.directory import (
    parse_snapshot_name,
    read_meta_properties,
    read_quorum_state,
)
from metashell.log.plans import ReadPlan

SHARED = Path(__file__).resolve().parents[2] / "shared"
VECTORS = SHARED / "reference" / "test-vectors"
VECTOR_DIR = VECTORS / "metadata-log-dir"
CORPUS = SHARED / "corpus"
needs_vectors = pytest.mark.skipif(
    not VECTOR_DIR.is_dir(), reason="../shared/reference/test-vectors is absent"
)
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
CORPUS_DIRS = sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []
T0 = 1_700_000_000_000
PART = "__cluster_metadata-0"


# ------------------------------------------------------------------------------------------ helpers


def ctl_key(kind: int) -> bytes:
    return struct.pack(">hh", 0, kind)


LEADER_CHANGE = (ctl_key(2), bytes.fromhex("00000000000102000000010002000000010000"))


def val(offset: int) -> bytes:
    return b"v%d" % offset


def log_bytes(*ranges: tuple[int, int], epoch: int = 1, leader_change: bool = False) -> bytes:
    """Batches holding offsets [a, b) for each (a, b), values ``v<offset>``."""
    out = b""
    for a, b in ranges:
        if leader_change:
            out += build_batch(a, epoch, [LEADER_CHANGE], T0 + a, control=True)
            a += 1
        if b > a:
            out += build_batch(a, epoch, [val(o) for o in range(a, b)], T0 + a)
    return out


def snapshot_bytes(end_offset: int, epoch: int = 1, header: bool = True, footer: bool = True) -> bytes:
    """A snapshot of a log whose records were v0..v<end-1>: one data record per offset."""
    out = b""
    n = 0
    if header:
        out += build_batch(
            0, epoch, [(ctl_key(3), b"\x00\x00" + struct.pack(">q", T0) + b"\x00")], T0, control=True
        )
        n = 1
    values = [b"s%d" % o for o in range(end_offset)]
    out += build_batch(n, epoch, values or [b"empty"], T0)
    n += max(len(values), 1)
    if footer:
        out += build_batch(n, epoch, [(ctl_key(4), b"\x00\x00\x00")], T0, control=True)
    return out


def make_dir(
    root: Path,
    segments: dict[int, bytes] | None = None,
    snapshots: dict[tuple[int, int], bytes] | None = None,
    extra: dict[str, bytes] | None = None,
    bootstrap: bytes | None = None,
    meta: str | None = "version=1\nnode.id=3\ncluster.id=abc\n",
) -> Path:
    part = root / PART
    part.mkdir(parents=True)
    for base, data in (segments or {}).items():
        (part / f"{base:020d}.log").write_bytes(data)
    for (end, epoch), data in (snapshots or {}).items():
        (part / f"{end:020d}-{epoch:010d}.checkpoint").write_bytes(data)
    for name, data in (extra or {}).items():
        (part / name).write_bytes(data)
    if bootstrap is not None:
        (root / "bootstrap.checkpoint").write_bytes(bootstrap)
    if meta is not None:
        (root / "meta.properties").write_text(meta)
    return root


def read_all(plan: ReadPlan, **kw: Any) -> tuple[list[tuple[str, int, bytes | None]], PlanReader]:
    reader = PlanReader(plan, **kw)
    out = [
        (item.kind, off, value)
        for item in reader
        for off, _ts, _key, value in item.records
        if not item.batch.is_control
    ]
    return out, reader


def kinds(reader: PlanReader) -> list[str]:
    return [w.kind for w in reader.warnings]


# ------------------------------------------------------------------------------------------ properties


@pytest.mark.parametrize(
    "text,expected",
    [
        ("a=b\nc:d\ne f\n  g = h  \n", {"a": "b", "c": "d", "e": "f", "g": "h  "}),
        ("# comment\n! also\n\n   \nk=v", {"k": "v"}),
        ("key\n", {"key": ""}),
        ("key = = x", {"key": "= x"}),
        ("key:=x", {"key": "=x"}),
        ("a\\=b=c", {"a=b": "c"}),
        ("a\\ b c", {"a b": "c"}),
        ("k=\\u0041\\t\\n\\\\x\\q", {"k": "A\t\n\\xq"}),
        ("k=val\\\n    ue\\\n  !s", {"k": "value!s"}),
        ("k=a\\\\\nj=b", {"k": "a\\", "j": "b"}),
        ("# c\\\nk=v", {"k": "v"}),
        ("k=v\\\n", {"k": "v"}),
        ("a=1\r\nb=2\rc=3", {"a": "1", "b": "2", "c": "3"}),
        ("k=1\nk=2", {"k": "2"}),
        ("k=\\u00zz", {"k": "\\u00zz"}),
        ("cluster.id=", {"cluster.id": ""}),
    ],
)
def test_java_properties(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


def test_properties_are_latin1() -> None:
    assert parse_properties(b"k=caf\xe9") == {"k": "caf\u00e9"}


@needs_vectors
def test_meta_properties_v1_and_v0(tmp_path: Path) -> None:
    w: list[LogWarning] = []
    m = read_meta_properties(VECTOR_DIR / "meta.properties", w)
    assert (m.version, m.node_id, m.cluster_id, m.directory_id) == (
        1,
        1,
        "MkU3OEVBNTcwNTJENDM2Qg",
        "EREREREREREiIiIiIiIiIg",
    )
    m0 = read_meta_properties(VECTORS / "misc" / "meta.properties.v0", w)
    assert (m0.version, m0.node_id, m0.cluster_id, m0.directory_id) == (0, 1, "MkU3OEVBNTcwNTJENDM2Qg", None)
    assert w == []
    f = tmp_path / "meta.properties"
    f.write_text("broker.id=7\n")  # no version: v0
    assert read_meta_properties(f, w).node_id == 7 and read_meta_properties(f, w).version == 0
    f.write_text("version=9\nnode.id=x\ncluster.id=\n")
    m = read_meta_properties(f, w)
    assert m.cluster_id == "" and m.node_id is None
    assert [x.kind for x in w] == ["meta-properties", "meta-properties"]


@needs_vectors
def test_quorum_state_versions(tmp_path: Path) -> None:
    w: list[LogWarning] = []
    q0 = read_quorum_state(VECTORS / "misc" / "quorum-state.v0", w)
    assert (q0.data_version, q0.leader_id, q0.leader_epoch, q0.voted_id, q0.current_voters) == (
        0,
        1,
        1,
        -1,
        [1, 2, 3],
    )
    q1 = read_quorum_state(VECTORS / "misc" / "quorum-state.v1-voted", w)
    assert (
        q1.data_version,
        q1.leader_id,
        q1.leader_epoch,
        q1.voted_id,
        q1.voted_directory_id,
        q1.current_voters,
    ) == (1, -1, 2, 3, "EREREREREREiIiIiIiIiIg", None)
    assert w == []
    f = tmp_path / "quorum-state"
    f.write_text('{"leaderId":2,"leaderEpoch":9,"data_version":7,"currentVoters":null}\nignored')
    q = read_quorum_state(f, w)
    assert (q.leader_id, q.leader_epoch, q.current_voters) == (2, 9, None) and [x.kind for x in w] == [
        "quorum-state"
    ]
    f.write_text("{not json")
    assert read_quorum_state(f, w) is None and len(w) == 2


def test_snapshot_names() -> None:
    assert parse_snapshot_name("00000000000000000008-0000000001.checkpoint") == (8, 1)
    for name in [
        "00000000000000000008-0000000001.checkpoint.part",
        "00000000000000000008-0000000001-123.checkpoint.part",
        "00000000000000000008-0000000001.checkpoint.deleted",
        "bootstrap.checkpoint",
        "00000000000000000008.snapshot",
        "8-1.checkpoint",
    ]:
        assert parse_snapshot_name(name) is None


# ------------------------------------------------------------------------------------------ the vector dir


@needs_vectors
def test_vector_directory_plan_and_read() -> None:
    for path in (VECTOR_DIR, VECTOR_DIR / PART):
        d = open_metadata_dir(path)
        assert d.path == VECTOR_DIR / PART and d.log_dir == VECTOR_DIR
        assert d.meta.node_id == 1 and d.quorum.leader_epoch == 2 and d.quorum.data_version == 1
        assert d.leader_epochs == [(1, 0), (2, 8)] and d.topic_id == "AAAAAAAAAAAAAAAAAAAAAQ"
        assert [s.name for s in d.segments] == ["00000000000000000000.log", "00000000000000000008.log"]
        assert [(s.end_offset, s.epoch) for s in d.snapshots] == [(8, 1)]
        assert d.warnings == [] and d.bootstrap is None
        plan = d.plan()
        assert plan.start_offset == 8 and plan.snapshot.end_offset == 8
        assert [Path(f).name for f in plan.files] == [
            "00000000000000000008-0000000001.checkpoint",
            "00000000000000000008.log",
        ]
        reader = PlanReader(plan)
        items = list(reader)
        assert [(i.kind, i.batch.base_offset, len(i.records)) for i in items] == [
            ("snapshot", 0, 3),
            ("snapshot", 3, 4),
            ("snapshot", 7, 1),
            ("log", 8, 1),
            ("log", 9, 2),
        ]
        assert items[3].batch.position == 0 and items[4].batch.position == 91
        assert items[0].step.snapshot.end_offset == 8
        assert reader.warnings == [] and reader.log_last_offset == 10
        assert reader.files_read == plan.files
        assert [(e.kind, e.base_offset, e.last_offset, e.position) for e in reader.index][-2:] == [
            ("log", 8, 8, 0),
            ("log", 9, 10, 91),
        ]


@needs_vectors
def test_vector_directory_time_travel() -> None:
    d = open_metadata_dir(VECTOR_DIR)
    plan = d.plan(until_offset=5)  # before the snapshot's end: the log from 0, cut at 5
    assert plan.snapshot is None
    reader = PlanReader(plan)
    items = list(reader)
    assert [i.kind for i in items] == ["log"] * 3
    assert [r[0] for i in items for r in i.records] == [0, 1, 2, 3, 4, 5]


# ------------------------------------------------------------------------------------------ plans


def test_newest_complete_snapshot_and_ignored_files(tmp_path: Path) -> None:
    root = make_dir(
        tmp_path,
        segments={0: log_bytes((0, 10)), 10: log_bytes((10, 20))},
        snapshots={(0, 0): snapshot_bytes(0, 0), (5, 1): snapshot_bytes(5), (12, 1): snapshot_bytes(12)},
        extra={
            "00000000000000000015-0000000001.checkpoint.deleted": b"x",
            "00000000000000000018-0000000001-77.checkpoint.part": b"x",
            "00000000000000000005.log.deleted": b"x",
            "00000000000000000010.index": b"",
            "00000000000000000010.timeindex": b"",
            "00000000000000000010.snapshot": b"",
            "00000000000000000003.log.cleaned": b"",
            "00000000000000000004.log.swap": b"",
            "quorum-state.tmp": b"{}",
        },
    )
    d = open_metadata_dir(root)
    assert [(s.end_offset, s.epoch) for s in d.snapshots] == [(0, 0), (5, 1), (12, 1)]
    assert d.snapshots[0].is_bootstrap and d.latest_snapshot().end_offset == 12
    assert [s.base_offset for s in d.segments] == [0, 10]
    assert len(d.ignored) == 9
    plan = d.plan()
    assert [s.kind for s in plan.steps] == ["snapshot", "log"]  # segment 0 holds only offsets < 12
    assert plan.steps[1].skip_below == 12 and plan.steps[1].lenient_tail
    got, reader = read_all(plan)
    assert [o for k, o, _ in got if k == "log"] == list(range(12, 20))
    assert [v for k, _, v in got if k == "snapshot"] == [b"s%d" % i for i in range(12)]
    assert reader.warnings == []


def test_batch_straddling_the_snapshot_end(tmp_path: Path) -> None:
    root = make_dir(
        tmp_path, segments={0: log_bytes((0, 3), (3, 8), (8, 10))}, snapshots={(5, 1): snapshot_bytes(5)}
    )
    got, reader = read_all(open_metadata_dir(root).plan())
    assert [o for k, o, _ in got if k == "log"] == [5, 6, 7, 8, 9]
    assert reader.warnings == []


def test_no_snapshot_replays_from_zero_and_bootstrap_only_without_log(tmp_path: Path) -> None:
    boot = snapshot_bytes(2, 0)
    root = make_dir(tmp_path / "a", segments={0: log_bytes((0, 4))}, bootstrap=boot)
    plan = open_metadata_dir(root).plan()
    got, reader = read_all(plan)
    assert [k for k, _, _ in got] == ["log"] * 4 and reader.files_read == [plan.steps[0].source]
    # an empty active segment: bootstrap.checkpoint is read (after the empty log)
    root = make_dir(tmp_path / "b", segments={0: b""}, bootstrap=boot)
    got, reader = read_all(open_metadata_dir(root).plan())
    assert [k for k, _, _ in got] == ["bootstrap", "bootstrap"]
    # a pre-allocated, zero-filled segment counts as empty too
    root = make_dir(tmp_path / "c", segments={0: bytes(1000)}, bootstrap=boot)
    got, _ = read_all(open_metadata_dir(root).plan())
    assert [k for k, _, _ in got] == ["bootstrap", "bootstrap"]
    # no segments at all, only the (0, 0) bootstrap snapshot of a dynamic quorum
    root = make_dir(tmp_path / "d", snapshots={(0, 0): snapshot_bytes(0, 0)}, bootstrap=boot)
    plan = open_metadata_dir(root).plan()
    assert plan.snapshot is None and [s.kind for s in plan.steps] == ["bootstrap"]
    # a formatted log dir the node never started on
    root = tmp_path / "e"
    root.mkdir()
    (root / "bootstrap.checkpoint").write_bytes(boot)
    d = open_metadata_dir(root)
    assert d.path is None and [w.kind for w in d.warnings] == ["no-partition-dir"]
    assert [k for k, _, _ in read_all(d.plan())[0]] == ["bootstrap", "bootstrap"]


def test_log_starting_after_zero_without_snapshot_is_partial(tmp_path: Path) -> None:
    root = make_dir(tmp_path, segments={100: log_bytes((100, 105))})
    plan = open_metadata_dir(root).plan()
    assert plan.partial and [w.kind for w in plan.warnings] == ["partial-image"]
    assert "image is partial" in plan.warnings[0].message
    got, reader = read_all(plan)
    assert [o for _, o, _ in got] == list(range(100, 105)) and kinds(reader) == ["partial-image"]


def test_gap_between_snapshot_and_log(tmp_path: Path) -> None:
    root = make_dir(tmp_path, segments={50: log_bytes((50, 52))}, snapshots={(40, 2): snapshot_bytes(40, 2)})
    plan = open_metadata_dir(root).plan()
    assert plan.partial and "gap between snapshot" in plan.warnings[0].message


def test_gaps_overlaps_and_snapshot_ahead(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "gap", segments={0: log_bytes((0, 5)), 8: log_bytes((8, 10))})
    got, reader = read_all(open_metadata_dir(root).plan())
    assert kinds(reader) == ["gap"] and "offsets 5..7 are missing" in reader.warnings[0].message
    assert reader.warnings[0].source.endswith("00000000000000000008.log")
    # Offsets that do not fit the segment's name, or repeat offsets already read: Kafka never writes
    # them (it appends at the log end offset and names a segment for its first offset), so the
    # baseOffset, which no CRC covers, is forged: one located error, never a quiet skip.
    root = make_dir(tmp_path / "overlap", segments={0: log_bytes((0, 6)), 4: log_bytes((4, 9))})
    with pytest.raises(CorruptBatchError, match="reach past offset 3, where the next segment begins") as e:
        read_all(open_metadata_dir(root).plan())
    assert e.value.source.endswith("00000000000000000000.log") and e.value.offset == 0
    root = make_dir(tmp_path / "dup", segments={0: log_bytes((0, 5)), 5: log_bytes((2, 4), (4, 8))})
    with pytest.raises(CorruptBatchError, match="segment named for offset 5 starts at 2"):
        read_all(open_metadata_dir(root).plan())
    root = make_dir(tmp_path / "repeat", segments={0: log_bytes((0, 6), (2, 4), (6, 8))})
    with pytest.raises(CorruptBatchError, match="repeat offsets already in its segment"):
        read_all(open_metadata_dir(root).plan())
    root = make_dir(
        tmp_path / "ahead", segments={0: log_bytes((0, 10))}, snapshots={(20, 1): snapshot_bytes(20)}
    )
    got, reader = read_all(open_metadata_dir(root).plan())
    assert [k for k, _, _ in got] == ["snapshot"] * 20 and kinds(reader) == ["snapshot-ahead"]


def test_snapshot_without_header_or_footer(tmp_path: Path) -> None:
    root = make_dir(tmp_path, snapshots={(3, 1): snapshot_bytes(3, header=False, footer=False)})
    _, reader = read_all(open_metadata_dir(root).plan())
    assert kinds(reader) == ["snapshot-header", "snapshot-footer"]


def test_kraft_invariants_are_warnings(tmp_path: Path) -> None:
    data = (
        log_bytes((0, 2)) + build_batch(2, 1, [(b"key", b"v2")], T0) + build_batch(3, 1, [(None, None)], T0)
    )
    root = make_dir(tmp_path, segments={0: data})
    got, reader = read_all(open_metadata_dir(root).plan())
    assert [o for _, o, _ in got] == [0, 1, 2, 3]
    assert kinds(reader) == ["kraft-invariant", "kraft-invariant"]
    assert (
        "non-null key" in reader.warnings[0].message and "null or empty value" in reader.warnings[1].message
    )


def test_until_offset_picks_older_snapshot_and_seek(tmp_path: Path) -> None:
    seg0 = log_bytes(*[(i, i + 3) for i in range(0, 30, 3)])
    root = make_dir(
        tmp_path,
        segments={0: seg0, 30: log_bytes((30, 40))},
        snapshots={(9, 1): snapshot_bytes(9), (33, 1): snapshot_bytes(33)},
    )
    d = open_metadata_dir(root)
    full = PlanReader(d.plan())
    list(full)
    plan = d.plan(until_offset=16)
    assert plan.snapshot.end_offset == 9 and plan.until_offset == 16
    got, _ = read_all(plan)
    assert [o for k, o, _ in got if k == "log"] == list(range(9, 17))
    seeked = plan.seek(full.index)
    assert seeked.steps[1].position > 0  # starts at the batch holding offset 9, not at byte 0
    got2, reader2 = read_all(seeked)
    assert got2 == got and reader2.batches < 10
    entry = next(e for e in full.index if e.base_offset == 30)
    assert read_batch_at(entry.source, entry.position).base_offset == 30
    # the index's columns give the same entry points as its rows, for every offset
    from metashell.log.batch_index import BatchIndex
    from metashell.log.plans import full_plan, log_plan

    oldest = PlanReader(full_plan(d))
    list(oldest)
    assert isinstance(oldest.index, BatchIndex) and {e.source for e in oldest.index if e.kind == "log"} == {
        s.source for s in d.plan().steps if s.kind == "log"
    } | {str(d.segments[0].path)}
    for start in range(42):
        assert log_plan(d, start, oldest.index).steps == log_plan(d, start, list(oldest.index)).steps, start


def test_offset_spans_are_read_again_when_a_segment_changes(tmp_path: Path) -> None:
    """``at N`` checks N against the offsets the segments cover, kept per file while its size, mtime
    and inode stay the same: a segment cut short (or appended to) is read again."""
    from metashell.log.headers import offset_spans

    seg0 = log_bytes(*[(i, i + 3) for i in range(0, 30, 3)])
    root = make_dir(tmp_path, segments={0: seg0, 40: log_bytes((40, 45))}, snapshots={})
    paths = [s.path for s in open_metadata_dir(root).segments]
    assert offset_spans(paths) == [(0, 29), (40, 44)]
    assert offset_spans(paths) == [(0, 29), (40, 44)]  # kept
    one = log_bytes((27, 30))
    with open(paths[0], "r+b") as f:
        f.truncate(len(seg0) - len(one))  # the last batch (27-29) cut off
    assert offset_spans(paths) == [(0, 26), (40, 44)]
    paths[1].unlink()
    assert offset_spans(paths) == [(0, 26)]


# ------------------------------------------------------------------------------------------ damage


def test_torn_tail_of_last_segment(tmp_path: Path) -> None:
    seg = log_bytes((0, 3), (3, 6))
    root = make_dir(tmp_path, segments={0: seg + log_bytes((6, 9))[:40]})
    got, reader = read_all(open_metadata_dir(root).plan())
    assert [o for _, o, _ in got] == list(range(6))
    assert kinds(reader) == ["torn-tail"] and reader.warnings[0].position == len(seg)


def test_corruption_in_the_middle_is_an_error(tmp_path: Path) -> None:
    seg = bytearray(log_bytes((0, 3), (3, 6), (6, 9)))
    first = len(log_bytes((0, 3)))
    seg[first + 65] ^= 0xFF
    root = make_dir(tmp_path, segments={0: bytes(seg), 9: log_bytes((9, 12))})
    with pytest.raises(CorruptBatchError) as e:
        read_all(open_metadata_dir(root).plan())
    assert e.value.offset == first and e.value.source == str(root / PART / "00000000000000000000.log")
    assert re.match(
        rf"{re.escape(str(root))}.*00000000000000000000\.log: byte offset {first}: ", str(e.value)
    )
    assert isinstance(e.value, MetashellError)


def test_bad_last_batch_depends_on_the_segment(tmp_path: Path) -> None:
    good = log_bytes((0, 3))
    bad = bytearray(log_bytes((3, 6)))
    bad[70] ^= 0xFF
    # the last segment: Kafka's recovery would truncate it -> warning
    root = make_dir(tmp_path / "last", segments={0: good + bytes(bad)})
    got, reader = read_all(open_metadata_dir(root).plan())
    assert [o for _, o, _ in got] == [0, 1, 2] and kinds(reader) == ["corrupt-tail"]
    assert reader.warnings[0].position == len(good)
    # an older segment: corruption that recovery would not touch -> error
    root = make_dir(tmp_path / "older", segments={0: good + bytes(bad), 6: log_bytes((6, 8))})
    with pytest.raises(CorruptBatchError, match="CRC mismatch"):
        read_all(open_metadata_dir(root).plan())


def test_files_deleted_while_reading(tmp_path: Path) -> None:
    root = make_dir(
        tmp_path,
        segments={0: log_bytes((0, 5)), 5: log_bytes((5, 10))},
        snapshots={(3, 1): snapshot_bytes(3), (7, 1): snapshot_bytes(7)},
    )
    d = open_metadata_dir(root)
    plan = d.plan()
    # Kafka deletes the newest snapshot's predecessor... and we planned with the newest: delete it
    os.remove(plan.snapshot.path)
    got, reader = read_all(plan)
    assert kinds(reader)[0] == "file-vanished" and reader.plan.snapshot.end_offset == 3
    assert [o for k, o, _ in got if k == "log"] == list(range(3, 10))
    # a segment vanishing is skipped with a warning
    plan = open_metadata_dir(root).plan()
    os.remove(root / PART / "00000000000000000005.log")
    got, reader = read_all(plan)
    assert kinds(reader) == ["file-vanished"] and [o for k, o, _ in got if k == "log"] == [3, 4]
    assert str(root / PART / "00000000000000000005.log") not in reader.files_read


def test_file_growing_while_reading(tmp_path: Path) -> None:
    root = make_dir(tmp_path, segments={0: log_bytes((0, 3))})
    seg = root / PART / "00000000000000000000.log"
    reader = PlanReader(open_metadata_dir(root).plan())
    it = iter(reader)
    first = next(it)
    with open(seg, "ab") as f:  # Kafka appends a batch meanwhile
        f.write(log_bytes((3, 5)))
    rest = list(it)
    assert first.batch.base_offset == 0 and all(i.batch.base_offset >= 3 for i in rest)


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(MetadataDirError, match="no such directory"):
        open_metadata_dir(tmp_path / "missing")
    (tmp_path / "f.log").write_bytes(b"")
    with pytest.raises(MetadataDirError, match="use --snapshot"):
        open_metadata_dir(tmp_path / "f.log")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MetadataDirError, match="not a KRaft metadata log directory"):
        open_metadata_dir(tmp_path / "empty")
    with pytest.raises(MetadataDirError, match="is a directory"):
        plan_file(tmp_path)
    with pytest.raises(MetadataDirError, match="no such file"):
        plan_file(tmp_path / "nope.checkpoint")


def test_partition_dir_under_another_name(tmp_path: Path) -> None:
    d = tmp_path / "copy"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(log_bytes((0, 2)))
    md = open_metadata_dir(d)
    assert md.path == d and md.meta is None and md.warnings == []
    assert [o for _, o, _ in read_all(md.plan())[0]] == [0, 1]
    (d / "partition.metadata").write_text("version: 0\ntopic_id: ASNFZ4mrze8P7cuph2VDIQ")
    assert [w.kind for w in open_metadata_dir(d).warnings] == ["not-metadata-topic"]


# ------------------------------------------------------------------------------------------ --snapshot FILE


def test_plan_file(tmp_path: Path) -> None:
    root = make_dir(
        tmp_path,
        segments={7: log_bytes((7, 10))},
        snapshots={(5, 2): snapshot_bytes(5, 2)},
        bootstrap=snapshot_bytes(1, 0),
    )
    plan = plan_file(root / PART / "00000000000000000005-0000000002.checkpoint")
    assert [(s.kind, s.lenient_tail) for s in plan.steps] == [("snapshot", False)]
    assert (plan.snapshot.end_offset, plan.snapshot.epoch) == (5, 2) and plan.start_offset == 0
    got, _ = read_all(plan)
    assert len(got) == 5
    plan = plan_file(root / PART / "00000000000000000007.log")
    assert [(s.kind, s.lenient_tail, s.base_offset) for s in plan.steps] == [("log", True, 7)]
    assert [o for _, o, _ in read_all(plan)[0]] == [7, 8, 9]
    assert plan_file(root / "bootstrap.checkpoint").steps[0].kind == "bootstrap"
    other = tmp_path / "renamed.bin"
    shutil.copy(root / PART / "00000000000000000005-0000000002.checkpoint", other)
    assert plan_file(other).steps[0].kind == "snapshot" and plan_file(other).snapshot is None
    shutil.copy(root / PART / "00000000000000000007.log", other)
    assert plan_file(other).steps[0].kind == "log"


# ------------------------------------------------------------------------------------------ read-only


class _WriteSpy:
    """Fails the test on any open() for writing, and records what was opened."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[str] = []
        real_open, real_os_open = builtins.open, os.open

        def spy_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, (str, os.PathLike)):
                self.opened.append(os.fspath(file))
                assert not set(str(mode)) & set("wax+"), f"opened {file} with mode {mode}"
            return real_open(file, mode, *args, **kwargs)

        def spy_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            assert not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC), path
            if isinstance(path, (str, os.PathLike)):
                self.opened.append(os.fspath(path))  # files are opened with os.open (open_regular)
            return real_os_open(path, flags, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", spy_open)
        monkeypatch.setattr(os, "open", spy_os_open)


def tree_state(root: Path) -> list[tuple[str, int, int, int]]:
    return sorted(
        (str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns, p.stat().st_mode)
        for p in [root, *root.rglob("*")]
    )


def make_read_only(root: Path) -> None:
    for p in sorted(root.rglob("*"), reverse=True) + [root]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


@needs_vectors
def test_read_only_copy_is_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sources = [VECTOR_DIR] + CORPUS_DIRS[:2]
    for i, src in enumerate(sources):
        copy = tmp_path / f"ro{i}"
        shutil.copytree(src, copy)
        make_read_only(copy)
        before = tree_state(copy)
        with monkeypatch.context() as m:
            spy = _WriteSpy(m)
            for path in (copy, copy / PART):
                d = open_metadata_dir(path)
                reader = PlanReader(d.plan())
                n = sum(len(item.records) for item in reader)
                assert n > 0 and reader.warnings == []
                f = next(iter(d.segments)).path
                assert sum(b.records_count for b in iter_file_batches(f)) > 0
            assert any(o.endswith(".log") for o in spy.opened)
        assert tree_state(copy) == before  # nothing created, modified, or re-permissioned
        assert not (copy / ".lock").exists()
        for p in [copy, *copy.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)


# ------------------------------------------------------------------------------------------ the corpus


def corpus_expectations() -> dict[str, tuple[int, int]]:
    """README table: folder -> (log records, .checkpoint files)."""
    out = {}
    for line in (CORPUS / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 6 and re.match(r"^\d+ \(\d+\)$", cells[4]):
            out[cells[1]] = (int(cells[4].split()[0]), int(cells[5]))
    return out


@needs_corpus
@pytest.mark.corpus
@pytest.mark.parametrize("folder", CORPUS_DIRS, ids=lambda p: p.name)
def test_corpus_directory_plans_and_reads(folder: Path) -> None:
    expected_log_records, expected_checkpoints = corpus_expectations()[folder.name]
    d = open_metadata_dir(folder)
    assert d.warnings == [] and d.meta is not None and d.quorum is not None
    assert len(d.snapshots) == expected_checkpoints
    # every segment batch, as kafka-dump-log would list them
    warnings: list[LogWarning] = []
    total = sum(b.records_count for s in d.segments for b in iter_file_batches(s.path, warn=warnings.append))
    assert total == expected_log_records and warnings == []
    plan = d.plan()
    reader = PlanReader(plan)
    items = list(reader)
    assert reader.warnings == []
    log_records = sum(len(i.records) for i in items if i.kind == "log")
    if plan.snapshot is None:
        assert log_records == expected_log_records and plan.start_offset == 0
        assert reader.log_last_offset == expected_log_records - 1
    else:
        assert plan.snapshot == d.latest_snapshot()
        assert reader.log_last_offset is not None
        assert log_records == reader.log_last_offset + 1 - plan.start_offset
        assert items[0].kind == "snapshot" and items[0].batch.is_control
    for s in d.snapshots:  # every snapshot reads cleanly too
        sp = plan_file(s.path)
        r = PlanReader(sp)
        assert sum(len(i.records) for i in r) > 0 and r.warnings == []


def test_an_empty_leader_epoch_checkpoint_is_empty_not_malformed(tmp_path: Path) -> None:
    from metashell.log.directory import read_leader_epoch_checkpoint

    path = tmp_path / "leader-epoch-checkpoint"
    path.write_bytes(b"")
    warnings: list[Any] = []
    assert read_leader_epoch_checkpoint(path, warnings) == []
    assert [w.message for w in warnings] == ["empty (no leader epoch written yet)"]


def test_the_benchmark_generator_explains_itself() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "metagen.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("usage: bench/metagen.py"), proc.stderr
