"""``quorum``: this node's place in the controller quorum, and the timeline of leaders and voters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...safe_text import visible
from ..registry import Command, TuiMode, register
from ..spec import JSON_OPT, CommandError, CommandSpec, Parsed

if TYPE_CHECKING:
    from ..session import Shell


def run_quorum(shell: Shell, p: Parsed) -> None:
    from metashell.image.quorum_report import node_report  # imported when run: one-shot starts stay fast

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
    report = node_report(d)
    if shell.wants_json(p):
        shell.emit_json(report.as_json())
        return
    shell.write("".join(visible(line) + "\n" for line in report.lines()))


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
