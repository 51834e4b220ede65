"""CRC32C (Castagnoli), the checksum of every record batch: one place decides which implementation.

With the native engine it is the native core's (``native/src/lib.rs``), because importing the
``crc32c`` package costs about 70 ms of every one-shot command (its ``__init__`` reads package
metadata); with the Python engine it is that package.  Both take any contiguous buffer and give the
same value (``tests/test_native_differential.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metashell.engine import current as current_engine

__all__ = ["crc32c"]


def _choose() -> Callable[[Any], int]:
    native = current_engine().native
    if native is not None:
        fn: Callable[[Any], int] = native.crc32c
        return fn
    from crc32c import crc32c as package_crc32c

    return package_crc32c


crc32c = _choose()
"""``crc32c(buffer) -> int``."""
