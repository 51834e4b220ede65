"""SASL client mechanisms: PLAIN and SCRAM-SHA-256/512 (RFC 5802 as Kafka does it, FORMATS.md 7.2).

A mechanism is a small state machine: :meth:`first` gives the first client token,
:meth:`respond` turns each server token into the next client token (``None`` when done), and
:meth:`complete` tells whether the exchange finished successfully.  The connection drives it
through SaslAuthenticate requests; this module never sees a socket.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import string

from metashell.live.config import SaslSettings
from metashell.live.errors import AuthenticationError

#: Kafka's client refuses fewer iterations (ScramMechanism.minIterations) ...
SCRAM_MIN_ITERATIONS = 4096
#: ... and a silly high count would just burn CPU (Kafka caps credentials at 16384 when created).
SCRAM_MAX_ITERATIONS = 1 << 20
_NONCE_ALPHABET = string.ascii_lowercase + string.digits


class SaslMechanism:
    name = ""

    def first(self) -> bytes:
        raise NotImplementedError

    def respond(self, challenge: bytes) -> bytes | None:
        raise NotImplementedError

    def complete(self) -> bool:
        raise NotImplementedError


class Plain(SaslMechanism):
    name = "PLAIN"

    def __init__(self, settings: SaslSettings) -> None:
        self._settings = settings
        self._sent = False

    def first(self) -> bytes:
        s = self._settings
        self._sent = True
        return b"\0".join([s.authzid.encode(), s.username.encode(), s.password.reveal().encode()])

    def respond(self, challenge: bytes) -> bytes | None:
        return None  # the server's (empty) answer ends PLAIN

    def complete(self) -> bool:
        return self._sent


def _saslname(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def _attrs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise AuthenticationError("SCRAM: malformed server message")
        out.setdefault(key, value)
    return out


class Scram(SaslMechanism):
    """client-first -> server-first -> client-final -> server-final (verified in constant time)."""

    def __init__(self, settings: SaslSettings, nonce: str | None = None) -> None:
        self.name = settings.mechanism
        self._hash = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[settings.mechanism]
        self._settings = settings
        self._nonce = nonce or "".join(secrets.choice(_NONCE_ALPHABET) for _ in range(32))
        self._client_first_bare = ""
        self._server_signature = b""
        self._state = "initial"

    def _hmac(self, key: bytes, msg: bytes) -> bytes:
        return hmac.new(key, msg, self._hash).digest()

    def first(self) -> bytes:
        ext = "".join(f",{k}={v}" for k, v in self._settings.extensions)
        self._client_first_bare = f"n={_saslname(self._settings.username)},r={self._nonce}{ext}"
        self._state = "sent-first"
        return ("n,," + self._client_first_bare).encode()

    def respond(self, challenge: bytes) -> bytes | None:
        text = challenge.decode("utf-8", "replace")
        if self._state == "sent-first":
            return self._final(text)
        if self._state == "sent-final":
            attrs = _attrs(text)
            if "e" in attrs:
                raise AuthenticationError(f"SCRAM authentication failed: server error '{attrs['e']}'")
            try:
                signature = base64.b64decode(attrs.get("v", ""), validate=True)
            except ValueError:
                signature = b""
            if not hmac.compare_digest(signature, self._server_signature):
                raise AuthenticationError(
                    "SCRAM: the server's signature is invalid (it does not know "
                    "this user's credentials; possible man-in-the-middle)"
                )
            self._state = "done"
            return None
        raise AuthenticationError("SCRAM: unexpected server message after authentication completed")

    def _final(self, server_first: str) -> bytes:
        attrs = _attrs(server_first)
        if "e" in attrs:
            raise AuthenticationError(f"SCRAM authentication failed: server error '{attrs['e']}'")
        nonce, salt_b64, iters = attrs.get("r", ""), attrs.get("s", ""), attrs.get("i", "")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise AuthenticationError("SCRAM: the server's nonce does not extend ours")
        try:
            salt = base64.b64decode(salt_b64, validate=True)
            iterations = int(iters)
        except ValueError:
            raise AuthenticationError("SCRAM: malformed salt or iteration count from the server") from None
        if not SCRAM_MIN_ITERATIONS <= iterations <= SCRAM_MAX_ITERATIONS:
            raise AuthenticationError(
                f"SCRAM: server asked for {iterations} iterations "
                f"(allowed {SCRAM_MIN_ITERATIONS}..{SCRAM_MAX_ITERATIONS})"
            )
        password = self._settings.password.reveal().encode("utf-8")
        salted = hashlib.pbkdf2_hmac(self._hash, password, salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self._hash, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._client_first_bare},{server_first},{without_proof}".encode()
        client_signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, client_signature, strict=False))
        self._server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        self._state = "sent-final"
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def complete(self) -> bool:
        return self._state == "done"


def mechanism_for(settings: SaslSettings) -> SaslMechanism:
    if settings.mechanism == "PLAIN":
        return Plain(settings)
    return Scram(settings)
