"""Decoded messages as Kafka's generated ``JsonConverter`` writes them.

This is the form ``kafka-dump-log --cluster-metadata-decoder`` prints (``payload: {"type":
"TOPIC_RECORD","version":0,"data":{...}}``), so the differential tests can compare metashell's
decoding with Kafka's field by field, and the shell can offer the same form to operators.
Rules, as in Kafka's JsonConverterGenerator: field names in lowerCamelCase, every regular field of
the version, tagged fields only when they differ from their default, uuids in Kafka's base64 text,
bytes in standard base64, unknown tagged fields left out.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from metashell.protocol import registry
from metashell.protocol.codegen import default_value
from metashell.protocol.schema import FieldSpec
from metashell.protocol.uuid import uuid_to_str


def json_name(name: str) -> str:
    return name[:1].lower() + name[1:]


def record_type_name(schema_name: str) -> str:
    """``TopicRecord`` -> ``TOPIC_RECORD`` (Kafka's MetadataRecordType constant)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", schema_name).upper()


def to_kafka_json(schema_name: str, version: int, data: dict[str, Any]) -> dict[str, Any]:
    spec = registry.spec(schema_name)
    return _struct(spec.fields, spec, version, spec.flexible(version), data)


def _struct(fields: list[FieldSpec], spec: Any, version: int, flexible: bool,
            data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions:
            continue
        value = data.get(f.name, default_value(f, version))
        if flexible and f.tagged(version) and value == default_value(f, version):
            continue
        out[json_name(f.name)] = _value(f, spec, version, flexible, value)
    return out


def _value(f: FieldSpec, spec: Any, version: int, flexible: bool, value: Any) -> Any:
    if value is None:
        return None
    et = f.element_type
    if f.is_array:
        return [_scalar(et, v) if et in _SCALARS or not f.is_struct
                else _struct(f.fields or spec.structs[et], spec, version, flexible, v) for v in value]
    if f.is_struct:
        return _struct(f.fields or spec.structs[et], spec, version, flexible, value)
    return _scalar(f.type, value)


_SCALARS = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "string", "uuid",
            "bytes", "records"}


def _scalar(t: str, value: Any) -> Any:
    if t == "uuid":
        return uuid_to_str(value)
    if t in ("bytes", "records"):
        return base64.b64encode(value).decode("ascii")
    return value
