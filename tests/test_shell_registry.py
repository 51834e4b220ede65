"""The command registry: every command says what it is, and everything else is derived from it.

These fail on omission: a command added without a man page, a completion or a TUI mode, a module
of ``metashell/shell/commands/`` that defines nothing, a command missing from the table, or a command that moves the session's image
but would run on a TUI worker beside the tree reading that image.
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest
from conftest import FIXTURES
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from test_shell_completion import complete

import metashell.shell.commands as package
from metashell.cli import _may_travel
from metashell.shell import registry
from metashell.shell.completion import ShellCompleter
from metashell.shell.registry import Command, TuiMode
from metashell.shell.sources import open_directory


@pytest.mark.parametrize("name", registry.names())
def test_every_command_has_a_man_page_a_completion_and_a_tui_mode(name: str) -> None:
    command = registry.command(name)
    assert isinstance(command, Command) and isinstance(command.tui, TuiMode)
    man = registry.man_text(name)
    assert man.startswith(f"{name}: {command.spec.description}") and f"usage: {name} [-h]" in man
    assert complete(f"{name} "), f"'{name} ' completes nothing"
    if command.moves_image:
        assert command.tui is TuiMode.INLINE, f"{name} moves the image: the TUI must run it inline"


def _defined() -> dict[str, tuple[str, str]]:
    """Every Command a module of the package defines at its top level: name -> (module, attribute)."""
    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for attribute, value in vars(module).items():
            if isinstance(value, Command):
                assert value.name not in found, f"{value.name} is defined twice"
                found[value.name] = (info.name, attribute)
    return found


def test_homes_is_every_command_the_package_defines() -> None:
    """``registry.HOMES`` is the one table of commands: a Command defined in the package without
    its line there (or a line without its Command) fails here, and each sits in the attribute its
    name says, so that resolving it imports that one module."""
    defined = _defined()
    assert {name: module for name, (module, _) in defined.items()} == dict(registry.HOMES)
    for name, (_, attribute) in defined.items():
        assert attribute == registry.attribute(name), name


def test_every_module_of_the_package_defines_a_command() -> None:
    homes = set(registry.HOMES.values())
    for info in pkgutil.iter_modules(package.__path__):
        assert info.name in homes, f"{package.__name__}.{info.name} defines no command"


def test_one_command_imports_its_own_module_only() -> None:
    script = (
        "import sys\n"
        "from metashell.shell import registry\n"
        "registry.parse([registry.Word.plain('cat'), registry.Word.plain('/x')])\n"
        "print(sorted(m for m in sys.modules if m.startswith('metashell.shell.commands.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['metashell.shell.commands.navigation']"


def test_what_travels_and_what_the_cli_keeps_a_journal_for() -> None:
    travelling = {n for n, c in registry.commands().items() if c.travels}
    assert travelling == {"at", "diff", "log", "history"}
    assert _may_travel(["ls /topics; at 5"]) and not _may_travel(["ls /topics", "health"])


def test_completion_offers_what_each_command_takes() -> None:
    """``describe`` completes topic names, ``broker`` and ``acl``, then broker ids; ``log --type``
    the record types (a comma-separated list item by item)."""
    source = open_directory(str(FIXTURES / "demo"), lambda _w: None, True)
    completer = ShellCompleter(lambda: source.root, lambda: "/")

    def words(text: str) -> list[tuple[str, int]]:
        doc = Document(text, len(text))
        return [(c.text, c.start_position) for c in completer.get_completions(doc, CompleteEvent())]

    assert words("describe ") == [
        ("acl ", 0),
        ("broker ", 0),
        ("clickstream ", 0),
        ("orders ", 0),
        ("payments ", 0),
    ]
    assert words("describe o") == [("orders ", -1)]
    assert words("describe broker ") == [("1 ", 0)]
    assert ("PartitionChangeRecord ", -4) in words("log --type Part")
    assert words("log --type NoOpRecord,Top") == [("NoOpRecord,TopicRecord ", -14)]


def test_describe_acl_options_complete_from_the_metadata() -> None:
    """Principals from the ACLs and SCRAM users, resources as TYPE:NAME, operations by name."""
    source = open_directory(str(FIXTURES / "kafka-4.4-split-c1"), lambda _w: None, True)
    completer = ShellCompleter(lambda: source.root, lambda: "/")

    def words(text: str) -> list[str]:
        doc = Document(text, len(text))
        return [c.text for c in completer.get_completions(doc, CompleteEvent())]

    image = source.root.ctx.image
    principals = words("describe acl --principal ")
    assert principals and {a.principal + " " for a in image.acls.values()} <= set(principals)
    assert any(p.startswith("User:") for p in principals)
    assert "topic:orders " in words("describe acl --resource topic:o")
    assert words("describe acl --operation DESCRIBE_") == ["DESCRIBE_CONFIGS ", "DESCRIBE_TOKENS "]


def test_describe_takes_paths_and_the_current_directory() -> None:
    from test_cli import run_cli

    demo = str(FIXTURES / "demo")
    _, by_name, _ = run_cli("-d", demo, "describe", "orders")
    assert run_cli("-d", demo, "describe", "/topics/orders")[1] == by_name
    assert run_cli("-d", demo, "-c", "cd /topics/orders", "-c", "describe")[1] == by_name
    assert run_cli("-d", demo, "-c", "cd /topics/orders/configs", "-c", "describe ..")[1] == by_name
    _, broker, _ = run_cli("-d", demo, "describe", "broker", "1")
    assert run_cli("-d", demo, "describe", "/brokers/1")[1] == broker
    assert run_cli("-d", demo, "-c", "cd /brokers", "-c", "describe")[1] == broker
    status, _, err = run_cli("-d", demo, "describe", "/features")
    assert status == 1 and "not a topic or a broker" in err


def test_node_completes_the_nodes_labels() -> None:
    source = open_directory(str(FIXTURES / "demo"), lambda _w: None, True)
    completer = ShellCompleter(lambda: source.root, lambda: "/", lambda: ("1", "2", "3"))
    doc = Document("node ", 5)
    assert [c.text for c in completer.get_completions(doc, CompleteEvent())] == ["1 ", "2 ", "3 "]
