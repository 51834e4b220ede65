"""Recompile a substituted Kafka module's sources against the requested version's jars.

The metadata shell is the oracle for ``/image``; when a release is published without kafka-shell,
an older kafka-shell jar cannot run on this version's kafka-clients (classes moved), and a complete
older release cannot read newer metadata (unknown metadata.version levels make it drop the features
image and topics).  The shell itself is a thin layer over kafka-metadata's image node classes, so
the older kafka-shell *sources* are compiled against this version's jars, rewriting imports of
classes that merely moved package.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from .common import HarnessError
from .resolve import DEPENDENCY_PLUGIN, maven_command

#: Substituted modules we recompile from the older release's sources.  Only the shell: kafka-tools
#: uses internal APIs that really change between releases.
REBUILD_FROM_SOURCES: tuple[str, ...] = ("kafka-shell",)


def rebuild_substitutes(
    mvn: str, tmp: Path, version: str, substitutes: dict[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Recompile the substituted modules listed in :data:`REBUILD_FROM_SOURCES` against ``version``.

    Returns ``({module: source version} rebuilt, {module: error} failed)``; a module that failed
    keeps running from the complete older release (see ``KafkaDist.dist_for``).
    """
    rebuilt: dict[str, str] = {}
    errors: dict[str, str] = {}
    javac = find_javac()
    for module in REBUILD_FROM_SOURCES:
        src_version = substitutes.get(module)
        if src_version is None:
            continue
        if javac is None:
            errors[module] = "javac not found"
            continue
        work = Path(tempfile.mkdtemp(prefix=f".rebuild-{module}-", dir=tmp))
        try:
            _rebuild_in(work, mvn, javac, tmp, module, src_version, version)
            rebuilt[module] = src_version
        except (HarnessError, OSError, subprocess.SubprocessError) as exc:
            errors[module] = str(exc)[-1000:]
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return rebuilt, errors


def _rebuild_in(
    work: Path, mvn: str, javac: str, tmp: Path, module: str, src_version: str, version: str
) -> None:
    cmd = maven_command(
        mvn,
        tmp,
        f"{DEPENDENCY_PLUGIN}:copy",
        f"-Dartifact=org.apache.kafka:{module}:{src_version}:jar:sources",
        f"-DoutputDirectory={work}",
    )
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, cwd=tmp, check=False, stdin=subprocess.DEVNULL
    )
    src_jar = work / f"{module}-{src_version}-sources.jar"
    if proc.returncode != 0 or not src_jar.exists():
        raise HarnessError(f"no sources for {module} {src_version}: {(proc.stdout + proc.stderr)[-300:]}")
    src = work / "src"
    with zipfile.ZipFile(src_jar) as zf:
        zf.extractall(src)
    libs = tmp / "libs"
    old_jar = f"{module}-{src_version}.jar"
    cp_jars = sorted(p for p in libs.glob("*.jar") if p.name != old_jar)
    known: set[str] = set()
    for jar in cp_jars:
        with zipfile.ZipFile(jar) as zf:
            known.update(
                n[:-6].replace("/", ".") for n in zf.namelist() if n.endswith(".class") and "$" not in n
            )
    java_files = sorted(src.rglob("*.java"))
    _rewrite_moved_imports(java_files, src, known)
    out = work / "classes"
    out.mkdir()
    argfile = work / "sources.txt"
    argfile.write_text("\n".join(str(f) for f in java_files) + "\n")
    _javac(javac, out, os.pathsep.join(map(str, cp_jars)), f"@{argfile}", what=module, timeout=900)
    for res in src.rglob("*"):  # non-Java resources (service files, properties) come along
        if res.is_file() and res.suffix != ".java" and "META-INF/MANIFEST" not in str(res):
            dest = out / res.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(res, dest)
    (tmp / "rebuilt").mkdir(exist_ok=True)
    new_jar = tmp / "rebuilt" / f"{module}-{version}-rebuilt-from-{src_version}.jar"
    part = new_jar.with_suffix(f".{os.getpid()}.part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(out.rglob("*")):
            if f.is_file():
                zf.write(f, f.relative_to(out).as_posix())
    os.replace(part, new_jar)  # the old jar stays in libs/ (others may use libs/*); not on our classpath


def _rewrite_moved_imports(java_files: list[Path], src_root: Path, known: set[str]) -> int:
    """Point imports of Kafka classes that no longer exist at the unique class of the same simple name.

    Between Kafka releases many utility classes only move package (e.g. ``common.utils.Exit`` ->
    ``common.utils.internals.Exit``, ``kafka.tools.TerseFailure`` -> ``server.util.TerseFailure``).
    """
    own = {str(f.relative_to(src_root))[:-5].replace("/", ".") for f in java_files}
    by_simple: dict[str, list[str]] = {}
    for c in known:
        if "." in c:
            by_simple.setdefault(c.rsplit(".", 1)[1], []).append(c)

    def exists(fq: str) -> bool:
        parts = fq.split(".")
        prefixes = (".".join(parts[:i]) for i in range(len(parts), 1, -1))
        return any(p in known or p in own for p in prefixes)

    count = 0

    def fix(m: re.Match[str]) -> str:
        nonlocal count
        static, fq = m.group(1), m.group(2)
        if fq.endswith(".*"):
            return m.group(0)
        cls = fq.rsplit(".", 1)[0] if static else fq
        if not cls.startswith(("org.apache.kafka.", "kafka.")) or exists(cls):
            return m.group(0)
        cands = by_simple.get(cls.rsplit(".", 1)[1], [])
        if len(cands) > 1:
            cands = [c for c in cands if c.startswith("org.apache.kafka.")]
        if len(cands) != 1:
            return m.group(0)  # javac will report it
        count += 1
        return f"import {static or ''}{cands[0]}{fq[len(cls) :]};"

    pattern = re.compile(r"^import\s+(static\s+)?([\w.*]+);", re.MULTILINE)
    for f in java_files:
        text = f.read_text(encoding="utf-8")
        new = pattern.sub(fix, text)
        if new != text:
            f.write_text(new, encoding="utf-8")
    return count


def find_javac() -> str | None:
    """The JDK's ``javac`` (on PATH, else under ``$JAVA_HOME``), or None."""
    javac = shutil.which("javac")
    if javac is None and os.environ.get("JAVA_HOME"):
        cand = Path(os.environ["JAVA_HOME"]) / "bin" / "javac"
        javac = str(cand) if cand.exists() else None
    return javac


def _javac(javac: str, out: Path, classpath: str, *sources: str, what: str, timeout: float) -> None:
    """Compile ``sources`` (files or ``@argfile``) for Java 17 into ``out``."""
    proc = subprocess.run(
        [
            javac,
            "-nowarn",
            "-encoding",
            "UTF-8",
            "--release",
            "17",
            "-d",
            str(out),
            "-cp",
            classpath,
            *sources,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise HarnessError(f"javac failed for {what}: {(proc.stdout + proc.stderr)[-800:]}")
