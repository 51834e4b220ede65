//! The replayer's two hottest rules, natively: a run of PartitionRecords (a snapshot holds a million)
//! and PartitionChangeRecords (a long log's ISR and leader changes) applied to the image's Python
//! objects, exactly as `TopicRules._partition_tuple` and `_partition_change_tuple` apply them.
//!
//! Only their plain case is taken here: a known topic (and partition, for a change), directories
//! that match the replicas, a valid recovery state, no replica or directory change. The first record
//! that is anything else ends the run, and Python applies it by its own rules (faults and warnings
//! included) before calling back; so are all records inside a metadata transaction, and every
//! other record type. The image, the interning table and the time-travel journal are the Python
//! ones: what is made here is what Python would have made, object for object.

pub mod deferred;
pub mod id_table;
pub mod journal;
pub mod merge;
pub mod partitions;
#[rustfmt::skip] // written by scripts/gen_partition_fields.py, compared byte for byte by its --check test
pub mod slots;
pub mod topic_index;

use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySet, PyString, PyTuple};

use self::deferred::{Pending, Stored};
use self::journal::ChangeRun;
use self::partitions::{Interned, Maker};
use self::slots::change;
use self::topic_index::{Known, TopicIndex};
use crate::decode::entries;
use crate::decode::generated;
use crate::decode::generated::RawFields;
use crate::rt::{self, prefetch_line, unpoisoned, Obj, Raw};

const TOPIC_RECORD: u8 = 2;
const CONFIG_RECORD: u8 = 4;
const PARTITION_RECORD: u8 = 3;
const PARTITION_CHANGE_RECORD: u8 = 5;
const REMOVE_TOPIC_RECORD: u8 = 9;
/// `ConfigResource.Type.TOPIC` (`kafka_names.CONFIG_RESOURCE_TOPIC`): a topic's configs' key.
const CONFIG_RESOURCE_TOPIC: i64 = 2;

/// Attribute names, made when the module is imported (`init`).
const NAMES: [&str; 15] = [
    "_topics_by_id",
    "_ints",
    "journal",
    "_migrating",
    "partitions",
    "orphan_topics",
    "_image",
    "topics",
    "by_name",
    "configs",
    "name",
    "_partitions",
    "_pending",
    "defer_partitions",
    "id",
];
const TOPICS_BY_ID: usize = 0;
const INTS: usize = 1;
const JOURNAL: usize = 2;
const MIGRATING: usize = 3;
const ORPHAN_TOPICS: usize = 5;
const IMAGE: usize = 6;
const TOPICS: usize = 7;
const BY_NAME: usize = 8;
const CONFIGS: usize = 9;
const NAME: usize = 10;
const TOPIC_PARTITIONS: usize = 11;
const TOPIC_PENDING: usize = 12;
const DEFER_PARTITIONS: usize = 13;
const TOPIC_ID: usize = 14;
/// The slots of a `Topic` a run sets (`Ctx::new_topic`): its partitions, its deferred partitions,
/// its id and its name.
const TOPIC_SLOTS: [usize; 4] = [TOPIC_PARTITIONS, TOPIC_PENDING, TOPIC_ID, NAME];

/// The attribute names of a journalled partition, in order.
pub fn kept_attributes() -> Vec<&'static str> {
    slots::NAMES.to_vec()
}

static ATTRS: OnceLock<Vec<Py<PyString>>> = OnceLock::new();

pub fn init(py: Python<'_>) -> PyResult<()> {
    let mut names = Vec::with_capacity(NAMES.len());
    for name in NAMES {
        names.push(rt::str_obj(py, name)?.cast_into::<PyString>()?.unbind());
    }
    let _ = ATTRS.set(names);
    Ok(())
}

fn attr<'py>(py: Python<'py>, i: usize) -> PyResult<&'py Bound<'py, PyString>> {
    let names = ATTRS.get().ok_or_else(|| pyo3::exceptions::PyRuntimeError::new_err("not initialised"))?;
    Ok(names[i].bind(py))
}

/// What the rules need from the replayer and the model, read once per run.
pub struct Ctx<'py> {
    py: Python<'py>,
    topics_by_id: Bound<'py, PyDict>,
    journal: Option<Bound<'py, PyList>>,
    /// The replayer's `defer_partitions`: a topic made without a journal defers its partitions.
    defer: bool,
    missing: Obj<'py>,
    /// `Partition`'s slot descriptors, in `slots::NAMES` order (so `slots[slots::ISR]`...).
    slots: Vec<Obj<'py>>,
    /// Makes partitions; its `offsets` say where each of those slots sits in a `Partition` (bytes
    /// from the object's start), read from the descriptors and checked against the type
    /// (`slot_offsets`): an object whose type is exactly `partition_cls` has its slots read and set
    /// there, without a descriptor call each (eleven per partition a snapshot makes, about 5% of
    /// its load). Its interned table is the cache's, taken out for the run (`Drop` puts it back).
    make: Maker<'py>,
    /// The last topic a record named: (its id, its `partitions` dict, its deferred partitions). A
    /// snapshot lists a topic's partitions one after another, so this spares hashing the id for
    /// nearly every record. Forgotten whenever a record goes to Python (`left_to_python`) and by
    /// a TopicRecord.
    last_topic: std::cell::RefCell<Option<(Vec<u8>, Known<'py>)>>,
    /// The last partition record's topic was not the one before it: records name topics all over
    /// the cluster (a log's changes), not one topic's partitions in a row (a snapshot), and their
    /// lookups are prefetched (`prefetch`).
    scattered: std::cell::Cell<bool>,
    replayer: Obj<'py>,
    /// The replayer's `orphan_topics`, the image's `topics.by_name` and `configs`: made once with
    /// the replayer and its image, and only ever changed in place; read on first use (a run of
    /// one batch from the Python path may need none of them).
    image_parts: std::cell::OnceCell<ImageParts<'py>>,
    topic_cls: Obj<'py>,
    /// Where `Topic`'s `TOPIC_SLOTS` sit in an instance (checked as `Maker::offsets` are).
    topic_offsets: [isize; 4],
    /// `ignored[api_key] != 0`: a record type replayed as nothing (`replay.IGNORED`; 256 bytes).
    ignored: Bound<'py, PyBytes>,
    /// `kafka_names.CONFIG_RESOURCE_TYPE_NAMES`: the config resource types Kafka knows.
    config_types: Bound<'py, PyDict>,
    /// The cache's topic index, taken out for the run and put back when the run ends (`Drop`).
    topic_index: std::cell::RefCell<TopicIndex>,
    cache: Bound<'py, ReplayCache>,
    /// The journal's current run of partition changes (`change_run`).
    run: std::cell::RefCell<Option<(Bound<'py, ChangeRun>, usize)>>,
    /// The current run's changes until they go into it (`seal`, or `change_run` moving on).
    staged: std::cell::RefCell<journal::Changes>,
}

/// What the topic and config rules change beside the replayer's own tables.
pub struct ImageParts<'py> {
    pub orphans: Bound<'py, PySet>,
    by_name: Bound<'py, PyDict>,
    configs: Bound<'py, PyDict>,
}

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        // after an error (the exits that return normally sealed already): never a second panic
        // while unwinding from one, which would abort the interpreter
        if let (Ok(mut run), Ok(mut staged)) = (self.run.try_borrow_mut(), self.staged.try_borrow_mut()) {
            if let Some((done, _)) = run.take() {
                let _ = done.get().take(&mut staged);
            }
        }
        *unpoisoned(&self.cache.get().inner) = std::mem::take(self.make.interned.get_mut());
        *unpoisoned(&self.cache.get().topics) = std::mem::take(self.topic_index.get_mut());
    }
}

