"""The native core against the pure-Python engine, which is the reference: equal on every record.

Three levels, each on real data (every fixture and corpus file) and on generated input:

* ``decode_entries`` (a batch's records area): the same tuples and counters, or the same error
  (message, position, record index) -- on real batches, on generated records areas and on damaged
  ones;
* the replay decoders (a record value): the same object, to the type (tuple or list, bool or int),
  or both refusing it -- on every record, on records of every type and version with any field values,
  and on damaged record values;
* the whole pipeline, in two processes (``METASHELL_ENGINE=python`` and ``native``): the same tree
  line for line (``/image`` included), the same warnings, and the same image at several offsets.

``scripts/fuzz_native.py`` runs the same comparisons for as many cases as asked (the closing notes
give its figures); here hypothesis draws a few thousand.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, FIXTURES, REPO, corpus_paths, native_core
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from partitions import partition
from record_strategies import field_values, records

from metashell.errors import DecodeError
from metashell.image.replay.topics import DECODERS
from metashell.log.files import iter_file_batches
from metashell.log.records import RecordError, decode_entries_python
from metashell.protocol import registry
from metashell.protocol.control import CONTROL_SCHEMAS
from metashell.protocol.kafka_json import to_kafka_json_text
from metashell.protocol.metadata import decode_metadata_record, encode_metadata_record
from metashell.protocol.wire import encode_varint

_native = native_core


@pytest.fixture(scope="module")
def native() -> Any:
    return _native()


# ------------------------------------------------------------------------------ comparing


def typed(value: Any) -> Any:
    """``value`` with its types spelled out, so that a list never equals a tuple, True never
    equals 1 and a NaN equals itself."""
    if isinstance(value, bool | int | bytes | str | type(None)):
        return (type(value).__name__, value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, tuple | list):
        return (type(value).__name__, [typed(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    raise TypeError(f"unexpected {type(value).__name__} in a decoded record")


def python_value(value: bytes) -> Any:
    """The Python engine's fast path on one value (``Replayer.replay_entries``): (api key, data) or
    None when it does not take the value."""
    try:
        api_key, _name, fn, _positional = DECODERS[value[:3]]
        data, end = fn(value, 3, len(value))
    except Exception:  # noqa: BLE001 - every refusal is a miss, as in the replayer
        return None
    return (api_key, data) if end == len(value) else None


def raw_agrees(native: Any, value: bytes, want: Any) -> bool:
    """The native raw decoder (what ``replay_run`` reads) takes ``value`` exactly when the
    positional decoder does, with the same fields; ``want`` is :func:`python_value`'s answer."""
    raw = native.decode_raw_fields(value)
    if want is None or not isinstance(want[1], tuple):
        return raw is None
    if raw is None:  # a positional record type with no raw decoder would be a generator change
        return False
    n = len(want[1])
    return typed(raw[:n]) == typed(want[1]) and all(x is None for x in raw[n:])


def python_json(value: bytes) -> tuple[int, int, str] | None:
    """(api key, version, Kafka's JSON text) as the Spark ``records`` table writes it with the
    Python engine, or None when the record does not decode."""
    try:
        rec = decode_metadata_record(value)
    except DecodeError:
        return None
    return rec.api_key, rec.version, to_kafka_json_text(rec.name, rec.version, rec.data)


def json_agrees(native: Any, value: bytes, *, must_take: bool) -> bool:
    """The native JSON writer writes what Python writes, or refuses the record (Python then writes
    it); with ``must_take``, it refuses only records Python refuses too."""
    got = native.kafka_json_text(value)
    if got is None:
        return not must_take or python_json(value) is None
    return tuple(got) == python_json(value)


def assert_same_value(native: Any, value: bytes, *, json_taken: bool = False) -> bool:
    """Both engines decode ``value`` to the same thing (or both refuse it), and so does the native
    raw decoder; the JSON writers agree (``json_taken``: the native one takes every record Python
    decodes). True when taken."""
    want = python_value(value)
    got = native.decode_value(value)
    assert typed(got and tuple(got)) == typed(want), value.hex()
    assert raw_agrees(native, value, want), ("raw", value.hex())
    assert json_agrees(native, value, must_take=json_taken), ("json", value.hex())
    return want is not None


