//! The `blosc` codec, through c-blosc 1 built from source (`blosc_sys`), so
//! its output is what numcodecs and tensorstore (both on c-blosc 1.x) write.

use std::ffi::{c_int, c_void, CStr};

use serde_json::{Map, Value};

use super::blosc_sys as ffi;
use crate::codec::config::{check_members, keys, Member, MemberType, Members};
use crate::codec::{
    check_len, decode_in_place, with_slack, BytesToBytesCodec, ChunkSpec, SizeBound,
};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct BloscCodec {
    cname: &'static CStr,
    clevel: c_int,
    shuffle: c_int,
    typesize: usize,
    blocksize: usize,
}

/// The compressors this build of c-blosc has (numcodecs' `list_compressors()`
/// minus snappy).
pub const CNAMES: [&str; 5] = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"];

/// The shuffles of the v3 configuration, in the order of their c-blosc codes
/// (`BLOSC_NOSHUFFLE`, `BLOSC_SHUFFLE`, `BLOSC_BITSHUFFLE`).
pub const SHUFFLES: [&str; 3] = ["noshuffle", "shuffle", "bitshuffle"];

/// The configuration's members, in zarr-python's order: `typesize`, `cname`
/// (the specification also names `snappy`, which c-blosc builds without),
/// `clevel`, `shuffle`, `blocksize`.
pub const MEMBERS: &[Member] = &[
    Member::int("typesize", 1, i32::MAX as i64),
    Member::of(
        "cname",
        MemberType::Choice {
            choices: &CNAMES,
            unsupported: &["snappy"],
        },
    ),
    Member::int("clevel", 0, 9),
    Member::choice("shuffle", &SHUFFLES),
    Member::int("blocksize", 0, i32::MAX as i64),
];
const TYPESIZE: usize = 0;
const CNAME: usize = 1;
const CLEVEL: usize = 2;
const SHUFFLE: usize = 3;
const BLOCKSIZE: usize = 4;

/// The members as TensorStore's `blosc` takes them: its `typesize` is one
/// byte (1 to 255) and its `blocksize` unbounded; the rest as [`MEMBERS`].
pub const TENSORSTORE_MEMBERS: &[Member] = &[
    MEMBERS[CNAME],
    MEMBERS[CLEVEL],
    MEMBERS[SHUFFLE],
    Member::int("typesize", 1, 255),
    Member::int("blocksize", 0, i64::MAX),
];

/// The blosc codec's configuration (Zarr v3 `blosc`; numcodecs' `Blosc` is
/// `numcodecs::blosc`, with numcodecs' own defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloscConfig {
    pub typesize: usize,
    pub cname: &'static str,
    pub clevel: i64,
    pub shuffle: &'static str,
    pub blocksize: usize,
}

impl BloscConfig {
    /// zarr-python's `BloscCodec(cname="zstd", clevel=5, blocksize=0)`.
    pub const DEFAULT_CNAME: &'static str = "zstd";
    pub const DEFAULT_CLEVEL: i64 = 5;
    pub const DEFAULT_BLOCKSIZE: usize = 0;

    /// zarr-python's choice when `shuffle` is left out: bit-shuffle one-byte
    /// elements, byte-shuffle wider ones.
    pub fn default_shuffle(item_size: usize) -> &'static str {
        if item_size == 1 {
            "bitshuffle"
        } else {
            "shuffle"
        }
    }

    /// Parse a configuration for chunks of `item_size`-byte elements (the
    /// defaults of `typesize` and `shuffle`; 1 for variable-length types).
    pub fn parse(config: &Map<String, Value>, item_size: usize) -> Result<Self> {
        const C: &str = "blosc";
        check_members(C, config, &keys(MEMBERS))?;
        let cname = MEMBERS[CNAME]
            .get_choice(C, config)?
            .unwrap_or(Self::DEFAULT_CNAME);
        let clevel = MEMBERS[CLEVEL]
            .get_int(C, config)?
            .unwrap_or(Self::DEFAULT_CLEVEL);
        let item_size = item_size.max(1);
        let shuffle = MEMBERS[SHUFFLE]
            .get_choice(C, config)?
            .unwrap_or(Self::default_shuffle(item_size));
        let typesize = MEMBERS[TYPESIZE]
            .get_int(C, config)?
            .map_or(item_size, |t| t as usize);
        let blocksize = MEMBERS[BLOCKSIZE]
            .get_int(C, config)?
            .map_or(Self::DEFAULT_BLOCKSIZE, |b| b as usize);
        Ok(BloscConfig {
            typesize,
            cname,
            clevel,
            shuffle,
            blocksize,
        })
    }

    /// The complete configuration, as zarr-python writes it.
    pub fn members(self) -> Members {
        vec![
            ("typesize", self.typesize.into()),
            ("cname", self.cname.into()),
            ("clevel", self.clevel.into()),
            ("shuffle", self.shuffle.into()),
            ("blocksize", self.blocksize.into()),
        ]
    }
}

