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

/// One value per slot that has a rule of its own, by name; the arrays a change carries
/// (`UNLESS_NULL`) are made by one rule for them all. The only place where values are put in slot
/// order (`with_carried`): a new field with a rule of its own is a compile error where a partition
/// is made, a new carried array is made by the loop that makes the others.
pub struct Slots<T> {
    pub leader: T,
    pub leader_epoch: T,
    pub partition_epoch: T,
    pub replicas: T,
    pub directories: T,
    pub leader_recovery_state: T,
}

impl<T> Slots<T> {
    /// The values in slot order: these, and each carried array made by `carried` (in
    /// `UNLESS_NULL`'s order, the order Python's `make_partition` interns them).
    #[inline]
    pub fn with_carried<E>(self, mut carried: impl FnMut(&UnlessNull) -> Result<T, E>) -> Result<[T; COUNT], E> {
        let isr = carried(&UNLESS_NULL[0])?;
        let elr = carried(&UNLESS_NULL[1])?;
        let last_known_elr = carried(&UNLESS_NULL[2])?;
        let adding_replicas = carried(&UNLESS_NULL[3])?;
        let removing_replicas = carried(&UNLESS_NULL[4])?;
        Ok([adding_replicas, self.directories, elr, isr, last_known_elr, self.leader, self.leader_epoch, self.leader_recovery_state, self.partition_epoch, removing_replicas, self.replicas])
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

/// One value per array field with a rule of its own, by name (the carried ones as in `Slots`): the
/// only place where a row's arrays are put in row order.
pub struct Arrays<T> {
    pub replicas: T,
    pub directories: T,
}

impl<T> Arrays<T> {
    /// The values in row order (`array`): these, and each carried array made by `carried` (in
    /// `UNLESS_NULL`'s order, the order Python's `make_partition` interns them).
    #[inline]
    pub fn with_carried<E>(self, mut carried: impl FnMut(&UnlessNull) -> Result<T, E>) -> Result<[T; array::COUNT], E> {
        let isr = carried(&UNLESS_NULL[0])?;
        let elr = carried(&UNLESS_NULL[1])?;
        let last_known_elr = carried(&UNLESS_NULL[2])?;
        let adding_replicas = carried(&UNLESS_NULL[3])?;
        let removing_replicas = carried(&UNLESS_NULL[4])?;
        Ok([self.replicas, isr, elr, last_known_elr, adding_replicas, removing_replicas, self.directories])
    }
}

/// An array a PartitionChangeRecord carries and replaces unless it is null (`Merge.UNLESS_NULL`),
/// which a PartitionRecord gives as is: where it is in each decoded record, in a partition and in a
/// waiting row.
pub struct UnlessNull {
    pub record: usize,
    pub field: usize,
    pub slot: usize,
    pub array: usize,
    /// Most often the replica list (`PartitionField.often_replicas`): a new partition shares it.
    pub often_replicas: bool,
}

/// The carried arrays, in the table's order (the order Python's `make_partition` and `merge_change`
/// intern them).
pub const UNLESS_NULL: [UnlessNull; 5] = [
    UnlessNull { record: record::ISR, field: change::ISR, slot: ISR, array: array::ISR, often_replicas: true },
    UnlessNull { record: record::ELR, field: change::ELR, slot: ELR, array: array::ELR, often_replicas: false },
    UnlessNull { record: record::LAST_KNOWN_ELR, field: change::LAST_KNOWN_ELR, slot: LAST_KNOWN_ELR, array: array::LAST_KNOWN_ELR, often_replicas: false },
    UnlessNull { record: record::ADDING_REPLICAS, field: change::ADDING_REPLICAS, slot: ADDING_REPLICAS, array: array::ADDING_REPLICAS, often_replicas: false },
    UnlessNull { record: record::REMOVING_REPLICAS, field: change::REMOVING_REPLICAS, slot: REMOVING_REPLICAS, array: array::REMOVING_REPLICAS, often_replicas: false },
];
