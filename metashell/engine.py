"""Which engine decodes the log: the native core (``metashell._native``, Rust) or pure Python.

The native core is optional: ``pip install`` builds it from ``native/`` when a Rust toolchain is
there, and installs metashell without it otherwise.  Both engines give the same answers (the pure
Python one is the reference, and ``tests/test_native_differential.py`` holds the native one to it);
the native one is faster.  ``METASHELL_ENGINE`` chooses:

* ``auto`` (or unset): native when it is built, else Python, saying why;
* ``python``: always Python;
* ``native``: native, and an error (one line, exit 1) where it is not built: asking for it must
  not quietly give the slower engine.

Which engine ran, and why, is in ``metashell --version``, ``/provenance`` and every benchmark line.
This module imports nothing of metashell but its errors, so that every layer may ask it.
"""

import os
from functools import cache
from types import ModuleType
from typing import NamedTuple

from metashell.errors import MetashellError

__all__ = ["ENGINE_ENV", "Engine", "EngineError", "current", "import_native", "require"]

ENGINE_ENV = "METASHELL_ENGINE"
_CHOICES = ("auto", "python", "native")


class EngineError(MetashellError):
    """``METASHELL_ENGINE`` asks for something this installation cannot give."""


class Engine(NamedTuple):
    """The engine chosen for this process: ``name`` ("native" or "python"), ``why`` (one phrase),
    ``native`` (the compiled module, when it runs) and ``error`` (why the choice cannot be
    honoured: raised by :func:`require`)."""

    name: str
    why: str
    native: ModuleType | None = None
    error: str | None = None

    def describe(self) -> str:
        """``native (metashell._native 0.1.0)`` or ``python (METASHELL_ENGINE=python)``."""
        return f"{self.name} ({self.why})"


def import_native() -> tuple[ModuleType | None, str]:
    """The native core if it is built, whatever ``METASHELL_ENGINE`` says, and a phrase saying what
    it is or why it is missing (the benchmarks run both engines side by side with it)."""
    try:
        from metashell import _native
    except ImportError as e:
        return None, f"the native core is not built ({e}); pip install with a Rust toolchain builds it"
    return _native, f"metashell._native {_native.version()}"


@cache
def current() -> Engine:
    """The engine of this process (read once: ``METASHELL_ENGINE`` set later has no effect)."""
    choice = os.environ.get(ENGINE_ENV, "").strip().lower() or "auto"
    if choice not in _CHOICES:
        return Engine(
            "python",
            f"{ENGINE_ENV}={choice!r} is not one of {', '.join(_CHOICES)}",
            error=f"{ENGINE_ENV} must be one of {', '.join(_CHOICES)}, not {choice!r}",
        )
    if choice == "python":
        return Engine("python", f"{ENGINE_ENV}=python")
    native, why = import_native()
    if native is not None:
        return Engine("native", why, native)
    if choice == "native":
        return Engine("python", why, error=f"{ENGINE_ENV}=native, but {why}")
    return Engine("python", why)


def require() -> Engine:
    """The engine, or :class:`EngineError` when ``METASHELL_ENGINE`` cannot be honoured (called
    where work starts: the command line, each load)."""
    engine = current()
    if engine.error is not None:
        raise EngineError(engine.error)
    return engine
