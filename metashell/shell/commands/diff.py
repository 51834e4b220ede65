"""``diff``: what differs between two points of the log, or with another source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metashell.tree.paths import normalize

from ...safe_text import visible
from ..changes import as_json, diff_values, side, values_at
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed, Positional

if TYPE_CHECKING:
    from ..session import Shell


def run_diff(shell: Shell, p: Parsed) -> None:
    """Differences between two points of the log (``--from``/``--to``, by default where the
    session is and the end) or with another source (``--with``): removed, added and changed
    values under PATH; status 1 when they differ."""
    other, start, end = p.opts.get("with"), p.opts.get("from"), p.opts.get("to")
    if other is None and start is None and end is None and shell.point is None:
        raise CommandError(
            "diff: the session is at the end of the log: give --from POINT (an offset or time; "
            "or go there with at first), or --with DIR|FILE"
        )
    if other is None and shell.moves is None:
        raise CommandError("diff: --from/--to need one source with a log: -d, -s or -q")
    if other is not None and shell.open_other is None:
        raise CommandError("diff: --with is not available here")
    comps = normalize(shell.cwd, p.args[0].text) if p.args else []
    redact = shell.settings.redact
    across_time = other is None
    if start is not None and shell.moves is not None:
        with shell.moves.visit(str(start)) as root:  # one image moves: read its values now
            left, left_at = values_at(root, comps, redact, across_time), side(root)
    else:
        left, left_at = values_at(shell.root, comps, redact, across_time), side(shell.root)
    if other is not None:
        assert shell.open_other is not None
        other_root = shell.open_other(str(other))
        right, right_at = values_at(other_root, comps, redact, across_time), side(other_root)
        right_name = str(other)
    else:
        assert shell.moves is not None
        with shell.moves.visit(None if end is None else str(end)) as root:
            right, right_at = values_at(root, comps, redact, across_time), side(root)
        right_name = f"@{end}" if end else "end"
    left_name = f"@{start}" if start is not None else (shell.point or "end")  # shell.point: "@30"
    if other is not None and left_at[0] and right_at[0] and left_at[0] != right_at[0]:
        shell.note(f"diff: warning: two clusters: {left_at[0]} and {right_at[0]}")
    differ = False
    for kind, path, old, new in diff_values(left, right):
        if not differ and not shell.wants_json(p):
            shell.write(
                f"--- {visible(left_name)} ({left_at[1]})\n+++ {visible(right_name)} ({right_at[1]})\n"
            )
        differ = True
        if shell.wants_json(p):
            shell.emit_json(
                {"path": path, "change": kind, "old": as_json(path, old), "new": as_json(path, new)}
            )
        elif kind == "changed":
            shell.write(f"-{visible(path)}: {visible(str(old))}\n+{visible(path)}: {visible(str(new))}\n")
        else:
            sign, value = ("-", old) if kind == "removed" else ("+", new)
            shell.write(f"{sign}{visible(path)}: {visible(str(value))}\n")
    if differ:
        shell.status = 1  # diff's convention: 1 when the two differ


DIFF_COMMAND = Command(
    CommandSpec(
        "diff",
        "Show what differs between two points of the log, or with another directory or file.",
        Positional("path", "Only under this path (default: the whole tree but /image).", "?"),
        (
            Option(
                ("--from",),
                "from",
                "The earlier point: an offset or time (default: where the session is).",
                "POINT",
            ),
            Option(("--to",), "to", "The later point (default: the end of the log).", "POINT"),
            Option(("--with",), "with", "Compare with this metadata directory or file instead.", "SOURCE"),
            JSON_OPT,
        ),
        notes=(
            (
                "Lines are -path: old and +path: new, one per value (a record's fields one by one); "
                "exit status 1 when something differs, as diff's."
            ),
        ),
    ),
    run=run_diff,
    tui=TuiMode.INLINE,
    travels=True,
    moves_image=True,
)
