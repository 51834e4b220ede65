"""The replay loop of the native engine: runs of plain partition records applied by the native core,
everything else record by record here, by the same rules as the Python loop.

``Replayer.replay_entries`` is the Python engine's loop, and the reference.  With the native engine
(:mod:`metashell.engine`) it hands its entries here instead:

* outside a metadata transaction, ``_native.replay_run`` applies the longest run it can of plain
  PartitionRecords and PartitionChangeRecords, TopicRecords, ConfigRecords and ignored records (``native/src/replay.rs``
  says which are plain) to the same image objects, with the same interning and the same journal
  entries, and returns at the first record it leaves;
* that record is applied here: decoded by the native core's generated decoders (``decode_value``)
  and given to the same rules, or, when the fast path does not take it (a damaged value, an unknown
  type, a record inside a transaction), decoded and replayed by Python's checked path, which says
  what is wrong.

``tests/test_native_differential.py`` holds the two loops equal: the same tree, warnings and journal
(time travel) on every fixture and corpus directory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from metashell.engine import current as current_engine
from metashell.image.kafka_names import CONFIG_RESOURCE_TYPE_NAMES
from metashell.protocol.metadata import record_types

from ..model import EMPTY, MIGRATING_DIR, NO_LEADER_CHANGE, Partition, Topic
from ..timeline import MISSING
from .state import FAULTS, IGNORED

__all__ = ["NATIVE", "NativeReplay"]

NATIVE: Any = current_engine().native
"""The native core when this process runs it, else None."""

_CONSTANTS = (
    Partition,
    EMPTY,
    MISSING,
    MIGRATING_DIR,
    NO_LEADER_CHANGE,
    tuple(Partition.__dict__[name] for name in Partition.__slots__),
    Topic,
    bytes(int(key in IGNORED) for key in range(256)),
    CONFIG_RESOURCE_TYPE_NAMES,
)
"""What ``replay_run`` needs from the model, in the order it takes them: the partition class, the
shared empty tuple, the journal's "missing" mark, the directory of a migrating replica, the "no
leader change" leader, the partition's slot descriptors (in ``__slots__`` order: it sets them as
``__init__`` does, without a Python frame per partition), the topic class, and a 256-byte mask of the
record types replayed as nothing, and the config resource types Kafka knows."""


class NativeReplay:
    """The native engine's ``replay_entries`` (a mixin of :class:`~metashell.image.replay.Replayer`,
    whose attributes it uses)."""

    _txn: Any
    _fast_handlers: dict[int, Callable[[Any, int], None]]
    _native_ints: Any = None
    """The native core's ``ReplayCache`` for this replayer's ``_ints`` (made on first use)."""

    def _replay_entries_native(self, entries: Iterable[tuple[int, int, bytes | None, bytes | None]]) -> int:
        if not isinstance(entries, list):
            entries = list(entries)
        run = NATIVE.replay_run
        cache = self.intern_cache()
        n = len(entries)
        i = 0
        while i < n:
            if self._txn is None:
                i = run(self, entries, i, _CONSTANTS, cache)
                if i >= n:
                    break
            off, _ts, _key, value = entries[i]
            self._replay_one_native(off, value)
            i += 1
        return n

    def intern_cache(self) -> Any:
        """The native core's ``ReplayCache`` for this replayer (made on first use)."""
        cache = self._native_ints
        if cache is None:
            cache = self._native_ints = NATIVE.ReplayCache()
        return cache

    def _replay_one_native(self, off: int, value: bytes | None) -> None:
        """One record, as one turn of ``Replayer.replay_entries`` applies it."""
        if self._txn is None:
            try:
                hit = NATIVE.decode_value(value)
            except TypeError:  # a null value
                hit = None
            if hit is not None:
                api_key, data = hit
                handler = self._fast_handlers.get(api_key)
                if handler is not None:
                    try:
                        handler(data, off)
                    except FAULTS as e:
                        self._faulted(record_types()[api_key], e, off)
                    return
        self._replay_checked(value, off)

    if TYPE_CHECKING:  # provided by Replayer

        def _faulted(self, name: str, e: Exception, offset: int) -> None: ...
        def _replay_checked(self, value: bytes | None, off: int) -> None: ...
