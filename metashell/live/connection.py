"""One blocking connection to a Kafka node: framing, headers, correlation ids, ApiVersions, TLS, SASL.

Why blocking sockets in a thread rather than asyncio: the observer does one thing at a time on a
connection (a KRaft server mutes a connection until it has answered, FORMATS.md 6.2), timeouts map
directly onto ``socket.settimeout``, and the shell's REPL owns its own event loop.  A long-poll
Fetch is interrupted from another thread with :meth:`Connection.abort`, which shuts the socket down.

Request/response bodies are the schema-driven dicts of :mod:`metashell.protocol.messages`.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import ssl
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any, Self

from metashell import __version__
from metashell.errors import DecodeError
from metashell.live import errors as E
from metashell.live.config import ClientConfig
from metashell.live.errors import (
    AuthenticationError,
    ConfigError,
    KafkaProtocolError,
    LiveConnectionError,
    LiveError,
)
from metashell.live.sasl import mechanism_for
from metashell.live.tls import TlsSettings, build_tls
from metashell.numbers import is_natural
from metashell.protocol import messages

CLIENT_SOFTWARE_NAME = "metashell"
#: Largest response we accept: raft sends at most 8 MiB of records, a FetchSnapshot page what we
#: ask for.  Anything bigger means we are not talking to Kafka (e.g. "HTTP" read as a size).
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
#: Highest ApiVersions we send; v5 (KIP-1242) adds cluster-id checks that live mode does itself.
API_VERSIONS_MAX = 4
#: Minimum version per API that live mode can use (Fetch needs the topic id, FORMATS 6.6).
MIN_VERSIONS = {"Fetch": 13, "SaslHandshake": 1}

_SIZE = struct.Struct(">i")


@dataclass(frozen=True, order=True)
class Endpoint:
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_endpoints(text: str) -> list[Endpoint]:
    """``host:port[,host:port...]`` (IPv6 as ``[addr]:port``) -> endpoints, duplicates removed."""
    out: list[Endpoint] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part.startswith("["):
            host, sep, port = part[1:].partition("]:")
        else:
            host, sep, port = part.rpartition(":")
        if not sep or not host or not is_natural(port) or not 0 < int(port) < 65536:
            raise ConfigError(f"bad controller endpoint '{part}': expected host:port")
        problem = _host_problem(host)
        if problem:
            raise ConfigError(f"bad controller endpoint '{part}': {problem}")
        ep = Endpoint(host, int(port))
        if ep not in out:
            out.append(ep)
    if not out:
        raise ConfigError("no controller endpoint given: expected host:port[,host:port...]")
    return out


def _host_problem(host: str) -> str:
    """Why ``host`` cannot be resolved at all ("" when it may be): checked before any thread starts,
    because the resolver's IDNA encoding raises ``UnicodeError`` deep inside ``getaddrinfo`` (a label
    over 63 characters, a name over 253) and that surfaced as chained tracebacks."""
    if ":" in host:  # an IPv6 address
        return ""
    try:
        host.encode("idna")
    except UnicodeError:
        return "not a host name (each dot-separated label is 1 to 63 characters, the name at most 253)"
    return ""


class Connection:
    """A connected, authenticated session with one node.  Not thread-safe except :meth:`abort`."""

    def __init__(self, endpoint: Endpoint, config: ClientConfig, tls: TlsSettings | None = None) -> None:
        self.endpoint = endpoint
        self.config = config
        if config.uses_tls and tls is None:
            tls = build_tls(config)
        self._tls = tls
        self._sock: socket.socket | None = None
        self._correlation = 0
        self._aborted = False
        self._lock = threading.Lock()
        #: api key -> (min, max) the server supports, from ApiVersions.
        self.server_versions: dict[int, tuple[int, int]] = {}
        self.authenticated = False

    # -- lifecycle ----------------------------------------------------------------------------------

    def connect(self, timeout: float | None = None) -> Connection:
        """TCP connect, TLS handshake, ApiVersions, SASL: raises a one-line LiveError on failure."""
        timeout = self.config.connect_timeout if timeout is None else timeout
        ep = self.endpoint
        try:
            sock = socket.create_connection((ep.host, ep.port), timeout=timeout)
        except socket.gaierror as e:
            raise LiveConnectionError(f"cannot resolve controller host '{ep.host}': {e.strerror}") from None
        except UnicodeError:  # a name the resolver cannot even encode (an advertised listener's host)
            raise LiveConnectionError(
                f"cannot resolve controller host '{ep.host}': not a host name"
            ) from None
        except TimeoutError:
            raise LiveConnectionError(f"cannot connect to {ep}: timed out after {timeout:g}s") from None
        except ConnectionRefusedError:
            raise LiveConnectionError(f"cannot connect to {ep}: connection refused") from None
        except OSError as e:
            raise LiveConnectionError(f"cannot connect to {ep}: {e.strerror or e}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            if self._aborted:
                sock.close()
                raise LiveConnectionError(f"connection to {ep} was aborted")
            self._sock = sock
        try:
            if self._tls is not None:
                self._handshake(timeout)
            self._negotiate_versions()
            if self.config.uses_sasl:
                self._authenticate()
        except BaseException:
            self.close()
            raise
        return self

    def _handshake(self, timeout: float) -> None:
        assert self._sock is not None and self._tls is not None
        ep = self.endpoint
        try:
            wrapped = self._tls.context.wrap_socket(
                self._sock, server_hostname=ep.host, do_handshake_on_connect=False
            )
            self._sock = wrapped
            wrapped.settimeout(timeout)
            wrapped.do_handshake()
        except ssl.SSLCertVerificationError as e:
            hint = ""
            if "hostname" in (e.verify_message or "").lower() or "IP address mismatch" in str(e):
                hint = " (set ssl.endpoint.identification.algorithm= to skip hostname verification)"
            raise AuthenticationError(
                f"TLS: {ep} presented a certificate that is not trusted: {e.verify_message or e.reason}{hint}"
            ) from None
        except ssl.SSLError as e:
            reason = e.reason or str(e)
            hint = (
                " (is this listener really SSL? check security.protocol)"
                if reason
                in (
                    "WRONG_VERSION_NUMBER",
                    "UNEXPECTED_EOF_WHILE_READING",
                    "RECORD_LAYER_FAILURE",
                    "PACKET_LENGTH_TOO_LONG",
                )
                else ""
            )
            raise LiveConnectionError(f"TLS handshake with {ep} failed: {reason}{hint}") from None
        except TimeoutError:
            raise LiveConnectionError(f"TLS handshake with {ep} timed out after {timeout:g}s") from None
        except OSError as e:
            raise LiveConnectionError(
                f"TLS handshake with {ep} failed: {e.strerror or e} "
                "(is this listener really SSL? check security.protocol)"
            ) from None

    def close(self) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def abort(self) -> None:
        """Interrupt a blocked request from another thread (it fails with LiveConnectionError)."""
        with self._lock:
            self._aborted = True
            sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    @property
    def is_open(self) -> bool:
        return self._sock is not None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- versions -----------------------------------------------------------------------------------

    def _negotiate_versions(self) -> None:
        """ApiVersions at our highest version, KIP-511 fallback on UNSUPPORTED_VERSION (FORMATS 6.3)."""
        ours = min(messages.api_versions("ApiVersions")[1], API_VERSIONS_MAX)
        version = ours
        for _attempt in range(3):
            body: dict[str, Any] = {}
            if version >= 3:
                body = {"ClientSoftwareName": CLIENT_SOFTWARE_NAME, "ClientSoftwareVersion": __version__}
            resp = self._roundtrip(
                "ApiVersions", version, body, self.config.request_timeout, phase="version negotiation"
            )
            code = resp["ErrorCode"]
            if code == E.UNSUPPORTED_VERSION:
                theirs = [k for k in resp.get("ApiKeys") or [] if k["ApiKey"] == messages.API_VERSIONS_KEY]
                new = min(ours, theirs[0]["MaxVersion"]) if theirs else 0
                if new >= version:
                    new = 0 if version > 0 else -1
                if new < 0:
                    break
                version = new
                continue
            if code != E.NONE:
                raise KafkaProtocolError(
                    f"{self.endpoint} rejected ApiVersions v{version}: {E.error_name(code)}", code
                )
            self.server_versions = {k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in resp["ApiKeys"]}
            self.api_versions_version = version
            return
        raise KafkaProtocolError(f"{self.endpoint} does not accept any ApiVersions version we can send")

    def supports(self, api: str, min_version: int | None = None) -> bool:
        try:
            v = self.version(api)
        except KafkaProtocolError:
            return False
        return min_version is None or v >= min_version

    def version(self, api: str) -> int:
        """min(our max, their max), checked against both minimums and ours for live mode."""
        lo, hi = messages.api_versions(api)
        lo = max(lo, MIN_VERSIONS.get(api, lo))
        theirs = self.server_versions.get(messages.api_key(api))
        if theirs is None:
            raise KafkaProtocolError(
                f"{self.endpoint} does not support {api} (it is not a KRaft controller "
                "listener, or the server is too old)",
                E.UNSUPPORTED_VERSION,
            )
        v = min(hi, theirs[1])
        if v < max(lo, theirs[0]):
            raise KafkaProtocolError(
                f"{self.endpoint} supports {api} v{theirs[0]}-{theirs[1]} but metashell needs v{lo}-{hi}",
                E.UNSUPPORTED_VERSION,
            )
        return v

    # -- SASL ---------------------------------------------------------------------------------------

    def _authenticate(self) -> None:
        sasl = self.config.sasl
        assert sasl is not None
        ep = self.endpoint
        if not self.supports("SaslHandshake", 1):
            raise AuthenticationError(f"{ep} does not offer SASL (SaslHandshake v1); check security.protocol")
        resp = self._roundtrip(
            "SaslHandshake",
            1,
            {"Mechanism": sasl.mechanism},
            self.config.request_timeout,
            phase="SASL handshake",
        )
        code = resp["ErrorCode"]
        if code == E.UNSUPPORTED_SASL_MECHANISM:
            enabled = ", ".join(resp.get("Mechanisms") or []) or "none"
            raise AuthenticationError(
                f"{ep} does not enable SASL mechanism {sasl.mechanism} "
                f"(enabled: {enabled}); check sasl.mechanism"
            )
        if code == E.ILLEGAL_SASL_STATE:
            raise AuthenticationError(
                f"{ep} does not expect SASL authentication (is the listener PLAINTEXT "
                "or SSL? check security.protocol)"
            )
        if code != E.NONE:
            raise AuthenticationError(f"SASL handshake with {ep} failed: {E.error_name(code)}")
        mech = mechanism_for(sasl)
        auth_version = self.version("SaslAuthenticate")
        token: bytes | None = mech.first()
        while token is not None:
            resp = self._roundtrip(
                "SaslAuthenticate",
                auth_version,
                {"AuthBytes": token},
                self.config.request_timeout,
                phase="SASL authentication",
            )
            code = resp["ErrorCode"]
            if code != E.NONE:
                msg = resp.get("ErrorMessage") or E.error_name(code)
                raise AuthenticationError(
                    f"SASL authentication failed on {ep} ({sasl.mechanism}, user '{sasl.username}'): {msg}"
                )
            token = mech.respond(resp.get("AuthBytes") or b"")
        if not mech.complete():
            raise AuthenticationError(f"SASL {sasl.mechanism} with {ep} ended early")
        self.authenticated = True

    # -- requests -----------------------------------------------------------------------------------

    def request(
        self, api: str, body: dict[str, Any], *, version: int | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send one request and wait for its response body (the version is negotiated unless given)."""
        if self._sock is None:
            raise LiveConnectionError(f"connection to {self.endpoint} is closed")
        v = self.version(api) if version is None else version
        return self._roundtrip(
            api, v, body, self.config.request_timeout if timeout is None else timeout, phase=api
        )

    def _roundtrip(
        self, api: str, version: int, body: dict[str, Any], timeout: float, phase: str
    ) -> dict[Any, Any]:
        sock = self._sock
        if sock is None:
            raise LiveConnectionError(f"connection to {self.endpoint} is closed")
        self._correlation = (self._correlation + 1) & 0x7FFFFFFF
        corr = self._correlation
        frame = messages.encode_request(api, version, corr, self.config.client_id, body)
        deadline = time.monotonic() + timeout
        try:
            sock.settimeout(timeout)
            sock.sendall(frame)
            head = self._read_exact(4, deadline, phase)
            size = _SIZE.unpack(head)[0]
            if size < 4 or size > MAX_RESPONSE_BYTES:
                if head[0] in (0x15, 0x16) and head[1] == 3 and self._tls is None:
                    raise LiveConnectionError(
                        f"{self.endpoint} answered with TLS: it is an SSL listener "
                        "(check security.protocol: SSL or SASL_SSL)"
                    )
                raise LiveConnectionError(
                    f"{self.endpoint} sent a {size}-byte frame during {phase}: not a "
                    "Kafka listener, or wrong security.protocol"
                )
            payload = self._read_exact(size, deadline, phase)
        except LiveError:
            self.close()
            raise
        except TimeoutError:
            self.close()
            raise LiveConnectionError(
                f"no answer from {self.endpoint} to {phase} within {timeout:g}s"
            ) from None
        except ssl.SSLError as e:
            self.close()
            raise LiveConnectionError(f"TLS error talking to {self.endpoint}: {e.reason or e}") from None
        except OSError as e:
            self.close()
            if self._aborted:
                raise LiveConnectionError(f"connection to {self.endpoint} was aborted") from None
            what = (
                "connection reset" if e.errno in (errno.ECONNRESET, errno.EPIPE) else (e.strerror or str(e))
            )
            raise LiveConnectionError(
                f"{self.endpoint} {what} during {phase}{self._closed_hint(phase)}"
            ) from None
        try:
            got, resp = messages.decode_response(api, version, payload)
        except DecodeError as e:
            self.close()
            raise KafkaProtocolError(
                f"cannot decode {api} v{version} response from {self.endpoint}: {e.message}"
            ) from None
        if got != corr:
            self.close()
            raise KafkaProtocolError(f"{self.endpoint} answered correlation id {got}, expected {corr}")
        return resp

    def _read_exact(self, n: int, deadline: float, phase: str) -> bytes:
        sock = self._sock
        assert sock is not None
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            k = sock.recv_into(view[got:])
            if k == 0:
                if self._aborted:
                    raise LiveConnectionError(f"connection to {self.endpoint} was aborted")
                raise LiveConnectionError(
                    f"{self.endpoint} closed the connection during {phase}{self._closed_hint(phase)}"
                )
            got += k
        return bytes(buf)

    def _closed_hint(self, phase: str) -> str:
        """Why a server typically hangs up at this point (FORMATS 7.2: illegal SASL state, TLS mismatch)."""
        proto = self.config.security_protocol
        if phase == "version negotiation":
            if proto in ("PLAINTEXT", "SASL_PLAINTEXT"):
                return " (is it a TLS listener? check security.protocol)"
            return ""
        if phase.startswith("SASL"):
            return ""
        if not self.config.uses_sasl:
            return " (the listener may require SASL: check security.protocol and sasl.*)"
        return ""
