"""Plans that read a directory's whole past, not just what Kafka would load at startup.

``MetadataLogDir.plan()`` is Kafka's startup rule (the newest snapshot, then the log).  ``history``,
``log`` and the Spark ``records`` table need more: every record the files still hold, from offset 0
when the segments start there, else from the oldest snapshot (:func:`full_plan`); or the segments
from one offset on, entered through a load's batch index (:func:`log_plan`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .directory import MetadataLogDir, PlanStep, ReadPlan, SnapshotFile

__all__ = ["from_snapshot", "full_plan", "log_plan"]


def full_plan(d: MetadataLogDir, start: int | None = None) -> ReadPlan:
    """Everything the directory still holds, oldest first: the whole log when it starts at 0, else
    the oldest snapshot and the log after it.  With ``start``, from the newest snapshot at or before
    it instead (what ``log --from`` needs: the state there, then the records)."""
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
    return from_snapshot(d, min(snaps, key=lambda s: s.end_offset))


def log_plan(d: MetadataLogDir, start: int, index: Sequence[Any] | None = None) -> ReadPlan:
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


def from_snapshot(d: MetadataLogDir, snap: SnapshotFile) -> ReadPlan:
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
