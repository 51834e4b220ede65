"""Schema-driven codecs against the bytes Kafka's own classes produced (reference test vectors)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metashell.errors import DecodeError
from metashell.protocol import messages, registry
from metashell.protocol.control import decode_control_record, encode_control_record
from metashell.protocol.metadata import (
    UnknownRecordType,
    decode_metadata_record,
    encode_metadata_record,
    record_types,
)
from metashell.protocol.schema import bundled_schemas, load_schema_file
from metashell.protocol.uuid import uuid_from_str, uuid_to_str

SHARED = Path(__file__).resolve().parents[2] / "shared"
VECTORS = SHARED / "reference" / "test-vectors"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared (reference pack) is absent")


def _vector_lines(name: str, prefix: str) -> list[tuple[str, str]]:
    text = (VECTORS / name).read_text()
    return re.findall(rf"^{prefix} (\S+).*?(?:hex|frame)=([0-9a-f]+)", text, re.MULTILINE)


@needs_shared
def test_every_metadata_record_vector_round_trips() -> None:
    vectors = _vector_lines("metadata-record-values.txt", r"(?:\w+)")
    rows = re.findall(
        r"^(\w+) v(\d+) size=\d+ hex=([0-9a-f]+)",
        (VECTORS / "metadata-record-values.txt").read_text(),
        re.MULTILINE,
    )
    assert len(rows) >= 12 and vectors
    for label, version, hexed in rows:
        raw = bytes.fromhex(hexed)
        rec = decode_metadata_record(raw)
        assert label.startswith((rec.name.replace("Record", ""), rec.name))
        assert rec.version == int(version)
        assert encode_metadata_record(rec.name, rec.version, rec.data) == raw, label


@needs_shared
def test_partition_record_v2_elr_fields() -> None:
    text = (VECTORS / "metadata-record-values.txt").read_text()
    hexed = re.search(r"^PartitionRecordELR v2 size=\d+ hex=([0-9a-f]+)", text, re.MULTILINE).group(1)
    rec = decode_metadata_record(bytes.fromhex(hexed))
    assert rec.data["EligibleLeaderReplicas"] == [2]
    assert rec.data["LastKnownElr"] == []
    assert rec.data["LeaderEpoch"] == 3 and rec.data["PartitionEpoch"] == 5
    assert uuid_to_str(rec.data["TopicId"]) == "ASNFZ4mrze8P7cuph2VDIQ"


@needs_shared
def test_every_wire_frame_round_trips() -> None:
    text = (VECTORS / "wire-frames.txt").read_text()
    rows = re.findall(
        r"^(REQUEST|RESPONSE) (\w+)\S* apiKey=\d+ v(\d+) headerVersion=\d+\n.*\n\s+frame=([0-9a-f]+)",
        text,
        re.MULTILINE,
    )
    assert len(rows) >= 15
    for kind, api, version, hexed in rows:
        frame = bytes.fromhex(hexed)
        v = int(version)
        if kind == "REQUEST":
            got_api, got_v, header, body = messages.decode_request(frame[4:])
            assert (got_api, got_v) == (api, v)
            again = messages.encode_request(api, v, header["CorrelationId"], header["ClientId"], body)
        else:
            corr, body = messages.decode_response(api, v, frame[4:])
            again = messages.encode_response(api, v, corr, body)
        assert again == frame, f"{kind} {api} v{v}"


def test_api_versions_fallback_is_read_as_v0() -> None:
    frame = bytes.fromhex("0000001000000001002300000001001200000003")
    corr, body = messages.decode_response("ApiVersions", 4, frame[4:])
    assert corr == 1 and body["ErrorCode"] == 35
    assert body["ApiKeys"] == [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}]


def test_control_records_match_formats_examples() -> None:
    key, value = encode_control_record(
        "LeaderChange",
        {"Version": 0, "LeaderId": 1, "Voters": [{"VoterId": 1}], "GrantingVoters": [{"VoterId": 1}]},
    )
    assert key == bytes.fromhex("00000002")
    assert value == bytes.fromhex("00000000000102000000010002000000010000")
    ctl = decode_control_record(key, value)
    assert ctl.name == "LeaderChange" and ctl.data is not None and ctl.data["LeaderId"] == 1
    key, value = encode_control_record("SnapshotHeader", {"LastContainedLogTimestamp": 1700000002000})
    assert value == bytes.fromhex("00000000018bcfe56fd000")
    assert encode_control_record("KRaftVersion", {"KRaftVersion": 1})[1] == bytes.fromhex("0000000100")
    assert encode_control_record("SnapshotFooter", {})[1] == bytes.fromhex("000000")


def test_unknown_tags_are_kept() -> None:
    raw = bytes.fromhex("01140000")[:-1] + bytes.fromhex("016302abcd")  # NoOp + tag 99
    rec = decode_metadata_record(raw)
    assert rec.data["_unknown_tags"] == {99: b"\xab\xcd"}
    assert encode_metadata_record("NoOpRecord", 0, rec.data) == raw


def test_unknown_api_key_and_newer_version() -> None:
    with pytest.raises(UnknownRecordType):
        decode_metadata_record(bytes.fromhex("017f0000"))
    # a NoOpRecord "v5" that only differs by tags decodes as the newest known version, as in Kafka
    assert decode_metadata_record(bytes.fromhex("01140500")).name == "NoOpRecord"
    with pytest.raises(DecodeError):
        decode_metadata_record(bytes.fromhex("00140000"))


def test_uuid_text_form() -> None:
    assert uuid_to_str(bytes(16)) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert uuid_to_str(bytes(15) + b"\x01") == "AAAAAAAAAAAAAAAAAAAAAQ"
    assert uuid_from_str("ASNFZ4mrze8P7cuph2VDIQ").hex() == "0123456789abcdef0fedcba987654321"


@settings(max_examples=3000, deadline=None)
@given(
    st.one_of(
        st.binary(min_size=16, max_size=16).map(uuid_to_str),
        st.text(alphabet="AQgw-_+/=. \n\x00é", max_size=26),
        st.text(max_size=26),
    )
)
def test_uuid_parsing_is_base64s_url_safe_decoding(text: str) -> None:
    """``uuid_from_str`` decodes with binascii (base64 stays off the start path): for any text it
    gives what ``base64.urlsafe_b64decode`` gives, or a ValueError where that fails."""
    import base64

    try:
        raw: bytes | None = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raw = None
    if len(text) > 24 or raw is None or len(raw) != 16:
        with pytest.raises(ValueError):
            uuid_from_str(text)
    else:
        assert uuid_from_str(text) == raw


@needs_shared
def test_declarations_match_reference_schemas() -> None:
    """Every reference schema is bundled, and each field agrees for every version the reference knows."""
    bundled = bundled_schemas()
    ref_files = sorted((SHARED / "reference" / "kafka-schemas").rglob("*.json"))
    assert len(ref_files) >= 48
    for path in ref_files:
        ref = load_schema_file(path)
        ours = bundled[ref.name]
        assert ours.api_key == ref.api_key, ref.name
        if ref.type in ("request", "response", "header"):
            # Kafka 4.0 removed old RPC versions (KIP-896); what both know must agree.
            assert ours.valid_versions.lo >= ref.valid_versions.lo, ref.name
        else:
            assert ours.valid_versions.lo == ref.valid_versions.lo, ref.name
        assert ours.valid_versions.hi >= ref.valid_versions.hi, ref.name
        for version in range(ours.valid_versions.lo, ref.valid_versions.hi + 1):
            _same_fields(ref.name, version, ref.fields, ours.fields, ref, ours)


def _same_fields(where: str, version: int, ref_fields: Any, our_fields: Any, ref: Any, ours: Any) -> None:
    ref_present = [f for f in ref_fields if version in f.versions]
    our_present = [f for f in our_fields if version in f.versions]
    assert [f.name for f in ref_present] == [f.name for f in our_present], f"{where} v{version}"
    for a, b in zip(ref_present, our_present, strict=False):
        assert a.type == b.type, f"{where}.{a.name}"
        assert (version in a.nullable_versions) == (version in b.nullable_versions), f"{where}.{a.name}"
        assert a.tagged(version) == b.tagged(version) and (not a.tagged(version) or a.tag == b.tag)
        if a.is_struct:
            _same_fields(
                f"{where}.{a.name}",
                version,
                a.fields or ref.structs[a.element_type],
                b.fields or ours.structs[b.element_type],
                ref,
                ours,
            )


def test_every_metadata_record_version_has_codecs() -> None:
    for key, name in record_types().items():
        spec = registry.spec(name)
        for v in range(spec.valid_versions.lo, spec.valid_versions.hi + 1):
            raw = encode_metadata_record(name, v, {})
            rec = decode_metadata_record(raw)
            assert (rec.api_key, rec.version) == (key, v)


@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_fuzz_metadata_record_decoder(data: bytes) -> None:
    with contextlib.suppress(DecodeError):
        decode_metadata_record(data)


@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(record_types())), st.binary(max_size=120))
def test_fuzz_metadata_record_bodies(key: int, body: bytes) -> None:
    version = registry.spec(record_types()[key]).valid_versions.hi
    with contextlib.suppress(DecodeError):
        decode_metadata_record(bytes([1, key, version]) + body)


def test_schemas_load_from_a_zipped_package(tmp_path: Path) -> None:
    """spark-submit ships metashell to executors as a zip: the schemas must load from it too."""
    import subprocess
    import sys
    import zipfile

    package = Path(__file__).resolve().parents[1] / "metashell"
    archive = tmp_path / "metashell.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in package.rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts and f.suffix in (".py", ".json"):
                z.write(f, f.relative_to(package.parent))
    script = (
        f"import sys; sys.path.insert(0, {str(archive)!r})\n"
        "import metashell\n"
        "from metashell.protocol.schema import bundled_schema, bundled_schemas\n"
        "assert metashell.__file__.startswith(sys.path[0]), metashell.__file__\n"
        "print(bundled_schema('VotersRecord').name, len(bundled_schemas()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "METASHELL_ENGINE": "python"},
    )
    assert out.stdout.split() == ["VotersRecord", str(len(bundled_schemas()))]
