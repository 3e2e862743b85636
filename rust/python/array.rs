//! Arrays: the core's array over a store, and writes to a store Python
//! writes itself.

use numpy::{PyArray1, PyArrayMethods, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::awaitable::{
    awaitable, held_destination, held_input, read_result, rust_store, write_result,
};
use super::buffers::{destination, out_bytes, read_done, write_done, Value};
use super::keys::{plain_keys, BasicRead, SelectionHandle};
use super::stores::StoreHandle;
use super::to_py_err;
use super::CachePool;
use crate::array::ArrayCore;
use crate::batch::{Destination, MemoryOrder};
use crate::dtype::DataKind;
use crate::selection::{self, Normalized};

/// An opened array: reads and writes whole selections in one call.
#[pyclass(module = "zarrox._core", name = "ArrayHandle", frozen)]
pub struct ArrayHandle {
    core: ArrayCore,
}

impl ArrayHandle {
    /// The array this handle holds.
    pub(crate) fn core(&self) -> &ArrayCore {
        &self.core
    }

    fn utf8(&self) -> bool {
        self.core.data_type().kind == DataKind::String
    }
}

#[pymethods]
impl ArrayHandle {
    /// `cache`: a pool of its own to read and write through (default: the
    /// process's, `cache.bytes`).
    #[new]
    #[pyo3(signature = (store, path, metadata_json, fill_value, write_empty_chunks=false, cache=None))]
    fn new(
        store: &StoreHandle,
        path: &str,
        metadata_json: &str,
        fill_value: &[u8],
        write_empty_chunks: bool,
        cache: Option<&CachePool>,
    ) -> PyResult<Self> {
        let core = ArrayCore::new(
            store.inner.clone(),
            path,
            metadata_json,
            fill_value.to_vec(),
            write_empty_chunks,
        )
        .map_err(to_py_err)?;
        let core = match cache {
            Some(pool) => core.with_cache(pool.cache.clone()),
            None => core,
        };
        Ok(ArrayHandle { core })
    }

    /// What the data cache this array reads through holds and how it was
    /// used: entries, bytes, limit (bytes), hits, misses.
    fn cache_stats(&self) -> std::collections::BTreeMap<&'static str, u64> {
        super::stats_dict(self.core.cache().stats())
    }

    /// Whether Rust reads and writes the chunks (else: sessions and batches).
    #[getter]
    fn in_rust(&self) -> bool {
        !self.core.caller_store()
    }

    /// Whether the chunks are stored in Fortran order (a chain that begins by
    /// reversing every axis): then the calls that take `fortran=True` read
    /// into and write from Fortran-ordered buffers with no chunk transposed.
    #[getter]
    fn fortran_chunks(&self) -> bool {
        self.core.fortran().is_some()
    }

    /// Read `selection` into `out`, a C-contiguous uint8 view of the result
    /// array in memory `order` ("F": an orthogonal selection of an array with
    /// `fortran_chunks`), or (`out` None) variable-length data into a list.
    /// Returns which chunks exist, (the list of str or bytes, which chunks
    /// exist), or for a store Python reads itself the session that reads it.
    #[pyo3(signature = (selection_, out=None, order="C"))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        selection_: &SelectionHandle,
        mut out: Option<PyReadwriteArray1<'py, u8>>,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let order = MemoryOrder::parse(order).map_err(to_py_err)?;
        let sel = &selection_.inner.selection;
        let done = {
            let into = destination(out.as_mut())?;
            py.detach(|| self.core.read(sel, into, order))
                .map_err(to_py_err)?
        };
        read_done(py, done, out, self.utf8())
    }

    /// `read` as an awaitable (an `asyncio.Future` of the running loop that
    /// the engine completes; no Python thread waits): `out` is held until it
    /// is done and must not be used meanwhile. Only for a store Rust reads
    /// (`in_rust`). Cancelling the future cancels the read.
    #[pyo3(signature = (selection_, out=None, order="C"))]
    fn read_async<'py>(
        &self,
        py: Python<'py>,
        selection_: &SelectionHandle,
        out: Option<PyReadwriteArray1<'py, u8>>,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let order = MemoryOrder::parse(order).map_err(to_py_err)?;
        let sel = &selection_.inner.selection;
        // the GIL held: this runs on the event loop's thread, which waits either way
        let (store, batch) = self.core.batch_of(sel, order).map_err(to_py_err)?;
        let store = rust_store(
            store,
            "awaitable reads need a store Rust reads (see in_rust)",
        )?;
        let into = held_destination(out)?;
        let utf8 = self.utf8();
        awaitable(py, batch.read_async(store, into), move |py, done| {
            read_result(py, done, utf8)
        })
    }

    /// `write` as an awaitable (see `read_async`), resolving to None: the
    /// value's buffer is held until it is done. Cancelled part way, the
    /// chunks already stored stay written.
    #[pyo3(signature = (selection_, value, order="C"))]
    fn write_async<'py>(
        &self,
        py: Python<'py>,
        selection_: &SelectionHandle,
        value: &Bound<'py, PyAny>,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let order = MemoryOrder::parse(order).map_err(to_py_err)?;
        let sel = &selection_.inner.selection;
        // the GIL held: this runs on the event loop's thread, which waits either way
        let (store, batch) = self.core.batch_of(sel, order).map_err(to_py_err)?;
        let store = rust_store(
            store,
            "awaitable writes need a store Rust writes (see in_rust)",
        )?;
        let input = held_input(value)?;
        awaitable(py, batch.write_async(store, input), write_result)
    }

    /// Read a basic selection (integers, slices with positive steps, one
    /// Ellipsis) into a new array: (its bytes as a uint8 array, the result
    /// shape), or None when the selection is not one (the caller's general
    /// path raises the errors) or Python reads the store. One call for the
    /// common `a[i, j:k, ...]`.
    fn read_basic<'py>(
        &self,
        py: Python<'py>,
        selection_: &Bound<'py, PyAny>,
    ) -> PyResult<Option<BasicRead<'py>>> {
        if self.core.caller_store() || self.core.data_type().is_var_len() {
            return Ok(None);
        }
        let Some(keys) = plain_keys(selection_) else {
            return Ok(None);
        };
        let Ok(Normalized {
            selection: sel,
            result_shape,
            ..
        }) = selection::basic(&keys, self.core.shape())
        else {
            return Ok(None);
        };
        // integer-indexed dimensions, dropped from the result shape, hold one element
        let elements = result_shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n));
        let Some(nbytes) = elements.and_then(|n| n.checked_mul(self.core.data_type().size)) else {
            return Err(PyValueError::new_err("the selection is too large"));
        };
        let out = if nbytes >= crate::alloc::LARGE {
            // Checked as chunk-sized buffers are, then `numpy.empty`, whose
            // refusal is a MemoryError (`PyArray1::new` panics on it).
            self.core.admit_output(nbytes).map_err(to_py_err)?;
            let numpy = py.import("numpy")?;
            numpy
                .getattr("empty")?
                .call1((nbytes, numpy.getattr("uint8")?))?
                .cast_into::<PyArray1<u8>>()?
        } else {
            // SAFETY: the array is uninitialised; `read` writes every byte of
            // it (every output element belongs to one chunk's region, filled
            // when the chunk is missing) before it is returned, and on an error
            // the array is dropped unseen. Its memory comes from numpy's
            // allocator, as with `numpy.empty`.
            unsafe { PyArray1::<u8>::new(py, [nbytes], false) }
        };
        {
            let mut rw = out.readwrite();
            let into = Destination::Buffer(out_bytes(&mut rw)?);
            py.detach(|| self.core.read(&sel, into, MemoryOrder::C))
                .map_err(to_py_err)?;
        }
        Ok(Some((out, result_shape)))
    }

    /// Write `value` to `selection`: a C-contiguous uint8 view of the
    /// selection-shaped data in memory `order` (see `read`), a list of str or
    /// bytes (variable-length data, selection order), or one element (`bytes`
    /// in native byte order, or a variable-length value; `str`: UTF-8) for
    /// every selected element. Returns None, or for a store Python writes
    /// itself the pending write (see `WriteBatch`).
    #[pyo3(signature = (selection_, value, order="C"))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        selection_: &SelectionHandle,
        value: &Bound<'py, PyAny>,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let order = MemoryOrder::parse(order).map_err(to_py_err)?;
        let sel = &selection_.inner.selection;
        let extracted = Value::extract(value)?;
        let input = extracted.input()?;
        let done = py
            .detach(|| self.core.write(sel, input, order))
            .map_err(to_py_err)?;
        write_done(py, done, value)
    }

    /// The store key of the chunk at grid coordinates `coords`.
    fn chunk_key(&self, coords: Vec<u64>) -> String {
        self.core.chunk_key(&coords)
    }

    /// (key, grid coordinates) of every stored chunk (or shard).
    fn stored_chunks(&self, py: Python<'_>) -> PyResult<Vec<(String, Vec<u64>)>> {
        py.detach(|| self.core.stored_chunks()).map_err(to_py_err)
    }

    /// Delete the chunks (shards) under `keys`, and what the data cache this
    /// array reads through holds of them.
    fn delete_chunks(&self, py: Python<'_>, keys: Vec<String>) -> PyResult<()> {
        py.detach(|| self.core.delete_chunks(&keys))
            .map_err(to_py_err)
    }

    /// (key, grid coordinates) of the given store keys that are this array's
    /// chunk keys (the keys of a store Python lists itself).
    fn chunk_coords(&self, keys: Vec<String>) -> Vec<(String, Vec<u64>)> {
        self.core.chunk_coords(keys)
    }
}
