//! The codec chain of one kind of chunk, for zarr-python's codec pipeline.

use numpy::{PyReadwriteArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::array::WriteBatch;
use super::buffers::{encode_with, encoded_chunks, out_bytes, var_list, Value};
use super::keys::{chunk_regions, Zarr};
use super::stores::{ReadSessionHandle, StoreHandle};
use super::to_py_err;
use crate::dtype::DataKind;
use crate::engine::ChunkTask;
use crate::pipeline::{self, ChunkCodec as BatchCodec};

/// The codec chain of one kind of chunk (shape, data type, fill value), with
/// batch reads and writes of chunks whose regions the caller has projected
/// (zarr-python's codec pipeline). Every call handles the whole batch with
/// the GIL released.
#[pyclass(module = "zarrox._core", name = "ChunkCodec", frozen)]
pub struct ChunkCodec {
    inner: BatchCodec,
}

impl ChunkCodec {
    fn utf8(&self) -> bool {
        self.inner.spec().dtype.kind == DataKind::String
    }
    fn shape(&self) -> &[usize] {
        &self.inner.spec().shape
    }
    fn tasks(
        &self,
        keys: Vec<String>,
        chunks: &Bound<'_, PyAny>,
        buffers: &Bound<'_, PyAny>,
        buffer_shape: &[usize],
        complete: Option<&[bool]>,
        zarr: Option<Zarr<'_, '_>>,
    ) -> PyResult<Vec<ChunkTask>> {
        let regions = chunk_regions(chunks, buffers, self.shape(), buffer_shape, zarr.as_ref())?;
        BatchCodec::tasks(keys, regions, complete).map_err(to_py_err)
    }
    /// The bytes of `out`, checked to hold a buffer of `shape` elements.
    fn out_buffer<'a>(
        &self,
        out: &'a mut PyReadwriteArray1<'_, u8>,
        shape: &[usize],
    ) -> PyResult<&'a mut [u8]> {
        let want = shape.iter().product::<usize>() * self.inner.spec().dtype.size;
        let len = out.len();
        if want != len {
            return Err(PyValueError::new_err(format!(
                "the buffer has {len} bytes, shape {shape:?} needs {want}"
            )));
        }
        out_bytes(out)
    }
}

/// The selections' form: zarr-python's (`drop_axes` given) or spelled out.
fn zarr_form<'a, 'py>(
    drop_axes: Option<Vec<usize>>,
    generic: Option<&'a Bound<'py, PyAny>>,
    writing: bool,
) -> Option<Zarr<'a, 'py>> {
    drop_axes.map(|drop_axes| Zarr {
        drop_axes,
        generic,
        writing,
    })
}

/// Every method of `ChunkCodec` takes the batch's selections in one of two
/// forms: regions spelled out (per chunk a list of `(start, stop, step)`,
/// slices, integers or index arrays, one per chunk dimension, with `None` in
/// the buffer's list where the chunk dimension has no buffer dimension; or
/// 1-d arrays of flat indices), or, with `drop_axes` given, zarr-python's
/// `chunk_selection`/`out_selection` pairs, which Rust normalises
/// (`generic` maps what only numpy's general indexing can).
#[pymethods]
impl ChunkCodec {
    /// `codecs_json`: the v3 codec list (core form); `data_type_json`: the
    /// core data type; `fill_value`: one element's bytes (native byte order).
    #[new]
    fn new(
        codecs_json: &str,
        chunk_shape: Vec<usize>,
        data_type_json: &str,
        fill_value: &[u8],
    ) -> PyResult<Self> {
        let inner = BatchCodec::from_json_text(
            codecs_json,
            chunk_shape,
            data_type_json,
            fill_value.to_vec(),
        )
        .map_err(to_py_err)?;
        Ok(ChunkCodec { inner })
    }

    /// These chunks seen with their axes reversed when `codecs_json` (this
    /// codec's chain) begins by reversing every axis, else None: a batch given
    /// to it with every selection, the buffer's shape and the dropped axes
    /// reversed reads into (writes from) the Fortran-ordered buffer with no
    /// chunk transposed.
    fn fortran(&self, codecs_json: &str) -> PyResult<Option<ChunkCodec>> {
        let codecs: serde_json::Value = serde_json::from_str(codecs_json)
            .map_err(|e| PyValueError::new_err(format!("invalid codecs JSON: {e}")))?;
        let inner = self.inner.fortran(&codecs).map_err(to_py_err)?;
        Ok(inner.map(|inner| ChunkCodec { inner }))
    }

    /// The chunk shape.
    #[getter]
    fn chunk_shape(&self) -> Vec<usize> {
        self.shape().to_vec()
    }

