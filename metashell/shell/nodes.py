"""Several ``-d``: the nodes of one cluster, each its own copy of ``__cluster_metadata-0``.

The session shows one node at a time -- by default the most up to date by Raft's rule (last epoch,
then log end offset), which holds every record any majority could have committed -- and ``node ID``
switches.  Directories of different clusters are refused unless ``--mixed-clusters``: comparing
them would say nothing true.  ``quorum`` compares all of them (``image/quorum_nodes.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from metashell.errors import MetashellError
from metashell.image.loader import load_directory
from metashell.log import open_metadata_dir
from metashell.log.directory import MetadataLogDir
from metashell.safe_text import visible
from metashell.tree import Node, build_root

from .source import Source
from .sources import SourceError, open_directory
from .travel import Warn

if TYPE_CHECKING:
    from metashell.image.quorum_nodes import QuorumAnalysis

__all__ = ["NodeTrees", "open_node", "open_nodes"]


def _labelled(paths: list[str]) -> list[tuple[str, str, MetadataLogDir]]:
    """(label, path, listing) per directory: the label is its ``node.id``, else its folder's name."""
    out: list[tuple[str, str, MetadataLogDir]] = []
    seen: set[str] = set()
    places: dict[Path, str] = {}
    disks: dict[str, tuple[str, int | None]] = {}
    for path in paths:
        try:
            d = open_metadata_dir(path)
        except MetashellError as e:
            raise SourceError(str(e)) from None  # it names the path already
        _one_node_once(path, d, places, disks)
        node = d.meta.node_id if d.meta is not None else None
        label = str(node) if node is not None else Path(d.log_dir or d.path or path).name
        base, n = label, 2
        while label in seen:  # two copies of one node: keep both, told apart
            label, n = f"{base}#{n}", n + 1
        seen.add(label)
        out.append((label, path, d))
    return out


def _one_node_once(
    path: str, d: MetadataLogDir, places: dict[Path, str], disks: dict[str, tuple[str, int | None]]
) -> None:
    """Refuse a directory given twice (by its real path: a symlink or ``..`` is the same place) and
    two directories with one ``directory.id`` but different node ids (one is another's disk with its
    meta.properties changed): counted as two voters, either would claim a majority that is not there.
    Two copies of one node (same node id) are kept, told apart, and counted once as a voter."""
    where = (d.path or d.log_dir or Path(path)).resolve()
    if where in places:
        raise SourceError(
            f"-d {visible(path)} and -d {visible(places[where])} are the same directory ({visible(str(where))}): give each node once"
        )
    places[where] = path
    disk = d.meta.directory_id if d.meta is not None else None
    node = d.meta.node_id if d.meta is not None else None
    if disk:
        other = disks.get(disk)
        if other is not None and other[1] != node:
            raise SourceError(
                f"-d {visible(path)} (node {node}) and -d {visible(other[0])} (node {other[1]}) carry the same "
                f"directory.id {visible(disk)}: one is a copy of the other's disk; give each node once"
            )
        disks.setdefault(disk, (path, node))


def open_nodes(
    paths: list[str], warn: Warn, redact: bool, *, salvage: bool = False, mixed: bool = False
) -> Source:
    """Open several nodes' directories; load the most up to date one (see the module docstring)."""
    nodes = _labelled(paths)
    clusters = {
        label: (d.meta.cluster_id if d.meta is not None else None) or "unknown" for label, _p, d in nodes
    }
    if len(set(clusters.values())) > 1 and not mixed:
        said = ", ".join(f"node {label}: {cid}" for label, cid in clusters.items())
        raise SourceError(
            f"the directories are of different clusters ({said}); --mixed-clusters reads them anyway"
        )
    from metashell.image.quorum_nodes import analyse  # only with several -d: kept out of every start

    analysis = analyse([(label, d) for label, _p, d in nodes])
    chosen = analysis.most_up_to_date.label
    by_label = {label: path for label, path, _d in nodes}
    return open_node(by_label, chosen, warn, redact, salvage=salvage, quorum=lambda: analysis)


class NodeTrees:
    """``/nodes/<id>``: each node's whole tree, loaded the first time it is asked for (reading a
    node's directory takes as long as opening it)."""

    def __init__(self, nodes: dict[str, str], redact: bool) -> None:
        self._nodes = nodes
        self._redact = redact
        self._roots: dict[str, Node] = {}

    def labels(self) -> list[str]:
        return sorted(self._nodes)

    def root(self, label: str) -> Node | None:
        if label not in self._nodes:
            return None
        if label not in self._roots:
            path = self._nodes[label]
            image = load_directory(path).image
            self._roots[label] = build_root(
                image, source_info={"directory": path}, redact=self._redact, name=label
            )
        return self._roots[label]


def open_node(
    nodes: dict[str, str],
    label: str,
    warn: Warn,
    redact: bool,
    *,
    salvage: bool = False,
    quorum: Callable[[], QuorumAnalysis] | None = None,
    trees: NodeTrees | None = None,
) -> Source:
    """The source of node ``label`` among ``nodes``, knowing the others (``node ID`` switches)."""
    trees = trees or NodeTrees(nodes, redact)
    source = open_directory(nodes[label], warn, redact, salvage=salvage, extra_info={"nodes": trees})
    source.nodes, source.node, source.quorum = nodes, label, quorum
    return source
