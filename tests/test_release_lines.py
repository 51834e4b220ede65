"""Each release line's fixture (issue 27) against Kafka's own tools at points inside its log.

* ``-d DIR --at OFFSET`` against Kafka's metadata shell on a copy of the log cut at that offset: the
  segments' batches up to the offset, in one file, which the shell replays from nothing.  Kafka 4.4's
  shell reads every line and the upgrade chain; each line's own shell is asked too where it has
  ``/image`` as 4.4 lays it out (3.9 on), with what Kafka changed since pinned in ``_as_44_prints``.
* ``describe`` and ``describe acl`` against the ``kafka-topics --describe`` and ``kafka-acls --list``
  answers of the release that wrote the fixture, kept in the manifest (``oracle``) at the end of
  the workload, with the offset they describe.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from test_answers_kafka import _acl_set
from test_cli import run_cli
from test_tree_oracle import IMAGE_CHILDREN, RELEASE_LINES

from metashell.image.image import MetadataImage
from metashell.log import open_metadata_dir
from metashell.shell.sources import open_directory
from metashell.tree import build_root
from metashell.tree.render import kafka_command

MANIFEST: dict[str, dict[str, Any]] = json.loads((FIXTURES / "manifest.json").read_text())
LINES = sorted(n for n, e in MANIFEST.items() if e["description"].startswith("release line"))
ANSWERED = [n for n in LINES if "oracle" in MANIFEST[n]]
CUT = sorted(RELEASE_LINES)
"""The directories compared on cut copies: the release lines and the upgrade chain."""
OWN_SHELL_SINCE = (3, 9)
"""The first release whose shell lays ``/image`` out as 4.4's does (``acls/byId`` came in 3.9)."""

# Kafka's tree without /image/clientQuotas: the shells name default quota entities wrongly and
# then fail (a deliberate difference, docs/tree.md; test_tree_oracle checks it on every snapshot).
TREE = [f"/image/{c}" for c in IMAGE_CHILDREN if c != "clientQuotas"]


def _batches(segment: Path) -> list[tuple[int, int, int, int]]:
    """(position, size, base offset, last offset) of each batch, from the v2 header alone."""
    data = segment.read_bytes()
    out, pos = [], 0
    while pos + 27 <= len(data):
        base, length = struct.unpack_from(">qi", data, pos)
        (delta,) = struct.unpack_from(">i", data, pos + 23)
        out.append((pos, 12 + length, base, base + delta))
        pos += 12 + length
    return out


def cut_copy(fixture: Path, offset: int, dest: Path) -> Path:
    """The fixture's log from offset 0 to ``offset`` (a batch's last offset), as one segment file."""
    segments = sorted((fixture / "__cluster_metadata-0").glob("*.log"))
    assert segments[0].name == f"{0:020d}.log", "the cut copy replays the log from its start"
    parts, last = [], -1
    for seg in segments:
        data = seg.read_bytes()
        for pos, size, _base, end in _batches(seg):
            if end > offset:
                break
            parts.append(data[pos : pos + size])
            last = end
    assert last == offset, f"{offset} is not the last offset of a batch (the cut ends at {last})"
    out = dest / f"{0:020d}.log"
    out.write_bytes(b"".join(parts))
    return out


