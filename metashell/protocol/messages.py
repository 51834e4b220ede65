"""Kafka RPC framing: size prefix, request/response headers, and bodies from the bundled schemas.

Header versions follow Kafka's generated ``ApiMessageType``: a flexible API version uses request
header v2 / response header v1, otherwise v1 / v0 — except ApiVersions responses, which always use
response header v0 so that any client can read the server's version list (FORMATS.md 6.2).
"""

from __future__ import annotations

import struct
from functools import cache
from typing import Any

from metashell.errors import DecodeError
from metashell.protocol import registry
from metashell.protocol.registry import decode, decode_from, encode
from metashell.protocol.schema import bundled_schemas

_SIZE = struct.Struct(">i")
API_VERSIONS_KEY = 18

__all__ = [
    "api_key",
    "api_versions",
    "decode",
    "decode_from",
    "decode_response",
    "encode",
    "encode_request",
    "request_header_version",
    "response_header_version",
]


@cache
def api_key(api: str) -> int:
    key = registry.spec(f"{api}Request").api_key
    assert key is not None
    return key


def api_versions(api: str) -> tuple[int, int]:
    v = registry.spec(f"{api}Request").valid_versions
    return v.lo, v.hi


def request_header_version(api: str, version: int) -> int:
    return 2 if registry.spec(f"{api}Request").flexible(version) else 1


def response_header_version(api: str, version: int) -> int:
    if api_key(api) == API_VERSIONS_KEY:
        return 0
    return 1 if registry.spec(f"{api}Response").flexible(version) else 0


def encode_request(
    api: str, version: int, correlation_id: int, client_id: str | None, body: dict[str, Any]
) -> bytes:
    """A complete size-prefixed request frame."""
    header = encode(
        "RequestHeader",
        request_header_version(api, version),
        {
            "RequestApiKey": api_key(api),
            "RequestApiVersion": version,
            "CorrelationId": correlation_id,
            "ClientId": client_id,
        },
    )
    payload = header + encode(f"{api}Request", version, body)
    return _SIZE.pack(len(payload)) + payload


def decode_request(frame: bytes) -> tuple[str, int, dict[str, Any], dict[str, Any]]:
    """(api, version, header, body) of a request frame without its size prefix (for test servers)."""
    key, version = struct.unpack_from(">hh", frame, 0)
    api = _api_name(key)
    header, pos = decode_from("RequestHeader", request_header_version(api, version), frame)
    return api, version, header, decode(f"{api}Request", version, frame[pos:])


def encode_response(api: str, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    header = encode(
        "ResponseHeader", response_header_version(api, version), {"CorrelationId": correlation_id}
    )
    payload = header + encode(f"{api}Response", version, body)
    return _SIZE.pack(len(payload)) + payload


def decode_response(api: str, version: int, frame: bytes) -> tuple[int, dict[str, Any]]:
    """(correlation id, body) of a response frame without its size prefix."""
    header, pos = decode_from("ResponseHeader", response_header_version(api, version), frame)
    try:
        body = decode(f"{api}Response", version, frame[pos:])
    except DecodeError:
        if api_key(api) == API_VERSIONS_KEY and version > 0:
            # KIP-511: a server that does not know our version answers with a v0 body.
            body = decode("ApiVersionsResponse", 0, frame[pos:], exact=False)
        else:
            raise
    return header["CorrelationId"], body


@cache
def _api_names() -> dict[int, str]:
    out = {}
    for name, s in bundled_schemas().items():
        if s.type == "request" and s.api_key is not None:
            out[s.api_key] = name[: -len("Request")]
    return out


def _api_name(key: int) -> str:
    try:
        return _api_names()[key]
    except KeyError:
        raise DecodeError(f"unknown api key {key}") from None
