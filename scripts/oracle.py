#!/usr/bin/env python3
"""Run Kafka's own metadata tools (the oracle) on one metadata file and return their stdout.

metashell's ``/image`` tree and its record dump must match what Apache Kafka prints, so tests call:

* :func:`java_shell` - ``org.apache.kafka.shell.MetadataShell --snapshot FILE <command words>``
  (the tool reads exactly ONE file: a ``.checkpoint`` snapshot or a ``.log`` segment);
* :func:`java_shell_caught_up` - the same shell classes, waiting until the whole file is applied
  (Kafka's one-shot shell hangs on files whose image its loader never publishes);
* :func:`java_shell_settled` - the real shell's answer past its timing bugs, falling back to the
  caught-up stand-in where the real shell hangs or prints before its loader caught up;
* :func:`dump_log` - ``kafka-dump-log --cluster-metadata-decoder --files FILE`` (that flag implies
  ``--print-data-log`` and deep iteration, so every record's decoded payload is printed).

Safety: the input is never touched.  MetadataShell locks ``<file>/../../.lock`` when it exists, so
each run works on a private COPY laid out as ``tmp/<logdir>/__cluster_metadata-0/<file name>``.

Speed: a JVM start costs about a second, so results are cached on disk under the Kafka cache
(``<cache>/oracle/``) keyed by (Kafka version, sha256 of the file, tool, arguments).  Paths in the
output are stored as a placeholder and replaced by the caller's path on the way out.

Versions: pick the Kafka version that wrote the file (a 4.x shell rejects metadata.version < 3.3;
an older shell drops the features image of a newer one and reports a fault, which raises here).
For "4.4.0" the shell is kafka-shell 4.3.1 recompiled against the 4.4.0 jars (4.4.0's kafka-shell
is not on Maven Central; see kafka_harness); which jars ran is in each cached answer (``jars``) and
in every error, from ``KafkaDist.describe_jars()``.  Syntax checked on
3.9.2 and 4.4.0: ``MetadataShell --snapshot/-s FILE [command ...]`` (``--snapshot`` is optional in
3.9, required in 4.x); ``DumpLogSegments --cluster-metadata-decoder --files FILE`` (the decoder
flag implies ``--print-data-log`` and ``--deep-iteration``).  3.9.2 prints control records as
``controlType: LEADER_CHANGE(2)``, 4.x as ``LeaderChange: {json}``.

CLI::

    python scripts/oracle.py shell FILE ls /image
    python scripts/oracle.py dump FILE
    python scripts/oracle.py --version 3.9.2 shell FILE cat /image/features/metadata.version
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.resolve import (  # after the sys.path tweak so `import oracle` works from anywhere
    lock_digest,
    sha256_of,
)
from kafka_harness import (
    DEFAULT_VERSION,
    HarnessError,
    KafkaDist,
    cache_root,
)

_PLACEHOLDER = "\x00FILE\x00"
#: stderr lines that mean the tool's output is incomplete even when it exits 0 (the metadata shell
#: logs a "shell fault" and carries on with a partial image, or hangs in one-shot mode).
_FAULT_MARKERS = ("Encountered shell fault", "Exception in thread", "UnwritableMetadataException")


#: How long :func:`java_shell_settled` gives Kafka's one-shot metadata shell before its run counts as
#: hung (it is then asked again, and after three the caught-up stand-in answers).  It answers on the
#: largest corpus file (2.6 MB) in about a second; a hung run waited 120 s, then 60, three times in a
#: clean-clone run.  Only there: a bare :func:`java_shell` has no stand-in to fall back on and keeps
#: 120 s (with 30 s, a fresh clone failed test_older_shells_lay_out_image_differently, the first run
#: of 3.3's and 3.8's shells; the cause is not yet read).
SHELL_HANG_SECONDS = 30.0


class OracleError(HarnessError):
    """The Kafka tool failed or reported a fault: its output must not be used as the truth."""


def _check_file(path: Path) -> Path:
    path = Path(path).resolve()
    if not path.is_file():
        raise OracleError(f"{path}: not a file (the oracle tools take one .log or .checkpoint file)")
    return path


def _cache_file(version: str, digest: str, tool: str, args: list[str]) -> Path:
    """Answers are kept per (version, its lock, file, tool, args): new jars mean new answers."""
    key = hashlib.sha256(json.dumps([version, lock_digest(version), digest, tool, args]).encode()).hexdigest()
    return cache_root() / "oracle" / version / digest[:2] / f"{digest[:16]}-{key[:24]}.json"


def run_tool(
    path: Path | str,
    tool: str,
    args: list[str],
    *,
    version: str = DEFAULT_VERSION,
    timeout: float = 120,
    use_cache: bool = True,
    strict: bool = True,
) -> str:
    """Run Kafka ``tool`` with ``args`` where the string ``{FILE}`` stands for a private copy of
    ``path``; return stdout with the copy's path replaced by ``path`` as given."""
    src = _check_file(Path(path))
    digest = sha256_of(src)
    dist = KafkaDist(version)
    program = tool == CAUGHT_UP
    cache = _cache_file(
        version, digest, f"{tool}:{sha256_of(CAUGHT_UP_SOURCE)[:16]}" if program else tool, args
    )
    if use_cache and cache.exists():
        out = json.loads(cache.read_text())["stdout"]
        return out.replace(_PLACEHOLDER, str(path))
    dist.ensure()
    with tempfile.TemporaryDirectory(prefix="metashell-oracle-") as tmp:
        copy = _private_copy(src, Path(tmp))
        real_args = [a.replace("{FILE}", str(copy)) for a in args]
        if program:
            proc = dist.run_program(
                CAUGHT_UP_SOURCE, *real_args, beside=SHELL, timeout=timeout, cwd=Path(tmp)
            )
        else:
            proc = dist.run(tool, *real_args, timeout=timeout, cwd=Path(tmp))
    stdout = proc.stdout.replace(str(copy), _PLACEHOLDER)
    fault = next((ln for ln in proc.stderr.splitlines() if any(m in ln for m in _FAULT_MARKERS)), None)
    tool_dist = dist.dist_for(dist.tool_class(SHELL if program else tool))
    tool_version, jars = tool_dist.version, tool_dist.describe_jars()
    # The program exits 1 where Kafka's shell does (a command that throws); anything else is a crash.
    if strict and (proc.returncode != 0 or fault) or program and proc.returncode not in (0, 1):
        detail = [ln for ln in proc.stderr.splitlines() if "ERROR" in ln or "Exception" in ln][:3]
        raise OracleError(
            f"{tool} ({jars}) on {path} "
            f"{'exited ' + str(proc.returncode) if proc.returncode else 'reported a fault'}: "
            + (" | ".join(detail) or proc.stderr.strip()[-500:] or proc.stdout.strip()[-500:])
        )
    # The program's output is deterministic (faults included); the shell's is not (see java_shell).
    cacheable = program or (not fault and not _looks_unpublished(tool, stdout))
    if use_cache and (proc.returncode == 0 or program) and cacheable:
        _keep(cache, version, tool_version, jars, tool, args, digest, stdout)
    return stdout.replace(_PLACEHOLDER, str(path))


