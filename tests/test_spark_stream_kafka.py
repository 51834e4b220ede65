"""``spark.readStream.format("kraft-metadata")`` against a REAL Kafka 4.4 controller quorum: topics
created while a query runs appear in a memory sink; then a checkpointed query is stopped, more
topics are created, and restarted from its checkpoint it delivers exactly the records after its
first run -- none twice, none missing.  (Spark's memory sink cannot restart from a checkpoint, so
the restarted query collects its micro-batches with ``foreachBatch`` into a list, in memory too.)"""

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


def _collecting(
    spark: Any, cluster: Any, checkpoint: Path, into: list[dict[str, Any]], batches: list[int] | None = None
) -> Any:
    """A checkpointed query whose micro-batches' rows go to ``into`` (and their ids to ``batches``)."""

    def keep(df: Any, batch_id: int) -> None:
        rows = [r.asDict() for r in df.select("offset", "record_type", "topic_name", "in_snapshot").collect()]
        if batches is not None:
            batches.append(batch_id)  # before the rows: whoever sees a row sees its batch
        into.extend(rows)

    return (
        _stream(spark, cluster)
        .writeStream.foreachBatch(keep)
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="1 second")
        .start()
    )


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
    first: list[dict[str, Any]] = []
    batches: list[int] = []
    query = _collecting(spark, cluster, checkpoint, first, batches)
    try:
        _until("the first run catching up", lambda: "while-running" in topics(first))
        # The rows reach ``first`` inside foreachBatch, before Spark commits the batch to the
        # checkpoint: stopping then would have the restart run that batch again. A batch's
        # progress is reported after its commit. (Not processAllAvailable: the quorum writes a
        # NoOpRecord every 500 ms, so the source never runs dry and it never returns.)
        kept = batches[-1]
        _until(
            "the first run's batches committed",
            lambda: (query.lastProgress or {}).get("batchId", -1) >= kept,
        )
    finally:
        query.stop()
    create("while-stopped")
    second: list[dict[str, Any]] = []
    query = _collecting(spark, cluster, checkpoint, second)
    try:
        _until("the topic created while the query was stopped", lambda: "while-stopped" in topics(second))
        create("after-restart")
        _until("the topic created after the restart", lambda: "after-restart" in topics(second))
    finally:
        query.stop()
    log1 = sorted(r["offset"] for r in first if not r["in_snapshot"])
    log2 = sorted(r["offset"] for r in second if not r["in_snapshot"])
    assert len(log1) == len(set(log1)) and len(log2) == len(set(log2))  # no duplicates in a run
    assert not set(log1) & set(log2)  # nor across the restart
    assert log2[0] == log1[-1] + 1  # nothing lost in between
    assert {"before-start", "while-running"} <= topics(first) and "while-stopped" not in topics(first)
    assert {"while-stopped", "after-restart"} <= topics(second) and "before-start" not in topics(second)
