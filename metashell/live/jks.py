"""Java's JKS keystore, read: the trusted certificates and the private key entries of a
``keytool``-made ``.jks`` file, as OpenJDK's ``sun.security.provider.JavaKeyStore`` writes them.

Kafka's client defaults ``ssl.keystore.type`` and ``ssl.truststore.type`` to JKS, so a live config
copied from a broker often names one.  This is the whole of the format a client needs (JCEKS is
refused before it gets here), written here rather than taken from ``pyjks``: pyjks pulls in
``twofish``, published only as an sdist with a C extension, so a host without a compiler could not
install metashell's wheel.

The file is hostile input: every length is checked against the bytes left before it is used, and a
wrong password is told apart from a damaged file by the store's own integrity digest.

Layout (big-endian): magic ``FEEDFEED``, version (1 or 2), entry count; per entry a tag (1: private
key, 2: trusted certificate), an alias (Java's modified UTF-8, a 2-byte length), a timestamp (8
bytes), then for a key its protected PKCS#8 (4-byte length) and certificate chain (a count, then
each certificate), for a trusted entry one certificate; a certificate is (version 2 only) its type
as a UTF string and its DER (4-byte length).  Last, SHA-1 over the password (UTF-16BE), the words
"Mighty Aphrodite" and every byte before the digest.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass

MAGIC = b"\xfe\xed\xfe\xed"
_WHITENER = b"Mighty Aphrodite"
_DIGEST = 20  # SHA-1
#: ``sun.security.provider.KeyProtector``'s algorithm, the only one a JKS key entry is sealed with.
_KEY_PROTECTOR_OID = "1.3.6.1.4.1.42.2.17.1.1"


class JksError(ValueError):
    """The file is not a JKS store metashell can read; the message says what was wrong."""


class WrongPassword(JksError):
    """The store's integrity digest, or a key entry's check, disagrees with the password given."""


@dataclass(frozen=True)
class KeyEntry:
    """A private key entry: its key still sealed (``unseal`` opens it) and its chain in DER."""

    alias: str
    sealed: bytes
    chain: tuple[bytes, ...]

    def unseal(self, password: str) -> bytes:
        """The PKCS#8 DER of the key (``KeyProtector.recover``): the sealed bytes are a 20-byte
        salt, the key XORed with a SHA-1 stream of password and salt, and SHA-1(password, key)."""
        oid, blob = _encrypted_private_key_info(self.sealed)
        if oid != _KEY_PROTECTOR_OID:
            raise JksError(f"key entry {self.alias!r} is sealed with {oid}, not Sun's JKS key protector")
        if len(blob) < 2 * _DIGEST:
            raise JksError(f"key entry {self.alias!r} is too short to hold a key")
        salt, body, check = blob[:_DIGEST], blob[_DIGEST:-_DIGEST], blob[-_DIGEST:]
        pw = _password_bytes(password)
        stream = bytearray()
        digest = salt
        while len(stream) < len(body):
            digest = hashlib.sha1(pw + digest).digest()
            stream += digest
        key = (int.from_bytes(body, "big") ^ int.from_bytes(stream[: len(body)], "big")).to_bytes(
            len(body), "big"
        )
        if not hmac.compare_digest(hashlib.sha1(pw + key).digest(), check):
            raise WrongPassword(f"the password does not open key entry {self.alias!r}")
        return key


@dataclass(frozen=True)
class KeyStore:
    trusted: tuple[bytes, ...]
    keys: tuple[KeyEntry, ...]


def load(data: bytes, password: str | None) -> KeyStore:
    """The entries of a JKS file, its integrity digest checked against ``password``.  As Java's
    ``KeyStore.load``: with no password (a truststore whose ``ssl.truststore.password`` is unset,
    which Kafka's client allows) the digest is not checked; an empty password is checked."""
    if len(data) < 12 + _DIGEST or data[:4] != MAGIC:
        raise JksError("not a JKS keystore (no FEEDFEED header)")
    body, digest = data[:-_DIGEST], data[-_DIGEST:]
    if password is not None:
        expected = hashlib.sha1(_password_bytes(password) + _WHITENER + body).digest()
        if not hmac.compare_digest(expected, digest):
            raise WrongPassword("keystore integrity check failed (wrong password, or the file was changed)")
    r = _Reader(body, 4)
    version = r.u32()
    if version not in (1, 2):
        raise JksError(f"JKS version {version} (only 1 and 2 exist)")
    count = r.u32()
    trusted: list[bytes] = []
    keys: list[KeyEntry] = []
    for _ in range(count):
        at = r.at
        tag = r.u32()
        alias = r.utf()
        r.take(8)  # creation time
        if tag == 1:
            sealed = r.blob()
            chain = tuple(r.certificate(version) for _ in range(r.count(4)))
            keys.append(KeyEntry(alias, sealed, chain))
        elif tag == 2:
            trusted.append(r.certificate(version))
        else:
            raise JksError(f"entry at byte {at} has tag {tag} (1: key, 2: certificate; 3 is JCEKS only)")
    if r.at != len(body):
        raise JksError(f"{len(body) - r.at} bytes after the last of {count} entries")
    return KeyStore(tuple(trusted), tuple(keys))


def _password_bytes(password: str) -> bytes:
    """Java's ``char[]`` of the password, two bytes a char, high first (UTF-16BE)."""
    return password.encode("utf-16-be", "surrogatepass")


class _Reader:
    """Big-endian fields of ``data``, each checked to lie inside it."""

    def __init__(self, data: bytes, at: int) -> None:
        self.data, self.at = data, at

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise JksError(f"truncated at byte {self.at}: {n} bytes wanted, {len(self.data) - self.at} left")
        out = self.data[self.at : self.at + n]
        self.at += n
        return out

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def count(self, least_each: int) -> int:
        """A count of items at least ``least_each`` bytes long: more than the bytes left can hold is
        damage, refused before anything is made for them."""
        at, n = self.at, self.u32()
        if n * least_each > len(self.data) - self.at:
            raise JksError(f"count {n} at byte {at} is more than the file can hold")
        return n

    def blob(self) -> bytes:
        return self.take(self.u32())

    def utf(self) -> str:
        (n,) = struct.unpack(">H", self.take(2))
        raw = self.take(n)
        # Java's modified UTF-8 differs only for NUL and characters beyond the BMP
        return raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "replace")

    def certificate(self, version: int) -> bytes:
        if version == 2:
            kind = self.utf()
            if kind != "X.509":
                raise JksError(f"a {kind!r} certificate (only X.509 is read)")
        return self.blob()


