"""Points in a metadata log's history: ``--at OFFSET|ISO-TIME`` and the shell's ``at``.

A point is a log offset; a time names the last batch appended at or before it (its max timestamp,
what Kafka's time index uses).  Which offsets can be rebuilt depends on what the directory still
has: from offset 0 when the log starts there, else from the end of the oldest snapshot.  Asking for
an earlier point is an error that names the earliest reachable offset -- a partial image would
silently lack every topic created before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from metashell.errors import MetashellError
from metashell.log.directory import MetadataLogDir
from metashell.log.headers import BatchHeader, batch_headers, merged_ranges, offset_spans
from metashell.log.reader import BatchIndexEntry
from metashell.numbers import is_int, is_natural
from metashell.times import duration_ms, iso_utc

__all__ = [
    "PointError",
    "ResolvedPoint",
    "earliest_offset",
    "parse_point",
    "resolve_in_dir",
    "resolve_in_file",
]


class PointError(MetashellError):
    """A point in time that is malformed or outside what the files hold."""


class BeforeEarliest(PointError):
    """A point before the oldest the files hold; ``earliest``: the first offset they can rebuild
    (None: unknown).  ``log --from -1h`` on a 40-minute log starts there instead of failing."""

    def __init__(self, message: str, earliest: int | None = None) -> None:
        super().__init__(message)
        self.earliest = earliest


class ResolvedPoint(NamedTuple):
    """``offset`` to rebuild up to (inclusive)."""

    offset: int

    def label(self) -> str:
        return f"@{self.offset}"


def parse_point(text: str) -> tuple[str, int]:
    """``("offset", N)``, ``("time", epoch ms)`` or ``("ago", ms)``.  Times are ISO 8601
    (``2026-11-22T03:55``, ``...Z``, ``...+02:00``; no zone means UTC) or epoch milliseconds written
    as ``@1700000000000``.  A duration (``-1h``, ``30m``, ``1h30m``, ``90s``; the sign is optional)
    counts back from the time of the log's last batch, not from now: a copy taken last week reads
    the same today."""
    t = text.strip()
    if is_int(t):
        value = int(t)
        if value < 0:
            raise PointError(f"at: {text}: an offset is 0 or more (for a time before the end, -1h or -30m)")
        return "offset", value
    if t.startswith("@") and is_natural(t[1:]):
        return "time", int(t[1:])
    ago = duration_ms(t)
    if ago is not None:
        return "ago", ago
    import datetime as _dt  # only for an ISO time: a one-shot start does not pay for it

    try:
        when = _dt.datetime.fromisoformat(t.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise PointError(
            f"at: {text}: not an offset, an ISO time (2026-11-22T03:55:00Z), @epoch-ms or a time "
            "before the log's end (-1h, 30m)"
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


def _log_end_time(headers: list[BatchHeader], asked: str) -> int:
    """The time a duration counts back from: the newest batch's max timestamp."""
    newest = max((h.max_timestamp for h in headers if h.max_timestamp >= 0), default=None)
    if newest is None:
        raise PointError(
            f"at: {asked}: a duration counts back from the log's last batch, and no batch has a time"
        )
    return newest


def _offset_at(times: list[tuple[int, int]], ms: int, asked: str) -> int:
    best = None
    for last, ts in times:
        if ts <= ms and (best is None or last > best):
            best = last
    if best is None:
        first = min((ts for _l, ts in times if ts >= 0), default=None)
        when = "" if first is None else f" (the oldest batch left was appended at {iso_utc(first)})"
        raise BeforeEarliest(f"at: {asked}: before the oldest batch this log still holds{when}")
    return best


