"""Kafka client properties (``--config FILE``) -> what the live client needs.

Only the keys a controller connection uses are interpreted (FORMATS.md 7.1); others are ignored,
as Kafka clients ignore unknown keys.  Secrets (passwords, private keys, the JAAS text) are kept in
:class:`Secret` wrappers whose ``str``/``repr`` never show the value, and error messages name keys,
never values, so nothing secret can reach the terminal, a log or the shell history.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from metashell.live.errors import ConfigError
from metashell.live.jaas import parse_jaas_config

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

#: Keys whose values are secret (Kafka's ConfigDef type PASSWORD, plus the JAAS text).
SECRET_KEYS = frozenset(
    {
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.truststore.password",
        "ssl.keystore.key",
        "sasl.jaas.config",
        "sasl.oauthbearer.client.credentials.client.secret",
    }
)
_SECRETISH = re.compile(r"password|secret|jaas|credential|(^|\.)key$|token", re.IGNORECASE)

REDACTED = "[hidden]"


class Secret:
    """A string that refuses to print itself; call :meth:`reveal` where the value is really needed."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({REDACTED!r})"

    def __str__(self) -> str:
        return REDACTED

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self) -> tuple[Any, ...]:  # never pickle a secret by accident
        raise TypeError("secrets are not picklable")


def is_secret_key(key: str) -> bool:
    return key in SECRET_KEYS or bool(_SECRETISH.search(key))


def redact_properties(props: Mapping[str, str]) -> dict[str, str]:
    """A copy safe to show: secret values replaced by ``[hidden]``."""
    return {k: (REDACTED if is_secret_key(k) and v else v) for k, v in props.items()}


@dataclass(frozen=True)
class SaslSettings:
    mechanism: str
    username: str
    password: Secret = field(repr=False)
    authzid: str = ""
    #: SCRAM extensions (e.g. ``tokenauth=true`` for delegation-token authentication).
    extensions: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ClientConfig:
    """Parsed client settings.  ``ssl_props`` keeps the raw ``ssl.*`` keys (secrets wrapped)."""

    security_protocol: str = "PLAINTEXT"
    client_id: str = "metashell"
    sasl: SaslSettings | None = None
    ssl_props: dict[str, str | Secret] = field(default_factory=dict, repr=False)
    connect_timeout: float = 10.0
    request_timeout: float = 30.0
    #: Directory relative paths in the file are resolved against (the properties file's folder).
    base_dir: str | None = None
    source: str = "client properties"
    #: Lines of the file that configure nothing metashell uses (Kafka's clients log the same as "was
    #: supplied but isn't a known config"): a typo or a garbage line must not pass in silence.
    ignored: tuple[str, ...] = ()

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ClientConfig:
        from metashell.log.properties import load_properties

        try:
            props = load_properties(path)
        except OSError as e:
            raise ConfigError(f"cannot read client config {os.fspath(path)}: {e.strerror or e}") from None
        return cls.from_properties(
            props, source=os.fspath(path), base_dir=os.path.dirname(os.path.abspath(path))
        )

    @classmethod
    def from_properties(
        cls, props: Mapping[str, str], source: str = "client properties", base_dir: str | None = None
    ) -> ClientConfig:
        props = {k.strip(): v.strip() if not is_secret_key(k) else v for k, v in props.items()}
        proto = props.get("security.protocol", "PLAINTEXT").strip().upper() or "PLAINTEXT"
        if proto not in SECURITY_PROTOCOLS:
            raise ConfigError(
                f"{source}: security.protocol must be one of {', '.join(SECURITY_PROTOCOLS)}, not '{proto}'"
            )
        sasl = _sasl_settings(props, source) if proto.startswith("SASL_") else None
        ssl_props: dict[str, str | Secret] = {}
        for k, v in props.items():
            if k.startswith("ssl."):
                ssl_props[k] = Secret(v) if is_secret_key(k) else v
        return cls(
            security_protocol=proto,
            client_id=props.get("client.id") or "metashell",
            sasl=sasl,
            ssl_props=ssl_props,
            connect_timeout=_ms(props, "socket.connection.setup.timeout.ms", 10_000, source),
            request_timeout=_ms(props, "request.timeout.ms", 30_000, source),
            base_dir=base_dir,
            source=source,
            ignored=tuple(k for k in props if not _used(k)),
        )


#: Keys (and prefixes) the live client reads; anything else in a --config file is reported as ignored.
_USED_KEYS = frozenset(
    (
        "security.protocol",
        "client.id",
        "request.timeout.ms",
        "socket.connection.setup.timeout.ms",
        "bootstrap.controllers",
        "bootstrap.servers",
    )
)
_USED_PREFIXES = ("ssl.", "sasl.")


def _used(key: str) -> bool:
    return key in _USED_KEYS or key.startswith(_USED_PREFIXES)


def _ms(props: Mapping[str, str], key: str, default: int, source: str) -> float:
    text = props.get(key)
    if not text:
        return default / 1000
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"{source}: {key} must be a number of milliseconds, not '{text}'") from None
    if value <= 0:
        raise ConfigError(f"{source}: {key} must be positive")
    return value / 1000


_MODULE_MECHANISMS = {
    "org.apache.kafka.common.security.plain.PlainLoginModule": ("PLAIN",),
    "org.apache.kafka.common.security.scram.ScramLoginModule": ("SCRAM-SHA-256", "SCRAM-SHA-512"),
}


def _sasl_settings(props: Mapping[str, str], source: str) -> SaslSettings:
    mechanism = (props.get("sasl.mechanism") or "GSSAPI").strip().upper()
    if mechanism not in SASL_MECHANISMS:
        raise ConfigError(
            f"{source}: sasl.mechanism {mechanism} is not supported (use {', '.join(SASL_MECHANISMS)})"
        )
    jaas = props.get("sasl.jaas.config")
    if not jaas or not jaas.strip():
        raise ConfigError(
            f"{source}: security.protocol {props.get('security.protocol')} needs "
            "sasl.jaas.config (a JAAS file via java.security.auth.login.config is not supported)"
        )
    modules = parse_jaas_config(jaas)
    if len(modules) != 1:
        raise ConfigError(f"{source}: sasl.jaas.config contains {len(modules)} login modules, should be 1")
    module = modules[0]
    expected = _MODULE_MECHANISMS.get(module.name)
    if expected is not None and mechanism not in expected:
        raise ConfigError(f"{source}: sasl.mechanism {mechanism} does not match login module {module.name}")
    opts = module.options
    username = opts.get("username")
    password = opts.get("password")
    if not username or password is None:
        raise ConfigError(f"{source}: sasl.jaas.config must set username and password for {mechanism}")
    extensions: list[tuple[str, str]] = []
    if mechanism.startswith("SCRAM") and opts.get("tokenauth", "").lower() == "true":
        extensions.append(("tokenauth", "true"))
    return SaslSettings(mechanism, username, Secret(password), opts.get("authzid", ""), tuple(extensions))
