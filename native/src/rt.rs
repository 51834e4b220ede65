//! What the generated decoders (`generated.rs`) call: Kafka's wire primitives, read from a byte
//! slice into Python objects, exactly as the Python decoders of `metashell/protocol/codegen.py`
//! build them in their replay variant (int and uuid arrays as tuples, other arrays as lists,
//! structs as dicts).
//!
//! Every reader is bounded by the slice: nothing here indexes without a check, allocates more than
//! the bytes left can hold, or panics. Any malformation is a [`Miss`]: the caller then hands the
//! record to the Python decoder, which says what is wrong. So the native path only has to agree with
//! the Python one on the records both accept, and to refuse every record Python refuses.

use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::OnceLock;

use pyo3::types::{PyBool, PyDict, PyString};

/// The record is not one the fast path takes (malformed, or Python failed to build an object).
pub struct Miss;

impl From<PyErr> for Miss {
    fn from(_: PyErr) -> Self {
        Miss
    }
}

pub type R<T> = Result<T, Miss>;
pub type Obj<'py> = Bound<'py, PyAny>;

/// A fixed-size field type (`codegen_support.FIXED`).  The runtime reads every type the schema
/// language has, including those no bundled metadata schema uses today (a new schema only needs
/// `scripts/gen_native.py`).
#[allow(dead_code)]
#[derive(Clone, Copy)]
pub enum Fx {
    Bool,
    I8,
    I16,
    U16,
    I32,
    U32,
    I64,
    F64,
    Uuid,
}

impl Fx {
    pub const fn size(self) -> usize {
        match self {
            Fx::Bool | Fx::I8 => 1,
            Fx::I16 | Fx::U16 => 2,
            Fx::I32 | Fx::U32 => 4,
            Fx::I64 | Fx::F64 => 8,
            Fx::Uuid => 16,
        }
    }
}

#[inline]
pub fn take<'a>(b: &'a [u8], p: &mut usize, n: usize) -> R<&'a [u8]> {
    let end = p.checked_add(n).ok_or(Miss)?;
    let s = b.get(*p..end).ok_or(Miss)?;
    *p = end;
    Ok(s)
}

/// `N` bytes, as an array.
#[inline]
pub fn arr<const N: usize>(b: &[u8], p: &mut usize) -> R<[u8; N]> {
    let s = take(b, p, N)?;
    let mut a = [0u8; N];
    a.copy_from_slice(s);
    Ok(a)
}

#[inline]
pub fn byte(b: &[u8], p: usize) -> R<u8> {
    b.get(p).copied().ok_or(Miss)
}

#[inline]
pub fn rd_i16(b: &[u8], p: &mut usize) -> R<i64> {
    Ok(i16::from_be_bytes(arr(b, p)?) as i64)
}

#[inline]
pub fn rd_i32(b: &[u8], p: &mut usize) -> R<i64> {
    Ok(i32::from_be_bytes(arr(b, p)?) as i64)
}

/// Why a varint could not be read: the buffer ended inside it, or it ran past its byte limit.
pub enum Leb {
    Past,
    TooLong,
}

/// Kafka's LEB128 framing, at most `max` bytes: the one varint reader of the native core, as
/// `protocol/wire.py` is of the Python engine (up to 70 bits for a 10-byte varlong; callers mask).
#[inline]
pub fn leb128(b: &[u8], p: &mut usize, max: usize) -> Result<u128, Leb> {
    let mut value = 0u128;
    let mut shift = 0u32;
    for _ in 0..max {
        let x = *b.get(*p).ok_or(Leb::Past)?;
        *p += 1;
        value |= ((x & 0x7F) as u128) << shift;
        if x < 0x80 {
            return Ok(value);
        }
        shift += 7;
    }
    Err(Leb::TooLong)
}

