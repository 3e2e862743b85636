//! Awaitables the engine completes: an `asyncio.Future` of the running event
//! loop, whose read or write runs as a task on the I/O runtime; when it ends,
//! one Rust thread (`completer`) resolves the futures that finished through
//! `loop.call_soon_threadsafe`, with no Python thread per await. Cancelling
//! the future (the awaiting task cancelled) aborts the task: its future is
//! dropped on the I/O runtime (see `Batch::read_async`).

use std::future::Future;

use numpy::{PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use super::buffers::{out_bytes, value_bytes, var_items, var_list};
use super::to_py_err;
use crate::array::StoreRef;
use crate::batch::{InBuffer, OutBuffer, OwnedDestination, OwnedInput, ReadDone, WriteDone};
use crate::error::Result;
use crate::store::Store;

/// The store an awaitable read or write runs on: only one Rust reads and
/// writes itself; else a ValueError saying `refusal`.
pub(super) fn rust_store(store: StoreRef, refusal: &str) -> PyResult<std::sync::Arc<dyn Store>> {
    match store {
        StoreRef::Rust(store) => Ok(store),
        StoreRef::Caller(_) => Err(PyValueError::new_err(refusal.to_string())),
    }
}

/// A future of the running event loop that `work` completes: with
/// `convert`'s value of its result, or with its error as the blocking call
/// raises it. The work starts at once on the I/O runtime.
pub(super) fn awaitable<'py, T, W, C>(
    py: Python<'py>,
    work: W,
    convert: C,
) -> PyResult<Bound<'py, PyAny>>
where
    T: Send + 'static,
    W: Future<Output = Result<T>> + Send + 'static,
    C: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    // asyncio is loaded: a coroutine of a running loop is calling
    let asyncio = py.import(intern!(py, "asyncio"))?;
    let event_loop = asyncio.call_method0(intern!(py, "get_running_loop"))?;
    let future = event_loop.call_method0(intern!(py, "create_future"))?;
    if completer::exiting() {
        // an `atexit` function awaits after the completer stopped: the work
        // runs here, and the future is done before it is returned
        let result = py
            .detach(|| crate::store::runtime::block_on(work))
            .and_then(|r| r);
        let (ok, value) = outcome(result, convert)(py);
        completer::settle(&future, ok, value.bind(py))?;
        return Ok(future);
    }
    let runtime = crate::store::runtime::runtime().map_err(to_py_err)?;
    completer::stop_at_exit(py)?;
    let (target, on_loop) = (future.clone().unbind(), event_loop.unbind());
    let task = runtime.spawn(async move {
        use futures::FutureExt;
        let result = std::panic::AssertUnwindSafe(work)
            .catch_unwind()
            .await
            .unwrap_or_else(|_| {
                Err(crate::error::Error::value(
                    "internal error: an awaitable read or write panicked",
                ))
            });
        completer::send(Done {
            on_loop,
            target,
            value: outcome(result, convert),
        });
    });
    let cancel = Cancel {
        task: task.abort_handle(),
    };
    future.call_method1(intern!(py, "add_done_callback"), (cancel,))?;
    Ok(future)
}

/// What an awaitable resolves to, made with the GIL held: (ok, the value or
/// the exception).
type Outcome = Box<dyn FnOnce(Python<'_>) -> (bool, Py<PyAny>) + Send>;

/// The outcome of work that ended with `result`: `convert`'s value of it, or
/// the error as the blocking call raises it.
fn outcome<T, C>(result: Result<T>, convert: C) -> Outcome
where
    T: Send + 'static,
    C: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    Box::new(
        move |py| match result.map_err(to_py_err).and_then(|v| convert(py, v)) {
            Ok(value) => (true, value),
            Err(e) => (false, e.into_value(py).into_any()),
        },
    )
}

/// A finished read or write, to resolve its future on its loop.
struct Done {
    on_loop: Py<PyAny>,
    target: Py<PyAny>,
    value: Outcome,
}

/// Resolving futures: the I/O runtime hands finished work to one thread of
/// its own, which takes the GIL once for all that finished meanwhile and
/// schedules one callback per event loop (`call_soon_threadsafe`): the I/O
/// threads never wait for the GIL, and a burst of completions wakes the loop
/// once. Rebuilt after a fork, as the runtime is.
///
/// The thread must not be inside Python when the interpreter finalizes: a
/// thread that takes the GIL back then (even between two bytecodes of
/// `call_soon_threadsafe`) is ended by CPython < 3.14 with `pthread_exit`,
/// whose unwinding Rust's thread entry catches, and glibc aborts the process
/// ("FATAL: exception not rethrown"). So an `atexit` function (Python runs
/// them before it finalizes) closes a gate and waits, the GIL released, for
/// a batch that went through it; later batches are dropped unresolved.
mod completer {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    use std::sync::mpsc::{channel, Receiver, Sender};
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use pyo3::intern;
    use pyo3::prelude::*;
    use pyo3::sync::PyOnceLock;
    use pyo3::types::{PyBool, PyList, PyTuple};

