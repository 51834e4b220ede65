"""Output helpers: JSON lines for ``--json`` and pygments colouring for terminals.

Colour is decided once by the caller (terminal, ``NO_COLOR`` unset, no ``--no-color``) and only ever
adds ANSI sequences around JSON text, so byte-exact output (``/image``, pipes, files) is untouched.
"""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from typing import IO, Any

from metashell.safe_text import json_safe


def json_line(obj: Any) -> str:
    """One compact JSON document on one line (JSON Lines), non-ASCII kept readable, but no control
    character raw (C1 and DEL escaped too: see :mod:`metashell.safe_text`).

    Strict JSON: a float that is not finite (a quota value can be NaN or infinite: the record is a
    float64) becomes the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``, Java's spelling.
    Python's ``json`` would write the bare words, which no strict parser (``jq``, Spark) accepts."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_fallback, allow_nan=False)
    except ValueError:  # rare: only then walk the document
        text = json.dumps(
            _finite(obj), ensure_ascii=False, separators=(",", ":"), default=_fallback, allow_nan=False
        )
    return json_safe(text)


def _finite(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by its Java name (a string)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "NaN" if math.isnan(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


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