/// What the native rules keep between runs, for one replayer: its interned tuples (`Interned`) and
/// its topics by id (`TopicIndex`). Kept by `NativeReplay`; each run takes them out and puts them
/// back when it ends (`Ctx::drop`).
#[pyclass(frozen, module = "metashell._native")]
pub struct ReplayCache {
    inner: std::sync::Mutex<Interned>,
    topics: std::sync::Mutex<TopicIndex>,
    /// The maker the topics' `Pending`s share (`deferred.rs`), made by the first that needs it.
    stored: std::sync::Mutex<Option<Arc<Stored>>>,
    /// `slot_offsets` found for a class and its descriptors (held, so their addresses name them
    /// alone): the probe runs once, not once a run.
    layouts: std::sync::Mutex<Vec<SlotLayout>>,
}

/// Where a class's natively set slots sit, for those descriptors of it.
struct SlotLayout {
    cls: Py<PyAny>,
    slots: Vec<Py<PyAny>>,
    offsets: Vec<isize>,
}

#[pymethods]
impl ReplayCache {
    #[new]
    fn new() -> Self {
        ReplayCache {
            inner: Default::default(),
            topics: Default::default(),
            stored: Default::default(),
            layouts: Default::default(),
        }
    }

    /// How many arrays it holds (for tests).
    fn __len__(&self) -> usize {
        unpoisoned(&self.inner).by_type.iter().map(|m| m.len()).sum()
    }

    /// How many topics its index holds (for tests).
    fn topics_known(&self) -> usize {
        unpoisoned(&self.topics).known()
    }
}

