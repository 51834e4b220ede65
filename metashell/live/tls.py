"""An ``ssl.SSLContext`` from Kafka's ``ssl.*`` client properties.

Kafka clients read trust and key material as JKS, PKCS12 or PEM (files, or inline PEM in
``ssl.truststore.certificates`` / ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``).
Python's ``ssl`` only loads PEM, so JKS (``live/jks.py``) and PKCS12 (through ``cryptography``)
are converted in memory.  A client key has to pass through a file for ``load_cert_chain``; it is
written re-encrypted under a one-time random password into a private temporary directory that is
removed at once, so the plain key never touches the disk.

The declared ``*.type`` (default ``JKS``) and passwords are honoured as Kafka's
``DefaultSslEngineFactory`` honours them: a PEM store takes no store password, a JKS or PKCS12
keystore needs one, and a file whose content is not of the declared type is refused (Java 17's JKS
and PKCS12 keystores each read both binary formats, so only PEM text versus binary matters).  A
configuration Kafka's client would refuse is refused here too, with Kafka's reason.
"""

from __future__ import annotations

import os
import secrets
import shutil
import ssl
import tempfile
from dataclasses import dataclass, field
from typing import Any

from metashell.live import jks
from metashell.live.config import ClientConfig, Secret
from metashell.live.errors import ConfigError

_JKS_MAGIC = jks.MAGIC
_JCEKS_MAGIC = b"\xce\xce\xce\xce"
_PROTOCOLS = {
    "TLSV1": ssl.TLSVersion.TLSv1,
    "TLSV1.1": ssl.TLSVersion.TLSv1_1,
    "TLSV1.2": ssl.TLSVersion.TLSv1_2,
    "TLSV1.3": ssl.TLSVersion.TLSv1_3,
}


@dataclass
class TlsSettings:
    context: ssl.SSLContext
    check_hostname: bool
    warnings: list[str] = field(default_factory=list)


def _get(cfg: ClientConfig, key: str) -> str | None:
    v = cfg.ssl_props.get(key)
    if isinstance(v, Secret):
        v = v.reveal()
    return v if v else None


def _path(cfg: ClientConfig, key: str) -> str | None:
    v = _get(cfg, key)
    if v is None:
        return None
    v = os.path.expanduser(v)
    if not os.path.isabs(v) and cfg.base_dir:
        cand = os.path.join(cfg.base_dir, v)
        if os.path.exists(cand) and not os.path.exists(v):
            v = cand
    return v


