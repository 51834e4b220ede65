"""A topic's partitions left as their records by the native engine until they are read
(``native/src/replay/deferred.rs``, ``Topic.partitions``): made then, they are what Python's rules make,
in the same order, with the same faults, whatever came between; with a journal, their changes are
journalled as rows (``native/src/replay/journal.rs``).
The whole-pipeline differentials (``test_native_differential.py``) read every partition too."""

from __future__ import annotations

import gc
import itertools
from pathlib import Path
from typing import Any

import pytest
from conftest import native_core
from test_native_differential import _METADATA_VERSION, _faults, _loaded_and_replayed, _topics

from metashell.image.model import Topic
from metashell.protocol.metadata import encode_metadata_record

TID = [bytes([t]) * 16 for t in range(1, 4)]


@pytest.fixture(autouse=True)
def _native() -> Any:
    return native_core()


def topic(t: int) -> bytes:
    return encode_metadata_record("TopicRecord", 0, {"Name": f"t{t}", "TopicId": TID[t]})


def partition(
    t: int, pid: int, replicas: tuple[int, ...] = (1, 2, 3), dirs: int | None = None, epoch: int = 3
) -> bytes:
    data: dict[str, Any] = {
        "PartitionId": pid,
        "TopicId": TID[t],
        "Replicas": list(replicas),
        "Isr": list(replicas),
        "Leader": replicas[0],
        "LeaderEpoch": epoch,
        "PartitionEpoch": 5,
    }
    if dirs is not None:
        data["Directories"] = [bytes([9]) * 16] * dirs
    return encode_metadata_record("PartitionRecord", 2, data)


def change(t: int, pid: int, **fields: Any) -> bytes:
    return encode_metadata_record(
        "PartitionChangeRecord", 2, {"PartitionId": pid, "TopicId": TID[t], **fields}
    )


def loaded(tmp_path: Path, values: list[bytes], batch: int = 1000) -> tuple[Any, Any]:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    return _loaded_and_replayed(part, [_METADATA_VERSION, *values], itertools.repeat(batch))


def same_order(got: Any, want: Any) -> bool:
    """Each topic's partitions in the order Python inserted them (dict equality ignores it)."""
    return all(
        list(t.partitions) == list(want.topics.by_id[tid].partitions) for tid, t in got.topics.by_id.items()
    )


def test_partitions_wait_until_read_then_are_pythons(tmp_path: Path) -> None:
    values = [topic(0), partition(0, 2), partition(0, 0), partition(0, 1), topic(1), partition(1, 0)]
    values += [change(0, 1, Leader=2), change(1, 0, Isr=[1, 2]), change(0, 1, Isr=[2, 3]), topic(2)]
    got, want = loaded(tmp_path, values)
    waiting = {t.name: len(t._pending) for t in got.image.topics.by_id.values()}
    assert waiting == {"t0": 3, "t1": 1, "t2": 0}  # the changes applied to them as they wait ...
    assert sorted(got.image.topics.by_name) == ["t0", "t1", "t2"]  # ... names need none made
    assert all(t._pending is not None for t in got.image.topics.by_id.values())
    assert _topics(got.image) == _topics(want.image) and same_order(got.image, want.image)
    assert all(t._pending is None for t in got.image.topics.by_id.values())
    assert _faults(got, want)


def test_what_python_applies_meets_the_partitions_made_first(tmp_path: Path) -> None:
    """A record the native rules leave to Python (a directory count that does not match, a replica
    change, an unknown partition) is applied after the deferred records before it, in every batch
    size: the same partitions, order and faults as Python's rules one record at a time."""
    values = [topic(0), partition(0, 0), partition(0, 1, dirs=2), partition(0, 2), change(0, 0, Leader=2)]
    values += [change(0, 2, Replicas=[3, 2, 1]), change(0, 0, Isr=[1, 3]), change(0, 9, Leader=1)]
    values += [partition(0, 3), topic(1), partition(1, 0), change(1, 0, Leader=3), partition(0, 0, (4, 5))]
    for batch in (1, 2, 3, 1000):
        case = tmp_path / str(batch)
        case.mkdir()
        got, want = loaded(case, values, batch)
        assert _topics(got.image) == _topics(want.image) and same_order(got.image, want.image)
        assert _faults(got, want) and got.faults


