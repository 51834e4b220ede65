"""``log``: the metadata records themselves, a summary each."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from metashell.times import iso_utc as iso_time
from metashell.tree.redact import config_redactor, redact_record_json

from ...safe_text import visible
from ..points import FROM_OPT, TO_OPT, point_option
from ..record_types import TypeFilter, parse_type_filter, record_type_words
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed

if TYPE_CHECKING:
    from metashell.image.changelog import LogEntry

    from ..session import Shell

NOOP = "NoOpRecord"


def run_log(shell: Shell, p: Parsed) -> None:
    """The records themselves, with a one-line summary each (``--json``: kafka-dump-log's form)."""
    from metashell.image.changelog import iter_log  # imported when run: one-shot starts stay fast

    if shell.full_plan is None:
        raise CommandError("log: needs a log: -d, -s, or -q (what the session has applied)")
    first, last = point_option(shell, p, "from"), point_option(shell, p, "to")
    raw_types = p.opts.get("type")
    try:
        kinds = parse_type_filter(raw_types) if isinstance(raw_types, str) else TypeFilter(None, frozenset())
    except ValueError as e:
        raise CommandError(str(e)) from None
    types, exclude = kinds.include, kinds.exclude
    if not p.opts.get("all") and (types is None or NOOP not in types):
        exclude = exclude | {NOOP}  # an idle controller writes one every 500 ms: noise, unless asked
    redact = config_redactor(shell.settings.redact)
    if first is not None and shell.travel is not None:
        with shell.travel.log_from(first) as fast:  # the journaled image at first - 1, no snapshot read
            if fast is not None:
                plan, base = fast
                _print_log(
                    shell,
                    p,
                    iter_log(
                        plan,
                        first=first,
                        last=last,
                        types=types,
                        exclude=exclude,
                        base=base,
                        payloads=shell.wants_json(p),
                        salvage=shell.salvage,
                        redact=redact,
                        warn=shell.heard,
                    ),
                )
                return
    _print_log(
        shell,
        p,
        iter_log(
            shell.full_plan(first),
            first=first,
            last=last,
            types=types,
            exclude=exclude,
            payloads=shell.wants_json(p),
            salvage=shell.salvage,
            redact=redact,
            warn=shell.heard,
        ),
    )


def _print_log(shell: Shell, p: Parsed, entries: Iterator[LogEntry]) -> None:
    batch: list[str] = []
    for entry in entries:
        if shell.wants_json(p):
            shell.emit_json(_redacted_entry(entry.as_json(), shell.settings.redact, entry.record))
            continue
        mark = {"open": " [txn]", "aborted": " [txn aborted]"}.get(entry.transaction or "", "")
        batch.append(
            f"{entry.offset:>8}  {iso_time(entry.timestamp) or '-'}  epoch {entry.epoch:<3} "
            f"{entry.record:<31} {visible(entry.summary)}{mark}"
        )
        if len(batch) >= 256:
            shell.write("\n".join(batch) + "\n")
            batch.clear()
    if batch:
        shell.write("\n".join(batch) + "\n")


def _redacted_entry(doc: dict[str, object], redact: bool, record: str) -> dict[str, object]:
    """``log --json``: a record's secrets (a sensitive config value, a SCRAM credential's salt and
    keys) are redacted like everywhere else."""
    data = doc.get("data")
    if redact and isinstance(data, dict):
        doc = {**doc, "data": redact_record_json(record, data)}
    return doc


LOG_COMMAND = Command(
    CommandSpec(
        "log",
        "List the metadata records themselves, with a summary each.",
        options=(
            FROM_OPT,
            TO_OPT,
            Option(("--all",), "all", "Also NoOpRecords (hidden unless --type names them)."),
            Option(
                ("--type",),
                "type",
                "Only these record types (PartitionChangeRecord or "
                "PARTITION_CHANGE_RECORD, comma-separated).",
                "TYPE",
            ),
            JSON_OPT,
        ),
        notes=(
            (
                "--json prints each record as kafka-dump-log --cluster-metadata-decoder does (type, "
                "version, data), with its batch's file, position and offsets."
            ),
        ),
    ),
    run=run_log,
    reads_log=True,
    option_values={"type": lambda _context: record_type_words()},
    tui=TuiMode.INLINE,
    travels=True,
    moves_image=True,
)
