"""A fleet folder as a platform team meets one (issue 54), made from the real-Kafka fixtures.

Directories with and without ``meta.properties``, with and without snapshots, two unrelated clusters
sharing Kafka's docker-default cluster id, a directory of zero-byte files, and damaged copies (a
flipped byte, a forged first offset, a lying ``lastOffsetDelta``, a deleted middle segment, a
snapshot whose name overflows 64 bits).  Each entry says what a reader of the fleet must be told.
"""

from __future__ import annotations

import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

from conftest import FIXTURES
from crc32c import crc32c

from metashell.log.headers import batch_headers

PART = "__cluster_metadata-0"
DOCKER_DEFAULT_ID = "MkU3OEVBNTcwNTJENDM2Qk"
"""The cluster id of Kafka's docker quickstart: two unrelated clusters carry it."""


@dataclass(frozen=True)
class FleetDir:
    name: str
    cluster_id: str | None
    damaged: bool
    """The shell refuses it with a located error (``errors`` must hold an error row there)."""


def _copy(src: Path, dst: Path, keep_meta: bool = True) -> Path:
    shutil.copytree(src, dst)
    if not keep_meta:
        (dst / "meta.properties").unlink(missing_ok=True)
    return dst


def _set_cluster_id(d: Path, cluster_id: str) -> None:
    props = d / "meta.properties"
    lines = props.read_text().splitlines(keepends=True)
    props.write_text(
        "".join(f"cluster.id={cluster_id}\n" if ln.startswith("cluster.id=") else ln for ln in lines)
    )


def _no_snapshots(d: Path) -> Path:
    for snap in (d / PART).glob("*.checkpoint"):
        snap.unlink()
    return d


def _segment(d: Path, i: int) -> Path:
    return sorted((d / PART).glob("*.log"))[i]


def _reseal(data: bytearray, pos: int) -> None:
    size = struct.unpack_from(">i", data, pos + 8)[0] + 12
    struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : pos + size])))


def make_fleet(root: Path) -> list[FleetDir]:
    """The fleet under ``root`` (one folder per directory); returns what each one is."""
    root.mkdir(parents=True, exist_ok=True)
    out: list[FleetDir] = []

    d = _copy(FIXTURES / "kafka-4.4", root / "with-meta")
    out.append(
        FleetDir("with-meta", (d / "meta.properties").read_text().split("cluster.id=")[1].split()[0], False)
    )

    bare = root / "no-meta"
    bare.mkdir()
    shutil.copytree(FIXTURES / "demo" / PART, bare / PART)
    out.append(FleetDir("no-meta", None, False))

    d = _no_snapshots(_copy(FIXTURES / "kafka-4.3", root / "no-snapshot", keep_meta=False))
    out.append(FleetDir("no-snapshot", None, False))

    for name, src in (("default-id-a", "kafka-4.2"), ("default-id-b", "kafka-4.1")):
        d = _copy(FIXTURES / src, root / name)
        _set_cluster_id(d, DOCKER_DEFAULT_ID)
        out.append(FleetDir(name, DOCKER_DEFAULT_ID, False))

    zero = root / "zero-bytes" / PART
    zero.mkdir(parents=True)
    for name in ("00000000000000000000.log", "00000000000000000000.index", "leader-epoch-checkpoint"):
        (zero / name).write_bytes(b"")
    out.append(FleetDir("zero-bytes", None, False))

    def damaged(name: str, src: str = "kafka-3.9") -> Path:
        d = _no_snapshots(_copy(FIXTURES / src, root / name, keep_meta=False))
        return d

    d = damaged("flipped-byte")
    seg = _segment(d, 1)
    h = batch_headers([seg])
    data = bytearray(seg.read_bytes())
    data[h[len(h) // 2].position + 70] ^= 0x5A
    seg.write_bytes(bytes(data))
    out.append(FleetDir("flipped-byte", None, True))

    d = damaged("forged-offset")
    seg = _segment(d, 1)
    data = bytearray(seg.read_bytes())
    struct.pack_into(">q", data, 0, struct.unpack_from(">q", data, 0)[0] + 5)  # outside the CRC
    seg.write_bytes(bytes(data))
    out.append(FleetDir("forged-offset", None, True))

    d = damaged("lying-delta")
    seg = _segment(d, 1)
    h = batch_headers([seg])
    pos = h[len(h) // 2].position
    data = bytearray(seg.read_bytes())
    struct.pack_into(">i", data, pos + 23, struct.unpack_from(">i", data, pos + 23)[0] + 3)
    _reseal(data, pos)
    seg.write_bytes(bytes(data))
    out.append(FleetDir("lying-delta", None, True))

    d = damaged("middle-segment")
    _segment(d, 1).unlink()
    out.append(FleetDir("middle-segment", None, True))

    d = _copy(FIXTURES / "kafka-3.8", root / "overflow-name", keep_meta=False)
    newest = max((d / PART).glob("*.checkpoint"))
    shutil.copyfile(newest, d / PART / "99999999999999999999-0000000001.checkpoint")
    out.append(FleetDir("overflow-name", None, False))  # the shell warns; the tables cannot hold its offset
    return out