def schema_control_values(batch: Any) -> Iterator[tuple[int, bytes]]:
    """(control type, value) of each record of a control batch whose type has a schema."""
    for _offset, _ts, key, value in batch.entries():
        ctype = int.from_bytes(key[2:4], "big", signed=True) if key and len(key) >= 4 else None
        if value is not None and ctype in CONTROL_SCHEMAS:
            yield ctype, value


def python_control(ctype: int, value: bytes) -> Any:
    """What the Python engine makes of a control value (version 0, trailing bytes ignored), or None
    when it refuses it."""
    try:
        return registry.decode(CONTROL_SCHEMAS[ctype], 0, value, exact=False)
    except DecodeError:
        return None


def assert_same_control(native: Any, ctype: int, value: bytes) -> bool:
    """Both engines decode a control value alike, or both refuse it; True when decoded."""
    want = python_control(ctype, value)
    assert typed(native.decode_control_value(ctype, value)) == typed(want), (ctype, value.hex())
    return want is not None


def entries_outcome(fn: Any, data: bytes, pos: int, end: int, count: int, base: int, ts: int) -> Any:
    try:
        out, stats = fn(data, pos, end, count, base, ts)
    except RecordError as e:
        return ("error", e.message, e.pos, e.index)
    return ("ok", typed(out), tuple(stats))


def native_entries(native: Any) -> Any:
    def decode(data: bytes, pos: int, end: int, count: int, base: int, ts: int) -> Any:
        try:
            return native.decode_entries(data, pos, end, count, base, ts)
        except native.RecordDecodeError as e:
            raise RecordError(*e.args) from None

    return decode


def assert_same_entries(native: Any, data: bytes, pos: int, end: int, count: int, base: int, ts: int) -> None:
    want = entries_outcome(decode_entries_python, data, pos, end, count, base, ts)
    got = entries_outcome(native_entries(native), data, pos, end, count, base, ts)
    assert got == want, (data[pos:end].hex(), count, base, ts)


# ------------------------------------------------------------------------------ real data


def metadata_files() -> list[Path]:
    roots = [FIXTURES, *corpus_paths()]
    return [
        p
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.suffix in (".log", ".checkpoint") and p.is_file()
    ]


def test_every_record_of_every_fixture_and_corpus_file(native: Any) -> None:
    files = metadata_files()
    batches = taken = values = controls = 0
    for path in files:
        for batch in iter_file_batches(path, lenient_tail=True, warn=lambda _w: None, decode=False):
            data, start, end, _compressed = batch._records_area()
            assert_same_entries(
                native, data, start, end, batch.records_count, batch.base_offset, batch.base_timestamp
            )
            batches += 1
            if batch.is_control:
                for ctype, control in schema_control_values(batch):
                    controls += assert_same_control(native, ctype, control)
                continue
            for _offset, _ts, _key, value in batch.entries():
                values += 1
                if value is not None:
                    taken += assert_same_value(native, value, json_taken=True)
    assert taken == values  # every real record takes the fast path on both engines
    if not CORPUS.is_dir():  # (the counts below are the corpus's: the fixtures alone hold fewer)
        pytest.skip(f"fixtures compared ({values} records); corpus not available: {CORPUS} is absent")
    assert batches > 1000 and values > 10_000 and controls > 100


# ------------------------------------------------------------------------------ generated values


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(records())
def test_any_record_of_any_type_and_version(case: tuple[str, int, dict[str, Any]]) -> None:
    native = _native()
    name, version, data = case
    value = encode_metadata_record(name, version, data)
    assert assert_same_value(native, value, json_taken=True), f"{name} v{version} was refused"


