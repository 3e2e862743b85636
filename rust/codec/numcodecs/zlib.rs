//! `numcodecs.zlib`: `zlib.compress(buf, level)` / `zlib.decompress(buf)`.
//!
//! Encoding runs the C zlib (libz-sys, built from source) exactly as CPython
//! 3.11's zlib module drives it, including its growing output blocks (which
//! decide the stored-block sizes at level 0), so the bytes equal numcodecs'.
//! Decoding uses flate2 and, like CPython, ignores data after the stream end.

use std::ffi::c_int;

use flate2::{Decompress, FlushDecompress, Status};
use libz_sys as z;
use serde_json::{Map, Value};

use super::check_config;
use crate::codec::config::{Member, Members};
use crate::codec::{check_len, make_room, with_slack, BytesToBytesCodec, SizeBound};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct ZlibCodec {
    level: i32,
}

/// numcodecs' `Zlib(level=1)`.
pub const DEFAULT_LEVEL: i64 = 1;

fn level(config: &Map<String, Value>) -> Result<i64> {
    check_config("zlib", config, MEMBERS)?;
    Ok(TYPED_MEMBERS[0]
        .get_int("numcodecs.zlib", config)?
        .unwrap_or(DEFAULT_LEVEL))
}

/// numcodecs' members of this codec, in its `get_config()` order.
pub const MEMBERS: &[&str] = &["level"];

/// The members with their ranges: `level` -1 (zlib's default) to 9.
pub const TYPED_MEMBERS: &[Member] = &[Member::int("level", -1, 9)];

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    Ok(vec![("level", level(config)?.into())])
}

impl ZlibCodec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        Ok(ZlibCodec {
            level: level(config)? as i32,
        })
    }
}

/// CPython's `_BlocksOutputBuffer` block sizes (Include/internal/
/// pycore_blocks_output_buffer.h); the last one repeats.
const OUTPUT_BLOCKS: [usize; 17] = {
    const KB: usize = 1024;
    const MB: usize = 1024 * KB;
    [
        32 * KB,
        64 * KB,
        256 * KB,
        MB,
        4 * MB,
        8 * MB,
        16 * MB,
        16 * MB,
        32 * MB,
        32 * MB,
        32 * MB,
        32 * MB,
        64 * MB,
        64 * MB,
        128 * MB,
        128 * MB,
        256 * MB,
    ]
};

unsafe extern "C" fn zalloc(_opaque: z::voidpf, items: z::uInt, size: z::uInt) -> z::voidpf {
    // SAFETY: calloc accepts any sizes and returns NULL on failure, which zlib
    // checks for.
    unsafe { libc::calloc(items as usize, size as usize) }
}

unsafe extern "C" fn zfree(_opaque: z::voidpf, ptr: z::voidpf) {
    // SAFETY: zlib only frees pointers it obtained from `zalloc`.
    unsafe { libc::free(ptr) }
}

/// A C zlib deflate stream. Boxed because zlib's state points back at it.
pub(super) struct Deflater {
    strm: Box<z::z_stream>,
}

impl Deflater {
    /// `deflateInit2(level, Z_DEFLATED, wbits, memLevel 8, Z_DEFAULT_STRATEGY)`
    /// (wbits 15: zlib container; -15: raw deflate).
    pub(super) fn new(level: i32, wbits: i32) -> Result<Deflater> {
        let mut strm = Box::new(z::z_stream {
            next_in: std::ptr::null_mut(),
            avail_in: 0,
            total_in: 0,
            next_out: std::ptr::null_mut(),
            avail_out: 0,
            total_out: 0,
            msg: std::ptr::null_mut(),
            state: std::ptr::null_mut(),
            zalloc,
            zfree,
            opaque: std::ptr::null_mut(),
            data_type: 0,
            adler: 0,
            reserved: 0,
        });
        // SAFETY: `strm` is a valid, boxed (never moved) z_stream with working
        // allocators; the version and size let zlib check the ABI.
        let rc = unsafe {
            z::deflateInit2_(
                &mut *strm,
                level,
                z::Z_DEFLATED,
                wbits,
                8,
                z::Z_DEFAULT_STRATEGY,
                z::zlibVersion(),
                std::mem::size_of::<z::z_stream>() as c_int,
            )
        };
        if rc != z::Z_OK {
            return Err(Error::value(format!("zlib: deflateInit2 failed ({rc})")));
        }
        Ok(Deflater { strm })
    }

