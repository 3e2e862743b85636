//! Fallible allocation of chunk-sized buffers. Sizes come from metadata and
//! stored bytes; one the allocator refuses is an [`ErrorKind::Memory`] error
//! (Python's `MemoryError`), never the process abort that `vec![0; n]` or
//! `Vec::with_capacity(n)` turn an allocation failure into.
//!
//! A request of [`LARGE`] bytes or more is also refused, before the allocator
//! is asked, when it is more than the memory the process can have now
//! ([`Memory`]): an allocator that only reserves address space (mimalloc, or
//! `calloc`'s lazily zeroed pages under the kernel's overcommit heuristic)
//! would grant it and the process would grow, page by page, until the kernel's
//! OOM killer ends it.
//!
//! [`ErrorKind::Memory`]: crate::error::ErrorKind::Memory

use std::alloc::{alloc_zeroed, GlobalAlloc, Layout};
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// Blocks of at least this many bytes are checked against [`Memory`] (by the
/// functions here) and never come from mimalloc ([`ScopedAlloc`]). Reading the
/// limits costs tens of microseconds, writing 64 MiB some milliseconds.
pub const LARGE: usize = 64 << 20;

fn refused<T>(n: usize) -> Error {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    Error::memory(format!("cannot allocate {bytes} bytes"))
}

/// What limits the memory this process can have, in bytes (`None`: unknown or
/// no limit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// The machine's memory that is free or can be freed without swapping
    /// out (`MemAvailable`) plus free swap: what a new block can be backed by
    /// now. Not the total: a block that other processes' memory leaves no room
    /// for is only granted by overcommit, and filling it ends in the OOM killer.
    pub available: Option<u64>,
    /// The least `memory.max` (cgroup v2) or `memory.limit_in_bytes` (v1) of
    /// the process's memory cgroup and its ancestors. Its usage is not
    /// subtracted: it counts page cache the kernel reclaims on demand.
    pub cgroup: Option<u64>,
}

impl Memory {
    /// The limits as they are now (`/proc/meminfo`, the cgroup files).
    pub fn now() -> Self {
        let read = |p: &Path| std::fs::read_to_string(p).ok();
        Self {
            available: read(Path::new("/proc/meminfo")).and_then(|t| meminfo_available(&t)),
            cgroup: cgroup_dirs()
                .iter()
                .filter_map(|(dir, file)| read(&dir.join(file)).and_then(|t| cgroup_limit(&t)))
                .min(),
        }
    }

    /// The most bytes one block may have.
    pub fn limit(&self) -> Option<u64> {
        match (self.available, self.cgroup) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
    }

    /// `Err` (a `MemoryError`) when a block of `bytes` is more than the limit.
    pub fn admit(&self, bytes: usize) -> Result<()> {
        match self.limit() {
            Some(limit) if bytes as u64 > limit => Err(refused::<u8>(bytes)),
            _ => Ok(()),
        }
    }
}

/// `MemAvailable` plus `SwapFree` from `/proc/meminfo`'s text, in bytes.
fn meminfo_available(text: &str) -> Option<u64> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
            Some(kib.saturating_mul(1024))
        })
    };
    Some(field("MemAvailable")?.saturating_add(field("SwapFree").unwrap_or(0)))
}

