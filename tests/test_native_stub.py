"""``metashell/_native.pyi`` matches the built native core: the same functions, classes, methods
and parameter names (PyO3 gives each its ``__text_signature__``).  A Rust signature that changes,
or a function added to the module and not to the stub, fails here; mypy then checks the Python
callers against the stub."""

from __future__ import annotations

import ast
import re
from typing import Any

from conftest import REPO, native_core

STUB = REPO / "metashell" / "_native.pyi"


def _params(node: ast.FunctionDef) -> list[str]:
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return [n for n in names if n not in ("self", "cls")]


def _stub() -> tuple[dict[str, list[str]], dict[str, dict[str, list[str]]]]:
    """(function -> parameters, class -> {method -> parameters}) as the stub declares them."""
    functions: dict[str, list[str]] = {}
    classes: dict[str, dict[str, list[str]]] = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = _params(node)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name: _params(n) for n in node.body if isinstance(n, ast.FunctionDef)}
    return functions, classes


def _signature(obj: Any) -> list[str] | None:
    """Parameter names from PyO3's ``__text_signature__`` (None when it gives none)."""
    text = getattr(obj, "__text_signature__", None)
    if text is None:
        return None
    inner = text.strip()[1:-1]
    names = [p.strip().split("=")[0].lstrip("*") for p in inner.split(",") if p.strip()]
    return [n for n in names if n and n not in ("$self", "$type", "/", "args", "kwargs")]


def _module_names(native: Any) -> tuple[set[str], set[str]]:
    public = [n for n in dir(native) if not (n.startswith("__") and n.endswith("__"))]
    classes = {n for n in public if isinstance(getattr(native, n), type)}
    return set(public) - classes, classes


def test_the_stub_names_what_the_module_has() -> None:
    native = native_core()
    functions, classes = _stub()
    module_functions, module_classes = _module_names(native)
    assert set(functions) == module_functions
    assert set(classes) == module_classes


def test_each_function_takes_the_parameters_the_stub_says() -> None:
    native = native_core()
    functions, _ = _stub()
    for name, params in functions.items():
        assert _signature(getattr(native, name)) == params, name


def test_each_class_has_the_methods_the_stub_says() -> None:
    native = native_core()
    _, classes = _stub()
    for name, methods in classes.items():
        cls = getattr(native, name)
        if issubclass(cls, BaseException):
            continue
        have = {m for m in vars(cls) if not m.startswith("__") or m == "__len__"}
        declared = {m for m in methods if not m.startswith("__") or m == "__len__"}
        assert declared == have, name
        for method, params in methods.items():
            if method == "__init__":
                got = _signature(cls)
            elif method == "__buffer__":
                continue  # the buffer protocol: a slot, not a method Python lists
            else:
                got = _signature(getattr(cls, method))
            assert got is None or got == params, f"{name}.{method}: {got} != {params}"


def test_no_module_but_the_engine_imports_the_core() -> None:
    """One door: ``metashell.engine.import_native`` is the only import of the compiled module
    (every other module takes it from ``engine.current()``)."""
    importers = [
        str(p.relative_to(REPO))
        for p in sorted((REPO / "metashell").rglob("*.py"))
        if re.search(
            r"^\s*(from metashell import _native|import metashell\._native)", p.read_text(), re.MULTILINE
        )
    ]
    assert importers == ["metashell/engine.py"]
