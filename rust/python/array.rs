//! Arrays: the core's array over a store, and writes to a store Python
//! writes itself.

use std::borrow::Cow;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadwriteArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use super::buffers::{encode_with, out_bytes, value_bytes, var_items, var_list};
use super::keys::{plain_keys, BasicRead, SelectionHandle};
use super::stores::{ReadSessionHandle, StoreHandle};
use super::to_py_err;
use super::CachePool;
use crate::array::ArrayCore;
use crate::dtype::DataKind;
use crate::engine::{ChunkTask, Input};
use crate::indexing::Selection;
use crate::selection::{self, Normalized};

/// A write to a store Python writes itself: `needs` lists the chunks whose
/// old bytes must be fetched first, `encode(old, value)` gives the new bytes
/// per chunk (None: delete).
#[pyclass(module = "zarrox._core", name = "WriteBatch", frozen)]
pub struct WriteBatch {
    pub(super) tasks: Vec<ChunkTask>,
    pub(super) shape: Vec<usize>,
    pub(super) needs: Vec<bool>,
    /// Whether the tasks are of the array's Fortran view.
    pub(super) fortran: bool,
}

#[pymethods]
impl WriteBatch {
    /// The chunks' keys.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.tasks.iter().map(|t| t.key.clone()).collect()
    }

    /// Per chunk, whether its old bytes are needed.
    #[getter]
    fn needs(&self) -> Vec<bool> {
        self.needs.clone()
    }
}

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

    /// The array and selection a call works on: the array's own, or (with
    /// `fortran`) its Fortran view and the selection reversed, whose C-ordered
    /// buffer is the selection's Fortran-ordered one.
    fn target<'a>(
        &'a self,
        sel: &'a Selection,
        fortran: bool,
    ) -> PyResult<(&'a ArrayCore, Cow<'a, Selection>)> {
        let core = self.core_for(fortran)?;
        if !fortran {
            return Ok((core, Cow::Borrowed(sel)));
        }
        match sel.reversed() {
            Some(reversed) => Ok((core, Cow::Owned(reversed))),
            None => Err(PyValueError::new_err(
                "fortran=True needs an orthogonal selection",
            )),
        }
    }

    /// The array itself, or (`fortran`) its Fortran view.
    fn core_for(&self, fortran: bool) -> PyResult<&ArrayCore> {
        match (fortran, self.core.fortran()) {
            (false, _) => Ok(&self.core),
            (true, Some(view)) => Ok(view),
            (true, None) => Err(PyValueError::new_err(
                "fortran=True needs an array whose chunks are stored in Fortran order",
            )),
        }
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

    /// Read `selection` into `out`: a C-contiguous uint8 view of the result
    /// array; with `fortran`, of the Fortran-ordered result (an orthogonal
    /// selection of an array with `fortran_chunks`).
    #[pyo3(signature = (selection_, out, fortran=false))]
    fn read(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        mut out: PyReadwriteArray1<'_, u8>,
        fortran: bool,
    ) -> PyResult<()> {
        let (core, sel) = self.target(&selection_.inner.selection, fortran)?;
        let buf = out_bytes(&mut out)?;
        py.detach(|| core.read(&sel, buf)).map_err(to_py_err)
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
            let buf = out_bytes(&mut rw)?;
            py.detach(|| self.core.read(&sel, buf)).map_err(to_py_err)?;
        }
        Ok(Some((out, result_shape)))
    }

    /// A read of `selection` into `out` from a store Python reads itself
    /// (`fortran`: as for `read`).
    #[pyo3(signature = (selection_, out, fortran=false))]
    fn read_session(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        out: PyReadwriteArray1<'_, u8>,
        fortran: bool,
    ) -> PyResult<ReadSessionHandle> {
        let (core, sel) = self.target(&selection_.inner.selection, fortran)?;
        let (session, shape) = py.detach(|| core.read_session(&sel)).map_err(to_py_err)?;
        let want = shape.iter().product::<usize>() * self.core.data_type().size;
        if out.len() != want {
            return Err(PyValueError::new_err(format!(
                "output buffer has {} bytes, the selection needs {want}",
                out.len()
            )));
        }
        ReadSessionHandle::fixed(session, out)
    }

    /// A read of `selection` of a variable-length array from a store Python
    /// reads itself (the values: `session.values()`).
    fn read_session_var(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
    ) -> PyResult<ReadSessionHandle> {
        let sel = &selection_.inner.selection;
        let (session, shape) = py
            .detach(|| self.core.read_session(sel))
            .map_err(to_py_err)?;
        let n = shape.iter().product();
        Ok(ReadSessionHandle::var(session, n, self.utf8()))
    }

    /// Write `value` (a C-contiguous uint8 view of the selection-shaped data;
    /// with `fortran`, of the Fortran-ordered data: see `read`).
    #[pyo3(signature = (selection_, value, fortran=false))]
    fn write(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        value: PyReadonlyArray1<'_, u8>,
        fortran: bool,
    ) -> PyResult<()> {
        let (core, sel) = self.target(&selection_.inner.selection, fortran)?;
        let buf = value_bytes(&value)?;
        py.detach(|| core.write(&sel, Input::Fixed(buf)))
            .map_err(to_py_err)
    }

    /// Write one value to every selected element: `bytes` (one element's bytes
    /// in native byte order, or a variable-length value) or `str` (UTF-8);
    /// `fortran`: through the Fortran view (see `read`), for an array with
    /// `fortran_chunks`, which then transposes no chunk.
    #[pyo3(signature = (selection_, value, fortran=false))]
    fn write_scalar(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        value: &Bound<'_, PyAny>,
        fortran: bool,
    ) -> PyResult<()> {
        let (core, sel) = self.target(&selection_.inner.selection, fortran)?;
        let one = if let Ok(s) = value.cast::<PyString>() {
            s.to_str()?.as_bytes().to_vec()
        } else {
            value.cast::<PyBytes>()?.as_bytes().to_vec()
        };
        py.detach(|| core.write(&sel, Input::Scalar(&one)))
            .map_err(to_py_err)
    }

    /// Read a selection of a variable-length array: a list of str (string
    /// arrays) or bytes (bytes arrays) in selection order.
    fn read_var<'py>(
        &self,
        py: Python<'py>,
        selection_: &SelectionHandle,
    ) -> PyResult<Bound<'py, PyList>> {
        let sel = &selection_.inner.selection;
        let items = py.detach(|| self.core.read_var(sel)).map_err(to_py_err)?;
        var_list(py, &items, self.utf8())
    }

    /// Write a list of str or bytes (selection order) to a variable-length array.
    fn write_var(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        items: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let sel = &selection_.inner.selection;
        let values = var_items(items)?;
        py.detach(|| self.core.write(sel, Input::Var(&values)))
            .map_err(to_py_err)
    }

    /// A write of `selection` to a store Python writes itself (`fortran`: the
    /// value `encode` takes is Fortran-ordered, see `write`).
    #[pyo3(signature = (selection_, fortran=false))]
    fn write_batch(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        fortran: bool,
    ) -> PyResult<WriteBatch> {
        let (core, sel) = self.target(&selection_.inner.selection, fortran)?;
        let (tasks, shape, needs) = py.detach(|| core.write_tasks(&sel)).map_err(to_py_err)?;
        Ok(WriteBatch {
            tasks,
            shape,
            needs,
            fortran,
        })
    }

    /// The new bytes of a write batch's chunks (None: delete) after writing
    /// `value` (see `Value`) over the `old` chunks fetched for `batch.needs`.
    fn encode<'py>(
        &self,
        py: Python<'py>,
        batch: &WriteBatch,
        old: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let core = self.core_for(batch.fortran)?;
        encode_with(py, old, value, |old, input| {
            core.encode(&batch.tasks, &batch.shape, old, input)
        })
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
