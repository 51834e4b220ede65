"""Command line: ``metashell`` / ``kafka-metadata-shell`` / ``python -m metashell``.

Arguments follow KIP-919 (``--directory/-d``, ``--bootstrap-controller/-q``, ``--config``) plus
Kafka's ``--snapshot/-s``.  Exactly one source is required.  Then:

* ``-c "cmd; cmd"`` or command words after the options (Kafka's form,
  ``kafka-metadata-shell --directory DIR cat /topics/foo/0``) run one-shot;
* otherwise commands are read from stdin when it is not a terminal (scripts, pipes);
* otherwise the interactive shell starts.

Contract: stdout carries only results; every error is one line on stderr; exit status 0 on
success, 1 on any error (including a failed command, an unreadable or corrupt input), 2 on bad
usage, 130 when interrupted by Ctrl-C outside the interactive shell; 0 when the reader of stdout
went away (``| head``), quietly.  Never a traceback (set ``METASHELL_DEBUG=1`` to see one for an
internal error).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from metashell import __version__
from metashell.arguments import build_parser, check_usage, join_point_values, prog_name
from metashell.engine import require as require_engine
from metashell.errors import DecodeError, MetashellError, UsageError, failed_allocation
from metashell.safe_text import visible, visible_output

if TYPE_CHECKING:
    from metashell.shell.source import Source

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _snapshot_first(args: argparse.Namespace, warn: Callable[[str], None], redact: bool) -> Source | None:
    """``--tui -d DIR`` on a long log, with no point, path or salvage asked for: the directory opened
    at its newest snapshot, shown while the TUI loads the end (``tui/catch_up.py``); else None."""
    if not args.tui or args.at or args.path or args.salvage:
        return None
    from metashell.tui.catch_up import open_behind

    return open_behind(args.directory[0], warn, redact)


def _only_doctor(args: argparse.Namespace) -> bool:
    """Whether the one-shot commands are ``doctor`` alone (it runs on a damaged directory)."""
    lines = [" ".join(args.command)] if args.command else list(args.commands or ())
    return bool(lines) and all(line.split()[:1] == ["doctor"] and ";" not in line for line in lines)


def _may_travel(commands: Sequence[str]) -> bool:
    """Whether one-shot commands may move through time (then the load keeps its journal): any
    word that names a command the registry says travels (:attr:`Command.travels`)."""
    from metashell.shell.registry import travelling

    return travelling(re.findall(r"[a-z]+", " ".join(commands)))


def _keeps_the_past(commands: Sequence[str]) -> bool:
    """Whether one-shot live commands need what the session applied kept (its journal and spool):
    a command that travels or reads the log's records."""
    from metashell.shell.registry import reading_log, travelling

    words = re.findall(r"[a-z]+", " ".join(commands))
    return travelling(words) or reading_log(words)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size().columns


