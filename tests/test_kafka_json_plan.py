"""``to_kafka_json`` runs a conversion plan made once per (schema, version); it must give exactly
what the field-by-field reference gives, for every record of every fixture and corpus file.
``to_kafka_json_text`` (generated writers, no dict) must give exactly the text ``json`` makes of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FIXTURES, REPO
from record_strategies import records

from metashell.log.files import iter_file_batches
from metashell.protocol.kafka_json import to_kafka_json, to_kafka_json_slow, to_kafka_json_text
from metashell.protocol.metadata import decode_metadata_record

_text = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def test_the_plan_equals_the_reference_on_every_record() -> None:
    roots = [FIXTURES, REPO.parent / "shared" / "corpus"]
    files = [
        p
        for root in roots
        if root.is_dir()
        for p in sorted(root.rglob("*"))
        if p.suffix in (".log", ".checkpoint") and p.is_file()
    ]
    seen: set[tuple[str, int]] = set()
    n = 0
    for path in files:
        for batch in iter_file_batches(Path(path), lenient_tail=True, warn=lambda _w: None):
            if batch.is_control:
                continue
            for _offset, _ts, _key, value in batch.entries():
                assert value is not None  # a data record always has a value
                rec = decode_metadata_record(value)
                doc = to_kafka_json(rec.name, rec.version, rec.data)
                assert doc == to_kafka_json_slow(rec.name, rec.version, rec.data), (path, rec.name)
                assert to_kafka_json_text(rec.name, rec.version, rec.data) == _text(doc), (path, rec.name)
                seen.add((rec.name, rec.version))
                n += 1
    assert n > 1000 and len(seen) > 20


def test_the_text_writers_equal_json_on_any_record_of_any_version() -> None:
    from hypothesis import HealthCheck, given, settings

    from metashell.protocol.metadata import encode_metadata_record

    @settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
    @given(records())
    def check(case: tuple[str, int, dict[str, Any]]) -> None:
        name, version, data = case
        rec = decode_metadata_record(encode_metadata_record(name, version, data))  # as the decoders give it
        doc = to_kafka_json(rec.name, rec.version, rec.data)
        assert to_kafka_json_text(rec.name, rec.version, rec.data) == _text(doc)

    check()
