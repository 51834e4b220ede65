"""What an opened metadata source offers the shell and the TUI (:class:`Source`); the openers
that make one are in :mod:`metashell.shell.sources`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from metashell.image.image import MetadataImage
    from metashell.log.directory import MetadataLogDir, ReadPlan
    from metashell.tree import Node

    from .travel import Moves, Traveller


def _nothing() -> None:
    """A source with nothing to close."""


class Source:
    """An opened source: the tree root plus what the prompt and banner show.

    The openers set the optional parts after construction:

    * ``full_plan``: the whole log the files still hold, for ``history`` and ``log`` (None for live
      sources);
    * ``refresh``: ``watch`` brings the image up to date (a new root when reloaded, None when
      updated in place);
    * ``pending``: live, records committed but not applied yet (the TUI's "N changes since pause");
    * ``leader``: live, (leader id, epoch) of the quorum as last heard (the TUI tells leader changes);
    * ``describe_quorum``: live, the leader's DescribeQuorum (``quorum``: voters, observers, lag);
    * ``disks``: live, the node directories given beside ``-q`` (``quorum``: each one's distance
      from the committed log);
    * ``listing``: a directory's files as they are now (``stats``: the snapshots and segments beside
      the log; None for a single file or live);
    * ``salvage``: ``--salvage``, commands that read the log again (``log``) stop before damage as
      the load did;
    * ``nodes``, ``node``, ``quorum``: several ``-d``: node label -> directory, the node shown, and
      their comparison (``shell/nodes.py``);
    * ``behind``: why the session is not at the end of the log yet although it was not asked to be
      elsewhere: the TUI opened a long log at its newest snapshot, and the end is loading or could
      not be loaded (``tui/catch_up.py``); None otherwise.
    """

    __slots__ = (
        "behind",
        "close",
        "cluster_id",
        "describe_quorum",
        "description",
        "disks",
        "full_plan",
        "image",
        "label",
        "leader",
        "listing",
        "moves",
        "node",
        "nodes",
        "pending",
        "point",
        "quorum",
        "refresh",
        "root",
        "salvage",
        "status",
        "travel",
    )

    def __init__(
        self,
        root: Node,
        label: str,
        description: str,
        image: MetadataImage,
        cluster_id: str | None = None,
        status: Callable[[], str] | None = None,
        close: Callable[[], None] = _nothing,
        travel: Traveller | None = None,
        point: str | None = None,
    ) -> None:
        self.root = root
        self.label = label
        self.description = description
        self.image = image
        self.cluster_id = cluster_id
        self.status = status
        self.close = close
        self.travel = travel
        #: ``at`` and ``diff --from/--to``: the travel over the files, or a live session's own
        self.moves: Moves | None = travel
        self.point = point
        self.full_plan: Callable[[int | None], ReadPlan] | None = None
        self.listing: Callable[[], MetadataLogDir] | None = None
        self.refresh: Callable[[], Node | None] | None = None
        self.pending: Callable[[], int] | None = None
        self.leader: Callable[[], tuple[int, int]] | None = None
        self.salvage = False
        self.nodes: dict[str, str] | None = None
        self.node: str | None = None
        self.quorum: Callable[[], Any] | None = None
        self.describe_quorum: Callable[[], dict[str, Any]] | None = None
        self.disks: list[str] = []
        self.behind: str | None = None

    def __repr__(self) -> str:
        return f"Source({self.label!r}, {self.description!r})"
