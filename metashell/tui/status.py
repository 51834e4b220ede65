"""The TUI's header and live-mode notices: what the two header lines say, and leader changes.

The title bar puts what matters at 3 a.m. first (where in time the view is, the connection, the
verdict for that point; the cluster id last), because an 80-column terminal cuts the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from metashell.image.kafka_names import metadata_version_name
from metashell.safe_text import visible
from metashell.times import iso_utc as iso_time

from .catch_up import LOADING
from .faces import HasSession, Notifies

if TYPE_CHECKING:
    from metashell.image.health import HealthReport

__all__ = ["facts_line", "status_line", "tell_leader_change"]


class StatusApp(HasSession, Notifies, Protocol):
    """What the header lines and the leader toasts read (and the leaders they remember)."""

    health: HealthReport | None
    paused: bool
    last_leader: tuple[int, int] | None
    leader_changes: list[tuple[int, int]]


def status_line(app: StatusApp) -> str:
    """Most important first, for the title bar cuts what does not fit (80 columns): where in
    time the view is and the connection's state, then the verdict for that point, the cluster
    id last."""
    parts = [f"at {app.shell.point}" if app.shell.point else "", app.source.behind or ""]
    if app.paused:  # status() would apply what arrived: only count it
        pending = app.source.pending() if app.source.pending is not None else 0
        parts.append(f"PAUSED: {pending} change(s) since")
    elif app.source.status is not None:
        parts.append(app.source.status())
    if app.health is not None:
        parts.append(app.health.verdict().split(";")[0].split(" (")[0])
        if app.health.as_of:  # a salvaged image: the verdict is for that point, not the log's end
            parts.append(app.health.as_of)
    elif app.shell.point and app.source.behind != LOADING:  # else checked once at the end
        parts.append("health: checking")
    parts.append(f"cluster {app.source.cluster_id}" if app.source.cluster_id else "")
    return visible("  |  ".join(x for x in parts if x))


def facts_line(app: HasSession) -> str:
    """The header's second line: where the view stands in the log (last applied offset, its
    epoch and append time), the metadata.version, and the source."""
    image = app.shell.root.ctx.image
    p = image.provenance
    when = f" at {iso_time(p.timestamp)}" if p.timestamp >= 0 else ""
    mv = metadata_version_name(image.features.metadata_version)
    where = f"offset {p.offset} (epoch {p.epoch}){when}"
    return visible("  |  ".join((where, f"metadata.version {mv}", app.source.description)))


def tell_leader_change(app: StatusApp) -> None:
    """Live mode: a notification when the quorum's leader changes (or is lost, or is back)."""
    if app.source.leader is None:
        return
    leader, epoch = app.source.leader()
    was, app.last_leader = app.last_leader, (leader, epoch)
    if was is None or was == (leader, epoch):
        return
    if leader < 0:
        app.notify(f"the quorum lost its leader {was[0]} (epoch {was[1]})", severity="warning", timeout=8)
    else:
        before = f"{was[0]}, epoch {was[1]}" if was[0] >= 0 else "none"
        app.notify(f"quorum leader {leader}, epoch {epoch} (was {before})", timeout=8)
    app.leader_changes.append((leader, epoch))
