//! What a batch call is given and hands back: where its chunks are (a store
//! handle, the name of a store Python serves, or encoded chunks held in
//! Python), and a read's or write's outcome as Python objects (which chunks
//! exist, variable-length values, the session or pending write of a store
//! Python serves, new encoded chunks).

use bytes::Bytes;
use numpy::PyReadwriteArray1;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::buffers::{encoded_chunks, encoded_list, var_list};
use super::stores::{ReadSessionHandle, StoreHandle, WriteBatch};
use crate::array::StoreRef;
use crate::batch::{Chunks, ReadDone, WriteDone};

/// Where a batch's chunks are, as the caller names them: a `StoreHandle`
/// (Rust's store, or one Python serves), a `str` (the name of a store Python
/// serves), or a list of encoded chunks (bytes, buffers or None).
pub(super) enum ChunkSource {
    Store(StoreRef),
    Held(Vec<Option<Bytes>>),
}

impl ChunkSource {
    pub(super) fn extract(chunks: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(store) = chunks.cast::<StoreHandle>() {
            return Ok(ChunkSource::Store(store.get().inner.clone()));
        }
        if let Ok(name) = chunks.cast::<PyString>() {
            return Ok(ChunkSource::Store(StoreRef::Caller(
                name.to_str()?.to_string(),
            )));
        }
        Ok(ChunkSource::Held(encoded_chunks(chunks)?))
    }

    /// The chunks, for one batch (held chunks are handed over).
    pub(super) fn chunks(&mut self) -> Chunks<'_> {
        match self {
            ChunkSource::Store(store) => store.chunks(),
            ChunkSource::Held(held) => Chunks::Held(std::mem::take(held)),
        }
    }
}

/// What a read returns to Python: which chunks exist, (the variable-length
/// values as str (`utf8`) or bytes, which chunks exist), or the session that
/// reads a store Python serves (into `out`, or into its own list).
pub(super) fn read_done<'py>(
    py: Python<'py>,
    done: ReadDone,
    out: Option<PyReadwriteArray1<'py, u8>>,
    utf8: bool,
) -> PyResult<Bound<'py, PyAny>> {
    match done {
        ReadDone::Present(present) => Ok(PyList::new(py, present)?.into_any()),
        ReadDone::Values(values, present) => {
            let values = var_list(py, &values, utf8)?;
            Ok((values, PyList::new(py, present)?)
                .into_pyobject(py)?
                .into_any())
        }
        ReadDone::Session(session) => {
            let handle = ReadSessionHandle::new(session, out, utf8)?;
            Ok(Bound::new(py, handle)?.into_any())
        }
    }
}

/// What a write returns to Python: None, the write pending a store Python
/// serves (which keeps `value` for its encoding), or the new encoded chunks.
pub(super) fn write_done<'py>(
    py: Python<'py>,
    done: WriteDone,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    match done {
        WriteDone::Written => Ok(py.None().into_bound(py)),
        WriteDone::Pending(pending) => {
            let batch = WriteBatch::new(pending, value.clone().unbind());
            Ok(Bound::new(py, batch)?.into_any())
        }
        WriteDone::Encoded(new) => Ok(encoded_list(py, &new)?.into_any()),
    }
}
