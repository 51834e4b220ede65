"""Derive decoders and encoders from the message declarations, as Kafka's message generator does.

For each (message, version) we generate the source of a Python function specialised for exactly
the fields present in that version and ``exec`` it once.  Interpreting the schema for every record
would be several times slower, and the loader decodes millions of records: consecutive fixed-size
fields collapse into one precompiled ``struct`` call, one-byte varints are read inline, and the
result is a plain dict built in one expression.

Decoders have the signature ``decode(buf: bytes, pos: int, end: int) -> (dict, pos)`` and raise
``Malformed`` (or ``struct.error``/``IndexError``, which callers turn into ``DecodeError``) on bad
input.  Encoders (:mod:`.encoders`) are generated the same way, with :class:`SourceGen`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from metashell.protocol.codegen_support import (
    ARRAY_ITEM,
    FIXED,
    SIZES,
    SMALL_ARRAY,
    SourceGen,
    default_value,
    tuple_items,
)
from metashell.protocol.schema import FieldSpec, MessageSpec
from metashell.protocol.wire import Malformed, read_uvarint, write_uvarint

__all__ = [
    "SMALL_ARRAY",
    "Decoder",
    "Encoder",
    "Malformed",
    "SourceGen",
    "default_value",
    "make_decoder",
    "read_uvarint",
    "write_uvarint",
]

Decoder = Callable[[bytes, int, int], tuple[dict[str, Any], int]]
Encoder = Callable[[dict[str, Any], bytearray], None]


_small_int_arrays = {
    code: tuple(struct.Struct(f">{n}{code}") for n in range(SMALL_ARRAY)) for code in set(ARRAY_ITEM.values())
}
_small_uuid_arrays = tuple(struct.Struct(">" + "16s" * n) for n in range(SMALL_ARRAY))


# ---------------------------------------------------------------------------------------------
# decoders


def _read_uvarint_lines(var: str, ind: str) -> list[str]:
    return [
        f"{ind}{var} = buf[pos]",
        f"{ind}if {var} < 128: pos += 1",
        f"{ind}else: {var}, pos = _uv(buf, pos)",
    ]


def _decode_value(g: SourceGen, f: FieldSpec, version: int, flexible: bool, var: str, ind: str) -> list[str]:
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
        numeric = tuple_items(et)
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
        return tuple_items(f.element_type)
    return not f.is_struct


def _decoder_fn(
    g: SourceGen, fields: list[FieldSpec], version: int, flexible: bool, label: str, top: bool = False
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


def _fresh_default(g: SourceGen, f: FieldSpec, version: int) -> str:
    """Source for a new (unshared) mutable default value."""
    if f.is_array:
        return "()" if g.tuples and tuple_items(f.element_type) else "[]"
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
    g = SourceGen(spec, tuples, fields)
    g.consts["_i16"] = struct.Struct(">h")
    g.consts["_i32"] = struct.Struct(">i")
    name = _decoder_fn(g, spec.fields, version, spec.flexible(version), spec.name, top=True)
    return g.compile()[name]  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------
# encoders
