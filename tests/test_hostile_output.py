"""Output that lies or breaks on hostile metadata and hostile typing (the third hardening round):
names that forge lines in ``describe``/``health``, non-finite quota values in ``--json``, lone
surrogates from ``meta.properties``, FIFOs, and numbers that are digits only to ``str.isdigit``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import test_terminal_safety as safety
from conftest import FIXTURES
from test_cli import run_cli

from metashell.protocol.metadata import encode_metadata_record

FORGED = "evil\n\tTopic: forged\tPartition: 9"
LINE_COMMANDS = [
    "describe",
    "describe --under-replicated-partitions",
    "describe acl",
    "describe broker",
    "health --all",
    "ls -l /topics /brokers /acls /scram",
    "find /",
]
# (``tree`` prints a leaf's text as it is, continuation lines too, exactly as Kafka's shell does:
# its names are escaped, a multi-line *value* is the value.)


def _lines(root: Path, command: str) -> list[str]:
    _status, out, err = run_cli("-d", str(root), "-c", command)
    assert "internal error" not in err, err
    return out.splitlines()


def test_a_name_cannot_forge_a_line_in_any_human_answer(tmp_path: Path) -> None:
    """The same metadata with a plain name and with one holding a newline and tabs: every command
    prints the same number of lines, and no line starts with the forged text."""
    safety.write_log(tmp_path / "plain", "plain")
    safety.write_log(tmp_path / "forged", FORGED)
    for command in LINE_COMMANDS:
        plain, forged = _lines(tmp_path / "plain", command), _lines(tmp_path / "forged", command)
        assert len(forged) == len(plain), (command, forged)
        assert not any(line.lstrip("\t").startswith("Topic: forged") for line in forged), command
        if plain:
            assert any("\\x0a\\x09Topic: forged" in line for line in forged), (command, forged)


def _strict(line: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


@pytest.fixture
def non_finite_quotas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory whose client quotas are NaN, Infinity and -Infinity (the record is a float64)."""
    plain = safety.records

    def records(s: str) -> list[bytes]:
        extra = [
            encode_metadata_record(
                "ClientQuotaRecord",
                0,
                {
                    "Entity": [{"EntityType": "client-id", "EntityName": name}],
                    "Key": "request_percentage",
                    "Value": value,
                    "Remove": False,
                },
            )
            for name, value in (("nan", float("nan")), ("inf", float("inf")), ("ninf", float("-inf")))
        ]
        return plain(s) + extra

    monkeypatch.setattr(safety, "records", records)
    safety.write_log(tmp_path, "plain")
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        "cat /quotas/*/*",
        "tree /quotas",
        "tree /",
        "log",
        "find /quotas",
        "ls -l /quotas",
        "describe",
        "health",
    ],
)
def test_json_output_is_strict_json_even_for_nan(non_finite_quotas: Path, command: str) -> None:
    status, out, err = run_cli("-d", str(non_finite_quotas), "--json", "-c", command)
    assert status == 0, err
    docs = [_strict(line) for line in out.splitlines()]
    assert docs
    text = json.dumps(docs)
    if command.startswith(("cat", "tree", "log")):
        assert '"NaN"' in text and '"Infinity"' in text and '"-Infinity"' in text, text[:300]


def test_a_lone_surrogate_in_meta_properties(tmp_path: Path) -> None:
    """``cluster.id=\\uD800abc``: the REPL starts and ``cat /quorum`` answers, the surrogate shown as
    the escape it came from (it was an internal error, and the REPL never started)."""
    root = tmp_path / "logdir"
    shutil.copytree(FIXTURES / "demo", root)
    meta = root / "meta.properties"
    meta.write_text(
        "".join(
            "cluster.id=\\uD800abc\n" if line.startswith("cluster.id=") else line
            for line in meta.read_text().splitlines(keepends=True)
        )
    )
    status, out, err = run_cli("-d", str(root), "-c", "cat /quorum")
    assert status == 0 and '"clusterId": "\\ud800abc"' in out, (out, err)
    status, out, err = run_cli("-d", str(root), "--json", "-c", "cat /quorum")
    assert status == 0 and _strict(out)["value"]["clusterId"] == "\ud800abc"
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "NO_COLOR": "1"}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "metashell", "--no-pager", "-d", str(root)],
        env=env,
        encoding="utf-8",
        timeout=20,
    )
    prompt = r"logdir:/\s*(\x1b\[[0-9;?]*[A-Za-z])*\s*>>"
    child.expect_exact("[ Kafka Metadata Shell")
    child.expect(prompt)
    child.send("cat /quorum\r")
    child.expect("ud800abc")
    child.expect(prompt)  # a key typed before the prompt is back is eaten by the tty (cooked mode)
    child.send("exit\r")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize("how", ["-s", "--diff-with"])
def test_a_fifo_is_refused_at_once(tmp_path: Path, how: str) -> None:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    args = ["-s", str(fifo), "-c", "ls /"] if how == "-s" else ["-d", str(FIXTURES / "demo"), how, str(fifo)]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "metashell", *args], capture_output=True, text=True, timeout=30, check=False
    )
    assert time.monotonic() - started < 20
    assert done.returncode == 1 and "not a regular file" in done.stderr and done.stderr.count("\n") == 1


def test_a_fifo_in_a_directory_does_not_block(tmp_path: Path) -> None:
    root = tmp_path / "logdir"
    shutil.copytree(FIXTURES / "demo", root)
    for name in ("meta.properties", "__cluster_metadata-0/quorum-state"):
        (root / name).unlink()
        os.mkfifo(root / name)
    done = subprocess.run(
        [sys.executable, "-m", "metashell", "-d", str(root), "-c", "ls /topics"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0 and "orders" in done.stdout


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["--at", "²", "-c", "ls"], 2, "argument --at: ²: not an offset"),
        (["--at", "abc", "-c", "ls"], 2, "argument --at: abc: not an offset"),
        (["-c", "at ①"], 1, "at: ①: not an offset"),
        (["-c", "diff --from ②"], 1, "②"),
        (["-c", "log --from ٣"], 1, "not an offset"),
        (["-c", "history ²"], 1, "history"),
        (["-c", "watch --interval inf /topics"], 1, "not a positive number of seconds"),
        (["-c", "watch --interval nan /topics"], 1, "not a positive number of seconds"),
        (["-c", "watch --interval 1e999 /topics"], 1, "not a positive number of seconds"),
        (["-c", "tree -L ³ /"], 2, "could not convert"),  # a usage error: 2
    ],
)
def test_numbers_that_are_digits_only_to_isdigit(args: list[str], status: int, message: str) -> None:
    got, _, err = run_cli("-d", str(FIXTURES / "demo"), *args)
    assert got == status and message in err and "internal error" not in err, err
