"""``metashell-spark report OUT``: the standard fleet questions, answered with Spark SQL over an export.

Each section is one SQL query over the exported tables (registered as temporary views under their
table names, plus the ``directories`` view below), so a reader can run the same query in a notebook:

* ``directories``: every directory the export read, one row each, with its cluster id (``unknown``
  when it has none), node id, verdict and the count of its ``errors`` rows.  The verdict is, first
  that applies: ``UNREADABLE`` (its replay failed: the image tables have no row of it, never a
  silent absence), ``NO DATA``, ``DAMAGED`` (an error row: a damaged batch, offsets in no file, a
  name no column holds; ``image_health`` then judges the image *as of* ``image_offset``, where its
  load stopped), then ``CRITICAL``, ``DEGRADED`` or ``HEALTHY`` as ``health`` says;
* ``health``: offline partitions (no leader, or a leader that is not a live broker) and
  under-replicated partitions (ISR smaller than the replicas being kept) per cluster;
* ``leaders``: partitions led per broker, per cluster, with each broker's share (skew);
* ``config_drift``: topic and cluster-wide broker config keys whose value differs between clusters;
* ``isr_shrinks``: per cluster, broker and day, how many times a partition's ISR lost that broker;
* ``record_types``: the mix of record types per cluster.

**A fleet is keyed by directory.**  Directories are one cluster (reported once, from the directory
whose image is the most recent) only when they share a cluster id that names one cluster: not when
they have none, not when it is one of :data:`DEFAULT_CLUSTER_IDS` (the ids of Kafka's docker
examples, which unrelated clusters share), and not when their topics have no id in common.  Such a
directory is its own cluster, named ``<id or unknown> @ <directory>``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_CLUSTER_IDS",
    "SECTIONS",
    "Section",
    "render_chart",
    "render_json",
    "render_text",
    "report",
]

DEFAULT_CLUSTER_IDS = (
    "MkU3OEVBNTcwNTJENDM2Qk",  # apache/kafka docker image's default CLUSTER_ID, and Confluent's examples
    "4L6g3nShT-eMCtK--X86sw",  # apache/kafka docker/examples' compose files
    "5L6g3nShT-eMCtK--X86sw",  # the same files' second cluster
    "abcdefghijklmnopqrstuv",  # Bitnami's documented KAFKA_KRAFT_CLUSTER_ID example
)
"""Cluster ids that ship in documentation and images, so unrelated clusters share them."""

_DEFAULTS = ", ".join(f"'{c}'" for c in DEFAULT_CLUSTER_IDS)

DIRECTORIES_VIEW = f"""
WITH seen AS (
  SELECT source_dir, cluster_id, node_id, offset FROM nodes
  UNION ALL SELECT source_dir, cluster_id, node_id, CAST(NULL AS BIGINT) AS offset FROM errors),
dirs AS (
  SELECT source_dir, first(cluster_id, true) AS cluster_id, first(node_id, true) AS node_id,
         max(offset) AS offset FROM seen GROUP BY source_dir),
ids AS (SELECT source_dir, collect_set(topic_id) AS topic_ids FROM topics GROUP BY source_dir),
clash AS (
  SELECT DISTINCT a.source_dir FROM dirs a JOIN dirs b
    ON a.cluster_id = b.cluster_id AND a.source_dir <> b.source_dir
  JOIN ids ia ON ia.source_dir = a.source_dir JOIN ids ib ON ib.source_dir = b.source_dir
  WHERE size(array_intersect(ia.topic_ids, ib.topic_ids)) = 0),
problems AS (
  SELECT source_dir,
         SUM(CASE WHEN severity = 'error' THEN 1 ELSE 0 END) AS errors,
         SUM(CASE WHEN severity = 'warning' THEN 1 ELSE 0 END) AS warnings,
         MAX(CASE WHEN kind LIKE 'replay:%' THEN 1 ELSE 0 END) AS unreadable,
         MAX(CASE WHEN kind = 'no-data' THEN 1 ELSE 0 END) AS no_data
  FROM errors GROUP BY source_dir)
