//! Fallible allocation of chunk-sized buffers. Sizes come from metadata and
//! stored bytes; one the allocator refuses is an [`ErrorKind::Memory`] error
//! (Python's `MemoryError`), never the process abort that `vec![0; n]` or
//! `Vec::with_capacity(n)` turn an allocation failure into.
//!
//! [`ErrorKind::Memory`]: crate::error::ErrorKind::Memory

use std::alloc::{alloc_zeroed, Layout};

use crate::error::{Error, Result};

fn refused<T>(n: usize) -> Error {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    Error::memory(format!("cannot allocate {bytes} bytes"))
}

/// An empty vector with room for exactly `n` elements.
pub fn with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| refused::<T>(n))?;
    Ok(v)
}

/// Room for `additional` more elements in `v` (exactly that many).
pub fn reserve<T>(v: &mut Vec<T>, additional: usize) -> Result<()> {
    v.try_reserve_exact(additional)
        .map_err(|_| refused::<T>(v.len().saturating_add(additional)))
}

/// `n` copies of `value` (`vec![value; n]`).
pub fn filled<T: Clone>(value: T, n: usize) -> Result<Vec<T>> {
    let mut v = with_capacity(n)?;
    v.resize(n, value);
    Ok(v)
}

/// `n` zero bytes (`vec![0u8; n]`), from zeroed memory the allocator hands out
/// as it is (fresh pages are not written), as `vec!` does.
pub fn zeroed(n: usize) -> Result<Vec<u8>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = Layout::array::<u8>(n).map_err(|_| refused::<u8>(n))?;
    // SAFETY: `layout` has a non-zero size (n > 0), as `alloc_zeroed` requires.
    let ptr = unsafe { alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(refused::<u8>(n));
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of
    // `[u8; n]` (alignment 1, size n), which is the layout a `Vec<u8>` of
    // capacity `n` owns; its `n` bytes are initialised (zeroed), so a length of
    // `n` is valid; the vector becomes the only owner of the allocation.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn allocations_that_cannot_be_made_are_errors() {
        // More than any address space can hold: refused before or by the allocator.
        let huge = usize::MAX / 2;
        for err in [
            zeroed(huge).unwrap_err(),
            with_capacity::<u8>(huge).unwrap_err(),
            filled(0u64, huge).unwrap_err(),
            reserve(&mut vec![1u8], huge).unwrap_err(),
        ] {
            assert_eq!(err.kind, ErrorKind::Memory);
            assert!(
                err.message.starts_with("cannot allocate "),
                "{}",
                err.message
            );
        }
        let err = filled(0u64, 1 << 60).unwrap_err();
        assert_eq!(err.message, format!("cannot allocate {} bytes", 1u64 << 63));
    }

    #[test]
    fn allocations_that_can_be_made_are_what_vec_gives() {
        assert_eq!(zeroed(0).unwrap(), Vec::<u8>::new());
        let z = zeroed(1 << 20).unwrap();
        assert_eq!((z.len(), z.capacity()), (1 << 20, 1 << 20));
        assert!(z.iter().all(|&b| b == 0));
        assert_eq!(filled(7u16, 3).unwrap(), vec![7, 7, 7]);
        let v = with_capacity::<u32>(10).unwrap();
        assert!(v.is_empty() && v.capacity() >= 10);
        let mut w = vec![1u8];
        reserve(&mut w, 100).unwrap();
        assert!(w.capacity() >= 101);
    }
}

/// For tests: the largest single allocation a closure makes on its thread.
#[cfg(test)]
pub(crate) mod tracking {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static LARGEST: Cell<usize> = const { Cell::new(0) };
    }

    fn record(size: usize) {
        // `try_with`: no record during thread teardown.
        let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
    }

    /// The system allocator, recording each allocation's size.
    struct Recording;

    // SAFETY: every method forwards to `System` with the caller's arguments,
    // so this allocator upholds exactly the contract `System` does; recording
    // a size touches only a const-initialised thread-local (no allocation).
    unsafe impl GlobalAlloc for Recording {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            record(layout.size());
            // SAFETY: forwarded with the caller's valid layout.
            unsafe { System.alloc(layout) }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            record(layout.size());
            // SAFETY: forwarded with the caller's valid layout.
            unsafe { System.alloc_zeroed(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: `ptr` came from `System` (through this allocator) with `layout`.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            record(new_size);
            // SAFETY: forwarded with the caller's pointer, layout and size.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static GLOBAL: Recording = Recording;

    /// Run `f` and return its result and the largest allocation (bytes) it made
    /// on this thread, refused ones included.
    pub fn largest_allocation<R>(f: impl FnOnce() -> R) -> (R, usize) {
        let before = LARGEST.with(|l| l.replace(0));
        let r = f();
        let largest = LARGEST.with(|l| l.replace(before.max(l.get())));
        (r, largest)
    }
}
