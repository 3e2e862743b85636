//! PyO3 bindings: argument conversion, GIL release and error mapping. No logic.

use std::sync::Arc;

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};

use crate::array::ArrayCore;
use crate::dtype::DataKind;
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
        let buf = out
            .as_slice_mut()
            .map_err(|_| PyValueError::new_err("output buffer must be contiguous"))?;
        py.detach(|| self.core.read(&sel, buf)).map_err(to_py_err)
    }

    /// Write `value` (a C-contiguous uint8 view of the selection-shaped data).
    fn write(
        &self,
        py: Python<'_>,
        selection_: &Bound<'_, PyAny>,
        value: PyReadonlyArray1<'_, u8>,
    ) -> PyResult<()> {
        let sel = selection(selection_)?;
        if !value.is_c_contiguous() {
            return Err(PyValueError::new_err("value buffer must be contiguous"));
        }
        let buf = value
            .as_slice()
            .map_err(|_| PyValueError::new_err("value buffer must be contiguous"))?;
        py.detach(|| self.core.write(&sel, buf)).map_err(to_py_err)
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
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
