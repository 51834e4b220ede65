//! `metashell._native`: the optional compiled core of metashell.
//!
//! It does, faster, two things the pure-Python engine does, with the same results (the differential
//! tests in `tests/test_native_differential.py` hold them equal):
//!
//! * `decode_entries`: a batch's records area into `(offset, timestamp, key, value)` tuples, with the
//!   same counters and the same one-line errors (`metashell.log.records.decode_entries_python`);
//! * `decode_value`: a metadata record value into what the replayer's fast path consumes, by the
//!   decoders `scripts/gen_native.py` generates from the bundled schemas (`generated.rs`). A value it
//!   does not take comes back as None and Python decodes it, and says what is wrong with it;
//! * `decode_raw_fields`: the same for the positional records (PartitionRecord,
//!   PartitionChangeRecord) by their generated raw decoders, which make no Python object: what
//!   `replay_run` reads (exposed for the differential tests);
//! * `decode_control_value`: a control record's value (LeaderChange, SnapshotHeader, KRaftVoters...)
//!   by the same generated decoders, with the same fallback.
//!
//! * `replay_run` and `apply_log_batches`: the replay of runs of records (`replay.rs`) and of runs of
//!   plain log batches (`batches.rs`) into the image's Python objects.
//!
//! Hostile bytes: every read is bounded (`rt.rs`); Python objects are made only through the C API
//! calls that report a full memory as MemoryError (`rt::own`), and the decoders keep no Rust copy of
//! what they read, so running out of memory is the loader's usual one-line error. A panic would be
//! a bug: PyO3 turns it into `PanicException` (`panic = "unwind"`), which the command line reports
//! in one line, and the panic hook set here prints nothing (no backtrace is gathered, which needs
//! memory that may not be there).

#![warn(clippy::undocumented_unsafe_blocks)]

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

// grouped by concern: bytes to values, replay into the image, a directory's bulk load, Spark's rows
mod decode;
mod load;
mod replay;
mod rt;
mod spark;

use decode::{entries, generated, json};
use load::batches;
use spark::records_table;

/// `buf[pos..end]` is a range of `buf`, else a ValueError naming `what` (every entry point that is
/// handed a range checks it before reading).
fn within(buf: &[u8], pos: usize, end: usize, what: &str) -> PyResult<()> {
    if pos > end || end > buf.len() {
        return Err(PyValueError::new_err(format!("{what} outside the buffer")));
    }
    Ok(())
}

create_exception!(_native, RecordDecodeError, PyException, "A malformed record: (message, position, index).");

/// The records area `data[pos:end]` of a batch of `count` records: `(entries, stats)`, as
/// `decode_entries_python` returns them (stats are the four counters), or `RecordDecodeError`.
#[pyfunction]
#[allow(clippy::type_complexity)] // the tuple Python unpacks: (entries, four counters)
fn decode_entries<'py>(
    py: Python<'py>,
    data: &[u8],
    pos: usize,
    end: usize,
    count: usize,
    base_offset: i64,
    base_ts: i64,
) -> PyResult<(Bound<'py, PyAny>, (u64, u64, u64, u64))> {
    // not a record fault: the caller hands such a call to Python, which reads it as it reads any
    within(data, pos, end, "records area")?;
    let (list, s) = entries::decode(py, data, pos, end, count, base_offset, base_ts).map_err(record_error)?;
    Ok((list, (s[0], s[1], s[2], s[3])))
}

/// Why a records area did not read, as Python sees it: `RecordDecodeError` for the bytes, the
/// Python error itself (out of memory) otherwise.
fn record_error(failure: entries::Failure) -> PyErr {
    match failure {
        entries::Failure::Python(e) => e,
        entries::Failure::Fault(entries::RecordFault(message, at, index)) => {
            RecordDecodeError::new_err((message, at, index))
        }
    }
}

/// The counters of the records area `data[pos:end]` (as `decode_entries` gives them), or
/// `RecordDecodeError`, with no Python object made per record: a fetched snapshot checked whole.
#[pyfunction]
fn check_entries(
    data: &[u8],
    pos: usize,
    end: usize,
    count: usize,
    base_offset: i64,
    base_ts: i64,
) -> PyResult<(u64, u64, u64, u64)> {
    within(data, pos, end, "records area")?;
    let s = entries::check(data, pos, end, count, base_offset, base_ts).map_err(record_error)?;
    Ok((s[0], s[1], s[2], s[3]))
}

