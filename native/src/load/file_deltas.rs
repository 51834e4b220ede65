//! `FileDeltas.apply`'s bookkeeping (`image/file_deltas.py`) for a `--snapshot` file, in the native batch
//! loop: Kafka's shell reads a lone file as deltas (`image/loader.py`, "Deltas Kafka cannot
//! apply"), each opened by its first batch and flushed by the first batch that leaves no metadata
//! transaction open; a flushed delta that changed partitions of topics the image does not know
//! (`Replayer.orphan_topics`) is one Kafka drops, noted in `bad_deltas`.
//!
//! The loader's state is read once a call and written back at its end, as the provenance is. A
//! batch that starts a delta to skip (`skip_deltas`, the second pass) ends the run: Python skips it.
//! The Python sink calls the loop only while no skip is in progress.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyTuple};

const STATE: [&str; 3] = ["delta_start", "last_flush", "last_batch_offset"];

/// The loader's delta state for the length of a call.
pub struct FileDeltas<'py> {
    loader: Bound<'py, PyAny>,
    skip: Bound<'py, PyDict>,
    orphans: Bound<'py, PySet>,
    bad: Bound<'py, PyList>,
    delta_start: Option<i64>,
    last_flush: Option<i64>,
    last_batch: Option<i64>,
}

impl<'py> FileDeltas<'py> {
    /// Read from `loader` (the file-mode loader's `FileDeltas`); `orphans`: its replayer's orphan topics
    /// (`Ctx::image_parts`).
    pub fn read(loader: Bound<'py, PyAny>, orphans: Bound<'py, PySet>) -> PyResult<Self> {
        Ok(FileDeltas {
            skip: loader.getattr("skip_deltas")?.cast_into::<PyDict>()?,
            orphans,
            bad: loader.getattr("bad_deltas")?.cast_into::<PyList>()?,
            delta_start: loader.getattr(STATE[0])?.extract()?,
            last_flush: loader.getattr(STATE[1])?.extract()?,
            last_batch: loader.getattr(STATE[2])?.extract()?,
            loader,
        })
    }

    /// Before a batch's records: false when it starts a delta to skip (the run ends there);
    /// else the delta it belongs to is open (a new one forgets the orphans of the one before).
    pub fn begin(&mut self, base: i64) -> PyResult<bool> {
        if !self.skip.is_empty() && self.skip.contains(base)? {
            return Ok(false);
        }
        if self.delta_start.is_none() {
            self.delta_start = Some(base);
            if !self.orphans.is_empty() {
                self.orphans.clear();
            }
        }
        Ok(true)
    }

    /// After a batch ending at `last` was applied: `flushed` when no metadata transaction is open
    /// (`end_batch` published it), which ends the delta.
    pub fn end(&mut self, last: i64, flushed: bool) -> PyResult<()> {
        self.last_batch = Some(last);
        if flushed {
            if !self.orphans.is_empty() {
                let start = self.delta_start.unwrap_or(last);
                let orphans = PyTuple::new(self.loader.py(), self.orphans.iter())?;
                self.bad.append((start, last, orphans))?;
            }
            self.delta_start = None;
            self.last_flush = Some(last);
        }
        Ok(())
    }

    /// Write the state back to the loader.
    pub fn write(&self) -> PyResult<()> {
        self.loader.setattr(STATE[0], self.delta_start)?;
        self.loader.setattr(STATE[1], self.last_flush)?;
        self.loader.setattr(STATE[2], self.last_batch)
    }
}
