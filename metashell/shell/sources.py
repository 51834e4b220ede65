"""Open the metadata source the CLI was given and hand the shell (or the TUI) a tree.

``--directory`` and ``--snapshot`` go through :mod:`metashell.image.loader`; ``--bootstrap-controller``
through :class:`metashell.image.live_feed.LiveSession`.  Everything that can go wrong here is
turned into a one-line :class:`~metashell.errors.MetashellError` (the CLI prints it and exits 1);
loader warnings are passed to ``warn`` one line each, before the shell starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from metashell.errors import MetashellError
from metashell.image.image import MetadataImage
from metashell.image.loader import LoadResult, load_directory, load_file
from metashell.log.directory import open_metadata_dir, plan_file
from metashell.log.plans import full_plan
from metashell.tree import Node, build_root

from .source import Source
from .travel import Resolve, Traveller, Warn, one_line

if TYPE_CHECKING:
    from metashell.image.live_feed import LiveSession

LIVE_WAIT_SECONDS = 60.0
_LABEL_MAX = 32


class SourceError(MetashellError):
    """The source cannot be opened (missing path, wrong kind of path, no permission)."""


def _timepoint() -> ModuleType:
    """``metashell.image.timepoint``, imported when a point in time is asked for (``--at``, ``at``):
    a command that stays at the end of the log does not pay for it."""
    from metashell.image import timepoint

    return timepoint


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
        warn(one_line(w))
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


def open_live(
    bootstrap: str,
    config: str | None,
    warn: Warn,
    redact: bool,
    wait: bool = True,
    disks: Sequence[str] = (),
    timeline: bool = True,
) -> Source:
    """Live mode: a :class:`LiveSession` streaming from the controllers, caught up before returning
    (unless ``wait`` is false).  ``disks``: node directories given beside ``-q``, which ``quorum``
    compares with the committed log (each checked to be a metadata directory before connecting).
    ``timeline``: journal what is applied, for ``at`` and ``diff`` (one-shot commands that do not
    travel go without, as a directory's do)."""
    if config is not None:
        _check_path(config, False, "--config")
    for disk in disks:
        open_metadata_dir(disk)  # a wrong path is one line now, not at the first 'quorum'
    session = _live_opener()(bootstrap, config, warn, timeline=timeline)
    try:
        if wait:
            session.wait_caught_up(LIVE_WAIT_SECONDS)
    except BaseException:
        session.close()
        raise
    from .live_travel import LiveTravel

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
    source.moves = LiveTravel(session, root)
    if session.spool is not None:  # what the session applied, for log, history and stats
        source.full_plan = session.full_plan
    source.pending = session.pending
    source.leader = session.leader
    source.describe_quorum = session.describe_quorum
    source.disks = list(disks)
    return source


def _live_opener() -> Callable[..., LiveSession]:
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
