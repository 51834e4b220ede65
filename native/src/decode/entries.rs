//! The records area of a v2 batch into `(offset, timestamp, key, value)` tuples: the native twin of
//! `metashell.log.records.decode_entries_python`, with the same results, counters and error messages (the
//! differential tests hold them equal).
//!
//! Reads are bounded by the whole buffer, not by the batch's end, as the Python decoder's are: a
//! record that reads into the next batch is caught by its length check, and one that reads past the
//! buffer "runs past the end of the batch".

use pyo3::prelude::*;

use crate::rt;

/// Why a record was refused: (message, position of the record in the buffer, record index).
pub struct RecordFault(pub String, pub usize, pub usize);

/// Why reading a record stopped: the buffer ended inside it (Python's `IndexError`), the bytes are
/// not a record (Python's `Malformed`, or a length that does not add up), or Python failed to make an
/// object (out of memory).
enum Stop {
    Past,
    Malformed(String),
    Python(PyErr),
}

impl From<PyErr> for Stop {
    fn from(e: PyErr) -> Self {
        Stop::Python(e)
    }
}

type S<T> = Result<T, Stop>;

#[inline]
fn at(d: &[u8], p: usize) -> S<u8> {
    d.get(p).copied().ok_or(Stop::Past)
}

/// `_read_leb128`: the varint reader of `rt`, with Python's messages.
fn leb128(d: &[u8], p: &mut usize, max: usize, what: &str) -> S<u128> {
    rt::leb128(d, p, max).map_err(|e| match e {
        rt::Leb::Past => Stop::Past,
        rt::Leb::TooLong => Stop::Malformed(format!("{what} is longer than {max} bytes")),
    })
}

/// `read_varint`: zigzag of the low 32 bits.
fn varint(d: &[u8], p: &mut usize) -> S<i64> {
    Ok(rt::zigzag32(leb128(d, p, 5, "varint")?))
}

/// `read_varlong`: zigzag of the low 64 bits.
fn varlong(d: &[u8], p: &mut usize) -> S<i128> {
    Ok(rt::zigzag64(leb128(d, p, 10, "varlong")?))
}

/// Python's `data[a:a+n]`: clamped to the buffer (a slice never raises).
fn slice(d: &[u8], a: usize, n: i64) -> &[u8] {
    let a = a.min(d.len());
    let b = a.saturating_add(n.max(0) as usize).min(d.len());
    &d[a..b]
}

/// `read_headers`: only checked (KRaft writes none; `decode_entries` does not return them).
fn skip_headers(d: &[u8], p: &mut usize) -> S<()> {
    let hc = varint(d, p)?;
    if hc < 0 {
        return Err(Stop::Malformed(format!("negative header count {hc}")));
    }
    for _ in 0..hc {
        let kl = varint(d, p)?;
        if kl < 0 {
            return Err(Stop::Malformed(format!("negative header key size {kl}")));
        }
        let raw = slice(d, *p, kl);
        if raw.len() != kl as usize {
            return Err(Stop::Past);
        }
        *p += kl as usize;
        if std::str::from_utf8(raw).is_err() {
            return Err(Stop::Malformed("header key is not valid UTF-8".into()));
        }
        let vl = varint(d, p)?;
        if vl >= 0 {
            *p += vl as usize;
        }
    }
    Ok(())
}

const SAFE_BASE: i64 = 1 << 62;

/// Why decoding stopped: a record fault, or Python failing to make an object (out of memory).
pub enum Failure {
    Fault(RecordFault),
    Python(PyErr),
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Python(e)
    }
}

fn part<'py>(py: Python<'py>, d: &[u8], a: usize, n: i64) -> PyResult<Bound<'py, PyAny>> {
    rt::bytes_obj(py, slice(d, a, n))
}

/// Where a record's key or value lies: (position in the buffer, length), None when null.
pub type Span = Option<(usize, i64)>;

/// Decode `count` records of `d[pos..end]` into a list of `(offset, timestamp, key, value)` tuples
/// and the four counters.  Objects are made as records are read (no copy of the batch is kept);
/// an offset or timestamp outside 64 bits is reported after the whole area reads, as Python checks
/// it then.
pub fn decode<'py>(
    py: Python<'py>,
    d: &[u8],
    pos: usize,
    end: usize,
    count: usize,
    base_offset: i64,
    base_ts: i64,
) -> Result<(Bound<'py, PyAny>, [u64; 4]), Failure> {
    let out = rt::empty_list(py)?;
    let none = py.None();
    let stats = walk(d, pos, end, count, base_offset, base_ts, |offset, ts, key, value| {
        let span = |s: Span| match s {
            None => Ok(none.bind(py).clone()),
            Some((a, n)) => part(py, d, a, n),
        };
        let item = rt::tuple(py, [rt::int(py, offset)?, rt::int(py, ts)?, span(key)?, span(value)?])?;
        rt::append(&out, item)
    })?;
    Ok((out, stats))
}

/// A record framed in a batch: its offset, its timestamp and where its value lies.
pub type Frame = (i64, i64, Span);

/// The records of `d[pos..end]` as `Frame`s, with the counters: what `decode` reads, accepted and
/// refused alike, with no Python object made (the native batch loop's records, the Spark `records`
/// table's rows).
pub fn frame(
    d: &[u8],
    pos: usize,
    end: usize,
    count: usize,
    base_offset: i64,
    base_ts: i64,
) -> Result<(Vec<Frame>, [u64; 4]), Failure> {
    // memory asked for first: a failed allocation in Rust aborts the process (found under a memory
    // limit: "memory allocation of 2789440 bytes failed"); a MemoryError names the file and batch
    let no_memory = rt::no_memory;
    let mut out = Vec::new();
    out.try_reserve_exact(count.min(end.saturating_sub(pos))).map_err(no_memory)?;
    let stats = walk(d, pos, end, count, base_offset, base_ts, |offset, ts, _key, value| {
        out.try_reserve(1).map_err(no_memory)?;
        out.push((offset, ts, value));
        Ok(())
    })?;
    Ok((out, stats))
}

