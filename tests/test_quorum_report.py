"""``quorum`` (issue 26, in part): one node's place in the quorum and the timeline of leaders and
voters, from its directory alone -- checked on fixtures made by real Kafka, where the scripts that
made them know what happened (``fixtures/README.md``: the split cluster's controller 3 was removed
from the voters and added back with ``kafka-metadata-quorum``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, corpus_dirs, shared_required
from test_cli import run_cli


def _report(path: Path) -> dict[str, Any]:
    status, out, err = run_cli("-d", str(path), "--json", "quorum")
    assert status == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_a_dynamic_quorum_s_timeline_shows_the_controller_removed_and_added_back() -> None:
    doc = _report(FIXTURES / "kafka-4.4-split-c1")
    assert doc["nodeId"] == 1 and doc["role"] == "voter" and doc["voters"] == [1, 2, 3]
    events = doc["timeline"]
    leaders = [(e["epoch"], e["summary"].split(",")[0]) for e in events if e["kind"] == "LeaderChange"]
    assert leaders == [(1, "leader 3"), (2, "leader 2"), (3, "leader 1")]
    assert doc["quorumState"]["leaderId"] == 1 and doc["quorumState"]["leaderEpoch"] == 3
    voters = [(e["offset"], e["summary"].count("@")) for e in events if e["kind"] == "KRaftVoters"]
    assert voters == [(2, 3), (290, 2), (291, 3)]  # removed at 290, back at 291
    assert [e["summary"] for e in events if e["kind"] == "KRaftVersion"] == ["kraft.version 1"]
    _, out, _ = run_cli("-d", str(FIXTURES / "kafka-4.4-split-c1"), "quorum")
    assert out.startswith("node 1 (cluster ") and "\ntimeline (leaders, voters, kraft.version):\n" in out


def test_a_broker_is_an_observer() -> None:
    doc = _report(FIXTURES / "kafka-4.4-broker")
    assert doc["role"] == "observer" and doc["nodeId"] not in doc["voters"]


def test_a_quorum_state_past_the_log_is_said() -> None:
    cluster = shared_required("corpus", "ftmhxp+real-time-data-streaming-pipeline@kafka1")
    _, out, _ = run_cli("-d", str(cluster), "quorum")
    assert "quorum-state is at epoch 5, past the log's last epoch 2" in out


@pytest.mark.parametrize("directory", [*sorted(p for p in FIXTURES.iterdir() if p.is_dir()), *corpus_dirs()])
def test_every_directory_has_a_report(directory: Path) -> None:
    doc = _report(directory)
    assert doc["logEndOffset"] is None or doc["logEndOffset"] >= (doc["logStartOffset"] or 0)
    assert all(e["kind"] in ("LeaderChange", "KRaftVoters", "KRaftVersion") for e in doc["timeline"])
    offsets = [e["offset"] for e in doc["timeline"]]
    assert offsets == sorted(offsets)


# -- several nodes ----------------------------------------------------------------------------------

NODES = "ftmhxp+real-time-data-streaming-pipeline@kafka{}"


def _nodes(tmp_path: Path) -> list[Path]:
    """Copies of the corpus cluster's three nodes (each its own node.id; their logs are identical)."""
    import shutil

    out = []
    for n in (1, 2, 3):
        src = shared_required("corpus", NODES.format(n))
        shutil.copytree(src, tmp_path / f"kafka{n}")
        out.append(tmp_path / f"kafka{n}")
    return out


def _last_batches(node: Path, count: int) -> tuple[Path, list[tuple[int, int]]]:
    """The last segment and the (position, base offset) of its last ``count`` batches."""
    from metashell.log.files import iter_file_batches

    seg = max((node / "__cluster_metadata-0").glob("*.log"))
    batches = [(b.position, b.base_offset) for b in iter_file_batches(seg, decode=False)]
    return seg, batches[-count:]


