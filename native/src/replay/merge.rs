//! `PartitionRegistration.merge` for a plain PartitionChangeRecord, stated once for the native core,
//! as `partition.merge_change` states it for Python: the arrays the change carries (in the table's
//! order, `slots::UNLESS_NULL`), then the leader (and its epoch), the recovery state, and the
//! partition epoch. A made partition (`replay.rs`) and a waiting row (`deferred.rs`) are the two
//! places a change lands; each says how a step is done there (`ChangeTarget`).

use crate::decode::generated::RawFields;
use crate::replay::slots::{self, UnlessNull};
use crate::rt::Raw;

/// Where a change is applied: how each step of the merge is done there.
pub trait ChangeTarget {
    type Error;
    /// The change carries this array (not null): it replaces the old one.
    fn set_array(&mut self, carried: &UnlessNull, value: &Raw<'_>) -> Result<(), Self::Error>;
    /// A new leader (anything but `NO_LEADER_CHANGE`): set, and its leader epoch goes up by one.
    fn set_leader(&mut self, leader: i64) -> Result<(), Self::Error>;
    /// A recovery state other than -1 (unchanged).
    fn set_recovery(&mut self, state: i64) -> Result<(), Self::Error>;
    /// Every change: the partition epoch goes up by one.
    fn bump_partition_epoch(&mut self) -> Result<(), Self::Error>;
}

/// Apply a plain change's fields `f` (`PARTITION_CHANGE_FIELDS`), whose leader and recovery state
/// the caller has read, to `target`.
pub fn merge_change<T: ChangeTarget>(
    f: &RawFields<'_>,
    leader: i64,
    recovery: i64,
    no_leader_change: i64,
    target: &mut T,
) -> Result<(), T::Error> {
    for carried in &slots::UNLESS_NULL {
        if !matches!(f[carried.field], Raw::Null) {
            target.set_array(carried, &f[carried.field])?;
        }
    }
    if leader != no_leader_change {
        target.set_leader(leader)?;
    }
    if recovery != -1 {
        target.set_recovery(recovery)?;
    }
    target.bump_partition_epoch()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::generated::RAW_WIDTH;
    use crate::rt::Fx;

    /// Records the steps in the order they come.
    #[derive(Default)]
    struct Steps(Vec<String>);

    impl ChangeTarget for Steps {
        type Error = ();
        fn set_array(&mut self, carried: &UnlessNull, _: &Raw<'_>) -> Result<(), ()> {
            self.0.push(slots::NAMES[carried.slot].to_string());
            Ok(())
        }
        fn set_leader(&mut self, leader: i64) -> Result<(), ()> {
            self.0.push(format!("leader {leader}"));
            Ok(())
        }
        fn set_recovery(&mut self, state: i64) -> Result<(), ()> {
            self.0.push(format!("recovery {state}"));
            Ok(())
        }
        fn bump_partition_epoch(&mut self) -> Result<(), ()> {
            self.0.push("partition epoch".to_string());
            Ok(())
        }
    }

    fn steps(f: &RawFields<'_>, leader: i64, recovery: i64) -> Vec<String> {
        let mut s = Steps::default();
        merge_change(f, leader, recovery, -2, &mut s).unwrap();
        s.0
    }

    /// Null arrays, `NO_LEADER_CHANGE` and -1 change nothing; the partition epoch always moves.
    #[test]
    fn an_empty_change_bumps_only_the_partition_epoch() {
        let f: RawFields<'_> = [Raw::Null; RAW_WIDTH];
        assert_eq!(steps(&f, -2, -1), ["partition epoch"]);
    }

    /// Every carried array in the table's order, then the leader, the recovery state, the epoch.
    #[test]
    fn a_full_change_sets_every_field_in_the_tables_order() {
        let mut f: RawFields<'_> = [Raw::Null; RAW_WIDTH];
        for carried in &slots::UNLESS_NULL {
            f[carried.field] = Raw::Array(Fx::I32, &[0, 0, 0, 1]);
        }
        let mut expected: Vec<String> = slots::UNLESS_NULL.iter().map(|c| slots::NAMES[c.slot].to_string()).collect();
        expected.extend(["leader 3", "recovery 1", "partition epoch"].map(String::from));
        assert_eq!(steps(&f, 3, 1), expected);
    }
}
