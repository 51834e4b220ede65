"""Java's ``String.compareTo`` order, which Kafka's shell sorts names by (and so the tree does).

Python compares code points, Java UTF-16 code units: the two differ only for supplementary
characters against U+E000..U+FFFF, which hostile or exotic names may hold.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["java_sort_key", "java_sorted"]


def java_sort_key(name: str) -> str | bytes:
    """Sort key equal to Java ``String.compareTo`` order (UTF-16 code units).

    Python compares code points; the two orders only differ for supplementary characters
    (>= U+10000, two surrogates in UTF-16 starting 0xD800) versus U+E000..U+FFFF.  Comparing
    the UTF-16-BE bytes gives code-unit order; ASCII names (nearly all) keep the cheap str key.
    """
    return name if name.isascii() else name.encode("utf-16-be")


def java_sorted(names: Iterable[str]) -> list[str]:
    """``names`` sorted like Kafka's shell sorts child names (``names.sort(String::compareTo)``)."""
    names = list(names)
    if all(n.isascii() for n in names):
        names.sort()
    else:
        names.sort(key=lambda n: n.encode("utf-16-be"))
    return names
