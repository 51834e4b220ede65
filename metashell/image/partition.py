"""``PartitionRegistration`` as the image keeps it: GENERATED, do not edit.

Made by ``python scripts/gen_partition_fields.py`` from the field table in ``metashell/image/partition_fields.py``; checked byte for byte by
the tests.  A new partition field is a row there, not an edit here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .atoms import EMPTY, NO_LEADER_CHANGE, Slotted

__all__ = ["Partition", "journal_entry", "make_partition", "merge_change", "swap_entry"]


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
    interned (``intern(v, v)``, the empty one ``EMPTY``), every number as recorded."""
    v = t[3]  # Isr
    isr = intern(v, v) if v else EMPTY
    v = t[11]  # EligibleLeaderReplicas
    elr = intern(v, v) if v else EMPTY
    v = t[12]  # LastKnownElr
    last_known_elr = intern(v, v) if v else EMPTY
    v = t[5]  # AddingReplicas
    adding_replicas = intern(v, v) if v else EMPTY
    v = t[4]  # RemovingReplicas
    removing_replicas = intern(v, v) if v else EMPTY
    return Partition(
        t[6],
        t[8],
        t[9],
        replicas,
        isr,
        elr,
        last_known_elr,
        adding_replicas,
        removing_replicas,
        directories,
        t[7],
    )


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
    v = t[3]  # Leader
    if v != NO_LEADER_CHANGE:
        p.leader = v
        p.leader_epoch += 1
    v = t[2]  # Isr
    if v is not None:
        p.isr = intern(v, v) if v else EMPTY
    v = t[9]  # EligibleLeaderReplicas
    if v is not None:
        p.elr = intern(v, v) if v else EMPTY
    v = t[10]  # LastKnownElr
    if v is not None:
        p.last_known_elr = intern(v, v) if v else EMPTY
    v = t[6]  # AddingReplicas
    if v is not None:
        p.adding_replicas = intern(v, v) if v else EMPTY
    v = t[5]  # RemovingReplicas
    if v is not None:
        p.removing_replicas = intern(v, v) if v else EMPTY
    v = t[7]  # LeaderRecoveryState
    if v != -1:
        p.leader_recovery_state = v
    p.partition_epoch += 1
