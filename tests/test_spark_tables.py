"""The Spark table registry: every table declared once, every list derived from it.

These fail on omission: an image table whose row function leaves a column out (it would be
silently null) or names one the schema lacks, a table without the code its source needs, and a
table registered only here that ``spark.read.format("kraft-metadata")`` could not read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from conftest import FIXTURES

from metashell.image.image import MetadataImage
from metashell.image.loader import load_directory
from metashell.spark import schemas, tables
from metashell.spark.tables import Source, Table

_IMAGE_COLUMNS = 4  # cluster_id, node_id, source_dir, offset: added by the reader


def _images() -> list[MetadataImage]:
    return [load_directory(str(d)).image for d in sorted(FIXTURES.iterdir()) if d.is_dir()]


def test_every_table_has_the_code_its_source_needs() -> None:
    for t in tables.tables().values():
        if t.source is Source.FILE:
            assert t.sink is not None and t.schema is not None, t.name
        elif t.source is Source.IMAGE:
            assert (t.rows or t.batches or t.dataset_rows) is not None and t.schema is not None, t.name
            assert t.schema.names[:_IMAGE_COLUMNS] == ["cluster_id", "node_id", "source_dir", "offset"]
        else:
            assert t.derive is not None and t.derived_from in tables.tables(), t.name


def test_every_image_table_row_names_exactly_its_columns() -> None:
    """Keys are checked on every fixture until each table has had rows (a table that has none in
    any fixture fails: a fixture must show it)."""
    images = _images()
    for t in tables.tables().values():
        if t.source is not Source.IMAGE or t.rows is None:
            continue
        assert t.schema is not None
        wanted = t.schema.names[_IMAGE_COLUMNS:]
        seen = 0
        for image in images:
            for row in t.rows(image, True):
                assert list(row) == wanted, (t.name, list(row), wanted)
                seen += 1
        assert seen, f"no fixture has a row of {t.name}"


def test_export_order_and_the_readable_tables_come_from_the_registry() -> None:
    from metashell.spark.job import all_tables

    assert all_tables()[:2] == ["records", "partition_history"] and all_tables()[-1] == "errors"
    assert set(tables.names(Source.IMAGE)) >= {"topics", "partitions", "brokers", "configs"}
    with pytest.raises(ValueError, match="registered twice"):
        tables.register(tables.table("topics"))


def _leaders(image: MetadataImage, redact: bool) -> Iterator[dict[str, Any]]:
    """A table only this module knows: each partition leader's id."""
    for topic in image.topics.by_id.values():
        for pid, partition in topic.partitions.items():
            yield {"topic_name": topic.name, "partition_id": pid, "leader": partition.leader}


LEADERS = pa.schema(
    [
        *(schemas.TOPICS.field(i) for i in range(_IMAGE_COLUMNS)),
        pa.field("topic_name", pa.string()),
        pa.field("partition_id", pa.int32()),
        pa.field("leader", pa.int32()),
    ]
)


@pytest.mark.spark
@pytest.mark.timeout(600)
def test_a_table_registered_only_in_a_test_module_is_read_through_the_data_source(spark: Any) -> None:
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]  # the workers cannot import this module
    from metashell.spark import register

    tables.register(Table("test_leaders", Source.IMAGE, "a test's table", LEADERS, rows=_leaders))
    try:
        register(spark)  # the session reads the tables registered so far
        df = spark.read.format("kraft-metadata").option("table", "test_leaders").load(str(FIXTURES / "demo"))
        rows = {(r.topic_name, r.partition_id): r.leader for r in df.collect()}
        image = load_directory(str(FIXTURES / "demo")).image
        assert rows == {
            (t.name, pid): p.leader for t in image.topics.by_id.values() for pid, p in t.partitions.items()
        }
    finally:
        tables.unregister("test_leaders")
        register(spark)
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])  # type: ignore[no-untyped-call]


def test_every_record_type_has_key_columns_or_a_reason_not_to() -> None:
    """A record type with no key function got only a topic or broker id by guesswork: Kafka 4's
    UnregisterControllerRecord had no controller_id, ClearElrRecord no topic_name."""
    from metashell.protocol.record_type import SCHEMA_NAMES
    from metashell.spark.key_columns import KEYLESS, key_columns_of

    for name in SCHEMA_NAMES.values():
        has = key_columns_of(name) is not None
        assert has != (name in KEYLESS), f"{name}: key columns in key_columns.py, or a reason in KEYLESS"
    unregister = key_columns_of("UnregisterControllerRecord")
    clear = key_columns_of("ClearElrRecord")
    assert unregister is not None and unregister({"ControllerId": 3})[4] == 3
    assert clear is not None and clear({"TopicName": "orders"})[1] == "orders"
