"""A KRaft metadata log directory on disk, and the plan of which files to read (FORMATS.md 1).

``open_metadata_dir`` lists the directory once (read-only: nothing is created, locked or written,
so it works on a read-only copy and next to a running Kafka) and parses the small files;
``MetadataLogDir.plan()`` then applies Kafka's startup rules (FORMATS.md 1.2) to choose what to
replay: the newest complete snapshot, then the log from the snapshot's end offset -- or the log from
offset 0 without a snapshot, or ``bootstrap.checkpoint`` when there is no log data at all.
``plan_file`` is ``--snapshot FILE``: exactly one ``.checkpoint`` or ``.log`` file, as Kafka's shell.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from metashell.errors import MetashellError
from metashell.log.files import iter_file_batches, read_batch_at
from metashell.log.problems import LogWarning

from .small_files import (
    MetaProperties,
    QuorumState,
    read_leader_epoch_checkpoint,
    read_meta_properties,
    read_partition_metadata,
    read_quorum_state,
)

__all__ = [
    "PARTITION_DIR",
    "MetaProperties",
    "MetadataDirError",
    "MetadataLogDir",
    "PlanStep",
    "QuorumState",
    "ReadPlan",
    "SegmentFile",
    "SnapshotFile",
    "open_metadata_dir",
    "parse_snapshot_name",
    "plan_file",
    "read_leader_epoch_checkpoint",
    "read_meta_properties",
    "read_partition_metadata",
    "read_quorum_state",
]

PARTITION_DIR = "__cluster_metadata-0"
#: Kafka's fixed topic id of ``__cluster_metadata`` (``Topic.CLUSTER_METADATA_TOPIC_ID``), base64.
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
_SNAPSHOT_RE = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_SEGMENT_RE = re.compile(r"^(\d{20,})\.log$")


class MetadataDirError(MetashellError):
    """The path given is not something metashell can read (missing, not a metadata dir, no access)."""


@dataclass(frozen=True, slots=True)
class SnapshotFile:
    """A ``<20-digit end offset>-<10-digit epoch>.checkpoint`` file.  ``end_offset`` is exclusive."""

    path: Path
    end_offset: int
    epoch: int
    size: int = 0

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def is_bootstrap(self) -> bool:
        """The (0, 0) snapshot ``kafka-storage format`` writes for a dynamic quorum (no metadata)."""
        return self.end_offset == 0 and self.epoch == 0

    @property
    def last_contained_offset(self) -> int:
        return self.end_offset - 1


@dataclass(frozen=True, slots=True)
class SegmentFile:
    """A ``<20-digit base offset>.log`` segment."""

    path: Path
    base_offset: int
    size: int = 0

    @property
    def name(self) -> str:
        return self.path.name


def parse_snapshot_name(name: str) -> tuple[int, int] | None:
    """(end offset, epoch) of a ``.checkpoint`` snapshot file name, or None for any other name."""
    m = _SNAPSHOT_RE.match(name)
    return (int(m.group(1)), int(m.group(2))) if m else None


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One file to read.

    ``kind``: "snapshot" (a ``.checkpoint``: offsets inside are relative; replaces the image),
    "log" (a segment: records with offset < ``skip_below`` are skipped individually) or "bootstrap"
    (``bootstrap.checkpoint``; with ``only_if_empty`` it is read only when nothing else produced a
    batch).  ``position`` is the byte where reading starts (0, or later when seeking with an index).
    ``lenient_tail``: an invalid last batch is a warning (the last segment, which may be torn).
    ``bounds``: for a segment of a directory, the offsets its batches must lie in, from its file
    name and the next segment's (``(base, next_base)``, ``next_base`` None for the last one): Kafka
    names a segment after the first offset it holds, so a batch outside them is corrupt (its
    baseOffset and lastOffsetDelta are not covered by the CRC).  None for a lone ``-s`` file, whose
    name Kafka's shell does not read either.
    """

    kind: str
    path: Path
    source: str
    skip_below: int = 0
    position: int = 0
    lenient_tail: bool = False
    only_if_empty: bool = False
    snapshot: SnapshotFile | None = None
    base_offset: int | None = None
    bounds: tuple[int, int | None] | None = None