/// A metadata record value as `(api_key, data)`, data being what the Python replay decoder returns
/// (a tuple for the positional records, else a dict); None when the fast path does not take it.
#[pyfunction]
fn decode_value<'py>(py: Python<'py>, value: &[u8]) -> Option<Bound<'py, PyAny>> {
    if value.len() < 3 || value[0] != 1 || value[1] >= 0x80 || value[2] >= 0x80 {
        return None;
    }
    let decode = generated::decoder(value[1], value[2])?;
    let mut p = 3usize;
    let data = decode(py, value, &mut p).ok()?;
    if p != value.len() {
        return None;
    }
    rt::tuple(py, [rt::int(py, value[1] as i64).ok()?, data]).ok()
}

/// A metadata record value as `(api_key, version, Kafka's JSON form of its data)` by the generated
/// JSON writers (`json.rs`), what `kafka_json.to_kafka_json_text` writes; None when they do not take
/// it (Python then writes it, and says what is wrong with it).
#[pyfunction]
fn kafka_json_text(value: &[u8]) -> Option<(u8, u8, String)> {
    let mut text = Vec::with_capacity(value.len() * 2);
    let (key, version) = decode::record_text(value, &mut text, &mut json::Caps::none()).ok()?;
    String::from_utf8(text).ok().map(|t| (key, version, t))
}

/// Add a Spark `records` row per record of a batch's records area `data[pos:end]` to `cols`
/// (`records_table.rs`); `fallback(i)` makes record `i`'s row in Python where the native writers do
/// not. The batch's four counters, or None when the area does not frame.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn add_record_rows(
    cols: &Bound<'_, records_table::RecordColumns>,
    rules: &Bound<'_, records_table::RecordRules>,
    data: &[u8],
    pos: usize,
    end: usize,
    count: usize,
    base_offset: i64,
    base_ts: i64,
    batch: records_table::BatchRow,
    fallback: &Bound<'_, PyAny>,
) -> PyResult<Option<(u64, u64, u64, u64)>> {
    within(data, pos, end, "records area")?;
    let stats = records_table::add_rows(
        &mut cols.borrow_mut(),
        &rules.borrow(),
        data,
        pos,
        end,
        count,
        base_offset,
        base_ts,
        batch,
        fallback.py(),
        records_table::Fallback::ByIndex(fallback),
    )?;
    Ok(stats.map(|s| (s[0], s[1], s[2], s[3])))
}

/// Add the `records` rows of a run of plain batches of `buf[pos:end]` (`records_table::add_batches`;
/// `base`: the file position of `buf[0]`; `limits`: max records a batch, verify CRC, the unit's end
/// position or None, rows to stop at; `consts`: a snapshot's log offset, the replay sequence, the
/// offset replay starts from; `python_row(position, base_offset, epoch, offset, timestamp, value)`
/// makes the row of a record the native writers do not take). Returns (where it stopped, batches
/// taken).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn add_record_batches(
    py: Python<'_>,
    cols: &Bound<'_, records_table::RecordColumns>,
    rules: &Bound<'_, records_table::RecordRules>,
    buf: &[u8],
    pos: usize,
    end: usize,
    base: i64,
    limits: records_table::RunLimits,
    consts: (Option<i64>, Option<i32>, i64),
    python_row: &Bound<'_, PyAny>,
) -> PyResult<(usize, u64)> {
    within(buf, pos, end, "batches")?;
    let fallback = records_table::Fallback::ByRecord(python_row);
    records_table::add_batches(
        py,
        &mut cols.borrow_mut(),
        &rules.borrow(),
        buf,
        pos,
        end,
        base,
        limits,
        consts,
        fallback,
    )
}