impl<'py> Ctx<'py> {
    /// `topics_by_id[tid]`'s partitions (and its deferred ones), or None for an unknown topic.
    fn topic_of(&self, id: &[u8]) -> PyResult<Option<Known<'py>>> {
        if let Some((last, known)) = &*self.last_topic.borrow() {
            if last.as_slice() == id {
                self.scattered.set(false);
                return Ok(Some(known.clone()));
            }
        }
        self.scattered.set(true);
        let mut index = self.topic_index.borrow_mut();
        let known = match index.get(&self.topics_by_id, id) {
            Some(known) => known,
            None => {
                let Some(topic) = self.topics_by_id.get_item(rt::bytes_obj(self.py, id)?)? else {
                    return Ok(None);
                };
                // the slots behind `Topic.partitions`, read without making deferred partitions
                let partitions = topic.getattr(attr(self.py, TOPIC_PARTITIONS)?)?.cast_into::<PyDict>()?;
                let pending = topic.getattr(attr(self.py, TOPIC_PENDING)?)?.cast_into::<Pending>().ok();
                let known = Known { partitions, pending };
                index.found(&self.topics_by_id, id, &known);
                known
            }
        };
        *self.last_topic.borrow_mut() = Some((id.to_vec(), known.clone()));
        Ok(Some(known))
    }

    /// The topic's partitions, its deferred ones made first (without a journal: they are what
    /// the image held before the journal began).
    fn partitions(&self, id: &[u8], known: &Known<'py>) -> PyResult<Bound<'py, PyDict>> {
        if let Some(pending) = &known.pending {
            pending.get().make(&self.make, &known.partitions)?;
            self.topic_index.borrow_mut().settle(id);
            if let Some((last, known)) = &mut *self.last_topic.borrow_mut() {
                if last.as_slice() == id {
                    known.pending = None;
                }
            }
        }
        Ok(known.partitions.clone())
    }

    /// `Topic(name, id, partitions)` with `_pending` set, without running `Topic.__init__` (a
    /// Python frame per topic): allocated by its type, each slot set at its offset (`values` in
    /// `TOPIC_SLOTS` order), which is what `__init__`'s assignments do.
    fn new_topic(&self, values: [&Obj<'py>; 4]) -> PyResult<Obj<'py>> {
        let tp = self.topic_cls.as_ptr() as *mut pyo3::ffi::PyTypeObject;
        // SAFETY: `topic_cls` is the type whose slot offsets `topic_offsets` are (checked against
        // its member descriptors and instance size); the instance comes from its own allocator,
        // with every slot empty (zero-filled), and each slot takes a new reference.
        let obj = rt::own(self.py, unsafe { pyo3::ffi::PyType_GenericAlloc(tp, 0) })?;
        for (v, &at) in values.into_iter().zip(self.topic_offsets.iter()) {
            // SAFETY: as above: `at` is one of the new instance's empty object slots.
            unsafe {
                *(obj.as_ptr().cast::<u8>().offset(at).cast::<*mut pyo3::ffi::PyObject>()) = v.clone().into_ptr()
            };
        }
        Ok(obj)
    }

    /// The maker a new topic's `Pending` shares with the replayer's others.
    fn stored(&self) -> PyResult<Arc<Stored>> {
        let mut stored = unpoisoned(&self.cache.get().stored);
        match &*stored {
            Some(s) if s.serves(&self.make) => Ok(s.clone()),
            _ => Ok(stored.insert(Stored::keep(&self.make)?).clone()),
        }
    }

    /// `topics_by_id[tid] = topic` (`Some(topic, its partitions)`) or `del topics_by_id[tid]`,
    /// journalled, with the topic index kept in step.
    fn set_topic(&self, tid: &Obj<'py>, topic: Option<(&Obj<'py>, Known<'py>)>) -> PyResult<()> {
        self.keep_slot(&self.topics_by_id, tid)?;
        let id = tid.cast::<PyBytes>()?.as_bytes();
        let by_id = &self.topics_by_id;
        let known = topic.as_ref().map(|t| &t.1);
        self.topic_index.borrow_mut().changing(by_id, id, known, || match &topic {
            Some((topic, _)) => by_id.set_item(tid, topic),
            None => by_id.del_item(tid),
        })?;
        // the id names this topic now (a snapshot's partitions follow their topic), or none
        *self.last_topic.borrow_mut() = topic.map(|(_, known)| (id.to_vec(), known));
        Ok(())
    }

    /// The address of slot `slot` (`slots::NAMES[slot]`) in `p` when `p`'s type is exactly `Partition` (so the offsets
    /// read from its descriptors hold); `None` for anything else (read through the descriptor).
    fn slot_ptr(&self, p: &Obj<'py>, slot: usize) -> Option<*mut *mut pyo3::ffi::PyObject> {
        // SAFETY: reading the type of a live object; for an object of exactly `partition_cls`, the
        // offset lies inside its slots (`slot_offsets`).
        unsafe {
            if pyo3::ffi::Py_TYPE(p.as_ptr()).cast::<pyo3::ffi::PyObject>() != self.make.partition_cls.as_ptr() {
                return None;
            }
            Some(p.as_ptr().cast::<u8>().offset(self.make.offsets[slot]).cast())
        }
    }

    /// `p.<slots::NAMES[slot]>` for a slot of `Partition`, read through its member descriptor (no
    /// attribute lookup by name: a long log's change journals eleven of them).
    fn slot(&self, p: &Obj<'py>, slot: usize) -> PyResult<Obj<'py>> {
        if let Some(at) = self.slot_ptr(p, slot) {
            // SAFETY: `at` is a slot of the live Partition `p`; an empty slot is null, which reads
            // as the AttributeError its descriptor raises.
            let v = unsafe { *at };
            if !v.is_null() {
                // SAFETY: a slot holds a strong reference; this takes another.
                return Ok(unsafe { Bound::from_borrowed_ptr(self.py, v) });
            }
        }
        let d = &self.slots[slot];
        // SAFETY: `d` is a member descriptor (checked in `partition_slots`); its getter checks that
        // `p` is an instance of its class and raises AttributeError for an empty slot.
        unsafe {
            let get = rt::type_slot(d, pyo3::ffi::Py_tp_descr_get);
            // SAFETY: the slot of a type's `tp_descr_get` holds a `descrgetfunc` or null.
            let get: Option<pyo3::ffi::descrgetfunc> = std::mem::transmute(get);
            let get = get.ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("a Partition slot cannot be read"))?;
            let tp = pyo3::ffi::Py_TYPE(p.as_ptr()) as *mut pyo3::ffi::PyObject;
            rt::own(self.py, get(d.as_ptr(), p.as_ptr(), tp))
        }
    }

    /// `p.<slots::NAMES[slot]> = v` through the slot's member descriptor.
    fn set_slot(&self, p: &Obj<'py>, slot: usize, v: &Obj<'py>) -> PyResult<()> {
        if let Some(at) = self.slot_ptr(p, slot) {
            // SAFETY: as `PyMember_SetOne` does for an object slot: the new reference is stored
            // first, then the old one (if any) released.
            unsafe {
                let old = std::mem::replace(&mut *at, v.clone().into_ptr());
                pyo3::ffi::Py_XDECREF(old);
            }
            return Ok(());
        }
        let d = &self.slots[slot];
        // SAFETY: as in `slot`; the setter checks the instance's class too.
        unsafe {
            let set = rt::type_slot(d, pyo3::ffi::Py_tp_descr_set);
            // SAFETY: the slot of a type's `tp_descr_set` holds a `descrsetfunc` or null.
            let set: Option<pyo3::ffi::descrsetfunc> = std::mem::transmute(set);
            let set = set.ok_or_else(|| pyo3::exceptions::PyTypeError::new_err("a Partition slot cannot be set"))?;
            if set(d.as_ptr(), p.as_ptr(), v.as_ptr()) < 0 {
                return Err(PyErr::fetch(self.py));
            }
        }
        Ok(())
    }
}

/// What a run does with one record.
enum Step {
    Applied,
    /// Python applies this record (and the run ends).
    Python,
}

/// `_partition_tuple` on a PartitionRecord read raw, its fields in the order of PARTITION_FIELDS.
/// Without a journal, a topic the run created keeps the partition as a row for later
/// (`deferred.rs`).
fn partition<'py>(c: &Ctx<'py>, f: &RawFields<'_>) -> PyResult<Step> {
    let Some(topic_id) = partitions::plain_topic(f) else {
        return Ok(Step::Python);
    };
    let Some(known) = c.topic_of(topic_id)? else {
        return Ok(Step::Python);
    };
    if let (Some(pending), None) = (&known.pending, &c.journal) {
        if pending.get().defer(f) {
            return Ok(Step::Applied);
        }
    }
    let partitions = c.partitions(topic_id, &known)?;
    let (pid, p) = c.make.partition(f)?;
    c.keep_slot(&partitions, &pid)?;
    partitions.set_item(pid, p)?;
    Ok(Step::Applied)
}

/// `TopicRules._topic` on the decoded TopicRecord dict: the topic is (re)created with no
/// partitions, replacing any topic with its id, and is found by its name too (journalled).
fn topic<'py>(c: &Ctx<'py>, d: &Obj<'py>) -> PyResult<Step> {
    let d = d.cast::<PyDict>()?;
    let (Some(name), Some(tid)) = (field(d, KEY_NAME)?, field(d, KEY_TOPIC_ID)?) else {
        return Ok(Step::Python);
    };
    if !tid.is_instance_of::<PyBytes>() {
        return Ok(Step::Python); // before any change: Python then applies the whole record
    }
    let parts = c.image_parts()?;
    if !parts.orphans.is_empty() {
        parts.orphans.discard(&tid)?;
    }
    let partitions = rt::new_dict(c.py)?.cast_into::<PyDict>()?;
    // its partitions wait until read, unless each change is journalled (`deferred.rs`)
    let pending = match c.journal {
        None if c.defer => Some(Bound::new(c.py, Pending::new(c.stored()?))?),
        _ => None,
    };
    let none = c.py.None().into_bound(c.py);
    let topic = c.new_topic([partitions.as_any(), pending.as_ref().map_or(&none, |p| p.as_any()), &tid, &name])?;
    c.set_topic(&tid, Some((&topic, Known { partitions, pending })))?;
    c.keep_slot(&parts.by_name, &name)?;
    parts.by_name.set_item(&name, &topic)?;
    Ok(Step::Applied)
}

