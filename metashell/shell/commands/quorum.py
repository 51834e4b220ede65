"""``quorum``: this node's place in the controller quorum, and the timeline of leaders and voters."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...safe_text import visible
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed, seconds_option

if TYPE_CHECKING:
    from ..session import Shell


def run_quorum(shell: Shell, p: Parsed) -> None:
    from dataclasses import replace

    from metashell.image.quorum_nodes import analyse  # imported when run: one-shot starts stay fast
    from metashell.image.quorum_rebuild import rebuild_plan
    from metashell.image.quorum_text import analysis_json, analysis_lines
    from metashell.log.directory import directory_of

    asked = p.opts["rebuild_from"]
    assert asked is None or isinstance(asked, str)
    if shell.source is not None and shell.source.describe_quorum is not None:  # live: the leader says
        if asked is not None:
            raise CommandError("quorum: --rebuild-from reads node directories (-d), not a live quorum")
        _live_quorum(shell, p, shell.source.describe_quorum)
        return
    if p.opts.get("interval") is not None or p.opts.get("count") is not None:
        raise CommandError(
            "quorum: --interval and --count refresh a live quorum (-q); a directory does not change"
        )
    if shell.source is not None and shell.source.quorum is not None:  # several -d: compare them
        analysis = shell.source.quorum()
        if asked is not None:
            if asked not in {n.label for n in analysis.nodes}:
                raise CommandError(
                    f"quorum: --rebuild-from {visible(asked)}: no such node here "
                    f"({', '.join(sorted(n.label for n in analysis.nodes))})"
                )
            analysis = replace(analysis, rebuild_from=asked)
        if shell.wants_json(p):
            shell.emit_json(analysis_json(analysis))
            return
        shell.write("".join(visible(line) + "\n" for line in analysis_lines(analysis)))
        return
    d = directory_of(shell.travel.end().plan) if shell.travel is not None else None
    if d is None:
        raise CommandError("quorum: needs a metadata directory (-d) or a live quorum (-q)")
    # one node: its report, and the rebuild steps from it when it is a voter (a lone survivor)
    label = str(d.meta.node_id) if d.meta is not None and d.meta.node_id is not None else "this node"
    if asked is not None and asked != label:
        raise CommandError(f"quorum: --rebuild-from {visible(asked)}: this directory is node {label}")
    alone = analyse([(label, d)], rebuild_from=asked)
    node = alone.nodes[0]
    report = node.report
    plan = rebuild_plan(alone) if alone.rebuild_shown else None
    if shell.wants_json(p):
        shell.emit_json(
            {
                **report.as_json(),
                "validity": node.validity.as_json(),
                "rebuild": None if plan is None else plan.as_json(),
            }
        )
        return
    said = [
        f"its files do not validate, so no rebuild step copies them: {why}" for why in node.validity.problems
    ]
    lines = [*report.lines(), *said, *(["", *plan.lines()] if plan is not None else [])]
    shell.write("".join(visible(line) + "\n" for line in lines))


def _live_quorum(shell: Shell, p: Parsed, describe: Callable[[], dict[str, Any]]) -> None:
    """``kafka-metadata-quorum describe --status`` then ``--replication``, from the leader's
    DescribeQuorum, asked afresh at each run (the source caches an answer for one second).  With
    ``--interval`` or ``--count``, asked again every interval until Ctrl-C (Escape in the TUI) or
    ``--count`` answers, as ``watch kafka-metadata-quorum ...`` would: each answer headed by the
    time it was asked (text), or one JSON document a line."""
    from metashell.errors import MetashellError
    from metashell.live.quorum_disks import disk_json, disk_lines
    from metashell.live.quorum_status import quorum_status
    from metashell.times import iso_utc

    count = p.opts.get("count")
    if isinstance(count, int) and count < 1:
        raise CommandError(f"quorum: --count must be 1 or more, not {count}")
    repeat = p.opts.get("interval") is not None or count is not None
    pause = seconds_option(p, "interval", default=2.0)
    shown = 0
    while True:
        try:
            described = describe()
        except MetashellError as e:
            raise CommandError(f"quorum: {e}") from None
        image = shell.root.ctx.image
        source = shell.source
        status = quorum_status(described, image.quorum.cluster_id or (source.cluster_id if source else None))
        disks = source.disks if source is not None else []
        if shell.wants_json(p):
            shell.emit_json(
                {**status.as_json(), **({"directories": disk_json(status, disks)} if disks else {})}
            )
        else:
            head = (
                [f"-- {iso_utc(int(time.time() * 1000))} (every {pause:g} s; Ctrl-C stops)", ""]
                if repeat
                else []
            )
            shell.write(
                "".join(
                    visible(line) + "\n"
                    for line in [
                        *head,
                        *status.lines(),
                        *(["", *disk_lines(status, disks)] if disks else []),
                        *([""] if repeat else []),
                    ]
                )
            )
        shell.out.flush()
        shown += 1
        if not repeat or (isinstance(count, int) and shown >= count) or not shell.pause(pause):
            return


QUORUM_COMMAND = Command(
    CommandSpec(
        "quorum",
        "Say this node's place in the controller quorum, and every leader and voter change; "
        "with several -d, where their logs differ and what a majority of voters holds; live (-q), "
        "the leader's view of every voter and observer.",
        options=(
            Option(
                ("--rebuild-from",),
                "rebuild_from",
                "Print the steps that rebuild the quorum from node ID's log even when a majority is "
                "here (they are printed unasked only when the voters given are not a majority); "
                "refused for a node whose files do not validate.",
                metavar="ID",
            ),
            Option(
                ("--interval",),
                "interval",
                "Live: ask again every SECONDS (default 2) until Ctrl-C.",
                "SECONDS",
            ),
            Option(("--count",), "count", "Live: stop after this many answers.", "N", type=int),
            JSON_OPT,
        ),
        notes=(
            (
                "From the directory alone (the quorum may be down): meta.properties, quorum-state, "
                "the log's first and last offsets and last epoch, the snapshots, and each "
                "LeaderChange, KRaftVoters and KRaftVersion record of the snapshots and the log."
            ),
            (
                "Live (-q): what kafka-metadata-quorum describe --status and --replication print, "
                "from the leader's DescribeQuorum (needs DESCRIBE on the cluster), asked afresh "
                "each time the command runs; --interval and --count ask again and again, as watch(1) would."
            ),
            (
                "Live with the nodes' directories beside it (-q HOST:PORT -d DIR ...): each directory's "
                "log end, read afresh, against the high watermark: behind it a copy lacks committed "
                "records, past it holds records not committed yet."
            ),
        ),
    ),
    run=run_quorum,
    tui=TuiMode.STREAM,
)
