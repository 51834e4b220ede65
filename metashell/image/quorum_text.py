"""What ``quorum`` says about several nodes' directories, in text and JSON.

Apart from :mod:`.quorum_nodes`, which holds the facts (where the logs part, what a majority holds,
what a rebuild would lose): the verdict (:mod:`.quorum_verdict`) and the rebuild steps
(:mod:`.quorum_rebuild`) read those facts, and this module, above the three, puts them together.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .quorum_nodes import AT_RISK_SHOWN, QuorumAnalysis
from .quorum_rebuild import rebuild_plan
from .quorum_report import leader_history
from .quorum_verdict import state_words, tied, verdict_json, verdict_lines

__all__ = ["analysis_json", "analysis_lines"]


def analysis_lines(analysis: QuorumAnalysis) -> Iterator[str]:
    """The text of ``quorum`` over several nodes: the verdict first, then the evidence."""
    yield from verdict_lines(analysis)
    yield ""
    yield f"{len(analysis.nodes)} node(s); voters {analysis.voters or 'unknown'}"
    for n in sorted(analysis.nodes, key=lambda n: n.label):
        r = n.report
        end = "no log" if r.log_end is None else f"log end offset {r.log_end}, last epoch {r.last_epoch}"
        if r.log_start is not None and r.log_end is not None and r.log_end <= r.log_start:
            end = f"no batch after its snapshot (log end offset {r.log_end}), last epoch {r.last_epoch}"
        yield f"  node {n.label}: {r.role}, {end}; {state_words(r.quorum_state)}"
    if analysis.majority_end is None:
        yield "majority: too few voters' directories to say what a majority holds"
    else:
        yield f"a majority of the voters holds offsets up to {analysis.majority_end - 1} (log end offset {analysis.majority_end})"
    known = analysis.committed_below
    if known is not None:
        yield (
            f"committed for certain: offsets below {known[0]} (node {known[1]}'s newest snapshot; Kafka "
            "snapshots only committed records)"
        )
    safe = analysis.safe_end
    if safe is not None:
        for n in sorted(analysis.nodes, key=lambda n: n.label):
            extra = (n.report.log_end or 0) - safe
            if extra > 0:
                yield f"  node {n.label} holds {extra} offset(s) beyond that: not known to be committed, at risk"
    for (a, b), where in sorted(analysis.divergence.items()):
        if where is not None:
            yield f"logs of nodes {a} and {b} differ from offset {where}"
    if not any(v is not None for v in analysis.divergence.values()):
        yield "no two logs differ where both hold data (the shorter ones are behind, not diverged)"
    best, tie = analysis.most_up_to_date, tied(analysis)
    who = f"nodes {', '.join(tie)} (the same log)" if tie else f"node {best.label}"
    yield f"most up to date (last epoch, then log end offset): {who}"
    for n in sorted(analysis.nodes, key=lambda n: n.label):
        risky = analysis.at_risk(n)
        if risky:
            yield ""
            yield f"node {n.label}: records beyond what a majority holds (the first {AT_RISK_SHOWN} at most):"
            yield from (f"  {line}" for line in risky)
    if len(analysis.nodes) > 1:
        yield ""
        yield "what rebuilding the quorum from one node would lose (only ever after a lost majority):"
        for n in sorted(analysis.nodes, key=lambda n: n.label):
            if not n.validity.whole:
                yield f"  from node {n.label}: not a candidate: its log does not validate (above)"
                continue
            lost = analysis.losses(n)
            said = "; ".join(f"node {o}'s offsets {a}..{b - 1} ({b - a})" for o, a, b in lost) or "nothing"
            mark = " (most up to date)" if n is analysis.most_up_to_date else ""
            yield f"  from node {n.label}{mark}: loses {said}"
    plan = rebuild_plan(analysis) if analysis.rebuild_shown else None
    if plan is not None:
        yield ""
        yield from plan.lines()
    yield ""
    summary = leader_history([e for e, _labels in analysis.timeline()])
    if summary is not None:
        yield "leaders: " + summary
    yield "timeline across the nodes (leaders, voters, kraft.version; nodes that hold each):"
    for event, labels in analysis.timeline():
        yield f"  {event.line()}  [{','.join(labels)}]"


def analysis_json(analysis: QuorumAnalysis) -> dict[str, Any]:
    """``quorum --json`` over several nodes: :func:`analysis_lines` as one document."""
    return {
        "verdict": verdict_json(analysis),
        "nodes": [
            {"label": n.label, **n.report.as_json(), "validity": n.validity.as_json()} for n in analysis.nodes
        ],
        "voters": analysis.voters,
        "majorityLogEndOffset": analysis.majority_end,
        "committedBelow": None if analysis.committed_below is None else analysis.committed_below[0],
        "divergence": [
            {"nodes": [a, b], "firstDifferentOffset": where}
            for (a, b), where in sorted(analysis.divergence.items())
        ],
        "mostUpToDate": analysis.most_up_to_date.label,
        "atRisk": {n.label: analysis.at_risk(n) for n in analysis.nodes if analysis.at_risk(n)},
        "rebuildLosses": {
            n.label: [{"node": o, "fromOffset": a, "toOffset": b - 1} for o, a, b in analysis.losses(n)]
            for n in analysis.nodes
        },
        "rebuild": None
        if not analysis.rebuild_shown or (plan := rebuild_plan(analysis)) is None
        else plan.as_json(),
        "timeline": [{**e.as_json(), "nodes": labels} for e, labels in analysis.timeline()],
    }
