"""Files on disk and record batches: everything between a KRaft metadata directory and raw records.

This layer knows the v2 record-batch format, Kafka's rules for iterating segments, and which files
of a ``__cluster_metadata-0`` directory to replay.  It never decodes metadata record values (the
image layer does, with ``metashell.protocol``), and it never writes, creates or locks anything.

Public API (everything else is internal)::

    from metashell.log import open_metadata_dir, plan_file, PlanReader

    d = open_metadata_dir(path)          # the __cluster_metadata-0 folder or its parent log dir
    d.meta                               # MetaProperties(version, cluster_id, node_id, directory_id, ...)
    d.quorum                             # QuorumState(data_version, leader_id, leader_epoch, voted_id, ...)
    d.snapshots, d.segments, d.bootstrap, d.leader_epochs, d.topic_id, d.warnings
    plan = d.plan()                      # newest snapshot + log from its end offset (FORMATS 1.2)
    plan = d.plan(until_offset=N)        # time travel: newest snapshot <= N, log up to N
    plan = plan_file(path)               # --snapshot FILE: one .checkpoint or .log file
    plan.steps, plan.snapshot, plan.start_offset, plan.warnings, plan.files

    reader = PlanReader(plan, warn=callback)     # warn(LogWarning) as problems are found
    for kind, batch, records, step in reader:    # BatchRead, in replay order
        # kind: "snapshot" (a new image starts; step.snapshot has end_offset/epoch),
        #       "log", or "bootstrap" (bootstrap.checkpoint, only when there is no log data)
        # batch: RecordBatch header: base_offset, last_offset, partition_leader_epoch,
        #        max_timestamp, is_control, records_count, source (file), position (byte offset)
        # records: [(offset, timestamp, key, value)], log records outside the plan's range removed
        ...
    reader.warnings, reader.files_read, reader.index (BatchIndexEntry per batch), reader.log_last_offset

    plan.seek(reader.index)              # same plan, log reading starts at the right byte
                                         # (files missing from the index: quick header-only scan)
    read_batch_at(path, position)        # re-read one batch found through the index

Lower level, for buffers (Fetch responses, tests, benchmark generator)::

    iter_batches(buf, source, lenient_tail=False, warn=None) -> Iterator[RecordBatch]
    iter_file_batches(path, ...) -> Iterator[RecordBatch]
    batch.entries() -> [(offset, timestamp, key, value)]   # fast path, cached
    batch.records() -> [Record]                            # with headers and sizes
    build_batch(base_offset, epoch, records, timestamp, control=False, compression=0) -> bytes

Errors: corruption raises ``CorruptBatchError`` (a ``metashell.errors.DecodeError`` naming the file
and byte offset); a bad path raises ``MetadataDirError``.  Everything survivable -- torn tails,
gaps, a partial image, KRaft invariant breaches, files deleted by a running Kafka -- is a
:class:`LogWarning` (``kind``, ``message``, ``source``, ``position``).
"""

from typing import TYPE_CHECKING

from metashell.lazy import lazy_exports

if TYPE_CHECKING:
    from metashell.log.batch import RecordBatch
    from metashell.log.compression import COMPRESSION_NAMES
    from metashell.log.directory import (
        MetadataDirError,
        MetadataLogDir,
        MetaProperties,
        PlanStep,
        QuorumState,
        ReadPlan,
        SegmentFile,
        SnapshotFile,
        open_metadata_dir,
        plan_file,
    )
    from metashell.log.encoding import build_batch
    from metashell.log.files import iter_file_batches, read_batch_at
    from metashell.log.problems import CorruptBatchError, LogWarning
    from metashell.log.properties import load_properties, parse_properties
    from metashell.log.reader import BatchIndexEntry, BatchRead, PlanReader, read_plan
    from metashell.log.records import Entry, Record
    from metashell.log.scan import iter_batches

_EXPORTS = {
    "RecordBatch": "metashell.log.batch",
    "COMPRESSION_NAMES": "metashell.log.compression",
    "MetadataDirError": "metashell.log.directory",
    "MetadataLogDir": "metashell.log.directory",
    "MetaProperties": "metashell.log.directory",
    "PlanStep": "metashell.log.directory",
    "QuorumState": "metashell.log.directory",
    "ReadPlan": "metashell.log.directory",
    "SegmentFile": "metashell.log.directory",
    "SnapshotFile": "metashell.log.directory",
    "open_metadata_dir": "metashell.log.directory",
    "plan_file": "metashell.log.directory",
    "build_batch": "metashell.log.encoding",
    "iter_file_batches": "metashell.log.files",
    "read_batch_at": "metashell.log.files",
    "CorruptBatchError": "metashell.log.problems",
    "LogWarning": "metashell.log.problems",
    "load_properties": "metashell.log.properties",
    "parse_properties": "metashell.log.properties",
    "BatchIndexEntry": "metashell.log.reader",
    "BatchRead": "metashell.log.reader",
    "PlanReader": "metashell.log.reader",
    "read_plan": "metashell.log.reader",
    "Entry": "metashell.log.records",
    "Record": "metashell.log.records",
    "iter_batches": "metashell.log.scan",
}
__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "COMPRESSION_NAMES",
    "BatchIndexEntry",
    "BatchRead",
    "CorruptBatchError",
    "Entry",
    "LogWarning",
    "MetaProperties",
    "MetadataDirError",
    "MetadataLogDir",
    "PlanReader",
    "PlanStep",
    "QuorumState",
    "ReadPlan",
    "Record",
    "RecordBatch",
    "SegmentFile",
    "SnapshotFile",
    "build_batch",
    "iter_batches",
    "iter_file_batches",
    "load_properties",
    "open_metadata_dir",
    "parse_properties",
    "plan_file",
    "read_batch_at",
    "read_plan",
]
