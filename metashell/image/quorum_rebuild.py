"""The steps that rebuild a controller quorum from one node's log, after a lost majority.

Apache Kafka has no tool for this (KIP-1347 is under discussion).  What works, and what the
real-Kafka test follows step by step (``tests/test_quorum_kafka.py``), is Raft's own answer: every
voter starts again from the log of the node that holds every record any node could have seen
committed.  That node is the most up to date by Raft's "log up to date" rule (the last epoch, then
the log end offset), the same rule an election applies.

* Each voter keeps its own ``meta.properties`` (its ``node.id`` and ``directory.id``) and gets a copy
  of the chosen node's ``__cluster_metadata-0``.  Every voter, the chosen one included, starts
  without ``quorum-state``: a node without one starts from the epoch its log ends with, and the new
  leader is elected in a later epoch.  Keeping one is what fails: when the old leader's disk is
  gone, a survivor's ``quorum-state`` tells the reformatted node that it leads the current epoch,
  and Kafka stops it ("Cannot transition to Follower ... since it matches the local node.id"; the
  real-Kafka test met exactly that).
* **A static voter set** (``kraft.version`` 0, ``controller.quorum.voters``) names voters by id and
  endpoint, so a node whose disk is gone is formatted again with the cluster id and given the copy.
* **A dynamic voter set** (``kraft.version`` 1, KIP-853) names each voter by id *and* directory id.
  A node whose disk is gone must carry the voter's directory id again, or it is not counted as that
  voter, and no voter can be removed without a majority.  Writing that id into a fresh
  ``meta.properties`` is not a procedure Kafka documents, so the step says so.

The steps are text: metashell runs none of them, and it never writes into a directory it reads.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metashell.protocol.uuid import uuid_to_str

if TYPE_CHECKING:
    from .quorum_nodes import NodeLog, QuorumAnalysis

__all__ = ["RebuildPlan", "Step", "rebuild_plan", "voter_set"]

PARTITION = "__cluster_metadata-0"


@dataclass(frozen=True)
class Step:
    says: str
    commands: list[str] = field(default_factory=list)


@dataclass
class RebuildPlan:
    chosen: str
    kraft_version: int
    voters: dict[int, str | None]
    """Voter id -> its directory id in the voter set (None in a static set)."""
    steps: list[Step]
    unknown: list[str]

    def lines(self) -> Iterator[str]:
        kind = "dynamic (kraft.version 1)" if self.kraft_version else "static (kraft.version 0)"
        yield (
            f"to rebuild the quorum from node {self.chosen} (after a lost majority; "
            "metashell prints these steps and runs none of them):"
        )
        yield f"  the voter set is {kind}: " + ", ".join(
            f"{vid}" + (f" (directory {did})" if did else "") for vid, did in sorted(self.voters.items())
        )
        for i, step in enumerate(self.steps, 1):
            yield f"  {i}. {step.says}"
            yield from (f"       {c}" for c in step.commands)
        yield "  offline this cannot know:"
        yield from (f"    - {u}" for u in self.unknown)

    def as_json(self) -> dict[str, Any]:
        return {
            "from": self.chosen,
            "kraftVersion": self.kraft_version,
            "voters": [{"id": v, "directoryId": d} for v, d in sorted(self.voters.items())],
            "steps": [{"says": s.says, "commands": s.commands} for s in self.steps],
            "cannotKnow": self.unknown,
        }


def voter_set(chosen: NodeLog) -> tuple[int, dict[int, str | None]]:
    """kraft.version and the voters (with directory ids) from the chosen node's last records."""
    level = 0
    voters: dict[int, str | None] = dict.fromkeys(chosen.report.voters)
    for event in chosen.report.events:
        if event.kind == "KRaftVersion":
            level = int(event.data.get("KRaftVersion") or 0)
        elif event.kind == "KRaftVoters":
            voters = {}
            for v in event.data.get("Voters") or ():
                raw = v.get("VoterDirectoryId")
                voters[int(v.get("VoterId"))] = uuid_to_str(raw) if isinstance(raw, bytes) else None
    return level, voters


def _log_dir(node: NodeLog) -> Path:
    """The node's metadata.log.dir: the folder that holds meta.properties and the partition."""
    d = node.directory
    where = d.log_dir if d.log_dir is not None else d.path.parent if d.path is not None else None
    assert where is not None  # open_metadata_dir always sets one of them
    return where


