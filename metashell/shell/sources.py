"""Open the metadata source the CLI was given and hand the shell (or the TUI) a tree.

``--directory`` and ``--snapshot`` go through :mod:`metashell.image.loader`; ``--bootstrap-controller``
through :class:`metashell.image.live_feed.LiveSession`.  Everything that can go wrong here is
turned into a one-line :class:`~metashell.errors.MetashellError` (the CLI prints it and exits 1);
loader warnings are passed to ``warn`` one line each, before the shell starts.
"""

from __future__ import annotations

import _thread
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from metashell.errors import MetashellError
from metashell.image.image import MetadataImage
from metashell.image.loader import LoadResult, load_directory, load_file, rebuild_at
from metashell.log.directory import MetadataLogDir, ReadPlan, open_metadata_dir, plan_file
from metashell.log.plans import full_plan, log_plan
from metashell.tree import Node, build_root

if TYPE_CHECKING:
    from metashell.image.live_feed import LiveSession
    from metashell.image.timepoint import ResolvedPoint

Warn = Callable[[str], None]
Resolve = Callable[..., "ResolvedPoint"]
"""``resolve(text, index=None)``: the offset a point names (``index``: a load's batch index, if any)."""

LIVE_WAIT_SECONDS = 60.0
_LABEL_MAX = 32


class SourceError(MetashellError):
    """The source cannot be opened (missing path, wrong kind of path, no permission)."""


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
        "full_plan",
        "image",
        "label",
        "leader",
        "listing",
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
        self.behind: str | None = None

    def __repr__(self) -> str:
        return f"Source({self.label!r}, {self.description!r})"


