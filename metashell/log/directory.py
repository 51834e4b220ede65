"""A KRaft metadata log directory on disk, and the plan of which files to read (FORMATS.md 1).

``open_metadata_dir`` lists the directory once (read-only: nothing is created, locked or written,
so it works on a read-only copy and next to a running Kafka) and parses the small files;
``MetadataLogDir.plan()`` then applies Kafka's startup rules (FORMATS.md 1.2) to choose what to
replay: the newest complete snapshot, then the log from the snapshot's end offset -- or the log from
offset 0 without a snapshot, or ``bootstrap.checkpoint`` when there is no log data at all.
``plan_file`` is ``--snapshot FILE``: exactly one ``.checkpoint`` or ``.log`` file, as Kafka's shell.
The files and the plan themselves are :mod:`metashell.log.plans`'.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Collection
from pathlib import Path

from metashell.errors import MetashellError
from metashell.log.files import read_batch_at
from metashell.log.plans import PlanStep, ReadPlan, SegmentFile, SnapshotFile, parse_snapshot_name
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
    "directory_of",
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
_SEGMENT_RE = re.compile(r"^(\d{20,})\.log$")


class MetadataDirError(MetashellError):
    """The path given is not something metashell can read (missing, not a metadata dir, no access)."""


class MetadataLogDir:
    """The listing of one metadata log directory and its parsed small files.

    ``path``: the ``__cluster_metadata-0`` folder (None for a formatted log dir the node never
    started on); ``log_dir``: the log dir holding ``meta.properties`` / ``bootstrap.checkpoint`` (the
    partition's parent).  The other attributes start empty and ``open_metadata_dir`` fills them.
    """

    __slots__ = (
        "bootstrap",
        "ignored",
        "leader_epochs",
        "log_dir",
        "meta",
        "partition_metadata",
        "path",
        "quorum",
        "segments",
        "snapshots",
        "warnings",
    )

    def __init__(self, path: Path | None, log_dir: Path | None) -> None:
        self.path = path
        self.log_dir = log_dir
        self.snapshots: list[SnapshotFile] = []
        self.segments: list[SegmentFile] = []
        self.bootstrap: Path | None = None
        self.meta: MetaProperties | None = None
        self.quorum: QuorumState | None = None
        self.leader_epochs: list[tuple[int, int]] | None = None
        self.partition_metadata: dict[str, str] | None = None
        self.ignored: list[str] = []
        self.warnings: list[LogWarning] = []

    def __repr__(self) -> str:
        return f"MetadataLogDir(path={self.path!r}, log_dir={self.log_dir!r})"

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
    return any(_SEGMENT_RE.match(n) or parse_snapshot_name(n) or n == "quorum-state" for n in names)


def _nodes_hint(p: Path) -> str:
    """For a folder of node directories (each holding a metadata log dir): the ``-d`` per node
    form, since one ``-d`` reads one node (a fleet folder is the Spark export's input)."""
    try:
        nodes = sorted(c for c in p.iterdir() if (c / PARTITION_DIR).is_dir())
    except OSError:
        return ""
    if not nodes:
        return ""
    words = " ".join(f"-d {shlex.quote(str(c))}" for c in nodes[:5]) + (" ..." if len(nodes) > 5 else "")
    return f"; it holds {len(nodes)} node directories: give one -d per node ({words})"


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
            f"no .log or .checkpoint files){_nodes_hint(p)}"
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


def directory_of(plan: ReadPlan) -> MetadataLogDir | None:
    """The directory a plan was made from (None for a file's plan).  A plan holds it as a
    ``plans.Listing``, so that plans need not import this module; here it is the full listing again,
    with ``meta.properties`` and ``quorum-state``."""
    d = plan.directory
    return d if isinstance(d, MetadataLogDir) else None


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
