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
//! provenance is published as the replayer's `end_batch` publishes it (kept here for the call and
//! written back at its end) and its time-travel journal mark and index row kept (both returned as
//! columns). `tests/test_native_differential.py` holds directory
//! loads equal on both engines: tree, warnings, index and every point in time.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use crate::decode::entries;
use crate::load::file_deltas::FileDeltas;
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
    /// Log batches: each is published (as `end_batch` does) and marked in the journal. Else a
    /// snapshot's: each only counted, as `apply_batch(publish=False)` does. Either way a batch's
    /// offsets continue the ones before it and lastOffsetDelta = count - 1.
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

/// What a batch touches in Python: the replayer's record fallback, the image's provenance, the
/// time-travel journal's entries (None without a journal), and for a `--snapshot` file the deltas
/// it keeps (`FileDeltas`, `image/file_deltas.py`; `file_deltas.rs`; None otherwise).
pub struct Hooks<'py> {
    pub one_record: Bound<'py, PyAny>,
    pub provenance: Bound<'py, PyAny>,
    pub journal: Option<Bound<'py, PyList>>,
    pub file: Option<Bound<'py, PyAny>>,
}

/// The image's provenance counters while a call runs: read from Python once at its start and
/// written back once at its end, so that a batch costs no attribute access (nothing a batch's
/// records run in Python reads them: only `end_batch` and `finish_snapshot` do).
struct Prov<'py> {
    offset: Bound<'py, PyAny>,
    epoch: Bound<'py, PyAny>,
    timestamp: Bound<'py, PyAny>,
    records: i64,
    batches: i64,
    /// Whether `offset`, `epoch`, `timestamp` were published by a batch of this call (ints).
    published: Option<(i64, i64, i64)>,
}

const PROV: [&str; 5] = ["offset", "epoch", "timestamp", "records", "batches"];

impl<'py> Prov<'py> {
    fn read(p: &Bound<'py, PyAny>) -> PyResult<Self> {
        Ok(Prov {
            offset: p.getattr(PROV[0])?,
            epoch: p.getattr(PROV[1])?,
            timestamp: p.getattr(PROV[2])?,
            records: p.getattr(PROV[3])?.extract()?,
            batches: p.getattr(PROV[4])?.extract()?,
            published: None,
        })
    }

    fn write(&self, p: &Bound<'py, PyAny>) -> PyResult<()> {
        if let Some((offset, epoch, timestamp)) = self.published {
            p.setattr(PROV[0], offset)?;
            p.setattr(PROV[1], epoch)?;
            p.setattr(PROV[2], timestamp)?;
        }
        p.setattr(PROV[3], self.records)?;
        p.setattr(PROV[4], self.batches)
    }

    /// The (offset, epoch, timestamp) a journal mark keeps: the published ones, else the ones the
    /// call started with (None: Python's -1 would be wrong; the caller then marks in Python).
    fn current(&self) -> PyResult<(i64, i64, i64)> {
        match self.published {
            Some(t) => Ok(t),
            None => Ok((self.offset.extract()?, self.epoch.extract()?, self.timestamp.extract()?)),
        }
    }
}

/// The journal's marks of the batches a call applied (`Timeline.mark`'s arrays, as columns).
#[derive(Default)]
pub struct Marks {
    pub last: Vec<i64>,
    pub length: Vec<i64>,
    pub prov: Vec<i64>,
    pub txn_open: Vec<u8>,
}

/// A plain batch's records.
type Framed = Vec<entries::Frame>;

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
        && h.base == cur.next_offset // a log's, or a snapshot's (contiguous from 0)
        && last < cur.high as i128
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
        let (offset, _ts, value) = records[i];
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
#[allow(clippy::too_many_arguments)] // apply_log_batches' arguments, passed through as Python gave them
pub fn apply<'py>(
    py: Python<'py>,
    buf: &[u8],
    pos: usize,
    end: usize,
    base: i64,
    cur: &mut Cursor,
    ctx: &Ctx<'py>,
    hooks: &Hooks<'py>,
) -> (Done, Marks, Option<PyErr>) {
    let mut done = Done { pos, ..Done::default() };
    let mut marks = Marks::default();
    let txn = pyo3::intern!(py, "_txn");
    let mut prov = match Prov::read(&hooks.provenance) {
        Ok(p) => p,
        Err(e) => return (done, marks, Some(e)),
    };
    let file_deltas = |loader| FileDeltas::read(loader, ctx.image_parts()?.orphans.clone());
    let mut file = match hooks.file.clone().map(file_deltas).transpose() {
        Ok(f) => f,
        Err(e) => return (done, marks, Some(e)),
    };
    let result: PyResult<()> = (|| {
        while done.position.len() < cur.max_batches && done.pos < end {
            let at = done.pos;
            let Some((h, records)) = plain(buf, at, end, cur)? else {
                break;
            };
            if let Some(f) = &mut file {
                if !f.begin(h.base)? {
                    break;
                }
            }
            let last = h.base + h.last_delta as i64;
            replay(py, ctx, hooks, txn, buf, &records)?;
            // `ImageLoader.apply_batch`: the records counted, then for a log batch `end_batch`
            // (published unless a metadata transaction is open) and the journal's mark.
            prov.records += h.count as i64;
            prov.batches += 1;
            if cur.log {
                let open = !ctx.replayer().getattr(txn)?.is_none();
                if !open {
                    prov.published = Some((last, h.epoch as i64, h.max_ts));
                }
                if let Some(f) = &mut file {
                    f.end(last, !open)?;
                }
                if let Some(journal) = &hooks.journal {
                    ctx.seal()?;
                    let (offset, epoch, timestamp) = prov.current()?;
                    marks.last.push(last);
                    marks.length.push(journal.len() as i64);
                    marks.prov.extend_from_slice(&[offset, epoch, timestamp, prov.records, prov.batches]);
                    marks.txn_open.push(open as u8);
                }
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
    let written = prov.write(&hooks.provenance).and_then(|()| file.as_ref().map_or(Ok(()), FileDeltas::write));
    (done, marks, result.err().or(written.err()))
}

/// A fixed-size int as its native-endian bytes, appended without an allocation of its own.
pub trait NeBytes: Copy {
    fn put(self, out: &mut Vec<u8>);
}

impl NeBytes for i64 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_ne_bytes());
    }
}

impl NeBytes for i32 {
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_ne_bytes());
    }
}

/// A column as the native-endian bytes `array.frombytes` takes (and Arrow lays out in memory).
pub fn column<'py, T: NeBytes>(py: Python<'py>, values: &[T]) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(values));
    for v in values {
        v.put(&mut out);
    }
    let obj = crate::rt::bytes_obj(py, &out)?;
    Ok(obj.cast_into::<PyBytes>()?)
}
