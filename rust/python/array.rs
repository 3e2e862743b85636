//! Arrays: the core's array over a store, and writes to a store Python
//! writes itself.

use numpy::{
    PyArrayDescr, PyArrayDescrMethods, PyReadwriteArray1, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::awaitable::{
    awaitable, held_destination, held_input, read_result, rust_store, write_result,
};
use super::batch_io::{read_done, write_done};
use super::buffers::{array_data, destination, new_array, Value};
use super::selection::{plain_keys, SelectionHandle};
use super::stores::StoreHandle;
use super::to_py_err;
use super::CachePool;
use crate::array::ArrayCore;
use crate::batch::{Destination, MemoryOrder};
use crate::dtype::DataKind;
use crate::engine::Input;
use crate::indexing::Selection;
use crate::selection::{self, Normalized};

/// The data of `values`, a C-contiguous array of `nbytes` bytes (see
/// `ArrayHandle::plain_write`), for as long as `values` is borrowed.
fn c_contiguous_bytes<'a>(values: &'a Bound<'_, PyUntypedArray>, nbytes: usize) -> &'a [u8] {
    debug_assert!(values.is_c_contiguous());
    // SAFETY: `values` is a C-contiguous array of `nbytes` bytes (its
    // elements times its data type's size, checked equal to the array's by
    // `plain_write`), alive while the borrow of `values` that the slice's
    // lifetime is tied to lasts; numpy neither frees nor moves the data of a
    // referenced array. The write only reads it; a Python thread changing it
    // meanwhile races as with any write in flight (numpy's own copies release
    // the GIL too).
    unsafe { std::slice::from_raw_parts(array_data(values).cast_const(), nbytes) }
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

    /// The size of an element, when the one-call paths (`read_basic`,
    /// `write_basic`) serve this array with numpy data type `dtype`: a store
    /// Rust reads and writes, elements of fixed size, `dtype`'s.
    fn plain_element_size(&self, dtype: &Bound<'_, PyArrayDescr>) -> Option<usize> {
        let data_type = self.core.data_type();
        let served = !self.core.caller_store() && !data_type.is_var_len();
        (served && dtype.itemsize() == data_type.size).then_some(data_type.size)
    }

    /// `selection` normalised with its result shape, when it is plain
    /// (Python integers in bounds, slices with positive steps, one Ellipsis).
    fn plain_selection(&self, selection: &Bound<'_, PyAny>) -> Option<(Selection, Vec<usize>)> {
        let keys = plain_keys(selection)?;
        let Normalized {
            selection,
            result_shape,
            ..
        } = selection::basic(&keys, self.core.shape()).ok()?;
        Some((selection, result_shape))
    }

    /// The selection, the values (C-contiguous: `value` itself, or its
    /// C-ordered copy where it is strided) and their size in bytes of a
    /// one-call write (see `write_basic`): None where the general path has
    /// the write.
    fn plain_write<'py>(
        &self,
        selection: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        dtype: &Bound<'py, PyArrayDescr>,
    ) -> PyResult<Option<(Selection, Bound<'py, PyUntypedArray>, usize)>> {
        let Some(size) = self.plain_element_size(dtype) else {
            return Ok(None);
        };
        let Ok(values) = value.cast::<PyUntypedArray>() else {
            return Ok(None);
        };
        if !values.dtype().is_equiv_to(dtype) {
            return Ok(None);
        }
        let Some((sel, result_shape)) = self.plain_selection(selection) else {
            return Ok(None);
        };
        if values.shape() != result_shape.as_slice() {
            return Ok(None);
        }
        // an empty selection: nothing to write, the general path's answer
        let Some(nbytes) = values.len().checked_mul(size).filter(|&n| n > 0) else {
            return Ok(None);
        };
        let values = if values.is_c_contiguous() {
            values.clone()
        } else {
            // what the general path would copy (`c_ordered`), numpy's copy
            values
                .call_method1("copy", ("C",))?
                .cast_into::<PyUntypedArray>()?
        };
        Ok(Some((sel, values, nbytes)))
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

    /// A plain basic selection (Python integers, slices with positive steps,
    /// one Ellipsis) read in one call into a new array of numpy data type
    /// `dtype` (the array's) and the selection's shape; None when the
    /// selection or the array needs the general path (it then raises what
    /// the general path raises).
    fn read_basic<'py>(
        &self,
        py: Python<'py>,
        selection_: &Bound<'py, PyAny>,
        dtype: &Bound<'py, PyArrayDescr>,
    ) -> PyResult<Option<Bound<'py, PyUntypedArray>>> {
        let Some(size) = self.plain_element_size(dtype) else {
            return Ok(None);
        };
        let Some((sel, result_shape)) = self.plain_selection(selection_) else {
            return Ok(None);
        };
        // integer-indexed dimensions, dropped from the result shape, hold one element
        let elements = result_shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n));
        let Some(nbytes) = elements.and_then(|n| n.checked_mul(size)) else {
            return Err(PyValueError::new_err("the selection is too large"));
        };
        if nbytes >= crate::alloc::LARGE {
            // checked as chunk-sized buffers are
            self.core.admit_output(nbytes).map_err(to_py_err)?;
        }
        let out = new_array(py, dtype, &result_shape)?;
        // SAFETY: `out` was just made, C-contiguous, of `nbytes` bytes (its
        // shape's elements times `dtype`'s size), and nothing else refers to
        // it yet, so this is the only access to its data. Its bytes are
        // uninitialised: `read` writes every one (every output element belongs
        // to one chunk's region, filled when the chunk is missing) before the
        // array is returned, and on an error it is dropped unseen.
        let bytes = unsafe { std::slice::from_raw_parts_mut(array_data(&out), nbytes) };
        py.detach(|| {
            self.core
                .read(&sel, Destination::Buffer(bytes), MemoryOrder::C)
        })
        .map_err(to_py_err)?;
        Ok(Some(out))
    }

    /// Write `value` to a plain basic selection (see `read_basic`) in one
    /// call, when `value` is a numpy array of the numpy data type `dtype`
    /// (the array's) and exactly the selection's shape (copied to C order
    /// first where it is strided): True. Else
    /// nothing is written and False says the general path (conversion,
    /// broadcasting, its errors) has the write.
    fn write_basic<'py>(
        &self,
        py: Python<'py>,
        selection_: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        dtype: &Bound<'py, PyArrayDescr>,
    ) -> PyResult<bool> {
        let Some((sel, values, nbytes)) = self.plain_write(selection_, value, dtype)? else {
            return Ok(false);
        };
        let bytes = c_contiguous_bytes(&values, nbytes);
        let done = py
            .detach(|| self.core.write(&sel, Input::Fixed(bytes), MemoryOrder::C))
            .map_err(to_py_err)?;
        debug_assert!(matches!(done, crate::batch::WriteDone::Written));
        Ok(true)
    }

    /// A transaction's staging of a write (`zarrox.transactions`): what
    /// `write_basic` does to this array (the staged values), and a 1 written
    /// to the same selection of `marks` (which elements were written, an
    /// array of this one's shape and grid), in one call. Returns the grid
    /// coordinates of the chunks the write covered whole (every in-bounds
    /// element written), or None where `write_basic` would refuse: nothing
    /// was written to either.
    fn stage_basic<'py>(
        &self,
        py: Python<'py>,
        selection_: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        dtype: &Bound<'py, PyArrayDescr>,
        marks: &ArrayHandle,
    ) -> PyResult<Option<Vec<Vec<u64>>>> {
        if marks.core.shape() != self.core.shape() {
            return Err(PyValueError::new_err(
                "stage_basic: the marks array must have the staged array's shape",
            ));
        }
        let Some((sel, values, nbytes)) = self.plain_write(selection_, value, dtype)? else {
            return Ok(None);
        };
        let bytes = c_contiguous_bytes(&values, nbytes);
        let covered = py
            .detach(|| {
                let (_, covered) =
                    self.core
                        .write_covering(&sel, Input::Fixed(bytes), MemoryOrder::C)?;
                marks
                    .core
                    .write(&sel, Input::Scalar(&[1]), MemoryOrder::C)
                    .map(|_| covered)
            })
            .map_err(to_py_err)?;
        Ok(Some(covered))
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
