//! PyO3 bindings: argument conversion, GIL release and error mapping. No logic.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use numpy::{
    PyArray1, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1, PyReadonlyArrayDyn,
    PyReadwriteArray1, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyDict, PyEllipsis, PyInt, PyList, PySlice, PyString, PyTuple, PyType,
};

use crate::array::{ArrayCore, StoreRef};
use crate::dtype::DataKind;
use crate::engine::session::ReadSession;
use crate::engine::{ChunkRegion, ChunkTask, Input, OutView, Output};
use crate::error::{Error, ErrorKind};
use crate::grid::DimGrid;
use crate::pipeline::{self, ChunkCodec as BatchCodec};
use crate::pool;
use crate::selection::{self, ArrayValues, Explicit, IndexArray, Ints, Key, Normalized};
use crate::store::caller::{Arg, Request};
use crate::store::{self, ByteRange, FilesystemStore, MemoryStore, ObjectStore, Store, ZipStore};

/// Raise the `zarrox.errors` class that matches the error's kind.
pub(crate) fn to_py_err(e: Error) -> PyErr {
    let class = match e.kind {
        ErrorKind::Metadata => "MetadataError",
        ErrorKind::Unsupported => "UnsupportedError",
        ErrorKind::Corrupt => "CorruptChunkError",
        ErrorKind::Checksum => "ChecksumError",
        ErrorKind::Store => "StoreError",
        ErrorKind::Permission => "StorePermissionError",
        ErrorKind::Timeout => "StoreTimeoutError",
        ErrorKind::NotFound => "NodeNotFoundError",
        ErrorKind::Bounds => "BoundsCheckError",
        ErrorKind::NegativeStep => "NegativeStepError",
        ErrorKind::InvalidSelection => "VindexInvalidSelectionError",
        ErrorKind::Index => return PyIndexError::new_err(e.message),
        ErrorKind::Type => return PyTypeError::new_err(e.message),
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

/// A Python `bytes` object seen as [`Bytes`] without a copy: the object is
/// immutable and kept alive by the reference.
struct PyBytesOwner {
    _object: Py<PyBytes>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the pointer is into the immutable buffer of a `bytes` object that
// `_object` keeps alive; reading it needs no GIL, and dropping a `Py` without
// the GIL only defers the reference count's decrement (pyo3 queues it).
unsafe impl Send for PyBytesOwner {}

impl AsRef<[u8]> for PyBytesOwner {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: see the `Send` comment; `ptr` and `len` came from the object.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Bytes from Python: `bytes` without a copy, any other object with the
/// buffer protocol copied once.
fn bytes_of(item: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(b) = item.cast::<PyBytes>() {
        let data = b.as_bytes();
        return Ok(Bytes::from_owner(PyBytesOwner {
            ptr: data.as_ptr(),
            len: data.len(),
            _object: b.clone().unbind(),
        }));
    }
    Ok(Bytes::from(PyBuffer::<u8>::get(item)?.to_vec(item.py())?))
}

/// A list of encoded chunks: bytes, any object with the buffer protocol, or None.
fn encoded_chunks(items: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Bytes>>> {
    items
        .try_iter()?
        .map(|item| {
            let item = item?;
            if item.is_none() {
                Ok(None)
            } else {
                bytes_of(&item).map(Some)
            }
        })
        .collect()
}

/// A store implemented in Rust (or, `caller`, one the Python layer reads itself).
#[pyclass(module = "zarrox._core", name = "StoreHandle", frozen)]
pub struct StoreHandle {
    inner: StoreRef,
    /// A local store's root and fsync setting.
    local: Option<(std::path::PathBuf, bool)>,
}

impl StoreHandle {
    fn with_local(mut self, root: std::path::PathBuf, fsync: bool) -> Self {
        self.local = Some((root, fsync));
        self
    }

    fn rust(&self) -> PyResult<&dyn Store> {
        match &self.inner {
            StoreRef::Rust(s) => Ok(s.as_ref()),
            StoreRef::Caller(name) => Err(PyValueError::new_err(format!(
                "the store {name} is read and written by Python"
            ))),
        }
    }

    fn run<T: Send>(
        &self,
        py: Python<'_>,
        op: impl FnOnce(&dyn Store) -> crate::error::Result<T> + Send,
    ) -> PyResult<T> {
        let s = self.rust()?;
        py.detach(|| op(s)).map_err(to_py_err)
    }
}

fn wrap(store: impl Store + 'static) -> StoreHandle {
    StoreHandle {
        inner: StoreRef::Rust(Arc::new(store)),
        local: None,
    }
}

#[pymethods]
impl StoreHandle {
    /// A store in the local directory `root`; `fsync`: every write is synced
    /// to disk (file and directory) before it returns.
    #[staticmethod]
    #[pyo3(signature = (root, fsync=false))]
    fn local(root: std::path::PathBuf, fsync: bool) -> Self {
        wrap(FilesystemStore::new(root.clone()).with_fsync(fsync)).with_local(root, fsync)
    }

    /// Remove the temporary files of writers that died mid-write (their
    /// process is gone, or they are older than `older_than` seconds) from a
    /// local store; how many.
    fn remove_temporaries(&self, py: Python<'_>, older_than: f64) -> PyResult<usize> {
        let Some((root, fsync)) = &self.local else {
            return Err(PyValueError::new_err(
                "only a local store has temporary files",
            ));
        };
        let age = std::time::Duration::try_from_secs_f64(older_than.max(0.0))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let store = FilesystemStore::new(root.clone()).with_fsync(*fsync);
        py.detach(|| store.remove_temporaries(age))
            .map_err(to_py_err)
    }

    /// A new, empty in-memory store.
    #[staticmethod]
    fn memory() -> Self {
        wrap(MemoryStore::new())
    }

    /// The zip archive at `path`, opened with `mode` ('r', 'w', 'a' or 'x').
    #[staticmethod]
    fn zip(py: Python<'_>, path: std::path::PathBuf, mode: &str) -> PyResult<Self> {
        py.detach(|| ZipStore::open(path, mode))
            .map(wrap)
            .map_err(to_py_err)
    }

    /// An object store at `url` (s3://, gs://, az://, http(s)://...) with
    /// object_store configuration `options`.
    #[staticmethod]
    fn object(py: Python<'_>, url: &str, options: Vec<(String, String)>) -> PyResult<Self> {
        py.detach(|| ObjectStore::from_url(url, options))
            .map(wrap)
            .map_err(to_py_err)
    }

    /// An obstore store object (S3Store, GCSStore, AzureStore, HTTPStore),
    /// read and written by Rust; `url` names it in messages.
    #[staticmethod]
    fn obstore(store: &Bound<'_, PyAny>, url: String) -> PyResult<Self> {
        use pyo3_object_store::AnyObjectStore;
        let inner = store.extract::<AnyObjectStore>()?.into_dyn();
        let source: Py<PyAny> = store.clone().unbind();
        let connect: store::object::Connect = Box::new(move || {
            Python::attach(|py| {
                source
                    .bind(py)
                    .extract::<AnyObjectStore>()
                    .map(AnyObjectStore::into_dyn)
                    .map_err(|e| Error::store(format!("cannot reconnect the store: {e}")))
            })
        });
        ObjectStore::from_client(url, "", inner, connect)
            .map(wrap)
            .map_err(to_py_err)
    }

    /// A store the Python layer reads and writes itself; `name` says where
    /// its keys are, for messages.
    #[staticmethod]
    fn caller(name: String) -> Self {
        StoreHandle {
            inner: StoreRef::Caller(name),
            local: None,
        }
    }

    /// Whether Rust reads and writes this store (else Python does).
    #[getter]
    fn in_rust(&self) -> bool {
        matches!(self.inner, StoreRef::Rust(_))
    }

    /// Where `key` is: a path or URL.
    fn location(&self, key: &str) -> String {
        match &self.inner {
            StoreRef::Rust(s) => s.location(key),
            StoreRef::Caller(name) => format!("{}/{key}", name.trim_end_matches('/')),
        }
    }

    fn get<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let v = self.run(py, |s| store::block_on(s, s.get(key))?)?;
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
        let range = ByteRange::from_signed(start, length).map_err(to_py_err)?;
        let v = self.run(py, |s| store::block_on(s, s.get_ranges(key, &[range]))?)?;
        Ok(v.and_then(|mut parts| parts.pop())
            .map(|v| PyBytes::new(py, &v)))
    }

    fn set(&self, py: Python<'_>, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = bytes_of(value)?;
        self.run(py, |s| {
            store::block_on(s, s.set(key, value))??;
            s.flush()
        })
    }

    fn delete(&self, py: Python<'_>, key: &str) -> PyResult<()> {
        self.run(py, |s| store::block_on(s, s.delete(key))?)
    }

    fn exists(&self, py: Python<'_>, key: &str) -> PyResult<bool> {
        self.run(py, |s| store::block_on(s, s.exists(key))?)
    }

    fn list_prefix(&self, py: Python<'_>, prefix: &str) -> PyResult<Vec<String>> {
        self.run(py, |s| store::block_on(s, s.list_prefix(prefix))?)
    }

    /// (keys, sub-directories) directly under `prefix` ("" or ending in "/").
    fn list_dir(&self, py: Python<'_>, prefix: &str) -> PyResult<(Vec<String>, Vec<String>)> {
        self.run(py, |s| store::block_on(s, s.list_dir(prefix))?)
    }

    fn delete_prefix(&self, py: Python<'_>, prefix: &str) -> PyResult<()> {
        self.run(py, |s| store::block_on(s, s.delete_prefix(prefix))?)
    }

    /// Make the writes so far durable and visible (a zip archive's directory).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |s| s.flush())
    }
}

/// A Python integer as an `i128`, saturated past its range.
fn wide_int(item: &Bound<'_, PyAny>) -> PyResult<i128> {
    match item.extract::<i128>() {
        Ok(i) => Ok(i),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(item.py()) => {
            Ok(if item.lt(0)? { i128::MIN } else { i128::MAX })
        }
        Err(e) => Err(e),
    }
}

/// A slice's `start`, `stop` or `step`: None, or an integer (`__index__`).
fn slice_part(s: &Bound<'_, PySlice>, name: &str) -> PyResult<Option<i128>> {
    let v = s.getattr(name)?;
    if v.is_none() {
        return Ok(None);
    }
    if v.cast::<PyBool>().is_err() {
        if let Ok(i) = wide_int(&v) {
            return Ok(Some(i));
        }
    }
    Err(PyTypeError::new_err(
        "slice indices must be integers or None or have an __index__ method",
    ))
}

/// A numpy array's values: integers (as int64 or uint64), booleans, exact
/// Python integers (an object array), or the name of any other data type.
fn index_array(arr: &Bound<'_, PyUntypedArray>, ndarray: bool) -> PyResult<IndexArray> {
    let shape = arr.shape().to_vec();
    let np = arr.py().import("numpy")?;
    let as_type = |name: &str| -> PyResult<Bound<'_, PyAny>> {
        let kwargs = PyDict::new(arr.py());
        kwargs.set_item("copy", false)?;
        arr.call_method("astype", (np.getattr(name)?,), Some(&kwargs))
    };
    let values = match arr.dtype().kind() {
        b'b' => ArrayValues::Bools(
            arr.extract::<PyReadonlyArrayDyn<'_, bool>>()?
                .as_array()
                .iter()
                .copied()
                .collect(),
        ),
        b'i' => ArrayValues::Ints(Ints::I64(
            as_type("int64")?
                .extract::<PyReadonlyArrayDyn<'_, i64>>()?
                .as_array()
                .iter()
                .copied()
                .collect(),
        )),
        b'u' => ArrayValues::Ints(Ints::U64(
            as_type("uint64")?
                .extract::<PyReadonlyArrayDyn<'_, u64>>()?
                .as_array()
                .iter()
                .copied()
                .collect(),
        )),
        b'O' => match exact_ints(arr)? {
            Some(v) => ArrayValues::Ints(Ints::Wide(v)),
            None => ArrayValues::Other("object".into()),
        },
        _ => ArrayValues::Other(arr.getattr("dtype")?.str()?.to_string()),
    };
    Ok(IndexArray {
        shape,
        values,
        ndarray,
    })
}

/// The elements of an array (C order) as exact integers, if all are integers.
fn exact_ints(arr: &Bound<'_, PyAny>) -> PyResult<Option<Vec<i128>>> {
    let mut out = Vec::new();
    for x in arr.getattr("flat")?.try_iter()? {
        let x = x?;
        if x.cast::<PyBool>().is_ok() || numpy_bool(&x) {
            return Ok(None);
        }
        match wide_int(&x) {
            Ok(i) => out.push(i),
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// A list as numpy reads it as an index array. numpy turns lists holding
/// integers past int64 (indices into dimensions of up to 2**64 - 1) into
/// floats or objects; those keep their exact values.
fn list_array(list: &Bound<'_, PyAny>) -> PyResult<IndexArray> {
    let np = list.py().import("numpy")?;
    let arr = np.call_method1("asarray", (list,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    if !arr.is_empty() && matches!(arr.dtype().kind(), b'f' | b'O') {
        let kwargs = PyDict::new(list.py());
        kwargs.set_item("dtype", "object")?;
        let exact = np.call_method("asarray", (list,), Some(&kwargs))?;
        if let Some(v) = exact_ints(&exact)? {
            return Ok(IndexArray {
                shape: arr.shape().to_vec(),
                values: ArrayValues::Ints(Ints::Wide(v)),
                ndarray: false,
            });
        }
    }
    index_array(arr, false)
}

fn numpy_bool(item: &Bound<'_, PyAny>) -> bool {
    let t = item.get_type();
    let numpy = t
        .module()
        .is_ok_and(|m| m.to_str().is_ok_and(|m| m.starts_with("numpy")));
    numpy
        && t.name()
            .is_ok_and(|n| matches!(n.to_str(), Ok("bool" | "bool_")))
}

/// One entry of a selection (`spans`: a tuple is an explicit `(start, stop,
/// step)` range).
fn key(item: &Bound<'_, PyAny>, spans: bool) -> PyResult<Key> {
    let py = item.py();
    if let Ok(s) = item.cast::<PySlice>() {
        return Ok(Key::Slice {
            start: slice_part(s, "start")?,
            stop: slice_part(s, "stop")?,
            step: slice_part(s, "step")?,
        });
    }
    if item.cast::<PyInt>().is_ok() && item.cast::<PyBool>().is_err() {
        return Ok(Key::Int(wide_int(item)?));
    }
    if item.cast::<PyBool>().is_ok() || numpy_bool(item) {
        return Ok(Key::Other {
            type_name: item.get_type().name()?.to_string(),
            boolean: true,
        });
    }
    if let Ok(arr) = item.cast::<PyUntypedArray>() {
        return index_array(arr, true).map(Key::Array);
    }
    if item.cast::<PyList>().is_ok() {
        return list_array(item).map(Key::Array);
    }
    if item.is(PyEllipsis::get(py)) {
        return Ok(Key::Ellipsis);
    }
    if item.is_none() {
        return Ok(Key::NewAxis);
    }
    if spans {
        if let Ok((start, stop, step)) = item.extract::<(u64, u64, u64)>() {
            return Ok(Key::Span { start, stop, step });
        }
    }
    if let Ok(i) = wide_int(item) {
        return Ok(Key::Int(i)); // numpy integers, anything with __index__
    }
    Ok(Key::Other {
        type_name: item.get_type().name()?.to_string(),
        boolean: false,
    })
}

/// A selection's entries: a tuple's items, or the one object.
fn keys(selection: &Bound<'_, PyAny>, spans: bool) -> PyResult<Vec<Key>> {
    match selection.cast::<PyTuple>() {
        Ok(t) => t.iter().map(|i| key(&i, spans)).collect(),
        Err(_) => Ok(vec![key(selection, spans)?]),
    }
}

/// A selection of Python integers, slices and Ellipses only (the one-call
/// read's; numpy integers and anything else take the caller's general path).
fn plain_keys(selection: &Bound<'_, PyAny>) -> Option<Vec<Key>> {
    let plain = |i: &Bound<'_, PyAny>| {
        i.cast::<PySlice>().is_ok()
            || i.is(PyEllipsis::get(i.py()))
            || (i.cast::<PyInt>().is_ok() && i.cast::<PyBool>().is_err())
    };
    match selection.cast::<PyTuple>() {
        Ok(t) if t.iter().all(|i| plain(&i)) => keys(selection, false).ok(),
        Err(_) if plain(selection) => keys(selection, false).ok(),
        _ => None,
    }
}

/// A normalised selection of an array (see `selection.rs`).
#[pyclass(module = "zarrox._core", name = "Selection", frozen)]
pub struct SelectionHandle {
    inner: Normalized,
}

fn normalized(
    py: Python<'_>,
    keys: Vec<Key>,
    f: impl FnOnce(&[Key]) -> crate::error::Result<Normalized> + Send,
) -> PyResult<SelectionHandle> {
    let inner = py.detach(|| f(&keys)).map_err(to_py_err)?;
    Ok(SelectionHandle { inner })
}

#[pymethods]
impl SelectionHandle {
    /// Integers, slices with positive steps, and one Ellipsis.
    #[staticmethod]
    fn basic(py: Python<'_>, selection: &Bound<'_, PyAny>, shape: Vec<u64>) -> PyResult<Self> {
        normalized(py, keys(selection, false)?, |k| selection::basic(k, &shape))
    }

    /// Basic selection plus, per dimension, integer arrays or boolean masks.
    #[staticmethod]
    fn orthogonal(py: Python<'_>, selection: &Bound<'_, PyAny>, shape: Vec<u64>) -> PyResult<Self> {
        normalized(py, keys(selection, false)?, |k| {
            selection::orthogonal(k, &shape)
        })
    }

    /// One integer (array) per dimension, broadcast together.
    #[staticmethod]
    fn coordinate(py: Python<'_>, selection: &Bound<'_, PyAny>, shape: Vec<u64>) -> PyResult<Self> {
        normalized(py, keys(selection, false)?, |k| {
            selection::coordinate(k, &shape)
        })
    }

    /// One boolean array of the array's shape.
    #[staticmethod]
    fn mask(py: Python<'_>, selection: &Bound<'_, PyAny>, shape: Vec<u64>) -> PyResult<Self> {
        normalized(py, keys(selection, false)?, |k| selection::mask(k, &shape))
    }

    /// Whole blocks of a grid: per dimension a chunk length, or a list of
    /// `[edge, count]` runs (a rectilinear dimension).
    #[staticmethod]
    fn block(
        py: Python<'_>,
        selection: &Bound<'_, PyAny>,
        shape: Vec<u64>,
        grid: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let grid = grid
            .try_iter()?
            .map(|d| {
                let d = d?;
                match d.extract::<u64>() {
                    Ok(step) => Ok(DimGrid::Regular(step.max(1))),
                    Err(_) => {
                        let runs = d.extract::<Vec<[u64; 2]>>()?;
                        let runs: Vec<(u64, u64)> = runs.iter().map(|&[e, n]| (e, n)).collect();
                        DimGrid::from_runs(&runs).map_err(to_py_err)
                    }
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        normalized(py, keys(selection, false)?, |k| {
            selection::block(k, &shape, &grid)
        })
    }

    /// The shape of the buffer the core reads into or writes from.
    #[getter]
    fn buffer_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.buffer_shape)
    }

    /// The shape the user sees.
    #[getter]
    fn result_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.result_shape)
    }
}

/// One side of a region the caller spells out: a list (tuple) of per
/// dimension entries, or a 1-d array of flat indices.
fn explicit(item: &Bound<'_, PyAny>) -> PyResult<Explicit> {
    if item.cast::<PyList>().is_ok() || item.cast::<PyTuple>().is_ok() {
        let keys = item
            .try_iter()?
            .map(|k| key(&k?, true))
            .collect::<PyResult<_>>()?;
        return Ok(Explicit::Dims(keys));
    }
    let arr = item.cast::<PyUntypedArray>()?;
    match index_array(arr, true)?.values {
        ArrayValues::Ints(v) if arr.ndim() == 1 => Ok(Explicit::Flat(v)),
        _ => Err(PyTypeError::new_err("flat indices are a 1-d integer array")),
    }
}

/// How a batch's selections are written: regions spelled out (see
/// `selection::explicit_region`), or zarr-python's chunk and buffer
/// selections (`selection::zarr_region`), with the dimensions the buffer
/// drops and the function mapping what only numpy's general indexing can
/// (`generic(chunk, buffer, chunk_shape, buffer_shape, drop_axes, writing)`
/// -> flat chunk indices, flat buffer indices or None).
struct Zarr<'a, 'py> {
    drop_axes: Vec<usize>,
    generic: Option<&'a Bound<'py, PyAny>>,
    writing: bool,
}

/// One chunk's region.
fn region(
    chunk: &Bound<'_, PyAny>,
    buffer: &Bound<'_, PyAny>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
    zarr: Option<&Zarr<'_, '_>>,
) -> PyResult<ChunkRegion> {
    let Some(z) = zarr else {
        let buf = if buffer.is_none() {
            None
        } else {
            Some(explicit(buffer)?)
        };
        return selection::explicit_region(
            &explicit(chunk)?,
            buf.as_ref(),
            chunk_shape,
            buffer_shape,
        )
        .map_err(to_py_err);
    };
    let ckeys = keys(chunk, false)?;
    let bkeys = if buffer.is_none() {
        None
    } else {
        Some(keys(buffer, false)?)
    };
    let got = selection::zarr_region(
        &ckeys,
        bkeys.as_deref(),
        chunk_shape,
        buffer_shape,
        &z.drop_axes,
        z.writing,
    )
    .map_err(to_py_err)?;
    if let Some(r) = got {
        return Ok(r);
    }
    let Some(generic) = z.generic else {
        return Err(PyIndexError::new_err(
            "this selection needs numpy's general indexing, and no function for it was given",
        ));
    };
    let (c, b): (Bound<'_, PyAny>, Bound<'_, PyAny>) = generic
        .call1((
            chunk,
            buffer,
            chunk_shape.to_vec(),
            buffer_shape.to_vec(),
            z.drop_axes.clone(),
            z.writing,
        ))?
        .extract()?;
    let b = if b.is_none() {
        None
    } else {
        Some(explicit(&b)?)
    };
    selection::explicit_region(&explicit(&c)?, b.as_ref(), chunk_shape, buffer_shape)
        .map_err(to_py_err)
}

/// The regions of a batch (`buffers` None: writes of one broadcast value).
fn chunk_regions(
    chunks: &Bound<'_, PyAny>,
    buffers: &Bound<'_, PyAny>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
    zarr: Option<&Zarr<'_, '_>>,
) -> PyResult<Vec<ChunkRegion>> {
    let chunks: Vec<Bound<'_, PyAny>> = chunks.try_iter()?.collect::<PyResult<_>>()?;
    if buffers.is_none() {
        return chunks
            .iter()
            .map(|c| region(c, buffers, chunk_shape, buffer_shape, zarr))
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
        .map(|(c, b)| region(c, b, chunk_shape, buffer_shape, zarr))
        .collect()
}

/// A basic read's result: its bytes, and the shape they have.
type BasicRead<'py> = (Bound<'py, PyArray1<u8>>, Vec<usize>);

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

/// The value of a write: a C-contiguous uint8 array (fixed-size elements), a
/// list of str/bytes (variable-length elements), or one element's bytes or
/// str broadcast to every selected element.
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

/// A byte request as a Python tuple (see `Request::spelled`): `(id, "get",
/// key, None)` for a whole value, `(id, "get", key, (offset, length or
/// None))`, `(id, "get", key, ("suffix", n))`, `(id, "set", key, bytes)` or
/// `(id, "delete", key, None)`.
fn request_tuple<'py>(py: Python<'py>, r: &Request) -> PyResult<Bound<'py, PyTuple>> {
    let (id, op, key, arg) = r.spelled();
    let arg = match arg {
        Arg::None => py.None().into_bound(py),
        Arg::Range { offset, length } => (offset, length).into_pyobject(py)?.into_any(),
        Arg::Suffix(n) => ("suffix", n).into_pyobject(py)?.into_any(),
        Arg::Bytes(b) => PyBytes::new(py, b).into_any(),
    };
    (id, op, key, arg).into_pyobject(py)
}

/// A read from a store Python reads itself: `step()` returns the requests to
/// fetch (all at once), `answer(ids, values)` takes what was fetched; done
/// when `step()` returns no requests. A fixed-size read decodes into the
/// output array it holds; a variable-length one into the session's list.
#[pyclass(module = "zarrox._core", name = "ReadSession", frozen)]
pub struct ReadSessionHandle {
    session: Mutex<ReadSession>,
    out: Option<Py<PyArray1<u8>>>,
    utf8: bool,
}

impl ReadSessionHandle {
    fn var(session: ReadSession, n: usize, utf8: bool) -> Self {
        ReadSessionHandle {
            session: Mutex::new(session.with_values(n)),
            out: None,
            utf8,
        }
    }

    fn fixed(session: ReadSession, out: PyReadwriteArray1<'_, u8>) -> PyResult<Self> {
        out.as_slice()
            .map_err(|_| PyValueError::new_err("output buffer must be contiguous"))?;
        let array: &Bound<'_, PyArray1<u8>> = &out;
        Ok(ReadSessionHandle {
            session: Mutex::new(session),
            out: Some(array.clone().unbind()),
            utf8: false,
        })
    }

    fn session(&self) -> std::sync::MutexGuard<'_, ReadSession> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl ReadSessionHandle {
    /// Run the read until it waits for bytes, decode what arrived; the
    /// requests to fetch next (empty: done).
    fn step<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let mut session = self.session();
        let session = &mut *session;
        let requests = match &self.out {
            Some(arr) => {
                let mut rw = arr.bind(py).readwrite();
                let buf = out_bytes(&mut rw)?;
                py.detach(|| session.step(Output::Fixed(&OutView::new(buf))))
            }
            None => py.detach(|| session.step_values()),
        }
        .map_err(to_py_err)?;
        requests.iter().map(|r| request_tuple(py, r)).collect()
    }

    /// Answer requests: `values[i]` is bytes or a buffer (None: no value; for
    /// a set or delete, anything).
    fn answer(&self, ids: Vec<u64>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let values = encoded_chunks(values)?;
        self.session().answer_all(&ids, values).map_err(to_py_err)
    }

    /// Which chunks exist (once done).
    fn present(&self) -> Vec<bool> {
        self.session().present()
    }

    /// The elements read, for a variable-length read (once done).
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self.session().values().map_err(to_py_err)?;
        var_list(py, &items, self.utf8)
    }
}

/// A write to a store Python writes itself: `needs` lists the chunks whose
/// old bytes must be fetched first, `encode(old, value)` gives the new bytes
/// per chunk (None: delete).
#[pyclass(module = "zarrox._core", name = "WriteBatch", frozen)]
pub struct WriteBatch {
    tasks: Vec<ChunkTask>,
    shape: Vec<usize>,
    needs: Vec<bool>,
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
    fn utf8(&self) -> bool {
        self.core.data_type().kind == DataKind::String
    }
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
            store.inner.clone(),
            path,
            metadata_json,
            fill_value.to_vec(),
            write_empty_chunks,
        )
        .map_err(to_py_err)?;
        Ok(ArrayHandle { core })
    }

    /// Whether Rust reads and writes the chunks (else: sessions and batches).
    #[getter]
    fn in_rust(&self) -> bool {
        !self.core.caller_store()
    }

    /// Read `selection` into `out`: a C-contiguous uint8 view of the result array.
    fn read(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        mut out: PyReadwriteArray1<'_, u8>,
    ) -> PyResult<()> {
        let sel = &selection_.inner.selection;
        let buf = out_bytes(&mut out)?;
        py.detach(|| self.core.read(sel, buf)).map_err(to_py_err)
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
        // SAFETY: the array is uninitialised; `read` writes every byte of it
        // (every output element belongs to one chunk's region, filled when the
        // chunk is missing) before it is returned, and on an error the array is
        // dropped unseen. Its memory comes from numpy's allocator, as with
        // `numpy.empty`.
        let out = unsafe { PyArray1::<u8>::new(py, [nbytes], false) };
        {
            let mut rw = out.readwrite();
            let buf = out_bytes(&mut rw)?;
            py.detach(|| self.core.read(&sel, buf)).map_err(to_py_err)?;
        }
        Ok(Some((out, result_shape)))
    }

    /// A read of `selection` into `out` from a store Python reads itself.
    fn read_session(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        out: PyReadwriteArray1<'_, u8>,
    ) -> PyResult<ReadSessionHandle> {
        let sel = &selection_.inner.selection;
        let (session, shape) = py
            .detach(|| self.core.read_session(sel))
            .map_err(to_py_err)?;
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

    /// Write `value` (a C-contiguous uint8 view of the selection-shaped data).
    fn write(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        value: PyReadonlyArray1<'_, u8>,
    ) -> PyResult<()> {
        let sel = &selection_.inner.selection;
        let buf = value_bytes(&value)?;
        py.detach(|| self.core.write(sel, Input::Fixed(buf)))
            .map_err(to_py_err)
    }

    /// Write one value to every selected element: `bytes` (one element's bytes
    /// in native byte order, or a variable-length value) or `str` (UTF-8).
    fn write_scalar(
        &self,
        py: Python<'_>,
        selection_: &SelectionHandle,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let sel = &selection_.inner.selection;
        let one = if let Ok(s) = value.cast::<PyString>() {
            s.to_str()?.as_bytes().to_vec()
        } else {
            value.cast::<PyBytes>()?.as_bytes().to_vec()
        };
        py.detach(|| self.core.write(sel, Input::Scalar(&one)))
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

    /// A write of `selection` to a store Python writes itself.
    fn write_batch(&self, py: Python<'_>, selection_: &SelectionHandle) -> PyResult<WriteBatch> {
        let sel = &selection_.inner.selection;
        let (tasks, shape, needs) = py
            .detach(|| self.core.write_tasks(sel))
            .map_err(to_py_err)?;
        Ok(WriteBatch {
            tasks,
            shape,
            needs,
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
        let old = encoded_chunks(old)?;
        let value = Value::extract(value)?;
        let input = value.input()?;
        let new = py
            .detach(|| self.core.encode(&batch.tasks, &batch.shape, old, input))
            .map_err(to_py_err)?;
        PyList::new(
            py,
            new.iter().map(|e| e.as_ref().map(|b| PyBytes::new(py, b))),
        )
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

    /// The compression floor: every stored chunk decoded once, then encoded
    /// `repeat` times on all threads with nothing stored: (chunks, encoded
    /// bytes, seconds of each pass). The benchmark's write floor.
    fn encode_floor(&self, py: Python<'_>, repeat: usize) -> PyResult<(usize, usize, Vec<f64>)> {
        py.detach(|| self.core.encode_floor(repeat))
            .map_err(to_py_err)
    }

    /// (key, grid coordinates) of every stored chunk (or shard).
    fn stored_chunks(&self, py: Python<'_>) -> PyResult<Vec<(String, Vec<u64>)>> {
        py.detach(|| self.core.stored_chunks()).map_err(to_py_err)
    }

    /// (key, grid coordinates) of the given store keys that are this array's
    /// chunk keys (the keys of a store Python lists itself).
    fn chunk_coords(&self, keys: Vec<String>) -> Vec<(String, Vec<u64>)> {
        self.core.chunk_coords(keys)
    }
}

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
        let old = encoded_chunks(old)?;
        let value = Value::extract(value)?;
        let input = value.input()?;
        let n = batch.shape.iter().product();
        let encoded = py
            .detach(|| self.inner.encode(&batch.tasks, old, input, n, write_empty))
            .map_err(to_py_err)?;
        let objects = encoded
            .iter()
            .map(|e| e.as_ref().map(|b| PyBytes::new(py, b)));
        PyList::new(py, objects)
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

/// Set the number of requests kept in flight on object stores (0: the default).
#[pyfunction]
fn set_io_concurrency(n: usize) {
    pool::set_io_concurrency(n);
}

/// The number of requests kept in flight on object stores.
#[pyfunction]
fn get_io_concurrency() -> usize {
    pool::io_concurrency()
}

/// Every key and value of an in-memory store (to pickle it), as a dict.
#[pyfunction]
fn memory_items<'py>(py: Python<'py>, store: &StoreHandle) -> PyResult<Bound<'py, PyDict>> {
    let items = store.run(py, store::items)?;
    let dict = PyDict::new(py);
    for (key, value) in items {
        dict.set_item(key, PyBytes::new(py, &value))?;
    }
    Ok(dict)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<StoreHandle>()?;
    m.add_class::<ArrayHandle>()?;
    m.add_class::<ChunkCodec>()?;
    m.add_class::<ReadSessionHandle>()?;
    m.add_class::<WriteBatch>()?;
    m.add_class::<SelectionHandle>()?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_io_concurrency, m)?)?;
    m.add_function(wrap_pyfunction!(get_io_concurrency, m)?)?;
    m.add_function(wrap_pyfunction!(memory_items, m)?)?;
    crate::python_config::register(m)?;
    crate::python_dtype::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
