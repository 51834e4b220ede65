"""Record-batch compression (gzip, snappy, lz4, zstd as Kafka frames them), with a cap on inflation.

A metadata batch is small: Kafka's Raft client closes a batch at 8 MiB (``KafkaRaftClient``'s
``MAX_BATCH_SIZE_BYTES``), snapshots use the same limit, and KRaft writes no compressed batches by
default.  A hostile file can hold 33 KB of zstd that inflates to a gigabyte, so every codec here
stops at :data:`LIMITS.max_inflated_bytes` (64 MiB by default, eight times what Kafka writes;
``--max-batch-bytes`` overrides it) and the batch is reported as corrupt with its file and offset.
Memory is then bounded by about twice the cap, whatever the input.

How the cap is enforced, per codec (none of them trusts a size the input declares):

* gzip: :mod:`zlib` streaming with ``max_length`` (member after member, as ``GZIPInputStream``);
* snappy: snappy-java's xerial stream is blocks of raw snappy, each declaring its inflated length in
  a varint; the declared lengths are summed against the cap before anything is inflated (and
  snappy refuses to write more than the declared length);
* lz4 and zstd: cramjam inflates into a buffer of a given size and fails when that is too small;
  the buffer grows from a guess up to the cap.
"""

from __future__ import annotations

import struct
import zlib
from types import ModuleType

from metashell.protocol.wire import Malformed, read_uvarint

__all__ = [
    "COMPRESSION_NAMES",
    "LIMITS",
    "InflateLimitError",
    "Limits",
    "compress_records",
    "decompress_records",
]

COMPRESSION_NONE, COMPRESSION_GZIP, COMPRESSION_SNAPPY, COMPRESSION_LZ4, COMPRESSION_ZSTD = range(5)
COMPRESSION_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")

_INT32 = struct.Struct(">i")
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01"  # magic, version 1, compatible 1
_XERIAL_BLOCK = 32 * 1024  # SnappyOutputStream's default block size, as Kafka uses it
_LZ4_BLOCK = 64 * 1024
_MIB = 1024 * 1024


class Limits:
    """Caps on what one batch may make metashell allocate (set once, from the command line):
    ``max_batch_bytes``, the largest batch read from a file or the wire (batchLength + 12; Kafka
    writes at most 8 MiB), and ``max_inflated_bytes``, the largest records area after decompression."""

    __slots__ = ("max_batch_bytes", "max_inflated_bytes")

    def __init__(self, max_batch_bytes: int = 64 * _MIB, max_inflated_bytes: int = 64 * _MIB) -> None:
        self.max_batch_bytes = max_batch_bytes
        self.max_inflated_bytes = max_inflated_bytes

    def __repr__(self) -> str:
        return f"Limits(max_batch_bytes={self.max_batch_bytes}, max_inflated_bytes={self.max_inflated_bytes})"

    @property
    def max_records(self) -> int:
        """Most records one batch may declare: one per 64 bytes of the inflated cap (1,048,576 at
        the default).  Bytes alone do not bound memory: a record can be 7 bytes and costs a tuple of
        about 150 once decoded, so 128 KB of gzip holding 6 million records cost 900 MB.  Kafka
        writes at most 8 MiB a batch and metadata records of 20 bytes and more: under 420,000."""
        return self.max_inflated_bytes // 64


#: The limits in force (``metashell.cli`` sets them from ``--max-batch-bytes``).
LIMITS = Limits()


class InflateLimitError(ValueError):
    """A compressed records area would inflate beyond :data:`LIMITS` (a decompression bomb)."""

    def __init__(self, codec: str, limit: int) -> None:
        super().__init__(
            f"{codec} records inflate beyond {limit} bytes (a metadata batch is at most "
            f"8 MiB; raise the cap with --max-batch-bytes if this file is genuine)"
        )


