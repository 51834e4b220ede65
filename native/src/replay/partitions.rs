//! Making a `Partition` from a PartitionRecord read raw, exactly as `TopicRules._partition_tuple`
//! makes it: its int lists interned through the replayer's `_ints`, its directories defaulting to
//! the shared tuple of MIGRATING ones. Used by a replay run (`replay.rs`) and by a topic whose
//! partitions were deferred (`deferred.rs`), so both make the same objects.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::decode::generated::RawFields;
use crate::replay::slots::{self, change, record, Slots};
use crate::rt::{self, Fx, Obj, Raw};

/// The replayer's interned tuples (`_ints`), found by the bytes of the array they were decoded
/// from: a snapshot's million partitions share a few thousand replica lists, and looking one up by
/// its bytes needs no tuple made first.
#[derive(Default)]
pub struct Interned {
    /// The `_ints` dict every tuple here is in (a table found holding another is emptied first).
    pub owner: Option<Py<PyAny>>,
    /// By element type (`Fx as usize`): array bytes -> the shared tuple. Hashed with foldhash,
    /// not the default SipHash (every partition record looks up two or three short arrays here:
    /// about 6% of a snapshot's load). Like SipHash here it is seeded at random (per process and
    /// map), so a forged log cannot be made of arrays known in advance to collide.
    pub by_type: [foldhash::HashMap<Vec<u8>, Py<PyAny>>; 9],
}

impl Interned {
    /// `self`, or an empty table if `self` holds another `_ints` dict's tuples.
    pub fn for_ints(self, ints: &Bound<'_, PyDict>) -> Self {
        if self.owner.as_ref().map(|o| o.as_ptr()) == Some(ints.as_ptr()) {
            self
        } else {
            Interned { owner: Some(ints.clone().into_any().unbind()), ..Interned::default() }
        }
    }
}

/// The topic id of a PartitionRecord's fields (in the order of PARTITION_FIELDS) in their plain
/// case (`replay.rs`: what Python applies without a fault or a warning, given that the topic
/// exists), or None.
pub fn plain_topic<'a>(f: &RawFields<'a>) -> Option<&'a [u8]> {
    let Raw::Uuid(tid) = f[1] else {
        return None;
    };
    let n = numbers(f)?;
    let n_dirs = match f[record::DIRECTORIES] {
        Raw::Array(Fx::Uuid, d) => d.len() / 16,
        Raw::Null => 0,
        _ => return None,
    };
    let n_rep = n.replicas.len() / 4;
    if (n_dirs != 0 && n_dirs != n_rep) || (n.recovery != 0 && n.recovery != 1) {
        return None;
    }
    Some(tid)
}

/// The topic id of a PartitionChangeRecord's fields (in the order of PARTITION_CHANGE_FIELDS) in
/// their plain case (`replay.rs`: no replica or directory change, a valid recovery state; Python
/// applies it without a fault if the partition exists), or None.
pub fn plain_change<'a>(f: &RawFields<'a>) -> Option<&'a [u8]> {
    let (Raw::Int(_), Raw::Uuid(tid), Raw::Int(_), Raw::Int(lrs)) =
        (f[0], f[1], f[change::LEADER], f[change::LEADER_RECOVERY_STATE])
    else {
        return None;
    };
    let plain = matches!(f[change::REPLICAS], Raw::Null)
        && matches!(f[change::DIRECTORIES], Raw::Null)
        && (-1..=1).contains(&lrs);
    plain.then_some(tid)
}

/// A PartitionRecord's numbers and its replicas' bytes (`numbers`).
pub struct Numbers<'a> {
    pub pid: i64,
    pub leader: i64,
    pub recovery: i64,
    pub leader_epoch: i64,
    pub partition_epoch: i64,
    pub replicas: &'a [u8],
}