/// Kafka's zigzag decoding of a varint's low 32 bits (`read_varint`).
#[inline]
pub fn zigzag32(raw: u128) -> i64 {
    let u = (raw & 0xFFFF_FFFF) as u64;
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Kafka's zigzag decoding of a varlong's low 64 bits (`read_varlong`).
#[inline]
pub fn zigzag64(raw: u128) -> i128 {
    let u = (raw & 0xFFFF_FFFF_FFFF_FFFF) as u64;
    (u >> 1) as i128 ^ -((u & 1) as i128)
}

/// `read_uvarint`: at most 5 bytes (so up to 35 bits, as the Python reader keeps them).
#[inline]
pub fn uvarint(b: &[u8], p: &mut usize) -> R<u64> {
    leb128(b, p, 5).map(|v| v as u64).map_err(|_| Miss)
}

/// The length (or count) of a string, bytes or array field: a compact uvarint minus one in flexible
/// versions, else an int16 (strings) or int32. Negative means null.
#[inline]
pub fn length(b: &[u8], p: &mut usize, flex: bool, short: bool) -> R<i64> {
    if flex {
        Ok(uvarint(b, p)? as i64 - 1)
    } else if short {
        rd_i16(b, p)
    } else {
        rd_i32(b, p)
    }
}

/// The MemoryError for a failed reservation (`try_reserve`): memory is always asked for first, as a
/// failed allocation in Rust aborts the process, and a MemoryError is reported as one line naming
/// the file and the byte offset.
pub fn no_memory<E>(_: E) -> PyErr {
    pyo3::exceptions::PyMemoryError::new_err(())
}

/// A new reference from the C API, or the Python exception it set (a MemoryError, when memory runs
/// out). Every object is made through here: PyO3's infallible constructors panic on NULL, and a
/// panic is not how metashell reports a full memory.
#[inline]
pub fn own<'py>(py: Python<'py>, ptr: *mut ffi::PyObject) -> PyResult<Obj<'py>> {
    // SAFETY: every caller passes the result of a C API call that returns a new reference, or NULL
    // with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, ptr) }
}

#[inline]
pub fn int<'py>(py: Python<'py>, v: i64) -> PyResult<Obj<'py>> {
    // SAFETY: PyLong_FromLongLong returns a new reference or NULL.
    own(py, unsafe { ffi::PyLong_FromLongLong(v) })
}

#[inline]
pub fn none(py: Python<'_>) -> Obj<'_> {
    py.None().into_bound(py)
}

#[inline]
pub fn boolean(py: Python<'_>, v: bool) -> Obj<'_> {
    PyBool::new(py, v).to_owned().into_any()
}

pub fn float(py: Python<'_>, v: f64) -> PyResult<Obj<'_>> {
    // SAFETY: as `int`.
    own(py, unsafe { ffi::PyFloat_FromDouble(v) })
}

pub fn bytes_obj<'py>(py: Python<'py>, s: &[u8]) -> PyResult<Obj<'py>> {
    // SAFETY: the pointer and length describe `s`, which the call copies.
    own(py, unsafe { ffi::PyBytes_FromStringAndSize(s.as_ptr().cast(), s.len() as ffi::Py_ssize_t) })
}

pub fn str_obj<'py>(py: Python<'py>, s: &str) -> PyResult<Obj<'py>> {
    // SAFETY: `s` is valid UTF-8; the call copies it.
    own(py, unsafe { ffi::PyUnicode_FromStringAndSize(s.as_ptr().cast(), s.len() as ffi::Py_ssize_t) })
}

pub fn empty_tuple(py: Python<'_>) -> PyResult<Obj<'_>> {
    // SAFETY: as `int` (CPython returns its shared empty tuple).
    own(py, unsafe { ffi::PyTuple_New(0) })
}

pub fn empty_list(py: Python<'_>) -> PyResult<Obj<'_>> {
    // SAFETY: as `int`.
    own(py, unsafe { ffi::PyList_New(0) })
}

pub fn new_dict(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    // SAFETY: PyDict_New returns a new dict or NULL, so the cast holds.
    Ok(unsafe { own(py, ffi::PyDict_New())?.cast_into_unchecked::<PyDict>() })
}

/// Append to a list made by `empty_list`.
#[inline]
pub fn append(list: &Obj<'_>, item: Obj<'_>) -> PyResult<()> {
    // SAFETY: `list` is a list (made by `empty_list`); PyList_Append does not steal `item`.
    if unsafe { ffi::PyList_Append(list.as_ptr(), item.as_ptr()) } < 0 {
        return Err(PyErr::fetch(list.py()));
    }
    Ok(())
}

/// A tuple of `n` items, each made by `item(i)`; a failing item leaves the rest empty, which
/// CPython's tuple deallocation allows.
pub fn tuple_with<'py, E: From<PyErr>>(
    py: Python<'py>,
    n: usize,
    mut item: impl FnMut(usize) -> Result<Obj<'py>, E>,
) -> Result<Obj<'py>, E> {
    // SAFETY: as `int`.
    let t = own(py, unsafe { ffi::PyTuple_New(n as ffi::Py_ssize_t) })?;
    for i in 0..n {
        let x = item(i)?;
        // SAFETY: `t` is a new tuple of `n` slots that nobody else has seen yet; SET_ITEM steals
        // the reference `into_ptr` hands over.
        unsafe { set_new_tuple_item(t.as_ptr(), i, x.into_ptr()) };
    }
    Ok(t)
}