/// A cgroup limit file's value: `max` (v2) is no limit.
fn cgroup_limit(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The limit files of the process's memory cgroup and its ancestors
/// (directory, file name), from `/proc/self/cgroup` (read once: a process
/// rarely changes cgroup, and the files are read at each check).
fn cgroup_dirs() -> &'static [(PathBuf, &'static str)] {
    static DIRS: OnceLock<Vec<(PathBuf, &'static str)>> = OnceLock::new();
    DIRS.get_or_init(|| {
        std::fs::read_to_string("/proc/self/cgroup")
            .map(|t| cgroup_limit_files(&t, Path::new("/sys/fs/cgroup")))
            .unwrap_or_default()
    })
}

/// For `/proc/self/cgroup`'s text and the cgroup mount root: the memory
/// limit files of the process's cgroup and every ancestor, own first. A v1
/// `memory` controller line wins over the v2 line (`0::`), which on a hybrid
/// system has no memory controller.
fn cgroup_limit_files(text: &str, root: &Path) -> Vec<(PathBuf, &'static str)> {
    let mut v1 = None;
    let mut v2 = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if id == "0" && controllers.is_empty() {
            v2 = Some(path);
        } else if controllers.split(',').any(|c| c == "memory") {
            v1 = Some(path);
        }
    }
    let (base, path, file) = match (v1, v2) {
        (Some(p), _) => (root.join("memory"), p, "memory.limit_in_bytes"),
        (None, Some(p)) => (root.to_path_buf(), p, "memory.max"),
        (None, None) => return Vec::new(),
    };
    let mut dir = base.join(path.trim_start_matches('/'));
    let mut out = Vec::new();
    while dir.starts_with(&base) {
        out.push((dir.clone(), file));
        if !dir.pop() {
            break;
        }
    }
    out
}

/// Refuse a block of `bytes` that is [`LARGE`] and more than [`Memory::now`] allows.
pub fn admit(bytes: usize) -> Result<()> {
    if bytes < LARGE {
        return Ok(());
    }
    Memory::now().admit(bytes)
}

fn admit_array<T>(n: usize) -> Result<()> {
    admit(n.saturating_mul(std::mem::size_of::<T>()))
}

/// An empty vector with room for exactly `n` elements.
pub fn with_capacity<T>(n: usize) -> Result<Vec<T>> {
    admit_array::<T>(n)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| refused::<T>(n))?;
    Ok(v)
}

/// Room for `additional` more elements in `v` (exactly that many).
pub fn reserve<T>(v: &mut Vec<T>, additional: usize) -> Result<()> {
    let total = v.len().saturating_add(additional);
    if total > v.capacity() {
        admit_array::<T>(total)?;
    }
    v.try_reserve_exact(additional)
        .map_err(|_| refused::<T>(total))
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
    admit(n)?;
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

/// An allocator that can tell the blocks it handed out from any others.
///
/// # Safety
///
/// `owns(p)` is true for every block the allocator allocated and not yet
/// freed, and false for every block another allocator allocated.
pub unsafe trait Owning: GlobalAlloc {
    fn owns(&self, ptr: *const u8) -> bool;
}

/// mimalloc, through its C API.
pub struct Mimalloc;

// SAFETY: forwards to mimalloc's aligned allocation functions, which return
// blocks of at least the layout's size and alignment (or null), and free or
// resize only blocks mimalloc allocated (the caller's contract).
unsafe impl GlobalAlloc for Mimalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: a plain C allocation call.
        unsafe { libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()).cast() }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: a plain C allocation call.
        unsafe { libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()).cast() }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from mimalloc (the caller's contract).
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from mimalloc with `layout` (the caller's contract).
        unsafe { libmimalloc_sys::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast() }
    }
}

// SAFETY: mimalloc allocates only inside the address ranges it reserved (its
// arenas); `mi_is_in_heap_region` is true for those ranges, which no other
// allocator can map while mimalloc holds them.
unsafe impl Owning for Mimalloc {
    fn owns(&self, ptr: *const u8) -> bool {
        // SAFETY: a lookup in mimalloc's page map; any pointer value is allowed.
        unsafe { libmimalloc_sys::mi_is_in_heap_region(ptr.cast()) }
    }
}

thread_local! {
    /// Whether this thread is inside [`reusing`].
    static REUSING: Cell<bool> = const { Cell::new(false) };
}

/// Run `f` with this thread's new blocks from the reusing allocator (see
/// [`ScopedAlloc`]): for encoding a write's chunks.
pub fn reusing<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = REUSING.try_with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(REUSING.with(|r| r.replace(true)));
    f()
}

fn is_reusing() -> bool {
    // `try_with`: during thread teardown the flag is gone (and unset).
    REUSING.try_with(Cell::get).unwrap_or(false)
}

