"""Whole numbers and seconds typed by a person (offsets, counts, ports, intervals): ASCII only.

``str.isdigit()`` is true for ``²`` and ``①``, which ``int()`` then refuses (an internal error where a
usage error belongs), and ``int()`` itself takes any Unicode decimal digit (``"١٢"`` is 12), which
nobody means when typing an offset.  ``float()`` takes ``inf`` and ``nan``, which no interval can be.
Every parser of typed numbers goes through here.  This module imports nothing of metashell.
"""

from __future__ import annotations

__all__ = ["is_int", "is_natural", "parse_int", "parse_seconds"]

#: A decimal number as a person types one (compiled when first needed: every start imports this
#: module, few parse seconds).
_DECIMAL = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"

#: The longest interval a person can mean (a year), and what ``time.sleep`` and timers accept.
MAX_SECONDS = 365 * 24 * 3600.0


def is_int(text: str) -> bool:
    """``text`` is an optionally signed run of ASCII digits."""
    return is_natural(text[1:] if text[:1] in ("+", "-") else text)


def is_natural(text: str) -> bool:
    """``text`` is a run of ASCII digits (no sign): among ASCII characters only ``0``-``9`` are
    digits to ``str.isdigit``."""
    return text.isascii() and text.isdigit()


def parse_int(text: str) -> int:
    """``int(text)`` for ASCII digits only; ``ValueError`` for anything else."""
    if not is_int(text):
        raise ValueError(f"not a whole number: {text!r}")
    return int(text)


def parse_seconds(text: str) -> float:
    """A positive, finite number of seconds no longer than :data:`MAX_SECONDS`; ``ValueError``
    otherwise (``inf``, ``nan``, ``1e999``, ``0``, ``-1``, non-ASCII digits)."""
    import math
    import re

    if re.fullmatch(_DECIMAL, text.strip()) is None:
        raise ValueError(f"not a number of seconds: {text!r}")
    seconds = float(text)
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_SECONDS):
        raise ValueError(f"not a positive number of seconds up to a year: {text!r}")
    return seconds