impl BloscCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        let c = BloscConfig::parse(config, spec.dtype.size)?;
        let shuffle = SHUFFLES.iter().position(|&s| s == c.shuffle).unwrap_or(0) as c_int;
        Self::new(c.cname, c.clevel, shuffle, c.typesize, c.blocksize)
    }

    /// A codec from already-parsed parameters: `cname` one of [`CNAMES`],
    /// `clevel` 0..=9, `shuffle` one of `BLOSC_NOSHUFFLE`, `BLOSC_SHUFFLE`,
    /// `BLOSC_BITSHUFFLE` (0, 1, 2). Used by `numcodecs.blosc` too.
    pub fn new(
        cname: &str,
        clevel: i64,
        shuffle: c_int,
        typesize: usize,
        blocksize: usize,
    ) -> Result<Self> {
        let cname = match cname {
            "lz4" => c"lz4",
            "lz4hc" => c"lz4hc",
            "blosclz" => c"blosclz",
            "zstd" => c"zstd",
            "zlib" => c"zlib",
            other => {
                return Err(Error::metadata(format!(
                    "blosc: compressor '{other}' is not supported; expected one of {CNAMES:?}"
                )))
            }
        };
        if !(0..=9).contains(&clevel) {
            return Err(Error::metadata(format!(
                "blosc: clevel must be in [0, 9], got {clevel}"
            )));
        }
        if !(0..=2).contains(&shuffle) {
            return Err(Error::metadata(format!(
                "blosc: shuffle must be 0, 1 or 2, got {shuffle}"
            )));
        }
        Ok(BloscCodec {
            cname,
            clevel: clevel as c_int,
            shuffle,
            typesize: typesize.max(1),
            blocksize,
        })
    }
}

/// The decoded size a blosc buffer declares, after checking that its header
/// is consistent with the buffer's length (so decompression reads in bounds).
fn validated_size(encoded: &[u8]) -> Result<usize> {
    if encoded.len() < ffi::MIN_HEADER_LENGTH {
        return Err(Error::corrupt(format!(
            "blosc: {} bytes is shorter than a blosc header",
            encoded.len()
        )));
    }
    let mut nbytes: usize = 0;
    // SAFETY: `encoded` is a live slice and we pass its true length; c-blosc's
    // validate only reads the header within that length and writes `nbytes`.
    let rc = unsafe {
        ffi::blosc_cbuffer_validate(
            encoded.as_ptr() as *const c_void,
            encoded.len(),
            &mut nbytes,
        )
    };
    if rc != 0 {
        return Err(Error::corrupt("blosc: invalid or truncated blosc buffer"));
    }
    Ok(nbytes)
}

/// Decoded bytes one byte of a blosc buffer can stand for: each block's
/// streams are compressed by one of blosc's codecs, the most expansive of
/// which (zstd) stays below this ratio (see `zstd::MAX_RATIO`).
const MAX_RATIO: usize = super::zstd::MAX_RATIO;

/// The decoded size a blosc buffer declares, once checked against its
/// compressed size and `bound` (before anything is allocated for it).
fn declared_size(encoded: &[u8], bound: SizeBound) -> Result<usize> {
    let size = bound.check_declared("blosc", validated_size(encoded)? as u64)?;
    if size > encoded.len().saturating_mul(MAX_RATIO) {
        return Err(Error::corrupt(format!(
            "blosc: header declares {size} bytes, more than {} compressed bytes can hold",
            encoded.len()
        )));
    }
    Ok(size)
}

