"""What to read: metadata directories and files found from the paths a job was given, cut into units.

Runs on the Spark driver and must stay cheap there: it lists directories and stats files, it never
reads a log.  A *dataset* is one node's ``__cluster_metadata-0`` directory (or one lone ``.log`` /
``.checkpoint`` file); a *unit* is a byte range of one of its files, the input partition executors
decode independently.  Files larger than ``split_bytes`` are cut into several units; an executor
finds the first batch of its range by hopping over batch headers from the file's start
(:func:`metashell.log.files.batch_starts`), so no unit needs another's state.

Nothing here imports PySpark: the same planning serves the data source, the export job and tests.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from metashell.errors import MetashellError
from metashell.log import MetadataDirError, load_properties, open_metadata_dir
from metashell.log.plans import full_plan
from metashell.log.records import INT64_MAX
from metashell.numbers import is_int, is_natural
from metashell.safe_text import storable

__all__ = [
    "Dataset",
    "InputError",
    "Unit",
    "dataset_bytes",
    "find_datasets",
    "min_partitions",
    "pack",
    "plan_units",
    "unit_bytes",
    "unreadable_files",
    "unreadable_name",
]

DEFAULT_SPLIT_BYTES = 64 << 20
"""Files larger than this are read as several units (cut at batch boundaries by the executors)."""

MIN_PARTITIONS = 16
"""Small units are packed into input partitions, but into no fewer than this many (when there are
as many units) when the session's parallelism is not known (a class registered by hand)."""

TASKS_PER_CORE = 2
"""Input partitions per core of the session (:func:`min_partitions`): a Python data source's task
costs Spark about 80 ms on its own (measured on one pinned CPU: 20 tasks of a 20-cluster fleet took
3.35 s where 3 took 1.73 s, for the same 434k rows), as long as decoding 1 MB of metadata; two
tasks a core keep every core busy while the last ones finish."""


def min_partitions(parallelism: int | None) -> int:
    """How few input partitions small units may be packed into, for a session of ``parallelism``
    cores (None: not known, :data:`MIN_PARTITIONS`)."""
    return MIN_PARTITIONS if parallelism is None else max(1, TASKS_PER_CORE * parallelism)


_GLOB_CHARS = frozenset("*?[")
_MAX_DEPTH = 6


class InputError(MetashellError):
    """A path given to the job that is not (and holds no) KRaft metadata."""


@dataclass(frozen=True)
class Dataset:
    """One node's metadata directory, or one lone file.  ``cluster_id`` and ``node_id`` come from
    ``meta.properties`` (next to the directory, or up to two levels above a lone file)."""

    path: str
    kind: str  # "dir" or "file"
    cluster_id: str | None
    node_id: int | None
    notes: tuple[tuple[str, str, str], ...] = ()
    """(file, kind, message): what the ``errors`` table says of the dataset beside its files
    (warnings)."""

    @property
    def key(self) -> str:
        """What rows of one dataset share: the cluster id when known, else the path."""
        return self.cluster_id or self.path


@dataclass(frozen=True)
class Unit:
    """A byte range ``[lo, hi)`` of batch starts in one file of a dataset (an input partition).

    ``replay_seq``: the file's place in the dataset's replay order (the whole log the files hold,
    as ``history`` reads it), or None when replay does not read this file (an older snapshot);
    ``replay_from``: log records below this offset are not replayed (they are inside the base
    snapshot).  ``lenient_tail``: the last segment may end in a torn batch (a warning, not an error).
    """

    dataset: Dataset
    file: str
    kind: str  # "log", "snapshot" or "bootstrap"
    lo: int = 0
    hi: int | None = None
    size: int = 0
    snapshot_end_offset: int | None = None
    snapshot_epoch: int | None = None
    replay_seq: int | None = None
    replay_from: int = 0
    lenient_tail: bool = False


def _expand(path: str) -> list[str]:
    if any(c in path for c in _GLOB_CHARS):
        found = sorted(glob.glob(path))
        if not found:
            raise InputError(f"{path}: no path matches")
        return found
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or directory")
    return [path]


