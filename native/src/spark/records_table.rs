//! The Spark `records` table's rows made natively: a batch's records framed (`entries.rs`), each
//! record's JSON written from its bytes (`json.rs`, by the generated writers) and its key columns
//! read from its top-level fields, into Arrow columns that Python hands to pyarrow as buffers
//! (`metashell/spark/native_records.py`).
//!
//! `metashell/spark/decode.py` makes the same rows in Python, and remains the reference: a record
//! this module does not take (a refused value, a type whose keys need Python, a redacted type) is
//! made by the Python callback it is given, in its place, so the rows come out in the same order
//! whichever engine made each one. The differential tests hold the two tables equal.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::decode::entries;
use crate::decode::generated::KEY_NAMES;
use crate::decode::json::{self, Cap, Caps};
use crate::spark::buffer::{recycled, Buffer, Owned};

/// The columns a row is made of after the constant ones (dataset, file, file kind), with their
/// kinds, in the `records` schema's order: `native_records.py` checks them against the schema.
pub const ROW_COLUMNS: [(&str, &str); 25] = [
    ("batch_position", "i64"),
    ("batch_base_offset", "i64"),
    ("offset", "i64"),
    ("log_offset", "i64"),
    ("leader_epoch", "i32"),
    ("timestamp", "i64"),
    ("in_snapshot", "bool"),
    ("is_control", "bool"),
    ("is_transaction_marker", "bool"),
    ("replay_seq", "i32"),
    ("replayed", "bool"),
    ("record_type", "str"),
    ("record_version", "i32"),
    ("record_json", "str"),
    ("topic_id", "str"),
    ("topic_name", "str"),
    ("partition_id", "i32"),
    ("broker_id", "i32"),
    ("controller_id", "i32"),
    ("resource_type", "str"),
    ("resource_name", "str"),
    ("config_name", "str"),
    ("principal", "str"),
    ("user_name", "str"),
    ("feature_name", "str"),
];
const JSON_AT: usize = 13;
const KEYS_AT: usize = 14;
const MAX_MS: i64 = i64::MAX / 1000;

enum Values {
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<bool>),
    Str(Vec<i32>, Vec<u8>),
}

/// One Arrow column being filled: its values and which of them are valid. Which are valid is kept
/// only once a null has come (`valid` is empty while `nulls` is 0): most columns never hold one, and
/// a push for each of their values told nothing.
struct Col {
    values: Values,
    valid: Vec<bool>,
    nulls: usize,
}

impl Col {
    /// An empty column of `kind` (`ROW_COLUMNS`'), with room for `rows` rows and `text` bytes of
    /// text, in memory an earlier batch's buffers held when pyarrow has let them go.
    fn new(kind: &str, rows: usize, text: usize) -> Col {
        let values = match kind {
            "i64" => Values::I64(recycled(rows)),
            "i32" => Values::I32(recycled(rows)),
            "bool" => Values::Bool(Vec::with_capacity(rows)),
            _ => {
                let mut off = recycled(rows + 1);
                off.push(0);
                Values::Str(off, recycled(text))
            }
        };
        Col { values, valid: Vec::new(), nulls: 0 }
    }

