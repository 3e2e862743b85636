//! Fallible allocation of chunk-sized buffers. Sizes come from metadata and
//! stored bytes; one the allocator refuses is an [`ErrorKind::Memory`] error
//! (Python's `MemoryError`), never the process abort that `vec![0; n]` or
//! `Vec::with_capacity(n)` turn an allocation failure into.
//!
//! [`ErrorKind::Memory`]: crate::error::ErrorKind::Memory

use std::alloc::{alloc_zeroed, GlobalAlloc, Layout};

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

/// Blocks of at least this many bytes come from the large-block allocator.
pub const SMALL_LIMIT: usize = 1 << 20;

/// A global allocator in two parts: blocks under [`SMALL_LIMIT`] from `small`,
/// larger ones from `large`. The extension puts mimalloc under the small
/// blocks and the system allocator under the large ones:
///
/// - Encoded chunks, inner chunks of a shard being written, compressed bytes
///   fetched for decoding: thousands of blocks of a few KiB to a few hundred
///   KiB per call, freed within the call. glibc gives the pages of such a
///   batch back to the kernel when it is freed (heap trimming) and the next
///   batch faults them in again; in a sharded write of 32 MiB that was 15% of
///   the CPU time. mimalloc keeps them for reuse.
/// - Outputs and whole shards (MiB and up) stay with the system allocator: it
///   maps them fresh (zero pages, nothing to clear) and unmaps them when freed,
///   so peak memory stays at the data's size.
///
/// Which part owns a block follows from its size alone, and `dealloc` and
/// `realloc` get the size the block was allocated with, so every block goes
/// back to the allocator it came from.
pub struct SplitAlloc<S, L> {
    pub small: S,
    pub large: L,
}

fn is_small(size: usize) -> bool {
    size < SMALL_LIMIT
}

// SAFETY: every block comes from `small` or `large` by its size and is freed
// or resized by the same one, since `dealloc`/`realloc` receive the layout the
// block was allocated (or last resized) with. A resize across the limit
// allocates in the other part, copies the bytes both sizes share and frees the
// old block: the moving `realloc` that `GlobalAlloc`'s default performs.
unsafe impl<S: GlobalAlloc, L: GlobalAlloc> GlobalAlloc for SplitAlloc<S, L> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's valid, non-zero-sized layout.
        unsafe {
            if is_small(layout.size()) {
                self.small.alloc(layout)
            } else {
                self.large.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe {
            if is_small(layout.size()) {
                self.small.alloc_zeroed(layout)
            } else {
                self.large.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated with `layout` by this allocator, hence by
        // the part its size selects.
        unsafe {
            if is_small(layout.size()) {
                self.small.dealloc(ptr, layout)
            } else {
                self.large.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (is_small(layout.size()), is_small(new_size)) {
            // SAFETY: the block belongs to `small`, and stays there.
            (true, true) => unsafe { self.small.realloc(ptr, layout, new_size) },
            // SAFETY: the block belongs to `large`, and stays there.
            (false, false) => unsafe { self.large.realloc(ptr, layout, new_size) },
            _ => {
                // SAFETY: the caller guarantees `new_size` > 0 and that it
                // rounded up to `layout.align()` does not overflow `isize`,
                // which is what this layout needs.
                let new_layout =
                    unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
                // SAFETY: a valid non-zero-sized layout.
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    // SAFETY: both blocks are valid for the smaller size and
                    // distinct (the old one is still allocated); the old one is
                    // then freed with the layout it was allocated with.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

/// The extension's allocator (see [`SplitAlloc`]). Not in the plain library
/// (its unit tests record allocations with their own allocator, and fuzzing
/// builds keep the sanitizer's view of every allocation).
#[cfg(all(feature = "python", not(test)))]
#[global_allocator]
static GLOBAL: SplitAlloc<mimalloc::MiMalloc, std::alloc::System> = SplitAlloc {
    small: mimalloc::MiMalloc,
    large: std::alloc::System,
};

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

    /// The system allocator, counting the bytes it holds.
    #[derive(Default)]
    struct Counted(std::sync::atomic::AtomicUsize);

    impl Counted {
        fn held(&self) -> usize {
            self.0.load(std::sync::atomic::Ordering::SeqCst)
        }
    }

    // SAFETY: forwards to `System` with the caller's arguments.
    unsafe impl GlobalAlloc for Counted {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            self.0
                .fetch_add(layout.size(), std::sync::atomic::Ordering::SeqCst);
            // SAFETY: the caller's valid layout.
            unsafe { std::alloc::System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            self.0
                .fetch_sub(layout.size(), std::sync::atomic::Ordering::SeqCst);
            // SAFETY: `ptr` came from `System` with `layout`.
            unsafe { std::alloc::System.dealloc(ptr, layout) }
        }
    }

    #[test]
    fn split_allocator_routes_blocks_by_size_and_moves_them_across_the_limit() {
        let a = SplitAlloc {
            small: Counted::default(),
            large: Counted::default(),
        };
        let small = Layout::from_size_align(1000, 8).unwrap();
        let large = Layout::from_size_align(SMALL_LIMIT, 8).unwrap();
        // SAFETY: non-zero layouts; each block is used within its size and
        // freed (or resized) with the layout it has at that point.
        unsafe {
            let p = a.alloc(small);
            assert_eq!((a.small.held(), a.large.held()), (1000, 0));
            for i in 0..1000 {
                *p.add(i) = (i % 251) as u8;
            }
            // small -> large: moved, contents kept
            let q = a.realloc(p, small, SMALL_LIMIT + 5);
            assert_eq!((a.small.held(), a.large.held()), (0, SMALL_LIMIT + 5));
            assert!((0..1000).all(|i| *q.add(i) == (i % 251) as u8));
            // large -> large: stays
            let grown = Layout::from_size_align(SMALL_LIMIT + 5, 8).unwrap();
            let r = a.realloc(q, grown, 2 * SMALL_LIMIT);
            assert_eq!((a.small.held(), a.large.held()), (0, 2 * SMALL_LIMIT));
            // large -> small: moved back, the first 10 bytes kept
            let big = Layout::from_size_align(2 * SMALL_LIMIT, 8).unwrap();
            let s = a.realloc(r, big, 10);
            assert_eq!((a.small.held(), a.large.held()), (10, 0));
            assert!((0..10).all(|i| *s.add(i) == (i % 251) as u8));
            a.dealloc(s, Layout::from_size_align(10, 8).unwrap());
            let z = a.alloc_zeroed(large);
            assert_eq!((a.small.held(), a.large.held()), (0, SMALL_LIMIT));
            assert!((0..SMALL_LIMIT).step_by(4096).all(|i| *z.add(i) == 0));
            a.dealloc(z, large);
        }
        assert_eq!((a.small.held(), a.large.held()), (0, 0));
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
