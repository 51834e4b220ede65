"""The metadata record decoders in Rust, for the native core, from the same schemas and by the same
rules as the Python decoders of :mod:`.codegen` (their replay variant).

Kafka's message generator writes Java from its JSON schemas; this module writes
``native/src/decode/generated.rs`` from the bundled ones: one function per record type, version and struct,
specialised for the fields present in that version, calling the wire readers of
``native/src/rt.rs``.  Nothing per record is written by hand in either language.

What a generated decoder returns is exactly what :func:`.codegen.make_decoder` returns with
``tuples=True`` (and ``fields`` for the positional records): the same dict keys in the same order,
tuples where Python has tuples, the same defaults for tagged fields.  A record the Rust decoder
refuses is decoded by Python instead, so the two only have to agree on what both accept; the
differential tests (``tests/test_native_differential.py``) hold them to it.

``scripts/gen_native.py`` writes the file; a test fails when it is not what this module makes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import count
from typing import Any

from metashell.protocol.codegen_rust_json import JsonGen
from metashell.protocol.codegen_support import default_value, struct_fields, tuple_items
from metashell.protocol.schema import FieldSpec, MessageSpec

__all__ = ["generate_rust"]

_FX = {
    "bool": "Bool",
    "int8": "I8",
    "int16": "I16",
    "uint16": "U16",
    "int32": "I32",
    "uint32": "U32",
    "int64": "I64",
    "float64": "F64",
    "uuid": "Uuid",
}
_MAX_FAST = 0x80
"""The fast path serves api keys and versions below this (one-byte uvarints), as Python's does."""


def _rust_str(text: str) -> str:
    out = []
    for ch in text:
        if ch in '\\"':
            out.append("\\" + ch)
        elif " " <= ch < "\x7f":
            out.append(ch)
        else:
            out.append(f"\\u{{{ord(ch):x}}}")
    return '"' + "".join(out) + '"'


def _rust_bool(value: bool) -> str:
    return "true" if value else "false"


class _Keys:
    """The dict keys of the generated decoders, numbered in order of first use (``KEY_NAMES``: the
    module makes each Python string once, when it is imported)."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}

    def number(self, name: str) -> int:
        return self.names.setdefault(name, len(self.names))


def _literal(value: Any, struct_field: FieldSpec | None, version: int, keys: _Keys) -> str:
    """A Rust expression building the Python value ``value`` (a default)."""
    if value is None:
        return "none(py)"
    if isinstance(value, bool):
        return f"boolean(py, {_rust_bool(value)})"
    if isinstance(value, int):
        return f"int(py, {value}_i64)?"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"no Rust literal for the default {value!r}")
        return f"float(py, {value!r}_f64)?"
    if isinstance(value, str):
        return f"str_obj(py, {_rust_str(value)})?"
    if isinstance(value, bytes):
        return f"bytes_obj(py, &[{', '.join(str(b) for b in value)}])?"
    if isinstance(value, tuple) and not value:
        return "empty_tuple(py)?"
    if isinstance(value, list) and not value:
        return "empty_list(py)?"
    if isinstance(value, dict) and struct_field is not None:
        return _struct_literal(struct_field, version, keys)
    raise ValueError(f"no Rust literal for the default {value!r}")


def _struct_literal(f: FieldSpec, version: int, keys: _Keys) -> str:
    """``codegen_support._struct_default``: a new dict of the struct's defaults (arrays as lists)."""
    items = []
    for sub in f.fields:
        if version in sub.versions:
            dv = default_value(sub, version)
            items.append(
                f"d.set_item(key(py, {keys.number(sub.name)})?, {_literal(dv, sub, version, keys)})?;"
            )
    return "{ let d = new_dict(py)?; " + " ".join(items) + " d.into_any() }"


