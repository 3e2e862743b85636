//! Reads of many arrays at once (`zarrox.read_many`, `zarrox.Batch`): every
//! read's engine future is started together on the I/O runtime and waited
//! for together, so the requests of all of them are in flight at once (one
//! round of latency on an object store instead of one per read) and their
//! chunks decode on the one worker pool.

use futures::future::BoxFuture;
use numpy::PyReadwriteArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::array::ArrayHandle;
use super::awaitable::{awaitable, held_destination, held_input, rust_store};
use super::buffers::out_bytes;
use super::selection::SelectionHandle;
use super::to_py_err;
use crate::batch::{MemoryOrder, WriteDone};
use crate::error::Error;

/// One read or write: the array, its normalised selection, the uint8 view
/// of the result buffer (a read) or the value as `ArrayHandle.write` takes it
/// (a write), its memory `order` ("C" or "F"), and where the array is (its
/// errors begin with it: many arrays may have the same path in their stores).
type OneIo<'py> = (
    PyRef<'py, ArrayHandle>,
    PyRef<'py, SelectionHandle>,
    Bound<'py, PyAny>,
    String,
    String,
);

/// Read every `(array, selection, out, order, name)` of `reads` into its `out`
/// (as `ArrayHandle.read` does, for stores Rust reads), all at once; returns
/// when all are done. An error of any read (the first in `reads`' order) is
/// raised once all have ended; the others' buffers are then filled or not.
#[pyfunction]
pub(super) fn read_many(py: Python<'_>, reads: Vec<OneIo<'_>>) -> PyResult<()> {
    let mut spans = Vec::with_capacity(reads.len());
    let mut futures = Vec::with_capacity(reads.len());
    let mut names = Vec::with_capacity(reads.len());
    for (handle, selection, out, order, name) in reads {
        names.push(name);
        let order = MemoryOrder::parse(&order).map_err(to_py_err)?;
        // borrowed one at a time (each is held by its read's future): a buffer
        // two reads share is refused below, by its bytes
        let mut out = out.extract::<PyReadwriteArray1<'_, u8>>()?;
        let bytes = out_bytes(&mut out)?;
        spans.push((bytes.as_ptr() as usize, bytes.len()));
        let (store, batch) = handle
            .core()
            .batch_of(&selection.inner.selection, order)
            .map_err(to_py_err)?;
        let store = rust_store(store, "read_many reads stores Rust reads (see in_rust)")?;
        futures.push(batch.read_async(store, held_destination(Some(out))?));
    }
    // The reads write their buffers from other threads at once: no two may
    // share a byte.
    spans.sort_unstable();
    if spans.windows(2).any(|w| w[0].0 + w[0].1 > w[1].0) {
        return Err(PyValueError::new_err(
            "read_many: two reads share an output buffer",
        ));
    }
    let results = py
        .detach(|| crate::store::runtime::block_on(futures::future::join_all(futures)))
        .map_err(to_py_err)?;
    for (result, name) in results.into_iter().zip(names) {
        result.map_err(|e| named(e, &name))?;
    }
    Ok(())
}

/// Write every `(array, selection, value, order, name)` of `writes` (as
/// `ArrayHandle.write` does, for stores Rust writes), all at once: their
/// requests in flight together, each read-modify-write conditional on the
/// generation it read. Returns when all have ended, one entry per write:
/// None where it committed, else its exception (its message begins with
/// `name`). A transaction's commit (`zarrox.Transaction`) writes each stored
/// object it staged once through this.
#[pyfunction]
pub(super) fn write_many(py: Python<'_>, writes: Vec<OneIo<'_>>) -> PyResult<Vec<Option<PyErr>>> {
    let (futures, names) = write_futures(writes)?;
    let results = py
        .detach(|| crate::store::runtime::block_on(futures::future::join_all(futures)))
        .map_err(to_py_err)?;
    Ok(outcomes(results, names))
}

/// `write_many` as an awaitable (an `asyncio.Future` the engine completes,
/// no Python thread waiting): it resolves to the list `write_many` returns.
/// The values' buffers are held until it is done.
#[pyfunction]
pub(super) fn write_many_async<'py>(
    py: Python<'py>,
    writes: Vec<OneIo<'py>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (futures, names) = write_futures(writes)?;
    let work = async move { Ok(futures::future::join_all(futures).await) };
    awaitable(py, work, move |py, results| {
        let list = PyList::empty(py);
        for error in outcomes(results, names) {
            match error {
                Some(e) => list.append(e.into_value(py))?,
                None => list.append(py.None())?,
            }
        }
        Ok(list.into_any().unbind())
    })
}

/// Each write's engine future (its value held), and the names its errors
/// begin with.
#[allow(clippy::type_complexity)]
fn write_futures(
    writes: Vec<OneIo<'_>>,
) -> PyResult<(
    Vec<BoxFuture<'static, crate::error::Result<WriteDone>>>,
    Vec<String>,
)> {
    let mut futures = Vec::with_capacity(writes.len());
    let mut names = Vec::with_capacity(writes.len());
    for (handle, selection, value, order, name) in writes {
        let order = MemoryOrder::parse(&order).map_err(to_py_err)?;
        let (store, batch) = handle
            .core()
            .batch_of(&selection.inner.selection, order)
            .map_err(to_py_err)?;
        let store = rust_store(store, "write_many writes stores Rust writes (see in_rust)")?;
        futures.push(batch.write_async(store, held_input(&value)?));
        names.push(name);
    }
    Ok((futures, names))
}

/// One entry per write: None where it committed, else its error named.
fn outcomes(
    results: Vec<crate::error::Result<WriteDone>>,
    names: Vec<String>,
) -> Vec<Option<PyErr>> {
    results
        .into_iter()
        .zip(names)
        .map(|(result, name)| result.err().map(|e| named(e, &name)))
        .collect()
}

/// `e` as a Python exception whose message begins with `name` (where its
/// array is).
fn named(e: Error, name: &str) -> PyErr {
    to_py_err(Error {
        kind: e.kind,
        message: format!("{name}: {}", e.message),
    })
}
