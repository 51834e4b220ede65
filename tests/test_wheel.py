"""The wheel a user installs (issue 56): ``scripts/wheel`` builds it with the native core inside, and
it works installed in a fresh virtual environment of the system's Python with no Rust on ``PATH``,
outside the checkout: the engine is native, and the one-shot mode, the piped shell and the TUI run.
A module or data file left out of the wheel fails here, where the editable checkout would hide it.
The sdist must carry the native core's sources, so that it builds where Rust is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

NO_RUST_PATH = "/usr/bin:/bin"


def _system_python() -> str:
    base = getattr(sys, "_base_executable", sys.executable)
    return base if Path(base).is_file() else sys.executable


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("cargo") is None:
        pytest.skip("no Rust toolchain: the wheel's native core cannot be built here")
    work = tmp_path_factory.mktemp("wheel")
    dist = work / "dist"
    built = subprocess.run(
        ["bash", "scripts/wheel", str(dist)],
        cwd=REPO,
        env={**os.environ, "METASHELL_WHEEL_VENV": str(work / "tools")},
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    venv = work / "venv"
    clean = {"PATH": NO_RUST_PATH, "HOME": str(work), "LANG": "C.UTF-8"}
    subprocess.run([_system_python(), "-m", "venv", str(venv)], env=clean, check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    deps = subprocess.run(  # wheels only: a host with no compiler installs the same way
        [*pip, "--only-binary=:all:", "--require-hashes", "-r", str(REPO / "requirements" / "demo.txt")],
        env=clean,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert deps.returncode == 0, deps.stderr[-3000:]
    own = subprocess.run(
        [*pip, "--no-deps", str(wheel)], env=clean, capture_output=True, text=True, check=False
    )
    assert own.returncode == 0, own.stderr[-3000:]
    return {
        "wheel": wheel,
        "sdist": sdist,
        "bin": venv / "bin" / "metashell",
        "env": clean,
        "cwd": work,
        "tools": work / "tools" / "bin",  # pipx and uv, from requirements/wheel.txt
    }


#: How this machine reaches the package registry (its CA bundle, a proxy): pip reads pip.conf, but
#: uv (which pipx uses when it can) reads only these.  Nothing of metashell's own set-up.
NETWORK_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy")


def _network() -> dict[str, str]:
    return {k: os.environ[k] for k in NETWORK_VARIABLES if k in os.environ}


def _constraints(work: Path) -> Path:
    """requirements/demo.txt without its hashes: pipx and uv resolve the wheel's dependencies
    themselves, held to the versions of the lock (a hash cannot be asked of the wheel file itself)."""
    pins = []
    for line in (REPO / "requirements" / "demo.txt").read_text().splitlines():
        line = line.strip().rstrip("\\").strip()
        if line and not line.startswith(("#", "--hash")):
            pins.append(line)
    out = work / "constraints.txt"
    out.write_text("\n".join(pins) + "\n")
    return out


def _run(installed: dict[str, Any], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(installed["bin"]), *args],
        input=stdin,
        env=installed["env"],
        cwd=installed["cwd"],  # not the checkout: the installed package, not ./metashell, is imported
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_wheel_is_manylinux_and_carries_the_native_core(installed: dict[str, Any]) -> None:
    import zipfile

    assert "-cp311-abi3-manylinux" in installed["wheel"].name  # one wheel for CPython 3.11 and later
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    # one native core, built for the stable ABI (a version-specific one beside it would be imported
    # first on 3.11, and hide the one every other version gets)
    assert [n for n in names if n.startswith("metashell/_native") and n.endswith(".so")] == [
        "metashell/_native.abi3.so"
    ]
    tracked = subprocess.run(
        ["git", "ls-files", "metashell"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    assert set(tracked) <= set(names), sorted(set(tracked) - set(names))[:10]


def test_the_installed_wheel_runs_on_the_native_engine_without_rust(installed: dict[str, Any]) -> None:
    assert shutil.which("cargo", path=NO_RUST_PATH) is None
    version = _run(installed, "--version")
    assert version.returncode == 0 and "engine: native" in version.stdout, version.stdout + version.stderr
    one_shot = _run(installed, "-d", str(FIXTURES / "demo"), "-c", "ls /topics")
    assert one_shot.returncode == 0 and one_shot.stdout.split() == ["clickstream", "orders", "payments"]
    piped = _run(installed, "-d", str(FIXTURES / "demo"), stdin="cd /topics\npwd\nhealth --exit-code\n")
    assert piped.stdout.startswith("/topics\n") and "CRITICAL" in piped.stdout, piped.stdout + piped.stderr
    man = _run(installed, "--man")
    assert man.returncode == 0 and man.stdout.startswith(".TH")


#: What each fixture is asked on both engines: every file's text (the tree and Kafka's /image) and
#: every record as ``log`` decodes it.
DIFFERENTIAL_COMMANDS = ('grep -r "" / /image', "log --all --json")


def test_the_wheels_native_core_reads_every_fixture_as_the_python_engine_does(
    installed: dict[str, Any],
) -> None:
    """The abi3 build takes stable-ABI paths a build from source does not (item functions for
    macros, slot offsets found by probing, no dict version tags): tests/test_native_differential.py
    holds the source build to the Python engine, this holds the wheel's."""
    fixtures = sorted(p for p in FIXTURES.iterdir() if p.is_dir())
    assert len(fixtures) > 10
    for fixture in fixtures:
        for command in DIFFERENTIAL_COMMANDS:
            said = {}
            for engine in ("native", "python"):
                installed["env"]["METASHELL_ENGINE"] = engine
                try:
                    run = _run(installed, "-d", str(fixture), "-c", command)
                finally:
                    del installed["env"]["METASHELL_ENGINE"]
                lines = [
                    line for line in run.stdout.splitlines() if not line.startswith('/provenance: "engine"')
                ]
                said[engine] = (run.returncode, lines, run.stderr)
            assert said["native"] == said["python"], f"{fixture.name}: {command}"
            assert said["native"][1], f"{fixture.name}: {command} printed nothing"


