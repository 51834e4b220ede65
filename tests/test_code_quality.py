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
