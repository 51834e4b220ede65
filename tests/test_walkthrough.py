"""The walk-throughs in the docs run as written (issue 25): each command of ``docs/shell.md``'s
marked block is run, and each output line the page shows must be printed, in that order (``...``
stands for lines left out).  The TUI's walk-through (``docs/tui.md``) is driven step by step by
``tests/test_tui.py::test_the_tui_walkthrough_in_the_docs``."""

from __future__ import annotations

import re
import shlex

import pytest
from conftest import REPO, shared_required
from test_cli import run_cli

DOC = REPO / "docs" / "shell.md"
BLOCK = re.compile(r"<!-- walkthrough:start -->\n```console\n(.*?)```\n<!-- walkthrough:end -->", re.DOTALL)


def _steps() -> list[tuple[list[str], list[str]]]:
    """(argv after ``metashell``, expected lines) of each ``$ metashell ...`` in the block."""
    match = BLOCK.search(DOC.read_text(encoding="utf-8"))
    assert match, "docs/shell.md lost its walk-through block"
    steps: list[tuple[list[str], list[str]]] = []
    for line in match.group(1).splitlines():
        if line.startswith("$ metashell "):
            steps.append((shlex.split(line[len("$ metashell ") :]), []))
        else:
            steps[-1][1].append(line)
    return steps


@pytest.mark.parametrize("argv, expected", _steps(), ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_the_shell_walkthrough_in_the_docs_runs_as_written(argv: list[str], expected: list[str]) -> None:
    shared = shared_required("corpus")  # skips with the reason when ../shared is absent
    args = [a.replace("../shared/corpus", str(shared)) for a in argv]
    _status, out, err = run_cli(*args)
    lines = out.splitlines()
    at = 0
    for want in expected:
        if want == "...":
            continue
        assert want in lines[at:], f"{' '.join(argv)}: missing, in order: {want!r}\n{out}{err}"
        at = lines.index(want, at) + 1