def rebuildable(d: MetadataLogDir, spans: list[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """The offsets whose image ``d`` can rebuild, as inclusive ranges in order.

    A point is rebuildable from the start of the log (a log that starts at 0) or from a snapshot
    (its end offset - 1), then on through log batches without a gap.  Two snapshots with their
    segments deleted in between leave the offsets between them out: loading there would silently
    give the older snapshot's image.  ``spans``: :func:`~metashell.log.headers.offset_spans` of its
    segments, when they were read already."""
    if spans is None:
        spans = offset_spans(s.path for s in d.segments)
    ranges = [(0, spans[0][1])] if spans and spans[0][0] == 0 else []
    for snap in d.snapshots:
        if snap.is_bootstrap:
            continue
        point = snap.end_offset - 1
        reach = next((b for a, b in spans if a <= point + 1 <= b + 1), point)
        ranges.append((point, max(point, reach)))
    return merged_ranges(ranges)


def _ranges_text(ranges: list[tuple[int, int]]) -> str:
    return ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)


def resolve_in_dir(
    d: MetadataLogDir, text: str, index: Sequence[BatchIndexEntry] | None = None
) -> ResolvedPoint:
    """The offset ``text`` names in directory ``d``, checked against what ``d`` can rebuild.
    ``index``: a load's batch index, which saves reading every batch header for a time (when one of
    its batches is old enough; the batches it skipped, before the snapshot, are all older)."""
    kind, value = parse_point(text)
    if kind == "offset" and any(not s.is_bootstrap and s.end_offset - 1 == value for s in d.snapshots):
        return ResolvedPoint(value)  # a snapshot's own point is rebuildable from it: no log to read
    if kind != "offset":  # a time: every header's, read now (a node may have appended)
        headers = batch_headers(s.path for s in d.segments)
        if kind == "ago":
            kind, value = "time", _log_end_time(headers, text) - value
        known = [(e.last_offset, e.max_timestamp) for e in index or () if e.kind == "log"]
        if not any(ts <= value for _last, ts in known):
            known = [(h.last_offset, h.max_timestamp) for h in headers]
        try:
            value = _offset_at(known, value, text)
        except BeforeEarliest as e:
            reach = rebuildable(d)
            raise BeforeEarliest(str(e), reach[0][0] if reach else None) from None
    ranges = rebuildable(d)
    if not ranges:
        if d.segments:
            raise PointError(
                f"at: {text}: this directory cannot rebuild any offset: its log starts at offset "
                f"{d.segments[0].base_offset}, and no snapshot is at or before it"
            )
        raise PointError(f"at: {text}: this directory holds no log or snapshot to rebuild from")
    earliest = ranges[0][0]
    if value < earliest:
        raise BeforeEarliest(
            f"at: {text}: offset {value} is before the earliest this directory can rebuild, "
            f"offset {earliest} (older log segments were deleted after a snapshot); it can rebuild "
            f"offsets {_ranges_text(ranges)}",
            earliest,
        )
    if value <= ranges[-1][1] and not any(lo <= value <= hi for lo, hi in ranges):
        raise PointError(
            f"at: {text}: offset {value} is in a stretch no log segment of this directory covers "
            f"(deleted between two snapshots); it can rebuild offsets {_ranges_text(ranges)}"
        )
    return ResolvedPoint(value)


def resolve_in_file(path: Path, text: str) -> ResolvedPoint:
    """The offset ``text`` names in one ``.log`` or ``.checkpoint`` file (``-s``): a snapshot holds
    one point, its end offset - 1; a segment the offsets of its batches (it landed silently on the
    snapshot's end, or on the segment's first batch, whatever was asked)."""
    kind, value = parse_point(text)
    # a snapshot's offset is in its name: its headers are read only to resolve a time
    headers = batch_headers([path]) if kind != "offset" or path.name.endswith(".log") else []
    if kind == "ago":
        kind, value = "time", _log_end_time(headers, text) - value
    if kind == "time":
        value = _offset_at([(h.last_offset, h.max_timestamp) for h in headers], value, text)
    if path.name.endswith(".checkpoint") and path.name != "bootstrap.checkpoint":
        end = _snapshot_end(path.name)
        if end is not None and value != end - 1:
            raise PointError(
                f"at: {text}: a snapshot holds one point, offset {end - 1} (-d on its directory "
                "rebuilds the others)"
            )
    elif path.name.endswith(".log") and headers and value < headers[0].base_offset:
        raise PointError(
            f"at: {text}: offset {value} is before this segment's first batch, offset {headers[0].base_offset} "
            "(-d on its directory rebuilds the others)"
        )
    return ResolvedPoint(value)


def _snapshot_end(name: str) -> int | None:
    """The end offset in a snapshot's name (``<endOffset:20>-<epoch:10>.checkpoint``)."""
    head = name.split("-", 1)[0]
    return int(head) if head.isdigit() else None
