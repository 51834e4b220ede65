"""Output helpers: JSON lines for ``--json`` and pygments colouring for terminals.

Colour is decided once by the caller (terminal, ``NO_COLOR`` unset, no ``--no-color``) and only ever
adds ANSI sequences around JSON text, so byte-exact output (``/image``, pipes, files) is untouched.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import IO, Any

from metashell.safe_text import json_safe


def json_line(obj: Any) -> str:
    """One compact JSON document on one line (JSON Lines), non-ASCII kept readable, but no control
    character raw (C1 and DEL escaped too: see :mod:`metashell.safe_text`)."""
    return json_safe(json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_fallback))


def _fallback(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray)):
        return obj.hex()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


@lru_cache(maxsize=1)
def _pygments() -> tuple[Any, Any, Any] | None:
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import JsonLexer
    except ImportError:  # pragma: no cover - pygments is a declared dependency
        return None
    return highlight, JsonLexer(), TerminalFormatter()


def colorize_json(text: str) -> str:
    """``text`` (JSON) with ANSI colours; unchanged if pygments is missing.  No trailing newline is
    added or removed."""
    tools = _pygments()
    if tools is None:
        return text
    highlight, lexer, formatter = tools
    out: str = highlight(text, lexer, formatter)
    if not text.endswith("\n") and out.endswith("\n"):
        out = out[:-1]
    return out


def color_wanted(stream: IO[str], no_color_flag: bool = False) -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set (https://no-color.org) or
    ``--no-color`` was given."""
    if no_color_flag or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