/// `TopicRules._remove_topic` on the decoded RemoveTopicRecord dict: the topic goes from the ids, from
/// the names if its name still finds it, and its configs go (each journalled). An unknown id is
/// Python's to report.
fn remove_topic<'py>(c: &Ctx<'py>, d: &Obj<'py>) -> PyResult<Step> {
    let d = d.cast::<PyDict>()?;
    let Some(tid) = field(d, KEY_TOPIC_ID)? else {
        return Ok(Step::Python);
    };
    if !tid.is_instance_of::<PyBytes>() {
        return Ok(Step::Python);
    }
    let Some(topic) = c.topics_by_id.get_item(&tid)? else {
        return Ok(Step::Python);
    };
    let parts = c.image_parts()?;
    if !parts.orphans.is_empty() {
        parts.orphans.discard(&tid)?;
    }
    c.set_topic(&tid, None)?;
    let name = topic.getattr(attr(c.py, NAME)?)?;
    if parts.by_name.get_item(&name)?.is_some_and(|t| t.is(&topic)) {
        c.keep_slot(&parts.by_name, &name)?;
        parts.by_name.del_item(&name)?;
    }
    let key = rt::tuple(c.py, [rt::int(c.py, CONFIG_RESOURCE_TOPIC)?, name])?;
    if parts.configs.contains(&key)? {
        c.keep_slot(&parts.configs, &key)?;
        parts.configs.del_item(&key)?;
    }
    Ok(Step::Applied)
}

/// `ConfigRules._config` on the decoded ConfigRecord dict: one key of a config resource set, or
/// removed by a null value (an emptied resource goes), journalled.
fn config<'py>(c: &Ctx<'py>, d: &Obj<'py>) -> PyResult<Step> {
    let d = d.cast::<PyDict>()?;
    let (Some(rtype), Some(rname), Some(name), Some(value)) =
        (field(d, KEY_RESOURCE_TYPE)?, field(d, KEY_RESOURCE_NAME)?, field(d, KEY_NAME)?, field(d, KEY_VALUE)?)
    else {
        return Ok(Step::Python);
    };
    // ConfigResource.Type.forId: an unknown type is UNKNOWN (0)
    let rtype = if c.config_types.contains(&rtype)? { rtype } else { rt::int(c.py, 0)? };
    let key = rt::tuple(c.py, [rtype, rname])?;
    let areas = &c.image_parts()?.configs;
    let values = areas.get_item(&key)?;
    if value.is_none() {
        if let Some(values) = values {
            let values = values.cast::<PyDict>()?;
            if values.contains(&name)? {
                c.keep_slot(values, &name)?;
                values.del_item(&name)?;
                if values.is_empty() {
                    c.keep_slot(areas, &key)?;
                    areas.del_item(&key)?;
                }
            }
        }
        return Ok(Step::Applied);
    }
    let values = match values {
        Some(values) => values.cast_into::<PyDict>()?,
        None => {
            c.keep_slot(areas, &key)?;
            let values = rt::new_dict(c.py)?;
            areas.set_item(&key, &values)?;
            values
        }
    };
    c.keep_slot(&values, &name)?;
    values.set_item(&name, &value)?;
    Ok(Step::Applied)
}

/// The index in `generated::KEY_NAMES` of a field's name, found when this is compiled (a name the
/// schemas do not have fails the build) instead of searched for at each record.
const fn key_index(name: &str) -> usize {
    let mut i = 0;
    while i < generated::KEY_NAMES.len() {
        let (k, n) = (generated::KEY_NAMES[i].as_bytes(), name.as_bytes());
        if k.len() == n.len() {
            let mut j = 0;
            while j < k.len() && k[j] == n[j] {
                j += 1;
            }
            if j == k.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("a field name the generated decoders do not make")
}

const KEY_NAME: usize = key_index("Name");
const KEY_TOPIC_ID: usize = key_index("TopicId");
const KEY_RESOURCE_TYPE: usize = key_index("ResourceType");
const KEY_RESOURCE_NAME: usize = key_index("ResourceName");
const KEY_VALUE: usize = key_index("Value");

/// `d[KEY_NAMES[key]]` for a dict the generated decoders made, if it has that field.
fn field<'py>(d: &Bound<'py, PyDict>, key: usize) -> PyResult<Option<Obj<'py>>> {
    let name =
        rt::key(d.py(), key).map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("record field names not set up"))?;
    d.get_item(name)
}

