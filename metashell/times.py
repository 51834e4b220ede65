"""The one time format of metashell's own output, and the calendar it rests on.

Every time metashell prints (``log``, ``history``, ``diff`` headers, ``watch``, ``at``, the tree's
``...Iso`` twins, the TUI) is ``2023-11-14T22:13:20.120Z``: UTC, milliseconds always three digits,
so a column of times lines up and ``.12`` never reads as 12 ms.  Kafka's own forms (its shell's
provenance, ``ZonedDateTime`` with trailing zeros dropped) are in ``tree/javafmt.py``, which uses
the same calendar.  The calendar is computed, not taken from :mod:`datetime`, because a hostile
record's timestamp may lie far outside the years ``datetime`` holds.
"""

from __future__ import annotations

import re

__all__ = ["civil_from_days", "duration_ms", "is_duration_back", "iso_utc", "utc_fields"]

_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
# Patterns as text: ``re`` compiles each when first used and keeps it (most starts use none).
_DURATION = r"-?((?:\d{1,9}(?:ms|s|m|h|d|w))+)"
_DURATION_PART = r"(\d+)(ms|s|m|h|d|w)"


def duration_ms(text: str) -> int | None:
    """``-1h``, ``30m``, ``1h30m``, ``90s``, ``500ms`` (the sign is optional) in milliseconds, or
    None when ``text`` is not a duration."""
    m = re.fullmatch(_DURATION, text)
    if m is None:
        return None
    return sum(int(n) * _UNIT_MS[u] for n, u in re.findall(_DURATION_PART, m.group(1)))


def is_duration_back(text: str) -> bool:
    """``-1h``, ``-30m``: a point that argument parsers must not take for an option."""
    # Options ("-d") fail the cheap test first; every character that \d matches is a digit to isdigit.
    return text.startswith("-") and text[1:2].isdigit() and re.fullmatch(_DURATION, text) is not None


def civil_from_days(z: int) -> tuple[int, int, int]:
    """(year, month, day) of the proleptic Gregorian date ``z`` days after 1970-01-01
    (Howard Hinnant's algorithm; works far outside Python's datetime range)."""
    z += 719468
    era = z // 146097  # floor division (the C++ original adjusts by hand)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def utc_fields(epoch_ms: int) -> tuple[str, int, int, int, int, int, int]:
    """(year as Java prints it, month, day, hour, minute, second, millisecond) in UTC: years past
    9999 get a ``+``, negative years a ``-``, as ``java.time`` does."""
    days, ms_of_day = divmod(epoch_ms, 86_400_000)
    y, mo, d = civil_from_days(days)
    secs, ms = divmod(ms_of_day, 1000)
    hh, rem = divmod(secs, 3600)
    mm, ss = divmod(rem, 60)
    if 0 <= y <= 9999:
        year = f"{y:04d}"
    elif y > 9999:
        year = f"+{y}"
    else:
        year = f"-{-y:04d}"
    return year, mo, d, hh, mm, ss, ms


def iso_utc(ms: int | None) -> str | None:
    """``2023-11-14T22:13:20.120Z``; None for None or a negative time (Kafka's "unknown", -1)."""
    if ms is None or ms < 0:
        return None
    year, mo, d, hh, mm, ss, frac = utc_fields(ms)
    return f"{year}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}.{frac:03d}Z"
