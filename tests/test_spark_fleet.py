"""A fleet export a platform team can trust (issue 54): every directory of a mixed folder exported and
reported, the shell's own errors and warnings as ``errors`` rows, and four readers on every table.

The folder (``fleet_dirs.make_fleet``, from the real-Kafka fixtures) mixes directories with and
without ``meta.properties`` and snapshots, two unrelated clusters sharing a docker-default cluster
id, a zero-byte directory and damaged copies.  One export (the test session's local Spark) serves
every test here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fleet_dirs import DOCKER_DEFAULT_ID, PART, FleetDir, make_fleet
from test_cli import run_cli

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]


class Fleet:
    def __init__(self, root: Path, dirs: list[FleetDir], out: Path, summary: Any) -> None:
        self.root, self.dirs, self.out, self.summary = root, dirs, out, summary

    def source_dir(self, d: FleetDir) -> str:
        return str(self.root / d.name / PART)


@pytest.fixture(scope="module")
def fleet(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    from metashell.spark.job import export

    root = tmp_path_factory.mktemp("fleet") / "fleet"
    dirs = make_fleet(root)
    out = tmp_path_factory.mktemp("export") / "out"
    summary = export(spark, [str(root)], str(out), progress=lambda _line: None)
    return Fleet(root, dirs, out, summary)


def _rows(spark: Any, fleet: Fleet, table: str) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in spark.read.parquet(str(fleet.out / table)).collect()]


def test_every_directory_is_exported(spark: Any, fleet: Fleet) -> None:
    """One ``nodes`` row per directory (none is absent, whatever it lacks or holds), and the
    partition column is the cluster id or ``unknown``, never null."""
    assert fleet.summary.datasets == len(fleet.dirs)
    nodes = _rows(spark, fleet, "nodes")
    assert sorted(r["source_dir"] for r in nodes) == sorted(fleet.source_dir(d) for d in fleet.dirs)
    for d in fleet.dirs:
        (row,) = [r for r in nodes if r["source_dir"] == fleet.source_dir(d)]
        assert row["cluster_id"] == d.cluster_id, d
        assert row["cluster_key"] == (d.cluster_id or "unknown")
    keys = {p.name for p in (fleet.out / "records").iterdir() if p.is_dir()}
    assert "cluster_key=unknown" in keys and not any("__HIVE_DEFAULT_PARTITION__" in k for k in keys)


_SAID = re.compile(r"^(error|warning): (/[^:]+?)(?:: byte offset (\d+))?: (.*)$")


def _what_the_shell_says(path: Path) -> list[tuple[str, str, int | None]]:
    """(severity, file, byte offset) of each error and warning line ``metashell -d PATH health``
    prints on stderr."""
    _status, _out, err = run_cli("-d", str(path), "health")
    found = []
    for line in err.splitlines():
        m = _SAID.match(line)
        if m:
            found.append((m.group(1), m.group(2), int(m.group(3)) if m.group(3) else None))
    return found


def test_the_errors_rows_say_what_the_shell_says(spark: Any, fleet: Fleet) -> None:
    """For every directory, each error and warning the shell prints about it is a row of ``errors``
    for that directory, at the same file (and byte offset, when the shell gives one); a directory
    the shell refuses has an error row there; a clean one has none."""
    rows = _rows(spark, fleet, "errors")
    for d in fleet.dirs:
        mine = [r for r in rows if r["source_dir"] == fleet.source_dir(d)]
        said = _what_the_shell_says(fleet.root / d.name)
        for severity, file, position in said:
            match = [r for r in mine if r["file"] == file and (position is None or r["position"] == position)]
            assert match, (d.name, severity, file, position, mine)
            if severity == "error":
                assert any(r["severity"] == "error" for r in match), (d.name, match)
        if d.damaged:
            assert any(r["severity"] == "error" for r in mine), (d.name, mine)
        if not said:
            assert not [r for r in mine if r["severity"] == "error"], (d.name, mine)
    overflow = [r for r in rows if r["kind"] == "file-name"]
    assert len(overflow) == 1 and overflow[0]["file"].endswith("99999999999999999999-0000000001.checkpoint")
    assert fleet.summary.warnings > 0 and fleet.summary.errors


def test_the_report_lists_every_directory_with_its_verdict(spark: Any, fleet: Fleet) -> None:
    from metashell.spark.report import report

    sections = {s.key: s for s in report(spark, str(fleet.out))}
    listed = [
        dict(zip(sections["directories"].columns, r, strict=True)) for r in sections["directories"].rows
    ]
    by_dir = {r["source_dir"]: r for r in listed}
    assert sorted(by_dir) == sorted(fleet.source_dir(d) for d in fleet.dirs)
    for d in fleet.dirs:
        row = by_dir[fleet.source_dir(d)]
        assert row["cluster_id"] == (d.cluster_id or "unknown")
        if d.damaged:
            assert row["verdict"] == "DAMAGED" and row["errors"] > 0, row
        elif d.name == "zero-bytes":
            assert row["verdict"] == "NO DATA", row
        elif d.name != "overflow-name":
            assert row["verdict"] in ("HEALTHY", "DEGRADED", "CRITICAL"), row
    clusters = [r[0] for r in sections["health"].rows]
    shared = [c for c in clusters if c.startswith(f"{DOCKER_DEFAULT_ID} @ ")]
    assert len(shared) == 2  # two unrelated clusters with one default id: two, not one merged
    assert len(clusters) == len(fleet.dirs)  # no directory here shares a real cluster's id
    assert all(r["reported"] for r in listed)


def test_four_readers_open_every_table(spark: Any, fleet: Fleet) -> None:
    """Spark, pyarrow, DuckDB and pandas read every exported table, with the same row counts;
    pandas with nullable types keeps ``node_id`` an integer, and timestamps are UTC."""
    import duckdb
    import pandas as pd
    import pyarrow.dataset as pads

    for table in sorted(p.name for p in fleet.out.iterdir() if p.is_dir()):
        path = fleet.out / table
        if not list(path.rglob("*.parquet")):
            continue  # an empty table has no file (Spark writes none)
        n = spark.read.parquet(str(path)).count()
        rows = pads.dataset(str(path), partitioning="hive").count_rows()  # type: ignore[no-untyped-call]
        assert rows == n, table
        got = duckdb.sql(f"SELECT count(*) FROM read_parquet('{path}/*/*.parquet', hive_partitioning = true)")
        assert got.fetchone() == (n,), table
        frame = pd.read_parquet(path, dtype_backend="numpy_nullable")
        assert len(frame) == n, table
        assert str(frame["node_id"].dtype) == "Int32", (table, frame["node_id"].dtype)
        if "timestamp" in frame:
            assert str(getattr(frame["timestamp"].dtype, "tz", None)) == "UTC", (
                table,
                frame["timestamp"].dtype,
            )


def test_the_chart_has_one_row_per_cluster(spark: Any, fleet: Fleet, tmp_path: Path) -> None:
    """Small multiples: brokers of different clusters never share a bar chart."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from metashell.spark.report import CHART_CLUSTERS, render_chart, report

    sections = report(spark, str(fleet.out))
    made: list[Any] = []
    real = plt.subplots

    def spy(*args: Any, **kwargs: Any) -> Any:
        fig, axes = real(*args, **kwargs)
        made.append(axes)
        return fig, axes

    plt.subplots = spy
    try:
        path = render_chart(sections, str(tmp_path / "fleet.png"))
    finally:
        plt.subplots = real
    assert Path(path).read_bytes().startswith(b"\x89PNG")
    leaders = {r[0] for r in next(s for s in sections if s.key == "leaders").rows}
    shrinks = {r[0] for r in next(s for s in sections if s.key == "isr_shrinks").rows}
    assert made[0].shape == (min(len(leaders | shrinks), CHART_CLUSTERS), 2)


def test_a_fleet_without_any_snapshot_exports(spark: Any, fleet: Fleet, tmp_path: Path) -> None:
    """No snapshot file anywhere (a young fleet): the ``snapshots`` table has no input partition,
    for which PySpark hands the reader its own empty stand-in (this was an AssertionError)."""
    from metashell.spark.job import export

    young = [str(fleet.root / "zero-bytes"), str(fleet.root / "no-snapshot")]
    summary = export(
        spark, young, str(tmp_path / "out"), tables=["snapshots", "errors"], progress=lambda _l: None
    )
    assert summary.rows["errors"] >= 1  # the zero-byte directory's no-data row
    assert summary.datasets == 2
