"""Reversible replay: move one image back and forth along the log it was loaded from.

Kafka keeps old images cheaply because each ``MetadataImage`` is immutable and shares structure
with the next one through persistent maps.  metashell's image is mutable (``model.py`` explains
why), so what keeps time travel cheap here is a *journal*: while the log after the snapshot is
replayed, every change the replayer makes to the image is written down as "where, and the value it
replaced".  Applying an entry **swaps** the value in the image with the one in the entry, so the
same entry undoes its change when the journal is walked backwards and redoes it when walked
forwards -- no second copy of the image, and a move costs only the changes between the two points.

Entries are, in the order the changes were made:

* ``(mapping, key, value)``: a dict slot (``value`` is :data:`MISSING` when the key was absent);
* ``(obj, *state)``: the whole state of a slotted object that is changed in place (a
  :class:`~metashell.image.model.Partition`, a broker registration, the quorum, features, producer
  ids): the object followed by its ``__slots__`` values, in slot order (:func:`kept`);
* with the native engine, a ``ChangeRun`` (``native/src/replay/journal.rs``) for each run of partition
  changes in a batch: what each change replaced, kept natively (a waiting partition's old row, or
  the slots a made one's change replaced); ``run.swap(backwards)`` swaps them all, in order or in
  reverse, and ``len(run)`` is how many entries Python's journal would hold for them.

Objects keep their identity across moves (a dict slot gets back the very object it held), so an
entry written against ``topic.partitions`` still finds that dict after the topic was deleted and
restored.  Marks say where each batch of the log ends in the journal and what provenance it
published; a point inside a batch is reached from the mark before it by replaying the rest of the
batch up to the point with a scratch journal, which the next move undoes first.

Memory: one entry per change -- about 150 bytes for a PartitionChangeRecord (the partition and
the 11 values it replaced; 64 bytes in a native run), ~80 bytes for a dict slot -- plus ~60 bytes
of marks per batch.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from .gcpause import gc_paused
from .image import MetadataImage
from .partition import Partition, swap_entry

__all__ = ["MISSING", "Journal", "Timeline", "kept"]

MISSING: Any = object()
"""The value of a dict slot whose key was absent."""

Journal = list[Any]
"""A list of journal entries (see the module docstring)."""

_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def kept(obj: Any) -> tuple[Any, ...]:
    """The state entry for a slotted object: ``(obj, *slot values)``."""
    cls = type(obj)
    get = _GETTERS.get(cls)
    if get is None:
        get = _GETTERS[cls] = attrgetter(*cls.__slots__)
    return (obj, *get(obj))


def _walk(entries: list[Any], start: int, stop: int) -> None:
    """Apply entries ``start .. stop - 1`` forwards, or ``start - 1`` down to ``stop`` backwards when
    ``stop < start``: each time the image takes the entry's value and the entry keeps the image's."""
    partition = Partition
    backwards = stop < start
    for k in range(start - 1, stop - 1, -1) if backwards else range(start, stop):
        e = entries[k]
        if type(e) is not tuple:  # a native run of partition changes: swapped in Rust
            e.swap(backwards)
            continue
        obj = e[0]
        if type(obj) is partition:  # most of a long log: the generated swap, no call per slot
            entries[k] = swap_entry(e)
        elif type(obj) is dict:
            _d, key, value = e
            entries[k] = (obj, key, obj.get(key, MISSING))
            if value is MISSING:
                del obj[key]
            else:
                obj[key] = value
        else:
            entries[k] = kept(obj)
            for name, value in zip(type(obj).__slots__, e[1:], strict=True):
                setattr(obj, name, value)


class Timeline:
    """The journal of one load plus its batch marks, and where the image stands on it.

    Built by the loader (``ImageLoader.keep_timeline``) while it replays the log after the
    snapshot; :meth:`finish` closes it at the end of the load.  :meth:`move_to` then moves the
    image to any offset from :attr:`start` to the end, in place.
    """

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.entries: Journal = []
        self.start = image.provenance.offset
        """The earliest offset reachable: where the journal starts (the snapshot's last offset)."""
        self._start_prov = _provenance(image)
        # per batch: its last offset, the journal length after it, the provenance it left
        self._last = array("q")
        self._length = array("q")
        self._prov = array("q")  # offset, epoch, timestamp, records, batches (5 per mark)
        self._txn_open = bytearray()  # a metadata transaction is open after the batch
        # The marks taken while loading, as bytes per column, put into the arrays once (`_settle`):
        # an array grown a few thousand marks at a time is copied whole each time it outgrows its
        # 1/16 spare room (the allocator copies: the load's large buffers have raised its mmap
        # threshold), which copied about 16 times its final size, 200 MB for a million-record log.
        self._chunks: list[tuple[bytes, bytes, bytes, bytes]] = []
        self._end_prov: tuple[int, ...] = ()
        self._end_sources: list[str] = []
        self.applied = 0
        """How many entries are applied (``len(entries)`` at the end of the log)."""
        self.scratch: Journal = []
        """What a move into the middle of a batch applied on top (undone by the next move)."""
        self._enter: Callable[[int, Journal], None] | None = None
        self._segment_bases: dict[str, int] = {}

    # ------------------------------------------------------------------ built by the loader

    def mark(self, last_offset: int, txn_open: bool) -> None:
        """A batch ending at ``last_offset`` was applied."""
        p = self.image.provenance
        prov = array("q", (p.offset, p.epoch, p.timestamp, p.records, p.batches))
        last, length = array("q", (last_offset,)), array("q", (len(self.entries),))
        self._chunks.append((last.tobytes(), length.tobytes(), prov.tobytes(), bytes((txn_open,))))

    def extend_marks(self, last: bytes, length: bytes, prov: bytes, txn_open: bytes) -> None:
        """The marks of a run of batches the native batch loop applied, as :meth:`mark` would have
        made them one by one (native-endian int64 columns; ``prov`` five to a mark)."""
        self._chunks.append((last, length, prov, txn_open))

    def _settle(self) -> None:
        """The marks taken since the last call, into the arrays (each grown once)."""
        if self._chunks:
            chunks, self._chunks = self._chunks, []
            for i, column in enumerate((self._last, self._length, self._prov)):
                column.frombytes(b"".join(c[i] for c in chunks))
            self._txn_open += b"".join(c[3] for c in chunks)

    def finish(self, segment_bases: dict[str, int], enter: Callable[[int, Journal], None] | None) -> None:
        """The load is over (including what it applies after the log, e.g. quorum-state).

        ``segment_bases``: each segment file's base offset (which files a point has read);
        ``enter(offset, journal)``: replays the batch holding an offset up to it, journaling into
        ``journal`` (the loader knows where each batch is); needed for points inside a batch.
        """
        self._settle()
        self._segment_bases = segment_bases
        self._enter = enter
        self.applied = len(self.entries)
        self._end_prov = _provenance(self.image)
        self._end_sources = list(self.image.provenance.sources)

    def follow(self) -> None:
        """A live session's journal, which grows while the session follows the log: the image is
        at the end of what was applied, and the end moves there (no file: a point inside a batch
        is not reachable, :meth:`batch_end_at_or_before` names the batch end before it)."""
        self.finish(self._segment_bases, self._enter)

    def batch_end_at_or_before(self, offset: int) -> int:
        """The last offset of the last batch ending at or before ``offset`` (:attr:`start` when none
        does): where a journal without files can put the image for ``offset``."""
        self._settle()
        i = self._mark_at_or_before(offset)
        return self._last[i] if i >= 0 else self.start

    def batch_times(self) -> list[tuple[int, int]]:
        """Each batch's (last offset, max timestamp), oldest first: what a time names."""
        self._settle()
        return list(zip(self._last, self._prov[2::5], strict=True))

    def forget_oldest(self, entries: int) -> None:
        """Drop the journal's oldest ``entries`` or so (whole batches), so that a live session's
        journal stays bounded: the points before them can no longer be reached and :attr:`start`
        moves up.  Only at the end of the log (where a following session stands)."""
        self._settle()
        assert self.applied == len(self.entries) and not self.scratch, "only at the end of the log"
        i = bisect.bisect_right(self._length, entries) - 1
        if i < 0:
            return
        cut = self._length[i]
        del self.entries[:cut]
        self.applied -= cut
        self.start = self._last[i]
        self._start_prov = tuple(self._prov[5 * i : 5 * i + 5])
        self._length = array("q", (n - cut for n in self._length[i + 1 :]))
        del self._last[: i + 1]
        del self._prov[: 5 * (i + 1)]
        del self._txn_open[: i + 1]

    @property
    def end(self) -> int:
        return self._end_prov[0] if self._end_prov else self.start

    def memory_bytes(self) -> int:
        """An estimate of what the journal costs (entries, their states, the marks): the tuples'
        average from the first thousand, the native runs' own figures."""
        runs = [e for e in self.entries if type(e) is not tuple]
        sample = [e for e in self.entries[:1000] if type(e) is tuple]
        average = sum(56 + 8 * len(e) for e in sample) / len(sample) if sample else 0
        tuples = len(self.entries) - len(runs)
        runs_bytes = sum(int(r.memory_bytes()) for r in runs)
        return int(tuples * average) + runs_bytes + len(self.entries) * 8 + len(self._last) * 64

    def changes(self) -> int:
        """How many changes the journal holds (a native run counts the changes it holds)."""
        return sum(1 if type(e) is tuple else len(e) for e in self.entries)

    # ------------------------------------------------------------------ moving

    def can_reach(self, offset: int | None) -> bool:
        """Whether :meth:`move_to` can put the image at ``offset`` (not before the journal, not
        into the middle of a batch inside a metadata transaction)."""
        if offset is None or offset >= self.end:
            return True
        if offset < self.start:
            return False
        self._settle()
        i = self._mark_at_or_before(offset)
        last = self._last[i] if i >= 0 else self.start
        return last == offset or (self._enter is not None and not (i >= 0 and self._txn_open[i]))

    def move_to(self, offset: int | None) -> None:
        """Put the image at ``offset`` (None or past the end: the end of the log)."""
        if not self.can_reach(offset):
            raise ValueError(f"offset {offset} cannot be reached through the journal")
        self._settle()
        with gc_paused():  # each swap makes a tuple: no collections over the image meanwhile
            self._move(offset)

    def _move(self, offset: int | None) -> None:
        self._undo_scratch()
        if offset is None or offset >= self.end:
            self._apply_to(len(self.entries))
            _restore(self.image, self._end_prov, self._end_sources)
            return
        i = self._mark_at_or_before(offset)
        if i < 0:
            self._apply_to(0)
            prov = self._start_prov
        else:
            self._apply_to(self._length[i])
            prov = tuple(self._prov[5 * i : 5 * i + 5])
        _restore(self.image, prov, self._sources_at(offset))
        if (self._last[i] if i >= 0 else self.start) < offset:
            assert self._enter is not None  # can_reach said so
            self._enter(offset, self.scratch)

    def _mark_at_or_before(self, offset: int) -> int:
        return bisect.bisect_right(self._last, offset) - 1

    def _apply_to(self, length: int) -> None:
        _walk(self.entries, self.applied, length)
        self.applied = length

    def _undo_scratch(self) -> None:
        _walk(self.scratch, len(self.scratch), 0)
        self.scratch.clear()

    def _sources_at(self, offset: int) -> list[str]:
        bases = self._segment_bases
        return [s for s in self._end_sources if bases.get(s, -1) <= offset]


def _provenance(image: MetadataImage) -> tuple[int, ...]:
    p = image.provenance
    return (p.offset, p.epoch, p.timestamp, p.records, p.batches)


def _restore(image: MetadataImage, prov: tuple[int, ...], sources: list[str]) -> None:
    p = image.provenance
    p.offset, p.epoch, p.timestamp, p.records, p.batches = prov
    p.sources = sources
