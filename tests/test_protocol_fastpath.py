"""The loader's fast decoding paths agree with the reference decoder.

``ReplayDecoders`` hands the image replayer the replay variant of each generated decoder (arrays as
tuples, memoised tagged sections, optionally positional tuples) and ``decode_metadata_record`` takes
a prefix-table shortcut; all must decode exactly what the plain path decodes (arrays as tuples
instead of lists, and tuples of fields instead of dicts, being the only allowed differences), for
every record type and version, and the small/long array branches must agree at their boundaries.
"""

from __future__ import annotations

from typing import Any

import pytest

from metashell.errors import DecodeError
from metashell.protocol import registry
from metashell.protocol.codegen import SMALL_ARRAY, default_value
from metashell.protocol.metadata import (
    ReplayDecoders,
    decode_metadata_record,
    encode_metadata_record,
    record_types,
)


def _lists(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_lists(v) for v in value]
    if isinstance(value, list):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def _sample(name: str, version: int, n: int) -> dict[str, Any]:
    """Data with every top-level int/uuid array of ``n`` items (other fields at their defaults)."""
    data: dict[str, Any] = {}
    for f in registry.spec(name).fields:
        if version not in f.versions or not f.is_array:
            continue
        if f.element_type == "int32":
            data[f.name] = list(range(1, n + 1))
        elif f.element_type == "uuid":
            data[f.name] = [bytes([i % 251 + 1]) * 16 for i in range(n)]
    return data


DECODERS = ReplayDecoders()

CASES = [
    (name, v)
    for key, name in sorted(record_types().items())
    for v in range(registry.spec(name).valid_versions.lo, registry.spec(name).valid_versions.hi + 1)
]


@pytest.mark.parametrize(("name", "version"), CASES)
@pytest.mark.parametrize("n", [0, 1, 3, SMALL_ARRAY - 2, SMALL_ARRAY - 1, SMALL_ARRAY, 200])
def test_fast_paths_match_reference(name: str, version: int, n: int) -> None:
    value = encode_metadata_record(name, version, _sample(name, version, n))
    reference = registry.decode(name, version, value[3:])
    rec = decode_metadata_record(value)
    assert (rec.name, rec.version) == (name, version)
    assert rec.data == reference
    _key, tname, fn, positional = DECODERS[value[:3]]
    assert (tname, positional) == (name, False)
    for _ in range(2):  # the second time the tagged section may come from the memo cache
        data, end = fn(value, 3, len(value))
        assert end == len(value)
        assert _lists(data) == reference
    for k, v in data.items():
        if isinstance(reference[k], list) and reference[k] and isinstance(reference[k][0], (int, bytes)):
            assert isinstance(v, tuple), k


def test_truncated_short_array_is_a_decode_error() -> None:
    value = encode_metadata_record("PartitionRecord", 2, {"Replicas": [1, 2, 3], "Isr": [1, 2, 3]})
    for cut in range(4, len(value)):
        with pytest.raises(DecodeError):
            decode_metadata_record(value[:cut])


def test_tag_cache_never_accepts_bad_bytes() -> None:
    """A memoised tagged section is only reused for identical bytes that parsed exactly to the end."""
    name = "PartitionChangeRecord"
    good = encode_metadata_record(name, 2, {"PartitionId": 1, "Isr": [1, 2, 3], "Leader": 2})
    fn = DECODERS[good[:3]][2]
    for _ in range(3):
        data, end = fn(good, 3, len(good))
        assert end == len(good) and data["Isr"] == (1, 2, 3) and data["Leader"] == 2
    with pytest.raises(DecodeError):
        decode_metadata_record(good + b"\x00")  # same section plus garbage: not a cache hit
    data, end = fn(good + b"\x00", 3, len(good) + 1)
    assert end != len(good) + 1
    with pytest.raises(DecodeError):
        decode_metadata_record(good[:-1])


@pytest.mark.parametrize("name", ["PartitionRecord", "PartitionChangeRecord", "RegisterBrokerRecord"])
@pytest.mark.parametrize("n", [0, 3, 100])
def test_positional_decoders(name: str, n: int) -> None:
    spec = registry.spec(name)
    fields = tuple(reversed([f.name for f in spec.fields]))  # any order the caller asks for
    table = ReplayDecoders({name: fields})
    for version in range(spec.valid_versions.lo, spec.valid_versions.hi + 1):
        value = encode_metadata_record(name, version, _sample(name, version, n))
        reference = registry.decode(name, version, value[3:])
        _key, tname, fn, positional = table[value[:3]]
        assert (tname, positional) == (name, True)
        for _ in range(2):
            data, end = fn(value, 3, len(value))
            assert end == len(value)
            assert isinstance(data, tuple) and len(data) == len(fields)
            for fname, got in zip(fields, data, strict=False):
                f = next(x for x in spec.fields if x.name == fname)
                want = reference[fname] if fname in reference else default_value(f, version)
                assert _lists(got) == want, (version, fname)


def test_replay_decoders_refuse_what_they_do_not_serve() -> None:
    with pytest.raises(ValueError):
        ReplayDecoders({"NoSuchRecord": ("X",)})[b"\x01\x03\x00"]  # checked at first use
    with pytest.raises(ValueError):
        ReplayDecoders({"PartitionRecord": ("NoSuchField",)})["\x01\x03\x00".encode("latin-1")]
    table = ReplayDecoders()
    for prefix in (b"\x00\x03\x00", b"\x01\x7f\x00", b"\x01\x03\x7f", b"\x01\x83\x01", b"\x01"):
        with pytest.raises(KeyError):
            table[prefix]
