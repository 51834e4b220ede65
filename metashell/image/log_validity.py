"""Whether a node's log is whole: the one statement of it, for ``quorum`` and ``doctor``.

A rebuild copies one node's ``__cluster_metadata-0`` over every other voter's, so the node chosen
must not merely be the most up to date by Raft's rule (last epoch, then log end offset): that rule
reads two header fields, and a damaged or forged copy wins it as easily as a good one.  A node whose
middle batch fails its CRC (loaded with ``--salvage``, as the load's error suggests) or whose last
batches carry a forged leader epoch (the epoch is outside the CRC) was called "most up to date" and
"loses nothing", and the printed steps copied it over the intact logs.

So a node is a candidate only when its files validate, by the rules Kafka's own log keeps (and
``doctor`` reports each broken rule as an error, every damaged batch with its file and byte):

* **every batch whole**: each batch of every segment and snapshot passes its CRC, read past a
  damaged one where the framing allows (:mod:`metashell.log.integrity`; a torn last batch of the
  last segment is not damage: Kafka truncates it when the node starts, and it is only noted);
* **offsets in order**: each batch starts where the one before it ended (a missing segment leaves
  a gap inside the log);
* **epochs in order**: never decreasing, and each epoch begins where ``leader-epoch-checkpoint``
  says it does (Kafka writes the entry when the epoch's first batch is appended, and moves the
  first entry to the log start when retention trims the log: ``LeaderEpochFileCache
  .truncateFromStart``);
* **quorum-state not behind the log**: a node writes its election state before it appends a batch
  of a new epoch, so no batch can carry an epoch past the one its ``quorum-state`` names.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, field

from metashell.errors import MetashellError
from metashell.log.directory import MetadataLogDir
from metashell.log.headers import BatchHeader, merged_ranges
from metashell.log.integrity import damaged_batches

__all__ = ["Validity", "validate"]


@dataclass(frozen=True)
class Validity:
    """What keeps a node's log from being whole, by rule, and what is odd but harmless (``notes``)."""

    damaged: list[str] = field(default_factory=list)
    """Batches that fail their CRC or header checks, and files whose framing breaks."""
    gaps: list[str] = field(default_factory=list)
    """Offsets missing (or repeated) inside the log."""
    epochs: list[str] = field(default_factory=list)
    """Leader epochs out of order, or disagreeing with leader-epoch-checkpoint or quorum-state."""
    notes: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [*(f"damaged batch: {d}" for d in self.damaged), *self.gaps, *self.epochs]

    @property
    def whole(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, object]:
        return {
            "whole": self.whole,
            "problems": self.problems,
            "damaged": self.damaged,
            "gaps": self.gaps,
            "epochs": self.epochs,
            "notes": self.notes,
        }


def validate(d: MetadataLogDir, headers: list[BatchHeader]) -> Validity:
    """``d``'s files by the rules of the module docstring; ``headers``: its segments' batch headers."""
    damaged: list[str] = []
    gaps: list[str] = []
    epochs: list[str] = []
    notes: list[str] = []
    _crcs(d, damaged, notes)
    _offsets(headers, gaps)
    _epochs(d, headers, epochs, notes)
    return Validity(damaged, gaps, epochs, notes)


def _crcs(d: MetadataLogDir, problems: list[str], notes: list[str]) -> None:
    last = d.segments[-1].path if d.segments else None
    files = [s.path for s in d.snapshots if not s.is_bootstrap] + [s.path for s in d.segments]
    for path in files:
        try:
            for damage in damaged_batches(path):
                if damage.last and path == last:
                    notes.append(f"{damage}: a torn last batch (Kafka truncates it when the node starts)")
                else:
                    problems.append(str(damage))
        except (OSError, MetashellError) as e:
            problems.append(f"{path.name}: cannot be read ({getattr(e, 'strerror', None) or e})")


