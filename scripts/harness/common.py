"""What every part of the harness shares: versions, JVM flags, errors, and small process helpers."""

from __future__ import annotations

import base64
import contextlib
import ctypes
import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

SUPPORTED_VERSIONS: tuple[str, ...] = ("3.9.2", "4.3.1", "4.4.0")
DEFAULT_VERSION = "4.4.0"
SCALA_VERSION = "2.13"

#: Credentials of the SCRAM/PLAIN admin user created at format time in ``sasl_scram`` mode.
SASL_USER = "admin"
SASL_PASSWORD = "admin-secret"

#: JVM flags for servers and tools: the machine is small, start-up speed matters more than peak
#: throughput (C1 only, serial GC).
JVM_FLAGS: tuple[str, ...] = (
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
    "-Djava.awt.headless=true",
    "-Djava.net.preferIPv4Stack=true",
)
SERVER_HEAP = "384m"
TOOL_HEAP = "256m"


class HarnessError(RuntimeError):
    """Something went wrong running Kafka (message includes the tail of the relevant log)."""


class KafkaUnavailable(HarnessError):
    """Java or Maven is missing, or the jars could not be downloaded: tests skip on this."""


# --------------------------------------------------------------------------------------------------
# small helpers


def cache_root() -> Path:
    """Where jars and oracle results live (outside the repo): $METASHELL_KAFKA_CACHE or ~/.cache."""
    env = os.environ.get("METASHELL_KAFKA_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "metashell" / "kafka"


def java_executable() -> str:
    """The ``java`` to use: $JAVA_HOME/bin/java if set, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise KafkaUnavailable("java not found on PATH (install a JDK 17+ or set JAVA_HOME)")
    return found


_JAVA_MAJOR: dict[str, int] = {}


def check_java(min_major: int = 17) -> int:
    """Return the Java major version; raise :class:`KafkaUnavailable` if missing or too old.

    Kafka 4.x brokers need Java 17; we require it for every version to keep one rule.
    """
    java = java_executable()
    if java not in _JAVA_MAJOR:
        try:
            out = subprocess.run(
                [java, "-version"], capture_output=True, text=True, timeout=60, check=False
            ).stderr
        except (OSError, subprocess.SubprocessError) as exc:
            raise KafkaUnavailable(f"cannot run {java}: {exc}") from exc
        m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
        if not m:
            raise KafkaUnavailable(f"cannot parse `java -version`: {out.strip()[:200]}")
        major = int(m.group(1))
        _JAVA_MAJOR[java] = int(m.group(2) or 0) if major == 1 else major
    if _JAVA_MAJOR[java] < min_major:
        raise KafkaUnavailable(f"Java {_JAVA_MAJOR[java]} found at {java}; Kafka needs Java {min_major}+")
    return _JAVA_MAJOR[java]


def free_ports(count: int) -> list[int]:
    """Pick ``count`` distinct free TCP ports on 127.0.0.1 (all sockets held open until all chosen)."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def random_kafka_uuid() -> str:
    """A Kafka-style Uuid string (url-safe base64 of 16 bytes, no padding, never starting with '-')."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def tail(path: Path, lines: int = 40) -> str:
    """The last ``lines`` lines of a text file, for error messages."""
    try:
        data = path.read_bytes()[-65536:].decode("utf-8", "replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(data.splitlines()[-lines:])


def _prop_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n")


def write_properties(path: Path, props: Mapping[str, Any]) -> Path:
    """Write a Java .properties file (values with booleans as true/false, None entries dropped)."""
    lines = []
    for key, value in props.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        lines.append(f"{key}={_prop_escape(str(value))}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@contextlib.contextmanager
def file_lock(path: Path, timeout: float = 1800) -> Iterator[None]:
    """An exclusive advisory lock, so two processes never download into the same cache dir."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise HarnessError(f"timed out waiting for lock {path}") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def parent_death_signal() -> None:
    """preexec_fn: have the kernel SIGTERM our JVMs if the Python process dies without cleanup.

    Only async-signal-safe work happens here (one prctl call), so it is fine with threads.  Note the
    signal fires when the *thread* that started the node exits: start clusters from a long-lived
    thread (the main thread in pytest and the scripts).
    """
    with contextlib.suppress(OSError, AttributeError):  # best effort: not Linux / no glibc
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def major(version: str) -> int:
    """The major number of a version string (``"4.4.0"`` -> 4)."""
    return int(version.split(".")[0])


def version_key(v: str) -> tuple[int, ...]:
    """A sort key for dotted versions; non-numeric parts (qualifiers) sort first."""
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.-]", v))
