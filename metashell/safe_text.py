"""Control characters in metadata strings, made visible before they reach a terminal or a parser.

Metadata strings are attacker-controlled: anyone who may create a topic, alter a config, register a
broker or add an ACL chooses bytes that an operator's terminal will later be shown.  ESC starts
escape sequences (OSC 52 writes the clipboard, OSC 0 the window title), CR and BS overwrite what
is already on the line, and the C1 controls U+0080-U+009F are escape sequences of their own on many
terminals (U+009B is CSI).  So every human-readable output renders them visibly, the way Python's
``repr`` does: ``\\x1b`` for C0, ``\\u007f`` and ``\\u009b`` for DEL and C1 (the same
text inside a JSON string is a valid escape of the same character).

* :func:`visible` is for text that is one value or one name: every control character is escaped,
  newline and tab included (a name with a newline must not look like two lines).
* :func:`visible_output` is for whole outputs, where newlines (and tabs) are layout: everything else
  is escaped.  The shell passes everything it prints through it, as the last line of defence.
* :func:`storable` is for data written to a table (Arrow, Parquet): control characters are data
  there, but a lone surrogate cannot be encoded at all, so only it is escaped.
* :func:`json_safe` finishes a JSON document: :func:`json.dumps` escapes C0 but passes DEL and C1
  through (JSON allows them); they become ``\\u007f``...``\\u009f``, which round-trips exactly.

This module imports nothing of metashell, so every layer may use it.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["json_safe", "storable", "visible", "visible_output"]

# Lone surrogates (U+D800-U+DFFF) too: Java strings may hold one (a ``\uD800`` escape in
# meta.properties, a controller's DescribeCluster), and no UTF-8 stream can carry it: printed raw,
# it is an encoding error that stops the command, or the REPL before its first prompt.
_ALL = "[\x00-\x1f\x7f-\x9f\ud800-\udfff]"
_NOT_LAYOUT = "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]"
_JSON_UNESCAPED = "[\x7f-\x9f\ud800-\udfff]"
_SURROGATE = "[\ud800-\udfff]"
# Most text is ASCII (``str.isascii`` is free: CPython knows it), and the ASCII part of a class
# compiles to a 256-bit map in microseconds, where a class reaching the surrogates takes about a
# millisecond to compile: so the wide patterns are compiled when non-ASCII text first comes.
_ALL_ASCII = re.compile("[\x00-\x1f\x7f]")
_NOT_LAYOUT_ASCII = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


@cache
def _wide(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x7F else f"\\u{c:04x}"


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def visible(text: str) -> str:
    """``text`` with every control character (C0, DEL, C1) written as an escape."""
    pattern = _ALL_ASCII if text.isascii() else _wide(_ALL)
    return pattern.sub(_escape, text) if pattern.search(text) else text


def visible_output(text: str) -> str:
    """``text`` with every control character but newline and tab written as an escape."""
    pattern = _NOT_LAYOUT_ASCII if text.isascii() else _wide(_NOT_LAYOUT)
    return pattern.sub(_escape, text) if pattern.search(text) else text


def storable(text: str) -> str:
    """``text`` with each lone surrogate written as ``\\udXXX``, so that UTF-8 can carry it."""
    if text.isascii():
        return text
    pattern = _wide(_SURROGATE)
    return pattern.sub(_json_escape, text) if pattern.search(text) else text


def json_safe(document: str) -> str:
    """A JSON document (from :func:`json.dumps`) with DEL and C1 escaped as ``\\u00XX`` too."""
    if document.isascii():
        return document.replace("\x7f", "\\u007f")
    pattern = _wide(_JSON_UNESCAPED)
    return pattern.sub(_json_escape, document) if pattern.search(document) else document
