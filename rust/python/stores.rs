//! Stores: the Rust stores as Python objects, and the requests of a read
//! session whose store Python reads itself.

use std::sync::{Arc, Mutex};

use numpy::{PyArray1, PyArrayMethods, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use super::buffers::{bytes_of, encoded_chunks, encoded_list, out_bytes, var_list, Value};
use super::to_py_err;
use crate::array::StoreRef;
use crate::batch::PendingWrite;
use crate::engine::session::ReadSession;
use crate::engine::{OutView, Output};
use crate::error::Error;
use crate::store::caller::{Arg, Request};
use crate::store::{
    self, ByteRange, FilesystemStore, Generation, MemoryStore, ObjectStore, Store, ZipStore,
};

/// `StoreHandle.references`' Parquet records: the directory, the record
/// size, each variable's chunk grid and the decoding function.
type ParquetRecords<'py> = (
    PyRef<'py, StoreHandle>,
    u64,
    Vec<(String, Vec<u64>)>,
    Bound<'py, PyAny>,
);

/// A Python function that decodes record files (pyarrow):
/// `decode(name, data, rows) -> (paths, offsets, sizes, raws)`.
struct PyRecordDecoder(Py<PyAny>);

/// One row of a record file's columns.
type RecordRow = (Option<String>, Option<u64>, Option<u64>, Option<Vec<u8>>);

impl store::references::records::RecordDecoder for PyRecordDecoder {
    fn decode(
        &self,
        name: &str,
        data: bytes::Bytes,
        rows: usize,
    ) -> crate::error::Result<Vec<Option<store::references::Reference>>> {
        use store::references::Reference;
        let columns: PyResult<Vec<RecordRow>> = Python::attach(|py| {
            let got = self.0.call1(py, (name, PyBytes::new(py, &data), rows))?;
            let columns: RecordColumns = got.extract(py)?;
            rows_of(name, columns)
        });
        let columns = columns.map_err(|e| {
            let text = Python::attach(|py| e.value(py).to_string());
            Error::value(text)
        })?;
        Ok(columns
            .into_iter()
            .map(|(path, offset, size, raw)| match (raw, path) {
                (Some(raw), _) => Some(Reference::Inline(bytes::Bytes::from(raw))),
                (None, Some(url)) => match (offset.unwrap_or(0), size.unwrap_or(0)) {
                    (0, 0) => Some(Reference::Whole(url)),
                    (offset, length) => Some(Reference::Range {
                        url,
                        offset,
                        length,
                    }),
                },
                (None, None) => None,
            })
            .collect())
    }
}

/// A record file's columns: paths, offsets, sizes, raw values.
type RecordColumns = (
    Vec<Option<String>>,
    Vec<Option<u64>>,
    Vec<Option<u64>>,
    Vec<Option<Vec<u8>>>,
);

/// The rows of a record file's columns (all of one length).
fn rows_of(name: &str, (paths, offsets, sizes, raws): RecordColumns) -> PyResult<Vec<RecordRow>> {
    let n = paths.len();
    if offsets.len() != n || sizes.len() != n || raws.len() != n {
        return Err(PyValueError::new_err(format!(
            "{name}: columns of different lengths"
        )));
    }
    Ok(paths
        .into_iter()
        .zip(offsets)
        .zip(sizes)
        .zip(raws)
        .map(|(((p, o), s), r)| (p, o, s, r))
        .collect())
}

/// A store implemented in Rust (or, `caller`, one the Python layer reads itself).
#[pyclass(module = "zarrox._core", name = "StoreHandle", frozen)]
pub struct StoreHandle {
    pub(super) inner: StoreRef,
    /// A local store's root and fsync setting.
    local: Option<(std::path::PathBuf, bool)>,
}

impl StoreHandle {
    fn with_local(mut self, root: std::path::PathBuf, fsync: bool) -> Self {
        self.local = Some((root, fsync));
        self
    }

