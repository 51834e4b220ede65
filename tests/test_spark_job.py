"""``metashell-spark export`` and ``report``: in local mode (the test session's Spark), through the
command line (its own session, as a user runs it), and on a real standalone master and worker
through ``spark-submit`` with the package shipped by ``--py-files``."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, REPO

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]


def _parquet_rows(spark: Any, path: Path) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in spark.read.parquet(str(path)).collect()]


def test_export_writes_every_table_partitioned_by_cluster(spark: Any, tmp_path: Path) -> None:
    from metashell.spark.inputs import find_datasets
    from metashell.spark.job import all_tables, export

    ALL_TABLES = all_tables()

    lines: list[str] = []
    out = tmp_path / "out"
    summary = export(
        spark, [str(FIXTURES / "demo"), str(FIXTURES / "kafka-4.4-broker")], str(out), progress=lines.append
    )
    assert lines[0].startswith("[plan] 2 metadata dir(s), 2 cluster id(s)")
    assert [line.split(":")[0] for line in lines[1:]] == [
        f"[{i}/{len(ALL_TABLES)}] {t}" for i, t in enumerate(ALL_TABLES, 1)
    ]
    assert set(summary.rows) == set(ALL_TABLES) and summary.errors == []
    ids = {
        f"cluster_key={ds.cluster_id}"
        for ds in find_datasets([str(FIXTURES / "demo"), str(FIXTURES / "kafka-4.4-broker")])
    }
    assert len(ids) == 2
    for table in ALL_TABLES:
        if summary.rows[table]:
            assert {p.name for p in (out / table).iterdir() if p.is_dir()} == ids, table
    records = spark.read.parquet(str(out / "records"))
    direct = spark.read.format("kraft-metadata").load(
        [str(FIXTURES / "demo"), str(FIXTURES / "kafka-4.4-broker")]
    )
    assert records.count() == direct.count() == summary.rows["records"]
    text = "\n".join(summary.lines())
    assert "0 error(s)" in text and "records" in text


def test_a_corrupt_segment_does_not_stop_the_job_and_errors_name_file_and_offset(
    spark: Any, tmp_path: Path
) -> None:
    from metashell.spark.job import export

    fleet = tmp_path / "fleet"
    shutil.copytree(FIXTURES / "demo", fleet / "a")
    shutil.copytree(FIXTURES / "kafka-3.9-broker", fleet / "b")
    seg = fleet / "a" / "__cluster_metadata-0" / "00000000000000000026.log"
    data = bytearray(seg.read_bytes())
    data[400] ^= 0x5A
    seg.write_bytes(bytes(data))
    summary = export(
        spark,
        [str(fleet)],
        str(tmp_path / "out"),
        tables=["records", "topics", "errors"],
        progress=lambda _line: None,
    )
    assert len(summary.errors) == 1
    err = summary.errors[0]
    assert err["file"] == str(seg) and isinstance(err["position"], int) and 0 <= err["position"] <= 400
    assert summary.rows["topics"] > 0 and summary.rows["records"] > 0
    assert any(f"{seg} at byte {err['position']}" in line for line in summary.lines())
    written = _parquet_rows(spark, tmp_path / "out" / "errors")
    assert [(e["file"], e["severity"]) for e in written] == [(str(seg), "error")]


def _cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metashell.spark.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=str(REPO),
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_the_command_line_exports_and_reports(tmp_path: Path) -> None:
    """A fleet of three clusters (every fixture took three minutes more, and the tables of every
    fixture are checked in process by test_spark.py): the demo and two brokers, whose ``orders``
    retention differs from the demo's (the drift section)."""
    fleet = tmp_path / "fleet"
    for name in ("demo", "kafka-3.9-broker", "kafka-4.4-broker"):
        shutil.copytree(FIXTURES / name, fleet / name)
    out = tmp_path / "out"
    done = _cli("export", str(fleet), "--out", str(out), "--master", "local[2]")
    assert done.returncode == 0, done.stderr[-3000:]
    # progress on stderr, and nothing else there (what the JVM says goes to its log): stdout carries
    # only the summary
    lines = done.stderr.splitlines()
    assert all(line.startswith("[") for line in lines), done.stderr[-3000:]
    dirs = 3
    assert lines[0].startswith("[spark] local[2]") and lines[1].startswith(f"[plan] {dirs} metadata dir(s)")
    from metashell.spark.job import all_tables

    n = len(all_tables())  # the registry's tables, errors last
    assert any(line.startswith(f"[{n}/{n}] errors: 0 rows") for line in lines)
    assert done.stdout.splitlines()[-1] == "0 error(s), 0 warning(s)"
    assert not any(line.startswith("[") for line in done.stdout.splitlines())
    chart = tmp_path / "fleet.png"
    rep = _cli("report", str(out), "--master", "local[2]", "--chart", str(chart))
    assert rep.returncode == 0, rep.stderr[-3000:]
    for title in (
        "Every directory read, with its verdict",
        "Offline and under-replicated partitions per cluster",
        "Partitions led per broker",
        "Config overrides that differ between clusters",
        "ISR shrinks per broker and day",
        "Record-type mix per cluster",
    ):
        assert f"== {title}" in rep.stdout
    assert chart.read_bytes().startswith(b"\x89PNG")
    js = _cli("report", str(out), "--master", "local[2]", "--json")
    doc = json.loads(js.stdout)  # all of stdout is the document: the progress line went to stderr
    health = next(s for s in doc["sections"] if s["key"] == "health")
    demo = next(r for r in health["rows"] if r["cluster"] == "ojQnLEycTOSMI2Fga2yOXA")
    assert demo["offline"] == demo["partitions"] == 12  # the demo's one broker is fenced
    drift = next(s for s in doc["sections"] if s["key"] == "config_drift")
    assert any(r["resource"] == "orders" and r["name"] == "retention.ms" for r in drift["rows"])


