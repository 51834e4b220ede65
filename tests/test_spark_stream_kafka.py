"""``spark.readStream.format("kraft-metadata")`` against a REAL Kafka 4.4 controller quorum: topics
created while a query runs appear in a memory sink; then a checkpointed query is stopped, more
topics are created, and restarted from its checkpoint it delivers exactly the records after its
first run -- none twice, none missing, counting a batch Spark runs again under its own id once (the
exactly-once of a foreachBatch sink).  (Spark's memory sink cannot restart from a checkpoint, so the
checkpointed queries collect their micro-batches with ``foreachBatch``, in memory too.)"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.kafka, pytest.mark.spark, pytest.mark.timeout(600)]

VERSION = "4.4.0"


def _stream(spark: Any, cluster: Any) -> Any:
    return (
        spark.readStream.format("kraft-metadata")
        .option("bootstrap.controllers", cluster.controller_bootstrap)
        .load()
    )


def _collecting(spark: Any, cluster: Any, checkpoint: Path, into: dict[int, list[dict[str, Any]]]) -> Any:
    """A checkpointed query whose micro-batches' rows go to ``into`` by batch id. A foreachBatch
    sink is exactly-once by its batch ids: Spark hands a batch over before it commits it to the
    checkpoint, so a query stopped in between runs that batch again, with the same id and the same
    records, when it restarts (what an idempotent sink writes over)."""

    def keep(df: Any, batch_id: int) -> None:
        into[batch_id] = [
            r.asDict() for r in df.select("offset", "record_type", "topic_name", "in_snapshot").collect()
        ]

    return (
        _stream(spark, cluster)
        .writeStream.foreachBatch(keep)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="1 second")
        .start()
    )


def _rows(batches: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [r for b in sorted(dict(batches)) for r in batches[b]]


def _log_offsets(batches: dict[int, list[dict[str, Any]]]) -> list[int]:
    return sorted(r["offset"] for r in _rows(batches) if not r["in_snapshot"])


def _until(what: str, check: Any, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(1)


def test_topics_stream_into_a_memory_sink_and_a_restart_neither_repeats_nor_loses(
    spark: Any, kafka_cluster: Any, tmp_path: Path
) -> None:
    cluster = kafka_cluster(VERSION, "combined")
    bs = cluster.bootstrap_servers

    def create(topic: str) -> None:
        cluster.admin(
            "kafka-topics",
            "--bootstrap-server",
            bs,
            "--create",
            "--topic",
            topic,
            "--partitions",
            "2",
            "--replication-factor",
            "1",
            check=True,
        )

    def topics(rows: list[dict[str, Any]]) -> set[str]:
        return {r["topic_name"] for r in list(rows) if r["record_type"] == "TopicRecord"}

    def in_memory() -> set[str]:
        return {
            r["topic_name"]
            for r in spark.sql(
                "SELECT topic_name FROM live_records WHERE record_type = 'TopicRecord'"
            ).collect()
        }

    create("before-start")
    memory = (
        _stream(spark, cluster)
        .writeStream.format("memory")
        .queryName("live_records")
        .trigger(processingTime="1 second")
        .start()
    )
    try:
        _until("the topic created before the query", lambda: "before-start" in in_memory())
        create("while-running")
        _until("the topic created while the query runs", lambda: "while-running" in in_memory())
        offsets = [
            r["offset"] for r in spark.sql("SELECT offset FROM live_records WHERE NOT in_snapshot").collect()
        ]
        assert len(offsets) == len(set(offsets))
    finally:
        memory.stop()

    checkpoint = tmp_path / "checkpoint"
    first: dict[int, list[dict[str, Any]]] = {}
    query = _collecting(spark, cluster, checkpoint, first)
    try:
        _until("the first run catching up", lambda: "while-running" in topics(_rows(first)))
        # that batch committed before the stop (its progress is reported after the commit), so only
        # a later one (the quorum's NoOpRecords, every 500 ms) can be run again
        kept = max(b for b in dict(first) if "while-running" in topics(first[b]))
        _until("its batch committed", lambda: (query.lastProgress or {}).get("batchId", -1) >= kept)
    finally:
        query.stop()
    create("while-stopped")
    second: dict[int, list[dict[str, Any]]] = {}
    query = _collecting(spark, cluster, checkpoint, second)
    try:
        _until(
            "the topic created while the query was stopped", lambda: "while-stopped" in topics(_rows(second))
        )
        create("after-restart")
        _until("the topic created after the restart", lambda: "after-restart" in topics(_rows(second)))
    finally:
        query.stop()
    again = first.keys() & second.keys()  # handed over, stopped before its commit, run again
    assert len(again) <= 1 and all(_log_offsets({b: first[b]}) == _log_offsets({b: second[b]}) for b in again)
    log1 = _log_offsets(first)
    log2 = _log_offsets({b: rows for b, rows in second.items() if b not in again})
    assert len(log1) == len(set(log1)) and len(log2) == len(set(log2))  # none twice in a run
    assert not set(log1) & set(log2)  # nor across the restart
    assert log2[0] == log1[-1] + 1  # nothing lost in between
    assert {"before-start", "while-running"} <= topics(_rows(first)) and "while-stopped" not in topics(
        _rows(first)
    )
    new = _rows({b: rows for b, rows in second.items() if b not in again})
    assert {"while-stopped", "after-restart"} <= topics(new) and "before-start" not in topics(_rows(second))
