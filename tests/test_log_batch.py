"""Record batches: Kafka's test vectors, codecs in Kafka's framing, iteration rules, encoder."""

from __future__ import annotations

import gzip
import os
import re
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import cramjam
import pytest
from crc32c import crc32c

from metashell.errors import DecodeError
from metashell.log.batch import HEADER_SIZE, RecordBatch
from metashell.log.compression import compress_records, decompress_records
from metashell.log.encoding import build_batch, encode_record
from metashell.log.files import iter_file_batches, read_batch_at
from metashell.log.problems import CorruptBatchError, LogWarning
from metashell.log.records import Record
from metashell.log.scan import iter_batches
from metashell.protocol.wire import encode_varint, read_varint, read_varlong

SHARED = Path(__file__).resolve().parents[2] / "shared"
VECTORS = SHARED / "reference" / "test-vectors"
needs_vectors = pytest.mark.skipif(not VECTORS.is_dir(), reason="../shared/reference/test-vectors is absent")
T0 = 1_700_000_000_000


def collect(buf: bytes, **kw: Any) -> tuple[list[RecordBatch], list[LogWarning]]:
    warnings: list[LogWarning] = []
    return list(iter_batches(buf, "test.log", warn=warnings.append, **kw)), warnings


def values(n: int, size: int = 40) -> list[bytes]:
    return [bytes([i % 251]) * size for i in range(n)]


# ------------------------------------------------------------------------------------------ varints


@pytest.mark.parametrize("n", [0, 1, -1, 63, -64, 64, 8191, -8192, 8192, 2**31 - 1, -(2**31)])
def test_varint_round_trip(n: int) -> None:
    enc = encode_varint(n)
    assert read_varint(enc, 0) == (n, len(enc))
    assert read_varlong(enc, 0) == (n, len(enc))


@pytest.mark.parametrize("n", [2**31, -(2**31) - 1, 2**63 - 1, -(2**63)])
def test_varlong_round_trip(n: int) -> None:
    enc = encode_varint(n)
    assert read_varlong(enc, 0) == (n, len(enc))


def test_varint_known_encodings() -> None:
    # zigzag: 0->0, -1->1, 1->2, -2->3; LEB128 groups of 7 bits, low first
    assert encode_varint(0) == b"\x00"
    assert encode_varint(-1) == b"\x01"
    assert encode_varint(1) == b"\x02"
    assert encode_varint(29) == b"\x3a"
    assert encode_varint(64) == b"\x80\x01"


def test_varint_too_long_is_a_decode_error() -> None:
    buf = build_batch(0, 1, [b"v"], T0)
    # replace the record length varint by 6 continuation bytes: Kafka's "Varint is too long"
    bad = bytearray(buf[:HEADER_SIZE]) + b"\xff" * 6 + b"\x00" * 8
    struct.pack_into(">i", bad, 8, len(bad) - 12)
    struct.pack_into(">I", bad, 17, crc32c(bytes(bad[21:])))
    with pytest.raises(CorruptBatchError, match="varint is longer than 5 bytes"):
        collect(bytes(bad))


# ------------------------------------------------------------------------------------------ Kafka's vectors

_BATCH_RE = re.compile(r"^\s*BATCH (.*)$")
_RECORD_RE = re.compile(r"^\s*RECORD offset=(\d+) timestamp=(\d+) sizeInBytes=(\d+) value=([0-9a-f]*)$")
_KEY_RE = re.compile(r"key=([0-9a-f]+)")


def expected_decoding() -> dict[str, list[dict[str, Any]]]:
    """expected-file-decoding.txt as {file: [batch fields + "records": [...]]}."""
    files: dict[str, list[dict[str, Any]]] = {}
    current: list[dict[str, Any]] = []
    for line in (VECTORS / "expected-file-decoding.txt").read_text().splitlines():
        if line.startswith("FILE "):
            current = files.setdefault(line[5:].strip(), [])
        elif m := _BATCH_RE.match(line):
            fields: dict[str, Any] = dict(kv.split("=", 1) for kv in m.group(1).split())
            fields["records"] = []
            current.append(fields)
        elif m := _RECORD_RE.match(line):
            current[-1]["records"].append(
                {
                    "offset": int(m.group(1)),
                    "timestamp": int(m.group(2)),
                    "size": int(m.group(3)),
                    "value": bytes.fromhex(m.group(4)),
                }
            )
        elif "-> CONTROL" in line:
            current[-1]["records"][-1]["key"] = bytes.fromhex(_KEY_RE.search(line).group(1))
    return files


