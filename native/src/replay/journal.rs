//! The time-travel journal's partition changes, kept natively (`image/timeline.py`).
//!
//! Python's journal writes one tuple per PartitionChangeRecord: the partition and the eleven
//! values of its slots before the change. On a long log that is most of the journal, and making
//! those tuples cost about as much as the rest of the journal together; worse, a change can only be
//! written against a made `Partition`, so a journal made every partition of the snapshot as it was
//! read (`deferred.rs` keeps them as rows otherwise). A native run keeps, instead, one `ChangeRun`
//! in the journal for each run of partition changes within a batch, holding per change either:
//!
//! * `Row`: the old 48-byte row of a partition still waiting in its topic's `Pending` (the row
//!   itself is changed in place, as a load without a journal changes it); or
//! * `Slots`: the values a made partition's slots held before the change, only the slots it
//!   replaced, their references moved out of the partition into the run (no tuple, no count
//!   changed).
//!
//! Walking the journal (`timeline._walk`) hands a run its direction; `swap` then swaps each
//! change's values with the image's, in order or in reverse, as `_walk` swaps a tuple's: the same
//! run undoes its changes walked backwards and redoes them walked forwards. A row whose partitions
//! were made since (something read the topic) is swapped into the made partition instead: the
//! change becomes a `Slots` one, holding the slots the old row stands for (`Pending::row_values`).
//!
//! A run never spans a batch mark (`Ctx::seal`), so a walk to a mark applies whole runs only; and a
//! run is only appended to while it is the journal's last entry. A replay run writes its changes
//! into one reused buffer (`Changes`) and moves them into their run when the run ends, before
//! anything else can read the journal (`Ctx::seal`, `Ctx::change_run`). `tests/engine_dump.py` holds the
//! native journal equal to Python's at every offset and in its marks, counting a run as the
//! changes it holds (`__len__`).

use std::sync::Mutex;

use pyo3::ffi;
use pyo3::prelude::*;

use crate::replay::deferred::{Pending, Row};
use crate::replay::slots;
use crate::rt::{self, Obj};

/// All of a partition's slots (a row change made into a slots change).
const ALL_SLOTS: u16 = (1 << slots::COUNT) - 1;

enum Change {
    /// A made partition: its slots in `mask` (bit i: the slot `slots::NAMES[i]`), their values in its
    /// run's `values` from `start` on, in slot order.
    Slots { partition: Py<PyAny>, mask: u16, start: u32 },
    /// The row at `index` of `pending`'s rows, as it was (or will be: the entry holds the other
    /// side of each swap).
    Row { pending: Py<Pending>, index: u32, row: Row },
}

/// Changes, and the slot values of their `Slots` ones (`None` for an empty slot).
#[derive(Default)]
pub struct Changes {
    list: Vec<Change>,
    values: Vec<Option<Py<PyAny>>>,
}

/// `Partition`, and where its slots sit (`partitions::Maker::offsets`): a partition of
/// exactly this type is swapped at these offsets; no other is journalled here.
#[derive(Clone, Copy)]
pub struct Layout<'a> {
    pub partition_cls: &'a Obj<'a>,
    pub offsets: &'a [isize; slots::COUNT],
}

impl Layout<'_> {
    /// The address of slot `i` of `p`, if `p` is exactly a `Partition`.
    fn slot(&self, p: &Obj<'_>, i: usize) -> Option<*mut *mut ffi::PyObject> {
        slot(self.partition_cls.as_ptr(), self.offsets, p, i)
    }
}

fn slot(
    cls: *mut ffi::PyObject,
    offsets: &[isize; slots::COUNT],
    p: &Obj<'_>,
    i: usize,
) -> Option<*mut *mut ffi::PyObject> {
    // SAFETY: reading the type of a live object; for an object of exactly `cls` (`Partition`) the
    // offset is one of its slots (`replay::slot_offsets` checked them against the type).
    unsafe {
        if ffi::Py_TYPE(p.as_ptr()).cast::<ffi::PyObject>() != cls {
            return None;
        }
        Some(p.as_ptr().cast::<u8>().offset(*offsets.get(i)?).cast())
    }
}

/// The changes a replay run journals before they go into their `ChangeRun` (`Ctx::seal`): one
/// buffer, reused, so each change is written where the last one was (cached), and each run gets
/// its changes in one exact allocation. A run's changes kept in the run as they came cost a
/// vector growing 4, 8, 16, a lock per change, and the wait for each write to new memory.
impl Changes {
    /// Change a waiting row with `change` (`Pending::defer_change`: where the row is and what it
    /// was, or None if it changed nothing) and journal what it was; whether it changed one.
    pub fn change_row(
        &mut self,
        pending: &Bound<'_, Pending>,
        change: impl FnOnce(&Pending) -> Option<(u32, Row)>,
    ) -> PyResult<bool> {
        self.list.try_reserve(1).map_err(rt::no_memory)?;
        let Some((index, row)) = change(pending.get()) else {
            return Ok(false);
        };
        self.list.push(Change::Row { pending: pending.clone().unbind(), index, row });
        Ok(true)
    }

