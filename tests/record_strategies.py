"""Hypothesis strategies for metadata records: any value of any field of any record type and version
(shared by the tests that hold two implementations equal on every record)."""

from __future__ import annotations

from typing import Any


def field_values(f: Any, spec: Any, version: int) -> Any:
    """Any value the field may hold in ``version``: control characters and non-ASCII text, extreme
    integers, nulls where the version allows them, nested structs."""
    from hypothesis import strategies as st

    ints = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
    scalars = {
        "bool": st.booleans(),
        "uint16": st.integers(0, 2**16 - 1),
        "uint32": st.integers(0, 2**32 - 1),
        "float64": st.floats(allow_nan=False),
        "string": st.text(max_size=12),
        "uuid": st.binary(min_size=16, max_size=16),
        "bytes": st.binary(max_size=12),
        "records": st.binary(max_size=12),
        **{t: st.integers(-(2 ** (b - 1)), 2 ** (b - 1) - 1) for t, b in ints.items()},
    }
    et = f.element_type
    if f.is_struct:
        sub = st.fixed_dictionaries(
            {
                s.name: field_values(s, spec, version)
                for s in (f.fields or spec.structs[et])
                if version in s.versions
            }
        )
        one: st.SearchStrategy[Any] = sub
    else:
        one = scalars[et]
    value = st.lists(one, max_size=3) if f.is_array else one
    return st.one_of(st.none(), value) if f.nullable(version) else value


def record_cases() -> list[tuple[str, int]]:
    """(record name, version) for every metadata record type and version the bundled schemas know."""
    from metashell.protocol import registry
    from metashell.protocol.metadata import record_types

    return [
        (name, v)
        for name in sorted(record_types().values())
        for v in range(registry.spec(name).valid_versions.lo, registry.spec(name).valid_versions.hi + 1)
    ]


def records() -> Any:
    """``(name, version, data)`` of any record: every field the version has, with any value."""
    from hypothesis import strategies as st

    from metashell.protocol import registry

    cases = record_cases()

    @st.composite
    def draw_record(draw: Any) -> tuple[str, int, dict[str, Any]]:
        name, version = draw(st.sampled_from(cases))
        spec = registry.spec(name)
        data = draw(
            st.fixed_dictionaries(
                {f.name: field_values(f, spec, version) for f in spec.fields if version in f.versions}
            )
        )
        return name, version, data

    return draw_record()