@dataclass
class ReadPlan:
    """What to read, in order, and why.  ``start_offset``: first log offset to replay."""

    steps: list[PlanStep]
    snapshot: SnapshotFile | None = None
    start_offset: int = 0
    until_offset: int | None = None
    warnings: list[LogWarning] = field(default_factory=list)
    directory: MetadataLogDir | None = None
    partial: bool = False
    """True when the plan already warned that the log starts after the state it has (image partial)."""

    @property
    def files(self) -> list[str]:
        """The files the plan may read, in order (a conditional ``bootstrap.checkpoint`` included).

        For /provenance prefer ``PlanReader.files_read``: the files actually opened."""
        return [s.source for s in self.steps]

    def seek(self, index: Sequence[Any] | None = None) -> ReadPlan:
        """A copy whose log steps start at the batch holding ``start_offset`` instead of byte 0.

        Batch positions come from ``index`` (a PlanReader's ``index`` from an earlier read) when it
        covers the file, else from a quick header-only scan of the file (no CRC, no record decoding).
        This makes re-reading "up to offset N" cost only the batches after the snapshot.
        """
        best: dict[str, int] = {}
        covered: set[str] = set()
        for e in index or ():
            if e.kind == "log":
                covered.add(e.source)
                if e.base_offset <= self.start_offset and e.position >= best.get(e.source, -1):
                    best[e.source] = e.position
        steps = []
        for s in self.steps:
            if s.kind == "log" and s.position == 0:
                if s.source not in covered:
                    try:
                        for b in iter_file_batches(
                            s.path,
                            s.source,
                            decode=False,
                            verify_crc=False,
                            lenient_tail=True,
                            warn=lambda w: None,
                        ):
                            if b.base_offset > self.start_offset:
                                break
                            best[s.source] = b.position
                    except (OSError, MetashellError):
                        pass  # the real read reports it
                s = replace(s, position=best.get(s.source, 0))
            steps.append(s)
        return ReadPlan(
            steps,
            self.snapshot,
            self.start_offset,
            self.until_offset,
            list(self.warnings),
            self.directory,
            self.partial,
        )