SELECT d.source_dir, d.cluster_id, d.node_id, d.offset,
       CASE WHEN d.cluster_id IS NULL THEN 'no cluster id'
            WHEN d.cluster_id IN ({_DEFAULTS}) THEN 'a default id unrelated clusters share'
            WHEN c.source_dir IS NOT NULL THEN 'shared with a directory of other topics'
       END AS id_note,
       CASE WHEN d.cluster_id IS NULL OR d.cluster_id IN ({_DEFAULTS}) OR c.source_dir IS NOT NULL
            THEN concat(coalesce(d.cluster_id, 'unknown'), ' @ ', d.source_dir)
            ELSE d.cluster_id END AS cluster,
       coalesce(p.errors, 0) AS errors, coalesce(p.warnings, 0) AS warnings,
       coalesce(p.unreadable, 0) = 1 AS unreadable, coalesce(p.no_data, 0) = 1 AS no_data
FROM dirs d LEFT JOIN clash c ON c.source_dir = d.source_dir LEFT JOIN problems p ON p.source_dir = d.source_dir
"""
"""The ``directories`` view: one row per directory, with the cluster it is reported as."""

_CURRENT = """
current AS (
  SELECT cluster, source_dir FROM (
    SELECT cluster, source_dir, ROW_NUMBER() OVER (PARTITION BY cluster ORDER BY offset DESC NULLS LAST, source_dir)
           AS n
    FROM directories WHERE NOT unreadable)
  WHERE n = 1)
"""

_PARTITION_COUNTS = f"""
WITH {_CURRENT.strip()},
live AS (SELECT b.source_dir, b.broker_id FROM brokers b JOIN directories d USING (source_dir) WHERE NOT b.fenced),
counts AS (
  SELECT p.source_dir, COUNT(*) AS partitions,
         SUM(CASE WHEN l.broker_id IS NULL THEN 1 ELSE 0 END) AS offline,
         SUM(CASE WHEN size(p.isr) < size(p.replicas) - size(p.adding_replicas) THEN 1 ELSE 0 END) AS under_replicated
  FROM partitions p LEFT JOIN live l ON p.source_dir = l.source_dir AND p.leader = l.broker_id
  GROUP BY p.source_dir)
"""

SECTIONS: dict[str, tuple[str, str]] = {
    "directories": (
        "Every directory read, with its verdict",
        f"""
{_PARTITION_COUNTS.strip()}
SELECT d.source_dir, coalesce(d.cluster_id, 'unknown') AS cluster_id, d.node_id,
       CASE WHEN d.unreadable THEN 'UNREADABLE'
            WHEN d.no_data THEN 'NO DATA'
            WHEN d.errors > 0 THEN 'DAMAGED'
            WHEN coalesce(c.offline, 0) > 0 THEN 'CRITICAL'
            WHEN coalesce(c.under_replicated, 0) > 0 THEN 'DEGRADED'
            ELSE 'HEALTHY' END AS verdict,
       CASE WHEN d.unreadable OR d.no_data THEN NULL
            WHEN coalesce(c.offline, 0) > 0 THEN 'CRITICAL'
            WHEN coalesce(c.under_replicated, 0) > 0 THEN 'DEGRADED'
            ELSE 'HEALTHY' END AS image_health,
       d.offset AS image_offset,
       coalesce(c.partitions, 0) AS partitions, coalesce(c.offline, 0) AS offline,
       coalesce(c.under_replicated, 0) AS under_replicated, d.errors, d.warnings, d.id_note,
       d.source_dir IN (SELECT source_dir FROM current) AS reported
FROM directories d LEFT JOIN counts c USING (source_dir)
ORDER BY d.unreadable DESC, offline DESC, under_replicated DESC, d.errors DESC, d.source_dir
""",
    ),
    "health": (
        "Offline and under-replicated partitions per cluster",
        f"""
{_PARTITION_COUNTS.strip()}
SELECT d.cluster, coalesce(c.partitions, 0) AS partitions, coalesce(c.offline, 0) AS offline,
       coalesce(c.under_replicated, 0) AS under_replicated
FROM current d LEFT JOIN counts c USING (source_dir)
ORDER BY offline DESC, under_replicated DESC, d.cluster
""",
    ),
    "leaders": (
        "Partitions led per broker (leader skew)",
        f"""