/// `_partition_change_tuple` (and `_merge_change`) on the decoded PARTITION_CHANGE_FIELDS tuple.
/// A change of a partition waiting as a row changes the row (`deferred.rs`); a journal keeps what
/// it replaced in the batch's `ChangeRun` (`journal.rs`).
fn partition_change<'py>(c: &Ctx<'py>, f: &RawFields<'_>) -> PyResult<Step> {
    if let Some(tid) = partitions::plain_change(f) {
        let Some(known) = c.topic_of(tid)? else {
            return Ok(Step::Python);
        };
        if let Some(pending) = &known.pending {
            let nlc = c.make.no_leader_change;
            match &c.journal {
                None if pending.get().defer_change(f, nlc, false).is_some() => return Ok(Step::Applied),
                None => {}
                Some(j) => {
                    c.change_run(j)?;
                    if c.staged.borrow_mut().change_row(pending, |p| p.defer_change(f, nlc, true))? {
                        return Ok(Step::Applied);
                    }
                }
            }
        }
    }
    let (Raw::Int(pid), Raw::Uuid(tid), Raw::Int(leader), Raw::Int(lrs_v)) =
        (f[0], f[1], f[change::LEADER], f[change::LEADER_RECOVERY_STATE])
    else {
        return Ok(Step::Python);
    };
    let Some(known) = c.topic_of(tid)? else {
        return Ok(Step::Python);
    };
    let partitions = c.partitions(tid, &known)?;
    let Some(p) = partitions.get_item(rt::int(c.py, pid)?)? else {
        return Ok(Step::Python);
    };
    if !matches!(f[change::REPLICAS], Raw::Null)
        || !matches!(f[change::DIRECTORIES], Raw::Null)
        || !(-1..=1).contains(&lrs_v)
    {
        return Ok(Step::Python);
    }
    // the new values by slot, made in Python's order (its interning order)
    let mut target = NewSlots { c, p: &p, new: Default::default() };
    merge::merge_change(f, leader, lrs_v, c.make.no_leader_change, &mut target)?;
    let new = target.new;
    let new: Vec<(usize, Obj<'py>)> = new.into_iter().enumerate().filter_map(|(i, v)| Some((i, v?))).collect();
    if let Some(j) = &c.journal {
        c.change_run(j)?;
        if c.staged.borrow_mut().set_slots(c.layout(), &p, &new)? {
            return Ok(Step::Applied);
        }
        // not exactly a `Partition` (a subclass put there by Python code): Python's entry
        let kept = rt::tuple_with(c.py, slots::COUNT + 1, |i| if i == 0 { Ok(p.clone()) } else { c.slot(&p, i - 1) })?;
        j.append(kept)?;
    }
    for (slot, v) in &new {
        c.set_slot(&p, *slot, v)?;
    }
    Ok(Step::Applied)
}

/// A change to a made partition, as the new values of the slots it sets (`merge::ChangeTarget`):
/// set on the partition, or journalled, once the whole change is known.
struct NewSlots<'a, 'py> {
    c: &'a Ctx<'py>,
    p: &'a Obj<'py>,
    new: [Option<Obj<'py>>; slots::COUNT],
}

impl<'py> merge::ChangeTarget for NewSlots<'_, 'py> {
    type Error = PyErr;

    fn set_array(&mut self, carried: &slots::UnlessNull, value: &Raw<'_>) -> PyResult<()> {
        self.new[carried.slot] = Some(self.c.make.intern_raw(value)?);
        Ok(())
    }

    fn set_leader(&mut self, leader: i64) -> PyResult<()> {
        self.new[slots::LEADER] = Some(rt::int(self.c.py, leader)?);
        self.new[slots::LEADER_EPOCH] = Some(self.c.slot(self.p, slots::LEADER_EPOCH)?.add(1)?);
        Ok(())
    }

    fn set_recovery(&mut self, state: i64) -> PyResult<()> {
        self.new[slots::LEADER_RECOVERY_STATE] = Some(rt::int(self.c.py, state)?);
        Ok(())
    }

    fn bump_partition_epoch(&mut self) -> PyResult<()> {
        self.new[slots::PARTITION_EPOCH] = Some(self.c.slot(self.p, slots::PARTITION_EPOCH)?.add(1)?);
        Ok(())
    }
}

/// `Partition`'s member descriptors for the slots named `slots::NAMES`, in that order (what
/// `Maker::new_partition` sets), checked to be member descriptors; each also checks, when it sets a
/// slot, that the object is an instance of its class.
fn partition_slots<'py>(slots: &Obj<'py>) -> PyResult<Vec<Obj<'py>>> {
    let bad = || pyo3::exceptions::PyTypeError::new_err("Partition's slots must be its member descriptors");
    let slots = slots.cast::<PyTuple>().map_err(|_| bad())?;
    if slots.len() != self::slots::COUNT {
        return Err(bad());
    }
    member_descriptors(slots.iter())
}

/// `Topic`'s member descriptors for the slots `Ctx::new_topic` sets, in `TOPIC_SLOTS` order.
fn topic_slots<'py>(cls: &Obj<'py>) -> PyResult<Vec<Obj<'py>>> {
    let names = TOPIC_SLOTS.map(|i| attr(cls.py(), i).map(|n| cls.getattr(n)));
    member_descriptors(names.into_iter().map(|d| d.and_then(|d| d)).collect::<PyResult<Vec<_>>>()?.into_iter())
}