    /// Set `new`'s slots of partition `p` (`(slot, value)`, slots ascending), journalling the values
    /// they replace; false (nothing done) if `p` is not exactly a `Partition`.
    pub fn set_slots(&mut self, layout: Layout<'_>, p: &Obj<'_>, new: &[(usize, Obj<'_>)]) -> PyResult<bool> {
        let mask = new.iter().try_fold(0u16, |m, (i, _)| (*i < 11).then_some(m | (1 << i)));
        let (Some(mask), Some(_)) = (mask, layout.slot(p, 0)) else {
            return Ok(false);
        };
        let start = u32::try_from(self.values.len()).map_err(rt::no_memory)?;
        self.list.try_reserve(1).map_err(rt::no_memory)?;
        self.values.try_reserve(new.len()).map_err(rt::no_memory)?;
        let py = p.py();
        for (i, v) in new {
            let at = layout.slot(p, *i).ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("not a Partition"))?;
            // SAFETY: `at` is a slot of the live Partition `p`: it takes the new reference and the
            // one it held (or null) moves into the journal.
            let old = unsafe { std::mem::replace(&mut *at, v.clone().into_ptr()) };
            // SAFETY: `old` is the reference the slot owned (or null), now the journal's alone.
            self.values.push(unsafe { Py::from_owned_ptr_or_opt(py, old) });
        }
        self.list.push(Change::Slots { partition: p.clone().unbind(), mask, start });
        Ok(true)
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// A run of journalled partition changes (module docstring).
#[pyclass(frozen, module = "metashell._native")]
pub struct ChangeRun {
    changes: Mutex<Changes>,
    partition_cls: Py<PyAny>,
    offsets: [isize; slots::COUNT],
}

impl ChangeRun {
    pub fn new(layout: Layout<'_>) -> ChangeRun {
        ChangeRun {
            changes: Mutex::default(),
            partition_cls: layout.partition_cls.clone().unbind(),
            offsets: *layout.offsets,
        }
    }

    /// Move `staged`'s changes to the end of this run's (leaving `staged` empty, its room kept).
    pub fn take(&self, staged: &mut Changes) -> PyResult<()> {
        let mut ch = crate::rt::unpoisoned(&self.changes);
        ch.list.try_reserve_exact(staged.list.len()).map_err(rt::no_memory)?;
        ch.values.try_reserve_exact(staged.values.len()).map_err(rt::no_memory)?;
        let base = u32::try_from(ch.values.len()).map_err(rt::no_memory)?;
        for mut c in staged.list.drain(..) {
            if let Change::Slots { start, .. } = &mut c {
                *start += base;
            }
            ch.list.push(c);
        }
        ch.values.append(&mut staged.values);
        Ok(())
    }

    /// Swap change `k`'s values with the image's.
    fn swap_one(&self, py: Python<'_>, ch: &mut Changes, k: usize) -> PyResult<()> {
        let (partition, mask, start) = match &mut ch.list[k] {
            Change::Slots { partition, mask, start } => (partition.clone_ref(py), *mask, *start as usize),
            Change::Row { pending, index, row } => {
                if pending.get().swap_row(*index, row) {
                    return Ok(());
                }
                // made since it was journalled: from now on a change of the made partition
                let (pending, index, row) = (pending.clone_ref(py), *index, *row);
                let made = pending.get().made(py, index);
                let partition =
                    made.ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("a journalled row was never made"))?;
                let values = pending.get().row_values(py, &row)?;
                let start = ch.values.len();
                let at = u32::try_from(start).map_err(rt::no_memory)?;
                ch.values.try_reserve(values.len()).map_err(rt::no_memory)?;
                ch.values.extend(values.into_iter().map(|v| Some(v.unbind())));
                ch.list[k] = Change::Slots { partition: partition.clone_ref(py), mask: ALL_SLOTS, start: at };
                (partition, ALL_SLOTS, start)
            }
        };
        let p = partition.bind(py);
        for (v, i) in (start..).zip((0..11).filter(|i| mask & (1 << i) != 0)) {
            let at = slot(self.partition_cls.as_ptr(), &self.offsets, p, i)
                .ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("a journalled partition is not a Partition"))?;
            let new = ch.values[v].take().map_or(std::ptr::null_mut(), Py::into_ptr);
            // SAFETY: as in `Changes::set_slots`: the slot and the journal trade their references.
            let old = unsafe { std::mem::replace(&mut *at, new) };
            // SAFETY: `old` is the reference the slot owned (or null), now the journal's alone.
            ch.values[v] = unsafe { Py::from_owned_ptr_or_opt(py, old) };
        }
        Ok(())
    }
}

#[pymethods]
impl ChangeRun {
    /// Swap every change with the image: in order, or from the last back (`backwards`).
    fn swap(&self, py: Python<'_>, backwards: bool) -> PyResult<()> {
        let mut ch = crate::rt::unpoisoned(&self.changes);
        let n = ch.list.len();
        if backwards {
            (0..n).rev().try_for_each(|k| self.swap_one(py, &mut ch, k))
        } else {
            (0..n).try_for_each(|k| self.swap_one(py, &mut ch, k))
        }
    }

    /// How many changes it holds (each one entry of Python's journal).
    fn __len__(&self) -> usize {
        crate::rt::unpoisoned(&self.changes).list.len()
    }

    /// About what it costs in memory, in bytes.
    fn memory_bytes(&self) -> usize {
        let ch = crate::rt::unpoisoned(&self.changes);
        64 + ch.list.capacity() * std::mem::size_of::<Change>() + ch.values.capacity() * 8
    }

    /// What each change is of: `(partition, None)` for a made partition, `(pending, partition id)`
    /// for a waiting row (for tests and benchmarks).
    fn targets(&self, py: Python<'_>) -> Vec<(Py<PyAny>, Option<i32>)> {
        let ch = crate::rt::unpoisoned(&self.changes);
        ch.list
            .iter()
            .map(|c| match c {
                Change::Slots { partition, .. } => (partition.clone_ref(py), None),
                Change::Row { pending, row, .. } => (pending.clone_ref(py).into_any(), Some(row.pid)),
            })
            .collect()
    }
}
