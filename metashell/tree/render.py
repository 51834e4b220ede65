"""Pure text renderers for ``tree``, ``find``, ``ls`` and ``cat``, laid out exactly like Kafka's shell
(``ShellNodePrinter``, ``FindCommandHandler``, ``LsCommandHandler``).

They return strings (every line ends with ``\\n``; an empty result is ``""``) so the shell can write
them to stdout, colour them, or compare them with the Java shell's output in tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..safe_text import visible
from .node import Node


def render_cat(node: Node, redact: bool | None = None) -> str:
    """What Kafka's ``cat`` prints for a leaf: its text plus a newline."""
    return node.text(redact) + "\n"


def render_tree(node: Node, redact: bool | None = None, max_depth: int | None = None) -> str:
    """Kafka's ``tree``: a leaf prints its text; a directory prints, for every child in sorted order,
    ``<indent><name>:`` and then the child indented by two more spaces.  The node's own name is not
    printed; an empty directory prints nothing.  Record leaves print as one-line JSON
    (``Node.tree_text``); a multi-line text is printed as is, its continuation lines not indented
    (Kafka's ``ShellNodePrinter`` does the same).

    ``max_depth`` (metashell's ``tree -L``) stops descending below that many directory levels
    (``None`` = unlimited, Kafka's behaviour).
    """
    out: list[str] = []
    _tree(node, 0, out, redact, max_depth)
    return "".join(out)


def _tree(node: Node, level: int, out: list[str], redact: bool | None, max_depth: int | None) -> None:
    indent = "  " * level
    if not node.is_dir:
        out.append(f"{indent}{node.tree_text(redact)}\n")
        return
    if max_depth is not None and level >= max_depth:
        return
    for name in node.child_names():
        out.append(f"{indent}{visible(name)}:\n")
        child = node.child(name)
        if child is not None:
            _tree(child, level + 1, out, redact, max_depth)


def iter_find(arg: str, node: Node) -> Iterable[tuple[str, Node]]:
    """``(path, node)`` for ``node`` and all its descendants, depth first in sorted order, with paths
    built from ``arg`` as Kafka does: ``arg``, ``arg/child``, ... (``/child`` when ``arg`` is ``/``).

    Lazy all the way down: a directory's children are made one at a time as the walk reaches them,
    so the first paths of ``find /`` come out at once even when a directory holds 100 000 topics.
    """
    yield arg, node
    if not node.is_dir:
        return
    stack: list[tuple[str, Iterator[str], Node]] = [
        (arg if arg == "/" else arg + "/", iter(node.child_names()), node)
    ]
    while stack:
        prefix, names, parent = stack[-1]
        name = next(names, None)
        if name is None:
            stack.pop()
            continue
        child = parent.child(name)
        if child is None:
            continue
        path = prefix + name
        yield path, child
        if child.is_dir:
            stack.append((path + "/", iter(child.child_names()), child))


def render_find(arg: str, matches: Sequence[tuple[str, Node]]) -> str:
    """Kafka's ``find`` for one argument: for every match, print the argument *as typed* and then
    every descendant under it (Kafka echoes the glob text, not the matched path -- see docs/tree.md;
    pass the matched path as ``arg`` per match to get metashell's saner output).

    ``matches`` is the result of :func:`metashell.tree.paths.glob`; an empty list prints Kafka's
    error line ``find: <arg>: no such file or directory.`` (which the shell should send to stderr).
    """
    if not matches:
        return f"find: {arg}: no such file or directory.\n"
    out: list[str] = []
    for _path, node in matches:
        out.extend(p + "\n" for p, _ in iter_find(arg, node))
    return "".join(out)


def _jlen(s: str) -> int:
    """Java ``String.length()`` (UTF-16 code units)."""
    return len(s) if s.isascii() else len(s.encode("utf-16-le")) // 2


