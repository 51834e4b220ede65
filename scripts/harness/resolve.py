"""Which jars make up one Kafka version, resolved through Maven the same way on every machine.

Why this is more than ``mvn dependency:copy-dependencies``: the registry is partial and it changes.
Kafka 4.4.0 was first published without kafka-tools and kafka-shell; later kafka-tools 4.4.0 came,
pulling in connect-runtime, whose Jetty dependency (jetty-ee10-servlets 12.0.39) the registry does
not serve.  A resolver that only knows one of Maven's error wordings breaks on the next change, and
a machine with a warm Maven cache hides the breakage until a new machine runs CI.  So:

1. **The lock** (``scripts/kafka-locks/<version>.json``, in the repo) lists every resolved
   coordinate with its sha256.  :func:`resolve` first asks Maven for exactly those, non-transitively,
   and checks every jar's digest: the same jars on every machine.
2. **Adaptive resolution** runs when there is no lock, when the lock can no longer be satisfied, or
   when the lock is being updated (``python scripts/kafka_harness.py lock VERSION``).  It asks Maven
   for the server, shell and tools with their transitive runtime dependencies, minus what the
   harness never runs (:data:`STATIC_EXCLUSIONS`).  When Maven fails, the coordinates its error
   output names are checked against the repository itself (whatever Maven's wording), and each one
   that is really missing is handled:

   * a Kafka module of the requested version is taken from the newest older release of the same
     major (``substitutes``; kafka-shell is then recompiled against this version's jars, see
     :mod:`harness.rebuild`, and classes left in substituted jars run from that complete release);
   * any other artifact is pinned to the nearest version the repository serves (``pinned``);
   * an artifact with no version at all is excluded (``excluded``).

   If even that fails, the error is one line naming the missing coordinate.

What was substituted, pinned or excluded is recorded in the lock and in the dist's stamp
(``complete.json``), so the oracle can say which jars it ran.

The repository is Maven Central unless ``METASHELL_MAVEN_REPO`` names another (an ``https://`` or
``file://`` URL): the harness then gives Maven a settings file mirroring every repository to it, so
one URL serves both Maven and the harness's own version look-ups.  Maven's local repository is
Maven's own business (``MAVEN_OPTS=-Dmaven.repo.local=DIR`` is honoured, it is inherited).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import SCALA_VERSION, KafkaUnavailable, major, version_key

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
LOCK_DIR = Path(__file__).resolve().parent.parent / "kafka-locks"

#: Every Kafka module a 3.9-4.x server/tools classpath may pull in.  They are all pinned to the
#: requested version in <dependencyManagement> so the tools' transitive deps cannot drag in an older
#: kafka-clients etc. (pins for modules nobody depends on are inert).
KAFKA_MODULES: tuple[str, ...] = (
    "kafka-clients",
    "kafka-server-common",
    "kafka-group-coordinator-api",
    "kafka-group-coordinator",
    "kafka-transaction-coordinator",
    "kafka-metadata",
    "kafka-storage-api",
    "kafka-tools-api",
    "kafka-raft",
    "kafka-storage",
    "kafka-server",
    "kafka-coordinator-common",
    "kafka-share-coordinator",
    "kafka-shell",
    "kafka-tools",
    f"kafka_{SCALA_VERSION}",
    "kafka-streams",
    "kafka-log4j-appender",
    "kafka-clients-admin",
)

#: Artifacts no class the harness runs needs (the server, the metadata shell, the dump tool and the
#: admin tools): excluded from every resolution, with the reason recorded in the stamp.
STATIC_EXCLUSIONS: dict[str, str] = {
    "org.apache.kafka:connect-runtime": "Kafka Connect's worker and REST stack (Jetty, Jersey): only "
    "kafka-tools' connect-plugin-path command uses it",
}

_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>metashell.harness</groupId>
  <artifactId>kafka-runtime-{version}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencyManagement>
    <dependencies>
{managed}
    </dependencies>
  </dependencyManagement>
  <dependencies>
{deps}
  </dependencies>
</project>
"""

_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <mirrors>
    <mirror><id>metashell-repo</id><mirrorOf>*</mirrorOf><url>{url}</url></mirror>
  </mirrors>
