"""Split a command line into commands and words.

The rules are a small, predictable subset of a POSIX shell.  They are chosen so that a path typed
the way metashell prints it reaches the glob layer unchanged, backslashes included: Kafka's glob
(``GlobComponent``) looks a component without ``*``/``?``/``{`` up *literally, backslashes and all*
(so the quota entity ``clientId(app\\(1\\))_user(alice)`` is typed exactly as ``ls`` shows it), and
uses ``\\x`` as an escape only inside a component that is a glob.

* whitespace separates words; ``;`` and newlines (outside quotes) separate commands;
* ``'...'`` is literal; ``"..."`` is literal except that ``\\"`` is a quote; quotes only group
  characters into one word, they do not turn globbing off (as with Kafka's JLine parser);
* outside quotes a backslash before whitespace, ``;``, ``#`` or a quote is consumed and the
  character taken literally (``my\\ topic``); before anything else the backslash is *kept* for the
  glob layer (``a\\*b*``);
* a command whose first character is ``#`` is a comment (handy in scripts fed on stdin);
* an unquoted ``|`` ends the metashell part of a line: what follows is a system shell command the
  output is piped to (:func:`split_pipe`); ``\\|`` or quotes keep a ``|`` in a word.

Each word has ``text`` (what commands glob and what error messages echo, like Kafka echoes the
argument as typed) and ``literal`` (with every remaining backslash escape removed, for non-path
arguments such as ``-type d`` or ``man ls``).

Difference from Kafka: JLine's parser removes every backslash before Kafka's glob code sees it, so
in Kafka escapes never reach the glob matcher and names containing ``\\`` cannot be typed.
"""

from itertools import pairwise
from typing import NamedTuple

from metashell.errors import MetashellError

_SHELL_ESCAPABLE = frozenset(" \t\r\n;#'\"|")
"""Characters a backslash escapes at the shell level (the backslash is consumed)."""


class ParseError(MetashellError):
    """A command line that cannot be split (unterminated quote)."""


class Word(NamedTuple):
    text: str
    literal: str

    @staticmethod
    def plain(s: str) -> "Word":
        """A word that arrived already split (argv in Kafka's positional form): taken as typed."""
        return Word(s, unescape(s))


def quote_word(name: str) -> str:
    r"""``name`` written so that :func:`split_commands` reads it back as one word whose ``text`` is
    ``name``, and nothing in it ends a word or a command or starts a pipe.

    Names reach the command line from metadata (tab completion, the TUI's ``history`` key), and a
    hostile log can name a config ``x|rm -rf ~`` or ``x\nquit``: written as it is, Enter would run
    that shell command or metashell command.  A plain name stays as it is; one with characters the
    line splits on gets a backslash before each (``my\ topic``, as shells complete it); one that
    also holds a backslash is single-quoted instead (a ``\`` before ``;`` cannot be spelt with
    backslashes here: ``\\`` is kept whole for the glob layer).
    """
    if name and not any(c in _SHELL_ESCAPABLE for c in name):
        return name
    if "\\" not in name:
        return "".join("\\" + c if c in _SHELL_ESCAPABLE else c for c in name) or "''"
    return "'" + name.replace("'", "'\\''") + "'"


def unescape(s: str) -> str:
    """Drop backslash escapes: ``a\\*b`` -> ``a*b``."""
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append(s[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


class _WordBuilder:
    __slots__ = ("literal", "started", "text")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.literal: list[str] = []
        self.started = False

    def add(self, text: str, literal: str) -> None:
        self.text.append(text)
        self.literal.append(literal)
        self.started = True

    def build(self) -> "Word":
        return Word("".join(self.text), "".join(self.literal))


def split_commands(line: str) -> list[list[Word]]:
    """Split ``line`` into commands (lists of words); empty commands and comments are dropped."""
    commands: list[list[Word]] = []
    words: list[Word] = []
    cur = _WordBuilder()
    i, n = 0, len(line)

    def end_word() -> None:
        nonlocal cur
        if cur.started:
            words.append(cur.build())
        cur = _WordBuilder()

    def end_command() -> None:
        nonlocal words
        end_word()
        if words:
            commands.append(words)
        words = []

    while i < n:
        c = line[i]
        if c == "#" and not cur.started and not words:
            nl = line.find("\n", i)  # comment to the end of the line
            if nl < 0:
                break
            i = nl
            continue
        if c in " \t\r":
            end_word()
            i += 1
        elif c in ";\n":
            end_command()
            i += 1
        elif c == "\\":
            if i + 1 < n and line[i + 1] in _SHELL_ESCAPABLE:
                cur.add(line[i + 1], line[i + 1])
            elif i + 1 < n:
                cur.add("\\" + line[i + 1], line[i + 1])
            else:
                cur.add("\\", "\\")
            i += 2
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ParseError("unterminated ' quote")
            chunk = line[i + 1 : end]
            cur.add(chunk, chunk)
            i = end + 1
        elif c == '"':
            j = i + 1
            cur.started = True
            while True:
                if j >= n:
                    raise ParseError('unterminated " quote')
                d = line[j]
                if d == '"':
                    break
                if d == "\\" and j + 1 < n and line[j + 1] == '"':
                    cur.add('"', '"')
                    j += 2
                    continue
                cur.add(d, d)
                j += 1
            i = j + 1
        else:
            cur.add(c, c)
            i += 1
    end_command()
    return commands


def _scan(line: str, stops: str) -> list[int]:
    """Positions of the characters of ``stops`` in ``line`` outside quotes, escapes and comments."""
    found: list[int] = []
    i, n = 0, len(line)
    at_start = True
    while i < n:
        c = line[i]
        if c == "#" and at_start:
            nl = line.find("\n", i)
            if nl < 0:
                break
            i = nl
            continue
        if c in stops:
            found.append(i)
            at_start = c in ";\n"
            i += 1
            continue
        if c not in " \t\r":
            at_start = False
        if c == "\\":
            i += 2
        elif c in "'\"":
            end = i + 1
            while end < n and line[end] != c:
                end += 2 if c == '"' and line[end] == "\\" else 1
            i = end + 1
        else:
            i += 1
    return found


def split_segments(line: str) -> list[str]:
    """``line`` cut at every ``;`` and newline outside quotes (each piece is one command, possibly
    with a pipe)."""
    cuts = _scan(line, ";\n")
    bounds = [-1, *cuts, len(line)]
    return [line[a + 1 : b] for a, b in pairwise(bounds)]


def split_pipe(segment: str) -> tuple[str, str | None]:
    """``(metashell command, system shell command)`` of one command, split at its first ``|``
    outside quotes and not escaped; ``None`` when there is no pipe.  ``ls /topics | wc -l``,
    ``cat /brokers/* | jq .``."""
    bars = _scan(segment, "|")
    if not bars:
        return segment, None
    return segment[: bars[0]], segment[bars[0] + 1 :].strip()


def split_words(line: str) -> list[Word]:
    """All words of ``line`` ignoring ``;`` boundaries (used by completion)."""
    return [w for cmd in split_commands(line) for w in cmd]
