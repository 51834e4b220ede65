"""What the log layer reports: corruption it cannot read past, and warnings it can.

Kafka's own readers either reject a batch (``CorruptRecordException``) or recover silently (log
recovery truncates a torn tail).  An incident tool must do neither silently: corruption is an error
that names the file and byte offset, and everything survivable is a :class:`LogWarning` the caller
shows, filters (by ``kind``) or records in ``/provenance``.
"""

from collections.abc import Callable
from typing import NamedTuple

from metashell.errors import DecodeError, located

__all__ = [
    "CorruptBatchError",
    "IncompleteSnapshotError",
    "InvariantWarnings",
    "LogWarning",
    "Salvaged",
    "WarnFn",
    "log_warning",
]


class CorruptBatchError(DecodeError):
    """A batch, or a record inside it, that Kafka would reject (bad CRC, magic, size, varint...).

    ``source`` names the file (or "fetch") and ``offset`` the byte position of the batch (or of the
    record, when it can be located in the file) -- the CLI prints both.
    """


class LogWarning(NamedTuple):
    """Something odd but survivable found while reading (torn tail, gap, KRaft invariant...).

    ``kind`` is a short stable tag callers can filter on (e.g. live mode ignores "torn-tail" at the
    end of a fetch response, where a cut-off batch is normal).
    """

    kind: str
    message: str
    source: str | None = None
    position: int | None = None

    def __str__(self) -> str:
        return located(self.message, self.source, position=self.position)


WarnFn = Callable[[LogWarning], None]


def unheard(_warning: LogWarning) -> None:
    """The ``warn`` of a read whose warnings no one is to hear (the session told them already, or
    the read only looks for something)."""


class InvariantWarnings:
    """Warnings for batches that break KRaft's record invariants (Kafka's raft reader rejects them),
    the first :attr:`limit` of a read only: a log of a million such batches says so twenty times."""

    limit = 20

    def __init__(self) -> None:
        self.seen = 0

    def __call__(
        self, base_offset: int, problems: list[str], source: str | None, position: int
    ) -> LogWarning | None:
        """The warning for a batch with ``problems`` (none when it has none, or past the limit)."""
        if not problems:
            return None
        self.seen += 1
        if self.seen > self.limit:
            return None
        more = " (further ones not reported)" if self.seen == self.limit else ""
        message = f"batch at base offset {base_offset}: {'; '.join(problems)} (Kafka's raft reader rejects this){more}"
        return LogWarning("kraft-invariant", message, source, position)


def log_warning(w: LogWarning) -> None:
    """The default ``warn`` callback: the warning goes to the "metashell.log" logger."""
    import logging  # only for a problem nobody reported: a clean load does not pay for it

    logging.getLogger("metashell.log").warning("%s", w)


class Salvaged(NamedTuple):
    """What a ``--salvage`` load left out, and why (shown in ``/provenance``).

    ``source`` and ``position`` locate the corruption; ``reason`` is what was wrong; ``skipped``
    says what was not loaded because of it (the rest of a file, later files, a whole snapshot).
    """

    source: str
    position: int | None
    reason: str
    skipped: tuple[str, ...]

    def warning(self) -> LogWarning:
        """The "salvaged" warning of a log read that stopped here."""
        more = f" and {len(self.skipped) - 1} later file(s)" if len(self.skipped) > 1 else ""
        message = (
            f"{self.reason}; --salvage: loaded everything before it, skipped the rest of this file{more}"
        )
        return LogWarning("salvaged", message, self.source or None, self.position)

    def as_json(self) -> dict[str, object]:
        return {
            "file": self.source,
            "byteOffset": self.position,
            "problem": self.reason,
            "skipped": list(self.skipped),
        }


class IncompleteSnapshotError(CorruptBatchError):
    """A snapshot of a metadata directory that is corrupt or cut short (a torn last batch, or a
    SnapshotHeader without its SnapshotFooter).

    Kafka writes a snapshot to ``.checkpoint.part`` and renames it only when complete, so an
    incomplete ``.checkpoint`` is damage, not a write in progress: loading its prefix would show
    an image that never existed.  A normal load stops with this error; a ``--salvage`` load falls
    back to the newest intact snapshot (``snapshot`` is the rejected file).
    """

    def __init__(
        self, message: str, source: str | None = None, offset: int | None = None, snapshot: object = None
    ) -> None:
        super().__init__(message, source, offset)
        self.snapshot = snapshot

    def located(self, source: str | None = None, base: int = 0) -> "IncompleteSnapshotError":
        return IncompleteSnapshotError(
            self.message,
            source or self.source,
            None if self.offset is None else self.offset + base,
            self.snapshot,
        )
