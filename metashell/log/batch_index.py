"""Where every batch read lives, kept compact: the index time travel and ``cat`` of a record use.

A directory of millions of small batches (a controller that wrote one NoOp a batch for weeks) made
the index the largest thing in memory: a named tuple of nine fields per batch, each int its own
object, about 370 bytes a batch (1.9 GB for 5 million).  Here each field is a column in a typed
``array`` and files are numbered: 45 bytes a batch.  Rows come back as :class:`BatchIndexEntry`
when they are read, so callers keep iterating and indexing as over a list.
"""

from array import array
from collections.abc import Iterator, Sequence
from typing import NamedTuple, overload

__all__ = ["BatchIndex", "BatchIndexEntry"]


class BatchIndexEntry(NamedTuple):
    """Where one batch lives, to find it again without rescanning (time travel, ``cat`` of a record)."""

    kind: str
    source: str
    position: int
    base_offset: int
    last_offset: int
    epoch: int
    max_timestamp: int
    is_control: bool
    records_count: int


class BatchIndex(Sequence[BatchIndexEntry]):
    """An append-only list of :class:`BatchIndexEntry`, stored column by column."""

    __slots__ = ("_base", "_count", "_epoch", "_file", "_last", "_names", "_numbers", "_position", "_time")

    def __init__(self) -> None:
        self._names: list[tuple[str, str]] = []  # (kind, source) by number
        self._numbers: dict[tuple[str, str], int] = {}
        self._file = array("I")
        self._position = array("q")
        self._base = array("q")
        self._last = array("q")
        self._epoch = array("i")
        self._time = array("q")
        self._count = array("i")  # records count, negated (-1 - n) for a control batch

    def append(self, row: tuple[str, str, int, int, int, int, int, bool, int]) -> None:
        """Add one batch: ``(kind, source, position, base, last, epoch, max_timestamp, control, count)``."""
        kind, source, position, base, last, epoch, max_timestamp, control, count = row
        number = self._file_number(kind, source)
        n = len(self._file)
        try:
            self._file.append(number)
            self._position.append(position)
            self._base.append(base)
            self._last.append(last)
            self._epoch.append(epoch)
            self._time.append(max_timestamp)
            self._count.append(-1 - count if control else count)
        except MemoryError:  # a column that grew alone would make every later row read past another
            for column in self._columns():
                del column[n:]
            raise

    def extend(self, kind: str, source: str, columns: "tuple[bytes, ...]") -> None:
        """Add the rows of data batches (not control) of one file given as columns: position, base,
        last, epoch, max timestamp, records count, each as the native-endian bytes of its array
        (what the native engine's batch loop hands back: no tuple per row)."""
        if len(columns) != 6:
            raise ValueError("six index columns expected")
        number = self._file_number(kind, source)
        n = len(self._file)
        rows = len(columns[0]) // 8
        try:
            self._file.extend(array("I", [number]) * rows)
            for column, data in zip(self._columns()[1:], columns, strict=True):
                column.frombytes(data)
        except MemoryError:  # as in append: every column keeps the same rows
            for column in self._columns():
                del column[n:]
            raise
        if any(len(c) != n + rows for c in self._columns()):
            for column in self._columns():
                del column[n:]
            raise ValueError("index columns of different lengths")

    def _file_number(self, kind: str, source: str) -> int:
        key = (kind, source)
        number = self._numbers.get(key)
        if number is None:
            number = self._numbers[key] = len(self._names)
            self._names.append(key)
        return number

    def _columns(self) -> "tuple[array[int], ...]":
        return (self._file, self._position, self._base, self._last, self._epoch, self._time, self._count)

    def __len__(self) -> int:
        return len(self._file)

    def _row(self, i: int) -> BatchIndexEntry:
        kind, source = self._names[self._file[i]]
        count = self._count[i]
        return BatchIndexEntry(
            kind,
            source,
            self._position[i],
            self._base[i],
            self._last[i],
            self._epoch[i],
            self._time[i],
            count < 0,
            -1 - count if count < 0 else count,
        )

    @overload
    def __getitem__(self, i: int) -> BatchIndexEntry: ...

    @overload
    def __getitem__(self, i: slice) -> list[BatchIndexEntry]: ...

    def __getitem__(self, i: int | slice) -> BatchIndexEntry | list[BatchIndexEntry]:
        if isinstance(i, slice):
            return [self._row(j) for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("batch index out of range")
        return self._row(i)

    def __iter__(self) -> Iterator[BatchIndexEntry]:
        for i in range(len(self)):
            yield self._row(i)

    def log_starts(self, offset: int) -> tuple[set[str], dict[str, int]]:
        """The log files it covers, and in each the position of the last batch based at or before
        ``offset`` (what ``ReadPlan.seek`` enters a segment at), read from the columns: a row
        object per batch made ``log --from`` on a 1M-record tail take 1 s before it read a record."""
        log_files = {n for n, (kind, _source) in enumerate(self._names) if kind == "log"}
        best: dict[int, int] = {}
        for number, position, base in zip(self._file, self._position, self._base, strict=True):
            if base <= offset and number in log_files and position >= best.get(number, -1):
                best[number] = position
        present = set(self._file)
        covered = {self._names[n][1] for n in log_files & present}
        return covered, {self._names[n][1]: position for n, position in best.items()}

    def nbytes(self) -> int:
        """Bytes the columns take (the measure docs/safety.md quotes)."""
        columns = (self._file, self._position, self._base, self._last, self._epoch, self._time, self._count)
        return sum(c.itemsize * len(c) for c in columns)
