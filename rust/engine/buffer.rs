//! The caller's buffers: the output a read decodes into, shared by the
//! decoding threads, and the value a write encodes from.

use std::marker::PhantomData;
use std::sync::Mutex;

use crate::error::{Error, Result};

/// A caller's output buffer, written by several decoding threads at once,
/// each the bytes of its own chunks' regions. It borrows the buffer for `'a`,
/// so it cannot outlive it, and it is shared by reference, never copied.
pub struct OutView<'a> {
    ptr: *mut u8,
    len: usize,
    _buffer: PhantomData<&'a mut [u8]>,
}

// SAFETY: an `OutView` is built from a `&'a mut [u8]`, so for `'a` nothing
// else reads or writes the buffer. The threads that share it write the
// regions of different chunks, and the regions of one read are disjoint: the
// own API's projection partitions the output's indices among the chunks, and
// the regions a caller hands over are checked (`region::check_disjoint`)
// before any thread starts. So no two threads write the same byte, and every
// write is bounds-checked against `len`.
unsafe impl Send for OutView<'_> {}
// SAFETY: as for `Send`: shared access only ever writes disjoint bytes.
unsafe impl Sync for OutView<'_> {}

impl<'a> OutView<'a> {
    pub fn new(buf: &'a mut [u8]) -> Self {
        OutView {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
            _buffer: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn check(&self, offset: usize, n: usize) -> Result<()> {
        if offset.checked_add(n).is_none_or(|end| end > self.len) {
            return Err(outside());
        }
        Ok(())
    }

    /// Copy `src` to bytes `[offset, offset + src.len())`. Placing a chunk
    /// calls this once per row: it has to be inlined into the row loop (a
    /// call per 64-byte row made a raw read-all 20% slower).
    #[inline(always)]
    pub fn write(&self, offset: usize, src: &[u8]) -> Result<()> {
        self.check(offset, src.len())?;
        // SAFETY: in bounds (checked above); these bytes belong to the calling
        // thread's region (see the Send/Sync comment); `src` is not the buffer.
        unsafe { copy_row(src.as_ptr(), self.ptr.add(offset), src.len()) };
        Ok(())
    }

    /// The bytes `[offset, offset + n)` as a slice, for a chunk decoded
    /// straight into its region.
    ///
    /// # Safety
    /// The bytes must be the calling thread's own region: no other thread may
    /// access them while the slice lives.
    pub unsafe fn slice(&self, offset: usize, n: usize) -> Result<&'a mut [u8]> {
        self.check(offset, n)?;
        // SAFETY: in bounds (checked above); exclusive by the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(offset), n) })
    }
}

/// The error of a write outside the output (a bug, never data): out of line,
/// so that the bounds check stays small enough to inline.
#[cold]
#[inline(never)]
fn outside() -> Error {
    Error::value("internal error: write outside the output buffer")
}

/// Copy `n` bytes from `src` to `dst`. Rows of a few common sizes (a chunk
/// row of 8 to 128 two- to eight-byte elements) are copied inline: placing a
/// decoded chunk is one such copy per row, and a call into `memcpy` per row
/// costs more than the copy.
///
/// # Safety
/// `src` must be valid for reads and `dst` for writes of `n` bytes, and the
/// two ranges must not overlap.
#[inline(always)]
unsafe fn copy_row(src: *const u8, dst: *mut u8, n: usize) {
    #[inline(always)]
    unsafe fn fixed<const N: usize>(src: *const u8, dst: *mut u8) {
        // SAFETY: the caller's contract, with n == N; unaligned access is allowed.
        unsafe {
            dst.cast::<[u8; N]>()
                .write_unaligned(src.cast::<[u8; N]>().read_unaligned())
        }
    }
    // SAFETY: the caller's contract; each arm copies exactly `n` bytes.
    unsafe {
        match n {
            16 => fixed::<16>(src, dst),
            32 => fixed::<32>(src, dst),
            64 => fixed::<64>(src, dst),
            128 => fixed::<128>(src, dst),
            256 => fixed::<256>(src, dst),
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

/// Where a read puts elements: the caller's fixed-size buffer, or a list of
/// variable-length elements in buffer order.
#[derive(Clone, Copy)]
pub enum Output<'a> {
    Fixed(&'a OutView<'a>),
    Var(&'a Mutex<Vec<Vec<u8>>>),
}

impl Output<'_> {
    /// Elements the output holds, for a buffer of `elem`-byte elements.
    pub fn elements(&self, elem: usize) -> usize {
        match self {
            Output::Fixed(v) => v.len() / elem.max(1),
            Output::Var(list) => list.lock().map(|l| l.len()).unwrap_or(0),
        }
    }
}

/// What a write takes elements from, in buffer order.
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    Fixed(&'a [u8]),
    Var(&'a [Vec<u8>]),
    /// One element (fixed-size bytes, or one variable-length value) written
    /// to every selected element, as numpy broadcasts a scalar.
    Scalar(&'a [u8]),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_bounds_checked() {
        let mut buf = vec![0u8; 8];
        {
            let v = OutView::new(&mut buf);
            v.write(6, &[1, 2]).unwrap();
            assert!(v.write(7, &[1, 2]).is_err());
            assert!(v.write(usize::MAX, &[1]).is_err());
            // SAFETY: the only user of the buffer in this test.
            assert!(unsafe { v.slice(4, 5) }.is_err());
        }
        assert_eq!(buf, [0, 0, 0, 0, 0, 0, 1, 2]);
    }
}