/// The numbers and the replica list of a PartitionRecord's fields (in the order of
/// PARTITION_FIELDS), or None when one is not what a decoded record holds there: what both a
/// partition made at once (`Maker::partition`) and a waiting row (`deferred.rs`) are made from.
pub fn numbers<'a>(f: &RawFields<'a>) -> Option<Numbers<'a>> {
    let (Raw::Int(pid), Raw::Int(leader), Raw::Int(recovery), Raw::Int(leader_epoch), Raw::Int(partition_epoch)) = (
        f[0],
        f[record::LEADER],
        f[record::LEADER_RECOVERY_STATE],
        f[record::LEADER_EPOCH],
        f[record::PARTITION_EPOCH],
    ) else {
        return None;
    };
    let Raw::Array(Fx::I32, replicas) = f[record::REPLICAS] else {
        return None;
    };
    Some(Numbers { pid, leader, recovery, leader_epoch, partition_epoch, replicas })
}

/// `defaultToMigrating`: a plain PartitionRecord's directories (uuids or null) are the
/// shared MIGRATING ones when none is listed or every one is `migrating` (the model's
/// `MIGRATING_DIR`). The rule of both the run (`Maker::partition`) and a waiting row (`deferred.rs`).
pub fn migrating_default(dirs: &Raw<'_>, migrating: &[u8]) -> bool {
    match *dirs {
        Raw::Array(_, d) => d.chunks(16).all(|d| d == migrating),
        _ => true,
    }
}

/// What making a partition needs from the model and the replayer.
pub struct Maker<'py> {
    pub py: Python<'py>,
    pub partition_cls: Obj<'py>,
    /// Where each slot (in `slots::NAMES` order) sits in a `Partition` (`replay::slot_offsets`).
    pub offsets: [isize; slots::COUNT],
    pub empty: Obj<'py>,
    pub migrating_dir: Obj<'py>,
    /// `NO_LEADER_CHANGE`: a change's leader when the leader stays (`deferred.rs` changes rows).
    pub no_leader_change: i64,
    /// `Replayer._migrating`: n -> the shared tuple of n MIGRATING directories.
    pub migrating: Bound<'py, PyDict>,
    pub ints: Bound<'py, PyDict>,
    pub interned: RefCell<Interned>,
}

impl<'py> Maker<'py> {
    /// `(pid, Partition(...))` for a PartitionRecord's fields in their plain case (`plain_topic`).
    pub fn partition(&self, f: &RawFields<'_>) -> PyResult<(Obj<'py>, Obj<'py>)> {
        let not_plain = || pyo3::exceptions::PyValueError::new_err("not a plain PartitionRecord");
        let Numbers { pid, leader, recovery: lrs, leader_epoch: le, partition_epoch: pe, replicas: rep_bytes } =
            numbers(f).ok_or_else(not_plain)?;
        let py = self.py;
        let replicas = self.intern_raw(&f[record::REPLICAS])?;
        let directories = if migrating_default(&f[record::DIRECTORIES], self.migrating_bytes()?) {
            self.migrating_dirs(rep_bytes.len() / 4)?
        } else {
            self.intern_raw(&f[record::DIRECTORIES])?
        };
        let values = Slots {
            leader: rt::int(py, leader)?,
            leader_epoch: rt::int(py, le)?,
            partition_epoch: rt::int(py, pe)?,
            replicas: replicas.clone(),
            directories,
            leader_recovery_state: rt::int(py, lrs)?,
        }
        .with_carried(|a| match f[a.record] {
            // an in-sync partition's ISR is its replica list: shared, without an interning lookup
            Raw::Array(Fx::I32, d) if a.often_replicas && d == rep_bytes => Ok(replicas.clone()),
            ref v => self.intern_raw(v),
        })?;
        let p = self.new_partition(values)?;
        Ok((rt::int(py, pid)?, p))
    }