def _private_copy(src: Path, root: Path) -> Path:
    """``src`` copied under ``root`` as ``<log dir>/__cluster_metadata-0/<name>``: the tools read the
    partition from the directory's name, and none of them may write beside the original."""
    logdir = src.parent.parent.name if src.parent.name == "__cluster_metadata-0" else "metadata"
    part = root / (logdir or "metadata") / "__cluster_metadata-0"
    part.mkdir(parents=True)
    copy = part / src.name
    shutil.copyfile(src, copy)
    return copy


def _keep(
    cache: Path,
    version: str,
    tool_version: str,
    jars: str,
    tool: str,
    args: list[str],
    digest: str,
    stdout: str,
) -> None:
    """A tool's answer on one file, kept for :func:`run_tool` (written whole, then renamed)."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmpfile = cache.with_suffix(f".{os.getpid()}.tmp")
    tmpfile.write_text(
        json.dumps(
            {
                "version": version,
                "tool_version": tool_version,
                "jars": jars,
                "tool": tool,
                "args": args,
                "sha256": digest,
                "stdout": stdout,
            }
        )
    )
    os.replace(tmpfile, cache)


_UNPUBLISHED = "offset -1, epoch -1"
SHELL = "kafka-metadata-shell"
CAUGHT_UP = "caught-up-metadata-shell"
CAUGHT_UP_SOURCE = Path(__file__).resolve().parent / "java" / "CaughtUpMetadataShell.java"


def _looks_unpublished(tool: str, stdout: str) -> bool:
    """Kafka's one-shot shell can print before its loader has published the image (an empty image,
    provenance ``offset -1``).  Such output is retried by :func:`java_shell` and never cached."""
    return tool == "kafka-metadata-shell" and _UNPUBLISHED in stdout


def java_shell(
    path: Path | str,
    *command_words: str,
    version: str = DEFAULT_VERSION,
    timeout: float = 120,
    use_cache: bool = True,
    strict: bool = True,
) -> str:
    """stdout of Kafka's metadata shell: ``MetadataShell --snapshot FILE <command words>``.

    Example: ``java_shell(f, "ls", "/image")``.  Several words form one command (the shell joins
    them), e.g. ``java_shell(f, "cat", "/image/features/metadata.version")``.  A run that hangs (Kafka's
    loader may learn the high watermark too late, see :func:`java_shell_caught_up`) is retried twice.
    """
    if not command_words:
        raise OracleError("java_shell needs a command (interactive mode is not supported)")
    args = ["--snapshot", "{FILE}", *command_words]
    for attempt in range(3):  # its one-shot mode hangs at random on small files: ask again
        try:
            out = run_tool(
                path,
                "kafka-metadata-shell",
                args,
                version=version,
                timeout=timeout,
                use_cache=use_cache and attempt == 0,
                strict=strict,
            )
            break
        except OracleError:
            raise
        except HarnessError as exc:
            if "timed out" not in str(exc) or attempt == 2:
                raise
    for _ in range(2):  # an image that was not published yet: ask again (a truly empty one stays so)
        if not _looks_unpublished("kafka-metadata-shell", out):
            break
        out = run_tool(
            path,
            "kafka-metadata-shell",
            args,
            version=version,
            timeout=timeout,
            use_cache=False,
            strict=strict,
        )
    return out


def java_shell_caught_up(
    path: Path | str,
    *command_words: str,
    version: str = DEFAULT_VERSION,
    timeout: float = 120,
    use_cache: bool = True,
) -> tuple[str, int]:
    """Kafka's metadata shell once its loader has applied the WHOLE file: ``(stdout, lastAppliedOffset)``.

    ``scripts/java/CaughtUpMetadataShell.java`` runs the shell's own classes (loader, file reader,
    publisher, command handlers) exactly as ``MetadataShell`` does in one-shot mode, except for the
    wait: Kafka's ``waitUntilCaughtUp`` spins until ``lastAppliedOffset > 0``, so on a file whose
    image the loader never publishes (no metadata.version, every delta failing) Kafka's shell hangs
    forever.  When the returned offset is ``<= 0`` that is what :func:`java_shell` would do, and this
    output is what its state holds; otherwise :func:`java_shell` prints the same (barring its race).
    Faults Kafka logs are part of its behaviour here and do not raise; a crash does.
    """
    if not command_words:
        raise OracleError("java_shell_caught_up needs a command")
    return _run_stand_in(path, list(command_words), version, timeout, use_cache)


def _run_stand_in(
    path: Path | str, words: list[str], version: str, timeout: float, use_cache: bool
) -> tuple[str, int]:
    """The stand-in's stdout after its first line, and the lastAppliedOffset that line gives."""
    out = run_tool(
        path,
        CAUGHT_UP,
        ["{FILE}", *words],
        version=version,
        timeout=timeout,
        use_cache=use_cache,
        strict=False,
    )
    first, _, rest = out.partition("\n")
    if not first.startswith("lastAppliedOffset="):
        raise OracleError(f"{CAUGHT_UP} on {path}: unexpected first line {first[:200]!r}")
    return rest, int(first.split("=", 1)[1])


