"""The command line's arguments: the parser, its help, and the usage rules argparse cannot say.

``metashell -d DIR``, ``-s FILE``, ``-q HOST:PORT`` (+ ``--config``), one-shot commands as words or
``-c``, Kafka's positional form, and the options (``--at``, ``--json``, ``--tui`` ...).  A usage
error is one line and exit status 2; :mod:`metashell.cli` runs what was asked.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from metashell import __version__
from metashell.engine import current as current_engine
from metashell.errors import UsageError
from metashell.numbers import parse_int
from metashell.times import is_duration_back

DESCRIPTION = "The Apache Kafka metadata shell (metashell): browse KRaft cluster metadata like a filesystem."


def _commands_help() -> str:
    from metashell.shell.registry import specs

    return "\n".join(f"  {n:<10}{s.description}" for n, s in specs().items())


EPILOG = """\
exactly one of --directory, --snapshot or --bootstrap-controller is required
(--directory beside --bootstrap-controller: the nodes' own directories, which 'quorum' compares
with the committed log).

commands (one-shot, or in the shell; 'man CMD' for options):
{commands}

examples:
  metashell -d /var/lib/kafka/meta                      interactive shell on a metadata log dir
  metashell -d DIR -c "cat /controllers/3; ls /topics"  one-shot, ';'-separated commands
  kafka-metadata-shell --directory DIR cat /topics/foo/0
  metashell -s DIR/__cluster_metadata-0/00000000000000000042-0000000001.checkpoint ls /image
  echo "find /brokers" | metashell -d DIR               commands from stdin
  metashell -q ctrl1:9093,ctrl2:9093 --config client.properties
  metashell -d DIR health --exit-code                  monitoring: 0 OK, 1 DEGRADED, 2 CRITICAL, 3 NO DATA

stdout carries only results; errors are one line on stderr.
exit status: 0 success, 1 any error, 2 bad usage, 130 interrupted.
"""


def _completion(shell: str) -> str:
    from metashell.completion import completion_script  # only when asked: a start stays fast

    return completion_script(shell, build_parser("metashell"))


def _man(_value: object) -> str:
    from metashell.completion import man_page

    return man_page(build_parser("metashell"))


class _Print(argparse.Action):
    """An option that prints what ``make(value)`` makes and exits, before any source is needed
    (as ``--version`` does): ``--completion bash``, ``--man``."""

    def __init__(self, *args: object, make: object = None, **kwargs: object) -> None:
        self.make = make
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: object, values: object, option: object = None
    ) -> None:
        sys.stdout.write(self.make(values))  # type: ignore[operator]
        sys.stdout.flush()
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2) instead of usage + message, and the command
    list in its help filled in only when help is shown: listing the commands imports every command
    module, which a one-shot ``cat`` does not need."""

    def format_help(self) -> str:
        if self.epilog is None:
            self.epilog = EPILOG.format(commands=_commands_help())
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter, told the terminal's width instead of asking ``shutil``: argparse makes
    a formatter for every ``add_argument`` (to check its metavar), and importing ``shutil`` for the
    first one cost every one-shot command about 3 ms."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2)


def _columns() -> int:
    """The terminal's columns as ``shutil.get_terminal_size`` finds them: ``COLUMNS``, else the
    terminal on stdout, else 80."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    stdout = sys.__stdout__
    try:
        return (os.get_terminal_size(stdout.fileno()).columns or 80) if stdout is not None else 80
    except (AttributeError, ValueError, OSError):  # not a terminal, or a stream without a descriptor
        return 80


def prog_name() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "metashell"
    if name in ("__main__.py", "-c", "-m", "") or name.endswith(".py"):
        return "metashell"
    return name


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    p = _Parser(
        prog=prog or prog_name(),
        description=DESCRIPTION,
        allow_abbrev=False,
        formatter_class=_Formatter,
    )
    p.add_argument(
        "--directory",
        "-d",
        metavar="DIRECTORY",
        action="append",
        help="The __cluster_metadata-0 directory to read (or the log dir that contains it). Give it "
        "once per node (-d A -d B -d C) to read several nodes of one cluster: 'quorum' compares "
        "them and 'node ID' switches between them. Beside -q, the nodes' own directories: 'quorum' "
        "says how far each is from the committed log.",
    )
    p.add_argument(
        "--mixed-clusters",
        action="store_true",
        help="With several -d: read them even when their cluster ids differ.",
    )
    p.add_argument(
        "--snapshot",
        "-s",
        "--checkpoint",  # the name Kafka's shell is moving to (KAFKA-20668)
        dest="snapshot",
        metavar="SNAPSHOT",
        help="The metadata snapshot file to read: one .checkpoint or .log file, as Kafka's shell does "
        "(--checkpoint is the same option).",
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
        "appended at or before this time (ISO 8601, e.g. 2026-11-22T03:55:00Z; @epoch-ms; or "
        "a duration before the log's last batch, e.g. -1h or 30m). In the shell, 'at' moves "
        "the session later.",
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
        "--completion",
        choices=("bash", "zsh", "fish"),
        action=_Print,
        make=_completion,
        help="Print a completion script for bash, zsh or fish, and exit: "
        'eval "$(metashell --completion bash)" (docs/install.md).',
    )
    p.add_argument(
        "--man",
        nargs=0,
        action=_Print,
        make=_man,
        help="Print the man page (roff), and exit: man -l <(metashell --man).",
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"metashell {__version__}\nengine: {current_engine().describe()}",
        help="Print the version and the engine that decodes (native or python), and exit.",
    )
    p.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        help="The command to run, as separate words (Kafka's form); without it, commands "
        "come from -c, from stdin when it is not a terminal, or interactively.",
    )
    return p


def join_point_values(argv: list[str]) -> list[str]:
    """``--at -1h`` as ``--at=-1h``: argparse takes a word starting with ``-`` for an option (only
    negative numbers are exempt), and a duration before the log's end is written that way."""
    out: list[str] = []
    for word in argv:
        if out and out[-1] == "--at" and is_duration_back(word):
            out[-1] = f"--at={word}"
            continue
        out.append(word)
    return out


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