/// Fill slot `i` of a new tuple, stealing `x`: CPython's macro where the full API is there, the
/// stable ABI's function (which checks, and cannot fail on a new tuple's own slot) in an abi3 build.
///
/// # Safety
/// `t` is a new tuple nobody else has seen, `i` one of its slots, `x` a new reference.
unsafe fn set_new_tuple_item(t: *mut ffi::PyObject, i: usize, x: *mut ffi::PyObject) {
    #[cfg(not(Py_LIMITED_API))]
    ffi::PyTuple_SET_ITEM(t, i as ffi::Py_ssize_t, x);
    #[cfg(Py_LIMITED_API)]
    ffi::PyTuple_SetItem(t, i as ffi::Py_ssize_t, x);
}

/// Item `i` of a list, borrowed (the macro, or the stable ABI's function in an abi3 build).
///
/// # Safety
/// `l` is a live list and `i` one of its indexes.
pub unsafe fn list_item(l: *mut ffi::PyObject, i: ffi::Py_ssize_t) -> *mut ffi::PyObject {
    #[cfg(not(Py_LIMITED_API))]
    return ffi::PyList_GET_ITEM(l, i);
    #[cfg(Py_LIMITED_API)]
    return ffi::PyList_GetItem(l, i);
}

/// The function a type keeps in `slot` (`Py_tp_descr_get` ...) for the type of `obj`, or null:
/// `PyType_GetSlot`, which the stable ABI has and which serves static types since 3.10.
///
/// # Safety
/// `obj` is live; the caller casts the pointer to the slot's own function type.
pub unsafe fn type_slot(obj: &Bound<'_, PyAny>, slot: std::ffi::c_int) -> *mut std::ffi::c_void {
    ffi::PyType_GetSlot(ffi::Py_TYPE(obj.as_ptr()), slot)
}

/// A tuple of the given items.
pub fn tuple<'py, const N: usize>(py: Python<'py>, items: [Obj<'py>; N]) -> PyResult<Obj<'py>> {
    // SAFETY: as `int`.
    let t = own(py, unsafe { ffi::PyTuple_New(N as ffi::Py_ssize_t) })?;
    for (i, x) in items.into_iter().enumerate() {
        // SAFETY: as in `tuple_with`.
        unsafe { set_new_tuple_item(t.as_ptr(), i, x.into_ptr()) };
    }
    Ok(t)
}

/// The dict keys the generated decoders use, made once when the module is imported (so that no
/// decode has to make one, and nothing fails later for want of memory).
static KEYS: OnceLock<Vec<Py<PyString>>> = OnceLock::new();

pub fn init_keys(py: Python<'_>, names: &[&str]) -> PyResult<()> {
    let mut keys = Vec::with_capacity(names.len());
    for name in names {
        keys.push(str_obj(py, name)?.cast_into::<PyString>()?.unbind());
    }
    let _ = KEYS.set(keys);
    Ok(())
}

/// The interned key number `i` (of `generated::KEY_NAMES`).
#[inline]
pub fn key<'py>(py: Python<'py>, i: usize) -> R<&'py Bound<'py, PyString>> {
    let keys = KEYS.get().ok_or(Miss)?;
    Ok(keys.get(i).ok_or(Miss)?.bind(py))
}

/// Python's `str(raw, 'utf-8', 'replace')`, by Python itself when the bytes are not valid UTF-8, so
/// that the replacement characters come out exactly as the Python decoder's.
pub fn utf8_replace<'py>(py: Python<'py>, raw: &[u8]) -> R<Obj<'py>> {
    if let Ok(s) = std::str::from_utf8(raw) {
        return Ok(str_obj(py, s)?);
    }
    let len = isize::try_from(raw.len()).map_err(|_| Miss)?;
    // SAFETY: the pointer and length describe `raw`, which outlives the call; the errors argument
    // is a NUL-terminated C string; the result is a new reference or NULL with an exception set.
    unsafe {
        let o = ffi::PyUnicode_DecodeUTF8(raw.as_ptr().cast(), len, c"replace".as_ptr());
        Ok(Bound::from_owned_ptr_or_err(py, o)?)
    }
}

