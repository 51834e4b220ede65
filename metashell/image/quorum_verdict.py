"""What an operator reads first from several nodes' directories: is a majority here, do their logs
agree, what is at risk, and what to do now.

The lost-majority playbook (``rm -rf`` one node's log, copy another's over it) used to be printed
on every run, with all three voters present and agreeing, and from whichever node won Raft's
header-only "up to date" rule, damaged or not.  Now the verdict comes first, by a stated rule:

* **a majority of the voters is here** (each voter counted once, however many copies were given,
  and only when its files validate: a damaged copy is no vote to count on):
  no rebuild; Raft brings the others up to date when the controllers start.  Logs that part *after*
  what a majority holds are an uncommitted tail Raft truncates; logs that part *below* it hold
  different records where both say they are committed, which no restart mends;
* **no majority is here**: the quorum cannot elect a leader from these nodes alone; the steps
  rebuild it from the most up-to-date node whose files validate (:mod:`.log_validity`), and
  say what that loses;
* a node whose files do not validate is named with why, and is never a rebuild source
  (``quorum --rebuild-from`` refuses it too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .quorum_rebuild import voter_set

if TYPE_CHECKING:
    from .quorum_nodes import QuorumAnalysis

__all__ = ["state_words", "tied", "verdict", "verdict_json", "verdict_lines"]


def state_words(qs: dict[str, Any]) -> str:
    """A node's ``quorum-state``, in one clause."""
    if not qs:
        return "no quorum-state"
    return f"quorum-state: leader {qs.get('leaderId')}, epoch {qs.get('leaderEpoch')}, voted for {qs.get('votedId')}"


def verdict(a: QuorumAnalysis) -> tuple[str, str]:
    """(word, sentence): ``MAJORITY``, ``MAJORITY, COMMITTED DATA DIFFERS``, ``NO MAJORITY``,
    ``NO VOTER SET``."""
    if not a.voters:
        return "NO VOTER SET", "no node's files name the voter set: what a majority holds cannot be said"
    here, need = a.voters_here, len(a.voters) // 2 + 1
    count = f"{len(here)} of {len(a.voters)} voters here ({_ids(here) or 'none'}; a majority is {need})"
    whole = a.whole_voters_here
    if len(whole) < len(here):
        count += f", {len(whole)} of them with files that validate ({_ids(whole) or 'none'})"
    if not a.majority_here:
        return "NO MAJORITY", f"{count}: these nodes cannot form a sound quorum alone"
    below = _parted_below_majority(a)
    if below:
        return (
            "MAJORITY, COMMITTED DATA DIFFERS",
            f"{count}, but {below}: records a majority holds differ between nodes, which no restart mends",
        )
    broken = [n.label for n in a.nodes if n.report.node_id in a.voters and not n.validity.whole]
    if broken:
        sentence = (
            f"{count}, and the logs that validate agree on everything a majority holds: the quorum needs no "
            f"rebuild, only the copy of node(s) {_ids(broken)} does"
        )
        return "MAJORITY", sentence
    return "MAJORITY", f"{count}, and their logs agree on everything a majority holds: no rebuild is needed"


def verdict_lines(a: QuorumAnalysis) -> list[str]:
    word, sentence = verdict(a)
    lines = [f"{word}: {sentence}"]
    for n in sorted(a.nodes, key=lambda n: n.label):
        if not n.validity.whole:
            more = len(n.validity.problems) - 1
            lines.append(
                f"  node {n.label}'s files do not validate: {n.validity.problems[0]}"
                + (f" (and {more} more)" if more else "")
                + "; it is never a rebuild source"
            )
        lines.extend(f"  node {n.label}: note: {note}" for note in n.validity.notes[:3])
    tie = tied(a)
    if tie:
        lines.append(f"  nodes {_ids(tie)} hold the same log (same last epoch, log end offset and batches)")
    safe = a.safe_end
    if safe is not None:
        for n in sorted(a.nodes, key=lambda n: n.label):
            extra = (n.report.log_end or 0) - safe
            if extra > 0:
                lines.append(
                    f"  at risk: node {n.label}'s last {extra} offset(s) ({safe}..{safe + extra - 1}) are held by "
                    "no majority and not known to be committed"
                    + ("; Raft keeps them only if that node is elected" if a.majority_here else "")
                )
    lines.append("  now: " + _next_step(a, word))
    return lines


