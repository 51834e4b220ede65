"""``/image`` against Kafka's own metadata shell, byte for byte.

For every ``.checkpoint`` and ``.log`` file of every corpus directory (../shared/corpus) and of
fixtures/, the file is loaded alone with metashell's file mode (Kafka's ``--snapshot`` semantics) and
``find /image`` and ``tree /image`` (plus ``ls``/``cat`` on small files) are rendered with
:func:`metashell.tree.render.kafka_command` and compared with ``MetadataShell --snapshot FILE ...``
run by ``scripts/oracle.py`` (Kafka 4.4.0).  Redaction is off: Kafka's shell prints secrets.
Files with default client-quota entities, which metashell names differently on purpose, are compared
without ``/image/clientQuotas``, whose listing is then checked against Kafka's naming rule.

Kafka's one-shot shell has two timing bugs, so every command is first run through
``oracle.java_shell_caught_up``: the shell's own classes, waiting until the whole file is applied,
with the file's high watermark known from the start (scripts/java/CaughtUpMetadataShell.java; cached,
about a second cold).  ``test_caught_up_*`` check it against the real shell.

* ``MetadataShell.waitUntilCaughtUp`` waits for ``lastAppliedOffset > 0``, which never comes when the
  loader publishes nothing (no metadata.version, every delta failing): the shell hangs for good.
  The stand-in reports that offset; when it is <= 0, its output is the answer.
* Otherwise the real shell is asked (``oracle.java_shell_settled``).  It can still hang at random (its
  file reader learns the high watermark only at the last batch; a loader that applied the last data
  batch before that stays "catching up"), or run the command before its loader caught up and print
  the empty image; a differing answer is re-run without the oracle's cache, and after a hang or an
  empty image each time the stand-in's answer is used.

The stand-in answers all of a file's commands in one JVM (``oracle.java_shell_caught_up_each``: a
JVM start and a load cost about two seconds, and a small file is asked seven commands); the real
shell is asked ``tree /image``, which shows every node and value of the image, so the other commands
(``find``, ``ls``, ``cat``, globs) come from the shell's own command classes on a state the real
shell agreed with (asking it ``find /image`` too was a third of this file's ten minutes in CI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, FIXTURES

from metashell.image.image import MetadataImage
from metashell.image.loader import load_file
from metashell.java_order import java_sorted
from metashell.tree import build_root
from metashell.tree import kafka_text as kt
from metashell.tree.image_tree import kafka_visible_context
from metashell.tree.render import kafka_command

pytestmark = pytest.mark.kafka

SMALL = 256 * 1024
"""Files up to this size also get the ``ls``/``cat`` comparisons (each costs a JVM start)."""


def _metadata_files(base: Path) -> list[Path]:
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*") if p.is_file() and p.suffix in (".log", ".checkpoint"))


def _params(base: Path, what: str) -> list[Any]:
    files = _metadata_files(base)
    if not files:
        return [
            pytest.param(
                None,
                id=f"no-{what}",
                marks=pytest.mark.skip(reason=f"{what} not available: no .log/.checkpoint under {base}"),
            )
        ]
    return [pytest.param(f, id=str(f.relative_to(base))) for f in files]


COMMANDS: list[tuple[str, list[str]]] = [("tree", ["/image"]), ("find", ["/image"])]
SMALL_COMMANDS: list[tuple[str, list[str]]] = [
    ("ls", ["/image"]),
    ("ls", ["/image/topics/byName", "/image/features/metadataVersion", "/image/nope"]),
    ("ls", ["/image/*"]),
    ("cat", ["/image/provenance", "/image/features/metadataVersion", "/image/cluster/brokers/*"]),
    ("find", ["/image/c*", "/image/none*"]),
]


def _java(oracle: Any, path: Path, commands: list[tuple[str, list[str]]], confirmed: int) -> list[str]:
    """What Kafka's shell prints for each command, past its timing bugs (see the top): the
    stand-in's answers, of which the first ``confirmed`` are also asked of the real shell."""
    answers, applied = oracle.java_shell_caught_up_each(path, [[verb, *args] for verb, args in commands])
    empty_root = build_root(MetadataImage(), redact=False)
    for i, (verb, args) in enumerate(commands[:confirmed]):
        empty = kafka_command(empty_root, verb, args, redact=False)
        answers[i] = oracle.java_shell_settled(
            path, verb, *args, empty=empty, caught_up=(answers[i], applied)
        )
    return answers