@dataclass
class MetadataLogDir:
    """The listing of one metadata log directory and its parsed small files."""

    path: Path | None
    """The ``__cluster_metadata-0`` folder (None for a formatted log dir the node never started on)."""
    log_dir: Path | None
    """The log dir holding ``meta.properties`` / ``bootstrap.checkpoint`` (the partition's parent)."""
    snapshots: list[SnapshotFile] = field(default_factory=list)
    segments: list[SegmentFile] = field(default_factory=list)
    bootstrap: Path | None = None
    meta: MetaProperties | None = None
    quorum: QuorumState | None = None
    leader_epochs: list[tuple[int, int]] | None = None
    partition_metadata: dict[str, str] | None = None
    ignored: list[str] = field(default_factory=list)
    warnings: list[LogWarning] = field(default_factory=list)

    @property
    def topic_id(self) -> str | None:
        return (self.partition_metadata or {}).get("topic_id")

    def reopen(self) -> MetadataLogDir:
        """List the directory again (after Kafka deleted or added files while we were reading)."""
        where = self.log_dir if self.path is None else self.path
        assert where is not None  # open_metadata_dir always sets one of them
        return open_metadata_dir(where)

    def latest_snapshot(
        self, until_offset: int | None = None, exclude: Collection[Path] = ()
    ) -> SnapshotFile | None:
        """The newest snapshot usable as a state source (never the (0, 0) bootstrap snapshot, nor
        one in ``exclude``: snapshots a salvage load found damaged)."""
        usable = [
            s
            for s in self.snapshots
            if not s.is_bootstrap
            and s.path not in exclude
            and (until_offset is None or s.end_offset - 1 <= until_offset)
        ]
        return max(usable, key=lambda s: (s.end_offset, s.epoch), default=None)

    def plan(self, until_offset: int | None = None, *, exclude: Collection[Path] = ()) -> ReadPlan:
        """Kafka's startup choice of snapshot + log (FORMATS.md 1.2).

        ``until_offset`` (time travel) picks the newest snapshot that does not go past that offset
        and stops the log there.  Snapshots in ``exclude`` are passed over (``--salvage``).
        """
        warnings: list[LogWarning] = []
        snap = self.latest_snapshot(until_offset, exclude)
        start = snap.end_offset if snap is not None else 0
        steps: list[PlanStep] = []
        if snap is not None:
            steps.append(PlanStep("snapshot", snap.path, str(snap.path), snapshot=snap, base_offset=0))
        segs = [s for s in self.segments if until_offset is None or s.base_offset <= until_offset]
        chosen = [s for i, s in enumerate(segs) if i == len(segs) - 1 or segs[i + 1].base_offset > start]
        following = {a.path: b.base_offset for a, b in zip(self.segments, self.segments[1:], strict=False)}
        for s in chosen:
            steps.append(
                PlanStep(
                    "log",
                    s.path,
                    str(s.path),
                    skip_below=start,
                    lenient_tail=s is self.segments[-1],
                    base_offset=s.base_offset,
                    bounds=(s.base_offset, following.get(s.path)),
                )
            )
        partial = False
        if chosen and chosen[0].base_offset > start:
            partial = True
            if snap is None:
                msg = (
                    f"the log starts at offset {chosen[0].base_offset} and no snapshot covers the "
                    f"offsets before it: the image is partial"
                )
            else:
                msg = (
                    f"gap between snapshot {snap.name} (end offset {snap.end_offset}) and the log, which "
                    f"starts at offset {chosen[0].base_offset}: the image is partial"
                )
            warnings.append(LogWarning("partial-image", msg, str(chosen[0].path), 0))
        if snap is None and self.bootstrap is not None:
            # bootstrap.checkpoint is not replicated state: only used when the log holds nothing
            steps.append(
                PlanStep(
                    "bootstrap",
                    self.bootstrap,
                    str(self.bootstrap),
                    only_if_empty=bool(chosen),
                    base_offset=0,
                )
            )
        if not steps:
            warnings.append(
                LogWarning(
                    "empty",
                    "no snapshot, no log segment and no bootstrap.checkpoint: nothing to load",
                    str(self.path or self.log_dir),
                )
            )
        return ReadPlan(steps, snap, start, until_offset, list(self.warnings) + warnings, self, partial)


def _looks_like_partition_dir(p: Path) -> bool:
    if p.name == PARTITION_DIR:
        return True
    try:
        names = os.listdir(p)
    except OSError:
        return False
    return any(_SEGMENT_RE.match(n) or _SNAPSHOT_RE.match(n) or n == "quorum-state" for n in names)


def open_metadata_dir(path: str | os.PathLike[str]) -> MetadataLogDir:
    """Open a ``__cluster_metadata-0`` folder, or the log dir holding one (``--directory``).

    Raises MetadataDirError when the path does not exist, is a file, cannot be listed, or holds no
    KRaft metadata at all.
    """
    p = Path(path)
    if not p.exists():
        raise MetadataDirError(f"{p}: no such directory")
    if not p.is_dir():
        raise MetadataDirError(f"{p}: is a file, not a directory (use --snapshot to read one file)")
    part: Path | None
    if (p / PARTITION_DIR).is_dir():
        part, log_dir = p / PARTITION_DIR, p
    elif _looks_like_partition_dir(p):
        part, log_dir = p, p.parent
    elif (p / "meta.properties").is_file() or (p / "bootstrap.checkpoint").is_file():
        part, log_dir = None, p
    else:
        raise MetadataDirError(
            f"{p}: not a KRaft metadata log directory (no {PARTITION_DIR} folder, "
            f"no .log or .checkpoint files)"
        )
    d = MetadataLogDir(part, log_dir)
    if part is None:
        d.warnings.append(
            LogWarning(
                "no-partition-dir",
                f"no {PARTITION_DIR} folder: the node has not started on this log dir yet",
                str(p),
            )
        )
    else:
        _scan_partition_dir(d, part)
    if log_dir is not None:
        meta = log_dir / "meta.properties"
        if meta.is_file():
            d.meta = read_meta_properties(meta, d.warnings)
        boot = log_dir / "bootstrap.checkpoint"
        if boot.is_file():
            d.bootstrap = boot
    return d


