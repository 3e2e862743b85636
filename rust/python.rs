//! PyO3 bindings: argument conversion, GIL release and error mapping. No logic.

use std::sync::Arc;

use numpy::{
    PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1,
    PyUntypedArrayMethods,
};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyEllipsis, PyInt, PyList, PySlice, PySliceMethods, PyString, PyTuple, PyType,
};

use crate::array::{ArrayCore, Input};
use crate::batch::{self, Answers, BatchCodec, ChunkRegion, Request};
use crate::codec::ChunkSpec;
use crate::dtype::{DataKind, DataType};
use crate::error::{Error, ErrorKind};
use crate::indexing::{DimSelection, Selection};
use crate::pool;
use crate::store::{ByteRange, FilesystemStore, MemoryStore, Store};

/// Raise the `zarrox.errors` class that matches the error's kind.
fn to_py_err(e: Error) -> PyErr {
    let class = match e.kind {
        ErrorKind::Metadata => "MetadataError",
        ErrorKind::Unsupported => "UnsupportedError",
        ErrorKind::Corrupt => "CorruptChunkError",
        ErrorKind::Checksum => "ChecksumError",
        ErrorKind::Store => "StoreError",
        ErrorKind::NotFound => "NodeNotFoundError",
        ErrorKind::Index => return PyIndexError::new_err(e.message),
        ErrorKind::Value => return PyValueError::new_err(e.message),
        ErrorKind::Memory => return PyMemoryError::new_err(e.message),
    };
    Python::attach(|py| {
        let cls = py
            .import("zarrox.errors")
            .and_then(|m| m.getattr(class))
            .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
        match cls {
            Ok(cls) => PyErr::from_type(cls, e.message),
            Err(import_error) => import_error,
        }
    })
}

/// A store implemented in Rust (local directory or memory).
#[pyclass(module = "zarrox._core", name = "StoreHandle", frozen)]
pub struct StoreHandle {
    inner: Arc<dyn Store>,
}

#[pymethods]
impl StoreHandle {
    /// A store in the local directory `root`.
    #[staticmethod]
    fn local(root: std::path::PathBuf) -> Self {
        StoreHandle {
            inner: Arc::new(FilesystemStore::new(root)),
        }
    }

    /// A new, empty in-memory store.
    #[staticmethod]
    fn memory() -> Self {
        StoreHandle {
            inner: Arc::new(MemoryStore::new()),
        }
    }

    fn get<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let v = py.detach(|| self.inner.get(key)).map_err(to_py_err)?;
        Ok(v.map(|v| PyBytes::new(py, &v)))
    }

    /// Bytes `[start, start+length)` of `key` (to the end when `length` is None);
    /// a negative `start` with no length means the last `-start` bytes.
    #[pyo3(signature = (key, start, length=None))]
    fn get_range<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        start: i64,
        length: Option<u64>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let range = match (start, length) {
            (s, None) if s < 0 => ByteRange::Suffix(s.unsigned_abs()),
            (s, _) if s < 0 => return Err(PyValueError::new_err("negative start with a length")),
            (s, length) => ByteRange::FromStart {
                offset: s as u64,
                length,
            },
        };
        let v = py
            .detach(|| self.inner.get_ranges(key, &[range]))
            .map_err(to_py_err)?;
        Ok(v.and_then(|mut parts| parts.pop())
            .map(|v| PyBytes::new(py, &v)))
    }

    fn set(&self, py: Python<'_>, key: &str, value: &[u8]) -> PyResult<()> {
        py.detach(|| self.inner.set(key, value)).map_err(to_py_err)
    }

    fn delete(&self, py: Python<'_>, key: &str) -> PyResult<()> {
        py.detach(|| self.inner.delete(key)).map_err(to_py_err)
    }

    fn exists(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        py.detach(|| self.inner.exists(key)).map_err(to_py_err)
    }

    fn list_prefix(&self, py: Python<'_>, prefix: &str) -> PyResult<Vec<String>> {
        py.detach(|| self.inner.list_prefix(prefix))
            .map_err(to_py_err)
    }

    /// (keys, sub-directories) directly under `prefix` ("" or ending in "/").
    fn list_dir(&self, py: Python<'_>, prefix: &str) -> PyResult<(Vec<String>, Vec<String>)> {
        py.detach(|| self.inner.list_dir(prefix)).map_err(to_py_err)
    }

    fn delete_prefix(&self, py: Python<'_>, prefix: &str) -> PyResult<()> {
        py.detach(|| self.inner.delete_prefix(prefix))
            .map_err(to_py_err)
    }
}

