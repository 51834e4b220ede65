"""``doctor``: is this metadata consistent with itself?  Integrity checks beyond ``health``.

``health`` asks whether the cluster the metadata describes is well; ``doctor`` asks whether the
metadata itself can be trusted before anyone acts on it (issue 26).  Each check is one function that
returns what it found; :data:`CHECKS` lists them, and a check that finds nothing says so too, so the
report shows what was looked at:

* the log: batch offsets strictly increasing, leader epochs never going back, each epoch starting
  where ``leader-epoch-checkpoint`` says;
* snapshots: each equals the replay of the older data up to its end offset (metashell replays as
  Kafka does, so a difference is a finding, not a metashell bug);
* partitions: leader in the ISR, ISR and ELR within the replicas, one directory per replica;
* references: replicas on unregistered brokers, configs of topics that do not exist, replicas in a
  directory their broker does not have;
* the load: a metadata transaction left open at the end, no metadata.version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from metashell.errors import MetashellError
from metashell.log.directory import MetadataLogDir, PlanStep, ReadPlan, SnapshotFile
from metashell.log.headers import batch_headers, offset_spans
from metashell.log.plans import from_snapshot, full_plan
from metashell.protocol.uuid import uuid_to_str

from .batch_loader import LoadResult
from .image import MetadataImage
from .kafka_names import CONFIG_RESOURCE_TOPIC
from .loader import load_plan
from .log_validity import validate

__all__ = [
    "CHECKS",
    "ERROR",
    "INFO",
    "WARNING",
    "DoctorFinding",
    "DoctorReport",
    "examine",
    "image_differences",
]

ERROR, WARNING, INFO = "error", "warning", "info"
_SHOWN = 10


@dataclass
class DoctorFinding:
    key: str
    severity: str
    title: str
    items: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "severity": self.severity, "title": self.title, "items": self.items}


@dataclass
class DoctorReport:
    """The findings, and a verdict that follows from their severities by one rule:

    * ``INCONSISTENT``: an error (a damaged batch, a gap inside the log, epochs out of order, a
      snapshot unlike the replay before it, a partition or transaction Kafka would never write);
    * ``CONSISTENT WITH NOTES``: warnings only (references to what is not there);
    * ``CONSISTENT``: nothing worse than information (what retention removed, what was not checked);
    * ``NO DATA``: no batch and no snapshot at all (empty files are no evidence of anything).

    ``doctor --exit-code`` gives 0, 1, 2 and 3 for them, as monitoring plugins do."""

    checked: list[str]
    """The checks that ran (their titles), whether or not they found anything."""
    findings: list[DoctorFinding]
    no_data: str = ""
    """Why there is nothing to examine, or ""."""

    @property
    def clean(self) -> bool:
        return not self.no_data and not any(f.severity in (ERROR, WARNING) for f in self.findings)

    @property
    def word(self) -> str:
        if self.no_data:
            return "NO DATA"
        if any(f.severity == ERROR for f in self.findings):
            return "INCONSISTENT"
        return "CONSISTENT WITH NOTES" if any(f.severity == WARNING for f in self.findings) else "CONSISTENT"

    @property
    def exit_status(self) -> int:
        return {"CONSISTENT": 0, "CONSISTENT WITH NOTES": 1, "INCONSISTENT": 2, "NO DATA": 3}[self.word]

    def verdict(self) -> str:
        word = self.word
        if word == "NO DATA":
            return f"NO DATA: {self.no_data}"
        if word == "CONSISTENT":
            return f"CONSISTENT: {len(self.checked)} check(s), nothing wrong"
        severities = (ERROR, WARNING) if word == "INCONSISTENT" else (WARNING,)
        bad = [f for f in self.findings if f.severity in severities]
        return f"{word}: " + "; ".join(f"{len(f.items)} {f.title}" for f in bad)

    def lines(self, show_all: bool = False) -> Iterator[str]:
        yield self.verdict()
        for f in self.findings:
            yield ""
            yield f"{f.title}: {len(f.items)} [{f.severity}]"
            for n, item in enumerate(f.items):
                if n == _SHOWN and not show_all:
                    yield f"  ... and {len(f.items) - _SHOWN} more (doctor --all lists every one)"
                    break
                yield f"  {item}"
        yield ""
        yield "checked: " + ", ".join(self.checked)

    def as_json(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "word": self.word,
            "verdict": self.verdict(),
            "checked": self.checked,
            "findings": [f.as_json() for f in self.findings],
        }


Check = Callable[[MetadataImage, LoadResult, "MetadataLogDir | None"], list[DoctorFinding]]


def examine(image: MetadataImage, end: LoadResult, d: MetadataLogDir | None) -> DoctorReport:
    """Every check of :data:`CHECKS` on ``image`` (the point shown), ``end`` (the load of the whole
    log, for its warnings) and ``d`` (the directory, None for one file or live mode)."""
    findings: list[DoctorFinding] = []
    checked = []
    for title, check, needs_dir in CHECKS:
        if needs_dir and d is None:
            continue
        checked.append(title)
        findings.extend(f for f in check(image, end, d) if f.items)
    order = {ERROR: 0, WARNING: 1, INFO: 2}
    findings.sort(key=lambda f: order[f.severity])
    return DoctorReport(checked, findings, _no_data(image, d))


def _no_data(image: MetadataImage, d: MetadataLogDir | None) -> str:
    """Why there is nothing to examine: no batch in any segment and no snapshot (or "")."""
    if d is None:
        return "" if image.provenance.offset >= 0 else "the file holds no batch"
    if any(not s.is_bootstrap for s in d.snapshots) or offset_spans(s.path for s in d.segments):
        return ""
    return "the directory holds no snapshot and no batch (empty or zero-byte files)"


# -- the log ------------------------------------------------------------------------------------------


def check_log_files(_image: MetadataImage, _end: LoadResult, d: MetadataLogDir | None) -> list[DoctorFinding]:
    """The files by the rules of :mod:`.log_validity` (the same rules ``quorum`` holds a rebuild
    source to): every damaged batch, read past where the framing allows; offsets missing inside the
    log; epochs out of order or against leader-epoch-checkpoint and quorum-state."""
    assert d is not None
    validity = validate(d, batch_headers(s.path for s in d.segments))
    return [
        DoctorFinding(
            "damaged-batches", ERROR, "damaged batch(es) (file, byte, base offset)", validity.damaged
        ),
        DoctorFinding("log-gaps", ERROR, "offset range(s) missing inside the log", validity.gaps),
        DoctorFinding(
            "epoch-order",
            ERROR,
            "leader epoch(s) out of order, or against leader-epoch-checkpoint or quorum-state",
            validity.epochs,
        ),
        DoctorFinding(
            "log-notes", INFO, "note(s) on the files (harmless as Kafka reads them)", validity.notes
        ),
    ]


# -- snapshots ----------------------------------------------------------------------------------------


def _older_plan(d: MetadataLogDir, snap: SnapshotFile, spans: list[tuple[int, int]]) -> ReadPlan | str:
    """The older data that reaches ``snap``'s end without crossing an offset held by no file: the
    log from 0, or an older snapshot and the log from its end; else why there is none.  (A replay
    that ran across offsets retention had deleted called a healthy trimmed directory INCONSISTENT.)"""
    last = snap.end_offset - 1

    def reaches(start: int) -> bool:  # one contiguous run of batches from ``start`` to ``last``
        return any(a <= start <= b + 1 and b >= last for a, b in spans) or start > last

    if d.segments and d.segments[0].base_offset == 0 and reaches(0):
        return full_plan(d)
    older = [s for s in d.snapshots if not s.is_bootstrap and s.end_offset < snap.end_offset]
    for s in sorted(older, key=lambda s: -s.end_offset):
        if reaches(s.end_offset):
            return from_snapshot(d, s)
    if not spans or spans[0][0] > last:
        return "no older data reaches it (the oldest data on disk)"
    if not older and spans[0][0] > 0:
        return (
            f"the oldest snapshot on disk: the log before it starts at offset {spans[0][0]} (retention "
            "deleted what came before, as Kafka does once a snapshot covers it)"
        )
    start = spans[0][0]
    if older and start > max(s.end_offset for s in older):
        newest_older = max(s.end_offset for s in older)
        return (
            f"no older data reaches it: the log starts at offset {start}, after the older snapshots "
            f"(the newest ends at {newest_older}): retention deleted offsets {newest_older}..{start - 1}"
        )
    return (
        f"no older data reaches it without crossing offsets held by no file (the log holds {_spans(spans)})"
    )


def _spans(spans: list[tuple[int, int]]) -> str:
    shown = ", ".join(f"{a}..{b}" for a, b in spans[:4])
    return shown + (" ..." if len(spans) > 4 else "")


def check_snapshots(_image: MetadataImage, _end: LoadResult, d: MetadataLogDir | None) -> list[DoctorFinding]:
    assert d is not None
    differ, unchecked = [], []
    spans = offset_spans(s.path for s in d.segments)  # (read once per file state, shared with _no_data)
    for snap in sorted((s for s in d.snapshots if not s.is_bootstrap), key=lambda s: s.end_offset):
        older = _older_plan(d, snap, spans)
        if isinstance(older, str):
            unchecked.append(f"{snap.path.name}: {older}")
            continue
        alone = ReadPlan(
            [PlanStep("snapshot", snap.path, str(snap.path), snapshot=snap)], snap, snap.end_offset
        )
        try:
            mine = load_plan(alone).image
            replayed = load_plan(older, until_offset=snap.end_offset - 1)
        except MetashellError as e:
            unchecked.append(f"{snap.path.name}: {e}")
            continue
        if replayed.image.provenance.offset != snap.end_offset - 1:
            unchecked.append(
                f"{snap.path.name}: the older data stops at offset {replayed.image.provenance.offset}"
            )
            continue
        diffs = image_differences(mine, replayed.image)
        if diffs:
            differ.append(
                f"{snap.path.name}: differs from replaying the log to offset {snap.end_offset - 1}: "
                + "; ".join(diffs[:5])
            )
    return [
        DoctorFinding(
            "snapshot-differs", ERROR, "snapshot(s) that differ from replaying the older data", differ
        ),
        DoctorFinding("snapshot-unchecked", INFO, "snapshot(s) that could not be checked", unchecked),
    ]


def image_differences(a: MetadataImage, b: MetadataImage) -> list[str]:
    """What differs between two images, area by area (provenance and quorum bookkeeping aside)."""
    out = []
    for area, get in _AREAS.items():
        x, y = get(a), get(b)
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            keys = sorted(
                {str(k) for k in x.keys() ^ y.keys()} | {str(k) for k in x.keys() & y.keys() if x[k] != y[k]}
            )
            out.append(f"{area} ({', '.join(keys[:3])}{' ...' if len(keys) > 3 else ''})")
        else:
            out.append(area)
    return out


_AREAS: dict[str, Callable[[MetadataImage], Any]] = {
    "brokers": lambda i: i.cluster.brokers,
    "controllers": lambda i: i.cluster.controllers,
    "topics": lambda i: {t.name: t.partitions for t in i.topics.by_id.values()},
    "configs": lambda i: i.configs,
    "client quotas": lambda i: i.client_quotas,
    "acls": lambda i: i.acls,
    "scram": lambda i: i.scram,
    "delegation tokens": lambda i: i.delegation_tokens,
    "features": lambda i: (i.features.finalized, i.features.metadata_version, i.features.zk_migration_state),
    "producer ids": lambda i: i.producer_ids.next_producer_id,
}


# -- the image ----------------------------------------------------------------------------------------


def check_partitions(
    image: MetadataImage, _end: LoadResult, _d: MetadataLogDir | None
) -> list[DoctorFinding]:
    no_isr_leader, outside, dirs = [], [], []
    for name, topic in image.topics.by_name.items():
        for pid, p in topic.partitions.items():
            where = f"{name}-{pid}"
            replicas = set(p.replicas)
            if p.leader >= 0 and p.leader not in p.isr:
                no_isr_leader.append(f"{where}: leader {p.leader} is not in its ISR {list(p.isr)}")
            if (
                not replicas.issuperset(p.isr)
                or not replicas.issuperset(p.elr)
                or len(replicas) != len(p.replicas)
            ):
                outside.append(f"{where}: replicas {list(p.replicas)}, isr {list(p.isr)}, elr {list(p.elr)}")
            if p.directories and len(p.directories) != len(p.replicas):
                dirs.append(f"{where}: {len(p.replicas)} replicas, {len(p.directories)} directories")
    return [
        DoctorFinding(
            "leader-not-in-isr", ERROR, "partition(s) whose leader is not in the ISR", no_isr_leader
        ),
        DoctorFinding(
            "isr-outside-replicas",
            ERROR,
            "partition(s) with ISR or ELR outside the replicas (or a replica twice)",
            outside,
        ),
        DoctorFinding("directories-count", ERROR, "partition(s) without one directory per replica", dirs),
    ]


def check_references(
    image: MetadataImage, _end: LoadResult, _d: MetadataLogDir | None
) -> list[DoctorFinding]:
    brokers = image.cluster.brokers
    unknown_broker: dict[int, int] = {}
    foreign_dir = []
    for name, topic in image.topics.by_name.items():
        for pid, p in topic.partitions.items():
            for i, r in enumerate(p.replicas):
                reg = brokers.get(r)
                if reg is None:
                    unknown_broker[r] = unknown_broker.get(r, 0) + 1
                elif i < len(p.directories) and reg.unlists(d := p.directories[i]):
                    foreign_dir.append(
                        f"{name}-{pid}: replica {r} in directory {uuid_to_str(d)}, which broker {r} does not list"
                    )
    orphan_configs = [
        f"topic {name!r} has {len(values)} config(s) but no such topic exists"
        for (kind, name), values in image.configs.items()
        if kind == CONFIG_RESOURCE_TOPIC and name not in image.topics.by_name
    ]
    return [
        DoctorFinding(
            "replicas-on-unknown-brokers",
            WARNING,
            "broker id(s) holding replicas but not registered",
            [f"broker {b}: {n} replica(s)" for b, n in sorted(unknown_broker.items())],
        ),
        # What Kafka writes when a JBOD broker's log directory fails (KIP-858): the broker's
        # registration drops the directory and its replicas keep it, offline
        # (BrokerRegistration.hasOnlineDir).  The metadata is consistent; the replicas are down.
        DoctorFinding(
            "foreign-directories",
            INFO,
            "replica(s) in a directory their broker does not list (offline: a failed log directory)",
            foreign_dir,
        ),
        DoctorFinding(
            "orphan-topic-configs", WARNING, "config(s) of topics that do not exist", orphan_configs
        ),
    ]


def check_load(image: MetadataImage, end: LoadResult, _d: MetadataLogDir | None) -> list[DoctorFinding]:
    open_txn = [w.message for w in end.warnings if "inside a metadata transaction" in w.message]
    no_mv = (
        ["no FeatureLevelRecord sets it: a log from before Kafka 3.3, or the record was lost"]
        if image.features.metadata_version is None and (image.cluster.brokers or image.topics.by_id)
        else []
    )
    stopped = [
        f"{s.source} byte {s.position}: {s.reason}" if s.position is not None else f"{s.source}: {s.reason}"
        for s in end.image.provenance.salvaged
    ]
    # the load started from a snapshot the log does not continue: the image lacks what lay between
    partial = [str(w) for w in end.warnings if w.kind == "partial-image"]
    return [
        DoctorFinding(
            "partial-image",
            ERROR,
            "offsets missing between the snapshot loaded and the log (the image is partial)",
            partial,
        ),
        DoctorFinding(
            "load-stopped",
            ERROR,
            "place(s) the load stopped at (a batch that does not decode as it claims)",
            stopped,
        ),
        DoctorFinding(
            "open-transaction", ERROR, "metadata transaction(s) left open at the end of the log", open_txn
        ),
        DoctorFinding("no-metadata-version", INFO, "metadata.version absent", no_mv),
    ]


CHECKS: list[tuple[str, Check, bool]] = [
    ("batches, offsets and epochs of the files", check_log_files, True),
    ("snapshots against the log", check_snapshots, True),
    ("partitions", check_partitions, False),
    ("references", check_references, False),
    ("the load's end", check_load, False),
]
"""(title, check, needs a directory).  A check returns its findings, empty ones included."""
