"""How far the load in progress has got: bytes of the plan read and records handed over.

A million-partition directory takes seconds to load, and a screen that says nothing for seconds
looks hung at 3 a.m.  The reader keeps :data:`LOAD` up to date as it goes (two stores per batch);
whoever shows progress (the shell's line on stderr, ``shell/progress_line.py``) polls it from another
thread.  Nothing here ever writes to a terminal, and nothing waits on it.
"""

from __future__ import annotations

import os

__all__ = ["LOAD", "LoadProgress"]


class LoadProgress:
    """Counters of the current read: ``done_bytes`` of finished files, ``position`` in the file being
    read, ``step_records`` handed over from it, ``done_records`` before it."""

    __slots__ = ("done_bytes", "done_records", "position", "sizes", "step_records", "total_bytes")

    def __init__(self) -> None:
        self.total_bytes = self.done_bytes = self.position = 0
        self.done_records = self.step_records = 0
        self.sizes: tuple[int, ...] = ()

    def begin(self, files: list[tuple[str | os.PathLike[str], int]]) -> None:
        """A plan's files, each with where reading starts in it."""
        self.sizes = tuple(max(0, _size_of(path) - start) for path, start in files)
        self.total_bytes, self.done_bytes, self.position = sum(self.sizes), 0, 0
        self.done_records = self.step_records = 0

    def enter(self, index: int, records_so_far: int) -> None:
        """The reader moves to file ``index`` of the plan."""
        self.done_bytes = sum(self.sizes[:index])
        self.position, self.step_records, self.done_records = 0, 0, records_so_far

    def at(self, position: int, records_so_far: int) -> None:
        """The reader is at ``position`` of its file, with ``records_so_far`` handed over in all."""
        self.position, self.step_records = position, records_so_far - self.done_records

    @property
    def bytes_read(self) -> int:
        return min(self.total_bytes, self.done_bytes + self.position)

    @property
    def records(self) -> int:
        return self.done_records + self.step_records


def _size_of(path: str | os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


LOAD = LoadProgress()
"""The one load whose progress is shown (a session opens one source at a time)."""
