"""Errors every layer may raise.

They live at the top of the package (and import nothing) so that the lowest layers can raise them
and the CLI can turn any of them into the one-line message an operator sees at 3 a.m.
"""

from __future__ import annotations


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
        return type(self)(self.message, source or self.source,
                          None if self.offset is None else self.offset + base)

    def __str__(self) -> str:
        where = []
        if self.source:
            where.append(self.source)
        if self.offset is not None:
            where.append(f"byte offset {self.offset}")
        return f"{': '.join(where)}: {self.message}" if where else self.message


class UsageError(MetashellError):
    """Bad command-line usage (exit code 2)."""
