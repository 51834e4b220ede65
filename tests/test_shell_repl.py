"""The real interactive shell (``python -m metashell -d DIR``) driven through a pty with pexpect:
banner and prompt, Tab completion, history across restarts, Ctrl-C, Ctrl-D, colour and NO_COLOR.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pexpect = pytest.importorskip("pexpect")

SHARED = Path(__file__).resolve().parents[2] / "shared"
LOGDIR = SHARED / "reference" / "test-vectors" / "metadata-log-dir"
REPO = Path(__file__).resolve().parents[1]
pytestmark = [
    pytest.mark.skipif(not LOGDIR.is_dir(), reason="../shared reference pack is absent"),
    pytest.mark.skipif(sys.platform == "win32", reason="needs a pty"),
]

PROMPT = re.compile(r"metadata-log-dir:(/[^ \x1b]*)\s*(\x1b\[[0-9;?]*[A-Za-z])*\s*>>")
SGR_COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;5;\d+)m")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


_CHILDREN: list[Any] = []
"""Every REPL a test started: closed after the test, passed or failed (a failed test left one
walking 20k partitions a hundred times, beside the rest of the suite)."""


@pytest.fixture(autouse=True)
def _close_children() -> Iterator[None]:
    yield
    while _CHILDREN:
        child = _CHILDREN.pop()
        if child.isalive():
            child.close(force=True)


def spawn(
    tmp_path: Path,
    *,
    no_color: bool = True,
    histfile: Path | None = None,
    pager: str | None = None,
    args: tuple[str, ...] = (),
    logdir: Path = LOGDIR,
    cwd: Path = REPO,
) -> Any:
    """The REPL in a 30x100 pty, paging on as a user has it (no ``PAGER``: ``less -FRX``) unless
    ``pager`` names one; conftest already removed the caller's PAGER, LESS, NO_COLOR and the rest."""
    env = dict(os.environ)
    if pager is not None:
        env["PAGER"] = pager
    env.update(
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",
        HOME=str(tmp_path),
        COLUMNS="100",
        LINES="30",
        METASHELL_HISTFILE=str(histfile or tmp_path / "history"),
    )
    if no_color:
        env["NO_COLOR"] = "1"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "metashell", "-d", str(logdir), *args],
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=20,
        dimensions=(30, 100),
    )
    _CHILDREN.append(child)
    child.expect_exact("[ Kafka Metadata Shell")
    child.expect(PROMPT)
    return child


def command(child, line: str) -> str:  # type: ignore[no-untyped-def]
    """Send a line, wait for the next prompt, return what was printed in between (no ANSI codes)."""
    child.send(line + "\r")
    child.expect("\r\n")  # the accepted line ends; prompt-toolkit's re-renders while typing do not
    child.expect(PROMPT)
    return ANSI.sub("", child.before)


