"""A snapshot fetched from the leader (live ``FetchSnapshot``) applied by the path a directory's
snapshot takes: one code path for both feeds.

The live client downloads the snapshot into an unnamed temporary file and checks it whole
(framing, CRCs, records that read, offsets that continue:
:meth:`~metashell.live.observer.Observer._load_snapshot`), keeping no record.  Here the file is read
again a chunk at a time, as the directory reader reads a snapshot file (``log/files.py``), and with
the native engine every run of plain batches is applied by the native bulk sink straight from the
chunk (``native/src/load/batches.rs``); the header and footer batches, and every batch on the
Python engine, are read in Python and applied by the loader's ``apply_batch``.  Neither the
snapshot's bytes nor its records are held beyond a chunk: a million-partition snapshot costs the
image, as a directory load does (its 138 MB held whole made the Python engine's live session 1.6x
the memory of the directory load).
"""

from __future__ import annotations

from typing import BinaryIO

from metashell.log.files import iter_open_file_batches
from metashell.log.offset_rules import check_snapshot_offsets
from metashell.log.problems import unheard

from .batch_loader import ImageLoader
from .fetched_log import fetched_cursor
from .gcpause import gc_paused

__all__ = ["apply_fetched_snapshot"]


def apply_fetched_snapshot(
    loader: ImageLoader, f: BinaryIO, end_offset: int, epoch: int, source: str
) -> None:
    """Replace ``loader``'s image with the snapshot in ``f`` (already checked by the live client),
    ending at ``end_offset`` in ``epoch``; ``source`` names it in provenance and warnings."""
    loader.begin_snapshot()
    loader.replayer.source = source
    cursor = fetched_cursor(loader, source, "snapshot")
    expect = 0
    # checked on arrival: nothing here is new to say (a warning would be told twice); it may end
    # cut short (the client said so)
    batches = iter_open_file_batches(f, source, warn=unheard, decode=False, bulk=cursor, torn_ok=True)
    with gc_paused():
        for batch in batches:
            if cursor is not None:
                cursor.take()  # the sink counted its batches in the image's provenance itself
                expect = cursor.next_offset
            check_snapshot_offsets(batch, expect)
            expect = batch.base_offset + batch.last_offset_delta + 1
            if cursor is not None:
                cursor.next_offset, cursor.ready = expect, True  # the header read, the rest offered
            loader.apply_batch(batch, publish=False)
            del batch  # its records are not held while the sink applies what follows
    loader.finish_snapshot(source, end_offset, epoch)
