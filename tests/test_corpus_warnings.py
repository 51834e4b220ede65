"""The real corpus loads with no new warnings: every directory, every file alone, with and without
--salvage.

``tests/data/corpus-warnings.json`` records the warnings each corpus path gives today, as
``{"<dir>" or "<dir>/<file>": [kind, ...]}`` (absent = none): a lone segment of a directory whose
log starts later really does lack the state before it.  A hardening change that makes real files
warn differently fails here.  After a deliberate change, regenerate the baseline with
``METASHELL_UPDATE_CORPUS_BASELINE=1 pytest tests/test_corpus_warnings.py`` and review its diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import CORPUS, corpus_dirs, corpus_paths
from test_image_loader import image_state

from metashell.image.loader import LoadResult, load_directory, load_file

BASELINE = Path(__file__).parent / "data" / "corpus-warnings.json"


def _kinds(result: LoadResult) -> list[str]:
    return [w.kind for w in result.warnings]


def _files(directory: Path) -> list[Path]:
    part = directory / "__cluster_metadata-0"
    return sorted(p for p in part.iterdir() if p.suffix in (".log", ".checkpoint"))


def _observed() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in corpus_paths():
        kinds = _kinds(load_directory(d))
        if kinds:
            out[d.name] = kinds
        for f in _files(d):
            kinds = _kinds(load_file(f))
            if kinds:
                out[f"{d.name}/{f.name}"] = kinds
    return out


def _baseline() -> dict[str, list[str]]:
    if os.environ.get("METASHELL_UPDATE_CORPUS_BASELINE") and corpus_paths():
        BASELINE.write_text(json.dumps(_observed(), indent=1, sort_keys=True) + "\n")
    return json.loads(BASELINE.read_text())


@pytest.mark.parametrize("directory", corpus_dirs())
def test_corpus_directory_warns_as_recorded(directory: Path) -> None:
    baseline = _baseline()
    normal = load_directory(directory)
    assert _kinds(normal) == baseline.get(directory.name, []), [str(w) for w in normal.warnings]
    salvaged = load_directory(directory, salvage=True)
    assert image_state(salvaged.image) == image_state(normal.image) and not salvaged.image.provenance.salvaged
    assert _kinds(salvaged) == _kinds(normal)
    for f in _files(directory):
        alone = load_file(f)
        key = f"{directory.name}/{f.name}"
        assert _kinds(alone) == baseline.get(key, []), (key, [str(w) for w in alone.warnings])


def test_baseline_names_only_corpus_paths() -> None:
    if not corpus_paths():
        pytest.skip(f"corpus not available: {CORPUS} is absent")
    names = {d.name for d in corpus_paths()} | {
        f"{d.name}/{f.name}" for d in corpus_paths() for f in _files(d)
    }
    assert set(_baseline()) <= names
