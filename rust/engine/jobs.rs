//! Jobs on the worker pool that borrow from an awaitable read or write.
//!
//! A blocking read hands its decoding to a rayon scope, which waits for its
//! jobs before the call returns. An awaitable read cannot wait in a scope (it
//! would block the I/O runtime's thread for the whole read), so its jobs are
//! counted instead, and the counter ([`Jobs`]) waits for the jobs still
//! running when it is dropped: when the read ends, or when the awaiting task
//! is cancelled and the read's future dropped. The jobs borrow the read's
//! chain, tasks and output, which the future owns and frees only after that.

use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};

use rayon::ThreadPool;

use crate::error::Result;

/// Jobs running on the worker pool that borrow data for `'env`; dropping it
/// waits until none is running.
pub(crate) struct Jobs<'env> {
    pool: Arc<ThreadPool>,
    running: Arc<Running>,
    /// Invariant in `'env`, as `rayon::Scope` is.
    _env: PhantomData<&'env mut &'env ()>,
}

#[derive(Default)]
struct Running {
    count: Mutex<usize>,
    idle: Condvar,
}

impl Running {
    fn lock(&self) -> std::sync::MutexGuard<'_, usize> {
        // a job that panicked holds no lock (the count is changed outside it)
        self.count.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Counts a job as ended when dropped (also when the job panicked).
struct Ended(Arc<Running>);

impl Drop for Ended {
    fn drop(&mut self) {
        let mut n = self.0.lock();
        *n -= 1;
        if *n == 0 {
            self.0.idle.notify_all();
        }
    }
}

impl<'env> Jobs<'env> {
    /// Jobs on the process's worker pool.
    ///
    /// # Safety
    /// The value must be dropped before any data its jobs borrow for `'env`
    /// is freed or used mutably elsewhere. Leaking it (`mem::forget`) is
    /// allowed only when that data is leaked with it (both owned by one
    /// future that is leaked whole).
    pub(crate) unsafe fn new() -> Result<Self> {
        Ok(Jobs {
            pool: crate::pool::pool()?,
            running: Arc::default(),
            _env: PhantomData,
        })
    }

    /// Run `f` on the worker pool. A panic in `f` ends the job (the caller
    /// sees its result channel closed); it never reaches the pool.
    pub(crate) fn spawn(&self, f: impl FnOnce() + Send + 'env) {
        *self.running.lock() += 1;
        let ended = Ended(Arc::clone(&self.running));
        let job: Box<dyn FnOnce() + Send + 'env> = Box::new(f);
        // SAFETY: only the lifetime changes. The job runs before `ended` is
        // dropped, and `Drop for Jobs` does not return while a job has not
        // ended; by `new`'s contract the data borrowed for `'env` lives until
        // `self` is dropped. So nothing the job borrows is freed while it
        // runs, although the pool's `spawn` needs a `'static` closure.
        let job: Box<dyn FnOnce() + Send + 'static> = unsafe {
            std::mem::transmute::<Box<dyn FnOnce() + Send + 'env>, Box<dyn FnOnce() + Send>>(job)
        };
        self.pool.spawn(move || {
            let _ended = ended;
            let _ = catch_unwind(AssertUnwindSafe(job));
        });
    }
}

impl Drop for Jobs<'_> {
    fn drop(&mut self) {
        let mut n = self.running.lock();
        while *n > 0 {
            n = self.running.idle.wait(n).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Jobs;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn drop_waits_for_every_job() {
        let done = AtomicUsize::new(0);
        {
            // SAFETY: dropped at the end of this block, before `done`.
            let jobs = unsafe { Jobs::new() }.unwrap();
            for _ in 0..16 {
                jobs.spawn(|| {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    done.fetch_add(1, Ordering::SeqCst);
                });
            }
            jobs.spawn(|| panic!("a job that panics"));
        }
        assert_eq!(done.load(Ordering::SeqCst), 16);
    }
}