/// The extension's global allocator: a block allocated inside [`reusing`]
/// comes from `reuse` (mimalloc), any other from `system`; each block is
/// freed and resized by the one that owns it.
///
/// Why: a sharded write encodes a shard's inner chunks (thousands of blocks of
/// a few KiB to a few hundred KiB per call), assembles and stores the shard,
/// and frees them. glibc gives those pages back to the kernel (heap trimming)
/// and the next shard faults them in again: 15% of the CPU time of a sharded
/// write of 32 MiB. mimalloc keeps them for reuse. Everything else (reads'
/// fetched bytes, outputs) stays with the system allocator, which keeps read
/// memory at the data's size: with mimalloc under every small block, the
/// fetched chunks of a read left their size classes' pages resident, and the
/// peak of a 32 MiB read grew by a quarter.
///
/// Blocks of [`LARGE`] bytes or more come from the system allocator even
/// inside [`reusing`] (and a mimalloc block resized to that size moves there):
/// mimalloc reserves its memory without committing it, so the kernel's
/// overcommit heuristic, which refuses a `malloc` larger than the machine's
/// memory, never sees the request and the process grows until the OOM killer
/// ends it. The blocks whose reuse pays are far smaller.
pub struct ScopedAlloc<R, S> {
    pub reuse: R,
    pub system: S,
}

