"""``metashell --tui``: driven with Textual's own pilot on fixtures and the corpus, and started in a
real pty to see it draw, quit and give the terminal back."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, REPO, corpus_dirs
from partitions import partition
from rich.console import Console
from rich.text import Text
from textual.pilot import Pilot
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static, Tree
from tui_wait import palette_hit, run_keys, run_line, settled, until

import metashell.tui.metadata_tree as tui_tree
from metashell.shell.sources import open_directory
from metashell.tui.app import MetashellApp

DEMO = FIXTURES / "demo"


def _text(renderable: Any) -> str:
    console = Console(record=True, width=160, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def drive(
    path: Path, steps: Callable[[MetashellApp, Pilot[Any]], Awaitable[None]], **kwargs: Any
) -> MetashellApp:
    app = MetashellApp(open_directory(str(path), lambda _w: None, True), **kwargs)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            await steps(app, pilot)

    asyncio.run(main())
    return app


async def command(app: MetashellApp, pilot: Pilot[Any], line: str) -> str:
    await run_line(pilot, line)
    return _text(app.shown)


def test_first_screen_lists_the_root_and_a_topic_is_a_partition_table() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        tree = app.query_one("#tree", Tree)
        top = [c.data for c in tree.root.children]
        assert {"/topics", "/brokers", "/controllers", "/configs", "/image", "/health"} <= set(top)
        shown = _text(app.shown)
        counts = {line.split()[0]: line.split()[1] for line in shown.splitlines() if len(line.split()) == 2}
        assert counts["topics"] == "3" and counts["partitions"] == "12" and counts["brokers"] == "1"
        assert "metadata.version   4.4-IV2" in shown
        assert "cluster " in app.sub_title
        facts = app.facts_line()  # the header's second line: where the view stands in the log
        assert re.match(
            r"offset \d+ \(epoch \d+\) at \d{4}-\d\d-\d\dT[\d:.]+Z  \|  metadata.version 4.4-IV2  \|  ", facts
        )
        assert facts in _text(app.query_one("#facts", Static).render())
        app.go_to("/topics/orders")
        await settled(pilot)
        table = _text(app.shown)
        assert "Topic: orders" in table and "PartitionCount: 6" in table
        assert (
            table.count("\n0 ") + table.count("\n5 ") == 2 and "none" in table
        )  # leaders: the broker is fenced
        assert tree.cursor_node is not None and tree.cursor_node.data == "/topics/orders"
        await settled(pilot)  # the health report, worked out in a thread
        assert app.badges["/brokers/1"] == "fenced" and app.badges["/topics/orders"] == "offline"
        assert "CRITICAL: 12 offline partition(s)" in app.sub_title
        assert str(tree.cursor_node.label) == "orders  offline"

    drive(DEMO, steps)


def test_back_forward_and_history_of_the_selection() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        app.go_to("/topics/orders")
        app.go_to("/brokers/1")
        await settled(pilot)
        await pilot.press("left_square_bracket")
        await settled(pilot)
        assert app.selected == "/topics/orders"
        await pilot.press("right_square_bracket")
        await settled(pilot)
        assert app.selected == "/brokers/1"
        await run_keys(pilot, "h")
        assert "RegisterBrokerRecord" in _text(app.shown)

    drive(DEMO, steps)


def test_keys_expand_and_select() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        tree = app.query_one("#tree", Tree)
        brokers = next(c for c in tree.root.children if c.data == "/brokers")
        tree.move_cursor(brokers)
        await pilot.press("space")  # expand
        await settled(pilot)
        assert [c.data for c in brokers.children] == ["/brokers/1"]
        await pilot.press("down")
        await settled(pilot)
        assert app.selected == "/brokers/1"
        shown = _text(app.shown)
        assert "listeners" in shown and '"fenced": true' in shown and "PLAINTEXT" in shown

    drive(DEMO, steps)


def test_the_command_line_runs_the_shell_and_cd_moves_the_tree() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        out = await command(app, pilot, "cd /topics/payments")
        assert app.shell.cwd == "/topics/payments" and app.selected == "/topics/payments"
        assert "Topic: payments" in out
        out = await command(app, pilot, "ls")
        assert out.split() == ["0", "1", "2", "3", "configs", "id", "name"]
        out = await command(app, pilot, ":pwd")  # a leading ':' is fine
        assert out.strip() == "/topics/payments"
        out = await command(app, pilot, "cat /nope")
        assert "cat: /nope: No such file or directory" in out
        out = await command(app, pilot, "health")
        assert out.splitlines()[0].startswith("CRITICAL")

    drive(DEMO, steps)


def test_at_moves_the_whole_view_through_time() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await command(app, pilot, "at 366")
        assert app.shell.point == "@366" and "at @366" in app.sub_title
        assert json.loads(await command(app, pilot, "cat /topics/slowmove/0"))["replicas"] == [5, 4]
        await command(app, pilot, "at 365")
        assert json.loads(await command(app, pilot, "cat /topics/slowmove/0"))["replicas"] == [4]
        app.go_to("/topics/slowmove/0")
        await settled(pilot)
        assert '"adding_replicas"' not in _text(app.shown) and '"addingReplicas": []' in _text(app.shown)
        await command(app, pilot, "at")
        assert app.shell.point is None and "at @" not in app.sub_title

    drive(FIXTURES / "kafka-4.4-broker", steps)


def test_after_at_every_view_describes_the_point_shown() -> None:
    """The issue's repro: ``:at 50`` on the demo kept the end's CRITICAL verdict and the
    ``orders offline`` badge beside tables where orders has leader 1; ``--at 50 health`` is HEALTHY."""
    from test_cli import run_cli

    _status, out, _err = run_cli("-d", str(DEMO), "--at", "50", "health")
    assert out.startswith("HEALTHY")

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await settled(pilot)
        assert app.health is not None and not app.health.healthy and "/topics/orders" in app.badges
        await command(app, pilot, "at 50")
        await settled(pilot)
        assert app.health is not None and app.health.healthy, app.health.verdict()
        assert "/topics/orders" not in app.badges
        assert app.sub_title.startswith("at @50") and "HEALTHY" in app.sub_title
        assert app.sub_title.index("HEALTHY") < app.sub_title.index("cluster ")  # the cluster id last
        tree = app.query_one("#tree", Tree)
        topics = next(c for c in tree.root.children if c.data == "/topics")
        topics.expand()
        await settled(pilot)
        assert all("offline" not in c.label.plain for c in topics.children)
        await command(app, pilot, "at 30")  # the tree stays expanded across a move in time
        topics = next(c for c in tree.root.children if c.data == "/topics")
        assert topics.is_expanded and {c.label.plain.split()[0] for c in topics.children} >= {"orders"}
        await command(app, pilot, "at")
        await settled(pilot)
        assert app.health is not None and not app.health.healthy

    drive(DEMO, steps)


def test_ctrl_p_opens_the_palette_and_a_command_gives_the_tree_back_its_focus() -> None:
    """docs/tui.md promises Ctrl-P; it did nothing (the tree took the key).  After a ``:`` command
    the focus stayed in the command line, so the arrow keys did not move in the tree."""
    from textual.command import CommandPalette

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await command(app, pilot, "ls /topics")
        assert isinstance(app.focused, Tree)
        await pilot.press("ctrl+p")
        await settled(pilot)
        assert isinstance(app.screen, CommandPalette)

    drive(DEMO, steps)


def test_search_finds_paths_by_name() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        assert "/topics/orders" in app.search_paths("ord")
        assert "/topics/payments" in app.search_paths("pym")  # letters in order
        assert list(app.search_paths("zzzz")) == []
        await pilot.press("slash")
        await settled(pilot)
        await pilot.press(*"paym")
        await until(pilot, lambda: "payments" in palette_hit(app), "the palette lists payments")
        await pilot.press("enter")
        await settled(pilot)
        assert app.selected == "/topics/payments"

    drive(DEMO, steps)


def test_big_directories_are_paged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tui_tree, "PAGE", 2)

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        tree = app.query_one("#tree", Tree)
        assert [str(c.label) for c in tree.root.children][-1].startswith("... ")
        app.go_to("/topics")  # pages through / until it is there
        await settled(pilot)
        topics = next(c for c in tree.root.children if c.data == "/topics")
        topics.expand()
        await settled(pilot)
        labels = [str(c.label).split("  ")[0] for c in topics.children]
        assert labels == ["clickstream", "orders", "... 1 more"]
        app.go_to("/topics/payments")  # past the page: loads the rest
        await settled(pilot)
        assert [c.data for c in topics.children] == [
            "/topics/clickstream",
            "/topics/orders",
            "/topics/payments",
        ]

    drive(DEMO, steps)


def test_a_record_is_indented_json_and_a_broker_has_its_listener_table() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        shown = _text(app.shown)
        assert "\\x0a" not in shown  # newlines of the JSON are newlines
        lines = shown.splitlines()
        assert lines[0].split() == ["listeners"] and lines[1].split() == ["name", "host", "port", "protocol"]
        assert '  "id": 1,' in lines and '  "fenced": true,' in lines

    drive(DEMO, steps, start_path="/brokers/1")


def test_an_svg_screenshot_for_the_incident_notes(tmp_path: Path) -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        app.action_screenshot(filename="incident.svg", path=str(tmp_path))

    drive(DEMO, steps, start_path="/topics/orders")  # quits at once after the screenshot
    svg = (tmp_path / "incident.svg").read_text()
    assert svg.startswith("<svg") and "Topic:" in svg and "orders" in svg

    # nothing is left waiting on the app that quit (Textual's own delivery thread once was, and the
    # interpreter then waited for it for ever at exit)
    def stuck() -> list[str]:
        return [t.name for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]

    deadline = time.monotonic() + 60
    while stuck() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not stuck()


def test_the_palette_screenshot_lands_in_the_current_directory_without_a_downloads_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/Downloads, as on most servers
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    saved: list[str | None] = []

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        saved.append(app.deliver_screenshot())  # what Ctrl-P "Screenshot" calls
        await settled(pilot)

    drive(DEMO, steps)
    assert saved[0] is not None and Path(saved[0]).parent == tmp_path
    assert Path(saved[0]).read_text().startswith("<svg")


def test_start_path_copy_and_quit() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        assert app.selected == "/topics/orders/3"
        await pilot.press("y")
        assert app.clipboard == "/topics/orders/3"
        await pilot.press("q")

    app = drive(DEMO, steps, start_path="/topics/orders/3")
    assert not app.is_running


@pytest.mark.parametrize("corpus", corpus_dirs())
def test_every_corpus_directory_opens_and_shows_its_topics(corpus: Path) -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        image = app.shell.root.ctx.image
        for name in sorted(image.topics.by_name)[:3]:
            app.go_to(f"/topics/{name}")
            await settled(pilot)
            assert f"PartitionCount: {len(image.topics.by_name[name].partitions)}" in _text(app.shown)
        out = await command(app, pilot, "ls /brokers")
        assert out.split() == [str(b) for b in sorted(image.cluster.brokers)]

    drive(corpus, steps)


def test_in_a_real_terminal_it_draws_quits_and_restores_the_screen(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM="xterm-256color", HOME=str(tmp_path), COLUMNS="80", LINES="24")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "metashell", "-d", str(DEMO), "--tui"],
        env=env,
        cwd=str(REPO),
        encoding="utf-8",
        timeout=30,
        dimensions=(24, 80),
    )
    child.expect_exact("\x1b[?1049h")  # the alternate screen
    child.expect("topics")
    child.expect("Quit")  # the footer's key map
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "\x1b[?1049l" in (child.before or "")  # back on the main screen


def test_tui_refuses_commands_and_a_bad_source_before_taking_the_screen() -> None:
    from test_cli import run_cli

    status, out, err = run_cli("-d", str(DEMO), "--tui", "-c", "ls")
    assert status == 2 and "--tui is interactive" in err and out == ""
    status, out, err = run_cli("-d", str(DEMO), "--tui")  # no terminal: it never exited, and spun a core
    assert (
        status == 2
        and out == ""
        and err.startswith("metashell: error: --tui needs a terminal")
        and err.count("\n") == 1
    )


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["-d", "/nonexistent", "--tui"], 1, "error: /nonexistent: no such file or directory"),
        (["-d", str(DEMO), "--tui", "--path", "/nope"], 2, "--path /nope: no such node in this metadata"),
    ],
)
def test_tui_fails_before_taking_the_screen(args: list[str], status: int, message: str) -> None:
    import pexpect

    child = pexpect.spawn(
        sys.executable,
        ["-m", "metashell", *args],
        cwd=str(REPO),
        encoding="utf-8",
        timeout=30,
        dimensions=(24, 80),
    )
    child.expect(pexpect.EOF)
    child.close()
    out = child.before or ""
    assert child.exitstatus == status and message in out, out
    assert "\x1b[?1049h" not in out  # the alternate screen was never taken


def test_the_help_screen_lists_keys_and_commands_and_filters_as_you_type() -> None:
    from metashell.tui.help import HelpScreen

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await pilot.press("question_mark")
        await settled(pilot)
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        everything = {row[1] for row in screen.shown}
        assert {"q", "y", "o", "[", "?", ":history", ":describe", ":at"} <= everything
        await pilot.press(*"hist")
        await settled(pilot)
        assert {row[1] for row in screen.shown} == {"h", ":history"}
        await pilot.press(*" command")  # every word must match
        await settled(pilot)
        assert [row[1] for row in screen.shown] == [":history"]
        await pilot.press("escape")
        await settled(pilot)
        assert not isinstance(app.screen, HelpScreen)
        assert app.focused is app.query_one("#tree", Tree)

    drive(DEMO, steps)


def test_control_characters_in_metadata_are_shown_visibly_everywhere(tmp_path: Path) -> None:
    """A hostile directory (every attacker-held string an escape sequence) walked node by node: no
    tree label, detail pane, status line or command output holds a control character."""
    from test_terminal_safety import CONTROL, NASTY, write_log

    write_log(tmp_path, NASTY)

    def clean(text: str, where: str) -> None:
        bad = CONTROL.findall(text)
        assert not bad, f"{where}: {bad!r} in {text!r}"

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        clean(app.sub_title, "status line")
        clean(app.facts_line(), "header facts line")

        def check(item: Any) -> None:
            clean(item.label.plain, "tree label")
            if item.data and not item.data.startswith("\0"):
                clean(_text(app.shown), f"detail of {item.data!r}")

        assert await visit_all(app, pilot, check) > 60
        for line in ("ls -l /topics", "find /", "cat /brokers/1/*", "describe", "health"):
            clean(await command(app, pilot, line), line)
        await pilot.press("question_mark")
        await settled(pilot)

    drive(tmp_path, steps)


async def visit_all(app: MetashellApp, pilot: Pilot[Any], check: Callable[[Any], None]) -> int:
    """Expand the whole tree, show every node, and call ``check(item)`` on each (its label, and what
    the detail pane shows for it); returns how many nodes were shown."""
    todo = [app.query_one("#tree", Tree).root]
    seen = 0
    while todo:
        item = todo.pop()
        if item.data and not item.data.startswith("\0"):
            app.go_to(item.data)
            seen += 1
        check(item)
        if item.allow_expand and not item.children:
            item.expand()
            await settled(pilot)
        todo.extend(item.children)
    return seen


def _spawn_tui(tmp_path: Path, *args: str, **env_extra: str) -> Any:
    pexpect = pytest.importorskip("pexpect")
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PAGER", "METASHELL_PAGER")}
    env.update(TERM="xterm-256color", HOME=str(tmp_path), COLUMNS="80", LINES="24", **env_extra)
    return pexpect.spawn(
        sys.executable,
        ["-m", "metashell", "-d", str(DEMO), "--tui", *args],
        env=env,
        cwd=str(REPO),
        encoding="utf-8",
        timeout=30,
        dimensions=(24, 80),
    )


def test_o_pages_the_selection_in_pager_and_comes_back(tmp_path: Path) -> None:
    import pexpect

    paged = tmp_path / "paged.txt"
    child = _spawn_tui(tmp_path, "--path", "/topics/orders/3", PAGER=f"sh -c 'cat > {paged}'")
    child.expect("Quit")
    child.send("o")
    child.expect_exact("\x1b[?1049h")  # the pager ran and the TUI took the screen back
    child.expect("Quit")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    value = json.loads(paged.read_text())  # a file node: its whole value, as cat shows it
    assert value["partition"] == 3 and value["topic"] == "orders" and "replicas" in value


def test_no_color_draws_in_shades_of_grey(tmp_path: Path) -> None:
    import re

    import pexpect

    child = _spawn_tui(tmp_path, NO_COLOR="1")
    child.expect("Quit")
    child.send("q")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    drawn = child.before or ""
    palette = [int(n) for n in re.findall(r"[34]8;5;(\d+)", drawn)]  # xterm-256color: the 256 palette
    truecolor = re.findall(r"[34]8;2;(\d+);(\d+);(\d+)", drawn)
    assert palette or truecolor, "nothing drawn in colour at all?"
    greys = {0, 7, 8, 15, 16, 231, *range(232, 256)}
    assert set(palette) <= greys, set(palette) - greys
    assert all(r == g == b for r, g, b in truecolor)
    assert not re.search(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|4[0-7]|10[0-7])m", drawn)  # no 16-colour codes


def test_watch_streams_into_the_pane_and_escape_stops_it_leaving_the_ui_responsive(tmp_path: Path) -> None:
    """``:watch`` ran on the UI thread and froze the TUI for good (Ctrl-C could not get through).
    It now runs on a worker, its lines stream into the detail pane, and Escape stops it."""
    import shutil

    copy = tmp_path / "demo"
    shutil.copytree(DEMO, copy)

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await pilot.press("colon", *"watch --interval 0.1 /topics", "enter")
        await until(pilot, lambda: "watching /topics from offset" in _text(app.shown), "watch streamed")
        assert app.command_running()
        await pilot.press("escape")
        await until(pilot, lambda: not app.command_running(), "Escape stopped watch")
        assert isinstance(app.focused, Tree)
        out = await command(app, pilot, "pwd")  # the UI answers
        assert out.strip() == "/"

    drive(copy, steps)


def test_a_slow_command_runs_on_a_worker_and_a_second_one_waits_its_turn() -> None:
    from metashell.shell.registry import TuiMode
    from metashell.tui.command_runner import line_mode

    assert line_mode("describe").mode is TuiMode.WORKER
    assert line_mode("ls /topics; cd /").mode is TuiMode.INLINE
    assert line_mode("ls; health").mode is TuiMode.WORKER
    assert line_mode("at 5; describe").mode is TuiMode.INLINE  # moves the image: never beside the tree
    assert line_mode("watch /topics | grep x").mode is TuiMode.STREAM
    assert line_mode("clear").refusal == "clear: not available in the TUI"
    assert line_mode("at 5; watch").mode is TuiMode.REFUSE
    assert line_mode("nosuch 'unclosed").mode is TuiMode.INLINE  # the shell says what is wrong

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        out = await command(app, pilot, "describe orders")
        assert "Topic: orders" in out
        out = await command(app, pilot, "clear")
        assert out.strip() == "clear: not available in the TUI"

    drive(DEMO, steps)


def test_search_finds_quotas_and_partitions() -> None:
    """The search list named ``clientQuotas`` where the tree says ``quotas``: no quota could be
    found; partitions were never in it.  The index now comes from the tree itself."""
    from metashell.tui.search import DEPTH, SKIPPED

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        assert "/quotas/user=alice" in app.search_paths("alice")
        assert list(app.search_paths("orders/3")) == ["/topics/orders/3"]
        assert "/configs/topic/orders" in app.search_paths("orders")
        top = {p.split("/")[1] for p in app.search_paths("")} | {p.split("/")[1] for p in app._searchable()}
        assert top == set(app.shell.root.child_names()) - set(SKIPPED)  # every folder but the skipped
        assert max(p.count("/") for p in app._searchable()) == DEPTH

    drive(DEMO, steps)


# -- issue 25, items 9 and 11 --------------------------------------------------------------------------


def test_command_output_never_wraps_and_w_gives_it_the_whole_width() -> None:
    """``:log`` rows wrapped into two lines beside the tree; now each row is one line (scrolled
    sideways), ``w`` hides the tree, and ``h`` opens a history at its newest entry."""

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await command(app, pilot, "log --from 60")
        pane = app.query_one("#detail", Static)
        rows = app.output.getvalue().splitlines()
        # the pane is as wide as its longest row (scrolled sideways), so no row wraps
        assert len(rows) == 11 and pane.size.width >= max(len(r) for r in rows)
        assert isinstance(app.shown, Text) and app.shown.no_wrap
        await command(app, pilot, "health")  # sentences: wrapped to the pane (Command.prose)
        assert isinstance(app.shown, Text) and not app.shown.no_wrap
        assert pane.size.width <= app.query_one("#detail-scroll").size.width
        tree = app.query_one("#tree", Tree)
        await pilot.press("escape", "w")
        await settled(pilot)
        assert not tree.display
        assert app.query_one("#detail-scroll").outer_size.width == 160
        await pilot.press("w")
        await settled(pilot)
        assert tree.display and tree.has_focus
        app.go_to("/topics/orders/0")
        await settled(pilot)
        await run_keys(pilot, "h")
        scroll = app.query_one("#detail-scroll")
        assert "partition created" in _text(app.shown)
        assert scroll.scroll_y == scroll.max_scroll_y  # two lines: at the newest entry, unscrolled

    app = MetashellApp(open_directory(str(DEMO), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(160, 12)) as pilot:
            await settled(pilot)
            await steps(app, pilot)

    asyncio.run(main())


def test_the_overview_counts_agree_with_the_tree_and_the_hint_follows_the_finding() -> None:
    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await settled(pilot)
        app.go_to("/")
        await settled(pilot)
        shown = _text(app.shown)
        features = len(app.shell.root.child("features").child_names())
        assert re.search(rf"^features +{features} *$", shown, re.MULTILINE), shown
        assert re.search(r"^controllers +1 voter\(s\), 1 registered *$", shown, re.MULTILINE), shown
        assert "next: describe --unavailable-partitions" in shown
        assert ":health lists them" not in shown
        app.go_to("/topics/orders")
        await settled(pilot)
        shown = _text(app.shown)
        assert "Configs: cleanup.policy=delete,max.message.bytes=2097152,retention.ms=604800000" in shown
        tree = app.query_one("#tree", Tree)
        orders = tree.cursor_node
        assert orders is not None
        orders.expand()
        await settled(pilot)
        labels = {c.data: c.label.plain for c in orders.children}
        assert labels["/topics/orders/0"] == "0  offline"  # partitions carry badges too

    drive(DEMO, steps)


def test_a_zero_directory_id_is_named_not_shown_as_a_uuid() -> None:
    from metashell.image.model import LOST_DIR, MIGRATING_DIR, Topic
    from metashell.tui.detail import partition_table

    p = partition(leader=1, replicas=(1, 2), isr=(1,), directories=(MIGRATING_DIR, LOST_DIR))
    text = _text(partition_table(Topic("t", b"\x01" * 16, {0: p})))
    assert "migrating,lost" in text and "AAAAAAAA" not in text


def test_at_80_columns_a_long_name_keeps_both_ends_and_its_badge(tmp_path: Path) -> None:
    """Two long topic names that differ only at the end stay told apart, badge visible."""

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        tree = app.query_one("#tree", tui_tree.MetadataTree)
        tree.badges = {"/topics/audit.cdc.v1-0004845": "offline"}
        app.go_to("/topics/audit.cdc.v1-0004845")
        await settled(pilot)
        from textual.geometry import Region

        strips = tree.render_lines(Region(0, 0, tree.size.width, tree.size.height))
        text = "\n".join(strip.text for strip in strips)
        assert "…04845  offline" in text and "audit.cdc.v1-0004846" in text, text

    from metashell.log.encoding import build_batch
    from metashell.protocol.metadata import encode_metadata_record as enc

    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    records = [
        enc("TopicRecord", 0, {"Name": f"audit.cdc.v1-000484{n}", "TopicId": bytes([n]) * 16}) for n in (5, 6)
    ]
    (part / "00000000000000000000.log").write_bytes(build_batch(0, 1, records, 1))
    app = MetashellApp(open_directory(str(part), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settled(pilot)
            await steps(app, pilot)

    asyncio.run(main())


def test_background_work_waits_while_keys_are_pressed() -> None:
    """Issue 25, item 12: at a million partitions the first keys after the first screen waited
    seconds for the health report working beside them; the report now waits for the keys."""

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await app.workers.wait_for_complete()
        app.health = None
        app.shell.root.ctx._memo.clear()
        app.ui_first.last_input = time.monotonic() + 3600  # someone is typing (for an hour)
        app.check_health()
        await pilot.pause(0.3)
        assert app.health is None  # it waits at its first pace point
        await pilot.press("down")  # a key: the UI answers at once
        app.ui_first.last_input = 0.0
        await until(pilot, lambda: app.health is not None, "the report came once the keys stopped")

    drive(DEMO, steps)


def test_the_tui_walkthrough_in_the_docs() -> None:
    """``docs/tui.md``'s walk-through, step by step, on the corpus cluster it names."""
    from conftest import shared_required

    cluster = shared_required("corpus", "ftmhxp+real-time-data-streaming-pipeline@kafka1")

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        await settled(pilot)
        # 1. the first screen
        assert "CRITICAL: 51 offline partition(s)" in app.sub_title
        shown = _text(app.shown)
        assert "51 offline partition(s) (no live leader)" in shown and "3 fenced broker(s)" in shown
        assert "next: describe --unavailable-partitions; " in shown
        # 2. why: :health, the cause under the offline partitions; w: the whole width
        shown = await command(app, pilot, "health")
        assert (
            "cause: the cluster was stopped: every broker was fenced after a controlled shutdown; "
            "the last, broker 2, at 2025-11-19T19:34:39.657Z (offset 13055)"
        ) in shown
        await pilot.press("escape", "w")
        await settled(pilot)
        assert not app.query_one("#tree", Tree).display
        await pilot.press("w")
        # 3. /brokers/2 (badged fenced), h: its history at the newest entry
        app.go_to("/brokers/2")
        await settled(pilot)
        assert app.badges["/brokers/2"] == "fenced"
        await run_keys(pilot, "h")
        lines = _text(app.shown).splitlines()
        newest = [ln for ln in lines if ln.strip()][-1]
        assert newest.split()[0] == "13055" and newest.rstrip().endswith("broker fenced")
        assert any(ln.split()[:1] == ["13001"] and "in controlled shutdown" in ln for ln in lines)
        scroll = app.query_one("#detail-scroll")
        assert scroll.scroll_y == scroll.max_scroll_y
        # 4. before the first shutdown, then back
        await command(app, pilot, "at 12896")
        await settled(pilot)
        assert app.sub_title.startswith("at @12896") and "HEALTHY" in app.sub_title
        assert not app.badges
        await command(app, pilot, "at")
        await settled(pilot)
        assert "CRITICAL" in app.sub_title

    drive(cluster, steps)


