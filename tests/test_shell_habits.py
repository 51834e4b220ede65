"""The shell habits operators bring (issue 13): ``cd -``/``cd ~``, ``quit``, ``clear``, ``ls -R``/
``-la``, ``ls -l`` rows that show values, ``cat`` of a glob naming each value's path, character
classes in globs, partitions in numeric order.  On the demo fixture (real Kafka 4.4) and the 3.9
split fixture (12 partitions)."""

from __future__ import annotations

import io
import json

import pytest
from conftest import FIXTURES
from test_cli import run_cli

from metashell.image.loader import load_directory
from metashell.shell.session import Settings, Shell
from metashell.tree import build_root

DEMO = str(FIXTURES / "demo")
SPLIT = str(FIXTURES / "kafka-3.9-split-c1")


def test_cd_back_and_home() -> None:
    status, out, err = run_cli(
        "-d", DEMO, "-c", "cd /topics/orders; cd /brokers; cd -; pwd; cd ~; pwd; cd ~/features; pwd"
    )
    assert (status, err) == (0, "")
    assert out.splitlines() == ["/topics/orders", "/topics/orders", "/", "/features"]


def test_quit_and_clear() -> None:
    status, out, _ = run_cli("-d", DEMO, "-c", "clear; pwd; quit; pwd")
    assert status == 0 and out == "/\n"  # clear writes nothing into a pipe

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out_tty = Tty()
    Shell(build_root(load_directory(DEMO).image), out_tty, io.StringIO(), Settings()).run_line("clear")
    assert out_tty.getvalue() == "\x1b[H\x1b[2J\x1b[3J"


def test_ls_recursive_and_flag_clusters() -> None:
    status, out, _ = run_cli("-d", DEMO, "ls", "-R", "/topics/clickstream")
    assert status == 0 and out == (
        "/topics/clickstream:\n0\n1\nconfigs\nid\nname\n\n"
        "/topics/clickstream/configs:\nretention.bytes\nsegment.ms\n"
    )
    assert run_cli("-d", DEMO, "ls", "-la", "/brokers")[1] == run_cli("-d", DEMO, "ls", "-l", "/brokers")[1]


def test_ls_long_shows_values() -> None:
    _, out, _ = run_cli("-d", SPLIT, "ls", "-l", "/topics/orders", "/brokers", "/features", "/topicIds")
    rows = [" ".join(line.split()) for line in out.splitlines()]
    assert "- partition 0 leader none isr [4] replicas [4,5]" in rows
    assert any(
        r.startswith("- broker 4 fenced epoch ") and "BROKER PLAINTEXT://127.0.0.1:" in r for r in rows
    )
    assert any(r.startswith("- feature metadata.version level ") for r in rows)
    assert any(r.startswith("d 15 topic ") and r.endswith(" orders") for r in rows)  # /topicIds: the name
    _, out, _ = run_cli("-d", SPLIT, "ls", "-l", "/acls")
    assert any(
        "DENY User:mallory READ TOPIC:payments (LITERAL) from 10.0.0.66" in line for line in out.splitlines()
    )


def test_partitions_in_numeric_order_outside_image() -> None:
    _, out, _ = run_cli("-d", SPLIT, "ls", "/topics/orders")
    assert out.split()[:13] == [str(i) for i in range(12)] + ["configs"]
    _, out, _ = run_cli("-d", SPLIT, "ls", "/image/topics/byName/orders")
    assert out.split()[:3] == ["0", "1", "10"]  # Kafka's order, byte for byte


def test_cat_of_a_glob_names_each_value() -> None:
    status, out, err = run_cli("-d", DEMO, "cat", "/configs/topic/*/*")
    assert (status, err) == (0, "")
    assert "/configs/topic/orders/retention.ms: 604800000\n" in out
    status, out, err = run_cli("-d", DEMO, "cat", "/topics/clickstream/*")
    assert status == 0 and err == "cat: /topics/clickstream/configs: is a directory (skipped)\n"
    assert out.startswith("/topics/clickstream/0:\n{\n") and "/topics/clickstream/name: clickstream\n" in out
    status, out, _ = run_cli("-d", DEMO, "cat", "/topicIds/*/name")
    assert status == 0 and sorted(line.split(": ")[1] for line in out.splitlines()) == [
        "clickstream",
        "orders",
        "payments",
    ]
    status, _, err = run_cli("-d", DEMO, "cat", "/topics/orders/configs")
    assert status == 1 and "Is a directory" in err  # a literal directory is still an error


def test_character_classes() -> None:
    _, out, _ = run_cli("-d", SPLIT, "ls", "/topics/orders/1[0-9]")
    assert out.split() == ["10", "11"]
    _, out, _ = run_cli("-d", SPLIT, "find", "/topics/[!o]*", "-name", "[0-1]")
    assert "/topics/events/0" in out.split() and not any(p.startswith("/topics/orders") for p in out.split())


def test_grep_searches_values_and_names() -> None:
    status, out, _ = run_cli("-d", SPLIT, "grep", "-r", "mallory", "/")
    assert status == 0 and out.startswith("/acls/") and '"principal": "User:mallory",' in out
    status, out, _ = run_cli("-d", SPLIT, "grep", "-ri", "RETENTION", "/configs")
    assert status == 0 and "/configs/topic/orders/retention.ms: 86400000\n" in out
    status, out, _ = run_cli("-d", SPLIT, "grep", "-rl", "alice", "/scram")
    assert status == 0 and out.split() == ["/scram/SCRAM-SHA-256/alice", "/scram/SCRAM-SHA-512/alice"]
    status, out, _ = run_cli("-d", SPLIT, "grep", "nothing-like-this", "/brokers")
    assert (status, out) == (1, "")  # grep's convention
    _, out, _ = run_cli("-d", SPLIT, "grep", "-r", "4", "/")
    assert "/image/" not in out and "/local/" not in out  # from /: Kafka's copy is left out
    status, _, err = run_cli("-d", SPLIT, "grep", "(", "/")
    assert status == 1 and "not a valid regular expression" in err