    /// Whether chunks are read in part (shards: the index, then the inner
    /// chunks needed).
    #[getter]
    fn sharded(&self) -> bool {
        self.inner.reads_in_part()
    }

    /// Whether writes update chunks inner chunk by inner chunk (a lone
    /// sharding codec): the old shard is read unless a write covers all of
    /// it, its part past the array's end included.
    #[getter]
    fn writes_in_part(&self) -> bool {
        self.inner.writes_in_part()
    }

    /// Fetch the chunks `keys` of a Rust store and decode their regions into
    /// `out` (a C-contiguous uint8 view of a buffer of shape `out_shape`).
    /// Returns which chunks were present.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (store, keys, chunk_selections, out_selections, out, out_shape, drop_axes=None, generic=None))]
    fn read(
        &self,
        py: Python<'_>,
        store: &StoreHandle,
        keys: Vec<String>,
        chunk_selections: &Bound<'_, PyAny>,
        out_selections: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
        out_shape: Vec<usize>,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Vec<bool>> {
        let zarr = zarr_form(drop_axes, generic.as_ref(), false);
        let tasks = self.tasks(
            keys,
            chunk_selections,
            out_selections,
            &out_shape,
            None,
            zarr,
        )?;
        let buf = self.out_buffer(&mut out, &out_shape)?;
        let s = store.rust()?;
        py.detach(|| pipeline::read_into(&self.inner, s, &tasks, buf))
            .map_err(to_py_err)
    }

    /// `read` for variable-length data: (list of str or bytes in the buffer's
    /// C order, which chunks were present).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (store, keys, chunk_selections, out_selections, out_shape, drop_axes=None, generic=None))]
    fn read_var<'py>(
        &self,
        py: Python<'py>,
        store: &StoreHandle,
        keys: Vec<String>,
        chunk_selections: &Bound<'py, PyAny>,
        out_selections: &Bound<'py, PyAny>,
        out_shape: Vec<usize>,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyList>, Vec<bool>)> {
        let zarr = zarr_form(drop_axes, generic.as_ref(), false);
        let tasks = self.tasks(
            keys,
            chunk_selections,
            out_selections,
            &out_shape,
            None,
            zarr,
        )?;
        let n = out_shape.iter().product();
        let s = store.rust()?;
        let (items, present) = py
            .detach(|| pipeline::read_var(&self.inner, s, &tasks, n))
            .map_err(to_py_err)?;
        Ok((var_list(py, &items, self.utf8())?, present))
    }

    /// A read of `keys` from a store Python reads itself (named `store_name`
    /// in messages) into `out` (C-contiguous uint8 view of shape `out_shape`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (keys, chunk_selections, out_selections, out, out_shape, store_name, drop_axes=None, generic=None))]
    fn read_session(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        chunk_selections: &Bound<'_, PyAny>,
        out_selections: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
        out_shape: Vec<usize>,
        store_name: &str,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'_, PyAny>>,
    ) -> PyResult<ReadSessionHandle> {
        let zarr = zarr_form(drop_axes, generic.as_ref(), false);
        let tasks = self.tasks(
            keys,
            chunk_selections,
            out_selections,
            &out_shape,
            None,
            zarr,
        )?;
        self.out_buffer(&mut out, &out_shape)?;
        let n = out_shape.iter().product();
        let session = py
            .detach(|| self.inner.read_session(tasks, n, store_name))
            .map_err(to_py_err)?;
        ReadSessionHandle::fixed(session, out)
    }

    /// `read_session` for variable-length data (the values: `session.values()`).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (keys, chunk_selections, out_selections, out_shape, store_name, drop_axes=None, generic=None))]
    fn read_session_var(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        chunk_selections: &Bound<'_, PyAny>,
        out_selections: &Bound<'_, PyAny>,
        out_shape: Vec<usize>,
        store_name: &str,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'_, PyAny>>,
    ) -> PyResult<ReadSessionHandle> {
        let zarr = zarr_form(drop_axes, generic.as_ref(), false);
        let tasks = self.tasks(
            keys,
            chunk_selections,
            out_selections,
            &out_shape,
            None,
            zarr,
        )?;
        let n = out_shape.iter().product();
        let session = py
            .detach(|| self.inner.read_session(tasks, n, store_name))
            .map_err(to_py_err)?;
        Ok(ReadSessionHandle::var(session, n, self.utf8()))
    }

