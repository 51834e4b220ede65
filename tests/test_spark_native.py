"""The Spark ``records`` table made by the native core against the Python engine's, which is the
reference: the same Arrow table, row for row, column for column (types and nulls included), with
and without redaction, on every fixture and corpus directory and on damaged files; and the same
``errors`` rows beside it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from conftest import CORPUS, FIXTURES, corpus_paths, native_core

from metashell.engine import current
from metashell.log.checksum import crc32c
from metashell.log.encoding import build_batch
from metashell.spark import native_records
from metashell.spark.decode import read_file_table
from metashell.spark.inputs import find_datasets, plan_units
from metashell.spark.key_columns import KEY_COLUMNS, KEY_SOURCES, OTHER_KEYS, PYTHON_ONLY_SOURCES
from metashell.spark.schemas import RECORDS


def records_table(
    paths: list[Path], engine: str, monkeypatch: pytest.MonkeyPatch, redact: bool = True
) -> pa.Table:
    """Every ``records`` row (and ``errors`` row) of the datasets under ``paths``, read by ``engine``.

    The process's engine is chosen once (``engine.current`` is cached), so setting
    ``METASHELL_ENGINE`` alone would read both tables with whichever engine came first: the
    ``records`` sink is handed the engine asked for, made afresh from the variable."""
    monkeypatch.setenv("METASHELL_ENGINE", engine)
    chosen = current.__wrapped__()
    assert chosen.name == engine, chosen.why
    monkeypatch.setattr(native_records, "current_engine", lambda: chosen)
    batches = [
        batch
        for unit in plan_units(find_datasets([str(p) for p in paths]))
        for batch in read_file_table("records", unit, redact=redact)
    ]
    rows = pa.Table.from_batches([b for b in batches if b.schema == RECORDS], schema=RECORDS)
    problems = [b.to_pylist() for b in batches if b.schema != RECORDS]
    return rows, problems


def assert_same_tables(
    paths: list[Path], monkeypatch: pytest.MonkeyPatch, redact: bool = True
) -> tuple[int, list[Any]]:
    """The two engines' tables are equal: (rows, the error rows)."""
    want, want_problems = records_table(paths, "python", monkeypatch, redact)
    got, got_problems = records_table(paths, "native", monkeypatch, redact)
    assert got.schema == want.schema
    assert got.num_rows == want.num_rows
    for name in RECORDS.names:  # column by column, so that a failure names the column
        a, b = got.column(name), want.column(name)
        if not a.equals(b):
            first = next(i for i in range(len(a)) if a[i] != b[i] or a[i].is_valid != b[i].is_valid)
            raise AssertionError(f"{name} row {first}: native {a[first]!r}, python {b[first]!r}")
    assert got_problems == want_problems
    return want.num_rows, want_problems


@pytest.fixture(autouse=True)
def _native() -> Any:
    return native_core()


def test_the_fixtures_records_table_is_pythons(monkeypatch: pytest.MonkeyPatch) -> None:
    rows, _ = assert_same_tables([FIXTURES], monkeypatch)
    assert rows > 5_000


def test_the_records_table_without_redaction_is_pythons(monkeypatch: pytest.MonkeyPatch) -> None:
    assert assert_same_tables([FIXTURES / "kafka-4.4", FIXTURES / "demo"], monkeypatch, redact=False)[0] > 100


@pytest.mark.parametrize("rows", [2, 64])
def test_runs_that_fill_several_record_batches_keep_every_row_in_order(
    monkeypatch: pytest.MonkeyPatch, rows: int
) -> None:
    """With record batches of a few rows a run fills one, sets it aside and goes on, up to
    MAX_SET_ASIDE of them, before the reader hands them out: the table is still the Python
    engine's, and both the set-aside path and its cap were taken."""
    from metashell.spark import native_records
    from metashell.spark import rows as row_builders

    monkeypatch.setattr(row_builders, "ROWS_PER_BATCH", rows)
    monkeypatch.setattr(native_records, "ROWS_PER_BATCH", rows)
    set_aside = []
    run = native_records.RecordsRun.run

    def counting(self: Any, *args: Any) -> int:
        stop: int = run(self, *args)
        set_aside.append(len(self.out.set_aside))
        return stop

    monkeypatch.setattr(native_records.RecordsRun, "run", counting)
    assert assert_same_tables([FIXTURES], monkeypatch)[0] > 5_000
    assert max(set_aside) >= 1
    if rows == 2:  # the fixtures' runs of plain batches fill many of these: the cap is reached
        assert max(set_aside) == native_records.MAX_SET_ASIDE


