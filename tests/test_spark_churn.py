"""The Spark ``churn`` table (issue 59) against ``stats --json --window 1h``: read by real Spark
over every fixture at once, each dataset's rows are the numbers ``stats`` prints for it (records
by type, by hour, and every topic's, partition's and broker's changes by kind)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pytest
from conftest import FIXTURES
from test_cli import run_cli

pytestmark = pytest.mark.spark


def _stats(path: str) -> dict[str, Any]:
    code, out, err = run_cli("-d", path, "-c", "stats --json --window 1h --top 1000000")
    assert code == 0, err
    return json.loads(out)


def _as_stats(rows: list[Any]) -> dict[str, Any]:
    """The table's rows of one dataset, in the shape of the parts of ``stats --json`` they carry."""
    out: dict[str, Any] = {"byType": {}, "windows": defaultdict(dict), "topics": defaultdict(dict)}
    out |= {"partitions": defaultdict(dict), "brokers": defaultdict(dict)}
    for r in rows:
        section, kind, n = r["section"], r["kind"], r["count"]
        if section == "type":
            out["byType"][kind] = n
        elif section == "window":
            out["windows"][int(r["window_start"].timestamp() * 1000)][kind] = n
        elif section == "topic":
            out["topics"][r["topic"]][kind] = n
        elif section == "partition":
            out["partitions"][(r["topic"], r["partition"])][kind] = n
        else:
            assert section == "broker", section
            out["brokers"][r["broker"]][kind] = n
    return {k: dict(v) for k, v in out.items()}


def test_the_churn_table_is_what_stats_says_of_each_dataset(spark: Any) -> None:
    rows = spark.read.format("kraft-metadata").option("table", "churn").load(str(FIXTURES)).collect()
    by_dataset: dict[str, list[Any]] = defaultdict(list)
    for r in rows:
        by_dataset[r["source_dir"]].append(r)
    fixtures = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert {d.split("/fixtures/")[1].split("/")[0] for d in by_dataset} == fixtures  # none dropped
    for source_dir, dataset_rows in sorted(by_dataset.items()):
        stats = _stats(source_dir)
        churn = stats["churn"]
        expected = {
            "byType": stats["byType"],
            "windows": {w["start"]: w["byType"] for w in stats["windows"]},
            "topics": {t["topic"]: t["kinds"] for t in churn["topics"]},
            "partitions": {(p["topic"], p["partition"]): p["kinds"] for p in churn["partitions"]},
            "brokers": {b["broker"]: b["kinds"] for b in churn["brokers"]},
        }
        assert _as_stats(dataset_rows) == expected, source_dir
