"""Control records: a 4-byte key (int16 version, int16 type) and a schema-encoded value.

Kafka reads every control value at schema version 0, whatever its leading ``Version`` field says
(FORMATS.md 4), so we do too; ABORT/COMMIT markers use the classic non-flexible layout.
"""

from __future__ import annotations

import struct
from typing import Any

from metashell.engine import current as current_engine
from metashell.errors import DecodeError
from metashell.protocol import registry

CONTROL_TYPES: dict[int, tuple[str, str | None]] = {
    0: ("Abort", None),
    1: ("Commit", None),
    2: ("LeaderChange", "LeaderChangeMessage"),
    3: ("SnapshotHeader", "SnapshotHeaderRecord"),
    4: ("SnapshotFooter", "SnapshotFooterRecord"),
    5: ("KRaftVersion", "KRaftVersionRecord"),
    6: ("KRaftVoters", "VotersRecord"),
}
CONTROL_TYPE_IDS = {name: t for t, (name, _) in CONTROL_TYPES.items()}
CONTROL_SCHEMAS = {t: schema for t, (_name, schema) in CONTROL_TYPES.items() if schema is not None}
"""Control type -> its value's schema, for the types that have one (the native core's decoders)."""
_KEY = struct.Struct(">hh")
_MARKER = struct.Struct(">hi")


class ControlRecord:
    """A decoded control record: its type, name, version and value's fields (None: no value)."""

    __slots__ = ("data", "name", "type", "version")

    def __init__(self, type: int, name: str, version: int, data: dict[str, Any] | None) -> None:
        self.type = type
        self.name = name
        self.version = version
        self.data = data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ControlRecord):
            return NotImplemented
        return (self.type, self.name, self.version, self.data) == (
            other.type,
            other.name,
            other.version,
            other.data,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return f"{self.name}({self.data!r})"


def decode_control_record(key: bytes | None, value: bytes | None) -> ControlRecord:
    if key is None or len(key) < 4:
        raise DecodeError("control record key is shorter than 4 bytes", offset=0)
    version, ctype = _KEY.unpack_from(key, 0)
    if version < 0:
        raise DecodeError(f"control record key has negative version {version}", offset=0)
    name, schema = CONTROL_TYPES.get(ctype, ("Unknown", None))
    if value is None:
        return ControlRecord(ctype, name, version, None)
    value = bytes(value)
    if ctype in (0, 1):
        if len(value) < 6:
            raise DecodeError("transaction marker value is shorter than 6 bytes", offset=0)
        v, epoch = _MARKER.unpack_from(value, 0)
        return ControlRecord(ctype, name, v, {"Version": v, "CoordinatorEpoch": epoch})
    if schema is None:
        return ControlRecord(ctype, name, version, {"raw": value})
    native = current_engine().native
    if native is not None:  # the same generated decoder, in Rust; None: Python says what is wrong
        data = native.decode_control_value(ctype, value)
        if data is not None:
            return ControlRecord(ctype, name, version, data)
    return ControlRecord(ctype, name, version, registry.decode(schema, 0, value, exact=False))


def encode_control_record(name_or_type: str | int, data: dict[str, Any]) -> tuple[bytes, bytes]:
    """(key, value) of a control record, as Kafka's ``ControlRecordUtils`` writes them."""
    ctype = name_or_type if isinstance(name_or_type, int) else CONTROL_TYPE_IDS[name_or_type]
    key = _KEY.pack(0, ctype)
    _name, schema = CONTROL_TYPES[ctype]
    if schema is None:
        return key, _MARKER.pack(data.get("Version", 0), data.get("CoordinatorEpoch", 0))
    return key, registry.encode(schema, 0, data)
