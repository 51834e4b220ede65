"""``at``: move the session to another point of the log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metashell.times import iso_utc as iso_time

from ..registry import Command, TuiMode
from ..spec import CommandError, CommandSpec, Parsed, Positional

if TYPE_CHECKING:
    from ..session import Shell


def run_at(shell: Shell, p: Parsed) -> None:
    """Move the whole session to the image after an offset or time (``at`` alone: the end)."""
    if shell.moves is None:
        raise CommandError("at: time travel needs one source with a log: -d, -s or -q")
    root, shell.point = shell.moves.move(p.args[0].literal if p.args else None)
    shell.replace_root(root)
    prov = root.ctx.image.provenance
    when = "" if prov.timestamp < 0 else f", appended {iso_time(prov.timestamp)}"
    where = "back at the end of the log" if shell.point is None else "now at"
    shell.write(f"{where}: offset {prov.offset} (epoch {prov.epoch}{when})\n")
    if shell.point is None:
        for warning in shell.moves.end_warnings_untold():
            shell.note(f"warning: {warning}")
    if not shell.glob(shell.cwd):
        shell.note(f"at: {shell.cwd} did not exist then: back to /")
        shell.cwd = "/"


AT_COMMAND = Command(
    CommandSpec(
        "at",
        "Move the session to the metadata as it was after a log offset or time; 'at' alone "
        "returns to the end.",
        Positional(
            "point",
            "An offset, an ISO 8601 time (2026-11-22T03:55:00Z), @epoch-ms, or a duration "
            "before the log's last batch (-1h, 30m, 1h30m).",
            "?",
        ),
    ),
    run=run_at,
    tui=TuiMode.INLINE,
    travels=True,
    moves_image=True,
)
