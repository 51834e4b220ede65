"""The ``:`` command line: an input that posts each line it is given as a :class:`CommandLine.Run`
message, and leaves running it to whoever handles that (the app's :mod:`.command_runner`)."""

from __future__ import annotations

from textual import on
from textual.message import Message
from textual.widgets import Input

__all__ = ["CommandLine"]

PLACEHOLDER = ": a shell command (ls, cd, cat, find, describe, health, at, history ...)"


class CommandLine(Input):
    """The shell's command line at the bottom of the screen."""

    class Run(Message):
        """A line to run, as typed (without the ``:`` vim hands type, never empty)."""

        def __init__(self, line: str) -> None:
            super().__init__()
            self.line = line

    def __init__(self, *, id: str = "command") -> None:
        super().__init__(placeholder=PLACEHOLDER, id=id)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        line = event.value.strip().lstrip(":").strip()  # vim hands type ":ls"
        self.value = ""
        if line:
            self.post_message(self.Run(line))
