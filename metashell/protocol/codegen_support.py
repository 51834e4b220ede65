"""What generated decoders and encoders share: how fixed-size types sit on the wire, the schema's
default values, and :class:`SourceGen`, which collects a generated function's source and the
constants it closes over, then compiles it once.
"""

from __future__ import annotations

import struct
from itertools import count
from typing import Any

from metashell.protocol.code_cache import compiled
from metashell.protocol.schema import FieldSpec, MessageSpec
from metashell.protocol.uuid import ZERO_UUID, uuid_from_str
from metashell.protocol.wire import Malformed, read_uvarint, write_uvarint

FIXED = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "uuid": "16s",
}


ARRAY_ITEM = {
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
}


def tuple_items(element_type: str) -> bool:
    """Whether an array of ``element_type`` (ints, floats, uuids) decodes to a tuple in the replay
    variant, and is read by the fixed-size array path: the generators of both languages ask this."""
    return element_type in ARRAY_ITEM or element_type == "uuid"


SIZES = {"b": 1, "?": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "d": 8, "16s": 16}


SMALL_ARRAY = 64
"""Arrays shorter than this are read with one precompiled ``struct`` per length (no lookup, no
bounds arithmetic beyond one comparison): replica lists, ISRs and log-dir lists are all short."""


_array_structs: dict[tuple[str, int], struct.Struct] = {}


def array_struct(code: str, n: int) -> struct.Struct:
    """A cached ``struct.Struct`` for ``n`` big-endian items of one code."""
    s = _array_structs.get((code, n))
    if s is None:
        s = struct.Struct(f">{n}{code}")
        if len(_array_structs) < 4096:
            _array_structs[(code, n)] = s
    return s


def uuid_array_struct(n: int) -> struct.Struct:
    """A ``struct.Struct`` reading ``n`` consecutive 16-byte uuids (cached like ``array_struct``)."""
    s = _array_structs.get(("16s", n))
    if s is None:
        s = struct.Struct(">" + "16s" * n)
        if len(_array_structs) < 4096:
            _array_structs[("16s", n)] = s
    return s


def default_value(f: FieldSpec, version: int) -> Any:
    """The value a field takes when absent (older version, or tagged and not sent)."""
    d = f.default
    if f.is_array:
        return None if d == "null" else []
    t = f.type
    if f.is_struct:
        return None if d == "null" else _struct_default(f, version)
    if d == "null":
        return None
    if t == "bool":
        return (d or "false").lower() == "true"
    if t in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        if not d:
            return 0
        return int(d, 16) if d.lower().startswith(("0x", "-0x")) else int(d)
    if t == "float64":
        return float(d) if d else 0.0
    if t == "string":
        return d or ""
    if t == "uuid":
        return uuid_from_str(d) if d else ZERO_UUID
    if t in ("bytes", "records"):
        return b""
    raise ValueError(f"no default for type {t}")


def _struct_default(f: FieldSpec, version: int) -> dict[str, Any]:
    return {sub.name: default_value(sub, version) for sub in f.fields if version in sub.versions}


def struct_fields(spec: MessageSpec, fields: list[FieldSpec], type_name: str) -> list[FieldSpec]:
    """A struct field's own fields, or those of the common struct ``type_name`` declares."""
    if fields:
        return fields
    if type_name in spec.structs:
        return spec.structs[type_name]
    raise ValueError(f"{spec.name}: unknown struct type {type_name}")


class SourceGen:
    """Accumulates generated source and the constants it refers to."""

    def __init__(
        self, spec: MessageSpec, tuples: bool = False, fields: tuple[str, ...] | None = None
    ) -> None:
        self.spec = spec
        self.tuples = tuples or fields is not None
        self.fields = fields
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {
            "Malformed": Malformed,
            "_uv": read_uvarint,
            "_wuv": write_uvarint,
            "_arr": array_struct,
            "_arr_uuid": uuid_array_struct,
            "_arrs": _array_structs,
            "_struct_default": _struct_default,
            "_ZERO": ZERO_UUID,
        }
        self.ids = count()
        self.done: dict[tuple[int, str], str] = {}

    def const(self, value: Any, prefix: str = "_c") -> str:
        name = f"{prefix}{next(self.ids)}"
        self.consts[name] = value
        return name

    def struct_fields(self, fields: list[FieldSpec], type_name: str) -> list[FieldSpec]:
        return struct_fields(self.spec, fields, type_name)

    def compile(self) -> dict[str, Any]:
        ns = dict(self.consts)
        exec(compiled("\n".join(self.lines), f"<metashell codec {self.spec.name}>"), ns)  # noqa: S102
        return ns
