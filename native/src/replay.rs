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

use std::sync::OnceLock;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::generated;
use crate::rt::{self, Obj};

const PARTITION_RECORD: u8 = 3;
const PARTITION_CHANGE_RECORD: u8 = 5;

/// Attribute names, made when the module is imported (`init`).
const NAMES: [&str; 16] = [
    "_topics_by_id",
    "_ints",
    "journal",
    "_migrating",
    "partitions",
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
const TOPICS_BY_ID: usize = 0;
const INTS: usize = 1;
const JOURNAL: usize = 2;
const MIGRATING: usize = 3;
const PARTITIONS: usize = 4;
/// The attributes a change journals, in the order of `timeline.kept` (5..16 of NAMES).
const KEPT: std::ops::Range<usize> = 5..16;
const ISR: usize = 8;
const LEADER: usize = 10;
const LEADER_EPOCH: usize = 11;
const LEADER_RECOVERY_STATE: usize = 12;
const PARTITION_EPOCH: usize = 13;
const REMOVING: usize = 14;
const ADDING: usize = 5;
const ELR: usize = 7;
const LAST_KNOWN_ELR: usize = 9;

/// The attribute names of a journalled partition, in order.
pub fn kept_attributes() -> Vec<&'static str> {
    NAMES[KEPT].to_vec()
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
struct Ctx<'py> {
    py: Python<'py>,
    topics_by_id: Bound<'py, PyDict>,
    ints: Bound<'py, PyDict>,
    journal: Option<Bound<'py, PyList>>,
    migrating: Bound<'py, PyDict>,
    partition_cls: Obj<'py>,
    empty: Obj<'py>,
    missing: Obj<'py>,
    migrating_dir: Obj<'py>,
    no_leader_change: i64,
}

impl<'py> Ctx<'py> {
    /// `intern(t, t) if t else EMPTY` (None counts as empty, as in Python).
    fn intern(&self, t: &Obj<'py>) -> PyResult<Obj<'py>> {
        if t.is_none() || t.len()? == 0 {
            return Ok(self.empty.clone());
        }
        if let Some(shared) = self.ints.get_item(t)? {
            return Ok(shared);
        }
        self.ints.set_item(t, t)?;
        Ok(t.clone())
    }

    /// `Replayer._migrating_dirs(n)`: one shared tuple of n MIGRATING directories per n.
    fn migrating_dirs(&self, n: usize) -> PyResult<Obj<'py>> {
        let key = rt::int(self.py, n as i64)?;
        if let Some(t) = self.migrating.get_item(&key)? {
            return Ok(t);
        }
        let t = rt::tuple_with(self.py, n, |_| Ok::<_, PyErr>(self.migrating_dir.clone()))?;
        self.migrating.set_item(key, &t)?;
        Ok(t)
    }

    /// `dirs.count(MIGRATING_DIR) == len(dirs)`, comparing the bytes (as `==` on bytes does).
    fn all_migrating(&self, dirs: &Obj<'py>) -> PyResult<bool> {
        let want = self.migrating_dir.cast::<PyBytes>()?.as_bytes();
        for d in dirs.cast::<PyTuple>()?.iter() {
            match d.cast::<PyBytes>() {
                Ok(b) if b.as_bytes() == want => {}
                _ => return Ok(false),
            }
        }
        Ok(true)
    }
}

/// What a run does with one record.
enum Step {
    Applied,
    /// Python applies this record (and the run ends).
    Python,
}

/// `_partition_tuple` on the decoded PARTITION_FIELDS tuple.
fn partition(c: &Ctx<'_>, t: &Bound<'_, PyTuple>) -> PyResult<Step> {
    let g = |i: usize| t.get_item(i);
    let (pid, tid, rep, isr, rem, add) = (g(0)?, g(1)?, g(2)?, g(3)?, g(4)?, g(5)?);
    let (leader, lrs, le, pe, dirs, elr, lke) = (g(6)?, g(7)?, g(8)?, g(9)?, g(10)?, g(11)?, g(12)?);
    let Some(topic) = c.topics_by_id.get_item(&tid)? else {
        return Ok(Step::Python);
    };
    let lrs_v: i64 = lrs.extract()?;
    let n_dirs = if dirs.is_none() { 0 } else { dirs.len()? };
    let n_rep = rep.len()?;
    if (n_dirs != 0 && n_dirs != n_rep) || (lrs_v != 0 && lrs_v != 1) {
        return Ok(Step::Python);
    }
    let replicas = c.intern(&rep)?;
    let all_migrating = n_dirs == 0 || c.all_migrating(&dirs)?;
    let directories = if all_migrating { c.migrating_dirs(replicas.len()?)? } else { c.intern(&dirs)? };
    let partitions = topic.getattr(attr(c.py, PARTITIONS)?)?;
    let partitions = partitions.cast::<PyDict>()?;
    if let Some(j) = &c.journal {
        let old = partitions.get_item(&pid)?.unwrap_or_else(|| c.missing.clone());
        j.append(rt::tuple(c.py, [partitions.clone().into_any(), pid.clone(), old])?)?;
    }
    let isr = if isr.eq(&rep)? { replicas.clone() } else { c.intern(&isr)? };
    let args = [replicas, directories, isr, c.intern(&rem)?, c.intern(&add)?, c.intern(&elr)?, c.intern(&lke)?, leader, lrs, le, pe];
    let p = c.partition_cls.call1(rt::tuple(c.py, args)?.cast_into::<PyTuple>()?)?;
    partitions.set_item(pid, p)?;
    Ok(Step::Applied)
}