def _debug_traceback() -> None:
    """With ``METASHELL_DEBUG`` set, the traceback of the exception being handled."""
    if os.environ.get("METASHELL_DEBUG"):
        import traceback  # only then: a one-shot start does not pay for it

        traceback.print_exc()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def run(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Parse ``argv`` and run; returns the exit status.  Raises MetashellError/UsageError."""
    from metashell.shell.nodes import open_nodes
    from metashell.shell.output import color_wanted
    from metashell.shell.progress_line import showing_progress
    from metashell.shell.session import Settings, Shell
    from metashell.shell.sources import banner, open_directory, open_file, open_live
    from metashell.shell.words import Word

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    parser = build_parser()
    args = parser.parse_args(join_point_values(list(sys.argv[1:] if argv is None else argv)))
    check_usage(args)
    require_engine()
    if args.max_batch_bytes:
        from metashell.log.compression import LIMITS

        LIMITS.max_batch_bytes = LIMITS.max_inflated_bytes = args.max_batch_bytes

    if args.diff_with is not None and not (args.commands or args.command):
        args.command = ["diff", "--with", args.diff_with]
    one_shot = bool(args.commands or args.command)
    if args.tui and not (_is_tty(stdin) and _is_tty(stdout)):
        # Textual without a terminal never exits and spins a core: refuse before loading anything
        raise UsageError(
            "--tui needs a terminal (stdin and stdout); without one use -c COMMAND or pipe commands in"
        )
    interactive = not one_shot and (_is_tty(stdin) or args.tui)
    redact = not args.no_redact

    wipe = "\r\x1b[K" if _is_tty(stderr) else ""  # over a progress line, if one is shown

    def warn(message: str) -> None:
        stdout.flush()
        stderr.write(f"{wipe}warning: {visible(_one_line(message))}\n")
        stderr.flush()

    if not args.bootstrap_controller:
        with showing_progress(stderr, _is_tty(stderr)):  # a long load says how far it has got
            if args.directory and len(args.directory) > 1:
                from metashell.shell.nodes import open_nodes

                source = open_nodes(
                    args.directory, warn, redact, salvage=args.salvage, mixed=args.mixed_clusters
                )
            elif args.directory:
                try:
                    source = _snapshot_first(args, warn, redact) or open_directory(
                        args.directory[0],
                        warn,
                        redact,
                        salvage=args.salvage,
                        at=args.at,
                        timeline=not one_shot or _may_travel(args.commands or args.command),
                    )
                except DecodeError as e:  # damage in the files (not a missing or unreadable path)
                    if args.salvage or not _only_doctor(args):
                        raise
                    # doctor is the integrity tool of record: a damaged log is what it must report,
                    # so it reads around the damage (and names every damaged batch) instead of refusing
                    warn(f"{e}; doctor reads what is whole around it (as --salvage loads)")
                    source = open_directory(args.directory[0], warn, redact, salvage=True, at=args.at)
            else:
                source = open_file(args.snapshot, warn, redact, salvage=args.salvage, at=args.at)
    else:
        source = open_live(
            args.bootstrap_controller,
            args.config,
            warn,
            redact,
            disks=args.directory or (),
            timeline=not one_shot or _keeps_the_past(args.commands or args.command),
        )

    try:
        if args.tui:
            from metashell.tree.paths import normalize, resolve
            from metashell.tui.app import MetashellApp

            if args.path is not None and resolve(source.root, normalize("/", args.path)) is None:
                raise UsageError(f"--path {visible(args.path)}: no such node in this metadata")

            MetashellApp(source, redact=redact, start_path=args.path or "/").run()
            return EXIT_OK
        stdout_tty = _is_tty(stdout)
        settings = Settings(
            json=args.json,
            redact=redact,
            color=color_wanted(stdout, args.no_color),
            width=_terminal_width if stdout_tty else (lambda: None),
        )
        shell = Shell(source.root, stdout, stderr, settings)
        shell.attach(source)
        if one_shot:
            from metashell.shell.session import ExitShell

            status = 0
            try:
                if args.command:
                    status = shell.run_words([Word.plain(w) for w in args.command])
                for line in args.commands or ():
                    status = max(status, shell.run_line(line))
            except ExitShell:
                pass
            return status if 0 <= status <= 3 else EXIT_ERROR  # (--exit-code: 0-3, the worst)
        from metashell.shell.repl import run_plain  # not for one-shot: it starts sooner without

        if not interactive:
            return EXIT_ERROR if run_plain(shell, stdin) else EXIT_OK
        text = visible_output(banner(source, __version__))
        if stdout_tty:
            try:
                from metashell.shell.repl import run_repl

                return run_repl(
                    shell, label=source.label, banner=text, status=source.status, paging=not args.no_pager
                )
            except ImportError:  # pragma: no cover - prompt-toolkit is a dependency
                pass
        stderr.write(text + "\n")
        run_plain(shell, stdin, prompt=f"{source.label}:{{cwd}} >> ", prompt_stream=stderr)
        return EXIT_OK
    finally:
        source.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point: ``metashell`` and ``kafka-metadata-shell``."""
    try:
        return run(argv)
    except UsageError as e:
        _err(f"{prog_name()}: error: {_one_line(e)} (see {prog_name()} --help)")
        return EXIT_USAGE
    except MetashellError as e:
        _release(e)
        _err(f"error: {_one_line(e)}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``| head -2``) with what it wanted: not an error, so stop quietly
        # with status 0 (a script under ``set -o pipefail`` goes on), and keep Python's exit-time
        # flush of stdout quiet too.
        _silence_stdout()
        return EXIT_OK
    except OSError as e:
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        _err(f"error: {where}{e.strerror or e}")
        return EXIT_ERROR
    except MemoryError as e:
        # the loader names the file and batch (LoadMemoryError); this is anywhere else
        _release(e)
        _err("error: out of memory")
        return EXIT_ERROR
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the last line of defence: never a traceback
        if failed_allocation(e):  # a C library that ran out of memory without saying so
            _release(e)
            _err("error: out of memory (a library call failed without an error, as a failed allocation does)")
            return EXIT_ERROR
        _debug_traceback()
        _err(f"internal error: {type(e).__name__}: {_one_line(e)} (set METASHELL_DEBUG=1 for a traceback)")
        return EXIT_ERROR
    except BaseException as e:
        # A panic in the native core reaches Python as PyO3's PanicException, a BaseException (so that
        # ``except Exception`` cannot swallow it); it is a bug, reported as any other.
        if type(e).__name__ != "PanicException":
            raise
        _debug_traceback()
        _err(
            f"internal error in the native core: {_one_line(e)} (METASHELL_ENGINE=python runs without it; "
            f"set METASHELL_DEBUG=1 for a traceback)"
        )
        return EXIT_ERROR


def _release(e: BaseException) -> None:
    """Let go of what the failed work held before saying why it failed. An exception's traceback
    (and its cause's and context's) keeps every frame it passed through alive, the loader's half-made
    image among them: at the edge of memory, formatting the one-line error then failed too, and a
    traceback reached the terminal. Dropping the tracebacks frees it by reference counting (tried
    without a collection: 12-40 MB of headroom all gave the loader's own line)."""
    seen: set[int] = set()
    chain: BaseException | None = e
    while chain is not None and id(chain) not in seen:
        seen.add(id(chain))
        chain.__traceback__ = None
        chain = chain.__cause__ or chain.__context__


def _err(line: str) -> None:
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError):
        _silence_stdout()
    try:
        try:
            text = visible(line) + "\n"
        except MemoryError:  # even now: a line of our own, with nothing from the input in it
            text = "error: out of memory\n"
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, MemoryError):
        pass


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
