"""Every damaged batch of a file, read past where the framing allows, as ``kafka-dump-log`` does.

A load stops at the first damaged batch (an image past it would be one that never existed), and
``--salvage`` keeps what came before.  An integrity report needs more: *every* damaged batch, each
with its file, byte offset and base offset.  A batch's length field frames it, so a batch whose CRC
fails (or whose header is otherwise invalid) is stepped over and the next one read; only a length
that cannot frame a batch (too small, or past the end of the file) ends the scan of that file, and
that is said too.  The file is read a chunk at a time, never whole, and nothing is decoded.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import NamedTuple

from .batch import HEADER, HEADER_SIZE, LOG_OVERHEAD, check_header
from .files import open_regular

__all__ = ["Damage", "damaged_batches"]

_FRAME = struct.Struct(">qi")
_CHUNK = 4 << 20


class Damage(NamedTuple):
    """One place a file is not whole."""

    file: str
    position: int
    """Byte offset of the batch in the file."""
    base_offset: int | None
    """The batch's base offset as its header says (None where no header could be read)."""
    what: str
    last: bool = False
    """The file's end: a batch cut short there (a torn tail, which Kafka truncates when it starts)."""

    def __str__(self) -> str:
        base = "" if self.base_offset is None else f" (base offset {self.base_offset})"
        return f"{self.file} byte {self.position}{base}: {self.what}"


def damaged_batches(path: str | os.PathLike[str]) -> Iterator[Damage]:
    """The damaged batches of the file at ``path``, in order (see the module docstring)."""
    name = os.path.basename(os.fspath(path))
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        pos = 0
        while pos < size:
            f.seek(pos)
            head = f.read(HEADER_SIZE)
            if len(head) < LOG_OVERHEAD:
                yield Damage(
                    name, pos, None, f"{len(head)} byte(s) at the end, too few for a batch", last=True
                )
                return
            base, length = _FRAME.unpack_from(head)
            end = pos + LOG_OVERHEAD + length
            if length < HEADER_SIZE - LOG_OVERHEAD or end > size:
                cut = end > size and length >= HEADER_SIZE - LOG_OVERHEAD
                what = (
                    f"batch of {LOG_OVERHEAD + length} bytes cut short ({size - pos} bytes left)"
                    if cut
                    else f"length {length} cannot frame a batch: the rest of the file ({size - pos} bytes) is unreadable"
                )
                yield Damage(name, pos, base, what, last=cut)
                return
            problem = _check(f, pos, head, LOG_OVERHEAD + length)
            if problem is not None:
                said = f"batch at base offset {base}: "  # (the header's checks say it; Damage does too)
                yield Damage(name, pos, base, problem.removeprefix(said))
            pos = end


def _check(f: object, pos: int, head: bytes, size: int) -> str | None:
    """Why the framed batch at ``pos`` is invalid (its header and CRC), read in chunks."""
    if len(head) < HEADER_SIZE:
        return "header cut short"
    header = HEADER.unpack_from(head)
    if size <= _CHUNK:
        f.seek(pos)  # type: ignore[attr-defined]
        buf = f.read(size)  # type: ignore[attr-defined]
        return check_header(header, buf, 0, len(buf), verify_crc=True)
    # a batch larger than a chunk (a snapshot's 8 MiB runs): its header first, then the CRC by parts
    from .checksum import package_crc32c  # (its crc32c takes the running value: a CRC by parts)

    crc32c_update = package_crc32c()
    problem = check_header(header, head, 0, size, verify_crc=False)
    if problem is not None:
        return problem
    crc = 0
    f.seek(pos + 21)  # type: ignore[attr-defined]
    left = size - 21
    while left:
        part = f.read(min(left, _CHUNK))  # type: ignore[attr-defined]
        if not part:
            return "batch cut short"
        crc = crc32c_update(part, crc)
        left -= len(part)
    if crc != header[4]:
        return f"CRC mismatch (stored 0x{header[4]:08x}, computed 0x{crc:08x})"
    return None
