"""``stats`` (issue 59) against the records themselves: on every fixture, its counts by type, by
window and in all are what a count of ``log --all --json`` gives, and its churn is what the records
say (a PartitionChangeRecord counted under each field it carries)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from test_cli import run_cli

from metashell.image.stats import PARTITION_CHANGE_KINDS

FIXTURE_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def _json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("fixture", FIXTURE_DIRS, ids=lambda p: p.name)
@pytest.mark.parametrize("window", ["1m", "1h"])
def test_stats_counts_what_log_lists(fixture: Path, window: str) -> None:
    code, out, err = run_cli("-d", str(fixture), "-c", f"stats --json --window {window} --top 1000")
    assert code == 0, err
    (stats,) = _json_lines(out)
    code, out, err = run_cli("-d", str(fixture), "-c", "log --all --json")
    assert code == 0, err
    records = _json_lines(out)
    size = {"1m": 60_000, "1h": 3_600_000}[window]
    assert stats["records"] == len(records)
    assert stats["byType"] == dict(Counter(r["type"] for r in records))
    windows = Counter(r["timestamp"] - r["timestamp"] % size for r in records if r["timestamp"] >= 0)
    assert {w["start"]: w["records"] for w in stats["windows"]} == dict(windows)
    assert stats["batches"] == len({(r["batch"]["file"], r["batch"]["position"]) for r in records})
    if records:
        assert (stats["firstOffset"], stats["lastOffset"]) == (records[0]["offset"], records[-1]["offset"])
    # churn: every partition change is counted once under each kind of field it carries
    changes: Counter[str] = Counter()
    for r in records:
        if r["type"] == "PARTITION_CHANGE_RECORD":
            kinds = {PARTITION_CHANGE_KINDS[f] for f in r["data"] if f in PARTITION_CHANGE_KINDS} or {"other"}
            changes.update(kinds)
    said: Counter[str] = Counter()
    for p in stats["churn"]["partitions"]:
        said.update({k: v for k, v in p["kinds"].items() if k != "created"})
    assert said == changes
    created = sum(1 for r in records if r["type"] == "PARTITION_RECORD")
    assert sum(p["kinds"].get("created", 0) for p in stats["churn"]["partitions"]) == created


def test_stats_text_names_the_snapshots_and_the_churn() -> None:
    code, out, err = run_cli("-d", str(FIXTURES / "kafka-4.4"), "-c", "stats --top 2")
    assert code == 0, err
    assert out.startswith("log: offsets 0-")
    assert "records by type:" in out and "churn (top 2):" in out
    assert (
        "00000000000000000050-0000000001.checkpoint" in out
    )  # the bootstrap (0-0) one is not a snapshot of the log
    assert "00000000000000000000-0000000000.checkpoint" not in out
    assert "growth: " in out


def test_stats_refuses_bad_options() -> None:
    code, _out, err = run_cli("-d", str(FIXTURES / "demo"), "-c", "stats --top 0")
    assert code == 1 and "--top must be 1 or more" in err
    code, _out, err = run_cli("-d", str(FIXTURES / "demo"), "-c", "stats --window 7m")
    assert code != 0 and "7m" in err