def _offsets(headers: list[BatchHeader], problems: list[str]) -> None:
    for before, after in itertools.pairwise(headers):
        if after.base_offset != before.last_offset + 1:
            what = "missing" if after.base_offset > before.last_offset + 1 else "repeated or out of order"
            problems.append(
                f"offsets {before.last_offset + 1}..{after.base_offset - 1} {what} between {before.file} "
                f"and {after.file} (byte {after.position}): the log is not contiguous"
                if what == "missing"
                else f"{after.file} byte {after.position}: batch at offset {after.base_offset} after one "
                f"ending at {before.last_offset}: offsets {what}"
            )


def _epochs(d: MetadataLogDir, headers: list[BatchHeader], problems: list[str], notes: list[str]) -> None:
    first_of: dict[int, BatchHeader] = {}
    for before, after in itertools.pairwise(headers):
        if after.epoch < before.epoch:
            problems.append(
                f"{after.file} byte {after.position}: leader epoch {after.epoch} at offset "
                f"{after.base_offset} after epoch {before.epoch}: epochs go backwards"
            )
    for h in headers:
        first_of.setdefault(h.epoch, h)
    if headers and d.quorum is not None and d.quorum.leader_epoch is not None:
        newest = max(headers, key=lambda h: h.epoch)
        if newest.epoch > d.quorum.leader_epoch:
            problems.append(
                f"{newest.file} byte {newest.position}: leader epoch {newest.epoch} at offset "
                f"{newest.base_offset}, past quorum-state's epoch {d.quorum.leader_epoch}: no node appends "
                "a batch of an epoch it has not recorded (a forged or damaged epoch field?)"
            )
    checkpoint = d.leader_epochs
    if checkpoint is None or not headers:
        return
    starts = dict(checkpoint)
    first_epoch = headers[0].epoch
    if not starts:
        return
    # Retention moves the log start to a snapshot's end and truncates the checkpoint from the start
    # (LeaderEpochFileCache.truncateFromStart): entries below the new log start go, and the first one
    # left is moved up to it.  The segment that holds the log start still holds the batches before it,
    # so the first listed epoch may begin before its entry, and earlier epochs may have none.
    listed = min(starts)
    spans = merged_ranges((h.base_offset, h.last_offset) for h in headers)
    for epoch, h in sorted(first_of.items()):
        start = starts.get(epoch)
        if start is None:
            if epoch < listed and h.base_offset < starts[listed]:
                continue  # below the log start: its entry went with the data retention deleted
            problems.append(
                f"{h.file} byte {h.position}: leader epoch {epoch} (from offset {h.base_offset}) is not in "
                "leader-epoch-checkpoint"
            )
        elif start != h.base_offset and epoch != listed:
            if start < h.base_offset and not _held(spans, start):
                continue  # the epoch began in offsets no file holds: the gap is the finding, not this
            problems.append(
                f"{h.file} byte {h.position}: leader epoch {epoch} begins at offset {h.base_offset}, "
                f"leader-epoch-checkpoint says {start}"
            )
        elif epoch == listed and any(e > epoch and f.base_offset < start for e, f in first_of.items()):
            problems.append(
                f"{h.file} byte {h.position}: leader-epoch-checkpoint's first entry puts epoch {epoch} at "
                f"offset {start}, after a later epoch's batches"
            )
    end = headers[-1].last_offset + 1
    extra = sorted(e for e, start in starts.items() if e not in first_of and e > first_epoch and start < end)
    if extra:  # (one starting at the log end is a leader elected after the last batch: Kafka
        # records an epoch's start when its leader takes over, before it appends anything)
        notes.append(
            f"leader-epoch-checkpoint names epoch(s) {', '.join(map(str, extra))} inside the log that no "
            "batch on disk carries"
        )


def _held(spans: list[tuple[int, int]], offset: int) -> bool:
    """Whether ``offset`` is inside one of the merged, sorted ``spans``."""
    i = bisect.bisect_right(spans, (offset, float("inf"))) - 1
    return i >= 0 and spans[i][0] <= offset <= spans[i][1]
