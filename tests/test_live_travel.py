"""Time travel in a live session (``shell/live_travel.py``): ``at`` and ``diff --from/--to`` go back
over what the session applied since its snapshot, hold the image there while the leader goes on
(what it commits waits, and is applied on ``at`` alone), and the journal stays bounded.  Against
the scripted controller of ``test_live_fake`` (real Kafka: ``test_live_kafka``)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from test_live_fake import FakeController, topic_record, wait_until

from metashell.shell.session import Settings, Shell
from metashell.shell.sources import open_live

pytestmark = pytest.mark.timeout(120)


class Live:
    """A shell on a live source of the fake controller; ``run`` returns (status, out, err)."""

    def __init__(self, ctrl: FakeController) -> None:
        self.ctrl = ctrl
        self.source = open_live(ctrl.endpoint, None, lambda _m: None, redact=True)
        self.out, self.err = io.StringIO(), io.StringIO()
        self.shell = Shell(self.source.root, self.out, self.err, Settings())
        self.shell.attach(self.source)

    def run(self, line: str) -> tuple[int, str, str]:
        assert self.source.refresh is not None
        self.source.refresh()  # what the REPL does between commands
        self.out.seek(0)
        self.out.truncate()
        self.err.seek(0)
        self.err.truncate()
        status = self.shell.run_line(line)
        return status, self.out.getvalue(), self.err.getvalue()

    def topics(self) -> list[str]:
        return self.run("ls /topics")[1].split()


@pytest.fixture
def live() -> Iterator[Live]:
    ctrl = FakeController()
    for i in range(5):
        ctrl.append([topic_record(f"t{i}")])  # offsets 0..4, one batch each
    session = Live(ctrl)
    yield session
    session.source.close()
    ctrl.kill()


@pytest.fixture
def behind_a_snapshot() -> Iterator[Live]:
    """A session on a leader whose log starts after a snapshot ending at offset 1 (topics t0 and
    t1): the session is served the snapshot, then the log's offset 2 (t2)."""
    from metashell.log.encoding import build_batch
    from metashell.protocol.control import encode_control_record

    ctrl = FakeController()
    for i in range(3):
        ctrl.append([topic_record(f"t{i}")])
    ctrl.log_start = 2
    header = encode_control_record("SnapshotHeader", {"Version": 0, "LastContainedLogTimestamp": 0})
    footer = encode_control_record("SnapshotFooter", {"Version": 0})
    body = build_batch(0, 1, [header], 0, control=True)
    body += build_batch(1, 1, [topic_record("t0"), topic_record("t1")], 0)
    body += build_batch(3, 1, [footer], 0, control=True)
    ctrl.snapshot = (2, 1, body)
    session = Live(ctrl)
    yield session
    session.source.close()
    ctrl.kill()


def test_at_goes_back_over_what_the_session_applied_and_holds_there(live: Live) -> None:
    assert live.topics() == ["t0", "t1", "t2", "t3", "t4"]
    status, out, _ = live.run("at 2")
    assert status == 0 and "now at: offset 2" in out, out
    assert live.topics() == ["t0", "t1", "t2"]
    assert live.shell.point == "@2"
    # the leader goes on: nothing is applied while the session stands at offset 2
    live.ctrl.append([topic_record("t5")])
    wait_until(lambda: live.source.pending is not None and live.source.pending() >= 1)
    assert live.topics() == ["t0", "t1", "t2"]
    assert live.source.status is not None and "held at @2" in live.source.status()
    # `at` alone: back to the end, and what waited is applied
    status, out, _ = live.run("at")
    assert status == 0 and "back at the end of the log: offset 5" in out, out
    assert live.topics() == ["t0", "t1", "t2", "t3", "t4", "t5"]
    assert live.shell.point is None


def test_diff_between_two_points_the_session_has_seen(live: Live) -> None:
    status, out, _ = live.run("diff --from 1 --to 3 /topics")
    assert status == 1, out
    assert "+/topics/t2/name: t2" in out and "+/topics/t3/name: t3" in out, out
    assert "t4" not in out and "t1" not in out
    assert live.shell.point is None and len(live.topics()) == 5  # diff does not move the session


def test_a_time_names_the_last_batch_appended_at_or_before_it(live: Live) -> None:
    status, out, _ = live.run("at -0s")
    assert status == 0 and "offset 4" in out, out


