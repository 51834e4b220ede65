"""Completion and history helpers, in-process (the pty-driven checks are in test_shell_repl.py)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from test_shell_commands import make_root

from metashell.shell import history, registry
from metashell.shell.completion import ShellCompleter, current_segment, split_for_completion
from metashell.shell.session import Settings, Shell


def complete(text: str, cwd: str = "/") -> list[tuple[str, int]]:
    root = make_root()
    completer = ShellCompleter(lambda: root, lambda: cwd)
    doc = Document(text, len(text))
    return [
        (c.text, c.start_position)
        for c in completer.get_completions(doc, CompleteEvent(completion_requested=True))
    ]


def test_command_names() -> None:
    assert complete("") == [(n + " ", 0) for n in registry.names()]
    assert {"at", "describe", "grep", "health"} <= set(registry.names())
    assert complete("c") == [("cat ", -1), ("cd ", -1), ("clear ", -1)]
    assert complete("pwd; tr") == [("tree ", -2)]


def test_absolute_paths() -> None:
    assert complete("ls /i") == [("/image/", -2)]
    assert complete("cat /image/t") == [("/image/topics/", -8)]
    assert complete("cat /image/features/m") == [("/image/features/metadataVersion ", -17)]
    assert [t for t, _ in complete("ls /image/topics/")] == ["/image/topics/byId/", "/image/topics/byName/"]


def test_relative_dotdot_and_glob_paths() -> None:
    assert complete("cat byName/foo/n", cwd="/image/topics") == [("byName/foo/name ", -12)]
    assert complete("cd ../cl", cwd="/image/topics") == [("../clientQuotas/", -5), ("../cluster/", -5)]
    # a glob in the directory part completes over every matched directory
    assert [t for t, _ in complete("ls /image/t*/by")] == ["/image/t*/byId/", "/image/t*/byName/"]
    # a glob in the last component lists what it matches
    assert [t for t, _ in complete("ls /image/*Id*")] == ["/image/producerIds/"]
    assert complete("ls /nope/") == []


def test_options_and_arguments() -> None:
    assert complete("ls -") == [
        ("-h ", -1),
        ("--help ", -1),
        ("-l ", -1),
        ("-R ", -1),
        ("-a ", -1),
        ("--json ", -1),
    ]
    assert complete("find / -type ") == [("f ", 0), ("d ", 0)]
    assert complete("man l") == [("log ", -1), ("ls ", -1)]
    assert complete("pwd ") == [("-h ", 0), ("--help ", 0), ("--json ", 0)]  # no argument: its options
    assert complete("bogus /") == []


def test_line_splitting_for_completion() -> None:
    assert current_segment("ls /a; cat 'x;y' /b") == " cat 'x;y' /b"
    assert split_for_completion("cat my\\ dir/f") == (["cat"], "my dir/f")
    assert split_for_completion("ls ") == (["ls"], "")


def test_history_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("METASHELL_HISTFILE", str(tmp_path / "h"))
    assert history.history_path() == tmp_path / "h"
    monkeypatch.setenv("METASHELL_HISTFILE", "")
    assert history.history_path() is None
    monkeypatch.delenv("METASHELL_HISTFILE")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert history.history_path() == tmp_path / "state" / "metashell" / "history"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert history.history_path() == tmp_path / ".metashell_history"


def test_history_never_stores_secrets(tmp_path: Path) -> None:
    for line in (
        "ls password=x",
        "cat /a sasl.jaas.config=org...",
        "x ssl.keystore.password = y",
        "SECRET: z",
        "find / -name token=abc",
    ):
        assert history.is_secret(line), line
    for line in (
        "cat /configs/broker/1/ssl.keystore.password",
        "ls /scram",
        "cd /image/configs/BROKER:1",
        "find / -name '*password*'",
    ):
        assert not history.is_secret(line), line
    h = history.open_history(tmp_path / "dir" / "hist")
    h.store_string("ls /topics")
    h.store_string("cat x password=hunter2")
    text = (tmp_path / "dir" / "hist").read_text()
    assert "ls /topics" in text and "hunter2" not in text
    assert (tmp_path / "dir" / "hist").stat().st_mode & 0o777 == 0o600
    assert history.loaded_lines(history.open_history(tmp_path / "dir" / "hist")) == ["ls /topics"]


def test_unwritable_history_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert isinstance(history.open_history(blocker / "sub" / "hist"), InMemoryHistory)
    assert isinstance(history.open_history(None), InMemoryHistory)
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        assert isinstance(history.open_history(ro / "hist"), InMemoryHistory)


def test_a_bug_in_a_command_is_one_line_and_the_session_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    shell = Shell(make_root(), out, err, Settings())

    def broken(shell: Shell, p: object) -> None:
        raise ValueError("oops\nmore")

    resolved = dict(registry.commands())
    resolved["pwd"] = resolved["pwd"]._replace(run=broken)
    monkeypatch.setattr(registry, "_RESOLVED", resolved)
    assert shell.run_line("pwd; ls /local") == 1
    assert err.getvalue() == "internal error in pwd: ValueError: oops more\n"
    assert out.getvalue() == "commitId\nrecord\nversion\n"
