"""A snapshot fetched from the leader (live ``FetchSnapshot``) applied by the path a directory's
snapshot takes: one code path for both feeds.

The live client checks the snapshot whole when it arrives (framing, CRCs, records that read,
offsets that continue: :meth:`~metashell.live.observer.Observer._load_snapshot`), keeping no record.
Here its bytes are scanned again and, with the native engine, every run of plain batches is
applied by the native bulk sink straight from the bytes (``native/src/load/batches.rs``), as the
directory reader does for a snapshot file (``log/reader.py``); the header and footer batches, and
every batch on the Python engine, are read in Python and applied by the loader's ``apply_batch``.
No batch's records are held beyond its own application: a million-partition snapshot costs its
bytes and the image, not a tuple per record (the decoded batches of the old path took 740 MB
where the directory load takes 430 MB).
"""

from __future__ import annotations

from metashell.log.offset_rules import check_snapshot_offsets
from metashell.log.scan import Tail

from .batch_loader import ImageLoader
from .fetched_log import fetched_scan
from .gcpause import gc_paused

__all__ = ["apply_fetched_snapshot"]


def apply_fetched_snapshot(
    loader: ImageLoader, data: bytes, end_offset: int, epoch: int, source: str
) -> None:
    """Replace ``loader``'s image with the snapshot ``data`` (already checked by the live client),
    ending at ``end_offset`` in ``epoch``; ``source`` names it in provenance and warnings."""
    loader.begin_snapshot()
    loader.replayer.source = source
    scan, cursor = fetched_scan(loader, source, "snapshot")
    expect = 0
    with gc_paused():
        for batch in scan.run(data, 0, 0, True, Tail(data, 0)):
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
