"""Which config values are secrets (and which config keys Kafka 4.4 keeps in its image).

Kafka's rule (``KafkaConfig.maybeSensitive``, used wherever Kafka describes configs to clients, and
``KafkaConfigSchema.isSensitive``, used by the controller's record redactor): a value is sensitive
when its key's ``ConfigDef.Type`` is PASSWORD *or cannot be determined*.  metashell applies it with
the ConfigDefs of the Kafka releases it knows (:mod:`.config_keys`, generated from Kafka's jars by
``scripts/gen_config_keys.py``), per resource type:

* BROKER, TOPIC, GROUP, CLIENT_METRICS: a key every release defines is shown unless some release
  types it PASSWORD; any other key (``custom.api.token``, ``confluent.license``, a typo) is
  redacted.  Broker keys with a listener prefix (``listener.name.<l>.<key>``, and
  ``listener.name.<l>.<mechanism>.<key>`` for SASL) take the type of ``<key>``, as
  ``KafkaConfig.configType`` resolves them;
* BROKER_LOGGER: log levels, never secrets (Kafka describes them unredacted);
* any other resource type: every value is redacted (Kafka has no ConfigDef for it).

Keys are compared exactly, as Kafka compares them: no case folding, so no Unicode case trick
(``passwİrd``, a dotted capital I) can make an unknown key look known.  ``tests/test_redaction.py``
checks the rule against Kafka's own classes on the same keys.
"""

from __future__ import annotations

from collections.abc import Callable

from metashell.image.forms import REDACTED
from metashell.image.kafka_names import kafka_shell_shows_config

from .config_keys import KNOWN, PASSWORD

BROKER, BROKER_LOGGER = 4, 8
_LISTENER_PREFIX = "listener.name."


def _broker_key_type(key: str) -> bool | None:
    """PASSWORD (True), another type (False) or unknown (None) for a broker key, prefixes resolved."""
    candidates = [key]
    if key.startswith(_LISTENER_PREFIX):
        rest = key[len(_LISTENER_PREFIX) :].partition(".")[2]
        candidates += [rest, rest.partition(".")[2]]  # <key>, and <key> after a SASL mechanism
    for cand in candidates:
        if cand in KNOWN[BROKER]:
            return cand in PASSWORD[BROKER]
    return None


def is_sensitive_config(resource_type: int, key: str) -> bool:
    """True when the value of config ``key`` of a ``resource_type`` resource must be hidden."""
    if resource_type == BROKER_LOGGER:
        return False
    if resource_type == BROKER:
        password = _broker_key_type(key)
        return password is None or password
    if resource_type in KNOWN:
        return key not in KNOWN[resource_type] or key in PASSWORD[resource_type]
    return True


def redact_config(resource_type: int, key: str, value: str | None, redact: bool) -> str | None:
    """``value``, or ``[redacted]`` when redacting a sensitive key (None stays None)."""
    if redact and value is not None and is_sensitive_config(resource_type, key):
        return REDACTED
    return value


def config_redactor(redact: bool) -> Callable[[int, str, str | None], str | None]:
    """:func:`redact_config` with ``redact`` fixed: what ``history`` and ``log`` hand the image
    layer, which tells config values in its summaries but knows nothing of the session's settings."""

    def redact_value(resource_type: int, key: str, value: str | None) -> str | None:
        return redact_config(resource_type, key, value, redact)

    return redact_value


# --------------------------------------------------------------------------------------------
# Kafka 4.4's image only keeps supported config keys (DefaultSupportedConfigChecker); the table
# lives with the image model, which documents it.


def kafka_keeps_config(resource_type: int, key: str) -> bool:
    """Kafka 4.4's ``DefaultSupportedConfigChecker``: its metadata loader ignores ConfigRecords for
    keys it does not support, so they never appear in ``/image``: every BROKER key is kept, TOPIC /
    CLIENT_METRICS / GROUP keys only when known, BROKER_LOGGER and unknown resource types never."""
    return kafka_shell_shows_config(resource_type, key)


SCRAM_SECRET_FIELDS = ("salt", "storedKey", "serverKey")
"""UserScramCredentialRecord fields that are secrets (Kafka's ``RecordRedactor`` hides them too)."""


#: The record types :func:`redact_record_json` may change (every other one comes back as it is).
REDACTED_RECORDS = frozenset({"ConfigRecord", "UserScramCredentialRecord"})


def redact_record_json(record: str, data: dict[str, object]) -> dict[str, object]:
    """A record's data in Kafka's JSON form (``log --json``, the Spark ``records`` table) with its
    secrets replaced: a sensitive ConfigRecord value, a SCRAM credential's salt and keys.
    ``record`` is the schema name (``ConfigRecord``); other records come back as they are."""
    if record == "ConfigRecord":
        value = data.get("value")
        if isinstance(value, str) and is_sensitive_config(
            int(str(data.get("resourceType", 0))), str(data.get("name"))
        ):
            return {**data, "value": REDACTED}
    elif record == "UserScramCredentialRecord":
        return {**data, **{k: REDACTED for k in SCRAM_SECRET_FIELDS if k in data}}
    return data
