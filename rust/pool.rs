//! The rayon thread pool that batch reads and writes run on.
//!
//! It honours a configured thread count and survives `fork()`: a forked child
//! has none of the parent's worker threads, so the pool is rebuilt the first
//! time the child uses it (the parent's pool object is leaked, not dropped,
//! since dropping it would signal threads that do not exist in the child).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rayon::ThreadPool;

use crate::error::{Error, Result};

struct PoolState {
    pid: u32,
    threads: usize,
    pool: Arc<ThreadPool>,
}

static POOL: Mutex<Option<PoolState>> = Mutex::new(None);
/// Configured thread count; 0 means one per available core.
static CONFIGURED: AtomicUsize = AtomicUsize::new(0);

/// Requests kept in flight at once on an object store (independent of the
/// number of threads: a request mostly waits for the network).
static IO_CONCURRENCY: AtomicUsize = AtomicUsize::new(DEFAULT_IO_CONCURRENCY);

/// Requests in flight on an object store unless configured: enough to hide
/// tens of milliseconds of latency at hundreds of megabytes per second.
pub const DEFAULT_IO_CONCURRENCY: usize = 64;

/// Set the number of requests kept in flight on object stores (0: the default).
pub fn set_io_concurrency(n: usize) {
    let n = if n == 0 { DEFAULT_IO_CONCURRENCY } else { n };
    IO_CONCURRENCY.store(n, Ordering::SeqCst);
}

/// The number of requests kept in flight on object stores.
pub fn io_concurrency() -> usize {
    IO_CONCURRENCY.load(Ordering::SeqCst)
}

/// Set the number of worker threads (0: one per core). Takes effect on the next batch.
pub fn set_num_threads(n: usize) {
    CONFIGURED.store(n, Ordering::SeqCst);
}

/// The number of worker threads the next batch will use.
pub fn num_threads() -> usize {
    match CONFIGURED.load(Ordering::SeqCst) {
        0 => available_cores(),
        n => n,
    }
}

/// The CPUs this process may use (`std::thread::available_parallelism`:
/// its CPU affinity, capped by a cgroup CPU quota). That reads the cgroup's
/// files, a dozen system calls (9 us here) per call, so the answer is kept
/// and asked again only when the affinity, counted with one system call,
/// has changed since; a quota changed while the process runs is not seen.
fn available_cores() -> usize {
    /// The affinity count (high half) and the answer for it (low half); 0: none yet.
    static SEEN: AtomicU64 = AtomicU64::new(0);
    let affinity = affinity_count();
    if let Some(a) = affinity {
        let seen = SEEN.load(Ordering::Relaxed);
        if seen != 0 && seen >> 32 == a as u64 {
            return (seen & u64::from(u32::MAX)) as usize;
        }
    }
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if let Some(a) = affinity {
        if let (Ok(a), Ok(n)) = (u32::try_from(a), u32::try_from(n)) {
            SEEN.store((u64::from(a) << 32) | u64::from(n), Ordering::Relaxed);
        }
    }
    n
}

/// How many CPUs the process's affinity mask allows (`None` where it cannot
/// be read in one call: other systems, or more CPUs than a `cpu_set_t` holds).
#[cfg(target_os = "linux")]
fn affinity_count() -> Option<usize> {
    // SAFETY: `cpu_set_t` is a plain bit array, for which all zeroes is a
    // valid (empty) value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the kernel writes at most the given size into `set`, which is
    // that size; pid 0 is the calling thread.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    // SAFETY: `set` is initialised (zeroed, then filled by the kernel).
    (r == 0).then(|| unsafe { libc::CPU_COUNT(&set) } as usize)
}

#[cfg(not(target_os = "linux"))]
fn affinity_count() -> Option<usize> {
    None
}

/// The pool for this process, built or rebuilt as needed.
pub fn pool() -> Result<Arc<ThreadPool>> {
    let pid = std::process::id();
    let threads = num_threads();
    let mut guard = crate::fork::lock(&POOL);
    if let Some(state) = guard.as_ref() {
        if state.pid == pid && state.threads == threads {
            return Ok(Arc::clone(&state.pool));
        }
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("zarrox-{i}"))
            .build()
            .map_err(|e| Error::store(format!("cannot start worker threads: {e}")))?,
    );
    if let Some(old) = guard.replace(PoolState {
        pid,
        threads,
        pool: Arc::clone(&pool),
    }) {
        if old.pid != pid {
            std::mem::forget(old);
        }
    }
    Ok(pool)
}

/// Run `op` on the worker pool: at once when the calling thread is already
/// one of its workers (a parallel loop inside a task: looking the pool up
/// again would take the pool's lock and count the CPUs, a dozen system calls,
/// for every batch of a shard), else on the pool [`pool`] returns.
pub fn install<R: Send>(op: impl FnOnce() -> R + Send) -> Result<R> {
    if rayon::current_thread_index().is_some() {
        return Ok(op());
    }
    Ok(pool()?.install(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_core_count_is_the_standard_one() {
        let expected = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(available_cores(), expected);
        assert_eq!(available_cores(), expected, "from the kept answer");
        #[cfg(target_os = "linux")]
        assert!(affinity_count().is_some_and(|a| a >= expected));
    }

    #[test]
    fn pool_follows_configuration() {
        set_num_threads(3);
        assert_eq!(pool().unwrap().current_num_threads(), 3);
        set_num_threads(0);
        assert!(pool().unwrap().current_num_threads() >= 1);
    }
}