</settings>
"""

#: A Maven coordinate as Maven prints it: group:artifact:type[:classifier]:version.
_COORD = re.compile(
    r"\b([A-Za-z0-9_.-]+):([A-Za-z0-9_.-]+):(jar|pom)(?::([A-Za-z0-9_.-]+))?:([0-9][A-Za-z0-9_.-]*)"
)
_PRERELEASE = re.compile(r"(?i)(alpha|beta|rc|cr|snapshot|preview|milestone|-m\d|\.m\d|-ea)")


@dataclass(frozen=True, order=True)
class Coordinate:
    """One artifact: ``group:artifact:type[:classifier]:version``."""

    group: str
    artifact: str
    version: str
    type: str = "jar"
    classifier: str = ""

    @classmethod
    def parse(cls, text: str) -> Coordinate:
        parts = text.split(":")
        if len(parts) == 4:
            return cls(parts[0], parts[1], parts[3], parts[2])
        if len(parts) == 5:
            return cls(parts[0], parts[1], parts[4], parts[2], parts[3])
        raise ValueError(f"not a Maven coordinate: {text!r}")

    def __str__(self) -> str:
        middle = f"{self.type}:{self.classifier}" if self.classifier else self.type
        return f"{self.group}:{self.artifact}:{middle}:{self.version}"

    @property
    def key(self) -> str:
        """``group:artifact``: what pins and exclusions name."""
        return f"{self.group}:{self.artifact}"

    @property
    def file_name(self) -> str:
        """The name copy-dependencies gives the file."""
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.{self.type}"

    def path(self) -> str:
        """The file's path inside a Maven repository."""
        return f"{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"


@dataclass
class Resolution:
    """The outcome of resolving one Kafka version: what to copy and what was changed on the way."""

    version: str
    artifacts: list[Coordinate] = field(default_factory=list)
    substitutes: dict[str, str] = field(default_factory=dict)  # Kafka module -> older version used
    pinned: dict[str, dict[str, str]] = field(default_factory=dict)  # g:a -> {"wanted", "used"}
    excluded: dict[str, str] = field(default_factory=dict)  # g:a -> why
    source: str = "resolved"  # "lock" or "resolved"
    lock_problem: str | None = None  # why the lock was not used
    sha256: dict[str, str] = field(default_factory=dict)  # coordinate -> digest of the jar

    def summary(self) -> dict[str, Any]:
        """What the dist's stamp records of the resolution (beside its top-level ``substitutes``)."""
        out: dict[str, Any] = {
            "source": self.source,
            "pinned": self.pinned,
            "excluded": self.excluded,
            "repository": repository_url(),
        }
        if self.lock_problem:
            out["lock_problem"] = self.lock_problem
        return out


# --------------------------------------------------------------------------------------------------
# the repository


def repository_url() -> str:
    """The Maven repository the harness resolves from (``METASHELL_MAVEN_REPO``, else Maven Central)."""
    return os.environ.get("METASHELL_MAVEN_REPO", "").rstrip("/") or MAVEN_CENTRAL


def _fetch(url: str) -> bytes | None:
    """The bytes at ``url``, or None when the repository says it has no such file.

    Any other failure (no network, a 5xx) raises :class:`KafkaUnavailable`: an unreachable repository
    must never look like a missing artifact, or everything would be excluded.
    """
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            data: bytes = resp.read()
            return data
    except urllib.error.HTTPError as exc:
        if exc.code in (404, 410):
            return None
        raise KafkaUnavailable(f"repository answered {exc.code} for {url}") from exc
    except urllib.error.URLError as exc:
        if url.startswith("file:") and isinstance(exc.reason, FileNotFoundError | NotADirectoryError):
            return None
        if url.startswith("file:") and "No such file" in str(exc.reason):
            return None
        raise KafkaUnavailable(f"repository {repository_url()} unreachable: {exc.reason}") from exc
    except OSError as exc:
        raise KafkaUnavailable(f"repository {repository_url()} unreachable: {exc}") from exc


def is_served(coord: Coordinate) -> bool:
    """Whether the repository has the artifact's file (and, for a jar, its pom)."""
    base = f"{repository_url()}/"
    if _fetch(base + coord.path()) is None:
        return False
    pom = Coordinate(coord.group, coord.artifact, coord.version, "pom")
    return coord.type == "pom" or _fetch(base + pom.path()) is not None