def _scan_partition_dir(d: MetadataLogDir, part: Path) -> None:
    try:
        entries = list(os.scandir(part))
    except OSError as e:
        raise MetadataDirError(f"{part}: cannot list the directory: {e.strerror or e}") from None
    for entry in sorted(entries, key=lambda e: e.name):
        name = entry.name
        try:
            if not entry.is_file():
                d.ignored.append(name)
                continue
            size = entry.stat().st_size
        except FileNotFoundError:  # deleted by Kafka between listing and stat
            continue
        path = Path(entry.path)
        snap = parse_snapshot_name(name)
        if snap is not None:
            d.snapshots.append(SnapshotFile(path, snap[0], snap[1], size))
            continue
        m = _SEGMENT_RE.match(name)
        if m:
            d.segments.append(SegmentFile(path, int(m.group(1)), size))
        elif name == "quorum-state":
            d.quorum = read_quorum_state(path, d.warnings)
        elif name == "leader-epoch-checkpoint":
            d.leader_epochs = read_leader_epoch_checkpoint(path, d.warnings)
        elif name == "partition.metadata":
            d.partition_metadata = read_partition_metadata(path, d.warnings)
        else:  # .index, .timeindex, producer .snapshot, *.deleted, .part, .cleaned, .swap, .tmp ...
            d.ignored.append(name)
    d.snapshots.sort(key=lambda s: (s.end_offset, s.epoch))
    d.segments.sort(key=lambda s: s.base_offset)
    topic_id = d.topic_id
    if topic_id is not None and topic_id != METADATA_TOPIC_ID:
        d.warnings.append(
            LogWarning(
                "not-metadata-topic",
                f"partition.metadata names topic id {topic_id}, "
                f"not the metadata topic ({METADATA_TOPIC_ID}): is this "
                f"{PARTITION_DIR}?",
                str(part / "partition.metadata"),
            )
        )


def _sniff_snapshot(path: Path) -> bool:
    """True when a file starts like a snapshot: a control batch whose first record is SnapshotHeader."""
    try:
        batch = read_batch_at(path, 0)
        if batch is None or not batch.is_control:
            return False
        entries = batch.entries()
    except (OSError, MetashellError):
        return False
    key = entries[0][2] if entries else None
    return key is not None and len(key) >= 4 and int.from_bytes(key[2:4], "big", signed=True) == 3


def plan_file(path: str | os.PathLike[str]) -> ReadPlan:
    """``--snapshot FILE``: read exactly one ``.checkpoint`` or ``.log`` file, as Kafka's shell does.

    A ``.checkpoint`` is read as a snapshot (``bootstrap.checkpoint`` as "bootstrap"), a ``.log`` as a
    log segment applied in full (its tail may be torn); any other name is sniffed.
    """
    p = Path(path)
    if not p.exists():
        raise MetadataDirError(f"{p}: no such file")
    if p.is_dir():
        raise MetadataDirError(f"{p}: is a directory, not a file (use --directory to read a directory)")
    name = p.name
    if name == "bootstrap.checkpoint":
        step = PlanStep("bootstrap", p, str(p), base_offset=0)
    elif name.endswith(".checkpoint") or (not name.endswith(".log") and _sniff_snapshot(p)):
        parsed = parse_snapshot_name(name)
        snap = None
        if parsed is not None:
            try:
                size = p.stat().st_size
            except OSError:
                size = 0
            snap = SnapshotFile(p, parsed[0], parsed[1], size)
        step = PlanStep("snapshot", p, str(p), snapshot=snap, base_offset=0)
    else:
        m = _SEGMENT_RE.match(name)
        step = PlanStep("log", p, str(p), lenient_tail=True, base_offset=int(m.group(1)) if m else None)
    return ReadPlan([step], step.snapshot, 0)