/// A positional record's value read by its raw decoder (what the replay loop reads), its fields as
/// Python values (None, int, bytes, a tuple for an array; `RAW_WIDTH` of them, None after the
/// record's own): for the differential tests, which hold it equal to `decode_value`. None when there
/// is no raw decoder for the value's type and version, or it refuses the value.
#[pyfunction]
fn decode_raw_fields<'py>(py: Python<'py>, value: &[u8]) -> PyResult<Option<Bound<'py, PyAny>>> {
    if value.len() < 3 || value[0] != 1 || value[1] >= 0x80 || value[2] >= 0x80 {
        return Ok(None);
    }
    let Some(decode) = generated::raw_decoder(value[1], value[2]) else {
        return Ok(None);
    };
    let mut p = 3usize;
    let Ok(fields) = decode(value, &mut p) else {
        return Ok(None);
    };
    if p != value.len() {
        return Ok(None);
    }
    let out = rt::tuple_with(py, fields.len(), |i| match fields[i] {
        rt::Raw::Null => Ok(rt::none(py)),
        rt::Raw::Int(v) => rt::int(py, v),
        rt::Raw::Uuid(b) => rt::bytes_obj(py, b),
        rt::Raw::Array(t, d) => {
            let size = t.size();
            rt::tuple_with(py, d.len() / size, |j| match t {
                rt::Fx::Uuid => rt::bytes_obj(py, &d[j * size..(j + 1) * size]),
                _ => rt::int(py, rt::element(t, d, j)),
            })
        }
    })?;
    Ok(Some(out))
}

/// A control record's value decoded at version 0, as Kafka reads every control value (bytes after
/// the schema's fields are ignored, as `registry.decode(..., exact=False)` ignores them); None when
/// the type has no schema here or the value does not decode, and Python then says what is wrong.
#[pyfunction]
fn decode_control_value<'py>(py: Python<'py>, control_type: i16, value: &[u8]) -> Option<Bound<'py, PyAny>> {
    let decode = generated::control_decoder(control_type)?;
    let mut p = 0usize;
    decode(py, value, &mut p).ok()
}

/// Apply the plain partition records of `entries[start:]` to the replayer's image (`replay.rs`);
/// returns the index of the first record left for Python. `consts`: see `image/replay/native.py`;
/// `cache`: the replayer's `ReplayCache`.
#[pyfunction]
fn replay_run<'py>(
    py: Python<'py>,
    replayer: &Bound<'py, PyAny>,
    entries: &Bound<'py, pyo3::types::PyList>,
    start: usize,
    consts: &Bound<'py, pyo3::types::PyTuple>,
    cache: &Bound<'py, replay::ReplayCache>,
) -> PyResult<usize> {
    replay::run(py, replayer, entries, start, consts, cache)
}

