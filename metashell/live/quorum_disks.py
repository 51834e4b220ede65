"""How far each node's own directory is from the committed log, beside a live quorum.

``metashell -q HOST:PORT -d DIR [-d DIR ...]``: the leader's DescribeQuorum says where the committed
log ends (its high watermark) and where it believes each replica's log ends; the directories say
where each node's log really ends on disk.  No Kafka tool puts the two side by side, and it is what
an operator needs before copying, restoring or wiping a node's metadata: a directory behind the
high watermark is missing committed records (its node fetches them when it runs; a copy of it taken
now lacks them), one past it holds records no majority has acknowledged yet, which a new leader may
truncate.

A directory is read afresh each time (the node may be writing into it): the end of its last
segment's last batch (headers only, no CRC check: the load is the place that validates a log), or,
when it holds no segment, its newest snapshot's end.  ``quorum --interval`` asks again and again:
each segment's last batch is remembered (its position, base offset and CRC), and the next read
starts there when the file still holds that very batch (Kafka appends), so a look reads what was
appended since, not the whole segment.  A directory of another cluster is named as such and given
no distance: a number measured against another cluster's log would be a false claim.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from metashell.errors import MetashellError
from metashell.log.batch import HEADER, HEADER_SIZE
from metashell.log.directory import open_metadata_dir
from metashell.log.files import iter_file_batches
from metashell.log.problems import unheard

from .quorum_status import QuorumStatus

__all__ = ["DiskEnd", "disk_end", "disk_json", "disk_lines"]


@dataclass(frozen=True)
class DiskEnd:
    """Where one node directory's log ends, as read now."""

    path: str
    node_id: int | None
    cluster_id: str | None
    directory_id: str | None
    log_end: int | None
    """The offset after the last batch on disk (a snapshot's end when no segment holds one)."""
    last_epoch: int | None
    problem: str | None = None
    """Why it has no distance (unreadable, another cluster's), or None."""


def disk_end(path: str) -> DiskEnd:
    """``path``'s node and log end, read now; an unreadable directory is a :class:`DiskEnd` with a
    ``problem``, never an exception (the rest of the answer stands)."""
    try:
        d = open_metadata_dir(path)
    except (OSError, MetashellError) as e:
        return DiskEnd(path, None, None, None, None, None, problem=str(e))
    meta = d.meta
    node, cluster, directory = (
        (meta.node_id, meta.cluster_id or None, meta.directory_id) if meta is not None else (None, None, None)
    )
    for segment in reversed(d.segments):  # the last segment that holds a batch (a new one may not yet)
        last = _last_batch(os.fspath(segment.path))
        if last is not None:
            return DiskEnd(path, node, cluster, directory, last[0] + 1, last[1])
    snaps = sorted((s for s in d.snapshots if not s.is_bootstrap), key=lambda s: s.end_offset)
    if snaps:
        return DiskEnd(path, node, cluster, directory, snaps[-1].end_offset, snaps[-1].epoch)
    return DiskEnd(path, node, cluster, directory, None, None, problem="no batch and no snapshot")


_LAST: dict[str, tuple[int, int, int, int, int]] = {}
"""Per segment path: its last batch as last read (position, base offset, CRC, last offset, epoch)."""


def _last_batch(path: str) -> tuple[int, int] | None:
    """(last offset, epoch) of the segment's last batch, or None (no batch, or unreadable); read
    from the batch remembered last time when the file still holds it at the same place."""
    start = 0
    known = _LAST.get(path)
    if known is not None:
        try:
            with open(path, "rb") as f:
                f.seek(known[0])
                head = f.read(HEADER_SIZE)
        except OSError:
            head = b""
        if len(head) == HEADER_SIZE:
            fields = HEADER.unpack(head)
            if (fields[0], fields[4]) == known[1:3]:  # base offset and CRC: the same batch
                start = known[0]
    found = None
    try:
        for b in iter_file_batches(
            path, position=start, decode=False, verify_crc=False, lenient_tail=True, warn=unheard
        ):
            found = (
                b.position,
                b.base_offset,
                b.crc,
                b.base_offset + b.last_offset_delta,
                b.partition_leader_epoch,
            )
    except (OSError, MetashellError):
        _LAST.pop(path, None)
        return None
    if found is None:
        _LAST.pop(path, None)
        return None if start == 0 else _last_batch(path)
    if len(_LAST) >= 4096:  # segments roll: forget the old ones now and then
        _LAST.clear()
    _LAST[path] = found
    return found[3], found[4]


def _checked(disk: DiskEnd, status: QuorumStatus) -> DiskEnd:
    if (
        disk.problem is None
        and disk.cluster_id
        and status.cluster_id
        and disk.cluster_id != status.cluster_id
    ):
        return replace(disk, problem=f"cluster {disk.cluster_id}, not this quorum's {status.cluster_id}")
    return disk


def _leader_sees(disk: DiskEnd, status: QuorumStatus) -> int | None:
    """The log end offset the leader reports for the directory's node (None: not a replica it knows,
    or a directory that is not one of this quorum's)."""
    if disk.problem is not None:
        return None
    return next((r.log_end_offset for r in status.replicas() if r.node_id == disk.node_id), None)


def _behind(disk: DiskEnd, status: QuorumStatus) -> int | None:
    """High watermark less the directory's log end: > 0 missing committed records, < 0 holding
    records past it (not yet committed); None when there is no distance to give."""
    if disk.problem is not None or disk.log_end is None or status.high_watermark < 0:
        return None
    return status.high_watermark - disk.log_end


def _distance(behind: int | None) -> str:
    if behind is None:
        return "-"
    if behind > 0:
        return f"{behind} behind (committed records missing)"
    if behind < 0:
        return f"{-behind} past (not committed yet)"
    return "at the high watermark"


def disk_lines(status: QuorumStatus, paths: list[str]) -> list[str]:
    """A table of the directories' ends beside the leader's view: ``quorum``'s text."""
    disks = [_checked(disk_end(p), status) for p in paths]
    head = ["NodeId", "LogEndOffset", "LastEpoch", "LeaderSees", "FromHighWatermark", "Directory"]
    rows = []
    for disk in disks:
        seen = _leader_sees(disk, status)
        rows.append(
            [
                "?" if disk.node_id is None else str(disk.node_id),
                "-" if disk.log_end is None else str(disk.log_end),
                "-" if disk.last_epoch is None else str(disk.last_epoch),
                "-" if seen is None else str(seen),
                disk.problem or _distance(_behind(disk, status)),
                os.fspath(disk.path),
            ]
        )
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    table = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in (head, *rows)
    ]
    return [f"Directories, read now (high watermark {status.high_watermark}):", *table]


def disk_json(status: QuorumStatus, paths: list[str]) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        disk = _checked(disk_end(path), status)
        out.append(
            {
                "directory": disk.path,
                "nodeId": disk.node_id,
                "clusterId": disk.cluster_id,
                "directoryId": disk.directory_id,
                "logEndOffset": disk.log_end,
                "lastEpoch": disk.last_epoch,
                "leaderLogEndOffset": _leader_sees(disk, status),
                "behindHighWatermark": _behind(disk, status),
                "problem": disk.problem,
            }
        )
    return out