WITH {_CURRENT.strip()},
led AS (SELECT c.cluster, p.leader AS broker_id, COUNT(*) AS led
        FROM partitions p JOIN current c USING (source_dir) WHERE p.leader >= 0
        GROUP BY c.cluster, p.leader)
SELECT cluster, broker_id, led,
       ROUND(100.0 * led / SUM(led) OVER (PARTITION BY cluster), 1) AS share_pct
FROM led ORDER BY cluster, led DESC, broker_id
""",
    ),
    "config_drift": (
        "Config overrides that differ between clusters",
        f"""
WITH {_CURRENT.strip()},
cfg AS (SELECT c.cluster, g.resource_type,
               CASE WHEN g.resource_type = 'BROKER' AND g.resource_name = '' THEN '<cluster default>'
                    ELSE g.resource_name END AS resource, g.name, g.value
        FROM configs g JOIN current c USING (source_dir)
        WHERE g.resource_type = 'TOPIC' OR (g.resource_type = 'BROKER' AND g.resource_name = ''))
SELECT resource_type, resource, name, COUNT(DISTINCT cluster) AS clusters,
       COUNT(DISTINCT value) AS distinct_values,
       array_join(array_sort(collect_set(concat(cluster, '=', coalesce(value, 'null')))), ', ') AS cluster_values
FROM cfg GROUP BY resource_type, resource, name
HAVING COUNT(DISTINCT value) > 1
ORDER BY resource_type, resource, name
""",
    ),
    "isr_shrinks": (
        "ISR shrinks per broker and day",
        f"""
WITH {_CURRENT.strip()},
h AS (SELECT c.cluster, h.*, LAG(h.isr) OVER (PARTITION BY h.source_dir, h.topic_id, h.partition_id ORDER BY h.offset)
             AS before
      FROM partition_history h JOIN current c USING (source_dir)),
lost AS (SELECT cluster, to_date(timestamp) AS day, explode(array_except(before, isr)) AS broker_id
         FROM h WHERE before IS NOT NULL AND NOT deleted AND change = 'changed')
SELECT cluster, broker_id, day, COUNT(*) AS shrinks FROM lost
GROUP BY cluster, broker_id, day ORDER BY cluster, day, broker_id
""",
    ),
    "record_types": (
        "Record-type mix per cluster",
        f"""
WITH {_CURRENT.strip()}
SELECT c.cluster, r.record_type, COUNT(*) AS records
FROM records r JOIN current c USING (source_dir)
GROUP BY c.cluster, r.record_type ORDER BY c.cluster, records DESC, r.record_type
""",
    ),
}

_BASE = ("nodes", "errors", "topics")
"""What the ``directories`` view reads: every section needs it."""

_NEEDS = {
    "directories": (*_BASE, "partitions", "brokers"),
    "health": (*_BASE, "partitions", "brokers"),
    "leaders": (*_BASE, "partitions"),
    "config_drift": (*_BASE, "configs"),
    "isr_shrinks": (*_BASE, "partition_history"),
    "record_types": (*_BASE, "records"),
}


@dataclass
class Section:
    key: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    missing: list[str]

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "columns": self.columns,
            "rows": [dict(zip(self.columns, r, strict=True)) for r in self.rows],
            "missing": self.missing,
        }


def report(spark: Any, out: str, fmt: str = "parquet", sections: list[str] | None = None) -> list[Section]:
    """Run the report's queries over the export in ``out``."""
    root = Path(out)
    present = {p.name for p in root.iterdir() if p.is_dir()} if root.is_dir() else set()
    if not present:
        raise FileNotFoundError(f"{out}: no exported tables (run metashell-spark export first)")
    from .schemas import spark_ddl
    from .tables import tables

    for name in sorted(present):
        reader = spark.read.format(fmt)
        known = tables().get(name)
        if known is not None and known.schema is not None:  # an empty table has no file to take it from
            reader = reader.schema(spark_ddl(known.schema))
        try:
            reader.load(str(root / name)).createOrReplaceTempView(name)
        except Exception:  # noqa: BLE001 - a folder that is no table of ours (or an empty history)
            present.discard(name)
    if all(t in present for t in _BASE):
        spark.sql(DIRECTORIES_VIEW).createOrReplaceTempView("directories")
    result = []
    for key in sections or list(SECTIONS):
        title, sql = SECTIONS[key]
        missing = [t for t in _NEEDS[key] if t not in present]
        if missing:
            result.append(Section(key, title, [], [], missing))
            continue
        df = spark.sql(sql)
        rows = [[_plain(v) for v in r] for r in df.collect()]
        result.append(Section(key, title, df.columns, rows, []))
    return result


