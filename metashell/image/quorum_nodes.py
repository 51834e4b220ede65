"""Several nodes' metadata directories at once: where their logs part, and what a majority holds.

Each controller and broker keeps its own copy of ``__cluster_metadata-0``.  Read together (``-d A
-d B -d C``), they answer what no single file does (issue 26):

* **where two logs part**: the first offset at which their batches differ -- by leader epoch, end
  offset and CRC, as Raft's own consistency check compares a follower with the leader (epoch and
  end offset) and a little stricter (the CRC covers the records);
* **what a majority of voters holds**: the highest offset that more than half of the voters' logs
  reach (every committed record is at or below it; the high watermark is not kept on disk);
* **each node's tail beyond it**: records no majority holds, which a lost majority could lose;
* **which node is most up to date**, by Raft's rule: the last epoch, then the log end offset.

Only batch headers are read (and the records of the tails, when listed).
"""

from __future__ import annotations

import hashlib
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field

from metashell.errors import MetashellError
from metashell.log.directory import MetadataLogDir
from metashell.log.headers import BatchHeader, batch_headers
from metashell.log.plans import log_plan

from .changelog import iter_log
from .log_validity import Validity, validate
from .quorum_report import NodeReport, TimelineEvent, node_report

__all__ = ["NodeLog", "QuorumAnalysis", "analyse", "first_difference"]

#: Records listed per node beyond what a majority holds (the rest are counted, not shown).
AT_RISK_SHOWN = 20
"""Records listed per node beyond what a majority holds."""


class BatchKeys:
    """Each batch's (base offset, last offset, leader epoch, CRC): what two nodes' copies share, as
    four columns of 8-byte integers (a tuple per batch took about 200 bytes: three nodes of two
    million batches held 2 GB)."""

    __slots__ = ("_digest", "base", "crc", "epoch", "last")

    def __init__(self, headers: list[BatchHeader]) -> None:
        self.base = array("q", (h.base_offset for h in headers))
        self.last = array("q", (h.last_offset for h in headers))
        self.epoch = array("q", (h.epoch for h in headers))
        self.crc = array("q", (h.crc for h in headers))
        self._digest: bytes | None = None

    def __len__(self) -> int:
        return len(self.base)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BatchKeys):
            return NotImplemented
        return (self.base, self.last, self.epoch, self.crc) == (
            other.base,
            other.last,
            other.epoch,
            other.crc,
        )

    __hash__ = None  # type: ignore[assignment]

    def digest(self) -> bytes:
        """A fingerprint of the whole list: equal logs, equal digests (worked out once)."""
        if self._digest is None:
            h = hashlib.blake2b(digest_size=16)
            for column in (self.base, self.last, self.epoch, self.crc):
                h.update(column.tobytes())
            self._digest = h.digest()
        return self._digest

    def same(self, i: int, other: BatchKeys, j: int) -> bool:
        return (
            self.base[i] == other.base[j]
            and self.last[i] == other.last[j]
            and self.epoch[i] == other.epoch[j]
            and self.crc[i] == other.crc[j]
        )


@dataclass
class NodeLog:
    label: str
    """How the node is named: its ``node.id``, else the directory's name."""
    directory: MetadataLogDir
    report: NodeReport
    batches: BatchKeys
    checked: Validity | None = None
    """:attr:`validity` once worked out."""

    @property
    def validity(self) -> Validity:
        """Whether its files validate (:mod:`.log_validity`): only then can a rebuild copy them.
        Worked out when first asked (``quorum``, the verdict): it reads every batch with its CRC,
        which a session of several ``-d`` opened for ``ls`` need not pay for."""
        if self.checked is None:
            d = self.directory
            self.checked = validate(d, batch_headers(s.path for s in d.segments))
        return self.checked

    @property
    def up_to_date(self) -> tuple[int, int]:
        """Raft's "log up to date" order: the last epoch, then the log end offset."""
        return (self.report.last_epoch or -1, self.report.log_end or 0)


