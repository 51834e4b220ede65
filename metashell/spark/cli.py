"""``metashell-spark``: export metadata logs to tables, and report on an export.

    metashell-spark export DIR... --out OUT [--tables records,partitions] [--format parquet|delta]
                           [--master local[*]|spark://HOST:7077] [--as-of OFFSET|TIME] [--fail-fast]
    metashell-spark report OUT [--json] [--chart leaders.png] [--master ...]

The same file runs under ``spark-submit`` (``spark-submit --py-files metashell.zip
.../metashell/spark/cli.py export ...``): without ``--master`` the session takes the master
spark-submit gave it.  Problems are one line on stderr and exit status 1; a file that cannot be read
to the end is not a problem for the job -- it is a row of ``errors`` and a warning in the summary
(``--fail-fast`` makes it one).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from metashell.errors import MetashellError
from metashell.safe_text import visible, visible_output
from metashell.spark.tables import names as table_names

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="metashell-spark", description="KRaft metadata logs as Spark tables.")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser(
        "export", help="write every table of the given metadata dirs, partitioned by cluster id"
    )
    e.add_argument(
        "paths",
        nargs="+",
        metavar="DIR",
        help="metadata dirs, .log/.checkpoint files, globs, or a folder holding many clusters' dirs",
    )
    e.add_argument("--out", required=True, help="output folder (one sub-folder per table)")
    e.add_argument("--tables", help=f"comma-separated subset of: {', '.join(table_names())}")
    e.add_argument("--format", default="parquet", choices=("parquet", "delta"))
    e.add_argument("--as-of", help="image tables as of this log offset or ISO-8601 time (default: the end)")
    e.add_argument("--no-redact", action="store_true", help="keep secrets (sensitive configs, SCRAM keys)")
    e.add_argument("--fail-fast", action="store_true", help="stop at the first file that cannot be read")
    e.add_argument("--split-bytes", type=int, default=64 << 20, help="read larger files as several tasks")
    e.add_argument("--master", help="local[*] (default), local[N] or spark://HOST:PORT")
    e.add_argument("--spark-log", metavar="FILE", help=SPARK_LOG_HELP)
    r = sub.add_parser("report", help="fleet questions answered from an export")
    r.add_argument("out", metavar="OUT", help="the folder export wrote")
    r.add_argument("--format", default="parquet", choices=("parquet", "delta"))
    r.add_argument("--json", action="store_true", help="one JSON document instead of text tables")
    r.add_argument("--chart", metavar="PNG", help="also draw leader skew and ISR shrinks to this PNG")
    r.add_argument("--master", help="local[*] (default), local[N] or spark://HOST:PORT")
    r.add_argument("--spark-log", metavar="FILE", help=SPARK_LOG_HELP)
    return p


SPARK_LOG_HELP = (
    "keep what the JVM and its Python workers print here (default: a temporary file, kept on failure)"
)


@contextlib.contextmanager
def _jvm_output_to(log: Path) -> Iterator[None]:
    """Start the JVM with its stderr and stdout on ``log``, not on the terminal.

    The JVM inherits file descriptors 1 and 2 when PySpark launches it, and everything Spark prints
    goes there: its own warnings, and -- copied from the Python workers it starts -- their tracebacks,
    such as the ``BrokenPipeError`` a worker prints when ``--fail-fast`` cancels the task it was
    writing for.  Problems are one line of ours on stderr, so the JVM gets the log instead; the
    descriptors are ours again as soon as it has started.  Under ``spark-submit`` the JVM started
    first and this changes nothing."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        with open(log, "ab") as out:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
        yield
    finally:
        for fd, copy in zip((1, 2), saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)


DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"


def _session(master: str | None, fmt: str) -> Any:
    from metashell.spark import session

    conf: dict[str, str] = {}
    if fmt == "delta":
        _require_delta()
        conf = {
            "spark.sql.extensions": DELTA_EXTENSION,
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        }
    return session(master, "metashell-spark", **conf)