def _timepoint() -> ModuleType:
    """``metashell.image.timepoint``, imported when a point in time is asked for (``--at``, ``at``):
    a command that stays at the end of the log does not pay for it."""
    from metashell.image import timepoint

    return timepoint


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def _check_path(path: str, want_dir: bool, option: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise SourceError(f"{path}: no such file or directory")
    if want_dir and not p.is_dir():
        raise SourceError(f"{path}: not a directory (use --snapshot for a single file)")
    if not want_dir and p.is_dir():
        raise SourceError(f"{path}: is a directory (use --directory for a metadata directory)")
    mode = os.R_OK | (os.X_OK if want_dir else 0)
    if not os.access(p, mode):
        raise SourceError(f"{path}: permission denied")
    return p


def _label_for(path: Path) -> str:
    """The cluster's name for the prompt: the log dir's name (the parent of
    ``__cluster_metadata-0`` when that folder itself was given)."""
    p = path.resolve()
    if p.is_file():
        p = p.parent
    if p.name.startswith("__cluster_metadata") and p.parent.name:
        p = p.parent
    name = p.name or str(p)
    if len(name) > _LABEL_MAX:  # keep the prompt usable: elide the middle
        half = (_LABEL_MAX - 1) // 2
        name = name[:half] + "\u2026" + name[-half:]
    return name


def _summary(image: MetadataImage) -> str:
    s = image.summary()
    return ", ".join(f"{s[k]} {k}" for k in ("brokers", "controllers", "topics", "partitions"))


def _loaded(result: LoadResult, warn: Warn) -> MetadataImage:
    for w in result.warnings:
        warn(_one_line(w))
    return result.image


def open_directory(
    path: str,
    warn: Warn,
    redact: bool,
    *,
    salvage: bool = False,
    at: str | None = None,
    timeline: bool = True,
    extra_info: dict[str, Any] | None = None,
) -> Source:
    """``-d``.  ``timeline``: keep the journal that makes ``at`` and ``diff --from`` fast (~150 bytes
    per change after the snapshot; one-shot commands that do not travel go without).
    ``extra_info``: more for the tree's ``source_info`` (several ``-d``: the other nodes)."""
    p = _check_path(path, True, "--directory")

    def load(until: int | None = None) -> LoadResult:
        return load_directory(p, salvage=salvage, until_offset=until, timeline=timeline and until is None)

    info: dict[str, Any] = {"directory": str(p), **(extra_info or {})}
    source = _file_source(
        p,
        f"directory {path}",
        info,
        load,
        lambda text, index=None: _timepoint().resolve_in_dir(open_metadata_dir(p), text, index),
        at,
        warn,
        redact,
    )
    source.full_plan = lambda start=None: full_plan(open_metadata_dir(p), start)
    source.listing = lambda: open_metadata_dir(p)

    def reload() -> Node:  # a running node appends to the directory: read it again
        return build_root(load_directory(p, salvage=salvage).image, source_info=info, redact=redact)

    source.refresh = reload
    source.salvage = salvage
    return source


def open_file(path: str, warn: Warn, redact: bool, *, salvage: bool = False, at: str | None = None) -> Source:
    p = _check_path(path, False, "--snapshot")

    def load(until: int | None = None) -> LoadResult:
        return load_file(p, salvage=salvage, until_offset=until)

    source = _file_source(
        p,
        f"file {path}",
        {"snapshot": str(p)},
        load,
        lambda text, index=None: _timepoint().resolve_in_file(p, text),
        at,
        warn,
        redact,
    )
    source.full_plan = lambda start=None: plan_file(p)
    source.salvage = salvage
    return source


def _file_source(
    p: Path,
    description: str,
    info: dict[str, str],
    load: Callable[..., LoadResult],
    resolve: Resolve,
    at: str | None,
    warn: Warn,
    redact: bool,
) -> Source:
    """What ``-d`` and ``-s`` share: load (up to ``at``), the tree, and time travel over the file(s)."""
    point = resolve(at) if at else None
    result = load(point.offset if point else None)
    image = _loaded(result, warn)
    root = build_root(image, source_info=info, redact=redact)
    travel = Traveller(None if point else result, resolve, load, info, redact, told=result.warnings)
    return Source(
        root,
        _label_for(p),
        description,
        image,
        image.quorum.cluster_id or None,
        travel=travel,
        point=point.label() if point else None,
    )


class Traveller:
    """Moves a session to another point of its log (``at OFFSET|TIME``) and back (``at``), and lets
    a command look at another point without moving the session (:meth:`visit`, for ``diff``).

    From the newest snapshot to the end of the log the load's journal reaches every offset
    (``image/timeline.py``): the session's one image is moved there in place, at the cost of the
    changes in between (a few hundred ms across a million-record log), for ~150 bytes per change
    kept in memory.  Points before the newest snapshot are rebuilt from an older snapshot plus the
    log (``rebuild_at``); the last :data:`KEEP` of those stay in memory, each a whole image.
    """

    KEEP = 2

    def __init__(
        self,
        end: LoadResult | None,
        resolve: Resolve,
        load_end: Callable[[], LoadResult],
        info: dict[str, str],
        redact: bool,
        told: Iterable[object] = (),
    ) -> None:
        """``end``: the end-of-log load when the session opened there (else it is loaded on demand).
        ``told``: the warnings the session told when it opened (not told again)."""
        self._resolve = resolve
        self._load_end = load_end
        self._info = info
        self._redact = redact
        self._end = end
        # each warning about the files is told once a session: at opening, or when a command (or
        # `at`) first reads the part of the log it is about
        self._told = {_one_line(w) for w in told}
        self._rebuilt: dict[int, Node] = {}
        self._home: int | None = None  # where the session stands (None: the end of the log)
        # the TUI loads the end in a thread behind its first screen; a command asking for it then
        # waits for that load instead of starting a second one
        self._end_lock = _thread.allocate_lock()  # _thread's: one-shot mode never imports threading
        self._told_lock = _thread.allocate_lock()

    def offset_of(self, text: str) -> int:
        """The offset a point names (an offset, a time, or a duration before the log's end); also
        for commands that take a point without moving there (``log --from -1h``)."""
        return self._resolve(text, self._end.index if self._end is not None else None).offset

    def end(self) -> LoadResult:
        """The load up to the end of the log (made once, by the first caller; any thread)."""
        with self._end_lock:
            if self._end is None:
                self._end = self._load_end()
            return self._end

    def end_warnings_untold(self) -> list[str]:
        """The warnings of the end-of-log load not told yet: after the session opened at an earlier
        point (``--at``, the TUI's snapshot first), a session moving to the end must not pass a torn
        or damaged tail off as a whole one.  Empty before the end is loaded."""
        end = self._end
        return [] if end is None else self.untold(end.warnings)

    def untold(self, warnings: Iterable[object]) -> list[str]:
        """The one-line forms of ``warnings`` this session has not told yet, now counted as told
        (a command reading the files itself -- ``history``, ``log`` -- hears what the end's load
        would say; a session opened ``--at`` an earlier point has not said it)."""
        with self._told_lock:  # the TUI's catch-up and a command may both ask
            lines = [line for line in dict.fromkeys(map(_one_line, warnings)) if line not in self._told]
            self._told.update(lines)
        return lines

    def _last_offset(self) -> int:
        """The log's last offset (the journal's end: the image itself moves)."""
        end = self.end()
        return end.timeline.end if end.timeline is not None else end.image.provenance.offset

    def move(self, text: str | None) -> tuple[Node, str | None]:
        """Move the session to ``text`` (an offset or time; None: the end of the log).  Returns the
        root there and its label (``@42``; None at the end)."""
        offset = None if text is None else self.offset_of(text)
        root, offset = self._root_at(offset)
        self._home = offset
        return root, None if offset is None else f"@{offset}"

    def visit(self, text: str | None) -> AbstractContextManager[Node]:
        """The root at ``text`` for the duration of a ``with`` block; the session stays where it is
        (the image is put back afterwards: read what you need inside the block)."""
        return self._visiting(None if text is None else self.offset_of(text))

    @contextmanager
    def _visiting(self, offset: int | None) -> Iterator[Node]:
        try:
            yield self._root_at(offset)[0]
        finally:
            self._root_at(self._home)

    @contextmanager
    def log_from(self, first: int) -> Iterator[tuple[ReadPlan, MetadataImage] | None]:
        """For ``log --from FIRST``: the segments from ``first`` on and the image just before it,
        when the journal reaches that point (None otherwise: read from a snapshot instead)."""
        end = self.end()
        timeline, d = end.timeline, end.plan.directory
        if timeline is None or d is None or not timeline.can_reach(first - 1):
            yield None
            return
        with self._visiting(first - 1) as root:
            yield log_plan(d, first, end.index), root.ctx.image

    def _root_at(self, offset: int | None) -> tuple[Node, int | None]:
        end = self.end()
        last = self._last_offset()
        if offset is not None and last >= 0 and offset >= last:
            offset = None
        timeline = end.timeline
        if timeline is not None and timeline.can_reach(offset):
            timeline.move_to(offset)
            return self._root_of(end.image), offset
        if offset is None:
            return self._root_of(end.image), None
        root = self._rebuilt.pop(offset, None)
        if root is None:
            root = self._root_of(rebuild_at(end, offset).image)
        self._rebuilt[offset] = root
        while len(self._rebuilt) > self.KEEP:
            self._rebuilt.pop(next(iter(self._rebuilt)))
        return root, offset

    def _root_of(self, image: MetadataImage) -> Node:
        return build_root(image, source_info=self._info, redact=self._redact)


def open_live(bootstrap: str, config: str | None, warn: Warn, redact: bool, wait: bool = True) -> Source:
    """Live mode: a :class:`LiveSession` streaming from the controllers, caught up before returning
    (unless ``wait`` is false)."""
    if config is not None:
        _check_path(config, False, "--config")
    session = _live_opener()(bootstrap, config, warn)
    try:
        if wait:
            session.wait_caught_up(LIVE_WAIT_SECONDS)
    except BaseException:
        session.close()
        raise
    image = session.image
    cid = session.cluster_id or image.quorum.cluster_id or None
    info = {"bootstrap": bootstrap, "quorum": session.quorum_info}  # /quorum shows hw and lag as they move
    root = build_root(image, source_info=info, redact=redact)
    source = Source(
        root, cid or bootstrap, f"controllers {bootstrap}", image, cid, session.status_text, session.close
    )

    def catch_up() -> None:  # committed records are applied to the same image, in place
        session.sync()

    source.refresh = catch_up
    source.pending = session.pending
    source.leader = session.leader
    source.describe_quorum = session.describe_quorum
    return source


def _live_opener() -> Callable[[str, str | None, Warn], LiveSession]:
    """``open_shell_session``, imported on first use: offline sessions never load the network stack."""
    from metashell.image.live_feed import open_shell_session

    return open_shell_session


def banner(source: Source, version: str) -> str:
    """Kafka's ``[ Kafka Metadata Shell ]`` line plus what was loaded and how to get help."""
    lines = [f"[ Kafka Metadata Shell -- metashell {version} ]"]
    what = source.description
    if source.cluster_id:
        what = f"cluster {source.cluster_id}, {what}"
    summary = _summary(source.image)
    lines.append(what + (f": {summary}" if summary else ""))
    lines.append("Type 'help' for commands, Tab to complete, Ctrl-D or 'exit' to leave.")
    return "\n".join(lines)


def open_other(path: str, redact: bool) -> Node:
    """The tree of another directory or file, for ``diff --with`` (its warnings are not repeated)."""

    def quiet(_line: str) -> None:
        pass

    if os.path.isdir(path):
        return open_directory(path, quiet, redact, timeline=False).root
    return open_file(path, quiet, redact).root
