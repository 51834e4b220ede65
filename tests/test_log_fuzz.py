"""Fuzzing batches, headers, compressed payloads, record decoders and directory layouts: only typed
errors may escape, and nothing is written.

Random bytes almost never get past the CRC, so the mutations start from real batches (Kafka's test
vectors when ../shared is present, plus synthetic batches in every codec) and, half of the time,
re-seal every batch's CRC so the mutated bytes reach the decompressors and the record parser.
"""

from __future__ import annotations

import contextlib
import random
import struct
from pathlib import Path

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metashell.errors import DecodeError, MetashellError
from metashell.image.loader import load_directory
from metashell.log.batch import HEADER_SIZE, RecordBatch
from metashell.log.compression import LIMITS, compress_records
from metashell.log.encoding import build_batch, encode_record
from metashell.log.problems import LogWarning
from metashell.log.properties import parse_properties
from metashell.log.scan import iter_batches

SHARED = Path(__file__).resolve().parents[2] / "shared"
VECTORS = SHARED / "reference" / "test-vectors"
T0 = 1_700_000_000_000
FUZZ = settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))


def _seeds() -> list[bytes]:
    seeds = []
    if VECTORS.is_dir():
        for f in sorted((VECTORS / "metadata-log-dir" / "__cluster_metadata-0").iterdir()):
            if f.suffix in (".log", ".checkpoint"):
                seeds.append(f.read_bytes())
        seeds.append((VECTORS / "misc" / "gzip-compressed-batch.bin").read_bytes())
    vals = [bytes([i]) * (i * 7 % 90) for i in range(1, 12)]
    for codec in range(5):
        seeds.append(
            build_batch(0, 1, vals, T0, compression=codec)
            + build_batch(11, 1, [(b"k", b"v", [("h", b"x")])], T0 + 5, compression=codec)
        )
    seeds.append(
        build_batch(0, 1, [(b"\x00\x00\x00\x03", b"\x00\x00" + bytes(9))], T0, control=True)
        + build_batch(1, 1, vals[:3], T0)
        + bytes(64)
    )
    return seeds


SEEDS = _seeds()


def reseal(buf: bytes) -> bytes:
    """Recompute the CRC of every batch that can still be framed."""
    b = bytearray(buf)
    pos = 0
    while pos + HEADER_SIZE <= len(b):
        size = struct.unpack_from(">i", b, pos + 8)[0] + 12
        if size < HEADER_SIZE or pos + size > len(b):
            break
        struct.pack_into(">I", b, pos + 17, crc32c(bytes(b[pos + 21 : pos + size])))
        pos += size
    return bytes(b)


def mutate(buf: bytes, rnd: random.Random) -> bytes:
    """1-4 random edits: bit flips, byte sets, insertions, deletions, truncation."""
    b = bytearray(buf)
    for _ in range(rnd.randint(1, 4)):
        kind = rnd.choice(("flip", "set", "insert", "delete", "truncate"))
        i = rnd.randrange(len(b)) if b else 0
        if kind == "flip" and b:
            b[i] ^= 1 << rnd.randrange(8)
        elif kind == "set" and b:
            b[i] = rnd.randrange(256)
        elif kind == "insert":
            b[i:i] = rnd.randbytes(rnd.randint(1, 8))
        elif kind == "delete":
            del b[i : i + rnd.randint(1, 8)]
        else:
            del b[i:]
    return bytes(b)


# Hypothesis draws only a few integers per example (a seed for the edits): generating rich
# structures through Hypothesis costs ~10x the decoding being tested, and 10k examples must stay fast.
@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    seed = draw(st.sampled_from(SEEDS))
    out = mutate(seed, random.Random(draw(st.integers(0, 2**32))))
    return reseal(out) if draw(st.booleans()) else out


def exercise(buf: bytes, lenient: bool) -> None:
    warnings: list[LogWarning] = []
    try:
        for batch in iter_batches(buf, "fuzz.log", lenient_tail=lenient, warn=warnings.append):
            entries = batch.entries()
            records = batch.records()  # the slow decoder must agree with the fast one
            assert [(r.offset, r.timestamp, r.key, r.value) for r in records] == entries
            batch.kraft_anomalies()
            assert batch.size == len(batch.raw())
    except DecodeError as e:
        assert e.source == "fuzz.log" and e.offset is not None and 0 <= e.offset <= len(buf)
        str(e)
    for w in warnings:
        str(w)


@FUZZ
@given(mutated(), st.booleans())
def test_fuzz_iter_batches(buf: bytes, lenient: bool) -> None:
    exercise(buf, lenient)


@settings(max_examples=3_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.binary(max_size=300), st.booleans())
def test_fuzz_raw_bytes(buf: bytes, lenient: bool) -> None:
    exercise(buf, lenient)