def test_before_the_snapshot_is_one_line_naming_where_the_session_starts(behind_a_snapshot: Live) -> None:
    live = behind_a_snapshot
    assert live.topics() == ["t0", "t1", "t2"]
    status, _out, err = live.run("at 0")
    assert status == 1
    assert err.count("\n") == 1 and "from offset 1 on" in err, err


def test_the_journal_stays_bounded(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    from metashell.image import live_feed

    monkeypatch.setattr(live_feed, "MAX_JOURNAL_ENTRIES", 10)
    for i in range(5, 40):
        live.ctrl.append([topic_record(f"t{i}")])
    wait_until(lambda: (live.run("pwd"), len(live.topics()))[1] == 40)
    status, _out, err = live.run("at 3")
    assert status == 1 and "before what this live session has applied" in err, err
    start = int(re.search(r"from offset (\d+) on", err).group(1))
    assert 3 < start < 39  # the oldest changes were forgotten, the newest kept
    status, out, _ = live.run(f"at {start}")
    assert status == 0 and len(live.topics()) == start + 1, out
    live.run("at")
    assert len(live.topics()) == 40


def test_one_shot_commands_that_travel_keep_the_journal(live: Live) -> None:
    """``-q ... -c "at 2; ..."``: the one-shot session journals because a command travels (one
    that does not, ``-q ... ls``, goes without: ``test_cli``)."""
    from test_cli import run_cli

    status, out, err = run_cli("-q", live.ctrl.endpoint, "-c", "at 2; ls /topics; at; ls /topics")
    assert status == 0, err
    assert out.split("\n")[1:4] == ["t0", "t1", "t2"], out
    assert out.rstrip().split("\n")[-5:] == ["t0", "t1", "t2", "t3", "t4"], out


def test_log_and_history_read_what_the_session_has_applied(live: Live) -> None:
    """``log`` lists the records the session applied and ``history`` follows one thing through
    them (the session's spool: a private directory of what it fetched), including records that
    arrive later; the spool goes when the session closes."""
    status, out, err = live.run("log")
    assert status == 0, err
    assert [line.split()[0] for line in out.splitlines()] == ["0", "1", "2", "3", "4"], out
    assert "TopicRecord" in out and "t3" in out
    live.ctrl.append([topic_record("t5")])
    wait_until(lambda: (live.run("pwd"), "t5" in live.topics())[1])
    status, out, _ = live.run("log --from 5")
    assert status == 0 and out.split()[0] == "5" and "t5" in out, out
    status, out, err = live.run("history /topics/t5")
    assert status == 0 and "5" in out and "created" in out.lower(), (out, err)
    spool = live.source.full_plan
    assert spool is not None
    root = next(iter(spool(None).steps)).path.parents[1]
    assert root.is_dir()
    live.source.close()
    assert not root.exists()


def test_the_spool_holds_the_leaders_batches_byte_for_byte(live: Live) -> None:
    """The spool writes the whole batches of a Fetch response a run at a time (a catch-up brings
    hundreds of thousands): its segment is the leader's log, each batch once, however they
    arrived; and applying them leaves Python's collector as it found it."""
    import gc

    live.ctrl.append([topic_record("t5"), topic_record("t6")])
    live.ctrl.append([topic_record("t7")])
    wait_until(lambda: "t7" in live.topics())
    assert live.run("log")[0] == 0  # makes what was appended readable
    spool = live.source.full_plan
    assert spool is not None
    root = next(iter(spool(None).steps)).path.parents[1]
    (segment,) = (root / "__cluster_metadata-0").glob("*.log")
    assert segment.read_bytes() == b"".join(live.ctrl.batches)
    assert gc.isenabled()


def test_the_spool_starts_from_a_fetched_snapshot(behind_a_snapshot: Live) -> None:
    live = behind_a_snapshot
    status, out, err = live.run("log")
    assert status == 0, err
    # as on a directory whose log starts after a snapshot: its records (at its last offset), then the log
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == ["1", "1", "1", "1", "2"], out
    assert "topic t0 created" in lines[1] and "topic t2 created" in lines[4], out
    status, out, _ = live.run("history /topics/t0")
    assert status == 0 and "t0" in out, out
