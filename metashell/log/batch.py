"""Record batches (message format v2): parse, verify, decompress, iterate; and an encoder.

Everything KRaft stores or sends -- ``.log`` segments, ``.checkpoint`` snapshots,
``bootstrap.checkpoint``, Fetch and FetchSnapshot payloads -- is a concatenation of v2 record
batches (FORMATS.md section 2).  This module knows only that framing: it does not interpret record
keys or values (that is ``metashell.protocol``'s job) so it stays small and fast.

Performance notes (the loader replays millions of records through :meth:`RecordBatch.entries`):

* records are decoded straight out of the buffer the batch was read into (no copy of the records
  area for uncompressed batches); only keys and values are sliced into new ``bytes``;
* the decoder inlines the one- and two-byte varint cases, which cover nearly every length KRaft
  writes, and falls back to a helper only for longer varints;
* the fast path produces plain ``(offset, timestamp, key, value)`` tuples instead of objects.
"""

from __future__ import annotations

import logging
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import cramjam
from crc32c import crc32c as _crc32c

from metashell.errors import DecodeError
from metashell.log.compression import (
    COMPRESSION_NAMES,
    COMPRESSION_ZSTD,
    LIMITS,
    InflateLimitError,
    compress_records,
    decompress_records,
)

__all__ = [
    "COMPRESSION_NAMES",
    "HEADER_SIZE",
    "LOG_OVERHEAD",
    "CorruptBatchError",
    "Entry",
    "LogWarning",
    "Record",
    "RecordBatch",
    "build_batch",
    "compress_records",
    "decompress_records",
    "encode_record",
    "encode_varint",
    "iter_batches",
    "read_varint",
    "read_varlong",
]

log = logging.getLogger("metashell.log")

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

_HEADER = struct.Struct(">qiibIhiqqqhii")
_INT32 = struct.Struct(">i")
_unpack_header = _HEADER.unpack_from
_unpack_int32 = _INT32.unpack_from

#: One decoded record on the fast path: (offset, timestamp, key, value).
Entry = tuple[int, int, bytes | None, bytes | None]


class CorruptBatchError(DecodeError):
    """A batch, or a record inside it, that Kafka would reject (bad CRC, magic, size, varint...).

    ``source`` names the file (or "fetch") and ``offset`` the byte position of the batch (or of the
    record, when it can be located in the file) -- the CLI prints both.
    """


@dataclass(frozen=True, slots=True)
class LogWarning:
    """Something odd but survivable found while reading (torn tail, gap, KRaft invariant...).

    ``kind`` is a short stable tag callers can filter on (e.g. live mode ignores "torn-tail" at the
    end of a fetch response, where a cut-off batch is normal).
    """

    kind: str
    message: str
    source: str | None = None
    position: int | None = None

    def __str__(self) -> str:
        where = []
        if self.source:
            where.append(self.source)
        if self.position is not None:
            where.append(f"byte offset {self.position}")
        return f"{': '.join(where)}: {self.message}" if where else self.message


WarnFn = Callable[[LogWarning], None]


def _log_warning(w: LogWarning) -> None:
    log.warning("%s", w)


class Record:
    """A fully decoded record, headers included (the slow, complete path; see ``Entry``)."""

    __slots__ = ("headers", "key", "offset", "size", "timestamp", "value")

    def __init__(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
                 headers: list[tuple[str, bytes | None]] | None = None, size: int = 0) -> None:
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = headers if headers is not None else []
        #: Bytes the record occupies in the (decompressed) records area, length varint included
        #: (Kafka's ``sizeInBytes``).
        self.size = size

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (self.offset, self.timestamp, self.key, self.value, self.headers) == (
            other.offset, other.timestamp, other.key, other.value, other.headers)

    def __repr__(self) -> str:
        return (f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
                f"value={self.value!r}, headers={self.headers!r})")


# --------------------------------------------------------------------------------------------------
# varints


