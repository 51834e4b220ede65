"""``grep``: search values and names."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from metashell.tree import Node, join
from metashell.tree.render import iter_find

from ...safe_text import visible, visible_output
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed, Positional

if TYPE_CHECKING:
    from ..session import Shell


def run_grep(shell: Shell, p: Parsed) -> None:
    pattern, *paths = [w.text for w in p.args]
    try:
        regex = re.compile(pattern, re.IGNORECASE if p.opts["ignore_case"] else 0)
    except re.error as e:
        raise CommandError(f"grep: {pattern}: not a valid regular expression ({e})") from None
    recursive = bool(p.opts["recursive"])
    found = False
    for arg in paths or ["."]:
        matches = shell.glob(arg)
        if not matches:
            shell.error(f"grep: {arg}: no such file or directory.{shell.did_you_mean(arg)}")
            continue
        for comps, node in matches:
            for path, leaf in _grep_leaves(shell, comps, node, recursive):
                found |= _grep_one(shell, path, leaf, regex, p)
    if not found and shell.status == 0:
        shell.status = 1  # grep's convention: nothing matched


def _grep_leaves(shell: Shell, comps: list[str], node: Node, recursive: bool) -> Iterator[tuple[str, Node]]:
    if not node.is_dir:
        yield join(comps), node
        return
    skip = {"image", "local", "nodes"} if not comps else set()  # from /: Kafka's copy, build, other nodes
    base = join(comps)
    for path, n in iter_find(base, node):
        if n.is_dir:
            continue
        rel = path[len(base) :].lstrip("/").split("/")
        if rel[0] in skip or (not recursive and len(rel) > 1):
            continue
        yield path, n


def _grep_one(shell: Shell, path: str, leaf: Node, regex: re.Pattern[str], p: Parsed) -> bool:
    text = leaf.text(shell.settings.redact)
    lines = [ln for ln in text.split("\n") if regex.search(ln)]
    if not lines and regex.search(leaf.name):
        lines = text.split("\n")[:1]
    if not lines:
        return False
    if shell.wants_json(p):
        shell.emit_json({"path": path, "kind": leaf.kind, "lines": lines})
    elif p.opts["files_only"]:
        shell.write(visible(path) + "\n")
    else:
        shell.write("".join(f"{visible(path)}: {visible_output(ln.strip())}\n" for ln in lines))
    return True


GREP_COMMAND = Command(
    CommandSpec(
        "grep",
        "Search values and names of metadata files for a regular expression.",
        Positional(
            "args",
            "PATTERN, then the paths to search (default: the working directory).",
            "+",
            metavar="PATTERN",
            usage_text="PATTERN [PATH ...]",
        ),
        (
            Option(("-i",), "ignore_case", "Ignore case."),
            Option(
                ("-r",),
                "recursive",
                "Search directories recursively (from /, /image and /local are left out unless named).",
            ),
            Option(("-l",), "files_only", "Print only the paths of matching files."),
            JSON_OPT,
        ),
        notes=(
            (
                "Prints 'path: line' for every matching line of a file's text (as cat shows it, secrets "
                "redacted); a file whose name matches prints its first line. Exit status 1 when nothing "
                "matched, as grep's."
            ),
        ),
    ),
    run=run_grep,
    tui=TuiMode.WORKER,
)
