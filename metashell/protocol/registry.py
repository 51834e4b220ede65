"""Compiled codecs, built on first use and cached per (message name, version).

The code generator and the schemas are imported on the first codec asked for, not with this
module: a load on the native engine decodes in Rust and never needs them."""

from __future__ import annotations

import struct
from functools import cache
from typing import TYPE_CHECKING, Any

from metashell.errors import DecodeError
from metashell.protocol.wire import Malformed

if TYPE_CHECKING:
    from metashell.protocol.codegen import Decoder, Encoder
    from metashell.protocol.schema import MessageSpec

DECODE_ERRORS = (Malformed, struct.error, IndexError, ValueError, OverflowError, MemoryError)
"""What a generated decoder may raise on bad bytes; callers turn these into ``DecodeError``."""


def spec(name: str) -> MessageSpec:
    from metashell.protocol.schema import bundled_schema

    try:
        return bundled_schema(name)
    except KeyError:
        raise KeyError(f"no schema named {name}") from None


@cache
def decoder(name: str, version: int) -> Decoder:
    s = spec(name)
    if version not in s.valid_versions:
        raise ValueError(f"{name} has no version {version} (valid {s.valid_versions})")
    from metashell.protocol.codegen import make_decoder

    return make_decoder(s, version)


@cache
def encoder(name: str, version: int) -> Encoder:
    s = spec(name)
    if version not in s.valid_versions:
        raise ValueError(f"{name} has no version {version} (valid {s.valid_versions})")
    from metashell.protocol.encoders import make_encoder

    return make_encoder(s, version)


def decode(name: str, version: int, buf: bytes, pos: int = 0, *, exact: bool = True) -> dict[str, Any]:
    """Decode one message; with ``exact`` trailing bytes are an error (as in Kafka)."""
    data, end = decode_from(name, version, buf, pos)
    if exact and end != len(buf):
        raise DecodeError(f"found {len(buf) - end} byte(s) of garbage after {name} v{version}", offset=end)
    return data


def decode_from(name: str, version: int, buf: bytes, pos: int = 0) -> tuple[dict[str, Any], int]:
    if not isinstance(buf, bytes):
        buf = bytes(buf)
    fn = decoder(name, version)
    try:
        return fn(buf, pos, len(buf))
    except Malformed as e:
        raise DecodeError(f"malformed {name} v{version}: {e}", offset=e.pos) from None
    except DECODE_ERRORS as e:
        raise DecodeError(f"truncated or malformed {name} v{version} ({e})") from None


def encode(name: str, version: int, data: dict[str, Any]) -> bytes:
    out = bytearray()
    encoder(name, version)(data, out)
    return bytes(out)
