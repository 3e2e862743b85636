//! `numcodecs.lz4`: numcodecs' framing, a 4-byte little-endian decoded size
//! followed by one LZ4 block (`LZ4_compress_fast` with `acceleration`), via the
//! C liblz4 (lz4-sys, built from source; the same lz4 1.10.0 numcodecs bundles).

use std::ffi::{c_char, c_int};

use serde_json::{Map, Value};

use super::check_config;
use crate::codec::config::{Member, Members};
use crate::codec::{check_len, with_slack, BytesToBytesCodec, SizeBound};
use crate::error::{Error, Result};

/// numcodecs' `LZ4.max_buffer_size` (liblz4's `LZ4_MAX_INPUT_SIZE`).
const MAX_BUFFER_SIZE: usize = 0x7E00_0000;

#[derive(Debug)]
pub struct Lz4Codec {
    acceleration: c_int,
}

/// numcodecs' `LZ4(acceleration=1)` members, in its `get_config()` order.
pub const MEMBERS: &[&str] = &["acceleration"];

/// The members with their ranges: `acceleration` any C int.
pub const TYPED_MEMBERS: &[Member] = &[Member::int(
    "acceleration",
    i32::MIN as i64,
    i32::MAX as i64,
)];

fn acceleration(config: &Map<String, Value>) -> Result<i64> {
    check_config("lz4", config, MEMBERS)?;
    let acceleration = TYPED_MEMBERS[0].get_int("numcodecs.lz4", config)?;
    Ok(acceleration.unwrap_or(1))
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    Ok(vec![("acceleration", acceleration(config)?.into())])
}

impl Lz4Codec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        let acceleration = acceleration(config)?;
        // numcodecs replaces values <= 0 with the default, 1.
        Ok(Lz4Codec {
            acceleration: if acceleration <= 0 {
                1
            } else {
                acceleration as c_int
            },
        })
    }
}

/// The decoded size from the header, after checking that the block could
/// hold it (LZ4 expands at most ~255x) and that `bound` allows it, so garbage
/// cannot force a huge allocation.
fn declared_size(encoded: &[u8], bound: SizeBound) -> Result<usize> {
    if encoded.len() < 4 {
        return Err(Error::corrupt(format!(
            "lz4: {} bytes is too short for the size header",
            encoded.len()
        )));
    }
    let size = u32::from_le_bytes([encoded[0], encoded[1], encoded[2], encoded[3]]) as usize;
    let block = encoded.len() - 4;
    if size > MAX_BUFFER_SIZE || size > block.saturating_mul(255).saturating_add(16) {
        return Err(Error::corrupt(format!(
            "lz4: header declares {size} bytes, impossible for a {block}-byte block"
        )));
    }
    bound.check_declared("lz4", size as u64)
}

