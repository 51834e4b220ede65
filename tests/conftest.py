"""Shared pytest helpers: paths to the reference pack and fixtures, and real-Kafka fixtures.

Real Kafka comes from ``scripts/kafka_harness.py`` (jars from Maven Central, cached outside the
repo).  Without Java 17+/Maven, or when the download fails, tests that need it *skip* with a
one-line reason - unless ``METASHELL_REQUIRE_KAFKA=1`` (CI), where they *fail* instead.

Usage::

    @pytest.mark.kafka
    @pytest.mark.parametrize("kafka_dist", ["3.9.2", "4.4.0"], indirect=True)
    def test_x(kafka_dist, kafka_cluster): ...
        cluster = kafka_cluster(kafka_dist.version, mode="combined")   # started, stopped at teardown
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
VECTORS = SHARED / "reference" / "test-vectors"
FIXTURES = REPO / "fixtures"
SCRIPTS = REPO / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))

import kafka_harness  # needs the sys.path entry above
import tui_wait  # noqa: F401  (under METASHELL_TUI_NO_SLACK=1 it takes the slack out of pilot.pause)

# --------------------------------------------------------------------------------------------------
# a clean environment: the suite must not pass or fail by what the caller happened to have set

#: Variables that change what metashell, Textual, Rich, less or prompt-toolkit do.  They are removed
#: for the whole run (and so for every process a test starts); a test that is about one of them sets
#: it itself.  CI starts with none of them; a developer's shell often has PAGER, LESS or NO_COLOR.
SCRUBBED_ENV: tuple[str, ...] = (
    "PAGER",
    "METASHELL_PAGER",
    "LESS",
    "LESSOPEN",
    "LESSCLOSE",
    "LESSKEY",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLORTERM",
    "COLUMNS",
    "LINES",
    "METASHELL_DEBUG",
    "METASHELL_JAVA_DOUBLE",
    "XDG_STATE_HOME",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LANGUAGE",
    "PYTHONIOENCODING",
    "PROMPT_TOOLKIT_COLOR_DEPTH",
)

#: Pinned values: a UTF-8 locale, an ordinary terminal type, and a history file that is never the
#: user's own (set per run below).
PINNED_ENV: dict[str, str] = {"LANG": "C.UTF-8", "TERM": "xterm"}


def _pin_environment() -> None:
    for name in SCRUBBED_ENV:
        os.environ.pop(name, None)
    for name in [n for n in os.environ if n.startswith("TEXTUAL")]:
        os.environ.pop(name)
    os.environ.update(PINNED_ENV)
    import atexit
    import shutil
    import tempfile

    home = tempfile.mkdtemp(prefix="metashell-test-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    os.environ["METASHELL_HISTFILE"] = os.path.join(home, "history")


_pin_environment()


def address_limited_env() -> dict[str, str]:
    """The environment of a child that sets its own address-space limit (``RLIMIT_AS``).

    glibc gives a thread that finds the main heap busy an arena of its own, and reserves 64 MiB of
    address space for each: the TUI's five threads took 120 MB to 410 MB of address space for the
    same 80 MB resident, by how their first allocations happened to meet.  Under RLIMIT_AS that made
    a bound test pass or fail by timing (CI once ran a paused TUI out of memory 54 MB below the
    bound it tests).  One arena makes the address space follow what the child holds.
    """
    return {**os.environ, "MALLOC_ARENA_MAX": "1"}


def _hypothesis_profile() -> None:
    """``.ci/run`` (METASHELL_REQUIRE_KAFKA) draws the same examples every run: a CI run is a check
    of the change, not a lottery; a failure it shows comes back on the next run, and locally the
    fuzz tests keep drawing new examples (their failures are kept in .hypothesis/ and replayed)."""
    from hypothesis import HealthCheck, settings

    # No test may fail by the clock (a loaded CI machine draws and runs examples slower): no
    # deadline, and no "too slow" health check, for every test that does not set its own
    settings.register_profile("metashell", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile(
        "ci", parent=settings.get_profile("metashell"), derandomize=True, database=None, print_blob=True
    )
    settings.load_profile("metashell")
    if os.environ.get("METASHELL_REQUIRE_KAFKA") or os.environ.get("CI"):
        settings.load_profile("ci")


_hypothesis_profile()

#: Versions the real-Kafka tests cover: the newest 3.9.x and the newest 4.x on Maven Central.
KAFKA_VERSIONS: tuple[str, ...] = ("3.9.2", "4.4.0")
REQUIRE_KAFKA = os.environ.get("METASHELL_REQUIRE_KAFKA", "") not in ("", "0", "false", "no")


# --------------------------------------------------------------------------------------------------
# reference pack / fixtures


REQUIRE_NATIVE = os.environ.get("METASHELL_REQUIRE_NATIVE", "") not in ("", "0", "false", "no")


def native_core() -> Any:
    """The native core's module; a test needing it skips with the reason it is missing, or fails
    under ``METASHELL_REQUIRE_NATIVE=1`` (CI, where the test command builds it)."""
    from metashell.engine import import_native

    native, why = import_native()
    if native is None:
        if REQUIRE_NATIVE:
            pytest.fail(f"METASHELL_REQUIRE_NATIVE=1 but {why}", pytrace=False)
        pytest.skip(why)
    return native


def shared_required(*parts: str) -> Path:
    """``SHARED / parts...``; skips the calling test when the reference pack (../shared) is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference pack not available: {path} is absent (sibling ../shared of the repo)")
    return path


