//! PyO3 bindings: argument conversion, GIL release and error mapping. No logic.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use numpy::{
    PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyReadwriteArray1,
    PyUntypedArrayMethods,
};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyIndexError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyDict, PyEllipsis, PyInt, PyList, PySlice, PySliceMethods, PyString, PyTuple,
    PyType,
};

use crate::array::{ArrayCore, StoreRef};
use crate::codec::ChunkSpec;
use crate::dtype::{DataKind, DataType};
use crate::engine::session::ReadSession;
use crate::engine::{ChunkRegion, ChunkTask, Input, OutView, Output};
use crate::error::{Error, ErrorKind};
use crate::indexing::{DimSelection, Selection};
use crate::pipeline::{self, ChunkCodec as BatchCodec};
use crate::pool;
use crate::store::caller::Op;
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
        let range = match (start, length) {
            (s, None) if s < 0 => ByteRange::Suffix(s.unsigned_abs()),
            (s, _) if s < 0 => return Err(PyValueError::new_err("negative start with a length")),
            (s, length) => ByteRange::FromStart {
                offset: s as u64,
                length,
            },
        };
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
            let (start, stop, step) = forward_slice(s, usize::try_from(n).ok()?).ok()??;
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

/// A byte request for Python: `(id, "get", key, None)` for a whole value,
/// `(id, "get", key, (offset, length or None))`, `(id, "get", key, ("suffix",
/// n))`, `(id, "set", key, bytes)` or `(id, "delete", key, None)`.
fn request_tuple<'py>(
    py: Python<'py>,
    r: &crate::store::caller::Request,
) -> PyResult<Bound<'py, PyTuple>> {
    let none = py.None().into_bound(py);
    let (op, arg): (&str, Bound<'py, PyAny>) = match &r.op {
        Op::Get(None) => ("get", none),
        Op::Get(Some(ByteRange::FromStart { offset, length })) => {
            ("get", (*offset, *length).into_pyobject(py)?.into_any())
        }
        Op::Get(Some(ByteRange::Suffix(n))) => {
            ("get", ("suffix", *n).into_pyobject(py)?.into_any())
        }
        Op::Set(bytes) => ("set", PyBytes::new(py, bytes).into_any()),
        Op::Delete => ("delete", none),
    };
    (r.id, op, r.key.as_str(), arg).into_pyobject(py)
}

/// Where a caller-driven read puts its elements.
enum SessionOutput {
    Fixed(Py<PyArray1<u8>>),
    Var(Mutex<Vec<Vec<u8>>>, bool),
}

/// A read from a store Python reads itself: `step()` returns the requests to
/// fetch (all at once), `answer(ids, values)` takes what was fetched; done
/// when `step()` returns no requests.
#[pyclass(module = "zarrox._core", name = "ReadSession", frozen)]
pub struct ReadSessionHandle {
    session: Mutex<ReadSession>,
    out: SessionOutput,
}

impl ReadSessionHandle {
    fn fixed(session: ReadSession, out: PyReadwriteArray1<'_, u8>) -> PyResult<Self> {
        out.as_slice()
            .map_err(|_| PyValueError::new_err("output buffer must be contiguous"))?;
        Ok(ReadSessionHandle {
            session: Mutex::new(session),
            out: SessionOutput::Fixed(out.as_array_bound_owned()),
        })
    }
}

/// The array a readwrite view came from, kept for later steps.
trait OwnedArray {
    fn as_array_bound_owned(&self) -> Py<PyArray1<u8>>;
}

impl OwnedArray for PyReadwriteArray1<'_, u8> {
    fn as_array_bound_owned(&self) -> Py<PyArray1<u8>> {
        let bound: &Bound<'_, PyArray1<u8>> = self;
        bound.clone().unbind()
    }
}

