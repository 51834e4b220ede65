"""``spark.readStream.format("kraft-metadata")``: committed records of a live controller quorum.

    (spark.readStream.format("kraft-metadata")
          .option("bootstrap.controllers", "c1:9093,c2:9093")
          .option("config", "client.properties")          # TLS / SASL, as ``metashell --config``
          .load())

Rows have the ``records`` schema.  Offsets are metadata log offsets (``{"next": N}``: the next
offset to deliver), so a query restarted from its checkpoint asks for exactly the records after the
last batch it committed.  The live client (:mod:`metashell.live`, the shell's own) runs in the
stream reader's process and always starts at the beginning of what the quorum holds: records before
the requested offset are dropped, none is delivered twice.  When the controllers have meanwhile
deleted that part of the log and serve a snapshot instead, the records between the checkpoint and
the snapshot are gone: the query fails saying so, rather than skipping them silently (a new query,
from a new checkpoint, starts with the snapshot's records).

The reader is a ``SimpleDataSourceStreamReader``: a quorum's metadata log is small, so one process
fetches it and Spark plans no partitions.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import SimpleDataSourceStreamReader

from metashell.errors import MetashellError

from .rows import RowBuffer, add_record_rows
from .schemas import RECORDS

__all__ = ["LiveStreamReader"]

_CONNECT_WAIT_S = 60.0
_KAFKA_KEYS = ("security.protocol", "sasl.", "ssl.", "client.id")


class LiveStreamReader(SimpleDataSourceStreamReader):
    """Committed records of a controller quorum, buffered by the live client's thread."""

    def __init__(self, options: dict[str, str]) -> None:
        self.options = {k.lower(): v for k, v in options.items()}
        bootstrap = self.options.get("bootstrap.controllers") or self.options.get("bootstrap-controller")
        if not bootstrap:
            raise MetashellError(
                "kraft-metadata stream: option bootstrap.controllers (host:port,...) is required"
            )
        self.bootstrap: str = bootstrap
        self.redact = self.options.get("redact", "true").strip().lower() not in ("false", "0", "no", "off")
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._rows: list[tuple[int, tuple[Any, ...]]] = []  # (log offset, row), in log order
        self._next = 0  # after the last record delivered
        self._snapshot_end: int | None = None  # the first thing served was a snapshot
        self._source: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Spark pickles the reader into the process that runs it: the options, not the client."""
        return {"options": self.options, "bootstrap": self.bootstrap, "redact": self.redact}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reset()

    # -- the live client ----------------------------------------------------------------------------

    def _config(self) -> Any:
        from metashell.live.config import ClientConfig

        if self.options.get("config"):
            return ClientConfig.from_file(self.options["config"])
        props = {k: v for k, v in self.options.items() if k.startswith(_KAFKA_KEYS)}
        return ClientConfig.from_properties(props, "stream options") if props else None

    def _ensure_started(self) -> None:
        if self._source is not None:
            return
        from metashell.live.source import LiveSource

        self._source = LiveSource(self.bootstrap, self._config())
        self._source.connect(self._on_event)  # fatal problems (auth, TLS, no quorum) raise here
        self._source.start()
        deadline = time.monotonic() + _CONNECT_WAIT_S
        while not self._source.status.caught_up and time.monotonic() < deadline:
            if self._source.error is not None:
                raise self._source.error
            time.sleep(0.05)

    def _head(self) -> tuple[Any, ...]:
        return (
            self._source.status.cluster_id if self._source is not None else None,
            None,
            f"controllers {self.bootstrap}",
        )

    def _on_event(self, event: Any) -> None:
        from metashell.live.events import RecordsCommitted, SnapshotLoaded

        if isinstance(event, SnapshotLoaded):
            out = RowBuffer(RECORDS)
            end = event.snapshot_id.end_offset
            with contextlib.closing(event):  # its temporary file, once its rows are made
                for batch in event.batches():
                    add_record_rows(
                        out,
                        self._head(),
                        f"snapshot {event.snapshot_id}",
                        "snapshot",
                        batch,
                        batch.entries(),
                        snap_offset=end - 1,
                        replay_seq=0,
                        replay_from=0,
                        redact=self.redact,
                    )
            rows = _tuples(out)
            with self._lock:
                if self._snapshot_end is None and not self._rows:
                    self._snapshot_end = end
                self._rows += [(end - 1, r) for r in rows]
                self._next = max(self._next, end)
        elif isinstance(event, RecordsCommitted):
            out = RowBuffer(RECORDS)
            for cb in event.batches:
                add_record_rows(
                    out,
                    self._head(),
                    event.source,
                    "log",
                    cb.batch,
                    cb.records(),
                    snap_offset=None,
                    replay_seq=1,
                    replay_from=0,
                    redact=self.redact,
                )
            rows = _tuples(out)
            with self._lock:
                offset_col = RECORDS.get_field_index("offset")
                self._rows += [(r[offset_col], r) for r in rows]
                if event.batches:
                    self._next = max(self._next, event.batches[-1].last_offset + 1)

    # -- Spark's side -------------------------------------------------------------------------------

    def initialOffset(self) -> dict[str, int]:
        return {"next": 0}

    def _check(self, start: int) -> None:
        snap = self._snapshot_end
        if snap is not None and 0 < start < snap:
            raise MetashellError(
                f"kraft-metadata stream: offsets {start}..{snap - 1} are now inside the controllers' snapshot "
                f"(its end offset is {snap}): they cannot be read again; start a new query (a new checkpoint) "
                "to begin with the snapshot's records"
            )

    def read(self, start: dict[str, int]) -> tuple[Iterator[tuple[Any, ...]], dict[str, int]]:
        self._ensure_started()
        first = int(start["next"])
        with self._lock:
            self._check(first)
            rows = [r for o, r in self._rows if o >= first or (first == 0 and o == -1)]
            end = max(first, self._next)
        return iter(rows), {"next": end}

    def readBetweenOffsets(self, start: dict[str, int], end: dict[str, int]) -> Iterator[tuple[Any, ...]]:
        self._ensure_started()
        lo, hi = int(start["next"]), int(end["next"])
        deadline = time.monotonic() + _CONNECT_WAIT_S
        while self._next < hi and time.monotonic() < deadline:  # a restart re-reads a batch it planned
            time.sleep(0.05)
        with self._lock:
            self._check(lo)
            return iter([r for o, r in self._rows if lo <= o < hi or (lo == 0 and o == -1)])

    def commit(self, end: dict[str, int]) -> None:
        done = int(end["next"])
        with self._lock:
            self._rows = [(o, r) for o, r in self._rows if o >= done]

    def stop(self) -> None:
        if self._source is not None:
            self._source.stop(join=False)


def _tuples(out: RowBuffer) -> list[tuple[Any, ...]]:
    if not len(out):
        return []
    batch = out.take()
    return [tuple(row.values()) for row in batch.to_pylist()]
