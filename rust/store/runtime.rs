//! The I/O runtime: a tokio runtime of its own that network requests run on,
//! so that requests in flight are independent of the decoding threads.
//!
//! It survives `fork()`: a forked child has none of the parent's runtime
//! threads, so the runtime is rebuilt the first time the child uses it (the
//! parent's is leaked, not dropped, since dropping it would wait for threads
//! that do not exist in the child).

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::runtime::Runtime;

use crate::error::{Error, Result};

struct RuntimeState {
    pid: u32,
    runtime: Arc<Runtime>,
}

static RUNTIME: Mutex<Option<RuntimeState>> = Mutex::new(None);

/// Threads of the I/O runtime: enough to keep sockets, TLS and HTTP framing
/// moving; the decoding happens on the worker pool.
const IO_THREADS: usize = 2;

/// The I/O runtime of this process, built (or rebuilt after a fork) as needed.
pub fn runtime() -> Result<Arc<Runtime>> {
    let pid = std::process::id();
    let mut guard = crate::fork::lock(&RUNTIME);
    if let Some(state) = guard.as_ref() {
        if state.pid == pid {
            return Ok(Arc::clone(&state.runtime));
        }
    }
    let runtime = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(IO_THREADS)
            .thread_name("zarrox-io")
            .enable_all()
            .build()
            .map_err(|e| Error::store(format!("cannot start the I/O runtime: {e}")))?,
    );
    if let Some(old) = guard.replace(RuntimeState {
        pid,
        runtime: Arc::clone(&runtime),
    }) {
        // A runtime of the parent process: its threads are gone here.
        std::mem::forget(old);
    }
    Ok(runtime)
}

/// Run `fut` to completion on the calling thread, with the I/O runtime
/// driving its sockets and timers.
pub fn block_on<T>(fut: impl Future<Output = T>) -> Result<T> {
    let rt = runtime()?;
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::store(
            "internal error: a blocking store call from inside the I/O runtime",
        ));
    }
    Ok(rt.block_on(fut))
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_futures_and_refuses_nesting() {
        let v = super::block_on(async { 41 + 1 }).unwrap();
        assert_eq!(v, 42);
        let nested = super::block_on(async { super::block_on(async { 1 }) }).unwrap();
        assert!(nested.is_err());
    }
}
