//! The replayer's topics by id, held natively: each PartitionChangeRecord names its topic by id, and
//! finding `topics_by_id[id].partitions` in the Python dict was a fifth of a directory's load (a
//! million-partition log: 100k bytes keys, each lookup a chain of cache misses through the dict's
//! table, its entry and the key's bytes object). Here the id is the key itself (16 bytes in a
//! foldhash map), one probe away from the topic's `partitions` dict.
//!
//! The Python dict stays the one truth: Python rules, a snapshot's reset and time travel change it
//! without telling this index. So the index remembers the dict it was filled from and that dict's
//! version (PEP 509's `ma_version_tag`, a number CPython changes on every change of the dict: what
//! its own global-variable caches were guarded by), and is emptied when either differs. The native
//! rules that change the dict (a TopicRecord, a RemoveTopicRecord) change the index with it and
//! keep it in step. Where the interpreter has no such version (3.14 dropped it), nothing is kept
//! here and every lookup goes to the dict.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::replay::deferred::Pending;

/// A topic as a run finds it: its `partitions` dict and, while they wait, its deferred partitions.
#[derive(Clone)]
pub struct Known<'py> {
    pub partitions: Bound<'py, PyDict>,
    pub pending: Option<Bound<'py, Pending>>,
}

/// What the index holds for a topic: its `partitions` dict and its deferred partitions, if any.
struct Entry {
    partitions: Py<PyDict>,
    pending: Option<Py<Pending>>,
}

impl Entry {
    fn new(known: &Known<'_>) -> Entry {
        Entry {
            partitions: known.partitions.clone().unbind(),
            pending: known.pending.as_ref().map(|p| p.clone().unbind()),
        }
    }

    fn bind<'py>(&self, py: Python<'py>) -> Known<'py> {
        Known {
            partitions: self.partitions.bind(py).clone(),
            pending: self.pending.as_ref().map(|p| p.bind(py).clone()),
        }
    }
}

/// A topic id, as a uuid field is read.
pub type TopicId = crate::replay::id_table::Id;

/// `dict`'s PEP 509 version, or None where the interpreter keeps none.
fn version(d: &Bound<'_, PyDict>) -> Option<u64> {
    #[cfg(not(any(Py_3_14, Py_LIMITED_API)))]
    {
        // SAFETY: `d` is a live dict (a `PyDict` is checked to be one), so its object is a
        // `PyDictObject`; the field is read, never written.
        #[allow(deprecated)]
        let v = unsafe { (*d.as_ptr().cast::<pyo3::ffi::PyDictObject>()).ma_version_tag };
        Some(v)
    }
    #[cfg(any(Py_3_14, Py_LIMITED_API))]
    {
        let _ = d;
        None
    }
}

/// Topic id -> the topic's `partitions` dict, as `topics_by_id` held them at `version`.
#[derive(Default)]
pub struct TopicIndex {
    /// The `topics_by_id` dict the entries come from (held, so its address names it alone).
    owner: Option<Py<PyDict>>,
    /// Its version when the entries were last known to agree with it; None: nothing is kept.
    version: Option<u64>,
    /// In a table whose entry for an id can be prefetched (`id_table.rs`).
    partitions: crate::replay::id_table::IdTable<Entry>,
}

impl TopicIndex {
    /// Empties the index unless it agrees with `by_id` as it is now; true when entries may be used
    /// and added.
    fn sync(&mut self, by_id: &Bound<'_, PyDict>) -> bool {
        let now = version(by_id);
        let same = self.owner.as_ref().is_some_and(|o| o.as_ptr() == by_id.as_ptr());
        if !same || now.is_none() || self.version != now {
            self.partitions.clear();
            self.owner = Some(by_id.clone().unbind());
            self.version = now;
        }
        self.version.is_some()
    }

    /// `by_id[id]`'s partitions if the index knows them (it knows no other topic than `by_id` has).
    pub fn get<'py>(&mut self, by_id: &Bound<'py, PyDict>, id: &[u8]) -> Option<Known<'py>> {
        let id: &TopicId = id.try_into().ok()?;
        if !self.sync(by_id) {
            return None;
        }
        self.partitions.get(id).map(|e| e.bind(by_id.py()))
    }

    /// Remember what `by_id[id]`'s partitions were just found to be by a lookup in `by_id`.
    pub fn found(&mut self, by_id: &Bound<'_, PyDict>, id: &[u8], known: &Known<'_>) {
        if let Ok(id) = TopicId::try_from(id) {
            if self.sync(by_id) && !self.partitions.insert(id, Entry::new(known)) {
                self.forget(); // no memory to grow: the lookups go to the dict
            }
        }
    }

    /// Empty, and in step with no dict: the next lookup starts again from the dict.
    fn forget(&mut self) {
        self.partitions.clear();
        self.owner = None;
        self.version = None;
    }

    /// `id`'s deferred partitions are made: its entry says so (prefetching then goes to its dict).
    pub fn settle(&mut self, id: &[u8]) {
        if let Some(e) = <&TopicId>::try_from(id).ok().and_then(|id| self.partitions.get_mut(id)) {
            e.pending = None;
        }
    }

    /// `change()` changes `by_id` at `id` only (`known`: the new topic's, None when it was
    /// removed); the index follows, and stays in step if it was before. Should `change` fail, the
    /// dict's version says whether the index still agrees with it.
    pub fn changing(
        &mut self,
        by_id: &Bound<'_, PyDict>,
        id: &[u8],
        known: Option<&Known<'_>>,
        change: impl FnOnce() -> PyResult<()>,
    ) -> PyResult<()> {
        let in_step = self.sync(by_id);
        change()?;
        let Ok(id) = TopicId::try_from(id) else {
            return Ok(()); // no key of the index: the next lookup finds the dict's version moved
        };
        if in_step {
            let kept = match known {
                Some(k) => self.partitions.insert(id, Entry::new(k)),
                None => {
                    drop(self.partitions.remove(&id));
                    true
                }
            };
            if kept {
                self.version = version(by_id);
            } else {
                self.forget(); // no memory to grow: the lookups go to the dict
            }
        }
        Ok(())
    }

    /// The `partitions` dict and the `Pending` (if any) held for `id`, without checking that the
    /// index agrees with the dict it was filled from: where to prefetch (`replay.rs`), never an
    /// answer.
    pub fn peek(&self, id: &[u8]) -> Option<(*mut pyo3::ffi::PyObject, Option<*mut pyo3::ffi::PyObject>)> {
        let id: &TopicId = id.try_into().ok()?;
        self.partitions.get(id).map(|e| (e.partitions.as_ptr(), e.pending.as_ref().map(|p| p.as_ptr())))
    }

    /// Where `id`'s entry would be found (its probe's first slot), for a prefetch; null if none.
    pub fn entry_address(&self, id: &[u8]) -> *const u8 {
        match <&TopicId>::try_from(id) {
            Ok(id) => self.partitions.home_address(id),
            Err(_) => std::ptr::null(),
        }
    }

    /// How many topics it holds (for tests).
    pub fn known(&self) -> usize {
        self.partitions.len()
    }
}