    /// `Partition(...)` without running `Partition.__init__` (a Python frame per partition, a
    /// fifth of a snapshot's replay): the instance is allocated by its type and each slot set at
    /// its offset, which is what `__init__`'s assignments do. `values` are in slot order;
    /// `tests/test_native_differential.py` holds the objects equal to Python's.
    pub fn new_partition(&self, values: [Obj<'py>; slots::COUNT]) -> PyResult<Obj<'py>> {
        let tp = self.partition_cls.as_ptr() as *mut pyo3::ffi::PyTypeObject;
        // SAFETY: `partition_cls` is the type whose slot offsets `offsets` are (checked against its
        // member descriptors and instance size in `replay::slot_offsets`); the instance comes from
        // the type's own allocator, with every slot empty.
        let obj = rt::own(self.py, unsafe { pyo3::ffi::PyType_GenericAlloc(tp, 0) })?;
        for (v, &at) in values.into_iter().zip(self.offsets.iter()) {
            // SAFETY: `obj` is a new instance of exactly `partition_cls` (its allocator zero-fills
            // it), and `at` is the offset of one of its object slots: the slot is empty, and takes
            // the reference `v` held.
            unsafe { *(obj.as_ptr().cast::<u8>().offset(at).cast::<*mut pyo3::ffi::PyObject>()) = v.into_ptr() };
        }
        // Out of the cyclic collector's sight: a partition holds tuples of ints and uuids and ints,
        // so it is never part of a cycle, and a million of them made after a load (when its pause
        // is over: `Topic.partitions`) had every collection traverse them again, the full ones
        // many times: about half the time it took to make them. CPython does the same to its own
        // tuples and dicts of atoms.
        // SAFETY: `obj` is the live object just made, tracked by its type's allocator if the type
        // is a collected one (untracking checks that it is tracked).
        unsafe {
            if pyo3::ffi::PyType_GetFlags(tp) & pyo3::ffi::Py_TPFLAGS_HAVE_GC != 0 {
                pyo3::ffi::PyObject_GC_UnTrack(obj.as_ptr().cast());
            }
        }
        Ok(obj)
    }

    /// `intern(t, t) if t else EMPTY` for an array read raw: the tuple `num_array` would have made,
    /// shared through `_ints`.
    pub fn intern_raw(&self, v: &Raw<'_>) -> PyResult<Obj<'py>> {
        let (t, data) = match *v {
            Raw::Array(t, data) if !data.is_empty() => (t, data),
            Raw::Null | Raw::Array(..) => return Ok(self.empty.clone()),
            _ => return Err(pyo3::exceptions::PyTypeError::new_err("not an array")),
        };
        let mut interned = self.interned.borrow_mut();
        if let Some(shared) = interned.by_type[t as usize].get(data) {
            return Ok(shared.bind(self.py).clone());
        }
        let size = t.size();
        let made = rt::tuple_with(self.py, data.len() / size, |i| match t {
            Fx::Uuid => rt::bytes_obj(self.py, &data[i * size..(i + 1) * size]),
            _ => rt::int(self.py, rt::element(t, data, i)),
        })?;
        let shared = match self.ints.get_item(&made)? {
            Some(shared) => shared,
            None => {
                self.ints.set_item(&made, &made)?;
                made
            }
        };
        interned.by_type[t as usize].insert(data.to_vec(), shared.clone().unbind());
        Ok(shared)
    }

    /// `Replayer._migrating_dirs(n)`: one shared tuple of n MIGRATING directories per n.
    pub fn migrating_dirs(&self, n: usize) -> PyResult<Obj<'py>> {
        let key = rt::int(self.py, n as i64)?;
        if let Some(t) = self.migrating.get_item(&key)? {
            return Ok(t);
        }
        let t = rt::tuple_with(self.py, n, |_| Ok::<_, PyErr>(self.migrating_dir.clone()))?;
        self.migrating.set_item(key, &t)?;
        Ok(t)
    }

    /// The model's `MIGRATING_DIR`, as bytes.
    pub fn migrating_bytes(&self) -> PyResult<&[u8]> {
        Ok(self.migrating_dir.cast::<PyBytes>()?.as_bytes())
    }
}
