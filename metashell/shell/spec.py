"""Command declarations, argument parsing and the help/man texts.

Kafka parses each command with argparse4j; its texts (descriptions, argument help, the
``invalid choice`` and ``too few arguments`` errors) are kept here word for word where Kafka has
them.  metashell's extra options (``ls -l``, ``find -name/-type``, ``tree -L``, ``--json``) are
declared the same way.  A tiny parser of our own is used instead of Python's argparse because
argparse exits the process and prints multi-line errors, while a shell command error must be one
line and must never leave the REPL.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from metashell.errors import MetashellError
from metashell.numbers import is_natural, parse_int

from .words import Word


class CommandError(MetashellError):
    """A usage error inside the shell (bad option, missing argument): one line, status 1."""


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    dest: str
    help: str
    metavar: str | None = None  # None: a flag without a value
    choices: tuple[str, ...] | None = None
    type: type = str


@dataclass(frozen=True)
class Positional:
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


@dataclass(frozen=True)
class CommandSpec:
    name: str
    description: str
    positional: Positional | None = None
    options: tuple[Option, ...] = ()
    shell_only: bool = False  # Kafka registers these only in interactive mode
    notes: tuple[str, ...] = field(default=())

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

SPECS: dict[str, CommandSpec] = {
    s.name: s
    for s in (
        CommandSpec(
            "at",
            "Move the session to the metadata as it was after a log offset or time; 'at' alone "
            "returns to the end.",
            Positional("point", "An offset, an ISO 8601 time (2026-11-22T03:55:00Z) or @epoch-ms.", "?"),
        ),
        CommandSpec(
            "cat",
            "Show the contents of metadata files.",
            Positional("targets", "The metadata files to display.", "+"),
            (JSON_OPT,),
        ),
        CommandSpec(
            "cd",
            "Set the current working directory.",
            Positional("target", "The directory to change to ('-': the previous one; '~': /).", "?"),
            shell_only=True,
        ),
        CommandSpec("clear", "Clear the screen.", shell_only=True),
        CommandSpec(
            "describe",
            "Describe topics as kafka-topics --describe does, brokers, or ACLs that apply.",
            Positional(
                "targets",
                "Topic names or globs (default: every topic), 'broker' followed by "
                "broker ids or globs (default: every broker), or 'acl' (with the options below: "
                "the ACL bindings that apply, as Kafka's authorizer matches them).",
                "*",
            ),
            (
                Option(
                    ("--under-replicated-partitions",),
                    "under_replicated",
                    "Only show under-replicated partitions.",
                ),
                Option(
                    ("--unavailable-partitions",),
                    "unavailable",
                    "Only show partitions whose leader is not available.",
                ),
                Option(
                    ("--under-min-isr-partitions",),
                    "under_min_isr",
                    "Only show partitions whose isr count is less than the configured minimum.",
                ),
                Option(
                    ("--at-min-isr-partitions",),
                    "at_min_isr",
                    "Only show partitions whose isr count is equal to the configured minimum.",
                ),
                Option(
                    ("--topics-with-overrides",),
                    "with_overrides",
                    "Only show topics that have overridden configs.",
                ),
                Option(
                    ("--principal",),
                    "principal",
                    "describe acl: the principal asking (User:alice).",
                    "PRINCIPAL",
                ),
                Option(
                    ("--resource",),
                    "resource",
                    "describe acl: the resource, TYPE:NAME (topic:orders, "
                    "group:app, cluster:kafka-cluster, transactional_id:tx).",
                    "RESOURCE",
                ),
                Option(
                    ("--operation",),
                    "operation",
                    "describe acl: the operation (READ, WRITE, DESCRIBE...): "
                    "with --principal and --resource, says whether it is allowed.",
                    "OPERATION",
                ),
                Option(("--host",), "host", "describe acl: the client host (default: any).", "HOST"),
                JSON_OPT,
            ),
            notes=(
                (
                    "The configured minimum is the topic's min.insync.replicas override, else the cluster "
                    "default; when neither is in the metadata only leaderless partitions count as under it."
                ),
                "Configs lists the topic's overrides (kafka-topics also lists broker-level settings).",
            ),
        ),
        CommandSpec(
            "diff",
            "Show what differs between two points of the log, or with another directory or file.",
            Positional("path", "Only under this path (default: the whole tree but /image).", "?"),
            (
                Option(
                    ("--from",),
                    "from",
                    "The earlier point: an offset or time (default: where the session is).",
                    "POINT",
                ),
                Option(("--to",), "to", "The later point (default: the end of the log).", "POINT"),
                Option(
                    ("--with",), "with", "Compare with this metadata directory or file instead.", "SOURCE"
                ),
                JSON_OPT,
            ),
            notes=(
                (
                    "Lines are -path: old and +path: new, one per value (a record's fields one by one); "
                    "exit status 1 when something differs, as diff's."
                ),
            ),
        ),
        CommandSpec("exit", "Exit the metadata shell.", shell_only=True),
        CommandSpec(
            "find",
            "Search for nodes in the directory hierarchy.",
            Positional("paths", "The paths to start at.", "*"),
            (
                Option(("-name",), "name", "Only print nodes whose name matches this glob.", "GLOB"),
                Option(
                    ("-type",), "type", "Only print files (f) or directories (d).", "TYPE", choices=("f", "d")
                ),
                JSON_OPT,
            ),
            notes=("A path given as a glob prints the matched paths (Kafka prints the glob text).",),
        ),
        CommandSpec(
            "grep",
            "Search values and names of metadata files for a regular expression.",
            Positional(
                "args",
                "PATTERN, then the paths to search (default: the working directory).",
                "+",
                metavar="PATTERN",
                usage_text="PATTERN [PATH ...]",
            ),
            (
                Option(("-i",), "ignore_case", "Ignore case."),
                Option(
                    ("-r",),
                    "recursive",
                    "Search directories recursively (from /, /image and /local are left out unless named).",
                ),
                Option(("-l",), "files_only", "Print only the paths of matching files."),
                JSON_OPT,
            ),
            notes=(
                (
                    "Prints 'path: line' for every matching line of a file's text (as cat shows it, secrets "
                    "redacted); a file whose name matches prints its first line. Exit status 1 when nothing "
                    "matched, as grep's."
                ),
            ),
        ),
        CommandSpec(
            "health",
            "Say what is wrong: offline or under-replicated partitions, fenced brokers...",
            options=(
                Option(
                    ("--exit-code",),
                    "exit_code",
                    "Exit with status 1 when anything is unhealthy (for cron and monitoring).",
                ),
                Option(("--all",), "all", "List every affected item, not the first few."),
                JSON_OPT,
            ),
        ),
        CommandSpec(
            "help",
            "Display this help message.",
            Positional("cmd", "Show this command's help text instead (like man).", "?"),
            shell_only=True,
        ),
        CommandSpec(
            "history",
            "Print command history, or the history of a topic, partition, broker or config.",
            Positional(
                "numEntriesToShow",
                "The number of entries to show; or a PATH (/topics/orders/3, "
                "/brokers/2, /configs/topic/orders/retention.ms) to list every record that changed it.",
                "?",
            ),
            (JSON_OPT,),
            shell_only=True,
        ),
        CommandSpec(
            "log",
            "List the metadata records themselves, with a summary each.",
            options=(
                Option(("--from",), "from", "First offset to show.", "OFFSET"),
                Option(("--to",), "to", "Last offset to show.", "OFFSET"),
                Option(
                    ("--type",),
                    "type",
                    "Only these record types (PartitionChangeRecord or "
                    "PARTITION_CHANGE_RECORD, comma-separated).",
                    "TYPE",
                ),
                JSON_OPT,
            ),
            notes=(
                (
                    "--json prints each record as kafka-dump-log --cluster-metadata-decoder does (type, "
                    "version, data), with its batch's file, position and offsets."
                ),
            ),
        ),
        CommandSpec(
            "ls",
            "List metadata nodes.",
            Positional("targets", "The metadata node paths to list.", "*"),
            (
                Option(
                    ("-l",),
                    "long",
                    "Long listing: type, size (children or bytes), kind, name and short value.",
                ),
                Option(("-R",), "recursive", "List subdirectories recursively."),
                Option(("-a",), "all", "Accepted for habit's sake: there are no hidden entries."),
                JSON_OPT,
            ),
        ),
        CommandSpec(
            "man",
            "Show the help text for a specific command.",
            Positional("cmd", "The command to get help text for.", "1"),
            shell_only=True,
        ),
        CommandSpec("quit", "Exit the metadata shell (like exit).", shell_only=True),
        CommandSpec(
            "pwd",
            "Print the current working directory.",
            options=(JSON_OPT,),
            shell_only=True,
        ),
        CommandSpec(
            "watch",
            "Print each change under PATH as it happens (live, or a directory a node appends to).",
            Positional("path", "What to watch (default: the whole tree but /image).", "?"),
            (
                Option(("--count",), "count", "Stop after this many changes.", "N", type=int),
                Option(("--interval",), "interval", "Seconds between looks (default 1).", "SECONDS"),
                JSON_OPT,
            ),
            notes=(
                (
                    "Each line: the offset and time the image had reached, the path, old -> new. Ctrl-C "
                    "stops. Watch a narrow path on a big cluster: each look compares every value under it."
                ),
            ),
        ),
        CommandSpec(
            "tree",
            "Show the contents of metadata nodes in a tree structure.",
            Positional("targets", "The metadata nodes to display (default: the current directory).", "*"),
            (
                Option(("-L",), "depth", "Descend at most DEPTH directory levels.", "DEPTH", type=int),
                JSON_OPT,
            ),
        ),
    )
}

COMMAND_NAMES = sorted(SPECS)


def unknown_command_message(typed: str) -> str:
    """Kafka's ``invalid choice`` text, plus a suggestion when one is close (Kafka only suggests
    for unique prefixes) and where to look."""
    candidates = [n for n in COMMAND_NAMES if n.startswith(typed)] if typed else []
    if len(candidates) != 1:
        candidates = difflib.get_close_matches(typed, COMMAND_NAMES, n=1, cutoff=0.6)
    if candidates:
        return f"invalid choice: '{typed}': did you mean '{candidates[0]}'? (type 'help' for the list)"
    choices = ", ".join(f"'{n}'" for n in COMMAND_NAMES)
    return f"invalid choice: '{typed}' (choose from {choices})"


@dataclass
class Parsed:
    spec: CommandSpec
    args: list[Word]
    opts: dict[str, object]
    help: bool = False


def parse(words: list[Word]) -> Parsed:
    """Parse one command's words.  Raises :class:`CommandError` with a one-line message."""
    # Kafka drops trailing empty words before parsing.
    while words and words[-1].text == "":
        words = words[:-1]
    name = words[0].literal
    spec = SPECS.get(name)
    if spec is None:
        raise CommandError(unknown_command_message(name))
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
            raise CommandError(f"{name}: unrecognized arguments: '{t}' ({spec.usage(False)})")
        if opt.metavar is None:
            if value is not None:
                raise CommandError(f"{name}: option {key} takes no value")
            opts[opt.dest] = True
            continue
        if value is None:
            if i >= len(words):
                raise CommandError(f"{name}: argument {key}: expected one argument")
            # The value of -name is a glob: keep its escapes.
            value = words[i].text if opt.dest == "name" else words[i].literal
            i += 1
        if opt.choices and value not in opt.choices:
            choices = ", ".join(f"'{c}'" for c in opt.choices)
            raise CommandError(f"{name}: argument {key}: invalid choice: '{value}' (choose from {choices})")
        if opt.type is int:
            try:
                opts[opt.dest] = parse_int(value)
            except ValueError:
                raise CommandError(
                    f"{name}: argument {key}: could not convert '{value}' to Integer"
                ) from None
        else:
            opts[opt.dest] = value
    if want_help:
        return Parsed(spec, args, opts, help=True)
    pos = spec.positional
    nargs = pos.nargs if pos else "0"
    if nargs in ("+", "1") and not args:
        raise CommandError(f"{name}: too few arguments ({spec.usage(False)})")
    if (nargs == "0" and args) or (nargs in ("?", "1") and len(args) > 1):
        extra = args[0 if nargs == "0" else 1].text
        raise CommandError(f"{name}: unrecognized arguments: '{extra}' ({spec.usage(False)})")
    return Parsed(spec, args, opts)