def _dataset(path: str, kind: str, cluster_id: str | None, node_id: int | None, meta: Path | None) -> Dataset:
    """A dataset whose cluster id can go into a table: a lone surrogate (a ``\\uD800`` escape in
    ``meta.properties``, which Java reads) cannot be encoded as UTF-8, and would fail every row of
    every table of the fleet's job.  It is kept escaped, and the ``errors`` table says so."""
    stored = storable(cluster_id) if cluster_id is not None else None
    if stored == cluster_id:
        return Dataset(path, kind, cluster_id, node_id)
    note = (
        str(meta),
        "meta-properties",
        f"cluster.id holds a lone surrogate, which UTF-8 cannot carry: its rows say {stored}",
    )
    return Dataset(path, kind, stored, node_id, (note,))


def _meta_near(file: Path) -> tuple[str | None, int | None, Path | None]:
    for d in (file.parent, file.parent.parent, file.parent.parent.parent):
        meta = d / "meta.properties"
        if meta.is_file():
            try:
                props = load_properties(meta)
            except (OSError, ValueError):
                return None, None, None
            node = props.get("node.id") or props.get("broker.id")
            return props.get("cluster.id") or None, int(node) if node and is_int(node) else None, meta
    return None, None, None


def _metadata_dirs_under(root: str) -> list[str]:
    """``__cluster_metadata-0`` folders below ``root`` (a fleet's tree of clusters), sorted."""
    found: list[str] = []
    base = root.rstrip(os.sep).count(os.sep)
    for here, dirs, _files in os.walk(root):
        dirs.sort()
        if os.path.basename(here).startswith("__cluster_metadata-"):
            found.append(here)
            dirs.clear()
        elif here.count(os.sep) - base >= _MAX_DEPTH:
            dirs.clear()
    return found


def _dataset_of_dir(path: str) -> Dataset:
    d = open_metadata_dir(path)
    meta = d.meta
    cid = meta.cluster_id if meta is not None and meta.cluster_id else None
    return _dataset(
        str(d.path or d.log_dir),
        "dir",
        cid,
        meta.node_id if meta is not None else None,
        meta.path if meta is not None else None,
    )


def find_datasets(paths: list[str]) -> list[Dataset]:
    """Every dataset named by ``paths`` (directories, files, globs; a directory that is not a
    metadata directory is searched for ``__cluster_metadata-*`` folders below it)."""
    out: dict[str, Dataset] = {}
    for given in paths:
        for path in _expand(given):
            p = Path(path)
            if p.is_file():
                if p.suffix not in (".log", ".checkpoint"):
                    raise InputError(f"{path}: not a metadata log segment (.log) or snapshot (.checkpoint)")
                ds = _dataset(str(p), "file", *_meta_near(p))
                out.setdefault(ds.path, ds)
                continue
            try:
                ds = _dataset_of_dir(path)
                out.setdefault(ds.path, ds)
                continue
            except MetadataDirError:
                pass
            below = _metadata_dirs_under(path)
            if not below:
                raise InputError(f"{path}: no KRaft metadata directory (__cluster_metadata-0) in it")
            for sub in below:
                try:
                    ds = _dataset_of_dir(sub)
                except MetadataDirError as e:
                    raise InputError(str(e)) from None
                out.setdefault(ds.path, ds)
    return list(out.values())


def _split(unit: Unit, split_bytes: int) -> list[Unit]:
    if unit.size <= split_bytes or _sparse(unit.file, unit.size):
        return [unit]
    return [
        replace(unit, lo=lo, hi=lo + split_bytes if lo + split_bytes < unit.size else None)
        for lo in range(0, unit.size, split_bytes)
    ]


def _sparse(path: str, size: int) -> bool:
    """Whether most of the file is holes (a 1 TiB file with 4 KiB on disk): its size says nothing of
    the work, and cutting it by size planned 16,384 tasks.  Such a file is one unit; its reader skips
    the zero-filled rest with SEEK_DATA."""
    try:
        allocated = os.stat(path).st_blocks * 512
    except (OSError, AttributeError):
        return False
    return allocated < size // 2


