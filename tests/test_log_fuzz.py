"""Fuzzing the batch iterator and the record decoders: only typed DecodeErrors may escape.

Random bytes almost never get past the CRC, so the mutations start from real batches (Kafka's test
vectors when ../shared is present, plus synthetic batches in every codec) and, half of the time,
re-seal every batch's CRC so the mutated bytes reach the decompressors and the record parser.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metashell.errors import DecodeError
from metashell.log.batch import HEADER_SIZE, RecordBatch
from metashell.log.compression import compress_records
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
        seeds.append(build_batch(0, 1, vals, T0, compression=codec)
                     + build_batch(11, 1, [(b"k", b"v", [("h", b"x")])], T0 + 5, compression=codec))
    seeds.append(build_batch(0, 1, [(b"\x00\x00\x00\x03", b"\x00\x00" + bytes(9))], T0, control=True)
                 + build_batch(1, 1, vals[:3], T0) + bytes(64))
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
        struct.pack_into(">I", b, pos + 17, crc32c(bytes(b[pos + 21:pos + size])))
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
            del b[i:i + rnd.randint(1, 8)]
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
_HEADERS = ([], [("h", b"x")], [("", None), ("\u00e9", b"")])
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
            area += encode_record(rnd.choice(_OFFSET_DELTAS) if i else 0, rnd.choice(_KEYS), value,
                                  rnd.choice(_TS_DELTAS), rnd.choice(_HEADERS))
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
    try:
        slow = RecordBatch.parse(raw, source="r").records()
    except DecodeError:
        pass
    if fast is None or slow is None:
        assert fast is None and slow is None  # both decoders reject the same inputs
    else:
        assert [(r.offset, r.timestamp, r.key, r.value) for r in slow] == fast
    exercise(raw, False)


@settings(max_examples=2_000, deadline=None)
@given(st.text(max_size=200))
def test_fuzz_properties_never_raise(text: str) -> None:
    props = parse_properties(text)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in props.items())