def test_what_rows_cannot_hold_is_made_at_once_as_python_makes_it(tmp_path: Path) -> None:
    """A topic of more than 1024 partitions numbered out of order (finding one would mean a scan) and
    an epoch at int32's end (Python's ints go on past it) are not kept waiting: the same partitions
    as Python's rules, in the same order."""
    values = [topic(0), *(partition(0, pid) for pid in reversed(range(1100))), change(0, 7, Leader=2)]
    values += [partition(0, 1099, (4, 5)), topic(1), partition(1, 0, epoch=2**31 - 1), partition(1, 1)]
    values += [change(1, 0, Leader=2), change(1, 1, Leader=3), change(1, 0, Isr=[1])]
    got, want = loaded(tmp_path, values)
    assert _topics(got.image) == _topics(want.image) and same_order(got.image, want.image)
    assert got.image.topics.by_id[TID[1]].partitions[0].leader_epoch == 2**31
    assert _faults(got, want)


def _journalled(native: Any, values: list[bytes], changes: list[bytes]) -> tuple[Any, Any]:
    """A native replayer given ``values`` unjournalled (its topics' partitions wait as rows), then
    ``changes`` with a journal; and a Python replayer given both."""
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    fast, slow = Replayer(), Replayer()
    cache = native.ReplayCache()
    entries = [(i, 0, None, v) for i, v in enumerate(values)]
    assert native.replay_run(fast, entries, 0, _CONSTANTS, cache) == len(entries)
    fast.journal = []
    later = [(100 + i, 0, None, v) for i, v in enumerate(changes)]
    assert native.replay_run(fast, later, 0, _CONSTANTS, cache) == len(later)
    for off, _ts, _key, value in entries + later:
        slow.replay_value(value, off)
    return fast, slow


def test_a_journal_keeps_a_waiting_rows_change_as_its_old_row(_native: Any) -> None:
    """With a journal, a change of a partition still waiting as a row changes the row (nothing is
    made) and the journal keeps the old row in a ``ChangeRun`` (``native/src/replay/journal.rs``); walked
    back and forth it swaps the row while the partitions wait, and the partition made from it once
    they are made: the image equals Python's at both ends, either way."""
    from metashell.image.timeline import _walk

    values = [topic(0), partition(0, 0), partition(0, 1), topic(1), partition(1, 0)]
    changes = [change(0, 1, Leader=2), change(0, 1, Isr=[2, 3]), change(1, 0, Leader=3)]
    for made_after in (False, True):
        fast, slow = _journalled(_native, values, changes)
        t0, t1 = fast.image.topics.by_id[TID[0]], fast.image.topics.by_id[TID[1]]
        pending = t0._pending
        assert len(pending) == 2 and len(t1._pending) == 1  # nothing made
        [run] = fast.journal
        assert type(run) is _native.ChangeRun and len(run) == 3
        assert run.targets() == [(pending, 1), (pending, 1), (t1._pending, 0)]
        before = _journalled(_native, values, [])[0]
        if made_after:
            _walk(fast.journal, 1, 0)  # back while waiting, then made, then forth and back again
            assert _topics(fast.image) == _topics(before.image)
            _walk(fast.journal, 0, 1)
        assert _topics(fast.image) == _topics(slow.image)
        assert len(pending) == 0  # read: made
        _walk(fast.journal, 1, 0)
        assert _topics(fast.image) == _topics(before.image)
        _walk(fast.journal, 0, 1)
        assert _topics(fast.image) == _topics(slow.image)