    /// Values held.
    fn len(&self) -> usize {
        match &self.values {
            Values::I64(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str(off, _) => off.len() - 1,
        }
    }

    /// The value just pushed is valid.
    #[inline(always)]
    fn valid(&mut self) {
        if self.nulls != 0 {
            self.valid.push(true);
        }
    }

    /// A null (a row made in Python, a time out of range).
    fn null(&mut self) {
        self.fill(self.len() + 1, None);
    }

    /// The same value (None: null) up to row `rows`, at once: a batch's constant columns, and the
    /// nulls of a key column (most rows have none of most keys) before its next value.
    fn fill(&mut self, rows: usize, x: Option<i64>) {
        let n = rows.saturating_sub(self.len());
        if n == 0 {
            return;
        }
        if x.is_none() {
            if self.nulls == 0 {
                // the first null: which values are valid is kept from here on
                let held = self.len();
                self.valid.reserve(ROOM_ROWS.load(Relaxed).max(rows));
                self.valid.resize(held, true);
            }
            self.nulls += n;
        }
        if self.nulls != 0 {
            self.valid.resize(rows, x.is_some());
        }
        let v = x.unwrap_or(0);
        match (&mut self.values, x) {
            (Values::I64(c), _) => c.resize(rows, v),
            (Values::I32(c), _) => c.resize(rows, v as i32),
            (Values::Bool(c), _) => c.resize(rows, v != 0),
            (Values::Str(off, data), None) => off.resize(rows + 1, data.len() as i32),
            (Values::Str(..), Some(_)) => unreachable!("no text column is a batch's constant"),
        }
    }

    /// An int; false (nothing added) when the column does not hold ints or it does not fit.
    #[inline]
    fn int(&mut self, x: i64) -> bool {
        match &mut self.values {
            Values::I64(v) => v.push(x),
            Values::I32(v) => match i32::try_from(x) {
                Ok(x) => v.push(x),
                Err(_) => return false,
            },
            _ => return false,
        }
        self.valid();
        true
    }

    #[inline]
    fn boolean(&mut self, x: bool) -> bool {
        let Values::Bool(v) = &mut self.values else { return false };
        v.push(x);
        self.valid();
        true
    }

    #[inline]
    fn text(&mut self, s: &[u8]) -> bool {
        let Values::Str(off, data) = &mut self.values else { return false };
        data.extend_from_slice(s);
        off.push(data.len() as i32);
        self.valid();
        true
    }

    /// The text column's data, for a value written into it in place ([`Col::written`]).
    fn data(&mut self) -> Option<&mut Vec<u8>> {
        match &mut self.values {
            Values::Str(_, data) => Some(data),
            _ => None,
        }
    }

    /// The text written after the last value's end ([`Col::data`]) made the next value.
    fn written(&mut self) {
        if let Values::Str(off, data) = &mut self.values {
            off.push(data.len() as i32);
            self.valid();
        }
    }

    /// Text written after the last value's end dropped (a row made another way after all, or a
    /// call that failed half way).
    fn unwritten(&mut self) {
        if let Values::Str(off, data) = &mut self.values {
            data.truncate(off.last().map_or(0, |&o| o as usize));
        }
    }

    fn held(&self) -> usize {
        match &self.values {
            Values::Str(_, data) => data.len(),
            _ => 0,
        }
    }
}

fn bits(v: &[bool]) -> Vec<u8> {
    let n = v.len().div_ceil(8);
    let mut out = recycled(n);
    out.resize(n, 0);
    for (i, _) in v.iter().enumerate().filter(|(_, x)| **x) {
        out[i / 8] |= 1 << (i % 8);
    }
    out
}

/// Rows of the `records` table after its constant columns, as Arrow buffers.
#[pyclass]
pub struct RecordColumns {
    cols: Vec<Col>,
    rows: usize,
}

#[pymethods]
impl RecordColumns {
    #[new]
    fn new() -> Self {
        RecordColumns { cols: Self::roomy(), rows: 0 }
    }

    /// The (name, kind) of each column.
    #[staticmethod]
    fn columns() -> Vec<(&'static str, &'static str)> {
        ROW_COLUMNS.to_vec()
    }

    fn __len__(&self) -> usize {
        self.rows
    }

    /// Bytes of text held (the string columns' data), so that a batch stays far below Arrow's 2 GB.
    fn held(&self) -> usize {
        self.cols.iter().map(Col::held).sum()
    }