/// One fixed-size value.
#[inline]
pub fn fixed<'py>(py: Python<'py>, b: &[u8], p: &mut usize, t: Fx) -> R<Obj<'py>> {
    Ok(match t {
        Fx::Bool => boolean(py, arr::<1>(b, p)?[0] != 0),
        Fx::I8 => int(py, i8::from_be_bytes(arr(b, p)?) as i64)?,
        Fx::I16 => int(py, rd_i16(b, p)?)?,
        Fx::U16 => int(py, u16::from_be_bytes(arr(b, p)?) as i64)?,
        Fx::I32 => int(py, rd_i32(b, p)?)?,
        Fx::U32 => int(py, u32::from_be_bytes(arr(b, p)?) as i64)?,
        Fx::I64 => int(py, i64::from_be_bytes(arr(b, p)?))?,
        Fx::F64 => float(py, f64::from_be_bytes(arr(b, p)?))?,
        Fx::Uuid => bytes_obj(py, take(b, p, 16)?)?,
    })
}

/// A null value: None where the field may be null, else the record is refused.
#[inline]
fn null(py: Python<'_>, nullable: bool) -> R<Obj<'_>> {
    if nullable {
        Ok(none(py))
    } else {
        Err(Miss)
    }
}

/// A string (`compact` in flexible versions), decoded with replacement as the Python decoder does.
pub fn string<'py>(py: Python<'py>, b: &[u8], p: &mut usize, flex: bool, nullable: bool) -> R<Obj<'py>> {
    let n = length(b, p, flex, true)?;
    if n < 0 {
        return null(py, nullable);
    }
    utf8_replace(py, take(b, p, n as usize)?)
}

/// A bytes (or records) field.
pub fn bytes<'py>(py: Python<'py>, b: &[u8], p: &mut usize, flex: bool, nullable: bool) -> R<Obj<'py>> {
    let n = length(b, p, flex, false)?;
    if n < 0 {
        return null(py, nullable);
    }
    Ok(bytes_obj(py, take(b, p, n as usize)?)?)
}

/// An array of ints, floats or uuids: a tuple (the empty tuple when empty).
pub fn num_array<'py>(py: Python<'py>, b: &[u8], p: &mut usize, t: Fx, flex: bool, nullable: bool) -> R<Obj<'py>> {
    let n = length(b, p, flex, false)?;
    if n < 0 {
        return null(py, nullable);
    }
    if n == 0 {
        return Ok(empty_tuple(py)?);
    }
    let n = n as usize;
    let need = n.checked_mul(t.size()).ok_or(Miss)?;
    if need > b.len().saturating_sub(*p) {
        return Err(Miss);
    }
    tuple_with(py, n, |_| fixed(py, b, p, t))
}

/// The element count of a non-numeric array: refused when null but not nullable, or when it is larger
/// than the bytes left (`Some(None)` is a null array).
fn count(b: &[u8], p: &mut usize, flex: bool) -> R<Option<usize>> {
    let n = length(b, p, flex, false)?;
    if n < 0 {
        return Ok(None);
    }
    if n as u64 > b.len().saturating_sub(*p) as u64 {
        return Err(Miss);
    }
    Ok(Some(n as usize))
}

/// An array of booleans: a list.
#[allow(dead_code)] // no bundled metadata schema has one today
pub fn bool_array<'py>(py: Python<'py>, b: &[u8], p: &mut usize, flex: bool, nullable: bool) -> R<Obj<'py>> {
    let Some(n) = count(b, p, flex)? else {
        return null(py, nullable);
    };
    let raw = take(b, p, n)?;
    let out = empty_list(py)?;
    for x in raw {
        append(&out, boolean(py, *x != 0))?;
    }
    Ok(out)
}

/// Reads one item of an array or struct into a Python object (the generated decoders pass one).
pub type ItemReader<'py> = dyn Fn(Python<'py>, &[u8], &mut usize) -> R<Obj<'py>>;

/// An array of strings, bytes or structs: a list of what `item` reads.
pub fn list<'py>(
    py: Python<'py>,
    b: &[u8],
    p: &mut usize,
    flex: bool,
    nullable: bool,
    item: &ItemReader<'py>,
) -> R<Obj<'py>> {
    let Some(n) = count(b, p, flex)? else {
        return null(py, nullable);
    };
    let out = empty_list(py)?;
    for _ in 0..n {
        append(&out, item(py, b, p)?)?;
    }
    Ok(out)
}

