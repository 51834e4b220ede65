"""The suites where the two engines can differ, run a second time on the other engine.

The whole suite runs on the engine this installation chooses (the native core where it is built,
as in CI). Everything below the tree (framing, CRCs, decoding, replay, the time-travel journal,
salvage, doctor, the answers computed from the image) is where the native core and the pure-Python
engine have separate code, so those suites run again here with ``METASHELL_ENGINE=python``, in a
fresh interpreter (the engine is chosen once per process). The tree, the shells, the TUI and Spark
read the same image objects on both engines; ``test_native_differential.py`` compares the two
engines' output on them line by line.

The time-travel test that replays every offset of a fixture runs on one fixture here (the rest on
the default engine) to keep CI inside its time budget.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO

from metashell.engine import current

PYTHON_ENGINE_SUITES = (
    "test_log_batch.py",
    "test_log_directory.py",
    "test_log_hostile.py",
    "test_log_fuzz.py",
    "test_image_loader.py",
    "test_image_replay.py",
    "test_time_travel.py",
    "test_salvage.py",
    "test_doctor.py",
    "test_corpus_warnings.py",
    "test_damage_fuzz.py",
    "test_bounds.py",
    "test_tree_image.py",
    "test_answers.py",
    "test_quorum_report.py",
    "test_upgrade_check.py",
    "test_walkthrough.py",
)
ONE_FIXTURE_ONLY = "not test_at_every_offset_equals_a_fresh_truncated_load or kafka-4.4-broker"


def test_the_listed_suites_exist() -> None:
    missing = [name for name in PYTHON_ENGINE_SUITES if not (REPO / "tests" / name).is_file()]
    assert missing == [], f"listed in PYTHON_ENGINE_SUITES but gone: {missing}"


@pytest.mark.slow
def test_engine_sensitive_suites_pass_on_the_pure_python_engine() -> None:
    if current().name == "python":
        pytest.skip(f"the whole suite already runs on the pure-Python engine here ({current().why})")
    # the outer run's PYTEST_ADDOPTS (--durations=0, say) would bury the inner run's failures
    env = {**{k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}, "METASHELL_ENGINE": "python"}
    suites = [str(REPO / "tests" / name) for name in PYTHON_ENGINE_SUITES]
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-k",
        ONE_FIXTURE_ONLY,
        *suites,
    ]
    run = subprocess.run(
        command, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=1800
    )
    summary = run.stdout.strip().splitlines()[-1:] or ["(no output)"]
    failed = [line for line in run.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    assert run.returncode == 0, (
        f"on METASHELL_ENGINE=python: {summary[0]}\n"
        + "\n".join(failed)
        + "\n"
        + run.stdout[-6000:]
        + run.stderr[-2000:]
    )
