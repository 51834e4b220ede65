"""Types of the native core (``native/src``, Rust via PyO3), as pydantic-core types its compiled
module.  ``tests/test_native_stub.py`` holds this file to the built module: every name, every
class's methods and every parameter list, so a Rust signature that changes fails there first.

Tuples are spelled out where the Rust side takes a fixed tuple; ``replayer``, ``hooks`` and the
replay ``consts`` are the Python objects documented in ``image/replay/native.py`` and
``log/bulk.py``.
"""

from typing import Any, TypeAlias, final

from typing_extensions import Buffer as _Buffer

#: (offset, timestamp, key, value) of one record, as ``log.batch.Entry``.
_Entry: TypeAlias = tuple[int, int, bytes | None, bytes | None]
#: Records breaking a KRaft invariant, counted while decoding a batch: (with a key, with a null or
#: empty value, with a timestamp delta, with headers), as ``log.records.decode_entries`` says.
_Stats: TypeAlias = tuple[int, int, int, int]
#: One batch's own columns of the Spark ``records`` table (``records_table.rs`` ``BatchRow``).
_BatchRow: TypeAlias = tuple[int, int, int, int | None, int | None, int | None, int]
#: (max records a batch, verify CRC, the segment's offset bound, max batches): ``RunLimits``.
_RunLimits: TypeAlias = tuple[int, bool, int | None, int]
#: A column as Arrow lays it out: (validity bitmap, values, offsets, null count).
_Column: TypeAlias = tuple[Buffer | None, Buffer, Buffer | None, int]

class RecordDecodeError(Exception):
    """A malformed record: args are (message, position, index)."""

@final
class Buffer:
    """Memory the core made, lent to Python through the read-only buffer protocol (no copy)."""

    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

@final
class ChangeRun:
    """The journal's changes of one native replay run (time travel swaps them)."""

    def __len__(self) -> int: ...
    def memory_bytes(self) -> int: ...
    def swap(self, backwards: bool) -> None: ...
    def targets(self) -> list[tuple[Any, int | None]]: ...

@final
class Pending:
    """Partition rows kept as rows until read (a directory load's deferred partitions)."""

    def __len__(self) -> int: ...
    def apply(self, partitions: dict[Any, Any]) -> None: ...

@final
class RecordColumns:
    """The Spark ``records`` table's columns, filled by the core, taken as Arrow buffers."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    @staticmethod
    def columns() -> list[tuple[str, str]]: ...
    def held(self) -> int: ...
    def push_row(self, row: tuple[Any, ...]) -> None: ...
    def take(self) -> list[_Column]: ...

@final
class RecordRules:
    """How the ``records`` table names, keys and renders each record type (from Python's tables)."""

    def __init__(
        self,
        names: dict[Any, Any],
        markers: list[int],
        python: list[int],
        keys: dict[Any, Any],
        other: list[tuple[int, str, str]],
        maps: dict[Any, Any],
        config: tuple[int, Any, str] | None,
    ) -> None: ...

@final
class ReplayCache:
    """What the native replay keeps between runs (topic ids, decoders)."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def topics_known(self) -> int: ...

def version() -> str: ...
def crc32c(data: _Buffer) -> int: ...
def partition_attributes() -> list[str]: ...
def decode_entries(
    data: _Buffer, pos: int, end: int, count: int, base_offset: int, base_ts: int
) -> tuple[list[_Entry], _Stats]: ...
def check_entries(
    data: _Buffer, pos: int, end: int, count: int, base_offset: int, base_ts: int
) -> _Stats: ...
def decode_value(value: _Buffer) -> Any | None: ...
def decode_raw_fields(value: _Buffer) -> tuple[Any, ...] | None: ...
def decode_control_value(control_type: int, value: _Buffer) -> Any | None: ...
def kafka_json_text(value: _Buffer) -> tuple[int, int, str] | None: ...
def add_record_rows(
    cols: RecordColumns,
    rules: RecordRules,
    data: _Buffer,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_ts: int,
    batch: _BatchRow,
    fallback: Any,
) -> _Stats | None: ...
def add_record_batches(
    cols: RecordColumns,
    rules: RecordRules,
    buf: _Buffer,
    pos: int,
    end: int,
    base: int,
    limits: _RunLimits,
    consts: tuple[int | None, int | None, int],
    python_row: Any,
) -> tuple[int, int]: ...
def replay_run(
    replayer: Any, entries: list[_Entry], start: int, consts: tuple[Any, ...], cache: ReplayCache
) -> int: ...
def apply_log_batches(
    buf: _Buffer,
    pos: int,
    end: int,
    base: int,
    cursor: tuple[int, int, int, bool, int, bool],
    replayer: Any,
    consts: tuple[Any, ...],
    cache: ReplayCache,
    hooks: tuple[Any, Any, list[Any] | None, Any | None],
) -> tuple[int, int, int, list[bytes], Any | None, list[bytes] | None]: ...
def _panic_for_tests() -> None: ...
