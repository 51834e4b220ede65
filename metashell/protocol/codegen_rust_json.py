"""Kafka's JSON form of the metadata records, written in Rust straight from the record bytes.

The Spark ``records`` table gives every record its JSON form (:func:`.kafka_json.to_kafka_json_text`,
what ``kafka-dump-log --cluster-metadata-decoder`` prints). In Python that is a decode to a dict and
a generated writer of its text; here it is one generated Rust function per record type, version and
struct (the versions that write a struct alike share one) that reads the fields with the same
bounded readers as the native decoders and writes their JSON as it goes (``native/src/decode/json.rs``
holds the hand-written half: numbers, strings, base64).

The rules are :mod:`.kafka_json`'s: lowerCamelCase names in schema order, every regular field of the
version, a tagged field only when it differs from its default (compared by its JSON text, which
the generator computes from the schema's default with the Python writer), uuids in Kafka's base64.
What these writers do not take they refuse (``Miss``), and Python writes that record instead: any
unknown tagged field, a string that is not valid UTF-8, a version newer than the schemas. So the
two only have to agree where both write, which ``tests/test_native_differential.py`` and
``scripts/fuzz_native.py`` hold them to.

The top-level writer also reports each top-level field's value (``Cap``) by its key number, for
the ``records`` table's key columns (``native/src/spark/records_table.rs``).
"""

from __future__ import annotations

import json
from itertools import count
from typing import NamedTuple, Protocol

from metashell.protocol.codegen_support import default_value, struct_fields
from metashell.protocol.kafka_json import json_value
from metashell.protocol.schema import FieldSpec, MessageSpec

__all__ = ["JsonGen"]

_INTS = {"int8": "I8", "int16": "I16", "uint16": "U16", "int32": "I32", "uint32": "U32", "int64": "I64"}
_FIXED = {**_INTS, "bool": "Bool", "float64": "F64", "uuid": "Uuid"}


class _Struct(NamedTuple):
    """A struct (or a record's top level) as one version writes it: its fields in schema order,
    the tagged ones among them, and whether its values are reported as ``Cap``s (``top``)."""

    spec: MessageSpec
    present: list[FieldSpec]
    tagged: list[FieldSpec]
    version: int
    flexible: bool
    top: bool


class _KeyNumbers(Protocol):
    def number(self, name: str) -> int: ...


def _rust_bytes(text: str) -> str:
    """A Rust byte-string literal of ``text``'s UTF-8."""
    return (
        'b"'
        + "".join(f"\\x{b:02x}" if not (0x20 <= b < 0x7F) or b in b'\\"' else chr(b) for b in text.encode())
        + '"'
    )


