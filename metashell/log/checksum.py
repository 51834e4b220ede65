"""CRC32C (Castagnoli), the checksum of every record batch: one place decides which implementation.

With the native engine it is the native core's (``native/src/lib.rs``); with the Python engine it is
the ``crc32c`` package's C function.  Both take any contiguous buffer and give the same value
(``tests/test_native_differential.py``).

The package's ``__init__`` reads its own version through ``importlib.metadata``, which imports
``email``, ``zipfile``, ``socket`` and more: about 50 ms of every start.  So the package's C module
(``crc32c._crc32c``) is loaded from its file, as ``import`` would load it, without running the
package's ``__init__``; where the package is laid out otherwise, it is imported as usual.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from metashell.engine import current as current_engine

__all__ = ["crc32c"]

_C_MODULE = "crc32c._crc32c"


def package_crc32c() -> Callable[..., int]:
    """The ``crc32c`` package's ``crc32c`` function, loaded without the package's ``__init__``."""
    module = sys.modules.get(_C_MODULE)
    if module is None:
        module = _load_c_module()
    if module is None:
        from crc32c import crc32c as imported

        return imported
    fn: Callable[..., int] = module.crc32c
    return fn


def _load_c_module() -> Any:
    """``crc32c._crc32c`` loaded from the package's folder and registered under its own name (a later
    ``import crc32c`` then finds it loaded), or None when the package is not laid out that way."""
    import importlib.util
    import os
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader

    package = importlib.util.find_spec("crc32c")
    folders = (package.submodule_search_locations or []) if package is not None else []
    for folder in folders:
        for suffix in EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_crc32c" + suffix)
            if os.path.isfile(path):
                loader = ExtensionFileLoader(_C_MODULE, path)
                spec = importlib.util.spec_from_file_location(_C_MODULE, path, loader=loader)
                if spec is None:
                    return None
                module = importlib.util.module_from_spec(spec)
                sys.modules[_C_MODULE] = module
                try:
                    loader.exec_module(module)
                except BaseException as e:
                    del sys.modules[_C_MODULE]
                    if isinstance(e, ImportError):
                        return None  # the plain import then says what is wrong, in its own words
                    raise
                return module
    return None


def _choose() -> Callable[[Any], int]:
    native = current_engine().native
    if native is not None:
        fn: Callable[[Any], int] = native.crc32c
        return fn
    return package_crc32c()


crc32c = _choose()
"""``crc32c(buffer) -> int``."""
