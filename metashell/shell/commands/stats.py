"""``stats``: how the metadata log behaves over time (``image/stats.py``): records of each type per
window, the topics, partitions and brokers that churn most and how, the snapshots, the growth."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from metashell.times import iso_utc

from ...safe_text import visible
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed

if TYPE_CHECKING:
    from metashell.image.stats import LogStats

    from ..session import Shell

#: How many types a window's line names (``--json`` has them all).
WINDOW_TYPES = 4

#: ``--window``'s words and their length in seconds.
WINDOWS = {"1m": 60, "10m": 600, "1h": 3600, "6h": 21600, "1d": 86400}


def run_stats(shell: Shell, p: Parsed) -> None:
    from metashell.image.changelog import iter_log  # imported when run: one-shot starts stay fast
    from metashell.image.stats import collect, snapshot_stat
    from metashell.protocol.uuid import uuid_to_str

    if shell.full_plan is None:
        raise CommandError("stats: needs a log: -d, -s, or -q (what the session has applied)")
    window = WINDOWS[str(p.opts.get("window") or "1h")]
    top_opt = p.opts.get("top")
    top = top_opt if isinstance(top_opt, int) else 10
    if top < 1:
        raise CommandError(f"stats: --top must be 1 or more, not {top}")
    plan = shell.full_plan(None)
    listing = shell.source.listing if shell.source is not None else None
    directory = listing() if listing is not None else None
    snapshots = []
    log_bytes = 0
    if directory is not None:
        snapshots = [
            snapshot_stat(s.path, s.end_offset, s.epoch, s.size)
            for s in directory.snapshots
            if not s.is_bootstrap
        ]
        log_bytes = sum(seg.size for seg in directory.segments)
    else:  # one file (-s): its own size, if it is a log segment
        log_bytes = sum(_size(step.path) for step in plan.steps if step.kind == "log")
    names = {uuid_to_str(t.id): t.name for t in shell.image().topics.by_id.values()}
    stats = collect(
        iter_log(plan, payloads=True, salvage=shell.salvage, warn=shell.heard),
        window_ms=window * 1000,
        topic_names=names,
        snapshots=snapshots,
        log_bytes=log_bytes,
    )
    if shell.wants_json(p):
        shell.emit_json(stats.as_json(top))
    else:
        shell.write("".join(visible(line) + "\n" for line in text_lines(stats, top)))


def _size(path: object) -> int:
    try:
        return os.path.getsize(str(path))
    except OSError:
        return 0


def text_lines(stats: LogStats, top: int) -> list[str]:
    """The text of ``stats``: the log's extent, records per window by type, the churners, the
    snapshots and the growth."""
    from metashell.image.stats import top_churn

    if not stats.records:
        return ["no records in the log (the state is in its snapshot alone)"] + _snapshot_lines(stats)
    span = stats.span_ms()
    extent = (
        f"log: offsets {stats.first_offset}-{stats.last_offset}, {stats.records:,} records in "
        f"{stats.batches:,} batches, {iso_utc(stats.first_ms) or '-'} .. {iso_utc(stats.last_ms) or '-'} "
        f"({_duration(span)})"
    )
    out = [
        extent,
        "",
        "records by type:",
        *(f"  {kind:<40} {n:>10,}" for kind, n in _ranked(stats.by_type)),
        "",
        f"records per {_duration(stats.window_ms)} (UTC), the {WINDOW_TYPES} most frequent types of each:",
    ]
    for start, counts in sorted(stats.windows.items()):
        ranked = _ranked(counts)
        more = f", {len(ranked) - WINDOW_TYPES} more types" if len(ranked) > WINDOW_TYPES else ""
        shown = ", ".join(f"{k} {v:,}" for k, v in ranked[:WINDOW_TYPES])
        out.append(f"  {iso_utc(start)}  {sum(counts.values()):>8,}  {shown}{more}")
    out += ["", f"churn (top {top}):"]
    for title, table in (
        ("topics", stats.topics),
        ("partitions", stats.partitions),
        ("brokers", stats.brokers),
    ):
        rows = top_churn(table, top)
        if not rows:
            out.append(f"  {title}: none")
            continue
        out.append(f"  {title}:")
        for key, counts in rows:
            name = f"{key[0]}/{key[1]}" if isinstance(key, tuple) else str(key)
            out.append(f"    {name:<40} {sum(counts.values()):>6,}  {_counts(counts)}")
    out += ["", *_snapshot_lines(stats), ""]
    doc = stats.growth()
    per_hour = (
        f"{doc['recordsPerHour']:,} records/h, {doc['bytesPerHour'] / 1e6:,.2f} MB/h"
        if doc["recordsPerHour"] is not None
        else "no time span"
    )
    if stats.log_bytes:
        out.append(f"growth: {per_hour} ({stats.log_bytes:,} bytes of segments)")
    else:
        out.append("growth: no log segment was read (a snapshot alone is the state at one point)")
    return out


def _snapshot_lines(stats: LogStats) -> list[str]:
    if not stats.snapshots:
        return ["snapshots: none"]
    out = [f"snapshots: {len(stats.snapshots)}"]
    last = None
    for s in stats.snapshots:
        since = ""
        if last is not None and s.last_contained_ms is not None and last.last_contained_ms is not None:
            since = f", {_duration(s.last_contained_ms - last.last_contained_ms)} and {s.end_offset - last.end_offset:,} records after the one before"
        when = iso_utc(s.last_contained_ms) if s.last_contained_ms is not None else "time unknown"
        out.append(f"  {s.file}  {s.bytes:>12,} bytes  up to {when}{since}")
        last = s
    return out


def _ranked(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in _ranked(counts))


def _duration(ms: int) -> str:
    seconds = ms // 1000
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0 or seconds >= 10 * size:
            return f"{seconds / size:g}{unit}" if seconds % size == 0 else f"{seconds / size:.1f}{unit}"
    return f"{seconds}s"


STATS_COMMAND = Command(
    CommandSpec(
        "stats",
        "Say how the metadata log behaves over time: records per type and window, what churns most, snapshots, growth.",
        options=(
            Option(
                ("--window",),
                "window",
                "The window records are counted in (default 1h).",
                "WINDOW",
                choices=tuple(WINDOWS),
            ),
            Option(
                ("--top",),
                "top",
                "How many of the most churning topics, partitions and brokers (default 10).",
                "N",
                type=int,
            ),
            JSON_OPT,
        ),
        notes=(
            (
                "Counts every record of the log on disk (NoOpRecords too: log --all lists the same "
                "records); records a snapshot holds are counted in its size, not by type. Churn: "
                "a topic's or partition's creation, leader, ISR, ELR, reassignment, directories and "
                "config changes, a broker's registrations, fencing, controlled shutdowns and config."
            ),
        ),
    ),
    run=run_stats,
    reads_log=True,
    tui=TuiMode.WORKER,
)