@needs_vectors
def test_vectors_decode_exactly_as_kafka() -> None:
    expected = expected_decoding()
    assert len(expected) == 4
    for rel, batches in expected.items():
        warnings: list[LogWarning] = []
        got = list(iter_file_batches(VECTORS / rel, warn=warnings.append))
        assert warnings == []
        assert len(got) == len(batches), rel
        position = 0
        for b, exp in zip(got, batches, strict=True):
            assert b.position == position
            position += b.size
            crc_dec, crc_hex = re.match(r"(\d+)\((0x[0-9a-f]+)\)", exp["crc"]).groups()
            assert (b.base_offset, b.last_offset, b.size) == (
                int(exp["baseOffset"]),
                int(exp["lastOffset"]),
                int(exp["sizeInBytes"]),
            )
            assert b.partition_leader_epoch == int(exp["partitionLeaderEpoch"])
            assert b.magic == int(exp["magic"]) == 2
            assert b.crc == int(crc_dec) == int(crc_hex, 16)
            assert b.crc_valid() is (exp["valid"] == "true")
            assert b.compression_name == exp["compression"]
            assert b.timestamp_type_name == exp["timestampType"]
            assert str(b.is_transactional).lower() == exp["transactional"]
            assert str(b.is_control).lower() == exp["control"]
            assert b.max_timestamp == int(exp["maxTimestamp"])
            assert (b.producer_id, b.producer_epoch, b.base_sequence) == (
                int(exp["producerId"]),
                int(exp["producerEpoch"]),
                int(exp["baseSequence"]),
            )
            assert b.records_count == int(exp["count"])
            assert b.kraft_anomalies() == []
            entries = b.entries()
            records = b.records()
            assert len(entries) == len(records) == len(exp["records"])
            for (off, ts, key, value), r, er in zip(entries, records, exp["records"], strict=True):
                assert (off, ts, value) == (er["offset"], er["timestamp"], er["value"])
                assert key == er.get("key")  # data records have a null key
                assert (r.offset, r.timestamp, r.key, r.value, r.headers) == (off, ts, key, value, [])
                assert r.size == er["size"]


@needs_vectors
def test_worked_example_header_fields() -> None:
    """FORMATS.md 2.1: the first 91-byte batch of the test log, field by field."""
    raw = (VECTORS / "metadata-log-dir/__cluster_metadata-0/00000000000000000000.log").read_bytes()[:91]
    b = RecordBatch.parse(raw, source="example")
    assert (b.base_offset, b.batch_length, b.partition_leader_epoch, b.magic, b.crc, b.attributes) == (
        0,
        79,
        1,
        2,
        0x1154EAF9,
        0x0020,
    )
    assert (b.last_offset_delta, b.base_timestamp, b.max_timestamp) == (0, T0, T0)
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.records_count) == (-1, -1, -1, 1)
    assert b.is_control and not b.is_transactional and b.compression == 0 and b.timestamp_type == 0
    assert b.raw() == raw
    assert b.entries() == [
        (0, T0, bytes.fromhex("00000002"), bytes.fromhex("00000000000102000000010002000000010000"))
    ]


@needs_vectors
def test_encoder_matches_kafka_byte_for_byte() -> None:
    """build_batch re-encodes every vector batch (uncompressed, and Kafka's gzip one) identically."""
    files = [
        *(VECTORS / "metadata-log-dir/__cluster_metadata-0").glob("*.log"),
        *(VECTORS / "metadata-log-dir/__cluster_metadata-0").glob("*.checkpoint"),
        VECTORS / "misc/gzip-compressed-batch.bin",
    ]
    n = 0
    for f in files:
        for b in iter_file_batches(f):
            recs: list[Any] = [(k, v) if b.is_control else v for _, _, k, v in b.entries()]
            rebuilt = build_batch(
                b.base_offset, b.partition_leader_epoch, recs, b.base_timestamp, b.is_control, b.compression
            )
            assert rebuilt == b.raw(), (f.name, b.position)
            n += 1
    assert n == 10


