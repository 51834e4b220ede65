"""``--at OFFSET|TIME`` and the shell's ``at``, on directories written by real Kafka 4.4.

Kafka wrote each snapshot from its own image at the snapshot's end offset, so the image metashell
rebuilds at ``end offset - 1`` must equal the snapshot loaded alone: Kafka is the oracle for what
the metadata was at that point.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, corpus_dirs
from test_cli import run_cli
from test_image_loader import image_state

from metashell.image.loader import load_directory, load_file
from metashell.image.timepoint import PointError, earliest_offset, parse_point, resolve_in_dir
from metashell.log import iter_file_batches, open_metadata_dir
from metashell.shell.sources import open_directory
from metashell.shell.travel import Traveller
from metashell.tree import Node, build_root
from metashell.tree.render import iter_find

BROKER = FIXTURES / "kafka-4.4-broker"


def quiet(_line: str) -> None:
    pass


def _fixture_names() -> list[str]:
    import json

    return sorted(json.loads((FIXTURES / "manifest.json").read_text()))


@pytest.mark.parametrize("fixture", _fixture_names())
def test_at_a_snapshot_offset_is_kafkas_snapshot(fixture: str) -> None:
    """Every fixture, each release line's included: ``--at`` a snapshot's offset is that snapshot."""
    d = open_metadata_dir(FIXTURES / fixture)
    for snap in (s for s in d.snapshots if not s.is_bootstrap):
        at = open_directory(str(FIXTURES / fixture), quiet, True, at=str(snap.end_offset - 1))
        assert image_state(at.image) == image_state(load_file(snap.path).image), snap.name
        assert at.image.provenance.offset == snap.end_offset - 1 and at.point == f"@{snap.end_offset - 1}"


def test_at_a_time_is_the_last_batch_appended_by_then() -> None:
    index = load_directory(BROKER).index
    log = [e for e in index if e.kind == "log"]
    target = log[len(log) // 2]
    iso = f"@{target.max_timestamp}"
    by_time = open_directory(str(BROKER), quiet, True, at=iso)
    last = max(e.last_offset for e in log if e.max_timestamp <= target.max_timestamp)
    assert by_time.image.provenance.offset == last
    assert image_state(by_time.image) == image_state(load_directory(BROKER, until_offset=last).image)


def test_points_are_parsed_and_checked() -> None:
    assert parse_point("42") == ("offset", 42)
    assert parse_point("@1700000000000") == ("time", 1700000000000)
    assert parse_point("2023-11-14T22:13:20Z") == ("time", 1700000000000)
    assert parse_point("2023-11-14T22:13:20") == ("time", 1700000000000)  # no zone: UTC
    assert parse_point("2023-11-14T23:13:20+01:00") == ("time", 1700000000000)
    for bad in ("-3", "yesterday", "12:00"):
        with pytest.raises(PointError):
            parse_point(bad)
    with pytest.raises(PointError, match="before the oldest batch"):
        resolve_in_dir(open_metadata_dir(BROKER), "2001-01-01T00:00:00Z")


def test_a_point_before_the_oldest_snapshot_names_the_earliest(tmp_path: Path) -> None:
    root = tmp_path / "cut"
    shutil.copytree(BROKER, root)
    part = root / "__cluster_metadata-0"
    for name in ("00000000000000000000.log", "00000000000000000061.log"):
        (part / name).unlink()  # Kafka deletes segments a snapshot covers
    d = open_metadata_dir(root)
    assert earliest_offset(d) == 113  # the snapshot ending at 114
    status, out, err = run_cli("-d", str(root), "--at", "50", "ls")
    assert (status, out) == (1, "")
    assert "offset 50 is before the earliest this directory can rebuild, offset 113" in err
    assert run_cli("-d", str(root), "--at", "113", "ls", "/topics")[0] == 0


def test_at_in_the_shell_moves_the_session_and_back() -> None:
    status, out, err = run_cli(
        "-d", str(BROKER), "-c", "cd /topics; at 113; pwd; cat /provenance; at; cat /provenance"
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("now at: offset 113 (epoch ")
    assert lines[1] == "/topics"
    back = [i for i, ln in enumerate(lines) if ln.startswith("back at the end of the log: offset 429")]
    assert back
    status, _, err = run_cli("-q", "127.0.0.1:9093", "--at", "5", "ls")
    assert status == 2 and "--at applies to files" in err


def test_at_on_a_single_file() -> None:
    log = BROKER / "__cluster_metadata-0" / "00000000000000000117.log"
    whole = load_file(log).image.provenance.offset
    status, out, _ = run_cli("-s", str(log), "--at", "150", "--json", "cat", "/provenance")
    offset = json.loads(out)["value"]["offset"]
    # -s keeps Kafka's shell semantics: the image is the last delta Kafka's loader published by then
    assert status == 0 and 117 <= offset <= 150 < whole


# -- history PATH --------------------------------------------------------------------------------------


def _partition_state(directory: Path, offset: int, topic: str, partition: int):  # type: ignore[no-untyped-def]
    img = load_directory(directory, until_offset=offset).image
    t = img.topics.by_name.get(topic)
    return None if t is None else t.partitions.get(partition)


def test_partition_history_agrees_with_the_image_at_every_change() -> None:
    """Each change's old value is the partition's state in the image just before its offset, and its
    new value the state at it -- images replayed with Kafka's rules, written by real Kafka."""
    from metashell.image.history import history, parse_target
    from metashell.log.plans import full_plan

    changes = list(history(full_plan(open_metadata_dir(BROKER)), parse_target(["topics", "orders", "3"])))
    assert changes[0].record == "PartitionRecord" and len(changes) > 5
    fields = {"Isr": "isr", "Leader": "leader", "Replicas": "replicas"}
    checked = 0
    for c in changes[1:]:
        before = _partition_state(BROKER, c.offset - 1, "orders", 3)
        after = _partition_state(BROKER, c.offset, "orders", 3)
        for field, attr in fields.items():
            if field in c.changes:
                old, new = c.changes[field]
                assert (getattr(before, attr), getattr(after, attr)) == (
                    tuple(old) if isinstance(old, list) else old,
                    tuple(new) if isinstance(new, list) else new,
                )
                checked += 1
    assert checked >= 5