_EACH_SEPARATOR = "@@metashell-oracle-next-command@@"


def java_shell_caught_up_each(
    path: Path | str,
    commands: list[list[str]],
    *,
    version: str = DEFAULT_VERSION,
    timeout: float = 120,
    use_cache: bool = True,
) -> tuple[list[str], int]:
    """:func:`java_shell_caught_up` for several commands in one JVM, on the one loaded state:
    ``([stdout of each command], lastAppliedOffset)``.  Each answer is what the stand-in prints for
    that command alone (a JVM start and a load cost about two seconds; a small file is asked seven)."""
    if not commands or not all(commands):
        raise OracleError("java_shell_caught_up_each needs commands")
    words: list[str] = []
    for command in commands:
        if _EACH_SEPARATOR in command:
            raise OracleError(f"a command word is the separator {_EACH_SEPARATOR}")
        words += [*command, _EACH_SEPARATOR]
    rest, applied = _run_stand_in(path, ["--each", _EACH_SEPARATOR, *words[:-1]], version, timeout, use_cache)
    pieces = rest.split(f"\n{_EACH_SEPARATOR} ")
    if len(pieces) != len(commands) + 1:
        raise OracleError(f"{CAUGHT_UP} on {path}: {len(pieces) - 1} answers to {len(commands)} commands")
    # pieces: answer 1, then "<status>\n<answer k+1>" ..., the last "<status>\n"
    answers = [pieces[0]] + [p.partition("\n")[2] for p in pieces[1:-1]]
    return answers, applied


