"""Whether one node's log is whole enough to rebuild a quorum from it.

A rebuild copies one node's ``__cluster_metadata-0`` over every other voter's, so the node chosen
must not merely be the most up to date by Raft's rule (last epoch, then log end offset): that rule
reads two header fields, and a damaged or forged copy wins it as easily as a good one.  A node whose
middle batch fails its CRC (loaded with ``--salvage``, as the load's error suggests) or whose last
batches carry a forged leader epoch (the epoch is outside the CRC) was called "most up to date" and
"loses nothing", and the printed steps copied it over the intact logs.

So a node is a candidate only when its files validate, by the rules Kafka's own log keeps:

* **every batch whole**: each batch of every segment and snapshot passes its CRC (a torn last
  batch is not damage: Kafka truncates it when the node starts, and it is only noted);
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

import itertools
from dataclasses import dataclass, field

from metashell.errors import MetashellError
from metashell.log.directory import MetadataLogDir
from metashell.log.files import iter_file_batches
from metashell.log.headers import BatchHeader
from metashell.log.problems import LogWarning

__all__ = ["Validity", "validate"]


@dataclass(frozen=True)
class Validity:
    """What keeps a node's log from being a rebuild source (``problems``), and what is odd but
    harmless (``notes``)."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def whole(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, object]:
        return {"whole": self.whole, "problems": self.problems, "notes": self.notes}


def validate(d: MetadataLogDir, headers: list[BatchHeader]) -> Validity:
    """``d``'s files by the rules of the module docstring; ``headers``: its segments' batch headers."""
    problems: list[str] = []
    notes: list[str] = []
    _crcs(d, problems, notes)
    _offsets(headers, problems)
    _epochs(d, headers, problems, notes)
    return Validity(problems, notes)


def _crcs(d: MetadataLogDir, problems: list[str], notes: list[str]) -> None:
    last = d.segments[-1].path if d.segments else None
    files = [s.path for s in d.snapshots if not s.is_bootstrap] + [s.path for s in d.segments]
    for path in files:
        torn: list[LogWarning] = []
        try:
            for _batch in iter_file_batches(
                path, decode=False, verify_crc=True, lenient_tail=path == last, warn=torn.append
            ):
                pass
        except MetashellError as e:
            problems.append(f"damaged: {e}")
        except OSError as e:
            problems.append(f"{path.name}: cannot be read ({e.strerror or e})")
        notes.extend(f"{w.message} (Kafka truncates it when the node starts)" for w in torn)


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
    for epoch, h in sorted(first_of.items()):
        start = starts.get(epoch)
        if start is None:
            problems.append(
                f"{h.file} byte {h.position}: leader epoch {epoch} (from offset {h.base_offset}) is not in "
                "leader-epoch-checkpoint"
            )
        elif start != h.base_offset and not (epoch == first_epoch and start <= h.base_offset):
            problems.append(
                f"{h.file} byte {h.position}: leader epoch {epoch} begins at offset {h.base_offset}, "
                f"leader-epoch-checkpoint says {start}"
            )
    end = headers[-1].last_offset + 1
    extra = sorted(e for e, start in starts.items() if e not in first_of and e > first_epoch and start < end)
    if extra:  # (one starting at the log end is a leader elected after the last batch: Kafka
        # records an epoch's start when its leader takes over, before it appends anything)
        notes.append(
            f"leader-epoch-checkpoint names epoch(s) {', '.join(map(str, extra))} inside the log that no "
            "batch on disk carries"
        )
