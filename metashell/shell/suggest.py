""" "Did you mean ...?": the nearest names to a mistyped one, for every command's error message.

One place, so that :mod:`difflib` is imported only when a name was mistyped: a one-shot start does
not pay for it.
"""

from __future__ import annotations

from collections.abc import Iterable


def close_matches(word: str, names: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` of ``names`` closest to ``word`` (:func:`difflib.get_close_matches`)."""
    import difflib

    return difflib.get_close_matches(word, list(names), n=n, cutoff=cutoff)
