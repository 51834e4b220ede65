"""Metadata transactions (FORMATS.md 5.3), buffered as Kafka's ``MetadataBatchLoader`` does."""

from __future__ import annotations

from metashell.protocol.record_type import SCHEMA_NAMES, RecordType

from .state import ReplayState

BEGIN_TRANSACTION = RecordType.BEGIN_TRANSACTION_RECORD
END_TRANSACTION = RecordType.END_TRANSACTION_RECORD
ABORT_TRANSACTION = RecordType.ABORT_TRANSACTION_RECORD
TRANSACTION_MARKERS = frozenset((BEGIN_TRANSACTION, END_TRANSACTION, ABORT_TRANSACTION))


class TransactionRules(ReplayState):
    """Records after BeginTransaction are held, applied on EndTransaction, dropped on AbortTransaction."""

    @property
    def in_transaction(self) -> bool:
        return self._txn is not None

    @property
    def open_transaction(self) -> tuple[int | None, int] | None:
        """(the offset it began at, the records it holds) of the transaction still open, or None."""
        return None if self._txn is None else (self._txn_offset, len(self._txn))

    def abandon_transaction(self, why: str) -> None:
        """Drop an open metadata transaction (its buffered records are never applied)."""
        if self._txn is not None:
            self.warn(
                f"{why} inside a metadata transaction started at offset {self._txn_offset}; its "
                f"{len(self._txn)} record(s) were dropped",
                None,
            )
            self._txn = None
            self._txn_offset = None

    def _transaction_marker(self, key: int, offset: int) -> None:
        if self.snapshot_mode:
            self.warn(
                f"{SCHEMA_NAMES[RecordType(key)]} in a snapshot: unknown metadata record type for a snapshot",
                offset,
            )
            return
        if key == BEGIN_TRANSACTION:
            if self._txn is not None:
                self.warn(
                    f"BeginTransactionRecord while a transaction started at offset {self._txn_offset} "
                    "is still open",
                    offset,
                )
                return
            self._txn = []
            self._txn_offset = offset
            return
        if self._txn is None:
            name = "EndTransactionRecord" if key == END_TRANSACTION else "AbortTransactionRecord"
            self.warn(f"{name} without an open transaction", offset)
            return
        buffered = self._txn
        self._txn = None
        self._txn_offset = None
        if key == END_TRANSACTION:
            replay = self.replay
            for record, rec_offset in buffered:
                replay(record, rec_offset)
