"""The cache of compiled generated code (``metashell/protocol/code_cache.py``): a speed-up that
never decides an answer."""

from __future__ import annotations

import marshal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metashell.protocol import code_cache

SOURCE = "def f():\n    return 42\n"


@pytest.fixture
def cache_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(code_cache.ENV, str(tmp_path / "code"))
    code_cache.cache_dir.cache_clear()
    yield tmp_path / "code"
    code_cache.cache_dir.cache_clear()


def _run(code: Any) -> object:
    ns: dict[str, object] = {}
    exec(code, ns)  # noqa: S102
    return ns["f"]()  # type: ignore[operator]


def test_code_is_compiled_once_and_then_read(cache_in: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _run(code_cache.compiled(SOURCE, "<t>")) == 42
    (kept,) = cache_in.glob("*.code")
    calls = []
    monkeypatch.setattr(code_cache, "compile", lambda *a: calls.append(a), raising=False)
    assert _run(code_cache.compiled(SOURCE, "<t>")) == 42 and calls == []
    assert marshal.loads(kept.read_bytes()) == (SOURCE, code_cache.compiled(SOURCE, "<t>"))


def test_a_damaged_entry_is_compiled_again_and_replaced(cache_in: Path) -> None:
    code_cache.compiled(SOURCE, "<t>")
    (kept,) = cache_in.glob("*.code")
    other = compile("def f():\n    return 41\n", "<t>", "exec")
    for damage in (
        b"",
        b"\x00garbage",
        marshal.dumps(("not", "code")),
        marshal.dumps(other),  # the format before the source was kept beside the code
        marshal.dumps((SOURCE, compile(SOURCE, "<elsewhere>", "exec"))),
    ):
        kept.write_bytes(damage)
        assert _run(code_cache.compiled(SOURCE, "<t>")) == 42
        source, code = marshal.loads(kept.read_bytes())
        assert source == SOURCE and code.co_filename == "<t>"


def test_another_sources_code_under_the_same_name_is_never_used(
    cache_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file name is a checksum: where two sources meet under one name (forced here), each
    entry is compared with the source in full, and the other source's code is compiled again."""
    monkeypatch.setattr(code_cache, "entry_name", lambda source, filename: "same")
    other = "def f():\n    return 41\n"
    assert _run(code_cache.compiled(other, "<t>")) == 41
    assert _run(code_cache.compiled(SOURCE, "<t>")) == 42
    assert _run(code_cache.compiled(other, "<t>")) == 41
    assert [p.name for p in cache_in.glob("*.code")] == ["same.code"]


def test_an_unwritable_cache_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(code_cache.ENV, str(blocker / "code"))  # under a file: cannot be made
    code_cache.cache_dir.cache_clear()
    try:
        assert _run(code_cache.compiled(SOURCE, "<t>")) == 42
    finally:
        code_cache.cache_dir.cache_clear()


def test_off_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(code_cache.ENV, "off")
    code_cache.cache_dir.cache_clear()
    try:
        assert code_cache.cache_dir() is None
        assert _run(code_cache.compiled(SOURCE, "<t>")) == 42
    finally:
        code_cache.cache_dir.cache_clear()


def test_a_load_fills_the_cache_and_answers_the_same_from_it(tmp_path: Path) -> None:
    """Two pure-Python one-shot runs: the first compiles the decoders and writes them, the second
    reads them; both print the same answer."""
    env = {"METASHELL_CODE_CACHE": str(tmp_path / "code"), "METASHELL_ENGINE": "python"}
    import os

    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "demo"

    def run() -> str:
        return subprocess.run(
            [sys.executable, "-m", "metashell", "-d", str(fixture), "log", "--json", "--all"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **env},
        ).stdout

    first = run()
    kept = sorted(p.name for p in (tmp_path / "code").glob("*.code"))
    assert len(kept) > 5
    assert run() == first
    assert sorted(p.name for p in (tmp_path / "code").glob("*.code")) == kept