def test_a_made_partitions_change_is_journalled_as_the_slots_it_replaced(_native: Any) -> None:
    """A change of a made partition moves the values it replaced into the run (the very objects:
    walked back, the partition holds them again), and a run is not appended to once anything
    else follows it in the journal."""
    from metashell.image.replay.native import _CONSTANTS
    from metashell.image.timeline import _walk

    fast, _slow = _journalled(_native, [topic(0), partition(0, 0)], [])
    p = fast.image.topics.by_id[TID[0]].partitions[0]
    isr, leader_epoch = p.isr, p.leader_epoch
    later = [change(0, 0, Isr=[1]), topic(1), change(0, 0, Leader=3)]
    assert _native.replay_run(fast, [(9, 0, None, v) for v in later], 0, _CONSTANTS, _native.ReplayCache())
    first, _topic_slot, _name_slot, second = fast.journal
    assert [type(first), type(second)] == [_native.ChangeRun] * 2
    assert first.targets() == [(p, None)] and len(second) == 1
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1,), 3, 4, 7)
    _walk(fast.journal, 4, 0)
    assert p.isr is isr and p.leader_epoch is leader_epoch and (p.leader, p.partition_epoch) == (1, 5)
    _walk(fast.journal, 0, 4)
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1,), 3, 4, 7)


def test_a_topic_the_journalled_log_makes_is_made_at_once(tmp_path: Path) -> None:
    """A topic the journalled log makes has its partitions made at once (their records are
    journalled as dict slots); the image is Python's, at every offset."""
    from metashell.image.loader import load_directory

    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    values = [_METADATA_VERSION, topic(0), partition(0, 0), change(0, 0, Leader=2)]
    _loaded_and_replayed(part, values, itertools.repeat(2))
    result = load_directory(part, timeline=True)
    assert [t._pending for t in result.image.topics.by_id.values()] == [None]
    assert result.timeline is not None and result.timeline.changes() == 5


def test_a_topic_compares_and_shows_its_partitions_not_its_slots(tmp_path: Path) -> None:
    got, want = loaded(tmp_path, [topic(0), partition(0, 0)])
    t = got.image.topics.by_id[TID[0]]
    assert "_pending" not in repr(t) and "partitions={0: Partition(" in repr(t)
    assert t == want.image.topics.by_id[TID[0]] and list(t.as_dict()) == ["id", "name", "partitions"]
    t.partitions = {}
    assert t.partitions == {} and t._pending is None
    assert Topic("a", TID[0]) == Topic("a", TID[0], {})


def test_waiting_partitions_keep_no_image_alive(tmp_path: Path) -> None:
    """A `Pending` holds the model's classes and the replayer's tuple tables, never the image: a
    load dropped unread leaves no topic behind (a cycle through a native object would)."""

    def topics_alive() -> int:
        gc.collect()
        return sum(type(o) is Topic for o in gc.get_objects())

    before = topics_alive()
    got, _want = loaded(tmp_path, [topic(0), partition(0, 0), topic(1), partition(1, 0)])
    assert any(t._pending is not None for t in got.image.topics.by_id.values())
    del got, _want
    assert topics_alive() == before


def test_a_topic_is_made_with_its_own_slots_or_not_at_all(_native: Any) -> None:
    """The run makes a Topic by setting its slots where its descriptors say (no ``__init__``), every
    slot set; a topic class whose fields are not its own object slots is refused when a run starts."""
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    r = Replayer()
    r.defer_partitions = False
    assert _native.replay_run(r, [(0, 0, None, topic(0))], 0, _CONSTANTS, _native.ReplayCache()) == 1
    made = r.image.topics.by_id[TID[0]]
    assert type(made) is Topic and made == Topic("t0", TID[0], {}) and made._pending is None

    class Named(Topic):
        @property
        def name(self) -> str:  # type: ignore[override]
            return "shadowed"

    foreign = list(_CONSTANTS)
    foreign[6] = Named
    with pytest.raises(TypeError, match="member descriptor"):
        _native.replay_run(Replayer(), [], 0, tuple(foreign), _native.ReplayCache())
