"""The point a ``--salvage`` load stopped at, said with every verdict made on it.

A salvaged image is the metadata *as of* the last whole batch before the damage, not as of the end
of the log: ``--salvage health`` said ``HEALTHY`` for a point 7,768 offsets before the end, and only
a warning on stderr said so.  So a verdict on a salvaged image carries its point -- ``as of offset N
(time); M later offset(s) unreadable`` -- in the verdict line, in ``--json`` and in the TUI's title.
"""

from __future__ import annotations

from typing import NamedTuple

from metashell.log.headers import batch_headers
from metashell.times import iso_utc

from .image import MetadataImage

__all__ = ["SalvagePoint", "salvage_point"]


class SalvagePoint(NamedTuple):
    offset: int
    timestamp: int
    unreadable: int | None
    """Offsets after ``offset`` that the files frame but the load could not read (None: unknown)."""

    def words(self) -> str:
        when = iso_utc(self.timestamp) if self.timestamp >= 0 else None
        point = f"as of offset {self.offset}" + (f" ({when})" if when else "")
        later = (
            "later offsets unreadable"
            if self.unreadable is None
            else f"{self.unreadable} later offset(s) unreadable"
        )
        return f"{point}; {later} (--salvage)"

    def as_json(self) -> dict[str, object]:
        return {"offset": self.offset, "timestamp": self.timestamp, "unreadableOffsets": self.unreadable}


def salvage_point(image: MetadataImage) -> SalvagePoint | None:
    """Where a salvaged image stands, and how much of the log it could not read; None when the
    image was not salvaged.  Only the damaged and skipped files' batch headers are read."""
    prov = image.provenance
    if not prov.salvaged:
        return None
    files = [s.source for s in prov.salvaged if s.source]
    files += [f for s in prov.salvaged for f in s.skipped if not f.startswith("the rest of ")]
    headers = batch_headers(files)
    end = max((h.last_offset for h in headers), default=None)
    unreadable = None if end is None else max(end - prov.offset, 0)
    return SalvagePoint(prov.offset, prov.timestamp, unreadable)
