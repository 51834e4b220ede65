//! Memory handed to Python without a copy: a column made in Rust reaches pyarrow through the
//! buffer protocol (`pa.py_buffer`), the `Vec` it was filled in staying where it is. Copying each
//! record batch's columns into `bytes` (and the integer columns first into a byte `Vec`) was a
//! tenth of the Spark `records` rows' cost, most of it page faults of the fresh copies.

use std::os::raw::c_int;

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
