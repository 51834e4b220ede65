"""``metashell --tui -q``: the TUI follows a REAL Kafka 4.4 controller quorum while topics are
created and deleted, keeping the selection, and its only controller is killed and restarted (the status
says reconnecting, then connected, and following goes on), with Textual's pilot driving it."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest
from textual.widgets import Tree

from metashell.shell.sources import open_live
from metashell.tui.app import MetashellApp

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

VERSION = "4.4.0"


def test_the_tree_follows_topics_created_and_deleted(kafka_cluster: Any) -> None:
    cluster = kafka_cluster(VERSION, "combined")
    bs = cluster.bootstrap_servers

    def admin(*args: str) -> None:
        cluster.admin("kafka-topics", "--bootstrap-server", bs, *args, check=True)

    admin("--create", "--topic", "first", "--partitions", "2", "--replication-factor", "1")
    source = open_live(cluster.controller_bootstrap, None, lambda _w: None, True)
    app = MetashellApp(source, start_path="/topics")

    names: Any = None

    async def until(what: str, check: Any, pilot: Any, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, f"the TUI never showed {what}: {app.sub_title} {names()}"
            await pilot.pause(0.5)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            tree = app.query_one("#tree", Tree)
            topics = next(c for c in tree.root.children if c.data == "/topics")
            topics.expand()

            nonlocal names

            def names() -> list[str]:
                return [c.data.rsplit("/", 1)[-1] for c in topics.children if c.data]

            await until("the first topic", lambda: "first" in names(), pilot)
            assert "leader" in app.sub_title and "epoch" in app.sub_title  # live status
            app.go_to("/topics/first")
            admin("--create", "--topic", "second", "--partitions", "3", "--replication-factor", "1")
            await until("the new topic", lambda: "second" in names(), pilot)
            assert app.changed.get("/topics/second") is True  # marked as new
            assert app.selected == "/topics/first"  # selection kept
            await pilot.press("p")  # pause
            admin("--delete", "--topic", "first")
            await until(
                "the pause counting the deletion",
                lambda: re.search(r"PAUSED: [1-9][0-9]* change", app.sub_title) is not None,
                pilot,
            )
            assert "first" in names()  # paused: unchanged
            await pilot.press("p")  # follow again
            await until("the deleted topic gone", lambda: "first" not in names(), pilot)
            assert "connected" in app.sub_title
            cluster.node(1).kill()  # the only controller dies
            await until("reconnecting", lambda: "reconnecting" in app.sub_title, pilot, timeout=90)
            cluster.node(1).start()
            await until(
                "connected again",
                lambda: "connected" in app.sub_title and "reconnecting" not in app.sub_title,
                pilot,
                timeout=180,
            )
            assert app.leader_changes and app.leader_changes[-1][0] == 1  # re-elected, told
            admin("--create", "--topic", "third", "--partitions", "1", "--replication-factor", "1")
            await until("a topic created after the restart", lambda: "third" in names(), pilot, timeout=90)
            await pilot.press("q")

    try:
        asyncio.run(main())
    finally:
        source.close()
