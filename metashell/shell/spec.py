"""Command declarations, argument parsing and the help/man texts.

Kafka parses each command with argparse4j; its texts (descriptions, argument help, the
``invalid choice`` and ``too few arguments`` errors) are kept here word for word where Kafka has
them.  metashell's extra options (``ls -l``, ``find -name/-type``, ``tree -L``, ``--json``) are
declared the same way.  A tiny parser of our own is used instead of Python's argparse because
argparse exits the process and prints multi-line errors, while a shell command error must be one
line and must never leave the REPL.
"""

from collections.abc import Mapping
from typing import NamedTuple

from metashell.errors import MetashellError
from metashell.numbers import is_natural, parse_int, parse_seconds
from metashell.times import is_duration_back

from .suggest import close_matches
from .words import Word


class CommandError(MetashellError):
    """A command that cannot do what it was asked (a path that is not there, a point outside the
    files): one line, status 1."""


class CommandUsageError(CommandError):
    """A command line its spec does not accept (an unknown command or option, a missing or
    extra argument): one line, status 2, as the command line's own usage errors (argparse's)."""


class Option(NamedTuple):
    flags: tuple[str, ...]
    dest: str
    help: str
    metavar: str | None = None  # None: a flag without a value
    choices: tuple[str, ...] | None = None
    type: type = str


class Positional(NamedTuple):
    name: str
    help: str
    nargs: str  # "?", "*", "+", "1"
    metavar: str | None = None
    usage_text: str | None = None  # for arguments of two kinds (grep's PATTERN [PATH ...])

    def usage(self) -> str:
        if self.usage_text:
            return self.usage_text
        m = self.metavar or self.name
        return {"?": f"[{m}]", "*": f"[{m} [{m} ...]]", "+": f"{m} [{m} ...]", "1": m}[self.nargs]


class CommandSpec(NamedTuple):
    name: str
    description: str
    positional: Positional | None = None
    options: tuple[Option, ...] = ()
    shell_only: bool = False  # Kafka registers these only in interactive mode
    notes: tuple[str, ...] = ()

    def usage(self, with_help: bool = True) -> str:
        parts = [self.name]
        if with_help:
            parts.append("[-h]")
        for opt in self.options:
            flag = opt.flags[0]
            parts.append(f"[{flag} {opt.metavar}]" if opt.metavar else f"[{flag}]")
        if self.positional:
            parts.append(self.positional.usage())
        return "usage: " + " ".join(parts)

    def help_text(self) -> str:
        """argparse-style help (Kafka's ``<cmd> --help`` and the body of ``man <cmd>``)."""
        lines = [self.usage(), ""]
        if self.positional:
            lines.append("positional arguments:")
            lines.append(_help_row(self.positional.metavar or self.positional.name, self.positional.help))
            lines.append("")
        lines.append("optional arguments:")
        lines.append(_help_row("-h, --help", "show this help message and exit"))
        for opt in self.options:
            flags = ", ".join(f"{f} {opt.metavar}" if opt.metavar else f for f in opt.flags)
            lines.append(_help_row(flags, opt.help))
        for note in self.notes:
            lines.append("")
            lines.append(note)
        return "\n".join(lines)


def _help_row(left: str, text: str) -> str:
    # argparse4j puts help text in column 25 (2-space indent, left part padded to 23).
    left = "  " + left
    if len(left) < 25:
        return left.ljust(25) + text
    return left + "\n" + " " * 25 + text


JSON_OPT = Option(("--json",), "json", "Print machine-readable JSON lines instead of text.")


def unknown_command_message(typed: str, names: list[str]) -> str:
    """Kafka's ``invalid choice`` text, plus a suggestion when one is close (Kafka only suggests
    for unique prefixes) and where to look."""
    candidates = [n for n in names if n.startswith(typed)] if typed else []
    if len(candidates) != 1:
        candidates = close_matches(typed, names, n=1, cutoff=0.6)
    if candidates:
        return f"invalid choice: '{typed}': did you mean '{candidates[0]}'? (type 'help' for the list)"
    choices = ", ".join(f"'{n}'" for n in names)
    return f"invalid choice: '{typed}' (choose from {choices})"


class Parsed:
    """A parsed command line: its spec, positional words, option values by dest, and ``-h``."""

    __slots__ = ("args", "help", "opts", "spec")

    def __init__(
        self, spec: CommandSpec, args: list[Word], opts: dict[str, object], help: bool = False
    ) -> None:
        self.spec = spec
        self.args = args
        self.opts = opts
        self.help = help

    def __repr__(self) -> str:
        return f"Parsed({self.spec.name!r}, args={self.args!r}, opts={self.opts!r}, help={self.help})"