def test_command_line_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    tmp = {"TMPDIR": str(tmp_path / "tmp")}
    bad = _cli(
        "export", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o"), "--master", "local[1]", env=tmp
    )
    assert bad.returncode == 1
    assert (
        bad.stderr.strip().splitlines()[-1]
        == f"metashell-spark: {tmp_path / 'nowhere'}: no such file or directory"
    )
    copy = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", copy)
    seg = copy / "__cluster_metadata-0" / "00000000000000000026.log"
    data = bytearray(seg.read_bytes())
    data[400] ^= 0x5A
    seg.write_bytes(bytes(data))
    failed = _cli(
        "export",
        str(copy),
        "--out",
        str(tmp_path / "o2"),
        "--master",
        "local[1]",
        "--fail-fast",
        "--tables",
        "records",
        env=tmp,
    )
    assert failed.returncode == 1
    said = failed.stderr.strip().splitlines()
    last = said[-1]
    assert last.startswith("metashell-spark: ") and str(seg) in last and "Traceback" not in failed.stderr
    # the JVM's warnings and its Python workers' tracebacks (a cancelled task's BrokenPipeError) are
    # in Spark's log, which the line names and the failure keeps; stderr holds our lines only
    assert all(line.startswith(("[", "metashell-spark: ")) for line in said), failed.stderr
    kept = Path(re.search(r"\(Spark's own output: (\S+)\)$", last).group(1))
    assert kept.is_file() and kept.parent == tmp_path / "tmp"
    # a run that fails before Spark does anything, or succeeds, leaves no log behind
    assert sorted((tmp_path / "tmp").glob("metashell-spark-*.log")) == [kept]
    # Delta Lake is not part of PySpark: without its jars, one line says so before any work, no JVM stack
    delta = _cli(
        "export",
        str(FIXTURES / "demo"),
        "--out",
        str(tmp_path / "o3"),
        "--format",
        "delta",
        "--master",
        "local[1]",
        env=tmp,
    )
    assert delta.returncode == 1 and not (tmp_path / "o3").exists()
    assert (
        delta.stderr.strip().splitlines()[-1].startswith("metashell-spark: --format delta needs Delta Lake")
    )
    assert "\tat " not in delta.stderr and "Traceback" not in delta.stderr
    assert sorted((tmp_path / "tmp").glob("metashell-spark-*.log")) == [kept]  # a refusal keeps none