def served_versions(group: str, artifact: str) -> list[str]:
    """Versions the repository lists for ``group:artifact`` (its ``maven-metadata.xml``)."""
    url = f"{repository_url()}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml"
    data = _fetch(url)
    if data is None:
        return []
    return re.findall(r"<version>\s*([^<\s]+)\s*</version>", data.decode("utf-8", "replace"))


def nearest_version(wanted: str, available: list[str]) -> str | None:
    """The served release closest to ``wanted``: same major and minor first, then the smallest step,
    and the older one on a tie (a patch release below is likelier to be what was tested)."""
    w = version_key(wanted)
    releases = [
        v for v in available if v != wanted and not _PRERELEASE.search(v) and len(version_key(v)) == len(w)
    ]

    def distance(v: str) -> tuple[Any, ...]:
        k = version_key(v)
        return (k[:1] != w[:1], k[:2] != w[:2], tuple(abs(a - b) for a, b in zip(k, w, strict=True)), k > w)

    return min(releases, key=distance) if releases else None


def newest_release_before(artifact: str, version: str) -> str | None:
    """Newest release of org.apache.kafka:``artifact`` older than ``version`` with the same major
    (used when a release is only partly published)."""
    versions = [v for v in served_versions("org.apache.kafka", artifact) if re.fullmatch(r"[0-9.]+", v)]
    older = [v for v in versions if major(v) == major(version) and version_key(v) < version_key(version)]
    return max(older, key=version_key) if older else None


# --------------------------------------------------------------------------------------------------
# Maven


def maven_command(mvn: str, work: Path, *goals: str) -> list[str]:
    """``mvn`` in batch mode on ``work/pom.xml`` (with the mirror settings when a repository is set)."""
    cmd = [mvn, "-B", "-U", "-f", str(work / "pom.xml")]
    if os.environ.get("METASHELL_MAVEN_REPO"):
        settings = work / "settings.xml"
        settings.write_text(_SETTINGS.format(url=repository_url()))
        cmd += ["-s", str(settings)]
    return cmd + list(goals)


def _run_maven(cmd: list[str], work: Path, what: str) -> tuple[bool, str]:
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=1800, cwd=work, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KafkaUnavailable(f"mvn could not fetch {what}: {exc}") from exc
    return proc.returncode == 0, proc.stdout + proc.stderr


def _dep_xml(coord: Coordinate, exclusions: list[str], indent: str = "    ") -> str:
    classifier = f"<classifier>{coord.classifier}</classifier>" if coord.classifier else ""
    excl = "".join(
        f"<exclusion><groupId>{g}</groupId><artifactId>{a}</artifactId></exclusion>"
        for g, a in (e.split(":", 1) for e in exclusions)
    )
    excl = f"<exclusions>{excl}</exclusions>" if excl else ""
    return (
        f"{indent}<dependency><groupId>{coord.group}</groupId><artifactId>{coord.artifact}</artifactId>"
        f"<version>{coord.version}</version>{classifier}{excl}</dependency>"
    )


def _copy(mvn: str, work: Path, pom: str, what: str) -> tuple[bool, str]:
    """Write ``pom`` and copy its runtime dependencies into ``work/libs`` (listing them as well)."""
    (work / "pom.xml").write_text(pom)
    libs = work / "libs"
    if libs.exists():
        for f in libs.iterdir():
            f.unlink()
    cmd = maven_command(
        mvn,
        work,
        f"{DEPENDENCY_PLUGIN}:copy-dependencies",
        f"{DEPENDENCY_PLUGIN}:list",
        f"-DoutputDirectory={libs}",
        "-DincludeScope=runtime",
        f"-DoutputFile={work / 'resolved.txt'}",
        "-DappendOutput=false",
    )
    return _run_maven(cmd, work, what)


def _error_lines(out: str) -> list[str]:
    return [ln for ln in out.splitlines() if "ERROR" in ln] or out.strip().splitlines()[-3:]


