"""``metashell --completion bash|zsh|fish`` and ``metashell --man`` (issue 56, in part): generated
from the one parser and the command registry, and tried in a real bash (pexpect) and with ``man -l``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from test_cli import run_cli

from metashell.arguments import build_parser
from metashell.completion import completion_script
from metashell.shell.registry import specs


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_option_and_command_is_in_the_script(shell: str) -> None:
    status, out, err = run_cli("--completion", shell)
    assert status == 0 and err == "" and out == completion_script(shell, build_parser("metashell"))
    for action in build_parser()._actions:
        for flag in action.option_strings:
            word = (
                flag if shell != "fish" else (f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
            )
            assert word in out, (shell, flag)
    for name in specs():
        assert name in out, (shell, name)


def test_bash_syntax_is_valid(tmp_path: Path) -> None:
    script = tmp_path / "metashell.bash"
    script.write_text(completion_script("bash", build_parser("metashell")))
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_bash_completes_options_and_commands_in_a_real_bash(tmp_path: Path) -> None:
    """``metashell --sn<Tab>`` gives ``--snapshot``, ``metashell -d fixtures/demo descr<Tab>`` gives
    ``describe``, and ``-d fixtures/de<Tab>`` a directory."""
    pexpect = pytest.importorskip("pexpect")
    script = tmp_path / "metashell.bash"
    script.write_text(completion_script("bash", build_parser("metashell")))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BASH")}
    env.update(HOME=str(tmp_path), PS1="$ ", TERM="dumb", INPUTRC="/dev/null")
    child = pexpect.spawn(
        "bash", ["--norc", "--noprofile"], env=env, cwd=str(REPO), encoding="utf-8", timeout=30
    )
    child.expect_exact("$ ")
    child.sendline(f"source {script}; echo sourced")
    child.expect_exact("sourced")
    child.expect_exact("$ ")
    for typed, whole in (
        ("metashell --sn", "metashell --snapshot "),
        ("metashell -d fixtures/demo descr", "metashell -d fixtures/demo describe "),
        ("metashell -d fixtures/de", "metashell -d fixtures/demo/"),
    ):
        child.send(typed + "\t")
        child.expect_exact(whole[len(typed) :])
        child.sendcontrol("c")
        child.expect_exact("$ ")
    child.sendline("exit")
    child.expect(pexpect.EOF)


def test_the_man_page_renders(tmp_path: Path) -> None:
    status, out, _err = run_cli("--man")
    assert status == 0 and out.startswith(".TH METASHELL 1")
    for name in specs():
        assert f"\\fB{name.replace('-', chr(92) + '-')}\\fR" in out, name
    if shutil.which("man") is None:
        pytest.skip("man is not installed (apt install man-db groff-base)")
    page = tmp_path / "metashell.1"
    page.write_text(out)
    proc = subprocess.run(
        ["man", "-l", str(page)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"},
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "NAME" in text and "--snapshot" in text and "upgrade-check" in text and "EXIT STATUS" in text
    assert "warning" not in proc.stderr.lower(), proc.stderr


def test_completion_needs_no_metadata_source() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "metashell", "--completion", "bash"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("# metashell's completion for bash")
    status, _out, err = run_cli("--completion", "tcsh")
    assert status == 2 and "invalid choice: 'tcsh'" in err


def test_the_installed_man_page_is_the_generated_one() -> None:
    """The wheel installs ``man/metashell.1`` (pyproject's data-files): it must be what ``--man``
    prints from today's parser and registry, so an option or a command added without
    regenerating it fails here."""
    status, out, _err = run_cli("--man")
    assert status == 0
    assert (REPO / "man" / "metashell.1").read_text() == out, "run: metashell --man > man/metashell.1"
