"""No import circle inside a package (issue 57), computed from the source: every ``import`` and
``from ... import`` of a metashell module, at the top, inside a function or under
``TYPE_CHECKING`` alike (a helper that names the whole app in a type hint couples to it as surely as
one that imports it to run).

The circles that remain are listed with the way out of each; the test fails on a new circle, on a
listed one that grew, and on a listed one that is gone (so the list stays true).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import REPO

NATIVE_SRC = REPO / "native" / "src"

#: Each circle left, as its sorted modules, with what would break it.
KNOWN: dict[tuple[str, ...], str] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for path in (REPO / "metashell").rglob("*.py"):
        parts = path.relative_to(REPO).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                if f"{target}.{a.name}" in modules:
                    found.add(f"{target}.{a.name}")
                elif target in modules:
                    found.add(target)
    found.discard(name)
    return found


def _circles() -> set[tuple[str, ...]]:
    """The Python package's circles."""
    modules = _modules()
    return _components({m: sorted(_imports(m, p, modules)) for m, p in modules.items()})


def _components(edges: dict[str, list[str]]) -> set[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = set()
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    circles.add(tuple(sorted(component)))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return circles


def test_no_new_import_circle() -> None:
    circles = _circles()
    new = circles - set(KNOWN)
    assert not new, f"import circles (break them, or list them in KNOWN with the way out): {sorted(new)}"
    gone = set(KNOWN) - circles
    assert not gone, f"circles listed in KNOWN that are gone or changed (update the list): {sorted(gone)}"


def _rust_modules(src: Path) -> dict[str, Path]:
    """The crate's modules by path (``crate``, ``crate::decode``, ``crate::decode::json``...)."""
    out = {}
    for path in src.rglob("*.rs"):
        parts = path.relative_to(src).with_suffix("").parts
        out["::".join(("crate",) if parts == ("lib",) else ("crate", *parts))] = path
    return out


_RUST_PATH = re.compile(
    r"\b(crate|self|super|[a-z_][a-z0-9_]*)((?:::[A-Za-z_][A-Za-z0-9_]*)*)(::\{[^;]*?\})?"
)


def _rust_uses(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules ``name`` names by path: ``crate::...``, ``self::``/``super::``, a child's
    ``child::...`` and ``use`` groups; comments and ``#[cfg(test)]`` code left out (a test module's
    ``super`` is the file itself)."""
    text = path.read_text().split("#[cfg(test)]")[0]
    text = re.sub(r"//[^\n]*", "", text)
    parent = name.rsplit("::", 1)[0]
    found = set()

    def resolve(full: str) -> None:
        # the longest module prefix of the path: what it reaches into
        segs = full.split("::")
        for n in range(len(segs), 0, -1):
            if "::".join(segs[:n]) in modules:
                found.add("::".join(segs[:n]))
                return

    for m in _RUST_PATH.finditer(text):
        head, rest, group = m.group(1), m.group(2), m.group(3)
        if head == "crate":
            base = "crate"
        elif head == "self":
            base = name
        elif head == "super":
            base = parent
        elif f"{name}::{head}" in modules:
            base = f"{name}::{head}"
        else:
            continue
        if not rest and not group:
            continue
        stem = base + rest
        if group:
            for item in re.split(r"[,{}\s]+", group[2:]):
                if item and item != "self":
                    resolve(f"{stem}::{item.split('::')[0]}")
        else:
            resolve(stem)
    found.discard(name)
    return found


def test_no_circle_inside_the_native_crate() -> None:
    """The same rule for ``native/src``: a module that names another by path depends on it."""
    modules = _rust_modules(NATIVE_SRC)
    edges = {m: sorted(_rust_uses(m, p, modules)) for m, p in modules.items()}
    assert edges["crate::decode"], "the finder sees a parent's uses of its children"
    circles = _components(edges)
    assert not circles, f"module circles in the native crate (break them): {sorted(circles)}"


def test_the_circle_finder_finds_a_circle(tmp_path: Path) -> None:
    """Two modules that import each other, one of them only for a type hint: one circle."""
    import test_import_cycles as me

    modules = {"p.a": tmp_path / "a.py", "p.b": tmp_path / "b.py"}
    modules["p.a"].write_text("from p import b\n")
    modules["p.b"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.a import A\n")
    assert me._imports("p.a", modules["p.a"], modules) == {"p.b"}
    assert me._imports("p.b", modules["p.b"], modules) == {"p.a"}


def test_the_rust_finder_finds_a_circle(tmp_path: Path) -> None:
    """``a`` uses ``crate::b::f``; ``b`` names ``a`` through a ``use`` group: one circle; a
    comment and a test module's ``super`` are not uses."""
    (tmp_path / "lib.rs").write_text("mod a;\nmod b;\n")
    (tmp_path / "a.rs").write_text("fn g() { crate::b::f() }\n")
    (tmp_path / "b.rs").write_text(
        "use crate::{a, rt};\n// crate::c::x\npub fn f() {}\n#[cfg(test)]\nmod t { use super::*; }\n"
    )
    (tmp_path / "c.rs").write_text("")
    (tmp_path / "rt.rs").write_text("")
    modules = _rust_modules(tmp_path)
    edges = {m: sorted(_rust_uses(m, p, modules)) for m, p in modules.items()}
    assert edges == {
        "crate": [],
        "crate::a": ["crate::b"],
        "crate::b": ["crate::a", "crate::rt"],
        "crate::c": [],
        "crate::rt": [],
    }
    assert _components(edges) == {("crate::a", "crate::b")}