# ---------------------------------------------------------------------------------------------- standalone


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _package_zip(tmp_path: Path) -> Path:
    """What --py-files ships to the executors: the metashell package, schemas included."""
    target = tmp_path / "metashell.zip"
    with zipfile.ZipFile(target, "w") as z:
        for f in (REPO / "metashell").rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                z.write(f, f.relative_to(REPO))
    return target


@pytest.mark.slow
def test_export_through_spark_submit_on_a_standalone_master_and_worker(tmp_path: Path) -> None:
    from pyspark.find_spark_home import _find_spark_home

    home = Path(_find_spark_home())
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_HOME": str(home),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_WORKER_DIR": str(tmp_path / "work"),
        "SPARK_LOG_DIR": str(tmp_path / "logs"),
    }
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    cls = str(home / "bin" / "spark-class")
    procs = [
        subprocess.Popen(
            [
                cls,
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                str(ui),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / "master.log", "w"),  # noqa: SIM115
            start_new_session=True,
        )
    ]
    master = f"spark://127.0.0.1:{port}"
    try:
        procs.append(
            subprocess.Popen(
                [
                    cls,
                    "org.apache.spark.deploy.worker.Worker",
                    master,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "2",
                    "--memory",
                    "2g",
                    "--webui-port",
                    str(worker_ui),
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=open(tmp_path / "worker.log", "w"),  # noqa: SIM115
                start_new_session=True,
            )
        )

        def state() -> dict[str, Any] | None:
            """The master's /json/, or None while its web UI is still starting.

            Spark's Jetty listens before it has added every handler, in order: "/" (the
            master page, HTML) before "/json". A request in between is answered with HTML,
            which means "not up yet", not an error.
            """
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as r:
                    answer = json.load(r)
            except (OSError, ValueError):
                return None
            return answer if isinstance(answer, dict) else None

        def alive_workers() -> int:
            now = state() or {}
            return sum(1 for w in now.get("workers", ()) if w.get("state") == "ALIVE")

        deadline = time.monotonic() + 120
        while True:
            if alive_workers():
                break
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(0.5)
        out = tmp_path / "out"
        # the executors import metashell only from the shipped zip: the job must not rely on the checkout
        clean_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
        done = subprocess.run(
            [
                str(home / "bin" / "spark-submit"),
                "--master",
                master,
                "--py-files",
                str(_package_zip(tmp_path)),
                "--conf",
                "spark.executor.memory=1g",
                str(REPO / "metashell" / "spark" / "cli.py"),
                "export",
                str(FIXTURES / "demo"),
                str(FIXTURES / "kafka-4.4-broker"),
                "--out",
                str(out),
                "--tables",
                "records,partition_history,partitions,errors",
            ],
            check=False,
            capture_output=True,
            text=True,
            env=clean_env,
            timeout=600,
            cwd=str(tmp_path),
        )
        assert done.returncode == 0, done.stderr[-4000:]
        # spark-submit's PythonRunner merges the driver's stderr into its stdout
        said = done.stdout + done.stderr
        assert any(line.startswith(f"[spark] {master}") for line in said.splitlines()), said[-3000:]
        assert "[4/4] errors: 0 rows" in said
        final = state()
        assert final is not None
        apps = final["completedapps"] + final["activeapps"]
        assert any(a["name"] == "metashell-spark" for a in apps)
        parts = list((out / "partitions").rglob("*.parquet"))
        assert parts and {p.parent.name for p in parts} == {
            "cluster_key=ojQnLEycTOSMI2Fga2yOXA",
            "cluster_key=66MGVQC4TCmyktxIdakYiA",
        }
    finally:
        for p in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
