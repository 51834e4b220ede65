"""The records inside a v2 batch: decoding the records area into offsets, keys and values.

A batch's records area (decompressed when needed) is ``recordsCount`` records, each a varint length
followed by attributes, timestamp and offset deltas, key, value and headers (DefaultRecord,
FORMATS.md section 2.3).  Two decoders read it:

* :func:`decode_entries_python`, the hot path of the whole loader: plain ``(offset, timestamp, key, value)``
  tuples decoded straight out of the buffer the batch was read into (only keys and values are
  copied), with the one- and two-byte varints that cover nearly every length inlined, plus counters
  for KRaft's invariants so no second pass is needed;
* :func:`decode_records`, deliberately straightforward and complete (headers, sizes), so tests can
  cross-check the two.

:func:`decode_entries` is the one the chosen engine runs (:mod:`metashell.engine`): the native
core's twin of ``decode_entries_python`` when it is built, with the same results and errors.

All raise :class:`RecordError` with the position inside the records area; the batch turns it into
a ``CorruptBatchError`` naming the file and byte offset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from metashell.engine import current as current_engine
from metashell.protocol.wire import ZIGZAG_1, ZIGZAG_2, Malformed, read_varint, read_varlong

__all__ = [
    "CLEAN_STATS",
    "Entry",
    "Record",
    "RecordError",
    "check_entries",
    "decode_entries",
    "decode_entries_python",
    "decode_records",
]

#: One decoded record on the fast path: (offset, timestamp, key, value).
Entry = tuple[int, int, bytes | None, bytes | None]
#: :func:`decode_entries` statistics of records that break no KRaft invariant (compared by identity).
CLEAN_STATS = (0, 0, 0, 0)


INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
_SAFE_BASE = 1 << 62
"""A base offset or timestamp within this of zero cannot leave 64 bits by a varint delta (< 2**63
minus 2**62): only a batch beyond it, or one with timestamp deltas, has its records checked."""


def _check_ranges(pairs: Iterable[tuple[int, int]], pos: int) -> None:
    """Raise when a record's offset or timestamp (a 64-bit base plus a delta) leaves 64 bits.
    Java would wrap it silently; no broker or controller ever wrote one, and every reader
    downstream (Arrow, Parquet, a tool parsing the JSON) fails on it far from here."""
    for i, (offset, ts) in enumerate(pairs):
        if not INT64_MIN <= offset <= INT64_MAX:
            raise RecordError(f"offset {offset} is outside the 64-bit range", pos, i)
        if not INT64_MIN <= ts <= INT64_MAX:
            raise RecordError(f"timestamp {ts} is outside the 64-bit range", pos, i)


class RecordError(Exception):
    """A malformed record at byte ``pos`` of the records area (record number ``index``)."""

    def __init__(self, message: str, pos: int, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.index = index


class Record:
    """A fully decoded record, headers included (the slow, complete path; see ``Entry``)."""

    __slots__ = ("headers", "key", "offset", "size", "timestamp", "value")

    def __init__(
        self,
        offset: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, bytes | None]] | None = None,
        size: int = 0,
    ) -> None:
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
            other.offset,
            other.timestamp,
            other.key,
            other.value,
            other.headers,
        )

    def __repr__(self) -> str:
        return (
            f"Record(offset={self.offset}, timestamp={self.timestamp}, key={self.key!r}, "
            f"value={self.value!r}, headers={self.headers!r})"
        )


def read_headers(data: bytes, p: int) -> tuple[list[tuple[str, bytes | None]], int]:
    """Headers of one record starting at its headerCount varint (DefaultRecord.readHeaders)."""
    hc, p = read_varint(data, p)
    if hc < 0:
        raise Malformed(f"negative header count {hc}", p)
    headers: list[tuple[str, bytes | None]] = []
    for _ in range(hc):
        kl, p = read_varint(data, p)
        if kl < 0:
            raise Malformed(f"negative header key size {kl}", p)
        raw = data[p : p + kl]
        if len(raw) != kl:
            raise IndexError
        p += kl
        try:
            hkey = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("header key is not valid UTF-8", p) from None
        vl, p = read_varint(data, p)
        if vl >= 0:
            hval: bytes | None = data[p : p + vl]
            p += vl
        else:
            hval = None
        headers.append((hkey, hval))
    return headers, p


def decode_entries_python(
    data: bytes, pos: int, end: int, count: int, base_offset: int, base_ts: int
) -> tuple[list[Entry], tuple[int, int, int, int]]:
    """Decode ``count`` records from ``data[pos:end]`` into (offset, timestamp, key, value) tuples.

    This is the hot path of the whole loader.  Returns the tuples plus counters used to check
    KRaft's invariants without a second pass: (records with a non-null key, records with a null or
    empty value, records with a non-zero timestamp delta, records with headers) -- the ``CLEAN_STATS``
    object itself when all are zero.  Raises ``RecordError`` on anything Kafka's
    DefaultRecord.readFrom would reject.  ``pos`` stays at the current record's start; ``p`` walks
    inside it.
    """
    out: list[Entry] = []
    append = out.append
    zz1 = ZIGZAG_1
    zz2 = ZIGZAG_2
    keys = bad_values = ts_deltas = with_headers = 0
    i = 0
    first = pos
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
                raise RecordError(f"record length {ln} does not fit in the batch", pos, i)
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
                elif data[p + 2] < 0x80:  # deltas 8192..1048575: the big batches of a snapshot
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
                    key = data[p : p + kl]
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
                value = data[p : p + vl]
                p += vl
            else:
                value = None if vl < 0 else b""
                bad_values += 1
            # headers: none in KRaft
            if data[p] == 0:
                p += 1
            else:
                _, p = read_headers(data, p)
                with_headers += 1
            if p != rec_end:
                raise RecordError(
                    f"record length {ln} does not match its content ({p - rec_end + ln} bytes)", pos, i
                )
            append((offset, ts, key, value))
            pos = rec_end
    except IndexError:
        raise RecordError("record runs past the end of the batch", pos, i) from None
    except Malformed as e:
        raise RecordError(str(e), pos, i) from None
    if pos != end:
        raise RecordError(f"{end - pos} bytes left after the last of {count} records", pos, count)
    if ts_deltas or not -_SAFE_BASE < base_offset < _SAFE_BASE:
        _check_ranges(((o, t) for o, t, _k, _v in out), first)
    if keys or bad_values or ts_deltas or with_headers:
        return out, (keys, bad_values, ts_deltas, with_headers)
    return out, CLEAN_STATS


def decode_records(
    data: bytes, pos: int, end: int, count: int, base_offset: int, base_ts: int
) -> list[Record]:
    """Straightforward (slow) decoder producing :class:`Record` objects with headers.

    Kept deliberately separate from ``decode_entries_python`` so tests can cross-check the two.
    """
    out: list[Record] = []
    i = 0
    rec_start = first = pos
    try:
        for i in range(count):
            rec_start = pos
            ln, pos = read_varint(data, pos)
            rec_end = pos + ln
            if ln <= 0 or rec_end > end:
                raise RecordError(f"record length {ln} does not fit in the batch", rec_start, i)
            p = pos + 1
            tsd, p = read_varlong(data, p)
            od, p = read_varint(data, p)
            kl, p = read_varint(data, p)
            key = None
            if kl >= 0:
                key = data[p : p + kl]
                p += kl
            vl, p = read_varint(data, p)
            value = None
            if vl >= 0:
                value = data[p : p + vl]
                p += vl
            headers, p = read_headers(data, p)
            if p != rec_end:
                raise RecordError(
                    f"record length {ln} does not match its content ({p - pos} bytes)", rec_start, i
                )
            out.append(Record(base_offset + od, base_ts + tsd, key, value, headers, rec_end - rec_start))
            pos = rec_end
    except IndexError:
        raise RecordError("record runs past the end of the batch", rec_start, i) from None
    except Malformed as e:
        raise RecordError(str(e), rec_start, i) from None
    if pos != end:
        raise RecordError(f"{end - pos} bytes left after the last of {count} records", pos, count)
    _check_ranges(((r.offset, r.timestamp) for r in out), first)
    return out


EntriesDecoder = Callable[[bytes, int, int, int, int, int], tuple[list[Entry], tuple[int, int, int, int]]]


def _engine_decode_entries() -> EntriesDecoder:
    """``decode_entries`` of the engine this process runs: the native core's, wrapped so that its
    errors are :class:`RecordError` and a buffer it does not take goes to Python."""
    native = current_engine().native
    if native is None:
        return decode_entries_python
    decode_native = native.decode_entries
    native_error = native.RecordDecodeError

    def decode_entries(
        data: bytes, pos: int, end: int, count: int, base_offset: int, base_ts: int
    ) -> tuple[list[Entry], tuple[int, int, int, int]]:
        if type(data) is not bytes:  # a bytearray or memoryview: Python reads any buffer
            return decode_entries_python(data, pos, end, count, base_offset, base_ts)
        try:
            out, stats = decode_native(data, pos, end, count, base_offset, base_ts)
        except native_error as e:
            raise RecordError(*e.args) from None
        except (OverflowError, ValueError):  # an argument outside the native types or the buffer
            return decode_entries_python(data, pos, end, count, base_offset, base_ts)
        return out, CLEAN_STATS if stats == CLEAN_STATS else stats

    return decode_entries


decode_entries: EntriesDecoder = _engine_decode_entries()
"""Decode a records area with the engine this process runs (see the module docstring)."""

EntriesChecker = Callable[[bytes, int, int, int, int, int], tuple[int, int, int, int]]


def _engine_check_entries() -> EntriesChecker:
    """``check_entries`` of the engine this process runs: the native core walks the records with no
    Python object made; the Python engine decodes them and lets them go."""
    native = current_engine().native
    if native is None:
        return lambda *args: decode_entries_python(*args)[1]
    check_native = native.check_entries
    native_error = native.RecordDecodeError

    def check_entries(
        data: bytes, pos: int, end: int, count: int, base_offset: int, base_ts: int
    ) -> tuple[int, int, int, int]:
        if type(data) is not bytes:
            return decode_entries_python(data, pos, end, count, base_offset, base_ts)[1]
        try:
            stats: tuple[int, int, int, int] = check_native(data, pos, end, count, base_offset, base_ts)
        except native_error as e:
            raise RecordError(*e.args) from None
        except (OverflowError, ValueError):
            return decode_entries_python(data, pos, end, count, base_offset, base_ts)[1]
        return stats

    return check_entries


check_entries: EntriesChecker = _engine_check_entries()
"""The counters of a records area, or :class:`RecordError` where ``decode_entries`` would raise one,
keeping nothing: a fetched snapshot is checked whole before the loader reads it again."""

CHECK_KEEPS_NOTHING: bool = current_engine().native is not None
"""Whether :data:`check_entries` reads records without making them (the native engine).  Where
it decodes them (Python), a reader that will need the records soon decodes them once instead."""