def verdict_json(a: QuorumAnalysis) -> dict[str, Any]:
    word, sentence = verdict(a)
    source = a.rebuild_source
    return {
        "verdict": word,
        "says": sentence,
        "votersHere": a.voters_here,
        "wholeVotersHere": a.whole_voters_here,
        "majorityHere": a.majority_here,
        "rebuildNeeded": not a.majority_here and bool(a.voters),
        "rebuildFrom": None if source is None else source.label,
        "notCandidates": {
            n.label: n.validity.problems for n in a.nodes if n.report.role == "voter" and not n.validity.whole
        },
        "next": _next_step(a, word),
    }


def _next_step(a: QuorumAnalysis, word: str) -> str:
    source = a.rebuild_source
    if a.rebuild_from is not None:
        if source is None:
            return f"--rebuild-from {a.rebuild_from}: no node of that label was given"
        if not source.validity.whole or source.report.role != "voter":
            why = "is not a voter" if source.report.role != "voter" else "does not validate"
            return f"--rebuild-from {source.label}: its log {why}: no steps copy it"
        return f"the steps below rebuild the quorum from node {source.label}, as asked"
    broken = [n.label for n in a.nodes if n.report.node_id in a.voters and not n.validity.whole]
    if word == "MAJORITY" and broken and source is not None:
        return (
            f"keep node(s) {_ids(broken)} stopped and give each a copy of a voter's log that validates "
            f"(`quorum --rebuild-from {source.label}` prints the steps), then start the controllers"
        )
    if word == "MAJORITY":
        missing = [v for v in a.voters if v not in a.voters_here]
        dynamic = any(voter_set(n)[0] >= 1 for n in a.nodes)  # kraft.version 1: voters by directory id
        how = (
            "kafka-metadata-quorum.sh remove-controller, then add-controller for its new disk (a dynamic "
            "voter set names it by directory id)"
            if dynamic
            else "kafka-storage.sh format with the cluster id on its new disk, then start it (a static voter set)"
        )
        later = (
            f"; a voter whose disk is lost ({_ids(missing)} not given here) is replaced once the quorum runs: {how}"
            if missing
            else ""
        )
        return f"start the controllers as they are{later}; `quorum --rebuild-from ID` prints rebuild steps anyway"
    if word.startswith("MAJORITY,"):
        return "keep every copy, and compare the nodes' records where they part (`node ID`, `log --from`)"
    if word == "NO VOTER SET":
        return "give the voters' directories (-d per node)"
    if not a.voters_here:
        return f"give the voters' directories (voters {_ids(a.voters)}; the nodes here are not voters)"
    if source is None:
        return "no voter here has files that validate: no rebuild step can be printed safely"
    return f"give the other voters' directories if they exist; else rebuild from node {source.label} (below)"


def _parted_below_majority(a: QuorumAnalysis) -> str:
    """Where two voters' logs differ at an offset a majority holds (empty: nowhere)."""
    end = a.majority_end
    if end is None:
        return ""
    labels = {n.label for n in a.candidates}  # (a damaged copy parts where it is damaged: said apart)
    for (x, y), where in sorted(a.divergence.items()):
        if where is not None and where < end and x in labels and y in labels:
            return f"the logs of nodes {x} and {y} differ from offset {where}"
    return ""


def tied(a: QuorumAnalysis) -> list[str]:
    """The nodes holding exactly the most up-to-date log, when there are two or more."""
    if not a.nodes:
        return []
    best = a.most_up_to_date
    same = sorted(n.label for n in a.nodes if n.up_to_date == best.up_to_date and n.batches == best.batches)
    return same if len(same) > 1 else []


def _ids(items: list[int] | list[str]) -> str:
    return ", ".join(map(str, items))
