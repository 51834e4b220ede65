"""The native replay's topic rules and its topic index (``native/src/replay/topic_index.rs``): a
RemoveTopicRecord applied natively changes the image and the journal as Python's rule does, and the
index that finds a topic's partitions by id never outlives a change of ``topics_by_id`` it was not
told of (a Python rule, a snapshot's reset, time travel)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import native_core

from metashell.protocol.metadata import encode_metadata_record

T1, T2 = bytes([1]) * 16, bytes([2]) * 16


@pytest.fixture(scope="module")
def native() -> Any:
    return native_core()


def topic(name: str, tid: bytes) -> bytes:
    return encode_metadata_record("TopicRecord", 0, {"Name": name, "TopicId": tid})


def partition(tid: bytes, pid: int) -> bytes:
    data = {"PartitionId": pid, "TopicId": tid, "Replicas": [1, 2], "Isr": [1, 2], "Leader": 1}
    return encode_metadata_record("PartitionRecord", 2, {**data, "LeaderEpoch": 0, "PartitionEpoch": 0})


def change(tid: bytes, pid: int, leader: int) -> bytes:
    return encode_metadata_record(
        "PartitionChangeRecord", 2, {"PartitionId": pid, "TopicId": tid, "Leader": leader}
    )


def remove(tid: bytes) -> bytes:
    return encode_metadata_record("RemoveTopicRecord", 0, {"TopicId": tid})


def config(name: str, value: str) -> bytes:
    data = {"ResourceType": 2, "ResourceName": name, "Name": "retention.ms", "Value": value}
    return encode_metadata_record("ConfigRecord", 0, data)


def entries(values: list[bytes], first: int = 0) -> list[tuple[int, int, None, bytes]]:
    return [(first + i, 0, None, v) for i, v in enumerate(values)]


def test_a_topic_removed_natively_leaves_the_image_and_journal_pythons_rule_leaves(native: Any) -> None:
    """Removed from the ids, from the names only while the name still finds it (a later topic took
    ``a``'s name), with its configs; each change journalled as ``_pop`` journals it."""
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    values = [topic("a", T1), partition(T1, 0), config("a", "1"), topic("a", T2), remove(T1), remove(T2)]
    fast, slow = Replayer(), Replayer()
    fast.journal, slow.journal = [], []
    fast.orphan_topics.add(T2)
    slow.orphan_topics.add(T2)
    assert native.replay_run(fast, entries(values), 0, _CONSTANTS, native.ReplayCache()) == len(values)
    for off, _ts, _key, value in entries(values):
        slow.replay_value(value, off)
    for image in (fast.image, slow.image):
        assert image.topics.by_id == {} and image.topics.by_name == {} and image.configs == {}
    assert fast.orphan_topics == slow.orphan_topics == set()
    assert fast.journal == slow.journal and len(fast.journal) == 11


def test_an_unknown_topic_is_left_to_python_which_reports_it(native: Any) -> None:
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    fast = Replayer()
    assert (
        native.replay_run(fast, entries([topic("a", T1), remove(T2)]), 0, _CONSTANTS, native.ReplayCache())
        == 1
    )


def test_the_index_forgets_what_python_changed_between_runs(native: Any) -> None:
    """Runs with one cache: the index learns where T1's partitions are; Python then removes T1 and
    creates it again (a new partitions dict) behind its back, as a rule in a transaction, a
    snapshot's reset or a move back in time would. The next run's change must reach the new topic's
    partition (and one for a topic Python removed must go to Python, which reports it)."""
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    r, cache = Replayer(), native.ReplayCache()
    first = entries([topic("a", T1), topic("b", T2), partition(T1, 0), partition(T2, 0), change(T1, 0, 2)])
    assert native.replay_run(r, first, 0, _CONSTANTS, cache) == len(first)
    assert cache.topics_known() == 2
    for off, value in enumerate([remove(T1), topic("a", T1), partition(T1, 0), remove(T2)], start=10):
        r.replay_value(value, off)  # Python's rules: the index is not told
    later = entries([change(T1, 0, 2), change(T2, 0, 2)], first=20)
    assert native.replay_run(r, later, 0, _CONSTANTS, cache) == 1
    assert r.image.topics.by_id[T1].partitions[0].leader == 2
    assert r.image.topics.by_id[T1].partitions[0].partition_epoch == 1


def test_the_index_follows_the_topics_the_native_rules_change(native: Any) -> None:
    """Topics created and removed natively keep the index in step (no relearning from the dict),
    and a change to a removed topic is never applied to its old partitions."""
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    r, cache = Replayer(), native.ReplayCache()
    run = [topic("a", T1), partition(T1, 0), change(T1, 0, 2), remove(T1), topic("b", T2), partition(T2, 0)]
    assert native.replay_run(r, entries(run), 0, _CONSTANTS, cache) == len(run)
    assert cache.topics_known() == 1
    gone = entries([change(T2, 0, 2), change(T1, 0, 1)], first=10)
    assert native.replay_run(r, gone, 0, _CONSTANTS, cache) == 1