def _snappy_block(block: bytes, budget: int, limit: int) -> bytes:
    """One raw snappy block, refused when the inflated length its preamble declares exceeds what is
    left of the cap (``budget`` of ``limit``)."""
    try:
        size = read_uvarint(block, 0)[0]
    except (Malformed, IndexError):
        raise ValueError("snappy block has no valid length preamble") from None
    if size > budget:
        raise InflateLimitError("snappy", limit)
    return bytes(_cramjam().snappy.decompress_raw(block))


def _snappy_xerial_decompress(data: bytes, limit: int) -> bytes:
    """Decode snappy-java's ``SnappyOutputStream`` stream (what Kafka writes for snappy).

    Layout (snappy-java SnappyCodec/SnappyInputStream): 8-byte magic ``\\x82SNAPPY\\x00``,
    int32 version, int32 minimum compatible version (both big-endian), then blocks of
    ``int32 BE compressed length`` + one raw snappy block.  Like SnappyInputStream, input that does not
    start with that header is taken as a single raw snappy block, and a trailing fragment shorter
    than a block length is ignored.
    """
    n = len(data)
    if n < 16 or data[:8] != _XERIAL_MAGIC:
        return _snappy_block(data, limit, limit)
    version = _INT32.unpack_from(data, 8)[0]
    if version < 1:
        raise ValueError(f"snappy stream version {version} is not supported")
    parts = []
    pos = 16
    budget = limit
    while pos + 4 <= n:
        size = _INT32.unpack_from(data, pos)[0]
        pos += 4
        if size < 0 or pos + size > n:
            raise ValueError(f"snappy block of {size} bytes is truncated")
        part = _snappy_block(data[pos : pos + size], budget, limit)
        budget -= len(part)
        parts.append(part)
        pos += size
    return b"".join(parts)


def _gzip_decompress(data: bytes, limit: int) -> bytes:
    """gzip members one after another (GZIPInputStream reads concatenated members too), capped.

    Linear in the input however many members it holds: a member is fed in slices that start small
    and double, so the bytes zlib copies into ``unused_data`` at a member's end are bounded by about
    twice that member's size (handing it the whole rest each time copied the rest once per member:
    an 8 MB batch of tiny members took minutes)."""
    out: list[bytes] = []
    total = 0
    view = memoryview(data)
    pos, n = 0, len(data)
    while pos < n:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        step = 64
        while True:
            piece = view[pos : pos + step]
            chunk = d.decompress(piece, limit - total + 1)
            total += len(chunk)
            out.append(chunk)
            if total > limit or d.unconsumed_tail:
                raise InflateLimitError("gzip", limit)
            if d.eof:
                pos += len(piece) - len(d.unused_data)
                break
            pos += len(piece)
            if pos >= n:
                raise EOFError("gzip stream is truncated")
            step = min(step * 2, 1 << 20)
    return b"".join(out)


def _too_small(exc: Exception) -> bool:
    text = str(exc)
    return "whole buffer" in text or "smaller than required" in text


def _into(codec: str, decompress_into: object, data: bytes, limit: int) -> bytes:
    """Inflate with cramjam into a buffer that grows (x4) from a guess up to ``limit``."""
    size = min(limit, max(4 * len(data), 256 * 1024))
    while True:
        out = bytearray(size)
        try:
            n = decompress_into(data, out)  # type: ignore[operator]
        except _cramjam().DecompressionError as exc:
            if not _too_small(exc):
                raise
            if size >= limit:
                raise InflateLimitError(codec, limit) from None
            size = min(limit, size * 4)
            continue
        del out[n:]
        return bytes(out)


def _cramjam() -> ModuleType:
    """cramjam, imported on the first snappy, lz4 or zstd batch: a metadata log is rarely
    compressed, and a one-shot start should not pay for the library."""
    import cramjam

    return cramjam


def decompression_errors() -> tuple[type[BaseException], ...]:
    """What a corrupt records area raises while inflating: gzip OSError/EOFError/zlib.error,
    cramjam DecompressionError, and ValueError from the framing checks here."""
    return (ValueError, OSError, EOFError, zlib.error, _cramjam().DecompressionError)