    pub(super) fn rust(&self) -> PyResult<&dyn Store> {
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

    /// A read-only store of kerchunk references (`json`: version 0 or 1);
    /// `name` says where they came from. Referenced URLs without a scheme
    /// have `protocol`'s; `options` configure the referenced object stores;
    /// ranges of one file closer than `coalesce_gap` bytes (default: the
    /// file's store's own gap) are fetched in one request of at most
    /// `max_request` bytes (0: 32 MiB).
    ///
    /// `records`: the chunk references of Parquet references, loaded record
    /// by record: `(directory, record_size, [(variable, chunk grid)],
    /// decode)`, where `decode(name, data, rows)` returns the record file's
    /// columns `(paths, offsets, sizes, raws)`, a value per row.
    ///
    /// `prefixes`: `(URL prefix, options)` of referenced files whose URL
    /// starts with the prefix (the longest that matches; others have
    /// `options`).
    #[staticmethod]
    #[pyo3(signature = (name, json, protocol=None, options=Vec::new(), coalesce_gap=None, max_request=0, records=None, prefixes=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn references(
        py: Python<'_>,
        name: &str,
        json: &str,
        protocol: Option<String>,
        options: Vec<(String, String)>,
        coalesce_gap: Option<u64>,
        max_request: u64,
        records: Option<ParquetRecords<'_>>,
        prefixes: Vec<(String, Vec<(String, String)>)>,
    ) -> PyResult<Self> {
        let options = store::references::ReferenceOptions {
            protocol,
            options,
            prefixes,
            coalesce_gap,
            max_request,
        };
        let records = match records {
            None => None,
            Some((directory, record_size, fields, decode)) => {
                let dir = match &directory.inner {
                    StoreRef::Rust(s) => Arc::clone(s),
                    StoreRef::Caller(name) => {
                        return Err(PyValueError::new_err(format!(
                            "Parquet references in {name}: the directory must be a Rust store"
                        )))
                    }
                };
                let decoder = Arc::new(PyRecordDecoder(decode.unbind()));
                let fields = fields.into_iter().collect();
                Some(
                    store::references::records::Records::new(dir, record_size, fields, decoder)
                        .map_err(to_py_err)?,
                )
            }
        };
        let built = py.detach(|| store::ReferenceStore::from_json(name, json, options));
        let mut refs = built.map_err(to_py_err)?;
        if let Some(records) = records {
            refs = refs.with_records(records);
        }
        Ok(wrap(refs))
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

    /// The bytes of the values an in-memory store holds (None for any other
    /// store).
    fn bytes_in_memory(&self) -> Option<u64> {
        match &self.inner {
            StoreRef::Rust(s) => s.bytes_in_memory(),
            StoreRef::Caller(_) => None,
        }
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

    /// Whether writes to this store can be conditional on a generation (asked
    /// of an object store's server once).
    fn conditional_writes(&self, py: Python<'_>) -> PyResult<bool> {
        match &self.inner {
            StoreRef::Rust(_) => self.run(py, |s| store::block_on(s, s.conditional_writes())?),
            StoreRef::Caller(_) => Ok(false),
        }
    }

    /// `(value or None, generation)`: the generation is an opaque token to
    /// hand back to `set_if`/`delete_if` (`"unknown"` where the store cannot
    /// tell versions apart).
    fn get_versioned<'py>(
        &self,
        py: Python<'py>,
        key: &str,
    ) -> PyResult<(Option<Bound<'py, PyBytes>>, String)> {
        let v = self.run(py, |s| store::block_on(s, s.get_versioned(key))?)?;
        Ok((
            v.value.map(|v| PyBytes::new(py, &v)),
            v.generation.to_token(),
        ))
    }

    /// Store `value` under `key` if its generation is still `generation` (a
    /// token from `get_versioned`): whether it was written.
    fn set_if(
        &self,
        py: Python<'_>,
        key: &str,
        value: &Bound<'_, PyAny>,
        generation: &str,
    ) -> PyResult<bool> {
        let value = bytes_of(value)?;
        let expected = Generation::from_token(generation).map_err(to_py_err)?;
        self.run(py, |s| {
            let written = store::block_on(s, s.set_if(key, value, &expected))??;
            s.flush()?;
            Ok(written.is_some())
        })
    }

    /// Remove `key` if its generation is still `generation`: whether it was
    /// removed (a store without conditional deletes says so with an error).
    fn delete_if(&self, py: Python<'_>, key: &str, generation: &str) -> PyResult<bool> {
        let expected = Generation::from_token(generation).map_err(to_py_err)?;
        self.run(py, |s| store::block_on(s, s.delete_if(key, &expected))?)
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

    /// Whether this store's requests take network round trips (an object
    /// store, references): the engine keeps them in flight on its I/O runtime.
    #[getter]
    fn concurrent(&self) -> bool {
        match &self.inner {
            StoreRef::Rust(s) => s.io_mode() == store::IoMode::Concurrent,
            StoreRef::Caller(_) => false,
        }
    }

    /// An awaitable the engine completes with what the method `op` of this
    /// handle returns (`get`, `get_range`, `exists`, `get_versioned`,
    /// `list_prefix`, `list_dir`, `conditional_writes`, `set`, `set_if`,
    /// `delete`, `delete_prefix`), its arguments as the method takes them:
    /// a key or prefix, `value`, `start`/`length`, `generation`.
    #[pyo3(signature = (op, key="", value=None, start=0, length=None, generation=None))]
    #[allow(clippy::too_many_arguments)]
    fn op_async<'py>(
        &self,
        py: Python<'py>,
        op: &str,
        key: &str,
        value: Option<&Bound<'_, PyAny>>,
        start: i64,
        length: Option<u64>,
        generation: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let s = super::awaitable::rust_store(
            self.inner.clone(),
            "a store served from Python has no awaitable operations",
        )?;
        let key = key.to_string();
        let op = match (op, value.map(bytes_of).transpose()?, generation) {
            ("get", ..) => StoreOp::Get,
            ("get_range", ..) => {
                StoreOp::GetRange(ByteRange::from_signed(start, length).map_err(to_py_err)?)
            }
            ("exists", ..) => StoreOp::Exists,
            ("get_versioned", ..) => StoreOp::GetVersioned,
            ("list_prefix", ..) => StoreOp::ListPrefix,
            ("list_dir", ..) => StoreOp::ListDir,
            ("conditional_writes", ..) => StoreOp::ConditionalWrites,
            ("set", Some(value), _) => StoreOp::Set(value),
            ("set_if", Some(value), Some(generation)) => StoreOp::SetIf(
                value,
                Generation::from_token(generation).map_err(to_py_err)?,
            ),
            ("delete", ..) => StoreOp::Delete,
            ("delete_prefix", ..) => StoreOp::DeletePrefix,
            ("set", ..) => return Err(PyValueError::new_err("'set' needs a value")),
            ("set_if", ..) => {
                return Err(PyValueError::new_err(
                    "'set_if' needs a value and a generation",
                ))
            }
            (op, ..) => return Err(PyValueError::new_err(format!("no store operation '{op}'"))),
        };
        let work = async move {
            Ok(match op {
                StoreOp::Get => OpDone::Value(s.get(&key).await?),
                StoreOp::GetRange(range) => {
                    let got = s.get_ranges(&key, &[range]).await?;
                    OpDone::Value(got.and_then(|mut parts| parts.pop()))
                }
                StoreOp::Exists => OpDone::Flag(s.exists(&key).await?),
                StoreOp::GetVersioned => {
                    let v = s.get_versioned(&key).await?;
                    OpDone::Versioned(v.value, v.generation.to_token())
                }
                StoreOp::ListPrefix => OpDone::Keys(s.list_prefix(&key).await?),
                StoreOp::ListDir => {
                    let (keys, dirs) = s.list_dir(&key).await?;
                    OpDone::Dir(keys, dirs)
                }
                StoreOp::ConditionalWrites => OpDone::Flag(s.conditional_writes().await?),
                StoreOp::Set(value) => {
                    s.set(&key, value).await?;
                    s.flush()?;
                    OpDone::Nothing
                }
                StoreOp::SetIf(value, expected) => {
                    let written = s.set_if(&key, value, &expected).await?;
                    s.flush()?;
                    OpDone::Flag(written.is_some())
                }
                StoreOp::Delete => {
                    s.delete(&key).await?;
                    OpDone::Nothing
                }
                StoreOp::DeletePrefix => {
                    s.delete_prefix(&key).await?;
                    OpDone::Nothing
                }
            })
        };
        super::awaitable::awaitable(py, work, |py, done: OpDone| done.into_py(py))
    }
}

/// An awaitable store operation (`StoreHandle.op_async`), with what it
/// takes besides the key.
enum StoreOp {
    Get,
    GetRange(ByteRange),
    Exists,
    GetVersioned,
    ListPrefix,
    ListDir,
    ConditionalWrites,
    Set(bytes::Bytes),
    SetIf(bytes::Bytes, Generation),
    Delete,
    DeletePrefix,
}

/// What an awaitable store operation ends with.
enum OpDone {
    Value(Option<bytes::Bytes>),
    Versioned(Option<bytes::Bytes>, String),
    Flag(bool),
    Keys(Vec<String>),
    Dir(Vec<String>, Vec<String>),
    Nothing,
}

impl OpDone {
    /// The value the blocking method returns.
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let bytes = |v: Option<bytes::Bytes>| v.map(|v| PyBytes::new(py, &v));
        Ok(match self {
            OpDone::Value(v) => bytes(v).into_pyobject(py)?.into_any().unbind(),
            OpDone::Versioned(v, g) => (bytes(v), g).into_pyobject(py)?.into_any().unbind(),
            OpDone::Flag(f) => pyo3::types::PyBool::new(py, f)
                .to_owned()
                .into_any()
                .unbind(),
            OpDone::Keys(k) => k.into_pyobject(py)?.into_any().unbind(),
            OpDone::Dir(k, d) => (k, d).into_pyobject(py)?.into_any().unbind(),
            OpDone::Nothing => py.None(),
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
    /// A handle on `session`, which decodes into `out` (a fixed-size read) or
    /// into the list it keeps (`out` None; its values str when `utf8`).
    pub(super) fn new(
        session: ReadSession,
        out: Option<PyReadwriteArray1<'_, u8>>,
        utf8: bool,
    ) -> PyResult<Self> {
        let out = match out {
            Some(out) => {
                out.as_slice()
                    .map_err(|_| PyValueError::new_err("output buffer must be contiguous"))?;
                let array: &Bound<'_, PyArray1<u8>> = &out;
                Some(array.clone().unbind())
            }
            None => None,
        };
        Ok(ReadSessionHandle {
            session: Mutex::new(session),
            out,
            utf8,
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
/// old bytes must be fetched first, `encode(old)` gives the new bytes per
/// chunk (None: delete) after writing the value the write was given.
#[pyclass(module = "zarrox._core", name = "WriteBatch", frozen)]
pub struct WriteBatch {
    pending: PendingWrite,
    value: Py<PyAny>,
}

impl WriteBatch {
    pub(super) fn new(pending: PendingWrite, value: Py<PyAny>) -> Self {
        WriteBatch { pending, value }
    }
}

#[pymethods]
impl WriteBatch {
    /// The chunks' keys.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.pending.keys().map(str::to_string).collect()
    }

    /// Per chunk, whether its old bytes are needed.
    #[getter]
    fn needs(&self) -> Vec<bool> {
        self.pending.needs().to_vec()
    }

    /// The new bytes of the chunks (None: delete) after writing the value
    /// over the `old` chunks fetched for `needs` (bytes, buffers or None).
    fn encode<'py>(
        &self,
        py: Python<'py>,
        old: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let old = encoded_chunks(old)?;
        let value = Value::extract(self.value.bind(py))?;
        let input = value.input()?;
        let new = py
            .detach(|| self.pending.encode(old, input))
            .map_err(to_py_err)?;
        encoded_list(py, &new)
    }
}

/// Every key and value of an in-memory store (to pickle it), as a dict.
#[pyfunction]
pub(super) fn memory_items<'py>(
    py: Python<'py>,
    store: &StoreHandle,
) -> PyResult<Bound<'py, PyDict>> {
    let items = store.run(py, store::items)?;
    let dict = PyDict::new(py);
    for (key, value) in items {
        dict.set_item(key, PyBytes::new(py, &value))?;
    }
    Ok(dict)
}
