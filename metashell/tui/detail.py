"""What the detail pane shows for a node of the tree, rendered for people.

A topic directory is a partition table in ``kafka-topics --describe``'s terms; a broker or a
controller is a listener table above its record; a record is highlighted JSON; a scalar is its
value; any other directory lists its children with what each holds (``ls -l``'s summaries).
Every string that came from the metadata goes through :func:`literal`: its control characters are
made visible (:func:`metashell.safe_text.visible`), and it becomes a :class:`~rich.text.Text`,
because Rich and Textual parse a plain ``str`` as markup: a topic named ``[/]`` would crash the
pane, and ``[@click=app.screenshot(...)]`` would make a click act.  Tables here hold no ``str``
cell.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from metashell.image.health import CRITICAL, HealthReport
from metashell.image.image import MetadataImage
from metashell.image.kafka_names import metadata_version_name
from metashell.image.model import LOST_DIR, MIGRATING_DIR, UNASSIGNED_DIR, Topic
from metashell.image.wording import id_list
from metashell.protocol.uuid import uuid_to_str
from metashell.safe_text import json_safe, visible
from metashell.shell.answers import topic_overrides
from metashell.times import iso_utc as iso_time
from metashell.tree import Node
from metashell.tree.summary import summarize

__all__ = ["detail", "literal", "partition_table"]

_MAX_ROWS = 500
"""Rows a table shows before it says how many more there are (a topic may have 10 000 partitions,
/topics 100 000 topics: laying out 2 000 rows took a second each time the cursor passed)."""


def literal(value: object, style: str = "") -> Text:
    """``value`` as text shown exactly as it is: never markup, no raw control character."""
    return Text(visible(str(value)), style=style)


def detail(
    parts: list[str], node: Node, redact: bool, theme: str = "monokai", health: HealthReport | None = None
) -> RenderableType:
    """The renderable for ``node`` at the path of components ``parts`` (``health``: the report, once
    it is in, for ``/``).  Components, not a path string: a hostile name may hold a ``/``."""
    if not parts:
        return overview(node.ctx.image, health)
    view = VIEWS.get(node.kind)
    shown = None if view is None else view(parts, node, redact, theme)
    if shown is not None:
        return shown
    if not node.is_dir:
        return record_view(parts, node, redact, theme) or literal(node.text(redact))
    return children_table(node, redact)


View = Callable[[list[str], Node, bool, str], "RenderableType | None"]
"""(path components, node, redact, theme) -> what the pane shows, or None for the default view."""


def topic_view(parts: list[str], node: Node, redact: bool, theme: str) -> RenderableType | None:
    """A topic (``/topics/NAME``): its config overrides, then its partitions as a table."""
    image = node.ctx.image
    topic = image.topics.by_name.get(parts[-1]) if parts[:1] == ["topics"] else None
    if topic is None:
        return None
    overrides = topic_overrides(image, topic.name, redact)
    configs = Text.assemble(
        ("Configs: ", "bold"),
        literal(
            ",".join(f"{k}={v}" for k, v in overrides)
            if overrides
            else "(no override: the brokers' defaults)"
        ),
    )
    return Group(partition_table(topic), configs)


def record_view(parts: list[str], node: Node, redact: bool, theme: str) -> RenderableType | None:
    """A record (broker, controller, partition, ACL ...): highlighted JSON, with a listener table
    above it when it has listeners; None for a plain value."""
    value = node.to_json(redact)
    if not isinstance(value, (dict, list)):
        return None
    body = Syntax(
        json_safe(json.dumps(value, indent=2, ensure_ascii=False)),
        "json",
        theme=theme,
        background_color="default",
        word_wrap=True,
    )
    if isinstance(value, dict) and isinstance(value.get("listeners"), list):
        return Group(listener_table(value["listeners"]), body)
    return body


VIEWS: dict[str, View] = {"topic": topic_view, "broker": record_view, "controller": record_view}
"""The detail view of a node kind; a kind not listed gets the default: its record or value for a
file, its children (``ls -l``'s summaries) for a directory."""


def overview(image: MetadataImage, health: HealthReport | None = None) -> RenderableType:
    """The first screen's detail: what was loaded, in counts, the health verdict and its problems
    once the report is in (it takes a second at a million partitions, so it comes after the first
    screen), and where to go from here."""
    counts = image.summary()
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    q, p = image.quorum, image.provenance
    rows = [
        ("cluster id", q.cluster_id or "unknown"),
        ("metadata.version", metadata_version_name(image.features.metadata_version)),
        ("last offset", f"{p.offset} (epoch {p.epoch})"),
        ("appended at", iso_time(p.timestamp) if p.timestamp >= 0 else "unknown"),
        ("quorum leader", "unknown" if q.leader_id is None else f"{q.leader_id} (epoch {q.leader_epoch})"),
    ]
    for k, v in rows:
        table.add_row(k, literal(v))
    if health is not None:  # before the counts: it is what an operator opens the tool for
        word = health.verdict().split(":", 1)[0]
        table.add_row("health", Text(word, style="green" if health.healthy else "bold red"))
        for f in health.problems:
            table.add_row(
                "", Text(f"{f.count} {f.title}", style="red" if f.severity == CRITICAL else "yellow")
            )
        if health.problems:  # what to run next about the worst finding: the hint matches it
            table.add_row("", Text.assemble(("next: ", "bold"), literal(health.problems[0].next_step)))
    # counts as the tree lists them: /controllers from the voters (a combined-mode or pre-3.7
    # cluster has no registrations), /features with metadata.version
    voters = len(image.quorum.voters)
    counts["controllers"] = voters or counts["controllers"]
    counts["features"] = len(image.features.finalized) + (image.features.metadata_version is not None)
    for k, n in counts.items():
        words = f"{n:,}"
        if k == "controllers" and voters:
            words += f" voter(s), {len(image.cluster.controllers):,} registered"
        table.add_row(k.replace("_", " "), literal(words))
    hint = Text.assemble(
        "\n",
        ("Enter", "bold"),
        "/",
        ("Space", "bold"),
        " expand  ",
        (":", "bold"),
        " run a command  ",
        ("/", "bold"),
        " search a path  ",
        ("?", "bold"),
        " all keys",
    )
    return Group(table, hint)


def partition_table(topic: Topic) -> RenderableType:
    """A topic as ``kafka-topics --describe`` shows it: one row per partition."""
    head = Text.assemble(
        ("Topic: ", "bold"),
        literal(topic.name),
        ("  TopicId: ", "bold"),
        uuid_to_str(topic.id),
        ("  PartitionCount: ", "bold"),
        str(len(topic.partitions)),
    )
    parts = sorted(topic.partitions.items())
    # columns that are empty for every partition are left out: on 80 columns the ones that
    # matter (leader, replicas, ISR) must not be cut
    optional = {
        "Elr": "elr",
        "LastKnownElr": "last_known_elr",
        "Adding": "adding_replicas",
        "Removing": "removing_replicas",
    }
    shown = [c for c, attr in optional.items() if any(getattr(p, attr) for _i, p in parts)]
    table = Table(box=None, header_style="bold", pad_edge=False, expand=False)
    for name in ("Partition", "Leader", "Replicas", "Isr", *shown, "Epochs"):
        table.add_column(name, no_wrap=True, min_width=len(name))
    table.add_column("Directories", no_wrap=True, overflow="ellipsis")
    for i, (pid, p) in enumerate(parts):
        if i == _MAX_ROWS:
            table.add_row(literal(f"... {len(parts) - _MAX_ROWS} more"))
            break
        leader = Text("none", style="bold red") if p.leader < 0 else Text(str(p.leader))
        isr = Text(id_list(p.isr), style="yellow" if len(p.isr) < len(p.replicas) else "")
        extra = [literal(id_list(getattr(p, optional[c]))) for c in shown]
        dirs = ",".join(DIRECTORY_WORDS.get(d) or uuid_to_str(d)[:8] for d in p.directories)
        table.add_row(
            literal(pid),
            leader,
            literal(id_list(p.replicas)),
            isr,
            *extra,
            literal(f"{p.leader_epoch}/{p.partition_epoch}"),
            literal(dirs),
        )
    return Group(head, table)


DIRECTORY_WORDS = {MIGRATING_DIR: "migrating", UNASSIGNED_DIR: "unassigned", LOST_DIR: "lost"}
"""Kafka's reserved directory ids (``DirectoryId``) by name, not as ``AAAAAAAA``: the zero id is
``MIGRATING`` (no directory recorded: a log from before JBOD, or migrated from ZooKeeper)."""


def listener_table(listeners: list[Any]) -> RenderableType:
    table = Table(box=None, header_style="bold", pad_edge=False, title="listeners", title_justify="left")
    for name in ("name", "host", "port", "protocol"):
        table.add_column(name, no_wrap=True)
    for e in listeners:
        if isinstance(e, dict):
            table.add_row(
                literal(e.get("name")),
                literal(e.get("host")),
                literal(e.get("port")),
                literal(e.get("securityProtocol", "")),
            )
    return table


def children_table(node: Node, redact: bool) -> RenderableType:
    """A directory: its children, with how many each holds or its value (first rows only).

    Plain aligned text, not a rich ``Table``: laying out a table of 500 rows took Textual 1.7 s
    each time the cursor passed ``/topicIds`` at a million partitions; text takes milliseconds."""
    names = node.child_names()
    rows: list[tuple[str, str]] = []
    for i, name in enumerate(names):
        if i == _MAX_ROWS:
            rows.append((f"... {len(names) - _MAX_ROWS} more (the tree lists them all)", ""))
            break
        child = node.child(name)
        if child is None:
            continue
        what = summarize(child, redact)
        if child.is_dir:
            what = f"{child.child_count()} entries" + (f"  {what}" if what else "")
        rows.append((visible(name + ("/" if child.is_dir else "")), visible(what)))
    width = max((len(n) for n, _w in rows), default=4)
    text = Text(f"{'name':<{width}}  holds\n", style="bold", no_wrap=True, overflow="ellipsis")
    for name, what in rows:
        text.append(f"{name:<{width}}  {what}".rstrip() + "\n", style="")
    text.rstrip()
    return text