/// `descriptors`, each checked to be a member descriptor.
fn member_descriptors<'py>(descriptors: impl Iterator<Item = Obj<'py>>) -> PyResult<Vec<Obj<'py>>> {
    let bad = || pyo3::exceptions::PyTypeError::new_err("a slot set natively must be a member descriptor");
    let mut out = Vec::new();
    let mut member_type = None;
    for d in descriptors {
        // `types.MemberDescriptorType`, CPython's `PyMemberDescr_Type`, which the stable ABI
        // (an abi3 wheel) does not name
        let member_type = match &member_type {
            Some(t) => t,
            None => member_type.insert(d.py().import("types")?.getattr("MemberDescriptorType")?),
        };
        if !d.get_type().is(member_type) {
            return Err(bad());
        }
        out.push(d);
    }
    Ok(out)
}

/// `slot_offsets`, from `cache` when this class and these descriptors were probed before.
fn cached_slot_offsets<'py, const N: usize>(
    cache: &Bound<'py, ReplayCache>,
    cls: &Obj<'py>,
    slots: &[Obj<'py>],
) -> PyResult<[isize; N]> {
    let py = cls.py();
    let same = |l: &SlotLayout| {
        l.cls.bind(py).is(cls)
            && l.slots.len() == slots.len()
            && l.slots.iter().zip(slots).all(|(a, b)| a.bind(py).is(b))
    };
    if let Some(l) = unpoisoned(&cache.get().layouts).iter().find(|l| same(l)) {
        return l.offsets.as_slice().try_into().map_err(|_| pyo3::exceptions::PyTypeError::new_err("slot count"));
    }
    // probed with the lock released: the probe calls into Python
    let offsets: [isize; N] = slot_offsets(cls, slots)?;
    unpoisoned(&cache.get().layouts).push(SlotLayout {
        cls: cls.clone().unbind(),
        slots: slots.iter().map(|d| d.clone().unbind()).collect(),
        offsets: offsets.to_vec(),
    });
    Ok(offsets)
}

/// Where each slot of `slots` sits in an instance of `cls`: each descriptor must be `cls`'s own,
/// for a writable object slot lying inside an instance of `cls`. A class that does not pass (a
/// subclass's descriptor, a `__dict__` attribute) is refused, not guessed at.
///
/// Found by asking, not by reading the descriptor's C struct (which the stable ABI of an abi3
/// wheel hides): a fresh instance has each slot set through its descriptor to a marker object, and
/// the one word of the instance (past the object header, inside `cls.__basicsize__`) that then
/// holds the marker is the slot; it is emptied again through the descriptor.
fn slot_offsets<'py, const N: usize>(cls: &Obj<'py>, slots: &[Obj<'py>]) -> PyResult<[isize; N]> {
    let py = cls.py();
    let bad = || pyo3::exceptions::PyTypeError::new_err("the slots set natively must be the class's own object slots");
    if slots.len() != N || !cls.is_instance_of::<pyo3::types::PyType>() {
        return Err(bad());
    }
    let word = std::mem::size_of::<*mut pyo3::ffi::PyObject>();
    let header = std::mem::size_of::<pyo3::ffi::PyObject>();
    let basic: usize = cls.getattr("__basicsize__")?.extract()?;
    if basic < header || basic > 4096 {
        return Err(bad());
    }
    let tp = cls.as_ptr().cast::<pyo3::ffi::PyTypeObject>();
    // SAFETY: `cls` is a type (checked above); its own allocator makes an instance with every
    // slot empty, released at the end of this function.
    let probe = rt::own(py, unsafe { pyo3::ffi::PyType_GenericAlloc(tp, 0) })?;
    let marker = pyo3::types::PyList::empty(py); // an object no slot holds before
    let words = || -> Vec<*mut pyo3::ffi::PyObject> {
        // SAFETY: the instance is `basic` bytes long (its type's size; the probe is of exactly
        // `cls`), read word by word past its header, never written.
        (header / word..basic / word)
            .map(|k| unsafe { *probe.as_ptr().cast::<*mut pyo3::ffi::PyObject>().add(k) })
            .collect()
    };
    let mut out = [0isize; N];
    for (d, at) in slots.iter().zip(out.iter_mut()) {
        if !d.getattr("__objclass__")?.is(cls) {
            return Err(bad());
        }
        d.call_method1("__set__", (&probe, &marker)).map_err(|_| bad())?;
        let found: Vec<usize> = words()
            .into_iter()
            .enumerate()
            .filter(|(_, v)| *v == marker.as_ptr())
            .map(|(k, _)| header + k * word)
            .collect();
        d.call_method1("__delete__", (&probe,)).map_err(|_| bad())?;
        match found.as_slice() {
            [offset] => *at = *offset as isize,
            _ => return Err(bad()),
        }
    }
    if words().iter().any(|v| !v.is_null()) {
        return Err(bad()); // a slot the descriptors did not empty: not a plain object slot
    }
    Ok(out)
}

/// Apply `entries[start..]` while they are plain partition records; returns the index of the first
/// record left for Python (`len(entries)` when the run applied them all).
pub fn run<'py>(
    py: Python<'py>,
    replayer: &Bound<'py, PyAny>,
    entries: &Bound<'py, PyList>,
    start: usize,
    consts: &Bound<'py, PyTuple>,
    cache: &Bound<'py, ReplayCache>,
) -> PyResult<usize> {
    let ctx = Ctx::new(py, replayer, consts, cache)?;
    let done = ctx.run(entries, start);
    ctx.seal()?;
    done
}