def test_banner_prompt_and_exit(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    assert command(child, "cd /image/topics").strip() == ""
    assert command(child, "pwd").strip() == "/image/topics"
    assert child.after.startswith("metadata-log-dir:/image/topics")
    out = command(child, "cat byName/foo/id")
    assert "ASNFZ4mrze8P7cuph2VDIQ" in out
    child.send("exit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def typed(child, *parts: str) -> None:  # type: ignore[no-untyped-def]
    """Type ``parts``, each followed by Tab, giving prompt-toolkit time to insert each completion
    (completions are computed asynchronously, after the keys already sent)."""
    for part in parts:
        child.send(part)
        time.sleep(0.1)
        child.send("\t")
        time.sleep(0.4)


def test_completing_a_hostile_name_runs_nothing(tmp_path: Path) -> None:
    """A config named ``x|touch PWNED`` completed and entered: one path, never a pipe to the system
    shell (completion once left the ``|`` bare, ``shell/words.quote_word``)."""
    from test_terminal_safety import write_log

    write_log(tmp_path / "metadata-log-dir", "x|touch PWNED")
    env_path = os.environ["PATH"]
    child = spawn(tmp_path, logdir=tmp_path / "metadata-log-dir", cwd=tmp_path)
    assert env_path  # the pipe would have found touch on it
    typed(child, "ls /configs/topic/x")
    out = command(child, "")  # Enter on the completed line, x\|touch\ PWNED/
    assert "retention.ms" in out  # the directory, listed as one path
    child.send("exit\r")
    child.expect(pexpect.EOF)
    assert not (tmp_path / "PWNED").exists()


def _readme_first_command() -> str:
    readme = (REPO / "README.md").read_text()
    match = re.search(r"```sh\n(.*?)\n```", readme, re.DOTALL)
    assert match, "the README has no ```sh block"
    return match.group(1).strip()


@pytest.mark.slow
@pytest.mark.skipif(
    not (REPO / "fixtures" / "demo" / "__cluster_metadata-0").is_dir(), reason="fixtures/demo not generated"
)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to copy the checkout")
def test_readme_command_opens_the_demo_cluster(tmp_path: Path) -> None:
    """The README's first command, as it stands, in a copy of the checkout with no venv and no
    metashell on PATH (as on a new machine): it makes its venv, installs, and opens the demo."""
    checkout = tmp_path / "checkout"
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, files):
        source = REPO / os.fsdecode(name)
        if source.is_file():
            (checkout / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / os.fsdecode(name))
    venv = os.environ.get("VIRTUAL_ENV")
    path = [p for p in os.environ["PATH"].split(os.pathsep) if not (venv and p.startswith(venv))]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "METASHELL_VENV")}
    env.update(
        PATH=os.pathsep.join(path),
        TERM="xterm",
        PROMPT_TOOLKIT_NO_CPR="1",
        NO_COLOR="1",
        METASHELL_HISTFILE=str(tmp_path / "h"),
    )
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", _readme_first_command()],
        env=env,
        cwd=str(checkout),
        encoding="utf-8",
        timeout=600,  # a new venv, and pip from an empty cache
        dimensions=(30, 120),
    )
    _CHILDREN.append(child)
    child.expect_exact("[ Kafka Metadata Shell")
    prompt = re.compile(r"demo:/\s*(\x1b\[[0-9;?]*[A-Za-z])*\s*>>")
    child.expect(prompt, timeout=30)
    child.send("ls /topics\r")
    child.expect("orders", timeout=20)
    child.expect(prompt, timeout=20)  # a Ctrl-D typed before the prompt is back is eaten by the tty
    child.sendcontrol("d")
    child.expect(pexpect.EOF, timeout=20)
    child.close()
    assert child.exitstatus == 0
    assert (checkout / ".venv" / "bin" / "metashell").exists()


