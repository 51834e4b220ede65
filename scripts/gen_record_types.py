#!/usr/bin/env python3
"""Generate ``metashell/protocol/record_type.py``: the metadata record types as an enum.

Kafka generates ``MetadataRecordType`` from the same JSON schemas (``MetadataRecordTypeGenerator``:
each schema's ``name`` in upper snake case, its ``apiKey``); the replayer dispatches on it, as
Kafka's ``MetadataDelta.replay`` switches on ``MetadataRecordType.fromId``.  Generated from the
schemas bundled in ``metashell/protocol/schemas/metadata``, never typed by hand:

    python scripts/gen_record_types.py            # rewrites metashell/protocol/record_type.py
    python scripts/gen_record_types.py --check    # exit 1 if the file is out of date
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from generated import generator_main

SCHEMAS = ROOT / "metashell" / "protocol" / "schemas" / "metadata"
TARGET = ROOT / "metashell" / "protocol" / "record_type.py"


def _json(path: Path) -> dict[str, object]:
    """A Kafka schema file: JSON with ``//`` comment lines."""
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("//"))
    loaded: dict[str, object] = json.loads(text)
    return loaded


def _snake(name: str) -> str:
    """``MessageGenerator.toSnakeCase(name).toUpperCase()``: RegisterBrokerRecord -> REGISTER_BROKER_RECORD."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def render() -> str:
    types = sorted((int(str(doc["apiKey"])), str(doc["name"])) for doc in map(_json, SCHEMAS.glob("*.json")))
    lines = [
        '"""The metadata record types (Kafka\'s ``MetadataRecordType``): GENERATED, do not edit.',
        "",
        "Made by ``python scripts/gen_record_types.py`` from the schemas bundled in",
        "``metashell/protocol/schemas/metadata``; checked byte for byte by the tests.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import enum",
        "",
        "",
        "class RecordType(enum.IntEnum):",
        '    """A metadata record\'s api key, by its schema\'s name."""',
        "",
    ]
    lines += [f"    {_snake(name)} = {key}" for key, name in types]
    lines += [
        "",
        "",
        "SCHEMA_NAMES: dict[RecordType, str] = {",
        *[f'    RecordType.{_snake(name)}: "{name}",' for _key, name in types],
        "}",
        '"""Each type\'s schema name (what kafka-dump-log prints)."""',
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(generator_main(__doc__ or "", TARGET, render, "scripts/gen_record_types.py"))
