"""The code stays ``ruff`` clean and formatted, and ``mypy`` clean (both come with the test extras, pinned in pyproject)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from conftest import REPO


def _run(module: str, *args: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (bash scripts/test installs it with the test extras)")
    proc = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"{module} {' '.join(args)}:\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}"


def test_ruff() -> None:
    _run("ruff", "check", "metashell", "scripts", "tests", "bench")


def test_ruff_format() -> None:
    _run("ruff", "format", "--check", "metashell", "scripts", "tests", "bench")


def test_mypy() -> None:
    _run("mypy", "metashell")


TEST_MYPY_RELAXED = ("union-attr", "no-any-return")
"""What strict mypy does not report in ``tests/``: a test that reads an attribute of an Optional it
expects to be set, or returns a ``json.loads`` as the dict it is, fails loudly when wrong, as
surely as the assert that would otherwise have to precede it."""


def test_mypy_over_the_tests() -> None:
    """The tests are typed too (strict, but for :data:`TEST_MYPY_RELAXED`): a helper called with the
    wrong arguments, or a fixture typed as what it is not, is found without running the test.  The
    package's modules are checked by :func:`test_mypy`; here only the tests' own errors count."""
    relaxed = [w for code in TEST_MYPY_RELAXED for w in ("--disable-error-code", code)]
    _run("mypy", "tests", "--follow-imports=silent", *relaxed)


GENERATED = {
    "metashell/tree/config_keys.py": "scripts/gen_config_keys.py, from Kafka's ConfigDefs",
    "metashell/protocol/record_type.py": "scripts/gen_record_types.py, from the bundled schemas",
    "metashell/image/partition.py": "scripts/gen_partition_fields.py, from image/partition_fields.py",
}
"""Modules written by a script, with the script (they are as long as what they list)."""

MAX_LINES = 450
"""About 400 lines: past it a module has started to hold two concerns (HOUSE.md)."""


def test_no_module_holds_two_concerns_by_its_size() -> None:
    too_long = {}
    for path in sorted((REPO / "metashell").rglob("*.py")):
        name = path.relative_to(REPO).as_posix()
        lines = path.read_text().count("\n")
        if name not in GENERATED and lines > MAX_LINES:
            too_long[name] = lines
    assert not too_long, f"split these by concern (or list them in GENERATED with their script): {too_long}"
    assert all((REPO / name).is_file() for name in GENERATED)


def test_lazy_package_exports_are_complete_and_resolve() -> None:
    """``metashell.log`` and ``metashell.image`` import their re-exports on first use
    (``metashell/lazy.py``): every name in ``__all__`` has a module, and each resolves."""
    import importlib

    for package in ("metashell.log", "metashell.image"):
        module = importlib.import_module(package)
        assert set(module._EXPORTS) == set(module.__all__), package
        for name in module.__all__:
            assert getattr(module, name) is getattr(importlib.import_module(module._EXPORTS[name]), name)
