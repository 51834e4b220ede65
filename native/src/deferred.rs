//! A topic's partitions kept as their records until something reads them.
//!
//! Making a million `Partition` objects was about 40% of a big snapshot's load (allocations, slots,
//! dict inserts, interning), and the first answer (`ls /`, the TUI's first screen, `/brokers`)
//! reads none of them. So a replay run that creates a topic without a journal gives it a `Pending`
//! (its `_pending` slot, and the topic index's entry), and a plain PartitionRecord for that topic
//! (`partitions::plain`: checked and decoded in full, so every fault is still found while loading)
//! only appends its value here. The partitions are made, in record order and by the same
//! `partitions::Maker` as the run, the first time anything needs them:
//!
//! * Python reads `Topic.partitions` (a property that calls `Pending.apply` first);
//! * a replay run meets any other record for the topic's partitions (a change, or a PartitionRecord
//!   while a journal is kept), or Python's rules do (through the property).
//!
//! A `Pending` holds no reference to the image or the replayer (its `Stored` maker holds the model's
//! classes and the replayer's `_ints` and `_migrating` tables, which hold tuples only), so no
//! reference cycle runs through it.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::generated;
use crate::partitions::{Interned, Maker};
use crate::rt::Raw;

const PARTITION_RECORD: u8 = 3;

/// A `Maker` held between runs: what a `Pending` makes its partitions with when Python asks.
pub struct Stored {
    partition_cls: Py<PyAny>,
    offsets: [isize; 11],
    empty: Py<PyAny>,
    migrating_dir: Py<PyAny>,
    no_leader_change: i64,
    migrating: Py<PyDict>,
    ints: Py<PyDict>,
    /// Its own table (the run's is in its `ReplayCache`, which a `Pending` must not hold: the
    /// cache holds the topic index, which holds the topics).
    interned: Mutex<Interned>,
}

impl Stored {
    /// The maker `m` is, kept (with an empty table of its own).
    pub fn keep(m: &Maker<'_>) -> Arc<Stored> {
        Arc::new(Stored {
            partition_cls: m.partition_cls.clone().unbind(),
            offsets: m.offsets,
            empty: m.empty.clone().unbind(),
            migrating_dir: m.migrating_dir.clone().unbind(),
            no_leader_change: m.no_leader_change,
            migrating: m.migrating.clone().unbind(),
            ints: m.ints.clone().unbind(),
            interned: Mutex::new(Interned::default()),
        })
    }

    /// Whether this maker is the one for `m`'s replayer (its `_ints` table).
    pub fn serves(&self, m: &Maker<'_>) -> bool {
        self.ints.as_ptr() == m.ints.as_ptr() && self.migrating.as_ptr() == m.migrating.as_ptr()
    }

    /// Run `f` with this maker bound to `py`; its table is taken out for the call and put back.
    fn with<R>(&self, py: Python<'_>, f: impl FnOnce(&Maker<'_>) -> PyResult<R>) -> PyResult<R> {
        let ints = self.ints.bind(py).clone();
        let interned = std::mem::take(&mut *crate::replay::unpoisoned(&self.interned)).for_ints(&ints);
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
        *crate::replay::unpoisoned(&self.interned) = maker.interned.into_inner();
        out
    }
}

/// A topic's deferred records, in record order.
#[derive(Default)]
struct Deferred {
    /// Each value as its length (4 bytes, native order) and its bytes.
    values: Vec<u8>,
    /// The partition ids its PartitionRecords made (a bit each): a change for one of them is
    /// deferred too, any other goes to the rules that report it.
    pids: Vec<u64>,
}

/// Partition ids deferred at most: a topic with more (Kafka's own limit is far below) has its
/// partitions made at once.
const MAX_PID: i64 = 1 << 20;

impl Deferred {
    fn push(&mut self, value: &[u8]) -> bool {
        let Ok(n) = u32::try_from(value.len()) else {
            return false;
        };
        if self.values.is_empty() {
            self.values.reserve(16 * (value.len() + 4));
        }
        self.values.extend_from_slice(&n.to_ne_bytes());
        self.values.extend_from_slice(value);
        true
    }

    fn has(&self, pid: i64) -> bool {
        (0..MAX_PID).contains(&pid) && self.pids.get(pid as usize / 64).is_some_and(|w| w & (1 << (pid % 64)) != 0)
    }
}