    use super::Done;

    static SENDER: Mutex<Option<(u32, Sender<Done>)>> = Mutex::new(None);

    /// `settle_all` as a Python function, made once.
    static SETTLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

    pub(super) fn send(done: Done) {
        let pid = std::process::id();
        let mut guard = crate::fork::lock(&SENDER);
        if !matches!(guard.as_ref(), Some((p, _)) if *p == pid) {
            let (tx, rx) = channel();
            let started = std::thread::Builder::new()
                .name("zarrox-await".into())
                .spawn(move || run(rx));
            if started.is_err() {
                return; // no thread: the future stays pending, as a lost loop's would
            }
            // the parent's sender (a fork) is forgotten: its thread is not here
            if let Some(old) = guard.replace((pid, tx)) {
                std::mem::forget(old);
            }
        }
        if let Some((_, tx)) = guard.as_ref() {
            let _ = tx.send(done);
        }
    }

    /// The interpreter is exiting: no batch goes into Python any more.
    static EXITING: AtomicBool = AtomicBool::new(false);
    /// The process whose completer is in Python now (0: none). A process id,
    /// not a flag: a child forked meanwhile has no such thread to wait for.
    static IN_PYTHON: AtomicU32 = AtomicU32::new(0);
    /// `stop` is registered with `atexit` (inherited by a forked child).
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    /// How long the exit waits for a batch in Python: resolving is a few
    /// calls of `call_soon_threadsafe`; a wait this long means the thread is
    /// stuck, and the exit goes on rather than hang.
    const EXIT_WAIT: Duration = Duration::from_secs(10);

    /// `stop` ran: the interpreter is exiting.
    pub(super) fn exiting() -> bool {
        EXITING.load(Ordering::SeqCst)
    }

    /// Register `stop` with `atexit`, once per process.
    pub(super) fn stop_at_exit(py: Python<'_>) -> PyResult<()> {
        if REGISTERED.load(Ordering::Acquire) {
            return Ok(());
        }
        let stop = wrap_pyfunction!(stop, py)?;
        py.import(intern!(py, "atexit"))?
            .call_method1(intern!(py, "register"), (stop,))?;
        REGISTERED.store(true, Ordering::Release);
        Ok(())
    }

    /// Close the gate, then wait (GIL released, so that a batch waiting for
    /// it can finish) until no batch of this process is in Python.
    #[pyfunction]
    fn stop(py: Python<'_>) {
        EXITING.store(true, Ordering::SeqCst);
        let pid = std::process::id();
        py.detach(|| {
            let since = Instant::now();
            while IN_PYTHON.load(Ordering::SeqCst) == pid && since.elapsed() < EXIT_WAIT {
                std::thread::sleep(Duration::from_millis(1));
            }
        });
    }

    fn run(rx: Receiver<Done>) {
        let pid = std::process::id();
        while let Ok(first) = rx.recv() {
            let mut batch = vec![first];
            batch.extend(rx.try_iter());
            // announce, then look at the gate (both SeqCst): either `stop`
            // sees this batch in Python and waits, or the batch sees `stop`
            IN_PYTHON.store(pid, Ordering::SeqCst);
            if !EXITING.load(Ordering::SeqCst) {
                Python::attach(|py| resolve(py, batch));
            } else {
                // its references are released without the GIL (deferred)
                drop(batch);
            }
            IN_PYTHON.store(0, Ordering::SeqCst);
        }
    }

    /// One `call_soon_threadsafe(settle_all, [(future, ok, value), ...])` per loop.
    fn resolve(py: Python<'_>, batch: Vec<Done>) {
        let mut loops: Vec<(Py<PyAny>, Vec<Bound<'_, PyTuple>>)> = Vec::new();
        for done in batch {
            let (ok, value) = (done.value)(py);
            let ok = PyBool::new(py, ok).to_owned().into_any().unbind();
            let Ok(item) = PyTuple::new(py, [done.target, ok, value]) else {
                continue;
            };
            match loops.iter_mut().find(|(l, _)| l.is(&done.on_loop)) {
                Some((_, items)) => items.push(item),
                None => loops.push((done.on_loop, vec![item])),
            }
        }
        let Ok(settle) = SETTLE.get_or_try_init(py, || {
            wrap_pyfunction!(settle_all, py).map(|f| f.into_any().unbind())
        }) else {
            return;
        };
        for (on_loop, items) in loops {
            let Ok(items) = PyList::new(py, items) else {
                continue;
            };
            // a closed loop has nobody left to tell
            let _ = on_loop.call_method1(py, intern!(py, "call_soon_threadsafe"), (settle, items));
        }
    }

    /// Resolve each `(future, ok, value)` (on its loop's thread): its result,
    /// or (`ok` false) the exception; nothing when it was cancelled meanwhile.
    #[pyfunction]
    fn settle_all(items: &Bound<'_, PyList>) -> PyResult<()> {
        let py = items.py();
        for item in items.iter() {
            let (future, ok, value): (Bound<'_, PyAny>, bool, Bound<'_, PyAny>) = item.extract()?;
            if future.call_method0(intern!(py, "done"))?.is_truthy()? {
                continue;
            }
            settle(&future, ok, &value)?;
        }
        Ok(())
    }

    /// Resolve `future` with its result `value`, or (`ok` false) the exception.
    pub(super) fn settle(
        future: &Bound<'_, PyAny>,
        ok: bool,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = future.py();
        let method = if ok {
            intern!(py, "set_result")
        } else {
            intern!(py, "set_exception")
        };
        future.call_method1(method, (value,)).map(|_| ())
    }
}

/// The done callback of an awaitable: when it was cancelled, abort the work.
#[pyclass(module = "zarrox._core", frozen)]
struct Cancel {
    task: tokio::task::AbortHandle,
}

#[pymethods]
impl Cancel {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0("cancelled")?.is_truthy()? {
            self.task.abort();
        }
        Ok(())
    }
}

