"""Open the metadata source the CLI was given and hand the shell a tree.

``--directory`` and ``--snapshot`` go through :mod:`metashell.image.loader`; ``--bootstrap-controller``
goes through :func:`open_live`, the one hook live mode plugs into.  Everything that can go wrong
here is turned into a one-line :class:`~metashell.errors.MetashellError` (the CLI prints it and
exits 1); loader warnings are passed to ``warn`` one line each.

Live-mode hook contract (implemented by ``metashell.image.live_feed``, looked up lazily so that the
shell works without live mode)::

    open_shell_session(bootstrap: str, config: str | None,
                                      warn: Callable[[str], None]) -> session
    session.image                      # the MetadataImage being fed (the tree reads it lazily)
    session.wait_caught_up(timeout)    # block until caught up with the high watermark at start;
                                       # raise a MetashellError on failure (wrong password ...)
    session.status_text() -> str       # short prompt text, e.g. "leader 1 epoch 5 lag 0"
    session.close()                    # stop streaming
    session.cluster_id                 # optional, for the prompt/banner
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metashell.errors import MetashellError
from metashell.tree import Node, build_root

Warn = Callable[[str], None]

LIVE_WAIT_SECONDS = 60.0
_LABEL_MAX = 32


class SourceError(MetashellError):
    """The source cannot be opened (missing path, wrong kind of path, live mode unavailable)."""


@dataclass
class Source:
    """An opened source: the tree root plus what the prompt and banner show."""

    root: Node
    label: str
    description: str
    image: Any = None
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


def _unpack(result: Any) -> tuple[Any, list[Any]]:
    """The loader returns ``LoadResult(image, warnings, ...)``; accept a plain tuple too."""
    if isinstance(result, tuple):
        return result[0], list(result[1]) if len(result) > 1 else []
    return result.image, list(getattr(result, "warnings", []) or [])


def _loader() -> Any:
    try:
        from metashell.image import loader
    except ImportError as e:  # pragma: no cover - only while the loader is being written
        raise SourceError(f"loading metadata files is not available in this build ({e})") from None
    return loader


def _summary(image: Any) -> str:
    try:
        s = image.summary()
        return ", ".join(f"{v} {k}" for k, v in s.items() if k in ("brokers", "controllers", "topics",
                                                                     "partitions"))
    except Exception:  # noqa: BLE001 - the banner is decoration
        return ""


def _cluster_id(image: Any) -> str | None:
    return getattr(getattr(image, "quorum", None), "cluster_id", None) or None


def open_directory(path: str, warn: Warn, redact: bool) -> Source:
    p = _check_path(path, True, "--directory")
    image, warnings = _unpack(_loader().load_directory(p))
    for w in warnings:
        warn(_one_line(w))
    cid = _cluster_id(image)
    root = build_root(image, source_info={"directory": str(p)}, redact=redact)
    desc = f"directory {path}"
    return Source(root, _label_for(p), desc, image, cid)


def open_file(path: str, warn: Warn, redact: bool) -> Source:
    p = _check_path(path, False, "--snapshot")
    image, warnings = _unpack(_loader().load_file(p))
    for w in warnings:
        warn(_one_line(w))
    root = build_root(image, source_info={"snapshot": str(p)}, redact=redact)
    return Source(root, _label_for(p), f"file {path}", image, _cluster_id(image))


def open_live(bootstrap: str, config: str | None, warn: Warn, redact: bool,
              wait: bool = True) -> Source:
    """Live mode through the hook described in the module docstring."""
    if config is not None:
        _check_path(config, False, "--config")
    opener = _live_opener()
    if opener is None:
        raise SourceError("live mode (--bootstrap-controller) is not available in this build yet; "
                          "use --directory or --snapshot")
    session = opener(bootstrap, config, warn)
    try:
        if wait:
            session.wait_caught_up(LIVE_WAIT_SECONDS)
    except BaseException:
        session.close()
        raise
    image = session.image
    cid = getattr(session, "cluster_id", None) or _cluster_id(image)
    info: dict[str, Any] = {"bootstrap": bootstrap}
    quorum = getattr(session, "quorum_info", None)
    if quorum is not None:
        info["quorum"] = quorum  # a callable: /quorum shows the high watermark and lag as they move
    root = build_root(image, source_info=info, redact=redact)
    status = getattr(session, "status_text", None)
    return Source(root, cid or bootstrap, f"controllers {bootstrap}", image, cid, status, session.close)


def _live_opener() -> Callable[..., Any] | None:
    """``open_shell_session`` from the image layer's live glue (or ``metashell.live``)."""
    for module in ("metashell.image.live_feed", "metashell.live"):
        try:
            mod = __import__(module, fromlist=["open_shell_session"])
        except ImportError:
            continue
        opener = getattr(mod, "open_shell_session", None)
        if opener is not None:
            return opener
    return None


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
