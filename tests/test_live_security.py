"""Client properties, JAAS, SASL mechanisms and TLS material for live mode (no Kafka needed).

TLS material is made here with ``cryptography`` (and Java's own ``keytool`` for JKS) and checked with real
handshakes against a local ``ssl`` server, including client certificates and hostname checks.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metashell.live import ClientConfig, Secret, redact_properties
from metashell.live.config import SaslSettings
from metashell.live.errors import AuthenticationError, ConfigError
from metashell.live.jaas import parse_jaas_config
from metashell.live.sasl import Plain, Scram
from metashell.live.tls import build_tls

pytestmark = pytest.mark.timeout(60)

SCRAM_JAAS = (
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cr=t;x";'
)


# ---------------------------------------------------------------------------------------------------
# JAAS and properties


def test_jaas_grammar() -> None:
    text = """
      // a comment
      org.apache.kafka.common.security.scram.ScramLoginModule Required /* inline */
        username=alice password="p\\"w d;" tokenauth=true;
    """
    [m] = parse_jaas_config(text)
    assert m.name == "org.apache.kafka.common.security.scram.ScramLoginModule"
    assert m.flag == "required"
    assert m.options == {"username": "alice", "password": 'p"w d;', "tokenauth": "true"}
    assert 'p"w' not in repr(m)


@pytest.mark.parametrize(
    "text, message",
    [
        ("Module required username=a", "not terminated by ';'"),
        ("Module mandatory username=a;", "invalid control flag 'mandatory'"),
        ('Module required password="unterminated;', "unterminated quoted value"),
        ("Module required username;", "expected '=' after option username"),
        ("", "empty"),
    ],
)
def test_jaas_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_jaas_config(text)


def test_jaas_errors_never_show_values() -> None:
    with pytest.raises(ConfigError) as ei:
        parse_jaas_config('Module required password="hunter2" = ;')
    assert "hunter2" not in str(ei.value)


def test_client_config_sasl_scram(tmp_path: Path) -> None:
    f = tmp_path / "client.properties"
    f.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        f"sasl.jaas.config={SCRAM_JAAS}\nssl.truststore.password=changeit\nclient.id=ops\n"
        "request.timeout.ms=5000\n"
    )
    cfg = ClientConfig.from_file(f)
    assert cfg.uses_sasl and cfg.uses_tls and cfg.client_id == "ops" and cfg.request_timeout == 5.0
    assert cfg.sasl is not None and cfg.sasl.username == "alice" and cfg.sasl.mechanism == "SCRAM-SHA-512"
    assert cfg.sasl.password.reveal() == "s3cr=t;x"
    text = repr(cfg) + str(cfg.sasl) + repr(cfg.ssl_props)
    assert "s3cr" not in text and "changeit" not in text


def test_redact_properties() -> None:
    props = {
        "sasl.jaas.config": SCRAM_JAAS,
        "ssl.keystore.password": "x",
        "ssl.key.password": "y",
        "ssl.keystore.key": "-----BEGIN",
        "security.protocol": "SSL",
    }
    red = redact_properties(props)
    assert red["security.protocol"] == "SSL"
    assert all(v == "[hidden]" for k, v in red.items() if k != "security.protocol")
    assert str(Secret("pw")) == "[hidden]" and "pw" not in repr(Secret("pw"))


@pytest.mark.parametrize(
    "props, message",
    [
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "GSSAPI",
                "sasl.jaas.config": "x required;",
            },
            "sasl.mechanism GSSAPI is not supported",
        ),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs sasl.jaas.config"),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": SCRAM_JAAS,
            },
            "does not match login module",
        ),
        ({"security.protocol": "TLS"}, "security.protocol must be one of"),
        ({"request.timeout.ms": "soon"}, "request.timeout.ms must be a number"),
    ],
)
def test_client_config_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as ei:
        ClientConfig.from_properties(props)
    assert "s3cr" not in str(ei.value)


def test_missing_config_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read client config .*nope.properties: No such file"):
        ClientConfig.from_file(tmp_path / "nope.properties")


# ---------------------------------------------------------------------------------------------------
# SASL


def _settings(mech: str, user: str = "user", password: str = "pencil") -> SaslSettings:
    return SaslSettings(mech, user, Secret(password))


def test_plain_token() -> None:
    m = Plain(_settings("PLAIN", "alice", "secret"))
    assert m.first() == b"\0alice\0secret"
    assert m.respond(b"") is None and m.complete()


def test_scram_sha256_rfc7677_vector() -> None:
    m = Scram(_settings("SCRAM-SHA-256"), nonce="rOprNGfwEbeRWgbNEkqO")
    assert m.first() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    final = m.respond(
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert final == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert m.respond(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None
    assert m.complete()


def _server_side(
    mech: str, password: str, client_first: bytes, salt: bytes, iterations: int
) -> tuple[Any, ...]:
    """What Kafka's ScramSaslServer computes, to check SHA-512 end to end."""
    h = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mech]
    bare = client_first.decode()[3:]
    nonce = dict(p.split("=", 1) for p in bare.split(","))["r"] + "SERVERNONCE"
    server_first = f"r={nonce},s={base64.b64encode(salt).decode()},i={iterations}"
    salted = hashlib.pbkdf2_hmac(h, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", h).digest()
    stored = hashlib.new(h, client_key).digest()
    server_key = hmac.new(salted, b"Server Key", h).digest()
    return server_first, stored, server_key, bare, h


@pytest.mark.parametrize("mech", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_round_trip(mech: str) -> None:
    m = Scram(_settings(mech, "a=b,c", "pw"))
    first = m.first()
    assert first.startswith(b"n,,n=a=3Db=2Cc,r=")
    server_first, stored, server_key, bare, h = _server_side(mech, "pw", first, b"salty", 4096)
    final = m.respond(server_first.encode()).decode()
    without_proof, proof_b64 = final.rsplit(",p=", 1)
    auth = f"{bare},{server_first},{without_proof}".encode()
    client_key = bytes(
        a ^ b for a, b in zip(base64.b64decode(proof_b64), hmac.new(stored, auth, h).digest(), strict=False)
    )
    assert hashlib.new(h, client_key).digest() == stored  # the server accepts the proof
    sig = base64.b64encode(hmac.new(server_key, auth, h).digest())
    assert m.respond(b"v=" + sig) is None and m.complete()


def test_scram_rejects_bad_server_signature_and_low_iterations() -> None:
    m = Scram(_settings("SCRAM-SHA-256"))
    server_first, *_ = _server_side("SCRAM-SHA-256", "pencil", m.first(), b"salt", 4096)
    m.respond(server_first.encode())
    with pytest.raises(AuthenticationError, match="signature is invalid"):
        m.respond(b"v=" + base64.b64encode(b"x" * 32))
    m = Scram(_settings("SCRAM-SHA-256"))
    server_first, *_ = _server_side("SCRAM-SHA-256", "pencil", m.first(), b"salt", 1000)
    with pytest.raises(AuthenticationError, match="1000 iterations"):
        m.respond(server_first.encode())
    m = Scram(_settings("SCRAM-SHA-256"))
    m.first()
    with pytest.raises(AuthenticationError, match="nonce"):
        m.respond(b"r=othernonce,s=c2FsdA==,i=4096")


# ---------------------------------------------------------------------------------------------------
# TLS


def _name(cn: str) -> Any:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(
    subject: str,
    key: Any,
    issuer_name: Any,
    issuer_key: Any,
    *,
    ca: bool = False,
    sans: list[Any] | None = None,
) -> Any:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    now = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)
    b = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


#: The client key's own password in client.jks.
JKS_KEY_PASSWORD = "keypass1"


def keytool(*args: object) -> None:
    """Java's keytool, making a JKS store (``-storetype JKS``: Java 17's default is PKCS12)."""
    if shutil.which("keytool") is None:
        pytest.skip("keytool (a JDK) is not on PATH: JKS stores are made by Java's own tool")
    argv = ["keytool", "-noprompt", *map(str, args)]
    if args[0] == "-importkeystore":
        argv += ["-deststoretype", "JKS"]
    else:
        argv += ["-storetype", "JKS"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        NoEncryption,
        PrivateFormat,
        pkcs12,
    )

    d = tmp_path_factory.mktemp("pki")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert("test CA", ca_key, _name("test CA"), ca_key, ca=True)
    other_key = ec.generate_private_key(ec.SECP256R1())
    other_ca = _cert("other CA", other_key, _name("other CA"), other_key, ca=True)
    out: dict[str, Any] = {"dir": d}

    def server(name: str, sans: list[Any]) -> tuple[Path, Path]:
        k = ec.generate_private_key(ec.SECP256R1())
        c = _cert(name, k, ca.subject, ca_key, sans=sans)
        kp, cp = d / f"{name}.key", d / f"{name}.crt"
        kp.write_bytes(k.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
        cp.write_bytes(c.public_bytes(Encoding.PEM))
        return kp, cp

    out["server"] = server(
        "localhost", [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    )
    out["wrong_host"] = server("elsewhere", [x509.DNSName("elsewhere.example")])
    ca_pem = ca.public_bytes(Encoding.PEM)
    (d / "ca.pem").write_bytes(ca_pem)
    out["ca_pem"] = ca_pem.decode()
    (d / "other.pem").write_bytes(other_ca.public_bytes(Encoding.PEM))
    enc = BestAvailableEncryption(b"changeit")
    (d / "trust.p12").write_bytes(
        pkcs12.serialize_java_truststore([pkcs12.PKCS12Certificate(ca, b"ca")], enc)
    )
    # client identity for mutual TLS
    ck = ec.generate_private_key(ec.SECP256R1())
    cc = _cert("client", ck, ca.subject, ca_key)
    key_enc = ck.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(b"keypw"))
    (d / "client.pem").write_bytes(key_enc + cc.public_bytes(Encoding.PEM))
    out["client_key_pem"] = key_enc.decode()
    out["client_chain_pem"] = cc.public_bytes(Encoding.PEM).decode()
    (d / "client.p12").write_bytes(pkcs12.serialize_key_and_certificates(b"client", ck, cc, None, enc))
    # JKS as Java writes it: keytool (keytool wants key passwords of 6 characters or more)
    keytool(
        "-importcert",
        "-alias",
        "ca",
        "-file",
        d / "ca.pem",
        "-keystore",
        d / "trust.jks",
        "-storepass",
        "changeit",
    )
    keytool(
        "-importkeystore",
        *("-srckeystore", d / "client.p12", "-srcstoretype", "PKCS12", "-srcstorepass", "changeit"),
        *("-srcalias", "client", "-destkeystore", d / "client.jks", "-deststorepass", "changeit"),
        *("-destkeypass", JKS_KEY_PASSWORD),
    )
    return out


class TlsServer:
    """Accepts one TLS connection at a time and reports whether the handshake succeeded."""

    def __init__(self, key: Path, cert: Path, ca: Path, require_client: bool = False) -> None:
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        if require_client:
            self.ctx.verify_mode = ssl.CERT_REQUIRED
            self.ctx.load_verify_locations(ca)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.results: list[str] = []
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                with self.ctx.wrap_socket(c, server_side=True) as s:
                    self.results.append("ok")
                    s.recv(1)
            except (ssl.SSLError, OSError) as e:
                self.results.append(f"fail {e}")

    def close(self) -> None:
        self.sock.close()


def _handshake(props: dict[str, str], port: int, host: str = "127.0.0.1", base: Path | None = None) -> None:
    cfg = ClientConfig.from_properties(
        {"security.protocol": "SSL", **props}, base_dir=str(base) if base else None
    )
    tls = build_tls(cfg)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        tls.context.wrap_socket(raw, server_hostname=host),
    ):
        pass


@pytest.fixture
def server(pki: dict[str, Any]) -> Iterator[TlsServer]:
    key, cert = pki["server"]
    s = TlsServer(key, cert, pki["dir"] / "ca.pem")
    yield s
    s.close()


@pytest.mark.parametrize(
    "props",
    [
        {"ssl.truststore.type": "PEM", "ssl.truststore.location": "ca.pem"},
        {
            "ssl.truststore.type": "PKCS12",
            "ssl.truststore.location": "trust.p12",
            "ssl.truststore.password": "changeit",
        },
        {
            "ssl.truststore.type": "JKS",
            "ssl.truststore.location": "trust.jks",
            "ssl.truststore.password": "changeit",
        },
        {
            "ssl.truststore.location": "trust.p12",
            "ssl.truststore.password": "changeit",
        },  # JKS type reads PKCS12
    ],
    ids=["pem", "pkcs12", "jks", "pkcs12-as-jks"],
)
def test_truststores(pki: dict[str, Any], server: TlsServer, props: dict[str, str]) -> None:
    _handshake(props, server.port, base=pki["dir"])


def test_inline_pem_truststore(pki: dict[str, Any], server: TlsServer) -> None:
    _handshake({"ssl.truststore.type": "PEM", "ssl.truststore.certificates": pki["ca_pem"]}, server.port)


def test_untrusted_server_fails(pki: dict[str, Any], server: TlsServer) -> None:
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(
            {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki["dir"] / "other.pem")},
            server.port,
        )


