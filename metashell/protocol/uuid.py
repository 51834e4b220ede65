"""Kafka's Uuid text form: URL-safe base64 of the 16 bytes without padding (22 characters).

Uuids travel through metashell as 16-byte ``bytes``: cheap to slice out of a record, hashable,
and ordered like Kafka's unsigned comparison.  Only display code turns them into text.
"""

from __future__ import annotations

from binascii import a2b_base64, b2a_base64

ZERO_UUID = bytes(16)
ONE_UUID = bytes(15) + b"\x01"
METADATA_TOPIC_ID = ONE_UUID


_URL_SAFE = bytes.maketrans(b"+/", b"-_")
_FROM_URL_SAFE = bytes.maketrans(b"-_", b"+/")


def uuid_to_str(value: bytes) -> str:
    return b2a_base64(value, newline=False)[:22].translate(_URL_SAFE).decode("ascii")


_TEXTS: dict[bytes, str] = {}
_TEXTS_MAX = 1 << 18


def uuid_text(value: bytes) -> str:
    """:func:`uuid_to_str`, remembered: bulk conversions (the Spark ``records`` table) meet the same
    ids again and again -- a topic's id in every change of its partitions, a log directory's id in
    every partition.  The memory is bounded (emptied when it holds 262,144 ids, about 40 MB)."""
    text = _TEXTS.get(value)
    if text is None:
        if len(_TEXTS) >= _TEXTS_MAX:
            _TEXTS.clear()
        text = _TEXTS[value] = uuid_to_str(value)
    return text


def uuid_from_str(text: str) -> bytes:
    """Parse Kafka's text form; raises ValueError for anything that is not 16 bytes."""
    if len(text) > 24:
        raise ValueError(f"not a Kafka uuid: {text!r}")
    # What base64.urlsafe_b64decode does (non-ASCII text is a ValueError, characters outside the
    # alphabet are skipped), without importing base64 on every start.
    raw = a2b_base64(text.encode("ascii").translate(_FROM_URL_SAFE) + b"=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka uuid: {text!r}")
    return raw


def uuid_java_order(value: bytes) -> tuple[int, int]:
    """Sort key matching Java's ``Uuid.compareTo`` (signed msb, then signed lsb)."""
    msb = int.from_bytes(value[:8], "big", signed=True)
    lsb = int.from_bytes(value[8:], "big", signed=True)
    return msb, lsb