def test_the_installed_wheel_opens_the_tui(installed: dict[str, Any]) -> None:
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        str(installed["bin"]),
        ["-d", str(FIXTURES / "demo"), "--tui", "--path", "/topics/orders"],
        env={**installed["env"], "TERM": "xterm-256color"},
        cwd=str(installed["cwd"]),
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 140),
    )
    try:
        child.expect("CRITICAL")  # the health report in the title: the app ran its workers
        child.send("q")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def test_the_sdist_carries_the_native_sources(installed: dict[str, Any]) -> None:
    with tarfile.open(installed["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert {"native/Cargo.toml", "native/Cargo.lock", "native/build.rs", "native/src/lib.rs"} <= names
    assert "man/metashell.1" in names  # the wheel built from the sdist installs it too
    assert "pyproject.toml" in names


def _answers(metashell: Path, installed: dict[str, Any]) -> None:
    """``metashell`` (an installed entry point) is on the native engine and reads the demo."""
    env = installed["env"]
    version = subprocess.run(
        [str(metashell), "--version"],
        env=env,
        cwd=installed["cwd"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert version.returncode == 0 and "engine: native" in version.stdout, version.stdout + version.stderr
    topics = subprocess.run(
        [str(metashell), "-d", str(FIXTURES / "demo"), "-c", "ls /topics"],
        env=env,
        cwd=installed["cwd"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert topics.stdout.split() == ["clickstream", "orders", "payments"], topics.stderr


def test_man_finds_the_page_the_wheel_installed_in_a_venv(installed: dict[str, Any]) -> None:
    """``man metashell`` with the venv's bin on PATH: man-db looks in PREFIX/share/man beside it."""
    if shutil.which("man") is None:
        pytest.skip("man is not installed (apt install man-db groff-base)")
    page = installed["bin"].parent.parent / "share" / "man" / "man1" / "metashell.1"
    assert page.read_text() == (REPO / "man" / "metashell.1").read_text()
    env = {**installed["env"], "PATH": f"{installed['bin'].parent}:{NO_RUST_PATH}", "MANPAGER": "cat"}
    env.pop("MANPATH", None)
    found = subprocess.run(["man", "-w", "metashell"], env=env, capture_output=True, text=True, check=False)
    assert found.returncode == 0 and Path(found.stdout.strip()).resolve() == page.resolve(), found


def _install_tool(installed: dict[str, Any], command: list[str], env: dict[str, str]) -> None:
    """Run an installer (pipx, uv) as a user would: the system's Python, no Rust on PATH, this
    machine's way to the registry, the dependencies held to the lock."""
    done = subprocess.run(
        [*command, "--python", _system_python(), str(installed["wheel"])],
        env={**installed["env"], **_network(), **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def test_pipx_installs_the_wheel(installed: dict[str, Any]) -> None:
    work = installed["cwd"]
    pipx = [str(installed["tools"] / "python"), "-m", "pipx", "install"]
    _install_tool(
        installed,
        [*pipx, "--pip-args", f"--constraint {_constraints(work)}"],
        {
            "PIPX_HOME": str(work / "pipx"),
            "PIPX_BIN_DIR": str(work / "pipx-bin"),
            "PIPX_MAN_DIR": str(work / "pipx-man"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        },
    )
    _answers(work / "pipx-bin" / "metashell", installed)
    assert (work / "pipx-man" / "man1" / "metashell.1").is_file()  # pipx links a tool's man pages


def test_uv_tool_installs_the_wheel(installed: dict[str, Any]) -> None:
    work = installed["cwd"]
    _install_tool(
        installed,
        [str(installed["tools"] / "uv"), "tool", "install", "--constraint", str(_constraints(work))],
        {
            "UV_TOOL_DIR": str(work / "uv-tools"),
            "UV_TOOL_BIN_DIR": str(work / "uv-bin"),
            "UV_CACHE_DIR": str(work / "uv-cache"),
            "UV_PYTHON_DOWNLOADS": "never",  # the system's Python, as on a bastion host
            "UV_NO_CONFIG": "1",
        },
    )
    _answers(work / "uv-bin" / "metashell", installed)