    /// Feed `data` as CPython does in one call of `zlib.compress` (flush
    /// `Z_FINISH`) or `Compress.compress` (`Z_NO_FLUSH`) / `Compress.flush`
    /// (`Z_FINISH`, empty data): input in pieces of at most `UINT_MAX` (the
    /// last with `flush`), output into a fresh buffer of growing blocks, and
    /// `deflate` called again while the output block is full.
    pub(super) fn run(&mut self, data: &[u8], flush: c_int) -> Result<Vec<u8>> {
        let mut out: Vec<u8> = Vec::new();
        let mut filled = 0usize;
        let mut blocks = 0usize;
        let mut rest = data;
        loop {
            let take = rest.len().min(z::uInt::MAX as usize);
            let (piece, after) = rest.split_at(take);
            rest = after;
            let mode = if rest.is_empty() {
                flush
            } else {
                z::Z_NO_FLUSH
            };
            self.strm.next_in = piece.as_ptr() as *mut u8;
            self.strm.avail_in = piece.len() as z::uInt;
            loop {
                if filled == out.len() {
                    let block = OUTPUT_BLOCKS[blocks.min(OUTPUT_BLOCKS.len() - 1)];
                    blocks += 1;
                    crate::alloc::reserve(&mut out, block)?;
                    out.resize(filled + block, 0);
                    // SAFETY: `filled + block == out.len()`, so the pointer
                    // and length describe `out`'s unwritten tail.
                    self.strm.next_out = unsafe { out.as_mut_ptr().add(filled) };
                    self.strm.avail_out = block as z::uInt;
                }
                // SAFETY: next_in/avail_in describe `piece` (deflate only
                // reads it) and next_out/avail_out the tail of `out`; both
                // stay alive and unmoved during the call.
                let rc = unsafe { z::deflate(&mut *self.strm, mode) };
                filled = out.len() - self.strm.avail_out as usize;
                if rc == z::Z_STREAM_ERROR {
                    return Err(Error::value("zlib: deflate failed"));
                }
                if self.strm.avail_out != 0 {
                    break;
                }
            }
            if rest.is_empty() {
                break;
            }
        }
        // No dangling pointers into `data` / `out` outlive this call.
        self.strm.next_in = std::ptr::null_mut();
        self.strm.avail_in = 0;
        self.strm.next_out = std::ptr::null_mut();
        self.strm.avail_out = 0;
        out.truncate(filled);
        Ok(out)
    }
}

impl Drop for Deflater {
    fn drop(&mut self) {
        // SAFETY: the stream was initialised by deflateInit2 and is ended once.
        unsafe {
            z::deflateEnd(&mut *self.strm);
        }
    }
}

/// Inflate one zlib (`zlib_header`) or raw deflate stream from `input` into
/// `out`, which must be filled exactly. Data after the stream end is ignored.
pub(super) fn inflate_into(input: &[u8], zlib_header: bool, out: &mut [u8]) -> Result<()> {
    let mut d = Decompress::new(zlib_header);
    loop {
        let (ti, to) = (d.total_in() as usize, d.total_out() as usize);
        let status = d
            .decompress(&input[ti..], &mut out[to..], FlushDecompress::None)
            .map_err(|e| Error::corrupt(format!("zlib: {e}")))?;
        if status == Status::StreamEnd {
            return check_len(d.total_out() as usize, out.len());
        }
        if d.total_in() as usize == ti && d.total_out() as usize == to {
            return Err(Error::corrupt(if to == out.len() {
                format!("zlib: decoded more than the expected {} bytes", out.len())
            } else {
                "zlib: incomplete or truncated stream".to_string()
            }));
        }
    }
}