/// A nullable struct: a marker byte (255: null; any other value: present) before its fields.
#[allow(dead_code)] // no bundled metadata schema has one today
pub fn nullable_struct<'py>(py: Python<'py>, b: &[u8], p: &mut usize, item: &ItemReader<'py>) -> R<Obj<'py>> {
    if byte(b, *p)? == 255 {
        *p += 1;
        return Ok(none(py));
    }
    *p += 1;
    item(py, b, p)
}

/// The header of a tagged-field section: the number of fields, refused when larger than the bytes
/// left.
pub fn tag_count(b: &[u8], p: &mut usize) -> R<u64> {
    let nt = uvarint(b, p)?;
    if nt > b.len().saturating_sub(*p) as u64 {
        return Err(Miss);
    }
    Ok(nt)
}

/// One tagged field's (tag, end): its value starts at `*p` and the section goes on at `end`.
pub fn tag_header(b: &[u8], p: &mut usize) -> R<(u64, usize)> {
    let tag = uvarint(b, p)?;
    let size = uvarint(b, p)? as usize;
    let end = p.checked_add(size).ok_or(Miss)?;
    if end > b.len() {
        return Err(Miss);
    }
    Ok((tag, end))
}

/// Remember an unknown tagged field's bytes (`_unknown_tags`, created on first use).
pub fn unknown_tag<'py>(py: Python<'py>, unknown: &mut Option<Bound<'py, PyDict>>, tag: u64, raw: &[u8]) -> R<()> {
    if unknown.is_none() {
        *unknown = Some(new_dict(py)?);
    }
    let d = unknown.as_ref().ok_or(Miss)?;
    d.set_item(int(py, tag as i64)?, bytes_obj(py, raw)?)?;
    Ok(())
}

/// A field of a positional record as its bytes say it, with no Python object made: what the replay
/// loop (`replay.rs`) reads to build the image's objects itself, interning arrays by their bytes.
#[derive(Clone, Copy)]
pub enum Raw<'a> {
    /// A null field (a nullable array that is null; an absent tagged field whose default is null).
    Null,
    Int(i64),
    /// 16 bytes.
    Uuid(&'a [u8]),
    /// An array of fixed-size values, as their big-endian bytes (empty: an empty array).
    Array(Fx, &'a [u8]),
}

/// One fixed-size int or uuid, as `fixed` reads it (the generator never asks this for bools or
/// floats, which `Raw` does not hold).
#[inline]
pub fn raw_fixed<'a>(b: &'a [u8], p: &mut usize, t: Fx) -> R<Raw<'a>> {
    Ok(match t {
        Fx::I8 => Raw::Int(i8::from_be_bytes(arr(b, p)?) as i64),
        Fx::I16 => Raw::Int(rd_i16(b, p)?),
        Fx::U16 => Raw::Int(u16::from_be_bytes(arr(b, p)?) as i64),
        Fx::I32 => Raw::Int(rd_i32(b, p)?),
        Fx::U32 => Raw::Int(u32::from_be_bytes(arr(b, p)?) as i64),
        Fx::I64 => Raw::Int(i64::from_be_bytes(arr(b, p)?)),
        Fx::Uuid => Raw::Uuid(take(b, p, 16)?),
        Fx::Bool | Fx::F64 => return Err(Miss),
    })
}

/// An array of ints or uuids, accepted and refused exactly as `num_array` accepts and refuses it.
#[inline]
pub fn raw_num_array<'a>(b: &'a [u8], p: &mut usize, t: Fx, flex: bool, nullable: bool) -> R<Raw<'a>> {
    let n = length(b, p, flex, false)?;
    if n < 0 {
        return if nullable { Ok(Raw::Null) } else { Err(Miss) };
    }
    let need = (n as usize).checked_mul(t.size()).ok_or(Miss)?;
    if need > b.len().saturating_sub(*p) {
        return Err(Miss);
    }
    Ok(Raw::Array(t, take(b, p, need)?))
}

/// The value of an int array's element `i` (`data` holds whole elements of type `t`).
#[inline]
pub fn element(t: Fx, data: &[u8], i: usize) -> i64 {
    let s = t.size();
    let e = &data[i * s..(i + 1) * s];
    match t {
        Fx::I8 => e[0] as i8 as i64,
        Fx::I16 => i16::from_be_bytes([e[0], e[1]]) as i64,
        Fx::U16 => u16::from_be_bytes([e[0], e[1]]) as i64,
        Fx::I32 => i32::from_be_bytes([e[0], e[1], e[2], e[3]]) as i64,
        Fx::U32 => u32::from_be_bytes([e[0], e[1], e[2], e[3]]) as i64,
        _ => i64::from_be_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]),
    }
}

