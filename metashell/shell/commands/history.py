"""``history``: the commands typed, or every record that changed a path."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metashell.errors import MetashellError
from metashell.numbers import is_int, parse_int
from metashell.times import iso_utc as iso_time
from metashell.tree import join
from metashell.tree.paths import normalize
from metashell.tree.redact import config_redactor

from ...safe_text import visible
from ..points import FROM_OPT, TO_OPT, point_option
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Parsed, Positional

if TYPE_CHECKING:
    from ..session import Shell


def run_history(shell: Shell, p: Parsed) -> None:
    """Kafka's ``history [N]`` (the commands typed), or ``history PATH``: every record that
    changed a topic, partition, broker or config, oldest first, with old -> new values."""
    arg = p.args[0].literal if p.args else ""
    if arg and not is_int(arg) and (shell.full_plan is not None or arg.startswith("/")):
        _metadata_history(shell, p)
        return
    if arg and shell.full_plan is not None and _in_a_topic(shell.cwd) and is_int(arg):
        _metadata_history(shell, p)  # "history 0" in /topics/orders: partition 0, not 0 commands
        return
    count = len(shell.history)
    if p.args:
        raw = p.args[0].literal
        try:
            count = parse_int(raw)
        except ValueError:
            raise CommandError(
                f"history: argument numEntriesToShow: could not convert '{raw}' to "
                f'Integer (For input string: "{raw}")'
            ) from None
    count = max(0, min(count, len(shell.history)))
    start = len(shell.history) - count
    for i in range(start, len(shell.history)):
        if shell.wants_json(p):
            shell.emit_json({"index": i, "line": shell.history[i]})
        else:
            shell.write(f"{i: 5d}  {shell.history[i]}\n")


def _in_a_topic(cwd: str) -> bool:
    comps = normalize(cwd, ".")
    return len(comps) == 2 and comps[0] in ("topics", "topicIds")


def _metadata_history(shell: Shell, p: Parsed) -> None:
    from metashell.image.history import history, parse_target  # imported when run: one-shot starts stay fast

    if shell.full_plan is None:
        raise CommandError(
            "history: a PATH's history needs a log: -d, -s, or -q (what the session has applied)"
        )
    typed = p.args[0].text
    comps = normalize(shell.cwd, typed)
    try:
        target = parse_target(comps)
    except MetashellError as e:
        raise CommandError(f"history: {typed}: {e}") from None
    first, last = point_option(shell, p, "from"), point_option(shell, p, "to")
    found = False
    for change in history(shell.full_plan(None), target, config_redactor(shell.settings.redact), shell.heard):
        if (first is not None and change.offset < first) or (last is not None and change.offset > last):
            continue
        found = True
        if shell.wants_json(p):
            shell.emit_json({"path": join(comps), **change.as_json()})
            continue
        when = iso_time(change.timestamp) or "-"
        where = (
            " (snapshot: the state at this offset; older records are not on disk)"
            if change.from_snapshot
            else ""
        )
        shell.write(
            f"{change.offset:>8}  {when}  epoch {change.epoch:<3} {change.record:<31} "
            f"{visible(change.summary)}{where}\n"
        )
    if not found:
        near = shell.nearest_path(typed)  # a typo reads as "never changed": say what is near
        hint = f" (no such path now; did you mean {near}?)" if near else ""
        shell.error(f"history: {typed}: no record in these files changed it{hint}")


HISTORY_COMMAND = Command(
    CommandSpec(
        "history",
        "Print command history, or the history of a topic, partition, broker or config.",
        Positional(
            "numEntriesToShow",
            "The number of entries to show; or a PATH (/topics/orders/3, "
            "/brokers/2, /configs/topic/orders/retention.ms) to list every record that changed it.",
            "?",
        ),
        (FROM_OPT, TO_OPT, JSON_OPT),
        shell_only=True,
    ),
    run=run_history,
    reads_log=True,
    tui=TuiMode.WORKER,
    travels=True,
)