class _Gen:
    """The functions of one generated file, and the struct decoders already written."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ids = count()
        self.done: dict[tuple[str, int, int, bool], str] = {}
        self.keys = _Keys()

    def value(self, spec: MessageSpec, f: FieldSpec, version: int, flexible: bool) -> str:
        """An expression reading one field's value (``codegen._decode_value``)."""
        t = f.type
        fflex = _rust_bool(flexible if f.flexible_versions is None else version in f.flexible_versions)
        nullable = _rust_bool(f.nullable(version))
        if f.is_array:
            et = f.element_type
            if tuple_items(et):
                return f"num_array(py, b, p, Fx::{_FX[et]}, {fflex}, {nullable})?"
            if et == "bool":
                return f"bool_array(py, b, p, {fflex}, {nullable})?"
            if et == "string":
                item = f"&|py, b, p| string(py, b, p, {fflex}, false)"
            elif et in ("bytes", "records"):
                item = f"&|py, b, p| bytes(py, b, p, {fflex}, false)"
            else:
                item = "&" + self.function(spec, struct_fields(spec, f.fields, et), version, flexible, et)
            return f"list(py, b, p, {fflex}, {nullable}, {item})?"
        if f.is_struct:
            fn = self.function(spec, struct_fields(spec, f.fields, t), version, flexible, t)
            return f"nullable_struct(py, b, p, &{fn})?" if f.nullable(version) else f"{fn}(py, b, p)?"
        if t in _FX:
            return f"fixed(py, b, p, Fx::{_FX[t]})?"
        if t == "string":
            return f"string(py, b, p, {fflex}, {nullable})?"
        return f"bytes(py, b, p, {fflex}, {nullable})?"

    def tagged_default(self, f: FieldSpec, version: int) -> str:
        """A tagged field's value when it is not sent (``codegen._fresh_default`` for arrays)."""
        dv = default_value(f, version)
        if isinstance(dv, list):
            return "empty_tuple(py)?" if tuple_items(f.element_type) else "empty_list(py)?"
        return _literal(dv, f, version, self.keys)

    def function(
        self,
        spec: MessageSpec,
        fields: list[FieldSpec],
        version: int,
        flexible: bool,
        label: str,
        positional: tuple[str, ...] | None = None,
    ) -> str:
        """The name of the function decoding ``fields`` (``codegen._decoder_fn``), written once."""
        key = (spec.name, id(fields), version, positional is not None)
        if key in self.done:
            return self.done[key]
        name = f"d_{label.replace('[]', '')}_{next(self.ids)}"
        self.done[key] = name
        present = [f for f in fields if version in f.versions]
        tagged = [f for f in present if flexible and f.tagged(version)]
        local = {f.name: f"v{i}" for i, f in enumerate(present)}
        body = []
        for f in present:
            if f not in tagged:
                body.append(f"let {local[f.name]} = {self.value(spec, f, version, flexible)};")
        if flexible:
            for f in tagged:
                body.append(f"let mut {local[f.name]} = {self.tagged_default(f, version)};")
            body.append("let mut unknown: Option<Bound<'py, PyDict>> = None;")
            body.append("for _ in 0..tag_count(b, p)? {")
            body.append("    let (tag, te) = tag_header(b, p)?;")
            body.append("    match tag {")
            for f in sorted(tagged, key=lambda x: x.tag or 0):
                body.append(f"        {f.tag} => {local[f.name]} = {self.value(spec, f, version, flexible)},")
            body.append("        _ => unknown_tag(py, &mut unknown, tag, b.get(*p..te).ok_or(Miss)?)?,")
            body.append("    }")
            body.append("    *p = te;")
            body.append("}")
        if positional is not None:
            by_name = {f.name: f for f in fields}
            items = []
            for fname in positional:
                if fname in local:
                    items.append(local[fname])
                else:
                    dv = default_value(by_name[fname], version)
                    items.append(
                        _literal(
                            tuple(dv) if isinstance(dv, list) else dv, by_name[fname], version, self.keys
                        )
                    )
            body.append(f"Ok(tuple(py, [{', '.join(items)}])?)")
        else:
            body.append("let d = new_dict(py)?;")
            for f in present:
                body.append(f"d.set_item(key(py, {self.keys.number(f.name)})?, {local[f.name]})?;")
            if flexible:
                body.append(
                    f"if let Some(u) = unknown {{ d.set_item(key(py, {self.keys.number('_unknown_tags')})?, u)?; }}"
                )
            body.append("Ok(d.into_any())")
        self.lines.append(f"fn {name}<'py>(py: Python<'py>, b: &[u8], p: &mut usize) -> R<Obj<'py>> {{")
        self.lines += [f"    {line}" for line in body]
        self.lines += ["}", ""]
        return name


_RAW_FX = {k: v for k, v in _FX.items() if k not in ("bool", "float64")}
"""The fixed types a raw decoder reads (`rt::Raw` holds ints and uuids)."""
RAW_WIDTH = 16
"""Fields in a `RawFields` array: room for the longest positional record (unused ones are Null)."""


