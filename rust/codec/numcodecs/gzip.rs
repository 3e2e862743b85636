//! `numcodecs.gzip`: what CPython 3.11's `gzip.GzipFile(fileobj=BytesIO(),
//! mode='wb', compresslevel=level)` writes, and what it reads back.
//!
//! The stream is identical to numcodecs' except for the 4-byte modification
//! time in the header: Python writes the current time, this codec 0 ("no
//! time stamp", RFC 1952), so that encoding is deterministic. Decoding reads
//! any number of members (the core `gzip` codec's decoder).

use bytes::Bytes;
use libz_sys as z;
use serde_json::{Map, Value};

use super::check_config;
use super::zlib::Deflater;
use crate::codec::bytes_to_bytes::gzip::GzipCodec as CoreGzip;
use crate::codec::config::{Member, Members};
use crate::codec::{BytesToBytesCodec, SizeBound};
use crate::error::Result;

#[derive(Debug)]
pub struct GzipCodec {
    level: i32,
    decoder: CoreGzip,
}

/// numcodecs' `GZip(level=1)` (not the v3 `gzip` codec's 5).
pub const DEFAULT_LEVEL: i64 = 1;

fn level(config: &Map<String, Value>) -> Result<i64> {
    check_config("gzip", config, MEMBERS)?;
    Ok(TYPED_MEMBERS[0]
        .get_int("numcodecs.gzip", config)?
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

impl GzipCodec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        Ok(GzipCodec {
            level: level(config)? as i32,
            decoder: CoreGzip::from_config(&Map::new())?,
        })
    }
}