def test_history_in_the_shell() -> None:
    demo = FIXTURES / "demo"
    status, out, err = run_cli("-d", str(demo), "history", "/topics/tmp-scratch")
    assert status == 0, err
    assert [line.split()[4] for line in out.splitlines()] == [
        "TopicRecord",
        "PartitionRecord",
        "RemoveTopicRecord",
    ]
    assert "topic tmp-scratch deleted" in out  # a deleted topic has a history
    status, out, _ = run_cli("-d", str(BROKER), "--json", "history", "/brokers/5")
    events = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and events[0]["record"] == "RegisterBrokerRecord"
    assert any(e["changes"].get("fenced") == [False, True] for e in events)
    assert [e["summary"] for e in events if e["record"] == "UnregisterBrokerRecord"] == [
        "broker unregistered"
    ]
    status, out, _ = run_cli("-d", str(BROKER), "history", "/configs/topic/orders/segment.bytes")
    assert status == 0 and out.splitlines()[-1].endswith("topic orders config segment.bytes deleted")
    assert run_cli("-d", str(BROKER), "-c", "history 2")[0] == 0  # Kafka's command history still works
    status, _, err = run_cli("-d", str(BROKER), "history", "/quorum")
    assert status == 1 and err.startswith("history: /quorum: history follows /topics/NAME")


# -- log -----------------------------------------------------------------------------------------------


