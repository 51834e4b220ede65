"""No import circle inside a package (issue 57), computed from the source: every ``import`` and
``from ... import`` of a metashell module, at the top, inside a function or under
``TYPE_CHECKING`` alike (a helper that names the whole app in a type hint couples to it as surely as
one that imports it to run).

The circles that remain are listed with the way out of each; the test fails on a new circle, on a
listed one that grew, and on a listed one that is gone (so the list stays true).
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

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
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    modules = _modules()
    edges = {m: sorted(_imports(m, p, modules)) for m, p in modules.items()}
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


def test_the_circle_finder_finds_a_circle(tmp_path: Path) -> None:
    """Two modules that import each other, one of them only for a type hint: one circle."""
    import test_import_cycles as me

    modules = {"p.a": tmp_path / "a.py", "p.b": tmp_path / "b.py"}
    modules["p.a"].write_text("from p import b\n")
    modules["p.b"].write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.a import A\n")
    assert me._imports("p.a", modules["p.a"], modules) == {"p.b"}
    assert me._imports("p.b", modules["p.b"], modules) == {"p.a"}