def _damaged(value: bytes, edits: list[tuple[int, int, int]]) -> bytes:
    """``value`` with each edit applied: (kind, position, byte) -- flip, cut, insert or delete."""
    b = bytearray(value)
    for kind, at, x in edits:
        if not b:
            break
        i = at % len(b)
        if kind == 0:
            b[i] ^= x or 1
        elif kind == 1:
            del b[i:]
        elif kind == 2:
            b.insert(i, x)
        else:
            del b[i]
    return bytes(b)


EDITS = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1 << 16), st.integers(0, 255)), max_size=4)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(records(), EDITS)
def test_any_damaged_record(case: tuple[str, int, dict[str, Any]], edits: list[tuple[int, int, int]]) -> None:
    native = _native()
    name, version, data = case
    assert_same_value(native, _damaged(encode_metadata_record(name, version, data), edits))


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40))
def test_any_float_and_string_is_written_as_python_writes_it(value: float, text: str) -> None:
    """The native JSON writer's float ``repr`` and string escapes, on any float and any text (a
    client quota's value and its entity name)."""
    data = {
        "Entity": [{"EntityType": "user", "EntityName": text}],
        "Key": text,
        "Value": value,
        "Remove": False,
    }
    try:
        record = encode_metadata_record("ClientQuotaRecord", 0, data)
    except UnicodeEncodeError:  # a lone surrogate: no record can hold it
        return
    assert json_agrees(_native(), record, must_take=True), (value, text)


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 30), st.integers(0, 5), st.binary(max_size=80))
def test_any_bytes_after_a_record_header(key: int, version: int, body: bytes) -> None:
    assert_same_value(_native(), bytes([1, key, version]) + body)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_any_control_record(data: Any) -> None:
    """Any value of every field of every control record, whole and damaged, and trailing bytes."""
    native = _native()
    ctype, schema = data.draw(st.sampled_from(sorted(CONTROL_SCHEMAS.items())))
    spec = registry.spec(schema)
    fields = {f.name: field_values(f, spec, 0) for f in spec.fields if 0 in f.versions}
    value = registry.encode(schema, 0, data.draw(st.fixed_dictionaries(fields)))
    assert assert_same_control(native, ctype, value + data.draw(st.binary(max_size=4)))
    assert_same_control(native, ctype, _damaged(value, data.draw(EDITS)))


# ------------------------------------------------------------------------------ generated batches


def _record(offset_delta: int, ts_delta: int, key: bytes | None, value: bytes | None, headers: int) -> bytes:
    body = bytearray([0])
    body += encode_varint(ts_delta) + encode_varint(offset_delta)
    for part in (key, value):
        body += encode_varint(-1) if part is None else encode_varint(len(part)) + part
    body += encode_varint(headers)
    for i in range(headers):
        body += encode_varint(1) + bytes([0x61 + i % 26]) + encode_varint(1) + b"v"
    return encode_varint(len(body)) + bytes(body)


RECORD = st.tuples(
    st.integers(0, 1 << 20),
    st.one_of(st.just(0), st.integers(-(1 << 40), 1 << 40)),
    st.one_of(st.none(), st.binary(max_size=4)),
    st.one_of(st.none(), st.binary(max_size=40)),
    st.one_of(st.just(0), st.integers(0, 2)),
)
BASES = st.one_of(st.integers(0, 1 << 40), st.integers(-(1 << 63), (1 << 63) - 1))


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(RECORD, max_size=6),
    BASES,
    BASES,
    EDITS,
    st.integers(-1, 1),
    st.binary(max_size=8),
    st.binary(max_size=8),
)
def test_any_records_area_whole_or_damaged(
    recs: list[Any], base: int, ts: int, edits: list[Any], count_off: int, before: bytes, after: bytes
) -> None:
    """Records areas inside a larger buffer (bytes before and after, as a batch sits in a segment),
    whole or damaged, with a right or wrong record count."""
    area = b"".join(_record(*r) for r in recs)
    area = _damaged(area, edits) if edits and area else area
    data = before + area + after
    assert_same_entries(
        _native(), data, len(before), len(before) + len(area), max(0, len(recs) + count_off), base, ts
    )