def _named_coordinates(out: str) -> list[Coordinate]:
    """Every coordinate Maven's error lines mention, except the generated pom's own."""
    seen: dict[str, Coordinate] = {}
    for line in _error_lines(out):
        for g, a, t, c, v in _COORD.findall(line):
            if g != "metashell.harness":
                coord = Coordinate(g, a, v, t, c or "")
                seen.setdefault(str(coord), coord)
    return list(seen.values())


def _listed(work: Path) -> list[Coordinate]:
    """The coordinates ``dependency:list`` wrote (``g:a:type[:classifier]:version:scope``)."""
    coords = []
    for line in (work / "resolved.txt").read_text().splitlines():
        text = line.strip().split(" -- ", 1)[0].strip()
        parts = text.split(":")
        if len(parts) in (5, 6) and parts[-1] in ("compile", "runtime"):
            coords.append(Coordinate.parse(":".join(parts[:-1])))
    return sorted(coords)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------------
# resolving


def requested(version: str, substitutes: dict[str, str]) -> list[Coordinate]:
    """What the harness asks Maven for: the server, the metadata shell, the tools, a logging backend."""
    kafka = [f"kafka_{SCALA_VERSION}", "kafka-shell", "kafka-tools"]
    deps = [Coordinate("org.apache.kafka", a, substitutes.get(a, version)) for a in kafka]
    if major(version) >= 4:
        # Kafka 4.x ships log4j2 (with the slf4j 1.x binding: its slf4j-api is still 1.7.36).
        deps += [
            Coordinate("org.apache.logging.log4j", "log4j-core", "2.24.3"),
            Coordinate("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3"),
        ]
    else:
        # Kafka 3.x ships reload4j (log4j 1.2 API) behind slf4j 1.7.
        deps += [Coordinate("org.slf4j", "slf4j-reload4j", "1.7.36")]
    return deps


def _coordinate_of(key: str, version: str) -> Coordinate:
    group, artifact = key.split(":", 1)
    return Coordinate(group, artifact, version)


def _adaptive_pom(res: Resolution) -> str:
    pins = {f"org.apache.kafka:{a}": res.substitutes.get(a, res.version) for a in KAFKA_MODULES}
    pins.update({k: p["used"] for k, p in res.pinned.items()})
    managed = "\n".join(_dep_xml(_coordinate_of(key, v), [], "      ") for key, v in pins.items())
    exclusions = sorted(res.excluded)
    deps = "\n".join(
        _dep_xml(c, exclusions) for c in requested(res.version, res.substitutes) if c.key not in res.excluded
    )
    return _POM.format(version=res.version, managed=managed, deps=deps)


def _handle_missing(res: Resolution, coord: Coordinate) -> None:
    """Substitute, pin or exclude one artifact the repository does not serve (see module doc)."""
    if (
        coord.key in res.pinned
        or coord.key in res.excluded
        or (coord.group == "org.apache.kafka" and coord.artifact in res.substitutes)
    ):
        raise KafkaUnavailable(
            f"{coord} is not served by {repository_url()} (and the harness's replacement for it failed too)"
        )
    if coord.group == "org.apache.kafka" and coord.version == res.version and coord.artifact in KAFKA_MODULES:
        if coord.artifact == f"kafka_{SCALA_VERSION}":
            raise KafkaUnavailable(f"{coord} (Kafka's server) is not served by {repository_url()}")
        older = newest_release_before(coord.artifact, res.version)
        if older is None:
            raise KafkaUnavailable(
                f"{coord} is not served by {repository_url()} and no older release of the same major is"
            )
        res.substitutes[coord.artifact] = older
        return
    near = nearest_version(coord.version, served_versions(coord.group, coord.artifact))
    if near is not None:
        res.pinned[coord.key] = {"wanted": coord.version, "used": near}
    else:
        res.excluded[coord.key] = f"{coord} is not served by the repository, in any version"


