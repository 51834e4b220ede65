"""Colour for the answers an operator scans on a terminal: ``health``, ``describe`` and ``ls -l``.

Each painter takes one line that is already safe (control characters made visible by
:func:`metashell.safe_text.visible_output`) and adds ANSI sequences around the words that matter:
a CRITICAL verdict in red, a WARNING in yellow, ``Leader: none`` and ``fenced`` in red.  Only
:meth:`Shell.write_painted` calls them, and only when ``Settings.color`` is on (a terminal,
``NO_COLOR`` unset, no ``--no-color``), so pipes, files and ``/image`` stay byte-exact.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["PAINTERS", "Painter", "ls_name", "paint"]

RESET = "\x1b[0m"
RED = "\x1b[31m"
BOLD_RED = "\x1b[1;31m"
YELLOW = "\x1b[33m"
BOLD_YELLOW = "\x1b[1;33m"
GREEN = "\x1b[32m"
BOLD_GREEN = "\x1b[1;32m"
CYAN = "\x1b[36m"
BOLD = "\x1b[1m"
BLUE = "\x1b[1;34m"
DIM = "\x1b[2m"

Painter = Callable[[str], str]


def paint(text: str, style: str) -> str:
    return f"{style}{text}{RESET}" if text else text


_VERDICTS = {"CRITICAL": BOLD_RED, "DEGRADED": BOLD_YELLOW, "HEALTHY": BOLD_GREEN, "NO DATA": BOLD_YELLOW}
_SEVERITY = {"[critical]": RED, "[warning]": YELLOW, "[info]": CYAN}


def health(line: str) -> str:
    """The verdict by its word, each finding's heading by its severity, causes bold, next dim."""
    for word, style in _VERDICTS.items():
        if line.startswith(word + ":"):
            return paint(word, style) + line[len(word) :]
    for tag, style in _SEVERITY.items():
        if line.endswith(tag) and not line.startswith(" "):
            return paint(line, style)
    if line.startswith("  cause: "):
        return "  " + paint(line[2:], BOLD)
    if line.startswith("  next: "):
        return "  " + paint("next:", DIM) + line[7:]
    return line


#: What is down, as a pattern's text (``re`` compiles it when colour is first painted, not on every start).
_BAD = r"(Leader: none|State: fenced|fenced|leader none|isr \[\](?=\s|$)|Isr: (?=\t|$))"


def describe(line: str) -> str:
    """A topic line bold; no leader, an empty ISR and a fenced broker in red."""
    if line.startswith(("Topic: ", "Broker: ")):
        line = paint(line.split("\t", 1)[0], BOLD) + ("\t" + line.split("\t", 1)[1] if "\t" in line else "")
    return re.sub(_BAD, lambda m: paint(m.group(0), RED), line)


def ls_long(line: str) -> str:
    """What is down (no leader, an empty ISR, fenced) in red; directory names are painted by
    :func:`ls_name` where the columns are still known."""
    return re.sub(_BAD, lambda m: paint(m.group(0), RED), line)


def ls_name(padded: str, is_dir: bool) -> str:
    """A name cell of ``ls -l`` (padded already, so the columns stay aligned)."""
    if not is_dir:
        return padded
    name = padded.rstrip(" ")
    return paint(name, BLUE) + padded[len(name) :]


PAINTERS: dict[str, Painter] = {"health": health, "describe": describe, "ls": ls_long}
"""One painter per command whose answers are coloured."""
