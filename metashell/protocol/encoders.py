"""Encoders generated from the message declarations (the other half of :mod:`.codegen`).

``encode(data: dict, out: bytearray) -> None`` per (message, version); missing keys take the schema
default, so callers only spell out what differs.  Live mode encodes its requests with these; tests,
the fake quorum and the benchmark generator write records.
"""

from __future__ import annotations

import struct

from metashell.protocol.codegen import Encoder
from metashell.protocol.codegen_support import ARRAY_ITEM, FIXED, SourceGen, default_value
from metashell.protocol.schema import FieldSpec, MessageSpec


def _encode_value(
    g: SourceGen, f: FieldSpec, version: int, flexible: bool, var: str, out: str, ind: str
) -> list[str]:
    t = f.type
    fflex = flexible if f.flexible_versions is None else version in f.flexible_versions
    lines: list[str] = []
    if f.is_array or (not f.is_struct and t not in FIXED):
        # length-prefixed: arrays, strings, bytes, records
        if t == "string":
            lines.append(f"{ind}b = None if {var} is None else {var}.encode('utf-8')")
            size = "len(b)"
        elif f.is_array:
            lines.append(f"{ind}b = {var}")
            size = "len(b)"
        else:
            lines.append(f"{ind}b = {var}")
            size = "len(b)"
        if fflex:
            lines.append(f"{ind}_wuv({out}, 0 if b is None else {size} + 1)")
        elif t == "string":
            lines.append(f"{ind}{out} += _i16.pack(-1 if b is None else {size})")
        else:
            lines.append(f"{ind}{out} += _i32.pack(-1 if b is None else {size})")
        if not f.is_array:
            lines.append(f"{ind}if b is not None: {out} += b")
            return lines
        et = f.element_type
        lines.append(f"{ind}if b is not None:")
        i2 = ind + "    "
        if et in ARRAY_ITEM:
            lines.append(f"{i2}{out} += _arr('{ARRAY_ITEM[et]}', len(b)).pack(*b)")
        elif et == "uuid":
            lines.append(f"{i2}for e in b: {out} += e")
        elif et == "bool":
            lines.append(f"{i2}for e in b: {out}.append(1 if e else 0)")
        elif et in ("string", "bytes", "records"):
            elem = FieldSpec(name=f.name + "[]", type=et, versions=f.versions)
            lines.append(f"{i2}for e in b:")
            lines += _encode_value(g, elem, version, fflex, "e", out, i2 + "    ")
        else:
            fn = _encoder_fn(g, g.struct_fields(f.fields, et), version, flexible, et)
            lines.append(f"{i2}for e in b: {fn}(e, {out})")
        return lines
    if f.is_struct:
        fn = _encoder_fn(g, g.struct_fields(f.fields, t), version, flexible, t)
        if f.nullable(version) and not f.tagged(version):
            return [
                f"{ind}if {var} is None: {out}.append(255)",
                f"{ind}else:",
                f"{ind}    {out}.append(1)",
                f"{ind}    {fn}({var}, {out})",
            ]
        return [f"{ind}{fn}({var}, {out})"]
    s = g.const(struct.Struct(">" + FIXED[t]), "_s")
    return [f"{ind}{out} += {s}.pack({var})"]


def _encoder_fn(g: SourceGen, fields: list[FieldSpec], version: int, flexible: bool, label: str) -> str:
    key = (id(fields), "e")
    if key in g.done:
        return g.done[key]
    name = f"_e_{label.replace('[]', '')}_{next(g.ids)}"
    g.done[key] = name
    present = [f for f in fields if version in f.versions]
    regular = [f for f in present if not (flexible and f.tagged(version))]
    tagged = [f for f in present if flexible and f.tagged(version)]
    ind = "    "
    body: list[str] = []
    for f in regular:
        dflt = g.const(default_value(f, version), "_df")
        body.append(f"{ind}v = d.get({f.name!r}, {dflt})")
        body += _encode_value(g, f, version, flexible, "v", "out", ind)
    if flexible:
        body.append(f"{ind}tags = []")
        for f in sorted(tagged, key=lambda x: x.tag or 0):
            dflt = g.const(default_value(f, version), "_df")
            body.append(f"{ind}v = d.get({f.name!r}, {dflt})")
            body.append(f"{ind}if v != {dflt}:")
            body.append(f"{ind}    t = bytearray()")
            body += _encode_value(g, f, version, flexible, "v", "t", ind + "    ")
            body.append(f"{ind}    tags.append(({f.tag}, t))")
        body.append(f"{ind}unknown = d.get('_unknown_tags')")
        body.append(f"{ind}if unknown:")
        body.append(f"{ind}    tags.extend(unknown.items())")
        body.append(f"{ind}    tags.sort(key=lambda x: x[0])")
        body.append(f"{ind}_wuv(out, len(tags))")
        body.append(f"{ind}for tag, t in tags:")
        body.append(f"{ind}    _wuv(out, tag)")
        body.append(f"{ind}    _wuv(out, len(t))")
        body.append(f"{ind}    out += t")
    if not body:
        body.append(f"{ind}pass")
    g.lines.append(f"def {name}(d, out):")
    g.lines += body
    g.lines.append("")
    return name


def make_encoder(spec: MessageSpec, version: int) -> Encoder:
    g = SourceGen(spec)
    g.consts["_i16"] = struct.Struct(">h")
    g.consts["_i32"] = struct.Struct(">i")
    name = _encoder_fn(g, spec.fields, version, spec.flexible(version), spec.name)
    return g.compile()[name]  # type: ignore[no-any-return]