# ------------------------------------------------------------------------------ the whole pipeline


def _directories() -> list[Path]:
    fixtures = sorted(p for p in FIXTURES.iterdir() if (p / "__cluster_metadata-0").is_dir())
    return fixtures + corpus_paths()


def _dump(engine: str, dirs: list[Path]) -> dict[str, Any]:
    env = {**os.environ, "METASHELL_ENGINE": engine}
    proc = subprocess.run(
        [sys.executable, str(REPO / "tests" / "engine_dump.py"), *map(str, dirs)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    dumped: dict[str, Any] = json.loads(proc.stdout)
    return dumped


def _differences(a: Any, b: Any, where: str = "") -> Iterator[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from _differences(a.get(k), b.get(k), f"{where}/{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differences(x, y, f"{where}[{i}]")
    elif a != b:
        yield f"{where}: python {str(a)[:200]!r} != native {str(b)[:200]!r}"


def test_both_engines_give_the_same_tree_warnings_and_past(native: Any) -> None:
    dirs = _directories()
    python, native_run = _dump("python", dirs), _dump("native", dirs)
    assert python.pop("engine").startswith("python") and native_run.pop("engine").startswith("native")
    diffs = list(_differences(python, native_run))
    assert not diffs, "\n".join(diffs[:20])
    assert len(python) == len(dirs)
    if not CORPUS.is_dir():
        pytest.skip(f"fixtures compared; corpus not available: {CORPUS} is absent")


def test_the_engine_is_always_visible() -> None:
    def run(env: dict[str, str], *args: str, code: str = "") -> subprocess.CompletedProcess[str]:
        prelude = "import sys; " + code + "from metashell.cli import main; sys.exit(main(sys.argv[1:]))"
        return subprocess.run(
            [sys.executable, "-c", prelude, *args],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    demo = str(FIXTURES / "demo")
    out = run({"METASHELL_ENGINE": "python"}, "--version")
    assert out.returncode == 0 and "engine: python (METASHELL_ENGINE=python)" in out.stdout
    out = run({"METASHELL_ENGINE": "python"}, "-d", demo, "cat", "/provenance/engine")
    assert out.stdout.strip() == "python (METASHELL_ENGINE=python)", out.stderr
    missing = "sys.modules['metashell._native'] = None; "  # as if it had not been built
    out = run({"METASHELL_ENGINE": "native"}, "-d", demo, "ls", "/", code=missing)
    assert out.returncode == 1 and out.stdout == ""
    assert (
        out.stderr.count("\n") == 1
        and "METASHELL_ENGINE=native, but the native core is not built" in out.stderr
    )
    out = run({"METASHELL_ENGINE": "auto"}, "--version", code=missing)
    assert "engine: python (the native core is not built" in out.stdout
    out = run({"METASHELL_ENGINE": "rust"}, "-d", demo, "ls", "/")
    assert out.returncode == 1 and "METASHELL_ENGINE must be one of auto, python, native" in out.stderr
    _native()
    out = run({"METASHELL_ENGINE": "native"}, "-d", demo, "cat", "/provenance/engine")
    assert out.stdout.startswith("native (metashell._native "), out.stderr


def test_the_generated_rust_is_what_the_schemas_make() -> None:
    """``native/src/decode/generated.rs`` is written by ``scripts/gen_native.py`` and never by hand."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_native.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_each_json_writer_is_written_once() -> None:
    """Versions of a record that write a struct alike share one generated writer: no two ``j_*``
    functions of the same struct have the same body (the table reads which version uses which)."""
    text = (REPO / "native" / "src" / "decode" / "generated.rs").read_text()
    seen: dict[tuple[str, str], str] = {}
    for m in re.finditer(
        r"^fn (j_(\w+)_\d+)<'a>\([^)]*\) -> R<\(\)> \{\n(.*?)^\}", text, re.MULTILINE | re.DOTALL
    ):
        name, label, body = m.groups()
        assert (label, body) not in seen, f"{name} is {seen[label, body]} again"
        seen[label, body] = name
    assert len(seen) > 30, "the writers were not found in generated.rs"


def test_a_panic_in_the_native_core_is_one_line(native: Any) -> None:
    """A panic would be a bug; if one happens it is the command line's one-line internal error, with
    nothing from Rust on the terminal, and the interpreter lives on to say it."""
    code = (
        "import sys, metashell._native as n, metashell.image.loader as loader\n"
        "loader.require_engine = lambda: n._panic_for_tests()\n"
        "from metashell.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "-d", str(FIXTURES / "demo"), "ls", "/"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr == (
        "internal error in the native core: a deliberate panic, for the tests "
        "(METASHELL_ENGINE=python runs without it; set METASHELL_DEBUG=1 for a traceback)\n"
    )


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=4096), st.integers(0, 64), st.integers(0, 64))
def test_crc32c_is_the_packages(data: bytes, cut_front: int, cut_back: int) -> None:
    """The batch checksum: the native core's equals the crc32c package's, on bytes and on the
    memoryview slices the scanner hands it."""
    import crc32c

    native = _native()
    view = memoryview(data)[cut_front : max(cut_front, len(data) - cut_back)]
    assert native.crc32c(data) == crc32c.crc32c(data)
    assert native.crc32c(view) == crc32c.crc32c(view)
    assert native.crc32c(bytearray(data)) == crc32c.crc32c(data)


def test_the_native_replay_journals_partitions_as_python_does(native: Any) -> None:
    """``native/src/replay.rs`` names Partition's attributes itself; they are Python's, in the order
    the time-travel journal keeps them (``timeline.kept``: ``Partition.__slots__``)."""
    from metashell.image.model import Partition

    assert tuple(native.partition_attributes()) == Partition.__slots__


def test_the_native_replay_shares_tuples_as_python_does(native: Any) -> None:
    """``replay_run`` builds partitions from raw fields and finds their tuples by bytes
    (``ReplayCache``): the image equals Python's, equal lists are one shared tuple from the
    replayer's ``_ints``, and a cache handed to another replayer starts over with that one's."""
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    tid = bytes(range(1, 17))

    def partition(pid: int, isr: list[int]) -> bytes:
        return encode_metadata_record(
            "PartitionRecord",
            0,
            {
                "PartitionId": pid,
                "TopicId": tid,
                "Replicas": [1, 2, 3],
                "Isr": isr,
                "RemovingReplicas": [],
                "AddingReplicas": [],
                "Leader": 1,
                "LeaderEpoch": 4,
                "PartitionEpoch": 5,
            },
        )

    topic = encode_metadata_record("TopicRecord", 0, {"Name": "t", "TopicId": tid})
    entries = [(0, 0, None, topic), (1, 0, None, partition(0, [1, 2, 3])), (2, 0, None, partition(1, [1, 2]))]
    cache = native.ReplayCache()
    fast, slow = Replayer(), Replayer()
    fast.defer_partitions = False  # the cache's table is the run's (a deferred topic's is its own)
    assert native.replay_run(fast, entries, 0, _CONSTANTS, cache) == len(entries)
    for off, _ts, _key, value in entries:
        slow.replay_value(value, off)
    got, want = fast.image.topics.by_id[tid], slow.image.topics.by_id[tid]
    assert (got.name, got.partitions) == (want.name, want.partitions)
    p0, p1 = got.partitions[0], got.partitions[1]
    assert p0.replicas is p1.replicas is p0.isr is fast._ints[(1, 2, 3)]
    assert p1.isr is fast._ints[(1, 2)] and len(cache) == 2
    other = Replayer()
    other.defer_partitions = False
    assert native.replay_run(other, entries, 0, _CONSTANTS, cache) == len(entries)
    assert other.image.topics.by_id[tid].partitions[0].replicas is other._ints[(1, 2, 3)]
    assert other._ints[(1, 2, 3)] is not fast._ints[(1, 2, 3)]


def test_the_native_replay_sets_slots_only_where_they_are_partitions(native: Any) -> None:
    """``replay_run`` writes a new Partition's slots at the offsets its descriptors give, checked
    when a run starts: descriptors of another class (the same names, another layout) are refused
    with a TypeError, and a partition that is not exactly a ``Partition`` (a subclass put there by
    Python code) is still changed through its descriptors, as Python would."""
    from metashell.image.model import Partition
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    class Other:
        __slots__ = ("pad", *Partition.__slots__)

    foreign = list(_CONSTANTS)
    foreign[5] = tuple(Other.__dict__[name] for name in Partition.__slots__)
    with pytest.raises(TypeError, match="own object slots"):
        native.replay_run(Replayer(), [], 0, tuple(foreign), native.ReplayCache())

    class Sub(Partition):
        __slots__ = ()

    tid = bytes(range(1, 17))
    topic = encode_metadata_record("TopicRecord", 0, {"Name": "t", "TopicId": tid})
    change = encode_metadata_record(
        "PartitionChangeRecord", 0, {"PartitionId": 0, "TopicId": tid, "Leader": 2, "Isr": [2, 3]}
    )
    fast, slow = Replayer(), Replayer()
    for r in (fast, slow):
        r.replay_value(topic, 0)
        r.image.topics.by_id[tid].partitions[0] = partition(
            Sub, replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, leader_epoch=4, partition_epoch=5
        )
    assert native.replay_run(fast, [(1, 0, None, change)], 0, _CONSTANTS, native.ReplayCache()) == 1
    slow.replay_value(change, 1)
    got, want = fast.image.topics.by_id[tid].partitions[0], slow.image.topics.by_id[tid].partitions[0]
    assert type(got) is Sub and [getattr(got, s) for s in Partition.__slots__] == [
        getattr(want, s) for s in Partition.__slots__
    ]
    assert (got.leader, got.isr, got.leader_epoch, got.partition_epoch) == (2, (2, 3), 5, 6)


def test_the_native_batch_loop_takes_the_plain_log_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the native engine, the log's plain batches are applied by ``apply_log_batches`` (the
    rest by the Python reader), and the index has every batch once, in order; equality with the
    Python engine is ``test_both_engines_give_the_same_tree_warnings_and_past``'s."""
    from metashell.image import batch_loader, native_batches
    from metashell.image.loader import load_directory

    if native_batches.NATIVE is None:  # type: ignore[attr-defined]  # the module's own, not exported
        pytest.skip("the Python engine reads every batch itself; CI runs this file on the native engine too")
    applied: list[int] = []
    real = native_batches.log_sink

    def counting(loader: Any) -> Any:
        sink = real(loader)
        assert sink is not None

        def count(*args: Any) -> Any:
            out = sink(*args)
            applied.append(len(out[3][0]) // 8)
            return out

        return count

    monkeypatch.setattr(batch_loader, "log_sink", counting)
    result = load_directory(FIXTURES / "kafka-3.8", timeline=True)  # 45 log batches in 2 segments
    logged = [e for e in result.index if e.kind == "log"]
    assert sum(applied) > len(logged) // 2 > 0
    positions = [(e.source, e.position) for e in logged]
    assert positions == sorted(set(positions)) and all(
        a.last_offset < b.base_offset for a, b in itertools.pairwise(logged)
    )


def test_no_batch_read_before_is_held_while_the_bulk_applies_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot's header batch (a control batch, read by Python) holds the chunk it was read
    from; the loader and the reader let it go before the native bulk applies the rest of the file,
    or a big snapshot's first chunk stays in memory (and a fresh buffer is faulted in) for the
    whole load."""
    from metashell.image import native_batches
    from metashell.image.loader import load_file
    from metashell.log import bulk
    from metashell.log.batch import RecordBatch

    if native_batches.NATIVE is None:  # type: ignore[attr-defined]  # the module's own, not exported
        pytest.skip("the Python engine reads every batch itself; CI runs this file on the native engine too")
    alive: list[int] = []
    real = bulk.LogCursor.run

    def run(self: Any, *args: Any) -> int:
        gc.collect()
        alive.append(sum(type(o) is RecordBatch for o in gc.get_objects()))
        return int(real(self, *args))

    monkeypatch.setattr(bulk.LogCursor, "run", run)
    snapshot = next((FIXTURES / "demo" / "__cluster_metadata-0").glob("*.checkpoint"))
    load_file(snapshot)
    assert alive and max(alive) == 0


def test_the_native_replay_of_configs_is_pythons(native: Any) -> None:
    """ConfigRecords in ``replay_run``: set, replaced, removed (an emptied resource goes), an unknown
    resource type as UNKNOWN; the same configs and the same journal as Python's rule."""
    from metashell.image.replay import Replayer
    from metashell.image.replay.native import _CONSTANTS

    def config(rtype: int, name: str, key: str, value: str | None) -> bytes:
        data = {"ResourceType": rtype, "ResourceName": name, "Name": key, "Value": value}
        return encode_metadata_record("ConfigRecord", 0, data)

    values = [
        config(2, "t", "retention.ms", "1"),
        config(2, "t", "retention.ms", "2"),
        config(2, "t", "cleanup.policy", "compact"),
        config(99, "x", "a", "b"),
        config(2, "t", "retention.ms", None),
        config(2, "t", "cleanup.policy", None),
        config(4, "1", "absent", None),
    ]
    entries = [(i, 0, None, v) for i, v in enumerate(values)]
    fast, slow = Replayer(), Replayer()
    fast.journal, slow.journal = [], []
    assert native.replay_run(fast, entries, 0, _CONSTANTS, native.ReplayCache()) == len(entries)
    for off, _ts, _key, value in entries:
        slow.replay_value(value, off)
    assert fast.image.configs == slow.image.configs == {(0, "x"): {"a": "b"}}
    assert fast.journal == slow.journal and len(fast.journal) == 9


_TIDS = [bytes([i + 1]) * 16 for i in range(3)]
_OPS = st.tuples(
    st.sampled_from(["topic", "partition", "change", "remove", "config"]),
    st.integers(0, 1),  # which topic id
    st.integers(0, 3),  # partition id (or config value)
    st.integers(1, 3),  # leader
)


def _op_record(op: tuple[str, int, int, int]) -> bytes:
    kind, t, pid, leader = op
    tid = _TIDS[t]
    if kind == "topic":
        return encode_metadata_record("TopicRecord", 0, {"Name": f"t{t}", "TopicId": tid})
    if kind == "partition":
        data = {"PartitionId": pid, "TopicId": tid, "Replicas": [1, 2, 3], "Isr": [1, 2, 3], "Leader": leader}
        return encode_metadata_record("PartitionRecord", 2, {**data, "LeaderEpoch": 0, "PartitionEpoch": 0})
    if kind == "change":
        return encode_metadata_record(
            "PartitionChangeRecord", 2, {"PartitionId": pid, "TopicId": tid, "Leader": leader}
        )
    if kind == "remove":
        return encode_metadata_record("RemoveTopicRecord", 0, {"TopicId": tid})
    data = {"ResourceType": 2, "ResourceName": f"t{t}", "Name": "retention.ms", "Value": str(pid)}
    return encode_metadata_record("ConfigRecord", 0, data)


_METADATA_VERSION = encode_metadata_record(
    "FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 21}
)


def _loaded_and_replayed(part: Path, values: list[bytes], sizes: Iterator[int]) -> tuple[Any, Any]:
    """``values`` written to ``part`` as one segment of batches of ``sizes`` records and loaded (the
    native batch loop, whose replay keeps state across the records Python applies), and the same
    records replayed one at a time by Python's rules: (load result, replayer)."""
    from metashell.image.loader import load_directory
    from metashell.image.replay import Replayer
    from metashell.log.encoding import build_batch

    batches, offset = [], 0
    while offset < len(values):
        chunk = values[offset : offset + next(sizes)]
        batches.append(build_batch(offset, 1, [(None, v) for v in chunk], 1_700_000_000_000 + offset))
        offset += len(chunk)
    (part / "00000000000000000000.log").write_bytes(b"".join(batches))
    want = Replayer()
    for off, value in enumerate(values):
        want.replay_value(value, off)
    return load_directory(part), want


def _topics(image: Any) -> dict[bytes, Any]:
    """Each topic's name and partitions, every slot of each."""
    return {
        tid: (t.name, {pid: [getattr(p, s) for s in p.__slots__] for pid, p in t.partitions.items()})
        for tid, t in image.topics.by_id.items()
    }


def _faults(got: Any, want: Any) -> bool:
    """The load reported the faults Python's rules reported, at the same offsets."""
    return [(w.offset, w.message) for w in got.faults] == [
        (w.offset, w.message) for w in want.warnings if w.kind == "fault"
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ops=st.lists(_OPS, min_size=1, max_size=40), sizes=st.lists(st.integers(1, 6), min_size=1, max_size=12)
)
def test_any_sequence_of_topic_records_replays_as_python_replays_it(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int, int, int]], sizes: list[int]
) -> None:
    """Topics created, removed and re-created among partition records, in batches of any size, through
    the loader (the native batch loop, whose replay keeps state across the records Python applies):
    the same topics, partitions, configs and faults as Python's rules applied one record at a time."""
    part = tmp_path_factory.mktemp("seq") / "__cluster_metadata-0"
    part.mkdir()
    values = [_METADATA_VERSION, *(_op_record(op) for op in ops)]
    got, want = _loaded_and_replayed(part, values, itertools.cycle(sizes))

    def state(image: Any) -> Any:
        return _topics(image), sorted(image.topics.by_name), image.configs

    assert state(got.image) == state(want.image)
    assert _faults(got, want)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_many_topics_created_removed_and_changed_in_any_order_replay_as_python(
    tmp_path: Path, seed: int
) -> None:
    """Thousands of topics, removed and created again in random order among changes naming them all
    over (the native topic index grows, collides and closes the gaps removals leave, and the replay
    prefetches ahead of scattered changes): the image Python's rules make, record by record."""
    import random

    rng = random.Random(seed)
    tids = [rng.randbytes(16) for _ in range(3000)]
    live: list[int] = []
    values = [_METADATA_VERSION]
    for _ in range(12_000):
        roll = rng.random()
        if roll < 0.3 or not live:
            t = rng.randrange(len(tids))
            values.append(encode_metadata_record("TopicRecord", 0, {"Name": f"t{t}", "TopicId": tids[t]}))
            for pid in range(rng.randrange(1, 4)):
                data = {
                    "PartitionId": pid,
                    "TopicId": tids[t],
                    "Replicas": [1, 2],
                    "Isr": [1, 2],
                    "Leader": 1,
                }
                values.append(
                    encode_metadata_record(
                        "PartitionRecord", 2, {**data, "LeaderEpoch": 0, "PartitionEpoch": 0}
                    )
                )
            live.append(t)
        elif roll < 0.4:
            t = live.pop(rng.randrange(len(live)))
            values.append(encode_metadata_record("RemoveTopicRecord", 0, {"TopicId": tids[t]}))
        else:
            t = rng.choice(live)
            data = {"PartitionId": rng.randrange(3), "TopicId": tids[t], "Leader": rng.randrange(1, 3)}
            values.append(encode_metadata_record("PartitionChangeRecord", 2, data))
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    got, want = _loaded_and_replayed(part, values, (rng.randrange(1, 200) for _ in itertools.count()))
    assert len(got.image.topics.by_id) > 1000
    assert _topics(got.image) == _topics(want.image)
    assert _faults(got, want)