def corpus_paths() -> list[Path]:
    """The corpus metadata log dirs (each holds ``__cluster_metadata-0``); empty when absent."""
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if p.is_dir() and (p / "__cluster_metadata-0").is_dir())


def corpus_dirs() -> list[Any]:
    """Corpus dirs as ``pytest.param``s (id = folder name) for ``@pytest.mark.parametrize``.

    When ../shared/corpus is absent this is a single skipped param, so the test shows up as skipped
    with a clear reason instead of silently vanishing.
    """
    paths = corpus_paths()
    if not paths:
        return [
            pytest.param(
                None,
                id="no-corpus",
                marks=pytest.mark.skip(reason=f"corpus not available: {CORPUS} is absent"),
            )
        ]
    return [pytest.param(p, id=p.name) for p in paths]


# --------------------------------------------------------------------------------------------------
# real Kafka


def assert_generated_current(script: str, versions: tuple[str, ...]) -> None:
    """``scripts/<script> --check`` against the cached Kafka ``versions`` (skipped until the kafka
    tests have fetched them): a table generated from Kafka's jars was not edited by hand."""
    import subprocess

    if not all(kafka_harness.KafkaDist(v).is_ready() for v in versions):
        pytest.skip(f"Kafka {' and '.join(versions)} not in the cache yet (the kafka tests fetch them)")
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / script), "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def kafka_unavailable(reason: str) -> NoReturn:
    """Skip (laptop) or fail (CI, METASHELL_REQUIRE_KAFKA=1) with a one-line reason."""
    reason = " ".join(str(reason).split())[:300]
    if REQUIRE_KAFKA:
        pytest.fail(
            f"real Kafka required (METASHELL_REQUIRE_KAFKA=1) but unavailable: {reason}", pytrace=False
        )
    pytest.skip(f"real Kafka unavailable: {reason}")


_DISTS: dict[str, kafka_harness.KafkaDist] = {}
_DIST_ERRORS: dict[str, str] = {}


def get_dist(version: str = kafka_harness.DEFAULT_VERSION) -> kafka_harness.KafkaDist:
    """A downloaded :class:`KafkaDist` (once per session and version), or skip/fail."""
    if version in _DIST_ERRORS:
        kafka_unavailable(_DIST_ERRORS[version])
    if version not in _DISTS:
        try:
            kafka_harness.check_java()
            _DISTS[version] = kafka_harness.KafkaDist(version).ensure()
        except kafka_harness.HarnessError as exc:
            _DIST_ERRORS[version] = str(exc)
            kafka_unavailable(str(exc))
    return _DISTS[version]


