"""A snapshot fetched live is applied by the directory's path (``image/fetched_snapshot.py``: the
native bulk sink straight from its bytes): the image is the one the batch-by-batch path made, on
both engines, for every snapshot of the fixtures and the corpus; and a fetched snapshot whose
records or offsets are damaged is refused when it arrives, before the image is touched."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile

import pytest
from conftest import CORPUS, FIXTURES, REPO, native_core
from crc32c import crc32c

from metashell.errors import DecodeError
from metashell.log.offset_rules import check_snapshot_file
from metashell.log.problems import unheard

SNAPSHOTS = sorted(
    p
    for root in (FIXTURES, CORPUS)
    if root.is_dir()
    for p in root.rglob("*.checkpoint")
    if p.name != "bootstrap.checkpoint" and "-" in p.stem
)
"""Every snapshot of the fixtures, and of the corpus when ``../shared`` is there (the fixtures alone
hold enough to check both paths; the corpus adds what real clusters wrote)."""

#: For each snapshot given, the image by the old path (every batch decoded, then applied) and by
#: the fetched path, as text, both engines' engine names left out.
_BOTH = r"""
import json, sys
from metashell.engine import current
from metashell.image.batch_loader import ImageLoader
from metashell.image.fetched_snapshot import apply_fetched_snapshot
from metashell.image.image import MetadataImage
from metashell.log.scan import iter_batches
from metashell.tree import build_root, render_tree

def text(image):
    return render_tree(build_root(image, source_info={"mode": "test"})).replace(current().describe(), "<engine>")

out = {}
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    end, epoch = (int(x) for x in path.rsplit("/", 1)[1].split(".")[0].split("-"))
    old = ImageLoader(MetadataImage())
    old.apply_snapshot(((b, None) for b in iter_batches(data, "fetched")), end, epoch, "fetched")
    new = ImageLoader(MetadataImage())
    with open(path, "rb") as f:  # the live client's download is a file too (events.SnapshotLoaded)
        apply_fetched_snapshot(new, f, end, epoch, "fetched")
    out[path] = [text(old.image), text(new.image)]
print(json.dumps(out))
"""


def _images(engine: str) -> dict[str, list[str]]:
    env = {**os.environ, "METASHELL_ENGINE": engine}
    args = [sys.executable, "-c", _BOTH, *map(str, SNAPSHOTS)]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=REPO, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


@pytest.mark.slow
def test_a_fetched_snapshot_makes_the_image_the_batch_path_made_on_both_engines() -> None:
    native_core()  # skips (fails in CI) where the native core is not built
    assert len(SNAPSHOTS) >= 10
    python, native = _images("python"), _images("native")
    for path in map(str, SNAPSHOTS):
        assert python[path][1] == python[path][0], path
        assert native[path][1] == native[path][0], path
        assert native[path][1] == python[path][1], path


def _first_data_batch(data: bytearray) -> int:
    """The position of the snapshot's second batch (its first data batch)."""
    return 12 + struct.unpack_from(">i", data, 8)[0]


def _checked(data: bytes) -> None:
    """What the live client does with a fetched snapshot on arrival (``Observer._load_snapshot``):
    the download is in an unnamed file, checked a chunk at a time (small chunks here, so that a
    batch is read across them)."""
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        check_snapshot_file(f, "fetched", unheard)


def test_a_fetched_snapshot_with_damage_is_refused_on_arrival() -> None:
    snap = min((FIXTURES / "demo" / "__cluster_metadata-0").glob("*-*.checkpoint"))
    _checked(snap.read_bytes())  # whole: accepted
    forged = bytearray(snap.read_bytes())
    at = _first_data_batch(forged)
    struct.pack_into(">q", forged, at, 7)  # its baseOffset, which no CRC covers
    with pytest.raises(DecodeError, match="does not continue the snapshot"):
        _checked(bytes(forged))
    lying = bytearray(snap.read_bytes())
    size = struct.unpack_from(">i", lying, at + 8)[0]
    records = at + 61  # the first record's length varint
    lying[records] = 0x7E  # a length past the batch: the records no longer read
    struct.pack_into(">I", lying, at + 17, crc32c(bytes(lying[at + 21 : at + 12 + size])))
    with pytest.raises(DecodeError, match="record"):
        _checked(bytes(lying))