def _encrypted_private_key_info(der: bytes) -> tuple[str, bytes]:
    """(algorithm OID, encrypted data) of PKCS#8's EncryptedPrivateKeyInfo:
    SEQUENCE { SEQUENCE { OID, parameters }, OCTET STRING }."""
    outer, rest = _der(der, 0x30)
    if rest:
        raise JksError("bytes after a key entry's EncryptedPrivateKeyInfo")
    algorithm, rest = _der(outer, 0x30)
    blob, rest = _der(rest, 0x04)
    if rest:
        raise JksError("bytes after a key entry's encrypted key")
    oid, _params = _der(algorithm, 0x06)
    return _oid_text(oid), blob


def _der(data: bytes, tag: int) -> tuple[bytes, bytes]:
    """(contents, what follows) of one DER element of ``tag`` at the start of ``data``."""
    if len(data) < 2 or data[0] != tag:
        raise JksError(f"a key entry is not DER (tag {data[:1].hex() or 'missing'}, wanted {tag:02x})")
    n, at = data[1], 2
    if n & 0x80:
        width = n & 0x7F
        if not 1 <= width <= 4 or len(data) < 2 + width:
            raise JksError("a key entry's DER length is malformed")
        n, at = int.from_bytes(data[2 : 2 + width], "big"), 2 + width
    if at + n > len(data):
        raise JksError("a key entry's DER element runs past its end")
    return data[at : at + n], data[at + n :]


def _oid_text(raw: bytes) -> str:
    if not raw:
        raise JksError("an empty OID")
    parts = [raw[0] // 40, raw[0] % 40]
    value = 0
    for byte in raw[1:]:
        value = value << 7 | byte & 0x7F
        if not byte & 0x80:
            parts.append(value)
            value = 0
    return ".".join(map(str, parts))
