"""Writing v2 record batches, byte for byte as KRaft's ``BatchBuilder`` does.

metashell never writes into a metadata directory; this module exists for the code that makes
inputs: the tests (crafted and hostile batches with valid CRCs), the in-process fake quorum and the
benchmark generator.  The readers never import it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import Any

from metashell.log.batch import ATTR_COMPRESSION_MASK, ATTR_CONTROL
from metashell.log.checksum import crc32c
from metashell.log.compression import compress_records
from metashell.protocol.wire import encode_varint

__all__ = ["RecordSpec", "build_batch", "encode_record", "frame_batch"]


def encode_record(
    offset_delta: int,
    key: bytes | None,
    value: bytes | None,
    timestamp_delta: int = 0,
    headers: Sequence[tuple[str, bytes | None]] = (),
) -> bytes:
    """One record in the v2 layout (DefaultRecord.writeTo), length prefix included."""
    body = bytearray(b"\x00")
    body += encode_varint(timestamp_delta)
    body += encode_varint(offset_delta)
    body += _sized(key)
    body += _sized(value)
    body += encode_varint(len(headers))
    for hk, hv in headers:
        body += _sized(hk.encode("utf-8"))
        body += _sized(hv)
    return encode_varint(len(body)) + bytes(body)


def _sized(data: bytes | None) -> bytes:
    """A varint length (-1 for null, encoded as 0x01) followed by the bytes."""
    return b"\x01" if data is None else encode_varint(len(data)) + data


RecordSpec = bytes | tuple[Any, ...]


def build_batch(
    base_offset: int,
    epoch: int,
    records: Iterable[RecordSpec],
    timestamp: int,
    control: bool = False,
    compression: int = 0,
    *,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    attributes: int = 0,
) -> bytes:
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
    header = (attrs, n - 1, timestamp, timestamp, producer_id, producer_epoch, base_sequence, n)
    return frame_batch(base_offset, epoch, header, area)


def frame_batch(base_offset: int, epoch: int, header: tuple[int, ...], area: bytes) -> bytes:
    """A v2 batch around a records ``area`` (compressed already, if its attributes say so):
    ``header`` is (attributes, lastOffsetDelta, baseTimestamp, maxTimestamp, producerId,
    producerEpoch, baseSequence, recordsCount), the fields the CRC covers before the records."""
    tail = struct.pack(">hiqqqhii", *header) + area
    return struct.pack(">qiibI", base_offset, len(tail) + 9, epoch, 2, crc32c(tail)) + tail
