"""The native core's Rust is held to ``cargo fmt`` (``native/rustfmt.toml``) and ``cargo clippy``
with every warning an error, ``clippy::undocumented_unsafe_blocks`` among them (set in ``lib.rs``):
each ``unsafe`` block says why it is sound.  ``generated.rs`` is left as its generator writes it."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from conftest import REPO

NATIVE = REPO / "native"

pytestmark = pytest.mark.slow


def _cargo(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("cargo") is None:
        if os.environ.get("CI"):
            pytest.fail("cargo is not on PATH, and CI builds the native core with it")
        pytest.skip("cargo is not installed (the native core is optional; its lints need it)")
    return subprocess.run(
        ["cargo", *args], cwd=NATIVE, capture_output=True, text=True, check=False, timeout=1200
    )


def test_the_native_sources_are_formatted() -> None:
    proc = _cargo("fmt", "--check")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


@pytest.mark.parametrize("api", ["full", "abi3"])
def test_clippy_finds_nothing(api: str) -> None:
    """Both builds: the checkout's (the full C API) and the wheel's (the stable ABI, whose
    ``#[cfg(Py_LIMITED_API)]`` paths a full build never compiles)."""
    features = ["--features", "pyo3/abi3-py311"] if api == "abi3" else []
    proc = _cargo("clippy", "--locked", "--all-targets", *features, "--", "-D", "warnings")
    assert proc.returncode == 0, proc.stderr[-6000:]