IMAGE_CHILDREN = [
    "acls",
    "clientQuotas",
    "cluster",
    "configs",
    "delegationToken",
    "features",
    "producerIds",
    "provenance",
    "scram",
    "topics",
]


def _kafka_quota_name(entity: Any) -> str:
    """Kafka's own (buggy) entity name: default components (name None) are dropped."""
    return kt.quota_entity_name([(t, n) for t, n in entity if n is not None])


def _check(
    oracle: Any, path: Path, small: bool = True, commands: list[tuple[str, list[str]]] = COMMANDS
) -> None:
    result = load_file(path)
    root = build_root(result.image, redact=False)
    # the real shell is asked the first (tree: every node and value of the image); the rest come
    # from its own command classes in the stand-in, on a state the real shell agreed with
    confirmed = 1
    commands = commands + (SMALL_COMMANDS if small and path.stat().st_size <= SMALL else [])
    failures = []
    shown = kafka_visible_context(root.ctx).image
    expected = None
    if any(name is None for entity in shown.client_quotas for _, name in entity):
        # Deliberate difference (docs/tree.md): Kafka names default quota entities "" or like another
        # entity, and its find/tree then fail.  Compare everything else, and Kafka's listing of
        # clientQuotas with Kafka's naming rule.
        others = [f"/image/{c}" for c in IMAGE_CHILDREN if c != "clientQuotas"]
        commands = [(verb, others) for verb, _ in commands]
        expected = "".join(n + "\n" for n in java_sorted(_kafka_quota_name(e) for e in shown.client_quotas))
    answers = _java(
        oracle, path, commands + ([("ls", ["/image/clientQuotas"])] if expected else []), confirmed
    )
    if expected is not None and answers[-1] != expected:
        failures.append(_diff("ls /image/clientQuotas (Kafka's names)", answers[-1], expected))
    for (verb, args), java in zip(commands, answers, strict=False):  # answers may end with clientQuotas
        mine = kafka_command(root, verb, args, redact=False)
        if mine != java:
            failures.append(_diff(f"{verb} {' '.join(args)}", java, mine))
    assert not failures, f"{path}: /image differs from Kafka's shell\n" + "\n".join(failures)


def _diff(what: str, java: str, mine: str) -> str:
    import difflib

    lines = list(difflib.unified_diff(java.splitlines(True), mine.splitlines(True), "kafka", "metashell"))
    return f"== {what}\n" + "".join(lines[:60])


@pytest.mark.corpus
@pytest.mark.parametrize("path", _params(CORPUS, "corpus"))
def test_corpus_file_image_matches_kafka(path: Path, kafka_oracle: Any) -> None:
    _check(kafka_oracle, path)


def _release_lines() -> set[str]:
    """Fixtures of the release lines and the upgrade chain (issue 27): thirteen small directories."""
    import json

    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    return {
        name
        for name, e in manifest.items()
        if e["description"].startswith(("release line", "one combined node rolled"))
    }


RELEASE_LINES = _release_lines()


def _newest_snapshot(path: Path) -> bool:
    snaps = sorted(path.parent.glob("*.checkpoint"))
    return path.parent.name == "__cluster_metadata-0" and bool(snaps) and path == snaps[-1]


def _fixture_params() -> list[Any]:
    """Every file of the older fixtures; of the release lines, every snapshot.  All their files with
    every command would take some 500 JVM starts, a quarter of CI; their segments are checked by two
    kafka-dump-logs record for record, and by test_release_lines on cut copies."""
    return [
        p
        for p in _params(FIXTURES, "fixtures")
        if p.values[0] is None
        or p.values[0].relative_to(FIXTURES).parts[0] not in RELEASE_LINES
        or p.values[0].suffix == ".checkpoint"
    ]


@pytest.mark.parametrize("path", _fixture_params())
def test_fixture_file_image_matches_kafka(path: Path, kafka_oracle: Any) -> None:
    """A release line's newest snapshot gets find and tree, its older ones tree (which shows every
    node and value) alone: one JVM start each."""
    if path.relative_to(FIXTURES).parts[0] not in RELEASE_LINES:
        _check(kafka_oracle, path)
    else:
        _check(
            kafka_oracle, path, small=False, commands=COMMANDS if _newest_snapshot(path) else [COMMANDS[0]]
        )