def test_node_shows_another_node_s_metadata() -> None:
    """Several -d (issue 26): ``:node 4`` swaps the tree and the header for broker 4's copy."""
    from metashell.shell.nodes import open_nodes

    dirs = [str(FIXTURES / "kafka-4.4-split-c1"), str(FIXTURES / "kafka-4.4-broker")]
    app = MetashellApp(open_nodes(dirs, lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settled(pilot)
            first = app.shell.root.ctx.image.provenance.offset
            shown = await command(app, pilot, "node")
            assert "* node 1 " in shown and "  node 4 " in shown
            await command(app, pilot, "node 4")
            assert app.shell.root.ctx.image.provenance.offset != first
            assert f"offset {app.shell.root.ctx.image.provenance.offset} " in app.facts_line()
            assert "kafka-4.4-broker" in app.facts_line()

    asyncio.run(main())


def test_n_shows_the_nodes_side_by_side_and_switches() -> None:
    """Several -d (issue 26): ``n`` puts the quorum comparison in one table, a row per node;
    Enter on a row shows that node, as ``:node ID`` does."""
    from metashell.shell.nodes import open_nodes
    from metashell.tui.nodes import COLUMNS, NodesScreen

    dirs = [str(FIXTURES / "kafka-4.4-split-c1"), str(FIXTURES / "kafka-4.4-broker")]
    app = MetashellApp(open_nodes(dirs, lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(160, 40)) as pilot:
            await settled(pilot)
            first = app.shell.root.ctx.image.provenance.offset
            await pilot.press("n")
            await settled(pilot)
            screen = app.screen
            assert isinstance(screen, NodesScreen)
            table = screen.query_one("#nodes-table", DataTable)
            rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
            assert [r[1] for r in rows] == ["1", "4"] and len(rows[0]) == len(COLUMNS)
            assert rows[0][0] == "shown newest" and rows[0][2] == "voter" and rows[1][2] == "observer"
            assert rows[0][3] == "431" and rows[0][7] == "nothing"
            assert rows[1][7] == "1: 430..430"  # the broker lacks the last election
            await pilot.press("down", "enter")
            await until(pilot, lambda: app.shell.root.ctx.image.provenance.offset != first, "node 4 shown")
            await settled(pilot)
            assert "kafka-4.4-broker" in app.facts_line()

    asyncio.run(main())


def test_n_is_offered_only_with_several_nodes() -> None:
    app = MetashellApp(open_directory(str(DEMO), lambda _w: None, True))

    async def main() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await settled(pilot)
            assert app.check_action("nodes", ()) is False  # hidden from the footer, and inert
            await pilot.press("n")
            await settled(pilot)
            assert not isinstance(app.screen, ModalScreen)

    asyncio.run(main())


def test_stats_runs_on_a_worker_and_shows_in_the_pane() -> None:
    """``:stats`` (issue 59's TUI view): the same text as the command line, in the output pane."""

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        shown = await command(app, pilot, "stats --top 2")
        assert shown.startswith("log: offsets 0-70, 71 records"), shown[:200]
        assert "churn (top 2):" in shown and "orders" in shown

    drive(DEMO, steps)


def test_quorum_streams_its_report_into_the_pane() -> None:
    """``:quorum`` runs as a stream (live, ``--interval`` asks again until Escape); on a directory it
    is one report, whole in the pane when it ends."""

    async def steps(app: MetashellApp, pilot: Pilot[Any]) -> None:
        shown = await command(app, pilot, "quorum")
        assert "leader" in shown.lower() and "running:" not in shown, shown[:300]
        refused = await command(app, pilot, "quorum --count 2")
        assert "refresh a live quorum (-q)" in refused, refused[:300]

    drive(DEMO, steps)
