//! A topic's partitions kept as rows until something reads them.
//!
//! Making a million `Partition` objects was about 40% of a big snapshot's load (allocations, slots,
//! dict inserts, interning), and the first answer (`ls /`, a broker, a topic's config) reads none
//! of them. So a replay run that creates a topic without a journal (`Replayer.defer_partitions`)
//! gives it a `Pending` (its `_pending` slot, and the topic index's entry), and a plain
//! PartitionRecord for that topic (`partitions::plain_topic`: decoded in full and checked, so every
//! fault is still found while loading) becomes a 48-byte `Row` here: its ints, and its arrays as
//! ids in the replayer's `Tables` (each distinct array kept once). A plain PartitionChangeRecord
//! of a waiting partition changes its row as `replay::partition_change` changes a partition. The
//! partitions are made from the rows, in the dict's order and with `partitions::Maker` (the run's
//! own), the first time anything needs them:
//!
//! * Python reads `Topic.partitions` (a property that calls `Pending.apply` first);
//! * a replay run meets a record for the topic's partitions it cannot keep as a row (a change of a
//!   partition it does not hold, a PartitionRecord while a journal is kept, a topic of more than
//!   `MAX_SCANNED` partitions numbered out of order, an epoch past int32), or Python's rules do
//!   (through the property). A run keeping a journal makes a topic's partitions, unjournalled
//!   (the image held them before the journal began), before it journals any change to them but
//!   a plain PartitionChangeRecord's: that one changes the row, and the journal keeps the old row
//!   (`journal.rs`; the partitions then made from the rows are kept in `made`, where the journal's
//!   row changes find them). A topic made while journalling has no rows.
//!
//! A `Pending` holds no reference to the image or the replayer (its `Stored` maker holds the model's
//! classes and the replayer's `_ints` and `_migrating` tables, which hold tuples only), so no
//! reference cycle runs through it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::decode::generated::RawFields;
use crate::replay::merge;
use crate::replay::partitions::{self, Interned, Maker};
use crate::replay::slots::{self, array, change, record, Arrays, Slots, UnlessNull};
use crate::rt::{self, Fx, Raw};

/// A `Maker` held between runs: what a `Pending` makes its partitions with when Python asks.
pub struct Stored {
    partition_cls: Py<PyAny>,
    offsets: [isize; slots::COUNT],
    empty: Py<PyAny>,
    migrating_dir: Py<PyAny>,
    /// `migrating_dir`'s bytes, which a row's directories are compared with while it is kept.
    migrating_bytes: Box<[u8]>,
    no_leader_change: i64,
    migrating: Py<PyDict>,
    ints: Py<PyDict>,
    /// Its own table (the run's is in its `ReplayCache`, which a `Pending` must not hold: the
    /// cache holds the topic index, which holds the topics).
    interned: Mutex<Interned>,
    /// The arrays its waiting partitions name.
    tables: Mutex<Tables>,
    /// How many rows the topic last given one holds: a new topic's rows are first sized to it.
    last_len: AtomicUsize,
}

impl Stored {
    /// The maker `m` is, kept (with an empty table of its own).
    pub fn keep(m: &Maker<'_>) -> PyResult<Arc<Stored>> {
        Ok(Arc::new(Stored {
            migrating_bytes: m.migrating_bytes()?.into(),
            partition_cls: m.partition_cls.clone().unbind(),
            offsets: m.offsets,
            empty: m.empty.clone().unbind(),
            migrating_dir: m.migrating_dir.clone().unbind(),
            no_leader_change: m.no_leader_change,
            migrating: m.migrating.clone().unbind(),
            ints: m.ints.clone().unbind(),
            interned: Mutex::new(Interned::default()),
            tables: Mutex::default(),
            last_len: AtomicUsize::new(0),
        }))
    }

    /// Whether this maker is the one for `m`'s replayer (its `_ints` table).
    pub fn serves(&self, m: &Maker<'_>) -> bool {
        self.ints.as_ptr() == m.ints.as_ptr() && self.migrating.as_ptr() == m.migrating.as_ptr()
    }