def parse(words: list[Word], specs: Mapping[str, CommandSpec]) -> Parsed:
    """Parse one command's words against ``specs`` (the registry's).  Raises
    :class:`CommandError` with a one-line message."""
    # Kafka drops trailing empty words before parsing.
    while words and words[-1].text == "":
        words = words[:-1]
    name = words[0].literal
    spec = specs.get(name)
    if spec is None:
        raise CommandUsageError(unknown_command_message(name, sorted(specs)))
    by_flag = {f: o for o in spec.options for f in o.flags}
    opts: dict[str, object] = {o.dest: (None if o.metavar else False) for o in spec.options}
    args: list[Word] = []
    want_help = False
    i = 1
    only_positional = False
    while i < len(words):
        w = words[i]
        t = w.literal
        i += 1
        if only_positional or not t.startswith("-") or t == "-":
            args.append(w)
            continue
        if t == "--":
            only_positional = True
            continue
        if t in ("-h", "--help"):
            want_help = True
            continue
        if _is_flag_cluster(t, by_flag):  # ls -la: several one-letter flags in one word
            for letter in t[1:]:
                opts[by_flag["-" + letter].dest] = True
            continue
        value: str | None = None
        key = t
        if t.startswith("--") and "=" in t:
            key, value = t.split("=", 1)
        opt = by_flag.get(key)
        if opt is None:
            if _looks_negative_number(t) and spec.positional is not None:
                args.append(w)
                continue
            raise CommandUsageError(f"{name}: unrecognized arguments: '{t}' ({spec.usage(False)})")
        if opt.metavar is None:
            if value is not None:
                raise CommandUsageError(f"{name}: option {key} takes no value")
            opts[opt.dest] = True
            continue
        if value is None:
            if i >= len(words):
                raise CommandUsageError(f"{name}: argument {key}: expected one argument")
            # The value of -name is a glob: keep its escapes.
            value = words[i].text if opt.dest == "name" else words[i].literal
            i += 1
        if opt.choices and value not in opt.choices:
            choices = ", ".join(f"'{c}'" for c in opt.choices)
            raise CommandUsageError(
                f"{name}: argument {key}: invalid choice: '{value}' (choose from {choices})"
            )
        if opt.type is int:
            try:
                opts[opt.dest] = parse_int(value)
            except ValueError:
                raise CommandUsageError(
                    f"{name}: argument {key}: could not convert '{value}' to Integer"
                ) from None
        else:
            opts[opt.dest] = value
    if want_help:
        return Parsed(spec, args, opts, help=True)
    pos = spec.positional
    nargs = pos.nargs if pos else "0"
    if nargs in ("+", "1") and not args:
        raise CommandUsageError(f"{name}: too few arguments ({spec.usage(False)})")
    if (nargs == "0" and args) or (nargs in ("?", "1") and len(args) > 1):
        extra = args[0 if nargs == "0" else 1].text
        raise CommandUsageError(f"{name}: unrecognized arguments: '{extra}' ({spec.usage(False)})")
    return Parsed(spec, args, opts)


def _is_flag_cluster(t: str, by_flag: dict[str, Option]) -> bool:
    if len(t) < 3 or t[1] == "-" or t in by_flag:
        return False
    return all((o := by_flag.get("-" + c)) is not None and o.metavar is None for c in t[1:])


def _looks_negative_number(t: str) -> bool:
    """``-5``, or a duration before the log's end (``at -1h``): a value, not an unknown option."""
    return is_natural(t[1:]) or is_duration_back(t)


def man_text(spec: CommandSpec) -> str:
    return f"{spec.name}: {spec.description}\n\n{spec.help_text()}"


def help_text(specs: Mapping[str, CommandSpec]) -> str:
    """The ``help`` screen: Kafka's layout (usage line and one row per command) plus a few lines
    on paths and output options that Kafka does not have."""
    names = sorted(specs)
    listed = ",".join(names)
    lines = [
        "Welcome to metashell, a Kafka KRaft metadata shell.",
        "",
        f"usage: {{{listed}}} ...",
        "",
        "positional arguments:",
        f"  {{{listed}}}",
    ]
    for n in names:
        lines.append("    " + n.ljust(21) + specs[n].description)
    lines += [
        "",
        "Paths are absolute (/topics/foo) or relative to the working directory (.., ./x); each",
        "component may be a glob: * ? {a,b} [0-9] [!a-c] (\\ escapes the next character).",
        "Commands can be separated by ';'.  Type 'man <command>' for a command's options.",
    ]
    return "\n".join(lines)


def seconds_option(p: Parsed, name: str, default: float) -> float:
    """Option ``--name`` as seconds (``watch --interval``, ``quorum --interval``), or ``default``."""
    raw = p.opts.get(name)
    if raw is None:
        return default
    try:
        return parse_seconds(str(raw))
    except ValueError:
        raise CommandError(
            f"{p.spec.name}: --{name} {raw}: not a positive number of seconds (at most a year)"
        ) from None