def test_log_lists_records_with_summaries() -> None:
    demo = str(FIXTURES / "demo")
    status, out, err = run_cli("-d", demo, "log", "--from", "38", "--to", "41")
    assert status == 0, err
    lines = out.splitlines()
    assert [int(ln.split()[0]) for ln in lines] == [38, 39, 40, 41]
    assert lines[0].endswith("topic tmp-scratch created") and lines[-1].endswith("topic tmp-scratch deleted")
    status, out, _ = run_cli("-d", demo, "log", "--type", "PARTITION_CHANGE_RECORD")
    changes = out.splitlines()
    assert changes and all(" PartitionChangeRecord " in ln for ln in changes)
    assert "leader 1 -> none; isr [1] -> []; elr [] -> [1]; last known elr [] -> [1]" in changes[0]
    _, out, _ = run_cli("-d", demo, "log", "--to", "12")
    txn = [ln for ln in out.splitlines() if ln.endswith("[txn]")]
    assert txn[0].split()[4] == "BeginTransactionRecord" and txn[-1].split()[4] == "EndTransactionRecord"
    status, _, err = run_cli("-d", demo, "log", "--from", "x")
    assert status == 1 and "log: --from x: not an offset, an ISO time" in err


@pytest.mark.parametrize(
    ("words", "first"),
    [
        ("PartitionChange", "PartitionChangeRecord"),
        ("partition_change", "PartitionChangeRecord"),
        ("noop", "NoOpRecord"),
        ("leaderchange", "LeaderChange"),
        ("Topic,!NoOp", "TopicRecord"),
    ],
)
def test_log_type_takes_the_names_an_operator_remembers(words: str, first: str) -> None:
    """``PartitionChange``, ``noop`` printed nothing with status 0, as if there were no such record."""
    status, out, err = run_cli("-d", str(FIXTURES / "demo"), "log", "--type", words)
    lines = out.splitlines()
    assert status == 0 and lines, err
    assert lines[0].split()[4] == first
    assert all(ln.split()[4] in {first} for ln in lines)


def test_log_type_excludes_and_refuses_unknown_names_with_a_hint() -> None:
    demo = str(FIXTURES / "demo")
    _, every, _ = run_cli("-d", demo, "log", "--all")
    _, out, _ = run_cli("-d", demo, "log", "--type", "!NoOpRecord")
    assert out.splitlines() == [ln for ln in every.splitlines() if ln.split()[4] != "NoOpRecord"]
    assert run_cli("-d", demo, "log")[1] == out  # NoOps are hidden unless asked for
    status, out, err = run_cli("-d", demo, "log", "--type", "PartitionChang")
    assert status == 1 and out == ""
    assert (
        err
        == "log: --type PartitionChang: no such record type (did you mean PartitionChangeRecord, PartitionRecord?)\n"
    )
    status, _, err = run_cli("-d", demo, "log", "--type", "bogus")
    assert status == 1 and err == "log: --type bogus: no such record type\n"


def test_log_times_have_three_digit_milliseconds() -> None:
    _, out, _ = run_cli("-d", str(FIXTURES / "demo"), "log")
    times = [ln.split()[1] for ln in out.splitlines()]
    assert times and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", t) for t in times), times[:5]


def test_log_json_redacts_like_everything_else() -> None:
    fixture = str(FIXTURES / "kafka-4.4-split-c1")
    _, out, _ = run_cli("-d", fixture, "log", "--json", "--type", "ConfigRecord")
    rows = [json.loads(line) for line in out.splitlines()]
    throttle = [r for r in rows if r["data"]["name"] == "leader.replication.throttled.rate"]
    assert throttle and all(r["data"]["value"] == "[redacted]" for r in throttle)
    _, out, _ = run_cli("-d", fixture, "--no-redact", "log", "--json", "--type", "ConfigRecord")
    assert "[redacted]" not in out


# -- diff ----------------------------------------------------------------------------------------------


