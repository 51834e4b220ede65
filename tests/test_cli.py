"""The command line: sources, one-shot forms, stdin scripts, exit codes and one-line errors.

Most tests call ``metashell.cli.main(argv)`` in-process with captured streams (fast); a few run the
real ``python -m metashell`` and console scripts in a subprocess.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, native_core

from metashell import __version__, cli
from metashell.shell import registry

SHARED = Path(__file__).resolve().parents[2] / "shared"
LOGDIR = SHARED / "reference" / "test-vectors" / "metadata-log-dir"
CORPUS = SHARED / "corpus"
needs_shared = pytest.mark.skipif(not LOGDIR.is_dir(), reason="../shared reference pack is absent")
REPO = Path(__file__).resolve().parents[1]

PARTITION = (
    "PartitionRegistration(replicas=[1], directories=[EREREREREREiIiIiIiIiIg], isr=[1], "
    "removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=1, "
    "leaderRecoveryState=RECOVERED, leaderEpoch=1, partitionEpoch=1)"
)


class _Stream(io.StringIO):
    def __init__(self, text: str = "", tty: bool = False) -> None:
        super().__init__(text)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def run_cli(
    *argv: str, stdin: str = "", monkeypatch: pytest.MonkeyPatch | None = None
) -> tuple[int, str, str]:
    """``main(argv)`` with stdin/stdout/stderr captured (none of them a terminal)."""
    out, err = _Stream(), _Stream()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = _Stream(stdin), out, err
    try:
        try:
            status = cli.main(list(argv))
        except SystemExit as e:  # --help / --version
            status = int(e.code or 0)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return status, out.getvalue(), err.getvalue()


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert "Traceback" not in err
    return err.rstrip("\n")


# ------------------------------------------------------------------------------------------------
# usage errors: exit 2, one line
# ------------------------------------------------------------------------------------------------


def test_no_source_is_a_usage_error() -> None:
    status, out, err = run_cli("-c", "ls")
    assert status == 2 and out == ""
    assert "no metadata source" in one_line(err) and "--directory" in err


@pytest.mark.parametrize(
    "argv, names",
    [
        (["-d", "a", "-s", "b"], "--directory and --snapshot"),
        (["--snapshot", "b", "-q", "h:1"], "--snapshot and --bootstrap-controller"),
        # -d beside -q names the nodes' directories ('quorum'), but not beside -q and -s
        (["-d", "a", "-s", "b", "--bootstrap-controller", "h:1"], "--directory and --snapshot"),
    ],
)
def test_two_sources_is_a_usage_error(argv: list[str], names: str) -> None:
    status, out, err = run_cli(*argv, "-c", "ls")
    assert status == 2 and out == ""
    assert f"give only one metadata source, not both {names}" in one_line(err)


def test_other_usage_errors() -> None:
    for argv, text in (
        (["-d", "x", "--config", "c.properties"], "--config only applies to live mode"),
        (["-d", "x", "-c", "ls", "cat", "/x"], "either with -c or as words"),
        (["-d", "x", "--bogus"], "unrecognized arguments: --bogus"),
        (["-d"], "expected one argument"),
    ):
        status, out, err = run_cli(*argv)
        assert status == 2 and out == "", argv
        assert text in one_line(err), (argv, err)


def test_help_documents_every_option() -> None:
    status, out, err = run_cli("--help")
    assert status == 0 and err == ""
    for text in (
        "--directory DIRECTORY, -d DIRECTORY",
        "--snapshot SNAPSHOT, -s SNAPSHOT",
        "--bootstrap-controller BOOTSTRAP_CONTROLLER, -q BOOTSTRAP_CONTROLLER",
        "--config CONFIG",
        "-c COMMANDS",
        "--json",
        "--no-redact",
        "--no-color",
        "--version",
        "The __cluster_metadata-0 directory to read",
        "The metadata snapshot file to read",
        "used to communicate directly with the metadata",
        "The configuration file to use",
        "exit status: 0 success, 1 any error, 2 bad usage",
    ):
        assert text in " ".join(out.split()) or text in out, text


def test_version() -> None:
    """The version, and which engine decodes (test_native_differential checks the engine line)."""
    from metashell.engine import current

    status, out, _ = run_cli("--version")
    assert (status, out) == (0, f"metashell {__version__}\nengine: {current().describe()}\n")


# ------------------------------------------------------------------------------------------------
# source errors: exit 1, one line naming the file
# ------------------------------------------------------------------------------------------------


def test_missing_paths(tmp_path: Path) -> None:
    status, out, err = run_cli("-d", str(tmp_path / "nope"), "-c", "ls")
    assert (status, out) == (1, "") and one_line(
        err
    ) == f"error: {tmp_path / 'nope'}: no such file or directory"
    status, _, err = run_cli("-s", str(tmp_path / "nope.log"), "ls")
    assert status == 1 and "no such file or directory" in one_line(err)


def test_wrong_kind_of_path(tmp_path: Path) -> None:
    f = tmp_path / "file.log"
    f.write_bytes(b"")
    status, _, err = run_cli("-d", str(f), "-c", "ls")
    assert status == 1 and "not a directory" in one_line(err)
    status, _, err = run_cli("-s", str(tmp_path), "-c", "ls")
    assert status == 1 and "is a directory" in one_line(err)


def test_not_a_metadata_directory(tmp_path: Path) -> None:
    (tmp_path / "random.txt").write_text("hello")
    status, out, err = run_cli("-d", str(tmp_path), "-c", "ls")
    assert status == 1 and out == ""
    assert one_line(err).startswith("error: ")


def test_unreadable_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "locked"
    d.mkdir()
    d.chmod(0)
    try:
        if os.geteuid() == 0:  # root reads anything: simulate what a normal user gets
            real_access = os.access
            monkeypatch.setattr(
                os, "access", lambda p, m, **k: False if Path(p) == d else real_access(p, m, **k)
            )
        status, out, err = run_cli("-d", str(d), "-c", "ls")
    finally:
        d.chmod(0o700)
    assert (status, out) == (1, "") and one_line(err) == f"error: {d}: permission denied"


def _copy_logdir(tmp_path: Path) -> Path:
    dst = tmp_path / "logdir"
    shutil.copytree(LOGDIR, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


@needs_shared
def test_corrupt_batch_names_file_and_offset(tmp_path: Path) -> None:
    d = _copy_logdir(tmp_path)
    seg = d / "__cluster_metadata-0" / "00000000000000000008.log"
    data = bytearray(seg.read_bytes())
    data[70] ^= 0xFF  # inside the first of two batches: corruption in the middle, not a torn tail
    seg.write_bytes(bytes(data))
    status, out, err = run_cli("-d", str(d), "-c", "ls /")
    line = one_line(err)
    assert status == 1 and out == ""
    assert line.startswith(f"error: {seg}: byte offset 0: ") and "CRC" in line


@needs_shared
def test_torn_tail_is_a_warning(tmp_path: Path) -> None:
    d = _copy_logdir(tmp_path)
    seg = d / "__cluster_metadata-0" / "00000000000000000008.log"
    seg.write_bytes(seg.read_bytes()[:-5])
    status, out, err = run_cli("-d", str(d), "-c", "cat /image/topics/byName/foo/0")
    assert status == 0 and out == PARTITION + "\n"
    assert one_line(err).startswith(f"warning: {seg}: byte offset ")


@needs_shared
def test_a_torn_tail_is_told_when_the_session_moves_to_the_end(tmp_path: Path) -> None:
    """Opened ``--at`` an earlier point, the end is loaded only when ``at`` goes there: its torn
    tail is told then (once), as opening at the end would have told it."""
    d = _copy_logdir(tmp_path)
    seg = d / "__cluster_metadata-0" / "00000000000000000008.log"
    seg.write_bytes(seg.read_bytes()[:-5])
    status, out, err = run_cli("-d", str(d), "--at", "2", "-c", "at; at 3; at")
    assert status == 0 and out.count("back at the end of the log") == 2
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: {seg}: byte offset "), err


@needs_shared
@pytest.mark.parametrize("command", ["history /topics/foo", "diff 2", "log", "log --from 3", "doctor"])
def test_a_torn_tail_is_told_by_any_command_that_reads_the_end(tmp_path: Path, command: str) -> None:
    """A command that reads the end without moving the session there (history and log read the
    files themselves; diff and doctor load the end) tells its torn tail after the command's output,
    and once a session: ``at`` says nothing more, nor does opening at the end and running it."""
    d = _copy_logdir(tmp_path)
    seg = d / "__cluster_metadata-0" / "00000000000000000008.log"
    seg.write_bytes(seg.read_bytes()[:-5])
    for at, line in (("2", command), ("2", f"{command}; {command}; at"), (None, f"{command}; {command}")):
        _status, _out, err = run_cli("-d", str(d), *(("--at", at) if at else ()), "-c", line)
        told = [w for w in err.splitlines() if w.startswith(f"warning: {seg}: byte offset ")]
        assert len(told) == 1, (line, err)


def test_live_mode_fails_in_one_line() -> None:
    # Port 1 on localhost refuses connections; whether live mode exists yet or not, the answer is
    # one line and exit status 1.
    proc = subprocess.run(
        [sys.executable, "-m", "metashell", "-q", "127.0.0.1:1", "-c", "ls /"],
        check=False,
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    one_line(proc.stderr)


# ------------------------------------------------------------------------------------------------
# one-shot forms
# ------------------------------------------------------------------------------------------------


@needs_shared
def test_kafka_positional_form() -> None:
    status, out, err = run_cli("--directory", str(LOGDIR), "cat", "/image/topics/byName/foo/0")
    assert (status, out, err) == (0, PARTITION + "\n", "")
    status, out, err = run_cli("-d", str(LOGDIR), "ls", "/image/topics")
    assert (status, out, err) == (0, "byId\nbyName\n", "")
    assert run_cli("-d", str(LOGDIR), "--", "ls", "/image/topics") == (0, "byId\nbyName\n", "")
    assert run_cli("-d", str(LOGDIR), "--json", "ls", "-l", "/image/topics")[0] == 0


@needs_shared
def test_snapshot_option_reads_one_file() -> None:
    snap = LOGDIR / "__cluster_metadata-0" / "00000000000000000008-0000000001.checkpoint"
    status, out, err = run_cli("--snapshot", str(snap), "cat", "/image/topics/byName/foo/id")
    assert (status, out, err) == (0, "ASNFZ4mrze8P7cuph2VDIQ\n", "")


@needs_shared
def test_dash_c_runs_several_commands() -> None:
    status, out, err = run_cli(
        "-d", str(LOGDIR), "-c", "cd /image/topics; pwd; ls", "-c", "cat byName/foo/id"
    )
    assert (status, out, err) == (0, "/image/topics\nbyId\nbyName\nASNFZ4mrze8P7cuph2VDIQ\n", "")


@needs_shared
def test_errors_in_one_shot_mode() -> None:
    status, out, err = run_cli("-d", str(LOGDIR), "cat", "/nope")
    assert (status, out) == (1, "") and one_line(err) == "cat: /nope: No such file or directory."
    status, out, err = run_cli("-d", str(LOGDIR), "-c", "blah")
    first = ", ".join(f"'{n}'" for n in registry.names()[:3])
    assert status == 2 and one_line(err).startswith(f"invalid choice: 'blah' (choose from {first}")
    status, out, err = run_cli("-d", str(LOGDIR), "-c", "ls /nope; pwd")
    assert (status, out) == (1, "/\n") and one_line(err) == "ls: /nope: no such file or directory."
    status, out, err = run_cli("-d", str(LOGDIR), "-c", "cat /image/topics")
    assert (status, out) == (1, "") and one_line(err) == "cat: /image/topics: Is a directory"
    status, out, err = run_cli("-d", str(LOGDIR), "-c", "cd /image/provenance")
    assert status == 1 and one_line(err) == "cd: /image/provenance: not a directory."
    status, out, err = run_cli("-d", str(LOGDIR), "-c", "ls -z")
    assert status == 2 and one_line(err).startswith("ls: unrecognized arguments: '-z'")


@needs_shared
def test_exit_stops_one_shot() -> None:
    status, out, _ = run_cli("-d", str(LOGDIR), "-c", "pwd; exit; pwd")
    assert (status, out) == (0, "/\n")


@needs_shared
def test_commands_from_stdin() -> None:
    script = "# a comment\ncd /image/topics\nls\n\ncat byName/foo/id\n"
    status, out, err = run_cli("-d", str(LOGDIR), stdin=script)
    assert (status, out, err) == (0, "byId\nbyName\nASNFZ4mrze8P7cuph2VDIQ\n", "")
    status, out, err = run_cli("-d", str(LOGDIR), stdin="pwd\nblah\npwd\n")
    assert status == 1 and out == "/\n/\n" and one_line(err).startswith("invalid choice: 'blah'")
    status, out, _ = run_cli("-d", str(LOGDIR), stdin="pwd\nexit\npwd\n")
    assert (status, out) == (0, "/\n")


@needs_shared
def test_json_flag() -> None:
    status, out, _ = run_cli(
        "-d", str(LOGDIR), "--json", "-c", "ls /image/topics; cat /image/topics/byName/foo/id"
    )
    rows = [json.loads(line) for line in out.splitlines()]
    assert status == 0
    assert rows[0] == {
        "path": "/image/topics/byId",
        "name": "byId",
        "type": "dir",
        "kind": rows[0]["kind"],
        "children": 1,
    }
    assert rows[-1]["path"] == "/image/topics/byName/foo/id" and rows[-1]["value"] == "ASNFZ4mrze8P7cuph2VDIQ"


@needs_shared
def test_no_colour_when_not_a_terminal() -> None:
    status, out, _ = run_cli("-d", str(LOGDIR), "--json", "-c", "find /image/topics")
    assert status == 0 and "\x1b" not in out


@needs_shared
def test_internal_errors_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from metashell.shell import sources

    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(sources, "open_directory", boom)
    status, out, err = run_cli("-d", str(LOGDIR), "-c", "ls")
    assert (status, out) == (1, "")
    assert one_line(err).startswith("internal error: RuntimeError: boom second line")

    def interrupted(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sources, "open_directory", interrupted)
    status, out, err = run_cli("-d", str(LOGDIR), "-c", "ls")
    assert (status, one_line(err)) == (130, "interrupted")


@needs_shared
def test_broken_pipe_is_quiet() -> None:
    cmd = [sys.executable, "-m", "metashell", "-d", str(LOGDIR), "-c", "; ".join(["find /"] * 3000)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert first == b"/\n"
    assert (
        err == b"" and proc.returncode == 0
    )  # the reader had what it wanted (issue: exit 1 broke pipefail scripts)


# ------------------------------------------------------------------------------------------------
# the real entry points
# ------------------------------------------------------------------------------------------------


@needs_shared
def test_python_dash_m_and_console_scripts() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "metashell", "-d", str(LOGDIR), "cat", "/image/topics/byName/foo/0"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, PARTITION + "\n", "")
    for script in ("kafka-metadata-shell", "metashell"):
        exe = shutil.which(script)
        if exe is None:
            continue
        proc = subprocess.run(
            [exe, "--directory", str(LOGDIR), "cat", "/image/topics/byName/foo/id"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "ASNFZ4mrze8P7cuph2VDIQ\n", ""), script
    proc = subprocess.run(
        [sys.executable, "-m", "metashell"], check=False, capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert (
        proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("metashell: error: no metadata")
    )


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
def test_every_corpus_directory_opens_in_one_shot_mode() -> None:
    dirs = sorted(p for p in CORPUS.iterdir() if p.is_dir())
    assert dirs
    for d in dirs:
        status, out, err = run_cli("-d", str(d), "-c", "ls /image; cat /image/provenance")
        assert status == 0, (d.name, err)
        assert out.startswith("acls\n"), d.name
        assert all(line.startswith("warning: ") for line in err.splitlines()), (d.name, err)


DEMO = REPO / "fixtures" / "demo"
needs_demo = pytest.mark.skipif(
    not (DEMO / "__cluster_metadata-0").is_dir(), reason="fixtures/demo not generated"
)


@needs_demo
def test_redaction_by_default_and_no_redact() -> None:
    status, out, err = run_cli("-d", str(DEMO), "--json", "-c", "cat /scram/*/*")
    rows = [json.loads(line)["value"] for line in out.splitlines()]
    assert status == 0 and rows and all(r["salt"] == "[redacted]" for r in rows), err
    status, out, _ = run_cli("-d", str(DEMO), "--no-redact", "--json", "-c", "cat /scram/*/*")
    rows = [json.loads(line)["value"] for line in out.splitlines()]
    assert status == 0 and rows and all(r["salt"] != "[redacted]" for r in rows)


@needs_shared
def test_every_command_in_one_shot_mode() -> None:
    script = (
        "ls /image; cd /image; pwd; cat provenance; find topics/byName; tree features; ls -l features; "
        "history 1; help; man tree; tree -L 1 /image/cluster; find /image -type d -name 'by*'"
    )
    status, out, err = run_cli("-d", str(LOGDIR), "-c", script)
    assert (status, err) == (0, "")
    for expected in (
        "acls\nclientQuotas\n",
        "\n/image\n",
        "offset 10, epoch 2, time 2023-11-14T22:13:26.5Z[UTC]\n",
        "topics/byName\ntopics/byName/foo\ntopics/byName/foo/0\n",
        "metadataVersion:\n  ",
        "    0  " + script[:20],
        "usage: {" + ",".join(registry.names()) + "} ...",
        "tree: Show the contents of metadata nodes in a tree structure.\n",
        "brokers:\ncontrollers:\n",
        "/image/acls/byId\n/image/topics/byId\n/image/topics/byName\n",
    ):
        assert expected in out, expected


@needs_shared
def test_live_mode_goes_through_the_hook(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """-q/--config reach ``open_shell_session``; one-shot waits until caught up, then closes."""
    from metashell.image.loader import load_directory
    from metashell.shell import sources

    calls: list[object] = []

    class FakeSession:
        image = load_directory(LOGDIR).image
        cluster_id = "MkU3OEVBNTcwNTJENDM2Qg"
        spool = None  # a one-shot command that does not read the log: nothing kept

        def wait_caught_up(self, timeout: float) -> None:
            calls.append(("wait", timeout))

        def status_text(self) -> str:
            return "leader 1 epoch 2 lag 0"

        def quorum_info(self) -> dict[str, Any]:
            return {}

        def pending(self) -> int:
            return 0

        def leader(self) -> tuple[int, int]:
            return 1, 2

        def describe_quorum(self) -> dict[str, Any]:
            return {}

        def close(self) -> None:
            calls.append("close")

    def opener(bootstrap: str, config: str | None, warn: object, *, timeline: bool) -> FakeSession:
        calls.append((bootstrap, config, timeline))
        return FakeSession()

    monkeypatch.setattr(sources, "_live_opener", lambda: opener)
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=PLAINTEXT\n")
    status, out, err = run_cli(
        "-q", "c1:9093,c2:9093", "--config", str(props), "cat", "/image/topics/byName/foo/id"
    )
    assert (status, out, err) == (0, "ASNFZ4mrze8P7cuph2VDIQ\n", "")
    # a one-shot command that does not travel: no journal (as a directory's load)
    assert calls == [("c1:9093,c2:9093", str(props), False), ("wait", sources.LIVE_WAIT_SECONDS), "close"]
    status, _, err = run_cli("-q", "c1:9093", "--config", str(tmp_path / "missing.properties"), "ls")
    assert status == 1 and "missing.properties: no such file or directory" in one_line(err)


@pytest.mark.parametrize(
    "args",
    [["-c", "find /"], ["find", "/"], ["--json", "find", "/"]],
    ids=["-c", "kafka-form", "json"],
)
def test_a_closed_pipe_ends_quietly(args: list[str], tmp_path: Path) -> None:
    """``metashell ... | head -2``: the reader has what it wanted; no message, no traceback, status 0
    (so a script under ``set -o pipefail`` goes on), as other Unix tools end."""
    demo = REPO / "fixtures" / "demo"
    cmd = [sys.executable, "-m", "metashell", "-d", str(demo), *args]
    quoted = " ".join(f"'{a}'" for a in cmd)
    err = tmp_path / "err"
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {quoted} 2>'{err}' | head -2; echo status=${{PIPESTATUS[0]}}"],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and lines[-1] == "status=0", done.stdout
    assert err.read_text() == ""


ONE_SHOT_NEVER_IMPORTS = (
    "difflib",  # suggestions for a mistyped name
    "subprocess",  # pipes, the pager, /local/commitId
    "logging",  # a load problem nobody was told of
    "cramjam",  # snappy, lz4 and zstd batches
    "fractions",  # one Double.toString corner
    "traceback",  # METASHELL_DEBUG
    "dataclasses",  # @dataclass compiles each class's methods at import: start-path classes are plain
    "inspect",  # what dataclasses imported, with ast, dis and tokenize
    "importlib.metadata",  # the crc32c package's __init__ (log/checksum.py loads its C module alone)
    "threading",  # the progress line on a terminal, the TUI's stop, live mode (the image's lock is _thread's)
    "base64",  # a uuid's text is binascii's
    "hashlib",  # the compiled-code cache names its entries by zlib's checksums
    "prompt_toolkit",
    "textual",
    "pyspark",
    "metashell.shell.repl",
    "metashell.tui",
    "metashell.image.health",  # read /health or run health
    "metashell.image.timepoint",  # --at and at
    "metashell.shell.commands.describe",  # a command imports its own module only
)
"""What a one-shot ``cat`` must not import (issue 24's fast start): each is imported where it is
needed, and one eager import here costs every one-shot command its price."""


@pytest.mark.parametrize("engine", ["python", "native"])
def test_one_shot_cat_compiles_no_annotation(engine: str) -> None:
    """``typing.NamedTuple`` makes a ``ForwardRef`` of each string annotation and compiles it; the
    first ``compile()`` of a process sets up every AST type (about 2 ms of each start).  So the
    modules that define the start path's NamedTuples do without ``from __future__ import
    annotations`` (their field annotations are real types), and this test finds the one that
    brings it back."""
    script = (
        "import io, sys, typing\n"
        "made = []\n"
        "init = typing.ForwardRef.__init__\n"
        "def spy(self, arg, *a, **k):\n"
        "    made.append(arg)\n"
        "    init(self, arg, *a, **k)\n"
        "typing.ForwardRef.__init__ = spy\n"
        "from metashell.cli import run\n"
        f"status = run(['-d', {str(FIXTURES / 'demo')!r}, '-c', 'cat /controllers/1'], stdout=io.StringIO())\n"
        "print(status, made)\n"
    )
    if engine == "native":
        native_core()
    env = {**os.environ, "METASHELL_ENGINE": engine}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "0 []"


@pytest.mark.parametrize("engine", ["python", "native"])
def test_one_shot_cat_imports_only_what_it_needs(engine: str) -> None:
    if engine == "native":
        native_core()
    script = (
        "import io, sys\n"
        "from metashell.cli import run\n"
        f"status = run(['-d', {str(FIXTURES / 'demo')!r}, '-c', 'cat /controllers/1'], stdout=io.StringIO())\n"
        "print(status, ' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "METASHELL_ENGINE": engine}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    status, modules = out.stdout.split(" ", 1)
    loaded = set(modules.split())
    assert status == "0"
    assert [m for m in ONE_SHOT_NEVER_IMPORTS if m in loaded] == []


def test_diff_with_and_commands_are_refused_together() -> None:
    """``--diff-with DIR -c "ls"`` ran the commands, dropped the diff and exited 0 (issue 55)."""
    demo = str(Path(__file__).resolve().parents[1] / "fixtures" / "demo")
    status, out, err = run_cli("-d", demo, "--diff-with", demo, "-c", "ls /topics")
    assert status == 2 and out == "" and "--diff-with is the one-shot form of 'diff --with DIR'" in err


def test_checkpoint_is_another_name_for_snapshot() -> None:
    """Kafka's shell is moving to ``--checkpoint FILE`` (KAFKA-20668): the same option here."""
    snap = max(
        (Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "__cluster_metadata-0").glob(
            "*.checkpoint"
        )
    )
    assert run_cli("--checkpoint", str(snap), "ls", "/topics") == run_cli(
        "--snapshot", str(snap), "ls", "/topics"
    )
    status, out, _err = run_cli("--checkpoint", str(snap), "ls", "/topics")
    assert status == 0 and "orders" in out.split()