_KEYS = (None, b"", b"k", b"\x00\x00\x00\x03")
_HEADERS: tuple[list[tuple[str, bytes | None]], ...] = ([], [("h", b"x")], [("", None), ("\u00e9", b"")])
_TS_DELTAS = (0, 0, 0, 1, -1, 2**40, -(2**40))
_OFFSET_DELTAS = (1, 2, 63, 64, 8191, 8192, 10_000)


@st.composite
def record_areas(draw: st.DrawFn) -> tuple[bytes, int, int]:
    """A records area (valid records with a few random edits, or random bytes), a record count
    that may disagree with it, and a codec."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    n = rnd.randint(0, 6)
    if rnd.random() < 0.5:
        area = bytearray()
        for i in range(n):
            value = None if rnd.random() < 0.1 else rnd.randbytes(rnd.choice((0, 1, 10, 63, 64, 80)))
            area += encode_record(
                rnd.choice(_OFFSET_DELTAS) if i else 0,
                rnd.choice(_KEYS),
                value,
                rnd.choice(_TS_DELTAS),
                rnd.choice(_HEADERS),
            )
        body = mutate(bytes(area), rnd) if area and rnd.random() < 0.7 else bytes(area)
    else:
        body = rnd.randbytes(rnd.randint(0, 120))
    count = n + rnd.choice((0, 0, 0, -1, 1, -5))
    return body, count, rnd.randrange(5)


@FUZZ
@given(record_areas())
def test_fuzz_record_decoders(case: tuple[bytes, int, int]) -> None:
    body, count, codec = case
    area = compress_records(codec, body) if codec else body
    tail = struct.pack(">hiqqqhii", codec, max(count - 1, 0), T0, T0, -1, -1, -1, count) + area
    raw = struct.pack(">qiibI", 7, len(tail) + 9, 1, 2, crc32c(tail)) + tail
    fast = slow = None
    try:
        fast = RecordBatch.parse(raw, source="r").entries()
    except DecodeError as e:
        assert e.source == "r"
    with contextlib.suppress(DecodeError):
        slow = RecordBatch.parse(raw, source="r").records()
    if fast is None or slow is None:
        assert fast is None and slow is None  # both decoders reject the same inputs
    else:
        assert [(r.offset, r.timestamp, r.key, r.value) for r in slow] == fast
    exercise(raw, False)


@settings(max_examples=2_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text(max_size=200))
def test_fuzz_properties_never_raise(text: str) -> None:
    props = parse_properties(text)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in props.items())


# -- batch headers ----------------------------------------------------------------------------------

#: (name, struct format, byte offset) of every header field a fuzzer may rewrite.
_HEADER_FIELDS = (
    ("baseOffset", ">q", 0),
    ("batchLength", ">i", 8),
    ("partitionLeaderEpoch", ">i", 12),
    ("magic", ">b", 16),
    ("attributes", ">h", 21),
    ("lastOffsetDelta", ">i", 23),
    ("baseTimestamp", ">q", 27),
    ("maxTimestamp", ">q", 35),
    ("producerId", ">q", 43),
    ("producerEpoch", ">h", 51),
    ("baseSequence", ">i", 53),
    ("recordsCount", ">i", 57),
)
_EXTREMES = {
    "b": (-128, -1, 0, 1, 2, 3, 127),
    "h": (-32768, -1, 0, 1, 7, 8, 0x20, 0x27, 0x40, 32767),
    "i": (-(2**31), -1, 0, 1, 13, 14, 60, 61, 2**24, 2**31 - 1),
    "q": (-(2**63), -1, 0, 1, 2**24, 2**48, 2**63 - 1),
}


@st.composite
def header_edits(draw: st.DrawFn) -> bytes:
    """A real batch sequence with 1-3 header fields of one batch set to edge values (or any value),
    CRC resealed most of the time so the edit is what the reader judges."""
    seed = bytearray(draw(st.sampled_from(SEEDS)))
    starts = [b.position for b in iter_batches(bytes(seed), warn=lambda w: None)] or [0]
    at = draw(st.sampled_from(starts))
    for _ in range(draw(st.integers(1, 3))):
        _name, fmt, off = draw(st.sampled_from(_HEADER_FIELDS))
        code = fmt[-1]
        bits = struct.calcsize(fmt) * 8
        value = draw(st.sampled_from(_EXTREMES[code]) | st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
        if at + off + struct.calcsize(fmt) <= len(seed):
            struct.pack_into(fmt, seed, at + off, value)
    return reseal(bytes(seed)) if draw(st.integers(0, 3)) else bytes(seed)


@settings(max_examples=4_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(header_edits(), st.booleans())
def test_fuzz_batch_headers(buf: bytes, lenient: bool) -> None:
    """Lying lengths, counts, offsets, codecs and magics: typed errors or warnings, located."""
    exercise(buf, lenient)


# -- compressed payloads ----------------------------------------------------------------------------


@st.composite
def compressed_batches(draw: st.DrawFn) -> tuple[bytes, int]:
    """A batch of codec 1-4 whose records area is a real compressed stream with edits, a stream of
    the wrong codec, a stream that inflates past the cap in force, or random bytes; CRC valid."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    codec = rnd.randint(1, 4)
    records = b"".join(encode_record(i, None, rnd.randbytes(rnd.randint(0, 40))) for i in range(3))
    choice = rnd.randrange(4)
    if choice == 0:
        area = mutate(compress_records(codec, records), rnd)
    elif choice == 1:
        area = compress_records(rnd.choice([c for c in range(1, 5) if c != codec]), records)
    elif choice == 2:
        area = compress_records(codec, bytes(_FUZZ_CAP + rnd.randint(1, 4096)))
    else:
        area = rnd.randbytes(rnd.randint(0, 200))
    tail = struct.pack(">hiqqqhii", codec, 2, T0, T0, -1, -1, -1, 3) + area
    return struct.pack(">qiibI", 0, len(tail) + 9, 1, 2, crc32c(tail)) + tail, codec


