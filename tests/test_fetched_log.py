"""Committed log batches fetched live are applied by the directory's path (``image/fetched_log.py``:
runs of whole batches from their bytes, the native bulk sink taking what it can): the image is the
one the batch-by-batch path (records as tuples, ``apply_committed``) made, on both engines, for
every metadata directory of the fixtures and the corpus, fed as a live session is fed: the newest
snapshot (fetched), then the log after it, in runs of a few batches as Fetch responses cut it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import CORPUS, FIXTURES, REPO, native_core

DIRECTORIES = sorted(
    p
    for root in (FIXTURES, CORPUS)
    if root.is_dir()
    for p in root.rglob("__cluster_metadata-0")
    if p.is_dir()
)
"""Every metadata directory of the fixtures, and of the corpus when ``../shared`` is there."""

_BOTH = r"""
import json, sys
from pathlib import Path
from metashell.engine import current
from metashell.errors import MetashellError
from metashell.image.batch_loader import ImageLoader
from metashell.image.fetched_log import apply_fetched_run, contiguous_runs
from metashell.image.fetched_snapshot import apply_fetched_snapshot
from metashell.image.image import MetadataImage
from metashell.log.directory import open_metadata_dir
from metashell.log.problems import unheard
from metashell.log.scan import iter_batches
from metashell.tree import build_root, render_tree

RUN = int(sys.argv[1])

def text(image):
    return render_tree(build_root(image, source_info={"mode": "test"})).replace(current().describe(), "<engine>")

def feed(path):
    # what the leader would serve: the newest snapshot, then every whole batch after it
    d = open_metadata_dir(path)
    snap = d.latest_snapshot()
    start = snap.end_offset if snap is not None else 0
    batches = []
    for seg in d.segments:
        try:
            for b in iter_batches(seg.path.read_bytes(), str(seg.path), warn=unheard):
                if b.base_offset >= start and (not batches or b.base_offset == batches[-1].last_offset + 1):
                    batches.append(b)
        except MetashellError:
            break  # a damaged segment: the leader would have served what came before it
    return snap, batches

out = {}
for path in sys.argv[2:]:
    snap, batches = feed(path)
    images = []
    for bulk in (False, True):
        loader = ImageLoader(MetadataImage())
        if snap is not None:
            with open(snap.path, "rb") as f:
                apply_fetched_snapshot(loader, f, snap.end_offset, snap.epoch, "fetched")
        for i in range(0, len(batches), RUN):
            chunk = batches[i : i + RUN]
            if bulk:
                data = b"".join(b.raw() for b in chunk)  # one Fetch response's slice
                (run,) = contiguous_runs([b for b in iter_batches(data, "fetched")])
                apply_fetched_run(loader, data[run[1] : run[2]], "fetched")
            else:
                for b in chunk:
                    loader.apply_batch(b, b.entries(), last_offset=b.last_offset)
        images.append(text(loader.image))
    out[path] = images + [len(batches)]
print(json.dumps(out))
"""


def _images(engine: str, run: int) -> dict[str, list[str]]:
    env = {**os.environ, "METASHELL_ENGINE": engine}
    args = [sys.executable, "-c", _BOTH, str(run), *map(str, DIRECTORIES)]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=REPO, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


@pytest.mark.slow
@pytest.mark.parametrize("run", [7, 1000])  # a run's first batch is Python's: runs of 1 never reach the sink
def test_fetched_log_batches_make_the_image_the_batch_path_made_on_both_engines(run: int) -> None:
    native_core()  # skips (fails in CI) where the native core is not built
    assert len(DIRECTORIES) >= 10
    python, native = _images("python", run), _images("native", run)
    fed = 0
    for path in map(str, DIRECTORIES):
        assert python[path][1] == python[path][0], path
        assert native[path][1] == native[path][0], path
        assert native[path][1] == python[path][1], path
        fed += int(native[path][2])
    assert fed > 1000  # the directories' logs hold batches to feed, not only snapshots