def test_grep_never_finds_a_secret() -> None:
    """Values are searched as cat shows them: redacted secrets cannot be guessed by grepping."""
    img = load_directory(FIXTURES / "kafka-4.4-split-c1").image
    salts = [c.salt.hex() for c in img.scram.values()]
    assert salts
    for salt in salts:
        _, out, _ = run_cli("-d", str(FIXTURES / "kafka-4.4-split-c1"), "grep", "-r", salt[:12], "/scram")
        assert out == ""


def test_pipes_in_one_shot_mode() -> None:
    status, out, err = run_cli("-d", DEMO, "-c", "ls /topics | wc -l; pwd | tr / x")
    assert (status, err) == (0, "") and out.split() == ["3", "x"]
    status, _, err = run_cli("-d", DEMO, "-c", "ls /topics |")
    assert status == 1 and "a shell command must follow the pipe" in err
    status, out, err = run_cli("-d", DEMO, "-c", "cat '/topics/orders/name' | cat; ls /topics\\|x")
    assert out == "orders\n" and status == 1 and err.startswith("ls: /topics|x: no such file or directory.")


def test_snapshot_option_on_a_file_that_is_not_a_log() -> None:
    for name in (
        "meta.properties",
        "__cluster_metadata-0/quorum-state",
        "__cluster_metadata-0/partition.metadata",
    ):
        status, out, err = run_cli("-s", f"{DEMO}/{name}", "ls", "/")
        assert (status, out) == (1, "") and len(err.splitlines()) == 1
        assert err.startswith(f"error: {DEMO}/{name}: byte offset 0: not a KRaft metadata log or snapshot")


def test_controllers_include_unregistered_voters() -> None:
    """Controller 3 of the 4.4 split cluster never registered in this copy of the log: /controllers
    still lists it, from the quorum's voters, and says so."""
    fixture = str(FIXTURES / "kafka-4.4-split-c1")
    status, out, _ = run_cli("-d", fixture, "ls", "/controllers")
    assert status == 0 and out.split() == ["1", "2", "3"]
    _, out, _ = run_cli("-d", fixture, "--json", "cat", "/controllers/3", "/controllers/1")
    three, one = (json.loads(line)["value"] for line in out.splitlines())
    assert three["voter"] is True and "no RegisterControllerRecord" in three["source"]
    assert three["listeners"][0]["host"] == "127.0.0.1" and three["listeners"][0]["port"] > 0
    assert one["source"] == "RegisterControllerRecord" and "voter" not in one


def test_did_you_mean() -> None:
    status, _, err = run_cli(
        "-d", DEMO, "-c", "ls /topcs/orders; cat /topics/ordres/0; cd /brokrs; ls /nothing"
    )
    assert status == 1 and err.splitlines() == [
        "ls: /topcs/orders: no such file or directory. Did you mean /topics/orders?",
        "cat: /topics/ordres/0: No such file or directory. Did you mean /topics/orders/0?",
        "cd: /brokrs: no such directory. Did you mean /brokers?",
        "ls: /nothing: no such file or directory.",
    ]


def test_help_lists_the_commands() -> None:
    status, out, _ = run_cli("--help")
    assert status == 0 and "\n  health    Say what is wrong" in out and "\n  describe  Describe topics" in out


def test_provenance_has_one_schema() -> None:
    docs = []
    for args in (
        ("-d", DEMO),
        ("-s", f"{DEMO}/__cluster_metadata-0/00000000000000000070-0000000001.checkpoint"),
        ("-d", DEMO, "--salvage"),
    ):
        status, out, _ = run_cli(*args, "--json", "cat", "/provenance")
        assert status == 0
        docs.append(json.loads(out)["value"])
    assert len({frozenset(d) for d in docs}) == 1
    assert [d["source"]["mode"] for d in docs] == ["directory", "file", "directory"]
    assert all(d["salvaged"] == [] for d in docs)


def test_the_incident_walk_through_in_the_docs_runs() -> None:
    """Every command of docs/shell.md's walk-through works on the fixture it names."""
    text = (FIXTURES.parent / "docs" / "shell.md").read_text()
    block = text.split("### An incident, step by step")[1].split("```")[1]
    commands = [
        line.split("#")[0].strip()[2:] for line in block.splitlines() if line.startswith("$ metashell")
    ]
    assert len(commands) >= 5
    for command in commands:
        words = command.split()[1:]
        words = [str(FIXTURES.parent / w) if w.startswith("fixtures/") else w for w in words]
        status, out, err = run_cli(*words)
        assert out and (status, err) in ((0, ""),), (command, err)


def test_a_long_load_shows_its_progress_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25, item 12: MB read and records, on stderr when it is a terminal, wiped at the end."""
    import time

    from metashell.log.progress import LOAD
    from metashell.shell import progress_line

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(progress_line, "QUIET", 0.0)
    monkeypatch.setattr(progress_line, "EVERY", 0.01)
    tty = Tty()
    with progress_line.showing_progress(tty, True):
        result = load_directory(SPLIT)
        time.sleep(0.1)
    shown = tty.getvalue()
    assert shown.startswith("\rloading: ") and " MB read, " in shown and shown.endswith("\r\x1b[K")
    assert LOAD.records == result.records and LOAD.total_bytes > 0
    assert progress_line.progress_text(LOAD).endswith(f"{result.records:,} records")
    _, _, err = run_cli("-d", SPLIT, "cat", "/provenance/offset")  # not a terminal: nothing
    assert "loading" not in err