/// Convert one dimension: `(start, stop, step)` or a uint64 array of indices.
fn dim_selection(item: &Bound<'_, PyAny>) -> PyResult<DimSelection> {
    if let Ok(t) = item.cast::<PyTuple>() {
        let (start, stop, step): (u64, u64, u64) = t.extract()?;
        return Ok(DimSelection::Slice { start, stop, step });
    }
    if let Ok(arr) = item.extract::<PyReadonlyArray1<u64>>() {
        return Ok(DimSelection::Indices(arr.as_array().to_vec()));
    }
    Err(PyTypeError::new_err(
        "a dimension selection is (start, stop, step) or a uint64 array",
    ))
}

/// A selection: a list of per-dimension selections (orthogonal), or a 2-d
/// uint64 array of point coordinates, one row per point.
fn selection(items: &Bound<'_, PyAny>) -> PyResult<Selection> {
    if let Ok(points) = items.extract::<PyReadonlyArray2<u64>>() {
        let flat = points.as_array().iter().copied().collect();
        return Ok(Selection::Points(flat));
    }
    let dims = items
        .try_iter()?
        .map(|i| dim_selection(&i?))
        .collect::<PyResult<_>>()?;
    Ok(Selection::Orthogonal(dims))
}

/// A plain basic selection of an array of `shape`: Python integers in
/// bounds, slices with a positive step, at most one Ellipsis, no more entries
/// than dimensions. Returns the per-dimension selections and the result shape
/// (integer-indexed dimensions dropped), or None for anything else: numpy
/// integers, arrays, lists, `None`, booleans, negative steps, out-of-bounds
/// integers and too many indices are left to the caller's general path, which
/// also raises the errors.
fn plain_basic(
    selection: &Bound<'_, PyAny>,
    shape: &[u64],
) -> Option<(Vec<DimSelection>, Vec<usize>)> {
    let one;
    let items = match selection.cast::<PyTuple>() {
        Ok(t) => t,
        Err(_) => {
            one = PyTuple::new(selection.py(), [selection]).ok()?;
            &one
        }
    };
    let ellipses = items
        .iter()
        .filter(|i| i.is(PyEllipsis::get(i.py())))
        .count();
    if ellipses > 1 || items.len() - ellipses > shape.len() {
        return None;
    }
    let full = shape.len() - (items.len() - ellipses);
    let mut dims = Vec::with_capacity(shape.len());
    let mut result = Vec::with_capacity(shape.len());
    let slice_all = |dims: &mut Vec<DimSelection>, result: &mut Vec<usize>, n: u64| {
        dims.push(DimSelection::Slice {
            start: 0,
            stop: n,
            step: 1,
        });
        result.push(n as usize);
    };
    for item in items.iter() {
        if item.is(PyEllipsis::get(item.py())) {
            for _ in 0..full {
                let n = shape[dims.len()];
                slice_all(&mut dims, &mut result, n);
            }
            continue;
        }
        let n = shape[dims.len()];
        if let Ok(s) = item.cast::<PySlice>() {
            let (start, stop, step) = forward_slice(s, n as usize).ok()??;
            dims.push(DimSelection::Slice { start, stop, step });
            result.push((stop - start).div_ceil(step) as usize);
        } else if item.cast::<PyInt>().is_ok() && item.cast::<PyBool>().is_err() {
            let i: i64 = item.extract().ok()?;
            let i = if i < 0 {
                i.checked_add(i64::try_from(n).ok()?)?
            } else {
                i
            };
            let i = u64::try_from(i).ok().filter(|&i| i < n)?;
            dims.push(DimSelection::Slice {
                start: i,
                stop: i + 1,
                step: 1,
            });
        } else {
            return None;
        }
    }
    while dims.len() < shape.len() {
        let n = shape[dims.len()];
        slice_all(&mut dims, &mut result, n);
    }
    Some((dims, result))
}

/// A basic read's result: its bytes, and the shape they have.
type BasicRead<'py> = (Bound<'py, PyArray1<u8>>, Vec<usize>);

/// An opened array: reads and writes whole selections in one call.
#[pyclass(module = "zarrox._core", name = "ArrayHandle", frozen)]
pub struct ArrayHandle {
    core: ArrayCore,
}

