//! Surviving `fork()`.
//!
//! A forked child has only the thread that forked. A lock another thread held
//! at that moment stays held forever in the child, and the data it guarded may
//! be half updated. So every critical section of zarrox's own locks (the
//! memory and zip stores' state, an object store's client, the worker pool's
//! and the I/O runtime's state) runs inside a [`Section`], and `fork()` waits
//! (a `pthread_atfork` prepare handler) until no section is running; no new
//! one starts until the fork has returned in both processes. Sections are
//! short (no I/O, no waiting on other threads inside them), so the wait is too.
//!
//! What a child cannot take over (the pool's and the runtime's threads, an
//! object store's connections) is rebuilt there on first use: each notes the
//! process id it was built in.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

/// Threads inside a section.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// A fork is waiting or under way: no section may start.
static FORKING: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

thread_local! {
    /// Sections this thread is inside (a nested one never waits: the fork
    /// waits for the outer one to end).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

extern "C" fn prepare() {
    FORKING.store(true, Ordering::SeqCst);
    while ACTIVE.load(Ordering::SeqCst) != 0 {
        std::thread::yield_now();
    }
}

extern "C" fn resume() {
    FORKING.store(false, Ordering::SeqCst);
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: the handlers are plain functions that only touch atomics;
        // registering them has no other precondition. A failure to register
        // (ENOMEM) leaves zarrox as fork-safe as it was without them.
        unsafe {
            libc::pthread_atfork(Some(prepare), Some(resume), Some(resume));
        }
    });
}

/// A critical section that a fork waits for (see the module documentation).
#[must_use = "a section covers the lock held while it lives"]
pub struct Section {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Section {
    /// Enter a section, waiting while a fork is under way.
    pub fn enter() -> Section {
        install();
        let depth = DEPTH.with(Cell::get);
        if depth == 0 {
            loop {
                while FORKING.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                ACTIVE.fetch_add(1, Ordering::SeqCst);
                if !FORKING.load(Ordering::SeqCst) {
                    break;
                }
                ACTIVE.fetch_sub(1, Ordering::SeqCst);
            }
        }
        DEPTH.with(|d| d.set(depth + 1));
        Section {
            _not_send: std::marker::PhantomData,
        }
    }
}

impl Drop for Section {
    fn drop(&mut self) {
        let depth = DEPTH.with(Cell::get);
        DEPTH.with(|d| d.set(depth.saturating_sub(1)));
        if depth == 1 {
            ACTIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Lock `m` inside a section: the guard and the section end together.
pub struct Guarded<'a, T> {
    // Declared first: dropped (unlocked) before the section ends.
    guard: std::sync::MutexGuard<'a, T>,
    _section: Section,
}

impl<T> std::ops::Deref for Guarded<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> std::ops::DerefMut for Guarded<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

/// `m.lock()` inside a section (a poisoned lock is taken as it is: the data
/// behind zarrox's locks stays consistent when a holder panicked).
pub fn lock<T>(m: &std::sync::Mutex<T>) -> Guarded<'_, T> {
    let section = Section::enter();
    Guarded {
        guard: m.lock().unwrap_or_else(|p| p.into_inner()),
        _section: section,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_nest_and_count() {
        let before = ACTIVE.load(Ordering::SeqCst);
        {
            let _a = Section::enter();
            let _b = Section::enter();
            assert_eq!(ACTIVE.load(Ordering::SeqCst), before + 1);
        }
        assert_eq!(ACTIVE.load(Ordering::SeqCst), before);
        let m = std::sync::Mutex::new(5);
        *lock(&m) += 1;
        assert_eq!(*lock(&m), 6);
    }

    #[test]
    fn a_fork_waits_for_sections_and_the_child_can_lock() {
        let m = std::sync::Arc::new(std::sync::Mutex::new(0u32));
        let busy = {
            let m = std::sync::Arc::clone(&m);
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    *lock(&m) += 1;
                }
            })
        };
        for _ in 0..50 {
            // SAFETY: the child only locks the mutex and exits without unwinding.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let ok = {
                    let g = m.try_lock();
                    g.is_ok()
                };
                // SAFETY: `_exit` ends the child at once (no destructors run).
                unsafe { libc::_exit(if ok { 0 } else { 3 }) };
            }
            let mut status = 0;
            // SAFETY: waiting for the child just forked.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        }
        busy.join().unwrap();
    }
}