/// `_partition_change_tuple` (and `_merge_change`) on the decoded PARTITION_CHANGE_FIELDS tuple.
fn partition_change(c: &Ctx<'_>, t: &Bound<'_, PyTuple>) -> PyResult<Step> {
    let g = |i: usize| t.get_item(i);
    let (pid, tid, isr, leader, rep, rem, add) = (g(0)?, g(1)?, g(2)?, g(3)?, g(4)?, g(5)?, g(6)?);
    let (lrs, dirs, elr, lke) = (g(7)?, g(8)?, g(9)?, g(10)?);
    let Some(topic) = c.topics_by_id.get_item(&tid)? else {
        return Ok(Step::Python);
    };
    let partitions = topic.getattr(attr(c.py, PARTITIONS)?)?;
    let Some(p) = partitions.cast::<PyDict>()?.get_item(&pid)? else {
        return Ok(Step::Python);
    };
    let lrs_v: i64 = lrs.extract()?;
    if !rep.is_none() || !dirs.is_none() || !(-1..=1).contains(&lrs_v) {
        return Ok(Step::Python);
    }
    if let Some(j) = &c.journal {
        let kept = rt::tuple_with(c.py, 12, |i| {
            if i == 0 { Ok(p.clone()) } else { p.getattr(attr(c.py, KEPT.start + i - 1)?) }
        })?;
        j.append(kept)?;
    }
    for (value, name) in [(&isr, ISR), (&rem, REMOVING), (&add, ADDING), (&elr, ELR), (&lke, LAST_KNOWN_ELR)] {
        if !value.is_none() {
            p.setattr(attr(c.py, name)?, c.intern(value)?)?;
        }
    }
    if leader.extract::<i64>()? != c.no_leader_change {
        p.setattr(attr(c.py, LEADER)?, &leader)?;
        let le = p.getattr(attr(c.py, LEADER_EPOCH)?)?.add(1)?;
        p.setattr(attr(c.py, LEADER_EPOCH)?, le)?;
    }
    if lrs_v != -1 {
        p.setattr(attr(c.py, LEADER_RECOVERY_STATE)?, &lrs)?;
    }
    let pe = p.getattr(attr(c.py, PARTITION_EPOCH)?)?.add(1)?;
    p.setattr(attr(c.py, PARTITION_EPOCH)?, pe)?;
    Ok(Step::Applied)
}

/// Apply `entries[start..]` while they are plain partition records; returns the index of the first
/// record left for Python (`len(entries)` when the run applied them all).
pub fn run<'py>(
    py: Python<'py>,
    replayer: &Bound<'py, PyAny>,
    entries: &Bound<'py, PyList>,
    start: usize,
    consts: &Bound<'py, PyTuple>,
) -> PyResult<usize> {
    let journal = replayer.getattr(attr(py, JOURNAL)?)?;
    let c = Ctx {
        py,
        topics_by_id: replayer.getattr(attr(py, TOPICS_BY_ID)?)?.cast_into::<PyDict>()?,
        ints: replayer.getattr(attr(py, INTS)?)?.cast_into::<PyDict>()?,
        journal: if journal.is_none() { None } else { Some(journal.cast_into::<PyList>()?) },
        migrating: replayer.getattr(attr(py, MIGRATING)?)?.cast_into::<PyDict>()?,
        partition_cls: consts.get_item(0)?,
        empty: consts.get_item(1)?,
        missing: consts.get_item(2)?,
        migrating_dir: consts.get_item(3)?,
        no_leader_change: consts.get_item(4)?.extract()?,
    };
    let n = entries.len();
    let mut i = start;
    while i < n {
        let entry = entries.get_item(i)?;
        let value = entry.cast::<PyTuple>()?.get_item(3)?;
        let Ok(bytes) = value.cast::<PyBytes>() else {
            return Ok(i);
        };
        let v = bytes.as_bytes();
        if v.len() < 3 || v[0] != 1 || v[2] >= 0x80 || (v[1] != PARTITION_RECORD && v[1] != PARTITION_CHANGE_RECORD) {
            return Ok(i);
        }
        let Some(decode) = generated::decoder(v[1], v[2]) else {
            return Ok(i);
        };
        let mut p = 3usize;
        let Ok(data) = decode(py, v, &mut p) else {
            return Ok(i);
        };
        if p != v.len() {
            return Ok(i);
        }
        let t = data.cast::<PyTuple>()?;
        let step = if v[1] == PARTITION_RECORD { partition(&c, t)? } else { partition_change(&c, t)? };
        match step {
            Step::Applied => i += 1,
            Step::Python => return Ok(i),
        }
    }
    Ok(i)
}