def test_tab_completion(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    # command name, then directories (with '/') and a file, all by Tab
    typed(child, "ca", "/ima", "top", "byN", "f", "i")
    assert "ASNFZ4mrze8P7cuph2VDIQ" in command(child, "")
    # relative paths
    command(child, "cd /image/topics")
    typed(child, "cat byN", "foo/na")
    assert command(child, "").split() == ["foo"]
    # a glob and '..' in the directory part
    typed(child, "cat ../t*/byN", "foo/i")
    assert command(child, "").split() == ["ASNFZ4mrze8P7cuph2VDIQ"]
    # options
    typed(child, "ls --js")
    assert '{"path":"/image/topics/byId"' in command(child, "/image/topics")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_history_survives_restarts_and_skips_secrets(tmp_path: Path) -> None:
    hist = tmp_path / "state" / "hist"
    child = spawn(tmp_path, histfile=hist)
    command(child, "cat /image/topics/byName/foo/name")
    command(child, "ls /image password=hunter2")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    text = hist.read_text()
    assert "cat /image/topics/byName/foo/name" in text
    assert "hunter2" not in text
    assert oct(hist.stat().st_mode & 0o777) == "0o600"

    child = spawn(tmp_path, histfile=hist)
    child.send("\x1b[A")  # Up: the last line of the previous session
    time.sleep(0.3)
    assert command(child, "").split() == ["foo"]
    out = command(child, "history")
    assert re.search(r"\s+0  cat /image/topics/byName/foo/name", out)
    assert "hunter2" not in out
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_ctrl_c_cancels_the_line_and_ctrl_d_exits(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.send("cat /image/topics/byName/foo/name")
    time.sleep(0.2)
    child.sendcontrol("c")
    child.expect_exact("^C")
    child.expect("\r\n")
    child.expect(PROMPT)  # a fresh prompt
    out = command(child, "pwd")
    assert "foo" not in out and "/" in out
    assert child.isalive()
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytest.fixture(scope="module")
def big_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated directory with 20k partitions: ``find /`` takes a noticeable time on it."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import metagen
    except ImportError as e:
        pytest.skip(f"bench/metagen.py is not available: {e}")
    finally:
        sys.path.remove(str(REPO / "bench"))
    params = metagen.GenParams(topics=2000, partitions=10, tail_records=1000, overlap_records=100)
    return Path(metagen.generate(params, tmp_path_factory.mktemp("big"), log=lambda *a: None).root)


def _spawn_big(  # type: ignore[no-untyped-def]
    tmp_path: Path, big_dir: Path, sigint_ignored: bool = False, **env_changes: str
):
    """The REPL on the generated directory, with paging on (no PAGER: ``less -FRX``).
    ``sigint_ignored``: started as ``cmd &`` from a script starts it (SIGINT ignored)."""
    env = dict(os.environ)
    env.update(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", NO_COLOR="1", METASHELL_HISTFILE=str(tmp_path / "h"))
    env.update(env_changes)
    child = pexpect.spawn(
        sys.executable,
        ["-m", "metashell", "-d", str(big_dir)],
        env=env,
        cwd=str(REPO),
        encoding="utf-8",
        timeout=30,
        dimensions=(30, 200),
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None,
    )
    _CHILDREN.append(child)
    prompt = re.compile(re.escape(big_dir.name[-12:]) + r":(/[^ \x1b]*)\s*(\x1b\[[0-9;?]*[A-Za-z])*\s*>>")
    child.expect(prompt)
    return child, prompt


def test_a_quick_commands_output_shows_while_a_slow_one_runs(tmp_path: Path, big_dir: Path) -> None:
    """``pwd; find / -name zzz``: ``/`` is on the screen within a second, though the pager might
    still be needed (paging on, as a user has it); it used to wait for the slow walk to end."""
    child, prompt = _spawn_big(tmp_path, big_dir)
    child.send("pwd; " + "find / -name zzz; " * 20 + "pwd\r")
    child.expect("\r\n")  # the accepted line
    # "/" shows while the walks still run: the line's last pwd has not printed, the prompt not come
    # (a condition, not a time: on a loaded machine the walks are slower too)
    child.expect(r"(^|\r\n|\x1b\[\?2004l)/\r\n", timeout=120)
    child.sendcontrol("c")
    child.expect(prompt, timeout=120)
    assert not re.search(r"(^|\n)/\r?\n", child.before), repr(child.before)  # stopped before the last pwd
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_what_was_shown_stays_and_the_rest_goes_to_the_pager(tmp_path: Path, big_dir: Path) -> None:
    """A slow command's first lines are on the screen before the output overflows it; then the pager
    starts with the rest, so screen plus pager hold every line once, in order."""
    paged = tmp_path / "paged.txt"
    child, prompt = _spawn_big(tmp_path, big_dir, PAGER=f"sh -c 'cat > {paged}'")
    child.send("pwd; find / -name zzz; find /topics -name '*-00001*'\r")
    child.expect("\r\n")
    child.expect(prompt, timeout=60)
    screen = ANSI.sub("", child.before).replace("\r", "").split("\n")
    shown = [line for line in screen if line.startswith("/")]  # not the prompt's start
    rest = paged.read_text().splitlines()
    whole = subprocess.run(
        [sys.executable, "-m", "metashell", "-d", str(big_dir), "-c", "find /topics -name '*-00001*'"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert shown[0] == "/" and 1 < len(shown) < 30, shown
    assert rest and shown[1:] + rest == whole
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize("sigint_ignored", [False, True], ids=["foreground", "started-with-sigint-ignored"])
def test_ctrl_c_stops_a_running_command(tmp_path: Path, big_dir: Path, sigint_ignored: bool) -> None:
    """Also when the shell was started with SIGINT ignored, as ``cmd &`` in a script or a CI runner
    starts it: Python then installs no KeyboardInterrupt handler, and the REPL must (a busy CI run
    saw ``^C`` echoed and the line run on to its end)."""
    child, prompt = _spawn_big(tmp_path, big_dir, sigint_ignored=sigint_ignored)
    # 100 walks over 20k partitions (tens of seconds); "pwd" first tells us it started, and the
    # line's last command says whether the walks ran to their end: Ctrl-C must stop them before it
    child.send("pwd; " + "find / -name zzz; " * 100 + "cd /image; pwd\r")
    child.expect(r"(\r\n|\x1b\[\?2004l)/\r\n", timeout=120)
    child.sendcontrol("c")
    child.expect(prompt, timeout=120)
    assert "/image" not in child.before, repr(child.before)
    child.send("cd /image; pwd\r")
    child.expect(r"/image\r\n")
    child.expect(prompt)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_colour_on_a_terminal_and_off_with_no_color(tmp_path: Path) -> None:
    child = spawn(tmp_path, no_color=False)
    child.send("cat --json /image/topics/byName/foo/id\r")
    child.expect("\r\n")
    child.expect(PROMPT)
    assert SGR_COLOUR.search(child.before), repr(child.before)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)

    child = spawn(tmp_path, no_color=True)
    child.send("cat --json /image/topics/byName/foo/id\r")
    child.expect("\r\n")
    child.expect(PROMPT)
    assert "ASNFZ4mrze8P7cuph2VDIQ" in child.before
    assert not SGR_COLOUR.search(child.before + child.after), repr(child.before)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def _run_in_pty(args: list[str], **env_changes: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM="xterm", **env_changes)
    out = pexpect.run(
        " ".join([sys.executable, "-m", "metashell", *args]),
        env=env,
        cwd=str(REPO),
        encoding="utf-8",
        timeout=30,
    )
    return str(out)


def test_one_shot_on_a_terminal_colours_json_unless_told_not_to() -> None:
    args = ["-d", str(LOGDIR), "--json", "cat", "/image/topics/byName/foo/id"]
    assert SGR_COLOUR.search(_run_in_pty(args))
    assert not SGR_COLOUR.search(_run_in_pty(args, NO_COLOR="1"))
    plain = _run_in_pty(["--no-color", *args])
    assert not SGR_COLOUR.search(plain) and '"value":"ASNFZ4mrze8P7cuph2VDIQ"' in plain


def test_terminal_input_with_piped_output_uses_the_plain_reader(tmp_path: Path) -> None:
    # stdin is a terminal but stdout is a pipe: no prompt-toolkit; the prompt goes to stderr and
    # stdout (through cat) carries only results.
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM="xterm", METASHELL_HISTFILE=str(tmp_path / "h"))
    cmd = f"{sys.executable} -m metashell -d {LOGDIR} 2>{tmp_path / 'err'} | cat"
    child = pexpect.spawn("/bin/sh", ["-c", cmd], env=env, cwd=str(REPO), encoding="utf-8", timeout=20)
    child.sendline("cd /image/topics; pwd")
    child.sendline("exit")
    child.expect(pexpect.EOF)
    assert re.search(r"(^|\n)/image/topics\r?\n", child.before), child.before  # not just the echo
    err = (tmp_path / "err").read_text()
    assert "[ Kafka Metadata Shell" in err and "metadata-log-dir:/ >> " in err


def test_pipes_and_cd_back_in_the_repl(tmp_path: Path) -> None:
    """``CMD | SHELL-COMMAND`` runs the system shell on a command's output, in a real terminal; a
    closed pipe (``| head -1``) ends quietly; ``;`` after the pipe starts a metashell command again."""
    child = spawn(tmp_path)
    assert command(child, "ls /image | wc -l").split() == ["10"]
    assert command(child, "find /image | head -1").split() == ["/image"]
    out = command(child, "find / | head -2; pwd")
    assert out.split() == ["/", "/acls", "/"]
    assert command(child, "cd /image/topics").strip() == ""
    assert command(child, "cd /brokers").strip() == ""
    assert command(child, "cd -").strip() == "/image/topics"
    assert command(child, "clear; pwd").strip().endswith("/image/topics")
    child.send("quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_long_output_goes_through_the_pager(tmp_path: Path) -> None:
    """More lines than the screen: $PAGER gets them (here ``head -n 3``, which also quits early, so
    the command must stop quietly); a short output is printed directly; --no-pager turns it off."""
    child = spawn(tmp_path, pager="head -n 3")
    out = command(child, "find /")  # 60+ lines on a 30-line screen
    assert out.split() == ["/", "/acls", "/brokers"]
    assert command(child, "pwd").split() == ["/"]
    child.send("exit\r")
    child.expect(pexpect.EOF)
    child = spawn(tmp_path, pager="head -n 3", args=("--no-pager",))
    assert len(command(child, "find /").split()) > 60  # all of it, unpaged
    child.send("exit\r")
    child.expect(pexpect.EOF)


@pytest.mark.skipif(shutil.which("less") is None, reason="less is not installed")
def test_ctrl_c_and_q_in_less(tmp_path: Path) -> None:
    child = spawn(tmp_path, pager="less")
    child.send("find /\r")
    child.expect_exact("/brokers")
    child.send("\x03")  # Ctrl-C: less stops reading, the command stops
    time.sleep(0.3)
    child.send("q")
    child.expect(PROMPT)
    assert command(child, "pwd").split()[-1] == "/"
    child.send("exit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_health_describe_and_ls_are_coloured_on_a_terminal_only() -> None:
    """Issue 25, item 17: CRITICAL in red, a leaderless partition's ``Leader: none`` in red, a
    directory's name in blue -- on a terminal; never with NO_COLOR or into a pipe."""
    from conftest import FIXTURES
    from test_cli import run_cli

    demo = str(FIXTURES / "demo")
    out = _run_in_pty(["-d", demo, "health"])
    assert "\x1b[1;31mCRITICAL\x1b[0m:" in out
    assert "\x1b[31moffline partition(s) (no live leader): 12 [critical]\x1b[0m" in out
    assert "\x1b[33mfenced broker(s): 1 [warning]\x1b[0m" in out
    out = _run_in_pty(["-d", demo, "describe", "orders"])
    assert "\x1b[1mTopic: orders\x1b[0m\t" in out and "\x1b[31mLeader: none\x1b[0m" in out
    out = _run_in_pty(["-d", demo, "ls", "-l", "/topics"])
    assert "\x1b[1;34morders\x1b[0m" in out
    for args in (["health"], ["describe", "orders"], ["ls", "-l", "/topics"]):
        assert "\x1b" not in _run_in_pty(["-d", demo, *args], NO_COLOR="1")
        assert "\x1b" not in run_cli("-d", demo, *args)[1]  # not a terminal


def test_the_live_prompt_is_short_and_the_rest_is_in_the_bottom_toolbar() -> None:
    """Issue 25, item 17: the prompt said ``cid [leader 1 epoch 5 hw 120 lag 0 connected]:/ >>``;
    now the state alone, and leader, epoch, high watermark and lag below the line."""
    import io

    from conftest import FIXTURES

    from metashell.image.loader import load_directory
    from metashell.shell.repl import _prompt_text, _toolbar_text
    from metashell.shell.session import Settings, Shell
    from metashell.tree import build_root

    shell = Shell(
        build_root(load_directory(FIXTURES / "demo").image), io.StringIO(), io.StringIO(), Settings()
    )
    line = "connected · leader 1 · epoch 5 · hw 120 · lag 0"
    assert _prompt_text("cid", shell, lambda: line) == "cid [connected]:/ >> "
    assert _toolbar_text(lambda: line) == line
    assert _prompt_text("cid", shell, lambda: "reconnecting · no leader · epoch 5 · lag ?") == (
        "cid [reconnecting]:/ >> "
    )
    assert _prompt_text("demo", shell, None) == "demo:/ >> "
