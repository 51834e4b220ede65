"""Tab completion for the REPL: command names, options, and paths.

Paths complete like Kafka's ``CommandUtils.completePath`` (children of the directory typed so far
whose names start with the last component; directories get a trailing ``/``), extended so that the
directory part may be relative, contain ``..`` or globs (``/topics/*/`` completes the union of the
matched directories' children), and so that a last component containing glob syntax lists what it
matches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from metashell.tree import Node, glob_components
from metashell.tree.paths import glob_regex

from . import registry
from .registry import CompletionContext
from .words import quote_word

_MAX_CANDIDATES = 2000
"""A directory with a million children is not offered in full (prompt-toolkit would stall)."""


def current_segment(text: str) -> str:
    """The part of ``text`` after the last unquoted ``;`` (the command being typed)."""
    quote = None
    start = 0
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == ";":
            start = i + 1
        i += 1
    return text[start:]


def split_for_completion(segment: str) -> tuple[list[str], str]:
    """(complete words before the cursor, the partial word at the cursor), honouring ``\\ ``."""
    words: list[str] = []
    cur: list[str] = []
    i = 0
    quote = None
    while i < len(segment):
        c = segment[i]
        if quote:
            if c == quote:
                quote = None
            else:
                cur.append(c)
        elif c == "\\" and i + 1 < len(segment):
            nxt = segment[i + 1]
            cur.append(nxt if nxt in " \t" else c + nxt)
            i += 1
        elif c in "'\"":
            quote = c
        elif c in " \t":
            if cur:
                words.append("".join(cur))
                cur = []
        else:
            cur.append(c)
        i += 1
    return words, "".join(cur)


class ShellCompleter(Completer):
    """Completes against the live tree and the shell's working directory."""

    def __init__(
        self,
        root: Callable[[], Node],
        cwd: Callable[[], str],
        nodes: Callable[[], tuple[str, ...]] = tuple,
    ) -> None:
        self._root = root
        self._cwd = cwd
        self._nodes = nodes

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        segment = current_segment(document.text_before_cursor)
        words, partial = split_for_completion(segment)
        # Replace what the user typed for the partial word (quotes and escapes included).
        replace = -_typed_length(segment) if partial else 0
        table = registry.commands()
        if not words:
            for name in sorted(table):
                if name.startswith(partial):
                    yield Completion(
                        name + " ", replace, display=name, display_meta=table[name].spec.description
                    )
            return
        command = table.get(words[0])
        if command is None:
            return
        declared = command.spec
        prev = words[-1] if len(words) > 1 else ""
        option = next((o for o in declared.options if prev in o.flags and o.metavar), None)
        if option is not None:
            values = command.option_values.get(option.dest) if command.option_values else None
            try:
                context = CompletionContext(self._root(), self._cwd(), self._nodes())
                candidates = option.choices or (list(values(context)) if values is not None else ())
            except Exception:  # noqa: BLE001 - completion must never break the prompt
                return
            for choice in _matching_words(candidates, partial):
                yield Completion(choice + " ", replace, display=choice)
            return
        if partial.startswith("-") or declared.positional is None:
            flags = ["-h", "--help"] + [f for o in declared.options for f in o.flags]
            for flag in flags:
                if flag.startswith(partial):
                    yield Completion(flag + " ", replace, display=flag)
            return
        if command.complete is None:
            yield from self._paths(partial, replace)
            return
        try:
            context = CompletionContext(self._root(), self._cwd(), self._nodes())
            found = list(command.complete(context, words, partial))
        except Exception:  # noqa: BLE001 - completion must never break the prompt
            return
        for word in found[:_MAX_CANDIDATES]:
            yield Completion(_as_typed(word), replace, display=word)

    def _paths(self, partial: str, replace: int) -> Iterable[Completion]:
        slash = partial.rfind("/")
        dir_part = partial[: slash + 1] if slash >= 0 else ""
        last = partial[slash + 1 :]
        try:
            root = self._root()
            cwd = self._cwd()
            if dir_part:
                dirs = [n for _, n in glob_components(root, cwd, dir_part) if n.is_dir]
            else:
                dirs = [n for _, n in glob_components(root, cwd, ".") if n.is_dir]
        except Exception:  # noqa: BLE001 - completion must never break the prompt
            return
        regex = glob_regex(last) if last else None
        seen: set[str] = set()
        count = 0
        for directory in dirs:
            for name in directory.child_names():
                if regex is not None:
                    if not regex.match(name):
                        continue
                elif not name.startswith(last):
                    continue
                if name in seen:
                    continue
                seen.add(name)
                child = directory.child(name)
                is_dir = child is not None and child.is_dir
                text = dir_part + quote_word(name) + ("/" if is_dir else " ")
                yield Completion(text, replace, display=name + ("/" if is_dir else ""))
                count += 1
                if count >= _MAX_CANDIDATES:
                    return


def _typed_length(segment: str) -> int:
    """Length of the raw text of the last (partial) word, quotes and escapes included."""
    i = len(segment)
    while i > 0:
        c = segment[i - 1]
        if c in " \t" and not (i >= 2 and segment[i - 2] == "\\"):
            break
        i -= 1
    return len(segment) - i


def _as_typed(word: str) -> str:
    """A candidate as it goes onto the line: quoted (:func:`.words.quote_word`), then a space, or
    the ``/`` of a directory to go on into."""
    if word.endswith("/") and word != "/":
        return quote_word(word[:-1]) + "/"
    return word if word == "/" else quote_word(word) + " "


def _matching_words(candidates: Iterable[str], partial: str) -> list[str]:
    """Candidates that start with ``partial``; for a comma-separated value (``log --type a,b``),
    the last item is completed and the ones before it kept."""
    head, _, last = partial.rpartition(",")
    prefix = head + "," if head else ""
    return [prefix + c for c in candidates if c.startswith(last)]