@needs_vectors
def test_gzip_vector() -> None:
    raw = (VECTORS / "misc/gzip-compressed-batch.bin").read_bytes()
    (b,), w = collect(raw)
    assert w == [] and b.compression_name == "gzip" and b.size == 122 == len(raw)
    assert raw[HEADER_SIZE : HEADER_SIZE + 10] == bytes.fromhex("1f8b08000000000000ff")  # Java's header
    assert [e[0] for e in b.entries()] == [0, 1]
    assert b.entries()[1][3] == bytes.fromhex("01140000")  # NoOpRecord


def test_crc32c_check_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283


# ------------------------------------------------------------------------------------------ codecs


def kafka_gzip(data: bytes) -> bytes:
    """java.util.zip.GZIPOutputStream framing (header 1f8b08 00 00000000 00 ff)."""
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return (
        bytes.fromhex("1f8b08000000000000ff")
        + c.compress(data)
        + c.flush()
        + struct.pack("<II", zlib.crc32(data), len(data))
    )


def kafka_snappy(data: bytes, block: int = 32 * 1024) -> bytes:
    """snappy-java SnappyOutputStream: magic, version 1, compatible 1, then (int32 BE len, raw block)*."""
    out = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    for i in range(0, len(data), block):
        comp = bytes(cramjam.snappy.compress_raw(data[i : i + block]))
        out += struct.pack(">i", len(comp)) + comp
    return out


def kafka_lz4(data: bytes, raw_blocks: bool = False) -> bytes:
    """Kafka's Lz4BlockOutputStream: magic, FLG 0x60, BD 0x40, HC 0x82 (xxh32 of 60 40 >> 8), 64 KiB
    blocks (uncompressed ones flagged with the high bit), end mark 0."""
    out = bytes.fromhex("04224d18604082")
    for i in range(0, len(data), 65536):
        chunk = data[i : i + 65536]
        if raw_blocks:
            out += struct.pack("<I", len(chunk) | 0x80000000) + chunk
        else:
            comp = bytes(cramjam.lz4.compress_block(chunk, store_size=False))
            out += struct.pack("<I", len(comp)) + comp
    return out + b"\x00\x00\x00\x00"


def kafka_zstd(data: bytes) -> bytes:
    return bytes(cramjam.zstd.compress(data))


def batch_with_area(codec: int, area: bytes, records_plain: bytes, count: int, base: int = 5) -> bytes:
    tail = struct.pack(">hiqqqhii", codec, count - 1, T0, T0, -1, -1, -1, count) + area
    return struct.pack(">qiibI", base, len(tail) + 9, 3, 2, crc32c(tail)) + tail


CODECS = {1: kafka_gzip, 2: kafka_snappy, 3: kafka_lz4, 4: kafka_zstd}


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
@pytest.mark.parametrize("n", [1, 3, 2000])  # 2000 x 60 bytes spans several snappy/lz4 blocks
def test_compressed_batches_round_trip(codec: int, n: int) -> None:
    vals = values(n, 60)
    plain = b"".join(encode_record(i, None, v) for i, v in enumerate(vals))
    raw = batch_with_area(codec, CODECS[codec](plain), plain, n)
    (b,), w = collect(raw)
    assert w == []
    assert b.compression == codec and b.records_data() == plain
    assert b.entries() == [(5 + i, T0, None, v) for i, v in enumerate(vals)]
    assert [r.value for r in b.records()] == vals
    # and our own encoder produces what our decoder (and the test's framing) agree on
    ours = build_batch(5, 3, vals, T0, compression=codec)
    (b2,), _ = collect(ours)
    assert b2.entries() == b.entries()
    assert decompress_records(codec, compress_records(codec, plain)) == plain


def test_lz4_incompressible_blocks_and_python_gzip() -> None:
    data = bytes(range(256)) * 700
    assert decompress_records(3, kafka_lz4(data, raw_blocks=True)) == data
    assert decompress_records(1, gzip.compress(data)) == data  # any valid gzip stream (OS byte 255)
    assert compress_records(3, data)[:7] == bytes.fromhex("04224d18604082")


def test_snappy_without_xerial_header_is_a_raw_block() -> None:
    data = b"abc" * 1000
    assert decompress_records(2, bytes(cramjam.snappy.compress_raw(data))) == data


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_garbage_compressed_area_is_a_decode_error(codec: int) -> None:
    raw = batch_with_area(
        codec, b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x05junk!", b"", 1
    )
    with pytest.raises(CorruptBatchError, match="do not decompress") as e:
        collect(raw)
    assert e.value.source == "test.log" and e.value.offset == 0


