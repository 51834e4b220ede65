"""Every table that decides something per metadata record type outside the replayer covers every
type, or says why not (issue 57): a new schema fails here at each place a decision is needed, as
the replayer's own dispatch fails on a type without a rule.  (Spark's key columns have theirs in
``test_spark_tables.py``: ``key_columns.KEYLESS``.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import run_cli

from metashell.image.changelog import SAID_BY_NAME, _Summaries
from metashell.image.history import HISTORY_FOLLOWS, HISTORY_IGNORES
from metashell.log.encoding import build_batch
from metashell.protocol.metadata import encode_metadata_record
from metashell.protocol.record_type import SCHEMA_NAMES, RecordType


@pytest.mark.parametrize("record_type", list(RecordType), ids=lambda t: SCHEMA_NAMES[t])
def test_log_summarises_every_record_type_or_says_why_not(record_type: RecordType) -> None:
    name = SCHEMA_NAMES[record_type]
    summarised = hasattr(_Summaries, f"_{name}")
    assert summarised != (record_type in SAID_BY_NAME), (
        f"{name}: a _{name} summary in image/changelog.py, or its reason in SAID_BY_NAME (not both)"
    )


@pytest.mark.parametrize("record_type", list(RecordType), ids=lambda t: SCHEMA_NAMES[t])
def test_history_follows_every_record_type_or_says_why_not(record_type: RecordType) -> None:
    assert (record_type in HISTORY_FOLLOWS) != (record_type in HISTORY_IGNORES), (
        f"{SCHEMA_NAMES[record_type]}: in image/history.py's HISTORY_FOLLOWS, or its reason in HISTORY_IGNORES"
    )


def test_a_partitions_history_tells_an_elr_clear(tmp_path: Path) -> None:
    """ClearElrRecord (Kafka 4.x) empties the ELR and last-known ELR of its topic's partitions (an
    empty name: every topic) and bumps their epoch; history followed PartitionChangeRecords only, so
    it told nothing and its state kept the old ELR.  Now it says so, as ``log`` does, and the state
    it ends with is the image's."""
    tid = bytes(range(16))
    records = [
        encode_metadata_record("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 25}),
        encode_metadata_record("TopicRecord", 0, {"Name": "t", "TopicId": tid}),
        encode_metadata_record(
            "PartitionRecord",
            2,
            {
                "PartitionId": 0,
                "TopicId": tid,
                "Replicas": [1, 2, 3],
                "Isr": [1],
                "Leader": 1,
                "LeaderEpoch": 4,
                "PartitionEpoch": 7,
                "EligibleLeaderReplicas": [2],
                "LastKnownElr": [3],
            },
        ),
        encode_metadata_record("ClearElrRecord", 0, {"TopicName": "t"}),
    ]
    log_dir = tmp_path / "__cluster_metadata-0"
    log_dir.mkdir()
    (log_dir / "00000000000000000000.log").write_bytes(
        b"".join(build_batch(i, 1, [r], 1_700_000_000_000 + i) for i, r in enumerate(records))
    )
    status, out, err = run_cli("-d", str(log_dir), "history", "/topics/t/0")
    assert status == 0, err
    last = out.strip().splitlines()[-1]
    assert "ClearElrRecord" in last and "cleared: elr [2] -> []; last known elr [3] -> []" in last, out
    _, out, _ = run_cli("-d", str(log_dir), "--json", "history", "/topics/t/0")
    told = json.loads(out.strip().splitlines()[-1])["changes"]
    _, out, _ = run_cli("-d", str(log_dir), "--json", "cat", "/topics/t/0")
    image = json.loads(out)["value"]
    assert told == {"EligibleLeaderReplicas": [[2], []], "LastKnownElr": [[3], []], "PartitionEpoch": [7, 8]}
    assert (image["elr"], image["lastKnownElr"], image["partitionEpoch"]) == ([], [], 8)
    _, out, _ = run_cli("-d", str(log_dir), "log", "--all")
    assert "elr cleared: topic t" in out