def _is_flag_cluster(t: str, by_flag: dict[str, Option]) -> bool:
    if len(t) < 3 or t[1] == "-" or t in by_flag:
        return False
    return all((o := by_flag.get("-" + c)) is not None and o.metavar is None for c in t[1:])


def _looks_negative_number(t: str) -> bool:
    return is_natural(t[1:])


def man_text(name: str) -> str:
    spec = SPECS[name]
    return f"{spec.name}: {spec.description}\n\n{spec.help_text()}"


def help_text() -> str:
    """The ``help`` screen: Kafka's layout (usage line and one row per command) plus a few lines
    on paths and output options that Kafka does not have."""
    names = ",".join(COMMAND_NAMES)
    lines = [
        "Welcome to metashell, a Kafka KRaft metadata shell.",
        "",
        f"usage: {{{names}}} ...",
        "",
        "positional arguments:",
        f"  {{{names}}}",
    ]
    for n in COMMAND_NAMES:
        lines.append("    " + n.ljust(21) + SPECS[n].description)
    lines += [
        "",
        "Paths are absolute (/topics/foo) or relative to the working directory (.., ./x); each",
        "component may be a glob: * ? {a,b} [0-9] [!a-c] (\\ escapes the next character).",
        "Commands can be separated by ';'.  Type 'man <command>' for a command's options.",
    ]
    return "\n".join(lines)
