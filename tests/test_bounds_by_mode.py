"""The live-mode memory bounds of docs/safety.md, in each mode that follows a live log: ``watch``,
the REPL waiting at its prompt, and the TUI.

Each runs ``metashell`` in a child under an address-space limit (``RLIMIT_AS``) below what the
unbounded path takes, so a missing bound fails the test (the child runs out of memory and never
shows what it was waiting for) rather than the machine.  The controller is the in-process fake of
test_live_fake: real Kafka cannot be made to keep appending without committing.

The flood is 600,000 one-record-sized NoOp records (6 MB on the wire) in one Fetch response.  Before
the bounds, every record of a response was decoded as it arrived (about 200 bytes of objects each:
120 MB), whether it waited above the high watermark (``watch``: 3.3 GB in 100 s in the attack) or sat
in the queue of a shell that was not applying (the REPL at its prompt, a paused TUI).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, address_limited_env
from test_bounds import _LIMIT
from test_live_fake import FakeController, noop, topic_record, wait_until

from metashell.log.encoding import build_batch
from metashell.log.scan import iter_batches

#: 600 batches of 1,000 NoOp records.
FLOOD_BATCHES, PER_BATCH = 600, 1000
#: What the child may grow by once it is connected: the decoded flood needs about twice this.
HEADROOM_MB = 64

_CHILD = (
    _LIMIT
    + """
import sys
from metashell.cli import main
import metashell.image.loader, metashell.image.live_feed, metashell.live, metashell.shell.commands
import metashell.shell.sources, metashell.tree
if "--tui" in sys.argv:
    import metashell.tui.app
limit(int(sys.argv[1]))
sys.exit(main(sys.argv[2:]))
"""
)


def child_argv(headroom_mb: int, *argv: str) -> list[str]:
    """The command line of ``metashell ARGV`` under the bound, with its environment's one change
    (``env``: a tmux pane starts it from the tmux server's environment, not ours)."""
    return [
        "env",
        "MALLOC_ARENA_MAX=" + address_limited_env()["MALLOC_ARENA_MAX"],
        sys.executable,
        "-c",
        _CHILD,
        str(headroom_mb),
        *argv,
    ]


def child(*argv: str, **kw: Any) -> subprocess.Popen[str]:
    """``metashell ARGV`` whose address space may grow by HEADROOM_MB once its modules are in."""
    return subprocess.Popen(
        child_argv(HEADROOM_MB, *argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        **kw,
    )


def flood(ctrl: FakeController, commit: bool) -> int:
    """Append the flood (baseOffset is outside the CRC, so one batch is stamped 600 times)."""
    one = build_batch(0, ctrl.epoch, [noop()] * PER_BATCH, int(time.time() * 1000))
    with ctrl.cond:
        for _ in range(FLOOD_BATCHES):
            ctrl.batches.append(struct.pack(">q", ctrl.next_offset) + one[8:])
            ctrl.next_offset += PER_BATCH
        if commit:
            ctrl.hw = ctrl.next_offset
        ctrl.cond.notify_all()
        return ctrl.next_offset


def served_upto(ctrl: FakeController) -> Callable[[], int]:
    """Hooks Fetch: the function returned gives the end offset of what the fake has sent."""
    served = [0]

    def note(version: int, body: dict[str, Any]) -> dict[str, Any]:
        resp = ctrl._Fetch(version, body)
        for topic in resp.get("Responses") or []:
            for p in topic["Partitions"]:
                batches = list(iter_batches(p.get("Records") or b"", "fake", decode=False))
                if batches:
                    served[0] = max(served[0], batches[-1].last_offset + 1)
        return resp

    ctrl.hooks["Fetch"] = note
    return lambda: served[0]


@pytest.fixture
def ctrl():  # type: ignore[no-untyped-def]
    c = FakeController()
    c.append([topic_record("first")])
    yield c
    c.kill()


@pytest.mark.timeout(600)
def test_watch_holds_records_above_a_stuck_high_watermark_as_bytes(ctrl: FakeController) -> None:
    """``watch --count 1``: the flood waits above a high watermark that does not move; then the
    leader commits it and a topic, and watch shows the topic."""
    served = served_upto(ctrl)
    proc = child("-q", ctrl.endpoint, "-c", "watch --count 1 /topics")
    try:
        assert proc.stderr is not None
        assert "watching /topics" in proc.stderr.readline()
        end = flood(ctrl, commit=False)
        wait_until(lambda: served() >= end or proc.poll() is not None, timeout=300)
        ctrl.append([topic_record("last")])  # commits the flood too
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        assert "/topics/last: created" in out
    finally:
        proc.kill()


@pytest.mark.timeout(600)
def test_the_repl_at_its_prompt_holds_at_most_the_queue(ctrl: FakeController) -> None:
    """The REPL waiting for a line while the leader commits the flood: the live thread stops at
    MAX_QUEUED_RECORDS; the next command applies them and the rest follows."""
    served = served_upto(ctrl)
    proc = child("-q", ctrl.endpoint, stdin=subprocess.PIPE)
    try:
        wait_until(lambda: served() >= 1 or proc.poll() is not None, timeout=300)  # at its prompt
        end = flood(ctrl, commit=True)
        wait_until(lambda: served() >= end or proc.poll() is not None, timeout=300)
        ctrl.append([topic_record("last")])
        out, err = proc.communicate("watch --count 1 --interval 0.1 /topics/last\nls /topics\n", timeout=300)
        assert proc.returncode == 0, err[-2000:]
        assert "/topics/last: created" in out and "first\nlast\n" in out
    finally:
        proc.kill()


@pytest.mark.timeout(600)
def test_the_tui_paused_holds_at_most_the_queue(ctrl: FakeController, tmp_path: Path) -> None:
    """The TUI in a real terminal (tmux), paused (``p``) while the leader commits the flood: it holds
    at most the queue; resumed, it applies the flood and shows the topic committed after it."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (apt install tmux)")
    from test_tui_contention import Tmux, _wait

    served = served_upto(ctrl)
    tmux = Tmux(tmp_path)
    # the TUI's own screens and tree take about 60 MB more than the shell
    argv = child_argv(HEADROOM_MB + 64, "-q", ctrl.endpoint, "--tui", "--path", "/topics")
    try:
        tmux("new-session", "-d", "-s", "live", "-c", str(REPO), "-x", "120", "-y", "40", *argv)
        tmux("set-option", "-t", "live", "remain-on-exit", "on")  # a child that died stays readable

        def screen() -> str:
            return tmux.screen("live")

        _wait("the first topic shown", lambda t: "first" in t, screen)
        tmux("send-keys", "-t", "live", "p")
        _wait("paused", lambda t: "PAUSED" in t, screen)
        end = flood(ctrl, commit=True)
        wait_until(lambda: served() >= end, timeout=300)
        ctrl.append([topic_record("last")])
        tmux("send-keys", "-t", "live", "p")
        _wait("the flood applied and the last topic shown", lambda t: "last" in t, screen, timeout=300)
        tmux("send-keys", "-t", "live", "q")
        _wait("quit", lambda t: "Pane is dead" in t or not t.strip(), screen)
    finally:
        tmux.kill_server()
