"""``quorum`` with several ``-d`` gives a verdict an operator can act on (issue 53): the rebuild
playbook only when the voters given are not a majority (or when asked), never from a node whose
files do not validate, with every interpolated value shell-quoted, and one node counted once.

On the corpus's three-controller cluster (a real Kafka 4.x quorum, stopped cleanly) and the split
fixture's controller (real Kafka 4.4, a dynamic quorum of three whose other two directories are
not given), and on damaged copies of them: a byte flipped inside a middle batch (its CRC fails), and
a leader epoch forged on the last batch (a field no CRC covers)."""

from __future__ import annotations

import json
import shlex
import shutil
import struct
from pathlib import Path
from typing import Any

from conftest import FIXTURES, shared_required
from test_cli import run_cli

from metashell.log.headers import batch_headers

NODES = "ftmhxp+real-time-data-streaming-pipeline@kafka{}"


def _nodes(*ids: int) -> list[Path]:
    return [shared_required("corpus", NODES.format(n)) for n in ids]


def _quorum(paths: list[Path], *options: str, salvage: bool = False) -> tuple[int, str, str]:
    dirs = [a for p in paths for a in ("-d", str(p))]
    return run_cli(*dirs, *(["--salvage"] if salvage else []), "quorum", *options)


def _json(paths: list[Path], *options: str, salvage: bool = False) -> dict[str, Any]:
    status, out, err = _quorum(paths, "--json", *options, salvage=salvage)
    assert status == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _copy(src: Path, tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(src, dst)
    return dst


def _segments(node: Path) -> list[Path]:
    return sorted((node / "__cluster_metadata-0").glob("*.log"))


def test_all_voters_here_and_agreeing_is_a_majority_and_prints_no_playbook() -> None:
    status, out, err = _quorum(_nodes(1, 2, 3))
    assert status == 0, err
    first = out.splitlines()[0]
    assert first.startswith("MAJORITY: 3 of 3 voters here") and "no rebuild is needed" in first
    assert "rm -rf" not in out and "kafka-storage.sh" not in out
    assert "nodes 1, 2, 3 hold the same log" in out  # the tie is said
    assert "quorum-state: leader 3, epoch 5" in out  # each node's quorum-state in the summary


def test_two_of_three_voters_are_still_a_majority() -> None:
    report = _json(_nodes(1, 3))
    assert report["verdict"]["verdict"] == "MAJORITY" and report["verdict"]["votersHere"] == [1, 3]
    assert report["rebuild"] is None and not report["verdict"]["rebuildNeeded"]


def test_a_lone_voter_is_no_majority_and_gets_the_steps() -> None:
    status, out, err = _quorum([FIXTURES / "kafka-4.4-split-c1", FIXTURES / "kafka-4.4-broker"])
    assert status == 0, err
    assert out.startswith("NO MAJORITY: 1 of 3 voters here (1; a majority is 2)")
    assert "to rebuild the quorum from node 1" in out


def test_a_node_with_a_damaged_middle_batch_is_never_the_rebuild_source(tmp_path: Path) -> None:
    """Byte flipped inside a middle batch of node 1's copy (loaded with --salvage, as the load's
    error suggests): node 1 is named as not validating, and the steps copy node 2, never node 1."""
    node1 = _copy(_nodes(1)[0], tmp_path, "node1")
    segment = _segments(node1)[0]
    middle = batch_headers([segment])[len(batch_headers([segment])) // 2]
    data = bytearray(segment.read_bytes())
    data[middle.position + 70] ^= 0xFF  # inside the records, which the CRC covers
    segment.write_bytes(bytes(data))
    (node2,) = _nodes(2)
    report = _json([node1, node2], salvage=True)
    assert report["verdict"]["verdict"] == "NO MAJORITY"  # two voters here, one of them whole
    assert report["verdict"]["wholeVotersHere"] == [2]
    (why,) = report["verdict"]["notCandidates"]["1"]
    assert segment.name in why and "CRC" in why.upper()
    assert report["verdict"]["rebuildFrom"] == "2"
    status, out, err = _quorum([node1, node2], "--rebuild-from", "1", salvage=True)
    assert status == 0, err
    assert "--rebuild-from 1: its log does not validate: no steps copy it" in out
    assert "rm -rf" not in out
    status, out, err = _quorum([node1, node2], "--rebuild-from", "2", salvage=True)
    assert f"cp -a {shlex.quote(str(node2))}/__cluster_metadata-0" in out
    assert "loses nothing" not in out.split("from node 1:")[1].splitlines()[0]
    alone = _json([node1], salvage=True)  # node 1 alone: a lone survivor, and still no steps from it
    assert alone["rebuild"] is None and not alone["validity"]["whole"]


def test_a_forged_epoch_on_the_last_batch_wins_raft_s_rule_but_is_no_candidate(tmp_path: Path) -> None:
    node3 = _copy(_nodes(3)[0], tmp_path, "node3")
    segment = _segments(node3)[-1]
    last = batch_headers([segment])[-1]
    data = bytearray(segment.read_bytes())
    data[last.position + 12 : last.position + 16] = struct.pack(">i", 99)  # partitionLeaderEpoch: no CRC
    segment.write_bytes(bytes(data))
    node1, node2 = _nodes(1, 2)
    report = _json([node1, node2, node3])
    assert report["mostUpToDate"] == "3"  # Raft's header-only rule is fooled ...
    why = report["verdict"]["notCandidates"]["3"]
    assert any("leader epoch 99" in w and "quorum-state's epoch 5" in w for w in why), why
    assert report["verdict"]["rebuildFrom"] in ("1", "2")  # ... the rebuild source is not
    only3 = _json([node3])
    assert only3["rebuild"] is None and not only3["validity"]["whole"]


def test_a_missing_middle_segment_is_a_gap_no_rebuild_copies(tmp_path: Path) -> None:
    """The split fixture's controller (six segments, real Kafka 4.4) with its third segment deleted:
    the offsets it held are a gap inside the log, named, and the lone voter gets no steps."""
    node = _copy(FIXTURES / "kafka-4.4-split-c1", tmp_path, "c1")
    segments = _segments(node)
    gone = segments[2]
    first = batch_headers([gone])[0].base_offset
    gone.unlink()
    report = _json([node], salvage=True)
    problems = report["validity"]["problems"]
    assert any(f"offsets {first}.." in w and "missing" in w and "not contiguous" in w for w in problems), (
        problems
    )
    assert report["rebuild"] is None


def test_a_hostile_cluster_id_is_quoted_in_every_printed_command(tmp_path: Path) -> None:
    """``cluster.id=abc;echo INJECTED;#`` in meta.properties: pasting the format step must not run it."""
    node = _copy(FIXTURES / "kafka-4.4-split-c1", tmp_path, "c1")
    props = node / "meta.properties"
    hostile = "abc;echo INJECTED;#"
    text = props.read_text()
    props.write_text(
        "\n".join(f"cluster.id={hostile}" if ln.startswith("cluster.id=") else ln for ln in text.splitlines())
        + "\n"
    )
    for json_out in (False, True):
        status, out, err = _quorum([node], *(["--json"] if json_out else []))
        assert status == 0, err
        if json_out:
            commands = [c for s in json.loads(out)["rebuild"]["steps"] for c in s["commands"]]
        else:
            commands = [ln.strip() for ln in out.splitlines() if ln.startswith("       ")]
        formats = [c for c in commands if c.startswith("kafka-storage.sh format")]
        assert len(formats) == 2  # nodes 2 and 3: no directory given
        for fmt in formats:
            words = shlex.split(fmt)
            assert words[words.index("--cluster-id") + 1] == hostile, fmt  # one word, literally
        for command in commands:  # outside quotes, only the steps' own "&&" joins commands
            lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
            operators = {w for w in lexer if w and set(w) <= set(";&|")}
            assert operators <= {"&&"}, command


def test_the_same_directory_twice_is_refused(tmp_path: Path) -> None:
    (node1,) = _nodes(1)
    link = tmp_path / "again"
    link.symlink_to(node1)
    status, _out, err = _quorum([node1, link])
    assert status == 1 and "are the same directory" in err and "give each node once" in err
    copy = _copy(node1, tmp_path, "copy")  # a copy of node 1's disk, its node id changed
    props = copy / "meta.properties"
    props.write_text(props.read_text().replace("node.id=1", "node.id=2"))
    status, _out, err = _quorum([node1, copy])
    if "directory.id" in (node1 / "meta.properties").read_text():
        assert status == 1 and "carry the same directory.id" in err


def test_a_folder_of_node_directories_suggests_a_d_per_node(tmp_path: Path) -> None:
    for name in ("node1", "node 4"):
        shutil.copytree(FIXTURES / "kafka-4.4-split-c1", tmp_path / name)
    status, _out, err = run_cli("-d", str(tmp_path), "quorum")
    assert status == 1 and "it holds 2 node directories: give one -d per node" in err
    assert f"-d {shlex.quote(str(tmp_path / 'node 4'))}" in err  # quoted, to paste


def test_a_flapping_quorum_is_summarised() -> None:
    """59 elections in nine hours, epochs jumping by up to seven, were listed raw."""
    from metashell.image.quorum_report import TimelineEvent, leader_history

    hour = 3_600_000
    epochs = [1 + n + (6 if n == 30 else 0) for n in range(59)]
    events = [
        TimelineEvent(n * 10, e, n * 9 * hour // 58, "LeaderChange", "", {"LeaderId": 1 + n % 3}, "x.log")
        for n, e in enumerate(epochs)
    ]
    said = leader_history(events)
    assert said is not None and said.startswith("FLAPPING: 59 leader elections in 9.0 h (6.6 an hour)")
    assert "epochs rose by up to 7" in said and "votes that failed" in said
    calm = leader_history(events[:2])
    assert calm is not None and not calm.startswith("FLAPPING")
