"""Errors every layer may raise.

They live at the top of the package (and import nothing) so that the lowest layers can raise them
and the CLI can turn any of them into the one-line message an operator sees at 3 a.m.
"""

from __future__ import annotations


def located(
    message: str, source: str | None = None, offset: int | None = None, position: int | None = None
) -> str:
    """``source: offset N: byte offset P: message``, with the parts that are known: how every error
    and warning names where it happened."""
    where = []
    if source:
        where.append(source)
    if offset is not None:
        where.append(f"offset {offset}")
    if position is not None:
        where.append(f"byte offset {position}")
    return f"{': '.join(where)}: {message}" if where else message


class MetashellError(Exception):
    """An error with a message fit to show to the user as one line (no traceback)."""


class DecodeError(MetashellError):
    """Bytes that do not decode.  ``offset`` is a byte position in ``source`` when known."""

    def __init__(self, message: str, source: str | None = None, offset: int | None = None) -> None:
        self.message = message
        self.source = source
        self.offset = offset
        super().__init__(self.__str__())

    def located(self, source: str | None = None, base: int = 0) -> DecodeError:
        """Return a copy placed in ``source`` with offsets shifted by ``base``."""
        return type(self)(
            self.message, source or self.source, None if self.offset is None else self.offset + base
        )

    def __str__(self) -> str:
        return located(self.message, self.source, position=self.offset)


class UsageError(MetashellError):
    """Bad command-line usage (exit code 2)."""


_NO_EXCEPTION_SET = (
    "error return without exception set",
    "NULL result without error",
    # CPython's check of a builtin's result (seen from compile(), as the Python engine makes its
    # decoders, at 30 MB of headroom in CI)
    "returned NULL without setting an exception",
)


def failed_allocation(e: BaseException) -> bool:
    """Whether ``e`` is CPython's ``SystemError`` for a C extension that returned failure without
    setting an exception: what an extension whose allocation failed does under a memory limit (seen
    on the pure-Python engine's C libraries at 30 MB of headroom).  CPython's own allocations raise
    MemoryError; this is the same condition from a library that does not say so."""
    return isinstance(e, SystemError) and any(s in str(e) for s in _NO_EXCEPTION_SET)


def out_of_memory(e: BaseException) -> bool:
    """Whether ``e`` says memory ran out: a MemoryError, or a library's :func:`failed_allocation`."""
    return isinstance(e, MemoryError) or failed_allocation(e)
