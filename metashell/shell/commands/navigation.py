"""The filesystem commands of Kafka's shell: ``ls``, ``cd``, ``pwd``, ``cat``, ``tree`` and ``find``."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING

from metashell.tree import Node, join
from metashell.tree.paths import glob_regex, is_glob, normalize
from metashell.tree.render import iter_find, render_ls, render_tree
from metashell.tree.summary import summarize

from ...safe_text import visible, visible_output
from .. import colour
from ..registry import Command, TuiMode
from ..session import effective_paths
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed, Positional

if TYPE_CHECKING:
    from ..session import Shell


def run_ls(shell: Shell, p: Parsed) -> None:
    as_json = shell.wants_json(p)
    long = bool(p.opts.get("long"))
    files: list[tuple[str, list[str], Node]] = []
    dirs: list[tuple[str, list[str], Node]] = []
    for arg in effective_paths(p.args):
        matches = shell.glob(arg.text)
        if not matches:
            shell.error(f"ls: {arg.text}: no such file or directory.{shell.did_you_mean(arg.text)}")
            continue
        globbed = any(is_glob(c) for c in normalize(shell.cwd, arg.text))
        for comps, node in matches:
            if node.is_dir:
                dirs.append((_ls_label(shell, arg.text, comps, globbed), comps, node))
            else:
                files.append((comps[-1] if comps else "/", comps, node))
    if as_json:
        for name, comps, node in files:
            shell.emit_json(_entry_json(shell, name, comps, node))
        for _name, comps, node in dirs:
            for child_name in node.child_names():
                child = node.child(child_name)
                if child is not None:
                    shell.emit_json(_entry_json(shell, child_name, comps + [child_name], child))
        return
    if p.opts.get("recursive"):
        _ls_recursive(shell, files, dirs, long)
        return
    if not long:
        shell.write(
            render_ls(
                [visible(f[0]) for f in files],
                [(visible(d[0]), [visible(c) for c in d[2].child_names()]) for d in dirs],
                shell.settings.width(),
            )
        )
        return
    # ls -l: Kafka's grouping and intro lines, one long row per entry.
    out: list[str] = _long_rows([(f[0], f[2]) for f in files], shell.settings.redact, shell.settings.color)
    need_intro = bool(files) or len(dirs) > 1
    first_intro = not files
    for name, _comps, node in dirs:
        intro = None
        if need_intro:
            intro = (visible(name) + ":") if first_intro else ("\n" + visible(name) + ":")
            first_intro = False
        children = [(n, c) for n in node.child_names() if (c := node.child(n)) is not None]
        if not children:
            continue
        if intro is not None:
            out.extend(intro.split("\n"))
        out.extend(_long_rows(children, shell.settings.redact, shell.settings.color))
    shell.write("".join(line + "\n" for line in out), raw=True)  # cells made safe by _long_rows


def _ls_recursive(
    shell: Shell,
    files: list[tuple[str, list[str], Node]],
    dirs: list[tuple[str, list[str], Node]],
    long: bool,
) -> None:
    """``ls -R``: each directory as ``path:`` and its entries, depth first, streamed."""
    if files:
        rows = (
            _long_rows([(f[0], f[2]) for f in files], shell.settings.redact, shell.settings.color)
            if long
            else [visible(f[0]) for f in files]
        )
        shell.write("".join(r + "\n" for r in rows), raw=True)  # safe: visible() or _long_rows
    first = not files
    stack = [(comps, node) for _name, comps, node in reversed(dirs)]
    while stack:
        comps, node = stack.pop()
        children = [(n, c) for n in node.child_names() if (c := node.child(n)) is not None]
        rows = (
            _long_rows(children, shell.settings.redact, shell.settings.color)
            if long
            else [visible(n) for n, _c in children]
        )
        head = ("" if first else "\n") + visible(join(comps)) + ":\n"
        shell.write(head + "".join(r + "\n" for r in rows), raw=True)  # safe: visible() or _long_rows
        first = False
        stack.extend((comps + [n], c) for n, c in reversed(children) if c.is_dir)


def _entry_json(shell: Shell, name: str, comps: list[str], node: Node) -> dict[str, object]:
    entry: dict[str, object] = {
        "path": join(comps),
        "name": name,
        "type": "dir" if node.is_dir else "file",
        "kind": node.kind,
    }
    if node.is_dir:
        entry["children"] = node.child_count()
    return entry


def run_cd(shell: Shell, p: Parsed) -> None:
    """Kafka's ``cd``, plus the shell habits ``cd -`` (back, printing where) and ``cd ~`` (``/``)."""
    target = p.args[0].text if p.args else "/"
    before = shell.cwd
    if target == "-":
        shell.cwd = shell.previous_cwd
        shell.previous_cwd = before
        shell.write(visible(shell.cwd) + "\n")
        return
    if target == "~" or target.startswith("~/"):
        target = "/" + target[2:]
    matches = shell.glob(target)
    if not matches:
        shell.error(f"cd: {target}: no such directory.{shell.did_you_mean(target)}")
        return
    for comps, node in matches:  # Kafka visits every match: the last directory wins
        if node.is_dir:
            shell.cwd = join(comps)
        else:
            shell.error(f"cd: {target}: not a directory.")
    if shell.cwd != before:
        shell.previous_cwd = before


