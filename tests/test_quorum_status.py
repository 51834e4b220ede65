"""``quorum`` in a live session, from a crafted DescribeQuorum response: the numbers Kafka's
``kafka-metadata-quorum`` derives (``MetadataQuorumCommand``: lag, the largest follower lag and its
time, the leader first, then the followers, then the observers), and hostile names made visible.
The same against real Kafka's tool: ``test_live_kafka.py``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from metashell.live.quorum_status import quorum_status
from metashell.protocol.uuid import uuid_to_str

D1, D2 = bytes(range(16)), bytes(range(1, 17))


def described(**over: Any) -> dict[str, Any]:
    def state(rid: int, leo: int, fetch: int, caught: int, directory: bytes = bytes(16)) -> dict[str, Any]:
        return {
            "ReplicaId": rid,
            "ReplicaDirectoryId": directory,
            "LogEndOffset": leo,
            "LastFetchTimestamp": fetch,
            "LastCaughtUpTimestamp": caught,
        }

    return {
        "LeaderId": 2,
        "LeaderEpoch": 7,
        "HighWatermark": 120,
        "CurrentVoters": [
            state(1, 100, 1000, 900, D1),
            state(2, 130, -1, 1500, D2),
            state(3, 130, 1490, 1490),
        ],
        "Observers": [state(4, 125, 1480, 1400)],
        "Nodes": [
            {"NodeId": 1, "Listeners": [{"Name": "CONTROLLER", "Host": "c1", "Port": 9093}]},
            {"NodeId": 2, "Listeners": [{"Name": "CONTROLLER", "Host": "::1", "Port": 9094}]},
        ],
        "Endpoint": "c2:9094",
        **over,
    }


def test_status_is_kafkas_summary() -> None:
    s = quorum_status(described(), "ojQnLEycTOSMI2Fga2yOXA")
    lines = s.status_lines()
    assert lines[:6] == [
        "ClusterId:              ojQnLEycTOSMI2Fga2yOXA",
        "LeaderId:               2",
        "LeaderEpoch:            7",
        "HighWatermark:          120",
        "MaxFollowerLag:         30",  # the leader's 130 against voter 1's 100
        "MaxFollowerLagTimeMs:   600",  # caught up at 1500 and 900
    ]
    assert lines[6] == (
        f'CurrentVoters:          [{{"id": 1, "directoryId": "{uuid_to_str(D1)}", "endpoints": '
        f'["CONTROLLER://c1:9093"]}}, {{"id": 2, "directoryId": "{uuid_to_str(D2)}", "endpoints": '
        f'["CONTROLLER://[::1]:9094"]}}, {{"id": 3}}]'
    )
    assert lines[7] == 'CurrentObservers:       [{"id": 4}]'


def test_replication_lists_the_leader_then_followers_then_observers() -> None:
    rows = [line.split() for line in quorum_status(described(), None).replication_lines()]
    assert rows[0] == [
        "NodeId",
        "DirectoryId",
        "LogEndOffset",
        "Lag",
        "LastFetchTimestamp",
        "LastCaughtUpTimestamp",
        "Status",
    ]
    assert [(r[0], r[2], r[3], r[4], r[6]) for r in rows[1:]] == [
        ("2", "130", "0", "-1", "Leader"),
        ("1", "100", "30", "1000", "Follower"),
        ("3", "130", "0", "1490", "Follower"),
        ("4", "125", "5", "1480", "Observer"),
    ]


def test_no_leader_and_unknown_times_are_said_not_computed() -> None:
    s = quorum_status(described(LeaderId=-1), None)
    assert "MaxFollowerLag:         unknown (no leader)" in s.status_lines()
    assert s.as_json()["maxFollowerLag"] is None and s.as_json()["voters"][0]["lag"] is None
    slow = described()
    slow["CurrentVoters"][0]["LastCaughtUpTimestamp"] = -1
    assert quorum_status(slow, None).max_follower_lag_time_ms == -1


def test_the_live_quorum_command_shows_hostile_hosts_literally() -> None:
    """A host name comes from the controller's configuration: shown, never obeyed."""
    from test_cli import run_cli
    from test_live_fake import FakeController

    ctrl = FakeController()
    try:
        ctrl.peers[5] = ("evil\x1b]52;c;AAAA\x07host", 1)

        def with_voters(version: int, body: dict[str, Any]) -> dict[str, Any]:
            out = ctrl._DescribeQuorum(version, body)
            voter = {"ReplicaId": 5, "ReplicaDirectoryId": bytes(16), "LogEndOffset": 3}
            out["Topics"][0]["Partitions"][0]["CurrentVoters"] = [voter]
            return out

        ctrl.hooks["DescribeQuorum"] = with_voters
        status, out, err = run_cli("-q", ctrl.endpoint, "-c", "quorum")
        assert status == 0, err
        assert "\x1b" not in out and "\x07" not in out and "evil" in out
        assert out.startswith("ClusterId:") and "NodeId" in out
    finally:
        ctrl.kill()


