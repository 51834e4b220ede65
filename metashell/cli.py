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
import shutil
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn, TextIO

from metashell import __version__
from metashell.errors import MetashellError, UsageError
from metashell.numbers import parse_int
from metashell.safe_text import visible, visible_output

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

DESCRIPTION = "The Apache Kafka metadata shell (metashell): browse KRaft cluster metadata like a filesystem."


def _commands_help() -> str:
    from metashell.shell.registry import specs

    return "\n".join(f"  {n:<10}{s.description}" for n, s in specs().items())


EPILOG = """\
exactly one of --directory, --snapshot or --bootstrap-controller is required.

commands (one-shot, or in the shell; 'man CMD' for options):
{commands}

examples:
  metashell -d /var/lib/kafka/meta                      interactive shell on a metadata log dir
  metashell -d DIR -c "cat /controllers/3; ls /topics"  one-shot, ';'-separated commands
  kafka-metadata-shell --directory DIR cat /topics/foo/0
  metashell -s DIR/__cluster_metadata-0/00000000000000000042-0000000001.checkpoint ls /image
  echo "find /brokers" | metashell -d DIR               commands from stdin
  metashell -q ctrl1:9093,ctrl2:9093 --config client.properties
  metashell -d DIR health --exit-code                  cron / monitoring: status 1 when unhealthy

stdout carries only results; errors are one line on stderr.
exit status: 0 success, 1 any error, 2 bad usage, 130 interrupted.
"""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2) instead of usage + message."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _prog() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "metashell"
    if name in ("__main__.py", "-c", "-m", "") or name.endswith(".py"):
        return "metashell"
    return name


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = _Parser(
        prog=prog or _prog(),
        description=DESCRIPTION,
        epilog=EPILOG.format(commands=_commands_help()),
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--directory",
        "-d",
        metavar="DIRECTORY",
        help="The __cluster_metadata-0 directory to read (or the log dir that contains it).",
    )
    p.add_argument(
        "--snapshot",
        "-s",
        metavar="SNAPSHOT",
        help="The metadata snapshot file to read: one .checkpoint or .log file, as Kafka's shell does.",
    )
    p.add_argument(
        "--bootstrap-controller",
        "-q",
        metavar="BOOTSTRAP_CONTROLLER",
        help="The bootstrap.controllers, used to communicate directly with the metadata "
        "quorum: host:port[,host:port...] of controller listeners (live mode).",
    )
    p.add_argument(
        "--config",
        metavar="CONFIG",
        help="The configuration file to use: Kafka client properties for live mode "
        "(security.protocol, ssl.*, sasl.mechanism, sasl.jaas.config).",
    )
    p.add_argument(
        "-c",
        dest="commands",
        metavar="COMMANDS",
        action="append",
        help="Run these ';'-separated commands and exit (may be repeated).",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="Machine output: JSON lines from ls, cat, find, tree, pwd and history.",
    )
    p.add_argument(
        "--no-redact",
        action="store_true",
        help="Show secrets (password configs, SCRAM salts/keys, token HMACs) instead of [redacted].",
    )
    p.add_argument(
        "--no-color",
        action="store_true",
        help="Never colour output (colour is also off when NO_COLOR is set or stdout is not a terminal).",
    )
    p.add_argument(
        "--no-pager",
        action="store_true",
        help="In the interactive shell, never page long output (default: through $PAGER, "
        "less -FRX, when it does not fit on the screen).",
    )
    p.add_argument(
        "--max-batch-bytes",
        metavar="BYTES",
        type=_size,
        help="Largest record batch to read, and to inflate when compressed (default 64 MiB; "
        "Kafka writes at most 8 MiB). A larger one is reported as corrupt. Accepts "
        "K, M and G suffixes.",
    )
    p.add_argument(
        "--at",
        metavar="OFFSET|TIME",
        type=_point,
        help="Load the metadata as it was after this log offset, or after the last batch "
        "appended at or before this time (ISO 8601, e.g. 2026-11-22T03:55:00Z; or "
        "@epoch-ms). In the shell, 'at' moves the session later.",
    )
    p.add_argument(
        "--diff-with",
        metavar="DIR|FILE",
        help="Compare with another metadata directory or file and exit (diff --with): status 1 "
        "when they differ.",
    )
    p.add_argument(
        "--salvage",
        action="store_true",
        help="Load around corruption instead of failing: the log up to the first corrupt "
        "batch, the newest intact snapshot when a newer one is damaged. Warnings and "
        "/provenance say what was skipped.",
    )
    p.add_argument(
        "--tui",
        action="store_true",
        help="Browse in a full-screen terminal UI (tree, detail pane, command line, search) "
        "instead of the shell.",
    )
    p.add_argument(
        "--path", metavar="PATH", help="With --tui: start with this path selected (e.g. /topics/orders)."
    )
    p.add_argument(
        "--version", action="version", version=f"metashell {__version__}", help="Print the version and exit."
    )
    p.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        help="The command to run, as separate words (Kafka's form); without it, commands "
        "come from -c, from stdin when it is not a terminal, or interactively.",
    )
    return p


