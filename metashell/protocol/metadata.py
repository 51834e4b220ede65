"""Metadata record values: ``frameVersion uvarint (1), apiKey uvarint, version uvarint, body``.

This is the loader's hot path (millions of calls), hence the inlined one-byte varint fast path and
the per-(key, version) decoder table.  Policy for records Kafka's reader would also struggle with
(FORMATS.md 3.3): an unknown api key raises ``UnknownRecordType``; a version newer than the
bundled schemas is decoded as the newest known version when that consumes exactly all bytes (that
is what Kafka itself does: its generated readers do not check the version), else it raises
``UnsupportedRecordVersion``.  Callers turn both into warnings and skip the record.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from metashell.errors import DecodeError
from metashell.protocol import registry
from metashell.protocol.wire import Malformed, read_uvarint, write_uvarint


class UnknownRecordType(DecodeError):
    """An api key no bundled schema declares."""


class UnsupportedRecordVersion(DecodeError):
    """A record version newer than known whose bytes do not decode as the newest known version."""


class MetadataRecord:
    """A decoded metadata record: its api key, version, schema name and fields by name."""

    __slots__ = ("api_key", "data", "name", "version")

    def __init__(self, api_key: int, version: int, name: str, data: dict[str, Any]) -> None:
        self.api_key = api_key
        self.version = version
        self.name = name
        self.data = data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetadataRecord):
            return NotImplemented
        return (self.api_key, self.version, self.name, self.data) == (
            other.api_key,
            other.version,
            other.name,
            other.data,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return f"{self.name}(v{self.version}, {self.data!r})"


@cache
def record_types() -> dict[int, str]:
    """Api key -> schema name of every metadata record type we know: the generated table of
    ``record_type.py`` (made from the bundled schemas and checked against them by the tests), so
    that decoding a record parses its own schema only, not all sixty."""
    from metashell.protocol.record_type import SCHEMA_NAMES

    return {int(key): name for key, name in SCHEMA_NAMES.items()}


@cache
def record_keys() -> dict[str, int]:
    return {name: key for key, name in record_types().items()}


def max_version(api_key: int) -> int:
    return registry.spec(record_types()[api_key]).valid_versions.hi


_decoders: dict[tuple[int, int], tuple[str, Any, bool]] = {}
_by_prefix: dict[bytes, tuple[int, int, str, Any, bool]] = {}
"""The hot path: the 3-byte prefix ``01 <key> <version>`` (both < 128, i.e. every record Kafka
writes today) -> (api key, version, name, decoder, newer) -- one slice and one dict lookup."""


def _lookup(api_key: int, version: int) -> tuple[str, Any, bool]:
    """(name, decoder, newer_than_known) for a key/version, cached."""
    hit = _decoders.get((api_key, version))
    if hit is not None:
        return hit
    name = record_types().get(api_key)
    if name is None:
        raise UnknownRecordType(f"unknown metadata record type (api key {api_key}, version {version})")
    valid = registry.spec(name).valid_versions
    newer = version > valid.hi
    if version < valid.lo:
        raise UnsupportedRecordVersion(f"{name} has no version {version}")
    hit = (name, registry.decoder(name, valid.hi if newer else version), newer)
    _decoders[(api_key, version)] = hit
    if api_key < 0x80 and version < 0x80:
        _by_prefix[bytes((1, api_key, version))] = (api_key, version, *hit)
    return hit


class ReplayDecoders(dict):  # type: ignore[type-arg]
    """Decoders by 3-byte value prefix, for the image replayer's own hot loop.

    ``table[value[:3]]`` is ``(api_key, name, decode, positional)`` where ``decode(value, 3,
    len(value)) -> (data, end)`` is the record's generated decoder in its replay variant: int and
    uuid arrays are tuples (``()`` when empty), the tagged section is memoised, and for the record
    names given in ``positional`` (name -> field names) ``data`` is the tuple of those fields in
    that order (``positional`` is then True) instead of a dict.  Entries are built on first use.

    Only the plain case is served: frame version 1, api key and version < 128, a version this
    build knows.  Anything else -- and ``end != len(value)`` or any exception from ``decode`` --
    must go to :func:`decode_metadata_record`, which reports it properly; a lookup raises
    ``KeyError`` for prefixes it does not serve.
    """

    def __init__(self, positional: dict[str, tuple[str, ...]] | None = None) -> None:
        super().__init__()
        self.positional = dict(positional or {})
        self._checked = False

    def __missing__(self, prefix: bytes) -> tuple[int, str, Any, bool]:
        if not self._checked:  # at first use, not on import: the names need every schema parsed
            unknown = set(self.positional) - set(record_keys())
            if unknown:
                raise ValueError(f"no metadata record type named {', '.join(sorted(unknown))}")
            self._checked = True
        if len(prefix) != 3 or prefix[0] != 1 or prefix[1] >= 0x80 or prefix[2] >= 0x80:
            raise KeyError(prefix)
        api_key, version = prefix[1], prefix[2]
        name = record_types().get(api_key)
        if name is None or version not in registry.spec(name).valid_versions:
            raise KeyError(prefix)
        fields = self.positional.get(name)
        from metashell.protocol.codegen import make_decoder

        entry = (
            api_key,
            name,
            make_decoder(registry.spec(name), version, tuples=True, fields=fields),
            fields is not None,
        )
        self[prefix] = entry
        return entry


def _read_header(value: bytes, end: int) -> tuple[int, int, int]:
    """(api key, version, body position) of a value the prefix table does not know (yet)."""
    try:
        frame, pos = read_uvarint(value, 0)
        if frame != 1:
            if frame == 0:
                raise DecodeError("frame version 0 (KRaft 2.8 preview logs are not supported)", offset=0)
            raise DecodeError(f"unsupported metadata record frame version {frame}", offset=0)
        api_key, pos = read_uvarint(value, pos)
        version, pos = read_uvarint(value, pos)
    except (IndexError, Malformed):
        raise DecodeError("truncated metadata record header", offset=0) from None
    return api_key, version, pos


def decode_metadata_record(value: bytes) -> MetadataRecord:
    """Decode a framed metadata record value.  Raises ``DecodeError`` (offsets within ``value``)."""
    if value.__class__ is not bytes:
        if value is None:  # a record whose value length is -1: nothing to decode
            raise DecodeError("metadata record with a null value")
        value = bytes(value)
    end = len(value)
    fast = _by_prefix.get(value[:3])
    if fast is not None:
        api_key, version, name, fn, newer = fast
        pos = 3
    else:
        api_key, version, pos = _read_header(value, end)
        name, fn, newer = _decoders.get((api_key, version)) or _lookup(api_key, version)
    try:
        data, pos = fn(value, pos, end)
    except Malformed as e:
        if newer:
            raise UnsupportedRecordVersion(
                f"{name} v{version} is newer than known and does not decode", offset=e.pos
            ) from None
        raise DecodeError(f"malformed {name} v{version}: {e}", offset=e.pos) from None
    except registry.DECODE_ERRORS as e:
        if newer:
            raise UnsupportedRecordVersion(
                f"{name} v{version} is newer than known and does not decode"
            ) from None
        raise DecodeError(f"truncated or malformed {name} v{version} ({type(e).__name__})") from None
    if pos != end:
        if newer:
            raise UnsupportedRecordVersion(
                f"{name} v{version} is newer than known and does not decode", offset=pos
            )
        raise DecodeError(f"found {end - pos} byte(s) of garbage after {name} v{version}", offset=pos)
    return MetadataRecord(api_key, version, name, data)


def encode_metadata_record(name_or_key: str | int, version: int, data: dict[str, Any]) -> bytes:
    """Frame and encode a record value exactly as Kafka's ``MetadataRecordSerde`` writes it."""
    if isinstance(name_or_key, int):
        api_key, name = name_or_key, record_types()[name_or_key]
    else:
        name, api_key = name_or_key, record_keys()[name_or_key]
    out = bytearray()
    write_uvarint(out, 1)
    write_uvarint(out, api_key)
    write_uvarint(out, version)
    registry.encoder(name, version)(data, out)
    return bytes(out)