#[pymethods]
impl ArrayHandle {
    #[new]
    #[pyo3(signature = (store, path, metadata_json, fill_value, write_empty_chunks=false))]
    fn new(
        store: &StoreHandle,
        path: &str,
        metadata_json: &str,
        fill_value: &[u8],
        write_empty_chunks: bool,
    ) -> PyResult<Self> {
        let core = ArrayCore::new(
            Arc::clone(&store.inner),
            path,
            metadata_json,
            fill_value.to_vec(),
            write_empty_chunks,
        )
        .map_err(to_py_err)?;
        Ok(ArrayHandle { core })
    }

    /// Read `selection` into `out`: a C-contiguous uint8 view of the result array.
    fn read(
        &self,
        py: Python<'_>,
        selection_: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
    ) -> PyResult<()> {
        let sel = selection(selection_)?;
        let buf = out_bytes(&mut out)?;
        py.detach(|| self.core.read(&sel, buf)).map_err(to_py_err)
    }

    /// Read a plain basic selection (see `plain_basic`) into a new array:
    /// (its bytes as a uint8 array, the result shape), or None when the
    /// selection is not plain. One call for the common `a[i, j:k, ...]`.
    fn read_basic<'py>(
        &self,
        py: Python<'py>,
        selection_: &Bound<'py, PyAny>,
    ) -> PyResult<Option<BasicRead<'py>>> {
        let Some((dims, result_shape)) = plain_basic(selection_, self.core.shape()) else {
            return Ok(None);
        };
        // integer-indexed dimensions, dropped from the result shape, hold one element
        let elements = result_shape
            .iter()
            .try_fold(1usize, |acc, &n| acc.checked_mul(n));
        let Some(nbytes) = elements.and_then(|n| n.checked_mul(self.core.data_type().size)) else {
            return Err(PyValueError::new_err("the selection is too large"));
        };
        // SAFETY: the array is uninitialised; `read` writes every byte of it
        // (every output element belongs to one chunk's region, filled when the
        // chunk is missing) before it is returned, and on an error the array is
        // dropped unseen. Its memory comes from numpy's allocator, as with
        // `numpy.empty`.
        let out = unsafe { PyArray1::<u8>::new(py, [nbytes], false) };
        {
            let mut rw = out.readwrite();
            let buf = out_bytes(&mut rw)?;
            let sel = Selection::Orthogonal(dims);
            py.detach(|| self.core.read(&sel, buf)).map_err(to_py_err)?;
        }
        Ok(Some((out, result_shape)))
    }

    /// Write `value` (a C-contiguous uint8 view of the selection-shaped data).
    fn write(
        &self,
        py: Python<'_>,
        selection_: &Bound<'_, PyAny>,
        value: PyReadonlyArray1<'_, u8>,
    ) -> PyResult<()> {
        let sel = selection(selection_)?;
        let buf = value_bytes(&value)?;
        py.detach(|| self.core.write(&sel, buf)).map_err(to_py_err)
    }

    /// Write one value to every selected element: `bytes` (one element's bytes
    /// in native byte order, or a variable-length value) or `str` (UTF-8).
    fn write_scalar(
        &self,
        py: Python<'_>,
        selection_: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let sel = selection(selection_)?;
        let one = if let Ok(s) = value.cast::<PyString>() {
            s.to_str()?.as_bytes().to_vec()
        } else {
            value.cast::<PyBytes>()?.as_bytes().to_vec()
        };
        py.detach(|| self.core.write_scalar(&sel, &one))
            .map_err(to_py_err)
    }

    /// Read a selection of a variable-length array: a list of str (string
    /// arrays) or bytes (bytes arrays) in selection order.
    fn read_var<'py>(
        &self,
        py: Python<'py>,
        selection_: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let sel = selection(selection_)?;
        let items = py.detach(|| self.core.read_var(&sel)).map_err(to_py_err)?;
        let utf8 = self.core.data_type().kind == DataKind::String;
        let objects = items.iter().map(|b| -> PyResult<Bound<'py, PyAny>> {
            if utf8 {
                // Validated as UTF-8 when the chunk was split.
                let s = std::str::from_utf8(b)
                    .map_err(|e| PyValueError::new_err(format!("invalid UTF-8: {e}")))?;
                Ok(PyString::new(py, s).into_any())
            } else {
                Ok(PyBytes::new(py, b).into_any())
            }
        });
        PyList::new(py, objects.collect::<PyResult<Vec<_>>>()?)
    }

    /// Write a list of str or bytes (selection order) to a variable-length array.
    fn write_var(
        &self,
        py: Python<'_>,
        selection_: &Bound<'_, PyAny>,
        items: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let sel = selection(selection_)?;
        let values = items
            .try_iter()?
            .map(|item| {
                let item = item?;
                if let Ok(s) = item.cast::<PyString>() {
                    Ok(s.to_str()?.as_bytes().to_vec())
                } else if let Ok(b) = item.cast::<PyBytes>() {
                    Ok(b.as_bytes().to_vec())
                } else {
                    Err(PyTypeError::new_err(format!(
                        "variable-length values must be str or bytes, got {}",
                        item.get_type().name()?
                    )))
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        py.detach(|| self.core.write_var(&sel, &values))
            .map_err(to_py_err)
    }

    /// The store key of the chunk at grid coordinates `coords`.
    fn chunk_key(&self, coords: Vec<u64>) -> String {
        self.core.chunk_key(&coords)
    }

    /// Fetch and decode every stored chunk without placing it anywhere:
    /// (chunks decoded, decoded bytes). The benchmark's floor.
    fn decode_stored_chunks(&self, py: Python<'_>) -> PyResult<(usize, usize)> {
        py.detach(|| self.core.decode_stored_chunks())
            .map_err(to_py_err)
    }

    /// (key, grid coordinates) of every stored chunk (or shard).
    fn stored_chunks(&self, py: Python<'_>) -> PyResult<Vec<(String, Vec<u64>)>> {
        py.detach(|| self.core.stored_chunks()).map_err(to_py_err)
    }
}

/// A slice's `(start, stop, step)` within `extent` as numpy resolves it, with
/// `stop >= start`; None for a step below 1 (zarrox reads forwards only).
fn forward_slice(s: &Bound<'_, PySlice>, extent: usize) -> PyResult<Option<(u64, u64, u64)>> {
    let extent = isize::try_from(extent)
        .map_err(|_| PyValueError::new_err(format!("dimension of {extent} is too long")))?;
    let ind = s.indices(extent)?;
    if ind.step < 1 {
        return Ok(None);
    }
    let start = ind.start.max(0);
    Ok(Some((
        start as u64,
        ind.stop.max(start) as u64,
        ind.step as u64,
    )))
}

/// One dimension of a batch selection within `extent`: `(start, stop, step)`,
/// a slice (positive step), an integer, or a 1-d integer array (negative
/// indices count from the end, as in numpy).
fn batch_dim(item: &Bound<'_, PyAny>, extent: usize) -> PyResult<DimSelection> {
    if let Ok(t) = item.cast::<PyTuple>() {
        let (start, stop, step): (u64, u64, u64) = t.extract()?;
        return Ok(DimSelection::Slice { start, stop, step });
    }
    if let Ok(s) = item.cast::<PySlice>() {
        let Some((start, stop, step)) = forward_slice(s, extent)? else {
            return Err(PyIndexError::new_err(
                "only slices with step >= 1 are supported",
            ));
        };
        return Ok(DimSelection::Slice { start, stop, step });
    }
    if let Ok(arr) = item.extract::<PyReadonlyArray1<u64>>() {
        return Ok(DimSelection::Indices(arr.as_array().to_vec()));
    }
    let wrap = |i: i64| -> PyResult<u64> {
        let j = if i < 0 { i + extent as i64 } else { i };
        u64::try_from(j).map_err(|_| {
            PyIndexError::new_err(format!("index {i} is out of bounds for length {extent}"))
        })
    };
    if let Ok(arr) = item.extract::<PyReadonlyArray1<i64>>() {
        let v = arr
            .as_array()
            .iter()
            .map(|&i| wrap(i))
            .collect::<PyResult<_>>()?;
        return Ok(DimSelection::Indices(v));
    }
    if let Ok(i) = item.extract::<i64>() {
        let i = wrap(i)?;
        return Ok(DimSelection::Slice {
            start: i,
            stop: i + 1,
            step: 1,
        });
    }
    Err(PyTypeError::new_err(format!(
        "a dimension of a batch selection is (start, stop, step), a slice, an integer or an \
         integer array, got {}",
        item.get_type().name()?
    )))
}

/// A 1-d array of non-negative integers (flat indices).
fn flat_indices(item: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    if let Ok(arr) = item.extract::<PyReadonlyArray1<u64>>() {
        return Ok(arr.as_array().to_vec());
    }
    let arr = item.extract::<PyReadonlyArray1<i64>>()?;
    arr.as_array()
        .iter()
        .map(|&i| u64::try_from(i).map_err(|_| PyIndexError::new_err("negative flat index")))
        .collect()
}

/// One chunk's region: `chunk` is a list (one selection per chunk dimension)
/// or a 1-d array of flat chunk indices (points); `buffer` is, likewise, a
/// list (one entry per chunk dimension: a selection of the next buffer
/// dimension, or None where the chunk dimension has none) or a 1-d array of
/// flat buffer indices; `None` for a write of one broadcast value.
fn chunk_region(
    chunk: &Bound<'_, PyAny>,
    buffer: &Bound<'_, PyAny>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
) -> PyResult<ChunkRegion> {
    let is_list = chunk.cast::<PyList>().is_ok() || chunk.cast::<PyTuple>().is_ok();
    let region = if is_list {
        let dims = chunk
            .try_iter()?
            .zip(chunk_shape.iter().chain(std::iter::repeat(&0)))
            .map(|(item, &extent)| batch_dim(&item?, extent))
            .collect::<PyResult<Vec<_>>>()?;
        if buffer.is_none() {
            ChunkRegion::chunk_only(&dims, chunk_shape)
        } else {
            let mut extents = buffer_shape.iter();
            let bufs = buffer
                .try_iter()?
                .map(|item| {
                    let item = item?;
                    if item.is_none() {
                        Ok(None)
                    } else {
                        batch_dim(&item, extents.next().copied().unwrap_or(0)).map(Some)
                    }
                })
                .collect::<PyResult<Vec<_>>>()?;
            ChunkRegion::boxed(&dims, &bufs, chunk_shape, buffer_shape)
        }
    } else {
        let points = flat_indices(chunk)?;
        let buf = if buffer.is_none() {
            None
        } else {
            Some(flat_indices(buffer)?)
        };
        ChunkRegion::points(&points, buf.as_deref(), chunk_shape, buffer_shape)
    };
    region.map_err(to_py_err)
}

/// The length of `item` if it is a slice of step 1 (or None) within `extent`.
fn unit_slice_len(item: &Bound<'_, PyAny>, extent: usize) -> Option<u64> {
    let (start, stop, step) = forward_slice(item.cast::<PySlice>().ok()?, extent).ok()??;
    (step == 1).then_some(stop - start)
}

/// Whether every chunk selection of a batch and its buffer selection are
/// tuples of one unit-step slice per dimension, of equal lengths: the
/// pipeline then passes zarr-python's selections through unchanged.
#[pyfunction]
fn plain_slice_regions(
    chunks: &Bound<'_, PyList>,
    buffers: &Bound<'_, PyList>,
    chunk_shape: Vec<usize>,
    buffer_shape: Vec<usize>,
) -> bool {
    if chunks.len() != buffers.len() || chunk_shape.len() != buffer_shape.len() {
        return false;
    }
    chunks.iter().zip(buffers.iter()).all(|(c, b)| {
        let (Ok(c), Ok(b)) = (c.cast::<PyTuple>(), b.cast::<PyTuple>()) else {
            return false;
        };
        c.len() == chunk_shape.len()
            && b.len() == buffer_shape.len()
            && c.iter()
                .zip(b.iter())
                .zip(chunk_shape.iter().zip(&buffer_shape))
                .all(|((c, b), (&ce, &be))| {
                    matches!(
                        (unit_slice_len(&c, ce), unit_slice_len(&b, be)),
                        (Some(x), Some(y)) if x == y
                    )
                })
    })
}

/// The regions of a batch (`buffers` None: writes of one broadcast value).
fn chunk_regions(
    chunks: &Bound<'_, PyAny>,
    buffers: &Bound<'_, PyAny>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
) -> PyResult<Vec<ChunkRegion>> {
    let chunks: Vec<Bound<'_, PyAny>> = chunks.try_iter()?.collect::<PyResult<_>>()?;
    if buffers.is_none() {
        let none = buffers.clone();
        return chunks
            .iter()
            .map(|c| chunk_region(c, &none, chunk_shape, buffer_shape))
            .collect();
    }
    let buffers: Vec<Bound<'_, PyAny>> = buffers.try_iter()?.collect::<PyResult<_>>()?;
    if chunks.len() != buffers.len() {
        return Err(PyValueError::new_err(format!(
            "{} chunk selections but {} buffer selections",
            chunks.len(),
            buffers.len()
        )));
    }
    chunks
        .iter()
        .zip(&buffers)
        .map(|(c, b)| chunk_region(c, b, chunk_shape, buffer_shape))
        .collect()
}

/// A list of encoded chunks: bytes, any object with the buffer protocol, or None.
fn encoded_chunks(items: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Vec<u8>>>> {
    let py = items.py();
    items
        .try_iter()?
        .map(|item| {
            let item = item?;
            if item.is_none() {
                Ok(None)
            } else if let Ok(b) = item.cast::<PyBytes>() {
                Ok(Some(b.as_bytes().to_vec()))
            } else {
                Ok(Some(PyBuffer::<u8>::get(&item)?.to_vec(py)?))
            }
        })
        .collect()
}

/// The value of a batch write: a C-contiguous uint8 array (fixed-size
/// elements), a list of str/bytes (variable-length elements), or one
/// element's bytes or str broadcast to every selected element.
enum Value<'py> {
    Fixed(PyReadonlyArray1<'py, u8>),
    Var(Vec<Vec<u8>>),
    Scalar(Vec<u8>),
}

impl<'py> Value<'py> {
    fn extract(value: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(b) = value.cast::<PyBytes>() {
            return Ok(Value::Scalar(b.as_bytes().to_vec()));
        }
        if let Ok(s) = value.cast::<PyString>() {
            return Ok(Value::Scalar(s.to_str()?.as_bytes().to_vec()));
        }
        if let Ok(arr) = value.extract::<PyReadonlyArray1<'py, u8>>() {
            value_bytes(&arr)?;
            return Ok(Value::Fixed(arr));
        }
        Ok(Value::Var(var_items(value)?))
    }

    fn input(&self) -> PyResult<Input<'_>> {
        Ok(match self {
            Value::Fixed(arr) => Input::Fixed(value_bytes(arr)?),
            Value::Var(items) => Input::Var(items),
            Value::Scalar(one) => Input::Scalar(one),
        })
    }
}

/// A list of str or bytes as their bytes.
fn var_items(items: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    items
        .try_iter()?
        .map(|item| {
            let item = item?;
            if let Ok(s) = item.cast::<PyString>() {
                Ok(s.to_str()?.as_bytes().to_vec())
            } else if let Ok(b) = item.cast::<PyBytes>() {
                Ok(b.as_bytes().to_vec())
            } else {
                Err(PyTypeError::new_err(format!(
                    "variable-length values must be str or bytes, got {}",
                    item.get_type().name()?
                )))
            }
        })
        .collect()
}

/// A byte request as Python sees it: `("whole",)`, `("range", offset, length or None)` or
/// `("suffix", n)`.
fn request_tuple<'py>(py: Python<'py>, r: &Request) -> PyResult<Bound<'py, PyTuple>> {
    match r {
        Request::Whole => PyTuple::new(py, ["whole"]),
        Request::Range(ByteRange::FromStart { offset, length }) => {
            ("range", *offset, *length).into_pyobject(py)
        }
        Request::Range(ByteRange::Suffix(n)) => ("suffix", *n).into_pyobject(py),
    }
}