class JsonGen:
    """The JSON writers of one generated file (``j_*`` functions), and the table by (api key,
    version) that :func:`.codegen_rust.generate_rust` writes beside the decoders."""

    def __init__(self, keys: _KeyNumbers) -> None:
        self.keys = keys
        self.lines: list[str] = []
        self.ids = count()
        self.done: dict[tuple[str, int, int], str] = {}
        self.bodies: dict[tuple[str, ...], str] = {}
        """Each function by its struct's name and body: the versions of a record that write a
        struct the same way share one function (a struct of another name, even when written alike,
        keeps its own, so that the table reads true)."""
        self.table: list[tuple[int, int, str]] = []

    def record(self, spec: MessageSpec, version: int) -> None:
        assert spec.api_key is not None
        fn = self.function(spec, spec.fields, version, spec.flexible(version), spec.name, top=True)
        self.table.append((spec.api_key, version, fn))

    def value(self, spec: MessageSpec, f: FieldSpec, version: int, flexible: bool, out: str) -> str:
        """A statement writing one field's JSON value into ``out`` and evaluating to its ``Cap``."""
        fflex = (
            "true"
            if (flexible if f.flexible_versions is None else version in f.flexible_versions)
            else "false"
        )
        nullable = "true" if f.nullable(version) else "false"
        if f.is_array:
            et = f.element_type
            if et in _FIXED:
                return f"j_fixed_array(b, p, Fx::{_FIXED[et]}, {fflex}, {nullable}, {out})?"
            if et == "string":
                item = f"&|b, p, o| j_string(b, p, {fflex}, false, o).map(|_| ())"
            elif et in ("bytes", "records"):
                item = f"&|b, p, o| j_bytes(b, p, {fflex}, false, o)"
            else:
                sub = self.function(spec, struct_fields(spec, f.fields, et), version, flexible, et)
                item = f"&|b, p, o| {sub}(b, p, o, &mut Caps::none())"
            return f"j_list(b, p, {fflex}, {nullable}, {out}, {item})?"
        if f.is_struct:
            sub = self.function(spec, struct_fields(spec, f.fields, f.type), version, flexible, f.type)
            call = f"&|b, p, o| {sub}(b, p, o, &mut Caps::none())"
            return f"j_struct(b, p, {nullable}, {out}, {call})?"
        if f.type in _FIXED:
            return f"j_fixed(b, p, Fx::{_FIXED[f.type]}, {out})?"
        if f.type == "string":
            return f"j_string(b, p, {fflex}, {nullable}, {out})?"
        return f"{{ j_bytes(b, p, {fflex}, {nullable}, {out})?; Cap::Other }}"

    def function(
        self,
        spec: MessageSpec,
        fields: list[FieldSpec],
        version: int,
        flexible: bool,
        label: str,
        top: bool = False,
    ) -> str:
        key = (spec.name, id(fields), version)
        if key in self.done:
            return self.done[key]
        name = f"j_{label.replace('[]', '')}_{next(self.ids)}"
        self.done[key] = name
        present = [f for f in fields if version in f.versions]
        tagged = [f for f in present if flexible and f.tagged(version)]
        body = ["o.push(b'{');"]
        st = _Struct(spec, present, tagged, version, flexible, top)
        body += self._deferred(st) if present and present[0] in tagged else self._in_place(st)
        body.append("o.push(b'}');")
        body.append("Ok(())")
        same = self.bodies.setdefault((label, *body), name)
        if same != name:
            self.done[key] = same
            return same
        self.lines.append(
            f"fn {name}<'a>(b: &'a [u8], p: &mut usize, o: &mut Vec<u8>, caps: &mut Caps<'a>) -> R<()> {{"
        )
        self.lines += [f"    {line}" for line in body]
        self.lines += ["}", ""]
        return name

    def _in_place(self, st: _Struct) -> list[str]:
        """Every regular field written where it stands, the first (never tagged) without a comma;
        a tagged field that differs from its default is put in its place once the tags are read
        (they come after the regular fields in the bytes): ``insert`` at the position its
        predecessors ended at. No memory but the output's, unless a tagged field is there."""
        spec, present, tagged, version, flexible, top = st
        body: list[str] = []
        for i, f in enumerate(present):
            if f in tagged:
                body.append(f"let at{i} = o.len();")
                continue
            body.append(f"o.extend_from_slice({_head(f, comma=i > 0)});")
            body.append(f"let c = {self.value(spec, f, version, flexible, 'o')};")
            if top:
                body.append(f"caps.put({self.keys.number(f.name)}, c);")
        if not flexible:
            return body
        body += self._tags(st)
        for f in reversed(tagged):  # the last first: an earlier one's position stays where it was
            i = present.index(f)
            body.append(f"if let Some(w) = t{i} {{")
            body.append(
                f"    if w.as_slice() != {self._default(spec, f, version, flexible)} {{ insert(o, at{i}, {_head(f, comma=True)}, &w); }}"
            )
            body.append("}")
        return body

    def _deferred(self, st: _Struct) -> list[str]:
        """A struct whose first field is tagged: the fields from the first tagged one on are each
        written aside, then joined in schema order once the tags are read (whether a comma goes
        before a field depends on which tagged ones are there)."""
        spec, present, tagged, version, flexible, top = st
        first_tagged = min(present.index(f) for f in tagged)
        body = ["let mut first = true;"]
        for i, f in enumerate(present):
            if f in tagged:
                continue
            if i < first_tagged:
                body.append(f"sep(o, &mut first, {_head(f)});")
                body.append(f"let c = {self.value(spec, f, version, flexible, 'o')};")
            else:  # written after the tagged fields that come before it in the schema
                body.append(f"let mut w{i} = Vec::new();")
                body.append(f"let c = {self.value(spec, f, version, flexible, f'&mut w{i}')};")
            if top:
                body.append(f"caps.put({self.keys.number(f.name)}, c);")
        body += self._tags(st)
        for i, f in enumerate(present):
            if i < first_tagged:
                continue
            if f in tagged:
                body.append(f"if let Some(w) = t{i} {{")
                body.append(
                    f"    if w.as_slice() != {self._default(spec, f, version, flexible)} {{ sep(o, &mut first, {_head(f)}); o.extend_from_slice(&w); }}"
                )
                body.append("}")
            else:
                body.append(f"sep(o, &mut first, {_head(f)}); o.extend_from_slice(&w{i});")
        return body

    def _tags(self, st: _Struct) -> list[str]:
        """The tagged fields read (each written aside as ``t<i>``); an unknown tag refuses."""
        spec, present, tagged, version, flexible, top = st
        body: list[str] = []
        for i, f in enumerate(present):
            if f in tagged:
                body.append(f"let mut t{i}: Option<Vec<u8>> = None;")
                if top:
                    body.append(f"caps.put({self.keys.number(f.name)}, Cap::Other);")
        body.append("for _ in 0..tag_count(b, p)? {")
        body.append("    let (tag, te) = tag_header(b, p)?;")
        body.append("    match tag {")
        for f in sorted(tagged, key=lambda x: x.tag or 0):
            i = present.index(f)
            body.append(
                f"        {f.tag} => {{ let mut w = Vec::new(); {self.value(spec, f, version, flexible, '&mut w')}; t{i} = Some(w); }}"
            )
        body.append("        _ => return Err(Miss), // an unknown tagged field: Python leaves it out")
        body.append("    }")
        body.append("    *p = te;")
        body.append("}")
        return body

    @staticmethod
    def _default(spec: MessageSpec, f: FieldSpec, version: int, flexible: bool) -> str:
        """A tagged field's default as the JSON text it would be written as (then left out)."""
        default = json_value(f, spec, version, flexible, default_value(f, version))
        return _rust_bytes(json.dumps(default, ensure_ascii=False, separators=(",", ":")))

    def render(self) -> list[str]:
        out = [
            "/// The JSON writer of (api key, version) (`codegen_rust_json`), when this build has one.",
            "pub fn json_writer(api_key: u8, version: u8) -> Option<JsonWriter> {",
            "    Some(match (api_key, version) {",
        ]
        out += [f"        ({k}, {v}) => {fn}," for k, v, fn in self.table]
        out += ["        _ => return None,", "    })", "}", ""]
        return out + self.lines


def _json_name(name: str) -> str:
    return name[:1].lower() + name[1:]


def _head(f: FieldSpec, comma: bool = False) -> str:
    """A field's ``"name":`` as a Rust byte string, after a comma when ``comma``."""
    return _rust_bytes(("," if comma else "") + json.dumps(_json_name(f.name), ensure_ascii=False) + ":")
