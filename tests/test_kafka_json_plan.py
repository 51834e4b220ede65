"""``to_kafka_json`` runs a conversion plan made once per (schema, version); it must give exactly
what the field-by-field reference gives, for every record of every fixture and corpus file."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, REPO

from metashell.log.files import iter_file_batches
from metashell.protocol.kafka_json import to_kafka_json, to_kafka_json_slow
from metashell.protocol.metadata import decode_metadata_record


def test_the_plan_equals_the_reference_on_every_record() -> None:
    roots = [FIXTURES, REPO.parent / "shared" / "corpus"]
    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*"))
             if p.suffix in (".log", ".checkpoint") and p.is_file()]
    seen: set[tuple[str, int]] = set()
    n = 0
    for path in files:
        for batch in iter_file_batches(Path(path), lenient_tail=True, warn=lambda _w: None):
            if batch.is_control:
                continue
            for _offset, _ts, _key, value in batch.entries():
                rec = decode_metadata_record(value)
                assert to_kafka_json(rec.name, rec.version, rec.data) == \
                    to_kafka_json_slow(rec.name, rec.version, rec.data), (path, rec.name)
                seen.add((rec.name, rec.version))
                n += 1
    assert n > 1000 and len(seen) > 20