/// The counters of the records of `d[pos..end]`, or why they do not read: `frame`'s checks with
/// nothing kept (a fetched snapshot is checked whole before it is applied, then read again by the
/// bulk path, batch by batch).
pub fn check(
    d: &[u8],
    pos: usize,
    end: usize,
    count: usize,
    base_offset: i64,
    base_ts: i64,
) -> Result<[u64; 4], Failure> {
    walk(d, pos, end, count, base_offset, base_ts, |_offset, _ts, _key, _value| Ok(()))
}

/// A value span's bytes: `data[a:a+n]` clamped as Python slices it (the empty value for a null one
/// is never asked for: callers check for None first).
pub fn span_bytes(d: &[u8], s: (usize, i64)) -> &[u8] {
    slice(d, s.0, s.1)
}

/// Walk `count` records of `d[pos..end]`, calling `record(offset, timestamp, key, value)` for each
/// (until an offset or timestamp outside 64 bits is met, which is reported once the whole area has
/// been read), and return the four counters; the one reader of a records area (`decode_entries_python`'s
/// rules and messages).
fn walk(
    d: &[u8],
    pos: usize,
    end: usize,
    count: usize,
    base_offset: i64,
    base_ts: i64,
    mut record: impl FnMut(i64, i64, Span, Span) -> PyResult<()>,
) -> Result<[u64; 4], Failure> {
    let (mut keys, mut bad_values, mut ts_deltas, mut with_headers) = (0u64, 0u64, 0u64, 0u64);
    let first = pos;
    let mut pos = pos;
    let mut out_of_range: Option<RecordFault> = None;
    for i in 0..count {
        let r: S<()> = (|| {
            let mut p = pos;
            let ln = varint(d, &mut p)?;
            let rec_end = p as i128 + ln as i128;
            if rec_end > end as i128 {
                return Err(Stop::Malformed(format!("record length {ln} does not fit in the batch")));
            }
            p += 1; // attributes
            if at(d, p)? != 0 {
                ts_deltas += 1; // counted on the first byte, as the Python decoder does
            }
            let tsd = varlong(d, &mut p)?;
            let od = varint(d, &mut p)?;
            let kl = varint(d, &mut p)?;
            let key = if kl >= 0 {
                keys += 1;
                let k = (p, kl);
                p += kl as usize;
                Some(k)
            } else {
                None
            };
            let vl = varint(d, &mut p)?;
            let value = if vl > 0 {
                let v = (p, vl);
                p += vl as usize;
                Some(v)
            } else {
                bad_values += 1;
                if vl < 0 {
                    None
                } else {
                    Some((p, 0))
                }
            };
            if at(d, p)? == 0 {
                p += 1;
            } else {
                skip_headers(d, &mut p)?;
                with_headers += 1;
            }
            if p as i128 != rec_end {
                let content = p as i128 - rec_end + ln as i128;
                return Err(Stop::Malformed(format!(
                    "record length {ln} does not match its content ({content} bytes)"
                )));
            }
            let offset = base_offset as i128 + od as i128;
            let ts = base_ts as i128 + tsd;
            let range = i64::MIN as i128..=i64::MAX as i128;
            if out_of_range.is_none() {
                if !range.contains(&offset) {
                    out_of_range = Some(RecordFault(format!("offset {offset} is outside the 64-bit range"), first, i));
                } else if !range.contains(&ts) {
                    out_of_range = Some(RecordFault(format!("timestamp {ts} is outside the 64-bit range"), first, i));
                }
            }
            pos = rec_end as usize;
            if out_of_range.is_some() {
                return Ok(()); // reported once the area has been read; nothing to build
            }
            record(offset as i64, ts as i64, key, value)?;
            Ok(())
        })();
        match r {
            Ok(()) => {}
            Err(Stop::Past) => {
                return Err(Failure::Fault(RecordFault("record runs past the end of the batch".into(), pos, i)))
            }
            Err(Stop::Malformed(m)) => return Err(Failure::Fault(RecordFault(m, pos, i))),
            Err(Stop::Python(e)) => return Err(Failure::Python(e)),
        }
    }
    if pos != end {
        let left = end as i128 - pos as i128;
        return Err(Failure::Fault(RecordFault(
            format!("{left} bytes left after the last of {count} records"),
            pos,
            count,
        )));
    }
    if let Some(fault) = out_of_range {
        if ts_deltas > 0 || !(-SAFE_BASE < base_offset && base_offset < SAFE_BASE) {
            return Err(Failure::Fault(fault));
        }
    }
    Ok([keys, bad_values, ts_deltas, with_headers])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `data[a:a+n]` never fails: clamped at the end, empty for a negative length.
    #[test]
    fn slices_are_clamped_as_python_slices() {
        let d = [1u8, 2, 3, 4];
        assert_eq!(slice(&d, 1, 2), &[2, 3]);
        assert_eq!(slice(&d, 3, 10), &[4]);
        assert_eq!(slice(&d, 9, 1), &[] as &[u8]);
        assert_eq!(slice(&d, 0, -1), &[] as &[u8]);
        assert_eq!(slice(&d, 1, i64::MAX), &[2, 3, 4]);
    }
}
