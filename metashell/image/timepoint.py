"""Points in a metadata log's history: ``--at OFFSET|ISO-TIME`` and the shell's ``at``.

A point is a log offset; a time names the last batch appended at or before it (its max timestamp,
what Kafka's time index uses).  Which offsets can be rebuilt depends on what the directory still
has: from offset 0 when the log starts there, else from the end of the oldest snapshot.  Asking for
an earlier point is an error that names the earliest reachable offset -- a partial image would
silently lack every topic created before it.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from metashell.errors import MetashellError
from metashell.log.directory import MetadataLogDir
from metashell.log.files import iter_file_batches
from metashell.log.reader import BatchIndexEntry
from metashell.numbers import is_int, is_natural

__all__ = [
    "PointError",
    "ResolvedPoint",
    "earliest_offset",
    "iso_time",
    "parse_point",
    "resolve_in_dir",
    "resolve_in_file",
]


class PointError(MetashellError):
    """A point in time that is malformed or outside what the files hold."""


@dataclass(frozen=True)
class ResolvedPoint:
    """``offset`` to rebuild up to (inclusive)."""

    offset: int

    def label(self) -> str:
        return f"@{self.offset}"


def parse_point(text: str) -> tuple[str, int]:
    """``("offset", N)`` or ``("time", epoch ms)``.  Times are ISO 8601 (``2026-11-22T03:55``,
    ``...Z``, ``...+02:00``; no zone means UTC) or epoch milliseconds written as ``@1700000000000``."""
    t = text.strip()
    if is_int(t):
        value = int(t)
        if value < 0:
            raise PointError(f"at: {text}: an offset is 0 or more")
        return "offset", value
    if t.startswith("@") and is_natural(t[1:]):
        return "time", int(t[1:])
    try:
        when = _dt.datetime.fromisoformat(t.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise PointError(
            f"at: {text}: not an offset, an ISO time (2026-11-22T03:55:00Z) or @epoch-ms"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    return "time", int(when.timestamp() * 1000)


def earliest_offset(d: MetadataLogDir) -> int | None:
    """The earliest offset whose image this directory can rebuild (None: nothing to rebuild)."""
    candidates = [s.end_offset - 1 for s in d.snapshots if not s.is_bootstrap]
    if d.segments and d.segments[0].base_offset == 0:
        candidates.append(0)
    return min(candidates, default=None)


def _batch_times(paths: list[Path]) -> list[tuple[int, int]]:
    """(last offset, max timestamp) of every batch, from headers only (no CRC, no records)."""
    out = []
    for path in paths:
        try:
            for b in iter_file_batches(
                path, decode=False, verify_crc=False, lenient_tail=True, warn=lambda w: None
            ):
                out.append((b.base_offset + b.last_offset_delta, b.max_timestamp))
        except (OSError, MetashellError):
            continue
    return out


def _offset_at(times: list[tuple[int, int]], ms: int, asked: str) -> int:
    best = None
    for last, ts in times:
        if ts <= ms and (best is None or last > best):
            best = last
    if best is None:
        first = min((ts for _l, ts in times if ts >= 0), default=None)
        when = "" if first is None else f" (the oldest batch left was appended at {iso_time(first)})"
        raise PointError(f"at: {asked}: before the oldest batch this log still holds{when}")
    return best


def iso_time(ms: int) -> str:
    """Milliseconds since the epoch as ISO-8601 UTC text, the form ``at`` takes back."""
    return (
        _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def resolve_in_dir(
    d: MetadataLogDir, text: str, index: Sequence[BatchIndexEntry] | None = None
) -> ResolvedPoint:
    """The offset ``text`` names in directory ``d``, checked against what ``d`` can rebuild.
    ``index``: a load's batch index, which saves reading every batch header for a time (when one of
    its batches is old enough; the batches it skipped, before the snapshot, are all older)."""
    kind, value = parse_point(text)
    if kind == "time":
        known = [(e.last_offset, e.max_timestamp) for e in index or () if e.kind == "log"]
        if not any(ts <= value for _last, ts in known):
            known = _batch_times([s.path for s in d.segments])
        value = _offset_at(known, value, text)
    earliest = earliest_offset(d)
    if earliest is None:
        raise PointError(f"at: {text}: this directory holds no log or snapshot to rebuild from")
    if value < earliest:
        raise PointError(
            f"at: {text}: offset {value} is before the earliest this directory can rebuild, "
            f"offset {earliest} (older log segments were deleted after a snapshot)"
        )
    return ResolvedPoint(value)


def resolve_in_file(path: Path, text: str) -> ResolvedPoint:
    """The offset ``text`` names in one ``.log`` or ``.checkpoint`` file (``-s``)."""
    kind, value = parse_point(text)
    if kind == "time":
        value = _offset_at(_batch_times([path]), value, text)
    return ResolvedPoint(value)
