"""Open the metadata source the CLI was given and hand the shell (or the TUI) a tree.

``--directory`` and ``--snapshot`` go through :mod:`metashell.image.loader`; ``--bootstrap-controller``
through :class:`metashell.image.live_feed.LiveSession`.  Everything that can go wrong here is
turned into a one-line :class:`~metashell.errors.MetashellError` (the CLI prints it and exits 1);
loader warnings are passed to ``warn`` one line each, before the shell starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from metashell.errors import MetashellError
from metashell.image.image import MetadataImage
from metashell.image.loader import LoadResult, load_directory, load_file
from metashell.tree import Node, build_root

if TYPE_CHECKING:
    from metashell.image.live_feed import LiveSession

Warn = Callable[[str], None]

LIVE_WAIT_SECONDS = 60.0
_LABEL_MAX = 32


class SourceError(MetashellError):
    """The source cannot be opened (missing path, wrong kind of path, no permission)."""


@dataclass
class Source:
    """An opened source: the tree root plus what the prompt and banner show."""

    root: Node
    label: str
    description: str
    image: MetadataImage
    cluster_id: str | None = None
    status: Callable[[], str] | None = None
    close: Callable[[], None] = field(default=lambda: None)


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


def open_directory(path: str, warn: Warn, redact: bool, *, salvage: bool = False) -> Source:
    p = _check_path(path, True, "--directory")
    image = _loaded(load_directory(p, salvage=salvage), warn)
    root = build_root(image, source_info={"directory": str(p)}, redact=redact)
    return Source(root, _label_for(p), f"directory {path}", image, image.quorum.cluster_id or None)


def open_file(path: str, warn: Warn, redact: bool, *, salvage: bool = False) -> Source:
    p = _check_path(path, False, "--snapshot")
    image = _loaded(load_file(p, salvage=salvage), warn)
    root = build_root(image, source_info={"snapshot": str(p)}, redact=redact)
    return Source(root, _label_for(p), f"file {path}", image, image.quorum.cluster_id or None)


def open_live(bootstrap: str, config: str | None, warn: Warn, redact: bool,
              wait: bool = True) -> Source:
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
    return Source(root, cid or bootstrap, f"controllers {bootstrap}", image, cid, session.status_text,
                  session.close)


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
