"""Paths and globs, with the exact rules of Kafka's shell (``CommandUtils``, ``GlobVisitor``,
``GlobComponent``).

* A path not starting with ``/`` is relative to the working directory.  It is split on ``/``, empty
  components are dropped, then ``.`` is dropped and ``..`` pops (``..`` at the root stays at the root)
  -- all before any lookup, so ``/brokers/../topics`` never needs ``/brokers`` to exist.
* Each remaining component is a glob: ``*`` any sequence, ``?`` one character, ``{a,b}``
  alternatives (no nesting), ``\\x`` a literal ``x``; everything else is literal (no ``[...]``
  classes).  A component without ``*``/``?``/``{...}`` is *literal* and looked up directly,
  backslashes included, exactly like Kafka; a malformed glob (nested or unterminated ``{``) is
  literal too.
* Glob components are matched against the child names in sorted order, so matches come out sorted;
  descending through a leaf does not match.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .node import Node

_GLOB_SPECIAL = frozenset("\\{}*?,")
"""``GlobComponent.isGlobSpecialCharacter``."""
_REGEX_SPECIAL = frozenset("\\^$.|?*+()[]{}")
"""``GlobComponent.isRegularExpressionSpecialCharacter``."""
#: What ``?`` and ``*`` match: any character.  Kafka's glob regex uses Java's ``.`` (not line
#: terminators), so no glob of Kafka's shell can match a name holding CR or LF; such names are
#: attacker-made, and an operator must be able to reach them (deliberate difference).
_ANY = "(?s:.)"


def split_path(path: str) -> list[str]:
    """``CommandUtils.splitPath``: split on ``/`` and drop empty components."""
    return [c for c in path.split("/") if c]


def strip_dot_components(components: list[str]) -> list[str]:
    """``CommandUtils.stripDotPathComponents``: drop ``.``, pop on ``..`` (never above the root)."""
    out: list[str] = []
    for c in components:
        if c == ".":
            continue
        if c == "..":
            if out:
                out.pop()
            continue
        out.append(c)
    return out


def normalize(cwd: str, path: str) -> list[str]:
    """Absolute path components of ``path`` typed in directory ``cwd`` (no globbing, no lookup)."""
    full = path if path.startswith("/") else f"{cwd}/{path}"
    return strip_dot_components(split_path(full))


def join(components: list[str] | tuple[str, ...]) -> str:
    """``["a", "b"]`` -> ``"/a/b"``; ``[]`` -> ``"/"``."""
    return "/" + "/".join(components)


@lru_cache(maxsize=1024)
def glob_regex(component: str) -> re.Pattern[str] | None:
    """``GlobComponent.toRegularExpression``: the compiled regex, or None for a literal component
    (no glob syntax, or a malformed glob)."""
    out = ["^"]
    literal = True
    in_group = False
    i = 0
    n = len(component)
    while i < n:
        c = component[i]
        i += 1
        if c == "?":
            literal = False
            out.append(_ANY)
        elif c == "*":
            literal = False
            out.append(_ANY + "*")
        elif c == "\\":
            if i == n:
                out.append("\\")  # a lone trailing backslash escapes Kafka's closing '$' too
            else:
                nxt = component[i]
                i += 1
                out.append(re.escape(nxt) if (nxt in _GLOB_SPECIAL or nxt in _REGEX_SPECIAL) else nxt)
        elif c == "[" and (end := _class_end(component, i)) > 0:
            # a character class ([0-9], [!a-c]): metashell's addition; Kafka's glob has none
            literal = False
            body = component[i:end]
            negate = body[:1] in ("!", "^")
            if negate:
                body = body[1:]
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\").replace("[", "\\[") + "]")
            i = end + 1
        elif c == "{":
            if in_group:
                return None  # "Can't nest glob groups." -> Kafka treats the component as literal
            literal = False
            out.append("(?:(?:")
            in_group = True
        elif c == ",":
            if in_group:
                literal = False
                out.append(")|(?:")
            else:
                out.append(",")
        elif c == "}":
            if in_group:
                literal = False
                out.append("))")
                in_group = False
            else:
                out.append("\\}")
        else:
            out.append(re.escape(c) if c in _REGEX_SPECIAL else c)
    if in_group:
        return None  # "Unterminated glob group."
    if literal:
        return None
    out.append("$")
    try:
        return re.compile("".join(out))
    except re.error:  # a character class Python cannot take ([z-a]): the component is literal
        return None


def _class_end(component: str, start: int) -> int:
    """Index of the ``]`` closing a character class whose body starts at ``start`` (after ``[``),
    or -1 when there is none (the ``[`` is then literal).  A ``]`` right after ``[`` or ``[!`` is
    part of the class, as in POSIX globs."""
    i = start
    if i < len(component) and component[i] in "!^":
        i += 1
    if i < len(component) and component[i] == "]":
        i += 1
    end = component.find("]", i)
    return end if end > start else -1


def is_glob(component: str) -> bool:
    """True when ``component`` would be matched as a glob rather than looked up literally."""
    return glob_regex(component) is not None


def resolve(root: Node, components: list[str]) -> Node | None:
    """Literal lookup of already-normalized components (no globbing)."""
    node: Node | None = root
    for c in components:
        if node is None:
            return None
        node = node.child(c) if node.is_dir else node.field(c)  # a record's field: /provenance/offset
    return node


def glob_components(root: Node, cwd: str, pattern: str) -> list[tuple[list[str], Node]]:
    """Like :func:`glob` but gives each match's path as a list of components (names may contain
    characters such as ``/`` that make a joined path ambiguous)."""
    comps = normalize(cwd, pattern)
    results: list[tuple[list[str], Node]] = []
    _visit(comps, 0, root, [], results)
    return results


def glob(root: Node, cwd: str, pattern: str) -> list[tuple[str, Node]]:
    """Every match of ``pattern`` (typed in ``cwd``) as ``(absolute path, node)``, in Kafka's order.

    An empty list means "no such file" (Kafka reports that once per argument).
    """
    return [(join(p), node) for p, node in glob_components(root, cwd, pattern)]


def _visit(
    comps: list[str], index: int, node: Node, path: list[str], results: list[tuple[list[str], Node]]
) -> None:
    # Iterative over literal components (cheap), recursive only at glob components.
    while index < len(comps):
        comp = comps[index]
        regex = glob_regex(comp)
        if not node.is_dir:
            field = node.field(comp) if regex is None else None  # a record's fields: literal names only
            if field is None:
                return
            node, path, index = field, path + [comp], index + 1
            continue
        if regex is None:
            child = node.child(comp)
            if child is None:
                return
            node = child
            path = path + [comp]
            index += 1
            continue
        matched = False
        for name in node.child_names():
            if regex.fullmatch(name):
                child = node.child(name)
                if child is not None:
                    matched = True
                    _visit(comps, index + 1, child, path + [name], results)
        if not matched and "[" in comp and (child := node.child(comp)) is not None:
            # A name with brackets in it ("[ab]"), which Kafka's globs take literally: a character
            # class that matches nothing falls back to the name itself, as in sh.
            _visit(comps, index + 1, child, path + [comp], results)
        return
    results.append((path, node))