    /// Run `f` with this maker bound to `py`; its table is taken out for the call and put back.
    fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&Maker<'_>) -> PyResult<R>) -> PyResult<R> {
        let ints = self.ints.bind(py).clone();
        let interned = std::mem::take(&mut *crate::rt::unpoisoned(&self.interned)).for_ints(&ints);
        let maker = Maker {
            py,
            partition_cls: self.partition_cls.bind(py).clone(),
            offsets: self.offsets,
            empty: self.empty.bind(py).clone(),
            migrating_dir: self.migrating_dir.bind(py).clone(),
            no_leader_change: self.no_leader_change,
            migrating: self.migrating.bind(py).clone(),
            ints,
            interned: std::cell::RefCell::new(interned),
        };
        let out = f(&maker);
        *crate::rt::unpoisoned(&self.interned) = maker.interned.into_inner();
        out
    }
}

/// An int (or uuid) array's id in `Tables`: the empty array is 0; `MIGRATING` stands for a
/// replica list's worth of MIGRATING directories (`Replayer._migrating_dirs`).
type ArrayId = u32;
const EMPTY: ArrayId = 0;
const MIGRATING: ArrayId = u32::MAX;

/// The arrays the waiting partitions of one replayer name, each kept once (a million partitions
/// share a few thousand replica lists), and the tuple made for each once one is needed.
#[derive(Default)]
pub struct Tables {
    /// By element type (`Fx as usize`): bytes -> id.
    ids: [foldhash::HashMap<Box<[u8]>, ArrayId>; 9],
    arrays: Vec<(Fx, Box<[u8]>)>,
    made: Vec<Option<Py<PyAny>>>,
}

impl Tables {
    /// The id of an array read raw (`EMPTY` for a null or empty one).
    fn id(&mut self, v: &Raw<'_>) -> Option<ArrayId> {
        let (t, data) = match *v {
            Raw::Array(t, data) if !data.is_empty() => (t, data),
            Raw::Null | Raw::Array(..) => return Some(EMPTY),
            _ => return None,
        };
        if let Some(&id) = self.ids[t as usize].get(data) {
            return Some(id);
        }
        // memory asked for first (a failed allocation in Rust aborts): without it, no row is kept
        self.arrays.try_reserve(2).ok()?;
        self.ids[t as usize].try_reserve(1).ok()?;
        let (mut kept, mut key) = (Vec::new(), Vec::new());
        kept.try_reserve_exact(data.len()).ok()?;
        key.try_reserve_exact(data.len()).ok()?;
        kept.extend_from_slice(data);
        key.extend_from_slice(data);
        if self.arrays.is_empty() {
            self.arrays.push((Fx::I32, Box::default())); // EMPTY
        }
        let id = ArrayId::try_from(self.arrays.len()).ok().filter(|&id| id != MIGRATING)?;
        self.arrays.push((t, kept.into_boxed_slice()));
        self.ids[t as usize].insert(key.into_boxed_slice(), id);
        Some(id)
    }

    /// The shared tuple for `id` (`n_replicas` for `MIGRATING`), made by `maker` the first time.
    fn tuple<'py>(&mut self, maker: &Maker<'py>, id: ArrayId, n_replicas: usize) -> PyResult<Bound<'py, PyAny>> {
        let py = maker.py;
        match id {
            EMPTY => return Ok(maker.empty.clone()),
            MIGRATING => return maker.migrating_dirs(n_replicas),
            _ => {}
        }
        let at = id as usize;
        if let Some(Some(t)) = self.made.get(at) {
            return Ok(t.bind(py).clone());
        }
        let (fx, data) =
            self.arrays.get(at).ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("no such array"))?;
        let t = maker.intern_raw(&Raw::Array(*fx, data))?;
        if self.made.len() <= at {
            self.made.try_reserve(at + 1 - self.made.len()).map_err(rt::no_memory)?;
            self.made.resize_with(at + 1, || None);
        }
        self.made[at] = Some(t.clone().unbind());
        Ok(t)
    }

    fn len(&self, id: ArrayId) -> usize {
        self.arrays.get(id as usize).map_or(0, |(fx, data)| data.len() / fx.size())
    }
}

/// A partition waiting to be made: what `Partition`'s slots will hold, its arrays by id (48 bytes;
/// the ints are the records' int32 and int8 fields; an epoch that would pass `i32::MAX` has the
/// partitions made instead, where Python's ints go on). Copied whole into the time-travel journal
/// when a change of it is journalled (`journal.rs`).
#[derive(Clone, Copy)]
pub struct Row {
    pub pid: i32,
    leader: i32,
    leader_epoch: i32,
    partition_epoch: i32,
    recovery: i8,
    /// By `slots::array`'s indices.
    arrays: [ArrayId; array::COUNT],
}

