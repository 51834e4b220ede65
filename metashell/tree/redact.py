"""Which config values are secrets (and which config keys Kafka 4.4 keeps in its image).

Kafka marks secrets with ``ConfigDef.Type.PASSWORD``.  The table below is every PASSWORD-type key of
Kafka 4.4.0's ConfigDefs, read from the jars (``KafkaConfig.configDef()``, ``LogConfig``,
``GroupConfig``, ``ClientMetricsConfigs``; only the broker has any), plus keys older releases had.
A config value is redacted when its key

* is such a key, or ends with ``.<such key>`` -- this covers the per-listener and per-mechanism
  variants (``listener.name.external.ssl.keystore.password``,
  ``listener.name.sasl_ssl.plain.sasl.jaas.config``) and client-side prefixes; or
* contains ``password``, ``secret`` or ``jaas`` (whatever the resource type), or names key material
  (``ssl.keystore.key``, ``ssl.keystore.certificate.chain``, ``ssl.truststore.certificates``,
  ``*.private.key*``).

A rule of thumb wins over precision here: hiding a harmless value costs a ``--no-redact``, leaking a
keystore password costs an incident.
"""

from __future__ import annotations

from metashell.image.model import kafka_shell_shows_config

REDACTED = "[redacted]"

PASSWORD_KEYS: frozenset[str] = frozenset({
    # Kafka 4.4.0 KafkaConfig.configDef(): every key of type PASSWORD
    "delegation.token.secret.key",
    "sasl.jaas.config",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "sasl.oauthbearer.client.credentials.client.secret",
    "ssl.key.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.keystore.password",
    "ssl.truststore.certificates",
    "ssl.truststore.password",
    # PASSWORD keys of 3.x releases that may still sit in a metadata log
    "delegation.token.master.key",
    "password.encoder.secret",
    "password.encoder.old.secret",
})
"""PASSWORD-type config keys (Kafka 4.4.0 ConfigDefs; TOPIC, GROUP, CLIENT_METRICS have none)."""

_SUBSTRINGS = ("password", "secret", "jaas", "private.key", "credentials")
_SUFFIXES = tuple("." + k for k in PASSWORD_KEYS)


def is_sensitive_config(key: str) -> bool:
    """True when the value of config ``key`` must be hidden unless redaction is off."""
    k = key.lower()
    if k in PASSWORD_KEYS or k.endswith(_SUFFIXES):
        return True
    return any(s in k for s in _SUBSTRINGS)


def redact_config(key: str, value: str | None, redact: bool) -> str | None:
    """``value``, or ``[redacted]`` when redacting a sensitive key (None stays None)."""
    if redact and value is not None and is_sensitive_config(key):
        return REDACTED
    return value


# --------------------------------------------------------------------------------------------
# Kafka 4.4's image only keeps supported config keys (DefaultSupportedConfigChecker); the table
# lives with the image model, which documents it.


def kafka_keeps_config(resource_type: int, key: str) -> bool:
    """Kafka 4.4's ``DefaultSupportedConfigChecker``: its metadata loader ignores ConfigRecords for
    keys it does not support, so they never appear in ``/image``: every BROKER key is kept, TOPIC /
    CLIENT_METRICS / GROUP keys only when known, BROKER_LOGGER and unknown resource types never."""
    return kafka_shell_shows_config(resource_type, key)
