//! PyO3 bindings: argument conversion, GIL release and error mapping. No logic:
//! the rules live in the core modules these call. One file per kind of binding:
//! `buffers` (Python buffers and values), `stores` (stores and read sessions),
//! `keys` (selections and regions), `array` (the own API's arrays), `codec`
//! (zarr-python's codec pipeline), `config` (codec and chunk key encoding
//! configurations), `dtype` (the core's data-type sizes), `grid` (the
//! rectilinear chunk grid).

mod array;
mod awaitable;
mod batch_io;
mod buffers;
mod chunk_layout;
mod codec;
mod codec_chain;
mod codec_chain_spec;
mod config;
mod dtype;
mod grid;
mod index_space;
mod json;
mod many;
mod selection;
mod stores;

use pyo3::exceptions::{PyIndexError, PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::engine::commit::{self, ConditionalWrites};
use crate::error::{Error, ErrorKind};
use crate::pool;
use array::ArrayHandle;
use codec::ChunkCodec;
use selection::SelectionHandle;
use stores::{memory_items, ReadSessionHandle, StoreHandle, WriteBatch};

/// Raise the `zarrox.errors` class that matches the error's kind.
pub(crate) fn to_py_err(e: Error) -> PyErr {
    let class = match e.kind {
        ErrorKind::Metadata => "MetadataError",
        ErrorKind::Unsupported => "UnsupportedError",
        ErrorKind::UnknownCodec => "UnknownCodecError",
        ErrorKind::Corrupt => "CorruptChunkError",
        ErrorKind::Checksum => "ChecksumError",
        ErrorKind::Store => "StoreError",
        ErrorKind::Permission => "StorePermissionError",
        ErrorKind::Timeout => "StoreTimeoutError",
        ErrorKind::Changed => "StoreError",
        ErrorKind::Conflict => "WriteConflictError",
        ErrorKind::NotFound => "NodeNotFoundError",
        ErrorKind::Bounds => "BoundsCheckError",
        ErrorKind::Spec => "SpecError",
        ErrorKind::SpecMismatch => "SpecMismatchError",
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

/// Set when writes that merge into stored values are conditional: "auto",
/// "require" or "off" (`io.conditional_writes`).
#[pyfunction]
fn set_conditional_writes(mode: &str) -> PyResult<()> {
    let mode = ConditionalWrites::parse(mode).map_err(to_py_err)?;
    commit::set_mode(mode);
    Ok(())
}

/// The `io.conditional_writes` mode in force.
#[pyfunction]
fn get_conditional_writes() -> &'static str {
    commit::mode().name()
}

/// How many chunk merges of this process lost a race and were tried again.
#[pyfunction]
fn write_retries() -> u64 {
    commit::retries()
}

/// What the part map cache (shard indexes) holds and how it was used: entries, bytes,
/// limit (bytes), hits, misses (this process).
#[pyfunction]
fn shard_index_cache() -> std::collections::BTreeMap<&'static str, u64> {
    stats_dict(crate::cache::part_map_stats())
}

/// A recheck mode from its name: "always", "never", "open" or "within"
/// `seconds`.
pub(crate) fn recheck_mode(recheck: &str, seconds: f64) -> PyResult<crate::cache::Recheck> {
    use crate::cache::Recheck;
    Ok(match recheck {
        "always" => Recheck::Always,
        "never" => Recheck::Never,
        "open" => Recheck::Open,
        "within" => Recheck::Within(std::time::Duration::try_from_secs_f64(seconds).map_err(
            |_| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "a recheck bound must be a number of seconds >= 0, got {seconds}"
                ))
            },
        )?),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown recheck mode '{other}'"
            )))
        }
    })
}

/// Configure the process's decoded-chunk cache: its budget in bytes (0: off)
/// and when cached chunks are checked: "always", "never", "open" or
/// "within" `seconds` (`cache.bytes`, `cache.recheck`).
#[pyfunction]
fn set_chunk_cache(bytes: usize, recheck: &str, seconds: f64) -> PyResult<()> {
    crate::cache::configure_chunks(bytes, recheck_mode(recheck, seconds)?);
    Ok(())
}

/// A pool of cached chunks with its own budget (a TensorStore spec's
/// `cache_pool`), and when the arrays given it check their chunks.
#[pyclass(module = "zarrox._core", name = "CachePool", frozen)]
pub struct CachePool {
    pub(crate) cache: crate::cache::DataCache,
}

#[pymethods]
impl CachePool {
    /// A pool of `total_bytes_limit` bytes (0: nothing is cached); its
    /// arrays check cached chunks as `recheck` says ("always", "never",
    /// "open", "within" `seconds`; `None`: `cache.recheck`).
    #[new]
    #[pyo3(signature = (total_bytes_limit, recheck=None, seconds=0.0))]
    fn new(total_bytes_limit: usize, recheck: Option<&str>, seconds: f64) -> PyResult<Self> {
        let recheck = recheck.map(|r| recheck_mode(r, seconds)).transpose()?;
        Ok(CachePool {
            cache: crate::cache::DataCache::own(total_bytes_limit, recheck),
        })
    }

