"""The message declarations: Kafka's JSON schema files, parsed into plain objects.

metashell does not hand-write a parser per record.  Like Kafka's own message generator, it reads
the JSON declarations (bundled in ``schemas/``, taken from the Kafka 4.4.0 jars) and derives
decoders and encoders from them (``codegen.py``).  This module only understands the declarations:
version ranges, field types, tags, defaults and nullability.
"""

import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

PRIMITIVES = {
    "bool",
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "float64",
    "string",
    "bytes",
    "records",
    "uuid",
}
"""Scalar field types of the Kafka message format."""


class Versions(NamedTuple):
    """An inclusive version range; ``lo > hi`` means "none"."""

    lo: int
    hi: int

    @classmethod
    def parse(cls, text: str | None, default: "Versions | None" = None) -> "Versions":
        if text is None:
            return default if default is not None else NONE
        text = text.strip()
        if text == "none":
            return NONE
        if text.endswith("+"):
            return cls(int(text[:-1]), 0x7FFF)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lo <= version <= self.hi

    @property
    def empty(self) -> bool:
        return self.lo > self.hi

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.hi == 0x7FFF:
            return f"{self.lo}+"
        return f"{self.lo}" if self.lo == self.hi else f"{self.lo}-{self.hi}"


NONE = Versions(1, 0)


class FieldSpec:
    """One field of a message or struct, as declared in the JSON schema (``fields``: a struct's).

    Plain classes here, not dataclasses: the pure-Python engine's one-shot start reads a schema, and
    a dataclass compiles its methods at import (``docs/architecture.md``, start-up)."""

    __slots__ = (
        "about",
        "default",
        "fields",
        "flexible_versions",
        "name",
        "nullable_versions",
        "tag",
        "tagged_versions",
        "type",
        "versions",
    )

    def __init__(
        self,
        name: str,
        type: str,
        versions: Versions,
        nullable_versions: Versions = NONE,
        tagged_versions: Versions = NONE,
        tag: int | None = None,
        default: str | None = None,
        flexible_versions: Versions | None = None,
        fields: "list[FieldSpec] | None" = None,
        about: str = "",
    ) -> None:
        self.name = name
        self.type = type
        self.versions = versions
        self.nullable_versions = nullable_versions
        self.tagged_versions = tagged_versions
        self.tag = tag
        self.default = default
        self.flexible_versions = flexible_versions
        self.fields: list[FieldSpec] = [] if fields is None else fields
        self.about = about

    def __repr__(self) -> str:
        return f"FieldSpec({self.name!r}, {self.type!r}, versions={self.versions})"

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in PRIMITIVES

    def nullable(self, version: int) -> bool:
        return version in self.nullable_versions

    def tagged(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged_versions


class MessageSpec:
    """A whole message (metadata record, control record value, request, response or header)."""

    __slots__ = (
        "api_key",
        "fields",
        "flexible_versions",
        "name",
        "source",
        "structs",
        "type",
        "valid_versions",
    )

    def __init__(
        self,
        name: str,
        type: str,
        api_key: int | None,
        valid_versions: Versions,
        flexible_versions: Versions,
        fields: list[FieldSpec],
        structs: dict[str, list[FieldSpec]],
        source: str,
    ) -> None:
        self.name = name
        self.type = type
        self.api_key = api_key
        self.valid_versions = valid_versions
        self.flexible_versions = flexible_versions
        self.fields = fields
        self.structs = structs
        self.source = source

    def __repr__(self) -> str:
        return f"MessageSpec({self.name!r}, api_key={self.api_key}, versions={self.valid_versions})"

    def flexible(self, version: int) -> bool:
        return version in self.flexible_versions


_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


def _parse_fields(raw: list[dict[str, Any]], structs: dict[str, list[FieldSpec]]) -> list[FieldSpec]:
    out = []
    for f in raw:
        versions = Versions.parse(f.get("versions"))
        spec = FieldSpec(
            name=f["name"],
            type=f["type"],
            versions=versions,
            nullable_versions=Versions.parse(f.get("nullableVersions")),
            tagged_versions=Versions.parse(f.get("taggedVersions")),
            tag=None if f.get("tag") is None else int(f["tag"]),
            default=None if "default" not in f else str(f["default"]),
            flexible_versions=Versions.parse(f["flexibleVersions"]) if "flexibleVersions" in f else None,
            about=f.get("about", ""),
        )
        if "fields" in f:
            spec.fields = _parse_fields(f["fields"], structs)
            structs.setdefault(spec.element_type, spec.fields)
        out.append(spec)
    return out


def parse_schema(text: str, source: str = "<schema>") -> MessageSpec:
    """Parse one Kafka JSON schema (Kafka allows ``//`` line comments; JSON does not)."""
    raw = json.loads(_COMMENT.sub("", text))
    structs: dict[str, list[FieldSpec]] = {}
    for common in raw.get("commonStructs", []):
        structs[common["name"]] = _parse_fields(common["fields"], structs)
    fields = _parse_fields(raw.get("fields", []), structs)
    return MessageSpec(
        name=raw["name"],
        type=raw["type"],
        api_key=raw.get("apiKey"),
        valid_versions=Versions.parse(raw["validVersions"]),
        flexible_versions=Versions.parse(raw.get("flexibleVersions")),
        fields=fields,
        structs=structs,
        source=source,
    )


if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

_GROUPS = ("metadata", "message")


@cache
def _bundled() -> "Traversable":
    """The schemas' folder: a plain path when the package is on disk (importlib.resources costs a
    start 10 ms), else its importlib.resources view (a zip shipped to Spark's executors)."""
    here = Path(__file__).parent / "schemas"
    if here.is_dir():
        return here
    from importlib import resources

    return resources.files("metashell.protocol") / "schemas"


@cache
def bundled_schemas() -> dict[str, MessageSpec]:
    """Every schema shipped in ``metashell/protocol/schemas``, by message name."""
    out: dict[str, MessageSpec] = {}
    for group in _GROUPS:
        for entry in sorted((_bundled() / group).iterdir(), key=lambda p: p.name):
            if entry.name.endswith(".json"):
                spec = parse_schema(entry.read_text(encoding="utf-8"), f"{group}/{entry.name}")
                out[spec.name] = spec
    return out


@cache
def bundled_schema(name: str) -> MessageSpec:
    """The bundled schema of message ``name``: its own file when it is called ``<name>.json``, as
    Kafka names nearly all of them, so that decoding the few control records of a load parses two
    files, not fifty; otherwise found among them all.  Raises KeyError."""
    for group in _GROUPS:
        path = _bundled() / group / f"{name}.json"
        if path.is_file():
            spec = parse_schema(path.read_text(encoding="utf-8"), f"{group}/{path.name}")
            if spec.name == name:
                return spec
    return bundled_schemas()[name]


def load_schema_file(path: Path) -> MessageSpec:
    """Parse a schema file from anywhere (used to check the bundled copies against a reference)."""
    return parse_schema(path.read_text(encoding="utf-8"), str(path))
