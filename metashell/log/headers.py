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

__all__ = ["BatchHeader", "batch_headers"]


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