/// A topic's deferred partitions (module docstring); `None` once they are made.
#[pyclass(frozen, module = "metashell._native")]
pub struct Pending {
    deferred: Mutex<Option<Deferred>>,
    stored: Arc<Stored>,
}

impl Pending {
    pub fn new(stored: Arc<Stored>) -> Pending {
        Pending { deferred: Mutex::new(Some(Deferred::default())), stored }
    }

    /// Keep a plain PartitionRecord (`partitions::plain_topic`) for partition `pid` for later;
    /// false once the partitions are made, or for a pid out of range (the record is then applied
    /// at once, after the others).
    pub fn defer(&self, value: &[u8], pid: i64) -> bool {
        let mut deferred = crate::replay::unpoisoned(&self.deferred);
        let Some(d) = deferred.as_mut() else {
            return false;
        };
        if !(0..MAX_PID).contains(&pid) || !d.push(value) {
            return false;
        }
        let word = pid as usize / 64;
        if d.pids.len() <= word {
            d.pids.resize(word + 1, 0);
        }
        d.pids[word] |= 1 << (pid % 64);
        true
    }

    /// Keep a plain PartitionChangeRecord (`partitions::plain_change`) of partition `pid` for later;
    /// false once the partitions are made, or if no deferred record made partition `pid`.
    pub fn defer_change(&self, value: &[u8], pid: i64) -> bool {
        let mut deferred = crate::replay::unpoisoned(&self.deferred);
        match deferred.as_mut() {
            Some(d) if d.has(pid) => d.push(value),
            _ => false,
        }
    }

    /// Make the deferred partitions into `partitions`, applying the deferred changes to them, in
    /// record order (a no-op once made), with `maker`.
    pub fn make(&self, maker: &Maker<'_>, partitions: &Bound<'_, PyDict>) -> PyResult<()> {
        let Some(Deferred { values, .. }) = crate::replay::unpoisoned(&self.deferred).take() else {
            return Ok(());
        };
        let mut at = 0;
        while at + 4 <= values.len() {
            let n = u32::from_ne_bytes([values[at], values[at + 1], values[at + 2], values[at + 3]]) as usize;
            // checked when it was deferred: a plain record, decoded in full
            let broken = || pyo3::exceptions::PyRuntimeError::new_err("a deferred record no longer decodes");
            let v = values.get(at + 4..at + 4 + n).filter(|v| v.len() >= 3).ok_or_else(broken)?;
            at += 4 + n;
            let decode = generated::raw_decoder(v[1], v[2]).ok_or_else(broken)?;
            let mut p = 3;
            let fields = decode(v, &mut p).map_err(|_| broken())?;
            if v[1] == PARTITION_RECORD {
                let (pid, partition) = maker.partition(&fields)?;
                partitions.set_item(pid, partition)?;
            } else {
                let Raw::Int(pid) = fields[0] else {
                    return Err(broken());
                };
                let partition = partitions.get_item(pid)?.ok_or_else(broken)?;
                maker.change(&partition, &fields)?;
            }
        }
        Ok(())
    }

    /// Prefetch where the next deferred record goes (a hint: nothing is decided by it).
    pub fn prefetch(&self) {
        if let Ok(deferred) = self.deferred.try_lock() {
            if let Some(d) = deferred.as_ref() {
                crate::replay::prefetch_line(d.values.as_ptr().wrapping_add(d.values.len()));
                crate::replay::prefetch_line(d.pids.as_ptr().cast());
            }
        }
    }

    /// Whether its partitions wait to be made.
    pub fn waiting(&self) -> bool {
        crate::replay::unpoisoned(&self.deferred).is_some()
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

    /// How many records wait (0 once made; for tests).
    fn __len__(&self) -> usize {
        let deferred = crate::replay::unpoisoned(&self.deferred);
        let Some(Deferred { values, .. }) = deferred.as_ref() else {
            return 0;
        };
        let (mut at, mut n) = (0, 0);
        while at + 4 <= values.len() {
            at += 4 + u32::from_ne_bytes([values[at], values[at + 1], values[at + 2], values[at + 3]]) as usize;
            n += 1;
        }
        n
    }
}
