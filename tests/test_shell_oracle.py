"""The shell's commands against Kafka's own metadata shell (the oracle, ``scripts/oracle.py``).

For each file, the same one-shot command is run by Kafka's ``kafka-metadata-shell --snapshot FILE``
and by metashell's shell over ``--snapshot FILE``; the outputs must be equal byte for byte.  Kafka
prints its error lines among the results on stdout, so metashell's stdout and stderr are merged in
order for the comparison.  Commands are chosen to exercise every layout rule (ls files/directories/
intros/blank lines, globs, find, tree, cat, the error texts), under ``/image`` only (metashell's root
has more top-level directories and ``/local`` names metashell's version), avoiding
``/image/clientQuotas``, where default entities are rendered differently on purpose (see
test_tree_oracle.py, which compares every node of every file).

The one deliberate difference, ``find`` on a glob, is checked explicitly.  Java results are cached
by the oracle, so reruns are fast; without Java/Kafka the tests skip (fail in CI).

As in ``test_tree_oracle.py``, a file's commands are answered in one JVM by the caught-up stand-in
(``oracle.java_shell_caught_up_each``: Kafka's own command classes on the state its loader reaches),
and the real shell is asked three of them per file, in turn, so that every command is asked of the
real shell on some file and each file's stand-in is held to it (``oracle.java_shell_settled``, past
the one-shot shell's timing bugs).  A JVM per command (16 a file) took eight minutes of CI.
"""

from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, FIXTURES, VECTORS

from metashell.image.image import MetadataImage
from metashell.image.loader import load_file
from metashell.shell.session import Settings, Shell
from metashell.tree import build_root

pytestmark = pytest.mark.kafka

ASKED_OF_THE_REAL_SHELL = 2
"""Commands per file asked of the real shell beside the first (which also tells whether Kafka's
shell faults on the file), taken in turn from ``COMMANDS`` file after file."""

COMMANDS: list[list[str]] = [
    ["ls", "/image"],
    ["ls", "/image/topics", "/image/cluster", "/image/features/metadataVersion"],
    ["ls", "/nope", "/image/features"],
    ["ls", "/image/t*"],
    ["ls", "/image/{acls,scram,provenance}"],
    ["ls", "/image/topics/byName/*"],
    ["ls", "/image/scram/SCRAM-SHA-512", "/image/configs"],
    ["cat", "/image/provenance", "/image/features/*"],
    ["cat", "/image/topics", "/nope"],
    ["cat", "/image/topics/byName/*/0"],
    ["find", "/image/topics"],
    ["find", "/image/features/", "/nope"],
    ["find", "/image/cluster"],
    ["tree", "/image/cluster", "/image/topics/byName"],
    ["tree", "/image/features", "/nope", "/image/producerIds/nextProducerId"],
    ["tree", "/image/configs"],
]


def _files() -> list[Any]:
    """The reference files, the newest snapshot of each fixture directory, and one small corpus
    snapshot.  (test_tree_oracle.py covers every file for ``/image`` itself; this test is about the
    command layer, so a few files with brokers, topics and configs are enough.)"""
    files = [
        VECTORS / "metadata-log-dir" / "__cluster_metadata-0" / name
        for name in (
            "00000000000000000008-0000000001.checkpoint",
            "00000000000000000000.log",
            "00000000000000000008.log",
        )
    ]
    if FIXTURES.is_dir():
        for part in sorted(FIXTURES.glob("*/__cluster_metadata-0")):
            snaps = sorted(part.glob("*.checkpoint"))
            if snaps:
                files.append(snaps[-1])
    files.append(
        CORPUS
        / "ftmhxp+real-time-data-streaming-pipeline@kafka1"
        / "__cluster_metadata-0"
        / "00000000000000007268-0000000001.checkpoint"
    )
    params = [pytest.param(f, id=f"{f.parent.parent.name}/{f.name}") for f in files if f.is_file()]
    return params or [pytest.param(None, marks=pytest.mark.skip(reason="reference pack is absent"))]


@lru_cache(maxsize=16)
def _root(path: Path | None) -> Any:
    return build_root(load_file(path).image if path else MetadataImage(), redact=False)


def metashell(path: Path | None, words: list[str]) -> str:
    """metashell's answer to ``words`` on ``path`` (None: the empty image), stdout and stderr in order."""
    buf = io.StringIO()
    shell = Shell(_root(path), buf, buf, Settings(redact=False))
    shell.run_line(" ".join(words))
    return buf.getvalue()


FILES = _files()


def _asked_of_the_real_shell(turn: int) -> list[int]:
    """The commands the ``turn``-th file asks of the real shell: the first, and the next
    ``ASKED_OF_THE_REAL_SHELL`` of the rest in turn (every command is asked on some file)."""
    rest = len(COMMANDS) - 1
    return [0, *(1 + (turn * ASKED_OF_THE_REAL_SHELL + k) % rest for k in range(ASKED_OF_THE_REAL_SHELL))]


@pytest.mark.parametrize("path", FILES)
def test_commands_match_kafkas_shell(path: Path, kafka_oracle: Any) -> None:
    try:
        kafka_oracle.java_shell(path, *COMMANDS[0])  # cached: java_shell_settled asks it again below
    except kafka_oracle.OracleError as e:
        # e.g. a log segment without metadata.version: Kafka's loader faults, no truth to compare
        pytest.skip(f"Kafka's shell faults on this file: {str(e)[:200]}")
    answers, applied = kafka_oracle.java_shell_caught_up_each(path, COMMANDS)
    for i in _asked_of_the_real_shell([p.values[0] for p in FILES].index(path)):
        answers[i] = kafka_oracle.java_shell_settled(
            path, *COMMANDS[i], empty=metashell(None, COMMANDS[i]), caught_up=(answers[i], applied)
        )
    mismatches = [
        f"{' '.join(words)}:\n--- kafka\n{expected}--- metashell\n{ours}"
        for words, expected in zip(COMMANDS, answers, strict=True)
        if (ours := metashell(path, words)) != expected
    ]
    assert not mismatches, "\n".join(mismatches[:3])


def test_find_on_a_glob_prints_matched_paths(kafka_oracle: Any) -> None:
    path = (
        VECTORS / "metadata-log-dir" / "__cluster_metadata-0" / "00000000000000000008-0000000001.checkpoint"
    )
    if not path.is_file():
        pytest.skip("reference pack is absent")
    kafka = kafka_oracle.java_shell(path, "find", "/image/to*")
    ours = metashell(path, ["find", "/image/to*"])
    # Kafka echoes the glob text; metashell prints the path that matched: otherwise identical.
    assert kafka.replace("/image/to*", "/image/topics") == ours