def resolve_adaptively(mvn: str, work: Path, version: str, seed: Resolution | None = None) -> Resolution:
    """Resolve ``version`` transitively into ``work/libs``, repairing what the repository lacks."""
    res = Resolution(version, excluded=dict(STATIC_EXCLUSIONS))
    if seed is not None:  # start from what worked when the lock was written: fewer Maven runs
        res.substitutes.update(seed.substitutes)
        res.excluded.update(seed.excluded)
    for _attempt in range(12):
        ok, out = _copy(mvn, work, _adaptive_pom(res), f"Kafka {version}")
        if ok and any((work / "libs").glob(f"kafka_{SCALA_VERSION}-*.jar")):
            res.artifacts = _listed(work)
            res.sha256 = {str(c): sha256_of(work / "libs" / c.file_name) for c in res.artifacts}
            return res
        named = _named_coordinates(out)
        missing = [c for c in named if not is_served(c)]
        if not missing:
            first = " | ".join(_error_lines(out)[:2])
            raise KafkaUnavailable(f"mvn could not fetch Kafka {version}: {first[:400]}")
        for coord in missing:
            _handle_missing(res, coord)
    raise KafkaUnavailable(f"mvn could not fetch Kafka {version}: still failing after 12 repairs")


# --------------------------------------------------------------------------------------------------
# the lock


def lock_path(version: str) -> Path:
    return LOCK_DIR / f"{version}.json"


def lock_digest(version: str) -> str:
    """sha256 of the lock file's bytes ("" without one): a dist remembers the lock it was made from."""
    try:
        return sha256_of(lock_path(version))
    except FileNotFoundError:
        return ""


def read_lock(version: str) -> Resolution | None:
    """The lock of ``version`` as a :class:`Resolution`, or None when the repo has none."""
    try:
        data = json.loads(lock_path(version).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise KafkaUnavailable(f"{lock_path(version)}: unreadable lock ({exc})") from exc
    return Resolution(
        version,
        artifacts=[Coordinate.parse(a["coordinate"]) for a in data["artifacts"]],
        substitutes=data.get("substitutes", {}),
        pinned=data.get("pinned", {}),
        excluded=data.get("excluded", {}),
        source="lock",
        sha256={a["coordinate"]: a["sha256"] for a in data["artifacts"]},
    )


def write_lock(res: Resolution) -> Path:
    """Write ``res`` as the lock of its version (the documented update: ``kafka_harness.py lock``)."""
    path = lock_path(res.version)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "kafka": res.version,
        "comment": "Jars the test harness runs for this Kafka version. Update with: "
        f"python scripts/kafka_harness.py lock {res.version}",
        "written": _dt.date.today().isoformat(),
        "substitutes": res.substitutes,
        "pinned": res.pinned,
        "excluded": res.excluded,
        "artifacts": [{"coordinate": str(c), "sha256": res.sha256[str(c)]} for c in res.artifacts],
    }
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def resolve_from_lock(mvn: str, work: Path, lock: Resolution) -> str | None:
    """Copy exactly the locked jars into ``work/libs``; None on success, else why not (one line)."""
    everything = ["*:*"]
    deps = "\n".join(_dep_xml(c, everything) for c in lock.artifacts)
    ok, out = _copy(
        mvn,
        work,
        _POM.format(version=lock.version, managed="", deps=deps),
        f"Kafka {lock.version} from its lock",
    )
    if not ok:
        named = [c for c in _named_coordinates(out) if str(c) in lock.sha256]
        missing = [c for c in named if not is_served(c)]
        if missing:
            return f"locked {missing[0]} is not served by {repository_url()}"
        return "mvn failed on the lock: " + " | ".join(_error_lines(out)[:2])[:300]
    for coord in lock.artifacts:
        jar = work / "libs" / coord.file_name
        if not jar.exists():
            return f"locked {coord} did not arrive"
        if sha256_of(jar) != lock.sha256[str(coord)]:
            raise KafkaUnavailable(
                f"{coord}: sha256 differs from {lock_path(lock.version).name} "
                "(the repository serves other bytes under the same coordinate)"
            )
    return None


def resolve(mvn: str, work: Path, version: str, *, use_lock: bool = True) -> Resolution:
    """Resolve ``version`` into ``work/libs``: from the lock when it can be, else adaptively."""
    lock = read_lock(version) if use_lock else None
    if lock is not None:
        problem = resolve_from_lock(mvn, work, lock)
        if problem is None:
            return lock
        res = resolve_adaptively(mvn, work, version, seed=lock)
        res.lock_problem = problem
        return res
    return resolve_adaptively(mvn, work, version)