fn request(item: &Bound<'_, PyAny>) -> PyResult<Request> {
    let kind: String = item.get_item(0)?.extract()?;
    match kind.as_str() {
        "whole" => Ok(Request::Whole),
        "range" => Ok(Request::Range(ByteRange::FromStart {
            offset: item.get_item(1)?.extract()?,
            length: item.get_item(2)?.extract()?,
        })),
        "suffix" => Ok(Request::Range(ByteRange::Suffix(
            item.get_item(1)?.extract()?,
        ))),
        other => Err(PyValueError::new_err(format!(
            "unknown byte request {other:?}"
        ))),
    }
}

/// Per chunk, the (request, bytes or None) pairs fetched so far.
fn answers(items: &Bound<'_, PyAny>) -> PyResult<Vec<Answers>> {
    let py = items.py();
    items
        .try_iter()?
        .map(|chunk| {
            chunk?
                .try_iter()?
                .map(|pair| {
                    let pair = pair?;
                    let r = request(&pair.get_item(0)?)?;
                    let value = pair.get_item(1)?;
                    let bytes = if value.is_none() {
                        None
                    } else if let Ok(b) = value.cast::<PyBytes>() {
                        Some(b.as_bytes().to_vec())
                    } else {
                        Some(PyBuffer::<u8>::get(&value)?.to_vec(py)?)
                    };
                    Ok((r, bytes))
                })
                .collect()
        })
        .collect()
}

