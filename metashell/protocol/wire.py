"""Kafka's variable-length integers, the one implementation every layer uses.

Two encodings share LEB128 framing (FORMATS.md section 3.1):

* unsigned varints (``ByteUtils.readUnsignedVarint``): lengths and tags of the flexible message
  versions, the frame and version of metadata record values, snappy's length preamble;
* zigzag varints and varlongs (``ByteUtils.readVarint``/``readVarlong``): the fields of a record
  inside a v2 batch (length, timestamp and offset deltas, key and value sizes, headers).

Readers raise :class:`Malformed` (with the position) for a varint that runs past Kafka's limit of 5
bytes (10 for varlongs) and ``IndexError`` when the buffer ends inside one; callers turn both into a
``DecodeError`` that names the file and offset.
"""

from __future__ import annotations

__all__ = [
    "ZIGZAG_1",
    "ZIGZAG_2",
    "Malformed",
    "encode_varint",
    "read_uvarint",
    "read_varint",
    "read_varlong",
    "write_uvarint",
]


class Malformed(Exception):
    """Bytes that do not decode as the format says; ``pos`` is where the problem was seen."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


def _read_leb128(buf: bytes, pos: int, max_bytes: int, what: str) -> tuple[int, int]:
    value = 0
    shift = 0
    start = pos
    for _ in range(max_bytes):
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
    raise Malformed(f"{what} is longer than {max_bytes} bytes", start)


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """Unsigned varint of at most 5 bytes at ``pos``; returns (value, next pos).

    Spelled out rather than delegated: generated decoders call it for every multi-byte length.
    """
    start = pos
    value = 0
    shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise Malformed("varint is longer than 5 bytes", start)


def write_uvarint(out: bytearray, value: int) -> None:
    """Append ``value`` as an unsigned varint (negative int32 values as their two's complement)."""
    if value < 0:
        value &= 0xFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    """Zigzag varint (int32) at ``pos``; returns (value, next pos)."""
    u, pos = _read_leb128(buf, pos, 5, "varint")
    u &= 0xFFFFFFFF
    return (u >> 1) ^ -(u & 1), pos


def read_varlong(buf: bytes, pos: int) -> tuple[int, int]:
    """Zigzag varlong (int64) at ``pos``; returns (value, next pos)."""
    u, pos = _read_leb128(buf, pos, 10, "varlong")
    u &= 0xFFFFFFFFFFFFFFFF
    return (u >> 1) ^ -(u & 1), pos


def encode_varint(n: int) -> bytes:
    """Zigzag + LEB128 of ``n`` (the same bytes for a varint and a varlong of equal value)."""
    u = ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while u >= 0x80:
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u)
    return bytes(out)


def _zigzag_table(size: int) -> tuple[int, ...]:
    """``(u >> 1) ^ -(u & 1)`` for every ``u < size``: 0, -1, 1, -2, 2 ... filled by slice
    assignment, at C speed (a generator took 7 ms of every start for the two-byte table)."""
    table = [0] * size
    table[0::2] = range(size // 2)
    table[1::2] = range(-1, -size // 2 - 1, -1)
    return tuple(table)


#: Zigzag values of every one-byte varint, indexed by the byte: hot decoders look a length up in one
#: subscript instead of four arithmetic operations.
ZIGZAG_1 = _zigzag_table(128)
#: The same for two-byte varints, indexed by ``(b0 & 0x7F) | (b1 << 7)``.
ZIGZAG_2 = _zigzag_table(1 << 14)