impl<'py> Ctx<'py> {
    /// What the rules need, read from the replayer and `consts` (see `image/replay/native.py`).
    pub fn new(
        py: Python<'py>,
        replayer: &Bound<'py, PyAny>,
        consts: &Bound<'py, PyTuple>,
        cache: &Bound<'py, ReplayCache>,
    ) -> PyResult<Self> {
        let ints = replayer.getattr(attr(py, INTS)?)?.cast_into::<PyDict>()?;
        let journal = replayer.getattr(attr(py, JOURNAL)?)?;
        let partition_cls = consts.get_item(0)?;
        let slots = partition_slots(&consts.get_item(5)?)?;
        let offsets = cached_slot_offsets(cache, &partition_cls, &slots)?;
        let topic_cls = consts.get_item(6)?;
        let ignored = consts.get_item(7)?.cast_into::<PyBytes>()?;
        if ignored.as_bytes().len() != 256 {
            return Err(pyo3::exceptions::PyValueError::new_err("the ignored-types mask must have 256 bytes"));
        }
        // taken out of the cache for the run; `Ctx::drop` puts them back however the run ends
        let interned = std::mem::take(&mut *unpoisoned(&cache.get().inner)).for_ints(&ints);
        let topic_index = std::mem::take(&mut *unpoisoned(&cache.get().topics));
        let make = Maker {
            py,
            partition_cls,
            offsets,
            empty: consts.get_item(1)?,
            migrating_dir: consts.get_item(3)?,
            no_leader_change: consts.get_item(4)?.extract()?,
            migrating: replayer.getattr(attr(py, MIGRATING)?)?.cast_into::<PyDict>()?,
            ints,
            interned: std::cell::RefCell::new(interned),
        };
        Ok(Ctx {
            py,
            image_parts: std::cell::OnceCell::new(),
            topics_by_id: replayer.getattr(attr(py, TOPICS_BY_ID)?)?.cast_into::<PyDict>()?,
            journal: if journal.is_none() { None } else { Some(journal.cast_into::<PyList>()?) },
            defer: replayer.getattr(attr(py, DEFER_PARTITIONS)?)?.is_truthy()?,
            slots,
            make,
            last_topic: std::cell::RefCell::new(None),
            scattered: std::cell::Cell::new(false),
            replayer: replayer.clone(),
            topic_offsets: cached_slot_offsets(cache, &topic_cls, &topic_slots(&topic_cls)?)?,
            topic_cls,
            ignored,
            config_types: consts.get_item(8)?.cast_into::<PyDict>()?,
            topic_index: std::cell::RefCell::new(topic_index),
            cache: cache.clone(),
            missing: consts.get_item(2)?,
            run: std::cell::RefCell::new(None),
            staged: Default::default(),
        })
    }

    /// Make sure the journal's last entry is the current `ChangeRun`, which the changes staged
    /// next belong to: the one made last, while it is still the journal's last entry and no mark
    /// came since (`seal`), else a new one (the last one's changes go into it first).
    fn change_run(&self, j: &Bound<'py, PyList>) -> PyResult<()> {
        let mut run = self.run.borrow_mut();
        if let Some((r, len)) = run.as_ref() {
            // SAFETY: `j` is a live list of `len` items (checked first): item `len - 1` is read
            // without a reference taken, and only compared.
            if j.len() == *len && unsafe { rt::list_item(j.as_ptr(), *len as isize - 1) } == r.as_ptr() {
                return Ok(());
            }
        }
        if let Some((done, _)) = run.take() {
            done.get().take(&mut self.staged.borrow_mut())?;
        }
        let r = Bound::new(self.py, ChangeRun::new(self.layout()))?;
        j.append(&r)?;
        *run = Some((r, j.len()));
        Ok(())
    }