def _require_delta() -> None:
    """Delta Lake is not part of PySpark: its jars come with ``spark-submit --packages`` (or
    ``spark.jars.packages``).  Without them the session would start with a Java stack trace about
    the extension and the job fail at its first write; say so in one line before anything runs."""
    from py4j.protocol import Py4JJavaError
    from pyspark import SparkContext

    SparkContext._ensure_initialized()  # the JVM, with what spark-submit put on its class path
    jvm = SparkContext._jvm
    assert jvm is not None
    try:
        jvm.java.lang.Class.forName(
            DELTA_EXTENSION, False, jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader()
        )
    except Py4JJavaError:
        import pyspark

        raise MetashellError(
            f"--format delta needs Delta Lake on the session, and this one has none: run under spark-submit "
            f"--packages io.delta:delta-spark_2.13:VERSION, with the Delta release made for Spark "
            f"{pyspark.__version__.rsplit('.', 1)[0]} (or use --format parquet)"
        ) from None


def _one_line(e: BaseException) -> str:
    """The line that says what went wrong: for an error raised in a Python worker, the last
    ``SomeError: message`` line of its traceback (Spark wraps it in pages of JVM stack)."""
    text = str(e)
    found = re.findall(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", text, re.MULTILINE)
    if found:
        name, message = found[-1]
        ours = name in ("MetashellError", "DecodeError", "CorruptBatchError")
        return " ".join((message if ours else f"{name}: {message}").split())[:1000]
    return f"{type(e).__name__}: {' '.join(text.split())[:500]}"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("metashell-spark: PySpark is not installed: pip install 'metashell[spark]'", file=sys.stderr)
        return 1
    spark = None
    kept = args.spark_log is not None
    log = Path(args.spark_log) if kept else _temporary_log()
    try:
        t0 = time.perf_counter()
        with _jvm_output_to(log):
            spark = _session(args.master, args.format)
        spark.sparkContext.setLogLevel("OFF")  # failures are reported here, in one line
        # progress goes to stderr: stdout carries only results (report --json must be JSON)
        print(
            f"[spark] {spark.sparkContext.master}, Spark {spark.version} ({time.perf_counter() - t0:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
        if args.command == "export":
            from metashell.spark.job import export

            tables = [t.strip() for t in args.tables.split(",")] if args.tables else table_names()
            summary = export(
                spark,
                args.paths,
                args.out,
                tables=tables,
                fmt=args.format,
                redact=not args.no_redact,
                fail_fast=args.fail_fast,
                split_bytes=args.split_bytes,
                as_of=args.as_of,
                progress=lambda line: print(visible_output(line), file=sys.stderr, flush=True),
            )
            print(visible_output("\n".join(summary.lines())))
            return 0
        from metashell.spark.report import render_chart, render_json, render_text, report

        sections = report(spark, args.out, args.format)
        # config values and names come from metadata: no raw escape sequence reaches the terminal
        print(visible_output(render_json(sections) if args.json else render_text(sections)))
        if args.chart:
            render_chart(sections, args.chart)
            print(f"chart: {args.chart}", file=sys.stderr)
        return 0
    except (MetashellError, ValueError, FileNotFoundError) as e:
        print(visible(f"metashell-spark: {' '.join(str(e).split())}"), file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - a Spark failure (--fail-fast): one line, not a JVM stack
        kept = True  # what Spark said about it stays readable
        print(visible(f"metashell-spark: {_one_line(e)} (Spark's own output: {log})"), file=sys.stderr)
        return 1
    finally:
        if spark is not None:
            spark.stop()
        if not kept:
            log.unlink(missing_ok=True)


def _temporary_log() -> Path:
    fd, name = tempfile.mkstemp(prefix="metashell-spark-", suffix=".log")
    os.close(fd)
    return Path(name)


if __name__ == "__main__":
    sys.exit(main())
