"""Time travel in a live session (``-q``): ``at`` and ``diff --from/--to`` over what the session has
applied since the snapshot it loaded.

A directory's session travels over its files (:class:`~metashell.shell.travel.Traveller`); a live
session has no files, but its loader journals every change it applies (``image/timeline.py``), so
its one image can be moved back along that journal and forward again, in place.  While it stands
at an earlier point the session holds: what the leader commits meanwhile waits in the session's
queue (bounded: the live thread stops fetching when it is full, as for a REPL left at its prompt)
and is applied when ``at`` alone brings the image back to the end, where it follows the log again.

Points are batch ends: the journal has no file to replay part of a batch from, so an offset inside
a batch shows the state after the batch before it (``at`` says which offset it shows).  How far back
a session can go: to its snapshot, or to the oldest change its bounded journal keeps
(``image.live_feed.MAX_JOURNAL_ENTRIES``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from metashell.image.timepoint import BeforeEarliest, PointError, parse_point
from metashell.times import iso_utc
from metashell.tree import Node

if TYPE_CHECKING:
    from metashell.image.live_feed import LiveSession

__all__ = ["LiveTravel"]


class LiveTravel:
    """What ``at`` and ``diff`` need of a source (:class:`~metashell.shell.travel.Moves`), for a
    live session: ``root`` is the session's tree, which reads the image wherever it stands."""

    def __init__(self, session: LiveSession, root: Node) -> None:
        self._session = session
        self._root = root

    def offset_of(self, text: str) -> int:
        """The offset a point names, among what the session applied since its snapshot: an offset,
        a time (the last batch appended at or before it) or a duration before the last batch."""
        timeline = self._session.journal()
        kind, value = parse_point(text)
        start = timeline.start if timeline is not None else self._session.image.provenance.offset
        seen = (
            f"this live session has applied the log from offset {start} on "
            "(the snapshot it loaded, or the oldest change it keeps)"
        )
        if kind == "offset":
            if value < start:
                raise BeforeEarliest(f"at: {text}: before what {seen}", start)
            return value
        times = [] if timeline is None else timeline.batch_times()
        if not times:
            raise PointError(f"at: {text}: a time names a batch, and {seen}: no batch since")
        ms = value if kind == "time" else max(ts for _o, ts in times) - value
        best = max((last for last, ts in times if 0 <= ts <= ms), default=None)
        if best is None:
            raise BeforeEarliest(
                f"at: {text}: before what {seen}; its oldest batch was appended at {iso_utc(times[0][1])}",
                start,
            )
        return best

    def move(self, text: str | None) -> tuple[Node, str | None]:
        """Move the image to ``text`` and hold it there (None: back to the end, following again)."""
        offset = self._session.travel(None if text is None else self.offset_of(text))
        return self._root, None if self._session.held_at is None else f"@{offset}"

    def visit(self, text: str | None) -> AbstractContextManager[Node]:
        """The root at ``text`` for the duration of a ``with`` block (``diff``); then back."""
        return self._visiting(None if text is None else self.offset_of(text))

    @contextmanager
    def _visiting(self, offset: int | None) -> Iterator[Node]:
        home = self._session.held_at
        try:
            self._session.travel(offset)  # None: the end of the log (what waited is applied)
            yield self._root
        finally:
            self._session.travel(home)

    def untold(self, warnings: Iterable[object]) -> list[str]:
        """A live session tells its warnings as they arrive: none is left for a move to tell."""
        return []

    def end_warnings_untold(self) -> list[str]:
        return []
