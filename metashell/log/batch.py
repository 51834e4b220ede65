"""One v2 record batch: its 61-byte header, its checks, and lazy access to its records.

Everything KRaft stores or sends -- ``.log`` segments, ``.checkpoint`` snapshots,
``bootstrap.checkpoint``, Fetch and FetchSnapshot payloads -- is a concatenation of v2 record
batches (FORMATS.md section 2).  This module knows one batch: the header layout, why a header is
invalid (:func:`check_header`), the CRC, and how to get at the records (decompressing through
:mod:`metashell.log.compression`, decoding through :mod:`metashell.log.records`).  Finding batches
in a buffer or a file is :mod:`metashell.log.scan`; writing them is :mod:`metashell.log.encoding`.
It does not interpret record keys or values (that is ``metashell.protocol``'s job).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

from metashell.log.checksum import crc32c
from metashell.log.compression import (
    COMPRESSION_NAMES,
    COMPRESSION_ZSTD,
    LIMITS,
    InflateLimitError,
    decompress_records,
    decompression_errors,
)
from metashell.log.problems import CorruptBatchError
from metashell.log.records import (
    CLEAN_STATS,
    Entry,
    Record,
    RecordError,
    check_entries,
    decode_entries,
    decode_records,
)

__all__ = [
    "ATTR_COMPRESSION_MASK",
    "ATTR_CONTROL",
    "ATTR_TIMESTAMP_TYPE",
    "ATTR_TRANSACTIONAL",
    "HEADER",
    "HEADER_SIZE",
    "HEADER_SIZE_UP_TO_MAGIC",
    "LOG_OVERHEAD",
    "MIN_BATCH_LENGTH",
    "RecordBatch",
    "check_header",
]

#: Size of the fixed batch header (baseOffset .. recordsCount).
HEADER_SIZE = 61
#: baseOffset + batchLength: bytes of a batch not counted by batchLength.
LOG_OVERHEAD = 12
#: Kafka stops iterating when this many or fewer bytes remain (offset+length+epoch+magic).
HEADER_SIZE_UP_TO_MAGIC = 17
#: LegacyRecord.RECORD_OVERHEAD_V0: the smallest batchLength Kafka accepts before reading magic.
MIN_BATCH_LENGTH = 14

TIMESTAMP_TYPE_NAMES = ("CreateTime", "LogAppendTime")

ATTR_COMPRESSION_MASK = 0x07
ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20
ATTR_DELETE_HORIZON = 0x40

#: The header, baseOffset to recordsCount: (baseOffset, batchLength, partitionLeaderEpoch, magic,
#: crc, attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId, producerEpoch,
#: baseSequence, recordsCount).
HEADER = struct.Struct(">qiibIhiqqqhii")


class RecordBatch:
    """The 61-byte header of one v2 batch, plus where it came from and lazy access to its records.

    ``position`` is the byte offset of the batch in ``source`` (a file name, or "fetch").  A batch
    keeps a reference to the buffer it was read from, so do not hold on to many of them: keep
    (source, position, base_offset, last_offset) instead and re-read (see ``metashell.log.reader``).
    """

    __slots__ = (
        "_buf",
        "_start",
        "attributes",
        "base_offset",
        "base_sequence",
        "base_timestamp",
        "batch_length",
        "crc",
        "decoded",
        "last_offset_delta",
        "magic",
        "max_timestamp",
        "partition_leader_epoch",
        "position",
        "producer_epoch",
        "producer_id",
        "records_count",
        "source",
        "stats",
    )

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    def __init__(self, header: tuple[Any, ...], position: int, source: str, buf: bytes, start: int) -> None:
        (
            self.base_offset,
            self.batch_length,
            self.partition_leader_epoch,
            self.magic,
            self.crc,
            self.attributes,
            self.last_offset_delta,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.records_count,
        ) = header
        self.position = position
        self.source = source
        self._buf = buf
        self._start = start
        self.decoded: list[Entry] | None = None
        self.stats: tuple[int, int, int, int] | None = None

    @classmethod
    def parse(
        cls,
        buf: bytes,
        start: int = 0,
        source: str = "buffer",
        position: int | None = None,
        verify_crc: bool = True,
    ) -> RecordBatch:
        """Parse and validate the single batch at ``buf[start:]`` (framing, magic, CRC)."""
        pos = start if position is None else position
        if len(buf) - start < HEADER_SIZE:
            raise CorruptBatchError(f"{len(buf) - start} bytes cannot hold a batch header", source, pos)
        header = HEADER.unpack_from(buf, start)
        problem = check_header(header, buf, start, len(buf) - start, verify_crc)
        if problem:
            raise CorruptBatchError(problem, source, pos)
        return cls(header, pos, source, buf, start)

    # -- header-derived properties -----------------------------------------------------------------
    @property
    def compression(self) -> int:
        """Compression codec id (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)."""
        return self.attributes & ATTR_COMPRESSION_MASK

    @property
    def compression_name(self) -> str:
        c = self.attributes & ATTR_COMPRESSION_MASK
        return COMPRESSION_NAMES[c] if c < len(COMPRESSION_NAMES) else f"unknown({c})"

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def timestamp_type(self) -> int:
        """0 = CreateTime, 1 = LogAppendTime (see TIMESTAMP_TYPE_NAMES)."""
        return 1 if self.attributes & ATTR_TIMESTAMP_TYPE else 0

    @property
    def timestamp_type_name(self) -> str:
        return TIMESTAMP_TYPE_NAMES[self.timestamp_type]

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def size(self) -> int:
        """Bytes the batch occupies (12 + batchLength)."""
        return LOG_OVERHEAD + self.batch_length

    # -- raw bytes and CRC -------------------------------------------------------------------------
    def raw(self) -> bytes:
        """The batch's bytes, exactly as stored."""
        return bytes(self._buf[self._start : self._start + LOG_OVERHEAD + self.batch_length])

    def compute_crc(self) -> int:
        """CRC-32C of bytes [21, end) -- what ``crc`` must equal."""
        s = self._start
        return crc32c(memoryview(self._buf)[s + 21 : s + LOG_OVERHEAD + self.batch_length])

    def crc_valid(self) -> bool:
        return self.compute_crc() == self.crc

    # -- records -----------------------------------------------------------------------------------
    def records_data(self) -> bytes:
        """The records area, decompressed (raises CorruptBatchError when it does not decompress)."""
        s = self._start
        raw = self._buf[s + HEADER_SIZE : s + LOG_OVERHEAD + self.batch_length]
        try:
            return decompress_records(self.attributes & ATTR_COMPRESSION_MASK, raw)
        except InflateLimitError as e:
            raise CorruptBatchError(
                f"batch at base offset {self.base_offset}: {e}", self.source, self.position
            ) from None
        except decompression_errors() as e:  # evaluated only when something was raised
            raise CorruptBatchError(
                f"batch at base offset {self.base_offset}: {self.compression_name} records do not "
                f"decompress ({type(e).__name__}: {e})",
                self.source,
                self.position,
            ) from None

    def _records_area(self) -> tuple[bytes, int, int, bool]:
        """(data, start, end, compressed) of the records to decode, without copying when possible."""
        if self.attributes & ATTR_COMPRESSION_MASK:
            data = self.records_data()
            return data, 0, len(data), True
        s = self._start
        return self._buf, s + HEADER_SIZE, s + LOG_OVERHEAD + self.batch_length, False

    def locate(self, err: RecordError, compressed: bool) -> CorruptBatchError:
        if compressed:
            return CorruptBatchError(
                f"batch at base offset {self.base_offset}: record {err.index}: {err.message} "
                f"(byte {err.pos} of the decompressed records)",
                self.source,
                self.position,
            )
        return CorruptBatchError(
            f"batch at base offset {self.base_offset}: record {err.index}: {err.message}",
            self.source,
            self.position + (err.pos - self._start),
        )

    def records_contain(self, needles: Iterable[bytes]) -> bool:
        """Whether any of ``needles`` occurs in the (decompressed) records area: a cheap test that
        lets a reader looking for one topic skip the batches that cannot mention it."""
        data, start, end, _compressed = self._records_area()
        return any(data.find(n, start, end) >= 0 for n in needles)

    def entries(self) -> list[Entry]:
        """All records as ``(offset, timestamp, key, value)`` tuples -- the fast path (cached).

        Headers are not returned (KRaft never writes any; use :meth:`records` to see them).  With
        LogAppendTime every timestamp is ``max_timestamp``, as in Kafka.
        """
        if self.decoded is None:
            if self.records_count < 0:
                raise CorruptBatchError(
                    f"batch at base offset {self.base_offset}: negative record count {self.records_count}",
                    self.source,
                    self.position,
                )
            data, start, end, compressed = self._records_area()
            try:
                entries, stats = decode_entries(
                    data, start, end, self.records_count, self.base_offset, self.base_timestamp
                )
            except RecordError as e:
                raise self.locate(e, compressed) from None
            if self.attributes & ATTR_TIMESTAMP_TYPE:
                mt = self.max_timestamp
                entries = [(o, mt, k, v) for o, _, k, v in entries]
            self.decoded = entries
            self.stats = stats
        return self.decoded

    def check(self) -> None:
        """Raise what :meth:`entries` would raise for records that do not read, keeping nothing (a
        live snapshot is checked whole on arrival and read again by the loader, batch by batch)."""
        if self.decoded is not None:
            return
        if self.records_count < 0:
            self.entries()  # says what is wrong
        data, start, end, compressed = self._records_area()
        try:
            check_entries(data, start, end, self.records_count, self.base_offset, self.base_timestamp)
        except RecordError as e:
            raise self.locate(e, compressed) from None

    def records(self) -> list[Record]:
        """All records as :class:`Record` objects, headers included (slower than :meth:`entries`)."""
        if self.records_count < 0:
            raise CorruptBatchError(
                f"batch at base offset {self.base_offset}: negative record count {self.records_count}",
                self.source,
                self.position,
            )
        data, start, end, compressed = self._records_area()
        try:
            recs = decode_records(data, start, end, self.records_count, self.base_offset, self.base_timestamp)
        except RecordError as e:
            raise self.locate(e, compressed) from None
        if self.attributes & ATTR_TIMESTAMP_TYPE:
            for r in recs:
                r.timestamp = self.max_timestamp
        return recs

    def kraft_anomalies(self) -> list[str]:
        """Ways the records break KRaft's invariants (RecordsIterator.readRecord); empty when fine.

        Kafka's raft reader rejects these; metashell only warns.  Decodes the records if needed.
        """
        self.entries()
        n = self.records_count
        stats = self.stats
        if stats is CLEAN_STATS and self.last_offset_delta == n - 1 and not self.attributes & ATTR_CONTROL:
            return []
        keys, bad_values, ts_deltas, with_headers = stats or CLEAN_STATS
        out = []
        if self.attributes & ATTR_CONTROL:
            if keys != n:
                out.append(f"{n - keys} control record(s) without a key")
        elif keys:
            out.append(f"{keys} data record(s) with a non-null key")
        if bad_values:
            out.append(f"{bad_values} record(s) with a null or empty value")
        if ts_deltas:
            out.append(f"{ts_deltas} record(s) with a non-zero timestamp delta")
        if with_headers:
            out.append(f"{with_headers} record(s) with headers")
        if self.last_offset_delta != n - 1:
            out.append(f"lastOffsetDelta {self.last_offset_delta} but {n} record(s)")
        return out

    def __repr__(self) -> str:
        return (
            f"RecordBatch(source={self.source!r}, position={self.position}, base_offset="
            f"{self.base_offset}, last_offset={self.last_offset}, epoch={self.partition_leader_epoch}, "
            f"count={self.records_count}, control={self.is_control}, "
            f"compression={self.compression_name}, size={self.size})"
        )