#[pymethods]
impl ReadSessionHandle {
    /// Run the read until it waits for bytes, decode what arrived; the
    /// requests to fetch next (empty: done).
    fn step<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        let session = &mut *session;
        let requests = match &self.out {
            SessionOutput::Fixed(arr) => {
                let mut rw = arr.bind(py).readwrite();
                let buf = out_bytes(&mut rw)?;
                py.detach(|| {
                    let view = OutView::new(buf);
                    session.step(Output::Fixed(&view))
                })
            }
            SessionOutput::Var(list, _) => py.detach(|| session.step(Output::Var(list))),
        }
        .map_err(to_py_err)?;
        requests.iter().map(|r| request_tuple(py, r)).collect()
    }

    /// Answer requests: `values[i]` is bytes or a buffer (None: no value; for
    /// a set or delete, anything).
    fn answer(&self, ids: Vec<u64>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let values = encoded_chunks(values)?;
        if ids.len() != values.len() {
            return Err(PyValueError::new_err("one value per request id"));
        }
        let session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        for (id, v) in ids.into_iter().zip(values) {
            session.answer(id, Ok(v)).map_err(to_py_err)?;
        }
        Ok(())
    }

    /// Which chunks exist (once done).
    fn present(&self) -> Vec<bool> {
        self.session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .present()
    }

    /// The elements read, for a variable-length read (once done).
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        match &self.out {
            SessionOutput::Var(list, utf8) => {
                let items = list.lock().unwrap_or_else(|p| p.into_inner());
                var_list(py, &items, *utf8)
            }
            SessionOutput::Fixed(_) => Err(PyValueError::new_err(
                "a fixed-size read has its values in the output array",
            )),
        }
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
        selection_: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
    ) -> PyResult<()> {
        let sel = selection(selection_)?;
        let buf = out_bytes(&mut out)?;
        py.detach(|| self.core.read(&sel, buf)).map_err(to_py_err)
    }

    /// Read a plain basic selection (see `plain_basic`) into a new array:
    /// (its bytes as a uint8 array, the result shape), or None when the
    /// selection is not plain (or Python reads the store). One call for the
    /// common `a[i, j:k, ...]`.
    fn read_basic<'py>(
        &self,
        py: Python<'py>,
        selection_: &Bound<'py, PyAny>,
    ) -> PyResult<Option<BasicRead<'py>>> {
        if self.core.caller_store() || self.core.data_type().is_var_len() {
            return Ok(None);
        }
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

    /// A read of `selection` into `out` from a store Python reads itself.
    fn read_session(
        &self,
        py: Python<'_>,
        selection_: &Bound<'_, PyAny>,
        out: PyReadwriteArray1<'_, u8>,
    ) -> PyResult<ReadSessionHandle> {
        let sel = selection(selection_)?;
        let (session, shape) = py
            .detach(|| self.core.read_session(&sel))
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
        selection_: &Bound<'_, PyAny>,
    ) -> PyResult<ReadSessionHandle> {
        let sel = selection(selection_)?;
        let (session, shape) = py
            .detach(|| self.core.read_session(&sel))
            .map_err(to_py_err)?;
        let n = shape.iter().product();
        Ok(ReadSessionHandle {
            session: Mutex::new(session),
            out: SessionOutput::Var(Mutex::new(vec![Vec::new(); n]), self.utf8()),
        })
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
        py.detach(|| self.core.write(&sel, Input::Fixed(buf)))
            .map_err(to_py_err)
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
        py.detach(|| self.core.write(&sel, Input::Scalar(&one)))
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
        var_list(py, &items, self.utf8())
    }

    /// Write a list of str or bytes (selection order) to a variable-length array.
    fn write_var(
        &self,
        py: Python<'_>,
        selection_: &Bound<'_, PyAny>,
        items: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let sel = selection(selection_)?;
        let values = var_items(items)?;
        py.detach(|| self.core.write(&sel, Input::Var(&values)))
            .map_err(to_py_err)
    }

    /// A write of `selection` to a store Python writes itself.
    fn write_batch(&self, py: Python<'_>, selection_: &Bound<'_, PyAny>) -> PyResult<WriteBatch> {
        let sel = selection(selection_)?;
        let (tasks, shape, needs) = py
            .detach(|| self.core.write_tasks(&sel))
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
        let j = if i < 0 {
            i.checked_add(i64::try_from(extent).unwrap_or(i64::MAX))
                .unwrap_or(-1)
        } else {
            i
        };
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
            stop: i.saturating_add(1),
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
    ) -> PyResult<Vec<ChunkTask>> {
        let regions = chunk_regions(chunks, buffers, self.shape(), buffer_shape)?;
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
                .map_err(|e| Error::metadata(format!("invalid {what} JSON: {e}")))
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
        let tasks = self.tasks(keys, chunk_selections, out_selections, &out_shape, None)?;
        let buf = self.out_buffer(&mut out, &out_shape)?;
        let s = store.rust()?;
        py.detach(|| pipeline::read_into(&self.inner, s, &tasks, buf))
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
        let tasks = self.tasks(keys, chunk_selections, out_selections, &out_shape, None)?;
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
    fn read_session(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        chunk_selections: &Bound<'_, PyAny>,
        out_selections: &Bound<'_, PyAny>,
        mut out: PyReadwriteArray1<'_, u8>,
        out_shape: Vec<usize>,
        store_name: &str,
    ) -> PyResult<ReadSessionHandle> {
        let tasks = self.tasks(keys, chunk_selections, out_selections, &out_shape, None)?;
        self.out_buffer(&mut out, &out_shape)?;
        let n = out_shape.iter().product();
        let session = py
            .detach(|| self.inner.read_session(tasks, n, store_name))
            .map_err(to_py_err)?;
        ReadSessionHandle::fixed(session, out)
    }

    /// `read_session` for variable-length data (the values: `session.values()`).
    fn read_session_var(
        &self,
        py: Python<'_>,
        keys: Vec<String>,
        chunk_selections: &Bound<'_, PyAny>,
        out_selections: &Bound<'_, PyAny>,
        out_shape: Vec<usize>,
        store_name: &str,
    ) -> PyResult<ReadSessionHandle> {
        let tasks = self.tasks(keys, chunk_selections, out_selections, &out_shape, None)?;
        let n = out_shape.iter().product();
        let session = py
            .detach(|| self.inner.read_session(tasks, n, store_name))
            .map_err(to_py_err)?;
        Ok(ReadSessionHandle {
            session: Mutex::new(session),
            out: SessionOutput::Var(Mutex::new(vec![Vec::new(); n]), self.utf8()),
        })
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
        let tasks = self.tasks(keys, chunk_selections, out_selections, &out_shape, None)?;
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
        let tasks = self.tasks(keys, chunk_selections, out_selections, &out_shape, None)?;
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
        let tasks = self.tasks(keys, chunk_selections, value_selections, &value_shape, None)?;
        let existing = encoded_chunks(existing)?;
        let value = Value::extract(value)?;
        let input = value.input()?;
        let n = value_shape.iter().product();
        let encoded = py
            .detach(|| self.inner.encode(&tasks, existing, input, n, write_empty))
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
        let tasks = self.tasks(
            keys,
            chunk_selections,
            value_selections,
            &value_shape,
            Some(&complete),
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
    let items = store.run(py, |s| {
        store::block_on(s, async {
            let mut items = Vec::new();
            for key in s.list_prefix("").await? {
                if let Some(v) = s.get(&key).await? {
                    items.push((key, v));
                }
            }
            Ok(items)
        })?
    })?;
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
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(plain_slice_regions, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_io_concurrency, m)?)?;
    m.add_function(wrap_pyfunction!(get_io_concurrency, m)?)?;
    m.add_function(wrap_pyfunction!(memory_items, m)?)?;
    crate::python_config::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