def java_shell_settled(
    path: Path | str,
    *command_words: str,
    version: str = DEFAULT_VERSION,
    empty: str | None = None,
    timeout: float = SHELL_HANG_SECONDS,
    caught_up: tuple[str, int] | None = None,
) -> str:
    """What Kafka's shell prints for the command once its loader has the whole file.

    Kafka's one-shot shell has two timing bugs (:func:`java_shell_caught_up`): it hangs for good when
    its loader never applies an offset > 0, at random when its loader learns the high watermark too
    late, and it may run the command before its loader caught up (the empty image).  So: the caught-up
    stand-in first; if it says Kafka's shell hangs for good, its answer; otherwise the real shell,
    asked again without the cache while it differs from the stand-in, and the stand-in's answer when
    the real shell hung or kept printing the empty image (``empty``: the command's output on an
    empty image, when it shows no provenance).  A real shell that settles on anything else is
    returned as it is, so that a difference between the two shows.  ``caught_up``: the stand-in's
    answer and offset, when already asked (:func:`java_shell_caught_up_each`).
    """
    answer, applied = caught_up or java_shell_caught_up(path, *command_words, version=version)
    if applied <= 0:
        return answer
    try:
        out = java_shell(path, *command_words, version=version, timeout=timeout, strict=False)
        for _ in range(3):
            if out == answer:
                break
            time.sleep(1)
            out = java_shell(
                path, *command_words, version=version, timeout=timeout, strict=False, use_cache=False
            )
    except HarnessError:
        return answer
    if out != answer and (out == empty or _looks_unpublished(SHELL, out)):
        return answer
    return out


DUMP_LOG = "kafka-dump-log"


def _dump_log_args(extra_args: tuple[str, ...] = ()) -> list[str]:
    """``kafka-dump-log``'s arguments, ``{FILE}`` for the file (or files, comma-separated)."""
    return ["--cluster-metadata-decoder", *extra_args, "--files", "{FILE}"]