def check_header(
    header: tuple[Any, ...], buf: bytes, start: int, available: int, verify_crc: bool
) -> str | None:
    """Why the framed batch at ``start`` is invalid, or None.  ``available`` = bytes from ``start``."""
    length = header[1]
    size = LOG_OVERHEAD + length
    if size > available:
        return f"batch of {size} bytes is truncated ({available} bytes left)"
    magic = header[3]
    if magic != 2:
        return f"unsupported magic {magic} (KRaft uses record batch v2)"
    if size < HEADER_SIZE:
        return f"batch length {length} is too small for a v2 header"
    if verify_crc:
        computed = crc32c(memoryview(buf)[start + 21 : start + size])
        if computed != header[4]:
            return (
                f"batch at base offset {header[0]}: CRC mismatch (stored 0x{header[4]:08x}, "
                f"computed 0x{computed:08x})"
            )
    if header[5] & ATTR_COMPRESSION_MASK > COMPRESSION_ZSTD:
        return f"batch at base offset {header[0]}: unknown compression type {header[5] & 7}"
    if header[12] < 0:
        return f"batch at base offset {header[0]}: negative record count {header[12]}"
    if header[12] > LIMITS.max_records:
        return (
            f"batch at base offset {header[0]}: {header[12]} records, more than the "
            f"{LIMITS.max_records} metashell reads in one batch (--max-batch-bytes raises it)"
        )
    return None
