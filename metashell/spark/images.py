"""Executor side of the image tables: one dataset replayed with metashell's loader, as rows.

Replay is sequential (each record applies to the state the previous ones left), so one dataset is
one input partition and a fleet parallelises by cluster.  The loader is the shell's own
(:func:`metashell.image.loader.load_directory`), so ``topics``, ``partitions``, ``configs`` ...
are exactly what ``metashell -d DIR`` shows.  A Python worker keeps the last image it loaded:
reading several image tables of the same directory one after another (the export job does)
replays it once per worker, not once per table.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from metashell.image.batch_loader import LoadResult
from metashell.image.image import MetadataImage
from metashell.image.loader import load_directory, load_file
from metashell.image.timepoint import resolve_in_dir, resolve_in_file
from metashell.log import open_metadata_dir
from metashell.log.records import INT64_MAX
from metashell.safe_text import storable

from .inputs import Dataset, unreadable_files
from .rows import ROWS_PER_BATCH, RowBuffer
from .schemas import ERRORS

if TYPE_CHECKING:
    from .tables import Table

__all__ = ["FILE_READ_KINDS", "check_dataset", "image_of", "load_of", "read_image_table"]

_cache: dict[tuple[str, str | None], LoadResult] = {}
_COLLECT_AFTER_TOPICS = 20_000

FILE_READ_KINDS = frozenset(
    {"torn-tail", "corrupt-tail", "snapshot-empty", "snapshot-footer", "snapshot-header"}
)
"""Warnings the reading of one file gives: the ``errors`` table has them from each file's own read
(:func:`metashell.spark.decode.read_file_table`), so a dataset's load does not add them again.
Every other warning of the load (a gap between files, a snapshot the log does not continue, an
empty directory, ``quorum-state`` or ``meta.properties`` trouble, a replay fault) is the dataset's."""


def _stamp(path: str) -> str:
    """Changes when the directory's files do (a running node appends): part of the cache key."""
    try:
        names = sorted(os.listdir(path))
        return ",".join(f"{n}:{os.stat(os.path.join(path, n)).st_size}" for n in names)
    except OSError:
        return ""


def load_of(ds: Dataset, as_of: str | None = None) -> LoadResult:
    """The dataset's load at its end, or at ``as_of`` (an offset or an ISO time, as ``at`` takes),
    as ``--salvage`` makes it: what is whole before any damage (the ``errors`` table says where
    it stopped, :func:`check_dataset`)."""
    key = (ds.path + "\0" + _stamp(ds.path if ds.kind == "dir" else os.path.dirname(ds.path)), as_of)
    result = _cache.get(key)
    if result is not None:
        return result
    if ds.kind == "dir":
        until = resolve_in_dir(open_metadata_dir(ds.path), as_of).offset if as_of else None
        result = load_directory(ds.path, until_offset=until, salvage=True)
    else:
        until = resolve_in_file(Path(ds.path), as_of).offset if as_of else None
        result = load_file(ds.path, until_offset=until, salvage=True)
    if _cache:  # one image per worker (a million-partition image is ~400 MB): free the last
        old = next(iter(_cache.values()))
        _cache.clear()
        if len(old.image.topics.by_id) > _COLLECT_AFTER_TOPICS:  # a small one is not worth a full collection
            gc.unfreeze()
            gc.collect()
    _cache[key] = result
    gc.freeze()  # long-lived: keep the collector from walking its million objects again
    return result


def image_of(ds: Dataset, as_of: str | None = None) -> MetadataImage:
    """The dataset's image at its end, or at ``as_of`` (:func:`load_of`)."""
    return load_of(ds, as_of).image


def read_image_table(
    table: str | Table, ds: Dataset, *, as_of: str | None = None, redact: bool = True
) -> Iterator[pa.RecordBatch]:
    """The rows of image ``table`` for ``ds`` as Arrow batches: the dataset columns and the
    image's offset, then the table's named rows (or its own batches)."""
    if isinstance(table, str):
        from .tables import table as lookup

        table = lookup(table)
    assert table.schema is not None, f"{table.name} is not an image table"
    result = load_of(ds, as_of)
    image = result.image
    cluster_id = ds.cluster_id or (storable(image.quorum.cluster_id) if image.quorum.cluster_id else None)
    offset = image.provenance.offset
    # a snapshot named past 64 bits (the errors table has it) leaves an offset no column holds
    head = (cluster_id, ds.node_id, ds.path, offset if offset <= INT64_MAX else None)
    if table.batches is not None:
        yield from table.batches(image, head)
        return
    if table.dataset_rows is not None:
        made = table.dataset_rows(ds, result, redact)
    else:
        assert table.rows is not None, f"{table.name} has neither rows nor batches"
        made = table.rows(image, redact)
    columns = table.schema.names
    named_head = dict(zip(columns, head, strict=False))
    rows: list[dict[str, Any]] = []
    for row in made:
        rows.append({**named_head, **row})
        if len(rows) >= ROWS_PER_BATCH:
            yield pa.RecordBatch.from_pylist(rows, schema=table.schema)
            rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=table.schema)


def check_dataset(ds: Dataset, *, errors: str = "rows") -> Iterator[pa.RecordBatch]:
    """The ``errors`` rows of ``ds`` itself, beside those of its files' own reads: what the shell
    says of the directory as a whole.  Its notes; files whose names no 64-bit column holds; where
    its load stopped (a damaged batch, a forged offset: the image tables hold the state before it);
    what its load warned of (offsets in no file, a snapshot the log does not continue, an empty
    directory); a replay that fails (the image tables then have no row of it: a table silently
    empty for one cluster of a fleet would read as "no topics").  Replaying costs what one image
    table does; a worker keeps the load, so an export's image tables reuse it."""
    out = RowBuffer(ERRORS)
    head = (ds.cluster_id, ds.node_id, ds.path)
    for file, kind, message in ds.notes:
        out.add((*head, file, -1, "warning", kind, message))
    try:
        for file, why in unreadable_files(ds):
            out.add((*head, file, 0, "error", "file-name", why))
        result = load_of(ds)
    except Exception as e:
        if errors == "fail":
            raise
        message = f"the image tables have no rows of this dataset: its replay failed: {e}"
        out.add((*head, ds.path, -1, "error", f"replay:{type(e).__name__}", message))
    else:
        for stop in result.image.provenance.salvaged:
            message = (
                f"the load stopped here: {stop.reason}; the image tables hold the state at offset "
                f"{result.image.provenance.offset}, before it (not read: {', '.join(stop.skipped)})"
            )
            out.add((*head, stop.source or ds.path, _at(stop.position), "error", "load-stopped", message))
        for w in result.warnings:
            if w.kind in FILE_READ_KINDS or w.kind == "salvaged":
                continue
            severity = "error" if w.kind in ("gap", "partial-image") else "warning"
            out.add((*head, w.source or ds.path, _at(w.position), severity, w.kind, w.message))
        if result.image.provenance.records == 0:
            out.add((*head, ds.path, -1, "warning", "no-data", "no snapshot and no batch: nothing to load"))
    if len(out):
        yield out.take()


def _at(position: int | None) -> int:
    return -1 if position is None else position