def run_pwd(shell: Shell, p: Parsed) -> None:
    if shell.wants_json(p):
        shell.emit_json({"path": shell.cwd})
    else:
        shell.write(visible(shell.cwd) + "\n")


def run_cat(shell: Shell, p: Parsed) -> None:
    """Kafka's ``cat``; outside ``/image``, a glob matching several files names each value's path
    (``path: value``, as ``etcdctl get --prefix``) and skips the directories it matched, naming
    each, without failing (under ``/image`` the output stays Kafka's, byte for byte)."""
    as_json = shell.wants_json(p)
    for arg in p.args:
        matches = shell.glob(arg.text)
        if not matches:
            shell.error(f"cat: {arg.text}: No such file or directory.{shell.did_you_mean(arg.text)}")
            continue
        globbed = len(matches) > 1 or any(is_glob(c) for c in normalize(shell.cwd, arg.text))
        kafka_form = bool(matches[0][0]) and matches[0][0][0] == "image"
        files = sum(1 for _c, n in matches if not n.is_dir)
        for comps, node in matches:
            if node.is_dir:
                if globbed and files and not kafka_form:
                    shell.note(f"cat: {join(comps)}: is a directory (skipped)")
                else:
                    shell.error(f"cat: {arg.text}: Is a directory")
            elif as_json:
                shell.emit_json(
                    {"path": join(comps), "kind": node.kind, "value": node.to_json(shell.settings.redact)}
                )
            elif files > 1 and not kafka_form:
                text = shell.leaf_text(node)
                sep = "\n" if "\n" in text else " "
                shell.write(visible_output(join(comps)) + ":" + sep + text + "\n", raw=True)
            else:
                shell.write(shell.leaf_text(node) + "\n", raw=True)


def run_tree(shell: Shell, p: Parsed) -> None:
    depth = p.opts.get("depth")
    if depth is not None and int(depth) < 0:  # type: ignore[call-overload]
        raise CommandError("tree: argument -L: DEPTH must be >= 0")
    max_depth = None if depth is None else int(depth)  # type: ignore[call-overload]
    as_json = shell.wants_json(p)
    for arg in effective_paths(p.args):
        matches = shell.glob(arg.text)
        if not matches:
            shell.error(f"tree: {arg.text}: No such file or directory.{shell.did_you_mean(arg.text)}")
            continue
        for comps, node in matches:
            if as_json:
                shell.emit_json(
                    {"path": join(comps), "tree": _tree_json(node, shell.settings.redact, max_depth)}
                )
            else:
                shell.write(render_tree(node, shell.settings.redact, max_depth))


def run_find(shell: Shell, p: Parsed) -> None:
    as_json = shell.wants_json(p)
    name_glob = p.opts.get("name")
    type_filter = p.opts.get("type")
    name_match: Callable[[str], bool] | None = None
    if isinstance(name_glob, str):
        regex = glob_regex(name_glob)
        name_match = (lambda n: n == name_glob) if regex is None else (lambda n: bool(regex.match(n)))
    for arg in effective_paths(p.args):
        matches = shell.glob(arg.text)
        if not matches:
            shell.error(f"find: {arg.text}: no such file or directory.{shell.did_you_mean(arg.text)}")
            continue
        globbed = any(is_glob(c) for c in normalize(shell.cwd, arg.text))
        for comps, node in matches:
            base = _find_base(shell, arg.text, comps) if globbed else arg.text
            batch: list[str] = []  # big trees print millions of lines: write in chunks
            chunk = 64  # ... but the first lines at once
            for path, n in iter_find(base, node):
                if type_filter == "f" and n.is_dir or type_filter == "d" and not n.is_dir:
                    continue
                if name_match is not None and not name_match(n.name):
                    continue
                if as_json:
                    shell.emit_json({"path": path, "type": "dir" if n.is_dir else "file", "kind": n.kind})
                    continue
                batch.append(visible(path))
                if len(batch) >= chunk:
                    shell.write("\n".join(batch) + "\n")
                    batch.clear()
                    chunk = 4096
            if batch:
                shell.write("\n".join(batch) + "\n")


def _ls_label(shell: Shell, typed: str, comps: list[str], globbed: bool) -> str:
    """How ``ls`` heads a matched directory's listing.  Under ``/image`` its last component, as
    Kafka's shell does (its output is Kafka's to the byte).  Elsewhere a glob's directories are
    headed by their paths, as in ``sh``: ``ls /topics/*/configs`` names each topic, not
    ``configs:`` five times.  Matched files stay names, as Kafka lists them."""
    name = comps[-1] if comps else "/"
    if not globbed or (comps and comps[0] == "image"):
        return name
    return _find_base(shell, typed, comps)