def test_unknown_codec_is_corrupt() -> None:
    raw = batch_with_area(5, b"", b"", 0)
    with pytest.raises(CorruptBatchError, match="unknown compression type 5"):
        collect(raw)


# ------------------------------------------------------------------------------------------ iteration


def three_batches() -> list[bytes]:
    return [
        build_batch(0, 1, values(3), T0),
        build_batch(3, 1, values(2), T0 + 1),
        build_batch(5, 2, values(4), T0 + 2),
    ]


def test_iterates_batches_and_positions() -> None:
    parts = three_batches()
    got, w = collect(b"".join(parts))
    assert w == []
    assert [b.base_offset for b in got] == [0, 3, 5]
    assert [b.position for b in got] == [0, len(parts[0]), len(parts[0]) + len(parts[1])]
    assert [b.last_offset for b in got] == [2, 4, 8]
    assert got[2].partition_leader_epoch == 2 and got[1].max_timestamp == T0 + 1
    assert all(b.source == "test.log" for b in got)


@pytest.mark.parametrize("extra", [1, 5, 17])
def test_seventeen_or_fewer_trailing_bytes_end_the_data(extra: int) -> None:
    """As Kafka's FileLogInputStream: the data ends there; metashell says so (a cut-off write)."""
    data = b"".join(three_batches())
    got, w = collect(data + b"\x07" * extra)
    assert len(got) == 3 and [(x.kind, x.position) for x in w] == [("torn-tail", len(data))]


def test_zero_filled_tail_is_end_of_data() -> None:
    got, w = collect(b"".join(three_batches()) + bytes(4096))
    assert len(got) == 3 and w == []


def test_zero_length_followed_by_data_is_corrupt() -> None:
    data = b"".join(three_batches()) + bytes(100) + b"\x01" + bytes(20)
    with pytest.raises(CorruptBatchError, match="smaller than the minimum"):
        collect(data)


@pytest.mark.parametrize("cut", [18, 30, 60, 61, 80])
def test_torn_tail_is_a_warning(cut: int) -> None:
    parts = three_batches()
    data = parts[0] + parts[1] + parts[2][:cut]
    got, w = collect(data)
    assert [b.base_offset for b in got] == [0, 3]
    assert len(w) == 1 and w[0].kind == "torn-tail"
    assert w[0].source == "test.log" and w[0].position == len(parts[0]) + len(parts[1])
    assert "test.log: byte offset" in str(w[0])


def corrupt_at(data: bytes, index: int, xor: int = 0x55) -> bytes:
    b = bytearray(data)
    b[index] ^= xor
    return bytes(b)


def test_bad_crc_in_the_middle_names_file_and_offset(tmp_path: Path) -> None:
    parts = three_batches()
    pos = len(parts[0])
    data = corrupt_at(b"".join(parts), pos + 70)  # inside the second batch's records
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(data)
    for lenient in (False, True):  # something follows it: an error even in the last segment
        with pytest.raises(CorruptBatchError) as e:
            list(iter_file_batches(f, lenient_tail=lenient))
        assert e.value.source == str(f) and e.value.offset == pos
        assert "CRC mismatch" in str(e.value)
        assert str(e.value).startswith(f"{f}: byte offset {pos}: batch at base offset 3")
        assert isinstance(e.value, DecodeError)


@pytest.mark.parametrize("where,match", [(16, "unsupported magic"), (8, "batch length"), (70, "CRC")])
def test_bad_last_batch(where: int, match: str) -> None:
    parts = three_batches()
    pos = len(parts[0]) + len(parts[1])
    data = corrupt_at(b"".join(parts), pos + where, 0x80 if where == 8 else 0x55)
    with pytest.raises(CorruptBatchError, match=match):
        collect(data)
    got, w = collect(data, lenient_tail=True)
    assert [b.base_offset for b in got] == [0, 3]
    assert len(w) == 1 and w[0].position == pos and w[0].kind in ("corrupt-tail", "torn-tail")


def test_bad_last_batch_followed_by_zero_fill_is_a_tail() -> None:
    parts = three_batches()
    data = corrupt_at(b"".join(parts), len(parts[0]) + len(parts[1]) + 70) + bytes(1000)
    got, w = collect(data, lenient_tail=True)
    assert len(got) == 2 and [x.kind for x in w] == ["corrupt-tail"]


