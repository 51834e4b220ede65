"""``watch``: each change under a path as it happens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metashell.times import iso_utc as iso_time
from metashell.tree import join
from metashell.tree.paths import normalize

from ...safe_text import visible
from ..changes import as_json, object_changes, values_at
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed, Positional, seconds_option

if TYPE_CHECKING:
    from ..session import Shell


def run_watch(shell: Shell, p: Parsed) -> None:
    """Print each change under PATH as it is committed (live) or appended (a directory a running
    node writes to), until Ctrl-C or ``--count`` changes.  An object created or deleted is one
    line, not one per field (fourteen lines of ``None -> ...`` for a new partition)."""
    if shell.refresh is None:
        raise CommandError("watch: needs a live source (-q) or a metadata directory (-d)")
    comps = normalize(shell.cwd, p.args[0].text) if p.args else []
    count = p.opts.get("count")
    pause = seconds_option(p, "interval", default=1.0)
    redact = shell.settings.redact
    before = values_at(shell.root, comps, redact)
    shell.note(f"watching {join(comps)} from offset {shell.root.ctx.image.provenance.offset} (Ctrl-C stops)")
    seen = 0
    while True:
        if not shell.pause(pause):
            return
        new_root = shell.refresh()
        if new_root is not None:
            shell.replace_root(new_root)
        after = values_at(shell.root, comps, redact)
        prov = shell.root.ctx.image.provenance
        when = iso_time(prov.timestamp) or "-"
        for kind, path, old, new in object_changes(before, after, len(comps)):
            if shell.wants_json(p):
                shell.emit_json(
                    {
                        "offset": prov.offset,
                        "time": when,
                        "path": path,
                        "change": kind,
                        "old": as_json(path, old),
                        "new": as_json(path, new),
                    }
                )
            elif kind in ("created", "deleted"):
                shell.write(f"{prov.offset:>8}  {when}  {visible(path)}: {kind}\n")
            else:
                shell.write(
                    f"{prov.offset:>8}  {when}  {visible(path)}: {visible(str(old))} -> {visible(str(new))}\n"
                )
            shell.out.flush()
            seen += 1
            if isinstance(count, int) and seen >= count:
                return
        before = after


WATCH_COMMAND = Command(
    CommandSpec(
        "watch",
        "Print each change under PATH as it happens (live, or a directory a node appends to).",
        Positional("path", "What to watch (default: the whole tree but /image).", "?"),
        (
            Option(("--count",), "count", "Stop after this many changes.", "N", type=int),
            Option(("--interval",), "interval", "Seconds between looks (default 1).", "SECONDS"),
            JSON_OPT,
        ),
        notes=(
            (
                "Each line: the offset and time the image had reached, the path, old -> new. Ctrl-C "
                "stops. Watch a narrow path on a big cluster: each look compares every value under it."
            ),
        ),
    ),
    run=run_watch,
    tui=TuiMode.STREAM,
)
