"""Package re-exports imported on first use (PEP 562), so that importing one module of a package
does not import all of it.

``metashell.log`` and ``metashell.image`` re-export their main names for convenience
(``from metashell.log import open_metadata_dir``).  Done with plain imports, the first import of
*any* of their modules ran every re-exported module: a one-shot ``cat`` paid for the loader, the
replayer and every analysis before its first line.  The type checker still sees plain imports
(each package imports them under ``TYPE_CHECKING``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, namespace: dict[str, Any], exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``exports`` maps each name to its module."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # found directly next time
        return value

    return __getattr__
