//! `numcodecs.bz2`: `bz2.compress(buf, level)` / `bz2.decompress(buf)`, via
//! the bzip2 crate on libbz2-rs-sys (a port of libbzip2 1.0.8 with identical
//! output).

use std::io::Write;

use bzip2::write::BzEncoder;
use bzip2::{Compression, Decompress, Status};
use serde_json::{Map, Value};

use super::check_config;
use crate::codec::config::{Member, Members};
use crate::codec::{make_room, with_slack, BytesToBytesCodec, SizeBound};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct Bz2Codec {
    level: u32,
}

/// numcodecs' `BZ2(level=1)`.
pub const DEFAULT_LEVEL: i64 = 1;

fn level(config: &Map<String, Value>) -> Result<i64> {
    check_config("bz2", config, MEMBERS)?;
    Ok(TYPED_MEMBERS[0]
        .get_int("numcodecs.bz2", config)?
        .unwrap_or(DEFAULT_LEVEL))
}

/// numcodecs' members of this codec, in its `get_config()` order.
pub const MEMBERS: &[&str] = &["level"];

/// The members with their ranges: `level` 1 to 9.
pub const TYPED_MEMBERS: &[Member] = &[Member::int("level", 1, 9)];

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    Ok(vec![("level", level(config)?.into())])
}

impl Bz2Codec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        Ok(Bz2Codec {
            level: level(config)? as u32,
        })
    }
}

enum StreamError {
    /// Not valid bzip2 data.
    Data(String),
    /// The input ended before the end-of-stream marker.
    Truncated,
}

/// Decode one bzip2 stream from the start of `input`, appending to `out`
/// within `bound` (an error, not a stream error, when it would go past it);
/// returns the number of input bytes it took.
fn decode_stream(
    input: &[u8],
    out: &mut Vec<u8>,
    bound: SizeBound,
) -> Result<std::result::Result<usize, StreamError>> {
    let mut d = Decompress::new(false);
    loop {
        make_room(out, bound, "bz2")?;
        let (ti, to) = (d.total_in() as usize, d.total_out() as usize);
        let status = match d.decompress_vec(&input[ti..], out) {
            Ok(status) => status,
            Err(e) => return Ok(Err(StreamError::Data(format!("{e:?}")))),
        };
        if status == Status::StreamEnd {
            return Ok(Ok(d.total_in() as usize));
        }
        if d.total_in() as usize == ti && d.total_out() as usize == to {
            return Ok(Err(StreamError::Truncated));
        }
    }
}