def test_diff_between_two_points_is_the_difference_of_their_values() -> None:
    """At several batch boundaries: ``diff --from A --to B`` lists exactly the values that differ
    between the images loaded up to A and up to B."""
    from metashell.tree import build_root
    from metashell.tree.values import tree_values

    log = [e for e in load_directory(BROKER).index if e.kind == "log"]
    points = [e.last_offset for e in log[:: max(1, len(log) // 6)]][:6]
    for a, b in pairwise(points):
        va = dict(tree_values(build_root(load_directory(BROKER, until_offset=a).image), [], True))
        vb = dict(tree_values(build_root(load_directory(BROKER, until_offset=b).image), [], True))
        expected = sorted(
            (
                p
                for p in va.keys() | vb.keys()
                if va.get(p) != vb.get(p) and not p.startswith(BOOKKEEPING) and not p.endswith(" source")
            ),
            key=lambda p: [(1, int(x)) if x.isdigit() else (0, x) for x in re.split(r"(\d+)", p) if x],
        )
        status, out, err = run_cli("-d", str(BROKER), "--json", "diff", "--from", str(a), "--to", str(b))
        got = [json.loads(line)["path"] for line in out.splitlines()]
        assert got == expected, (a, b)
        assert status == (1 if expected else 0), err


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_diff_of_a_source_with_itself_is_empty(fixture: str) -> None:
    status, out, err = run_cli("-d", str(FIXTURES / fixture), "--diff-with", str(FIXTURES / fixture))
    assert (status, out, err) == (0, "", "")


def test_diff_of_a_broker_and_its_controller() -> None:
    status, out, _ = run_cli("-d", str(BROKER), "--diff-with", str(FIXTURES / "kafka-4.4-split-c1"))
    lines = out.splitlines()
    assert status == 1 and lines[0].startswith("--- end (offset ")
    assert lines[1].startswith(f"+++ {FIXTURES / 'kafka-4.4-split-c1'} (offset ")
    assert any(ln.startswith("-/quorum nodeId: 4") for ln in lines)  # two nodes: their quorum views count
    status, out, _ = run_cli("-d", str(BROKER), "diff", "--from", "365", "--to", "366", "/topics/slowmove")
    assert status == 1 and "+/topics/slowmove/0 replicas: [5,4]" in out.splitlines()
    status, _, err = run_cli("-d", str(BROKER), "diff")
    assert status == 1 and "diff: the session is at the end of the log: give --from POINT" in err


BOOKKEEPING = ("/quorum", "/provenance", "/local")


def test_diff_after_at_compares_the_point_with_the_end() -> None:
    """``diff`` alone after ``at N`` is what its man page says (--from: where the session is,
    --to: the end); it was an error."""
    demo = str(FIXTURES / "demo")
    status, out, err = run_cli("-d", demo, "-c", "at 30; diff /topics/orders")
    lines = out.splitlines()
    assert status == 1, err
    head = next(i for i, ln in enumerate(lines) if ln.startswith("---"))
    assert lines[head] == "--- @30 (offset 30, 2026-11-22T03:55:52.595Z)"
    assert lines[head + 1] == "+++ end (offset 70, 2026-11-22T03:55:59.509Z)"
    _, same, _ = run_cli("-d", demo, "diff", "--from", "30", "/topics/orders")
    assert same.splitlines() == lines[head:]


def test_diff_leaves_out_bookkeeping_sorts_numbers_and_gives_json_values() -> None:
    demo = str(FIXTURES / "demo")
    _, out, _ = run_cli("-d", demo, "diff", "--from", "20", "--to", "60")
    assert not [ln for ln in out.splitlines()[2:] if ln[1:].startswith(BOOKKEEPING) or " source:" in ln]
    _, out, _ = run_cli("-d", demo, "--json", "diff", "--from", "0")
    rows = [json.loads(line) for line in out.splitlines()]
    orders = [r["path"].split()[0] for r in rows if r["path"].startswith("/topics/orders/")]
    numbers = [int(p.rsplit("/", 1)[1]) for p in dict.fromkeys(orders) if p.rsplit("/", 1)[1].isdigit()]
    assert numbers == sorted(numbers) and len(numbers) > 1, numbers
    from metashell.shell.changes import diff_values as _diff_values

    left = {f"/topics/t/{i} leader": "1" for i in (0, 1, 2, 10, 11)}
    order = [path for _k, path, _o, _n in _diff_values(left, {})]
    assert order == [f"/topics/t/{i} leader" for i in (0, 1, 2, 10, 11)]  # not 0, 1, 10, 11, 2
    isr = next(r for r in rows if r["path"] == "/topics/orders/0 isr")
    assert isinstance(isr["new"], list)  # the value, not its JSON text in a string


def test_diff_with_another_cluster_says_so() -> None:
    status, _out, err = run_cli("-d", str(FIXTURES / "demo"), "--diff-with", str(BROKER))
    assert status == 1 and "diff: warning: two clusters: ojQnLEycTOSMI2Fga2yOXA and " in err


def _offsets(path: Path, earliest: int) -> tuple[list[int], list[int]]:
    """(every batch's last offset, every offset) of the segments, from ``earliest``."""
    d = open_metadata_dir(path)
    batches = [
        b
        for seg in d.segments
        for b in iter_file_batches(seg.path, decode=False, lenient_tail=True, warn=lambda w: None)
    ]
    ends = sorted({b.base_offset + b.last_offset_delta for b in batches} - set(range(earliest)))
    every = sorted(
        {
            o
            for b in batches
            for o in range(b.base_offset, b.base_offset + b.last_offset_delta + 1)
            if o >= earliest
        }
    )
    return ends, every


def _seen(root: Node) -> list[tuple[str, str]]:
    """Everything the tree shows, in the order it shows it (``/image`` included, provenance not:
    the file list and counts are checked separately)."""
    return [
        (path, node.text())
        for path, node in iter_find("/", root)
        if not node.is_dir and not path.startswith(("/provenance", "/image/provenance", "/local"))
    ]


def _state(root: Node) -> tuple[Any, ...]:
    """What is compared: the image, provenance, quorum and everything the tree shows."""
    image = root.ctx.image
    p, q = image.provenance, image.quorum
    return (
        image_state(image),
        (p.offset, p.epoch, p.timestamp, p.records, p.sources),
        (q.leader_id, q.leader_epoch, q.voters),
        _seen(root),
    )


def _same_as_fresh(
    travel: Traveller, path: Path, offset: int, fresh: dict[int, tuple[Any, ...]] | None = None
) -> None:
    root, _label = travel.move(str(offset))
    fresh = {} if fresh is None else fresh
    if offset not in fresh:
        fresh[offset] = _state(build_root(load_directory(path, until_offset=offset).image))
    assert _state(root) == fresh[offset], offset


FIXTURE_DIRS = [
    "kafka-4.4-broker",
    "kafka-4.4-split-c1",
    "kafka-3.9-broker",
    "kafka-3.9-split-c1",
    "kafka-3.9-zk-migration",
    "demo",
]


@pytest.mark.parametrize("fixture", FIXTURE_DIRS)
def test_at_every_offset_equals_a_fresh_truncated_load(fixture: str) -> None:
    """``at`` at every offset (batch boundaries and inside batches), walked forwards, backwards and
    in a shuffled order so the journal is undone and redone across every stretch, shows what a
    fresh load stopped at that offset shows -- to the order of the lines."""
    path = FIXTURES / fixture
    source = open_directory(str(path), quiet, True)
    assert source.travel is not None
    earliest = earliest_offset(open_metadata_dir(path))
    assert earliest is not None
    _ends, every = _offsets(path, earliest)
    assert len(every) > 1
    shuffled = every[:]
    random.Random(fixture).shuffle(shuffled)
    fresh: dict[int, tuple[Any, ...]] = {}
    for offset in every + every[::-1] + shuffled:
        _same_as_fresh(source.travel, path, offset, fresh)
    root, label = source.travel.move(None)
    assert label is None and _seen(root) == _seen(build_root(load_directory(path).image))


@pytest.mark.parametrize("corpus", corpus_dirs())
def test_at_in_corpus_dirs_equals_a_fresh_truncated_load(corpus: Path) -> None:
    source = open_directory(str(corpus), quiet, True)
    assert source.travel is not None
    earliest = earliest_offset(open_metadata_dir(corpus))
    if earliest is None:
        pytest.skip(f"{corpus.name}: no log or snapshot to travel through")
    _ends, every = _offsets(corpus, earliest)
    picks = random.Random(corpus.name).sample(every, min(25, len(every)))
    for offset in picks:
        _same_as_fresh(source.travel, corpus, offset)


@pytest.mark.parametrize("fixture", ["kafka-4.4-broker", "kafka-3.9-split-c1", "demo"])
def test_rebuild_at_every_batch_boundary_equals_a_fresh_truncated_load(fixture: str) -> None:
    """``rebuild_at`` (nearest snapshot, segments entered through the batch index: how points
    before the journal are reached) gives, at every batch boundary, a fresh truncated load's image."""
    from metashell.image.loader import rebuild_at

    path = FIXTURES / fixture
    end = load_directory(path)
    earliest = earliest_offset(open_metadata_dir(path))
    assert earliest is not None
    boundaries, _every = _offsets(path, earliest)
    assert len(boundaries) > 10
    for offset in boundaries:
        rebuilt = rebuild_at(end, offset)
        fresh = load_directory(path, until_offset=offset)
        assert image_state(rebuilt.image) == image_state(fresh.image), offset
        assert rebuilt.image.provenance.offset == fresh.image.provenance.offset == offset


@pytest.mark.parametrize("fixture", ["kafka-4.4-split-c1", "kafka-3.9-broker", "kafka-3.9-zk-migration"])
def test_log_from_the_journal_says_what_reading_from_the_snapshot_says(fixture: str) -> None:
    """``log --from A`` takes names and partition states from the journaled image at A - 1 instead
    of replaying from a snapshot: the summaries (what each change replaced) must not change."""
    from metashell.image.changelog import iter_log

    source = open_directory(str(FIXTURES / fixture), quiet, True)
    assert source.travel is not None and source.full_plan is not None
    timeline = source.travel.end().timeline
    assert timeline is not None
    for first in range(timeline.start + 1, timeline.end + 2):
        with source.travel.log_from(first) as fast:
            assert fast is not None
            plan, base = fast
            quick = [(e.offset, e.record, e.summary) for e in iter_log(plan, first=first, base=base)]
        slow = [(e.offset, e.record, e.summary) for e in iter_log(source.full_plan(first), first=first)]
        assert quick == slow, first


def test_a_point_no_log_covers_is_refused_with_what_can_be_rebuilt(tmp_path: Path) -> None:
    """Two snapshots with the segments between them deleted: ``--at`` there silently gave the older
    snapshot's image with status 0."""
    gap = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", gap)
    for name in ("00000000000000000026.log", "00000000000000000050.log"):
        (gap / "__cluster_metadata-0" / name).unlink()
    status, out, err = run_cli("-d", str(gap), "--at", "55", "-c", "ls")
    assert status == 1 and out == ""
    assert "offset 55 is in a stretch no log segment of this directory covers" in err
    assert "it can rebuild offsets 0-25, 40, 69" in err
    status, _out, err = run_cli("-d", str(gap), "--at", "20", "-c", "ls")
    assert status == 0, err


def test_a_log_that_starts_above_zero_without_a_snapshot_says_what_it_holds(tmp_path: Path) -> None:
    only = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", only)
    part = only / "__cluster_metadata-0"
    for p in part.iterdir():
        if p.name.endswith(".checkpoint") or p.name.startswith("00000000000000000000"):
            p.unlink()
    status, _out, err = run_cli("-d", str(only), "--at", "30", "-c", "ls")
    assert status == 1
    assert "cannot rebuild any offset: its log starts at offset 26, and no snapshot is at or before it" in err


def test_a_lone_file_refuses_points_it_does_not_hold() -> None:
    """``-s SNAPSHOT`` then ``at 10`` landed silently on the snapshot's end."""
    part = FIXTURES / "demo" / "__cluster_metadata-0"
    status, _out, err = run_cli("-s", str(part / "00000000000000000070-0000000001.checkpoint"), "-c", "at 10")
    assert status == 1 and "a snapshot holds one point, offset 69" in err
    status, _out, err = run_cli("-s", str(part / "00000000000000000070-0000000001.checkpoint"), "-c", "at 69")
    assert status == 0, err
    status, _out, err = run_cli("-s", str(part / "00000000000000000026.log"), "-c", "at 10")
    assert status == 1 and "before this segment's first batch, offset 26" in err


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        ("describe acl --operation REEAD", "not an ACL operation (did you mean READ?)"),
        ("describe ordrs", "topic 'ordrs' does not exist (did you mean orders?)"),
        ("history /topics/ordrs", "(no such path now; did you mean /topics/orders?)"),
    ],
)
def test_a_typo_is_answered_with_the_nearest_name(command: str, hint: str) -> None:
    """A mistyped value read as "nothing there" (or a bare "not an ACL operation") at 3 a.m."""
    status, _out, err = run_cli("-d", str(FIXTURES / "demo"), "-c", command)
    assert status == 1 and hint in err, err


def test_watch_says_what_it_watches_and_a_new_object_is_one_line(tmp_path: Path) -> None:
    """``watch`` printed fourteen ``None -> ...`` lines for one new object, and nothing about what
    it watched until a change came."""
    import test_terminal_safety as safety

    safety.write_log(tmp_path, "orders")
    thread = safety._append_a_topic_soon(tmp_path, "orders", 0)
    status, out, err = run_cli("-d", str(tmp_path), "-c", "watch --count 1 --interval 0.2 /topics")
    thread.join()
    assert status == 0 and err == "watching /topics from offset 10 (Ctrl-C stops)\n"
    assert out.split() == ["11", "2023-11-14T22:13:22.000Z", "/topics/orders0:", "created"]
    thread = safety._append_a_topic_soon(tmp_path, "orders", 1)
    _status, out, _err = run_cli("-d", str(tmp_path), "-c", "watch --count 1 --interval 0.2 --json /topics")
    thread.join()
    assert json.loads(out) == {
        "offset": 12,
        "time": "2023-11-14T22:13:22.001Z",
        "path": "/topics/orders1",
        "change": "created",
        "old": None,
        "new": None,
    }


# -- the same words and the same points everywhere (issue 25, items 13, 14 and 16) ------------------------


def test_log_and_history_tell_a_change_in_the_same_words() -> None:
    demo = str(FIXTURES / "demo")
    _, log, _ = run_cli("-d", demo, "log", "--from", "64", "--to", "64")
    _, hist, _ = run_cli("-d", demo, "history", "/topics/orders/0", "--from", "64")
    words = "leader 1 -> none; isr [1] -> []; elr [] -> [1]; last known elr [] -> [1]"
    assert log.rstrip().endswith(f"partition orders-0: {words}")
    assert hist.rstrip().endswith(words)
    _, log, _ = run_cli("-d", demo, "log", "--from", "19", "--to", "19")
    _, hist, _ = run_cli("-d", demo, "history", "/configs/topic/orders/retention.ms")
    assert log.rstrip().endswith("topic orders config retention.ms = 604800000")
    assert hist.rstrip().endswith("topic orders config retention.ms = 604800000")
    _, log, _ = run_cli("-d", demo, "log", "--to", "12")
    lines = log.splitlines()
    assert lines[0].endswith("LeaderChange                    leader 1, voters [1], granted by [1]")
    assert lines[-1].endswith(
        "controller 1 registered, incarnation tP5F76U9S3y0nphUOp9YKg, CONTROLLER://127.0.0.1:47499"
    )
    assert "broker <default> config min.insync.replicas = 1 [txn]" in log


def test_a_secret_config_value_is_redacted_in_log_summaries(tmp_path: Path) -> None:
    from metashell.log.encoding import build_batch
    from metashell.protocol.metadata import encode_metadata_record as enc

    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    value = {"ResourceType": 4, "ResourceName": "1", "Name": "ssl.key.password", "Value": "hunter2"}
    (part / "00000000000000000000.log").write_bytes(build_batch(0, 1, [enc("ConfigRecord", 0, value)], 1))
    _, out, _ = run_cli("-d", str(part), "log")
    assert "hunter2" not in out and "broker 1 config ssl.key.password = [redacted]" in out
    _, out, _ = run_cli("-d", str(part), "--no-redact", "log")
    assert "= hunter2" in out


@pytest.mark.parametrize("when", ["-1s", "1s", "1000ms", "-0h0m1s"])
def test_points_take_a_duration_before_the_logs_end(when: str) -> None:
    """The demo's last batch was appended at 03:55:59.509; one second before it is offset 55."""
    demo = str(FIXTURES / "demo")
    assert run_cli("-d", demo, "--at", when, "cat", "/provenance/offset")[1] == "55\n"
    assert run_cli("-d", demo, "-c", f"at {when}")[1].startswith("now at: offset 55 ")
    _, out, _ = run_cli("-d", demo, "log", "--from", when)
    assert [int(ln.split()[0]) for ln in out.splitlines()][:1] == [57]  # the records after that point
    _, out, _ = run_cli("-d", demo, "history", "/brokers/1", "--from", when)
    assert [int(ln.split()[0]) for ln in out.splitlines()] == [57, 70]
    status, out, _ = run_cli("-d", demo, "diff", "--from", when, "/brokers/1")
    assert status == 1 and "inControlledShutdown" in out


def test_a_duration_past_the_logs_start_says_where_the_log_starts() -> None:
    status, _, err = run_cli("-d", str(FIXTURES / "demo"), "--at", "1h", "health")
    assert status == 1 and "before the oldest batch this log still holds" in err


def test_a_records_fields_are_paths() -> None:
    demo = str(FIXTURES / "demo")
    status, out, _ = run_cli("-d", demo, "cat", "/provenance/offset", "/brokers/1/listeners/0/name")
    assert status == 0 and out == "70\nBROKER\n"
    status, _, err = run_cli("-d", demo, "cat", "/provenance/nope")
    assert status == 1 and "no such file" in err.lower()
    status, out, _ = run_cli("-d", demo, "--json", "cat", "/provenance/epoch")
    assert json.loads(out) == {"path": "/provenance/epoch", "kind": "scalar", "value": 1}


def test_history_n_inside_a_topic_is_that_partition() -> None:
    demo = str(FIXTURES / "demo")
    _, inside, _ = run_cli("-d", demo, "-c", "cd /topics/orders", "-c", "history 0")
    _, whole, _ = run_cli("-d", demo, "history", "/topics/orders/0")
    assert inside == whole and "partition created" in inside
    _, out, _ = run_cli("-d", demo, "-c", "cd /brokers", "-c", "history 1")
    assert "RegisterBrokerRecord" not in out  # elsewhere it is the commands typed


def test_ls_over_a_glob_shows_each_directorys_path() -> None:
    demo = str(FIXTURES / "demo")
    _, out, _ = run_cli("-d", demo, "ls", "/topics/*/configs")
    heads = [ln for ln in out.splitlines() if ln.endswith(":")]
    assert heads == ["/topics/clickstream/configs:", "/topics/orders/configs:", "/topics/payments/configs:"]
    _, out, _ = run_cli("-d", demo, "-c", "cd /topics", "-c", "ls */configs")
    assert "orders/configs:" in out.splitlines()
    _, out, _ = run_cli("-d", demo, "ls", "/image/topics/byName/*")  # Kafka's form under /image
    assert "orders:" in out.splitlines()


def test_a_snapshots_own_point_resolves_without_reading_the_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--at`` the newest snapshot's point (what the TUI opens a long log at) reads no batch header:
    a snapshot's point is always rebuildable from it. Any other offset is still checked."""
    from metashell.log import headers

    d = open_metadata_dir(FIXTURES / "kafka-3.8")
    real = headers.batch_headers
    read: list[int] = []

    def counted(paths: Any) -> Any:
        read.append(1)
        return real(paths)

    monkeypatch.setattr(headers, "batch_headers", counted)
    monkeypatch.setattr(headers, "_SPANS", {})  # nothing read before this test counts
    assert resolve_in_dir(d, "95").offset == 95 and not read
    assert resolve_in_dir(d, "100").offset == 100 and read
