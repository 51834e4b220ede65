"""The TUI's keys: what each does in the footer, and at more length on the ``?`` screen.  Every
binding's action is a method ``action_<name>`` of the app, and has its line in ``KEY_HELP``."""

from __future__ import annotations

from textual.binding import Binding, BindingType

__all__ = ["BINDINGS", "KEY_HELP"]

BINDINGS: list[BindingType] = [
    Binding("q", "quit", "Quit"),
    Binding("ctrl+q", "quit", "Quit", show=False, key_display="Ctrl-Q"),
    Binding("colon", "command_line", "Command", key_display=":"),
    Binding("slash", "command_palette", "Search", key_display="/"),
    # Textual's own Ctrl-P did not reach the app (the focused tree took it); docs/tui.md promises it
    Binding("ctrl+p", "command_palette", "Search", show=False, key_display="Ctrl-P", priority=True),
    Binding("h", "history", "History"),
    Binding("n", "nodes", "Nodes"),
    Binding("w", "toggle_wide", "Wide"),
    Binding("o", "open_pager", "Pager"),
    Binding("y", "copy_path", "Copy path"),
    Binding("Y", "copy_value", "Copy value", show=False),
    Binding("p", "pause", "Pause (live)", show=False),
    Binding("left_square_bracket", "go_back", "Back", show=False, key_display="["),
    Binding("right_square_bracket", "go_forward", "Forward", show=False, key_display="]"),
    Binding("question_mark", "help", "Keys", key_display="?"),
    Binding("escape", "stop_or_focus_tree", "Tree", show=False, key_display="Escape"),
]
KEY_HELP: dict[str, str] = {
    "quit": "quit, restoring the terminal",
    "command_line": "the command line: any shell command (ls, cd, cat, find, describe, health, at ...)",
    "command_palette": "search paths by name (topics, brokers, configs, ACL principals ...)",
    "history": "history of the selected topic, partition, broker or config (opens at the newest)",
    "nodes": "several -d: the nodes side by side (role, log end, what each holds and would lose); Enter shows one",
    "toggle_wide": "the detail pane takes the whole width (the tree hides), and back",
    "open_pager": "open what the detail pane shows in $PAGER (default: less -R)",
    "copy_path": "copy the selected path to the clipboard",
    "copy_value": "copy the selected file's value to the clipboard",
    "pause": "live mode: pause and resume following the quorum",
    "go_back": "back to the previously visited path",
    "go_forward": "forward again",
    "help": "this screen",
    "stop_or_focus_tree": "stop a running command (watch); back to the tree",
}
"""What each key does, longer than the footer's word (the ``?`` screen)."""
