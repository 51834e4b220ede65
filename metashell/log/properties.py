"""Java ``.properties`` parsing, with ``java.util.Properties.load`` semantics.

Kafka writes ``meta.properties`` with ``Properties.store`` and reads it (and client ``--config``
files) with ``Properties.load``; a hand-edited file may use any of the syntax that loader accepts,
so this follows its rules rather than a simple ``key=value`` split:

* natural lines end with ``\\n``, ``\\r`` or ``\\r\\n``; leading blanks (space, tab, form feed) are
  skipped; a line whose first non-blank character is ``#`` or ``!`` is a comment;
* a line ending in an odd number of backslashes continues on the next line (whose leading blanks
  are dropped; a continuation line is never a comment);
* the key ends at the first unescaped ``=``, ``:`` or blank; blanks around, and one ``=``/``:``
  after, the key are skipped; the value is the rest of the line, trailing blanks kept;
* escapes: ``\\t \\n \\r \\f``, ``\\uXXXX``, and ``\\c`` = ``c`` for any other character;
* bytes are ISO-8859-1 (``load(InputStream)``); later duplicates win.

Where Java would throw (a malformed ``\\uXXXX``), this keeps the text as written instead: the
caller is reading someone else's file and should show what is there.
"""

from __future__ import annotations

import os

from metashell.log.files import open_regular

__all__ = ["load_properties", "parse_properties"]

_BLANKS = " \t\f"


def _natural_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _logical_lines(text: str) -> list[str]:
    out: list[str] = []
    current: list[str] | None = None  # pieces of a line being continued
    for raw in _natural_lines(text):
        line = raw.lstrip(_BLANKS)
        if current is None and (not line or line[0] in "#!"):
            continue
        # count trailing backslashes: odd means "continues on the next line"
        n = len(line) - len(line.rstrip("\\"))
        continued = n % 2 == 1
        if continued:
            line = line[:-1]
        if current is None:
            current = [line]
        else:
            current.append(line)
        if not continued:
            out.append("".join(current))
            current = None
    if current is not None:  # a continuation at end of file: Java keeps what it has
        joined = "".join(current)
        if joined:
            out.append(joined)
    return out


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i = 0
    n = len(s)
    while i < n:
        c = s[i]
        i += 1
        if c != "\\" or i >= n:
            if c != "\\":
                out.append(c)
            continue
        c = s[i]
        i += 1
        if c == "u":
            digits = s[i : i + 4]
            if len(digits) == 4 and all(d in "0123456789abcdefABCDEF" for d in digits):
                out.append(chr(int(digits, 16)))
                i += 4
            else:  # malformed: Java throws; keep it visible instead
                out.append("\\u")
        else:
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c))
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    n = len(line)
    key_len = 0
    value_start = n
    has_sep = False
    backslash = False
    while key_len < n:
        c = line[key_len]
        if c in "=:" and not backslash:
            value_start = key_len + 1
            has_sep = True
            break
        if c in _BLANKS and not backslash:
            value_start = key_len + 1
            break
        backslash = (not backslash) if c == "\\" else False
        key_len += 1
    while value_start < n:
        c = line[value_start]
        if c not in _BLANKS:
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return _unescape(line[:key_len]), _unescape(line[value_start:])


def parse_properties(data: str | bytes) -> dict[str, str]:
    """Parse the text (or ISO-8859-1 bytes) of a Java properties file into an ordered dict."""
    text = data.decode("latin-1") if isinstance(data, (bytes, bytearray)) else data
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        props[key] = value
    return props


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read and parse a properties file (read-only)."""
    with open_regular(path) as f:  # a FIFO must not block for ever
        return parse_properties(f.read())