impl BytesToBytesCodec for GzipCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        // GzipFile._write_gzip_header: magic, deflate, no flags (a BytesIO has
        // no name), mtime, XFL (2 at level 9, 4 at level 1), OS 255.
        let xfl = match self.level {
            9 => 2,
            1 => 4,
            _ => 0,
        };
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, xfl, 0xff];
        let mut deflater = Deflater::new(self.level, -15)?;
        // GzipFile.write skips empty data; close() flushes with Z_FINISH.
        if !decoded.is_empty() {
            out.extend(deflater.run(&decoded, z::Z_NO_FLUSH)?);
        }
        out.extend(deflater.run(&[], z::Z_FINISH)?);
        let mut crc = flate2::Crc::new();
        crc.update(&decoded);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&(decoded.len() as u32).to_le_bytes());
        Ok(out)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        self.decoder.decode(encoded, bound)
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        self.decoder.encoded_bound(decoded)
    }

    fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> Result<()> {
        self.decoder.decode_into(encoded, out)
    }

    fn decode_stored(&self, encoded: Bytes, bound: SizeBound) -> Result<Vec<u8>> {
        self.decoder.decode_stored(encoded, bound)
    }

    fn decode_stored_into(&self, encoded: Bytes, out: &mut [u8]) -> Result<()> {
        self.decoder.decode_stored_into(encoded, out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_robust, bytes_codec, compressor_input, hex};
    use crate::codec::tests::sample;
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    /// numcodecs.GZip(level).encode(d).hex() with the mtime bytes 4..8 zeroed.
    const REFERENCE: [(i64, &str); 3] = [
        (
            1,
            "1f8b08000000000004ff6360e7139551d632b4b077f30d894eca2c28af6bed99\
         3c6be18af5dbf61e397de9e683e7efbe3272f08bc9aa681b593ab8fb85c62467\
         1556d4b7f54e99bd68e586edfb8e9eb97cebe18bf7df983805c4e554758cad1c\
         3dfcc36253b28b2a1bdafba6ce59bc6ae38efdc7ce5eb9fde8e587efcc5c8212\
         f26aba26d64e9e01e171a939c5558d1dfdd3e62e59bd69e781e3e7aede79fcea\
         e30f166e214905753d531b67afc088f8b4dc92eaa6ce09d3e72d5db379d7c113\
         e7afdd7df2fad34f561e6129450d7d335b17efa0c884f4bcd29ae6ae8933e62f\
         5bbb65f7a19317aedf7bfae6f32f365e1169254d03733b579fe0a8c48cfcb2da\
         96ee4933172c5fb775cfe153176fdc7ff6f60b03a95e6718260000b44dbab0f4\
         010000",
        ),
        (
            6,
            "1f8b08000000000000ff6360e7139551d632b4b077f30d894eca2c28af6bed99\
         3c6be18af5dbf61e397de9e683e7efbe3272f08bc9aa681b593ab8fb85c62467\
         1556d4b7f54e99bd68e586edfb8e9eb97cebe18bf7df983805c4e554758cad1c\
         3dfcc36253b28b2a1bdafba6ce59bc6ae38efdc7ce5eb9fde8e587efcc5c8212\
         f26aba26d64e9e01e171a939c5558d1dfdd3e62e59bd69e781e3e7aede79fcea\
         e30f166e214905753d531b67afc088f8b4dc92eaa6ce09d3e72d5db379d7c113\
         e7afdd7df2fad34f561e6129450d7d335b17efa0c884f4bcd29ae6ae8933e62f\
         5bbb65f7a19317aedf7bfae6f32f365e1169254d03733b579fe0a8c48cfcb2da\
         96ee4933172c5fb775cfe153176fdc7ff6f60b03a95e6718260000b44dbab0f4\
         010000",
        ),
        (
            9,
            "1f8b08000000000002ff6360e7139551d632b4b077f30d894eca2c28af6bed99\
         3c6be18af5dbf61e397de9e683e7efbe3272f08bc9aa681b593ab8fb85c62467\
         1556d4b7f54e99bd68e586edfb8e9eb97cebe18bf7df983805c4e554758cad1c\
         3dfcc36253b28b2a1bdafba6ce59bc6ae38efdc7ce5eb9fde8e587efcc5c8212\
         f26aba26d64e9e01e171a939c5558d1dfdd3e62e59bd69e781e3e7aede79fcea\
         e30f166e214905753d531b67afc088f8b4dc92eaa6ce09d3e72d5db379d7c113\
         e7afdd7df2fad34f561e6129450d7d335b17efa0c884f4bcd29ae6ae8933e62f\
         5bbb65f7a19317aedf7bfae6f32f365e1169254d03733b579fe0a8c48cfcb2da\
         96ee4933172c5fb775cfe153176fdc7ff6f60b03a95e6718260000b44dbab0f4\
         010000",
        ),
    ];

    #[test]
    fn matches_numcodecs_except_mtime() {
        for (level, enc) in REFERENCE {
            let c = bytes_codec("gzip", json!({ "level": level })).unwrap();
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), compressor_input());
            assert_eq!(
                c.encode(compressor_input()).unwrap(),
                hex(enc),
                "level {level}"
            );
        }
    }

    #[test]
    fn round_trips_and_multi_member() {
        let c = bytes_codec("gzip", json!({})).unwrap();
        let enc = c.encode(compressor_input()).unwrap();
        assert_eq!(enc[8], 4); // default level 1
        assert_eq!(
            c.decode(enc.clone(), Unbounded).unwrap(),
            compressor_input()
        );
        let mut two = enc.clone();
        two.extend(c.encode(sample(10)).unwrap());
        let mut expected = compressor_input();
        expected.extend(sample(10));
        assert_eq!(c.decode(two, Unbounded).unwrap(), expected);
        let empty = c.encode(Vec::new()).unwrap();
        assert_eq!(c.decode(empty, Unbounded).unwrap(), Vec::<u8>::new());
        let mut out = vec![0; 500];
        c.decode_into(enc, &mut out).unwrap();
        assert_eq!(out, compressor_input());
    }

    #[test]
    fn config_and_corrupt_input() {
        assert!(bytes_codec("gzip", json!({"level": 10})).is_err());
        assert!(bytes_codec("gzip", json!({"compresslevel": 1})).is_err());
        let c = bytes_codec("gzip", json!({"level": 9})).unwrap();
        let enc = c.encode(compressor_input()).unwrap();
        assert_robust(c.as_ref(), &enc, true);
    }
}