def python_rows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """From now on, each row the native engine leaves to Python's ``record_row``: (its record type,
    made inside a native run, from the record's bytes alone)."""
    from metashell.spark import native_records

    made: list[tuple[str, bool]] = []
    record_row = native_records.record_row  # type: ignore[attr-defined]  # its own import, used as it uses it

    def counting(batch: Any, *args: Any) -> tuple[Any, ...]:
        row = record_row(batch, *args)
        made.append((row[11], isinstance(batch, native_records.PlainBatch)))
        return row

    monkeypatch.setattr(native_records, "record_row", counting)
    return made


@pytest.mark.parametrize("redact", [True, False])
def test_records_python_makes_stay_in_the_run(monkeypatch: pytest.MonkeyPatch, redact: bool) -> None:
    """A client quota's row (and, when redacting, a SCRAM credential's) is made by Python's
    ``record_row`` from the record's bytes inside the run, so its batch is not left to the scan
    (a fleet snapshot's one data batch of 22,907 records has 25 such): the table is still Python's."""
    rows_made = python_rows(monkeypatch)
    assert assert_same_tables([FIXTURES], monkeypatch, redact=redact)[0] > 5_000
    made = [name for name, in_run in rows_made if in_run]
    assert "ClientQuotaRecord" in made
    assert ("UserScramCredentialRecord" in made) == redact


