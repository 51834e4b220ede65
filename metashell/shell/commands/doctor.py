"""``doctor``: whether the metadata is consistent with itself (``image/doctor.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...safe_text import visible
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed

if TYPE_CHECKING:
    from ..session import Shell


def run_doctor(shell: Shell, p: Parsed) -> None:
    """Integrity checks on the point shown and, with ``-d``, on the whole directory."""
    from metashell.image.doctor import examine  # imported when run: one-shot starts stay fast
    from metashell.log.directory import directory_of

    if shell.travel is None:
        raise CommandError("doctor: needs a file source (-d or -s); live mode has no files to check")
    end = shell.travel.end()
    report = examine(shell.image(), end, directory_of(end.plan))
    if shell.wants_json(p):
        shell.emit_json(report.as_json())
    else:
        # one item, one line: a topic name's newline is escaped (it could forge another line)
        shell.write("".join(visible(line) + "\n" for line in report.lines(show_all=bool(p.opts["all"]))))
    if p.opts["exit_code"]:
        shell.status = report.exit_status


DOCTOR_COMMAND = Command(
    CommandSpec(
        "doctor",
        "Check that the metadata is consistent with itself: log order, snapshots, references.",
        options=(
            Option(
                ("--exit-code",),
                "exit_code",
                "Exit as monitoring plugins do: 0 CONSISTENT, 1 CONSISTENT WITH NOTES, 2 INCONSISTENT, "
                "3 NO DATA.",
            ),
            Option(("--all",), "all", "List every affected item, not the first few."),
            JSON_OPT,
        ),
        notes=(
            (
                "With -d: batch offsets and leader epochs in order and as leader-epoch-checkpoint says, "
                "and each snapshot equal to replaying the older data up to it (one load per snapshot)."
            ),
            (
                "On the image shown: leader in ISR, ISR and ELR within the replicas, one directory per "
                "replica, replicas on registered brokers and their directories, no config of a missing "
                "topic, no metadata transaction left open, metadata.version present."
            ),
        ),
    ),
    run=run_doctor,
    tui=TuiMode.WORKER,
    prose=True,
)