def decompress_records(codec: int, data: bytes, limit: int | None = None) -> bytes:
    """Decompress a records area written by Kafka with ``codec`` (1 gzip, 2 snappy, 3 lz4, 4 zstd).

    ``limit`` (default :data:`LIMITS`) caps the inflated size: beyond it :class:`InflateLimitError`.
    Raises ValueError (or the codec library's error) on bad input; callers locate the error.
    """
    cap = LIMITS.max_inflated_bytes if limit is None else limit
    if codec == COMPRESSION_GZIP:
        return _gzip_decompress(data, cap)
    if codec == COMPRESSION_SNAPPY:
        return _snappy_xerial_decompress(data, cap)
    if codec == COMPRESSION_LZ4:
        return _into("lz4", _cramjam().lz4.decompress_into, data, cap)
    if codec == COMPRESSION_ZSTD:
        return _into("zstd", _cramjam().zstd.decompress_into, data, cap)
    if codec == COMPRESSION_NONE:
        return bytes(data)
    raise ValueError(f"unknown compression type {codec}")


def _xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32, only used for the 2-byte LZ4 frame descriptor checksum (speed is irrelevant)."""
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + p1 + p2) & mask, (seed + p2) & mask, seed & mask, (seed - p1) & mask]
        while i + 16 <= n:
            for j in range(4):
                lane = int.from_bytes(data[i : i + 4], "little")
                v[j] = (rotl((v[j] + lane * p2) & mask, 13) * p1) & mask
                i += 4
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & mask
    else:
        h = (seed + p5) & mask
    h = (h + n) & mask
    while i + 4 <= n:
        h = (rotl((h + int.from_bytes(data[i : i + 4], "little") * p3) & mask, 17) * p4) & mask
        i += 4
    while i < n:
        h = (rotl((h + data[i] * p5) & mask, 11) * p1) & mask
        i += 1
    h ^= h >> 15
    h = (h * p2) & mask
    h ^= h >> 13
    h = (h * p3) & mask
    h ^= h >> 16
    return h


def compress_records(codec: int, data: bytes) -> bytes:
    """Compress a records area in the framing Kafka's producers/brokers write for ``codec``.

    gzip: ``GZIPOutputStream`` (10-byte header with mtime 0, XFL 0, OS 255; deflate level 6);
    snappy: snappy-java ``SnappyOutputStream`` (xerial header, 32 KiB blocks);
    lz4: ``Lz4BlockOutputStream`` (frame, FLG 0x60, BD 0x40 = 64 KiB blocks, correct descriptor
    checksum, incompressible blocks stored raw, no content checksum); zstd: a standard frame.
    """
    if codec == COMPRESSION_NONE:
        return bytes(data)
    if codec == COMPRESSION_GZIP:
        comp = zlib.compressobj(6, zlib.DEFLATED, -15)
        body = comp.compress(data) + comp.flush()
        return (
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
            + body
            + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
        )
    if codec == COMPRESSION_SNAPPY:
        out = [_XERIAL_HEADER]
        for i in range(0, len(data), _XERIAL_BLOCK):
            block = bytes(_cramjam().snappy.compress_raw(data[i : i + _XERIAL_BLOCK]))
            out.append(struct.pack(">i", len(block)))
            out.append(block)
        return b"".join(out)
    if codec == COMPRESSION_LZ4:
        descriptor = b"\x60\x40"
        out = [struct.pack("<I", 0x184D2204), descriptor, bytes([(_xxh32(descriptor) >> 8) & 0xFF])]
        for i in range(0, len(data), _LZ4_BLOCK):
            chunk = data[i : i + _LZ4_BLOCK]
            block = bytes(_cramjam().lz4.compress_block(chunk, store_size=False))
            if len(block) >= len(chunk):
                out.append(struct.pack("<I", len(chunk) | 0x80000000))
                out.append(bytes(chunk))
            else:
                out.append(struct.pack("<I", len(block)))
                out.append(block)
        out.append(b"\x00\x00\x00\x00")
        return b"".join(out)
    if codec == COMPRESSION_ZSTD:
        return bytes(_cramjam().zstd.compress(data))
    raise ValueError(f"unknown compression type {codec}")
