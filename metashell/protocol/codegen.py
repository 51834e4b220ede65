"""Derive decoders and encoders from the message declarations, as Kafka's message generator does.

For each (message, version) we generate the source of a Python function specialised for exactly
the fields present in that version and ``exec`` it once.  Interpreting the schema for every record
would be several times slower, and the loader decodes millions of records: consecutive fixed-size
fields collapse into one precompiled ``struct`` call, one-byte varints are read inline, and the
result is a plain dict built in one expression.

Decoders have the signature ``decode(buf: bytes, pos: int, end: int) -> (dict, pos)`` and raise
``Malformed`` (or ``struct.error``/``IndexError``, which callers turn into ``DecodeError``) on bad
input.  Encoders have the signature ``encode(data: dict, out: bytearray) -> None``; missing keys
take the schema default, so callers only spell out what differs.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from itertools import count
from typing import Any

from metashell.protocol.schema import FieldSpec, MessageSpec
from metashell.protocol.uuid import ZERO_UUID, uuid_from_str
from metashell.protocol.wire import Malformed, read_uvarint, write_uvarint

__all__ = [
    "Decoder",
    "Encoder",
    "Malformed",
    "make_decoder",
    "make_encoder",
    "read_uvarint",
    "write_uvarint",
]

Decoder = Callable[[bytes, int, int], tuple[dict[str, Any], int]]
Encoder = Callable[[dict[str, Any], bytearray], None]

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
SIZES = {"b": 1, "?": 1, "h": 2, "H": 2, "i": 4, "I": 4, "q": 8, "d": 8, "16s": 16}

_array_structs: dict[tuple[str, int], struct.Struct] = {}

SMALL_ARRAY = 64
"""Arrays shorter than this are read with one precompiled ``struct`` per length (no lookup, no
bounds arithmetic beyond one comparison): replica lists, ISRs and log-dir lists are all short."""
_small_int_arrays = {
    code: tuple(struct.Struct(f">{n}{code}") for n in range(SMALL_ARRAY)) for code in set(ARRAY_ITEM.values())
}
_small_uuid_arrays = tuple(struct.Struct(">" + "16s" * n) for n in range(SMALL_ARRAY))


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


class _Gen:
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
        if fields:
            return fields
        if type_name in self.spec.structs:
            return self.spec.structs[type_name]
        raise ValueError(f"{self.spec.name}: unknown struct type {type_name}")

    def compile(self) -> dict[str, Any]:
        ns = dict(self.consts)
        exec(compile("\n".join(self.lines), f"<metashell codec {self.spec.name}>", "exec"), ns)  # noqa: S102
        return ns


# ---------------------------------------------------------------------------------------------
# decoders


def _read_uvarint_lines(var: str, ind: str) -> list[str]:
    return [
        f"{ind}{var} = buf[pos]",
        f"{ind}if {var} < 128: pos += 1",
        f"{ind}else: {var}, pos = _uv(buf, pos)",
    ]


def _decode_value(g: _Gen, f: FieldSpec, version: int, flexible: bool, var: str, ind: str) -> list[str]:
    """Lines reading one non-fixed (or any) field value into ``var``."""
    t = f.type
    fflex = flexible if f.flexible_versions is None else version in f.flexible_versions
    nullable = f.nullable(version)
    null_lines = (
        [f"{ind}    {var} = None"]
        if nullable
        else [f"{ind}    raise Malformed('non-nullable field {f.name} was serialized as null', pos)"]
    )
    if f.is_array:
        out = []
        et = f.element_type
        numeric = et in ARRAY_ITEM or et == "uuid"
        i0 = ind
        # int and uuid arrays: lists by default, tuples (no copy, shared empty ()) in the replay variant
        wrap, empty = ("", "()") if g.tuples else ("list", "[]")
        if fflex and numeric:
            # Hot path (replica lists, ISRs, directories): a compact length < 128 is one byte, so the
            # empty array (byte 1) and short arrays (2..SMALL_ARRAY) are decided on that byte alone;
            # one precompiled struct per length reads the items (``unpack_from`` refuses to read past
            # the buffer).  Anything else (null, a longer varint, a long array) takes the general path.
            code = ARRAY_ITEM.get(et, "16s")
            table = _small_int_arrays[code] if et in ARRAY_ITEM else _small_uuid_arrays
            small = g.const((None,) + table[: SMALL_ARRAY - 1], "_sa")
            step = g.const(tuple(1 + SIZES[code] * (n - 1) for n in range(SMALL_ARRAY)), "_sz")
            out += [
                f"{ind}n = buf[pos]",
                f"{ind}if n == 1:",
                f"{ind}    {var} = {empty}",
                f"{ind}    pos += 1",
                f"{ind}elif 1 < n < {SMALL_ARRAY}:",
                f"{ind}    {var} = {wrap}({small}[n].unpack_from(buf, pos + 1))",
                f"{ind}    pos += {step}[n]",
                f"{ind}else:",
            ]
            ind = ind + "    "
            null_lines = (
                [f"{ind}    {var} = None"]
                if nullable
                else [f"{ind}    raise Malformed('non-nullable field {f.name} was serialized as null', pos)"]
            )
        if fflex:
            out += _read_uvarint_lines("n", ind)
            out.append(f"{ind}n -= 1")
        else:
            out += [f"{ind}n = _i32.unpack_from(buf, pos)[0]", f"{ind}pos += 4"]
        if numeric:
            code = ARRAY_ITEM.get(et, "16s")
            size = SIZES[code]
            small = g.const(_small_int_arrays[code] if et in ARRAY_ITEM else _small_uuid_arrays, "_sa")
            big = f"_arr('{code}', n)" if et in ARRAY_ITEM else "_arr_uuid(n)"
            out.append(f"{ind}if n == 0: {var} = {empty}")
            out.append(f"{ind}elif n < 0:")
            out += null_lines
            out += [
                f"{ind}elif n < {SMALL_ARRAY}:",
                f"{ind}    {var} = {wrap}({small}[n].unpack_from(buf, pos))",
                f"{ind}    pos += {size} * n",
                f"{ind}else:",
                (
                    f"{ind}    if pos + {size} * n > end: raise Malformed('array {f.name} of ' + str(n) + ' items "
                    f"is longer than the buffer', pos)"
                ),
                f"{ind}    {var} = {wrap}({big}.unpack_from(buf, pos))",
                f"{ind}    pos += {size} * n",
            ]
            return out
        ind = i0
        out.append(f"{ind}if n < 0:")
        out += null_lines
        out.append(f"{ind}else:")
        i2 = ind + "    "
        out.append(
            f"{i2}if n > end - pos: raise Malformed('array {f.name} of ' + str(n) + ' items is longer than the buffer', pos)"
        )
        if et == "bool":
            out += [f"{i2}{var} = [b != 0 for b in buf[pos:pos + n]]", f"{i2}pos += n"]
        elif et in ("string", "bytes", "records"):
            elem = FieldSpec(name=f.name + "[]", type=et, versions=f.versions)
            out.append(f"{i2}{var} = []")
            out.append(f"{i2}for _ in range(n):")
            out += _decode_value(g, elem, version, fflex, "e", i2 + "    ")
            out.append(f"{i2}    {var}.append(e)")
        else:
            fn = _decoder_fn(g, g.struct_fields(f.fields, et), version, flexible, et)
            out.append(f"{i2}{var} = []")
            out.append(f"{i2}for _ in range(n):")
            out.append(f"{i2}    e, pos = {fn}(buf, pos, end)")
            out.append(f"{i2}    {var}.append(e)")
        return out
    if f.is_struct:
        fn = _decoder_fn(g, g.struct_fields(f.fields, t), version, flexible, t)
        if nullable:
            return [
                f"{ind}if buf[pos] == 255:",
                f"{ind}    pos += 1",
                f"{ind}    {var} = None",
                f"{ind}else:",
                f"{ind}    pos += 1",
                f"{ind}    {var}, pos = {fn}(buf, pos, end)",
            ]
        return [f"{ind}{var}, pos = {fn}(buf, pos, end)"]
    if t in FIXED:
        code = FIXED[t]
        s = g.const(struct.Struct(">" + code), "_s")
        return [f"{ind}{var} = {s}.unpack_from(buf, pos)[0]", f"{ind}pos += {SIZES[code]}"]
    # string / bytes / records
    out = []
    if fflex:
        out += _read_uvarint_lines("n", ind)
        out.append(f"{ind}n -= 1")
    elif t == "string":
        out += [f"{ind}n = _i16.unpack_from(buf, pos)[0]", f"{ind}pos += 2"]
    else:
        out += [f"{ind}n = _i32.unpack_from(buf, pos)[0]", f"{ind}pos += 4"]
    out.append(f"{ind}if n < 0:")
    out += null_lines
    out.append(f"{ind}else:")
    out.append(f"{ind}    q = pos + n")
    out.append(
        f"{ind}    if q > end: raise Malformed('{t} field {f.name} of ' + str(n) + ' bytes is longer than the buffer', pos)"
    )
    if t == "string":
        out.append(f"{ind}    {var} = str(buf[pos:q], 'utf-8', 'replace')")
    else:
        out.append(f"{ind}    {var} = bytes(buf[pos:q])")
    out.append(f"{ind}    pos = q")
    return out


TAG_CACHE_KEY = 64
"""Longest tagged section (bytes) the tuple-variant decoders memoise."""
TAG_CACHE_SIZE = 4096
"""Entries per record type and version; the cache stops growing when full."""


def _immutable_in_tuple_mode(f: FieldSpec) -> bool:
    """Does ``f`` decode to an immutable value in the tuple variant (safe to share between records)?"""
    if f.is_array:
        return f.element_type in ARRAY_ITEM or f.element_type == "uuid"
    return not f.is_struct


def _decoder_fn(
    g: _Gen, fields: list[FieldSpec], version: int, flexible: bool, label: str, top: bool = False
) -> str:
    key = (id(fields), "d")
    if key in g.done:
        return g.done[key]
    name = f"_d_{label.replace('[]', '')}_{next(g.ids)}"
    g.done[key] = name
    present = [f for f in fields if version in f.versions]
    regular = [f for f in present if not (flexible and f.tagged(version))]
    tagged = [f for f in present if flexible and f.tagged(version)]
    body: list[str] = []
    ind = "    "
    local = {f.name: f"v{i}" for i, f in enumerate(present)}
    # fixed-size runs become one struct call
    run: list[FieldSpec] = []

    def flush() -> None:
        if not run:
            return
        fmt = ">" + "".join(FIXED[f.type] for f in run)
        s = g.const(struct.Struct(fmt), "_s")
        size = struct.calcsize(fmt)
        names = ", ".join(local[f.name] for f in run)
        body.append(
            f"{ind}{names}, = {s}.unpack_from(buf, pos)"
            if len(run) == 1
            else f"{ind}{names} = {s}.unpack_from(buf, pos)"
        )
        body.append(f"{ind}pos += {size}")
        run.clear()

    for f in regular:
        if f.type in FIXED:
            run.append(f)
            continue
        flush()
        body += _decode_value(g, f, version, flexible, local[f.name], ind)
    flush()
    if flexible:
        defaults = []
        for f in tagged:
            dflt = default_value(f, version)
            src = _fresh_default(g, f, version) if isinstance(dflt, (list, dict)) else g.const(dflt, "_df")
            defaults.append(f"{local[f.name]} = {src}")
        body.append(f"{ind}unknown = None")
        # Memoise the tagged section by its bytes when every tagged value is immutable (the tuple
        # variant of a top-level record): ISR/leader changes and ELR fields repeat the same few
        # byte strings millions of times.  Only sections that parse exactly to ``end`` are kept.
        cache = top and g.tuples and bool(tagged) and all(_immutable_in_tuple_mode(f) for f in tagged)
        if cache:
            tc = g.const({}, "_tc")
            names = ", ".join(local[f.name] for f in tagged) + ("," if len(tagged) == 1 else "")
            body += [
                f"{ind}if buf[pos] == 0:",
                *(f"{ind}    {line}" for line in defaults),
                f"{ind}    pos += 1",
                f"{ind}elif (hit := {tc}.get(tkey := buf[pos:end])) is not None:",
                f"{ind}    {names} = hit",
                f"{ind}    pos = end",
                f"{ind}else:",
            ]
            ind = ind + "    "
        body += [f"{ind}{line}" for line in defaults]
        body += _read_uvarint_lines("nt", ind)
        body.append(f"{ind}if nt > end - pos: raise Malformed('too many tagged fields', pos)")
        body.append(f"{ind}if nt:")  # most records carry no tagged field: skip the loop set-up
        body.append(f"{ind} for _ in range(nt):")
        i2 = ind + "    "
        body += _read_uvarint_lines("tag", i2)
        body += _read_uvarint_lines("size", i2)
        body.append(f"{i2}te = pos + size")
        body.append(
            f"{i2}if te > end: raise Malformed('tagged field ' + str(tag) + ' is longer than the buffer', pos)"
        )
        first = True
        for f in sorted(tagged, key=lambda x: x.tag or 0):
            body.append(f"{i2}{'if' if first else 'elif'} tag == {f.tag}:")
            first = False
            body += _decode_value(g, f, version, flexible, local[f.name], i2 + "    ")
        body.append(f"{i2}{'if True' if first else 'else'}:")
        body.append(f"{i2}    if unknown is None: unknown = {{}}")
        body.append(f"{i2}    unknown[tag] = bytes(buf[pos:te])")
        body.append(f"{i2}pos = te")
        if cache:
            vals = ", ".join(local[f.name] for f in tagged)
            body.append(
                f"{ind}if unknown is None and pos == end and len(tkey) <= {TAG_CACHE_KEY} "
                f"and len({tc}) < {TAG_CACHE_SIZE}:"
            )
            body.append(f"{ind}    {tc}[tkey] = ({vals}{',' if len(tagged) == 1 else ''})")
            ind = ind[:-4]
    if top and g.fields is not None:
        # Positional variant: exactly the requested top-level fields, in the requested order; a
        # field absent in this version takes its default (arrays as tuples).  No dict is built.
        by_name = {f.name: f for f in fields}
        items: list[str] = []
        for fname in g.fields:
            if fname in local:
                items.append(local[fname])
            else:
                dv = default_value(by_name[fname], version)
                items.append(g.const(tuple(dv) if isinstance(dv, list) else dv, "_dp"))
        body.append(f"{ind}return ({', '.join(items)},), pos")
        g.lines.append(f"def {name}(buf, pos, end):")
        g.lines += body
        g.lines.append("")
        return name
    items = [f"{f.name!r}: {local[f.name]}" for f in present]
    body.append(f"{ind}d = {{{', '.join(items)}}}")
    if flexible:
        body.append(f"{ind}if unknown is not None: d['_unknown_tags'] = unknown")
    body.append(f"{ind}return d, pos")
    g.lines.append(f"def {name}(buf, pos, end):")
    g.lines += body
    g.lines.append("")
    return name


def _fresh_default(g: _Gen, f: FieldSpec, version: int) -> str:
    """Source for a new (unshared) mutable default value."""
    if f.is_array:
        return "()" if g.tuples and (f.element_type in ARRAY_ITEM or f.element_type == "uuid") else "[]"
    c = g.const(f, "_f")
    return f"_struct_default({c}, {version})"


def make_decoder(
    spec: MessageSpec, version: int, *, tuples: bool = False, fields: tuple[str, ...] | None = None
) -> Decoder:
    """The decoder of ``spec`` at ``version``.

    ``tuples``: int and uuid arrays come out as tuples instead of lists (everything else is
    identical) -- the image replayer keeps them as tuples anyway, so this saves a list and a copy
    per array on the loader's hot path.  ``fields`` (implies ``tuples``): return a tuple of those
    top-level fields, in that order, instead of a dict (fields absent in ``version`` take their
    default; unknown tagged fields are dropped) -- no dict to build and no key lookups for the
    replayer's hottest records.
    """
    if fields is not None:
        known = {f.name for f in spec.fields}
        unknown = [f for f in fields if f not in known]
        if unknown:
            raise ValueError(f"{spec.name} has no field(s) {', '.join(unknown)}")
        fields = tuple(fields)
    g = _Gen(spec, tuples, fields)
    g.consts["_i16"] = struct.Struct(">h")
    g.consts["_i32"] = struct.Struct(">i")
    name = _decoder_fn(g, spec.fields, version, spec.flexible(version), spec.name, top=True)
    return g.compile()[name]  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# encoders


def _encode_value(
    g: _Gen, f: FieldSpec, version: int, flexible: bool, var: str, out: str, ind: str
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


def _encoder_fn(g: _Gen, fields: list[FieldSpec], version: int, flexible: bool, label: str) -> str:
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
    g = _Gen(spec)
    g.consts["_i16"] = struct.Struct(">h")
    g.consts["_i32"] = struct.Struct(">i")
    name = _encoder_fn(g, spec.fields, version, spec.flexible(version), spec.name)
    return g.compile()[name]  # type: ignore[no-any-return]
