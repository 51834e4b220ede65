"""Kafka's jars resolve on a new machine, and the harness survives a registry that lacks some.

The unit tests check the pieces (coordinates, nearest versions, Maven error parsing) without a
network.  The two ``slow`` tests are the proof the issue asked for: every Kafka version the suite
uses resolves into an empty Maven repository and an empty Kafka cache (so a registry change turns
CI red here, with the fix in the message, not as hundreds of errors elsewhere), and a repository
missing two of the locked jars still yields a dist that runs Kafka's tools.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, KAFKA_VERSIONS, REPO, SCRIPTS, kafka_unavailable
from harness import resolve
from harness.common import version_key
from harness.resolve import Coordinate

# --------------------------------------------------------------------------------------------------
# pieces (no network)


def test_coordinate_round_trip() -> None:
    for text in ("org.apache.kafka:kafka-clients:jar:4.4.0", "g.x:a-b:jar:sources:1.2.3"):
        assert str(Coordinate.parse(text)) == text
    c = Coordinate.parse("org.eclipse.jetty.ee10:jetty-ee10-servlets:jar:12.0.39")
    assert c.key == "org.eclipse.jetty.ee10:jetty-ee10-servlets"
    assert c.path() == "org/eclipse/jetty/ee10/jetty-ee10-servlets/12.0.39/jetty-ee10-servlets-12.0.39.jar"


def test_nearest_version_prefers_same_minor_and_the_older_patch() -> None:
    served = ["12.0.36", "12.0.37", "12.0.38", "12.1.0", "12.0.40-beta1", "11.0.24"]
    assert resolve.nearest_version("12.0.39", served) == "12.0.38"
    assert resolve.nearest_version("12.0.37", served + ["12.0.36"]) == "12.0.36"
    assert resolve.nearest_version("5.0.4", ["5.0.3", "6.0-alpha-3"]) == "5.0.3"
    assert resolve.nearest_version("1.0", []) is None


@pytest.mark.parametrize(
    "wording",
    [
        (
            "[ERROR] Failed to execute goal on project kafka-runtime-4.4.0: Could not resolve dependencies for project "
            "metashell.harness:kafka-runtime-4.4.0:pom:1: Could not find artifact "
            "org.eclipse.jetty.ee10:jetty-ee10-servlets:jar:12.0.39 in central (https://repo.maven.apache.org/maven2)"
        ),
        (
            "[ERROR] The following artifacts could not be resolved: org.eclipse.jetty.ee10:jetty-ee10-servlets:jar:12.0.39 "
            "(absent): org.eclipse.jetty.ee10:jetty-ee10-servlets:jar:12.0.39 was not found"
        ),
        (
            "[ERROR] Failed to collect dependencies at org.apache.kafka:kafka-tools:jar:4.4.0 -> "
            "org.eclipse.jetty.ee10:jetty-ee10-servlets:jar:12.0.39: Failed to read artifact descriptor"
        ),
    ],
)
def test_maven_error_wordings_name_the_coordinates(wording: str) -> None:
    named = {str(c) for c in resolve._named_coordinates("[INFO] noise\n" + wording)}
    assert "org.eclipse.jetty.ee10:jetty-ee10-servlets:jar:12.0.39" in named
    assert not any(c.startswith("metashell.harness") for c in named)


def test_locks_are_in_the_repo_for_every_version_the_suite_uses() -> None:
    for version in KAFKA_VERSIONS:
        lock = resolve.read_lock(version)
        assert lock is not None, f"no lock for {version}: run python scripts/kafka_harness.py lock {version}"
        assert any(c.artifact == "kafka_2.13" and c.version == version for c in lock.artifacts)
        assert "org.apache.kafka:connect-runtime" in lock.excluded
        assert all(len(d) == 64 for d in lock.sha256.values())


# --------------------------------------------------------------------------------------------------
# from empty caches, and with a registry that lacks jars (slow: real downloads)


def _fetch(
    versions: list[str], m2: Path, cache: Path, repo: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, METASHELL_KAFKA_CACHE=str(cache))
    env["MAVEN_OPTS"] = f"{env.get('MAVEN_OPTS', '')} -Dmaven.repo.local={m2}".strip()
    env.pop("METASHELL_MAVEN_REPO", None)
    if repo:
        env["METASHELL_MAVEN_REPO"] = repo
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "kafka_harness.py"), "fetch", *versions],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
        check=False,
        cwd=REPO,
    )


def _stamp(cache: Path, version: str) -> dict[str, Any]:
    stamp: dict[str, Any] = json.loads((cache / version / "complete.json").read_text())
    return stamp


def _versions_the_suite_uses() -> list[str]:
    versions = set(KAFKA_VERSIONS)
    for v in KAFKA_VERSIONS:  # a partly published release runs some classes from a complete one
        lock = resolve.read_lock(v)
        if lock and lock.substitutes:
            versions.add(max(lock.substitutes.values(), key=version_key))
    return sorted(versions)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every version the suite uses, fetched into a brand-new Maven repository and Kafka cache."""
    if shutil.which("mvn") is None or shutil.which("java") is None:
        kafka_unavailable("java and mvn are needed to resolve Kafka")
    base = tmp_path_factory.mktemp("fresh-resolution")
    m2, cache = base / "m2", base / "kafka"
    proc = _fetch(_versions_the_suite_uses(), m2, cache)
    if proc.returncode != 0:
        pytest.fail(f"Kafka did not resolve from empty caches: {proc.stderr.strip()[-600:]}", pytrace=False)
    return {"m2": m2, "cache": cache}


