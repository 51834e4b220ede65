"""KRaft metadata as Spark DataFrames: one cluster's log on a laptop, a fleet's on a cluster.

    from metashell.spark import register, partition_history, session
    spark = session()                                   # local[*], set up for the data source
    register(spark)                                     # spark.read.format("kraft-metadata")
    records = spark.read.format("kraft-metadata").load(["/data/c1", "/data/c2"])
    parts = spark.read.format("kraft-metadata").option("table", "partitions").load("/data/c1")
    history = partition_history(records)                # every partition's state after every change

The package needs the ``spark`` extra (``pip install 'metashell[spark]'``): PySpark 4 and pyarrow.
Layers: :mod:`.inputs` plans on the driver (no PySpark), :mod:`.decode` and :mod:`.images` run in
executors (no PySpark either), :mod:`.datasource` and :mod:`.history` are the Spark side, and
:mod:`.job` / :mod:`.cli` are ``metashell-spark export`` and ``report``.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["partition_history", "register", "session", "state_at"]


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("kraft-metadata")`` (and ``readStream``) available in ``spark``,
    with every table registered so far (:mod:`.tables`; call it again after registering one)."""
    from .datasource import source_class

    spark.dataSource.register(source_class(spark.sparkContext.defaultParallelism))


def session(master: str | None = None, app_name: str = "metashell", **conf: Any) -> SparkSession:
    """A SparkSession ready for the data source: local mode by default (``local[*]``), bound to
    127.0.0.1, Python workers on this interpreter (they need metashell and pyarrow), the data
    source registered.  ``master``: ``local[2]``, ``spark://host:7077`` ...; under ``spark-submit``
    the master it was given is kept unless one is passed here."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    under_submit = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit started us: keep its master
    builder = SparkSession.builder.appName(app_name)
    if master is not None or not under_submit:
        builder = builder.master(master or "local[*]")
    defaults = {
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.shuffle.partitions": "8",
        "spark.python.worker.reuse": "true",
        "spark.ui.showConsoleProgress": "false",
    }
    if (master or "local").startswith("local") and not under_submit:  # the driver is the executor: room
        defaults["spark.driver.memory"] = "3g"
    for key, value in {**defaults, **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def partition_history(records: DataFrame) -> DataFrame:
    """See :func:`metashell.spark.history.partition_history`."""
    from .history import partition_history as compute

    return compute(records)


def state_at(history: DataFrame, offset: int) -> DataFrame:
    """See :func:`metashell.spark.history.state_at`."""
    from .history import state_at as compute

    return compute(history, offset)