def _point(text: str) -> str:
    """``--at`` values: checked while parsing (a bad one is bad usage, exit 2), kept as typed."""
    from metashell.image.timepoint import PointError, parse_point

    try:
        parse_point(text)
    except PointError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("at: ")) from None
    return text


def _size(text: str) -> int:
    """``--max-batch-bytes`` values: a byte count with an optional K/M/G (binary) suffix."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = units.get(t[-1:], 1)
    try:
        value = parse_int(t[:-1] if t[-1:] in units else t) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64M)") from None
    if value < 4096:
        raise argparse.ArgumentTypeError(f"{text!r} is too small: a batch needs at least 4096 bytes here")
    return value


def _check_usage(args: argparse.Namespace) -> None:
    given = [
        name
        for name, value in (
            ("--directory", args.directory),
            ("--snapshot", args.snapshot),
            ("--bootstrap-controller", args.bootstrap_controller),
        )
        if value
    ]
    if not given:
        raise UsageError(
            "no metadata source: give one of --directory/-d DIR, --snapshot/-s FILE or "
            "--bootstrap-controller/-q HOST:PORT"
        )
    if len(given) > 1:
        raise UsageError(f"give only one metadata source, not both {given[0]} and {given[1]}")
    if args.bootstrap_controller:
        from metashell.live.connection import parse_endpoints
        from metashell.live.errors import ConfigError

        try:
            parse_endpoints(args.bootstrap_controller)
        except ConfigError as e:
            raise UsageError(f"--bootstrap-controller: {e}") from None
    if args.config and not args.bootstrap_controller:
        raise UsageError("--config only applies to live mode (--bootstrap-controller)")
    if args.at is not None and args.bootstrap_controller:
        raise UsageError("--at applies to files (--directory, --snapshot); live mode follows the log's end")
    if args.salvage and args.bootstrap_controller:
        raise UsageError(
            "--salvage applies to files (--directory, --snapshot); live mode reads what the controllers send"
        )
    if args.commands and args.command:
        raise UsageError(
            f"give commands either with -c or as words after the options, not both "
            f"(got -c and {' '.join(args.command)!r})"
        )
    if args.tui and (args.commands or args.command or args.diff_with):
        raise UsageError("--tui is interactive: give commands in its command line (':'), not with -c")
    if args.path is not None and not args.tui:
        raise UsageError("--path applies to --tui")
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]  # "metashell -d DIR -- ls /x"
    elif args.command and args.command[0].startswith("-"):
        raise UsageError(f"unrecognized arguments: {' '.join(args.command)}")


def _may_travel(commands: Sequence[str]) -> bool:
    """Whether one-shot commands may move through time (then the load keeps its journal): any
    word that names a command the registry says travels (:attr:`Command.travels`)."""
    from metashell.shell.registry import travelling

    return travelling(re.findall(r"[a-z]+", " ".join(commands)))


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


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
    from metashell.shell.output import color_wanted
    from metashell.shell.repl import run_plain
    from metashell.shell.session import Settings, Shell
    from metashell.shell.sources import banner, open_directory, open_file, open_live
    from metashell.shell.words import Word

    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    _check_usage(args)
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

    def warn(message: str) -> None:
        stdout.flush()
        stderr.write(f"warning: {visible(_one_line(message))}\n")
        stderr.flush()

    if interactive and _is_tty(stderr):
        stderr.write("Loading...\n")
        stderr.flush()
    if args.directory:
        source = open_directory(
            args.directory,
            warn,
            redact,
            salvage=args.salvage,
            at=args.at,
            timeline=not one_shot or _may_travel(args.commands or args.command),
        )
    elif args.snapshot:
        source = open_file(args.snapshot, warn, redact, salvage=args.salvage, at=args.at)
    else:
        source = open_live(args.bootstrap_controller, args.config, warn, redact)

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
            width=(lambda: shutil.get_terminal_size().columns) if stdout_tty else (lambda: None),
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
                    status |= shell.run_line(line)
            except ExitShell:
                pass
            return EXIT_ERROR if status else EXIT_OK
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
        _err(f"{_prog()}: error: {_one_line(e)} (see {_prog()} --help)")
        return EXIT_USAGE
    except MetashellError as e:
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
    except MemoryError:
        # the loader names the file and batch (LoadMemoryError); this is anywhere else
        _err("error: out of memory")
        return EXIT_ERROR
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the last line of defence: never a traceback
        if os.environ.get("METASHELL_DEBUG"):
            traceback.print_exc()
        _err(f"internal error: {type(e).__name__}: {_one_line(e)} (set METASHELL_DEBUG=1 for a traceback)")
        return EXIT_ERROR


def _err(line: str) -> None:
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError):
        _silence_stdout()
    try:
        sys.stderr.write(visible(line) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