def test_the_live_quorum_asks_again_every_interval() -> None:
    """``quorum --count N --interval S``: N answers, each asked of the leader afresh (the fake counts
    its DescribeQuorum requests), headed by the time in text and one JSON document a line."""
    import json

    from test_cli import run_cli
    from test_live_fake import FakeController

    ctrl = FakeController()
    try:
        asked = [0]

        def counted(version: int, body: dict[str, Any]) -> dict[str, Any]:
            asked[0] += 1
            out = ctrl._DescribeQuorum(version, body)
            out["Topics"][0]["Partitions"][0]["HighWatermark"] = 100 + asked[0]
            return out

        ctrl.hooks["DescribeQuorum"] = counted
        # 1.1 s apart: the source keeps an answer for one second
        status, out, err = run_cli("-q", ctrl.endpoint, "-c", "quorum --count 2 --interval 1.1")
        assert status == 0, err
        assert out.count("ClusterId:") == 2 and out.count("(every 1.1 s; Ctrl-C stops)") == 2
        status, out, err = run_cli("-q", ctrl.endpoint, "-c", "quorum --json --count 2 --interval 1.1")
        assert status == 0, err
        docs = [json.loads(line) for line in out.splitlines()]
        assert len(docs) == 2 and docs[0] != docs[1]  # a new answer each time
        status, out, err = run_cli("-q", ctrl.endpoint, "-c", "quorum --count 0")
        assert status == 1 and "--count must be 1 or more" in err
    finally:
        ctrl.kill()


def test_directories_beside_a_live_quorum_say_how_far_each_is_from_the_committed_log(tmp_path: Path) -> None:
    """``-q HOST:PORT -d DIR ...``: each directory's log end (the same one ``-d DIR quorum`` reports)
    against the leader's high watermark: behind it, past it, at it; another cluster's directory has
    no distance (a number against another log would be false); a wrong path is refused at start."""
    import json
    import shutil

    from conftest import FIXTURES
    from test_cli import run_cli
    from test_live_fake import CLUSTER, FakeController

    demo = FIXTURES / "demo"
    status, out, err = run_cli("-d", str(demo), "-c", "quorum --json")
    assert status == 0, err
    end = json.loads(out)["logEndOffset"]
    ours = tmp_path / "node-1"
    shutil.copytree(demo, ours)
    props = ours / "__cluster_metadata-0" / "meta.properties"
    if not props.exists():
        props = ours / "meta.properties"
    props.write_text(re.sub(r"cluster\.id=.*", f"cluster.id={CLUSTER}", props.read_text()))
    ctrl = FakeController()
    try:
        for hw, said, behind in (
            (end + 7, "7 behind (committed records missing)", 7),
            (end - 2, "2 past", -2),
            (end, "at the high watermark", 0),
        ):

            def answer(version: int, body: dict[str, Any], hw: int = hw) -> dict[str, Any]:
                out = ctrl._DescribeQuorum(version, body)
                part = out["Topics"][0]["Partitions"][0]
                part["HighWatermark"] = hw
                part["CurrentVoters"] = [
                    {"ReplicaId": 1, "ReplicaDirectoryId": bytes(16), "LogEndOffset": hw}
                ]
                return out

            ctrl.hooks["DescribeQuorum"] = answer
            args = ("-q", ctrl.endpoint, "-d", str(ours), "-d", str(demo))
            status, out, err = run_cli(*args, "-c", "quorum")
            assert status == 0, err
            table = out[out.index("Directories, read now") :].splitlines()
            assert f"(high watermark {hw})" in table[0]
            mine = next(line for line in table if line.endswith(str(ours)))
            assert mine.split()[:4] == ["1", str(end), mine.split()[2], str(hw)] and said in mine
            other = next(line for line in table if line.endswith(str(demo)))
            assert f"cluster ojQnLEycTOSMI2Fga2yOXA, not this quorum's {CLUSTER}" in other
            status, out, err = run_cli(*args, "-c", "quorum --json")
            assert status == 0, err
            disks = json.loads(out)["directories"]
            assert [d["behindHighWatermark"] for d in disks] == [behind, None]
            assert disks[0]["logEndOffset"] == end and disks[0]["leaderLogEndOffset"] == hw
        status, out, err = run_cli("-q", ctrl.endpoint, "-d", str(tmp_path / "nowhere"), "-c", "quorum")
        assert status == 1 and out == "" and len(err.strip().splitlines()) == 1 and "nowhere" in err
        status, out, err = run_cli("-q", ctrl.endpoint, "-d", str(ours), "--at", "3", "-c", "quorum")
        assert status == 2 and "--at" in err
    finally:
        ctrl.kill()


def test_a_directory_read_again_reads_what_was_appended_and_notices_a_rewrite(tmp_path: Path) -> None:
    """``quorum --interval`` beside ``-q`` reads each directory at every look: from the last batch
    it saw when the segment still holds that very batch, else from the start; either way the end
    is the one a full read gives."""
    import shutil

    from conftest import FIXTURES

    from metashell.live import quorum_disks
    from metashell.log.encoding import build_batch
    from metashell.protocol.metadata import encode_metadata_record

    d = tmp_path / "node"
    shutil.copytree(FIXTURES / "demo", d)
    part = d / "__cluster_metadata-0"
    segment = max(part.glob("*.log"))
    first = quorum_disks.disk_end(str(d))
    assert first.log_end is not None and first.last_epoch is not None
    assert str(segment) in quorum_disks._LAST
    noop = encode_metadata_record("NoOpRecord", 0, {})
    with segment.open("ab") as f:  # the node appends a batch
        f.write(build_batch(first.log_end, first.last_epoch + 1, [noop, noop], 0))
    grown = quorum_disks.disk_end(str(d))
    assert (grown.log_end, grown.last_epoch) == (first.log_end + 2, first.last_epoch + 1)
    # the segment rewritten (a truncation, then other batches): the remembered batch is gone
    data = segment.read_bytes()
    segment.write_bytes(data[: quorum_disks._LAST[str(segment)][0]])
    quorum_disks._LAST[str(segment)] = (len(data) + 10, 0, 0, 0, 0)  # a position past the end now
    again = quorum_disks.disk_end(str(d))
    assert (again.log_end, again.last_epoch) == (first.log_end, first.last_epoch)