@pytest.mark.slow
@pytest.mark.kafka
def test_every_version_resolves_from_empty_caches_exactly_as_locked(fresh: dict[str, Path]) -> None:
    for version in _versions_the_suite_uses():
        res = _stamp(fresh["cache"], version)["resolution"]
        assert res["source"] == "lock", (
            f"Kafka {version}: the registry no longer serves the locked jars ({res.get('lock_problem')}); "
            f"the harness repaired it ({res}), but every machine must run the same jars: "
            f"review and run `python scripts/kafka_harness.py lock {version}`"
        )


@pytest.mark.slow
@pytest.mark.kafka
def test_a_registry_missing_jars_still_gives_a_working_dist(
    fresh: dict[str, Path], tmp_path: Path, kafka_oracle: Any
) -> None:
    """A file repository made from the fresh Maven repository, less two locked jars: jopt-simple
    5.0.4 (only 5.0.3 is served: pinned) and jose4j (no version at all: excluded)."""
    repo = tmp_path / "repo"
    shutil.copytree(fresh["m2"], repo, copy_function=os.link)
    got = subprocess.run(
        [
            "mvn",
            "-B",
            "-q",
            f"-Dmaven.repo.local={repo}",
            "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:get",
            "-Dartifact=net.sf.jopt-simple:jopt-simple:5.0.3",
            "-Dtransitive=false",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert got.returncode == 0, got.stdout[-800:]
    jopt = repo / "net/sf/jopt-simple/jopt-simple"
    shutil.rmtree(jopt / "5.0.4")
    (jopt / "maven-metadata.xml").write_text(
        "<metadata><groupId>net.sf.jopt-simple</groupId><artifactId>jopt-simple</artifactId>"
        "<versioning><versions><version>5.0.3</version></versions></versioning></metadata>"
    )
    shutil.rmtree(repo / "org/bitbucket/b_c/jose4j")

    cache = tmp_path / "kafka"
    proc = _fetch(["4.4.0"], tmp_path / "m2", cache, repo=repo.as_uri())
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert "4.4.0" in proc.stdout and "without org.bitbucket.b_c:jose4j" in proc.stdout
    res = _stamp(cache, "4.4.0")["resolution"]
    assert res["source"] == "resolved" and "is not served" in res["lock_problem"]
    assert res["pinned"] == {"net.sf.jopt-simple:jopt-simple": {"wanted": "5.0.4", "used": "5.0.3"}}
    assert "org.bitbucket.b_c:jose4j" in res["excluded"]
    jars = _stamp(cache, "4.4.0")["jars"]
    assert "libs/jopt-simple-5.0.3.jar" in jars and not any("jose4j" in j for j in jars)

    # The repaired dist runs the tools the suite runs, with the same answers as the locked one.
    from harness.dist import KafkaDist

    segment = FIXTURES / "demo" / "__cluster_metadata-0" / "00000000000000000000.log"
    repaired, locked = KafkaDist("4.4.0", cache), KafkaDist("4.4.0", fresh["cache"])
    for dist in (repaired, locked):
        assert dist.is_ready()
    dumps = [
        d.run("kafka-dump-log", "--cluster-metadata-decoder", "--files", segment, check=True).stdout
        for d in (repaired, locked)
    ]
    assert dumps[0] == dumps[1] and "baseOffset: 0" in dumps[0]
    # Kafka's shell classes, waiting for the whole file (its one-shot mode can hang on small files).
    shells = [
        d.run_program(
            kafka_oracle.CAUGHT_UP_SOURCE, segment, "find", "/image", beside=kafka_oracle.SHELL, check=True
        ).stdout
        for d in (repaired, locked)
    ]
    assert shells[0] == shells[1] and "/image/features/metadataVersion" in shells[0]
