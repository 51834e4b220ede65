"""The progress of a long load, as one line on stderr that rewrites itself.

``loading: 45.2 of 132.0 MB read, 1,234,567 records`` -- only on a terminal (a script reading stderr
gets no carriage returns), only when the load takes longer than :data:`QUIET` (a quick load shows
nothing), and wiped when the load ends, so the prompt or the first screen starts on a clean line.
The numbers come from :data:`metashell.log.progress.LOAD`, which the reader keeps up to date.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from metashell.log.progress import LOAD, LoadProgress

__all__ = ["QUIET", "progress_text", "showing_progress"]

QUIET = 0.5
"""Seconds of loading before the line appears."""
EVERY = 0.2
"""Seconds between updates."""


def progress_text(progress: LoadProgress) -> str:
    mb = 1024 * 1024
    return (
        f"loading: {progress.bytes_read / mb:,.1f} of {progress.total_bytes / mb:,.1f} MB read, "
        f"{progress.records:,} records"
    )


@contextmanager
def showing_progress(stream: TextIO, enabled: bool) -> Iterator[None]:
    """While the ``with`` block loads, show its progress on ``stream`` (when ``enabled``: a terminal)."""
    if not enabled:
        yield
        return
    import threading  # only on a terminal: an answer piped or captured starts without it

    done = threading.Event()
    shown = threading.Event()

    def run() -> None:
        if done.wait(QUIET):
            return
        while not done.is_set():
            stream.write("\r" + progress_text(LOAD) + "\x1b[K")
            stream.flush()
            shown.set()
            done.wait(EVERY)

    thread = threading.Thread(target=run, name="metashell-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown.is_set():
            stream.write("\r\x1b[K")  # the line goes: what comes next starts clean
            stream.flush()
