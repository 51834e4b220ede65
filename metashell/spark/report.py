"""``metashell-spark report OUT``: the standard fleet questions, answered with Spark SQL over an export.

Each section is one SQL query over the exported tables (registered as temporary views under their
table names), so a reader can run the same query in a notebook:

* ``health``: offline partitions (no leader, or a leader that is not a live broker) and
  under-replicated partitions (ISR smaller than the replicas being kept) per cluster;
* ``leaders``: partitions led per broker, per cluster, with each broker's share (skew);
* ``config_drift``: topic and cluster-wide broker config keys whose value differs between clusters;
* ``isr_shrinks``: per cluster, broker and day, how many times a partition's ISR lost that broker;
* ``record_types``: the mix of record types per cluster.

A cluster exported from several nodes' directories is reported once, from the directory whose
image is the most recent (highest offset).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

__all__ = ["SECTIONS", "Section", "render_chart", "render_json", "render_text", "report"]

_CURRENT = """
current AS (
  SELECT cluster_id, source_dir FROM (
    SELECT cluster_id, source_dir, ROW_NUMBER() OVER (PARTITION BY cluster_id ORDER BY max_offset DESC, source_dir)
           AS n
    FROM (SELECT cluster_id, source_dir, MAX(offset) AS max_offset FROM topics GROUP BY cluster_id, source_dir))
  WHERE n = 1)
"""

SECTIONS: dict[str, tuple[str, str]] = {
    "health": (
        "Offline and under-replicated partitions per cluster",
        f"""
WITH {_CURRENT},
live AS (SELECT b.cluster_id, b.broker_id FROM brokers b JOIN current c USING (cluster_id, source_dir)
         WHERE NOT b.fenced),
parts AS (SELECT p.* FROM partitions p JOIN current c USING (cluster_id, source_dir))
SELECT p.cluster_id,
       COUNT(*) AS partitions,
       SUM(CASE WHEN l.broker_id IS NULL THEN 1 ELSE 0 END) AS offline,
       SUM(CASE WHEN size(p.isr) < size(p.replicas) - size(p.adding_replicas) THEN 1 ELSE 0 END) AS under_replicated
FROM parts p LEFT JOIN live l ON p.cluster_id = l.cluster_id AND p.leader = l.broker_id
GROUP BY p.cluster_id ORDER BY offline DESC, under_replicated DESC, p.cluster_id
""",
    ),
    "leaders": (
        "Partitions led per broker (leader skew)",
        f"""
WITH {_CURRENT},
led AS (SELECT p.cluster_id, p.leader AS broker_id, COUNT(*) AS led
        FROM partitions p JOIN current c USING (cluster_id, source_dir) WHERE p.leader >= 0
        GROUP BY p.cluster_id, p.leader)
SELECT cluster_id, broker_id, led,
       ROUND(100.0 * led / SUM(led) OVER (PARTITION BY cluster_id), 1) AS share_pct
FROM led ORDER BY cluster_id, led DESC, broker_id
""",
    ),
    "config_drift": (
        "Config overrides that differ between clusters",
        f"""
WITH {_CURRENT},
cfg AS (SELECT g.cluster_id, g.resource_type,
               CASE WHEN g.resource_type = 'BROKER' AND g.resource_name = '' THEN '<cluster default>'
                    ELSE g.resource_name END AS resource, g.name, g.value
        FROM configs g JOIN current c USING (cluster_id, source_dir)
        WHERE g.resource_type = 'TOPIC' OR (g.resource_type = 'BROKER' AND g.resource_name = ''))
SELECT resource_type, resource, name, COUNT(DISTINCT cluster_id) AS clusters,
       COUNT(DISTINCT value) AS distinct_values,
       array_join(array_sort(collect_set(concat(cluster_id, '=', coalesce(value, 'null')))), ', ') AS cluster_values
FROM cfg GROUP BY resource_type, resource, name
HAVING COUNT(DISTINCT value) > 1
ORDER BY resource_type, resource, name
""",
    ),
    "isr_shrinks": (
        "ISR shrinks per broker and day",
        f"""
WITH {_CURRENT},
h AS (SELECT h.*, LAG(h.isr) OVER (PARTITION BY h.source_dir, h.topic_id, h.partition_id ORDER BY h.offset) AS before
      FROM partition_history h JOIN current c USING (cluster_id, source_dir)),
lost AS (SELECT cluster_id, to_date(timestamp) AS day, explode(array_except(before, isr)) AS broker_id
         FROM h WHERE before IS NOT NULL AND NOT deleted AND change = 'changed')
SELECT cluster_id, broker_id, day, COUNT(*) AS shrinks FROM lost
GROUP BY cluster_id, broker_id, day ORDER BY cluster_id, day, broker_id
""",
    ),
    "record_types": (
        "Record-type mix per cluster",
        f"""
WITH {_CURRENT}
SELECT r.cluster_id, r.record_type, COUNT(*) AS records
FROM records r JOIN current c USING (cluster_id, source_dir)
GROUP BY r.cluster_id, r.record_type ORDER BY r.cluster_id, records DESC, r.record_type
""",
    ),
}

_NEEDS = {
    "health": ("topics", "partitions", "brokers"),
    "leaders": ("topics", "partitions"),
    "config_drift": ("topics", "configs"),
    "isr_shrinks": ("topics", "partition_history"),
    "record_types": ("topics", "records"),
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


def render_chart(sections: list[Section], path: str) -> str:
    """A PNG: leaders per broker (one bar group per cluster) and ISR shrinks per day."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_key = {s.key: s for s in sections}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 8))
    leaders = by_key.get("leaders")
    if leaders is not None and leaders.rows:
        labels = [f"{r[0][:8]}/{r[1]}" for r in leaders.rows[:60]]
        top.bar(range(len(labels)), [r[2] for r in leaders.rows[:60]], color="tab:blue")
        top.set_xticks(range(len(labels)), labels, rotation=90, fontsize=7)
    top.set_title("Partitions led per broker (cluster/broker)")
    top.set_ylabel("partitions")
    shrinks = by_key.get("isr_shrinks")
    if shrinks is not None and shrinks.rows:
        series: dict[str, dict[date, int]] = {}
        for cluster, broker, day, n in shrinks.rows:
            series.setdefault(f"{str(cluster)[:8]}/{broker}", {})[date.fromisoformat(str(day))] = n
        for name, points in sorted(series.items())[:12]:
            days = sorted(points)
            bottom.plot(days, [points[d] for d in days], marker="o", label=name)
        bottom.legend(fontsize=7)
        bottom.tick_params(axis="x", labelrotation=45, labelsize=7)
    bottom.set_title("ISR shrinks per day (cluster/broker)")
    bottom.set_ylabel("shrinks")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