def test_the_corpus_records_tables_are_pythons(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = corpus_paths()
    if not paths:
        pytest.skip(f"corpus not available: {CORPUS} is absent")
    assert assert_same_tables(paths, monkeypatch)[0] > 10_000


def _batches(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of each batch of a log file's bytes."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        size = 12 + int.from_bytes(data[pos + 8 : pos + 12], "big")
        out.append((pos, size))
        pos += size
    return out


def test_damaged_records_give_the_same_rows_and_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A byte of a record changed and the batch's CRC made right again (so that the damage reaches
    the records, as a forged file's would), in batch after batch of a real log, near a record's
    framing and inside its value: the same rows, and the same error rows, on both engines."""
    log = max(FIXTURES.rglob("*.log"), key=lambda p: p.stat().st_size)
    source = log.parent.parent
    original = log.read_bytes()
    batches = _batches(original)
    step = max(1, len(batches) // 30)
    assert len(batches) > 20
    whole = assert_same_tables([source], monkeypatch)[0]
    cut = 0  # cases where the damage stopped the file (the records table ends the unit there)
    for i, (pos, size) in enumerate(batches[1::step]):
        for at in {pos + 61 + i % 7, pos + 61 + (i * 37) % (size - 61)}:
            case = tmp_path / f"case{i}-{at}"
            shutil.copytree(source, case)
            data = bytearray(original)
            data[at] ^= 0x5A if i % 2 else 0x01
            data[pos + 17 : pos + 21] = crc32c(bytes(data[pos + 21 : pos + size])).to_bytes(4, "big")
            (case / log.relative_to(source)).write_bytes(bytes(data))
            cut += assert_same_tables([case], monkeypatch)[0] < whole
    assert cut > 5  # the damage reached the error paths too


def _append_batch(log: Path, records: list[Any]) -> None:
    """A batch of ``records`` (key, value) appended to a segment, at the offset after its last."""
    data = log.read_bytes()
    last = _batches(data)[-1]
    next_offset = (
        int.from_bytes(data[last[0] : last[0] + 8], "big")
        + 1
        + int.from_bytes(data[last[0] + 23 : last[0] + 27], "big")
    )
    log.write_bytes(data + build_batch(next_offset, 1, records, 1_700_000_000_000))


def test_a_record_without_a_value_is_an_error_row_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record whose value is null (KRaft writes none) ends the unit with the usual error, on both
    engines (it was a TypeError that escaped every table)."""
    case = tmp_path / "c"
    shutil.copytree(FIXTURES / "kafka-4.4", case)
    _append_batch(max(case.rglob("*.log")), [(None, None)])
    rows, _ = assert_same_tables([case], monkeypatch)  # leaves the native engine in place
    errors = [
        row
        for unit in plan_units(find_datasets([str(case)]))
        for batch in read_file_table("errors", unit)
        for row in batch.to_pylist()
    ]
    assert any("null value" in row["message"] for row in errors), errors
    assert rows > 0


def test_sensitive_config_values_are_redacted_natively_as_python_redacts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sensitive config's value (a PASSWORD key, a key Kafka does not know, any key of an unknown
    resource type), with characters JSON escapes, is replaced by the native core as Python's
    ``redact_record_json`` replaces it, without a Python row; a non-sensitive one, a deletion (null
    value) and a BROKER_LOGGER level are kept."""
    from metashell.protocol.metadata import encode_metadata_record

    case = tmp_path / "c"
    shutil.copytree(FIXTURES / "kafka-4.4", case)
    tricky = 'a"b\\c\nd\x01e\u20ac\U0001f600'
    configs = [
        (4, "", "ssl.keystore.password", tricky),
        (4, "1", "custom.api.token", "s3cr3t"),
        (2, "orders", "retention.ms", tricky),
        (2, "orders", "retention.ms", None),
        (8, "1", "kafka.server", "DEBUG"),
        (99, "x", "anything", "hidden"),
    ]
    values = [
        encode_metadata_record(
            "ConfigRecord", 0, {"ResourceType": t, "ResourceName": r, "Name": n, "Value": v}
        )
        for t, r, n, v in configs
    ]
    _append_batch(max(case.rglob("*.log")), [(None, v) for v in values])
    rows_made = python_rows(monkeypatch)
    assert_same_tables([case], monkeypatch)
    assert "ConfigRecord" not in [name for name, _in_run in rows_made]
    rows, _ = records_table([case], "native", monkeypatch)
    texts = rows.column("record_json").to_pylist()[-len(configs) :]
    assert [t.endswith('"value":"[redacted]"}') for t in texts] == [True, True, False, False, False, True]
    assert "s3cr3t" not in "".join(texts)
    assert texts[2].endswith('"value":' + json.dumps(tricky, ensure_ascii=False) + "}")


def test_the_native_key_sources_are_the_registrys() -> None:
    """Every key source names a key column and a field some record has; Python-only sources are
    the only ones the native rules leave out."""
    from metashell.protocol import registry
    from metashell.protocol.metadata import record_types

    fields = {f.name for name in record_types().values() for f in registry.spec(name).fields}
    for sources in [*KEY_SOURCES.values(), OTHER_KEYS]:
        for column, (how, arg) in sources.items():
            assert column in KEY_COLUMNS
            assert how == "const" or arg in fields, (how, arg)
    assert {"quota_entity"} == PYTHON_ONLY_SOURCES


def test_columns_reach_pyarrow_as_the_native_memory_read_only() -> None:
    """A record batch's columns are handed over as buffers over the memory Rust filled (no copy),
    read-only, and kept alive by the arrays pyarrow made of them."""
    import gc

    from metashell.log.scan import iter_batches
    from metashell.spark.native_records import NativeRecordRows, record_rules
    from metashell.spark.rows import record_row

    native = native_core()
    log = max(FIXTURES.rglob("*.log"), key=lambda p: p.stat().st_size)
    out = NativeRecordRows(native, ("cluster", 1, "dir", log.name, "log"))
    rules = record_rules(native, True)
    for batch in iter_batches(log.read_bytes(), str(log), decode=False):
        if not batch.is_control:
            python_row = lambda i, b=batch: record_row(b, b.entries()[i], None, 0, 0, True)  # noqa: E731
            assert out.add_batch(rules, batch, (None, 0, 0), python_row)
    rows = len(out)
    assert rows > 100
    taken = out.cols.take()
    assert len(out.cols) == 0
    values = [v for _valid, v, _offsets, _nulls in taken]
    assert all(isinstance(v, native.Buffer) for v in values)
    assert all(memoryview(v).readonly for v in values)
    text = pa.py_buffer(values[13])  # record_json
    assert text.size == len(values[13]) > rows * 20
    first = bytes(text[:1])
    del taken, values
    gc.collect()
    assert bytes(text[:1]) == first == b"{"
