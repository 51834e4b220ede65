"""The loader's fast decoding paths agree with the reference decoder.

``replay_table()`` hands the image replayer the tuple-array variant of each generated decoder and
``decode_metadata_record`` takes a prefix-table shortcut; both must decode exactly what the plain
path decodes (arrays as tuples instead of lists being the only allowed difference), for every
record type and version, and the small/long array branches must agree at their boundaries.
"""

from __future__ import annotations

from typing import Any

import pytest

from metashell.errors import DecodeError
from metashell.protocol import registry
from metashell.protocol.codegen import SMALL_ARRAY
from metashell.protocol.metadata import (
    decode_metadata_record,
    encode_metadata_record,
    record_types,
    replay_table,
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


CASES = [(name, v) for key, name in sorted(record_types().items())
         for v in range(registry.spec(name).valid_versions.lo, registry.spec(name).valid_versions.hi + 1)]


@pytest.mark.parametrize(("name", "version"), CASES)
@pytest.mark.parametrize("n", [0, 1, 3, SMALL_ARRAY - 2, SMALL_ARRAY - 1, SMALL_ARRAY, 200])
def test_fast_paths_match_reference(name: str, version: int, n: int) -> None:
    value = encode_metadata_record(name, version, _sample(name, version, n))
    reference = registry.decode(name, version, value[3:])
    rec = decode_metadata_record(value)
    assert (rec.name, rec.version) == (name, version)
    assert rec.data == reference
    _key, ver, tname, fn, newer = replay_table()[value[:3]]
    assert (tname, ver, newer) == (name, version, False)
    for _ in range(2):       # the second time the tagged section may come from the memo cache
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
    fn = replay_table().get(good[:3]) or (decode_metadata_record(good) and replay_table()[good[:3]])
    fn = fn[3]
    for _ in range(3):
        data, end = fn(good, 3, len(good))
        assert end == len(good) and data["Isr"] == (1, 2, 3) and data["Leader"] == 2
    with pytest.raises(DecodeError):
        decode_metadata_record(good + b"\x00")        # same section plus garbage: not a cache hit
    data, end = fn(good + b"\x00", 3, len(good) + 1)
    assert end != len(good) + 1
    with pytest.raises(DecodeError):
        decode_metadata_record(good[:-1])
