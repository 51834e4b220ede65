"""The small files beside the log: ``meta.properties``, ``quorum-state``, ``leader-epoch-checkpoint``
and ``partition.metadata``.

Each reader returns what the file says, or None with a warning when it is missing, empty or
malformed: they describe the node and the quorum, never the metadata itself, so damage here never
stops a load.  A file is read whole only when it is small (a huge one is refused, not slurped).
"""

import json
from pathlib import Path
from typing import Any, NamedTuple

from metashell.log.files import open_regular
from metashell.log.problems import LogWarning
from metashell.log.properties import parse_properties

_SMALL_FILE_LIMIT = 1 << 20  # quorum-state & co. are tiny; never slurp a huge file by mistake


class MetaProperties(NamedTuple):
    """``meta.properties`` of the log dir (v0: ``broker.id``; v1: ``node.id``).  Values as written;
    ``cluster_id`` may be "" (seen in the wild)."""

    path: Path
    version: int | None
    cluster_id: str | None
    node_id: int | None
    directory_id: str | None
    properties: dict[str, str]


class QuorumState(NamedTuple):
    """``quorum-state`` (data_version 0 or 1).  Informational only: the image does not depend on it."""

    path: Path
    data_version: int | None
    leader_id: int | None
    leader_epoch: int | None
    voted_id: int | None
    voted_directory_id: str | None
    current_voters: list[int] | None
    raw: dict[Any, Any]


def _read_small(path: Path) -> bytes:
    with open_regular(path) as f:
        return f.read(_SMALL_FILE_LIMIT)


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def read_meta_properties(path: Path, warnings: list[LogWarning]) -> MetaProperties | None:
    """Parse ``meta.properties`` leniently: problems become warnings, not errors."""
    try:
        props = parse_properties(_read_small(path))
    except OSError as e:
        warnings.append(LogWarning("meta-properties", f"cannot read: {e.strerror or e}", str(path)))
        return None
    src = str(path)
    raw_version = props.get("version")
    version: int | None = 0 if raw_version is None else _int_or_none(raw_version)
    if version not in (0, 1):
        warnings.append(
            LogWarning("meta-properties", f"unsupported version {raw_version!r} (Kafka accepts 0 and 1)", src)
        )
    id_key = "broker.id" if version == 0 and "broker.id" in props else "node.id"
    node_id = _int_or_none(props.get(id_key))
    if id_key in props and node_id is None:
        warnings.append(LogWarning("meta-properties", f"{id_key} {props[id_key]!r} is not a number", src))
    elif version == 1 and "node.id" not in props:
        warnings.append(LogWarning("meta-properties", "version 1 without node.id", src))
    if not any(k in props for k in ("cluster.id", "node.id", "broker.id", "version", "directory.id")):
        warnings.append(
            LogWarning(
                "meta-properties",
                "holds none of meta.properties' keys: not a file Kafka wrote (ignored)",
                src,
            )
        )
    return MetaProperties(path, version, props.get("cluster.id"), node_id, props.get("directory.id"), props)


def read_quorum_state(path: Path, warnings: list[LogWarning]) -> QuorumState | None:
    """Parse ``quorum-state`` (first line of JSON) leniently."""
    src = str(path)
    try:
        first = _read_small(path).split(b"\n", 1)[0]
        data = json.loads(first.decode("utf-8"))
    except OSError as e:
        warnings.append(LogWarning("quorum-state", f"cannot read: {e.strerror or e}", src))
        return None
    except (ValueError, UnicodeDecodeError) as e:
        warnings.append(LogWarning("quorum-state", f"not valid JSON ({e})", src))
        return None
    except RecursionError:  # "[[[[...": valid JSON nested deeper than Python's parser goes
        warnings.append(LogWarning("quorum-state", "JSON nested too deeply to be a quorum-state", src))
        return None
    if not isinstance(data, dict):
        warnings.append(LogWarning("quorum-state", "not a JSON object", src))
        return None
    dv = _int_or_none(data.get("data_version"))
    if dv not in (0, 1):
        warnings.append(
            LogWarning(
                "quorum-state", f"unknown data_version {data.get('data_version')!r} (read leniently)", src
            )
        )
    for name in ("leaderId", "leaderEpoch", "votedId", "appliedOffset"):
        if name in data and data[name] is not None and _int_or_none(data[name]) is None:
            warnings.append(
                LogWarning("quorum-state", f"{name} {data[name]!r} is not a number (ignored)", src)
            )
    if (
        "currentVoters" in data
        and data["currentVoters"] is not None
        and not isinstance(data["currentVoters"], list)
    ):
        warnings.append(LogWarning("quorum-state", "currentVoters is not a list (ignored)", src))
    voters = data.get("currentVoters")
    voter_ids: list[int] | None = None
    if isinstance(voters, list):
        voter_ids = [
            v
            for v in (_int_or_none(x.get("voterId")) if isinstance(x, dict) else None for x in voters)
            if v is not None
        ]
    vdir = data.get("votedDirectoryId")
    return QuorumState(
        path,
        dv,
        _int_or_none(data.get("leaderId")),
        _int_or_none(data.get("leaderEpoch")),
        _int_or_none(data.get("votedId")),
        vdir if isinstance(vdir, str) else None,
        voter_ids,
        data,
    )


def read_leader_epoch_checkpoint(path: Path, warnings: list[LogWarning]) -> list[tuple[int, int]] | None:
    """``leader-epoch-checkpoint``: [(epoch, start offset)], or None when unreadable."""
    src = str(path)
    try:
        lines = _read_small(path).decode("utf-8", "replace").split("\n")
    except OSError as e:
        warnings.append(LogWarning("leader-epoch-checkpoint", f"cannot read: {e.strerror or e}", src))
        return None
    if not "".join(lines).strip():  # Kafka creates it empty and writes it at the first epoch
        warnings.append(LogWarning("leader-epoch-checkpoint", "empty (no leader epoch written yet)", src))
        return []
    try:
        version = int(lines[0].strip())
        count = int(lines[1].strip())
        entries = []
        for line in lines[2 : 2 + count]:
            epoch, offset = line.split()
            entries.append((int(epoch), int(offset)))
    except (ValueError, IndexError):
        warnings.append(
            LogWarning(
                "leader-epoch-checkpoint", "malformed (expected version, count, 'epoch offset' lines)", src
            )
        )
        return None
    if version != 0 or len(entries) != count:
        warnings.append(
            LogWarning(
                "leader-epoch-checkpoint",
                f"version {version}, {len(entries)} of {count} entries (read leniently)",
                src,
            )
        )
    return entries


def read_partition_metadata(path: Path, warnings: list[LogWarning]) -> dict[str, str] | None:
    """``partition.metadata``: {"version": "0", "topic_id": "..."}."""
    try:
        text = _read_small(path).decode("utf-8", "replace")
    except OSError as e:
        warnings.append(LogWarning("partition-metadata", f"cannot read: {e.strerror or e}", str(path)))
        return None
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out