/// The rows a topic keeps searched one by one when a partition id is not its place: a topic of
/// more partitions, numbered otherwise, has its partitions made instead (bounding the work a
/// forged log can ask for).
const MAX_SCANNED: usize = 1024;

/// A topic's waiting partitions, in the order Python's dict would hold them.
#[derive(Default)]
struct Rows(Vec<Row>);

impl Rows {
    /// Where partition `pid` is: `Ok(None)` if absent, `Err` if finding out would scan too far.
    fn find(&self, pid: i32) -> Result<Option<usize>, ()> {
        let rows = &self.0;
        if let Some(at) = usize::try_from(pid).ok().filter(|&at| rows.get(at).is_some_and(|r| r.pid == pid)) {
            return Ok(Some(at));
        }
        if rows.len() > MAX_SCANNED {
            return Err(());
        }
        Ok(rows.iter().position(|r| r.pid == pid))
    }

    /// Room for one more row. A topic's first row has room made for as many as the topic last
    /// given a row holds (a log's topics are mostly alike, and their partition records follow
    /// their topic record): growing each topic's rows 4, 8, 16 reallocated and page-faulted a
    /// sixth of a 1M-partition snapshot's load. The guess is bounded by what that topic really
    /// holds (and by `HINT_LIMIT`), so a forged log cannot make it cost more than the rows do.
    fn reserve_one(&mut self, last_len: &AtomicUsize) -> bool {
        if self.0.capacity() == 0 {
            let hint = last_len.load(Ordering::Relaxed).clamp(1, HINT_LIMIT);
            if self.0.try_reserve_exact(hint).is_ok() {
                return true;
            }
        }
        self.0.try_reserve(1).is_ok()
    }
}

/// The most rows a topic's first row makes room for.
const HINT_LIMIT: usize = 4096;

/// What a partition made from `r` holds, in slot order (`slots::NAMES`).
fn values<'py>(maker: &Maker<'py>, tables: &mut Tables, r: &Row) -> PyResult<[Bound<'py, PyAny>; slots::COUNT]> {
    let py = maker.py;
    let n = tables.len(r.arrays[array::REPLICAS]);
    let mut tuple = |i: usize| tables.tuple(maker, r.arrays[i], n);
    Slots {
        leader: rt::int(py, r.leader.into())?,
        leader_epoch: rt::int(py, r.leader_epoch.into())?,
        partition_epoch: rt::int(py, r.partition_epoch.into())?,
        replicas: tuple(array::REPLICAS)?,
        directories: tuple(array::DIRECTORIES)?,
        leader_recovery_state: rt::int(py, r.recovery.into())?,
    }
    .with_carried(|a| tuple(a.array))
}

/// A change to a waiting row (`merge::ChangeTarget`), made on a copy of it: its arrays found in
/// (or added to) the arrays table, its numbers within the row's types (`Err` otherwise: the
/// partitions are made and Python applies the change).
struct RowChange<'a> {
    tables: &'a mut Tables,
    row: Row,
}

impl merge::ChangeTarget for RowChange<'_> {
    type Error = ();

    fn set_array(&mut self, carried: &UnlessNull, value: &Raw<'_>) -> Result<(), ()> {
        self.row.arrays[carried.array] = self.tables.id(value).ok_or(())?;
        Ok(())
    }

    fn set_leader(&mut self, leader: i64) -> Result<(), ()> {
        self.row.leader = i32::try_from(leader).map_err(|_| ())?;
        self.row.leader_epoch = self.row.leader_epoch.checked_add(1).ok_or(())?;
        Ok(())
    }

    fn set_recovery(&mut self, state: i64) -> Result<(), ()> {
        self.row.recovery = i8::try_from(state).map_err(|_| ())?;
        Ok(())
    }

    fn bump_partition_epoch(&mut self) -> Result<(), ()> {
        self.row.partition_epoch = self.row.partition_epoch.checked_add(1).ok_or(())?;
        Ok(())
    }
}

