"""``health``: what is wrong, and what to run next."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import answers, colour
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandSpec, Option, Parsed

if TYPE_CHECKING:
    from ..session import Shell


def run_health(shell: Shell, p: Parsed) -> None:
    from metashell.image.health import check_health  # imported when run: one-shot starts stay fast
    from metashell.image.health_causes import explain

    image = shell.image()
    report = check_health(image)
    report.missing = _missing_from_log(shell)
    if shell.full_plan is not None:  # the log can say why (live mode has only the image)
        explain(report, image, shell.full_plan(None))
    if shell.wants_json(p):
        shell.emit_json(report.as_json())
    else:
        lines = answers.health_lines(report, show_all=bool(p.opts["all"]))
        shell.write_painted("".join(line + "\n" for line in lines), colour.health)
    if p.opts["exit_code"]:
        shell.status = report.exit_status


def _missing_from_log(shell: Shell) -> list[str]:
    """What the load of the image shown found missing from the log (``gap``: offsets between two
    batches; ``partial-image``: between the snapshot loaded and the log), one phrase each."""
    # live mode has no files; at a point in time, the gaps of the end's load do not apply
    if shell.travel is None or shell.point is not None:
        return []
    found = []
    for w in shell.travel.end().warnings:
        if getattr(w, "kind", None) == "gap":
            found.append(str(w.message))
        elif getattr(w, "kind", None) == "partial-image":
            found.append(str(w.message).removesuffix(": the image is partial"))
    return found


HEALTH_COMMAND = Command(
    CommandSpec(
        "health",
        "Say what is wrong: offline or under-replicated partitions, fenced brokers...",
        options=(
            Option(
                ("--exit-code",),
                "exit_code",
                "Exit as monitoring plugins do: 0 HEALTHY, 1 DEGRADED, 2 CRITICAL, 3 NO DATA.",
            ),
            Option(("--all",), "all", "List every affected item, not the first few."),
            JSON_OPT,
        ),
    ),
    run=run_health,
    tui=TuiMode.WORKER,
    prose=True,
)
