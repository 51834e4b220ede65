"""Pausing Python's cyclic garbage collector around bulk work on the image."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused(freeze_if: Callable[[], bool] | None = None) -> Iterator[None]:
    """Suspend the cyclic GC during a bulk load (or a pass that makes many small objects).

    Replay allocates millions of long-lived objects and no cycles; every generation-0 collection
    would rescan the growing young heap, which costs ~2x the load time.  Restored afterwards.
    ``freeze_if`` is asked at the end whether the pass made such a bulk (None: it did); a live
    session pauses around every drain of its queue, most of them a few records, and freezes only
    after a catch-up.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # The image just built is long-lived and acyclic: move it (and everything else alive) out
        # of the collector's generations, or the first collections after re-enabling would
        # traverse millions of objects -- at the end of the load and again, at random, in the REPL.
        if freeze_if is None or freeze_if():
            gc.freeze()
        if was_enabled:
            gc.enable()