def test_three_real_nodes_agree() -> None:
    paths = [shared_required("corpus", NODES.format(n)) for n in (1, 2, 3)]
    status, out, err = run_cli(*[a for p in paths for a in ("-d", str(p))], "--json", "quorum")
    doc = json.loads(out)
    assert status == 0, err
    assert [n["label"] for n in doc["nodes"]] == ["1", "2", "3"] and doc["voters"] == [1, 2, 3]
    assert doc["majorityLogEndOffset"] == 13057
    assert doc["committedBelow"] == 7269  # node 2's newest snapshot: Kafka snapshots committed records only
    assert all(d["firstDifferentOffset"] is None for d in doc["divergence"])


def test_spliced_logs_say_where_they_part_and_what_no_majority_holds(tmp_path: Path) -> None:
    """Real directories spliced (the one in-process fake, for logs Kafka cannot be made to write):
    node 2's last three batches get another leader epoch (no CRC covers it), node 1 gets one more
    batch than the others."""
    from metashell.log.encoding import build_batch
    from metashell.protocol.metadata import encode_metadata_record

    n1, n2, n3 = _nodes(tmp_path)
    seg, last = _last_batches(n2, 3)
    data = bytearray(seg.read_bytes())
    for position, _base in last:
        data[position + 12 : position + 16] = (9).to_bytes(4, "big")  # partitionLeaderEpoch
    seg.write_bytes(bytes(data))
    seg1, _ = _last_batches(n1, 1)
    with seg1.open("ab") as f:
        f.write(build_batch(13057, 2, [encode_metadata_record("NoOpRecord", 0, {})], 1_763_580_880_000))
    args = ["-d", str(n1), "-d", str(n2), "-d", str(n3)]
    status, out, err = run_cli(*args, "--json", "quorum")
    doc = json.loads(out)
    assert status == 0, err
    parts = {tuple(d["nodes"]): d["firstDifferentOffset"] for d in doc["divergence"]}
    assert parts == {("1", "2"): last[0][1], ("1", "3"): None, ("2", "3"): last[0][1]}
    assert doc["majorityLogEndOffset"] == 13057
    assert doc["committedBelow"] == 7269  # node 2's newest snapshot: Kafka snapshots committed records only
    assert doc["mostUpToDate"] == "2"  # Raft's rule: the last epoch first (9), then the end offset
    assert [line.split()[:4] for line in doc["atRisk"]["1"]] == [["13057", "epoch", "2", "NoOpRecord"]]
    first = last[0][1]
    assert doc["rebuildLosses"]["2"] == [
        {"node": "1", "fromOffset": first, "toOffset": 13057},
        {"node": "3", "fromOffset": first, "toOffset": 13056},
    ]
    assert doc["rebuildLosses"]["3"] == [
        {"node": "1", "fromOffset": 13057, "toOffset": 13057},
        {"node": "2", "fromOffset": first, "toOffset": 13056},
    ]
    assert [(e["offset"], e["nodes"]) for e in doc["timeline"]] == [
        (0, ["1", "2", "3"]),
        (12143, ["1", "2", "3"]),
    ]
    _, text, _ = run_cli(*args, "quorum")
    assert f"logs of nodes 1 and 2 differ from offset {last[0][1]}" in text
    assert "node 1 holds 1 offset(s) beyond that: not known to be committed, at risk" in text
    _, shown, _ = run_cli(*args, "-c", "node")
    assert shown.splitlines()[1].startswith("* node 2 ")  # the session shows the most up to date


def test_directories_of_two_clusters_are_refused_unless_asked() -> None:
    other = shared_required("corpus", NODES.format(1))
    status, _, err = run_cli("-d", str(FIXTURES / "demo"), "-d", str(other), "quorum")
    assert status == 1 and "the directories are of different clusters" in err and "--mixed-clusters" in err
    status, out, _ = run_cli("-d", str(FIXTURES / "demo"), "-d", str(other), "--mixed-clusters", "quorum")
    assert status == 0 and "\n2 node(s)" in out