/// A numpy uint8 array that an awaitable read decodes into while Python runs.
struct HeldOut {
    _array: Py<PyArray1<u8>>,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: `ptr` and `len` are the data of the C-contiguous, writeable array
// `_array`, which the reference keeps alive (numpy neither frees nor moves
// the data of an array that is referenced: `resize` refuses). Writing the
// bytes needs no GIL. The caller hands the array over for the read: it is
// allocated for it (`AsyncArray`) or the output zarr-python awaits the read
// for (the pipeline), and not used until the awaitable is done. Dropping a
// `Py` without the GIL only defers its reference count's decrement.
unsafe impl Send for HeldOut {}

impl OutBuffer for HeldOut {
    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: see the `Send` comment; `&mut self` makes this the only slice.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// Where an awaitable read puts the elements: `out`'s bytes, or (None) a list.
pub(super) fn held_destination(
    out: Option<PyReadwriteArray1<'_, u8>>,
) -> PyResult<OwnedDestination> {
    let Some(mut out) = out else {
        return Ok(OwnedDestination::List);
    };
    let bytes = out_bytes(&mut out)?;
    let (ptr, len) = (bytes.as_mut_ptr(), bytes.len());
    let array: &Bound<'_, PyArray1<u8>> = &out;
    Ok(OwnedDestination::Buffer(Box::new(HeldOut {
        _array: array.clone().unbind(),
        ptr,
        len,
    })))
}

/// A numpy uint8 array an awaitable write reads.
struct HeldIn {
    _array: Py<PyArray1<u8>>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: `ptr` and `len` are the data of the C-contiguous array `_array`,
// kept alive by the reference (see `HeldOut`); the write only reads it, and
// the caller does not change the value until the awaitable is done (as for
// any write in flight).
unsafe impl Send for HeldIn {}
// SAFETY: shared access only reads.
unsafe impl Sync for HeldIn {}

impl InBuffer for HeldIn {
    fn bytes(&self) -> &[u8] {
        // SAFETY: see the `Send` comment.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// The value of an awaitable write (see `Value`): a C-contiguous uint8 array
/// (kept, not copied), a list of str or bytes, or one element.
pub(super) fn held_input(value: &Bound<'_, PyAny>) -> PyResult<OwnedInput> {
    if let Ok(b) = value.cast::<PyBytes>() {
        return Ok(OwnedInput::Scalar(b.as_bytes().to_vec()));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(OwnedInput::Scalar(s.to_str()?.as_bytes().to_vec()));
    }
    if let Ok(arr) = value.extract::<PyReadonlyArray1<'_, u8>>() {
        let bytes = value_bytes(&arr)?;
        let (ptr, len) = (bytes.as_ptr(), bytes.len());
        let array: &Bound<'_, PyArray1<u8>> = &arr;
        return Ok(OwnedInput::Buffer(Box::new(HeldIn {
            _array: array.clone().unbind(),
            ptr,
            len,
        })));
    }
    Ok(OwnedInput::Var(var_items(value)?))
}

/// What an awaitable read returns: which chunks exist, or (the
/// variable-length values as str (`utf8`) or bytes, which chunks exist).
pub(super) fn read_result(py: Python<'_>, done: ReadDone, utf8: bool) -> PyResult<Py<PyAny>> {
    match done {
        ReadDone::Present(present) => Ok(PyList::new(py, present)?.into_any().unbind()),
        ReadDone::Values(values, present) => {
            let values = var_list(py, &values, utf8)?;
            Ok((values, PyList::new(py, present)?)
                .into_pyobject(py)?
                .into_any()
                .unbind())
        }
        ReadDone::Session(_) => Err(PyValueError::new_err(
            "internal error: an awaitable read of a store Python serves",
        )),
    }
}

/// What an awaitable write returns: None.
pub(super) fn write_result(py: Python<'_>, done: WriteDone) -> PyResult<Py<PyAny>> {
    match done {
        WriteDone::Written => Ok(py.None()),
        _ => Err(PyValueError::new_err(
            "internal error: an awaitable write of a store Python serves",
        )),
    }
}
