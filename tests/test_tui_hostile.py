"""Metadata that tries to *act* in the TUI: names that are Rich/Textual markup or terminal escapes.

Rich and Textual parse a plain ``str`` as markup.  A topic named ``[/]`` used to crash the TUI; a
topic named ``[@click=app.toggle('redact')]x[/]`` made a click turn redaction off; ``[link=...]``
became a real OSC 8 hyperlink; and the search palette wrote a topic name's escape sequences to the
terminal.  Every string from the metadata must show literally, in every field the TUI shows, and a
click anywhere on it must do nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_terminal_safety import CONTROL, NASTY, write_log
from test_tui import _text, drive, visit_all
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import OptionList, Tree
from tui_wait import palette_hit, settled, until

from metashell.tui.app import MetashellApp
from metashell.tui.detail import literal

SHOT_DIR = "/tmp/metashell-hostile-shot"

MARKUP = [
    "[/]",  # a closing tag with nothing open: MarkupError, the TUI crashed
    (
        "[@click=app.toggle('redact')]x[/][link=https://example.invalid/]z[/link]"
        f"[@click=app.screenshot('pwned.svg','{SHOT_DIR}')]y[/]"
    ),  # a click turned redaction off, wrote a file anywhere, opened a link
    "[bold red]loud[",
]


def _renderable_acts(renderable: Any) -> list[str]:
    """Click actions and hyperlinks in what ``renderable`` draws (cheaper than the screen scan)."""
    import io

    from rich.console import Console

    console = Console(width=160, color_system=None, file=io.StringIO())
    found = []
    for segment in console.render(renderable):
        style = segment.style
        if style is not None and (style.link or "@click" in (style.meta or {})):
            found.append(segment.text)
    return found


def _acting_cells(app: MetashellApp, selectors: tuple[str, ...]) -> list[tuple[int, int, str]]:
    """Cells of the given widgets whose style would act: a click action or a hyperlink."""
    bad = []
    for selector in selectors:
        region = app.query_one(selector).region
        for y in range(region.y, region.bottom):
            for x in range(region.x, region.right):
                style = app.screen.get_style_at(x, y)
                meta = style.meta or {}
                if "@click" in meta or style.link:
                    bad.append((x, y, str(meta.get("@click") or style.link)))
    return bad


@pytest.mark.parametrize("name", MARKUP, ids=range(len(MARKUP)))
def test_markup_in_metadata_is_shown_literally_and_never_acts(tmp_path: Path, name: str) -> None:
    """The hostile string is a topic, listener name and host, rack, config, quota entity, SCRAM user,
    ACL principal and host, token owner, and the cluster id in meta.properties: the TUI starts, every
    node shows, the name reads literally, no cell carries a click action or a link, and clicking all
    over the tree and the detail pane changes nothing (redaction stays on, no file is written)."""
    import shutil

    shutil.rmtree(SHOT_DIR, ignore_errors=True)
    write_log(tmp_path, name)

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        assert name in app.sub_title  # the cluster id, literally
        tree = app.query_one("#tree", Tree)

        def check(item: Any) -> None:
            assert not _renderable_acts(item.label), item.label
            if item.data and not item.data.startswith("\0"):
                assert not _renderable_acts(app.shown), item.data

        assert await visit_all(app, pilot, check) > 40
        app.go_to(f"/topics/{name}")
        await settled(pilot)
        shown = _text(app.shown)
        assert f"Topic: {name}" in shown, shown
        assert not _acting_cells(app, ("#tree", "#detail-scroll", "#facts", "Header"))
        detail = app.query_one("#detail-scroll").region
        label = next(i for i, line in enumerate(tree._tree_lines) if line.node.data == app.selected)
        label_y = tree.region.y + label - int(tree.scroll_offset.y)
        rows = [(detail, detail.y), (detail, detail.y + 1), (tree.region, label_y)]
        for region, y in rows:  # a click on every other cell where the name is drawn
            for x in range(region.x, min(region.x + len(name) + 12, region.right), 2):
                if region.y <= y < region.bottom:
                    await pilot.click(offset=(x, y))
        await settled(pilot)
        assert app.redact
        app.go_to("/brokers/1")
        await pilot.press("y")  # copy path: a notification quoting the path
        await settled(pilot)
        app.notify(f"leader {name}")  # the live leader note quotes metadata too
        await settled(pilot)
        assert not _acting_cells(app, ("#tree", "#detail-scroll", "#facts"))

    app = drive(tmp_path, steps)
    assert app.redact
    assert not Path(SHOT_DIR).exists()


def test_literal_is_text_never_markup() -> None:
    text = literal("[@click=app.quit]x[/]\x1b[2J")
    assert text.plain == "[@click=app.quit]x[/]\\x1b[2J"
    assert not text.spans


def test_the_search_palette_shows_escapes_visibly(tmp_path: Path) -> None:
    """Topic names holding OSC 52, OSC 0 and CSI 2J: the palette's hits show them escaped (nothing
    raw reaches the terminal), and choosing a hit still goes to the real topic."""
    name = "ev\x1b]0;owned\x07il\x1b]52;c;aGk=\x07\x1b[2J" + NASTY
    write_log(tmp_path, name)

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        app._searchable()
        await pilot.press("slash")
        await settled(pilot)
        await pilot.press(*"ev")
        await until(pilot, lambda: "/topics/ev" in palette_hit(app), "the palette's hit")
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        options = palette.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert any("/topics/ev" in p for p in prompts), prompts
        for prompt in prompts:
            assert not CONTROL.search(prompt), repr(prompt)
        await pilot.press("enter")
        await settled(pilot)
        assert app.selected == f"/topics/{name}"

    drive(tmp_path, steps)


def test_a_name_with_a_slash_is_labelled_whole(tmp_path: Path) -> None:
    """A topic named ``a/b`` (only hostile metadata has one) is labelled ``a/b``, not ``b``."""
    write_log(tmp_path, "left/right")

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        tree = app.query_one("#tree", Tree)
        topics = next(c for c in tree.root.children if c.data == "/topics")
        topics.expand()
        await settled(pilot)
        labels = [c.label.plain for c in topics.children]
        assert "left/right" in labels, labels

    drive(tmp_path, steps)


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.text(
        st.one_of(
            st.sampled_from("[]/=@'()\\\x1b\x07\n\t\u009b"),
            st.characters(codec=None, exclude_categories=["Cs"]),
        ),
        min_size=1,
        max_size=16,
    ).filter(lambda s: "/" not in s and s not in (".", "..") and s.strip() == s)
)
@example("[@click=app.toggle('redact')]x[/]\x1b]0;t\x07\n")
def test_any_name_shows_literally_in_every_node(tmp_path_factory: Any, name: str) -> None:
    """Names drawn from markup characters, escapes and every code point: the TUI starts, every node
    shows without an error, nothing in the tree or the detail pane acts, and the topic's page names
    it as ``visible`` writes it."""
    from metashell.safe_text import visible

    tmp = tmp_path_factory.mktemp("tui-any")
    write_log(tmp, name)

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        def check(item: Any) -> None:
            assert not _renderable_acts(item.label), item.label
            assert not CONTROL.search(_text(item.label)), item.label

        assert await visit_all(app, pilot, check) > 40
        app.go_to(f"/topics/{name}")
        await settled(pilot)
        shown = _text(app.shown)
        assert visible(name) in shown.replace("\n", ""), shown
        assert not CONTROL.search(shown.replace("\n", "")), shown
        assert not _acting_cells(app, ("#tree", "#detail-scroll", "#facts", "Header"))

    app = drive(tmp, steps)
    assert app.redact