/// Apply the plain log batches of `buf[pos:end]` (`batches.rs`; `base`: the file position of
/// `buf[0]`). `cursor`: (next offset, the segment's offset bound, max records a batch, verify CRC,
/// max batches, published batches rather than a directory snapshot's); `hooks`: (the replayer's
/// `_replay_one_native`, the image's provenance, the journal's entries or None, the loader of a
/// `--snapshot` file, whose deltas it keeps, or None). Returns (where it
/// stopped, records applied, the next offset, the index columns position, base, last, epoch, max
/// timestamp, count as native-endian bytes, the exception that stopped it or None, and the journal
/// marks of the batches applied: last offset, journal length, provenance (5 a mark) as
/// native-endian bytes and whether a transaction was open, or None without a journal).
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn apply_log_batches<'py>(
    py: Python<'py>,
    buf: &[u8],
    pos: usize,
    end: usize,
    base: i64,
    cursor: (i64, i64, i64, bool, usize, bool),
    replayer: &Bound<'py, PyAny>,
    consts: &Bound<'py, pyo3::types::PyTuple>,
    cache: &Bound<'py, replay::ReplayCache>,
    hooks: (Bound<'py, PyAny>, Bound<'py, PyAny>, Option<Bound<'py, pyo3::types::PyList>>, Option<Bound<'py, PyAny>>),
) -> PyResult<(
    usize,
    u64,
    i64,
    [Bound<'py, pyo3::types::PyBytes>; 6],
    Option<Bound<'py, PyAny>>,
    Option<[Bound<'py, pyo3::types::PyBytes>; 4]>,
)> {
    within(buf, pos, end, "batches")?;
    let mut cur = batches::Cursor {
        next_offset: cursor.0,
        high: cursor.1,
        max_records: cursor.2,
        verify_crc: cursor.3,
        max_batches: cursor.4,
        log: cursor.5,
    };
    let ctx = replay::Ctx::new(py, replayer, consts, cache)?;
    let (one_record, provenance, journal, file) = hooks;
    let marked = journal.is_some();
    let hooks = batches::Hooks { one_record, provenance, journal, file };
    let (done, marks, error) = batches::apply(py, buf, pos, end, base, &mut cur, &ctx, &hooks);
    let error = error.or(ctx.seal().err()); // the changes of a batch an error stopped, into their run
    let columns = [
        batches::column(py, &done.position)?,
        batches::column(py, &done.base)?,
        batches::column(py, &done.last)?,
        batches::column(py, &done.epoch)?,
        batches::column(py, &done.time)?,
        batches::column(py, &done.count)?,
    ];
    let marks = if marked {
        Some([
            batches::column(py, &marks.last)?,
            batches::column(py, &marks.length)?,
            batches::column(py, &marks.prov)?,
            rt::bytes_obj(py, &marks.txn_open)?.cast_into::<pyo3::types::PyBytes>()?,
        ])
    } else {
        None
    };
    let error = error.map(|e| e.into_value(py).into_bound(py).into_any());
    Ok((done.pos, done.records, cur.next_offset, columns, error, marks))
}

/// The Partition attributes `replay.rs` journals, in its order: a test holds them equal to
/// `Partition.__slots__` (the order of `timeline.kept`).
#[pyfunction]
fn partition_attributes() -> Vec<&'static str> {
    replay::kept_attributes()
}

/// Panics, for the test that a panic is one line at the command line (never called otherwise).
#[pyfunction]
fn _panic_for_tests() {
    panic!("a deliberate panic, for the tests");
}

/// CRC32C (Castagnoli) of any contiguous buffer (bytes, bytearray, a memoryview slice), as the
/// `crc32c` package computes it: the batch checksum. Here because importing that package reads
/// package metadata (about 70 ms of every one-shot command); hardware-accelerated where the CPU
/// has SSE 4.2 or ARMv8 CRC, as the package is.
#[pyfunction(name = "crc32c")]
fn crc32c_of(data: &Bound<'_, PyAny>) -> PyResult<u32> {
    let buf = pyo3::buffer::PyBuffer::<u8>::get(data)?;
    if !buf.is_c_contiguous() {
        return Err(PyValueError::new_err("crc32c needs a contiguous buffer"));
    }
    // SAFETY: the buffer is C-contiguous, of `len_bytes()` bytes from `buf_ptr()`, and stays
    // exported (so alive and unmoved) while `buf` lives; nothing writes to it during the call,
    // which holds the GIL.
    let bytes = unsafe { std::slice::from_raw_parts(buf.buf_ptr() as *const u8, buf.len_bytes()) };
    Ok(::crc32c::crc32c(bytes))
}

/// The crate's version, for `metashell --version`.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    std::panic::set_hook(Box::new(|_| {}));
    rt::init_keys(m.py(), &generated::KEY_NAMES)?;
    replay::init(m.py())?;
    m.add_function(wrap_pyfunction!(replay_run, m)?)?;
    m.add_function(wrap_pyfunction!(apply_log_batches, m)?)?;
    m.add_class::<replay::ReplayCache>()?;
    m.add_class::<replay::deferred::Pending>()?;
    m.add_class::<replay::journal::ChangeRun>()?;
    m.add_function(wrap_pyfunction!(partition_attributes, m)?)?;
    m.add_function(wrap_pyfunction!(decode_entries, m)?)?;
    m.add_function(wrap_pyfunction!(check_entries, m)?)?;
    m.add_function(wrap_pyfunction!(decode_value, m)?)?;
    m.add_function(wrap_pyfunction!(decode_raw_fields, m)?)?;
    m.add_function(wrap_pyfunction!(kafka_json_text, m)?)?;
    m.add_function(wrap_pyfunction!(add_record_rows, m)?)?;
    m.add_function(wrap_pyfunction!(add_record_batches, m)?)?;
    m.add_class::<records_table::RecordColumns>()?;
    m.add_class::<spark::buffer::Buffer>()?;
    m.add_class::<records_table::RecordRules>()?;
    m.add_function(wrap_pyfunction!(decode_control_value, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(crc32c_of, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("RecordDecodeError", m.py().get_type::<RecordDecodeError>())?;
    Ok(())
}
