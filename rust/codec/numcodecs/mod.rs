//! numcodecs-compatible codecs (Zarr v2 compressors and filters), named
//! `numcodecs.<id>` as zarr-python names them in v3 metadata. Each codec's
//! configuration is the numcodecs config dict without `"id"` (an `"id"` equal
//! to the codec's is tolerated). Encoded bytes match numcodecs 0.16.
//!
//! Filters (array->array) work on the flattened chunk in its element order,
//! native byte order; the `bytes` codec after them sets the stored byte order,
//! so the byte order in a filter's numcodecs dtype (`"<i4"`, `">f8"`) is
//! irrelevant here.

pub mod blosc;
pub mod bz2;
pub mod checksum32;
pub mod fletcher32;
pub mod gzip;
pub mod jenkins;
pub mod lz4;
pub mod lzma;
pub mod shuffle;
pub mod zlib;
pub mod zstd;

use serde_json::{Map, Value};

use super::config::check_members;
use super::{AnyCodec, ChunkSpec};
use crate::error::{Error, Result};

/// The codec `name` if it is a numcodecs codec, else `None`.
pub(crate) fn build(
    name: &str,
    config: &Map<String, Value>,
    spec: &ChunkSpec,
) -> Option<Result<AnyCodec>> {
    let id = name.strip_prefix("numcodecs.")?;
    use AnyCodec::BytesToBytes as B;
    let built = match id {
        "zlib" => zlib::ZlibCodec::from_config(config).map(|c| B(Box::new(c))),
        "gzip" => gzip::GzipCodec::from_config(config).map(|c| B(Box::new(c))),
        "bz2" => bz2::Bz2Codec::from_config(config).map(|c| B(Box::new(c))),
        "lzma" => lzma::LzmaCodec::from_config(config).map(|c| B(Box::new(c))),
        "zstd" => zstd::ZstdCodec::from_config(config).map(|c| B(Box::new(c))),
        "lz4" => lz4::Lz4Codec::from_config(config).map(|c| B(Box::new(c))),
        "blosc" => blosc::from_config(config, spec).map(|c| B(Box::new(c))),
        "shuffle" => shuffle::ShuffleCodec::from_config(config, spec).map(|c| B(Box::new(c))),
        "crc32" | "adler32" | "crc32c" => {
            checksum32::Checksum32Codec::from_config(id, config).map(|c| B(Box::new(c)))
        }
        "fletcher32" => fletcher32::Fletcher32Codec::from_config(config).map(|c| B(Box::new(c))),
        "jenkins_lookup3" => {
            jenkins::JenkinsLookup3Codec::from_config(config).map(|c| B(Box::new(c)))
        }
        _ => return None,
    };
    Some(built)
}

/// `check_members` for a numcodecs codec, which may also repeat its `"id"`.
pub(crate) fn check_config(id: &str, config: &Map<String, Value>, allowed: &[&str]) -> Result<()> {
    let name = format!("numcodecs.{id}");
    if let Some(v) = config.get("id") {
        if v.as_str() != Some(id) {
            return Err(Error::metadata(format!(
                "codec '{name}': 'id' must be \"{id}\" if present, got {v}"
            )));
        }
    }
    let without_id: Map<String, Value> = config
        .iter()
        .filter(|(k, _)| k.as_str() != "id")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    check_members(&name, &without_id, allowed)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::codec::{tests::spec, BytesToBytesCodec, CodecChain};
    use crate::error::ErrorKind;
    use serde_json::json;

    /// Bytes from a hex string (reference vectors produced by numcodecs).
    pub fn hex(s: &str) -> Vec<u8> {
        let s: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        s.chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
            .collect()
    }

    /// Build a numcodecs codec through the factory.
    pub fn build_any(id: &str, config: Value, spec: &ChunkSpec) -> Result<AnyCodec> {
        build(
            &format!("numcodecs.{id}"),
            config.as_object().expect("config object"),
            spec,
        )
        .expect("a numcodecs codec")
    }

    /// Build a bytes->bytes numcodecs codec (chunk spec: 1000 bytes).
    pub fn bytes_codec(id: &str, config: Value) -> Result<Box<dyn BytesToBytesCodec>> {
        match build_any(id, config, &spec(&[1000], "uint8"))? {
            AnyCodec::BytesToBytes(c) => Ok(c),
            _ => panic!("{id} is not a bytes->bytes codec"),
        }
    }

    /// Truncations and bit flips of `enc` decode to an error or (for formats
    /// without integrity checks) to something, but never panic; truncations of
    /// compressed streams must be errors.
    pub fn assert_robust(c: &dyn BytesToBytesCodec, enc: &[u8], truncation_errs: bool) {
        for cut in [0, 1, 4, enc.len() / 2, enc.len().saturating_sub(1)] {
            if cut < enc.len() {
                let r = c.decode(enc[..cut].to_vec());
                if truncation_errs {
                    assert!(r.is_err(), "cut {cut} of {}", enc.len());
                }
            }
        }
        for i in 0..enc.len().min(64) {
            let mut g = enc.to_vec();
            g[i] ^= 0xa5;
            let _ = c.decode(g);
        }
        let garbage: Vec<u8> = (0..300u32).map(|i| (i * 151 % 256) as u8).collect();
        let _ = c.decode(garbage);
    }

    #[test]
    fn unknown_ids_are_not_numcodecs() {
        let s = spec(&[4], "uint8");
        assert!(build("numcodecs.nope", &Map::new(), &s).is_none());
        assert!(build("zlib", &Map::new(), &s).is_none());
        let err =
            CodecChain::from_json(&json!(["bytes", {"name": "numcodecs.nope"}]), s).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Unsupported);
        assert!(err.message.contains("unknown codec"));
    }

    #[test]
    fn id_member_is_tolerated_when_it_matches() {
        assert!(bytes_codec("zlib", json!({"id": "zlib", "level": 1})).is_ok());
        assert!(bytes_codec("zlib", json!({"id": "gzip", "level": 1})).is_err());
        assert!(bytes_codec("zlib", json!({"levle": 1})).is_err());
    }
}
