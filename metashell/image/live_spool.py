"""What a live session has seen, kept as a metadata directory of its own, so that the commands
that read a log's records (``log``, ``history``, ``stats``, ``health``'s causes) read it as they
read a node's directory.

A live session applies the snapshot it fetched and the batches committed after it; with the
journal (``at``, ``diff``) it can move its image back over them, but the records themselves are
gone once applied.  The spool writes them, as fetched, into a private temporary directory laid out
as Kafka lays out its own: ``__cluster_metadata-0/<end>-<epoch>.checkpoint`` (the fetched snapshot,
byte for byte) and one ``<base>.log`` segment of every whole committed batch after it, in order.
The directory is the session's (made with ``tempfile.mkdtemp``, removed when the session closes):
metashell never writes into a directory it reads from a node.  A snapshot served later (the session
fell behind the log start) or a reset starts the spool afresh, as it starts the journal.  It costs
disk, not memory: the snapshot's bytes and about 100 bytes a record.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, BinaryIO

__all__ = ["LiveSpool"]

PARTITION = "__cluster_metadata-0"


class LiveSpool:
    """A private metadata directory of what one live session has applied."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="metashell-live-"))
        self.path = self.root / PARTITION
        self.path.mkdir()
        self._segment: IO[bytes] | None = None
        self._snapshot: tuple[BinaryIO, Path] | None = None
        """The fetched snapshot's file and where it goes, until a command first reads the spool."""
        self.next_offset = 0
        """The offset after the last batch written (a batch written once, when it is whole)."""

    def snapshot(self, f: BinaryIO, end_offset: int, epoch: int) -> None:
        """The session loaded the fetched snapshot in ``f``, which the spool now owns (closes): the
        spool starts again from it.  Its bytes are copied into the directory only when a command
        first reads it (:meth:`flush`): a million partitions' snapshot took 0.3 s to copy, on the
        way to a session's first answer, for commands most sessions never run."""
        self._clear()
        self._snapshot = (f, self.path / f"{end_offset:020d}-{epoch:010d}.checkpoint")
        self.next_offset = end_offset

    def reset(self) -> None:
        """The session forgot everything (records from offset 0 follow)."""
        self._clear()
        self.next_offset = 0

    def append(self, data: bytes | memoryview, base_offset: int, last_offset: int) -> None:
        """Whole committed batches, as fetched, from ``base_offset`` to ``last_offset``: one batch
        or a run of them back to back (a catch-up brings hundreds of thousands of batches, and a
        write each cost 0.3 s of a million-partition session's first answer).  Written once: what
        ends before :attr:`next_offset` is passed over (a run fetched as bytes was never
        delivered before, so it starts at or after it)."""
        if last_offset < self.next_offset:
            return
        if self._segment is None:
            self._segment = open(self.path / f"{base_offset:020d}.log", "ab")  # noqa: SIM115 (kept open)
        self._segment.write(data)
        self.next_offset = last_offset + 1

    def flush(self) -> None:
        """Make what was kept readable (before a command reads the directory)."""
        if self._snapshot is not None:
            f, path = self._snapshot
            with f, open(path, "wb") as out:
                _copy(f, out)
            self._snapshot = None
        if self._segment is not None:
            self._segment.flush()

    def close(self) -> None:
        """Remove the directory (the session is over; again: nothing)."""
        self._close_files()
        shutil.rmtree(self.root, ignore_errors=True)

    def _clear(self) -> None:
        self._close_files()
        for f in self.path.iterdir():
            f.unlink()

    def _close_files(self) -> None:
        if self._snapshot is not None:
            self._snapshot[0].close()
            self._snapshot = None
        if self._segment is not None:
            self._segment.close()
            self._segment = None


def _copy(f: BinaryIO, out: BinaryIO) -> None:
    """All of ``f`` into ``out``, in the kernel where it can (``copy_file_range``), else through
    Python a MiB at a time."""
    f.seek(0)
    size = os.fstat(f.fileno()).st_size
    at = 0
    try:
        while at < size:
            n = os.copy_file_range(f.fileno(), out.fileno(), size - at, at, at)
            if n == 0:
                break
            at += n
    except (AttributeError, OSError):  # no copy_file_range here (not Linux, an old kernel)
        f.seek(at)
        out.seek(at)
        shutil.copyfileobj(f, out, 1 << 20)
