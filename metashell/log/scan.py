"""Finding the batches in a buffer or a file, by Kafka's ``FileLogInputStream`` rules.

A scan walks a buffer batch by batch: a fast path takes the complete, valid, uncompressed batches
KRaft writes; a slow path works out exactly what is wrong with anything else -- a torn last write,
a zero-filled pre-allocated tail, a header that lies about its length, a bad magic or CRC, a
compressed bomb -- and either stops with a warning (the end of the last segment, where Kafka's log
recovery would truncate) or raises :class:`CorruptBatchError` naming the file and byte offset.

What lies after the buffer is asked of a :class:`Tail`: for a buffer, nothing; for a file
(``metashell.log.files``), the file itself, read in bounded pieces.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING

from metashell.log.batch import (
    ATTR_COMPRESSION_MASK,
    HEADER,
    HEADER_SIZE,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    RecordBatch,
    check_header,
)
from metashell.log.checksum import crc32c
from metashell.log.compression import COMPRESSION_ZSTD, LIMITS
from metashell.log.problems import CorruptBatchError, LogWarning, WarnFn, log_warning
from metashell.log.records import RecordError, decode_entries

if TYPE_CHECKING:
    from metashell.log.bulk import BatchRun

__all__ = ["BatchScan", "Tail", "iter_batches"]

_unpack_header = HEADER.unpack_from
_unpack_int32 = struct.Struct(">i").unpack_from


class Tail:
    """How a scan finds out what lies after a position: only the buffer, or also the file."""

    def __init__(self, buf: bytes, base: int) -> None:
        self.buf = buf
        self.base = base  # file position of buf[0]

    def size(self) -> int:
        return self.base + len(self.buf)

    def read(self, pos: int, n: int) -> bytes:
        rel = pos - self.base
        return self.buf[rel : rel + n]

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


class BatchScan:
    """One pass of FileLogInputStream over ``buf``; ``stop`` says why it ended (see :meth:`run`)."""

    __slots__ = (
        "bulk",
        "decode",
        "lenient_tail",
        "need",
        "source",
        "stop",
        "stop_pos",
        "torn_ok",
        "verify_crc",
        "warn",
    )

    def __init__(
        self,
        source: str,
        lenient_tail: bool,
        warn: WarnFn,
        verify_crc: bool,
        decode: bool,
        torn_ok: bool | None = None,
    ) -> None:
        """``torn_ok``: whether the data may end inside a batch (a Fetch response, the last segment,
        a lone file); default ``lenient_tail``.  Elsewhere a cut-off batch is damage: a segment
        that is not the last was closed whole by Kafka, and replaying the later segments over the
        lost batch would show an image that never existed."""
        self.source = source
        self.lenient_tail = lenient_tail
        self.torn_ok = lenient_tail if torn_ok is None else torn_ok
        self.warn = warn
        self.verify_crc = verify_crc
        self.decode = decode
        self.stop = ""
        self.stop_pos = 0
        self.need = 0
        self.bulk: BatchRun | None = None
        """Offered the buffer before each batch once ready (``metashell.log.bulk``)."""

    def corrupt(self, message: str, position: int, tail: Tail, after: int | None) -> None:
        """A batch Kafka would reject: a warning if it is the torn end of the last segment, else raise.

        ``after`` is where the next batch would start (None when the batch cannot even be framed).
        """
        if self.lenient_tail and (after is None or tail.nothing_after(after)):
            self.warn(
                LogWarning(
                    "corrupt-tail",
                    f"{message}; ignoring it and everything after it, as Kafka's log "
                    f"recovery would truncate the segment here",
                    self.source,
                    position,
                )
            )
            self.stop = "corrupt-tail"
            return
        raise CorruptBatchError(message, self.source, position)

    def run(self, buf: bytes, pos: int, base: int, eof: bool, tail: Tail) -> Iterator[RecordBatch]:
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
        decode_entries_ = decode_entries
        max_records = LIMITS.max_records
        bulk = self.bulk
        while True:
            if bulk is not None and bulk.ready and pos < end:
                pos = bulk.run(buf, pos, end, base)
            rem = end - pos
            # Fast path: a complete, valid, uncompressed CreateTime batch (everything KRaft writes).
            if rem >= HEADER_SIZE:
                header = _unpack_header(buf, pos)
                size = header[1] + LOG_OVERHEAD
                if (
                    HEADER_SIZE <= size <= rem
                    and header[3] == 2
                    and not header[5] & 0x0F
                    and 0 <= header[12] <= max_records
                    and (not verify_crc or crc32c(mv[pos + 21 : pos + size]) == header[4])
                ):
                    batch = new_batch(RecordBatch)
                    (
                        batch.base_offset,
                        batch.batch_length,
                        batch.partition_leader_epoch,
                        batch.magic,
                        batch.crc,
                        batch.attributes,
                        batch.last_offset_delta,
                        batch.base_timestamp,
                        batch.max_timestamp,
                        batch.producer_id,
                        batch.producer_epoch,
                        batch.base_sequence,
                        batch.records_count,
                    ) = header
                    batch.position = base + pos
                    batch.source = source
                    batch._buf = buf
                    batch._start = pos
                    if decode:
                        try:
                            batch.decoded, batch.stats = decode_entries_(
                                buf, pos + HEADER_SIZE, pos + size, header[12], header[0], header[7]
                            )
                        except RecordError as e:
                            err = batch.locate(e, False)
                            self.stop_pos = pos
                            self.corrupt(
                                err.message,
                                base + pos if err.offset is None else err.offset,
                                tail,
                                base + pos + size,
                            )
                            return
                    else:
                        batch.decoded = batch.stats = None
                    yield batch
                    del batch  # it holds ``buf``: not while the bulk applies what follows (reader.py)
                    pos += size
                    continue
            # Slow path: work out exactly what is wrong (or compressed, or the end of the data).
            if rem <= HEADER_SIZE_UP_TO_MAGIC:
                if not eof:
                    self.stop, self.stop_pos, self.need = "more", pos, HEADER_SIZE_UP_TO_MAGIC + 1
                    return
                self.stop, self.stop_pos = "end", pos
                if not rem:
                    return
                if not self.torn_ok:  # zeros too: Kafka trims a segment when it rolls it
                    raise CorruptBatchError(
                        f"{rem} byte(s) after the last batch, too few for a batch header: a batch "
                        f"was cut off, and this is not the end of the log",
                        source,
                        base + pos,
                    )
                self.stop = "torn"  # Kafka's reader stops here too; say so
                self.warn(
                    LogWarning(
                        "torn-tail",
                        f"{rem} byte(s) after the last batch, too few for a batch header (a write "
                        f"was cut off): ignored",
                        source,
                        base + pos,
                    )
                )
                return
            length = _unpack_int32(buf, pos + 8)[0]
            size = length + LOG_OVERHEAD
            if size > LIMITS.max_batch_bytes:
                self.stop_pos = pos
                self.corrupt(
                    f"batch length {length} is beyond the largest batch metashell reads "
                    f"({LIMITS.max_batch_bytes} bytes; Kafka writes at most 8 MiB; "
                    f"--max-batch-bytes raises the cap)",
                    base + pos,
                    tail,
                    None,
                )
                return
            if length < MIN_BATCH_LENGTH:
                if length == 0 and self.torn_ok and tail.rest_is_zero(base + pos):
                    self.stop, self.stop_pos = "end", pos  # zero-filled (pre-allocated) tail
                    return
                self.stop_pos = pos
                self.corrupt(
                    f"batch length {length} is smaller than the minimum {MIN_BATCH_LENGTH}",
                    base + pos,
                    tail,
                    None,
                )
                return
            if size > rem:
                self.stop_pos = pos
                if not eof:
                    self.stop, self.need = "more", size
                    return
                if not self.torn_ok:
                    raise CorruptBatchError(
                        f"batch is cut off ({rem} of {size} bytes): a write was cut off, and this is "
                        f"not the end of the log",
                        source,
                        base + pos,
                    )
                self.stop = "torn"
                self.warn(
                    LogWarning(
                        "torn-tail",
                        f"last batch is partial ({rem} of {size} bytes; a write was cut off): ignored",
                        source,
                        base + pos,
                    )
                )
                return
            if rem < HEADER_SIZE:  # size >= HEADER_SIZE is checked below; here the magic is bad
                header = (
                    0,
                    length,
                    0,
                    buf[pos + 16] - 256 if buf[pos + 16] > 127 else buf[pos + 16],
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                )
            else:
                header = _unpack_header(buf, pos)
            if header[3] != 2 or size < HEADER_SIZE:
                problem = check_header(header, buf, pos, rem, False)
            elif verify_crc and crc32c(mv[pos + 21 : pos + size]) != header[4]:
                problem = check_header(header, buf, pos, rem, True)
            elif (
                header[5] & ATTR_COMPRESSION_MASK > COMPRESSION_ZSTD
                or not 0 <= header[12] <= LIMITS.max_records
            ):
                problem = check_header(header, buf, pos, rem, False)
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
                    del batch
                    pos += size
                    continue
            # an invalid batch: the tail object finds out whether anything follows it
            self.stop_pos = pos
            self.corrupt(problem, where, tail, base + pos + size)
            return


def iter_batches(
    buf: bytes,
    source: str = "buffer",
    *,
    base_position: int = 0,
    lenient_tail: bool = False,
    warn: WarnFn | None = None,
    verify_crc: bool = True,
    decode: bool = True,
) -> Iterator[RecordBatch]:
    """Yield the record batches in ``buf`` following Kafka's FileLogInputStream rules (FORMATS 2.6).

    * iteration stops when 17 or fewer bytes remain, or at a zero-filled tail (batchLength 0 and
      only zeros after it: a pre-allocated segment);
    * a partial last batch (a cut-off write, or the end of a Fetch response) is a "torn-tail"
      :class:`LogWarning` passed to ``warn``, not an error (a buffer may end anywhere; for files,
      :func:`~metashell.log.files.iter_file_batches` allows it only with ``lenient_tail``);
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
    scan = BatchScan(source, lenient_tail, warn or log_warning, verify_crc, decode, torn_ok=True)
    yield from scan.run(buf, 0, base_position, True, Tail(buf, base_position))
