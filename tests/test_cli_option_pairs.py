"""Every pair of top-level options (issue 55): refused with a usage error (status 2) where the pair
cannot mean anything, accepted otherwise; never one of them silently dropped (``--diff-with DIR -c
...`` ran the commands and exited 0 with no diff).

The expectation is computed here from a small model of the command line, independently of
``arguments.check_usage``: one source (``-d``, ``-s`` or ``-q``; ``-d`` beside ``-q`` names the nodes'
directories), one mode (the shell, commands, the
one-shot diff, the TUI), and each option's scope.  A new option fails the first test until it is
given a scope in ``arguments.OPTION_SCOPES``.
"""

from __future__ import annotations

import argparse
import itertools

import pytest
from conftest import FIXTURES
from test_cli import run_cli

from metashell.arguments import OPTION_SCOPES, build_parser, check_usage, join_point_values
from metashell.errors import UsageError

SNAPSHOT = str(min((FIXTURES / "demo" / "__cluster_metadata-0").glob("*.checkpoint")))
SAMPLE: dict[str, list[str]] = {
    "directory": ["-d", str(FIXTURES / "demo")],
    "snapshot": ["-s", SNAPSHOT],
    "bootstrap_controller": ["-q", "127.0.0.1:9"],
    "mixed_clusters": ["--mixed-clusters"],
    "config": ["--config", "client.properties"],
    "commands": ["-c", "pwd"],
    "command": ["pwd"],  # words after the options: always last
    "json": ["--json"],
    "no_redact": ["--no-redact"],
    "no_color": ["--no-color"],
    "no_pager": ["--no-pager"],
    "max_batch_bytes": ["--max-batch-bytes", "8M"],
    "at": ["--at", "10"],
    "diff_with": ["--diff-with", str(FIXTURES / "kafka-4.4")],
    "salvage": ["--salvage"],
    "tui": ["--tui"],
    "path": ["--path", "/topics"],
}
SOURCE_OF = {"directory": "directory", "snapshot": "snapshot", "bootstrap_controller": "live"}
MODE_OF = {"commands": "commands", "command": "commands", "diff_with": "diff", "tui": "tui"}
ONLY = {  # the model: where each option means something (None: anywhere)
    "mixed_clusters": ({"directory"}, None),
    "config": ({"live"}, None),
    "at": ({"directory", "snapshot"}, None),
    "salvage": ({"directory", "snapshot"}, None),
    "json": (None, {"shell", "commands", "diff"}),
    "path": (None, {"tui"}),
}


def _dests() -> set[str]:
    skip = {"help", "version", "completion", "man"}
    return {a.dest for a in build_parser()._actions if a.dest not in skip}


def test_every_option_has_a_scope_and_a_sample() -> None:
    assert _dests() == set(OPTION_SCOPES) == set(SAMPLE)


def _expected_refusal(dests: tuple[str, ...]) -> bool:
    sources = {SOURCE_OF[d] for d in dests if d in SOURCE_OF}
    if sources == {"directory", "live"}:  # -d beside -q: the nodes' directories, for 'quorum'
        sources = {"live"}
    modes = [MODE_OF[d] for d in dests if d in MODE_OF]
    if len(sources) > 1 or len(modes) > 1:  # two sources; two modes (-c and words included)
        return True
    source = next(iter(sources))
    mode = modes[0] if modes else "shell"
    for d in dests:
        where, how = ONLY.get(d, (None, None))
        if (where is not None and source not in where) or (how is not None and mode not in how):
            return True
    return False


def _argv(dests: tuple[str, ...]) -> list[str]:
    words = [w for d in dests if d != "command" for w in SAMPLE[d]]
    return words + (SAMPLE["command"] if "command" in dests else [])


def _refused(argv: list[str]) -> bool:
    args = build_parser().parse_args(join_point_values(argv))
    try:
        check_usage(args)
    except UsageError:
        return True
    return False


PAIRS = list(itertools.combinations(sorted(SAMPLE), 2))


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}+{b}" for a, b in PAIRS])
def test_a_pair_is_refused_exactly_when_it_cannot_mean_anything(a: str, b: str) -> None:
    bases = [()] if {a, b} & set(SOURCE_OF) else [(s,) for s in SOURCE_OF]
    for base in bases:
        dests = (*base, a, b)
        assert _refused(_argv(dests)) == _expected_refusal(dests), _argv(dests)


@pytest.mark.parametrize(
    "argv",
    [
        ["-d", str(FIXTURES / "demo"), "--diff-with", str(FIXTURES / "kafka-4.4"), "-c", "pwd"],
        ["-d", str(FIXTURES / "demo"), "--json", "--tui"],
        ["-s", SNAPSHOT, "--mixed-clusters", "-c", "pwd"],
        ["-q", "127.0.0.1:9", "--salvage", "-c", "pwd"],
        ["-d", str(FIXTURES / "demo"), "--path", "/topics", "-c", "pwd"],
        ["-d", str(FIXTURES / "demo"), "--path", ""],  # an empty value is given, not absent
        ["-q", "127.0.0.1:9", "--at", "0", "-c", "pwd"],  # offset 0 is given too
    ],
)
def test_a_refused_pair_is_one_usage_line_and_status_2(argv: list[str]) -> None:
    status, out, err = run_cli(*argv)
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, (status, out, err)


def test_the_model_covers_the_parser_dests() -> None:
    """The model's names are the parser's (a renamed option must not leave a stale rule here)."""
    assert set(ONLY) <= _dests() and set(SOURCE_OF) <= _dests() and set(MODE_OF) <= _dests()
    assert isinstance(build_parser(), argparse.ArgumentParser)