class _NoRaw(Exception):
    """A positional record with a field that `rt::Raw` cannot hold: it gets no raw decoder."""


class _RawGen:
    """Raw decoders: the positional records' fields as `rt::Raw` (ints, and uuids and fixed-size
    arrays as slices of the record), for the replay loop that builds the image's objects itself.
    Each reads exactly what the object decoder reads and refuses exactly what it refuses (the
    same `rt` readers, the same tag handling); they differ only in making no Python object."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ids = count()

    @staticmethod
    def value(f: FieldSpec, version: int, flexible: bool) -> str:
        fflex = _rust_bool(flexible if f.flexible_versions is None else version in f.flexible_versions)
        if f.is_array and f.element_type in _RAW_FX:
            nullable = _rust_bool(f.nullable(version))
            return f"raw_num_array(b, p, Fx::{_RAW_FX[f.element_type]}, {fflex}, {nullable})?"
        if not f.is_array and f.type in _RAW_FX:
            return f"raw_fixed(b, p, Fx::{_RAW_FX[f.type]})?"
        raise _NoRaw(f.name)

    @staticmethod
    def literal(value: Any, f: FieldSpec) -> str:
        if value is None:
            return "Raw::Null"
        if isinstance(value, int) and not isinstance(value, bool):
            return f"Raw::Int({value}_i64)"
        if isinstance(value, list | tuple) and not value and f.is_array and f.element_type in _RAW_FX:
            return f"Raw::Array(Fx::{_RAW_FX[f.element_type]}, &[])"
        if isinstance(value, bytes) and len(value) == 16:
            return f"Raw::Uuid(&[{', '.join(str(b) for b in value)}])"
        raise _NoRaw(f.name)

    def function(
        self, spec: MessageSpec, version: int, flexible: bool, positional: tuple[str, ...]
    ) -> str | None:
        """The name of the raw decoder of ``spec`` at ``version``, or None when it cannot have one."""
        if len(positional) > RAW_WIDTH:
            return None
        present = [f for f in spec.fields if version in f.versions]
        tagged = [f for f in present if flexible and f.tagged(version)]
        local = {f.name: f"v{i}" for i, f in enumerate(present)}
        by_name = {f.name: f for f in spec.fields}
        try:
            body = [
                f"let {local[f.name]} = {self.value(f, version, flexible)};"
                for f in present
                if f not in tagged
            ]
            if flexible:
                for f in tagged:
                    dv = default_value(f, version)
                    body.append(f"let mut {local[f.name]} = {self.literal(dv, f)};")
                body.append("for _ in 0..tag_count(b, p)? {")
                body.append("    let (tag, te) = tag_header(b, p)?;")
                body.append("    match tag {")
                for f in sorted(tagged, key=lambda x: x.tag or 0):
                    body.append(f"        {f.tag} => {local[f.name]} = {self.value(f, version, flexible)},")
                body.append("        _ => {}")
                body.append("    }")
                body.append("    *p = te;")
                body.append("}")
            items = [
                local[n] if n in local else self.literal(default_value(by_name[n], version), by_name[n])
                for n in positional
            ]
        except _NoRaw:
            return None
        items += ["Raw::Null"] * (RAW_WIDTH - len(items))
        name = f"r_{spec.name}_{next(self.ids)}"
        self.lines.append(f"fn {name}<'a>(b: &'a [u8], p: &mut usize) -> R<RawFields<'a>> {{")
        self.lines += [f"    {line}" for line in body]
        self.lines.append(f"    Ok([{', '.join(items)}])")
        self.lines += ["}", ""]
        return name


_HEADER = """\
// @generated by scripts/gen_native.py from metashell/protocol/schemas/metadata: do not edit.
// The metadata record decoders of the native core (metashell/protocol/codegen_rust.py explains them).
#![allow(non_snake_case, unused_mut, unused_variables, unreachable_code, clippy::all)]

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::decode::json::*;
use crate::rt::*;

/// A generated decoder: reads a record's body from `*p` and returns the value Python's decoder
/// returns.
pub type Decoder = for<'py> fn(Python<'py>, &[u8], &mut usize) -> R<Obj<'py>>;

/// A positional record's fields, in the order of its field list (`RAW_WIDTH` long, Null after).
pub type RawFields<'a> = [Raw<'a>; RAW_WIDTH];