impl BytesToBytesCodec for Bz2Codec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let mut enc = BzEncoder::new(
            crate::alloc::with_capacity(decoded.len() / 2 + 64)?,
            Compression::new(self.level),
        );
        enc.write_all(&decoded)
            .and_then(|_| enc.finish())
            .map_err(|e| Error::value(format!("bz2: {e}")))
    }

    /// As `bz2.decompress`: concatenated streams, and data after the last one
    /// that is not a bzip2 stream ignored.
    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut rest = encoded.as_slice();
        let mut first = true;
        while !rest.is_empty() {
            let before = out.len();
            match decode_stream(rest, &mut out, bound)? {
                Ok(used) => rest = &rest[used..],
                Err(StreamError::Data(_)) if !first => {
                    out.truncate(before);
                    break;
                }
                Err(StreamError::Data(e)) => {
                    return Err(Error::corrupt(format!("bz2: invalid data ({e})")))
                }
                Err(StreamError::Truncated) => {
                    return Err(Error::corrupt(
                        "bz2: compressed data ended before the end-of-stream marker",
                    ))
                }
            }
            first = false;
        }
        bound.check("bz2", out.len())?;
        Ok(out)
    }

    /// bzip2's documented worst case: 1% more than the input, plus 600 bytes.
    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded.compressed(|n| with_slack(n.checked_add(n / 100 + 600)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_robust, bytes_codec, compressor_input, hex};
    use crate::codec::tests::sample;
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    /// numcodecs.BZ2(level).encode(d).hex()
    const REFERENCE: [(i64, &str); 2] = [
        (
            1,
            "425a68313141592653597a6e71920000027fffffffffffffffffffffffffffff\
         fffffffffffffffffffffffffffffffffffff03000f812000000000000000000\
         00000000000000d34000000000000000000000000000000d0800000000000000\
         0000000000000000034d000000000000000000000000000000340d5500260264\
         c4d3004c9a30231309a68601326468f40010c04600984d190c0134c130268602\
         0c9a6232668984c99a083046993000009e826102904ed8ab686dee6efff78b81\
         883233343536371c107073c23a3b3c1c307bc43e3f404108410d11151b8a8e12\
         0719278fc84a4b098135393f93ca500a214b96a6a8aaac39815f9ab1cee7f402\
         c85a5b5c5d5e5f0c03a2c2c5d263641d31d465eaf588330670d0d2d4d6d8da1b\
         5b9bdc1c7afd81d97273747576770f1daedbcbd3dbe07d7e7f8081ee41083848\
         5eec377bbe21e23c1e1f144c508b8c8d8e8f90911e392f249ca4acb097f2cc4c\
         cd4dce09df34f79fd1e99f141434547494bea1ebf67b69a9fdd503df535557f0\
         f8d60adf9575791b0b11f3b2b3b4b5fa11b616ff5b8b92574485dde5efdbeff8\
         fc8bebfc0c1c2fd7ec61ff31317fb8d8e323272b2f33373867e868e969ea6a8d\
         6d7d8d9ff13da1f7f9fa0bfbfc5dc914e14241e9b9c648",
        ),
        (
            9,
            "425a68393141592653597a6e71920000027fffffffffffffffffffffffffffff\
         fffffffffffffffffffffffffffffffffffff03000f812000000000000000000\
         00000000000000d34000000000000000000000000000000d0800000000000000\
         0000000000000000034d000000000000000000000000000000340d5500260264\
         c4d3004c9a30231309a68601326468f40010c04600984d190c0134c130268602\
         0c9a6232668984c99a083046993000009e826102904ed8ab686dee6efff78b81\
         883233343536371c107073c23a3b3c1c307bc43e3f404108410d11151b8a8e12\
         0719278fc84a4b098135393f93ca500a214b96a6a8aaac39815f9ab1cee7f402\
         c85a5b5c5d5e5f0c03a2c2c5d263641d31d465eaf588330670d0d2d4d6d8da1b\
         5b9bdc1c7afd81d97273747576770f1daedbcbd3dbe07d7e7f8081ee41083848\
         5eec377bbe21e23c1e1f144c508b8c8d8e8f90911e392f249ca4acb097f2cc4c\
         cd4dce09df34f79fd1e99f141434547494bea1ebf67b69a9fdd503df535557f0\
         f8d60adf9575791b0b11f3b2b3b4b5fa11b616ff5b8b92574485dde5efdbeff8\
         fc8bebfc0c1c2fd7ec61ff31317fb8d8e323272b2f33373867e868e969ea6a8d\
         6d7d8d9ff13da1f7f9fa0bfbfc5dc914e14241e9b9c648",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (level, enc) in REFERENCE {
            let c = bytes_codec("bz2", json!({ "level": level })).unwrap();
            assert_eq!(
                c.encode(compressor_input()).unwrap(),
                hex(enc),
                "level {level}"
            );
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), compressor_input());
        }
    }

    #[test]
    fn concatenated_streams_and_trailing_garbage() {
        let c = bytes_codec("bz2", json!({})).unwrap();
        let mut enc = c.encode(compressor_input()).unwrap();
        enc.extend(c.encode(sample(7)).unwrap());
        let mut expected = compressor_input();
        expected.extend(sample(7));
        assert_eq!(c.decode(enc.clone(), Unbounded).unwrap(), expected);
        enc.extend_from_slice(b"not bzip2");
        assert_eq!(c.decode(enc, Unbounded).unwrap(), expected);
        let empty = c.encode(Vec::new()).unwrap();
        assert_eq!(c.decode(empty, Unbounded).unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn config_and_corrupt_input() {
        assert!(bytes_codec("bz2", json!({"level": 0})).is_err());
        assert!(bytes_codec("bz2", json!({"level": 10})).is_err());
        let c = bytes_codec("bz2", json!({"level": 9})).unwrap();
        let enc = c.encode(compressor_input()).unwrap();
        // bz2.decompress(b"") is b"", like here; any other truncation errs.
        assert_eq!(c.decode(Vec::new(), Unbounded).unwrap(), Vec::<u8>::new());
        for cut in [1, 4, 10, enc.len() / 2, enc.len() - 1] {
            assert!(
                c.decode(enc[..cut].to_vec(), Unbounded).is_err(),
                "cut {cut}"
            );
        }
        assert_robust(c.as_ref(), &enc, false);
    }
}