def test_hostname_verification_default_and_disabled(pki: dict[str, Any]) -> None:
    key, cert = pki["wrong_host"]
    s = TlsServer(key, cert, pki["dir"] / "ca.pem")
    try:
        trust = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki["dir"] / "ca.pem")}
        with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
            _handshake(trust, s.port)
        _handshake({**trust, "ssl.endpoint.identification.algorithm": ""}, s.port)
    finally:
        s.close()


def test_wrong_truststore_password(pki: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="wrong ssl.truststore.password") as ei:
        build_tls(
            ClientConfig.from_properties(
                {
                    "security.protocol": "SSL",
                    "ssl.truststore.location": str(pki["dir"] / "trust.jks"),
                    "ssl.truststore.password": "wrongpass",
                }
            )
        )
    assert "wrongpass" not in str(ei.value)


@pytest.mark.parametrize("kind", ["pem-file", "pem-inline", "pkcs12", "jks"])
def test_client_certificates(pki: dict[str, Any], kind: str) -> None:
    key, cert = pki["server"]
    s = TlsServer(key, cert, pki["dir"] / "ca.pem", require_client=True)
    d = pki["dir"]
    props = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(d / "ca.pem")}
    if kind == "pem-file":
        props |= {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(d / "client.pem"),
            "ssl.key.password": "keypw",
        }
    elif kind == "pem-inline":
        props |= {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.key": pki["client_key_pem"],
            "ssl.keystore.certificate.chain": pki["client_chain_pem"],
            "ssl.key.password": "keypw",
        }
    elif kind == "pkcs12":
        props |= {
            "ssl.keystore.type": "PKCS12",
            "ssl.keystore.location": str(d / "client.p12"),
            "ssl.keystore.password": "changeit",
        }
    else:
        props |= {
            "ssl.keystore.location": str(d / "client.jks"),
            "ssl.keystore.password": "changeit",
            "ssl.key.password": JKS_KEY_PASSWORD,
        }
    try:
        _handshake(props, s.port)
        import time

        for _ in range(50):
            if s.results:
                break
            time.sleep(0.05)
        assert s.results and s.results[0] == "ok", s.results
    finally:
        s.close()