def ls_layout(entries: Sequence[str], width: int | None = None) -> list[str]:
    """Lines of Kafka's ``printEntries`` for one list (without the intro line).

    ``width=None`` (not a terminal): one entry per line.  Otherwise the column-major layout of
    ``LsCommandHandler.calculateColumnSchema``: try ``width // 4`` columns down to 2, each column as
    wide as its longest entry + 2, keep the widest layout whose last column is non-empty and whose
    total width fits; else one column.  The last column is not padded.
    """
    n = len(entries)
    if n == 0:
        return []
    columns = 1
    col_widths = [0]
    if width is not None:
        max_columns = width // 4
        if max_columns > 1:
            for c in range(max_columns, 1, -1):
                per = (n + c - 1) // c
                widths = [0] * c
                for i, e in enumerate(entries):
                    col = i // per
                    widths[col] = max(widths[col], _jlen(e) + 2)
                if widths[-1] != 0 and sum(widths) <= width:
                    columns, col_widths = c, widths
                    break
    lines_count = (n + columns - 1) // columns
    lines: list[str] = []
    for line in range(lines_count):
        parts: list[str] = []
        for col in range(columns):
            i = lines_count * col + line
            if i >= n:
                break
            entry = entries[i]
            parts.append(entry)
            if col < columns - 1:
                parts.append(" " * (col_widths[col] - _jlen(entry)))
        lines.append("".join(parts))
    return lines


def render_ls(
    files: Sequence[str], directories: Sequence[tuple[str, Sequence[str]]], width: int | None = None
) -> str:
    """Kafka's ``ls`` output once every argument has been globbed.

    ``files`` are the last path components of the leaf matches; ``directories`` pairs the last path
    component of each directory match (``/`` for the root) with its sorted child names.  Files come
    first; then each directory, preceded by ``<name>:`` when there were files or more than one
    directory, with a blank line before every intro except the first one printed when there were no
    files (Kafka decides this by list position, so an empty first directory still "uses up" the
    first intro).  Empty directories print nothing.  Error lines for arguments that matched nothing
    (``ls: <arg>: no such file or directory.``) are the caller's job (Kafka prints them first).
    """
    out: list[str] = [line + "\n" for line in ls_layout(files, width)]
    need_intro = len(files) > 0 or len(directories) > 1
    first_intro = len(files) == 0
    for name, children in directories:
        intro = ""
        if need_intro:
            if not first_intro:
                intro = "\n"
            intro += name + ":"
            first_intro = False
        if not children:
            continue
        if intro:
            out.append(intro + "\n")
        out.extend(line + "\n" for line in ls_layout(children, width))
    return "".join(out)


def kafka_command(
    root: Node,
    verb: str,
    targets: Sequence[str],
    cwd: str = "/",
    redact: bool | None = None,
    width: int | None = None,
) -> str:
    """Everything Kafka's shell writes to stdout for ``verb targets...`` (``ls``, ``cat``, ``find``,
    ``tree``), error lines included -- its handlers print "no such file" messages to the same
    writer.  Used by the oracle tests; the shell may use it for a strict Kafka-compatible mode.
    ``ls``/``find`` without targets use ``.`` like Kafka.
    """
    from .paths import glob_components  # local: paths imports node only, but keep render light

    out: list[str] = []
    if verb in ("ls", "find") and not targets:
        targets = ["."]
    if verb == "ls":
        files: list[str] = []
        dirs: list[tuple[str, list[str]]] = []
        for target in targets:
            matches = glob_components(root, cwd, target)
            if not matches:
                out.append(f"ls: {target}: no such file or directory.\n")
            for comps, node in matches:
                last = comps[-1] if comps else "/"
                if node.is_dir:
                    dirs.append((last, node.child_names()))
                else:
                    files.append(last)
        out.append(render_ls(files, dirs, width))
    elif verb == "cat":
        for target in targets:
            matches = glob_components(root, cwd, target)
            if not matches:
                out.append(f"cat: {target}: No such file or directory.\n")
            for _comps, node in matches:
                out.append(f"cat: {target}: Is a directory\n" if node.is_dir else render_cat(node, redact))
    elif verb == "tree":
        for target in targets:
            matches = glob_components(root, cwd, target)
            if not matches:
                out.append(f"tree: {target}: No such file or directory.\n")
            out.extend(render_tree(node, redact) for _comps, node in matches)
    elif verb == "find":
        for target in targets:
            out.append(render_find(target, [("", node) for _c, node in glob_components(root, cwd, target)]))
    else:
        raise ValueError(f"not a Kafka shell output command: {verb}")
    return "".join(out)
