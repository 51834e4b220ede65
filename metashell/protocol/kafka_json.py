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
import copy
import json
import re
from functools import cache
from typing import Any

from metashell.protocol import registry
from metashell.protocol.code_cache import compiled
from metashell.protocol.codegen import default_value
from metashell.protocol.control import CONTROL_TYPES, ControlRecord
from metashell.protocol.schema import FieldSpec
from metashell.protocol.uuid import uuid_text, uuid_to_str


def json_name(name: str) -> str:
    return name[:1].lower() + name[1:]


def record_type_name(schema_name: str) -> str:
    """``TopicRecord`` -> ``TOPIC_RECORD`` (Kafka's MetadataRecordType constant)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", schema_name).upper()


def to_kafka_json(schema_name: str, version: int, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (decoded, schema field names) in Kafka's JSON form.  Runs a conversion plan made
    once per (schema, version) -- a million records of the Spark ``records`` table are converted
    this way -- with the same rules as :func:`to_kafka_json_slow`, which the tests compare it with."""
    return _convert(_plan(schema_name, version), data)


def control_to_kafka_json(ctl: ControlRecord) -> dict[str, Any]:
    """A control record's data as ``kafka-dump-log`` prints it: Kafka's JSON form of its schema
    (LeaderChange, SnapshotHeader, KRaftVoters ...); a transaction marker's two fields as they are;
    an unknown type's raw bytes in base64."""
    schema = CONTROL_TYPES.get(ctl.type, ("Unknown", None))[1]
    if schema is not None and ctl.data is not None:
        return to_kafka_json(schema, 0, ctl.data)
    return {
        k: base64.b64encode(v).decode("ascii") if isinstance(v, bytes) else v
        for k, v in (ctl.data or {}).items()
    }


def to_kafka_json_slow(schema_name: str, version: int, data: dict[str, Any]) -> dict[str, Any]:
    """The rules written out field by field, reading the schema on every call (the reference)."""
    spec = registry.spec(schema_name)
    return _struct(spec.fields, spec, version, spec.flexible(version), data)


_MISSING = object()
_uuid_text = uuid_text
_Plan = tuple[tuple[str, str, Any, bool, Any], ...]
"""(field name, JSON name, default, left out when equal to the default, converter or None)."""


@cache
def _plan(schema_name: str, version: int) -> _Plan:
    spec = registry.spec(schema_name)
    return _struct_plan(spec.fields, spec, version, spec.flexible(version))


def _struct_plan(fields: list[FieldSpec], spec: Any, version: int, flexible: bool) -> _Plan:
    plan = []
    for f in fields:
        if version not in f.versions:
            continue
        default = default_value(f, version)
        plan.append(
            (
                f.name,
                json_name(f.name),
                default,
                flexible and f.tagged(version),
                _converter(f, spec, version, flexible),
            )
        )
    return tuple(plan)


def _converter(f: FieldSpec, spec: Any, version: int, flexible: bool) -> Any:
    """None when the decoded value is already its JSON value, else a function making it so."""
    et = f.element_type
    if f.is_array:
        if et in _SCALARS or not f.is_struct:
            if et == "uuid":
                return lambda vs: [_uuid_text(v) for v in vs]
            if et in ("bytes", "records"):
                return lambda vs: [base64.b64encode(v).decode("ascii") for v in vs]
            return list
        sub = _struct_plan(f.fields or spec.structs[et], spec, version, flexible)
        return lambda vs: [_convert(sub, v) for v in vs]
    if f.is_struct:
        sub = _struct_plan(f.fields or spec.structs[et], spec, version, flexible)
        return lambda v: _convert(sub, v)
    if f.type == "uuid":
        return _uuid_text
    if f.type in ("bytes", "records"):
        return lambda v: base64.b64encode(v).decode("ascii")
    return None