/// A raw decoder: what the positional record's decoder accepts, as `rt::Raw` values.
pub type RawDecoder = for<'a> fn(&'a [u8], &mut usize) -> R<RawFields<'a>>;

/// A JSON writer: a record's body from `*p` as Kafka's JSON form, appended to the text, its
/// top-level fields' values reported to the `Caps`.
pub type JsonWriter = for<'a> fn(&'a [u8], &mut usize, &mut Vec<u8>, &mut Caps<'a>) -> R<()>;
"""


def generate_rust(
    specs: Mapping[str, MessageSpec],
    positional: Mapping[str, tuple[str, ...]] | None = None,
    control: Mapping[int, str] | None = None,
) -> str:
    """The source of ``native/src/decode/generated.rs`` for the metadata records among ``specs``;
    ``positional`` names the records decoded to tuples of those fields (as ``ReplayDecoders``);
    ``control`` maps each control record type to its value's schema, read at version 0 as Kafka
    reads them (``protocol.control``), so that the few control records of a load need no Python
    code generated for them."""
    positional = dict(positional or {})
    g = _Gen()
    raw = _RawGen()
    writers = JsonGen(g.keys)
    table: list[tuple[int, int, str]] = []
    raw_table: list[tuple[int, int, str]] = []
    records = sorted(
        (s for s in specs.values() if s.type == "metadata" and s.api_key is not None),
        key=lambda s: s.api_key or 0,
    )
    for spec in records:
        assert spec.api_key is not None
        fields = positional.get(spec.name)
        if fields is not None:
            missing = {f for f in fields} - {f.name for f in spec.fields}
            if missing:
                raise ValueError(f"{spec.name} has no field(s) {', '.join(sorted(missing))}")
        for version in range(spec.valid_versions.lo, min(spec.valid_versions.hi, _MAX_FAST - 1) + 1):
            if spec.api_key >= _MAX_FAST:
                continue
            fn = g.function(spec, spec.fields, version, spec.flexible(version), spec.name, fields)
            table.append((spec.api_key, version, fn))
            writers.record(spec, version)
            raw_fn = None if fields is None else raw.function(spec, version, spec.flexible(version), fields)
            if raw_fn is not None:
                raw_table.append((spec.api_key, version, raw_fn))
    controls: list[tuple[int, str]] = []
    for ctype, name in sorted((control or {}).items()):
        spec = specs[name]
        if 0 not in spec.valid_versions:
            raise ValueError(f"{name} has no version 0")
        controls.append((ctype, g.function(spec, spec.fields, 0, spec.flexible(0), spec.name)))
    out = [_HEADER]
    out.append(
        "/// The decoder of a control record's value (version 0) by control type, when it has a schema."
    )
    out.append("pub fn control_decoder(control_type: i16) -> Option<Decoder> {")
    out.append("    Some(match control_type {")
    out += [f"        {t} => {fn}," for t, fn in controls]
    out.append("        _ => return None,")
    out.append("    })")
    out.append("}")
    out.append("")
    out.append("/// The decoder of (api key, version), when this build has one.")
    out.append("pub fn decoder(api_key: u8, version: u8) -> Option<Decoder> {")
    out.append("    Some(match (api_key, version) {")
    out += [f"        ({k}, {v}) => {fn}," for k, v, fn in table]
    out.append("        _ => return None,")
    out.append("    })")
    out.append("}")
    out.append("")
    out.append("/// The raw decoder of a positional record's (api key, version), when it has one.")
    out.append("pub fn raw_decoder(api_key: u8, version: u8) -> Option<RawDecoder> {")
    out.append("    Some(match (api_key, version) {")
    out += [f"        ({k}, {v}) => {fn}," for k, v, fn in raw_table]
    out.append("        _ => return None,")
    out.append("    })")
    out.append("}")
    out.append("")
    out.append(f"pub const RAW_WIDTH: usize = {RAW_WIDTH};")
    out.append("")
    out += writers.render()
    names = ", ".join(_rust_str(name) for name in g.keys.names)
    out.append("/// The dict keys, by number (`rt::key`).")
    out.append(f"pub const KEY_NAMES: [&str; {len(g.keys.names)}] = [{names}];")
    out.append("")
    out += g.lines
    out += raw.lines
    return "\n".join(out).rstrip("\n") + "\n"