/// A topic's partitions waiting to be made (module docstring); `None` once they are made.
#[pyclass(frozen, module = "metashell._native")]
pub struct Pending {
    rows: Mutex<Option<Rows>>,
    stored: Arc<Stored>,
    /// A change of a row was journalled (`journal.rs`): the partitions made from the rows are
    /// kept here too, in row order, so that the journal's row changes find them.
    journalled: AtomicBool,
    made: Mutex<Vec<Py<PyAny>>>,
}

impl Pending {
    pub fn new(stored: Arc<Stored>) -> Pending {
        Pending {
            rows: Mutex::new(Some(Rows::default())),
            stored,
            journalled: AtomicBool::new(false),
            made: Mutex::default(),
        }
    }

    /// Keep a plain PartitionRecord's fields (`partitions::plain_topic`) as a row; false once the
    /// partitions are made, or where the row cannot be kept (the record is then applied at once,
    /// after the partitions before it are made).
    pub fn defer(&self, f: &RawFields<'_>) -> bool {
        let mut rows = crate::rt::unpoisoned(&self.rows);
        let Some(rows) = rows.as_mut() else {
            return false;
        };
        let Some(partitions::Numbers { pid, leader, recovery, leader_epoch: le, partition_epoch: pe, replicas: rep }) =
            partitions::numbers(f)
        else {
            return false;
        };
        let (Ok(pid), Ok(leader), Ok(recovery), Ok(le), Ok(pe)) =
            (i32::try_from(pid), i32::try_from(leader), i8::try_from(recovery), i32::try_from(le), i32::try_from(pe))
        else {
            return false;
        };
        let Ok(at) = rows.find(pid) else {
            return false;
        };
        let mut tables = crate::rt::unpoisoned(&self.stored.tables);
        let dirs = if partitions::migrating_default(&f[record::DIRECTORIES], &self.stored.migrating_bytes) {
            Some(MIGRATING)
        } else {
            tables.id(&f[record::DIRECTORIES])
        };
        let (Some(replicas), Some(directories)) = (tables.id(&f[record::REPLICAS]), dirs) else {
            return false;
        };
        let Ok(arrays) = Arrays { replicas, directories }.with_carried(|a| match f[a.record] {
            Raw::Array(Fx::I32, d) if a.often_replicas && d == rep => Ok(replicas),
            ref v => tables.id(v).ok_or(()),
        }) else {
            return false;
        };
        let row = Row { pid, leader, leader_epoch: le, partition_epoch: pe, recovery, arrays };
        match at {
            Some(at) => rows.0[at] = row, // a dict keeps a key's place when its value is replaced
            None => {
                if !rows.reserve_one(&self.stored.last_len) {
                    return false; // no memory for the row (a failed allocation in Rust aborts): made at once
                }
                rows.0.push(row);
                self.stored.last_len.store(rows.0.len(), Ordering::Relaxed);
            }
        }
        true
    }

    /// Apply a plain PartitionChangeRecord's fields (`partitions::plain_change`) to its waiting
    /// row, as `replay::partition_change` does to a partition; returns where the row is and what it
    /// was, or None once the partitions are made, or if no row is partition `pid` (the change then
    /// goes to the rules that report it). `journalled`: the old row goes into the journal.
    pub fn defer_change(&self, f: &RawFields<'_>, no_leader_change: i64, journalled: bool) -> Option<(u32, Row)> {
        let mut rows = crate::rt::unpoisoned(&self.rows);
        let rows = rows.as_mut()?;
        let (Raw::Int(pid), Raw::Int(leader), Raw::Int(recovery)) =
            (f[0], f[change::LEADER], f[change::LEADER_RECOVERY_STATE])
        else {
            return None;
        };
        let (Ok(pid), Ok(recovery)) = (i32::try_from(pid), i8::try_from(recovery)) else {
            return None;
        };
        let Ok(Some(at)) = rows.find(pid) else {
            return None;
        };
        let index = u32::try_from(at).ok()?;
        // checked first, so that a change a row cannot take leaves the arrays table as it was
        let row = &rows.0[at];
        let leader_changes = leader != no_leader_change;
        if (leader_changes && (row.leader_epoch.checked_add(1).is_none() || i32::try_from(leader).is_err()))
            || row.partition_epoch.checked_add(1).is_none()
        {
            return None;
        }
        let mut target = RowChange { tables: &mut crate::rt::unpoisoned(&self.stored.tables), row: *row };
        merge::merge_change(f, leader, recovery.into(), no_leader_change, &mut target).ok()?;
        let row = &mut rows.0[at];
        let old = std::mem::replace(row, target.row);
        if journalled {
            self.journalled.store(true, Ordering::Relaxed);
        }
        Some((index, old))
    }