@pytest.mark.parametrize(
    ("props", "reason"),
    [
        (
            {
                "ssl.truststore.type": "PKCS12",
                "ssl.truststore.location": "ca.pem",
                "ssl.truststore.password": "wrong",
            },
            "ssl.truststore.location {d}/ca.pem is PEM text, but ssl.truststore.type is PKCS12",
        ),
        (
            {"ssl.truststore.location": "ca.pem"},
            "ssl.truststore.location {d}/ca.pem is PEM text, but ssl.truststore.type is JKS",
        ),
        (
            {"ssl.truststore.type": "PEM", "ssl.truststore.location": "trust.p12"},
            "ssl.truststore.location {d}/trust.p12 is a binary PKCS12 store, but ssl.truststore.type is PEM",
        ),
        (
            {
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": "ca.pem",
                "ssl.truststore.password": "x",
            },
            "ssl.truststore.password cannot be specified for PEM format",
        ),
        (
            {"ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----"},
            "ssl.truststore.certificates can be specified only for PEM, but ssl.truststore.type is JKS",
        ),
        (
            {"ssl.truststore.password": "x"},
            "ssl.truststore.password is specified, but no ssl.truststore.location",
        ),
        ({"ssl.truststore.type": "BCFKS"}, "ssl.truststore.type BCFKS is not supported"),
        (
            {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": "client.p12"},
            "ssl.keystore.location is specified, but ssl.keystore.password is not",
        ),
        (
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": "client.pem",
                "ssl.keystore.password": "keypw",
            },
            "ssl.keystore.password cannot be specified with PEM format, only ssl.key.password",
        ),
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.key": "k"},
            "ssl.keystore.key is specified, but ssl.keystore.certificate.chain is not",
        ),
        (
            {"ssl.keystore.certificate.chain": "c"},
            "ssl.keystore.certificate.chain is specified, but ssl.keystore.key is not",
        ),
    ],
    ids=[
        "pkcs12-declared-pem-file",
        "jks-default-pem-file",
        "pem-declared-binary-file",
        "pem-with-password",
        "inline-certs-not-pem",
        "password-without-store",
        "unknown-type",
        "keystore-without-password",
        "pem-keystore-with-store-password",
        "key-without-chain",
        "chain-without-key",
    ],
)
def test_kafka_refuses_these_and_so_does_metashell(
    pki: dict[str, Any], props: dict[str, str], reason: str
) -> None:
    """DefaultSslEngineFactory's rules: the declared store type and passwords are honoured; the
    message names the setting at fault and never a password."""
    d = pki["dir"]
    full = {"security.protocol": "SSL"} | {
        k: str(d / v) if k.endswith(".location") else v for k, v in props.items()
    }
    with pytest.raises(ConfigError) as ei:
        build_tls(ClientConfig.from_properties(full))
    assert reason.format(d=d) in str(ei.value)
    assert "wrong" not in str(ei.value).replace("wrong ssl", "") and "keypw" not in str(ei.value)


def test_encrypted_key_without_password(pki: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="encrypted; set ssl.key.password"):
        build_tls(
            ClientConfig.from_properties(
                {
                    "security.protocol": "SSL",
                    "ssl.keystore.type": "PEM",
                    "ssl.keystore.location": str(pki["dir"] / "client.pem"),
                }
            )
        )
