//! The `gzip` codec (RFC 1952), via flate2 on zlib-rs.

use std::io::{Read, Write};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde_json::{Map, Value};

use crate::codec::config::{check_members, keys, Member, Members};
use crate::codec::{
    check_len, decode_in_place, read_bounded, with_slack, BytesToBytesCodec, SizeBound,
};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct GzipCodec {
    level: u32,
}

/// The gzip codec's configuration: `level` 0..=9 (it only affects encoding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GzipConfig {
    pub level: u32,
}

/// The configuration's members: `level`.
pub const MEMBERS: &[Member] = &[Member::int("level", 0, 9)];

impl GzipConfig {
    /// zarr-python's `GzipCodec(level=5)`.
    pub const DEFAULT_LEVEL: u32 = 5;

    pub fn parse(config: &Map<String, Value>) -> Result<Self> {
        check_members("gzip", config, &keys(MEMBERS))?;
        let level = MEMBERS[0].get_int("gzip", config)?;
        Ok(GzipConfig {
            level: level.map_or(Self::DEFAULT_LEVEL, |l| l as u32),
        })
    }

    /// The complete configuration, as zarr-python writes it.
    pub fn members(self) -> Members {
        vec![("level", self.level.into())]
    }
}

impl GzipCodec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        let GzipConfig { level } = GzipConfig::parse(config)?;
        Ok(GzipCodec { level })
    }
}

fn corrupt(e: std::io::Error) -> Error {
    Error::corrupt(format!("gzip: {e}"))
}

/// The most bytes a deflate stream of `n` bytes takes: zlib's `deflateBound`
/// for stored blocks (its worst case, whatever the parameters), plus `wrapper`
/// bytes of container header and trailer.
pub(crate) fn deflate_bound(n: usize, wrapper: usize) -> Option<usize> {
    n.checked_add((n >> 5) + (n >> 7) + (n >> 11) + 7 + wrapper)
}

/// What a gzip stream of a chunk within `decoded` may take (one member, a
/// 10-byte header, an 8-byte trailer), with slack for other encoders.
pub(crate) fn encoded_bound(decoded: SizeBound) -> SizeBound {
    decoded.compressed(|n| with_slack(deflate_bound(n, 18)))
}

impl BytesToBytesCodec for GzipCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let mut enc = GzEncoder::new(
            crate::alloc::with_capacity(decoded.len() / 2 + 64)?,
            Compression::new(self.level),
        );
        enc.write_all(&decoded)
            .and_then(|_| enc.finish())
            .map_err(|e| Error::value(format!("gzip: {e}")))
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        encoded_bound(decoded)
    }

    decode_in_place!();
}

/// `decode` of bytes wherever they are.
fn decode_slice(encoded: &[u8], bound: SizeBound) -> Result<Vec<u8>> {
    if let Some(n) = bound.exact() {
        let mut out = crate::alloc::zeroed(n)?;
        decode_slice_into(encoded, &mut out)?;
        return Ok(out);
    }
    read_bounded(MultiGzDecoder::new(encoded), bound, "gzip", corrupt)
}

/// `decode_into` of bytes wherever they are.
fn decode_slice_into(encoded: &[u8], out: &mut [u8]) -> Result<()> {
    let mut dec = MultiGzDecoder::new(encoded);
    let mut filled = 0;
    while filled < out.len() {
        match dec.read(&mut out[filled..]).map_err(corrupt)? {
            0 => return check_len(filled, out.len()),
            n => filled += n,
        }
    }
    let mut extra = [0u8; 1];
    if dec.read(&mut extra).map_err(corrupt)? != 0 {
        return Err(Error::corrupt(format!(
            "gzip: decoded more than the expected {} bytes",
            out.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    #[test]
    fn round_trip_and_header() {
        let c = GzipCodec::from_config(json!({"level": 5}).as_object().unwrap()).unwrap();
        let data = crate::codec::tests::sample(10_000);
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(&enc[..2], &[0x1f, 0x8b]); // gzip magic
        assert_eq!(c.decode(enc.clone(), Unbounded).unwrap(), data);
        let mut out = vec![0; data.len()];
        c.decode_into(enc.clone(), &mut out).unwrap();
        assert_eq!(out, data);
        let mut short = vec![0; data.len() - 1];
        assert!(c.decode_into(enc.clone(), &mut short).is_err());
        let mut long = vec![0; data.len() + 1];
        assert!(c.decode_into(enc, &mut long).is_err());
    }

    #[test]
    fn config_validation() {
        assert!(GzipCodec::from_config(json!({"level": 10}).as_object().unwrap()).is_err());
        assert_eq!(
            GzipCodec::from_config(json!({}).as_object().unwrap())
                .unwrap()
                .level,
            5
        );
        assert!(GzipCodec::from_config(json!({"level": 1, "x": 0}).as_object().unwrap()).is_err());
    }
}