def test_small_batch_length_is_corrupt() -> None:
    data = bytearray(build_batch(0, 1, values(1), T0))
    struct.pack_into(">i", data, 8, 13)
    with pytest.raises(CorruptBatchError, match="batch length 13 is smaller than the minimum 14"):
        collect(bytes(data))
    struct.pack_into(">i", data, 8, 30)  # >= 14 but too small for a v2 header
    with pytest.raises(CorruptBatchError, match="too small"):
        collect(bytes(data))


def fix_crc(data: bytearray, pos: int = 0) -> bytes:
    size = struct.unpack_from(">i", data, pos + 8)[0] + 12
    struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : pos + size])))
    return bytes(data)


def test_record_that_does_not_parse_is_located() -> None:
    first = build_batch(0, 1, values(1), T0)
    second = bytearray(build_batch(1, 1, values(2, 40), T0))
    second[HEADER_SIZE + 5] = 0x7E  # the first record's value length: 63 instead of 40
    data = first + fix_crc(second) + build_batch(3, 1, values(1), T0)
    with pytest.raises(CorruptBatchError, match="record 0") as e:
        collect(data)
    assert e.value.offset == len(first) + HEADER_SIZE  # the record's own byte offset in the file


def test_record_count_mismatch() -> None:
    data = bytearray(build_batch(0, 1, values(3), T0))
    struct.pack_into(">i", data, 57, 2)
    with pytest.raises(CorruptBatchError, match="bytes left after the last of 2 records"):
        collect(fix_crc(data))
    struct.pack_into(">i", data, 57, 4)
    with pytest.raises(CorruptBatchError, match="record 3"):
        collect(fix_crc(data))


def test_crc_not_verified_when_asked() -> None:
    data = corrupt_at(build_batch(0, 1, values(1), T0), 17)  # the stored crc itself
    got, _ = collect(data, verify_crc=False)
    assert len(got) == 1 and not got[0].crc_valid()


def test_header_only_scan_does_not_decode() -> None:
    data = bytearray(build_batch(0, 1, values(2), T0))
    data[HEADER_SIZE] = 0x7F  # record length far too large
    got, _ = collect(fix_crc(data), decode=False)
    assert len(got) == 1
    with pytest.raises(CorruptBatchError):
        got[0].entries()


def test_base_position_offsets_positions() -> None:
    got, _ = collect(b"".join(three_batches()), base_position=1000)
    assert got[0].position == 1000


def test_chunked_file_reading_matches_in_memory(tmp_path: Path) -> None:
    parts = [build_batch(i * 50, 1, values(50, 100), T0 + i) for i in range(40)]
    data = b"".join(parts)
    f = tmp_path / "x.log"
    f.write_bytes(data + parts[0][:100])  # torn tail too
    w1: list[LogWarning] = []
    small = [
        (b.position, b.entries())
        for b in iter_file_batches(f, chunk_size=4096, warn=w1.append, lenient_tail=True)
    ]
    w2: list[LogWarning] = []
    big = [(b.position, b.entries()) for b in iter_batches(f.read_bytes(), str(f), warn=w2.append)]
    assert small == big and len(small) == 40
    assert w1 == w2 and w1[0].position == len(data)
    middle = small[17][0]
    assert read_batch_at(f, middle).base_offset == 17 * 50
    assert read_batch_at(f, len(data)) is None  # the torn batch
    again = iter_file_batches(f, position=middle, warn=w1.append, lenient_tail=True)
    assert [b.base_offset for b in again][:2] == [850, 900]
    with pytest.raises(CorruptBatchError, match="cut off"):  # not the last segment: damage
        list(iter_file_batches(f, chunk_size=4096, warn=w1.append))


# ------------------------------------------------------------------------------------------ records


def test_records_with_keys_headers_and_log_append_time() -> None:
    recs = [(b"k1", b"v1", [("h", b"x"), ("n", None)]), (None, None), (b"", b"")]
    data = bytearray(build_batch(10, 1, recs, T0, attributes=0x08))  # LogAppendTime
    struct.pack_into(">q", data, 35, T0 + 99)  # maxTimestamp
    (b,), _ = collect(fix_crc(data))
    assert b.timestamp_type_name == "LogAppendTime"
    assert b.entries() == [(10, T0 + 99, b"k1", b"v1"), (11, T0 + 99, None, None), (12, T0 + 99, b"", b"")]
    assert b.records() == [
        Record(10, T0 + 99, b"k1", b"v1", [("h", b"x"), ("n", None)]),
        Record(11, T0 + 99, None, None),
        Record(12, T0 + 99, b"", b""),
    ]
    problems = b.kraft_anomalies()
    assert "2 data record(s) with a non-null key" in problems
    assert "2 record(s) with a null or empty value" in problems
    assert "1 record(s) with headers" in problems


