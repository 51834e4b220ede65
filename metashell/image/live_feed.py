"""Glue from live mode (``metashell.live``) to the image: the shell's live session.

Live mode lives below the image (it must not import it), so the code that turns its events into
image updates sits here and uses :class:`~metashell.image.loader.ImageLoader`'s live entry points
(``apply_committed``, ``apply_snapshot``).

Threading: the live client streams on its own thread and only *queues* events; they are applied
by :meth:`LiveSession.sync`, which the shell calls between commands (``status_text`` for the
prompt and ``wait_caught_up`` call it too).  So a command never sees the image change under it,
and the tree reads the image without locks.  ``auto_apply=True`` applies on the live thread
instead, under the image's lock (for consumers that lock, such as benchmarks).

The image object stays the same for the whole session -- the tree keeps a reference to it -- even
when a snapshot replaces its content (the loader clears and refills it in place).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from metashell.live import LiveSource
from metashell.live.config import ClientConfig
from metashell.live.errors import LiveConnectionError
from metashell.live.events import (
    ImageReset,
    LiveEvent,
    LiveStatus,
    LiveWarning,
    RecordsCommitted,
    SnapshotLoaded,
    StatusChanged,
)
from metashell.log.directory import ReadPlan, open_metadata_dir
from metashell.log.plans import full_plan

from .fetched_log import apply_fetched_run, contiguous_runs
from .fetched_snapshot import apply_fetched_snapshot
from .gcpause import gc_paused
from .image import MetadataImage
from .live_spool import LiveSpool
from .loader import ImageLoader
from .timeline import Timeline

Warn = Callable[[str], None]

#: Committed records queued for the shell thread to apply, at most (about 200 bytes of objects
#: each, plus their values).  Past it the live thread waits for :meth:`LiveSession.sync`: a REPL
#: left at its prompt, a paused TUI or a ``watch`` between two looks takes no more from the
#: controllers until it applies what it holds, so memory stays bounded however fast the leader
#: commits (the lag shows in the prompt meanwhile).
MAX_QUEUED_RECORDS = 100_000

#: The journal of what a session applied since its snapshot (``at`` goes back along it) keeps at
#: most this many entries (about 150 bytes each; a native run of changes counts as one); past it
#: the oldest half is forgotten and ``at`` reaches back less far.
MAX_JOURNAL_ENTRIES = 1_000_000

#: A drain of the queue that applied at least this many records made long-lived objects in bulk
#: (the image's, the journal's): the collector is told to leave them alone, as after a load.
BULK_RECORDS = 10_000


STATUS_SEPARATOR = " · "
"""Between the parts of :meth:`LiveSession.status_text`: the first part is the state."""
_STATE_WORDS = {"streaming": "connected", "catching-up": "catching up", "snapshot": "loading snapshot"}
"""The stream's state as the status line says it (``connecting`` and ``reconnecting`` as they are)."""


