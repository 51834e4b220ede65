"""Plans: which files a load reads, in which order, from where.

The files are the snapshots and segments of a metadata log (:class:`SnapshotFile`,
:class:`SegmentFile`); a plan (:class:`ReadPlan`) is the list of them to read (:class:`PlanStep`),
which the reader (``metashell.log.reader``) carries out.  ``MetadataLogDir.plan()`` makes Kafka's
startup plan (the newest snapshot, then the log) and ``plan_file`` the one of ``--snapshot FILE``.
``history``, ``log`` and the Spark ``records`` table need more: every record the files still hold,
from offset 0 when the segments start there, else from the oldest snapshot (:func:`full_plan`); or
the segments from one offset on, entered through a load's batch index (:func:`log_plan`).
"""

import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from metashell.errors import MetashellError
from metashell.log.batch_index import BatchIndex
from metashell.log.files import iter_file_batches
from metashell.log.problems import LogWarning, unheard

__all__ = [
    "Listing",
    "PlanStep",
    "ReadPlan",
    "SegmentFile",
    "SnapshotFile",
    "from_snapshot",
    "full_plan",
    "log_plan",
    "parse_snapshot_name",
]

_SNAPSHOT_RE = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


class SnapshotFile(NamedTuple):
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


class SegmentFile(NamedTuple):
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


class PlanStep(NamedTuple):
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


class ReadPlan:
    """What to read, in order, and why.  ``start_offset``: first log offset to replay.
    ``partial``: the plan already warned that the log starts after the state it has (image partial).

    A plain class, as every class on a one-shot command's start path: a dataclass costs about a
    millisecond of ``exec`` at import (``docs/architecture.md``, "Start-up").
    """

    __slots__ = ("directory", "partial", "snapshot", "start_offset", "steps", "until_offset", "warnings")

    def __init__(
        self,
        steps: list[PlanStep],
        snapshot: SnapshotFile | None = None,
        start_offset: int = 0,
        until_offset: int | None = None,
        warnings: list[LogWarning] | None = None,
        directory: "Listing | None" = None,
        partial: bool = False,
    ) -> None:
        self.steps = steps
        self.snapshot = snapshot
        self.start_offset = start_offset
        self.until_offset = until_offset
        self.warnings: list[LogWarning] = [] if warnings is None else warnings
        self.directory = directory
        self.partial = partial

    def __repr__(self) -> str:
        return f"ReadPlan(steps={self.steps!r}, start_offset={self.start_offset}, until_offset={self.until_offset})"

    @property
    def files(self) -> list[str]:
        """The files the plan may read, in order (a conditional ``bootstrap.checkpoint`` included).

        For /provenance prefer ``PlanReader.files_read``: the files actually opened."""
        return [s.source for s in self.steps]

    def seek(self, index: Sequence[Any] | None = None) -> "ReadPlan":
        """A copy whose log steps start at the batch holding ``start_offset`` instead of byte 0.

        Batch positions come from ``index`` (a PlanReader's ``index`` from an earlier read) when it
        covers the file, else from a quick header-only scan of the file (no CRC, no record decoding).
        This makes re-reading "up to offset N" cost only the batches after the snapshot.
        """
        best: dict[str, int] = {}
        covered: set[str] = set()
        if isinstance(index, BatchIndex):
            covered, best = index.log_starts(self.start_offset)
        else:
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
                            warn=unheard,
                        ):
                            if b.base_offset > self.start_offset:
                                break
                            best[s.source] = b.position
                    except (OSError, MetashellError):
                        pass  # the real read reports it
                s = s._replace(position=best.get(s.source, 0))
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


class Listing(Protocol):
    """What a plan needs of a directory's listing (``log.directory.MetadataLogDir`` is the one):
    its files, Kafka's startup choice, and a fresh listing (a reader re-plans when Kafka replaced a
    snapshot while it read).  A protocol, so that plans do not import the directory module that
    makes them."""

    segments: list[SegmentFile]
    snapshots: list[SnapshotFile]

    def latest_snapshot(
        self, until_offset: int | None = None, exclude: Collection[Path] = ()
    ) -> SnapshotFile | None: ...

    def plan(self, until_offset: int | None = None, *, exclude: Collection[Path] = ()) -> ReadPlan: ...

    def reopen(self) -> "Listing": ...


def full_plan(d: "Listing", start: int | None = None) -> ReadPlan:
    """Everything the directory still holds, oldest first: the whole log when it starts at 0, else
    the oldest snapshot the log continues from and the log after it.  With ``start``, from the newest
    snapshot at or before it instead (what ``log --from`` needs: the state there, then the records).

    A snapshot older than the log's first batch is passed over: retention deleted the offsets
    between its end and the log start, and a replay from it ran straight across them (``history``
    then said "no record in these files changed it" of topics the newer snapshot holds)."""
    if start is not None:
        snap = d.latest_snapshot(start - 1)
        if snap is not None:
            return from_snapshot(d, snap)
    if d.segments and d.segments[0].base_offset == 0:
        steps = [
            PlanStep("log", s.path, str(s.path), lenient_tail=s is d.segments[-1], base_offset=s.base_offset)
            for s in d.segments
        ]
        return ReadPlan(steps, None, 0)
    snaps = [s for s in d.snapshots if not s.is_bootstrap]
    if not snaps:
        return d.plan()
    first = d.segments[0].base_offset if d.segments else None
    reached = [s for s in snaps if first is None or s.end_offset >= first]
    return from_snapshot(d, min(reached or snaps, key=lambda s: s.end_offset))


def log_plan(d: "Listing", start: int, index: Sequence[Any] | None = None) -> ReadPlan:
    """The log segments from offset ``start`` on, without a snapshot, each entered at the batch
    holding ``start`` when ``index`` (a load's batch index) knows it: what ``log --from`` reads when
    the state before ``start`` comes from the journaled image instead of a replay."""
    segs = d.segments
    steps = [
        PlanStep(
            "log",
            s.path,
            str(s.path),
            skip_below=start,
            lenient_tail=s is segs[-1],
            base_offset=s.base_offset,
        )
        for i, s in enumerate(segs)
        if i == len(segs) - 1 or segs[i + 1].base_offset > start
    ]
    return ReadPlan(steps, None, start).seek(index)


def from_snapshot(d: "Listing", snap: SnapshotFile) -> ReadPlan:
    """``snap`` and every segment holding offsets after it (to the end of the log)."""
    segs = d.segments
    steps = [PlanStep("snapshot", snap.path, str(snap.path), snapshot=snap, base_offset=0)]
    steps += [
        PlanStep(
            "log",
            s.path,
            str(s.path),
            skip_below=snap.end_offset,
            lenient_tail=s is segs[-1],
            base_offset=s.base_offset,
        )
        for i, s in enumerate(segs)
        if i == len(segs) - 1 or segs[i + 1].base_offset > snap.end_offset
    ]
    return ReadPlan(steps, snap, snap.end_offset)
