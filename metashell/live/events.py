"""What live mode hands to its consumer (the image glue), and the status it keeps.

Events arrive in log order on the observer's thread:

* :class:`SnapshotLoaded` -- replace the whole image with this snapshot (first connect to a
  controller whose log starts after a snapshot, or when the client fell behind the log start);
* :class:`RecordsCommitted` -- apply these batches, in order; every record in them is committed
  (offset < high watermark) and is delivered exactly once;
* :class:`ImageReset` -- forget the image; records from offset 0 (or a snapshot) follow.  Only
  happens if a controller's log diverged below what was already committed, which raft forbids;
* :class:`StatusChanged` -- leader / epoch / high watermark / lag moved (also readable any time
  from ``LiveSource.status``);
* :class:`LiveWarning` -- something the user should know, live mode continues.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import BinaryIO

from metashell.log.batch import RecordBatch
from metashell.log.files import iter_open_file_batches
from metashell.log.records import Entry


@dataclass(frozen=True, slots=True)
class SnapshotId:
    end_offset: int
    epoch: int

    def __str__(self) -> str:
        return f"{self.end_offset:020d}-{self.epoch:010d}"


@dataclass(frozen=True, slots=True)
class CommittedBatch:
    """A batch, or the committed part of one: ``entries`` are (offset, timestamp, key, value).

    ``entries`` is None for a whole batch whose records were checked on arrival but not decoded
    (the native engine): the session applies runs of those from their bytes, by the directory's
    bulk path; :meth:`records` decodes them for a consumer that wants the tuples."""

    batch: RecordBatch
    entries: list[Entry] | None
    #: False when records were cut at the front (already delivered/snapshotted) or the back (above HW).
    complete: bool

    @property
    def record_count(self) -> int:
        """How many records are delivered (without decoding the ones only checked)."""
        return self.batch.records_count if self.entries is None else len(self.entries)

    def records(self) -> list[Entry]:
        """The delivered records as tuples (decoded now when they were only checked)."""
        return self.batch.entries() if self.entries is None else self.entries

    @property
    def base_offset(self) -> int:
        return self.batch.base_offset

    @property
    def last_offset(self) -> int:
        """Offset of the last record delivered from this batch."""
        return self.entries[-1][0] if self.entries else self.batch.last_offset

    @property
    def epoch(self) -> int:
        return self.batch.partition_leader_epoch

    @property
    def max_timestamp(self) -> int:
        return self.batch.max_timestamp

    @property
    def is_control(self) -> bool:
        return self.batch.is_control


@dataclass(frozen=True, slots=True)
class LiveStatus:
    """A consistent copy of what the observer knows; ``lag`` = committed records not yet applied."""

    state: str = "connecting"  # connecting, snapshot, catching-up, streaming, reconnecting, stopped, failed
    cluster_id: str | None = None
    leader_id: int = -1
    leader_epoch: int = -1
    endpoint: str | None = None  # controller being fetched from
    high_watermark: int = -1  # exclusive; -1 unknown
    applied_offset: int = -1  # last offset delivered to the image; -1 none
    fetch_offset: int = 0
    log_start_offset: int = -1
    snapshot_id: SnapshotId | None = None  # snapshot the image was loaded from, if any
    start_high_watermark: int = -1  # first high watermark seen: one-shot mode waits for it
    controllers: dict[int, str] = field(default_factory=dict)
    last_error: str | None = None  # most recent transient problem (reconnecting...)
    error: str | None = None  # fatal problem (state == failed)
    updated_at: float = field(default_factory=time.time)

    @property
    def lag(self) -> int | None:
        if self.high_watermark < 0:
            return None
        return max(0, self.high_watermark - (self.applied_offset + 1))

    @property
    def caught_up(self) -> bool:
        """Everything committed when streaming started has been applied."""
        return self.start_high_watermark >= 0 and self.applied_offset + 1 >= self.start_high_watermark

    def evolve(self, **changes: object) -> LiveStatus:
        return replace(self, updated_at=time.time(), **changes)  # type: ignore[arg-type]


@dataclass(frozen=True)
class SnapshotLoaded:
    """A snapshot downloaded whole and checked (framing, CRCs, records, offsets).

    Its bytes are in ``file``, an unnamed temporary file (``tempfile.TemporaryFile``): a
    million-partition snapshot is some hundreds of MB, which held in memory beside the image being
    built from it cost the session 1.6x the memory of a directory load; read back a chunk at a time
    it costs what the directory's file costs.  The file goes when the last reference to the event
    goes (or on :meth:`close`); readers seek where they read."""

    snapshot_id: SnapshotId
    file: BinaryIO = field(repr=False)
    size: int
    high_watermark: int
    source: str

    def batches(self, decode: bool = True) -> Iterator[RecordBatch]:
        """The snapshot's batches, read from the file a chunk at a time."""
        return iter_open_file_batches(self.file, self.source, decode=decode, torn_ok=True)

    def read_bytes(self) -> bytes:
        """The snapshot whole (for a small one, or a test)."""
        return os.pread(self.file.fileno(), self.size, 0)

    def close(self) -> None:
        self.file.close()


@dataclass(frozen=True)
class RecordsCommitted:
    batches: list[CommittedBatch]
    high_watermark: int
    source: str
    #: time.time() when the fetch response carrying the commit arrived (latency measurements).
    received_at: float = 0.0


@dataclass(frozen=True)
class ImageReset:
    reason: str


@dataclass(frozen=True)
class StatusChanged:
    status: LiveStatus


@dataclass(frozen=True)
class LiveWarning:
    message: str

    def __str__(self) -> str:
        return self.message


LiveEvent = SnapshotLoaded | RecordsCommitted | ImageReset | StatusChanged | LiveWarning