@dataclass
class QuorumAnalysis:
    nodes: list[NodeLog]
    voters: list[int]
    majority_end: int | None
    """The log end offset that a majority of the voters present reach (None: too few voters read)."""
    divergence: dict[tuple[str, str], int | None] = field(default_factory=dict)
    """(node, node) -> the first offset where their logs differ (None: one is a prefix of the other)."""
    rebuild_from: str | None = None
    """The node an operator asked the rebuild steps from (``quorum --rebuild-from``)."""

    @property
    def voters_here(self) -> list[int]:
        """The voter ids whose directories were given (a voter given twice counts once)."""
        return sorted({n.report.node_id for n in self.nodes if n.report.node_id in self.voters})

    @property
    def whole_voters_here(self) -> list[int]:
        """The voter ids given whose files validate (a damaged copy is no voter to count on)."""
        return sorted({n.report.node_id for n in self.candidates if n.report.node_id is not None})

    @property
    def majority_here(self) -> bool:
        """Whether the voters given whose files validate are a majority of the voter set."""
        return bool(self.voters) and len(self.whole_voters_here) > len(self.voters) // 2

    @property
    def candidates(self) -> list[NodeLog]:
        """Voters whose files validate: the only nodes a rebuild may copy."""
        return [n for n in self.nodes if n.report.role == "voter" and n.validity.whole]

    @property
    def rebuild_source(self) -> NodeLog | None:
        """The node the steps copy: the one asked for, else the most up-to-date candidate."""
        if self.rebuild_from is not None:
            return next((n for n in self.nodes if n.label == self.rebuild_from), None)
        return max(self.candidates, key=lambda n: n.up_to_date, default=None)

    @property
    def rebuild_shown(self) -> bool:
        """Steps are printed only when the voters given cannot form a majority, or when asked."""
        return self.rebuild_from is not None or (len(self.nodes) > 0 and not self.majority_here)

    @property
    def committed_below(self) -> tuple[int, str] | None:
        """(end offset, node) of the newest snapshot any node holds: every offset below it was
        committed, since Kafka writes snapshots only from committed records.  The one proof of
        commitment on disk (the high watermark is not kept, and a fetch, a broker's included,
        reads the leader's log uncommitted: ``KafkaRaftClient.tryCompleteFetchRequest``)."""
        return max(((s.end_offset, n.label) for n in self.nodes for s in n.report.snapshots), default=None)

    @property
    def safe_end(self) -> int | None:
        """Offsets below this are held by a majority or known committed."""
        known = self.committed_below
        if self.majority_end is None:
            return None
        return max(self.majority_end, known[0] if known else 0)

    @property
    def most_up_to_date(self) -> NodeLog:
        return max(self.nodes, key=lambda n: n.up_to_date)

    def at_risk(self, node: NodeLog) -> list[str]:
        """``log`` lines of ``node``'s records past :attr:`safe_end` (the first few)."""
        safe = self.safe_end
        if safe is None or (node.report.log_end or 0) <= safe:
            return []
        lines = []
        try:
            plan = log_plan(node.directory, safe)
            for entry in iter_log(plan, first=safe, payloads=False):
                lines.append(f"{entry.offset:>10}  epoch {entry.epoch:<4} {entry.record:<31} {entry.summary}")
                if len(lines) == AT_RISK_SHOWN:
                    break
        except MetashellError as e:
            lines.append(f"(cannot read them: {e})")
        return lines

    def losses(self, node: NodeLog) -> list[tuple[str, int, int]]:
        """What rebuilding from ``node`` would throw away: per other node, the offsets
        ``[start, end)`` it holds that ``node`` lacks or holds differently."""
        out = []
        mine = node.report.log_end or 0
        for other in sorted(self.nodes, key=lambda n: n.label):
            if other is node:
                continue
            theirs = other.report.log_end or 0
            same = node.batches.digest() == other.batches.digest()  # copies of one log: not walked
            start = None if same else first_difference(node.batches, other.batches)
            start = mine if start is None else start
            if theirs > start:
                out.append((other.label, start, theirs))
        return out

    def timeline(self) -> list[tuple[TimelineEvent, list[str]]]:
        """Every node's timeline merged: each event once, with the nodes whose files hold it."""
        merged: dict[tuple[int, str, str], tuple[TimelineEvent, list[str]]] = {}
        for n in sorted(self.nodes, key=lambda n: n.label):
            for e in n.report.events:
                merged.setdefault((e.offset, e.kind, e.words), (e, []))[1].append(n.label)
        return [merged[k] for k in sorted(merged)]


def first_difference(a: BatchKeys, b: BatchKeys) -> int | None:
    """The first offset at which two logs' batches differ, where both hold data (None: none).
    Both are walked in step from where they overlap: linear in their length, no table built."""
    if not len(a) or not len(b):
        return None
    start = max(a.base[0], b.base[0])
    end = min(a.last[-1], b.last[-1])
    i = bisect_left(a.last, start)  # the first batch of ``a`` that reaches the overlap
    j = bisect_left(b.base, a.base[i]) if i < len(a) else len(b)
    while i < len(a) and a.base[i] <= end:
        while j < len(b) and b.base[j] < a.base[i]:
            j += 1
        if j >= len(b) or not a.same(i, b, j):
            return a.base[i]
        i += 1
        j += 1
    return None


def analyse(directories: list[tuple[str, MetadataLogDir]], rebuild_from: str | None = None) -> QuorumAnalysis:
    """Several nodes' directories, labelled (see the module docstring)."""
    nodes = []
    for label, d in directories:
        headers = batch_headers(s.path for s in d.segments)  # read once: for the report and the keys
        nodes.append(NodeLog(label, d, node_report(d, headers), BatchKeys(headers)))
        del headers  # (a node's headers are its largest transient: let each go before the next)
    voters: list[int] = []
    for n in sorted(nodes, key=lambda n: n.up_to_date, reverse=True):
        if n.report.voters:
            voters = n.report.voters
            break
    held: dict[int, int] = {}  # a voter given twice (a copy) counts once, with the shorter log
    for n in nodes:
        if n.report.node_id in voters:
            end = n.report.log_end or 0
            held[n.report.node_id] = min(end, held.get(n.report.node_id, end))
    ends = sorted(held.values(), reverse=True)
    majority = len(voters) // 2 + 1
    majority_end = ends[majority - 1] if voters and len(ends) >= majority else None
    divergence = {}
    for i, a in enumerate(nodes):  # copies of one log (equal digests) are not walked pair by pair
        for b in nodes[i + 1 :]:
            same = a.batches.digest() == b.batches.digest()
            divergence[(a.label, b.label)] = None if same else first_difference(a.batches, b.batches)
    return QuorumAnalysis(nodes, voters, majority_end, divergence, rebuild_from)
