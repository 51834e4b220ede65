"""The read bounds of docs/safety.md in Spark's run: the executors' Python workers read hostile logs
under an address-space limit (``RLIMIT_AS``, which PySpark itself sets from
``spark.executor.pyspark.memory``) below what the unbounded path would take.

The limit is absolute, and a worker's address space is mostly what pyarrow and the JVM-side
daemon reserve (about 1.4 GB here, 130 MB of it resident), so it is measured first: a session with no
limit reads a good fixture in a task and reports the worker's ``VmSize``; a second session in the
same driver allows that plus ``HEADROOM_MIB``.  A task that asks for more than the headroom fails
(checked, so that a limit Spark stopped applying cannot pass as a bound that held), and the hostile
dirs must still load: each bomb an ``errors`` row, the rest of its log rows.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO, address_limited_env, native_core
from test_live_fake import topic_record
from test_log_hostile import _tiny_record, bomb, frame

from metashell.log.compression import LIMITS
from metashell.log.encoding import build_batch

pytestmark = [pytest.mark.spark, pytest.mark.timeout(900)]

#: What the worker may grow by while it reads: a bomb decoded (6 million records, ~900 MB; or 1 GiB
#: inflated) would need several times this.
HEADROOM_MIB = 200

_CHILD = """
import json, sys
from metashell.spark import session

fixture, hostile, headroom = sys.argv[1], sys.argv[2], int(sys.argv[3])

def worker_size(_):
    from metashell.spark.decode import read_file_table
    from metashell.spark.inputs import find_datasets, plan_units
    import resource
    rows = sum(b.num_rows for u in plan_units(find_datasets([fixture])) for b in read_file_table("records", u))
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    try:
        bytearray((headroom + 64) << 20)
        over = "allowed"
    except MemoryError:
        over = "refused"
    yield int(status["VmSize"].split()[0]) // 1024, rows, resource.getrlimit(resource.RLIMIT_AS)[0], over

probe = session("local[1]", "bounds-probe")
probe.sparkContext.setLogLevel("OFF")
(base, rows, _, _), = probe.sparkContext.parallelize([0], 1).mapPartitions(worker_size).collect()
probe.stop()

limited = session("local[1]", "bounds", **{"spark.executor.pyspark.memory": f"{base + headroom}m"})
limited.sparkContext.setLogLevel("OFF")
(_, _, limit, over), = limited.sparkContext.parallelize([0], 1).mapPartitions(worker_size).collect()
reader = limited.read.format("kraft-metadata")
records = reader.option("table", "records").load(hostile).groupBy("source_dir").count().collect()
errors = reader.option("table", "errors").load(hostile).select("source_dir", "severity", "message").collect()
print(json.dumps({
    "base_mib": base, "probe_rows": rows, "limit": limit, "over_headroom": over,
    "records": {r["source_dir"]: r["count"] for r in records},
    "errors": [[e["source_dir"], e["severity"], e["message"]] for e in errors],
}))
limited.stop()
"""


def _hostile_fleet(root: Path) -> dict[str, Path]:
    """Two clusters' dirs: one whose log ends in a record-count bomb (6 million 7-byte records in
    one gzip batch, under every byte cap), one whose log ends in a gzip batch inflating to 1 GiB.
    Each log starts with a good batch that makes topic ``t``."""
    good = build_batch(0, 1, [topic_record("t")], 1_700_000_000_000)
    n = 6_000_000
    gz = zlib.compressobj(1, zlib.DEFLATED, 31)
    count_bomb = frame(
        gz.compress(b"".join(_tiny_record(i) for i in range(n))) + gz.flush(),
        attributes=1,
        count=n,
        base_offset=1,
    )
    dirs = {
        "count": (
            count_bomb,
            f"{n} records, more than the {LIMITS.max_records} metashell reads in one batch",
        ),
        "inflate": (frame(bomb("gzip"), attributes=1, base_offset=1), "records inflate beyond"),
    }
    made = {}
    for name, (tail, _) in dirs.items():
        log_dir = root / name / "__cluster_metadata-0"
        log_dir.mkdir(parents=True)
        (log_dir / "00000000000000000000.log").write_bytes(good + tail)
        made[name] = log_dir
    return made


@pytest.mark.parametrize("engine", ["python", "native"])
def test_hostile_logs_read_by_spark_workers_stay_within_a_limit(tmp_path: Path, engine: str) -> None:
    if engine == "native":
        native_core()
    dirs = _hostile_fleet(tmp_path / "fleet")
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(FIXTURES / "demo"), str(tmp_path / "fleet"), str(HEADROOM_MIB)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO,
        env={**address_limited_env(), "METASHELL_ENGINE": engine},  # the workers inherit it
    )
    assert child.returncode == 0, child.stderr[-3000:]
    said = json.loads(child.stdout.strip().splitlines()[-1])
    # the limit is live: the worker runs under it, and cannot take more than the headroom
    assert said["probe_rows"] > 0 and said["limit"] == (said["base_mib"] + HEADROOM_MIB) << 20, said
    assert said["over_headroom"] == "refused", said
    # each bomb is one error row naming its file; the good batch before it is a row
    assert said["records"] == {str(d): 1 for d in dirs.values()}, said
    errors = {path: (severity, message) for path, severity, message in said["errors"]}
    for name, log_dir in dirs.items():
        severity, message = errors[str(log_dir)]
        assert severity in ("error", "warning") and "MemoryError" not in message, message
        assert (
            f"{LIMITS.max_records} metashell reads in one batch" in message
            if name == "count"
            else "inflate beyond" in message
        ), message


@pytest.mark.parametrize("failure", [MemoryError(), SystemError("error return without exception set")])
def test_a_worker_out_of_memory_stops_the_job_with_one_located_line(
    monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    """Running out of memory is not a property of the file, so it is never an ``errors`` row (the
    export would pass it off as damage); the task fails with the file, the byte and what to raise,
    which ``metashell-spark`` prints as its one line.  Both forms: CPython's MemoryError and a C
    library's failed allocation."""
    from metashell.errors import MetashellError
    from metashell.spark import decode
    from metashell.spark.cli import _one_line
    from metashell.spark.inputs import find_datasets, plan_units

    def starved(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        raise failure
        yield  # a generator, as the reader is

    monkeypatch.setattr(decode, "iter_file_batches", starved)
    unit = next(u for u in plan_units(find_datasets([str(FIXTURES / "demo")])) if u.kind == "log")
    with pytest.raises(MetashellError) as raised:
        list(decode.read_file_table("records", unit))
    line = str(raised.value)
    assert line.startswith(f"{unit.file}: out of memory in a Spark worker reading the batch at byte 0 ")
    assert "spark.executor.pyspark.memory" in line
    # as the driver sees it: the worker's traceback inside a Spark exception's text
    wrapped = Exception(
        f"Job aborted.\nTraceback (most recent call last):\n  ...\n{type(raised.value).__module__}.MetashellError: {line}\n\tat org.apache..."
    )
    assert _one_line(wrapped) == line