// SAFETY: a block comes from `reuse` or `system` (whichever served it);
// `dealloc` and `realloc` hand it back to the one whose `owns` claims it,
// which is the one that allocated it (`Owning`'s contract), with the
// caller's layout.
unsafe impl<R: Owning, S: GlobalAlloc> GlobalAlloc for ScopedAlloc<R, S> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's valid, non-zero-sized layout.
        // Where mimalloc cannot (it reserves address space in large arenas,
        // which a process under `ulimit -v` may not have), the system
        // allocator serves the block.
        unsafe {
            if is_reusing() && layout.size() < LARGE {
                let p = self.reuse.alloc(layout);
                if !p.is_null() {
                    return p;
                }
            }
            self.system.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe {
            if is_reusing() && layout.size() < LARGE {
                let p = self.reuse.alloc_zeroed(layout);
                if !p.is_null() {
                    return p;
                }
            }
            self.system.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated with `layout` by the part that owns it.
        unsafe {
            if self.reuse.owns(ptr) {
                self.reuse.dealloc(ptr, layout)
            } else {
                self.system.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as in `dealloc`; the block stays with its owner, or, where
        // mimalloc cannot or must not (`LARGE`) grow it, moves to the system
        // allocator: the caller's contract (`new_size` > 0, no overflow when
        // rounded up to the alignment) makes the new layout valid, the two
        // blocks are distinct, and the old one is freed by its owner with its
        // layout.
        unsafe {
            if !self.reuse.owns(ptr) {
                return self.system.realloc(ptr, layout, new_size);
            }
            if new_size < LARGE {
                let p = self.reuse.realloc(ptr, layout, new_size);
                if !p.is_null() {
                    return p;
                }
            }
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            let moved = self.system.alloc(new_layout);
            if !moved.is_null() {
                std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                self.reuse.dealloc(ptr, layout);
            }
            moved
        }
    }
}

/// The extension's allocator (see [`ScopedAlloc`]). Not in the plain library:
/// its unit tests record allocations with their own allocator, and fuzzing
/// builds keep the sanitizer's view of every allocation.
#[cfg(all(feature = "python", not(test)))]
#[global_allocator]
static GLOBAL: ScopedAlloc<Mimalloc, std::alloc::System> = ScopedAlloc {
    reuse: Mimalloc,
    system: std::alloc::System,
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

    #[test]
    fn scoped_allocator_takes_blocks_from_mimalloc_only_inside_reusing() {
        let a = ScopedAlloc {
            reuse: Mimalloc,
            system: std::alloc::System,
        };
        let layout = Layout::from_size_align(40_000, 16).unwrap();
        // SAFETY: non-zero layouts; each block is used within its size and
        // freed (or resized) with the layout it has at that point.
        unsafe {
            let outside = a.alloc(layout);
            let inside = reusing(|| a.alloc(layout));
            let zeroed = reusing(|| a.alloc_zeroed(layout));
            assert!(!a.reuse.owns(outside));
            assert!(a.reuse.owns(inside) && a.reuse.owns(zeroed));
            assert!((0..40_000).all(|i| *zeroed.add(i) == 0));
            // the flag is restored, also after nesting
            reusing(|| reusing(|| ()));
            assert!(!is_reusing());
            for (i, p) in [outside, inside].into_iter().enumerate() {
                for k in 0..40_000 {
                    *p.add(k) = (k % 251 + i) as u8;
                }
            }
            // a block stays with its owner when resized, inside or outside
            let outside2 = reusing(|| a.realloc(outside, layout, 3 << 20));
            let inside2 = a.realloc(inside, layout, 3 << 20);
            assert!(!a.reuse.owns(outside2) && a.reuse.owns(inside2));
            for (i, p) in [outside2, inside2].into_iter().enumerate() {
                assert!((0..40_000).all(|k| *p.add(k) == (k % 251 + i) as u8));
            }
            let big = Layout::from_size_align(3 << 20, 16).unwrap();
            // freed by its owner whichever side frees it
            reusing(|| a.dealloc(outside2, big));
            a.dealloc(inside2, big);
            a.dealloc(zeroed, layout);
        }
        // a panic inside restores the flag
        let _ = std::panic::catch_unwind(|| reusing(|| panic!("inside")));
        assert!(!is_reusing());
    }

    #[test]
    fn memory_limits_are_read_from_meminfo_and_cgroup_files() {
        let meminfo = "MemTotal:       24684092 kB\nMemFree:        22657052 kB\n\
                       MemAvailable:   23975680 kB\nSwapTotal:       2097148 kB\n\
                       SwapFree:        1048576 kB\n";
        assert_eq!(
            meminfo_available(meminfo),
            Some((23975680 + 1048576) * 1024)
        );
        // no swap line: available memory alone; no MemAvailable: unknown
        assert_eq!(meminfo_available("MemAvailable: 4 kB\n"), Some(4096));
        assert_eq!(meminfo_available("MemTotal: 4 kB\n"), None);
        assert_eq!(cgroup_limit("max\n"), None);
        assert_eq!(cgroup_limit("1073741824\n"), Some(1 << 30));
        let root = Path::new("/sys/fs/cgroup");
        // cgroup v2: the own directory, then every ancestor up to the root
        let v2 = cgroup_limit_files("0::/user.slice/job\n", root);
        let dirs: Vec<_> = v2.iter().map(|(d, f)| (d.to_str().unwrap(), *f)).collect();
        assert_eq!(
            dirs,
            [
                ("/sys/fs/cgroup/user.slice/job", "memory.max"),
                ("/sys/fs/cgroup/user.slice", "memory.max"),
                ("/sys/fs/cgroup", "memory.max"),
            ]
        );
        // cgroup v1 (hybrid: the v2 line has no memory controller)
        let v1 = cgroup_limit_files("4:memory:/api/x\n1:cpu,cpuacct:/\n0::/\n", root);
        let dirs: Vec<_> = v1.iter().map(|(d, _)| d.to_str().unwrap()).collect();
        assert_eq!(
            dirs,
            [
                "/sys/fs/cgroup/memory/api/x",
                "/sys/fs/cgroup/memory/api",
                "/sys/fs/cgroup/memory"
            ]
        );
        assert!(v1.iter().all(|(_, f)| *f == "memory.limit_in_bytes"));
        assert!(cgroup_limit_files("1:cpu:/\n", root).is_empty());
        // the limits of this machine are read
        assert!(Memory::now().available.is_some());
    }

    #[test]
    fn a_block_above_the_memory_the_process_can_have_is_refused() {
        let both = Memory {
            available: Some(10 << 30),
            cgroup: Some(4 << 30),
        };
        assert_eq!(both.limit(), Some(4 << 30));
        both.admit(4 << 30).unwrap();
        let err = both.admit((4 << 30) + 1).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Memory);
        assert_eq!(
            err.message,
            format!("cannot allocate {} bytes", (4u64 << 30) + 1)
        );
        let machine = Memory {
            available: Some(1 << 30),
            cgroup: None,
        };
        assert!(machine.admit((1 << 30) + 1).is_err());
        Memory::default().admit(usize::MAX).unwrap();
        // Here: 64 TiB is more than this machine has, refused before the
        // allocator is asked (which, overcommitting, might grant it).
        let huge = 1usize << 46;
        let (results, largest) = tracking::largest_allocation(|| {
            [
                zeroed(huge).unwrap_err(),
                with_capacity::<u64>(huge / 8).unwrap_err(),
                filled(0u32, huge / 4).unwrap_err(),
                reserve(&mut vec![1u8], huge).unwrap_err(),
            ]
        });
        assert!(largest < LARGE, "{largest}");
        for err in results {
            assert_eq!(err.kind, ErrorKind::Memory);
            assert!(
                err.message.starts_with("cannot allocate "),
                "{}",
                err.message
            );
        }
        assert_eq!(
            zeroed(huge).unwrap_err().message,
            format!("cannot allocate {huge} bytes")
        );
        // below `LARGE`, no limits are read and the allocator decides
        let (v, _) = tracking::largest_allocation(|| zeroed(LARGE - 1));
        assert_eq!(v.unwrap().len(), LARGE - 1);
    }

    #[test]
    fn large_blocks_come_from_the_system_allocator_even_inside_reusing() {
        let a = ScopedAlloc {
            reuse: Mimalloc,
            system: std::alloc::System,
        };
        let small = Layout::from_size_align(4096, 16).unwrap();
        let large = Layout::from_size_align(LARGE, 16).unwrap();
        // SAFETY: non-zero layouts; each block is freed (or resized) with the
        // layout it has at that point, and written within its size.
        unsafe {
            let big = reusing(|| a.alloc(large));
            let big_zeroed = reusing(|| a.alloc_zeroed(large));
            assert!(!big.is_null() && !big_zeroed.is_null());
            assert!(!a.reuse.owns(big) && !a.reuse.owns(big_zeroed));
            // a mimalloc block grown to `LARGE` moves to the system allocator
            let p = reusing(|| a.alloc(small));
            assert!(a.reuse.owns(p));
            *p = 42;
            let grown = reusing(|| a.realloc(p, small, LARGE));
            assert!(!grown.is_null() && !a.reuse.owns(grown));
            assert_eq!(*grown, 42);
            a.dealloc(grown, large);
            a.dealloc(big, large);
            a.dealloc(big_zeroed, large);
        }
    }

    /// An allocator that has no memory to give (as mimalloc under `ulimit -v`).
    struct Refusing;

    // SAFETY: hands out nothing, so it owns nothing and frees nothing.
    unsafe impl GlobalAlloc for Refusing {
        unsafe fn alloc(&self, _layout: Layout) -> *mut u8 {
            std::ptr::null_mut()
        }
        unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {
            unreachable!("Refusing owns no block")
        }
    }

    // SAFETY: it allocates nothing.
    unsafe impl Owning for Refusing {
        fn owns(&self, _ptr: *const u8) -> bool {
            false
        }
    }

    #[test]
    fn scoped_allocator_falls_back_to_the_system_when_the_reusing_one_refuses() {
        let a = ScopedAlloc {
            reuse: Refusing,
            system: std::alloc::System,
        };
        let layout = Layout::from_size_align(44, 8).unwrap();
        // SAFETY: non-zero layouts, freed with the layout they have.
        unsafe {
            let p = reusing(|| a.alloc(layout));
            let z = reusing(|| a.alloc_zeroed(layout));
            assert!(!p.is_null() && !z.is_null());
            assert!((0..44).all(|i| *z.add(i) == 0));
            let q = reusing(|| a.realloc(p, layout, 4096));
            assert!(!q.is_null());
            a.dealloc(q, Layout::from_size_align(4096, 8).unwrap());
            a.dealloc(z, layout);
        }
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