    /// The same pool, its arrays checking as `recheck` says.
    #[pyo3(signature = (recheck=None, seconds=0.0))]
    fn with_recheck(&self, recheck: Option<&str>, seconds: f64) -> PyResult<Self> {
        let recheck = recheck.map(|r| recheck_mode(r, seconds)).transpose()?;
        Ok(CachePool {
            cache: self.cache.with_recheck(recheck),
        })
    }

    /// What the pool holds and how it was used: entries, bytes, limit
    /// (bytes), hits, misses.
    fn stats(&self) -> std::collections::BTreeMap<&'static str, u64> {
        stats_dict(self.cache.stats())
    }
}

/// What the decoded-chunk cache holds and how it was used: entries, bytes,
/// limit (bytes), hits, misses (this process).
#[pyfunction]
fn chunk_cache() -> std::collections::BTreeMap<&'static str, u64> {
    stats_dict(crate::cache::DataCache::process().stats())
}

pub(crate) fn stats_dict(s: crate::cache::Stats) -> std::collections::BTreeMap<&'static str, u64> {
    std::collections::BTreeMap::from([
        ("entries", s.entries as u64),
        ("bytes", s.bytes as u64),
        ("limit", s.limit as u64),
        ("hits", s.hits),
        ("misses", s.misses),
    ])
}

/// The benchmarks' decode floor of an array: every stored chunk fetched and
/// decoded on the pool, nothing placed: (chunks decoded, decoded bytes).
#[pyfunction]
fn decode_stored_chunks(py: Python<'_>, array: &ArrayHandle) -> PyResult<(usize, usize)> {
    py.detach(|| crate::floors::decode_stored_chunks(array.core()))
        .map_err(to_py_err)
}

/// The benchmarks' compression floor of an array: every stored chunk decoded
/// once, then encoded `repeat` times on the pool, nothing stored: (chunks,
/// encoded bytes, seconds of each pass).
#[pyfunction]
fn encode_floor(
    py: Python<'_>,
    array: &ArrayHandle,
    repeat: usize,
) -> PyResult<(usize, usize, Vec<f64>)> {
    py.detach(|| crate::floors::encode_floor(array.core(), repeat))
        .map_err(to_py_err)
}

/// A warning (Python's warnings module, through `zarrox.storage`) that the
/// store at `store` ignores byte ranges; an error raised by it (warnings
/// turned into errors) is reported as unraisable: the read goes on.
fn warn_ranges_ignored(store: &str) {
    Python::attach(|py| {
        let warned = py
            .import("zarrox.storage")
            .and_then(|m| m.call_method1("warn_ranges_ignored", (store,)));
        if let Err(e) = warned {
            e.write_unraisable(py, None);
        }
    });
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::store::on_ranges_ignored(warn_ranges_ignored);
    m.add_class::<StoreHandle>()?;
    m.add_class::<ArrayHandle>()?;
    m.add_class::<CachePool>()?;
    m.add_class::<ChunkCodec>()?;
    m.add_class::<ReadSessionHandle>()?;
    m.add_class::<WriteBatch>()?;
    m.add_class::<SelectionHandle>()?;
    m.add_function(wrap_pyfunction!(set_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_threads, m)?)?;
    m.add_function(wrap_pyfunction!(set_io_concurrency, m)?)?;
    m.add_function(wrap_pyfunction!(get_io_concurrency, m)?)?;
    m.add_function(wrap_pyfunction!(set_conditional_writes, m)?)?;
    m.add_function(wrap_pyfunction!(get_conditional_writes, m)?)?;
    m.add_function(wrap_pyfunction!(write_retries, m)?)?;
    m.add_function(wrap_pyfunction!(shard_index_cache, m)?)?;
    m.add_function(wrap_pyfunction!(set_chunk_cache, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_cache, m)?)?;
    m.add_function(wrap_pyfunction!(decode_stored_chunks, m)?)?;
    m.add_function(wrap_pyfunction!(encode_floor, m)?)?;
    m.add_function(wrap_pyfunction!(memory_items, m)?)?;
    m.add_function(wrap_pyfunction!(buffers::fortran_to_c, m)?)?;
    m.add_function(wrap_pyfunction!(many::read_many, m)?)?;
    m.add_function(wrap_pyfunction!(many::write_many, m)?)?;
    m.add_function(wrap_pyfunction!(many::write_many_async, m)?)?;
    config::register(m)?;
    codec_chain::register(m)?;
    dtype::register(m)?;
    grid::register(m)?;
    index_space::register(m)?;
    chunk_layout::register(m)?;
    codec_chain_spec::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
