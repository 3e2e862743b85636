//! The codec chain of one kind of chunk, for zarr-python's codec pipeline.

use numpy::{PyArray1, PyArrayMethods, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::awaitable::{
    awaitable, held_destination, held_input, read_result, rust_store, write_result,
};
use super::batch_io::{read_done, write_done, ChunkSource};
use super::buffers::{destination, out_bytes, Value};
use super::selection::{chunk_regions, Zarr};
use super::stores::StoreHandle;
use super::to_py_err;
use crate::batch::{Batch, MemoryOrder};
use crate::dtype::DataKind;
use crate::pipeline::ChunkCodec as BatchCodec;

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

    /// The batch of the chunks `keys` whose regions are `(chunks, buffers)`
    /// (inside them, and inside the buffer of `shape`), in zarr-python's form
    /// when `drop_axes` is given (with `generic`); a write's (`complete` given)
    /// when zarr-python's "the selection covers the chunk" comes with them;
    /// over a buffer in `order`, and the order it runs in (see
    /// [`BatchCodec::batch_in`]).
    fn batch(
        &self,
        keys: Vec<String>,
        (chunks, buffers): (&Bound<'_, PyAny>, &Bound<'_, PyAny>),
        shape: Vec<usize>,
        complete: Option<&[bool]>,
        (drop_axes, generic): (Option<Vec<usize>>, Option<&Bound<'_, PyAny>>),
        order: MemoryOrder,
    ) -> PyResult<(Batch, MemoryOrder)> {
        let zarr = drop_axes.map(|drop_axes| Zarr {
            drop_axes,
            generic,
            writing: complete.is_some(),
        });
        let chunk_shape = &self.inner.spec().shape;
        let regions = chunk_regions(chunks, buffers, chunk_shape, &shape, zarr.as_ref())?;
        let tasks = BatchCodec::tasks(keys, regions, complete).map_err(to_py_err)?;
        Ok(self.inner.batch_in(tasks, shape, order))
    }

    /// `value` (a uint8 view of a Fortran-ordered buffer of `shape`'s memory)
    /// copied to C order, on the worker threads; one value broadcast as is.
    fn c_ordered<'py>(
        &self,
        value: &Bound<'py, PyAny>,
        shape: &[usize],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = value.py();
        let Value::Fixed(src) = Value::extract(value)? else {
            if value.cast::<PyList>().is_ok() {
                return Err(PyValueError::new_err(
                    "memory order \"F\" takes a buffer of fixed-size elements",
                ));
            }
            return Ok(value.clone());
        };
        let src = src
            .as_slice()
            .map_err(|_| PyValueError::new_err("value buffer must be contiguous"))?;
        let dst = PyArray1::<u8>::zeros(py, src.len(), false);
        {
            let mut dst_rw = dst.readwrite();
            let dst_bytes = out_bytes(&mut dst_rw)?;
            let itemsize = self.inner.spec().dtype.size;
            py.detach(|| crate::order::fortran_to_c(src, dst_bytes, shape, itemsize))
                .map_err(to_py_err)?;
        }
        Ok(dst.into_any())
    }
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

    /// Whether the chunks are stored in Fortran order (a chain that begins by
    /// reversing every axis): then `read` and `write` take `order="F"` for
    /// batches of slices and integers with no dropped axes, no chunk
    /// transposed.
    #[getter]
    fn fortran_chunks(&self) -> bool {
        self.inner.fortran().is_some()
    }

    /// The chunk shape.
    #[getter]
    fn chunk_shape(&self) -> Vec<usize> {
        self.inner.spec().shape.clone()
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

    /// Read the chunks `keys` into their regions of `out` (a C-contiguous
    /// uint8 view of a buffer of shape `out_shape`), or (`out` None) of a list
    /// of variable-length values in the buffer's C order. `chunks`: a
    /// `StoreHandle` Rust reads, the name of a store Python reads (or a
    /// `StoreHandle.caller`), or a list of the encoded chunks (bytes, buffers,
    /// None: missing). Returns which chunks exist, (the values as str or
    /// bytes, which chunks exist), or the session that reads a store Python
    /// reads.
    ///
    /// `order="F"`: `out` is the memory of a Fortran-ordered buffer of shape
    /// `out_shape` (its transpose's C-contiguous view), and the selections are
    /// as for a C-ordered one; the chunks' bytes go to it with no chunk
    /// transposed. Returns None, having read nothing, when the batch cannot be
    /// read that way (chunks not stored in Fortran order, see `fortran_chunks`;
    /// selections that are not boxes, such as points or mixed index arrays):
    /// the caller reads into a C-ordered buffer instead.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (chunks, keys, chunk_selections, out_selections, out, out_shape, drop_axes=None, generic=None, order="C"))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        chunks: &Bound<'py, PyAny>,
        keys: Vec<String>,
        chunk_selections: &Bound<'py, PyAny>,
        out_selections: &Bound<'py, PyAny>,
        mut out: Option<PyReadwriteArray1<'py, u8>>,
        out_shape: Vec<usize>,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'py, PyAny>>,
        order: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let order = MemoryOrder::parse(order).map_err(to_py_err)?;
        let regions = (chunk_selections, out_selections);
        let zarr = (drop_axes, generic.as_ref());
        let (batch, runs_in) = self.batch(keys, regions, out_shape, None, zarr, order)?;
        if runs_in != order {
            return Ok(None); // read nothing: the caller reads in C order
        }
        let mut source = ChunkSource::extract(chunks)?;
        let done = {
            let into = destination(out.as_mut())?;
            let chunks = source.chunks();
            py.detach(|| batch.read(chunks, into)).map_err(to_py_err)?
        };
        read_done(py, done, out, self.utf8()).map(Some)
    }

    /// Write the regions of `value` (a C-contiguous uint8 view of a buffer of
    /// shape `value_shape`, a list of str or bytes in its C order, or with
    /// `value_selections` None one element's bytes or str broadcast) to the
    /// chunks `keys` (`complete`: zarr-python's "the selection covers the
    /// chunk"). `chunks`: a `StoreHandle` Rust reads and writes (the engine
    /// decides which old chunks it reads; returns None), the name of a store
    /// Python writes (returns the pending write: `WriteBatch`), or a list of
    /// the old encoded chunks (None: start from the fill value; returns the
    /// new bytes, None where a chunk is all fill value and not `write_empty`).
    ///
    /// `order="F"`: `value` (when not one element broadcast) is the memory of
    /// a Fortran-ordered buffer of shape `value_shape` (its transpose's
    /// C-contiguous view), and the selections are as for a C-ordered one. Its
    /// bytes go to the chunks with no chunk transposed when the batch can be
    /// written that way (see `fortran_chunks`), else the value is copied to C
    /// order first (a list of variable-length values is refused).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (chunks, keys, complete, chunk_selections, value_selections, value, value_shape, write_empty, drop_axes=None, generic=None, order="C"))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        chunks: &Bound<'py, PyAny>,
        keys: Vec<String>,
        complete: Vec<bool>,
        chunk_selections: &Bound<'py, PyAny>,
        value_selections: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        value_shape: Vec<usize>,
        write_empty: bool,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'py, PyAny>>,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let order = MemoryOrder::parse(order).map_err(to_py_err)?;
        let regions = (chunk_selections, value_selections);
        let zarr = (drop_axes, generic.as_ref());
        let shape = value_shape.clone();
        let (batch, runs_in) = self.batch(keys, regions, shape, Some(&complete), zarr, order)?;
        let value = if runs_in == order {
            value.clone()
        } else {
            // "F" refused: the value copied to C order
            self.c_ordered(value, &value_shape)?
        };
        let mut source = ChunkSource::extract(chunks)?;
        let extracted = Value::extract(&value)?;
        let input = extracted.input()?;
        let done = {
            let chunks = source.chunks();
            let batch = batch.write_empty(write_empty);
            py.detach(|| batch.write(chunks, input))
                .map_err(to_py_err)?
        };
        write_done(py, done, &value)
    }

    /// `read` from a store Rust reads (`chunks`: a `StoreHandle`) as an
    /// awaitable: an `asyncio.Future` of the running loop that the engine
    /// completes with what `read` returns (no Python thread waits), or None
    /// at once where `read` returns None. `out` is held until the future is
    /// done and must not be used meanwhile. Cancelling the future cancels the
    /// read.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (chunks, keys, chunk_selections, out_selections, out, out_shape, drop_axes=None, generic=None, order="C"))]
    fn read_async<'py>(
        &self,
        py: Python<'py>,
        chunks: &Bound<'py, StoreHandle>,
        keys: Vec<String>,
        chunk_selections: &Bound<'py, PyAny>,
        out_selections: &Bound<'py, PyAny>,
        out: Option<PyReadwriteArray1<'py, u8>>,
        out_shape: Vec<usize>,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'py, PyAny>>,
        order: &str,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let order = MemoryOrder::parse(order).map_err(to_py_err)?;
        let store = rust_store(
            chunks.get().inner.clone(),
            "awaitable reads need a store Rust reads",
        )?;
        let regions = (chunk_selections, out_selections);
        let zarr = (drop_axes, generic.as_ref());
        let (batch, runs_in) = self.batch(keys, regions, out_shape, None, zarr, order)?;
        if runs_in != order {
            return Ok(None); // read nothing: the caller reads in C order
        }
        let into = held_destination(out)?;
        let utf8 = self.utf8();
        awaitable(py, batch.read_async(store, into), move |py, done| {
            read_result(py, done, utf8)
        })
        .map(Some)
    }

    /// `write` to a store Rust writes (`chunks`: a `StoreHandle`) as an
    /// awaitable resolving to None (see `read_async`); the value's buffer is
    /// held until it is done. Cancelled part way, the chunks already stored
    /// stay written.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (chunks, keys, complete, chunk_selections, value_selections, value, value_shape, write_empty, drop_axes=None, generic=None, order="C"))]
    fn write_async<'py>(
        &self,
        py: Python<'py>,
        chunks: &Bound<'py, StoreHandle>,
        keys: Vec<String>,
        complete: Vec<bool>,
        chunk_selections: &Bound<'py, PyAny>,
        value_selections: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        value_shape: Vec<usize>,
        write_empty: bool,
        drop_axes: Option<Vec<usize>>,
        generic: Option<Bound<'py, PyAny>>,
        order: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let order = MemoryOrder::parse(order).map_err(to_py_err)?;
        let store = rust_store(
            chunks.get().inner.clone(),
            "awaitable writes need a store Rust writes",
        )?;
        let regions = (chunk_selections, value_selections);
        let zarr = (drop_axes, generic.as_ref());
        let shape = value_shape.clone();
        let (batch, runs_in) = self.batch(keys, regions, shape, Some(&complete), zarr, order)?;
        let value = if runs_in == order {
            value.clone()
        } else {
            // "F" refused: the value copied to C order
            self.c_ordered(value, &value_shape)?
        };
        let input = held_input(&value)?;
        let batch = batch.write_empty(write_empty);
        awaitable(py, batch.write_async(store, input), write_result)
    }
}
