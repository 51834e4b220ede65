"""Back and forward through the paths the TUI has shown (``[`` and ``]``), as a browser does."""

from __future__ import annotations

__all__ = ["Visits"]


class Visits:
    """The paths gone to, in order, and those gone back over (forward goes to them again)."""

    def __init__(self) -> None:
        self._visited: list[str] = []
        self._ahead: list[str] = []

    def went_to(self, path: str) -> None:
        """A new place: remembered (once), and what was ahead is forgotten."""
        if not self._visited or self._visited[-1] != path:
            self._visited.append(path)
            self._ahead.clear()

    def back(self) -> str | None:
        """The place before this one, if any (this one is then ahead)."""
        if len(self._visited) < 2:
            return None
        self._ahead.append(self._visited.pop())
        return self._visited[-1]

    def forward(self) -> str | None:
        """The place last gone back from, if any."""
        if not self._ahead:
            return None
        path = self._ahead.pop()
        self._visited.append(path)
        return path