SOURCES = frozenset({"directory", "snapshot", "live"})
MODES = frozenset({"shell", "commands", "diff", "tui"})
"""What an invocation is: its metadata source, and its mode (the interactive or piped shell;
commands given with -c or as words; the one-shot diff; the TUI)."""


class Scope:
    """Where a top-level option means something.  An option given outside its scope is refused
    (status 2), never silently dropped: ``--diff-with DIR -c ...`` ran the commands and exited 0
    with no diff.  (A plain class: the start path makes no NamedTuple or dataclass, which cost a
    one-shot start their imports and annotation compiles.)"""

    __slots__ = ("modes", "sources", "why")

    def __init__(
        self, sources: frozenset[str] = SOURCES, modes: frozenset[str] = MODES, why: str = ""
    ) -> None:
        self.sources = sources
        self.modes = modes
        self.why = why  # the refusal's reason, after the option's name


OPTION_SCOPES: dict[str, Scope] = {
    "directory": Scope(),
    "snapshot": Scope(),
    "bootstrap_controller": Scope(),
    "mixed_clusters": Scope(frozenset({"directory"}), why="applies to several --directory"),
    "config": Scope(frozenset({"live"}), why="only applies to live mode (--bootstrap-controller)"),
    "commands": Scope(),
    "command": Scope(),
    "json": Scope(
        modes=frozenset({"shell", "commands", "diff"}),
        why="applies to command output (the shell, -c, --diff-with); the TUI shows its own views",
    ),
    # preferences that apply wherever there is something to apply them to, as git's --no-pager:
    # an alias (metashell --no-pager) must not break the modes that never page
    "no_redact": Scope(),
    "no_color": Scope(),
    "no_pager": Scope(),
    "max_batch_bytes": Scope(),
    "at": Scope(
        frozenset({"directory", "snapshot"}),
        why="applies to files (--directory, --snapshot); live mode follows the log's end",
    ),
    "diff_with": Scope(),
    "salvage": Scope(
        frozenset({"directory", "snapshot"}),
        why="applies to files (--directory, --snapshot); live mode reads what the controllers send",
    ),
    "tui": Scope(),
    "path": Scope(modes=frozenset({"tui"}), why="applies to --tui"),
}
"""Every top-level option the parser knows (by ``dest``), with where it applies; a test fails when
the parser has an option this does not list (``tests/test_cli_option_pairs.py``)."""


def invocation(args: argparse.Namespace) -> tuple[str | None, str]:
    """(source, mode) of parsed arguments (source None when none is given)."""
    source = (  # -q first: directories given beside it are the nodes' disks, for 'quorum'
        "live"
        if args.bootstrap_controller
        else "directory"
        if args.directory
        else "snapshot"
        if args.snapshot
        else None
    )
    mode = (
        "tui"
        if args.tui
        else "diff"
        if args.diff_with
        else "commands"
        if args.commands or args.command
        else "shell"
    )
    return source, mode


def _check_scopes(args: argparse.Namespace) -> None:
    source, mode = invocation(args)
    for dest, scope in OPTION_SCOPES.items():
        value = getattr(args, dest, None)
        if value is None or value is False or value == []:  # not given ("--path ''" is given)
            continue
        if (source is not None and source not in scope.sources) or mode not in scope.modes:
            raise UsageError(f"{_flag(dest)} {scope.why}")


def _flag(dest: str) -> str:
    for action in build_parser()._actions:
        if action.dest == dest and action.option_strings:
            return max(action.option_strings, key=len)
    return dest


def check_usage(args: argparse.Namespace) -> None:
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
    if args.bootstrap_controller and args.directory and not args.snapshot:
        given.remove("--directory")  # the nodes' directories beside a live quorum ('quorum')
    if len(given) > 1:
        raise UsageError(f"give only one metadata source, not both {given[0]} and {given[1]}")
    if args.bootstrap_controller:
        from metashell.live.connection import parse_endpoints
        from metashell.live.errors import ConfigError

        try:
            parse_endpoints(args.bootstrap_controller)
        except ConfigError as e:
            raise UsageError(f"--bootstrap-controller: {e}") from None
    if args.directory and len(args.directory) > 1 and (args.at is not None or args.diff_with):
        raise UsageError("--at and --diff-with take one --directory (use 'node ID' then 'at' in the shell)")
    if args.commands and args.command:
        raise UsageError(
            f"give commands either with -c or as words after the options, not both "
            f"(got -c and {' '.join(args.command)!r})"
        )
    if args.diff_with and (args.commands or args.command):
        raise UsageError(
            "--diff-with is the one-shot form of 'diff --with DIR': give it alone, or put "
            "'diff --with DIR' among the -c commands (it was silently dropped)"
        )
    if args.tui and (args.commands or args.command or args.diff_with):
        raise UsageError("--tui is interactive: give commands in its command line (':'), not with -c")
    _check_scopes(args)
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]  # "metashell -d DIR -- ls /x"
    elif args.command and args.command[0].startswith("-"):
        raise UsageError(f"unrecognized arguments: {' '.join(args.command)}")
