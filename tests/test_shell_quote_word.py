"""Names written onto a command line (``words.quote_word``) read back as exactly that one word.

Completion and the TUI put names from metadata on the line, and a hostile log chooses them: a
config named ``x|touch /tmp/p`` once completed to ``x|touch\\ /tmp/p``, which Enter would have piped
to the system shell; ``x<newline>quit`` would have run ``quit``.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from metashell.image.image import MetadataImage
from metashell.shell.completion import ShellCompleter
from metashell.shell.words import quote_word, split_commands, split_pipe, split_segments
from metashell.tree.node import StaticDir, TextLeaf, TreeContext

HOSTILE = ["x|touch /tmp/p", "x\nquit", "a;b", "#c", "it's", 'say "hi"', "a\\;b", "end\\", "a\\'b", "", "\t"]


def _reads_back(name: str) -> None:
    line = "cat " + quote_word(name)
    assert split_pipe(line) == (line, None)
    assert split_segments(line) == [line]
    [[command, word]] = split_commands(line)
    assert command.text == "cat"
    assert word.text == name


def test_hostile_names_read_back_as_one_word() -> None:
    for name in HOSTILE:
        _reads_back(name)
    assert quote_word("plain-name_1.0") == "plain-name_1.0"
    assert quote_word("my topic") == "my\\ topic"  # as shells complete it


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=30))
def test_any_name_reads_back_as_one_word(name: str) -> None:
    _reads_back(name)


def test_completing_a_hostile_name_never_makes_a_pipe_or_a_second_command() -> None:
    names = ["x|touch /tmp/p", "y\nquit", "z;ls"]
    ctx = TreeContext(MetadataImage(), redact=True)
    leaves = {n: (lambda name: TextLeaf(name, ctx, lambda _r: "v")) for n in names}
    root = StaticDir("/", ctx, {"c": lambda name: StaticDir(name, ctx, leaves)})
    completer = ShellCompleter(lambda: root, lambda: "/")
    line = "cat /c/"
    got = [
        c.text for c in completer.get_completions(Document(line), CompleteEvent(completion_requested=True))
    ]
    assert len(got) == len(names)
    for text, name in zip(sorted(got), sorted(names), strict=True):
        completed = "cat " + text
        assert split_pipe(completed)[1] is None
        [[_cat, word]] = split_commands(completed)
        assert word.text == "/c/" + name
