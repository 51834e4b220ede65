//! The native engine's batch loop over a log segment's plain batches: framing, CRC32C, the
//! records area and the replay of its records, with no Python object per batch.
//!
//! A directory's log tail is hundreds of thousands of small batches (one to a few records each);
//! walking each through the Python scanner, reader and loader costs about 20 us a batch. Here a
//! run of *plain* batches is applied in one call, exactly as that walk applies them, and the first
//! batch that is anything else ends the run: Python reads it (and says what is wrong with it, or
//! what it warns about), then calls again. Plain means what the Python path handles without a
//! branch: a whole, uncompressed, CreateTime, non-control batch of at most `max_records` records,
//! with a good CRC, a records area that decodes with the KRaft invariants kept (no keys, no empty
//! values, no timestamp deltas, no headers), offsets that continue the log exactly (base offset
//! the next expected one, the last below the segment's bound, lastOffsetDelta = count - 1).
//!
//! Each batch's records are applied as `NativeReplay._replay_entries_native` applies them (runs of
//! the rules in `replay.rs`, every other record through the replayer's own Python method), then its
//! provenance is published by the replayer's `end_batch` and the time-travel journal marked, and
//! its index row kept (returned as columns). `tests/test_native_differential.py` holds directory
//! loads equal on both engines: tree, warnings, index and every point in time.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::entries;
use crate::replay::Ctx;

pub const HEADER: usize = 61;
const LOG_OVERHEAD: i64 = 12;

fn be<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[at..at + N]);
    a
}

/// The fields of a batch header that the loop reads.
pub struct Header {
    pub base: i64,
    pub size: i64,
    pub epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_delta: i32,
    pub base_ts: i64,
    pub max_ts: i64,
    pub count: i32,
}

/// The header of the batch whose first `HEADER` bytes are `h`.
pub fn header(h: &[u8]) -> Header {
    Header {
        base: i64::from_be_bytes(be(h, 0)),
        size: i32::from_be_bytes(be(h, 8)) as i64 + LOG_OVERHEAD,
        epoch: i32::from_be_bytes(be(h, 12)),
        magic: h[16] as i8,
        crc: u32::from_be_bytes(be(h, 17)),
        attributes: i16::from_be_bytes(be(h, 21)),
        last_delta: i32::from_be_bytes(be(h, 23)),
        base_ts: i64::from_be_bytes(be(h, 27)),
        max_ts: i64::from_be_bytes(be(h, 35)),
        count: i32::from_be_bytes(be(h, 57)),
    }
}

/// Where the log stands and what bounds a batch: the reader's state for this segment.
pub struct Cursor {
    pub next_offset: i64,
    pub high: i64,
    pub max_records: i64,
    pub verify_crc: bool,
    pub max_batches: usize,
    /// Log batches: offsets must continue the log, and each batch is published (`end_batch`, the
    /// journal's mark). Else a snapshot's: no offset rule but lastOffsetDelta = count - 1, and each
    /// batch only counted, as `apply_batch(publish=False)` does.
    pub log: bool,
}

/// What a call did: where it stopped, and one index row per batch applied.
#[derive(Default)]
pub struct Done {
    pub pos: usize,
    pub records: u64,
    pub position: Vec<i64>,
    pub base: Vec<i64>,
    pub last: Vec<i64>,
    pub epoch: Vec<i32>,
    pub time: Vec<i64>,
    pub count: Vec<i32>,
}

/// The Python methods a batch calls: the replayer's record fallback and `end_batch` (None for a
/// snapshot's batches), and the timeline's `mark` (None without a journal).
pub struct Hooks<'py> {
    pub one_record: Bound<'py, PyAny>,
    pub end_batch: Option<Bound<'py, PyAny>>,
    pub mark: Option<Bound<'py, PyAny>>,
    pub provenance: Bound<'py, PyAny>,
}

/// A plain batch's records: (offset, value span) each.
type Framed = Vec<(i64, entries::Span)>;

