"""Every slot of the image, through a snapshot load and a live reset (issue 57).

A snapshot replaces what the image holds (``MetadataImage.clear_for_snapshot``, as Kafka's
``MetadataDelta.finishSnapshot``), and a live ``ImageReset`` forgets everything
(``ImageLoader.reset``).  Each is a list someone must keep up to date, so these tests fill every
slot of every area with a value no fresh image has, run the step, and compare slot by slot with a
fresh image: a slot added to an area and left out of the step fails here, unless it is listed below
with the reason it survives.
"""

from __future__ import annotations

from typing import Any

from metashell.image.batch_loader import ImageLoader
from metashell.image.image import MetadataImage

#: Slots a snapshot does not clear, with Kafka's reason (``MetadataDelta.finishSnapshot``).
KEPT_BY_A_SNAPSHOT = {
    "features.metadata_version": "stays until the snapshot's FeatureLevelRecord sets it",
    "features.zk_migration_state": "stays until the snapshot's ZkMigrationStateRecord sets it",
    "producer_ids.next_producer_id": "stays until the snapshot's ProducerIdsRecord sets it",
    "producer_ids.broker_id": "informational, beside next_producer_id",
    "producer_ids.broker_epoch": "informational, beside next_producer_id",
    "quorum": "not metadata: meta.properties, quorum-state and control records",
    "provenance": "rewritten when the snapshot ends (finish_snapshot)",
}

#: Slots a live reset keeps: what the connection, not the log, says.
KEPT_BY_A_RESET = {
    "quorum": "the leader, voters and cluster id come from the controller the session talks to",
    "provenance.sources": "what was read, for the header (live:host:port)",
    "provenance.records": "counted over the session",
    "provenance.batches": "counted over the session",
    "provenance.caught_up": "a --snapshot file's gate, never set live",
    "provenance.salvaged": "a --salvage load's, never set live",
}

_SKIP = {"lock"}  # not state


def _slots(obj: Any) -> list[str]:
    return [s for cls in type(obj).__mro__ for s in getattr(cls, "__slots__", ()) if s not in _SKIP]


def _has_slots(value: Any) -> bool:
    return bool(getattr(type(value), "__slots__", ())) and not isinstance(value, tuple)


def _fill(obj: Any) -> None:
    """Give every slot, down through the areas, a value a fresh image never has."""
    for name in _slots(obj):
        value = getattr(obj, name)
        if _has_slots(value):
            _fill(value)
        elif isinstance(value, dict):
            value[("sentinel",)] = "sentinel"
        elif isinstance(value, list):
            value.append("sentinel")
        else:
            setattr(obj, name, ("sentinel",) if isinstance(value, tuple) else 987_654)


def _state(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Slot path -> value, for every slot down through the areas."""
    out: dict[str, Any] = {}
    for name in _slots(obj):
        value = getattr(obj, name)
        path = f"{prefix}{name}"
        if _has_slots(value):
            out.update(_state(value, f"{path}."))
        else:
            out[path] = value
    return out


def _differences(got: Any, kept: dict[str, str]) -> list[str]:
    fresh = _state(MetadataImage())
    after = _state(got)
    assert set(after) == set(fresh)
    return [
        path
        for path in sorted(fresh)
        if after[path] != fresh[path] and not any(path == k or path.startswith(f"{k}.") for k in kept)
    ]


def test_the_filling_reaches_every_slot() -> None:
    image = MetadataImage()
    _fill(image)
    fresh = _state(MetadataImage())
    assert all(v != fresh[k] for k, v in _state(image).items()), "a slot the test cannot fill"


def test_a_snapshot_clears_every_slot_but_those_kafka_keeps() -> None:
    image = MetadataImage()
    _fill(image)
    before = _state(image)
    image.clear_for_snapshot()
    assert _differences(image, KEPT_BY_A_SNAPSHOT) == [], "slots a snapshot leaves behind"
    after = _state(image)
    for path in before:  # and what Kafka keeps is kept, not reset by accident
        if any(path == k or path.startswith(f"{k}.") for k in KEPT_BY_A_SNAPSHOT):
            assert after[path] == before[path], path


def test_a_live_reset_forgets_every_slot_but_the_sessions() -> None:
    loader = ImageLoader(MetadataImage())
    _fill(loader.image)
    loader.reset()
    assert _differences(loader.image, KEPT_BY_A_RESET) == [], "slots a live ImageReset leaves behind"