def _convert(plan: _Plan, data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    get = data.get
    for name, jname, default, skip_default, conv in plan:
        value = get(name, _MISSING)
        if value is _MISSING:
            value = copy.deepcopy(default) if isinstance(default, list | dict) else default
        if skip_default and value == default:
            continue
        out[jname] = value if value is None or conv is None else conv(value)
    return out


def _struct(
    fields: list[FieldSpec], spec: Any, version: int, flexible: bool, data: dict[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if version not in f.versions:
            continue
        value = data.get(f.name, default_value(f, version))
        if flexible and f.tagged(version) and value == default_value(f, version):
            continue
        out[json_name(f.name)] = _value(f, spec, version, flexible, value)
    return out


def json_value(f: FieldSpec, spec: Any, version: int, flexible: bool, value: Any) -> Any:
    """One field's ``value`` in Kafka's JSON form (the native generator writes defaults with it)."""
    return _value(f, spec, version, flexible, value)


def _value(f: FieldSpec, spec: Any, version: int, flexible: bool, value: Any) -> Any:
    if value is None:
        return None
    et = f.element_type
    if f.is_array:
        return [
            _scalar(et, v)
            if et in _SCALARS or not f.is_struct
            else _struct(f.fields or spec.structs[et], spec, version, flexible, v)
            for v in value
        ]
    if f.is_struct:
        return _struct(f.fields or spec.structs[et], spec, version, flexible, value)
    return _scalar(f.type, value)


_SCALARS = {
    "bool",
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "float64",
    "string",
    "uuid",
    "bytes",
    "records",
}


def _scalar(t: str, value: Any) -> Any:
    if t == "uuid":
        return uuid_to_str(value)
    if t in ("bytes", "records"):
        return base64.b64encode(value).decode("ascii")
    return value


# --------------------------------------------------------------------------------------------------
# straight to JSON text


def to_kafka_json_text(schema_name: str, version: int, data: dict[str, Any]) -> str:
    """``json.dumps(to_kafka_json(...), ensure_ascii=False, separators=(",", ":"))``, character for
    character, without the dict in between: one function per (schema, version), generated once,
    writes the text with string joins (the Spark ``records`` table spent half its time building
    the dict and encoding it)."""
    text: str = _writer(schema_name, version)(data)
    return text


_encode_string = json.encoder.encode_basestring  # what JSONEncoder(ensure_ascii=False) uses
_encode_float = json.JSONEncoder(separators=(",", ":")).encode


def _b64_text(value: bytes) -> str:
    return '"' + base64.b64encode(value).decode("ascii") + '"'


def _uuid_json(value: bytes) -> str:
    return '"' + _uuid_text(value) + '"'


@cache
def _writer(schema_name: str, version: int) -> Any:
    spec = registry.spec(schema_name)
    gen = _TextGen(spec, version, spec.flexible(version))
    top = gen.struct(spec.fields)
    namespace: dict[str, Any] = dict(gen.consts)
    code = compiled("\n".join(gen.lines), f"<metashell json {schema_name} v{version}>")
    exec(code, namespace)  # noqa: S102 - source generated from the bundled schemas
    return namespace[top]


class _TextGen:
    """Python source of the writers of one (schema, version): a function per struct, each one
    expression per field, in the plan's field order, with the plan's rules (tagged fields only when
    they differ from their default)."""

    def __init__(self, spec: Any, version: int, flexible: bool) -> None:
        self.spec, self.version, self.flexible = spec, version, flexible
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {
            "_s": _encode_string,
            "_f": _encode_float,
            "_b": _b64_text,
            "_u": _uuid_json,
            "_M": _MISSING,
        }
        self.n = 0

    def const(self, value: Any) -> str:
        self.n += 1
        name = f"_c{self.n}"
        self.consts[name] = value
        return name

    def struct(self, fields: list[FieldSpec]) -> str:
        present = [f for f in fields if self.version in f.versions]
        subs = {
            f.name: self.struct(f.fields or self.spec.structs[f.element_type]) for f in present if f.is_struct
        }
        self.n += 1
        fname = f"_w{self.n}"
        body = [f"def {fname}(d):", "    g = d.get", "    p = []"]
        run: list[str] = []  # consecutive always-written fields: one string, one append

        def flush() -> None:
            if run:
                body.append("    p.append(" + " + ',' + ".join(run) + ")")
                run.clear()

        for i, f in enumerate(present):
            default = default_value(f, self.version)
            var = f"v{i}"
            body.append(f"    {var} = g({f.name!r}, {self.const(default)})")
            text = f"{json.dumps(json_name(f.name))}:"
            expr = f"({text!r} + {self.value(f, var, subs.get(f.name))})"
            if self.flexible and f.tagged(self.version):
                flush()
                body.append(f"    if {var} != {self.const(default)}: p.append{expr}")
            else:
                run.append(expr)
        flush()
        body.append("    return '{' + ','.join(p) + '}'")
        self.lines += body
        return fname

    def value(self, f: FieldSpec, var: str, sub: str | None) -> str:
        et = f.element_type
        if f.is_array:
            if sub is not None:
                item = f"','.join(map({sub}, {var}))"
            elif et in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
                item = f"','.join(map(str, {var}))"
            else:
                item = f"','.join(map({self.scalar_fn(et)}, {var}))"
            expr = f"'[' + {item} + ']'"
        elif sub is not None:
            expr = f"{sub}({var})"
        elif f.type in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
            expr = f"str({var})"
        else:
            expr = f"{self.scalar_fn(f.type)}({var})"
        return f"('null' if {var} is None else {expr})"

    def scalar_fn(self, t: str) -> str:
        if t == "string":
            return "_s"
        if t == "uuid":
            return "_u"
        if t in ("bytes", "records"):
            return "_b"
        if t == "float64":
            return "_f"
        if t == "bool":
            return self.const(lambda v: "true" if v else "false")
        raise ValueError(f"no JSON text for type {t}")