    /// Add a row made in Python (the values after the constant columns).
    fn push_row(&mut self, row: &Bound<'_, PyTuple>) -> PyResult<()> {
        if row.len() != self.cols.len() {
            return Err(PyValueError::new_err(format!("a records row of {} values", row.len())));
        }
        for (i, value) in row.iter().enumerate() {
            let col = &mut self.cols[i];
            let ok = if value.is_none() {
                col.null();
                true
            } else if let Ok(b) = value.cast::<pyo3::types::PyBool>() {
                col.boolean(b.is_true())
            } else if let Ok(s) = value.cast::<pyo3::types::PyString>() {
                col.text(s.to_str()?.as_bytes())
            } else {
                col.int(value.extract::<i64>()?)
            };
            if !ok {
                self.truncate_to(self.rows);
                return Err(PyValueError::new_err(format!("{} cannot hold {value}", ROW_COLUMNS[i].0)));
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// The columns as (validity bitmap or None, values, offsets or None, null count), emptied; the
    /// buffers native-endian, as Arrow lays them out in memory, each the column's own memory
    /// (`buffer.rs`: no copy).
    #[allow(clippy::type_complexity)]
    fn take<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Vec<(Option<Bound<'py, Buffer>>, Bound<'py, Buffer>, Option<Bound<'py, Buffer>>, usize)>> {
        let rows = self.rows;
        if let Some(((name, _), _)) = ROW_COLUMNS.iter().zip(&self.cols).find(|(_, c)| c.len() != rows) {
            self.cols = Self::roomy();
            self.rows = 0;
            return Err(PyValueError::new_err(format!("the records column {name} is out of step: its rows dropped")));
        }
        ROOM_ROWS.fetch_max(rows, Relaxed);
        for (c, room) in self.cols.iter().zip(&ROOM_TEXT) {
            room.fetch_max(c.held(), Relaxed);
        }
        let fresh = Self::roomy();
        let cols = std::mem::replace(&mut self.cols, fresh);
        self.rows = 0;
        cols.into_iter()
            .map(|c| {
                let valid = (c.nulls > 0).then(|| Buffer::new(py, Owned::Bytes(bits(&c.valid)))).transpose()?;
                let (values, offsets) = match c.values {
                    Values::I64(v) => (Owned::I64(v), None),
                    Values::I32(v) => (Owned::I32(v), None),
                    Values::Bool(v) => (Owned::Bytes(bits(&v)), None),
                    Values::Str(off, data) => (Owned::Bytes(data), Some(Owned::I32(off))),
                };
                let offsets = offsets.map(|o| Buffer::new(py, o)).transpose()?;
                Ok((valid, Buffer::new(py, values)?, offsets, c.nulls))
            })
            .collect()
    }
}

/// The most rows, and text in each column, a record batch of this process has held: a new batch's
/// columns are made that big. Sized like the batch before, a column grew (a copy of all it held)
/// whenever a batch was bigger, and a file's first batch grew from nothing: half the copies made
/// for the fleet's rows (by perf), whose 150 files each start a batch.
static ROOM_ROWS: AtomicUsize = AtomicUsize::new(0);
static ROOM_TEXT: [AtomicUsize; ROW_COLUMNS.len()] = [const { AtomicUsize::new(0) }; ROW_COLUMNS.len()];

impl RecordColumns {
    /// Empty columns, each with the room the biggest batch so far needed.
    fn roomy() -> Vec<Col> {
        let rows = ROOM_ROWS.load(Relaxed);
        ROW_COLUMNS.iter().zip(&ROOM_TEXT).map(|((_, kind), text)| Col::new(kind, rows, text.load(Relaxed))).collect()
    }

    /// Keep the first `rows` rows: drop a half-added row (a Python row with a value a column
    /// cannot hold), or the rows of a batch taken back (`add_rows`).
    fn truncate_to(&mut self, rows: usize) {
        self.rows = rows;
        for c in &mut self.cols {
            if c.len() > rows {
                if c.nulls != 0 {
                    c.nulls -= c.valid[rows..].iter().filter(|x| !**x).count();
                    c.valid.truncate(rows);
                    if c.nulls == 0 {
                        c.valid.clear(); // kept only once a null has come
                    }
                }
                match &mut c.values {
                    Values::I64(v) => v.truncate(rows),
                    Values::I32(v) => v.truncate(rows),
                    Values::Bool(v) => v.truncate(rows),
                    Values::Str(off, data) => {
                        off.truncate(rows + 1);
                        data.truncate(off[rows] as usize);
                    }
                }
            }
        }
    }
}

/// Where a key column's value comes from (`spark/key_columns.py`'s sources).
enum How {
    Uuid(u16),
    Int(u16),
    Get(u16),
    Text(u16),
    Named(u16, usize),
    Const(String),
}

/// What makes a record's row natively: record names, which types are transaction markers or left to
/// Python, the key columns' sources by type, and the resource type names.
#[pyclass]
pub struct RecordRules {
    names: Vec<Option<String>>,
    marker: Vec<bool>,
    python: Vec<bool>,
    keys: Vec<Option<Vec<(usize, How)>>>,
    other: Vec<(usize, How)>,
    maps: Vec<std::collections::HashMap<i64, String>>,
    /// When redacting: the ConfigRecord's api key, its ResourceType, Name and Value fields,
    /// Python's `is_sensitive_config(resource_type, name)`, whose answers are kept by (type, name),
    /// and the text a sensitive value is replaced by (`forms.REDACTED`).
    config: Option<(usize, [u16; 3], Py<PyAny>, String)>,
    sensitive: std::sync::Mutex<std::collections::HashMap<i64, std::collections::HashMap<String, bool>>>,
}

fn field_key(name: &str) -> u16 {
    KEY_NAMES.iter().position(|k| *k == name).map_or(u16::MAX, |i| i as u16)
}

#[pymethods]
impl RecordRules {
    /// `names`: api key -> schema name; `markers`, `python`: api keys; `keys`: api key -> [(column
    /// 0..10, how, argument)], how being uuid, int, get, text, const or the name of one of `maps`
    /// ({int: text}, an int field's name); `other`: the same for types without their own;
    /// `config`: when redacting, the ConfigRecord's api key, `is_sensitive_config` and the text a
    /// sensitive value is replaced by.
    #[new]
    fn new(
        names: &Bound<'_, PyDict>,
        markers: Vec<i64>,
        python: Vec<i64>,
        keys: &Bound<'_, PyDict>,
        other: Vec<(usize, String, String)>,
        maps: &Bound<'_, PyDict>,
        config: Option<(usize, Py<PyAny>, String)>,
    ) -> PyResult<Self> {
        let mut map_names: Vec<String> = Vec::new();
        let mut map_values = Vec::new();
        for (k, v) in maps.iter() {
            map_names.push(k.extract()?);
            map_values.push(v.extract()?);
        }
        let how = |(col, how, arg): (usize, String, String)| -> PyResult<(usize, How)> {
            if col >= ROW_COLUMNS.len() - KEYS_AT {
                return Err(PyValueError::new_err(format!("no key column {col}")));
            }
            let h = match how.as_str() {
                "uuid" => How::Uuid(field_key(&arg)),
                "int" => How::Int(field_key(&arg)),
                "get" => How::Get(field_key(&arg)),
                "text" => How::Text(field_key(&arg)),
                "const" => How::Const(arg),
                map => match map_names.iter().position(|m| m == map) {
                    Some(i) => How::Named(field_key(&arg), i),
                    None => return Err(PyValueError::new_err(format!("no key source {how}"))),
                },
            };
            Ok((col + KEYS_AT, h))
        };
        let mut rules = RecordRules {
            names: vec![None; 128],
            marker: vec![false; 128],
            python: vec![false; 128],
            keys: (0..128).map(|_| None).collect(),
            other: other.into_iter().map(how).collect::<PyResult<_>>()?,
            maps: map_values,
            config: config
                .map(|(k, f, r)| (k, [field_key("ResourceType"), field_key("Name"), field_key("Value")], f, r)),
            sensitive: Default::default(),
        };
        for (k, v) in names.iter() {
            let k: usize = k.extract()?;
            if k < 128 {
                rules.names[k] = Some(v.extract()?);
            }
        }
        for (list, flags) in [(markers, &mut rules.marker), (python, &mut rules.python)] {
            for k in list {
                if (0..128).contains(&k) {
                    flags[k as usize] = true;
                }
            }
        }
        for (k, v) in keys.iter() {
            let k: usize = k.extract()?;
            let sources: Vec<(usize, String, String)> = v.extract()?;
            if k < 128 {
                rules.keys[k] = Some(sources.into_iter().map(how).collect::<PyResult<_>>()?);
            }
        }
        Ok(rules)
    }
}

impl RecordRules {
    /// Whether the native core makes the row of a record of type `k` whose JSON is `text`, with
    /// these top-level fields: not for a type left to Python. When redacting, a config's value
    /// that is sensitive (asked of Python once per resource type and name) is replaced in `text`,
    /// as `redact_record_json` replaces it: the value is the record's last field, and `text` (from
    /// `start`) is checked to end with it (else Python makes the row).
    fn native_text(
        &self,
        py: Python<'_>,
        k: usize,
        caps: &Caps<'_>,
        text: &mut Vec<u8>,
        start: usize,
    ) -> PyResult<bool> {
        if self.python[k] {
            return Ok(false);
        }
        let Some((key, [rtype, name, value], sensitive, redacted)) = &self.config else { return Ok(true) };
        let Some(Cap::Str(v)) = caps.get(*value).filter(|_| *key == k) else {
            return Ok(true);
        };
        let (Some(Cap::Int(t)), Some(Cap::Str(n))) = (caps.get(*rtype), caps.get(*name)) else {
            return Ok(false);
        };
        if !self.is_sensitive(py, sensitive, t, n)? {
            return Ok(true);
        }
        const VALUE: &[u8] = b"\"value\":";
        let mut tail = VALUE.to_vec();
        json::string_text(&mut tail, v);
        tail.push(b'}');
        if !text[start..].ends_with(&tail) {
            return Ok(false);
        }
        text.truncate(text.len() - tail.len() + VALUE.len());
        json::string_text(text, redacted);
        text.push(b'}');
        Ok(true)
    }

    /// `is_sensitive_config(t, n)`, kept by (type, name) for up to 65,536 of them (a known pair is
    /// found without a `String` made for it).
    fn is_sensitive(&self, py: Python<'_>, sensitive: &Py<PyAny>, t: i64, n: &str) -> PyResult<bool> {
        let mut seen = self.sensitive.lock().map_err(|_| PyValueError::new_err("poisoned"))?;
        if let Some(answer) = seen.get(&t).and_then(|names| names.get(n)) {
            return Ok(*answer);
        }
        let answer: bool = sensitive.bind(py).call1((t, n))?.is_truthy()?;
        if seen.values().map(|names| names.len()).sum::<usize>() < 65536 {
            seen.entry(t).or_default().insert(n.to_string(), answer);
        }
        Ok(answer)
    }
}

/// A key column's value: null, an int, or text (a span of the scratch buffer).
#[derive(Clone, Copy)]
enum KeyVal {
    Null,
    Int(i64),
    Text(usize, usize),
}

/// The key columns of a record from its top-level fields; None when Python must make the row.
fn key_values(
    rules: &RecordRules,
    sources: &[(usize, How)],
    caps: &Caps<'_>,
    text: &mut Vec<u8>,
) -> Option<[KeyVal; 11]> {
    let mut out = [KeyVal::Null; 11];
    for (col, how) in sources {
        let slot = &mut out[col - KEYS_AT];
        let put = |s: &[u8], text: &mut Vec<u8>| {
            let a = text.len();
            text.extend_from_slice(s);
            KeyVal::Text(a, text.len())
        };
        *slot = match how {
            How::Const(s) => put(s.as_bytes(), text),
            How::Uuid(k) => match caps.get(*k) {
                None | Some(Cap::Null) => KeyVal::Null,
                Some(Cap::Uuid(raw)) => {
                    let a = text.len();
                    json::uuid_text(text, raw);
                    KeyVal::Text(a, text.len())
                }
                _ => return None,
            },
            How::Int(k) => match caps.get(*k) {
                None | Some(Cap::Null) | Some(Cap::Str(_)) | Some(Cap::Uuid(_)) => KeyVal::Null,
                Some(Cap::Int(v)) => KeyVal::Int(v),
                Some(Cap::Other) => return None,
            },
            How::Get(k) => match caps.get(*k) {
                None | Some(Cap::Null) => KeyVal::Null,
                Some(Cap::Int(v)) => KeyVal::Int(v),
                Some(Cap::Str(s)) => put(s.as_bytes(), text),
                _ => return None,
            },
            How::Text(k) => match caps.get(*k) {
                None | Some(Cap::Null) => KeyVal::Null,
                Some(Cap::Str("")) => KeyVal::Null,
                Some(Cap::Str(s)) => put(s.as_bytes(), text),
                _ => return None,
            },
            How::Named(k, m) => match caps.get(*k) {
                Some(Cap::Int(v)) => match rules.maps[*m].get(&v) {
                    Some(name) => put(name.as_bytes(), text),
                    None => put(v.to_string().as_bytes(), text),
                },
                _ => return None,
            },
        };
    }
    Some(out)
}

/// Whether key column `col` holds `key` (an int column an int within 32 bits, a string column
/// text); a row with one it does not is made by Python, which says what is wrong.
fn fits(col: usize, key: &KeyVal) -> bool {
    match (ROW_COLUMNS[col].1, key) {
        (_, KeyVal::Null) => true,
        ("i32", KeyVal::Int(v)) => i32::try_from(*v).is_ok(),
        ("str", KeyVal::Text(..)) => true,
        _ => false,
    }
}

/// A batch's constants: its file position, base offset, leader epoch, the time every record has
/// (LogAppendTime) if any, the log offset a snapshot's records stand at, the file's replay sequence,
/// and the offset replay starts from.
pub type BatchRow = (i64, i64, i32, Option<i64>, Option<i64>, Option<i32>, i64);

/// Who makes the row of a record the native writers do not take.
#[derive(Clone, Copy)]
pub enum Fallback<'a, 'py> {
    /// `f(i)`: record `i` of a batch Python has read (`NativeRecordRows.add_batch`).
    ByIndex(&'a Bound<'py, PyAny>),
    /// `f(position, base_offset, epoch, offset, timestamp, value)`: a record of a run's plain batch,
    /// from its bytes alone (the batch is never made in Python). A failure (an `Exception`) takes
    /// the batch's rows back: the scan then reads the batch, and Python says what is wrong.
    ByRecord(&'a Bound<'py, PyAny>),
}

/// Add a row per record of the batch's records area `data[pos..end]`; `fallback` makes the row of
/// a record the native writers do not take, in its place. The batch's counters, or None when the
/// area does not frame (Python then reads the batch, and says what is wrong), or when the run's
/// fallback failed (the batch's rows are then taken back).
#[allow(clippy::too_many_arguments)]
pub fn add_rows(
    cols: &mut RecordColumns,
    rules: &RecordRules,
    data: &[u8],
    pos: usize,
    end: usize,
    count: usize,
    base_offset: i64,
    base_ts: i64,
    batch: BatchRow,
    py: Python<'_>,
    fallback: Fallback<'_, '_>,
) -> PyResult<Option<[u64; 4]>> {
    let (position, base, epoch, ts_override, snap_offset, replay_seq, replay_from) = batch;
    let (records, stats) = match entries::frame(data, pos, end, count, base_offset, base_ts) {
        Ok(x) => x,
        Err(entries::Failure::Python(e)) => return Err(e),
        Err(entries::Failure::Fault(_)) => return Ok(None),
    };
    let rows_before = cols.rows;
    // The batch's own columns are filled for its rows at once: before Python makes a row (which
    // pushes every column), and when the batch's rows are done or a call fails.
    let batch_columns = |cols: &mut RecordColumns| {
        let (rows, c) = (cols.rows, &mut cols.cols);
        c[0].fill(rows, Some(position));
        c[1].fill(rows, Some(base));
        c[4].fill(rows, Some(i64::from(epoch)));
        c[6].fill(rows, Some(i64::from(snap_offset.is_some())));
        c[7].fill(rows, Some(0));
        c[9].fill(rows, replay_seq.map(i64::from));
        c[KEYS_AT..].iter_mut().for_each(|key| key.fill(rows, None));
    };
    let mut keys_text = Vec::new();
    let mut caps = Caps::new();
    cols.cols[JSON_AT].unwritten();
    for (i, (offset, ts, value)) in records.into_iter().enumerate() {
        keys_text.clear();
        caps.fields.clear();
        let mut made = None;
        if let Some(span) = value {
            let v = entries::span_bytes(data, span);
            // the JSON is written where its column keeps it (`written` then makes it the row's)
            let text = cols.cols[JSON_AT].data().expect("record_json is a text column");
            let start = text.len();
            if let Ok((key, version)) = crate::decode::record_text(v, text, &mut caps) {
                match rules.native_text(py, key as usize, &caps, text, start) {
                    Ok(true) => made = Some((key, version)),
                    Ok(false) => {}
                    Err(e) => {
                        batch_columns(cols);
                        return Err(e);
                    }
                }
            }
        }
        let made = made.and_then(|(key, version)| {
            let k = key as usize;
            let name = rules.names[k].as_ref()?;
            let sources = rules.keys[k].as_deref().unwrap_or(&rules.other);
            let keys = key_values(rules, sources, &caps, &mut keys_text)?;
            Some((k, name, version, keys))
        });
        let made = made.filter(|(_, _, _, keys)| keys.iter().enumerate().all(|(j, key)| fits(KEYS_AT + j, key)));
        let Some((k, name, version, keys)) = made else {
            cols.cols[JSON_AT].unwritten();
            batch_columns(cols);
            let row = match fallback {
                Fallback::ByIndex(f) => f.call1((i,))?,
                Fallback::ByRecord(f) => {
                    let value = value.map(|span| PyBytes::new(py, entries::span_bytes(data, span)));
                    match f.call1((position, base, epoch, offset, ts_override.unwrap_or(ts), value)) {
                        Ok(row) => row,
                        Err(e) if e.is_instance_of::<pyo3::exceptions::PyException>(py) => {
                            // the batch's rows are taken back: the scan reads it as Python does
                            cols.truncate_to(rows_before);
                            return Ok(None);
                        }
                        Err(e) => return Err(e),
                    }
                }
            };
            cols.push_row(row.cast::<PyTuple>()?)?;
            continue;
        };
        let ts = ts_override.unwrap_or(ts);
        let c = &mut cols.cols;
        c[2].int(offset);
        c[3].int(snap_offset.unwrap_or(offset));
        if (0..=MAX_MS).contains(&ts) {
            c[5].int(ts * 1000);
        } else {
            c[5].null();
        }
        c[8].boolean(rules.marker[k]);
        c[10].boolean(replay_seq.is_some() && (snap_offset.is_some() || offset >= replay_from));
        c[11].text(name.as_bytes());
        c[12].int(version as i64);
        c[JSON_AT].written();
        let row = cols.rows;
        for (j, key) in keys.iter().enumerate() {
            let col = &mut c[KEYS_AT + j];
            match *key {
                KeyVal::Null => {} // filled with the nulls before its next value (`batch_columns`)
                KeyVal::Int(v) => {
                    col.fill(row, None);
                    col.int(v);
                }
                KeyVal::Text(a, b) => {
                    col.fill(row, None);
                    col.text(&keys_text[a..b]);
                }
            }
        }
        cols.rows += 1;
    }
    batch_columns(cols);
    Ok(Some(stats))
}

/// What bounds a run of batches: records a batch may hold, whether to check CRCs, the file position
/// at which the unit ends (batches starting there are not its own), and rows to stop at.
pub type RunLimits = (i64, bool, Option<i64>, usize);

/// The rows of the plain batches of `buf[pos..end]` (`base`: the file position of `buf[0]`): whole,
/// uncompressed, CreateTime, not control, with a good CRC, records that frame (a record the native
/// writers do not take is made by `fallback`, a `Fallback::ByRecord`). Stops at the first other batch (the scan reads it in Python), at the unit's end, or once
/// `max_rows` rows are held. Returns where it stopped and the batches it took.
#[allow(clippy::too_many_arguments)]
pub fn add_batches(
    py: Python<'_>,
    cols: &mut RecordColumns,
    rules: &RecordRules,
    buf: &[u8],
    mut pos: usize,
    end: usize,
    base: i64,
    limits: RunLimits,
    consts: (Option<i64>, Option<i32>, i64),
    fallback: Fallback<'_, '_>,
) -> PyResult<(usize, u64)> {
    use crate::load::batches::{header, HEADER};
    let (max_records, verify_crc, hi, max_rows) = limits;
    let (snap_offset, replay_seq, replay_from) = consts;
    let mut taken = 0u64;
    while pos < end && end - pos >= HEADER && cols.rows < max_rows {
        if hi.is_some_and(|hi| base + pos as i64 >= hi) {
            break;
        }
        let h = header(&buf[pos..pos + HEADER]);
        let plain = h.size >= HEADER as i64
            && h.size <= (end - pos) as i64
            && h.magic == 2
            && h.attributes & 0x2F == 0
            && 0 <= h.count as i64
            && h.count as i64 <= max_records;
        if !plain {
            break;
        }
        let stop = pos + h.size as usize;
        if verify_crc && ::crc32c::crc32c(&buf[pos + 21..stop]) != h.crc {
            break;
        }
        let row = (base + pos as i64, h.base, h.epoch, None, snap_offset, replay_seq, replay_from);
        let got =
            add_rows(cols, rules, buf, pos + HEADER, stop, h.count as usize, h.base, h.base_ts, row, py, fallback)?;
        if got.is_none() {
            break;
        }
        taken += 1;
        pos = stop;
    }
    Ok((pos, taken))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrow's validity bitmap: bit i of byte i / 8 (least significant first), padded to whole bytes.
    #[test]
    fn validity_bits_are_laid_out_as_arrow_reads_them() {
        assert_eq!(bits(&[]), Vec::<u8>::new());
        assert_eq!(bits(&[true]), vec![0b1]);
        let v = [true, false, true, true, false, false, false, false, false, true];
        assert_eq!(bits(&v), vec![0b0000_1101, 0b10]);
    }

    /// A column keeps one offset more than its rows, a null repeating the last, and refuses a value
    /// of another type (nothing added) or an int its width cannot hold.
    #[test]
    fn columns_hold_what_their_type_holds() {
        let mut s = Col::new("str", 0, 0);
        assert!(s.text(b"ab"));
        s.null();
        assert!(s.text(b"c"));
        assert!(!s.int(1));
        let Values::Str(off, data) = &s.values else { panic!("not a text column") };
        assert_eq!((off.as_slice(), data.as_slice()), (&[0, 2, 2, 3][..], &b"abc"[..]));
        assert_eq!((s.valid.as_slice(), s.nulls, s.held()), (&[true, false, true][..], 1, 3));
        let mut i = Col::new("i32", 0, 0);
        assert!(i.int(i32::MIN.into()));
        assert!(!i.int(i64::from(i32::MAX) + 1));
        assert!(!i.boolean(true));
        assert_eq!((i.len(), i.valid.len()), (1, 0)); // no null yet: which are valid is not kept
        let roomy = Col::new("str", 3, 10);
        assert_eq!((roomy.len(), roomy.held()), (0, 0));
    }

    /// A batch's constant column filled for its rows at once holds what a push a row would have.
    #[test]
    fn a_filled_column_is_as_pushed() {
        let mut pushed = Col::new("i32", 0, 0);
        let mut filled = Col::new("i32", 0, 0);
        for x in [Some(7), None, Some(7), Some(9), Some(9), None] {
            match x {
                Some(v) => assert!(pushed.int(v)),
                None => pushed.null(),
            }
        }
        filled.fill(1, Some(7));
        filled.fill(2, None);
        filled.fill(2, Some(5)); // nothing: it holds 2 rows already
        filled.fill(3, Some(7));
        filled.fill(5, Some(9));
        filled.fill(6, None);
        let (Values::I32(a), Values::I32(b)) = (&pushed.values, &filled.values) else { panic!("not ints") };
        assert_eq!((a, &pushed.valid, pushed.nulls), (b, &filled.valid, filled.nulls));
        assert_eq!(filled.valid, [true, false, true, true, true, false]);
    }

    /// Rows taken back forget which values were valid once no null is left among them.
    #[test]
    fn rows_taken_back_keep_the_columns_in_step() {
        let mut cols = RecordColumns { cols: vec![Col::new("i64", 0, 0), Col::new("str", 0, 0)], rows: 0 };
        for (x, s) in [(1, Some(&b"a"[..])), (2, None), (3, Some(&b"bc"[..]))] {
            cols.cols[0].int(x);
            match s {
                Some(s) => assert!(cols.cols[1].text(s)),
                None => cols.cols[1].null(),
            }
            cols.rows += 1;
        }
        cols.truncate_to(1);
        assert_eq!((cols.cols[0].len(), cols.cols[1].len(), cols.cols[1].nulls), (1, 1, 0));
        assert!(cols.cols[1].valid.is_empty());
        assert!(cols.cols[1].text(b"d"));
        assert!(cols.cols[1].valid.is_empty());
        let Values::Str(off, data) = &cols.cols[1].values else { panic!("not text") };
        assert_eq!((off.as_slice(), data.as_slice()), (&[0, 1, 2][..], &b"ad"[..]));
    }
}