def _plain(v: Any) -> Any:
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def render_text(sections: list[Section], limit: int = 50) -> str:
    """Fixed-width text tables, one per section."""
    out: list[str] = []
    for s in sections:
        out.append(f"== {s.title} ==")
        if s.missing:
            out.append(f"(not exported: {', '.join(s.missing)})")
        elif not s.rows:
            out.append("(none)")
        else:
            cells = [[str(c) for c in s.columns]] + [
                ["" if v is None else str(v) for v in r] for r in s.rows[:limit]
            ]
            widths = [max(len(row[i]) for row in cells) for i in range(len(s.columns))]
            for j, row in enumerate(cells):
                out.append(
                    "  ".join(
                        c.rjust(w) if j and _numeric(c) else c.ljust(w)
                        for c, w in zip(row, widths, strict=True)
                    ).rstrip()
                )
                if j == 0:
                    out.append("  ".join("-" * w for w in widths))
            if len(s.rows) > limit:
                out.append(f"... {len(s.rows) - limit} more row(s) (--json has them all)")
        out.append("")
    return "\n".join(out)


def _numeric(text: str) -> bool:
    return text.replace(".", "", 1).lstrip("-").isdigit()


def render_json(sections: list[Section]) -> str:
    return json.dumps({"sections": [s.as_json() for s in sections]}, indent=2, default=str)


CHART_CLUSTERS = 12
"""Clusters drawn by ``--chart`` (the most leaders first); the text and ``--json`` have them all."""


def render_chart(sections: list[Section], path: str) -> str:
    """A PNG of small multiples, one row per cluster: partitions led per broker (bars) and ISR
    shrinks per day per broker (lines).  Brokers of different clusters never share a chart: broker
    1 of one cluster and broker 1 of another are different machines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_key = {s.key: s for s in sections}
    leaders: dict[str, list[tuple[Any, int]]] = {}
    if (s := by_key.get("leaders")) is not None:
        for cluster, broker, led, _share in s.rows:
            leaders.setdefault(str(cluster), []).append((broker, led))
    shrinks: dict[str, dict[Any, dict[date, int]]] = {}
    if (s := by_key.get("isr_shrinks")) is not None:
        for cluster, broker, day, n in s.rows:
            shrinks.setdefault(str(cluster), {}).setdefault(broker, {})[date.fromisoformat(str(day))] = n
    clusters = sorted(set(leaders) | set(shrinks), key=lambda c: (-sum(n for _, n in leaders.get(c, [])), c))
    shown = clusters[:CHART_CLUSTERS] or ["(no cluster)"]
    fig, axes = plt.subplots(len(shown), 2, figsize=(12, 2.8 * len(shown)), squeeze=False)
    for row, cluster in enumerate(shown):
        left, right = axes[row]
        bars = sorted(leaders.get(cluster, []), key=lambda b: (-b[1], b[0]))[:40]
        left.bar([str(b) for b, _ in bars], [n for _, n in bars], color="tab:blue")
        left.set_title(f"{cluster[:60]}: partitions led per broker", fontsize=9)
        left.set_xlabel("broker", fontsize=8)
        left.set_ylabel("partitions", fontsize=8)
        for broker, points in sorted(shrinks.get(cluster, {}).items())[:8]:
            days = sorted(points)
            right.plot(days, [points[d] for d in days], marker="o", label=f"broker {broker}")
        if shrinks.get(cluster):
            right.legend(fontsize=7)
        right.set_title(f"{cluster[:60]}: ISR shrinks per day", fontsize=9)
        right.tick_params(axis="x", labelrotation=45, labelsize=7)
    if len(clusters) > CHART_CLUSTERS:
        fig.suptitle(
            f"{CHART_CLUSTERS} of {len(clusters)} clusters (report --json has them all)", fontsize=10
        )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