def dump_log(
    path: Path | str,
    version: str = DEFAULT_VERSION,
    *,
    timeout: float = 300,
    use_cache: bool = True,
    strict: bool = True,
    extra_args: tuple[str, ...] = (),
) -> str:
    """stdout of ``kafka-dump-log --cluster-metadata-decoder --files FILE`` (every record decoded)."""
    return run_tool(
        path,
        DUMP_LOG,
        _dump_log_args(extra_args),
        version=version,
        timeout=timeout,
        use_cache=use_cache,
        strict=strict,
    )


def dump_logs(paths: list[Path], version: str = DEFAULT_VERSION, *, timeout: float = 300) -> None:
    """Have :func:`dump_log`'s answer for each of ``paths`` kept, from one ``kafka-dump-log`` run
    over them all (``--files a,b,...``: a JVM start costs about as much as dumping a small file,
    and a test that dumps a fixture's every file paid one per file).  Each file's part of the
    output, from its ``Dumping`` line to the next, is what a run on that file alone prints.  A run
    that fails or reports a fault keeps nothing: :func:`dump_log` then asks file by file."""
    args = _dump_log_args()
    todo = []  # (the file, its digest, where its answer is kept) for each not kept yet
    for path in paths:
        src = _check_file(Path(path))
        digest = sha256_of(src)
        cache = _cache_file(version, digest, DUMP_LOG, args)
        if not cache.exists():
            todo.append((src, digest, cache))
    if len(todo) < 2:
        return
    dist = KafkaDist(version)
    dist.ensure()
    with tempfile.TemporaryDirectory(prefix="metashell-oracle-") as tmp:
        copies = [_private_copy(src, Path(tmp) / str(i)) for i, (src, _, _) in enumerate(todo)]
        files = ",".join(map(str, copies))
        proc = dist.run(DUMP_LOG, *(a.replace("{FILE}", files) for a in args), timeout=timeout, cwd=Path(tmp))
    if proc.returncode != 0 or any(m in proc.stderr for m in _FAULT_MARKERS):
        return
    starts = [proc.stdout.find(f"Dumping {copy}\n") for copy in copies]
    if -1 in starts or starts != sorted(starts) or starts[0] != 0:
        return
    tool_dist = dist.dist_for(dist.tool_class(DUMP_LOG))
    ends = [*starts[1:], len(proc.stdout)]
    for (_, digest, cache), copy, start, end in zip(todo, copies, starts, ends, strict=True):
        stdout = proc.stdout[start:end].replace(str(copy), _PLACEHOLDER)
        _keep(cache, version, tool_dist.version, tool_dist.describe_jars(), DUMP_LOG, args, digest, stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run Kafka's metadata shell / log dumper on one file.")
    parser.add_argument(
        "--version", default=DEFAULT_VERSION, help=f"Kafka version (default {DEFAULT_VERSION})"
    )
    parser.add_argument("--no-cache", action="store_true", help="always run the JVM")
    parser.add_argument(
        "--lenient", action="store_true", help="print output even if the tool reported a fault"
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shell", help="MetadataShell --snapshot FILE <command...>")
    s.add_argument("file")
    s.add_argument("words", nargs=argparse.REMAINDER, help="shell command, e.g. ls /image")
    c = sub.add_parser(
        "caught-up",
        help="the shell's classes after the whole file is applied "
        "(prints lastAppliedOffset=N first; N <= 0: Kafka's own shell hangs)",
    )
    c.add_argument("file")
    c.add_argument("words", nargs=argparse.REMAINDER, help="shell command, e.g. ls /image")
    d = sub.add_parser("dump", help="DumpLogSegments --cluster-metadata-decoder --files FILE")
    d.add_argument("file")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "shell":
            out = java_shell(
                args.file,
                *(args.words or ["ls", "/"]),
                version=args.version,
                use_cache=not args.no_cache,
                strict=not args.lenient,
            )
        elif args.cmd == "caught-up":
            text, applied = java_shell_caught_up(
                args.file, *(args.words or ["ls", "/"]), version=args.version, use_cache=not args.no_cache
            )
            out = f"lastAppliedOffset={applied}\n{text}"
        else:
            out = dump_log(
                args.file, version=args.version, use_cache=not args.no_cache, strict=not args.lenient
            )
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