    /// Decode encoded chunks (bytes, buffers or None for missing) into their
    /// regions of `out` (a C-contiguous uint8 view of shape `out_shape`).
    #[allow(clippy::too_many_arguments)]
    fn decode(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        encoded: &Bound<'_, PyAny>,
        chunk_selections: &Bound<'_, PyAny>,
        out_selections: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
        out_shape: Vec<usize>,
    ) -> PyResult<()> {
        let tasks = self.tasks(
            keys,
            chunk_selections,
            out_selections,
            &out_shape,
            None,
            None,
        )?;
        let encoded = encoded_chunks(encoded)?;
        let buf = self.out_buffer(&mut out, &out_shape)?;
        py.detach(|| pipeline::decode_into(&self.inner, &tasks, encoded, buf))
            .map_err(to_py_err)
    }

    /// `decode` for variable-length data: a list of str or bytes.
    fn decode_var<'py>(
        &self,
        py: Python<'py>,
        keys: Vec<String>,
        encoded: &Bound<'py, PyAny>,
        chunk_selections: &Bound<'py, PyAny>,
        out_selections: &Bound<'py, PyAny>,
        out_shape: Vec<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let tasks = self.tasks(
            keys,
            chunk_selections,
            out_selections,
            &out_shape,
            None,
            None,
        )?;
        let encoded = encoded_chunks(encoded)?;
        let n = out_shape.iter().product();
        let items = py
            .detach(|| pipeline::decode_var(&self.inner, &tasks, encoded, n))
            .map_err(to_py_err)?;
        var_list(py, &items, self.utf8())
    }

    /// Write the regions of `value` (see `Value`; `value_selections` None for
    /// one broadcast value) over `existing` encoded chunks (None: start from
    /// the fill value) and encode them: a list of bytes, None where the chunk
    /// is all fill value and `write_empty` is false (delete it).
    #[allow(clippy::too_many_arguments)]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        keys: Vec<String>,
        existing: &Bound<'py, PyAny>,
        chunk_selections: &Bound<'py, PyAny>,
        value_selections: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        value_shape: Vec<usize>,
        write_empty: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let tasks = self.tasks(
            keys,
            chunk_selections,
            value_selections,
            &value_shape,
            None,
            None,
        )?;
        let batch = WriteBatch {
            tasks,
            shape: value_shape,
            needs: Vec::new(),
            fortran: false,
        };
        self.encode_batch(py, &batch, existing, value, write_empty)
    }

    /// A write to a store Python writes itself: the chunks `keys`
    /// (`complete`: zarr-python's "the selection covers the chunk"), whose
    /// `needs` say which old chunks to fetch for `encode_batch`.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (keys, complete, chunk_selections, value_selections, value_shape, drop_axes=None, generic=None))]
    fn write_batch(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        complete: Vec<bool>,
        chunk_selections: &Bound<'_, PyAny>,
        value_selections: &Bound<'_, PyAny>,
        value_shape: Vec<usize>,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'_, PyAny>>,
    ) -> PyResult<WriteBatch> {
        let zarr = zarr_form(drop_axes, generic.as_ref(), true);
        let tasks = self.tasks(
            keys,
            chunk_selections,
            value_selections,
            &value_shape,
            Some(&complete),
            zarr,
        )?;
        let needs = py.detach(|| self.inner.needs_old(&tasks));
        Ok(WriteBatch {
            tasks,
            shape: value_shape,
            needs,
            fortran: false,
        })
    }

    /// The new bytes of a write batch's chunks (None: delete) after writing
    /// `value` (see `Value`) over the `old` chunks fetched for `batch.needs`.
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        batch: &WriteBatch,
        old: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        write_empty: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = batch.shape.iter().product();
        encode_with(py, old, value, |old, input| {
            self.inner.encode(&batch.tasks, old, input, n, write_empty)
        })
    }

    /// Read-modify-write the chunks `keys` of a Rust store (`complete`:
    /// zarr-python's "the selection covers the chunk"; the engine decides
    /// which chunks it reads first).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (store, keys, complete, chunk_selections, value_selections, value, value_shape, write_empty, drop_axes=None, generic=None))]
    fn write(
        &self,
        py: Python<'_>,
        store: &StoreHandle,
        keys: Vec<String>,
        complete: Vec<bool>,
        chunk_selections: &Bound<'_, PyAny>,
        value_selections: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        value_shape: Vec<usize>,
        write_empty: bool,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let zarr = zarr_form(drop_axes, generic.as_ref(), true);
        let tasks = self.tasks(
            keys,
            chunk_selections,
            value_selections,
            &value_shape,
            Some(&complete),
            zarr,
        )?;
        let value = Value::extract(value)?;
        let input = value.input()?;
        let n = value_shape.iter().product();
        let s = store.rust()?;
        py.detach(|| self.inner.write(s, &tasks, input, n, write_empty))
            .map_err(to_py_err)
    }
}
