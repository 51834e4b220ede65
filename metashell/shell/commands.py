"""The shell commands: ``ls cd pwd cat find tree history help man exit``, ``grep``, and the
answers ``health`` and ``describe``.

:class:`Shell` holds what a session needs (the tree root, the working directory, the history, the
output streams and settings) and runs command lines.  Without options every command prints exactly
what Kafka's ``kafka-metadata-shell`` prints (FORMATS.md section 8), through the renderers of
:mod:`metashell.tree.render`.  The differences, all deliberate, are listed in :data:`DIFFERENCES`.

Output discipline: results go to ``out``; every error is one line on ``err`` (Kafka prints its
errors among the results on stdout) and makes the command's status 1.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import posixpath
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TextIO, cast

from metashell.errors import MetashellError
from metashell.image.acls import acl_json, decide
from metashell.image.changelog import LogEntry, iter_log
from metashell.image.health import PartitionRef, check_health, effective_min_isr
from metashell.image.history import history, parse_target
from metashell.image.image import MetadataImage
from metashell.image.model import Topic
from metashell.log.directory import ReadPlan
from metashell.numbers import is_int, parse_int, parse_seconds
from metashell.protocol.uuid import uuid_to_str
from metashell.tree import Node, glob_components, join
from metashell.tree.friendly import iso_utc as iso_time
from metashell.tree.paths import glob_regex, is_glob, normalize, resolve
from metashell.tree.redact import redact_config, redact_record_json
from metashell.tree.render import iter_find, render_ls, render_tree
from metashell.tree.summary import summarize
from metashell.tree.values import tree_values

from ..safe_text import visible, visible_output
from . import answers, spec
from .output import colorize_json, json_line
from .record_types import TypeFilter, parse_type_filter
from .sources import open_other
from .spec import CommandError, Parsed
from .words import Word, split_commands, split_pipe, split_segments

if TYPE_CHECKING:
    from .sources import Source, Traveller

DIFFERENCES = (
    "Errors go to stderr, one line each, and make the exit status 1 (Kafka: stdout, exit 0).",
    "find on a glob prints the matched paths (Kafka prints the glob text, e.g. '/image/to*/byId').",
    "All commands work in one-shot mode (Kafka only allows cat, find, ls and tree there).",
    "ls lays out columns whenever stdout is a terminal, one-shot mode included (Kafka: REPL only).",
    "tree without a path shows the working directory (Kafka: 'too few arguments').",
    "Extra options: ls -l, find -name/-type, tree -L, --json on ls/cat/find/tree/pwd/history.",
    "Usage errors name the command and show its usage; unknown commands suggest the closest name.",
    "Backslashes typed outside quotes reach the glob layer (JLine strips them in Kafka).",
    "history is persistent across sessions and numbered from 0 over the whole file.",
    "help/man texts describe metashell's options; 'help CMD' is accepted as 'man CMD'.",
    "Secrets print as [redacted] unless --no-redact (Kafka's shell never redacts).",
)
"""Every deliberate difference from Kafka's shell, for the docs."""


class ExitShell(Exception):
    """Raised by ``exit``: the REPL or the one-shot runner stops."""

    def __init__(self, status: int = 0) -> None:
        super().__init__(status)
        self.status = status


@dataclass
class Settings:
    """Per-session output settings."""

    json: bool = False  # global --json
    redact: bool = True
    color: bool = False  # ANSI colours around JSON (terminal, NO_COLOR unset)
    width: Callable[[], int | None] = field(default=lambda: None)  # terminal columns for ls