impl BytesToBytesCodec for Lz4Codec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        if decoded.len() > MAX_BUFFER_SIZE {
            return Err(Error::value(format!(
                "lz4: buffers of more than {MAX_BUFFER_SIZE} bytes are not supported"
            )));
        }
        let n = decoded.len() as c_int;
        // SAFETY: pure function of its argument.
        let bound = unsafe { lz4_sys::LZ4_compressBound(n) };
        if bound <= 0 {
            return Err(Error::value("lz4: input too large"));
        }
        let mut out = crate::alloc::zeroed(4 + bound as usize)?;
        out[..4].copy_from_slice(&(decoded.len() as u32).to_le_bytes());
        // SAFETY: `decoded` holds `n` readable bytes and `out[4..]` has
        // `bound` writable bytes; LZ4_compress_fast writes at most `bound`.
        let written = unsafe {
            lz4_sys::LZ4_compress_fast(
                decoded.as_ptr() as *const c_char,
                out.as_mut_ptr().add(4) as *mut c_char,
                n,
                bound,
                self.acceleration,
            )
        };
        if written <= 0 {
            return Err(Error::value(format!("lz4: compression error {written}")));
        }
        out.truncate(4 + written as usize);
        Ok(out)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        let mut out = crate::alloc::zeroed(declared_size(&encoded, bound)?)?;
        self.decode_into(encoded, &mut out)?;
        Ok(out)
    }

    /// `LZ4_compressBound` and the 4-byte size header.
    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded.compressed(|n| with_slack(n.checked_add(n / 255 + 16 + 4)))
    }

    fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> Result<()> {
        let size = declared_size(&encoded, SizeBound::Exact(out.len()))?;
        check_len(size, out.len())?;
        let block = &encoded[4..];
        // A non-null destination even for zero bytes.
        let mut one = [0u8; 1];
        let dest = if out.is_empty() {
            one.as_mut_ptr()
        } else {
            out.as_mut_ptr()
        };
        // SAFETY: `block` is readable for its length and `dest` writable for
        // `size` bytes; LZ4_decompress_safe never reads or writes beyond the
        // sizes it is given, whatever the input.
        let n = unsafe {
            lz4_sys::LZ4_decompress_safe(
                block.as_ptr() as *const c_char,
                dest as *mut c_char,
                block.len() as c_int,
                size as c_int,
            )
        };
        if n < 0 {
            return Err(Error::corrupt(format!("lz4: invalid block (error {n})")));
        }
        check_len(n as usize, size)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_robust, bytes_codec, compressor_input, hex};
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    /// numcodecs.LZ4(acceleration).encode(d).hex()
    const REFERENCE: [(i64, &str); 3] = [
        (
            1,
            "f4010000ffec00070e151c232a31383f464d545b626970777e858c939aa1a8af\
         b6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a71787f868d94\
         9ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f565d646b7279\
         80878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d343b424950575e\
         656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b121920272e353c43\
         4a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9050c131a2128\
         2f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7dee5ecf3fa060d\
         141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3cad1d8dfe6ed\
         f4fb001e1f000100af500000000000",
        ),
        (
            5,
            "f4010000ffec00070e151c232a31383f464d545b626970777e858c939aa1a8af\
         b6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a71787f868d94\
         9ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f565d646b7279\
         80878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d343b424950575e\
         656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b121920272e353c43\
         4a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9050c131a2128\
         2f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7dee5ecf3fa060d\
         141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3cad1d8dfe6ed\
         f4fb001e1f000100af500000000000",
        ),
        (
            100,
            "f4010000f0ffe600070e151c232a31383f464d545b626970777e858c939aa1a8\
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
         000000000000000000000000000000000000000000000000000000",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (acceleration, enc) in REFERENCE {
            let c = bytes_codec("lz4", json!({ "acceleration": acceleration })).unwrap();
            assert_eq!(
                c.encode(compressor_input()).unwrap(),
                hex(enc),
                "{acceleration}"
            );
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), compressor_input());
        }
    }

    #[test]
    fn framing_and_empty_input() {
        let c = bytes_codec("lz4", json!({})).unwrap();
        let enc = c.encode(compressor_input()).unwrap();
        assert_eq!(&enc[..4], &500u32.to_le_bytes());
        let mut out = vec![0; 500];
        c.decode_into(enc.clone(), &mut out).unwrap();
        assert_eq!(out, compressor_input());
        let mut short = vec![0; 499];
        assert!(c.decode_into(enc, &mut short).is_err());
        let empty = c.encode(Vec::new()).unwrap();
        assert_eq!(empty, hex("0000000000"));
        assert_eq!(c.decode(empty, Unbounded).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn config_and_corrupt_input() {
        assert!(bytes_codec("lz4", json!({"acceleration": "fast"})).is_err());
        // <= 0 means the default, as in numcodecs.
        let c = bytes_codec("lz4", json!({"acceleration": -5})).unwrap();
        let d = bytes_codec("lz4", json!({"acceleration": 1})).unwrap();
        assert_eq!(
            c.encode(compressor_input()).unwrap(),
            d.encode(compressor_input()).unwrap()
        );
        let enc = c.encode(compressor_input()).unwrap();
        assert_robust(c.as_ref(), &enc, true);
        // Size header larger than the block could produce.
        let mut bad = enc.clone();
        bad[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(c.decode(bad, Unbounded).is_err());
    }
}
