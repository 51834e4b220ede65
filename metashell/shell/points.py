"""Points of a log that a command takes without moving the session there: ``log --from -1h``,
``history PATH --to 2026-11-22T03:55``.  ``at`` and ``--at`` take the same words (an offset, an
ISO time, ``@epoch-ms``, or a duration before the log's end), resolved by the same code
(``image.timepoint``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metashell.errors import MetashellError
from metashell.numbers import is_int, parse_int

from .spec import CommandError, Option, Parsed

if TYPE_CHECKING:
    from metashell.image.timepoint import BeforeEarliest

    from .session import Shell

FROM_OPT = Option(
    ("--from",),
    "from",
    "First record to show: an offset, an ISO time, or a duration before the log's end (-1h).",
    "POINT",
)
TO_OPT = Option(("--to",), "to", "Last record to show: an offset, a time or a duration.", "POINT")


def point_option(shell: Shell, p: Parsed, name: str) -> int | None:
    """``--from``/``--to``: an offset as typed, or a time or duration resolved to one.  A time
    names the image after the last batch at or before it, so ``--from TIME`` starts after that."""
    raw = p.opts.get(name)
    if raw is None:
        return None
    text = str(raw)
    if is_int(text):
        return _checked_offset(shell, p, name, parse_int(text))
    if shell.travel is None:
        raise CommandError(f"{p.spec.name}: --{name} {raw}: a time needs a file source (-d or -s)")
    from metashell.image.timepoint import BeforeEarliest  # a time or duration: the files are read anyway

    try:
        offset = shell.travel.offset_of(text)
    except BeforeEarliest as e:
        return _from_the_earliest(shell, p, name, raw, e)
    except MetashellError as e:
        raise CommandError(f"{p.spec.name}: --{name} {str(e).removeprefix('at: ')}") from None
    return offset + 1 if name == "from" else offset


def _checked_offset(shell: Shell, p: Parsed, name: str, offset: int) -> int:
    """An offset typed: one before what the files can rebuild starts there (``--from``) or is
    explained as ``--at`` explains it (``--to``: nothing there to show, and exit 0 said nothing)."""
    if shell.travel is None:
        return offset
    from metashell.image.timepoint import BeforeEarliest, PointError

    try:
        shell.travel.offset_of(str(offset))
    except BeforeEarliest as e:
        return _from_the_earliest(shell, p, name, offset, e)
    except PointError:
        pass  # past the end, or in a stretch between snapshots: the command reads what is there
    return offset


def _from_the_earliest(shell: Shell, p: Parsed, name: str, raw: object, e: BeforeEarliest) -> int:
    """A point before the oldest record on disk: ``--from`` starts at the earliest point the files
    can rebuild, and says so; ``--to`` (nothing there to show) is explained as ``--at`` explains it."""
    if name != "from" or e.earliest is None:
        raise CommandError(f"{p.spec.name}: --{name} {str(e).removeprefix('at: ')}") from None
    shell.note(
        f"{p.spec.name}: --from {raw} is before the oldest record on disk: from offset {e.earliest}, "
        "the earliest these files can rebuild (retention deleted what came before)"
    )
    return e.earliest
