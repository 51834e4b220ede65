"""The native core's own Rust unit tests (``cargo test --lib`` in ``native/``), run by the one test
command so that CI runs them too.

They test the pure Rust parts one case at a time, where a Python call reaches them only through a
whole record: the id table against std's ``HashMap`` through 200,000 inserts, removals and clears;
the merge's steps and their order; the wire readers (varints, lengths, bounds); the JSON writers
against Python's own text of floats, strings and ints and Kafka's of uuids; the Arrow columns of
the ``records`` table.  They build in the test profile, with debug assertions and overflow checks
on, which the release build the install makes leaves out.  Without cargo they skip with the reason,
or fail under ``METASHELL_REQUIRE_NATIVE=1`` (CI) as the other native tests do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REQUIRE_NATIVE

NATIVE = Path(__file__).resolve().parents[1] / "native"


@pytest.mark.slow
def test_the_rust_unit_tests_pass() -> None:
    cargo = shutil.which("cargo")
    if cargo is None:
        why = "cargo (the Rust toolchain) is not on PATH"
        if REQUIRE_NATIVE:
            pytest.fail(f"METASHELL_REQUIRE_NATIVE=1 but {why}", pytrace=False)
        pytest.skip(why)
    # the build dir is the caller's CARGO_TARGET_DIR, else native/target (ignored by git)
    done = subprocess.run(
        [cargo, "test", "--lib", "--locked", "--quiet"],
        check=False,
        cwd=NATIVE,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "CARGO_TERM_COLOR": "never"},
    )
    assert done.returncode == 0, f"cargo test failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert "test result: ok" in done.stdout, done.stdout[-2000:]
