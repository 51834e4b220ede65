"""The persistent REPL history: where it lives and what is never written to it.

Location, first match wins:

1. ``$METASHELL_HISTFILE`` (an empty value disables the file; tests point it into a tmp dir);
2. ``$XDG_STATE_HOME/metashell/history`` when ``XDG_STATE_HOME`` is set;
3. ``~/.metashell_history``.

The file is created with mode 0600.  A line that looks like it carries a secret (``password=``,
``sasl.jaas.config=``, ``secret:`` ...) stays in the session's memory but is never written, and a
history file that cannot be written (read-only home, full disk) silently degrades to memory only: an
operator must never lose the shell because of its history.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import FileHistory, History, InMemoryHistory

_SECRET = re.compile(
    r"(?i)(pass(word|wd)?|secret|jaas|credential|token|api[._-]?key|private[._-]?key|keystore|truststore"
    r"|sasl)[\w.\-]*\s*[=:]"
)


def is_secret(line: str) -> bool:
    """True when ``line`` looks like it contains a secret assignment (never persisted)."""
    return bool(_SECRET.search(line))


def history_path() -> Path | None:
    env = os.environ.get("METASHELL_HISTFILE")
    if env is not None:
        return Path(env).expanduser() if env else None
    state = os.environ.get("XDG_STATE_HOME")
    if state:
        return Path(state) / "metashell" / "history"
    return Path.home() / ".metashell_history"


class SafeFileHistory(FileHistory):
    """prompt-toolkit's FileHistory that skips secret-looking lines and survives write errors."""

    def __init__(self, filename: str | os.PathLike[str]) -> None:
        super().__init__(filename)
        self.writable = True

    def store_string(self, string: str) -> None:
        if not self.writable or is_secret(string):
            return
        try:
            super().store_string(string)
        except OSError:
            self.writable = False


def open_history(path: Path | None) -> History:
    """A history for the REPL: the file at ``path`` (created 0600) or memory only."""
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o600)
        os.close(fd)
    except OSError:
        return InMemoryHistory()
    return SafeFileHistory(path)


def loaded_lines(history: History) -> list[str]:
    """The stored lines, oldest first (prompt-toolkit yields newest first)."""
    try:
        strings: Iterable[str] = history.load_history_strings()
        return list(reversed(list(strings)))
    except (OSError, UnicodeDecodeError):
        return []
