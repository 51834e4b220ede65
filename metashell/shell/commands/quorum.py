"""``quorum``: this node's place in the controller quorum, and the timeline of leaders and voters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...safe_text import visible
from ..registry import Command, TuiMode, register
from ..spec import JSON_OPT, CommandError, CommandSpec, Parsed

if TYPE_CHECKING:
    from ..session import Shell


def run_quorum(shell: Shell, p: Parsed) -> None:
    from metashell.image.quorum_nodes import analyse  # imported when run: one-shot starts stay fast
    from metashell.image.quorum_rebuild import rebuild_plan

    if shell.source is not None and shell.source.quorum is not None:  # several -d: compare them
        analysis = shell.source.quorum()
        if shell.wants_json(p):
            shell.emit_json(analysis.as_json())
            return
        shell.write("".join(visible(line) + "\n" for line in analysis.lines()))
        return
    d = shell.travel.end().plan.directory if shell.travel is not None else None
    if d is None:
        raise CommandError("quorum: needs a metadata directory (-d); live mode: cat /quorum")
    # one node: its report, and the rebuild steps from it when it is a voter (a lone survivor)
    label = str(d.meta.node_id) if d.meta is not None and d.meta.node_id is not None else "this node"
    alone = analyse([(label, d)])
    report, plan = alone.nodes[0].report, rebuild_plan(alone)
    if shell.wants_json(p):
        shell.emit_json({**report.as_json(), "rebuild": None if plan is None else plan.as_json()})
        return
    lines = [*report.lines(), *(["", *plan.lines()] if plan is not None else [])]
    shell.write("".join(visible(line) + "\n" for line in lines))


register(
    Command(
        CommandSpec(
            "quorum",
            "Say this node's place in the controller quorum, and every leader and voter change; "
            "with several -d, where their logs differ and what a majority of voters holds.",
            options=(JSON_OPT,),
            notes=(
                (
                    "From the directory alone (the quorum may be down): meta.properties, quorum-state, "
                    "the log's first and last offsets and last epoch, the snapshots, and each "
                    "LeaderChange, KRaftVoters and KRaftVersion record of the snapshots and the log."
                ),
            ),
        ),
        run=run_quorum,
        tui=TuiMode.WORKER,
    )
)
