"""What the log layer reports: corruption it cannot read past, and warnings it can.

Kafka's own readers either reject a batch (``CorruptRecordException``) or recover silently (log
recovery truncates a torn tail).  An incident tool must do neither silently: corruption is an error
that names the file and byte offset, and everything survivable is a :class:`LogWarning` the caller
shows, filters (by ``kind``) or records in ``/provenance``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from metashell.errors import DecodeError

__all__ = ["CorruptBatchError", "LogWarning", "WarnFn", "log_warning"]

log = logging.getLogger("metashell.log")


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


def log_warning(w: LogWarning) -> None:
    """The default ``warn`` callback: the warning goes to the "metashell.log" logger."""
    log.warning("%s", w)