/// Inflate one stream of a decoded size within `bound`.
pub(super) fn inflate(input: &[u8], zlib_header: bool, bound: SizeBound) -> Result<Vec<u8>> {
    if let Some(n) = bound.exact() {
        let mut out = crate::alloc::zeroed(n)?;
        inflate_into(input, zlib_header, &mut out)?;
        return Ok(out);
    }
    let mut d = Decompress::new(zlib_header);
    let mut out = Vec::new();
    loop {
        make_room(&mut out, bound, "zlib")?;
        let (ti, to) = (d.total_in() as usize, d.total_out() as usize);
        let status = d
            .decompress_vec(&input[ti..], &mut out, FlushDecompress::None)
            .map_err(|e| Error::corrupt(format!("zlib: {e}")))?;
        if status == Status::StreamEnd {
            bound.check("zlib", out.len())?;
            return Ok(out);
        }
        if d.total_in() as usize == ti && d.total_out() as usize == to {
            return Err(Error::corrupt("zlib: incomplete or truncated stream"));
        }
    }
}

impl BytesToBytesCodec for ZlibCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        Deflater::new(self.level, 15)?.run(&decoded, z::Z_FINISH)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        inflate(&encoded, true, bound)
    }

    /// A zlib stream: deflate's worst case, a 2-byte header, a 4-byte trailer.
    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded.compressed(|n| with_slack(crate::codec::bytes_to_bytes::gzip::deflate_bound(n, 6)))
    }

    fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> Result<()> {
        inflate_into(&encoded, true, out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_robust, bytes_codec, compressor_input, hex};
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    /// numcodecs.Zlib(level).encode(d).hex() for each level.
    const REFERENCE: [(i64, &str); 5] = [
        (
            -1,
            "789c6360e7139551d632b4b077f30d894eca2c28af6bed993c6be18af5dbf61e\
         397de9e683e7efbe3272f08bc9aa681b593ab8fb85c624671556d4b7f54e99bd\
         68e586edfb8e9eb97cebe18bf7df983805c4e554758cad1c3dfcc36253b28b2a\
         1bdafba6ce59bc6ae38efdc7ce5eb9fde8e587efcc5c8212f26aba26d64e9e01\
         e171a939c5558d1dfdd3e62e59bd69e781e3e7aede79fceae30f166e21490575\
         3d531b67afc088f8b4dc92eaa6ce09d3e72d5db379d7c113e7afdd7df2fad34f\
         561e6129450d7d335b17efa0c884f4bcd29ae6ae8933e62f5bbb65f7a19317ae\
         df7bfae6f32f365e1169254d03733b579fe0a8c48cfcb2da96ee4933172c5fb7\
         75cfe153176fdc7ff6f60b03a95e671826000045e38df9",
        ),
        (
            0,
            "780101f4010bfe00070e151c232a31383f464d545b626970777e858c939aa1a8\
         afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a71787f868d\
         949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f565d646b72\
         7980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d343b42495057\
         5e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b121920272e353c\
         434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9050c131a21\
         282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7dee5ecf3fa06\
         0d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3cad1d8dfe6\
         edf400070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cb\
         d2d9e0e7eef501080f161d242b323940474e5500000000000000000000000000\
         0000000000000000000000000000000000000000000000000000000000000000\
         0000000000000000000000000000000000000000000000000000000000000000\
         0000000000000000000000000000000000000000000000000000000000000000\
         0000000000000000000000000000000000000000000000000000000000000000\
         0000000000000000000000000000000000000000000000000000000000000000\
         00000000000000000000000000000000000000000000000000000045e38df9",
        ),
        (
            1,
            "78016360e7139551d632b4b077f30d894eca2c28af6bed993c6be18af5dbf61e\
         397de9e683e7efbe3272f08bc9aa681b593ab8fb85c624671556d4b7f54e99bd\
         68e586edfb8e9eb97cebe18bf7df983805c4e554758cad1c3dfcc36253b28b2a\
         1bdafba6ce59bc6ae38efdc7ce5eb9fde8e587efcc5c8212f26aba26d64e9e01\
         e171a939c5558d1dfdd3e62e59bd69e781e3e7aede79fceae30f166e21490575\
         3d531b67afc088f8b4dc92eaa6ce09d3e72d5db379d7c113e7afdd7df2fad34f\
         561e6129450d7d335b17efa0c884f4bcd29ae6ae8933e62f5bbb65f7a19317ae\
         df7bfae6f32f365e1169254d03733b579fe0a8c48cfcb2da96ee4933172c5fb7\
         75cfe153176fdc7ff6f60b03a95e671826000045e38df9",
        ),
        (
            5,
            "785e6360e7139551d632b4b077f30d894eca2c28af6bed993c6be18af5dbf61e\
         397de9e683e7efbe3272f08bc9aa681b593ab8fb85c624671556d4b7f54e99bd\
         68e586edfb8e9eb97cebe18bf7df983805c4e554758cad1c3dfcc36253b28b2a\
         1bdafba6ce59bc6ae38efdc7ce5eb9fde8e587efcc5c8212f26aba26d64e9e01\
         e171a939c5558d1dfdd3e62e59bd69e781e3e7aede79fceae30f166e21490575\
         3d531b67afc088f8b4dc92eaa6ce09d3e72d5db379d7c113e7afdd7df2fad34f\
         561e6129450d7d335b17efa0c884f4bcd29ae6ae8933e62f5bbb65f7a19317ae\
         df7bfae6f32f365e1169254d03733b579fe0a8c48cfcb2da96ee4933172c5fb7\
         75cfe153176fdc7ff6f60b03a95e671826000045e38df9",
        ),
        (
            9,
            "78da6360e7139551d632b4b077f30d894eca2c28af6bed993c6be18af5dbf61e\
         397de9e683e7efbe3272f08bc9aa681b593ab8fb85c624671556d4b7f54e99bd\
         68e586edfb8e9eb97cebe18bf7df983805c4e554758cad1c3dfcc36253b28b2a\
         1bdafba6ce59bc6ae38efdc7ce5eb9fde8e587efcc5c8212f26aba26d64e9e01\
         e171a939c5558d1dfdd3e62e59bd69e781e3e7aede79fceae30f166e21490575\
         3d531b67afc088f8b4dc92eaa6ce09d3e72d5db379d7c113e7afdd7df2fad34f\
         561e6129450d7d335b17efa0c884f4bcd29ae6ae8933e62f5bbb65f7a19317ae\
         df7bfae6f32f365e1169254d03733b579fe0a8c48cfcb2da96ee4933172c5fb7\
         75cfe153176fdc7ff6f60b03a95e671826000045e38df9",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (level, enc) in REFERENCE {
            let c = bytes_codec("zlib", json!({ "level": level })).unwrap();
            assert_eq!(
                c.encode(compressor_input()).unwrap(),
                hex(enc),
                "level {level}"
            );
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), compressor_input());
            let mut out = vec![0; 500];
            c.decode_into(hex(enc), &mut out).unwrap();
            assert_eq!(out, compressor_input());
        }
    }

    #[test]
    fn level_zero_stored_blocks_match_cpython_buffering() {
        // Stored blocks at level 0 depend on CPython's output buffer growth:
        // zlib.compress(bytes(range(256)) * 600, 0) starts with a 65531-byte block.
        let data: Vec<u8> = (0..153_600).map(|i| i as u8).collect();
        let c = bytes_codec("zlib", json!({"level": 0})).unwrap();
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(&enc[..7], &hex("780100fbff0400"));
        assert_eq!(c.decode(enc, Unbounded).unwrap(), data);
    }

    #[test]
    fn round_trip_default_and_trailing_data() {
        let c = bytes_codec("zlib", json!({})).unwrap();
        let mut enc = c.encode(compressor_input()).unwrap();
        assert_eq!(&enc[..2], &[0x78, 0x01]); // default level 1
        enc.extend_from_slice(b"trailing");
        assert_eq!(
            c.decode(enc.clone(), Unbounded).unwrap(),
            compressor_input()
        );
        let mut short = vec![0; 499];
        assert!(c.decode_into(enc.clone(), &mut short).is_err());
        let mut long = vec![0; 501];
        assert!(c.decode_into(enc, &mut long).is_err());
        let empty = c.encode(Vec::new()).unwrap();
        assert_eq!(c.decode(empty, Unbounded).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn config_and_corrupt_input() {
        assert!(bytes_codec("zlib", json!({"level": 10})).is_err());
        assert!(bytes_codec("zlib", json!({"level": -2})).is_err());
        assert!(bytes_codec("zlib", json!({"level": "1"})).is_err());
        assert!(bytes_codec("zlib", json!({"level": -1})).is_ok());
        let c = bytes_codec("zlib", json!({"level": 6})).unwrap();
        let enc = c.encode(compressor_input()).unwrap();
        assert_robust(c.as_ref(), &enc, true);
    }
}