    fn layout(&self) -> journal::Layout<'_> {
        journal::Layout { partition_cls: &self.make.partition_cls, offsets: &self.make.offsets }
    }

    /// A batch ends here (its journal mark is taken), or the replay run: the staged changes go
    /// into their run, and the next change starts a new one.
    pub fn seal(&self) -> PyResult<()> {
        if let Some((done, _)) = self.run.borrow_mut().take() {
            done.get().take(&mut self.staged.borrow_mut())?;
        }
        Ok(())
    }

    /// `ReplayState._keep_slot`: journal `mapping[key]` (or its absence) before it changes.
    fn keep_slot(&self, mapping: &Bound<'py, PyDict>, key: &Obj<'py>) -> PyResult<()> {
        if let Some(j) = &self.journal {
            let old = mapping.get_item(key)?.unwrap_or_else(|| self.missing.clone());
            j.append(rt::tuple(self.py, [mapping.clone().into_any(), key.clone(), old])?)?;
        }
        Ok(())
    }

    /// The replayer's orphan topics and its image's topic names and configs, read on first use.
    pub fn image_parts(&self) -> PyResult<&ImageParts<'py>> {
        if let Some(parts) = self.image_parts.get() {
            return Ok(parts);
        }
        let (py, replayer) = (self.py, &self.replayer);
        let image = replayer.getattr(attr(py, IMAGE)?)?;
        let parts = ImageParts {
            orphans: replayer.getattr(attr(py, ORPHAN_TOPICS)?)?.cast_into::<PySet>()?,
            by_name: image.getattr(attr(py, TOPICS)?)?.getattr(attr(py, BY_NAME)?)?.cast_into::<PyDict>()?,
            configs: image.getattr(attr(py, CONFIGS)?)?.cast_into::<PyDict>()?,
        };
        Ok(self.image_parts.get_or_init(|| parts))
    }

    /// The replayer the rules apply to.
    pub fn replayer(&self) -> &Obj<'py> {
        &self.replayer
    }

    /// Apply `entries[start..]` while the rules here take them; returns the index of the first
    /// record left for Python.
    pub fn run(&self, entries: &Bound<'py, PyList>, start: usize) -> PyResult<usize> {
        let mut i = start;
        while i < entries.len() {
            let entry = entries.get_item(i)?;
            let value = entry.cast::<PyTuple>()?.get_item(3)?;
            let Ok(bytes) = value.cast::<PyBytes>() else {
                return Ok(self.left_to_python(i));
            };
            if !self.apply(bytes.as_bytes())? {
                return Ok(self.left_to_python(i));
            }
            i += 1;
        }
        Ok(i)
    }

    /// Record `i` goes to Python, which may remove or replace any topic (a RemoveTopicRecord is
    /// Python's): the last topic found is forgotten, or a record after it would reach the
    /// partitions of a topic that is gone.
    fn left_to_python(&self, i: usize) -> usize {
        *self.last_topic.borrow_mut() = None;
        i
    }

    /// `run` over records framed in `buf` (`entries::frame`): values as spans of the batch.
    pub fn run_framed(&self, buf: &[u8], records: &[entries::Frame], start: usize) -> PyResult<usize> {
        let mut i = start;
        while i < records.len() {
            if self.scattered.get() {
                self.prefetch(buf, records, i);
            }
            let Some(span) = records[i].2 else {
                return Ok(self.left_to_python(i));
            };
            if !self.apply(entries::span_bytes(buf, span))? {
                return Ok(self.left_to_python(i));
            }
            i += 1;
        }
        Ok(i)
    }

    /// Prefetch what the next records will look up, one link of the chain per distance: the index's
    /// entry for record `i + FAR`, the topic's `partitions` dict (or its `Pending`) for `i + AHEAD`,
    /// the dict's table (or the partition's waiting row) for `i + NEAR`, the partition for
    /// `i + 1`. A log's partition changes name topics all over a big cluster, and each one's
    /// lookups were a chain of cache misses the processor waited out one after another. Hints
    /// only: what is read here decides nothing.
    fn prefetch(&self, buf: &[u8], records: &[entries::Frame], i: usize) {
        const FAR: usize = 8;
        const AHEAD: usize = 4;
        const NEAR: usize = 2;
        // a partition (change) record's first fields: the partition id, then the topic id
        let fields = |at: usize| {
            let v = entries::span_bytes(buf, records.get(at)?.2?);
            let partitionish =
                v.len() >= 23 && v[0] == 1 && (v[1] == PARTITION_RECORD || v[1] == PARTITION_CHANGE_RECORD);
            (partitionish && v[2] < 0x80).then(|| (i32::from_be_bytes([v[3], v[4], v[5], v[6]]), &v[7..23]))
        };
        let topic_of = |at: usize| {
            let (pid, id) = fields(at)?;
            Some((self.topic_index.try_borrow().ok()?.peek(id)?, pid))
        };
        if let Some((_, id)) = fields(i + FAR) {
            if let Ok(index) = self.topic_index.try_borrow() {
                prefetch_line(index.entry_address(id));
            }
        }
        if let Some(((d, pending), _)) = topic_of(i + AHEAD) {
            match pending {
                Some(p) => {
                    prefetch_line(p.cast());
                    prefetch_line(p.cast::<u8>().wrapping_add(64));
                }
                None => prefetch_line(d.cast()),
            }
        }
        match topic_of(i + NEAR) {
            Some(((_, Some(p)), pid)) => {
                // SAFETY: the index holds a strong reference to `p`, a `Pending`.
                let pending = unsafe { Bound::from_borrowed_ptr(self.py, p) };
                if let Ok(pending) = pending.cast::<Pending>() {
                    pending.get().prefetch(pid);
                }
            }
            #[cfg(not(Py_LIMITED_API))]
            Some(((d, None), _)) => {
                // SAFETY: the index holds a strong reference to `d`, a dict: its object is read
                // (the pointer to its keys), never written, under the GIL.
                let keys = unsafe { (*d.cast::<pyo3::ffi::PyDictObject>()).ma_keys };
                prefetch_line(keys.cast());
                prefetch_line(keys.cast::<u8>().wrapping_add(64));
            }
            // the stable ABI (an abi3 wheel) hides a dict's keys: no hint
            #[cfg(Py_LIMITED_API)]
            Some(((_, None), _)) => {}
            None => {}
        }
        if let Some(((d, None), pid)) = topic_of(i + 1) {
            // the partition itself, looked up now that the dict's table is near; an int key
            // from the small ints CPython keeps (no allocation), else no hint
            if (0..256).contains(&pid) {
                // SAFETY: `d` is a live dict (held by the index), the key a live int; the lookup
                // returns a borrowed reference, only used as an address, or null (an error is
                // cleared: a hint never raises).
                unsafe {
                    let key = pyo3::ffi::PyLong_FromLong(pid.into());
                    if !key.is_null() {
                        let p = pyo3::ffi::PyDict_GetItemWithError(d, key);
                        pyo3::ffi::Py_DECREF(key);
                        if p.is_null() {
                            pyo3::ffi::PyErr_Clear();
                        } else {
                            prefetch_line(p.cast());
                            prefetch_line(p.cast::<u8>().wrapping_add(64));
                        }
                    }
                }
            }
        }
    }

    /// Apply one record value by the rules here; false when Python must apply it (a type or a case
    /// they do not take, or a value the generated decoders refuse).
    fn apply(&self, v: &[u8]) -> PyResult<bool> {
        let (c, py) = (self, self.py);
        if v.len() < 3 || v[0] != 1 || v[2] >= 0x80 {
            return Ok(false);
        }
        let ignored = c.ignored.as_bytes()[v[1] as usize] != 0;
        let known = matches!(
            v[1],
            PARTITION_RECORD | PARTITION_CHANGE_RECORD | TOPIC_RECORD | CONFIG_RECORD | REMOVE_TOPIC_RECORD
        );
        if !(ignored || known) {
            return Ok(false);
        }
        let mut p = 3usize;
        let step = if v[1] == PARTITION_RECORD || v[1] == PARTITION_CHANGE_RECORD {
            let Some(decode) = generated::raw_decoder(v[1], v[2]) else {
                return Ok(false);
            };
            let Ok(fields) = decode(v, &mut p) else {
                return Ok(false);
            };
            if p != v.len() {
                return Ok(false);
            }
            if v[1] == PARTITION_RECORD {
                partition(c, &fields)?
            } else {
                partition_change(c, &fields)?
            }
        } else {
            let Some(decode) = generated::decoder(v[1], v[2]) else {
                return Ok(false);
            };
            let Ok(data) = decode(py, v, &mut p) else {
                return Ok(false);
            };
            if p != v.len() {
                return Ok(false);
            }
            match v[1] {
                _ if ignored => Step::Applied,
                TOPIC_RECORD => topic(c, &data)?,
                REMOVE_TOPIC_RECORD => remove_topic(c, &data)?,
                _ => config(c, &data)?,
            }
        };
        Ok(matches!(step, Step::Applied))
    }
}
