"""The tree's bookkeeping leaves: ``/quorum`` (the quorum as the files on this node, or the live
connection, tell it) and ``/provenance`` (what was read: the offset, epoch and time the image
reached, the snapshot, the files).  They say how a view was assembled, not what the metadata holds,
which is why ``diff`` across time leaves them out.
"""

from __future__ import annotations

from typing import Any

from metashell.engine import current as current_engine
from metashell.protocol.uuid import uuid_to_str
from metashell.times import iso_utc

from .node import TreeContext


def _extra(ctx: TreeContext, key: str) -> dict[str, Any]:
    """``source_info[key]``: a dict, or a callable returning one (live mode: high watermark, lag)."""
    value = ctx.source_info.get(key)
    if callable(value):
        value = value()
    return dict(value) if isinstance(value, dict) else {}


def quorum_json(ctx: TreeContext) -> dict[str, Any]:
    q = ctx.image.quorum
    voters = []
    for v in q.voters:
        voters.append(
            {
                "id": v.id,
                "directoryId": uuid_to_str(v.directory_id),
                "endpoints": [{"name": e.name, "host": e.host, "port": e.port} for e in v.endpoints],
                "kraftVersionRange": (
                    None
                    if v.kraft_version_range is None
                    else {"min": v.kraft_version_range[0], "max": v.kraft_version_range[1]}
                ),
            }
        )
    out: dict[str, Any] = {
        "clusterId": q.cluster_id,
        "nodeId": q.node_id,
        "directoryId": None if q.directory_id is None else uuid_to_str(q.directory_id),
        "leaderId": q.leader_id,
        "leaderEpoch": q.leader_epoch,
        "voters": voters,
        "kraftVersion": q.kraft_version,
        "source": q.source,
    }
    out.update(_extra(ctx, "quorum"))
    return out


def provenance_json(ctx: TreeContext) -> dict[str, Any]:
    p = ctx.image.provenance
    snap = p.snapshot
    out: dict[str, Any] = {
        "offset": p.offset,
        "epoch": p.epoch,
        "timestamp": p.timestamp,
        "time": iso_utc(p.timestamp),
        "snapshot": None
        if snap is None
        else {
            "path": snap.path,
            "endOffset": snap.end_offset,
            "epoch": snap.epoch,
            "lastContainedLogTimestamp": snap.last_contained_log_timestamp,
        },
        "files": list(p.sources),
        "records": p.records,
        "batches": p.batches,
        "source": _source_json(ctx),
        "salvaged": [item.as_json() for item in p.salvaged],
        "engine": current_engine().describe(),
    }
    out.update(_extra(ctx, "provenance"))
    return out


_SOURCE_MODES = (("directory", "directory"), ("snapshot", "file"), ("bootstrap", "live"))


def _source_json(ctx: TreeContext) -> dict[str, Any]:
    """Where the image came from, with the same keys whatever the source: ``mode`` (directory, file,
    live, or memory for an image built in a program) and ``location`` (a path, or the controllers)."""
    info = ctx.source_info
    for key, mode in _SOURCE_MODES:
        if key in info:
            return {"mode": mode, "location": info[key]}
    return {"mode": "memory", "location": None}
