"""metashell's JKS reader (``metashell/live/jks.py``) on stores Java's own keytool made, and on
damaged and forged copies of them: every entry read back as Java wrote it, a wrong password told
apart from damage, and any damage one ``JksError`` (a ``ConfigError`` line in a live config), never
a traceback or a large allocation."""

from __future__ import annotations

import contextlib
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metashell.live import ClientConfig, jks
from metashell.live.errors import ConfigError
from metashell.live.tls import build_tls

pytestmark = pytest.mark.skipif(shutil.which("keytool") is None, reason="keytool (a JDK) is not on PATH")

STORE_PASSWORD, KEY_PASSWORD = "changeit", "keypass1"


def _keytool(*args: object) -> None:
    done = subprocess.run(
        ["keytool", "-noprompt", *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """keytool's own: an RSA and an EC key pair (self-signed), and a truststore of their two
    certificates exported and imported again."""
    d = tmp_path_factory.mktemp("jks")
    keys = d / "keys.jks"
    for alias, alg in (
        ("rsa", ["-keyalg", "RSA", "-keysize", "2048"]),
        ("ec", ["-keyalg", "EC", "-groupname", "secp256r1"]),
    ):
        _keytool(
            "-genkeypair", "-alias", alias, *alg, "-dname", f"CN={alias}", "-validity", "2",
            "-keystore", keys, "-storetype", "JKS", "-storepass", STORE_PASSWORD, "-keypass", KEY_PASSWORD,
        )  # fmt: skip
        _keytool(
            "-exportcert",
            "-rfc",
            "-alias",
            alias,
            "-file",
            d / f"{alias}.pem",
            "-keystore",
            keys,
            "-storepass",
            STORE_PASSWORD,
        )
        _keytool(
            "-importcert", "-alias", alias, "-file", d / f"{alias}.pem",
            "-keystore", d / "trust.jks", "-storetype", "JKS", "-storepass", STORE_PASSWORD,
        )  # fmt: skip
    return {"keys": keys, "trust": d / "trust.jks", "dir": d}


def test_keytools_stores_read_back(stores: dict[str, Path]) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_der_private_key

    trust = jks.load(stores["trust"].read_bytes(), STORE_PASSWORD)
    assert trust.keys == ()
    names = sorted(x509.load_der_x509_certificate(der).subject.rfc4514_string() for der in trust.trusted)
    assert names == ["CN=ec", "CN=rsa"]
    ks = jks.load(stores["keys"].read_bytes(), STORE_PASSWORD)
    assert sorted(e.alias for e in ks.keys) == ["ec", "rsa"] and ks.trusted == ()
    for entry in ks.keys:
        key = load_der_private_key(entry.unseal(KEY_PASSWORD), None)
        (cert,) = (x509.load_der_x509_certificate(der) for der in entry.chain)
        assert cert.public_key() == key.public_key()  # the key is the one its certificate names
        assert cert.subject.rfc4514_string() == f"CN={entry.alias}"


def test_passwords_as_java_checks_them(stores: dict[str, Path]) -> None:
    data = stores["keys"].read_bytes()
    with pytest.raises(jks.WrongPassword, match="integrity check failed"):
        jks.load(data, "wrong")
    with pytest.raises(jks.WrongPassword):
        jks.load(data, "")  # an empty password is a password, checked
    ks = jks.load(data, None)  # none at all: Java reads the entries and checks nothing
    with pytest.raises(jks.WrongPassword, match="does not open key entry"):
        ks.keys[0].unseal(STORE_PASSWORD)


def test_every_truncation_is_refused(stores: dict[str, Path]) -> None:
    data = stores["trust"].read_bytes()
    for n in range(len(data)):
        with pytest.raises(jks.JksError):
            jks.load(data[:n], None)


def test_a_forged_count_is_refused_before_anything_is_made(stores: dict[str, Path]) -> None:
    data = bytearray(stores["trust"].read_bytes())
    data[8:12] = struct.pack(">I", 0xFFFFFFFF)  # the entry count
    with pytest.raises(jks.JksError, match="truncated|count"):
        jks.load(bytes(data), None)
    chain_count = bytearray(stores["keys"].read_bytes())
    ks = jks.load(bytes(chain_count), None)
    at = bytes(chain_count).index(ks.keys[0].sealed) + len(ks.keys[0].sealed)
    chain_count[at : at + 4] = struct.pack(">I", 0x7FFFFFFF)
    with pytest.raises(jks.JksError, match="more than the file can hold"):
        jks.load(bytes(chain_count), None)


@given(st.data())
def test_any_damage_is_a_jks_error(stores: dict[str, Path], data: st.DataObject) -> None:
    """Bytes flipped, cut out or put in anywhere: a store that reads, or one JksError."""
    raw = bytearray(stores["keys"].read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        edit = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if edit == "flip":
            raw[at] ^= data.draw(st.integers(1, 255))
        elif edit == "cut":
            del raw[at : at + data.draw(st.integers(1, 16))]
        else:
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=16))
    try:
        ks = jks.load(bytes(raw), None)
    except jks.JksError:
        return
    for entry in ks.keys:
        with contextlib.suppress(jks.JksError):
            entry.unseal(KEY_PASSWORD)


def test_a_damaged_store_in_a_live_config_is_one_line(stores: dict[str, Path], tmp_path: Path) -> None:
    raw = bytearray(stores["trust"].read_bytes())
    raw[40] ^= 0xFF
    damaged = tmp_path / "trust.jks"
    damaged.write_bytes(bytes(raw))
    cfg = ClientConfig.from_properties(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": str(damaged),
            "ssl.truststore.password": STORE_PASSWORD,
        },
        source="client.properties",
    )
    with pytest.raises(ConfigError) as e:
        build_tls(cfg)
    (line,) = str(e.value).splitlines()
    assert line.startswith("client.properties: wrong ssl.truststore.password for ") and str(damaged) in line
