"""Time travel of an opened source (:class:`Traveller`): ``at`` moves the session's image to
another point of its log and back, and ``diff`` looks at another point without moving it."""

from __future__ import annotations

import _thread
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Protocol

from metashell.image.image import MetadataImage
from metashell.image.loader import LoadResult, rebuild_at
from metashell.log.directory import ReadPlan
from metashell.log.plans import log_plan
from metashell.tree import Node, build_root

if TYPE_CHECKING:
    from metashell.image.timepoint import ResolvedPoint

Warn = Callable[[str], None]
Resolve = Callable[..., "ResolvedPoint"]
"""``resolve(text, index=None)``: the offset a point names (``index``: a load's batch index, if any)."""


def one_line(text: object) -> str:
    """``text`` with its whitespace runs made one space (a warning is one line)."""
    return " ".join(str(text).split())


class Moves(Protocol):
    """What ``at`` and ``diff --from/--to`` need of a source: move the session to a point and back,
    look at a point for a while, name a point's offset.  A directory's or file's
    :class:`Traveller` (over its files) and a live session's ``LiveTravel`` (over what it has
    applied, ``shell/live_travel.py``) are the two."""

    def offset_of(self, text: str) -> int: ...

    def move(self, text: str | None) -> tuple[Node, str | None]: ...

    def visit(self, text: str | None) -> AbstractContextManager[Node]: ...

    def untold(self, warnings: Iterable[object]) -> list[str]: ...

    def end_warnings_untold(self) -> list[str]: ...


class Traveller:
    """Moves a session to another point of its log (``at OFFSET|TIME``) and back (``at``), and lets
    a command look at another point without moving the session (:meth:`visit`, for ``diff``).

    From the newest snapshot to the end of the log the load's journal reaches every offset
    (``image/timeline.py``): the session's one image is moved there in place, at the cost of the
    changes in between (a few hundred ms across a million-record log), for ~150 bytes per change
    kept in memory.  Points before the newest snapshot are rebuilt from an older snapshot plus the
    log (``rebuild_at``); the last :data:`KEEP` of those stay in memory, each a whole image.
    """

    KEEP = 2

    def __init__(
        self,
        end: LoadResult | None,
        resolve: Resolve,
        load_end: Callable[[], LoadResult],
        info: dict[str, str],
        redact: bool,
        told: Iterable[object] = (),
    ) -> None:
        """``end``: the end-of-log load when the session opened there (else it is loaded on demand).
        ``told``: the warnings the session told when it opened (not told again)."""
        self._resolve = resolve
        self._load_end = load_end
        self._info = info
        self._redact = redact
        self._end = end
        # each warning about the files is told once a session: at opening, or when a command (or
        # `at`) first reads the part of the log it is about
        self._told = {one_line(w) for w in told}
        self._rebuilt: dict[int, Node] = {}
        self._home: int | None = None  # where the session stands (None: the end of the log)
        # the TUI loads the end in a thread behind its first screen; a command asking for it then
        # waits for that load instead of starting a second one
        self._end_lock = _thread.allocate_lock()  # _thread's: one-shot mode never imports threading
        self._told_lock = _thread.allocate_lock()

    def offset_of(self, text: str) -> int:
        """The offset a point names (an offset, a time, or a duration before the log's end); also
        for commands that take a point without moving there (``log --from -1h``)."""
        return self._resolve(text, self._end.index if self._end is not None else None).offset

    def end(self) -> LoadResult:
        """The load up to the end of the log (made once, by the first caller; any thread)."""
        with self._end_lock:
            if self._end is None:
                self._end = self._load_end()
            return self._end

    def end_warnings_untold(self) -> list[str]:
        """The warnings of the end-of-log load not told yet: after the session opened at an earlier
        point (``--at``, the TUI's snapshot first), a session moving to the end must not pass a torn
        or damaged tail off as a whole one.  Empty before the end is loaded."""
        end = self._end
        return [] if end is None else self.untold(end.warnings)

    def untold(self, warnings: Iterable[object]) -> list[str]:
        """The one-line forms of ``warnings`` this session has not told yet, now counted as told
        (a command reading the files itself -- ``history``, ``log`` -- hears what the end's load
        would say; a session opened ``--at`` an earlier point has not said it)."""
        with self._told_lock:  # the TUI's catch-up and a command may both ask
            lines = [line for line in dict.fromkeys(map(one_line, warnings)) if line not in self._told]
            self._told.update(lines)
        return lines

    def _last_offset(self) -> int:
        """The log's last offset (the journal's end: the image itself moves)."""
        end = self.end()
        return end.timeline.end if end.timeline is not None else end.image.provenance.offset

    def move(self, text: str | None) -> tuple[Node, str | None]:
        """Move the session to ``text`` (an offset or time; None: the end of the log).  Returns the
        root there and its label (``@42``; None at the end)."""
        offset = None if text is None else self.offset_of(text)
        root, offset = self._root_at(offset)
        self._home = offset
        return root, None if offset is None else f"@{offset}"

    def visit(self, text: str | None) -> AbstractContextManager[Node]:
        """The root at ``text`` for the duration of a ``with`` block; the session stays where it is
        (the image is put back afterwards: read what you need inside the block)."""
        return self._visiting(None if text is None else self.offset_of(text))

    @contextmanager
    def _visiting(self, offset: int | None) -> Iterator[Node]:
        try:
            yield self._root_at(offset)[0]
        finally:
            self._root_at(self._home)

    @contextmanager
    def log_from(self, first: int) -> Iterator[tuple[ReadPlan, MetadataImage] | None]:
        """For ``log --from FIRST``: the segments from ``first`` on and the image just before it,
        when the journal reaches that point (None otherwise: read from a snapshot instead)."""
        end = self.end()
        timeline, d = end.timeline, end.plan.directory
        if timeline is None or d is None or not timeline.can_reach(first - 1):
            yield None
            return
        with self._visiting(first - 1) as root:
            yield log_plan(d, first, end.index), root.ctx.image

    def _root_at(self, offset: int | None) -> tuple[Node, int | None]:
        end = self.end()
        last = self._last_offset()
        if offset is not None and last >= 0 and offset >= last:
            offset = None
        timeline = end.timeline
        if timeline is not None and timeline.can_reach(offset):
            timeline.move_to(offset)
            return self._root_of(end.image), offset
        if offset is None:
            return self._root_of(end.image), None
        root = self._rebuilt.pop(offset, None)
        if root is None:
            root = self._root_of(rebuild_at(end, offset).image)
        self._rebuilt[offset] = root
        while len(self._rebuilt) > self.KEEP:
            self._rebuilt.pop(next(iter(self._rebuilt)))
        return root, offset

    def _root_of(self, image: MetadataImage) -> Node:
        return build_root(image, source_info=self._info, redact=self._redact)