@pytest.fixture(scope="session")
def kafka_dist(request: pytest.FixtureRequest) -> kafka_harness.KafkaDist:
    """Kafka jars of one version; parametrize with ``indirect=True`` (default: newest 4.x)."""
    return get_dist(getattr(request, "param", kafka_harness.DEFAULT_VERSION))


@pytest.fixture(scope="session")
def kafka_oracle() -> Any:
    """The ``scripts/oracle.py`` module (java_shell, dump_log), once Kafka is known to be available."""
    get_dist(kafka_harness.DEFAULT_VERSION)
    import oracle

    return oracle


class ClusterFactory:
    """Creates started clusters in temp dirs and tears all of them down at the end of its scope."""

    def __init__(self, tmp_factory: pytest.TempPathFactory) -> None:
        self._tmp = tmp_factory
        self.clusters: list[kafka_harness.KafkaCluster] = []

    def __call__(
        self,
        version: str = kafka_harness.DEFAULT_VERSION,
        mode: str = "combined",
        *,
        start: bool = True,
        timeout: float = 240,
        **kw: Any,
    ) -> kafka_harness.KafkaCluster:
        dist = get_dist(version)
        workdir = self._tmp.mktemp(f"kafka-{version}-{mode}-{kw.get('security', 'plaintext')}")
        cluster = kafka_harness.KafkaCluster(dist, workdir, mode=mode, **kw)
        self.clusters.append(cluster)
        if start:
            try:
                cluster.start(timeout=timeout)
            except kafka_harness.KafkaUnavailable as exc:
                kafka_unavailable(str(exc))
        return cluster

    def close(self) -> None:
        for cluster in self.clusters:
            cluster.__exit__(None, None, None)
        self.clusters.clear()


@pytest.fixture
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Any]]:
    """Factory: ``kafka_cluster(version, mode, security=..., broker_overrides=...)`` -> started cluster."""
    factory = ClusterFactory(tmp_path_factory)
    yield factory
    factory.close()


@pytest.fixture(scope="module")
def kafka_cluster_module(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Any]]:
    """Like :func:`kafka_cluster` but clusters live for the whole test module (share expensive ones)."""
    factory = ClusterFactory(tmp_path_factory)
    yield factory
    factory.close()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One real local-mode SparkSession (2 cores) for every Spark test, stopped at the end."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if os.environ.get("METASHELL_REQUIRE_KAFKA"):  # CI: the test command installs the extra
            raise
        pytest.skip("the spark extra is not installed: run scripts/test (pip install -e '.[test,spark]')")
    from metashell.spark import session

    s = session("local[2]", "metashell-tests")
    yield s
    s.stop()


# --------------------------------------------------------------------------------------------------
# exit: a leaked thread must fail the run, never hang it


#: How long the suite's last threads get to finish before they count as leaked.
THREAD_GRACE_SECONDS = 30.0


_EXIT_STATUS = pytest.StashKey[int]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


def pytest_unconfigure(config: pytest.Config) -> None:
    """After the summary: a non-daemon thread still running would make the interpreter wait for it
    for ever at exit (it joins them), and CI would time out with every test green.  Such a thread is
    a bug (a TUI worker once blocked on an app that had quit): name it, show where it is stuck, and
    leave with a failing status instead."""
    import threading
    import time
    import traceback

    def leaked() -> list[threading.Thread]:
        return [
            t
            for t in threading.enumerate()
            if t is not threading.main_thread() and not t.daemon and t.is_alive()
        ]

    deadline = time.monotonic() + THREAD_GRACE_SECONDS
    while leaked() and time.monotonic() < deadline:
        time.sleep(0.2)
    threads = leaked()
    if not threads:
        return
    frames = sys._current_frames()
    out = sys.__stderr__ or sys.stderr
    out.write(
        f"\nERROR: {len(threads)} non-daemon thread(s) still running after the tests "
        f"({THREAD_GRACE_SECONDS:.0f} s grace); the interpreter would wait for them for ever:\n"
    )
    for t in threads:
        out.write(f"--- thread {t.name!r}\n")
        frame = frames.get(t.ident or -1)
        if frame is not None:
            out.write("".join(traceback.format_stack(frame)))
    out.flush()
    os._exit(config.stash.get(_EXIT_STATUS, 0) or 1)