/// Variable-length elements as a list of str (`utf8`) or bytes.
fn var_list<'py>(py: Python<'py>, items: &[Vec<u8>], utf8: bool) -> PyResult<Bound<'py, PyList>> {
    let objects = items.iter().map(|b| -> PyResult<Bound<'py, PyAny>> {
        if utf8 {
            let s = std::str::from_utf8(b)
                .map_err(|e| PyValueError::new_err(format!("invalid UTF-8: {e}")))?;
            Ok(PyString::new(py, s).into_any())
        } else {
            Ok(PyBytes::new(py, b).into_any())
        }
    });
    PyList::new(py, objects.collect::<PyResult<Vec<_>>>()?)
}

/// The codec chain of one kind of chunk (shape, data type, fill value), with
/// batch reads and writes of chunks whose regions the caller has projected
/// (zarr-python's codec pipeline). Every call handles the whole batch on the
/// thread pool with the GIL released.
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
}

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
        let parse = |s: &str, what: &str| {
            serde_json::from_str::<serde_json::Value>(s)
                .map_err(|e| crate::error::Error::metadata(format!("invalid {what} JSON: {e}")))
        };
        let build = || {
            let dtype = DataType::from_json(&parse(data_type_json, "data type")?)?;
            let spec = ChunkSpec {
                shape: chunk_shape,
                dtype,
                fill: fill_value.to_vec(),
            };
            BatchCodec::new(&parse(codecs_json, "codecs")?, spec)
        };
        Ok(ChunkCodec {
            inner: build().map_err(to_py_err)?,
        })
    }

    /// The chunk shape.
    #[getter]
    fn chunk_shape(&self) -> Vec<usize> {
        self.shape().to_vec()
    }

    /// Whether chunks are shards (read inner chunk by inner chunk).
    #[getter]
    fn sharded(&self) -> bool {
        self.inner.is_sharded()
    }

    /// For a store the caller reads itself: per chunk, the byte requests its
    /// region still needs given `answers` (per chunk, the `(request, bytes or
    /// None)` fetched so far); empty lists once `decode_answers` can run.
    fn requests<'py>(
        &self,
        py: Python<'py>,
        keys: Vec<String>,
        answers_so_far: &Bound<'py, PyAny>,
        chunk_selections: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Vec<Bound<'py, PyTuple>>>> {
        let none = py.None().into_bound(py);
        let regions = chunk_regions(chunk_selections, &none, self.shape(), &[])?;
        let answers = answers(answers_so_far)?;
        let needed = py
            .detach(|| self.inner.requests(&keys, &answers, &regions))
            .map_err(to_py_err)?;
        needed
            .iter()
            .map(|rs| rs.iter().map(|r| request_tuple(py, r)).collect())
            .collect()
    }

    /// Decode the regions from the answers to `requests` into `out` (a
    /// C-contiguous uint8 view of shape `out_shape`); which chunks were present.
    #[allow(clippy::too_many_arguments)]
    fn decode_answers(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        answers_fetched: &Bound<'_, PyAny>,
        chunk_selections: &Bound<'_, PyAny>,
        out_selections: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
        out_shape: Vec<usize>,
    ) -> PyResult<Vec<bool>> {
        let regions = chunk_regions(chunk_selections, out_selections, self.shape(), &out_shape)?;
        let answers = answers(answers_fetched)?;
        let buf = self.out_buffer(&mut out, &out_shape)?;
        py.detach(|| batch::decode_answers_into(&self.inner, &keys, &answers, &regions, buf))
            .map_err(to_py_err)
    }

    /// `decode_answers` for variable-length data: (list of str or bytes,
    /// which chunks were present).
    fn decode_answers_var<'py>(
        &self,
        py: Python<'py>,
        keys: Vec<String>,
        answers_fetched: &Bound<'py, PyAny>,
        chunk_selections: &Bound<'py, PyAny>,
        out_selections: &Bound<'py, PyAny>,
        out_shape: Vec<usize>,
    ) -> PyResult<(Bound<'py, PyList>, Vec<bool>)> {
        let regions = chunk_regions(chunk_selections, out_selections, self.shape(), &out_shape)?;
        let answers = answers(answers_fetched)?;
        let n = out_shape.iter().product();
        let (items, present) = py
            .detach(|| batch::decode_answers_var(&self.inner, &keys, &answers, &regions, n))
            .map_err(to_py_err)?;
        Ok((var_list(py, &items, self.utf8())?, present))
    }

    /// Fetch the chunks `keys` of a Rust store and decode their regions into
    /// `out` (a C-contiguous uint8 view of a buffer of shape `out_shape`).
    /// Returns which chunks were present.
    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        py: Python<'_>,
        store: &StoreHandle,
        keys: Vec<String>,
        chunk_selections: &Bound<'_, PyAny>,
        out_selections: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
        out_shape: Vec<usize>,
    ) -> PyResult<Vec<bool>> {
        let regions = chunk_regions(chunk_selections, out_selections, self.shape(), &out_shape)?;
        let buf = self.out_buffer(&mut out, &out_shape)?;
        py.detach(|| batch::read_into(&self.inner, store.inner.as_ref(), &keys, &regions, buf))
            .map_err(to_py_err)
    }

    /// `read` for variable-length data: (list of str or bytes in the buffer's
    /// C order, which chunks were present).
    fn read_var<'py>(
        &self,
        py: Python<'py>,
        store: &StoreHandle,
        keys: Vec<String>,
        chunk_selections: &Bound<'py, PyAny>,
        out_selections: &Bound<'py, PyAny>,
        out_shape: Vec<usize>,
    ) -> PyResult<(Bound<'py, PyList>, Vec<bool>)> {
        let regions = chunk_regions(chunk_selections, out_selections, self.shape(), &out_shape)?;
        let n = out_shape.iter().product();
        let (items, present) = py
            .detach(|| batch::read_var(&self.inner, store.inner.as_ref(), &keys, &regions, n))
            .map_err(to_py_err)?;
        Ok((var_list(py, &items, self.utf8())?, present))
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
        let regions = chunk_regions(chunk_selections, out_selections, self.shape(), &out_shape)?;
        let encoded = encoded_chunks(encoded)?;
        let buf = self.out_buffer(&mut out, &out_shape)?;
        py.detach(|| batch::decode_into(&self.inner, &keys, encoded, &regions, buf))
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
        let regions = chunk_regions(chunk_selections, out_selections, self.shape(), &out_shape)?;
        let encoded = encoded_chunks(encoded)?;
        let n = out_shape.iter().product();
        let items = py
            .detach(|| batch::decode_var(&self.inner, &keys, encoded, &regions, n))
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
        let regions = chunk_regions(
            chunk_selections,
            value_selections,
            self.shape(),
            &value_shape,
        )?;
        let existing = encoded_chunks(existing)?;
        let value = Value::extract(value)?;
        let input = value.input()?;
        let n = value_shape.iter().product();
        let encoded = py
            .detach(|| {
                self.inner
                    .encode(&keys, existing, &regions, input, n, write_empty)
            })
            .map_err(to_py_err)?;
        let objects = encoded
            .iter()
            .map(|e| e.as_ref().map(|b| PyBytes::new(py, b)));
        PyList::new(py, objects)
    }

    /// Read-modify-write the chunks `keys` of a Rust store (`complete`: the
    /// chunks a region covers, not read first).
    #[allow(clippy::too_many_arguments)]
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
    ) -> PyResult<()> {
        let regions = chunk_regions(
            chunk_selections,
            value_selections,
            self.shape(),
            &value_shape,
        )?;
        let value = Value::extract(value)?;
        let input = value.input()?;
        let n = value_shape.iter().product();
        py.detach(|| {
            self.inner.write(
                store.inner.as_ref(),
                &keys,
                &complete,
                &regions,
                input,
                n,
                write_empty,
            )
        })
        .map_err(to_py_err)
    }
}

impl ChunkCodec {
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

/// The bytes of a uint8 output array (a C-contiguous view of the result).
fn out_bytes<'a>(out: &'a mut PyReadwriteArray1<'_, u8>) -> PyResult<&'a mut [u8]> {
    out.as_slice_mut()
        .map_err(|_| PyValueError::new_err("output buffer must be contiguous"))
}

/// The bytes of a uint8 value array (a C-contiguous view of the data to write).
fn value_bytes<'a>(value: &'a PyReadonlyArray1<'_, u8>) -> PyResult<&'a [u8]> {
    value
        .as_slice()
        .map_err(|_| PyValueError::new_err("value buffer must be contiguous"))
}

/// Set the number of worker threads (0: one per core).
#[pyfunction]
fn set_num_threads(n: usize) {
    pool::set_num_threads(n);
}

/// The number of worker threads batches use.
#[pyfunction]
fn get_num_threads() -> usize {
    pool::num_threads()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StoreHandle>()?;
    m.add_class::<ArrayHandle>()?;
    m.add_class::<ChunkCodec>()?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(plain_slice_regions, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