def test_a_broker_s_copy_lacks_what_came_after_it_stopped() -> None:
    """The split cluster's controller 1 and broker 4, read together: no divergence, and the
    merged timeline says the last election (offset 430) is only in the controller's log."""
    status, out, err = run_cli(
        "-d",
        str(FIXTURES / "kafka-4.4-split-c1"),
        "-d",
        str(FIXTURES / "kafka-4.4-broker"),
        "--json",
        "quorum",
    )
    doc = json.loads(out)
    assert status == 0, err
    assert [d["firstDifferentOffset"] for d in doc["divergence"]] == [None]
    assert {e["offset"]: e["nodes"] for e in doc["timeline"]}[430] == ["1"]
    assert doc["majorityLogEndOffset"] is None  # one voter's directory of three: no majority to judge
    assert doc["committedBelow"] == 429  # but the broker's snapshot proves offsets below 429 committed


def test_each_node_s_tree_is_under_nodes() -> None:
    split, broker = str(FIXTURES / "kafka-4.4-split-c1"), str(FIXTURES / "kafka-4.4-broker")
    status, out, _ = run_cli("-d", split, "-d", broker, "ls", "/nodes")
    assert status == 0 and out.split() == ["1", "4"]
    _, out, _ = run_cli(
        "-d", split, "-d", broker, "cat", "/nodes/4/provenance/offset", "/nodes/1/provenance/offset"
    )
    assert out.split() == ["429", "430"]
    _, out, _ = run_cli("-d", split, "-d", broker, "-c", "at 200", "-c", "ls /nodes")  # survives time travel
    assert out.split()[-2:] == ["1", "4"]
    _, out, _ = run_cli("-d", split, "ls", "/")
    assert "nodes" not in out.split()  # one directory: no /nodes
    status, out, _ = run_cli("-d", split, "-d", broker, "grep", "-r", "-l", "kafka-4.4-broker", "/")
    assert "/nodes" not in out  # grep from / leaves the other nodes out (each would be loaded)


def test_a_static_quorum_s_rebuild_copies_the_most_up_to_date_log() -> None:
    """The corpus cluster (kraft.version 0): every voter's directory is given, so each step is a copy
    from the chosen node; no directory id is needed (the real-Kafka test covers a dynamic quorum)."""
    paths = [shared_required("corpus", NODES.format(n)) for n in (1, 2, 3)]
    dirs = [a for p in paths for a in ("-d", str(p))]
    status, out, err = run_cli(*dirs, "--json", "quorum")
    assert status == 0, err
    report = json.loads(out)
    assert report["verdict"]["verdict"] == "MAJORITY" and report["rebuild"] is None  # nothing to rebuild
    status, out, err = run_cli(*dirs, "--json", "quorum", "--rebuild-from", report["mostUpToDate"])
    assert status == 0, err
    plan = json.loads(out)["rebuild"]
    assert plan["kraftVersion"] == 0 and [v["directoryId"] for v in plan["voters"]] == [None] * 3
    commands = [c for s in plan["steps"] for c in s["commands"]]
    chosen = str(paths[int(plan["from"]) - 1])
    assert sum(c.startswith("rm -rf") and f"cp -a {chosen}/__cluster_metadata-0 " in c for c in commands) == 2
    assert not any("format" in c or "directory.id" in c for c in commands)


def test_a_dynamic_quorum_s_missing_voter_is_formatted_with_its_directory_id() -> None:
    status, out, err = run_cli("-d", str(FIXTURES / "kafka-4.4-split-c1"), "--json", "quorum")
    assert status == 0, err
    plan = json.loads(out)["rebuild"]
    assert plan["from"] == "1" and plan["kraftVersion"] == 1
    ids = {v["id"]: v["directoryId"] for v in plan["voters"]}
    commands = [c for s in plan["steps"] for c in s["commands"]]
    for missing in (2, 3):
        assert f'--config "$NODE{missing}_CONFIG" --no-initial-controllers' in "\n".join(commands)
        assert f"s/^directory.id=.*/directory.id={ids[missing]}/" in "\n".join(commands)
