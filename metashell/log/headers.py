"""Batch headers only: what several answers need from a log without its records.

``at`` resolves a time against the batches' max timestamps, ``doctor`` checks offsets and epochs,
``quorum`` finds a log's end and where two nodes' logs part (epoch and CRC).  All of them read the
same thing -- each batch's header, no CRC check, no record decoded -- so it is read here, once per
question, with unreadable files left to the load to report.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import NamedTuple

from metashell.errors import MetashellError

from .files import iter_file_batches
from .problems import unheard

__all__ = ["BatchHeader", "batch_headers", "merged_ranges", "offset_spans"]


class BatchHeader(NamedTuple):
    base_offset: int
    last_offset: int
    max_timestamp: int
    epoch: int
    """The batch's partitionLeaderEpoch (covered by no CRC)."""
    crc: int
    file: str
    """The file's name (for a finding to say where)."""
    position: int


def batch_headers(paths: Iterable[str | os.PathLike[str]]) -> list[BatchHeader]:
    """Every batch header of ``paths`` in order; a file that cannot be read is skipped."""
    out: list[BatchHeader] = []
    for path in paths:
        name = os.path.basename(os.fspath(path))
        try:
            for b in iter_file_batches(path, decode=False, verify_crc=False, lenient_tail=True, warn=unheard):
                last = b.base_offset + b.last_offset_delta
                out.append(
                    BatchHeader(
                        b.base_offset,
                        last,
                        b.max_timestamp,
                        b.partition_leader_epoch,
                        b.crc,
                        name,
                        b.position,
                    )
                )
        except (OSError, MetashellError):
            continue
    return out


_SPANS: dict[str, tuple[tuple[int, ...], list[tuple[int, int]]]] = {}
"""A file's offset spans by path, with the stat they were read under (``offset_spans``)."""

_SPANS_KEPT = 4096


def offset_spans(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[int, int]]:
    """The offsets the batches of ``paths`` cover, as inclusive ranges (a run of batches without a
    gap is one range), each file's read once while its size, mtime and inode stay the same.

    ``at N`` checks that N can be rebuilt on every move: reading a 1M-record tail's 237k headers
    again took 1.5 s a move. Only a node's active segment changes, and then its size with it; a
    file that cannot be read is skipped (as by ``batch_headers``), and not kept."""
    spans: list[tuple[int, int]] = []
    for path in paths:
        name = os.fspath(path)
        try:
            st = os.stat(name)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        kept = _SPANS.get(name)
        if kept is None or kept[0] != key:
            found = merged_ranges((h.base_offset, h.last_offset) for h in batch_headers([name]))
            if len(_SPANS) >= _SPANS_KEPT:
                _SPANS.clear()
            kept = _SPANS[name] = (key, found)
        spans.extend(kept[1])
    return merged_ranges(spans)


def merged_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inclusive ranges joined where they overlap or touch, in order."""
    out: list[list[int]] = []
    for base, last in sorted(ranges):
        if out and base <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], last)
        else:
            out.append([base, last])
    return [(a, b) for a, b in out]
