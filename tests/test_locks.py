"""The Python locks (``requirements/*.txt``, written by ``bash scripts/lock``) stay true to
``pyproject.toml``: every dependency it names is pinned, within its range, with hashes, and the
shell's lock is the test lock's versions.  A range changed without running ``scripts/lock`` fails here,
not on a fresh machine's install."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from conftest import REPO
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

LOCKS = REPO / "requirements"
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def pins(lock: Path) -> dict[str, list[tuple[Version, str | None, int]]]:
    """name -> [(version, marker, number of hashes)] (a universal lock may pin a name twice, by marker)."""
    found: dict[str, list[tuple[Version, str | None, int]]] = {}
    current: list[tuple[Version, str | None, int]] | None = None
    for line in lock.read_text().splitlines():
        if m := PIN.match(line):
            entry = (Version(m[2]), m[3], 0)
            current = found.setdefault(canonicalize_name(m[1]), [])
            current.append(entry)
        elif line.strip().startswith("--hash=sha256:") and current:
            version, marker, hashes = current[-1]
            current[-1] = (version, marker, hashes + 1)
    return found


def _pyproject() -> dict[str, list[str]]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text())
    extras = data["project"]["optional-dependencies"]
    return {
        "build": data["build-system"]["requires"],
        "demo": data["project"]["dependencies"],
        "test": [*data["project"]["dependencies"], *extras["test"], *extras["spark"]],
    }


@pytest.mark.parametrize("lock", ["build", "demo", "test"])
def test_every_dependency_is_pinned_within_its_range_with_hashes(lock: str) -> None:
    pinned = pins(LOCKS / f"{lock}.txt")
    assert pinned, f"requirements/{lock}.txt pins nothing"
    for name, entries in pinned.items():
        assert all(hashes for _v, _m, hashes in entries), f"{name} in {lock}.txt has no hash"
    for text in _pyproject()[lock]:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        assert name in pinned, f"{req} is not in requirements/{lock}.txt: run bash scripts/lock"
        for version, marker, _hashes in pinned[name]:
            if marker is None or Marker(marker).evaluate({"python_full_version": "3.11.0"}):
                assert version in req.specifier, f"{name}=={version} is outside {req}: run bash scripts/lock"


def test_the_shell_and_the_tests_install_the_same_versions() -> None:
    demo, test = pins(LOCKS / "demo.txt"), pins(LOCKS / "test.txt")
    for name, entries in demo.items():
        assert name in test, f"{name} is in demo.txt only"
        assert {v for v, _m, _h in entries} <= {v for v, _m, _h in test[name]}, name