class LiveSession:
    """A live image fed from a controller quorum (see the module docstring)."""

    def __init__(
        self,
        bootstrap: str,
        config: ClientConfig | str | None = None,
        warn: Warn | None = None,
        *,
        cluster_id: str | None = None,
        auto_apply: bool = False,
        on_applied: Callable[[RecordsCommitted, float], None] | None = None,
        max_wait_ms: int | None = None,
        timeline: bool = True,
    ) -> None:
        self.image = MetadataImage()
        # the journal lets ``at`` go back over what the session applied (``timeline``; never with
        # auto_apply: the benchmarks' sessions apply on the live thread and never move)
        self.loader = ImageLoader(self.image, keep_timeline=timeline and not auto_apply)
        #: What the session applied, as a directory of its own, for the commands that read records
        #: (``log``, ``history``, ``stats``): kept beside the journal (``live_spool.py``).
        self.spool = LiveSpool() if timeline and not auto_apply else None
        #: The offset the image was moved back to (``travel``); None while it follows the log.
        self.held_at: int | None = None
        #: The image's own lock (the loader holds it per batch); sync() holds it across a drain.
        self.lock = self.image.lock
        self.auto_apply = auto_apply
        #: Called (event, time.time()) after each RecordsCommitted is applied (latency benchmark).
        self.on_applied = on_applied
        self._warn = warn
        self._queue: deque[LiveEvent] = deque()
        self._queued_records = 0
        #: The live thread waits on it while the queue is full; sync() and close() wake it.
        self._drained = threading.Condition()
        self._closed = False
        self._applied_offset = -1
        self._warned = 0
        self._quiet = False  # after wait_caught_up, warnings are kept instead of printed
        #: Warnings that arrived while the shell was interactive (printed ones are not kept here).
        self.warnings: list[str] = []
        self.source = LiveSource(bootstrap, config, cluster_id=cluster_id, max_wait_ms=max_wait_ms)
        if self.source.config.ignored and warn is not None:
            shown = ", ".join(repr(k) for k in self.source.config.ignored[:5])
            more = len(self.source.config.ignored) - 5
            warn(
                f"{self.source.config.source}: ignored what metashell's client does not use: {shown}"
                + (f" and {more} more" if more > 0 else "")
            )
        self.source.connect(self._on_event)
        self.image.quorum.cluster_id = self.source.status.cluster_id
        self.image.provenance.sources = [f"live:{bootstrap}"]
        self.source.start()

    # -- events -------------------------------------------------------------------------------------

    def _on_event(self, event: LiveEvent) -> None:
        if isinstance(event, StatusChanged):
            return  # read from source.status when needed
        if self.auto_apply:
            with self.lock:
                self._apply(event)
            return
        n = _records_in(event)
        with self._drained:
            while self._queued_records and self._queued_records + n > MAX_QUEUED_RECORDS and not self._closed:
                self._drained.wait(0.5)
            self._queued_records += n
            self._queue.append(event)

    def sync(self) -> int:
        """Apply every queued event (on the caller's thread); returns how many were applied.
        Nothing while the image is held at an earlier point (:meth:`travel`): the events wait,
        bounded by :data:`MAX_QUEUED_RECORDS`, as they wait for a REPL left at its prompt."""
        if self.held_at is not None:
            return 0
        n = records = 0
        # A catch-up applies a million records here, as a directory load does, with the collector
        # paused as there (the journal's entries made it rescan the young heap: 0.5 s of 3)
        with self.lock, gc_paused(freeze_if=lambda: records >= BULK_RECORDS):
            while True:
                with self._drained:
                    if not self._queue:
                        break
                    event = self._queue.popleft()
                    k = _records_in(event)
                    self._queued_records -= k
                    self._drained.notify_all()
                self._apply(event)  # the live thread may queue one more event meanwhile
                n += 1
                records += k
            if n:
                self._bound_journal()
        return n

    # -- time travel over what the session has seen ---------------------------------------------

    def _bound_journal(self) -> None:
        timeline = self.loader.timeline
        if timeline is not None and len(timeline.entries) > MAX_JOURNAL_ENTRIES:
            timeline.follow()
            timeline.forget_oldest(len(timeline.entries) - MAX_JOURNAL_ENTRIES // 2)

    def journal(self) -> Timeline | None:
        """The journal of what the session applied since its snapshot, its end where the session
        applied up to (None: nothing applied since the snapshot).  Applies what is queued first,
        unless the image is held."""
        if self.held_at is None:
            self.sync()
            timeline = self.loader.timeline
            if timeline is not None:
                timeline.follow()
        return self.loader.timeline

    def travel(self, offset: int | None) -> int:
        """Move the image to the state after the batch ending at or before ``offset``, among what
        the session applied since its snapshot, and hold it there; None: back to the end, where
        it follows the log again (what waited is applied).  Returns the offset the image shows.
        ``offset`` must be reachable (``journal().start`` .. its end)."""
        timeline = self.journal()
        if offset is None or timeline is None or offset >= timeline.end:
            if self.held_at is not None and timeline is not None:
                with self.lock:
                    timeline.move_to(None)
            self.held_at = None
            self.sync()
            return self.image.provenance.offset
        if offset < timeline.start:
            raise ValueError(f"offset {offset} is before the journal's start {timeline.start}")
        target = timeline.batch_end_at_or_before(offset)
        with self.lock:
            timeline.move_to(target)
        self.held_at = target
        return target

    def pending(self) -> int:
        """Records committed but not applied yet (what ``sync`` would apply), without applying them."""
        with self._drained:
            return self._queued_records

    def _apply(self, event: LiveEvent) -> None:
        if isinstance(event, RecordsCommitted):
            self._apply_committed(event)
            if self.on_applied is not None:
                self.on_applied(event, time.time())
        elif isinstance(event, SnapshotLoaded):
            sid = event.snapshot_id
            try:
                apply_fetched_snapshot(self.loader, event.file, sid.end_offset, sid.epoch, event.source)
            except BaseException:
                event.close()
                raise
            if self.spool is not None:
                self.spool.snapshot(event.file, sid.end_offset, sid.epoch)  # the spool's file now
            else:
                event.close()  # its disk space now, not when the event is collected
            self._adopt(self.loader.image)
            self._applied_offset = sid.end_offset - 1
            # A snapshot holds no LeaderChange record: one that it skipped over (a failover while we
            # were behind) would leave the image naming the old leader.  Kafka's loader takes the
            # leader from the raft client, as this does from the quorum we fetch from.
            st = self.source.status
            q = self.image.quorum
            if st.leader_id >= 0 and (q.leader_epoch is None or st.leader_epoch > q.leader_epoch):
                q.leader_id, q.leader_epoch, q.source = st.leader_id, st.leader_epoch, "live quorum"
        elif isinstance(event, ImageReset):
            self.loader.reset()
            if self.spool is not None:
                self.spool.reset()
            self._applied_offset = -1
        elif isinstance(event, LiveWarning):
            self._emit_warning(event.message)
        self._flush_replay_warnings()

    def _apply_committed(self, event: RecordsCommitted) -> None:
        """Batches delivered as tuples one by one; whole ones delivered as bytes (checked, not
        decoded: the native engine) in runs, by the directory's bulk path (``fetched_log``).
        The spool keeps each batch once it is whole, a run at a time where it can."""
        batches = event.batches
        spool = self.spool
        i = 0
        while i < len(batches):
            committed = batches[i]
            if committed.entries is not None:
                self.loader.apply_committed(committed)
                self._applied_offset = committed.last_offset
                b = committed.batch
                if spool is not None and committed.last_offset == b.last_offset:  # whole now
                    spool.append(b.raw(), b.base_offset, b.last_offset)
                i += 1
                continue
            j = i
            while j < len(batches) and batches[j].entries is None:
                j += 1
            for run in contiguous_runs([c.batch for c in batches[i:j]]):
                data = run.buf[run.start : run.end]
                last = apply_fetched_run(self.loader, data, event.source)
                self._applied_offset = max(self._applied_offset, last)
                if spool is not None:  # never delivered before, in part or whole (Observer._deliver)
                    spool.append(data, run.base_offset, run.last_offset)
            i = j

    def _adopt(self, new: MetadataImage) -> None:
        """Move ``new``'s content into the session's image object, which the tree holds."""
        if new is self.image:
            return
        for name in MetadataImage.__slots__:
            setattr(self.image, name, getattr(new, name))
        self.loader.replayer.image = self.image

    def _emit_warning(self, message: str) -> None:
        if self._warn is not None and not self._quiet:
            self._warn(message)
        else:
            self.warnings.append(message)

    def _flush_replay_warnings(self) -> None:
        ws = self.loader.warnings
        while self._warned < len(ws):
            self._emit_warning(str(ws[self._warned]))
            self._warned += 1

    # -- shell API ----------------------------------------------------------------------------------

    @property
    def status(self) -> LiveStatus:
        return self.source.status

    @property
    def cluster_id(self) -> str | None:
        return self.source.status.cluster_id

    @property
    def applied_offset(self) -> int:
        """Last offset applied to the image (-1: nothing yet)."""
        return self._applied_offset

    def caught_up(self) -> bool:
        st = self.source.status
        return st.start_high_watermark >= 0 and self._applied_offset + 1 >= st.start_high_watermark

    def wait_caught_up(self, timeout: float | None = 60.0) -> None:
        """Apply records until the image holds everything committed when we connected.

        Raises the live error that stopped streaming, or LiveConnectionError after ``timeout``.

        The catch-up is a load: the collector stays paused across it and what it made is frozen
        at the end, as after a directory load.  Each ``sync`` pauses it too, but on the Python
        engine the live thread decodes one event (8,192 records) while the last is applied, so
        most drains hold fewer than :data:`BULK_RECORDS` and froze nothing: the image and journal
        stayed in the collector's generations and its full collections walked them (about 1.3 s
        of the million-record catch-up of ``bench/live_million.py`` with the journal, replayed
        offline the same way).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with gc_paused():
            while True:
                self.sync()
                if self.caught_up():
                    self._quiet = True
                    return
                err = self.source.error
                if err is not None:
                    self.sync()
                    raise err
                if deadline is not None and time.monotonic() >= deadline:
                    raise LiveConnectionError(self.source._timeout_message(timeout))
                time.sleep(0.01)

    def status_text(self) -> str:
        """The connection state first, then the details, `` · ``-separated: ``connected · leader 1
        · epoch 5 · hw 120 · lag 0``.  The REPL's prompt shows the first part, its bottom toolbar
        the whole line.  Also applies what arrived since the last command."""
        self.sync()
        st = self.source.status
        if st.state == "failed":
            return f"FAILED · {st.error}"
        hw = st.high_watermark
        lag = max(0, hw - (self._applied_offset + 1)) if hw >= 0 else None
        leader = f"leader {st.leader_id}" if st.leader_id >= 0 else "no leader"
        parts = [_STATE_WORDS.get(st.state, st.state), leader, f"epoch {st.leader_epoch}"]
        if hw >= 0:
            parts.append(f"hw {hw}")
        parts.append(f"lag {lag}" if lag is not None else "lag ?")
        if self.held_at is not None:
            parts.insert(1, f"held at @{self.held_at} ('at' alone follows the log again)")
        return STATUS_SEPARATOR.join(parts)

    def leader(self) -> tuple[int, int]:
        """(leader id, leader epoch) as last heard from the quorum (-1: none known)."""
        st = self.source.status
        return st.leader_id, st.leader_epoch

    def quorum_info(self) -> dict[Any, Any]:
        """Live fields for the tree's ``/quorum`` (``build_root(..., source_info={"quorum":
        session.quorum_info})``): where we fetch from and how far behind the image is."""
        st = self.source.status
        hw = st.high_watermark
        return {
            "live": {
                "state": st.state,
                "endpoint": st.endpoint,
                "leaderId": st.leader_id,
                "leaderEpoch": st.leader_epoch,
                "highWatermark": hw,
                "appliedOffset": self._applied_offset,
                "lag": max(0, hw - (self._applied_offset + 1)) if hw >= 0 else None,
                "logStartOffset": st.log_start_offset,
                "controllers": {str(k): v for k, v in st.controllers.items()},
                "lastError": st.last_error,
                "error": st.error,
            }
        }

    def describe_quorum(self) -> dict[Any, Any]:
        return self.source.describe_quorum()

    def close(self) -> None:
        with self._drained:  # a live thread waiting for room must not hold up the stop
            self._closed = True
            self._drained.notify_all()
        self.source.stop()
        with self._drained:  # a snapshot never applied: its temporary file now, not at collection
            for event in self._queue:
                if isinstance(event, SnapshotLoaded):
                    event.close()
            self._queue.clear()
            self._queued_records = 0
        if self.spool is not None:
            self.spool.close()

    def full_plan(self, start: int | None = None) -> ReadPlan:
        """What the session has applied, as a directory's plan (``log.plans.full_plan``) over its
        spool: the records ``log`` lists and ``history`` follows.  Only with the journal."""
        assert self.spool is not None, "a session without the journal keeps no spool"
        self.spool.flush()
        return full_plan(open_metadata_dir(self.spool.path), start)


def _records_in(event: LiveEvent) -> int:
    return sum(b.record_count for b in event.batches) if isinstance(event, RecordsCommitted) else 0


def open_shell_session(
    bootstrap: str,
    config: str | None,
    warn: Warn | None = None,
    *,
    cluster_id: str | None = None,
    timeline: bool = True,
) -> LiveSession:
    """The shell's live-mode hook (``metashell.shell.sources.open_live``)."""
    return LiveSession(bootstrap, config, warn, cluster_id=cluster_id, timeline=timeline)
