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
from collections.abc import Callable, Iterator
from operator import attrgetter
from pathlib import Path
from typing import Any

import pyarrow as pa

from metashell.image.image import MetadataImage
from metashell.image.loader import load_directory, load_file
from metashell.image.model import (
    ACL_OPERATION_NAMES,
    ACL_PATTERN_TYPE_NAMES,
    ACL_PERMISSION_TYPE_NAMES,
    ACL_RESOURCE_TYPE_NAMES,
    CONFIG_RESOURCE_TYPE_NAMES,
    LEADER_RECOVERY_STATE_NAMES,
    METADATA_VERSION_FEATURE,
    SCRAM_MECHANISM_NAMES,
    SECURITY_PROTOCOL_NAMES,
    enum_name,
)
from metashell.image.timepoint import resolve_in_dir, resolve_in_file
from metashell.log import open_metadata_dir
from metashell.protocol.uuid import uuid_to_str
from metashell.safe_text import storable
from metashell.tree.redact import is_sensitive_config, redact_config

from .decode import ROWS_PER_BATCH, RowBuffer
from .inputs import Dataset
from .schemas import ERRORS, SCHEMAS

__all__ = ["check_dataset", "image_of", "read_image_table"]

_cache: dict[tuple[str, str | None], MetadataImage] = {}
_COLLECT_AFTER_TOPICS = 20_000


def _stamp(path: str) -> str:
    """Changes when the directory's files do (a running node appends): part of the cache key."""
    try:
        names = sorted(os.listdir(path))
        return ",".join(f"{n}:{os.stat(os.path.join(path, n)).st_size}" for n in names)
    except OSError:
        return ""


def image_of(ds: Dataset, as_of: str | None = None) -> MetadataImage:
    """The dataset's image at its end, or at ``as_of`` (an offset or an ISO time, as ``at`` takes)."""
    key = (ds.path + "\0" + _stamp(ds.path if ds.kind == "dir" else os.path.dirname(ds.path)), as_of)
    image = _cache.get(key)
    if image is not None:
        return image
    if ds.kind == "dir":
        until = resolve_in_dir(open_metadata_dir(ds.path), as_of).offset if as_of else None
        image = load_directory(ds.path, until_offset=until, salvage=True).image
    else:
        until = resolve_in_file(Path(ds.path), as_of).offset if as_of else None
        image = load_file(ds.path, until_offset=until, salvage=True).image
    if _cache:  # one image per worker (a million-partition image is ~400 MB): free the last
        old = next(iter(_cache.values()))
        _cache.clear()
        if len(old.topics.by_id) > _COLLECT_AFTER_TOPICS:  # a small one is not worth a full collection
            gc.unfreeze()
            gc.collect()
    _cache[key] = image
    gc.freeze()  # long-lived: keep the collector from walking its million objects again
    return image


def _listeners(listeners: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": e.name,
            "host": e.host,
            "port": e.port,
            "security_protocol": SECURITY_PROTOCOL_NAMES.get(e.security_protocol, str(e.security_protocol))
            if e.security_protocol is not None
            else None,
        }
        for e in (listeners.values() if isinstance(listeners, dict) else listeners)
    ]