/// Whether the batch at `pos` is plain (module docstring); its records when it is.
fn plain(buf: &[u8], pos: usize, end: usize, cur: &Cursor) -> PyResult<Option<(Header, Framed)>> {
    if end - pos < HEADER {
        return Ok(None);
    }
    let h = header(&buf[pos..pos + HEADER]);
    let last = h.base as i128 + h.last_delta as i128;
    let plain = h.size >= HEADER as i64
        && h.size <= (end - pos) as i64
        && h.magic == 2
        && h.attributes & 0x2F == 0
        && 0 <= h.count as i64
        && h.count as i64 <= cur.max_records
        && (!cur.log || (h.base == cur.next_offset && last < cur.high as i128))
        && last - h.base as i128 == h.count as i128 - 1
        && last < i64::MAX as i128; // the last offset, and the next, fit in 64 bits (else Python says what is wrong)
    if !plain {
        return Ok(None);
    }
    let stop = pos + h.size as usize;
    if cur.verify_crc && ::crc32c::crc32c(&buf[pos + 21..stop]) != h.crc {
        return Ok(None);
    }
    match entries::frame(buf, pos + HEADER, stop, h.count as usize, h.base, h.base_ts) {
        Ok((records, [0, 0, 0, 0])) => Ok(Some((h, records))),
        Ok(_) | Err(entries::Failure::Fault(_)) => Ok(None),
        Err(entries::Failure::Python(e)) => Err(e),
    }
}

/// `_replay_entries_native` over one batch's records (Python's objects made only for a record the
/// rules here leave to Python).
fn replay<'py>(
    py: Python<'py>,
    ctx: &Ctx<'py>,
    hooks: &Hooks<'py>,
    txn: &Bound<'py, PyString>,
    buf: &[u8],
    records: &Framed,
) -> PyResult<()> {
    let replayer = ctx.replayer();
    let n = records.len();
    let mut i = 0;
    while i < n {
        if replayer.getattr(txn)?.is_none() {
            i = ctx.run_framed(buf, records, i)?;
            if i >= n {
                break;
            }
        }
        let (offset, value) = records[i];
        let value = match value {
            None => py.None().into_bound(py),
            Some(span) => crate::rt::bytes_obj(py, entries::span_bytes(buf, span))?,
        };
        hooks.one_record.call1((offset, value))?;
        i += 1;
    }
    Ok(())
}

/// Apply the plain batches of `buf[pos..end]` (at most `cur.max_batches`); `base` is the file
/// position of `buf[0]`. Returns what was done, and the error that stopped it, if one did (the
/// batches before it were applied whole, and their rows are in `Done`).
pub fn apply<'py>(
    py: Python<'py>,
    buf: &[u8],
    pos: usize,
    end: usize,
    base: i64,
    cur: &mut Cursor,
    ctx: &Ctx<'py>,
    hooks: &Hooks<'py>,
) -> (Done, Option<PyErr>) {
    let mut done = Done { pos, ..Done::default() };
    let names = (pyo3::intern!(py, "_txn"), pyo3::intern!(py, "records"), pyo3::intern!(py, "in_transaction"));
    let batches = pyo3::intern!(py, "batches");
    let result: PyResult<()> = (|| {
        while done.position.len() < cur.max_batches && done.pos < end {
            let at = done.pos;
            let Some((h, records)) = plain(buf, at, end, cur)? else {
                break;
            };
            let last = h.base + h.last_delta as i64;
            replay(py, ctx, hooks, names.0, buf, &records)?;
            let p = &hooks.provenance;
            p.setattr(names.1, p.getattr(names.1)?.add(h.count as i64)?)?;
            match &hooks.end_batch {
                Some(end_batch) => {
                    end_batch.call1((last, h.epoch, h.max_ts))?;
                }
                None => p.setattr(batches, p.getattr(batches)?.add(1)?)?,
            }
            if let Some(mark) = &hooks.mark {
                let open = ctx.replayer().getattr(names.2)?;
                mark.call1((last, open))?;
            }
            done.position.push(base + at as i64);
            done.base.push(h.base);
            done.last.push(last);
            done.epoch.push(h.epoch);
            done.time.push(h.max_ts);
            done.count.push(h.count);
            done.records += h.count as u64;
            done.pos = at + h.size as usize;
            cur.next_offset = last + 1;
        }
        Ok(())
    })();
    (done, result.err())
}

/// A column as the native-endian bytes `array.frombytes` takes.
pub fn column<'py, T: Copy>(py: Python<'py>, values: &[T], to_ne: impl Fn(T) -> Vec<u8>) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = Vec::with_capacity(values.len() * std::mem::size_of::<T>());
    for v in values {
        out.extend_from_slice(&to_ne(*v));
    }
    let obj = crate::rt::bytes_obj(py, &out)?;
    Ok(obj.cast_into::<PyBytes>()?)
}