def dataset_files(ds: Dataset) -> list[Unit]:
    """One whole-file unit per file of the dataset: snapshots first, then segments, in offset order."""
    if ds.kind == "file":
        p = Path(ds.path)
        if unreadable_name(p.name):
            return []
        if p.suffix == ".checkpoint":
            end, _, epoch = p.stem.partition("-")
            return [
                Unit(
                    ds,
                    ds.path,
                    "snapshot",
                    size=p.stat().st_size,
                    snapshot_end_offset=int(end) if is_natural(end) else None,
                    snapshot_epoch=int(epoch) if is_natural(epoch) else None,
                    replay_seq=0,
                )
            ]
        return [Unit(ds, ds.path, "log", size=p.stat().st_size, replay_seq=0, lenient_tail=True)]
    d = open_metadata_dir(ds.path)
    plan = full_plan(d)
    order = {str(step.path): (i, step.skip_below) for i, step in enumerate(plan.steps)}
    units: list[Unit] = []
    for snap in sorted(d.snapshots, key=lambda s: (s.end_offset, s.epoch)):
        if unreadable_name(snap.path.name):
            continue  # the errors table says so (unreadable_files): no 64-bit column holds its offset
        seq = order.get(str(snap.path))
        units.append(
            Unit(
                ds,
                str(snap.path),
                "bootstrap" if snap.is_bootstrap else "snapshot",
                size=snap.size,
                snapshot_end_offset=snap.end_offset,
                snapshot_epoch=snap.epoch,
                replay_seq=None if seq is None else seq[0],
            )
        )
    if d.bootstrap is not None and d.bootstrap.is_file():
        seq = order.get(str(d.bootstrap))
        units.append(
            Unit(
                ds,
                str(d.bootstrap),
                "bootstrap",
                size=d.bootstrap.stat().st_size,
                snapshot_end_offset=0,
                snapshot_epoch=0,
                replay_seq=None if seq is None else seq[0],
            )
        )
    for i, seg in enumerate(d.segments):
        if unreadable_name(seg.path.name):
            continue
        seq = order.get(str(seg.path))
        units.append(
            Unit(
                ds,
                str(seg.path),
                "log",
                size=seg.size,
                replay_seq=None if seq is None else seq[0],
                replay_from=0 if seq is None else seq[1],
                lenient_tail=i == len(d.segments) - 1,
            )
        )
    return units


def unreadable_name(name: str) -> str:
    """Why a file's name cannot be read into the tables ("" when it can): the offset or epoch it
    names must fit a 64-bit column (``99999999999999999999-0000000001.checkpoint`` killed the
    export with an OverflowError); Kafka's own names never leave it."""
    stem = name.split(".", 1)[0]
    for part, what in zip(stem.split("-"), ("offset", "epoch"), strict=False):
        if is_natural(part) and int(part) > INT64_MAX:
            return (
                f"the {what} its name gives ({part}) does not fit in 64 bits: the file tables hold "
                "none of its rows, and the image tables' offset column is null where its image counts"
            )
    return ""


def unreadable_files(ds: Dataset) -> list[tuple[str, str]]:
    """(file, why) for each file of a directory dataset that :func:`dataset_files` leaves out."""
    if ds.kind != "dir":
        why = unreadable_name(Path(ds.path).name)
        return [(ds.path, why)] if why else []
    d = open_metadata_dir(ds.path)
    files = [s.path for s in d.snapshots] + [s.path for s in d.segments]
    return [(str(f), why) for f in files if (why := unreadable_name(f.name))]


def plan_units(datasets: list[Dataset], split_bytes: int = DEFAULT_SPLIT_BYTES) -> list[Unit]:
    """Every unit of every dataset, large files cut into ``split_bytes`` ranges."""
    return [part for ds in datasets for unit in dataset_files(ds) for part in _split(unit, split_bytes)]


def unit_bytes(unit: Unit) -> int:
    """The bytes a unit covers (its range of the file)."""
    return max((unit.hi if unit.hi is not None else unit.size) - unit.lo, 0)


def dataset_bytes(ds: Dataset) -> int:
    """The bytes of every file of a dataset (what replaying it reads, at most)."""
    return sum(unit_bytes(u) for u in dataset_files(ds))


def pack(
    items: list[Any],
    sizes: list[int],
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    least: int = MIN_PARTITIONS,
) -> list[list[Any]]:
    """Items (units or datasets) gathered into input partitions of about ``split_bytes``, or of
    less so that there are at least ``least`` of them (:func:`min_partitions`): few large tasks for
    a fleet of small clusters, instead of one task per 1 MB segment; order is kept."""
    total = sum(sizes)
    target = max(1, min(split_bytes, total // max(1, least)))
    groups: list[list[Any]] = []
    current: list[Any] = []
    filled = 0
    for item, size in zip(items, sizes, strict=True):
        if current and filled + size > target:
            groups.append(current)
            current, filled = [], 0
        current.append(item)
        filled += size
    if current:
        groups.append(current)
    return groups