class _VarintError(Exception):
    """Internal: a malformed varint; converted to CorruptBatchError with a location."""


def _uvarint(data: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    """Unsigned LEB128 at ``pos``, at most ``max_bytes`` long (Kafka: 5 for varint, 10 for varlong)."""
    u = 0
    shift = 0
    for _ in range(max_bytes):
        b = data[pos]
        pos += 1
        u |= (b & 0x7F) << shift
        if b < 0x80:
            return u, pos
        shift += 7
    raise _VarintError("varint is too long" if max_bytes == 5 else "varlong is too long")


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Zigzag varint (int32, as ``ByteUtils.readVarint``) at ``pos``; returns (value, next pos)."""
    u, pos = _uvarint(data, pos, 5)
    u &= 0xFFFFFFFF
    return (u >> 1) ^ -(u & 1), pos


def read_varlong(data: bytes, pos: int) -> tuple[int, int]:
    """Zigzag varlong (int64, as ``ByteUtils.readVarlong``) at ``pos``; returns (value, next pos)."""
    u, pos = _uvarint(data, pos, 10)
    u &= 0xFFFFFFFFFFFFFFFF
    return (u >> 1) ^ -(u & 1), pos


def encode_varint(n: int) -> bytes:
    """Zigzag + LEB128 (works for varint and varlong alike)."""
    u = (n << 1) ^ (n >> 63)
    u &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


# --------------------------------------------------------------------------------------------------
# records


class _RecordError(Exception):
    """Internal: malformed record at byte ``pos`` of the records area (index ``index``)."""

    def __init__(self, message: str, pos: int, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.index = index


def _read_headers(data: bytes, p: int) -> tuple[list[tuple[str, bytes | None]], int]:
    """Headers of one record starting at its headerCount varint (DefaultRecord.readHeaders)."""
    hc, p = read_varint(data, p)
    if hc < 0:
        raise _VarintError(f"negative header count {hc}")
    headers: list[tuple[str, bytes | None]] = []
    for _ in range(hc):
        kl, p = read_varint(data, p)
        if kl < 0:
            raise _VarintError(f"negative header key size {kl}")
        raw = data[p:p + kl]
        if len(raw) != kl:
            raise IndexError
        p += kl
        try:
            hkey = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _VarintError("header key is not valid UTF-8") from None
        vl, p = read_varint(data, p)
        if vl >= 0:
            hval: bytes | None = data[p:p + vl]
            p += vl
        else:
            hval = None
        headers.append((hkey, hval))
    return headers, p


# Zigzag decoding of one- and two-byte varints by table lookup: one subscript instead of four
# arithmetic operations, on every length/delta of every record.
_ZZ1 = tuple((u >> 1) ^ -(u & 1) for u in range(128))
_ZZ2 = tuple((u >> 1) ^ -(u & 1) for u in range(1 << 14))
#: ``_decode_entries`` statistics of a batch that breaks no KRaft invariant (compared by identity).
_CLEAN = (0, 0, 0, 0)


def _decode_entries(data: bytes, pos: int, end: int, count: int, base_offset: int,
                    base_ts: int) -> tuple[list[Entry], tuple[int, int, int, int]]:
    """Decode ``count`` records from ``data[pos:end]`` into (offset, timestamp, key, value) tuples.

    This is the hot path of the whole loader.  Returns the tuples plus counters used to check
    KRaft's invariants without a second pass: (records with a non-null key, records with a null or
    empty value, records with a non-zero timestamp delta, records with headers) -- the ``_CLEAN``
    object itself when all are zero.  Raises ``_RecordError`` on anything Kafka's
    DefaultRecord.readFrom would reject.  ``pos`` stays at the current record's start; ``p`` walks
    inside it.
    """
    out: list[Entry] = []
    append = out.append
    zz1 = _ZZ1
    zz2 = _ZZ2
    keys = bad_values = ts_deltas = with_headers = 0
    i = 0
    try:
        for i in range(count):
            # length (varint); records longer than 63 bytes take two bytes
            b = data[pos]
            if b < 0x80:
                ln = zz1[b]
                p = pos + 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    ln = zz2[(b & 0x7F) | (b2 << 7)]
                    p = pos + 2
                else:
                    ln, p = read_varint(data, pos)
            rec_end = p + ln
            if rec_end > end:
                raise _RecordError(f"record length {ln} does not fit in the batch", pos, i)
            p += 1  # attributes (unused)
            # timestampDelta (varlong): zero in KRaft
            b = data[p]
            if b == 0:
                ts = base_ts
                p += 1
            else:
                if b < 0x80:
                    ts = base_ts + zz1[b]
                    p += 1
                else:
                    b, p = read_varlong(data, p)
                    ts = base_ts + b
                ts_deltas += 1
            # offsetDelta (varint)
            b = data[p]
            if b < 0x80:
                offset = base_offset + zz1[b]
                p += 1
            else:
                b2 = data[p + 1]
                if b2 < 0x80:
                    offset = base_offset + zz2[(b & 0x7F) | (b2 << 7)]
                    p += 2
                elif data[p + 2] < 0x80:    # deltas 8192..1048575: the big batches of a snapshot
                    b = (b & 0x7F) | ((b2 & 0x7F) << 7) | (data[p + 2] << 14)
                    offset = base_offset + ((b >> 1) ^ -(b & 1))
                    p += 3
                else:
                    b, p = read_varint(data, p)
                    offset = base_offset + b
            # key: 0x01 = length -1 = null, the KRaft data-record case
            if data[p] == 1:
                key = None
                p += 1
            else:
                kl, p = read_varint(data, p)
                if kl >= 0:
                    key = data[p:p + kl]
                    p += kl
                    keys += 1
                else:  # Kafka treats every negative size as null
                    key = None
            # value
            b = data[p]
            if b < 0x80:
                vl = zz1[b]
                p += 1
            else:
                b2 = data[p + 1]
                if b2 < 0x80:
                    vl = zz2[(b & 0x7F) | (b2 << 7)]
                    p += 2
                else:
                    vl, p = read_varint(data, p)
            value: bytes | None
            if vl > 0:
                value = data[p:p + vl]
                p += vl
            else:
                value = None if vl < 0 else b""
                bad_values += 1
            # headers: none in KRaft
            if data[p] == 0:
                p += 1
            else:
                _, p = _read_headers(data, p)
                with_headers += 1
            if p != rec_end:
                raise _RecordError(f"record length {ln} does not match its content ({p - rec_end + ln} "
                                   f"bytes)", pos, i)
            append((offset, ts, key, value))
            pos = rec_end
    except IndexError:
        raise _RecordError("record runs past the end of the batch", pos, i) from None
    except _VarintError as e:
        raise _RecordError(str(e), pos, i) from None
    if pos != end:
        raise _RecordError(f"{end - pos} bytes left after the last of {count} records", pos, count)
    if keys or bad_values or ts_deltas or with_headers:
        return out, (keys, bad_values, ts_deltas, with_headers)
    return out, _CLEAN


def _decode_full(data: bytes, pos: int, end: int, count: int, base_offset: int,
                 base_ts: int) -> list[Record]:
    """Straightforward (slow) decoder producing :class:`Record` objects with headers.

    Kept deliberately separate from ``_decode_entries`` so tests can cross-check the two.
    """
    out: list[Record] = []
    i = 0
    rec_start = pos
    try:
        for i in range(count):
            rec_start = pos
            ln, pos = read_varint(data, pos)
            rec_end = pos + ln
            if ln <= 0 or rec_end > end:
                raise _RecordError(f"record length {ln} does not fit in the batch", rec_start, i)
            p = pos + 1
            tsd, p = read_varlong(data, p)
            od, p = read_varint(data, p)
            kl, p = read_varint(data, p)
            key = None
            if kl >= 0:
                key = data[p:p + kl]
                p += kl
            vl, p = read_varint(data, p)
            value = None
            if vl >= 0:
                value = data[p:p + vl]
                p += vl
            headers, p = _read_headers(data, p)
            if p != rec_end:
                raise _RecordError(f"record length {ln} does not match its content ({p - pos} bytes)",
                                   rec_start, i)
            out.append(Record(base_offset + od, base_ts + tsd, key, value, headers, rec_end - rec_start))
            pos = rec_end
    except IndexError:
        raise _RecordError("record runs past the end of the batch", rec_start, i) from None
    except _VarintError as e:
        raise _RecordError(str(e), rec_start, i) from None
    if pos != end:
        raise _RecordError(f"{end - pos} bytes left after the last of {count} records", pos, count)
    return out


# --------------------------------------------------------------------------------------------------
# batches


class RecordBatch:
    """The 61-byte header of one v2 batch, plus where it came from and lazy access to its records.

    ``position`` is the byte offset of the batch in ``source`` (a file name, or "fetch").  A batch
    keeps a reference to the buffer it was read from, so do not hold on to many of them: keep
    (source, position, base_offset, last_offset) instead and re-read (see ``metashell.log.reader``).
    """

    __slots__ = (
        "_buf",
        "_entries",
        "_start",
        "_stats",
        "attributes",
        "base_offset",
        "base_sequence",
        "base_timestamp",
        "batch_length",
        "crc",
        "last_offset_delta",
        "magic",
        "max_timestamp",
        "partition_leader_epoch",
        "position",
        "producer_epoch",
        "producer_id",
        "records_count",
        "source",
    )

    def __init__(self, header: tuple, position: int, source: str, buf: bytes, start: int) -> None:
        (self.base_offset, self.batch_length, self.partition_leader_epoch, self.magic, self.crc,
         self.attributes, self.last_offset_delta, self.base_timestamp, self.max_timestamp,
         self.producer_id, self.producer_epoch, self.base_sequence, self.records_count) = header
        self.position = position
        self.source = source
        self._buf = buf
        self._start = start
        self._entries: list[Entry] | None = None
        self._stats: tuple[int, int, int, int] | None = None

    @classmethod
    def parse(cls, buf: bytes, start: int = 0, source: str = "buffer", position: int | None = None,
              verify_crc: bool = True) -> RecordBatch:
        """Parse and validate the single batch at ``buf[start:]`` (framing, magic, CRC)."""
        pos = start if position is None else position
        if len(buf) - start < HEADER_SIZE:
            raise CorruptBatchError(f"{len(buf) - start} bytes cannot hold a batch header", source, pos)
        header = _unpack_header(buf, start)
        problem = _check_header(header, buf, start, len(buf) - start, verify_crc)
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
        return bytes(self._buf[self._start:self._start + LOG_OVERHEAD + self.batch_length])

    def compute_crc(self) -> int:
        """CRC-32C of bytes [21, end) -- what ``crc`` must equal."""
        s = self._start
        return _crc32c(memoryview(self._buf)[s + 21:s + LOG_OVERHEAD + self.batch_length])

    def crc_valid(self) -> bool:
        return self.compute_crc() == self.crc

    # -- records -----------------------------------------------------------------------------------
    def records_data(self) -> bytes:
        """The records area, decompressed (raises CorruptBatchError when it does not decompress)."""
        s = self._start
        raw = self._buf[s + HEADER_SIZE:s + LOG_OVERHEAD + self.batch_length]
        try:
            return decompress_records(self.attributes & ATTR_COMPRESSION_MASK, raw)
        except InflateLimitError as e:
            raise CorruptBatchError(f"batch at base offset {self.base_offset}: {e}", self.source,
                                    self.position) from None
        except (ValueError, OSError, EOFError, zlib.error, cramjam.DecompressionError) as e:
            # gzip raises OSError/EOFError/zlib.error, cramjam DecompressionError: all mean "corrupt"
            raise CorruptBatchError(
                f"batch at base offset {self.base_offset}: {self.compression_name} records do not "
                f"decompress ({type(e).__name__}: {e})", self.source, self.position) from None

    def _records_area(self) -> tuple[bytes, int, int, bool]:
        """(data, start, end, compressed) of the records to decode, without copying when possible."""
        if self.attributes & ATTR_COMPRESSION_MASK:
            data = self.records_data()
            return data, 0, len(data), True
        s = self._start
        return self._buf, s + HEADER_SIZE, s + LOG_OVERHEAD + self.batch_length, False

    def _locate(self, err: _RecordError, compressed: bool) -> CorruptBatchError:
        if compressed:
            return CorruptBatchError(
                f"batch at base offset {self.base_offset}: record {err.index}: {err.message} "
                f"(byte {err.pos} of the decompressed records)", self.source, self.position)
        return CorruptBatchError(
            f"batch at base offset {self.base_offset}: record {err.index}: {err.message}", self.source,
            self.position + (err.pos - self._start))

    def entries(self) -> list[Entry]:
        """All records as ``(offset, timestamp, key, value)`` tuples -- the fast path (cached).

        Headers are not returned (KRaft never writes any; use :meth:`records` to see them).  With
        LogAppendTime every timestamp is ``max_timestamp``, as in Kafka.
        """
        if self._entries is None:
            if self.records_count < 0:
                raise CorruptBatchError(f"batch at base offset {self.base_offset}: negative record "
                                        f"count {self.records_count}", self.source, self.position)
            data, start, end, compressed = self._records_area()
            try:
                entries, stats = _decode_entries(data, start, end, self.records_count, self.base_offset,
                                                 self.base_timestamp)
            except _RecordError as e:
                raise self._locate(e, compressed) from None
            if self.attributes & ATTR_TIMESTAMP_TYPE:
                mt = self.max_timestamp
                entries = [(o, mt, k, v) for o, _, k, v in entries]
            self._entries = entries
            self._stats = stats
        return self._entries

    def records(self) -> list[Record]:
        """All records as :class:`Record` objects, headers included (slower than :meth:`entries`)."""
        if self.records_count < 0:
            raise CorruptBatchError(f"batch at base offset {self.base_offset}: negative record count "
                                    f"{self.records_count}", self.source, self.position)
        data, start, end, compressed = self._records_area()
        try:
            recs = _decode_full(data, start, end, self.records_count, self.base_offset, self.base_timestamp)
        except _RecordError as e:
            raise self._locate(e, compressed) from None
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
        stats = self._stats
        if stats is _CLEAN and self.last_offset_delta == n - 1 and not self.attributes & ATTR_CONTROL:
            return []
        keys, bad_values, ts_deltas, with_headers = stats or _CLEAN
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
        return (f"RecordBatch(source={self.source!r}, position={self.position}, base_offset="
                f"{self.base_offset}, last_offset={self.last_offset}, epoch={self.partition_leader_epoch}, "
                f"count={self.records_count}, control={self.is_control}, "
                f"compression={self.compression_name}, size={self.size})")


def _check_header(header: tuple, buf: bytes, start: int, available: int, verify_crc: bool) -> str | None:
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
        computed = _crc32c(memoryview(buf)[start + 21:start + size])
        if computed != header[4]:
            return (f"batch at base offset {header[0]}: CRC mismatch (stored 0x{header[4]:08x}, "
                    f"computed 0x{computed:08x})")
    if header[5] & ATTR_COMPRESSION_MASK > COMPRESSION_ZSTD:
        return f"batch at base offset {header[0]}: unknown compression type {header[5] & 7}"
    if header[12] < 0:
        return f"batch at base offset {header[0]}: negative record count {header[12]}"
    return None


# --------------------------------------------------------------------------------------------------
# iterating a buffer of batches (FileLogInputStream rules)


class _Tail:
    """How a scan finds out what lies after a position: only the buffer, or also the file."""

    def __init__(self, buf: bytes, base: int) -> None:
        self.buf = buf
        self.base = base  # file position of buf[0]

    def size(self) -> int:
        return self.base + len(self.buf)

    def read(self, pos: int, n: int) -> bytes:
        rel = pos - self.base
        return self.buf[rel:rel + n]

    def rest_is_zero(self, pos: int) -> bool:
        rel = pos - self.base
        return self.buf.count(0, rel) == len(self.buf) - rel

    def nothing_after(self, pos: int) -> bool:
        """True when no further batch can follow ``pos``: ≤ 17 bytes left, or a zero-filled tail."""
        left = self.size() - pos
        if left <= HEADER_SIZE_UP_TO_MAGIC:
            return True
        head = self.read(pos, LOG_OVERHEAD)
        return len(head) == LOG_OVERHEAD and _unpack_int32(head, 8)[0] == 0 and self.rest_is_zero(pos)


class _Scan:
    """One pass of FileLogInputStream over ``buf``; ``stop`` says why it ended (see _scan)."""

    __slots__ = ("decode", "lenient_tail", "need", "source", "stop", "stop_pos", "verify_crc", "warn")

    def __init__(self, source: str, lenient_tail: bool, warn: WarnFn, verify_crc: bool, decode: bool) -> None:
        self.source = source
        self.lenient_tail = lenient_tail
        self.warn = warn
        self.verify_crc = verify_crc
        self.decode = decode
        self.stop = ""
        self.stop_pos = 0
        self.need = 0

    def corrupt(self, message: str, position: int, tail: _Tail, after: int | None) -> None:
        """A batch Kafka would reject: a warning if it is the torn end of the last segment, else raise.

        ``after`` is where the next batch would start (None when the batch cannot even be framed).
        """
        if self.lenient_tail and (after is None or tail.nothing_after(after)):
            self.warn(LogWarning(
                "corrupt-tail", f"{message}; ignoring it and everything after it, as Kafka's log "
                f"recovery would truncate the segment here", self.source, position))
            self.stop = "corrupt-tail"
            return
        raise CorruptBatchError(message, self.source, position)

    def run(self, buf: bytes, pos: int, base: int, eof: bool, tail: _Tail) -> Iterator[RecordBatch]:
        """Yield the valid batches of ``buf[pos:]``; ``base`` = source position of ``buf[0]``.

        On return ``stop`` is "end" (clean end of data), "torn" (partial last batch, warned),
        "corrupt-tail" (warned) or "more" (not ``eof``: call again from ``stop_pos`` with at least
        ``need`` bytes available).
        """
        end = len(buf)
        source = self.source
        verify_crc = self.verify_crc
        decode = self.decode
        mv = memoryview(buf)
        self.stop = ""
        new_batch = RecordBatch.__new__
        decode_entries = _decode_entries
        while True:
            rem = end - pos
            # Fast path: a complete, valid, uncompressed CreateTime batch (everything KRaft writes).
            if rem >= HEADER_SIZE:
                header = _unpack_header(buf, pos)
                size = header[1] + LOG_OVERHEAD
                if (HEADER_SIZE <= size <= rem and header[3] == 2 and not header[5] & 0x0F
                        and header[12] >= 0 and (not verify_crc or _crc32c(mv[pos + 21:pos + size]) == header[4])):
                    batch = new_batch(RecordBatch)
                    (batch.base_offset, batch.batch_length, batch.partition_leader_epoch, batch.magic, batch.crc,
                     batch.attributes, batch.last_offset_delta, batch.base_timestamp, batch.max_timestamp,
                     batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.records_count) = header
                    batch.position = base + pos
                    batch.source = source
                    batch._buf = buf
                    batch._start = pos
                    if decode:
                        try:
                            batch._entries, batch._stats = decode_entries(buf, pos + HEADER_SIZE, pos + size,
                                                                          header[12], header[0], header[7])
                        except _RecordError as e:
                            err = batch._locate(e, False)
                            self.stop_pos = pos
                            self.corrupt(err.message, base + pos if err.offset is None else err.offset, tail,
                                         base + pos + size)
                            return
                    else:
                        batch._entries = batch._stats = None
                    yield batch
                    pos += size
                    continue
            # Slow path: work out exactly what is wrong (or compressed, or the end of the data).
            if rem <= HEADER_SIZE_UP_TO_MAGIC:
                if not eof:
                    self.stop, self.stop_pos, self.need = "more", pos, HEADER_SIZE_UP_TO_MAGIC + 1
                else:
                    self.stop, self.stop_pos = "end", pos
                return
            length = _unpack_int32(buf, pos + 8)[0]
            size = length + LOG_OVERHEAD
            if size > LIMITS.max_batch_bytes:
                self.stop_pos = pos
                self.corrupt(f"batch length {length} is beyond the largest batch metashell reads "
                             f"({LIMITS.max_batch_bytes} bytes; Kafka writes at most 8 MiB; "
                             f"--max-batch-bytes raises the cap)", base + pos, tail, None)
                return
            if length < MIN_BATCH_LENGTH:
                if length == 0 and tail.rest_is_zero(base + pos):
                    self.stop, self.stop_pos = "end", pos  # zero-filled (pre-allocated) tail
                    return
                self.stop_pos = pos
                self.corrupt(f"batch length {length} is smaller than the minimum {MIN_BATCH_LENGTH}",
                             base + pos, tail, None)
                return
            if size > rem:
                self.stop_pos = pos
                if not eof:
                    self.stop, self.need = "more", size
                    return
                self.stop = "torn"
                self.warn(LogWarning(
                    "torn-tail", f"last batch is partial ({rem} of {size} bytes; a write was cut off): "
                    f"ignored", source, base + pos))
                return
            if rem < HEADER_SIZE:  # size >= HEADER_SIZE is checked below; here the magic is bad
                header = (0, length, 0, buf[pos + 16] - 256 if buf[pos + 16] > 127 else buf[pos + 16],
                          0, 0, 0, 0, 0, 0, 0, 0, 0)
            else:
                header = _unpack_header(buf, pos)
            if header[3] != 2 or size < HEADER_SIZE:
                problem = _check_header(header, buf, pos, rem, False)
            elif verify_crc and _crc32c(mv[pos + 21:pos + size]) != header[4]:
                problem = _check_header(header, buf, pos, rem, True)
            elif header[5] & ATTR_COMPRESSION_MASK > COMPRESSION_ZSTD or header[12] < 0:
                problem = _check_header(header, buf, pos, rem, False)
            else:
                problem = None
            where = base + pos
            if problem is None:
                batch = RecordBatch(header, base + pos, source, buf, pos)
                if decode:
                    try:
                        batch.entries()
                    except CorruptBatchError as e:
                        problem = e.message
                        where = base + pos if e.offset is None else e.offset
                if problem is None:
                    yield batch
                    pos += size
                    continue
            # an invalid batch: the tail object finds out whether anything follows it
            self.stop_pos = pos
            self.corrupt(problem, where, tail, base + pos + size)
            return


def iter_batches(buf: bytes, source: str = "buffer", *, base_position: int = 0, lenient_tail: bool = False,
                 warn: WarnFn | None = None, verify_crc: bool = True,
                 decode: bool = True) -> Iterator[RecordBatch]:
    """Yield the record batches in ``buf`` following Kafka's FileLogInputStream rules (FORMATS 2.6).

    * iteration stops when 17 or fewer bytes remain, or at a zero-filled tail (batchLength 0 and
      only zeros after it: a pre-allocated segment);
    * a partial last batch (a cut-off write, or the end of a Fetch response) is a "torn-tail"
      :class:`LogWarning` passed to ``warn``, not an error;
    * an invalid batch (batchLength < 14, bad magic, bad CRC, unknown codec, records that do not
      parse) raises :class:`CorruptBatchError` naming ``source`` and the byte offset -- unless
      ``lenient_tail`` is set (the last segment of a directory) and nothing follows it, in which case
      it is reported as a "corrupt-tail" warning, as Kafka's recovery would truncate it.

    With ``decode`` (the default) every batch's records are decoded before it is yielded (cached:
    :meth:`RecordBatch.entries` is then free), so a record that does not parse is located here.
    ``base_position`` is added to positions (when ``buf`` starts in the middle of a file).
    ``warn`` defaults to logging the warning on the "metashell.log" logger.
    """
    if not isinstance(buf, bytes):  # keys/values must come out as bytes, not memoryview slices
        buf = bytes(buf)
    scan = _Scan(source, lenient_tail, warn or _log_warning, verify_crc, decode)
    yield from scan.run(buf, 0, base_position, True, _Tail(buf, base_position))


# --------------------------------------------------------------------------------------------------
# encoding (tests and the benchmark generator)


def encode_record(offset_delta: int, key: bytes | None, value: bytes | None, timestamp_delta: int = 0,
                  headers: Sequence[tuple[str, bytes | None]] = ()) -> bytes:
    """One record in the v2 layout (DefaultRecord.writeTo), length prefix included."""
    body = bytearray(b"\x00")
    body += encode_varint(timestamp_delta)
    body += encode_varint(offset_delta)
    if key is None:
        body += b"\x01"
    else:
        body += encode_varint(len(key))
        body += key
    if value is None:
        body += b"\x01"
    else:
        body += encode_varint(len(value))
        body += value
    body += encode_varint(len(headers))
    for hk, hv in headers:
        kb = hk.encode("utf-8")
        body += encode_varint(len(kb))
        body += kb
        if hv is None:
            body += b"\x01"
        else:
            body += encode_varint(len(hv))
            body += hv
    return encode_varint(len(body)) + bytes(body)


RecordSpec = bytes | tuple


def build_batch(base_offset: int, epoch: int, records: Iterable[RecordSpec], timestamp: int,
                control: bool = False, compression: int = 0, *, producer_id: int = -1,
                producer_epoch: int = -1, base_sequence: int = -1, attributes: int = 0) -> bytes:
    """Encode one v2 batch the way KRaft's BatchBuilder does (byte for byte when uncompressed).

    ``records``: each item is a value (``bytes``, null key -- a metadata record) or a tuple
    ``(key, value)`` / ``(key, value, headers)`` (control records: key = 4-byte control key).
    Offsets are contiguous from ``base_offset``; every record gets ``timestamp`` (delta 0), which is
    also the batch's base and max timestamp.  ``attributes`` adds extra attribute bits.
    """
    body = bytearray()
    n = 0
    for n, rec in enumerate(records, 1):
        if isinstance(rec, (bytes, bytearray, memoryview)):
            body += encode_record(n - 1, None, bytes(rec))
        else:
            key, value, *rest = rec
            body += encode_record(n - 1, key, value, 0, rest[0] if rest else ())
    area = compress_records(compression, bytes(body)) if compression else bytes(body)
    attrs = (compression & ATTR_COMPRESSION_MASK) | (ATTR_CONTROL if control else 0) | attributes
    tail = struct.pack(">hiqqqhii", attrs, n - 1, timestamp, timestamp, producer_id, producer_epoch,
                       base_sequence, n) + area
    crc = _crc32c(tail)
    return struct.pack(">qiibI", base_offset, len(tail) + 9, epoch, 2, crc) + tail