def _features(supported: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    return [{"name": n, "min_version": lo, "max_version": hi} for n, (lo, hi) in sorted(supported.items())]


def _rows(table: str, image: MetadataImage, head: tuple[Any, ...], redact: bool) -> Iterator[tuple[Any, ...]]:
    """The rows of one image table (after the dataset columns and the offset)."""
    if table == "topics":
        for t in image.topics.by_id.values():
            rf = max((len(p.replicas) - len(p.adding_replicas) for p in t.partitions.values()), default=0)
            yield (*head, uuid_to_str(t.id), t.name, len(t.partitions), rf)
    elif table == "brokers":
        for b in image.cluster.brokers.values():
            yield (
                *head,
                b.id,
                b.epoch,
                uuid_to_str(b.incarnation_id),
                b.rack,
                b.fenced,
                b.in_controlled_shutdown,
                b.is_migrating_zk_broker,
                _listeners(b.listeners),
                _features(b.supported_features),
                [uuid_to_str(d) for d in b.directories],
            )
    elif table == "controllers":
        for c in image.cluster.controllers.values():
            yield (
                *head,
                c.id,
                uuid_to_str(c.incarnation_id),
                c.zk_migration_ready,
                _listeners(c.listeners),
                _features(c.supported_features),
            )
    elif table == "configs":
        for (rtype, rname), values in image.configs.items():
            for key, value in values.items():
                yield (
                    *head,
                    enum_name(CONFIG_RESOURCE_TYPE_NAMES, rtype),
                    rname,
                    key,
                    redact_config(rtype, key, value, redact),
                    is_sensitive_config(rtype, key),
                )
    elif table == "acls":
        for a in image.acls.values():
            yield (
                *head,
                uuid_to_str(a.id),
                enum_name(ACL_RESOURCE_TYPE_NAMES, a.resource_type),
                a.resource_name,
                enum_name(ACL_PATTERN_TYPE_NAMES, a.pattern_type),
                a.principal,
                a.host,
                enum_name(ACL_OPERATION_NAMES, a.operation),
                enum_name(ACL_PERMISSION_TYPE_NAMES, a.permission_type),
            )
    elif table == "quotas":
        for entity, quota in image.client_quotas.items():
            parts = dict(entity)
            text = ",".join(f"{k}={v if v is not None else '<default>'}" for k, v in entity)
            for key, rate in quota.items():
                yield (*head, text, parts.get("user"), parts.get("client-id"), parts.get("ip"), key, rate)
    elif table == "features":
        if image.features.metadata_version is not None:
            yield (*head, METADATA_VERSION_FEATURE, image.features.metadata_version)
        for name, level in sorted(image.features.finalized.items()):
            yield (*head, name, level)
    elif table == "scram_users":
        for (mechanism, user), cred in image.scram.items():
            yield (*head, user, SCRAM_MECHANISM_NAMES.get(mechanism, str(mechanism)), cred.iterations)
    elif table == "producer_ids":
        pids = image.producer_ids
        if pids.next_producer_id >= 0:
            yield (*head, pids.next_producer_id, pids.broker_id, pids.broker_epoch)
    else:
        raise ValueError(f"not an image table: {table}")


_PARTITION_FIELDS = (
    "leader",
    "leader_epoch",
    "partition_epoch",
    "replicas",
    "isr",
    "elr",
    "last_known_elr",
    "adding_replicas",
    "removing_replicas",
)


def _distinct_column(
    values: list[Any], type_: pa.DataType, convert: Callable[[Any], Any] | None = None
) -> pa.Array:
    """``values`` as an Arrow array, each distinct value converted once (by ``convert``, if
    given): a cluster has a few hundred distinct replica and directory lists for a million
    partitions, so numbering them in Python and letting Arrow ``take`` the rows costs a fraction
    of converting every list element by element."""
    number: dict[Any, int] = {}
    indices = [number.setdefault(v, len(number)) for v in values]
    distinct = list(number) if convert is None else list(map(convert, number))
    return pa.array(distinct, type=type_).take(pa.array(indices, type=pa.int32()))


def _partition_batches(image: MetadataImage, head: tuple[Any, ...]) -> Iterator[pa.RecordBatch]:
    """The ``partitions`` table column by column, a batch per run of topics: a million partitions
    are read with one ``attrgetter`` pass per column (no row tuples to build and transpose).
    Replica and directory lists and recovery states repeat, so those columns are built from their
    distinct values (:func:`_distinct_column`); a topic's id and name are converted once and taken
    per row."""
    schema = SCHEMAS["partitions"]
    types = {f.name: f.type for f in schema}

    def batch(topics: list[Any]) -> pa.RecordBatch:
        which: list[int] = []
        index: list[int] = []
        parts: list[Any] = []
        for i, t in enumerate(topics):
            which += [i] * len(t.partitions)
            index += t.partitions.keys()
            parts += t.partitions.values()
        n = len(parts)
        rows = pa.array(which, type=pa.int32())
        columns = [pa.repeat(pa.scalar(v, type=f.type), n) for v, f in zip(head, schema, strict=False)]
        columns.append(pa.array([uuid_to_str(t.id) for t in topics], type=pa.string()).take(rows))
        columns.append(pa.array([t.name for t in topics], type=pa.string()).take(rows))
        columns.append(pa.array(index, type=pa.int32()))
        for f in _PARTITION_FIELDS:
            values = list(map(attrgetter(f), parts))
            kind = types[f]
            columns.append(
                _distinct_column(values, kind)
                if isinstance(kind, pa.ListType)
                else pa.array(values, type=kind)
            )
        columns.append(
            _distinct_column(
                [p.directories for p in parts], types["directories"], lambda ds: [uuid_to_str(d) for d in ds]
            )
        )
        columns.append(
            _distinct_column(
                [p.leader_recovery_state for p in parts],
                types["leader_recovery_state"],
                lambda code: enum_name(LEADER_RECOVERY_STATE_NAMES, code),
            )
        )
        return pa.RecordBatch.from_arrays(columns, schema=schema)

    run: list[Any] = []
    size = 0
    for t in image.topics.by_id.values():
        run.append(t)
        size += len(t.partitions)
        if size >= ROWS_PER_BATCH:
            yield batch(run)
            run, size = [], 0
    if run:
        yield batch(run)


def read_image_table(
    table: str, ds: Dataset, *, as_of: str | None = None, redact: bool = True
) -> Iterator[pa.RecordBatch]:
    """The rows of image ``table`` for ``ds`` as Arrow batches."""
    image = image_of(ds, as_of)
    cluster_id = ds.cluster_id or (storable(image.quorum.cluster_id) if image.quorum.cluster_id else None)
    head = (cluster_id, ds.node_id, ds.path, image.provenance.offset)
    if table == "partitions":
        yield from _partition_batches(image, head)
        return
    out = RowBuffer(SCHEMAS[table])
    for row in _rows(table, image, head, redact):
        out.add(row)
        if len(out) >= ROWS_PER_BATCH:
            yield out.take()
    if len(out):
        yield out.take()


def check_dataset(ds: Dataset, *, errors: str = "rows") -> Iterator[pa.RecordBatch]:
    """The ``errors`` rows of ``ds`` itself, beside those of its files: what was noted of it when
    it was found, and a replay that fails (the image tables then have no row of it: a table that
    is silently empty for one cluster of a fleet would read as "no topics").  Replaying costs what
    one image table does; a worker keeps the image, so an export's image tables reuse it."""
    out = RowBuffer(ERRORS)
    head = (ds.cluster_id, ds.node_id, ds.path)
    for file, kind, message in ds.notes:
        out.add((*head, file, -1, "warning", kind, message))
    try:
        image_of(ds)
    except Exception as e:
        if errors == "fail":
            raise
        message = f"the image tables have no rows of this dataset: its replay failed: {e}"
        out.add((*head, ds.path, -1, "error", f"replay:{type(e).__name__}", message))
    if len(out):
        yield out.take()