def _points(name: str) -> list[int]:
    """The batch end nearest the middle of the log, and the offset the kept answers describe."""
    ends = [
        end
        for seg in sorted((FIXTURES / name / "__cluster_metadata-0").glob("*.log"))
        for *_, end in _batches(seg)
    ]
    middle = min(ends, key=lambda e: abs(e - ends[-1] // 2))
    at = MANIFEST[name].get("oracle", {}).get("at", ends[-1])
    return sorted({middle, at})


def _ours(name: str, offset: int) -> str:
    source = open_directory(str(FIXTURES / name), lambda _line: None, True, at=str(offset))
    return kafka_command(build_root(source.image, redact=False), "tree", TREE, redact=False)


def _version(name: str) -> str:
    return str(MANIFEST[name]["kafka_version"])


def _as_44_prints(version: str, text: str) -> str:
    """An older shell's tree as 4.4's shell prints the same image: what changed in Kafka since.

    * ``metadataVersion`` is an ``Optional`` since 4.0 (``Optional[3.9-IV0]``; before: ``3.9-IV0``);
    * ``features/zkMigrationState`` went with ZooKeeper in 4.2 (an empty node in 4.0 and 4.1);
    * ``StandardAcl`` became a Java record in 4.2 (``StandardAcl[...]``; before: ``StandardAcl(...)``);
    * ``BrokerRegistration`` prints ``cordonedDirectories`` since 4.3 (KIP-1066), ``null`` before it.
    """
    v = tuple(int(x) for x in version.split(".")[:2])
    if v < (4, 0):
        text = re.sub(r"^(metadataVersion:\n)  (\S+)$", r"\1  Optional[\2]", text, flags=re.MULTILINE)
    if v < (4, 2):
        text = re.sub(r"^zkMigrationState:\n(  .*\n)*", "", text, flags=re.MULTILINE)
        text = re.sub(r"StandardAcl\((.*)\)$", r"StandardAcl[\1]", text, flags=re.MULTILINE)
    if v < (4, 3):
        text = re.sub(
            r"^(\s*BrokerRegistration\(.*)\)$", r"\1, cordonedDirectories=null)", text, flags=re.MULTILINE
        )
    return text


@pytest.mark.kafka
@pytest.mark.parametrize("name", CUT)
def test_at_an_offset_is_kafkas_shell_on_a_copy_cut_there(
    name: str, kafka_oracle: Any, tmp_path: Path
) -> None:
    empty = kafka_command(build_root(MetadataImage(), redact=False), "tree", TREE, redact=False)
    own = name in LINES and tuple(int(x) for x in _version(name).split(".")[:2]) >= OWN_SHELL_SINCE
    for offset in _points(name):
        (tmp_path / str(offset)).mkdir()
        cut = cut_copy(FIXTURES / name, offset, tmp_path / str(offset))
        mine = _ours(name, offset)
        kafka = kafka_oracle.java_shell_settled(cut, "tree", *TREE, empty=empty)
        assert mine == kafka, f"{name} --at {offset}: /image differs from Kafka 4.4's shell on the cut copy"
        if own and offset == _points(name)[-1]:
            version = _version(name)
            theirs = ""
            for attempt in range(4):  # the shell's own races (test_tree_oracle): ask again while it differs
                theirs = kafka_oracle.java_shell(
                    cut, "tree", *TREE, version=version, strict=False, use_cache=attempt == 0
                )
                if _as_44_prints(version, theirs) == mine:
                    break
            assert mine == _as_44_prints(version, theirs), (
                f"{name} --at {offset}: Kafka {version}'s own shell"
            )


@pytest.mark.kafka
def test_older_shells_lay_out_image_differently(kafka_oracle: Any) -> None:
    """Why lines before 3.9 are compared with 4.4's shell only: 3.3 and 3.4 have no ``/image``, and
    up to 3.8 the ACLs are listed by id straight under ``/image/acls`` (4.4: ``/image/acls/byId``)."""
    snap = open_metadata_dir(FIXTURES / "kafka-3.3").snapshots[-1].path
    assert "/image: no such file or directory" in kafka_oracle.java_shell(
        snap, "ls", "/image", version="3.3.2", strict=False
    )
    snap = open_metadata_dir(FIXTURES / "kafka-3.8").snapshots[-1].path
    listed = kafka_oracle.java_shell(snap, "ls", "/image/acls", version="3.8.1", strict=False).split()
    assert "byId" not in listed and len(listed) == 4


def _fields(line: str) -> dict[str, str]:
    return dict(
        (f.split(": ", 1)[0], f.split(": ", 1)[1]) if ": " in f else (f.rstrip(":"), "")
        for f in line.strip("\t").split("\t")
    )


BROKER = 4
"""ConfigResource type of broker configs (``""``: the cluster-wide default)."""
SYNONYMS = {"log.retention.ms": "retention.ms", "min.insync.replicas": "min.insync.replicas"}
"""The broker configs the workloads set, and the topic config each stands for (Kafka's synonyms)."""

NEWER_FIELDS = {"Elr", "LastKnownElr"}
"""Fields metashell prints as 4.4's kafka-topics does, which older releases' tools do not print."""


@pytest.mark.parametrize("name", ANSWERED)
def test_describe_is_the_release_s_kafka_topics(name: str) -> None:
    entry = MANIFEST[name]
    status, out, err = run_cli("-d", str(FIXTURES / name), "--at", str(entry["oracle"]["at"]), "describe")
    assert status == 0, err
    kafka = entry["oracle"]["kafka-topics --describe"]

    def parts(lines: list[str]) -> dict[tuple[str, str], dict[str, str]]:
        rows = (_fields(x) for x in lines if x.startswith("\tTopic: "))
        return {(r["Topic"], r["Partition"]): r for r in rows}

    def heads(lines: list[str]) -> dict[str, dict[str, str]]:
        rows = (_fields(x.split("\tConfigs: ")[0]) for x in lines if x.startswith("Topic: "))
        return {r["Topic"]: r for r in rows}

    theirs, mine = parts(kafka), parts(out.splitlines())
    assert sorted(mine) == sorted(theirs) != []
    for key, row in theirs.items():
        assert {k: mine[key].get(k) for k in row} == row, key
        assert set(mine[key]) - set(row) <= NEWER_FIELDS, key
    assert heads(out.splitlines()) == heads(kafka)

    # The one deliberate difference (docs/shell.md): Configs lists the topic's overrides, where
    # kafka-topics adds the broker-level settings that apply wherever the topic does not override
    # them: here the cluster-wide log.retention.ms (as retention.ms) the workload sets, and the
    # min.insync.replicas Kafka sets cluster-wide when ELR is turned on (4.0 on).
    def configs(lines: list[str]) -> dict[str, dict[str, str]]:
        rows = (x.split("\tConfigs: ") for x in lines if x.startswith("Topic: "))
        return {_fields(h)["Topic"]: dict(kv.split("=", 1) for kv in c.split(",") if kv) for h, c in rows}

    image = open_directory(
        str(FIXTURES / name), lambda _line: None, True, at=str(entry["oracle"]["at"])
    ).image
    cluster_wide = image.configs.get((BROKER, ""), {})
    broker_level = {topic_key: cluster_wide[k] for k, topic_key in SYNONYMS.items() if k in cluster_wide}
    assert broker_level.get("retention.ms") == "259200000"
    assert {t: {**broker_level, **c} for t, c in configs(out.splitlines()).items()} == configs(kafka)


@pytest.mark.parametrize("name", ANSWERED)
def test_describe_acl_is_the_release_s_kafka_acls(name: str) -> None:
    entry = MANIFEST[name]
    status, out, err = run_cli(
        "-d", str(FIXTURES / name), "--at", str(entry["oracle"]["at"]), "describe", "acl"
    )
    assert status == 0, err
    assert _acl_set(out) == _acl_set("\n".join(entry["oracle"]["kafka-acls --list"])) != set()


def test_every_release_line_has_the_kafka_answers() -> None:
    """The kept answers come with every line (a regenerated fixture without them fails here)."""
    assert ANSWERED == LINES


@pytest.mark.parametrize("name", ["kafka-3.6", "kafka-3.7", "kafka-4.4"])
def test_health_names_the_failed_log_directory(name: str) -> None:
    """From 3.7 broker 4's second log directory fails at the end of the workload: ``health`` names
    the directory and counts the replicas left in it (the ones doctor lists), which Kafka counts
    offline: none of them is in its ISR in the release's own kafka-topics answer."""
    entry = MANIFEST[name]
    at = str(entry["oracle"]["at"])
    status, out, err = run_cli("-d", str(FIXTURES / name), "--at", at, "--json", "health")
    assert status == 0, err
    found = {f["key"]: f for f in json.loads(out)["findings"]}
    if name == "kafka-3.6":  # one log directory per broker before 3.7
        assert "failed-log-directories" not in found
        return
    (item,) = found["failed-log-directories"]["items"]
    status, out, _ = run_cli("-d", str(FIXTURES / name), "--at", at, "--json", "doctor")
    listed = json.loads(out)["findings"]
    (doctor,) = [f["items"] for f in listed if f["key"] == "foreign-directories"]
    assert item["broker"] == 4 and item["replicas"] == len(doctor) > 0
    assert all(item["directory"] in line for line in doctor)
    offline = {line.split(":")[0] for line in doctor}
    kafka = {
        f"{f['Topic']}-{f['Partition']}": f
        for f in map(_fields, entry["oracle"]["kafka-topics --describe"])
        if "Partition" in f
    }
    assert all("4" not in kafka[p]["Isr"].split(",") for p in offline)
    status, out, _ = run_cli("-d", str(FIXTURES / name), "--at", at, "--json", "describe", "broker", "4")
    assert json.loads(out)["offlineLogDirs"] == {item["directory"]: item["replicas"]}
