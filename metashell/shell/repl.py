"""The interactive shell (prompt-toolkit) and the plain line reader used without a terminal.

* Prompt ``<cluster>:<cwd> >> `` (plus a live-mode status when there is one); Kafka's is ``>> ``.
* Tab completes commands, options and paths (:mod:`.completion`).
* History persists across sessions (:mod:`.history`); ``history`` shows it.
* Ctrl-C on the line prints ``^C`` and gives a fresh prompt; Ctrl-C while a command runs stops the
  command and returns to the prompt; Ctrl-D on an empty line (or ``exit``) leaves with status 0.
* Output longer than the screen is paged through ``$PAGER`` (``less -FRX``), ``--no-pager`` turns
  that off (:mod:`.pager`).
* JSON output is coloured by pygments on a terminal unless ``NO_COLOR`` is set or ``--no-color`` is
  given (:mod:`.output`); the prompt is then monochrome too.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from typing import TextIO

from ..safe_text import visible
from .pager import paged
from .session import ExitShell, Shell

StatusFn = Callable[[], str]


def _status(status: StatusFn | None) -> str:
    if status is None:
        return ""
    try:
        return status()
    except Exception:  # noqa: BLE001 - a status hook must never break the prompt
        return ""


def _prompt_text(label: str, shell: Shell, status: StatusFn | None) -> str:
    """``label[@point][ [state]]:cwd >> ``: live mode shows only its state here (``connected``,
    ``reconnecting``); leader, epoch and lag are in the bottom toolbar (:func:`_toolbar_text`)."""
    text = _status(status)
    from ..image.live_feed import STATUS_SEPARATOR  # live mode only: the live client stays unimported

    extra = f" [{text.split(STATUS_SEPARATOR, 1)[0]}]" if text else ""
    point = shell.point or ""
    if shell.source is not None and shell.source.node is not None:  # several -d: which node is shown
        label = f"node {shell.source.node}"
    return visible(f"{label}{point}{extra}:{shell.cwd} >> ")


def _toolbar_text(status: StatusFn | None) -> str:
    return visible(_status(status))


def ctrl_c_interrupts() -> None:
    """Make Ctrl-C raise :class:`KeyboardInterrupt` in this process, whatever it inherited.

    Python installs that handler only when SIGINT was not ignored at start, and a process started in
    the background by a non-interactive shell (``cmd &`` in a script, CI runners, ``nohup``) starts
    with SIGINT ignored.  An interactive shell owns its terminal's Ctrl-C (bash resets it the same
    way), so without this a user's Ctrl-C would be echoed as ``^C`` and the command would run on."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_repl(
    shell: Shell, *, label: str, banner: str, status: StatusFn | None = None, paging: bool = True
) -> int:
    """Run the prompt-toolkit REPL until ``exit`` or Ctrl-D.  Returns the exit status (0).

    Output longer than the screen goes through ``$PAGER`` unless ``paging`` is off (:mod:`.pager`).
    """
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.output import ColorDepth

    from .completion import ShellCompleter
    from .history import history_path, loaded_lines, open_history

    history = open_history(history_path())
    shell.history[:0] = loaded_lines(history)
    ctrl_c_interrupts()

    bindings = KeyBindings()

    @bindings.add("c-c")
    def _interrupt(event) -> None:  # type: ignore[no-untyped-def]
        # Show "^C" at the end of the abandoned line, as JLine does, then start a new line.
        buf = event.app.current_buffer
        buf.cursor_position = len(buf.text)
        buf.insert_text("^C", fire_event=False)
        event.app.exit(exception=KeyboardInterrupt(), style="class:aborting")

    session: PromptSession[str] = PromptSession(
        history=history,
        completer=ShellCompleter(
            lambda: shell.root,
            lambda: shell.cwd,
            lambda: tuple(sorted(shell.source.nodes)) if shell.source and shell.source.nodes else (),
        ),
        complete_while_typing=False,
        key_bindings=bindings,
        color_depth=None if shell.settings.color else ColorDepth.MONOCHROME,
        enable_suspend=True,
        # Live mode: redraw the prompt every second so leader/epoch/lag stay current while idle.
        refresh_interval=1.0 if status is not None else 0,
        bottom_toolbar=(lambda: _toolbar_text(status)) if status is not None else None,
    )
    shell.settings.width = lambda: _columns(session)
    if banner:
        shell.out.write(banner + "\n")
        shell.out.flush()
    while True:
        try:
            line = session.prompt(lambda: _prompt_text(label, shell, status))
        except KeyboardInterrupt:
            continue
        except EOFError:
            shell.out.write("\n")
            shell.out.flush()
            return 0
        try:
            with paged(lambda: shell.out, lambda out: setattr(shell, "out", out), _rows(session), paging):
                shell.run_line(line)
        except ExitShell as e:
            return e.status
        except KeyboardInterrupt:
            # The terminal already echoed ^C; end the line and get back to the prompt.
            shell.out.write("\n")
            shell.out.flush()


def _rows(session: object) -> int | None:
    try:
        return int(session.output.get_size().rows)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - no size: no paging
        return None


def _columns(session: object) -> int | None:
    try:
        return int(session.output.get_size().columns)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - no size: one name per line
        return None


def run_plain(
    shell: Shell, stdin: TextIO, *, prompt: str | None = None, prompt_stream: TextIO | None = None
) -> int:
    """Read commands line by line from ``stdin`` (a pipe, a file, or a terminal without
    prompt-toolkit).  Returns 1 if any command failed, else 0; ``exit`` stops reading.

    With ``prompt`` (interactive fallback), the prompt goes to ``prompt_stream`` (stderr), never
    to stdout, which carries only results.
    """
    status = 0
    if prompt is not None:
        ctrl_c_interrupts()  # a person at a terminal: Ctrl-C is theirs
    while True:
        if prompt is not None:
            stream = prompt_stream or sys.stderr
            stream.write(visible(prompt.replace("{cwd}", shell.cwd)))
            stream.flush()
        try:
            line = stdin.readline()
        except KeyboardInterrupt:
            if prompt is None:
                raise
            (prompt_stream or sys.stderr).write("^C\n")
            continue
        if not line:
            return status
        try:
            status |= shell.run_line(line.rstrip("\n"))
        except ExitShell:
            return status
        except KeyboardInterrupt:
            if prompt is None:
                raise
            shell.out.write("\n")
