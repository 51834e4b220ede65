"""``PartitionRegistration`` as the image keeps it: GENERATED, do not edit.

Made by ``python scripts/gen_partition_fields.py`` from the field table in ``metashell/image/partition_fields.py``; checked byte for byte by
the tests.  A new partition field is a row there, not an edit here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .atoms import EMPTY, NO_LEADER_CHANGE, Slotted

__all__ = ["Partition", "journal_entry", "make_partition", "merge_change", "swap_entry"]

_new = object.__new__


class Partition(Slotted):
    """``PartitionRegistration``.  Int lists are (interned) tuples, ``directories`` a tuple of
    16-byte uuids with one entry per replica (``MIGRATING_DIR`` when unknown)."""

    __slots__ = (
        "adding_replicas",
        "directories",
        "elr",
        "isr",
        "last_known_elr",
        "leader",
        "leader_epoch",
        "leader_recovery_state",
        "partition_epoch",
        "removing_replicas",
        "replicas",
    )

    def __init__(
        self,
        leader: int,
        leader_epoch: int,
        partition_epoch: int,
        replicas: tuple[Any, ...],
        isr: tuple[Any, ...],
        elr: tuple[Any, ...],
        last_known_elr: tuple[Any, ...],
        adding_replicas: tuple[Any, ...],
        removing_replicas: tuple[Any, ...],
        directories: tuple[Any, ...],
        leader_recovery_state: int,
    ) -> None:
        self.leader = leader
        self.leader_epoch = leader_epoch
        self.partition_epoch = partition_epoch
        self.replicas = replicas
        self.isr = isr
        self.elr = elr
        self.last_known_elr = last_known_elr
        self.adding_replicas = adding_replicas
        self.removing_replicas = removing_replicas
        self.directories = directories
        self.leader_recovery_state = leader_recovery_state

    def copy(self) -> Partition:
        return Partition(
            self.leader,
            self.leader_epoch,
            self.partition_epoch,
            self.replicas,
            self.isr,
            self.elr,
            self.last_known_elr,
            self.adding_replicas,
            self.removing_replicas,
            self.directories,
            self.leader_recovery_state,
        )


def make_partition(
    t: tuple[Any, ...],
    intern: Callable[[Any, Any], Any],
    replicas: tuple[Any, ...],
    directories: tuple[Any, ...],
) -> Partition:
    """A partition from a PartitionRecord decoded as ``PARTITION_FIELDS`` (arrays as tuples), given
    its replicas and directories (checked and made by the replayer's rule): every other array
    interned (``intern(v, v)``, the empty one ``EMPTY``), every number as recorded.  Its slots are
    set here, as ``__init__`` sets them, without a second frame per partition (a snapshot makes a
    million)."""
    (
        _,
        _,
        record_replicas,
        isr,
        removing_replicas,
        adding_replicas,
        leader,
        leader_recovery_state,
        leader_epoch,
        partition_epoch,
        _,
        elr,
        last_known_elr,
    ) = t
    p = _new(Partition)
    p.leader = leader
    p.leader_epoch = leader_epoch
    p.partition_epoch = partition_epoch
    p.replicas = replicas
    p.isr = replicas if isr == record_replicas else intern(isr, isr) if isr else EMPTY
    p.elr = intern(elr, elr) if elr else EMPTY
    p.last_known_elr = intern(last_known_elr, last_known_elr) if last_known_elr else EMPTY
    p.adding_replicas = intern(adding_replicas, adding_replicas) if adding_replicas else EMPTY
    p.removing_replicas = intern(removing_replicas, removing_replicas) if removing_replicas else EMPTY
    p.directories = directories
    p.leader_recovery_state = leader_recovery_state
    return p


def journal_entry(p: Partition) -> tuple[Any, ...]:
    """``timeline.kept(p)`` spelled out (no call per slot): ``(p, *its slot values)``, what a long
    log journals for each partition change."""
    return (
        p,
        p.adding_replicas,
        p.directories,
        p.elr,
        p.isr,
        p.last_known_elr,
        p.leader,
        p.leader_epoch,
        p.leader_recovery_state,
        p.partition_epoch,
        p.removing_replicas,
        p.replicas,
    )


def swap_entry(e: tuple[Any, ...]) -> tuple[Any, ...]:
    """One step of time travel: give ``e``'s partition the values ``e`` holds, and return the entry
    of the values they replace."""
    p = e[0]
    old = (
        p,
        p.adding_replicas,
        p.directories,
        p.elr,
        p.isr,
        p.last_known_elr,
        p.leader,
        p.leader_epoch,
        p.leader_recovery_state,
        p.partition_epoch,
        p.removing_replicas,
        p.replicas,
    )
    (
        _,
        p.adding_replicas,
        p.directories,
        p.elr,
        p.isr,
        p.last_known_elr,
        p.leader,
        p.leader_epoch,
        p.leader_recovery_state,
        p.partition_epoch,
        p.removing_replicas,
        p.replicas,
    ) = e
    return old


def merge_change(p: Partition, intern: Callable[[Any, Any], Any], t: tuple[Any, ...]) -> None:
    """The part of ``PartitionRegistration.merge`` that cannot fail, for a PartitionChangeRecord
    decoded as ``PARTITION_CHANGE_FIELDS`` (arrays as tuples), shared by the replayer's two paths:
    each field's rule is its ``Merge`` in the table (None, -1 or ``NO_LEADER_CHANGE`` = unchanged),
    and every change bumps the partition epoch.  Arrays are interned (``intern(v, v)``), the empty
    one is ``EMPTY``."""
    (
        _,
        _,
        isr,
        leader,
        _,
        removing_replicas,
        adding_replicas,
        leader_recovery_state,
        _,
        elr,
        last_known_elr,
    ) = t
    if isr is not None:
        p.isr = intern(isr, isr) if isr else EMPTY
    if elr is not None:
        p.elr = intern(elr, elr) if elr else EMPTY
    if last_known_elr is not None:
        p.last_known_elr = intern(last_known_elr, last_known_elr) if last_known_elr else EMPTY
    if adding_replicas is not None:
        p.adding_replicas = intern(adding_replicas, adding_replicas) if adding_replicas else EMPTY
    if removing_replicas is not None:
        p.removing_replicas = intern(removing_replicas, removing_replicas) if removing_replicas else EMPTY
    if leader != NO_LEADER_CHANGE:
        p.leader = leader
        p.leader_epoch += 1
    if leader_recovery_state != -1:
        p.leader_recovery_state = leader_recovery_state
    p.partition_epoch += 1