_FUZZ_CAP = 64 * 1024


@settings(max_examples=2_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(compressed_batches())
def test_fuzz_compressed_payloads(case: tuple[bytes, int]) -> None:
    """Every codec's decoder meets broken, foreign and oversized streams: a located DecodeError or
    the records, never more than the cap inflated."""
    raw, _codec = case
    saved = LIMITS.max_inflated_bytes
    LIMITS.max_inflated_bytes = _FUZZ_CAP
    try:
        try:
            data = RecordBatch.parse(raw, source="c").records_data()
            assert len(data) <= _FUZZ_CAP
        except DecodeError as e:
            assert e.source == "c" and e.offset == 0
        exercise(raw, False)
    finally:
        LIMITS.max_inflated_bytes = saved


# -- directory layouts ------------------------------------------------------------------------------

_SMALL_FILES = {
    "quorum-state": (
        b'{"leaderId":1,"leaderEpoch":2,"votedId":-1,"currentVoters":[{"voterId":1}],"data_version":0}',
        b"{",
        b"[]",
        b'{"leaderEpoch":"x"}',
        b"[" * 5000,
        b"\xff\xfe",
    ),
    "../meta.properties": (
        b"version=1\ncluster.id=abc\nnode.id=1\n",
        b"\x00\x01garbage",
        b"node.id=x\n",
        b"",
    ),
    "leader-epoch-checkpoint": (b"0\n1\n0 0\n", b"x\ny\n", b"0\n5\n1 2\n"),
    "partition.metadata": (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n", b"\x00"),
}
_NAMES = (
    "{:020d}.log",
    "{:020d}-{:010d}.checkpoint",
    "{:020d}.log.deleted",
    "{:020d}-{:010d}.checkpoint.part",
    "{:019d}.log",
    "{:020d}.index",
    "{:020d}.snapshot",
)


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, object]:
    """A __cluster_metadata-0 folder: segments and snapshots named right or nearly right, holding
    real batches, mutated batches, truncations or nothing, plus small files intact or garbage, and
    a directory where a file is expected."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    files: dict[str, object] = {}
    for _ in range(rnd.randint(0, 6)):
        name = rnd.choice(_NAMES).format(rnd.choice((0, 3, 11, 12, 2**40)), rnd.randint(0, 3))
        seed = rnd.choice(SEEDS)
        content = rnd.choice(
            (
                seed,
                mutate(seed, rnd),
                reseal(mutate(seed, rnd)),
                seed[: rnd.randrange(len(seed) + 1)],
                b"",
                bytes(rnd.randint(1, 200)),
            )
        )
        files[name] = None if rnd.random() < 0.05 else content  # None: a directory of that name
    for name, variants in _SMALL_FILES.items():
        if rnd.random() < 0.6:
            files[name] = rnd.choice(variants)
    return files


def _snapshot_of(root: Path) -> dict[str, tuple[int, int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mode, p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(layouts(), st.booleans())
def test_fuzz_directory_layouts(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, object], salvage: bool
) -> None:
    """Whatever a directory holds, loading it raises nothing but a one-line MetashellError, and
    leaves every file and folder exactly as it was."""
    root = tmp_path_factory.mktemp("layout")
    part = root / "__cluster_metadata-0"
    part.mkdir()
    for name, content in files.items():
        path = (part / name).resolve()
        if content is None:
            path.mkdir(exist_ok=True)
        elif not path.is_dir():
            path.write_bytes(content)  # type: ignore[arg-type]
    before = _snapshot_of(root)
    try:
        result = load_directory(root, salvage=salvage)
    except MetashellError as e:
        assert "\n" not in str(e)
    else:
        for w in result.warnings:
            assert "\n" not in str(w)
    assert _snapshot_of(root) == before
