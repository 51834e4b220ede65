"""The ``churn`` table: what ``stats`` says of one directory (``image/stats.py``), for every
dataset of a fleet, as rows Spark can group: records of each type (in all, and per hour), and the
changes of each kind to each topic, partition and broker.  The same fold over the same records
(``changelog.iter_log``), so a dataset's rows are the numbers ``stats --json --window 1h`` prints
for it (``tests/test_spark_churn.py``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from metashell.image.loader import LoadResult

    from .inputs import Dataset

#: The table's window: an hour, ``stats``' default.
WINDOW_MS = 3_600_000

Row = dict[str, Any]


def churn_rows(ds: Dataset, result: LoadResult, redact: bool) -> Iterator[Row]:
    """One row per (section, window or thing, kind): ``type`` and ``window`` rows count records by
    type, ``topic``, ``partition`` and ``broker`` rows count changes by kind.  Read as the image
    was loaded (``--salvage``: up to any damage, which the ``errors`` table names)."""
    from metashell.image.changelog import iter_log
    from metashell.image.stats import collect
    from metashell.log.directory import open_metadata_dir, plan_file
    from metashell.log.plans import full_plan
    from metashell.protocol.uuid import uuid_to_str

    image = result.image
    plan = full_plan(open_metadata_dir(ds.path)) if ds.kind == "dir" else plan_file(ds.path)
    names = {uuid_to_str(t.id): t.name for t in image.topics.by_id.values()}
    stats = collect(iter_log(plan, payloads=True, salvage=True), window_ms=WINDOW_MS, topic_names=names)
    empty: Row = {"window_start": None, "topic": None, "partition": None, "broker": None}
    for kind, n in sorted(stats.by_type.items()):
        yield {**empty, "section": "type", "kind": kind, "count": n}
    for start, counts in sorted(stats.windows.items()):
        when = dt.datetime.fromtimestamp(start / 1000, tz=dt.UTC)
        for kind, n in sorted(counts.items()):
            yield {**empty, "section": "window", "window_start": when, "kind": kind, "count": n}
    for topic, counts in sorted(stats.topics.items()):
        for kind, n in sorted(counts.items()):
            yield {**empty, "section": "topic", "topic": topic, "kind": kind, "count": n}
    for (topic, partition), counts in sorted(stats.partitions.items()):
        for kind, n in sorted(counts.items()):
            yield {
                **empty,
                "section": "partition",
                "topic": topic,
                "partition": partition,
                "kind": kind,
                "count": n,
            }
    for broker, counts in sorted(stats.brokers.items()):
        for kind, n in sorted(counts.items()):
            yield {**empty, "section": "broker", "broker": broker, "kind": kind, "count": n}