def _read(cfg: ClientConfig, key: str, path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ConfigError(f"{cfg.source}: cannot read {key} {path}: {e.strerror or e}") from None


_STORE_TYPES = ("JKS", "PKCS12", "PEM")


def _declared_type(cfg: ClientConfig, what: str) -> str:
    """``ssl.truststore.type`` / ``ssl.keystore.type``, Kafka's default ``JKS`` when unset."""
    declared = (_get(cfg, f"{what}.type") or "JKS").strip().upper()
    if declared not in _STORE_TYPES:
        raise ConfigError(f"{cfg.source}: {what}.type {declared} is not supported (JKS, PKCS12 or PEM)")
    return declared


def _content_kind(cfg: ClientConfig, data: bytes, what: str, path: str) -> str:
    """What the store file holds -- "PEM", "JKS" or "PKCS12" -- checked against its declared type."""
    declared = _declared_type(cfg, what)
    if data.lstrip()[:10].startswith(b"-----BEGIN"):
        kind = "PEM"
    elif data[:4] == _JCEKS_MAGIC:
        raise ConfigError(
            f"{cfg.source}: {what} {path} is a JCEKS store, which is not supported "
            "(convert it to PKCS12 or PEM)"
        )
    else:
        kind = "JKS" if data[:4] == _JKS_MAGIC else "PKCS12"  # binary: both load as either type
    if (kind == "PEM") != (declared == "PEM"):
        found = "PEM text" if kind == "PEM" else f"a binary {kind} store"
        raise ConfigError(
            f"{cfg.source}: {what}.location {path} is {found}, but {what}.type is {declared} "
            f"(Kafka's client fails to load it; set {what}.type="
            f"{'PEM' if kind == 'PEM' else kind})"
        )
    return kind


def _check_kafka_rules(cfg: ClientConfig) -> None:
    """The combinations of ssl.* settings Kafka's ``DefaultSslEngineFactory`` refuses, refused alike
    (with Kafka's wording), so that a --config that works here works with Kafka's tools too."""

    def fail(reason: str) -> None:
        raise ConfigError(f"{cfg.source}: {reason}")

    t_certs, t_path, t_pass = (
        _get(cfg, "ssl.truststore.certificates"),
        _get(cfg, "ssl.truststore.location"),
        _get(cfg, "ssl.truststore.password"),
    )
    t_type = _declared_type(cfg, "ssl.truststore")
    if t_certs is not None:
        if t_type != "PEM":
            fail(
                f"ssl.truststore.certificates can be specified only for PEM, but ssl.truststore.type is {t_type}"
            )
        if t_path is not None:
            fail("both ssl.truststore.location and ssl.truststore.certificates are specified")
        if t_pass is not None:
            fail("ssl.truststore.password cannot be specified for PEM format")
    elif t_type == "PEM" and t_path is not None and t_pass is not None:
        fail("ssl.truststore.password cannot be specified for PEM format")
    elif t_path is None and t_pass is not None:
        fail("ssl.truststore.password is specified, but no ssl.truststore.location")

    key, chain, k_path, k_pass = (
        _get(cfg, "ssl.keystore.key"),
        _get(cfg, "ssl.keystore.certificate.chain"),
        _get(cfg, "ssl.keystore.location"),
        _get(cfg, "ssl.keystore.password"),
    )
    k_type = _declared_type(cfg, "ssl.keystore")
    if key is not None:
        if k_type != "PEM":
            fail(f"ssl.keystore.key can be specified only for PEM, but ssl.keystore.type is {k_type}")
        if chain is None:
            fail("ssl.keystore.key is specified, but ssl.keystore.certificate.chain is not")
        if k_path is not None:
            fail("both ssl.keystore.location and ssl.keystore.key are specified")
        if k_pass is not None:
            fail("ssl.keystore.password cannot be specified with PEM format, only ssl.key.password")
    elif chain is not None:
        fail("ssl.keystore.certificate.chain is specified, but ssl.keystore.key is not")
    elif k_type == "PEM" and k_path is not None:
        if k_pass is not None:
            fail("ssl.keystore.password cannot be specified with PEM format, only ssl.key.password")
    elif k_path is None and k_pass is not None:
        fail("ssl.keystore.password is specified, but no ssl.keystore.location")
    elif k_path is not None and k_pass is None:
        fail("ssl.keystore.location is specified, but ssl.keystore.password is not")


def _pem_blocks(text: str, label: str) -> list[str]:
    out: list[str] = []
    begin = f"-----BEGIN {label}-----"
    end = f"-----END {label}-----"
    pos = 0
    while True:
        i = text.find(begin, pos)
        if i < 0:
            return out
        j = text.find(end, i)
        if j < 0:
            return out
        out.append(text[i : j + len(end)] + "\n")
        pos = j + len(end)


def _der_to_pem(der: bytes) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    return x509.load_der_x509_certificate(der).public_bytes(Encoding.PEM).decode()


# -- trust -------------------------------------------------------------------------------------------


def _trusted_certs_pem(cfg: ClientConfig) -> str | None:
    """PEM text of every trusted certificate, or None to use the system's default CAs."""
    inline = _get(cfg, "ssl.truststore.certificates")
    if inline:
        certs = _pem_blocks(inline, "CERTIFICATE")
        if not certs:
            raise ConfigError(f"{cfg.source}: ssl.truststore.certificates holds no PEM certificate")
        return "".join(certs)
    path = _path(cfg, "ssl.truststore.location")
    if path is None:
        return None
    data = _read(cfg, "ssl.truststore.location", path)
    password = _get(cfg, "ssl.truststore.password")
    kind = _content_kind(cfg, data, "ssl.truststore", path)
    if kind == "PEM":
        certs = _pem_blocks(data.decode("ascii", "replace"), "CERTIFICATE")
    elif kind == "JKS":
        certs = _jks_trusted(cfg, data, password, path)
    else:
        certs = _p12_trusted(cfg, data, password, path)
    if not certs:
        raise ConfigError(f"{cfg.source}: truststore {path} contains no certificates")
    return "".join(certs)


def _jks(cfg: ClientConfig, data: bytes, password: str | None, path: str, what: str) -> jks.KeyStore:
    try:
        return jks.load(data, password)
    except jks.WrongPassword:
        raise ConfigError(
            f"{cfg.source}: wrong {what}.password for {path} (keystore integrity check failed)"
        ) from None
    except jks.JksError as e:
        raise ConfigError(f"{cfg.source}: cannot read JKS {what} {path}: {e}") from None


def _jks_trusted(cfg: ClientConfig, data: bytes, password: str | None, path: str) -> list[str]:
    ks = _jks(cfg, data, password, path, "ssl.truststore")
    certs = [_der_to_pem(der) for der in ks.trusted]
    for entry in ks.keys:  # Java also trusts the certs of key entries
        certs += [_der_to_pem(der) for der in entry.chain]
    return certs


def _load_p12(cfg: ClientConfig, data: bytes, password: str | None, path: str, what: str) -> Any:
    from cryptography.hazmat.primitives.serialization import pkcs12

    tries = [password.encode()] if password else [None, b""]
    for pw in tries:
        try:
            return pkcs12.load_pkcs12(data, pw)
        except ValueError:
            continue
    if password:
        raise ConfigError(
            f"{cfg.source}: cannot open PKCS12 {what} {path} (wrong {what}.password, or not a PKCS12 file)"
        )
    raise ConfigError(f"{cfg.source}: PKCS12 {what} {path} needs {what}.password")


def _p12_trusted(cfg: ClientConfig, data: bytes, password: str | None, path: str) -> list[str]:
    from cryptography.hazmat.primitives.serialization import Encoding

    p12 = _load_p12(cfg, data, password, path, "ssl.truststore")
    certs = []
    if p12.cert is not None:
        certs.append(p12.cert.certificate.public_bytes(Encoding.PEM).decode())
    certs += [c.certificate.public_bytes(Encoding.PEM).decode() for c in p12.additional_certs]
    return certs


# -- client key (mutual TLS) --------------------------------------------------------------------------


def _client_key_and_chain(cfg: ClientConfig) -> tuple[Any, list[Any]] | None:
    """(private key object, [certificate objects]) or None when no keystore is configured."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    key_password = _get(cfg, "ssl.key.password")
    chain_text = _get(cfg, "ssl.keystore.certificate.chain")
    key_text = _get(cfg, "ssl.keystore.key")
    if chain_text or key_text:
        if not (chain_text and key_text):
            raise ConfigError(
                f"{cfg.source}: ssl.keystore.certificate.chain and ssl.keystore.key must be given together"
            )
        return _pem_key(cfg, key_text, key_password, "ssl.keystore.key"), x509.load_pem_x509_certificates(
            chain_text.encode()
        )
    path = _path(cfg, "ssl.keystore.location")
    if path is None:
        return None
    data = _read(cfg, "ssl.keystore.location", path)
    store_password = _get(cfg, "ssl.keystore.password")
    kind = _content_kind(cfg, data, "ssl.keystore", path)
    if kind == "PEM":
        text = data.decode("ascii", "replace")
        certs = (
            x509.load_pem_x509_certificates("".join(_pem_blocks(text, "CERTIFICATE")).encode())
            if "CERTIFICATE" in text
            else []
        )
        key_blocks = [
            b
            for label in ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY")
            for b in _pem_blocks(text, label)
        ]
        if not key_blocks or not certs:
            raise ConfigError(
                f"{cfg.source}: PEM keystore {path} must hold a private key and its certificate"
            )
        return _pem_key(cfg, key_blocks[0], key_password, "ssl.keystore.location"), certs
    if kind == "JKS":
        ks = _jks(cfg, data, store_password, path, "ssl.keystore")
        if not ks.keys:
            raise ConfigError(f"{cfg.source}: JKS keystore {path} has no private key entry")
        entry = ks.keys[0]
        try:
            key = load_der_private_key(entry.unseal(key_password or store_password or ""), None)
            chain = [x509.load_der_x509_certificate(der) for der in entry.chain]
        except jks.WrongPassword:
            raise ConfigError(f"{cfg.source}: wrong ssl.key.password for the key in {path}") from None
        except (jks.JksError, ValueError) as e:
            raise ConfigError(
                f"{cfg.source}: cannot read the key entry of JKS keystore {path}: {e}"
            ) from None
        return key, chain
    if kind == "PKCS12":
        p12 = _load_p12(cfg, data, store_password, path, "ssl.keystore")
        if p12.key is None or p12.cert is None:
            raise ConfigError(f"{cfg.source}: PKCS12 keystore {path} has no private key and certificate")
        return p12.key, [p12.cert.certificate] + [c.certificate for c in p12.additional_certs]
    raise AssertionError(kind)


def _pem_key(cfg: ClientConfig, text: str, password: str | None, key: str) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        return load_pem_private_key(text.encode(), password.encode() if password else None)
    except TypeError:
        raise ConfigError(
            f"{cfg.source}: the private key in {key} is encrypted; set ssl.key.password"
        ) from None
    except ValueError:
        raise ConfigError(
            f"{cfg.source}: cannot read the private key in {key} (wrong ssl.key.password?)"
        ) from None


def _load_client_cert(ctx: ssl.SSLContext, key: Any, chain: list[Any]) -> None:
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, Encoding, PrivateFormat

    one_time = secrets.token_urlsafe(24)
    key_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(one_time.encode()))
    chain_pem = b"".join(c.public_bytes(Encoding.PEM) for c in chain)
    tmp = tempfile.mkdtemp(prefix="metashell-tls-")
    try:
        path = os.path.join(tmp, "client.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(key_pem + chain_pem)
        ctx.load_cert_chain(path, password=one_time)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- context ------------------------------------------------------------------------------------------


def build_tls(cfg: ClientConfig) -> TlsSettings:
    """The client context for ``cfg`` (raises ConfigError naming the key at fault, never a secret)."""
    warnings: list[str] = []
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    algorithm = cfg.ssl_props.get("ssl.endpoint.identification.algorithm", "https")
    algorithm = (algorithm if isinstance(algorithm, str) else "https").strip()
    check_hostname = algorithm.lower() == "https"
    if algorithm and not check_hostname:
        raise ConfigError(
            f"{cfg.source}: ssl.endpoint.identification.algorithm must be https or empty, not '{algorithm}'"
        )
    ctx.check_hostname = check_hostname
    ctx.verify_mode = ssl.CERT_REQUIRED
    enabled = _get(cfg, "ssl.enabled.protocols")
    if enabled:
        versions = []
        for name in enabled.split(","):
            v = _PROTOCOLS.get(name.strip().upper())
            if v is None:
                raise ConfigError(f"{cfg.source}: unknown protocol '{name.strip()}' in ssl.enabled.protocols")
            versions.append(v)
        ctx.minimum_version = min(versions)
        ctx.maximum_version = max(versions)
    else:
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if _get(cfg, "ssl.cipher.suites"):
        warnings.append("ssl.cipher.suites is ignored (Java suite names); OpenSSL's defaults are used")
    _check_kafka_rules(cfg)
    try:
        pem = _trusted_certs_pem(cfg)
        if pem is None:
            ctx.load_default_certs()
        else:
            ctx.load_verify_locations(cadata=pem)
        client = _client_key_and_chain(cfg)
        if client is not None:
            _load_client_cert(ctx, *client)
    except ssl.SSLError as e:
        raise ConfigError(f"{cfg.source}: unusable TLS material ({e.reason or e})") from None
    return TlsSettings(ctx, check_hostname, warnings)