def rebuild_plan(analysis: QuorumAnalysis) -> RebuildPlan | None:
    """The steps from :attr:`QuorumAnalysis.rebuild_source` (the node asked for, else the most
    up-to-date voter whose files validate); None when there is none, or it is not a voter whose
    files validate: no step ever copies a damaged or forged log over the others."""
    chosen = analysis.rebuild_source
    if chosen is None or chosen.report.role != "voter" or not chosen.validity.whole:
        return None
    level, voters = voter_set(chosen)
    cluster = _quote(chosen.report.cluster_id) if chosen.report.cluster_id else '"$CLUSTER_ID"'
    by_id = {n.report.node_id: n for n in analysis.nodes}
    dirs = {vid: _log_dir(by_id[vid]) if vid in by_id else None for vid in sorted(voters)}
    chosen_id = chosen.report.node_id
    src = _quote(_log_dir(chosen))
    steps = [
        Step(
            f"stop every controller ({', '.join(map(str, sorted(voters)))}); brokers may keep running and "
            "reconnect when the quorum is back"
        ),
        Step(
            "keep a copy of each voter's log, outside its metadata.log.dir (Kafka reads every folder there)",
            [_backup(d) for d in dirs.values() if d is not None],
        ),
    ]
    last_epoch = chosen.report.last_epoch
    steps.append(
        Step(
            f"node {chosen.label}: remove its quorum-state, as the copies below do: every voter then starts "
            f"from the log's last epoch ({last_epoch}) and elects a new leader in a later one (a kept "
            "quorum-state can name as the current leader a node whose disk was replaced, and Kafka stops "
            "that node with a fatal error)",
            [f"rm -f {src}/{PARTITION}/quorum-state"],
        )
    )
    for vid, d in dirs.items():
        if vid == chosen_id:
            continue
        target = _quote(d) if d is not None else f'"$NODE{vid}_LOG_DIR"'
        copy = f"rm -rf {target}/{PARTITION} && cp -a {src}/{PARTITION} {target}/ && rm -f {target}/{PARTITION}/quorum-state"
        if d is not None:
            steps.append(
                Step(
                    f"node {vid}: replace its log by node {chosen.label}'s (it keeps its meta.properties)",
                    [copy],
                )
            )
            continue
        commands = [f'kafka-storage.sh format --cluster-id {cluster} --config "$NODE{vid}_CONFIG"']
        says = f"node {vid}: no directory given (a lost disk?): format it again, then give it node {chosen.label}'s log"
        dir_id = voters.get(vid)
        if level and dir_id:
            commands[0] += " --no-initial-controllers"
            edit = f"s/^directory.id=.*/directory.id={dir_id}/"
            commands.append(f"sed -i {_quote(edit)} {target}/meta.properties")
            says += (
                f"; the voter set names node {vid} by directory id {dir_id}, so its new meta.properties must "
                "carry that id (a step Kafka documents nowhere: without it, no majority can ever form again)"
            )
        steps.append(Step(says, [*commands, copy]))
    steps.append(Step(f"start node {chosen.label} first, then the other voters"))
    steps.append(
        Step(
            "check that a leader is elected and every voter caught up (Lag 0)",
            [
                "kafka-metadata-quorum.sh --bootstrap-server HOST:PORT describe --status",
                "kafka-metadata-quorum.sh --bootstrap-server HOST:PORT describe --replication",
            ],
        )
    )
    unknown = [
        f"which records were committed: the high watermark is not on disk; node {chosen.label} holds "
        + "every record any node given here could have seen committed",
        "what the nodes not given here hold (a voter's directory that is not here may be more up to date)",
        "whether each node's server.properties still names the same voters and listeners",
    ]
    return RebuildPlan(chosen.label, level, voters, steps, unknown)


def _backup(log_dir: Path) -> str:
    """Copy a node's partition beside its metadata.log.dir, where Kafka does not look."""
    backup = _quote(log_dir.parent / (log_dir.name + ".before-rebuild"))
    return f"mkdir -p {backup} && cp -a {_quote(log_dir)}/{PARTITION} {backup}/"


def _quote(value: Path | str) -> str:
    """Every value a printed command interpolates, quoted for a POSIX shell: a cluster id, a path or
    a directory id from a node's files is data, and pasting the step must not run any of it."""
    return shlex.quote(str(value))