impl BytesToBytesCodec for BloscCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let cap = decoded.len() + ffi::MAX_OVERHEAD;
        let mut out = crate::alloc::zeroed(cap)?;
        // SAFETY: src and dest are distinct live buffers of the lengths passed;
        // c-blosc never writes past `destsize` (documented) and the context API
        // keeps no global state, so concurrent calls from rayon threads are fine.
        let n = unsafe {
            ffi::blosc_compress_ctx(
                self.clevel,
                self.shuffle,
                self.typesize,
                decoded.len(),
                decoded.as_ptr() as *const c_void,
                out.as_mut_ptr() as *mut c_void,
                cap,
                self.cname.as_ptr(),
                self.blocksize,
                1,
            )
        };
        if n <= 0 {
            return Err(Error::value(format!("blosc: compression failed ({n})")));
        }
        out.truncate(n as usize);
        Ok(out)
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded.compressed(|n| with_slack(n.checked_add(ffi::MAX_OVERHEAD)))
    }

    decode_in_place!();
}

/// `decode` of bytes wherever they are.
fn decode_slice(encoded: &[u8], bound: SizeBound) -> Result<Vec<u8>> {
    let size = declared_size(encoded, bound)?;
    let mut out = crate::alloc::zeroed(size)?;
    decode_slice_into(encoded, &mut out)?;
    Ok(out)
}

/// `decode_into` of bytes wherever they are.
fn decode_slice_into(encoded: &[u8], out: &mut [u8]) -> Result<()> {
    let size = declared_size(encoded, SizeBound::Exact(out.len()))?;
    check_len(size, out.len())?;
    if size == 0 {
        return Ok(());
    }
    // SAFETY: the header was validated against `encoded.len()` above, and
    // `out` has exactly the declared decoded size, which c-blosc checks
    // against `destsize` before writing.
    let n = unsafe {
        ffi::blosc_decompress_ctx(
            encoded.as_ptr() as *const c_void,
            out.as_mut_ptr() as *mut c_void,
            out.len(),
            1,
        )
    };
    if n < 0 {
        return Err(Error::corrupt(format!("blosc: decompression failed ({n})")));
    }
    check_len(n as usize, out.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::tests::{sample, spec};
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    fn codec(cfg: Value) -> Result<BloscCodec> {
        BloscCodec::from_config(cfg.as_object().unwrap(), &spec(&[1000], "uint32"))
    }

    #[test]
    fn every_cname_and_shuffle_round_trips() {
        let data = sample(4000);
        for cname in CNAMES {
            for shuffle in ["noshuffle", "shuffle", "bitshuffle"] {
                let c = codec(json!({"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": 4, "blocksize": 0})).unwrap();
                let enc = c.encode(data.clone()).unwrap();
                // Header: version byte 2, then the declared size at bytes 4..8.
                assert_eq!(enc[0], 2);
                assert_eq!(u32::from_le_bytes(enc[4..8].try_into().unwrap()), 4000);
                assert_eq!(c.decode(enc, Unbounded).unwrap(), data, "{cname} {shuffle}");
            }
        }
    }

    #[test]
    fn corrupt_input_is_an_error() {
        let c = codec(json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle"})).unwrap();
        let enc = c.encode(sample(4000)).unwrap();
        for cut in [0, 5, 15, enc.len() / 2, enc.len() - 1] {
            assert!(
                c.decode(enc[..cut].to_vec(), Unbounded).is_err(),
                "cut {cut}"
            );
        }
        let mut out = vec![0; 3999];
        assert!(c.decode_into(enc, &mut out).is_err());
    }

    #[test]
    fn config_validation() {
        assert!(codec(json!({"cname": "snappy2"})).is_err());
        assert!(codec(json!({"clevel": 10})).is_err());
        assert!(codec(json!({"shuffle": 1})).is_err());
        assert_eq!(codec(json!({})).unwrap().typesize, 4);
    }
}