@pytest.mark.parametrize(
    "name",
    [
        "demo/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint",
        "kafka-4.4-split-c1/__cluster_metadata-0/00000000000000000117.log",
        "demo/__cluster_metadata-0/00000000000000000050.log",
    ],
)
def test_caught_up_shell_agrees_with_kafkas_shell(name: str, kafka_oracle: Any) -> None:
    """The oracle's stand-in for files Kafka's shell hangs on prints what Kafka's shell prints where
    that one finishes (a bootstrap snapshot, a lone segment that drops deltas, one whose faults leave
    the empty image published)."""
    path = FIXTURES / name
    caught_up, applied = kafka_oracle.java_shell_caught_up(path, "tree", "/image")
    assert applied > 0
    real = kafka_oracle.java_shell(path, "tree", "/image", strict=False)
    for _ in range(5):  # the real shell's races (module docstring): ask again while it differs
        if real == caught_up:
            break
        real = kafka_oracle.java_shell(path, "tree", "/image", strict=False, use_cache=False)
    assert real == caught_up


def test_caught_up_shell_answers_several_commands_as_it_answers_each(kafka_oracle: Any) -> None:
    """One JVM for a file's commands gives each command's own answer: a failing command (Kafka's
    shell prints an error and goes on) and an output without a final newline included."""
    path = FIXTURES / "demo/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
    commands = [["ls", "/image"], ["cat", "/image/nope"], ["ls"], ["find", "/image/features"], ["pwd"]]
    answers, applied = kafka_oracle.java_shell_caught_up_each(path, commands)
    assert applied > 0
    for command, answer in zip(commands, answers, strict=True):
        assert (answer, applied) == kafka_oracle.java_shell_caught_up(path, *command), command


def test_caught_up_shell_reports_files_kafkas_shell_hangs_on(kafka_oracle: Any) -> None:
    """A lone later segment of a 4.4 cluster: no metadata.version, every delta fails -- Kafka's
    one-shot shell spins in waitUntilCaughtUp forever; the stand-in says so and shows the empty image."""
    path = FIXTURES / "kafka-4.4-broker/__cluster_metadata-0/00000000000000000216.log"
    out, applied = kafka_oracle.java_shell_caught_up(path, "cat", "/image/provenance")
    assert applied == -1
    assert out == "offset -1, epoch -1, time 1969-12-31T23:59:59.999Z[UTC]\n"


def _gate_log(path: Path, tail: str) -> Path:
    """A log that sets metadata.version and creates a topic, then ends as ``tail`` says."""
    from test_image_loader import LEADER_CHANGE, T1, T2, rec, topic, write_log

    mv = rec("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 21})
    batches: list[tuple[int, int, list[Any], int, bool]] = [
        (0, 1, [LEADER_CHANGE], 1000, True),
        (1, 1, [mv, topic("foo", T1)], 2000, False),
    ]
    begin = (3, 1, [rec("BeginTransactionRecord", 0, {"Name": "t"}), topic("bar", T2)], 3000, False)
    tails: dict[str, list[tuple[int, int, list[Any], int, bool]]] = {
        "one-control": [(3, 2, [LEADER_CHANGE], 3000, True)],
        "two-controls": [(3, 2, [LEADER_CHANGE], 3000, True), (4, 3, [LEADER_CHANGE], 4000, True)],
        "open-transaction": [begin],
        "aborted-transaction": [begin, (5, 1, [rec("AbortTransactionRecord", 0, {})], 4000, False)],
    }
    batches += tails[tail]
    path.parent.mkdir(parents=True)
    return write_log(path, batches)


@pytest.mark.parametrize(
    "tail, published",
    [
        ("one-control", True),
        ("two-controls", False),
        ("open-transaction", False),
        ("aborted-transaction", True),
    ],
)
def test_catch_up_gate_matches_kafkas_loader(
    tmp_path: Path, tail: str, published: bool, kafka_oracle: Any
) -> None:
    """Kafka's loader publishes (and its shell shows more than the empty image) only once a delta it
    flushes ends within one offset of the file's last batch; metashell's /image follows."""
    path = _gate_log(tmp_path / tail / "__cluster_metadata-0" / "00000000000000000000.log", tail)
    result = load_file(path)
    assert result.image.provenance.caught_up is published
    assert any("waits forever" in w.message for w in result.warnings) is not published
    assert "foo" in result.image.topics.by_name  # the friendly view keeps what was read
    root = build_root(result.image, redact=False)
    for verb, args in [("tree", ["/image"]), ("cat", ["/image/provenance"])]:
        out, applied = kafka_oracle.java_shell_caught_up(path, verb, *args)
        assert (applied > 0) is published
        assert kafka_command(root, verb, args, redact=False) == out