def _find_base(shell: Shell, typed: str, comps: list[str]) -> str:
    """The path printed for a glob match: absolute if typed absolute, else relative to cwd."""
    absolute = join(comps)
    if typed.startswith("/"):
        return absolute
    return posixpath.relpath(absolute, shell.cwd)


def _tree_json(node: Node, redact: bool, max_depth: int | None, level: int = 0) -> object:
    """Nested JSON of a subtree: a directory is an object of its children, a leaf its ``to_json``;
    a directory below ``-L`` is ``null``."""
    if not node.is_dir:
        return node.to_json(redact)
    if max_depth is not None and level >= max_depth:
        return None
    out: dict[str, object] = {}
    for name in node.child_names():
        child = node.child(name)
        if child is not None:
            out[name] = _tree_json(child, redact, max_depth, level + 1)
    return out


def _long_rows(entries: list[tuple[str, Node]], redact: bool, color: bool = False) -> list[str]:
    """``ls -l`` rows: ``<d|-> <children> <kind> <name>  <what it says>`` with aligned columns.

    The last column is what an operator scans a listing for (``tree.summary``): a partition's
    leader, ISR and replicas, a broker's state and first listener, an ACL in one line, a feature's
    level, a scalar's value; a directory shows how many children it has.  Every cell is made safe
    here (``visible``), so the rows may be written raw; ``color`` paints directory names and what
    is down (``shell/colour.py``).
    """
    rows: list[tuple[str, str, str, str, str]] = []
    for name, node in entries:
        summary = visible(summarize(node, redact))
        rows.append(
            (
                "d" if node.is_dir else "-",
                str(node.child_count()) if node.is_dir else "",
                node.kind,
                visible(name),
                summary,
            )
        )
    if not rows:
        return []
    size_w = max(len(r[1]) for r in rows)
    kind_w = max(len(r[2]) for r in rows)
    name_w = max(len(r[3]) for r in rows)
    lines = []
    for t, size, kind, name, summary in rows:
        cell = f"{name:<{name_w}}"
        if color:
            cell, summary = colour.ls_name(cell, t == "d"), colour.ls_long(summary)
        line = f"{t} {size:>{size_w}} {kind:<{kind_w}} {cell}  {summary}"
        lines.append(line.rstrip(" "))
    return lines


LS_COMMAND = Command(
    CommandSpec(
        "ls",
        "List metadata nodes.",
        Positional("targets", "The metadata node paths to list.", "*"),
        (
            Option(
                ("-l",),
                "long",
                "Long listing: type, size (children or bytes), kind, name and short value.",
            ),
            Option(("-R",), "recursive", "List subdirectories recursively."),
            Option(("-a",), "all", "Accepted for habit's sake: there are no hidden entries."),
            JSON_OPT,
        ),
    ),
    run=run_ls,
    tui=TuiMode.INLINE,
)


CD_COMMAND = Command(
    CommandSpec(
        "cd",
        "Set the current working directory.",
        Positional("target", "The directory to change to ('-': the previous one; '~': /).", "?"),
        shell_only=True,
    ),
    run=run_cd,
    tui=TuiMode.INLINE,
)


PWD_COMMAND = Command(
    CommandSpec(
        "pwd",
        "Print the current working directory.",
        options=(JSON_OPT,),
        shell_only=True,
    ),
    run=run_pwd,
    tui=TuiMode.INLINE,
)


CAT_COMMAND = Command(
    CommandSpec(
        "cat",
        "Show the contents of metadata files.",
        Positional("targets", "The metadata files to display.", "+"),
        (JSON_OPT,),
    ),
    run=run_cat,
    tui=TuiMode.INLINE,
)


TREE_COMMAND = Command(
    CommandSpec(
        "tree",
        "Show the contents of metadata nodes in a tree structure.",
        Positional("targets", "The metadata nodes to display (default: the current directory).", "*"),
        (
            Option(("-L",), "depth", "Descend at most DEPTH directory levels.", "DEPTH", type=int),
            JSON_OPT,
        ),
    ),
    run=run_tree,
    tui=TuiMode.WORKER,
)


FIND_COMMAND = Command(
    CommandSpec(
        "find",
        "Search for nodes in the directory hierarchy.",
        Positional("paths", "The paths to start at.", "*"),
        (
            Option(("-name",), "name", "Only print nodes whose name matches this glob.", "GLOB"),
            Option(
                ("-type",), "type", "Only print files (f) or directories (d).", "TYPE", choices=("f", "d")
            ),
            JSON_OPT,
        ),
        notes=("A path given as a glob prints the matched paths (Kafka prints the glob text).",),
    ),
    run=run_find,
    tui=TuiMode.WORKER,
)
