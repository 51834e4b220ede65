"""Verdicts on a directory as Kafka's own retention leaves it (issue 53), made by real Kafka here.

One combined 4.4 node runs with tiny metadata segments, a snapshot every few KiB, NoOp records every
100 ms and ``metadata.max.retention.ms=1000``: within a minute or two Kafka deletes its older
snapshots and every segment below the oldest one it keeps, moves the log start offset, rewrites
``leader-epoch-checkpoint`` (``truncateFromStart``) and leaves the deleted files renamed
``*.deleted`` (``file.delete.delay.ms`` is raised so the copy still holds them, as a copy taken in
that minute does).  The node is then killed and its directory copied, as an operator copies a
crashed controller's disk.

Every verdict is checked on that copy, and on two copies damaged from it, against Kafka's own tools:
``kafka-topics --describe`` (what the node served before it died) and ``kafka-dump-log`` (which
batches are valid, which offsets the segments hold).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, get_dist

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.timeout(900)]

TOPICS = {"orders": 3, "payments": 2, "audit": 1}


@dataclass
class Trimmed:
    """The copy of the node's metadata directory, and what Kafka said before it was killed."""

    path: Path
    described: str = ""
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def partition(self) -> Path:
        return self.path / "__cluster_metadata-0"


def metashell(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metashell", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )


def _segments(partition: Path) -> list[Path]:
    return sorted(partition.glob("*.log"))


@pytest.fixture(scope="module")
def trimmed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from fixtures.cluster import FixtureCluster, small_log_settings, wait_until

    dist = get_dist("4.4.0")
    work = tmp_path_factory.mktemp("retention")
    settings = {
        **small_log_settings("4.4.0", segment_bytes=2048, snapshot_bytes=2500, noop_ms=100),
        "metadata.max.retention.ms": 1000,
        "file.delete.delay.ms": 600_000,  # the renamed *.deleted files stay, as in a copy taken meanwhile
    }
    cluster = FixtureCluster(
        dist, work / "cluster", mode="combined", controller_overrides=settings, broker_overrides=settings
    )
    try:
        cluster.start(timeout=240)
        node = cluster.node(1)
        for name, partitions in TOPICS.items():
            cluster.create_topic(name, partitions)
        partition = node.log_dir / "__cluster_metadata-0"

        def trimmed_by_kafka() -> bool:
            kept = _segments(partition)
            return (
                bool(list(partition.glob("*.log.deleted"))) and bool(kept) and kept[0].name != f"{0:020d}.log"
            )

        # retention runs on Kafka's own schedule (about a minute here): a condition, not a time
        wait_until("Kafka's retention deleting the oldest segments", trimmed_by_kafka, timeout=400, every=2)
        described = cluster.admin(
            "kafka-topics", "--bootstrap-server", cluster.bootstrap_servers, "--describe"
        )
        assert described.returncode == 0, described.stderr
        time.sleep(0.5)  # a few more NoOp batches: the copy's tail is past the describe
        node.kill()
        result = Trimmed(work / "copy", described.stdout)
        shutil.copytree(node.log_dir, result.path)
        yield result
    finally:
        cluster.kill_all()


def _dump_log(segment: Path) -> str:
    proc = get_dist("4.4.0").run(
        "kafka-dump-log", "--cluster-metadata-decoder", "--files", segment, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_kafka_left_what_the_checks_are_about(trimmed: Trimmed) -> None:
    """The copy is what retention leaves: the first segment is gone, renamed ``.deleted`` files
    remain, the oldest snapshot left is at or past the log start, and the epoch file starts later."""
    kept = _segments(trimmed.partition)
    start = int(kept[0].name.split(".")[0])
    snapshots = sorted(int(p.name.split("-")[0]) for p in trimmed.partition.glob("*.checkpoint"))
    assert start > 0 and snapshots and snapshots[0] >= start
    assert list(trimmed.partition.glob("*.log.deleted")) and list(
        trimmed.partition.glob("*.checkpoint.deleted")
    )
    epochs = (trimmed.partition / "leader-epoch-checkpoint").read_text().split("\n")
    assert int(epochs[2].split()[1]) >= start  # truncateFromStart moved the first entry's start


def test_doctor_calls_a_trimmed_directory_consistent(trimmed: Trimmed) -> None:
    """What retention removed is information, never an error: CONSISTENT, status 0, and the oldest
    snapshot is named as the point the log starts being checkable from."""
    proc = metashell("-d", trimmed.path, "--json", "doctor", "--exit-code")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["word"] == "CONSISTENT", proc.stdout
    assert {f["severity"] for f in report["findings"]} <= {"info"}, report["findings"]
    text = metashell("-d", trimmed.path, "doctor").stdout
    assert text.startswith("CONSISTENT"), text
    assert "retention" in text


def test_the_image_is_what_kafka_served(trimmed: Trimmed) -> None:
    """Every topic and partition ``kafka-topics --describe`` listed before the node died, with its
    leader, replicas and ISR, is in the image loaded from the trimmed copy, and nothing else."""
    theirs: dict[tuple[str, int], tuple[str, str, str]] = {}
    for m in re.finditer(
        r"Topic: (\S+)\s+Partition: (\d+)\s+Leader: (\S+)\s+Replicas: (\S+)\s+Isr: (\S+)", trimmed.described
    ):
        theirs[(m.group(1), int(m.group(2)))] = (m.group(3), m.group(4), m.group(5))
    assert {t for t, _ in theirs} == set(TOPICS)
    ours: dict[tuple[str, int], tuple[str, str, str]] = {}
    proc = metashell("-d", trimmed.path, "describe")
    assert proc.returncode == 0, proc.stderr
    for m in re.finditer(
        r"Topic: (\S+)\s+Partition: (\d+)\s+Leader: (\S+)\s+Replicas: (\S+)\s+Isr: (\S+)", proc.stdout
    ):
        ours[(m.group(1), int(m.group(2)))] = (m.group(3), m.group(4), m.group(5))
    assert ours == theirs
    health = metashell("-d", trimmed.path, "--json", "health")
    report = json.loads(health.stdout)
    assert report["healthy"] and report["verdict"].startswith("HEALTHY") and not report["missingFromLog"], (
        report
    )


def test_the_log_holds_what_kafka_dump_log_reads_from_the_oldest_snapshot_on(trimmed: Trimmed) -> None:
    """``log`` starts where the kept history starts (the oldest snapshot) and lists, after it, every
    offset the remaining segments hold as kafka-dump-log reads them; ``--from 0`` (before anything
    left) is clamped to that start with a note, not refused and not replayed across the hole."""
    snapshot = min(int(p.name.split("-")[0]) for p in trimmed.partition.glob("*.checkpoint"))
    dumped = sorted(
        int(m.group(1))
        for seg in _segments(trimmed.partition)
        for m in re.finditer(r"^\| offset: (\d+) ", _dump_log(seg), re.MULTILINE)
        if int(m.group(1)) >= snapshot
    )
    proc = metashell("-d", trimmed.path, "log", "--all", "--json", "--from", "0")
    assert proc.returncode == 0, proc.stderr
    assert "earliest" in proc.stderr or "oldest" in proc.stderr or "starts" in proc.stderr, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    in_log = [
        r["offset"] for r in rows if not r["batch"]["file"].endswith(".checkpoint") and not r["control"]
    ]
    dumped_data = sorted(
        int(m.group(1))
        for seg in _segments(trimmed.partition)
        for m in re.finditer(r"^\| offset: (\d+) .*payload: \{", _dump_log(seg), re.MULTILINE)
        if int(m.group(1)) >= snapshot
    )
    assert sorted(in_log) == dumped_data and dumped_data, (in_log[:5], dumped_data[:5], dumped[:5])


def test_quorum_on_the_trimmed_controller(trimmed: Trimmed) -> None:
    """One voter, its log starting past where it began: a whole log from its start offset (what
    retention removed is no damage), the log start and snapshot Kafka left, no rebuild steps."""
    proc = metashell("-d", trimmed.path, "--json", "quorum")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    start = int(_segments(trimmed.partition)[0].name.split(".")[0])
    assert report["role"] == "voter" and report["rebuild"] is None
    assert report["logStartOffset"] == start
    assert report["validity"]["whole"] and not report["validity"]["gaps"], report["validity"]


def test_a_copy_missing_a_segment_kafka_kept_is_inconsistent(trimmed: Trimmed, tmp_path: Path) -> None:
    """Two forgeries of the trimmed copy that retention never makes, each INCONSISTENT (status 2),
    and health on each says its image is partial: (a) a segment between two others deleted, (b) the
    oldest segment and every snapshot but the oldest deleted, so the log no longer continues it."""
    part = trimmed.partition
    segments = _segments(part)
    snapshots = sorted(part.glob("*.checkpoint"))
    forged: dict[str, list[Path]] = {}
    if len(segments) >= 3:
        forged["middle-segment"] = [segments[1]]
    oldest = int(snapshots[0].name.split("-")[0])
    holding = [s for s in segments if int(s.name.split(".")[0]) <= oldest]
    forged["snapshot-not-continued"] = holding + snapshots[1:]
    assert holding, "the oldest snapshot lies in a segment Kafka kept"
    for name, gone in forged.items():
        copy = tmp_path / name
        shutil.copytree(trimmed.path, copy)
        for path in gone:
            (copy / "__cluster_metadata-0" / path.name).unlink()
        proc = metashell("-d", copy, "--json", "doctor", "--exit-code")
        report = json.loads(proc.stdout or "{}")
        assert proc.returncode == 2 and report["word"] == "INCONSISTENT", (name, proc.stdout + proc.stderr)
        keys = {f["key"] for f in report["findings"] if f["severity"] == "error" and f["items"]}
        assert keys & {"log-gaps", "partial-image"}, (name, report["findings"])
        health = json.loads(metashell("-d", copy, "--json", "health").stdout)
        assert health["missingFromLog"] and "partial image" in health["verdict"], (name, health)


def test_a_flipped_byte_in_the_trimmed_log_is_named_as_kafka_names_it(
    trimmed: Trimmed, tmp_path: Path
) -> None:
    """A byte flipped inside the newest segment's middle batch: kafka-dump-log calls that batch
    invalid, doctor says INCONSISTENT (status 2) naming the same byte position, and quorum on that
    copy does not call it a whole log."""
    from metashell.log.headers import batch_headers

    copy = tmp_path / "damaged"
    shutil.copytree(trimmed.path, copy)
    segment = _segments(copy / "__cluster_metadata-0")[-1]
    headers = batch_headers([segment])
    hit = headers[len(headers) // 2]
    data = bytearray(segment.read_bytes())
    data[hit.position + 70] ^= 0x5A
    segment.write_bytes(bytes(data))
    dumped = get_dist("4.4.0").run("kafka-dump-log", "--files", segment, timeout=180)
    invalid = [int(m.group(1)) for m in re.finditer(r"position: (\d+) .*isvalid: false", dumped.stdout)]
    assert invalid == [hit.position], dumped.stdout[-2000:]
    proc = metashell("-d", copy, "--json", "doctor", "--exit-code")
    report = json.loads(proc.stdout)
    assert proc.returncode == 2 and report["word"] == "INCONSISTENT", proc.stdout
    found = {f["key"]: f["items"] for f in report["findings"]}
    assert [int(i.split(" byte ")[1].split()[0]) for i in found["damaged-batches"]] == invalid
    quorum = metashell("-d", copy, "--json", "--salvage", "quorum")
    assert quorum.returncode == 0, quorum.stderr
    validity = json.loads(quorum.stdout)["validity"]
    assert not validity["whole"] and validity["damaged"], validity


def test_history_on_the_trimmed_copy_says_where_an_object_comes_from(trimmed: Trimmed) -> None:
    """A topic created before the oldest record on disk: ``history`` starts at the snapshot that
    holds it, saying older records are not on disk (not "no record changed it")."""
    proc = metashell("-d", trimmed.path, "history", "/topics/orders")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert "TopicRecord" in first and "older records are not on disk" in first, proc.stdout


def test_a_forged_epoch_outside_the_crc_on_the_trimmed_copy(trimmed: Trimmed, tmp_path: Path) -> None:
    """The last batch's leader epoch set to 7 (the field no CRC covers): kafka-dump-log still calls
    the batch valid, and doctor says INCONSISTENT naming its byte, against quorum-state's epoch."""
    from metashell.log.headers import batch_headers

    copy = tmp_path / "epoch"
    shutil.copytree(trimmed.path, copy)
    segment = _segments(copy / "__cluster_metadata-0")[-1]
    last = batch_headers([segment])[-1]
    data = bytearray(segment.read_bytes())
    data[last.position + 12 : last.position + 16] = (7).to_bytes(4, "big")
    segment.write_bytes(bytes(data))
    dumped = get_dist("4.4.0").run("kafka-dump-log", "--files", segment, timeout=180).stdout
    line = next(ln for ln in dumped.splitlines() if f"position: {last.position} " in ln)
    assert "partitionLeaderEpoch: 7" in line and "isvalid: true" in line, line
    proc = metashell("-d", copy, "--json", "doctor", "--exit-code")
    report = json.loads(proc.stdout)
    assert proc.returncode == 2 and report["word"] == "INCONSISTENT", proc.stdout
    items = next(f["items"] for f in report["findings"] if f["key"] == "epoch-order")
    assert any(f"byte {last.position}: leader epoch 7" in i for i in items), items
