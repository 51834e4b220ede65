//! Memory handed to Python without a copy: a column made in Rust reaches pyarrow through the
//! buffer protocol (`pa.py_buffer`), the `Vec` it was filled in staying where it is. Copying each
//! record batch's columns into `bytes` (and the integer columns first into a byte `Vec`) was a
//! tenth of the Spark `records` rows' cost, most of it page faults of the fresh copies.
//!
//! A buffer's memory, once pyarrow lets it go, is kept for the next record batch's columns
//! ([`recycled`]): each batch in fresh memory cost an eighth of the in-process rows' time (the heap
//! given back to the kernel after each batch, then faulted in and zeroed anew).

use std::os::raw::c_int;
use std::sync::Mutex;

use pyo3::prelude::*;

/// What a `Buffer` owns: the values as they were filled, laid out as Arrow lays them out (native
/// endianness, as the rest of the columns).
pub enum Owned {
    Bytes(Vec<u8>),
    I64(Vec<i64>),
    I32(Vec<i32>),
}

/// A read-only, contiguous buffer over memory Rust filled and no longer changes.
#[pyclass(frozen, module = "metashell._native")]
pub struct Buffer {
    data: Owned,
}

impl Buffer {
    pub fn new(py: Python<'_>, data: Owned) -> PyResult<Bound<'_, Buffer>> {
        Bound::new(py, Buffer { data })
    }

    /// Its first byte and length in bytes.
    fn span(&self) -> (*const u8, usize) {
        match &self.data {
            Owned::Bytes(v) => (v.as_ptr(), v.len()),
            Owned::I64(v) => (v.as_ptr().cast(), std::mem::size_of_val(v.as_slice())),
            Owned::I32(v) => (v.as_ptr().cast(), std::mem::size_of_val(v.as_slice())),
        }
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let data = std::mem::replace(&mut self.data, Owned::Bytes(Vec::new()));
        if let Ok(mut pool) = POOL.lock() {
            pool.keep(data);
        }
    }
}

/// An empty `Vec` with room for `n` values: the smallest memory a dropped [`Buffer`] held that is
/// big enough, else new.
pub fn recycled<T: Recycled>(n: usize) -> Vec<T> {
    let found = if n == 0 { None } else { POOL.lock().ok().and_then(|mut pool| pool.take(n)) };
    found.unwrap_or_else(|| Vec::with_capacity(n))
}

/// The value types a buffer's memory is kept for, each on its own shelf of the [`Pool`].
pub trait Recycled: Sized {
    fn shelf(pool: &mut Pool) -> &mut Vec<Vec<Self>>;
}

/// The memory of dropped buffers, up to [`POOL_BYTES`] in all and [`SHELF_LEN`] `Vec`s a type:
/// about the columns of the record batches a Spark reader has in flight (a few of 8,192 rows, some
/// 3 MB each).
pub struct Pool {
    bytes: Vec<Vec<u8>>,
    i64s: Vec<Vec<i64>>,
    i32s: Vec<Vec<i32>>,
    held: usize,
}

const POOL_BYTES: usize = 64 << 20;
const SHELF_LEN: usize = 256;
static POOL: Mutex<Pool> = Mutex::new(Pool::new());

impl Pool {
    const fn new() -> Pool {
        Pool { bytes: Vec::new(), i64s: Vec::new(), i32s: Vec::new(), held: 0 }
    }

    /// Keep `data`'s memory (emptied) if there is room for it, else free it.
    fn keep(&mut self, data: Owned) {
        match data {
            Owned::Bytes(v) => self.shelve(v),
            Owned::I64(v) => self.shelve(v),
            Owned::I32(v) => self.shelve(v),
        }
    }

    fn shelve<T: Recycled>(&mut self, mut v: Vec<T>) {
        let size = v.capacity() * std::mem::size_of::<T>();
        if size > 0 && self.held + size <= POOL_BYTES && T::shelf(self).len() < SHELF_LEN {
            v.clear();
            self.held += size;
            T::shelf(self).push(v);
        }
    }

    /// The kept `Vec` of the smallest capacity of at least `n`, if any.
    fn take<T: Recycled>(&mut self, n: usize) -> Option<Vec<T>> {
        let shelf = T::shelf(self);
        let (at, _) = shelf.iter().map(Vec::capacity).enumerate().filter(|(_, c)| *c >= n).min_by_key(|(_, c)| *c)?;
        let v = shelf.swap_remove(at);
        self.held -= v.capacity() * std::mem::size_of::<T>();
        Some(v)
    }
}

impl Recycled for u8 {
    fn shelf(pool: &mut Pool) -> &mut Vec<Vec<u8>> {
        &mut pool.bytes
    }
}

impl Recycled for i64 {
    fn shelf(pool: &mut Pool) -> &mut Vec<Vec<i64>> {
        &mut pool.i64s
    }
}

impl Recycled for i32 {
    fn shelf(pool: &mut Pool) -> &mut Vec<Vec<i32>> {
        &mut pool.i32s
    }
}

#[pymethods]
impl Buffer {
    /// The buffer protocol, read-only (a consumer asking to write gets a BufferError).
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut pyo3::ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        let (ptr, len) = slf.get().span();
        // SAFETY: `view` is the consumer's; `ptr..ptr + len` is owned by this frozen object, which
        // never changes it, and `PyBuffer_FillInfo` keeps a reference to the object in the view, so
        // the memory outlives every view of it.
        if unsafe { pyo3::ffi::PyBuffer_FillInfo(view, slf.as_ptr(), ptr as *mut _, len as isize, 1, flags) } < 0 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.span().1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept `Vec` comes back emptied, the smallest that is big enough; one too big for the
    /// pool's bound is freed, and a type's shelf never mixes with another's.
    #[test]
    fn kept_memory_is_taken_smallest_first_within_the_bound() {
        let mut pool = Pool::new();
        pool.keep(Owned::Bytes(Vec::with_capacity(1000)));
        pool.keep(Owned::Bytes(vec![7; 100]));
        pool.keep(Owned::I64(Vec::with_capacity(10)));
        pool.keep(Owned::Bytes(Vec::with_capacity(POOL_BYTES)));
        pool.keep(Owned::Bytes(Vec::new()));
        assert_eq!((pool.bytes.len(), pool.i64s.len(), pool.held), (2, 1, 1000 + 100 + 80));
        let v: Vec<u8> = pool.take(50).expect("a kept Vec");
        assert_eq!((v.len(), v.capacity()), (0, 100));
        assert!(pool.take::<u8>(2000).is_none());
        assert!(pool.take::<i32>(1).is_none());
        assert_eq!(pool.take::<i64>(10).map(|v| v.capacity()), Some(10));
        assert_eq!(pool.held, 1000);
        for _ in 0..SHELF_LEN + 5 {
            pool.keep(Owned::I32(Vec::with_capacity(1)));
        }
        assert_eq!(pool.i32s.len(), SHELF_LEN);
    }
}
