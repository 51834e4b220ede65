"""``node``: with several ``-d``, list the nodes or show another one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..nodes import NodeTrees, open_node
from ..registry import Command, CompletionContext, TuiMode
from ..spec import CommandError, CommandSpec, Parsed, Positional

if TYPE_CHECKING:
    from ..session import Shell


def run_node(shell: Shell, p: Parsed) -> None:
    source = shell.source
    if source is None or not source.nodes:
        raise CommandError("node: give several directories (-d A -d B ...) to switch between nodes")
    if not p.args:
        for label, path in sorted(source.nodes.items()):
            mark = "*" if label == source.node else " "
            shell.write(f"{mark} node {label}  {path}\n")
        return
    label = p.args[0].literal
    if label not in source.nodes:
        raise CommandError(f"node: {label}: no such node (nodes: {', '.join(sorted(source.nodes))})")
    trees = shell.root.ctx.source_info.get("nodes")  # /nodes: keep the trees already loaded
    other = open_node(
        source.nodes,
        label,
        shell.note,
        shell.settings.redact,
        salvage=shell.salvage,
        quorum=source.quorum,
        trees=trees if isinstance(trees, NodeTrees) else None,
    )
    shell.attach(other)
    if not shell.glob(shell.cwd):
        shell.cwd = "/"
    offset = other.image.provenance.offset
    shell.write(f"now on node {label}: offset {offset}\n")


def _labels(context: CompletionContext, words: list[str], partial: str) -> list[str]:
    """The nodes' labels; with one directory there is nothing to switch to: what ``node`` is."""
    labels = [n for n in context.nodes if n.startswith(partial)]
    return labels if context.nodes else ["--help"]


NODE_COMMAND = Command(
    CommandSpec(
        "node",
        "With several -d: list the nodes, or show node ID's metadata instead.",
        Positional("id", "The node to show (its node.id, or its directory's name).", "?"),
    ),
    run=run_node,
    complete=_labels,
    tui=TuiMode.INLINE,
    moves_image=True,
)