def test_timestamp_deltas_and_long_varints() -> None:
    body = encode_record(0, None, b"a" * 300, timestamp_delta=-5) + encode_record(
        20000, None, b"b", timestamp_delta=2**40
    )
    data = batch_with_area(0, body, body, 2)
    (b,), _ = collect(data)
    assert b.entries() == [(5, T0 - 5, None, b"a" * 300), (20005, T0 + 2**40, None, b"b")]
    assert b.records()[1].offset == 20005
    assert any("timestamp delta" in p for p in b.kraft_anomalies())


def test_control_batch_invariants() -> None:
    ok = build_batch(0, 1, [(b"\x00\x00\x00\x02", b"\x00\x00")], T0, control=True)
    (b,), _ = collect(ok)
    assert b.is_control and b.kraft_anomalies() == []
    bad = build_batch(0, 1, [b"no key"], T0, control=True)
    (b,), _ = collect(bad)
    assert b.kraft_anomalies() == ["1 control record(s) without a key"]


def test_parse_single_batch_errors() -> None:
    with pytest.raises(CorruptBatchError, match="cannot hold a batch header"):
        RecordBatch.parse(b"\x00" * 20, source="s")
    data = corrupt_at(build_batch(0, 1, values(1), T0), 40)
    with pytest.raises(CorruptBatchError, match="CRC mismatch"):
        RecordBatch.parse(data, source="s")


def test_tails_across_chunk_boundaries(tmp_path: Path) -> None:
    """Zero fill and a bad last batch are judged on the whole file, not on the chunk in memory."""
    parts = [build_batch(i * 20, 1, values(20, 200), T0) for i in range(10)]
    good = b"".join(parts[:9])
    bad = corrupt_at(parts[9], 100)
    f = tmp_path / "s.log"
    for tail, lenient, outcome in [
        (bytes(20000), True, ("end", 9)),  # a pre-allocated last segment
        (bytes(20000), False, ("error", 9)),  # Kafka trims a segment when it rolls it
        (bytes(20000) + b"\x01" + bytes(30), False, ("error", 9)),
        (bad + bytes(20000), True, ("corrupt-tail", 9)),
        (bad + bytes(20000), False, ("error", 9)),
        (bad + parts[0], True, ("error", 9)),
    ]:
        f.write_bytes(good + tail)
        w: list[LogWarning] = []
        got: list[RecordBatch] = []
        try:
            got.extend(iter_file_batches(f, chunk_size=4096, lenient_tail=lenient, warn=w.append))
            kind = w[0].kind if w else "end"
        except CorruptBatchError as e:
            kind = "error"
            assert e.offset == len(good)
        assert (kind, len(got)) == outcome, tail[:4]


def test_the_python_engines_checksum_is_the_crc32c_packages_loaded_without_its_init() -> None:
    """``log/checksum.py`` loads the package's C module from its file (its ``__init__`` imports
    ``importlib.metadata``: about 50 ms of a start); the function is the package's own, a later
    ``import crc32c`` finds the module loaded, and ``importlib.metadata`` was never imported."""
    script = (
        "import sys\n"
        "from metashell.log.checksum import package_crc32c\n"
        "fn = package_crc32c()\n"
        "print(fn(b'123456789'), 'importlib.metadata' in sys.modules)\n"
        "import crc32c\n"
        "print(crc32c.crc32c is fn)\n"
    )
    env = {**os.environ, "METASHELL_ENGINE": "python"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == [str(0xE3069283), "False", "True"]  # RFC 3720's check value


def test_the_checksum_falls_back_to_importing_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``crc32c`` package laid out otherwise (no ``_crc32c`` module beside its ``__init__``) is
    imported as usual."""
    from metashell.log import checksum

    monkeypatch.delitem(sys.modules, "crc32c._crc32c", raising=False)
    monkeypatch.setattr(checksum, "_load_c_module", lambda: None)
    assert checksum.package_crc32c() is crc32c