    /// Make the waiting partitions into `partitions`, in order (a no-op once made), with `maker`.
    pub fn make(&self, maker: &Maker<'_>, partitions: &Bound<'_, PyDict>) -> PyResult<()> {
        let Some(Rows(rows)) = crate::rt::unpoisoned(&self.rows).take() else {
            return Ok(());
        };
        let py = maker.py;
        let mut tables = crate::rt::unpoisoned(&self.stored.tables);
        let journalled = self.journalled.load(Ordering::Relaxed);
        let mut made = crate::rt::unpoisoned(&self.made);
        if journalled {
            made.try_reserve_exact(rows.len()).map_err(rt::no_memory)?;
        }
        for r in &rows {
            let p = maker.new_partition(values(maker, &mut tables, r)?)?;
            if journalled {
                made.push(p.clone().unbind());
            }
            partitions.set_item(rt::int(py, r.pid.into())?, p)?;
        }
        // Putting a partition in tracked the dict (CPython tracks a dict given any object of a
        // collected type): out of the collector's sight again, as its partitions are (they hold
        // no cycle), or every collection after a load traverses a million of them through their
        // dicts. A later insert tracks it again.
        // SAFETY: `partitions` is a live dict; untracking checks that it is tracked.
        unsafe {
            if pyo3::ffi::PyObject_GC_IsTracked(partitions.as_ptr()) != 0 {
                pyo3::ffi::PyObject_GC_UnTrack(partitions.as_ptr().cast());
            }
        }
        Ok(())
    }

    /// Swap the row at `index` with `row` (a journalled change: `journal.rs`); false once the
    /// partitions are made.
    pub fn swap_row(&self, index: u32, row: &mut Row) -> bool {
        let mut rows = crate::rt::unpoisoned(&self.rows);
        match rows.as_mut().and_then(|rows| rows.0.get_mut(index as usize)) {
            Some(at) => {
                std::mem::swap(at, row);
                true
            }
            None => false,
        }
    }

    /// The partition made from the row at `index`, if the rows are made (and journalled).
    pub fn made(&self, py: Python<'_>, index: u32) -> Option<Py<PyAny>> {
        crate::rt::unpoisoned(&self.made).get(index as usize).map(|p| p.clone_ref(py))
    }

    /// The values of a partition's slots (slot order) that `row` stands for, as `make` makes them.
    pub fn row_values<'py>(&self, py: Python<'py>, row: &Row) -> PyResult<[Bound<'py, PyAny>; slots::COUNT]> {
        let kept = self.stored.with(py, |maker| {
            let v = values(maker, &mut crate::rt::unpoisoned(&self.stored.tables), row)?;
            Ok(v.map(Bound::unbind))
        })?;
        Ok(kept.map(|o| o.into_bound(py)))
    }

    /// Prefetch where partition `pid`'s row would be (a hint: nothing is decided by it).
    pub fn prefetch(&self, pid: i32) {
        if let Ok(rows) = self.rows.try_lock() {
            if let (Some(rows), Ok(at)) = (rows.as_ref(), usize::try_from(pid)) {
                crate::rt::prefetch_line(rows.0.as_ptr().wrapping_add(at).cast());
            }
        }
    }

    /// Whether its partitions wait to be made.
    pub fn waiting(&self) -> bool {
        crate::rt::unpoisoned(&self.rows).is_some()
    }
}

#[pymethods]
impl Pending {
    /// Make the deferred partitions into the topic's `partitions` dict (`Topic.partitions`).
    fn apply(&self, py: Python<'_>, partitions: &Bound<'_, PyDict>) -> PyResult<()> {
        if !self.waiting() {
            return Ok(());
        }
        self.stored.with(py, |maker| self.make(maker, partitions))
    }

    /// How many partitions wait (0 once made; for tests).
    fn __len__(&self) -> usize {
        crate::rt::unpoisoned(&self.rows).as_ref().map_or(0, |rows| rows.0.len())
    }
}
