//! `Partition`'s slots and the partition records' fields: GENERATED, do not edit.
//!
//! Made by `python scripts/gen_partition_fields.py` from the field table in `metashell/image/partition_fields.py`;
//! checked byte for byte by the tests. A slot's index is its place in `Partition.__slots__` (the
//! order of a journal entry's values, and of `Maker::offsets`).
// A table: each slot's index is declared whether or not a rule names it.
#![allow(dead_code)]

/// How many slots a `Partition` has.
pub const COUNT: usize = 11;

/// `Partition.__slots__`, in order.
pub const NAMES: [&str; COUNT] = [
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
];

pub const ADDING_REPLICAS: usize = 0;
pub const DIRECTORIES: usize = 1;
pub const ELR: usize = 2;
pub const ISR: usize = 3;
pub const LAST_KNOWN_ELR: usize = 4;
pub const LEADER: usize = 5;
pub const LEADER_EPOCH: usize = 6;
pub const LEADER_RECOVERY_STATE: usize = 7;
pub const PARTITION_EPOCH: usize = 8;
pub const REMOVING_REPLICAS: usize = 9;
pub const REPLICAS: usize = 10;

/// One value per slot, by name: the only place where values are put in slot order (`into_array`).
pub struct Slots<T> {
    pub leader: T,
    pub leader_epoch: T,
    pub partition_epoch: T,
    pub replicas: T,
    pub isr: T,
    pub elr: T,
    pub last_known_elr: T,
    pub adding_replicas: T,
    pub removing_replicas: T,
    pub directories: T,
    pub leader_recovery_state: T,
}

impl<T> Slots<T> {
    /// The values in slot order.
    pub fn into_array(self) -> [T; COUNT] {
        [self.adding_replicas, self.directories, self.elr, self.isr, self.last_known_elr, self.leader, self.leader_epoch, self.leader_recovery_state, self.partition_epoch, self.removing_replicas, self.replicas]
    }
}

/// Each field's place in a decoded PartitionRecord (`PARTITION_FIELDS`).
pub mod record {
    pub const LEADER: usize = 6;
    pub const LEADER_EPOCH: usize = 8;
    pub const PARTITION_EPOCH: usize = 9;
    pub const REPLICAS: usize = 2;
    pub const ISR: usize = 3;
    pub const ELR: usize = 11;
    pub const LAST_KNOWN_ELR: usize = 12;
    pub const ADDING_REPLICAS: usize = 5;
    pub const REMOVING_REPLICAS: usize = 4;
    pub const DIRECTORIES: usize = 10;
    pub const LEADER_RECOVERY_STATE: usize = 7;
}

/// Each carried field's place in a decoded PartitionChangeRecord (`PARTITION_CHANGE_FIELDS`).
pub mod change {
    pub const LEADER: usize = 3;
    pub const REPLICAS: usize = 4;
    pub const ISR: usize = 2;
    pub const ELR: usize = 9;
    pub const LAST_KNOWN_ELR: usize = 10;
    pub const ADDING_REPLICAS: usize = 6;
    pub const REMOVING_REPLICAS: usize = 5;
    pub const DIRECTORIES: usize = 8;
    pub const LEADER_RECOVERY_STATE: usize = 7;
}

/// The array fields' places in a waiting partition's row (`deferred::Row`).
pub mod array {
    /// How many array fields a partition has.
    pub const COUNT: usize = 7;
    pub const REPLICAS: usize = 0;
    pub const ISR: usize = 1;
    pub const ELR: usize = 2;
    pub const LAST_KNOWN_ELR: usize = 3;
    pub const ADDING_REPLICAS: usize = 4;
    pub const REMOVING_REPLICAS: usize = 5;
    pub const DIRECTORIES: usize = 6;
}

/// One value per array field, by name: the only place where they are put in row order.
pub struct Arrays<T> {
    pub replicas: T,
    pub isr: T,
    pub elr: T,
    pub last_known_elr: T,
    pub adding_replicas: T,
    pub removing_replicas: T,
    pub directories: T,
}

impl<T> Arrays<T> {
    /// The values in row order (`array`).
    pub fn into_array(self) -> [T; array::COUNT] {
        [self.replicas, self.isr, self.elr, self.last_known_elr, self.adding_replicas, self.removing_replicas, self.directories]
    }
}

/// A field a PartitionChangeRecord replaces unless it is null (`Merge.UNLESS_NULL`): where it is in
/// the decoded record, in a partition and in a waiting row.
pub struct UnlessNull {
    pub field: usize,
    pub slot: usize,
    pub array: usize,
}

/// The change record's nullable arrays, in the order Python's `merge_change` interns them.
pub const UNLESS_NULL: [UnlessNull; 5] = [
    UnlessNull { field: change::ISR, slot: ISR, array: array::ISR },
    UnlessNull { field: change::ELR, slot: ELR, array: array::ELR },
    UnlessNull { field: change::LAST_KNOWN_ELR, slot: LAST_KNOWN_ELR, array: array::LAST_KNOWN_ELR },
    UnlessNull { field: change::ADDING_REPLICAS, slot: ADDING_REPLICAS, array: array::ADDING_REPLICAS },
    UnlessNull { field: change::REMOVING_REPLICAS, slot: REMOVING_REPLICAS, array: array::REMOVING_REPLICAS },
];