/// A mutex's guard, poisoned or not (the replayer's caches and tables are used as a panic left them).
pub fn unpoisoned<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ask the processor to bring the cache line at `p` in (a hint: any address will do, none faults).
#[inline(always)]
pub fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leb(bytes: &[u8], max: usize) -> (Result<u128, &'static str>, usize) {
        let mut p = 0;
        let r = leb128(bytes, &mut p, max).map_err(|e| match e {
            Leb::Past => "past",
            Leb::TooLong => "too long",
        });
        (r, p)
    }

    /// Kafka's varints (`ByteUtils.readVarint`/`readVarlong`): LEB128 then zigzag, the small
    /// values, the extremes, and where each read stops.
    #[test]
    fn varints_read_as_kafka_writes_them() {
        let varint = |b: &[u8]| (leb(b, 5).0.map(zigzag32), leb(b, 5).1);
        assert_eq!(varint(&[0x00]), (Ok(0), 1));
        assert_eq!(varint(&[0x01]), (Ok(-1), 1));
        assert_eq!(varint(&[0x02, 0x7f]), (Ok(1), 1));
        assert_eq!(varint(&[0xac, 0x02]), (Ok(150), 2));
        assert_eq!(varint(&[0xfe, 0xff, 0xff, 0xff, 0x0f]), (Ok(i32::MAX as i64), 5));
        assert_eq!(varint(&[0xff, 0xff, 0xff, 0xff, 0x0f]), (Ok(i32::MIN as i64), 5));
        let mut top = [0xffu8; 10];
        top[9] = 0x01;
        assert_eq!(leb(&top, 10).0.map(zigzag64), Ok(i64::MIN as i128));
        top[0] = 0xfe;
        assert_eq!(leb(&top, 10).0.map(zigzag64), Ok(i64::MAX as i128));
    }

    /// A varint cut by the end of the buffer is `Past`; one longer than its limit `TooLong`.
    #[test]
    fn broken_varints_are_refused() {
        assert_eq!(leb(&[0x80, 0x80], 5), (Err("past"), 2));
        assert_eq!(leb(&[0x80; 6], 5), (Err("too long"), 5));
        assert_eq!(leb(&[0x80; 11], 10).0, Err("too long"));
        assert_eq!(leb(&[], 5), (Err("past"), 0));
    }

    /// A length in a flexible version is a compact uvarint minus one (0: null); in an older one an
    /// int16 or int32 (-1: null).
    #[test]
    fn lengths_read_in_both_framings() {
        let read = |b: &[u8], flex, short| {
            let mut p = 0;
            length(b, &mut p, flex, short).ok().map(|n| (n, p))
        };
        assert_eq!(read(&[0x00], true, false), Some((-1, 1)));
        assert_eq!(read(&[0x03], true, false), Some((2, 1)));
        assert_eq!(read(&[0x80, 0x01], true, false), Some((127, 2)));
        assert_eq!(read(&[0xff, 0xff], false, true), Some((-1, 2)));
        assert_eq!(read(&[0x00, 0x00, 0x01, 0x00], false, false), Some((256, 4)));
        assert_eq!(read(&[0x00], false, true), None);
        assert_eq!(read(&[0x80; 6], true, false), None);
    }

    /// A read past the end fails and leaves the position where it was; no read overflows it.
    #[test]
    fn reads_stay_inside_the_slice() {
        let b = [1u8, 2, 3];
        let mut p = 1;
        assert!(take(&b, &mut p, 3).is_err());
        assert_eq!(p, 1);
        assert_eq!(take(&b, &mut p, 2).ok(), Some(&b[1..]));
        assert_eq!(p, 3);
        let mut p = usize::MAX;
        assert!(take(&b, &mut p, 1).is_err());
        let mut p = 2;
        assert!(rd_i16(&b, &mut p).is_err());
        assert!(byte(&b, 3).is_err());
    }

    /// An array element by its type, big-endian and signed as Kafka writes it.
    #[test]
    fn elements_are_read_by_type() {
        let data = [0xff, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x00, 0x07];
        assert_eq!(element(Fx::I32, &data, 0), -2);
        assert_eq!(element(Fx::I32, &data, 1), 7);
        assert_eq!(element(Fx::I16, &data, 0), -1);
        assert_eq!(element(Fx::I64, &data, 0), -8589934585);
    }
}
