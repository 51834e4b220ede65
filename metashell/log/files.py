"""Reading the batches of one file (segment, snapshot, bootstrap.checkpoint) in bounded memory.

A file is read in chunks (4 MiB by default) rather than all at once or through mmap: memory stays
bounded for multi-GB segments and snapshots, and a file that Kafka truncates or deletes while we
read it cannot crash the process (an mmap would SIGBUS).  The chunk is small because a freed
chunk's memory is mostly taken by the load's own allocations before the next read, which then
faults in fresh pages one by one: 16 MiB chunks had a 1M-partition snapshot's load fault in 35 MB
more (9,000 page faults, about 35 ms of kernel time) than 4 MiB.  A batch longer than a chunk is
read whole all the same.  Files are opened read-only and never locked; nothing is written.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from metashell.errors import DecodeError
from metashell.log.batch import HEADER_SIZE_UP_TO_MAGIC, RecordBatch
from metashell.log.problems import WarnFn, log_warning, unheard
from metashell.log.scan import BatchScan, Tail

if TYPE_CHECKING:
    from metashell.log.bulk import BatchRun

__all__ = ["DEFAULT_CHUNK", "iter_file_batches", "iter_open_file_batches", "open_regular", "read_batch_at"]

DEFAULT_CHUNK = 4 * 1024 * 1024
#: How much zero-filled data past a batchLength of 0 is read to confirm a pre-allocated tail (holes
#: in a sparse file are skipped with SEEK_DATA and cost nothing).  Past it the rest is taken as zeros:
#: a 20 GB zero-filled segment must not take a minute to open.
ZERO_TAIL_LOOK = 64 * 1024 * 1024


class NotARegularFileError(DecodeError):
    """A path that is a device, FIFO or socket: its "size" means nothing and it may never end."""


def open_regular(path: str | os.PathLike[str], source: str | None = None) -> BinaryIO:
    """``path`` opened for reading, refused unless it is a regular file.

    Opened non-blocking first: a plain ``open`` of a FIFO waits for a writer for ever, before any
    check could run (a FIFO passed to ``-s`` or ``--diff-with``, or named ``quorum-state`` in a
    directory).  Raises :class:`NotARegularFileError` naming ``source`` (default: the path)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFileError(
                "not a regular file (a device, FIFO or socket cannot be a metadata log)",
                source if source is not None else str(path),
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class _FileTail(Tail):
    """Looks past the current chunk into the file itself (with pread, not moving the read position)."""

    def __init__(self, fd: int, buf: bytes, base: int) -> None:
        super().__init__(buf, base)
        self.fd = fd

    def size(self) -> int:
        return max(os.fstat(self.fd).st_size, self.base + len(self.buf))

    def read(self, pos: int, n: int) -> bytes:
        rel = pos - self.base
        if rel >= 0 and rel + n <= len(self.buf):
            return self.buf[rel : rel + n]
        return os.pread(self.fd, n, pos)

    def rest_is_zero(self, pos: int) -> bool:
        """Whether only zeros follow ``pos``: holes are skipped, at most :data:`ZERO_TAIL_LOOK` of
        data is read (a longer zero-filled run is taken as the pre-allocated tail it looks like)."""
        rel = pos - self.base
        if rel < len(self.buf) and self.buf.count(0, max(rel, 0)) != len(self.buf) - max(rel, 0):
            return False
        at = max(pos, self.base + len(self.buf))
        looked = 0
        while looked < ZERO_TAIL_LOOK:
            try:
                at = os.lseek(self.fd, at, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # nothing but holes up to the end of the file
                    return True
                # no SEEK_DATA on this filesystem (EINVAL): read on from ``at`` as it is
            chunk = os.pread(self.fd, 1 << 20, at)
            if not chunk:
                return True
            if chunk.count(0) != len(chunk):
                return False
            at += len(chunk)
            looked += len(chunk)
        return True


def iter_file_batches(
    path: str | os.PathLike[str],
    source: str | None = None,
    *,
    position: int = 0,
    lenient_tail: bool = False,
    warn: WarnFn | None = None,
    verify_crc: bool = True,
    decode: bool = True,
    chunk_size: int = DEFAULT_CHUNK,
    bulk: BatchRun | None = None,
) -> Iterator[RecordBatch]:
    """Yield the batches of the file at ``path`` from byte ``position`` on (see ``iter_batches``).

    ``source`` (default: the path) names the file in errors and warnings; batch positions are file
    positions.  ``lenient_tail`` should be set for the last segment of a log (and a lone ``.log``
    file): an invalid last batch is then a warning, as Kafka's recovery would truncate it.
    Raises FileNotFoundError if the file is gone (callers turn that into a warning).  ``bulk``:
    a cursor whose sink may apply runs of plain batches instead (``metashell.log.bulk``); the
    batches it applies are not yielded.
    """
    src = source if source is not None else str(path)
    with open_regular(path, src) as f:
        yield from iter_open_file_batches(
            f,
            src,
            position=position,
            lenient_tail=lenient_tail,
            warn=warn,
            verify_crc=verify_crc,
            decode=decode,
            chunk_size=chunk_size,
            bulk=bulk,
        )


def iter_open_file_batches(
    f: BinaryIO,
    source: str,
    *,
    position: int = 0,
    lenient_tail: bool = False,
    warn: WarnFn | None = None,
    verify_crc: bool = True,
    decode: bool = True,
    chunk_size: int = DEFAULT_CHUNK,
    bulk: BatchRun | None = None,
    torn_ok: bool | None = None,
) -> Iterator[RecordBatch]:
    """:func:`iter_file_batches` of a file already open (a live session's downloaded snapshot, a
    file with no name); ``torn_ok`` as :class:`~metashell.log.scan.BatchScan`'s.  Moves ``f``'s
    read position."""
    scan = BatchScan(source, lenient_tail, warn or log_warning, verify_crc, decode, torn_ok)
    scan.bulk = bulk
    chunk_size = max(chunk_size, 4096)
    fd = f.fileno()
    f.seek(position)
    buf = f.read(chunk_size)
    base = position
    eof = len(buf) < chunk_size
    pos = 0
    while True:
        yield from scan.run(buf, pos, base, eof, _FileTail(fd, buf, base))
        if scan.stop != "more":
            return
        # The unread end of this chunk is read again with the next one rather than joined to
        # it: ``keep + more`` made and page-faulted a second chunk-sized object per chunk (0.1 s
        # of a 138 MB snapshot's load); the re-read comes from the page cache.
        kept = len(buf) - scan.stop_pos
        # At least the batch the scan stopped in, and the next one's length with it: reading a
        # batch longer than a chunk (a snapshot's run to 8 MiB) to its last byte left the next
        # read a chunk that could not hold the next one, read again at once.
        want = max(kept + chunk_size, scan.need + HEADER_SIZE_UP_TO_MAGIC + 1)
        base += scan.stop_pos
        # Never ask for more than the file holds: a batch header may claim 2 GiB, and read(n)
        # allocates n bytes before it knows how many it gets.
        left = max(os.fstat(fd).st_size - base, 0)
        f.seek(base)
        buf = b""  # freed first (unless a batch yielded holds it): the next chunk may reuse it
        buf = f.read(min(want, left + 1))
        eof = len(buf) < want
        pos = 0


def read_batch_at(
    path: str | os.PathLike[str], position: int, source: str | None = None, *, verify_crc: bool = True
) -> RecordBatch | None:
    """The one batch starting at byte ``position`` of ``path`` (None at the end of the data).

    Meant for re-reading a batch found earlier through the reader's index (time travel, `cat` of
    one record) without scanning the file again.
    """
    for batch in iter_file_batches(
        Path(path),
        source,
        position=position,
        verify_crc=verify_crc,
        chunk_size=64 * 1024,
        lenient_tail=True,
        warn=unheard,
    ):
        return batch
    return None


def first_batch_at_or_after(path: str | os.PathLike[str], lo: int, chunk_size: int = 1 << 20) -> int | None:
    """The byte position of the first batch that starts at or after ``lo`` (None: none does, or
    the framing breaks before ``lo``), found by hopping over batch lengths from the file's start.

    Only each batch's 12-byte offset/length prefix is looked at, so a reader can start in the
    middle of a large segment (the Spark data source's split units) without decoding what lies
    before; a batch whose framing is broken stops the hop (the unit that holds it reports it).
    """
    if lo <= 0:
        return 0
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        pos = 0
        buf, base = b"", 0
        while pos < lo:
            if pos + 12 > size:
                return None
            if pos + 12 > base + len(buf):
                base = pos
                buf = os.pread(f.fileno(), chunk_size, pos)
                if len(buf) < 12:
                    return None
            length = int.from_bytes(buf[pos - base + 8 : pos - base + 12], "big", signed=True)
            if length < HEADER_SIZE_UP_TO_MAGIC - 12 + 1:
                return None
            pos += 12 + length
        return pos if pos < size else None
