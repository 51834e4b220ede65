"""TLS material for SSL listeners in tests: a throwaway CA and a server certificate for 127.0.0.1."""

from __future__ import annotations

import contextlib
import datetime as _dt
from pathlib import Path


def make_tls_material(directory: Path, password: str = "changeit") -> dict[str, Path]:
    """Create a self-signed CA and a server cert for 127.0.0.1/localhost in ``directory``.

    Writes PEM files Kafka reads directly (``ssl.keystore.type=PEM``): ``ca.pem`` (truststore),
    ``server.pem`` (unencrypted PKCS#8 key followed by the cert chain), plus ``server.key``/
    ``server.crt`` and PKCS12 files (``server.p12``, ``truststore.p12``) for other clients.
    """
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.UTC) - _dt.timedelta(days=1)
    later = now + _dt.timedelta(days=3650)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "metashell test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(later)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    cert_pem = cert.public_bytes(pem)
    ca_pem = ca_cert.public_bytes(pem)
    files = {
        "ca": directory / "ca.pem",
        "ca_key": directory / "ca.key",
        "server_pem": directory / "server.pem",
        "server_key": directory / "server.key",
        "server_crt": directory / "server.crt",
        "server_p12": directory / "server.p12",
        "truststore_p12": directory / "truststore.p12",
    }
    files["ca"].write_bytes(ca_pem)
    files["ca_key"].write_bytes(
        ca_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    files["server_pem"].write_bytes(key_pem + cert_pem + ca_pem)
    files["server_key"].write_bytes(key_pem)
    files["server_crt"].write_bytes(cert_pem + ca_pem)
    enc = serialization.BestAvailableEncryption(password.encode())
    files["server_p12"].write_bytes(
        pkcs12.serialize_key_and_certificates(b"localhost", key, cert, [ca_cert], enc)
    )
    with contextlib.suppress(Exception):  # cryptography >= 45 only
        files["truststore_p12"].write_bytes(
            pkcs12.serialize_java_truststore([pkcs12.PKCS12Certificate(ca_cert, b"ca")], enc)
        )
    return files
