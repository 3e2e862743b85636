//! c-blosc 1's C interface, as zarrox builds it (vendor/c-blosc, build.rs),
//! and the two zstd functions that build calls in place of `ZSTD_compress`
//! and `ZSTD_decompress`.

use std::ffi::{c_char, c_int, c_void};

use zstd::zstd_safe::WriteBuf;

use super::zstd::{compress_as_zstd_does, decompress_as_zstd_does};

/// A blosc header's length (`BLOSC_MIN_HEADER_LENGTH`).
pub const MIN_HEADER_LENGTH: usize = 16;
/// The most compression adds to its input (`BLOSC_MAX_OVERHEAD`).
pub const MAX_OVERHEAD: usize = MIN_HEADER_LENGTH;
/// `BLOSC_SHUFFLE` and `BLOSC_BITSHUFFLE` (`BLOSC_NOSHUFFLE` is 0).
pub const SHUFFLE: c_int = 1;
pub const BITSHUFFLE: c_int = 2;

extern "C" {
    pub fn blosc_compress_ctx(
        clevel: c_int,
        doshuffle: c_int,
        typesize: usize,
        nbytes: usize,
        src: *const c_void,
        dest: *mut c_void,
        destsize: usize,
        compressor: *const c_char,
        blocksize: usize,
        numinternalthreads: c_int,
    ) -> c_int;

    pub fn blosc_decompress_ctx(
        src: *const c_void,
        dest: *mut c_void,
        destsize: usize,
        numinternalthreads: c_int,
    ) -> c_int;

    pub fn blosc_cbuffer_validate(
        cbuffer: *const c_void,
        cbytes: usize,
        nbytes: *mut usize,
    ) -> c_int;
}

/// `cap` bytes of C memory to write into, none of them known initialised.
struct CBuffer {
    ptr: *mut u8,
    cap: usize,
}

// SAFETY: the initialised part `as_slice` claims is empty, and `capacity` and
// `as_mut_ptr` describe memory the C caller handed over as writable.
unsafe impl WriteBuf for CBuffer {
    fn as_slice(&self) -> &[u8] {
        &[]
    }
    fn capacity(&self) -> usize {
        self.cap
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }
    unsafe fn filled_until(&mut self, _n: usize) {}
}

/// The input slice C handed over (`len` readable bytes at `ptr`).
///
/// # Safety
/// `ptr` is valid for reads of `len` bytes (or `len` is 0) for the call.
unsafe fn input<'a>(ptr: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 || ptr.is_null() {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) }
}

/// `ZSTD_compress` for c-blosc (build.rs renames its calls to this):
/// the same bytes and return value, from the thread's kept context instead of
/// a new one per call.
///
/// # Safety
/// As `ZSTD_compress`: `src` readable for `src_len` bytes, `dst` writable for
/// `dst_cap` bytes, the two not overlapping.
#[no_mangle]
pub unsafe extern "C" fn zarrox_blosc_zstd_compress(
    dst: *mut c_void,
    dst_cap: usize,
    src: *const c_void,
    src_len: usize,
    level: c_int,
) -> usize {
    let mut out = CBuffer {
        ptr: dst.cast(),
        cap: dst_cap,
    };
    // SAFETY: the function's contract.
    compress_as_zstd_does(&mut out, unsafe { input(src, src_len) }, level)
}

/// `ZSTD_decompress` for c-blosc (build.rs renames its calls to this):
/// the same result, from the thread's kept context instead of a new one per
/// call (c-blosc 1 decompresses every stream of every block with one).
///
/// # Safety
/// As `ZSTD_decompress`: `src` readable for `src_len` bytes, `dst` writable
/// for `dst_cap` bytes, the two not overlapping.
#[no_mangle]
pub unsafe extern "C" fn zarrox_blosc_zstd_decompress(
    dst: *mut c_void,
    dst_cap: usize,
    src: *const c_void,
    src_len: usize,
) -> usize {
    let mut out = CBuffer {
        ptr: dst.cast(),
        cap: dst_cap,
    };
    // SAFETY: the function's contract.
    decompress_as_zstd_does(&mut out, unsafe { input(src, src_len) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::bytes_to_bytes::zstd::ZstdCodec;
    use crate::codec::BytesToBytesCodec;
    use zstd::zstd_safe;

    fn is_error(code: usize) -> bool {
        // SAFETY: a pure function of its argument.
        unsafe { zstd_safe::zstd_sys::ZSTD_isError(code) != 0 }
    }

    #[test]
    fn c_blosc_s_zstd_calls_give_zstd_s_own_bytes_and_results() {
        let data = crate::codec::tests::sample(50_000);
        // blosc maps its levels 1-9 to zstd's 1, 3, 5, ..., 17 and the maximum.
        for level in [1, 9, 17, zstd_safe::max_c_level()] {
            // The thread's kept context last wrote a checksummed frame at
            // another level; a C caller's frame does not carry either.
            ZstdCodec::new(3, true).encode(data.clone()).unwrap();
            let mut want = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
            zstd_safe::compress(&mut want, &data, level).unwrap();

            let mut got = vec![0u8; want.len() + 64];
            // SAFETY: both buffers are live for their full lengths.
            let n = unsafe {
                zarrox_blosc_zstd_compress(
                    got.as_mut_ptr().cast(),
                    got.len(),
                    data.as_ptr().cast(),
                    data.len(),
                    level,
                )
            };
            assert_eq!(&got[..n], &want[..], "level {level}");

            let mut back = vec![0u8; data.len()];
            // SAFETY: as above.
            let n = unsafe {
                zarrox_blosc_zstd_decompress(
                    back.as_mut_ptr().cast(),
                    back.len(),
                    want.as_ptr().cast(),
                    want.len(),
                )
            };
            assert_eq!((n, &back), (data.len(), &data), "level {level}");
        }
    }

    #[test]
    fn c_blosc_s_zstd_calls_fail_as_zstd_does() {
        use zstd_safe::zstd_sys::{ZSTD_compress, ZSTD_decompress};
        let data = crate::codec::tests::sample(5_000);
        let garbage = [0x55u8; 64];
        let mut small = [0u8; 8];
        let mut out = vec![0u8; 1024];
        // SAFETY: every buffer is live for the length passed with it (null
        // pointers only with length 0, which zstd reads and writes nothing of).
        unsafe {
            let (d, n) = (data.as_ptr().cast(), data.len());
            let want = ZSTD_compress(small.as_mut_ptr().cast(), 8, d, n, 1);
            let got = zarrox_blosc_zstd_compress(small.as_mut_ptr().cast(), 8, d, n, 1);
            assert!(is_error(got) && got == want, "{got} {want}");

            let (g, n) = (garbage.as_ptr().cast(), garbage.len());
            let want = ZSTD_decompress(out.as_mut_ptr().cast(), out.len(), g, n);
            let got = zarrox_blosc_zstd_decompress(out.as_mut_ptr().cast(), out.len(), g, n);
            assert!(is_error(got) && got == want, "{got} {want}");

            // No input at all: zero frames, zero bytes.
            let null = std::ptr::null_mut();
            let want = ZSTD_decompress(null, 0, null, 0);
            let got = zarrox_blosc_zstd_decompress(null, 0, null, 0);
            assert_eq!((got, want), (0, 0));
        }
    }
}