class Shell:
    """One shell session over a tree."""

    def __init__(
        self,
        root: Node | Callable[[], Node],
        out: TextIO,
        err: TextIO,
        settings: Settings | None = None,
        history: list[str] | None = None,
    ) -> None:
        self._root = root
        self.out = out
        self.err = err
        self.settings = settings or Settings()
        self.cwd = "/"
        self.previous_cwd = "/"
        #: ``at`` and ``diff --from/--to``: other points of the log (None for live sources).
        self.travel: Traveller | None = None
        #: where the session is in the log (``@42``), None at its end.
        self.point: str | None = None
        #: ``diff --with``: another source's root.
        self.open_other: Callable[[str], Node] | None = None
        #: ``watch``: brings the image up to date and returns a new root when it had to reload (a
        #: directory), or None when the image was updated in place (live); None: cannot watch.
        self.refresh: Callable[[], Node | None] | None = None
        #: the whole log the source's files hold, for ``history PATH`` and ``log`` (None when live).
        self.full_plan: Callable[[int | None], ReadPlan] | None = None
        self.salvage = False  # --salvage: `log` stops before damage as the load did
        self.history: list[str] = history if history is not None else []
        self._status = 0

    def attach(self, source: Source) -> None:
        """Use what an opened source offers: its tree, time travel, its log, refreshing, and
        ``diff --with`` another source (one place for the CLI, the TUI and the benchmarks)."""
        self._root = source.root
        self.travel = source.travel
        self.point = source.point
        self.full_plan = source.full_plan
        self.salvage = source.salvage
        self.refresh = source.refresh
        self.open_other = lambda other: open_other(other, self.settings.redact)

    # -- plumbing ----------------------------------------------------------------------------
    @property
    def root(self) -> Node:
        return self._root() if callable(self._root) and not isinstance(self._root, Node) else self._root

    def write(self, text: str, *, raw: bool = False) -> None:
        """Print ``text``; control characters other than newline and tab are made visible unless
        ``raw`` (text that is already safe and carries our own colour sequences)."""
        if text:
            self.out.write(text if raw else visible_output(text))

    def note(self, message: str) -> None:
        """One informational line on stderr that does not fail the command."""
        self.out.flush()
        self.err.write(visible(message.rstrip("\n")) + "\n")
        self.err.flush()

    def error(self, message: str) -> None:
        """One error line on stderr (stdout flushed first so the order on a terminal is right)."""
        self._status = 1
        self.note(message)

    def run_line(self, line: str, remember: bool = True) -> int:
        """Run every ``;``-separated command of ``line``; return 0 if all succeeded, else 1.

        ``remember`` appends the line to the in-memory history first (JLine adds the line before
        running it, so ``history`` shows itself).  :class:`ExitShell` propagates.
        """
        if remember and line.strip():
            self.history.append(line.rstrip("\n"))
        if "|" not in line:
            segments: list[tuple[str, str | None]] = [(line, None)]
        else:
            segments = [split_pipe(seg) for seg in split_segments(line)]
        status = 0
        for text, pipe_to in segments:
            try:
                commands = split_commands(text)
            except MetashellError as e:
                self.error(str(e))
                return 1
            if pipe_to is not None:
                status |= self._run_piped(commands, pipe_to)
                continue
            for words in commands:
                status |= self.run_words(words)
        return status

    def _run_piped(self, commands: list[list[Word]], shell_command: str) -> int:
        """``CMD | SHELL-COMMAND``: the commands' output goes to ``sh -c SHELL-COMMAND``, whose own
        output goes where ours would (the terminal directly, or copied into ``out`` when that is not
        a file, e.g. in tests).  Errors stay on our stderr.  Status: ours, else the pipe's."""
        if not shell_command:
            self.error("|: a shell command must follow the pipe (e.g. ls /topics | wc -l)")
            return 1
        try:
            target = self.out.fileno()
        except (AttributeError, OSError, ValueError):
            target = None
        self.out.flush()
        proc = subprocess.Popen(
            shell_command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=target if target is not None else subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        assert proc.stdin is not None
        saved, self.out = self.out, cast(TextIO, proc.stdin)
        settings = self.settings  # a pipe is not a terminal: no columns, no colour
        self.settings = replace(settings, color=False, width=lambda: None)
        status = 0
        try:
            for words in commands:
                status |= self.run_words(words)
        except BrokenPipeError:
            pass  # `| head -1`: the reader has what it wanted
        finally:
            self.out = saved
            self.settings = settings
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
            captured = proc.stdout.read() if proc.stdout is not None else ""
            code = proc.wait()
        if captured:
            self.out.write(captured)
        return status or (1 if code else 0)

    def run_words(self, words: list[Word]) -> int:
        """Run one command given as words; return its status (0/1)."""
        self._status = 0
        if not words:
            return 0
        try:
            parsed = spec.parse(words)
            if parsed.help:
                self.write(parsed.spec.help_text() + "\n")
            else:
                getattr(self, "cmd_" + parsed.spec.name)(parsed)
        except (CommandError, MetashellError) as e:
            self.error(str(e))
        except (BrokenPipeError, ExitShell):
            raise  # the reader went away / exit: the caller stops
        except Exception as e:  # noqa: BLE001 - a bug in one command must not end the session
            self.error(f"internal error in {words[0].text}: {type(e).__name__}: {' '.join(str(e).split())}")
        self.out.flush()
        return self._status

    # -- helpers -----------------------------------------------------------------------------
    def _json(self, parsed: Parsed) -> bool:
        return self.settings.json or bool(parsed.opts.get("json"))

    def _emit_json(self, obj: object) -> None:
        line = json_line(obj)  # no control characters left: JSON escapes C0, json_line the rest
        self.write((colorize_json(line) if self.settings.color else line) + "\n", raw=True)

    def _glob(self, pattern: str) -> list[tuple[list[str], Node]]:
        return glob_components(self.root, self.cwd, pattern)

    def _did_you_mean(self, typed: str) -> str:
        """`` Did you mean /topics/orders?`` when :meth:`_nearest_path` has one."""
        near = self._nearest_path(typed)
        return f" Did you mean {visible(near)}?" if near else ""

    def _nearest_path(self, typed: str) -> str | None:
        """The path ``typed`` with its first missing component replaced by a close sibling (a path
        without globs, in a directory of at most 10 000 names); None when there is none."""
        comps = normalize(self.cwd, typed)
        node: Node | None = self.root
        fixed: list[str] = []
        for i, comp in enumerate(comps):
            if node is None or not node.is_dir or is_glob(comp):
                return None
            child = node.child(comp)
            if child is None:
                if node.child_count() > _SUGGEST_MAX_NAMES:
                    return None
                close = difflib.get_close_matches(comp, node.child_names(), n=1, cutoff=0.7)
                if not close:
                    return None
                return join([*fixed, close[0], *comps[i + 1 :]])
            fixed.append(comp)
            node = child
        return None

    @staticmethod
    def _effective(args: list[Word]) -> list[Word]:
        """Kafka's ``CommandUtils.getEffectivePaths``: drop empty words; none means ``.``."""
        kept = [a for a in args if a.text]
        return kept or [Word(".", ".")]

    def _leaf_text(self, node: Node) -> str:
        """A leaf's text, made safe, then coloured: write it with ``raw=True``."""
        text = visible_output(node.text(self.settings.redact))
        if self.settings.color and text[:1] in "{[" and node.kind not in _BARE_KINDS:
            return colorize_json(text)
        return text

    # -- commands ----------------------------------------------------------------------------
    def cmd_ls(self, p: Parsed) -> None:
        as_json = self._json(p)
        long = bool(p.opts.get("long"))
        files: list[tuple[str, list[str], Node]] = []
        dirs: list[tuple[str, list[str], Node]] = []
        for arg in self._effective(p.args):
            matches = self._glob(arg.text)
            if not matches:
                self.error(f"ls: {arg.text}: no such file or directory.{self._did_you_mean(arg.text)}")
                continue
            for comps, node in matches:
                name = comps[-1] if comps else "/"
                (dirs if node.is_dir else files).append((name, comps, node))
        if as_json:
            for name, comps, node in files:
                self._emit_json(self._entry_json(name, comps, node))
            for _name, comps, node in dirs:
                for child_name in node.child_names():
                    child = node.child(child_name)
                    if child is not None:
                        self._emit_json(self._entry_json(child_name, comps + [child_name], child))
            return
        if p.opts.get("recursive"):
            self._ls_recursive(files, dirs, long)
            return
        if not long:
            self.write(
                render_ls(
                    [visible(f[0]) for f in files],
                    [(visible(d[0]), [visible(c) for c in d[2].child_names()]) for d in dirs],
                    self.settings.width(),
                )
            )
            return
        # ls -l: Kafka's grouping and intro lines, one long row per entry.
        out: list[str] = _long_rows([(f[0], f[2]) for f in files], self.settings.redact)
        need_intro = bool(files) or len(dirs) > 1
        first_intro = not files
        for name, _comps, node in dirs:
            intro = None
            if need_intro:
                intro = (visible(name) + ":") if first_intro else ("\n" + visible(name) + ":")
                first_intro = False
            children = [(n, c) for n in node.child_names() if (c := node.child(n)) is not None]
            if not children:
                continue
            if intro is not None:
                out.extend(intro.split("\n"))
            out.extend(_long_rows(children, self.settings.redact))
        self.write("".join(line + "\n" for line in out))

    def _ls_recursive(
        self, files: list[tuple[str, list[str], Node]], dirs: list[tuple[str, list[str], Node]], long: bool
    ) -> None:
        """``ls -R``: each directory as ``path:`` and its entries, depth first, streamed."""
        if files:
            rows = (
                _long_rows([(f[0], f[2]) for f in files], self.settings.redact)
                if long
                else [visible(f[0]) for f in files]
            )
            self.write("".join(r + "\n" for r in rows))
        first = not files
        stack = [(comps, node) for _name, comps, node in reversed(dirs)]
        while stack:
            comps, node = stack.pop()
            children = [(n, c) for n in node.child_names() if (c := node.child(n)) is not None]
            rows = _long_rows(children, self.settings.redact) if long else [visible(n) for n, _c in children]
            self.write(
                ("" if first else "\n") + visible(join(comps)) + ":\n" + "".join(r + "\n" for r in rows)
            )
            first = False
            stack.extend((comps + [n], c) for n, c in reversed(children) if c.is_dir)

    def _entry_json(self, name: str, comps: list[str], node: Node) -> dict[str, object]:
        entry: dict[str, object] = {
            "path": join(comps),
            "name": name,
            "type": "dir" if node.is_dir else "file",
            "kind": node.kind,
        }
        if node.is_dir:
            entry["children"] = node.child_count()
        return entry

    def cmd_cd(self, p: Parsed) -> None:
        """Kafka's ``cd``, plus the shell habits ``cd -`` (back, printing where) and ``cd ~`` (``/``)."""
        target = p.args[0].text if p.args else "/"
        before = self.cwd
        if target == "-":
            self.cwd = self.previous_cwd
            self.previous_cwd = before
            self.write(visible(self.cwd) + "\n")
            return
        if target == "~" or target.startswith("~/"):
            target = "/" + target[2:]
        matches = self._glob(target)
        if not matches:
            self.error(f"cd: {target}: no such directory.{self._did_you_mean(target)}")
            return
        for comps, node in matches:  # Kafka visits every match: the last directory wins
            if node.is_dir:
                self.cwd = join(comps)
            else:
                self.error(f"cd: {target}: not a directory.")
        if self.cwd != before:
            self.previous_cwd = before

    def cmd_pwd(self, p: Parsed) -> None:
        if self._json(p):
            self._emit_json({"path": self.cwd})
        else:
            self.write(visible(self.cwd) + "\n")

    def cmd_cat(self, p: Parsed) -> None:
        """Kafka's ``cat``; outside ``/image``, a glob matching several files names each value's path
        (``path: value``, as ``etcdctl get --prefix``) and skips the directories it matched, naming
        each, without failing (under ``/image`` the output stays Kafka's, byte for byte)."""
        as_json = self._json(p)
        for arg in p.args:
            matches = self._glob(arg.text)
            if not matches:
                self.error(f"cat: {arg.text}: No such file or directory.{self._did_you_mean(arg.text)}")
                continue
            globbed = len(matches) > 1 or any(is_glob(c) for c in normalize(self.cwd, arg.text))
            kafka_form = bool(matches[0][0]) and matches[0][0][0] == "image"
            files = sum(1 for _c, n in matches if not n.is_dir)
            for comps, node in matches:
                if node.is_dir:
                    if globbed and files and not kafka_form:
                        self.note(f"cat: {join(comps)}: is a directory (skipped)")
                    else:
                        self.error(f"cat: {arg.text}: Is a directory")
                elif as_json:
                    self._emit_json(
                        {"path": join(comps), "kind": node.kind, "value": node.to_json(self.settings.redact)}
                    )
                elif files > 1 and not kafka_form:
                    text = self._leaf_text(node)
                    sep = "\n" if "\n" in text else " "
                    self.write(visible_output(join(comps)) + ":" + sep + text + "\n", raw=True)
                else:
                    self.write(self._leaf_text(node) + "\n", raw=True)

    def cmd_tree(self, p: Parsed) -> None:
        depth = p.opts.get("depth")
        if depth is not None and int(depth) < 0:  # type: ignore[call-overload]
            raise CommandError("tree: argument -L: DEPTH must be >= 0")
        max_depth = None if depth is None else int(depth)  # type: ignore[call-overload]
        as_json = self._json(p)
        for arg in self._effective(p.args):
            matches = self._glob(arg.text)
            if not matches:
                self.error(f"tree: {arg.text}: No such file or directory.{self._did_you_mean(arg.text)}")
                continue
            for comps, node in matches:
                if as_json:
                    self._emit_json(
                        {"path": join(comps), "tree": _tree_json(node, self.settings.redact, max_depth)}
                    )
                else:
                    self.write(render_tree(node, self.settings.redact, max_depth))

    def cmd_find(self, p: Parsed) -> None:
        as_json = self._json(p)
        name_glob = p.opts.get("name")
        type_filter = p.opts.get("type")
        name_match: Callable[[str], bool] | None = None
        if isinstance(name_glob, str):
            regex = glob_regex(name_glob)
            name_match = (lambda n: n == name_glob) if regex is None else (lambda n: bool(regex.match(n)))
        for arg in self._effective(p.args):
            matches = self._glob(arg.text)
            if not matches:
                self.error(f"find: {arg.text}: no such file or directory.{self._did_you_mean(arg.text)}")
                continue
            globbed = any(is_glob(c) for c in normalize(self.cwd, arg.text))
            for comps, node in matches:
                base = self._find_base(arg.text, comps) if globbed else arg.text
                batch: list[str] = []  # big trees print millions of lines: write in chunks
                chunk = 64  # ... but the first lines at once
                for path, n in iter_find(base, node):
                    if type_filter == "f" and n.is_dir or type_filter == "d" and not n.is_dir:
                        continue
                    if name_match is not None and not name_match(n.name):
                        continue
                    if as_json:
                        self._emit_json({"path": path, "type": "dir" if n.is_dir else "file", "kind": n.kind})
                        continue
                    batch.append(visible(path))
                    if len(batch) >= chunk:
                        self.write("\n".join(batch) + "\n")
                        batch.clear()
                        chunk = 4096
                if batch:
                    self.write("\n".join(batch) + "\n")

    def _find_base(self, typed: str, comps: list[str]) -> str:
        """The path printed for a glob match: absolute if typed absolute, else relative to cwd."""
        absolute = join(comps)
        if typed.startswith("/"):
            return absolute
        return posixpath.relpath(absolute, self.cwd)

    def cmd_history(self, p: Parsed) -> None:
        """Kafka's ``history [N]`` (the commands typed), or ``history PATH``: every record that
        changed a topic, partition, broker or config, oldest first, with old -> new values."""
        arg = p.args[0].literal if p.args else ""
        if arg and not is_int(arg) and (self.full_plan is not None or arg.startswith("/")):
            self._metadata_history(p)
            return
        count = len(self.history)
        if p.args:
            raw = p.args[0].literal
            try:
                count = parse_int(raw)
            except ValueError:
                raise CommandError(
                    f"history: argument numEntriesToShow: could not convert '{raw}' to "
                    f'Integer (For input string: "{raw}")'
                ) from None
        count = max(0, min(count, len(self.history)))
        start = len(self.history) - count
        for i in range(start, len(self.history)):
            if self._json(p):
                self._emit_json({"index": i, "line": self.history[i]})
            else:
                self.write(f"{i: 5d}  {self.history[i]}\n")

    def _metadata_history(self, p: Parsed) -> None:
        if self.full_plan is None:
            raise CommandError(
                "history: a PATH's history needs a file source (-d or -s); live mode has no past to read"
            )
        typed = p.args[0].text
        comps = normalize(self.cwd, typed)
        try:
            target = parse_target(comps)
        except MetashellError as e:
            raise CommandError(f"history: {typed}: {e}") from None
        redact = self.settings.redact

        def redact_value(resource_type: int, key: str, value: str | None) -> str | None:
            return redact_config(resource_type, key, value, redact)

        found = False
        for change in history(self.full_plan(None), target, redact_value):
            found = True
            if self._json(p):
                self._emit_json({"path": join(comps), **change.as_json()})
                continue
            when = iso_time(change.timestamp) or "-"
            where = " (snapshot)" if change.from_snapshot else ""
            self.write(
                f"{change.offset:>8}  {when}  epoch {change.epoch:<3} {change.record:<31} "
                f"{visible(change.summary)}{where}\n"
            )
        if not found:
            near = self._nearest_path(typed)  # a typo reads as "never changed": say what is near
            hint = f" (no such path now; did you mean {near}?)" if near else ""
            self.error(f"history: {typed}: no record in these files changed it{hint}")

    def cmd_diff(self, p: Parsed) -> None:
        """Differences between two points of the log (``--from``/``--to``, by default where the
        session is and the end) or with another source (``--with``): removed, added and changed
        values under PATH; status 1 when they differ."""
        other, start, end = p.opts.get("with"), p.opts.get("from"), p.opts.get("to")
        if other is None and start is None and end is None and self.point is None:
            raise CommandError(
                "diff: the session is at the end of the log: give --from POINT (an offset or time; "
                "or go there with at first), or --with DIR|FILE"
            )
        if other is None and self.travel is None:
            raise CommandError("diff: --from/--to need a file source (-d or -s)")
        if other is not None and self.open_other is None:
            raise CommandError("diff: --with is not available here")
        comps = normalize(self.cwd, p.args[0].text) if p.args else []
        redact = self.settings.redact
        across_time = other is None
        if start is not None and self.travel is not None:
            with self.travel.visit(str(start)) as root:  # one image moves: read its values now
                left, left_at = _values_at(root, comps, redact, across_time), _side(root)
        else:
            left, left_at = _values_at(self.root, comps, redact, across_time), _side(self.root)
        if other is not None:
            assert self.open_other is not None
            other_root = self.open_other(str(other))
            right, right_at = _values_at(other_root, comps, redact, across_time), _side(other_root)
            right_name = str(other)
        else:
            assert self.travel is not None
            with self.travel.visit(None if end is None else str(end)) as root:
                right, right_at = _values_at(root, comps, redact, across_time), _side(root)
            right_name = f"@{end}" if end else "end"
        left_name = f"@{start}" if start is not None else (self.point or "end")  # self.point: "@30"
        if other is not None and left_at[0] and right_at[0] and left_at[0] != right_at[0]:
            self.note(f"diff: warning: two clusters: {left_at[0]} and {right_at[0]}")
        differ = False
        for kind, path, old, new in _diff_values(left, right):
            if not differ and not self._json(p):
                self.write(
                    f"--- {visible(left_name)} ({left_at[1]})\n+++ {visible(right_name)} ({right_at[1]})\n"
                )
            differ = True
            if self._json(p):
                self._emit_json(
                    {"path": path, "change": kind, "old": _as_json(path, old), "new": _as_json(path, new)}
                )
            elif kind == "changed":
                self.write(f"-{visible(path)}: {visible(str(old))}\n+{visible(path)}: {visible(str(new))}\n")
            else:
                sign, value = ("-", old) if kind == "removed" else ("+", new)
                self.write(f"{sign}{visible(path)}: {visible(str(value))}\n")
        if differ:
            self._status = 1  # diff's convention: 1 when the two differ

    def cmd_watch(self, p: Parsed) -> None:
        """Print each change under PATH as it is committed (live) or appended (a directory a running
        node writes to), until Ctrl-C or ``--count`` changes.  An object created or deleted is one
        line, not one per field (fourteen lines of ``None -> ...`` for a new partition)."""
        if self.refresh is None:
            raise CommandError("watch: needs a live source (-q) or a metadata directory (-d)")
        comps = normalize(self.cwd, p.args[0].text) if p.args else []
        count = p.opts.get("count")
        pause = _seconds_option(p, "interval", default=1.0)
        redact = self.settings.redact
        before = _values_at(self.root, comps, redact)
        self.note(
            f"watching {join(comps)} from offset {self.root.ctx.image.provenance.offset} (Ctrl-C stops)"
        )
        seen = 0
        while True:
            time.sleep(pause)
            new_root = self.refresh()
            if new_root is not None:
                self._root = new_root
            after = _values_at(self.root, comps, redact)
            prov = self.root.ctx.image.provenance
            when = iso_time(prov.timestamp) or "-"
            for kind, path, old, new in _object_changes(before, after, len(comps)):
                if self._json(p):
                    self._emit_json(
                        {
                            "offset": prov.offset,
                            "time": when,
                            "path": path,
                            "change": kind,
                            "old": _as_json(path, old),
                            "new": _as_json(path, new),
                        }
                    )
                elif kind in ("created", "deleted"):
                    self.write(f"{prov.offset:>8}  {when}  {visible(path)}: {kind}\n")
                else:
                    self.write(
                        f"{prov.offset:>8}  {when}  {visible(path)}: {visible(str(old))} -> "
                        f"{visible(str(new))}\n"
                    )
                self.out.flush()
                seen += 1
                if isinstance(count, int) and seen >= count:
                    return
            before = after

    def cmd_log(self, p: Parsed) -> None:
        """The records themselves, with a one-line summary each (``--json``: kafka-dump-log's form)."""
        if self.full_plan is None:
            raise CommandError("log: needs a file source (-d or -s)")
        first, last = (_offset_option(p, "from"), _offset_option(p, "to"))
        raw_types = p.opts.get("type")
        try:
            kinds = (
                parse_type_filter(raw_types) if isinstance(raw_types, str) else TypeFilter(None, frozenset())
            )
        except ValueError as e:
            raise CommandError(str(e)) from None
        types, exclude = kinds.include, kinds.exclude
        if first is not None and self.travel is not None:
            with self.travel.log_from(first) as fast:  # the journaled image at first - 1, no snapshot read
                if fast is not None:
                    plan, base = fast
                    self._print_log(
                        p,
                        iter_log(
                            plan,
                            first=first,
                            last=last,
                            types=types,
                            exclude=exclude,
                            base=base,
                            payloads=self._json(p),
                            salvage=self.salvage,
                        ),
                    )
                    return
        self._print_log(
            p,
            iter_log(
                self.full_plan(first),
                first=first,
                last=last,
                types=types,
                exclude=exclude,
                payloads=self._json(p),
                salvage=self.salvage,
            ),
        )

    def _print_log(self, p: Parsed, entries: Iterator[LogEntry]) -> None:
        batch: list[str] = []
        for entry in entries:
            if self._json(p):
                self._emit_json(_redacted_entry(entry.as_json(), self.settings.redact, entry.record))
                continue
            mark = {"open": " [txn]", "aborted": " [txn aborted]"}.get(entry.transaction or "", "")
            batch.append(
                f"{entry.offset:>8}  {iso_time(entry.timestamp) or '-'}  epoch {entry.epoch:<3} "
                f"{entry.record:<31} {visible(entry.summary)}{mark}"
            )
            if len(batch) >= 256:
                self.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            self.write("\n".join(batch) + "\n")

    def cmd_help(self, p: Parsed) -> None:
        if p.args:
            self.cmd_man(p)
            return
        self.write(spec.help_text() + "\n")

    def cmd_man(self, p: Parsed) -> None:
        name = p.args[0].literal
        if name not in spec.SPECS:
            self.error(f"man: unknown command {name}. Type help to get a list of commands.")
            return
        self.write(spec.man_text(name) + "\n")

    def cmd_exit(self, p: Parsed) -> None:
        raise ExitShell(0)

    cmd_quit = cmd_exit

    def cmd_at(self, p: Parsed) -> None:
        """Move the whole session to the image after an offset or time (``at`` alone: the end)."""
        if self.travel is None:
            raise CommandError(
                "at: time travel needs a file source (-d or -s); live mode follows the end of the log"
            )
        root, self.point = self.travel.move(p.args[0].literal if p.args else None)
        self._root = root
        prov = root.ctx.image.provenance
        when = "" if prov.timestamp < 0 else f", appended {iso_time(prov.timestamp)}"
        where = "back at the end of the log" if self.point is None else "now at"
        self.write(f"{where}: offset {prov.offset} (epoch {prov.epoch}{when})\n")
        if not self._glob(self.cwd):
            self.note(f"at: {self.cwd} did not exist then: back to /")
            self.cwd = "/"

    def cmd_clear(self, p: Parsed) -> None:
        """Clear the screen (only when output is a terminal: never a control sequence into a pipe)."""
        isatty = getattr(self.out, "isatty", None)
        if isatty is not None and isatty():
            self.write("\x1b[H\x1b[2J\x1b[3J", raw=True)

    def cmd_grep(self, p: Parsed) -> None:
        pattern, *paths = [w.text for w in p.args]
        try:
            regex = re.compile(pattern, re.IGNORECASE if p.opts["ignore_case"] else 0)
        except re.error as e:
            raise CommandError(f"grep: {pattern}: not a valid regular expression ({e})") from None
        recursive = bool(p.opts["recursive"])
        found = False
        for arg in paths or ["."]:
            matches = self._glob(arg)
            if not matches:
                self.error(f"grep: {arg}: no such file or directory.{self._did_you_mean(arg)}")
                continue
            for comps, node in matches:
                for path, leaf in self._grep_leaves(comps, node, recursive):
                    found |= self._grep_one(path, leaf, regex, p)
        if not found and self._status == 0:
            self._status = 1  # grep's convention: nothing matched

    def _grep_leaves(self, comps: list[str], node: Node, recursive: bool) -> Iterator[tuple[str, Node]]:
        if not node.is_dir:
            yield join(comps), node
            return
        skip = {"image", "local"} if not comps else set()  # from /: Kafka's copy and the build info
        base = join(comps)
        for path, n in iter_find(base, node):
            if n.is_dir:
                continue
            rel = path[len(base) :].lstrip("/").split("/")
            if rel[0] in skip or (not recursive and len(rel) > 1):
                continue
            yield path, n

    def _grep_one(self, path: str, leaf: Node, regex: re.Pattern[str], p: Parsed) -> bool:
        text = leaf.text(self.settings.redact)
        lines = [ln for ln in text.split("\n") if regex.search(ln)]
        if not lines and regex.search(leaf.name):
            lines = text.split("\n")[:1]
        if not lines:
            return False
        if self._json(p):
            self._emit_json({"path": path, "kind": leaf.kind, "lines": lines})
        elif p.opts["files_only"]:
            self.write(visible(path) + "\n")
        else:
            self.write("".join(f"{visible(path)}: {visible_output(ln.strip())}\n" for ln in lines))
        return True

    # -- answers -----------------------------------------------------------------------------
    def _image(self) -> MetadataImage:
        image: MetadataImage = self.root.ctx.image
        return image

    def cmd_health(self, p: Parsed) -> None:
        report = check_health(self._image())
        if self._json(p):
            self._emit_json(report.as_json())
        else:
            for line in answers.health_lines(report, show_all=bool(p.opts["all"])):
                self.write(line + "\n")
        if p.opts["exit_code"] and not report.healthy:
            self._status = 1

    def cmd_describe(self, p: Parsed) -> None:
        words = [w.literal for w in p.args]
        if words and words[0] == "broker":
            self._describe_brokers(p, words[1:])
            return
        if words and words[0] in ("acl", "acls"):
            if len(words) > 1:
                raise CommandError(
                    f"describe acl: unexpected argument '{words[1]}' (use --principal, "
                    f"--resource, --operation, --host)"
                )
            self._describe_acls(p)
            return
        filters = answers.TopicFilters(
            **{
                k: bool(p.opts[k])
                for k in ("under_replicated", "unavailable", "under_min_isr", "at_min_isr", "with_overrides")
            }
        )
        image = self._image()
        by_name = image.topics.by_name
        names = _matching(sorted(by_name), [w.text for w in p.args], "topic", self)
        topics = [by_name[n] for n in names]
        if self._json(p):
            for t in topics:
                self._emit_json(self._topic_json(image, t, filters))
            return
        for line in answers.describe_topics(image, topics, filters, self.settings.redact):
            self.write(line + "\n")

    def _topic_json(
        self, image: MetadataImage, topic: Topic, filters: answers.TopicFilters
    ) -> dict[str, object]:
        min_isr, origin = effective_min_isr(image, topic.name)
        return {
            "topic": topic.name,
            "topicId": uuid_to_str(topic.id),
            "partitionCount": len(topic.partitions),
            "configs": dict(answers.topic_overrides(image, topic.name, self.settings.redact)),
            "minInsyncReplicas": min_isr,
            "minInsyncReplicasFrom": origin,
            "partitions": [
                PartitionRef(topic.name, pid, p).as_json()
                for pid, p in answers.shown_partitions(image, topic, filters)
            ],
        }

    def _describe_acls(self, p: Parsed) -> None:
        query = answers.acl_query(p.opts)
        decision = decide(self._image(), query)
        if self._json(p):
            self._emit_json(
                {
                    "query": {k: v for k, v in vars(query).items() if v is not None},
                    "bindings": [acl_json(a) for a in decision.bindings],
                    "decision": decision.result,
                    "reason": decision.reason or None,
                    "decidedBy": [acl_json(a)["id"] for a in decision.deciding],
                }
            )
            return
        for line in answers.acl_lines(decision):
            self.write(line + "\n")

    def _describe_brokers(self, p: Parsed, patterns: list[str]) -> None:
        brokers = self._image().cluster.brokers
        ids = _matching([str(b) for b in sorted(brokers)], patterns, "broker", self)
        for bid in ids:
            info = answers.describe_broker(self._image(), int(bid))
            if self._json(p):
                self._emit_json(info)
            else:
                for line in answers.broker_lines(info):
                    self.write(line + "\n")


def _matching(names: list[str], patterns: list[str], what: str, shell: Shell) -> list[str]:
    """``names`` matched by ``patterns`` (globs or literal names; none = all), in order; a pattern
    that matches nothing is an error (Kafka: "Topic 'x' does not exist as expected")."""
    if not patterns:
        return names
    chosen: set[str] = set()
    for pattern in patterns:
        rx = glob_regex(pattern)
        hits = (
            [n for n in names if rx.match(n)] if rx is not None else ([pattern] if pattern in names else [])
        )
        if not hits:
            near = difflib.get_close_matches(pattern, names, n=1, cutoff=0.7) if rx is None else []
            hint = f" (did you mean {near[0]}?)" if near else ""
            shell.error(f"describe: {what} '{pattern}' does not exist{hint}")
        chosen.update(hits)
    return [n for n in names if n in chosen]


_SUGGEST_MAX_NAMES = 10_000


_BOOKKEEPING = ("/quorum", "/provenance", "/local")
"""What says how a view was assembled (the quorum as the files on this node tell it, what was read),
not what the metadata holds: across time, every point differs there, and it buried the change."""


def _values_at(root: Node, comps: list[str], redact: bool, across_time: bool = False) -> dict[str, str]:
    node = resolve(root, comps)
    values = {} if node is None else dict(tree_values(node, comps, redact))
    if across_time:
        values = {
            path: v
            for path, v in values.items()
            if not path.startswith(_BOOKKEEPING) and not path.endswith(" source")
        }
    return values


def _side(root: Node) -> tuple[str | None, str]:
    """(cluster id, "offset N, TIME") of the image ``root`` shows: what a diff header names."""
    image = root.ctx.image
    prov = image.provenance
    when = iso_time(prov.timestamp) or "no time"
    return image.quorum.cluster_id, f"offset {prov.offset}, {when}"


def _as_json(path: str, text: str | None) -> object:
    """A value for ``diff --json`` and ``watch --json``: a record's field (``PATH field``, whose
    text is JSON) as the JSON value itself; a leaf (a config value: a string in Kafka, whatever it
    looks like) as its text."""
    if text is None or " " not in path:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


_NUMBER = re.compile(r"(\d+)")


def _natural(path: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key: numbers in a path by value (partition 2 before 10), the rest as text."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in _NUMBER.split(path) if part)


def _object_changes(
    left: dict[str, str], right: dict[str, str], depth: int = 0
) -> Iterator[tuple[str, str, str | None, str | None]]:
    """:func:`_diff_values`, with an object that appears or disappears whole with several values
    (a topic, a partition, a broker: a directory the other side has no value in, at ``depth``
    components or deeper: the watched path) given as one ``created`` or ``deleted`` change of
    its path.  A single new value (a config set) stays itself: it says more."""
    left_dirs, right_dirs = _directories(left), _directories(right)
    changes = list(_diff_values(left, right))
    groups: dict[str, int] = {}
    wholes: list[str | None] = []
    for kind, path, _old, _new in changes:
        whole = None
        if kind != "changed":
            whole = _first_unknown(path, left_dirs if kind == "added" else right_dirs, depth)
            if whole == path:
                whole = None
        wholes.append(whole)
        if whole is not None:
            groups[whole] = groups.get(whole, 0) + 1
    said: set[str] = set()
    for (kind, path, old, new), whole in zip(changes, wholes, strict=True):
        if whole is not None and groups[whole] > 1:
            if whole not in said:
                said.add(whole)
                yield ("created" if kind == "added" else "deleted"), whole, None, None
            continue
        yield kind, path, old, new


def _prefixes(path: str) -> list[str]:
    """The paths a value path (``/a/b/c`` or ``/a/b field``) lies in or names, outermost first:
    ``/a``, ``/a/b``, ``/a/b/c``."""
    parts = path.split(" ", 1)[0].split("/")
    return ["/".join(parts[:i]) for i in range(2, len(parts) + 1)]


def _directories(values: dict[str, str]) -> set[str]:
    """Every path the value paths lie in or name."""
    return {prefix for key in values for prefix in _prefixes(key)}


def _first_unknown(path: str, known: set[str], depth: int = 0) -> str | None:
    """The outermost path ``path`` lies in or names, ``depth`` components deep or deeper, that
    ``known`` lacks (None: all of them are known)."""
    return next((p for p in _prefixes(path)[max(0, depth - 1) :] if p not in known), None)


def _diff_values(
    left: dict[str, str], right: dict[str, str]
) -> Iterator[tuple[str, str, str | None, str | None]]:
    """(kind, path, old, new) in path order (numbers by value): removed, added or changed."""
    for path in sorted(left.keys() | right.keys(), key=_natural):
        old, new = left.get(path), right.get(path)
        if old == new:
            continue
        yield ("removed" if new is None else "added" if old is None else "changed"), path, old, new


def _seconds_option(p: Parsed, name: str, default: float) -> float:
    raw = p.opts.get(name)
    if raw is None:
        return default
    try:
        return parse_seconds(str(raw))
    except ValueError:
        raise CommandError(
            f"{p.spec.name}: --{name} {raw}: not a positive number of seconds (at most a year)"
        ) from None


def _offset_option(p: Parsed, name: str) -> int | None:
    raw = p.opts.get(name)
    if raw is None:
        return None
    try:
        return parse_int(str(raw))
    except ValueError:
        raise CommandError(f"log: --{name} {raw}: not an offset") from None


def _redacted_entry(doc: dict[str, object], redact: bool, record: str) -> dict[str, object]:
    """``log --json``: a record's secrets (a sensitive config value, a SCRAM credential's salt and
    keys) are redacted like everywhere else."""
    data = doc.get("data")
    if redact and isinstance(data, dict):
        doc = {**doc, "data": redact_record_json(record, data)}
    return doc


_BARE_KINDS = frozenset({"kafka", "scalar", "config", "quota", "feature"})


def _tree_json(node: Node, redact: bool, max_depth: int | None, level: int = 0) -> object:
    """Nested JSON of a subtree: a directory is an object of its children, a leaf its ``to_json``;
    a directory below ``-L`` is ``null``."""
    if not node.is_dir:
        return node.to_json(redact)
    if max_depth is not None and level >= max_depth:
        return None
    out: dict[str, object] = {}
    for name in node.child_names():
        child = node.child(name)
        if child is not None:
            out[name] = _tree_json(child, redact, max_depth, level + 1)
    return out


def _long_rows(entries: list[tuple[str, Node]], redact: bool) -> list[str]:
    """``ls -l`` rows: ``<d|-> <children> <kind> <name>  <what it says>`` with aligned columns.

    The last column is what an operator scans a listing for (``tree.summary``): a partition's
    leader, ISR and replicas, a broker's state and first listener, an ACL in one line, a feature's
    level, a scalar's value; a directory shows how many children it has.
    """
    rows: list[tuple[str, str, str, str, str]] = []
    for name, node in entries:
        summary = visible(summarize(node, redact))
        rows.append(
            (
                "d" if node.is_dir else "-",
                str(node.child_count()) if node.is_dir else "",
                node.kind,
                visible(name),
                summary,
            )
        )
    if not rows:
        return []
    size_w = max(len(r[1]) for r in rows)
    kind_w = max(len(r[2]) for r in rows)
    name_w = max(len(r[3]) for r in rows)
    lines = []
    for t, size, kind, name, summary in rows:
        line = f"{t} {size:>{size_w}} {kind:<{kind_w}} {name:<{name_w}}  {summary}"
        lines.append(line.rstrip(" "))
    return lines
