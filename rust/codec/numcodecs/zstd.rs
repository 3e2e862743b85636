//! `numcodecs.zstd`: Zstandard with numcodecs' `level` and `checksum`.
//!
//! Encoding and decoding are the core `zstd` codec's (`ZSTD_compress2` with the
//! level, which numcodecs clamps to the library's maximum, and the checksum
//! flag; decoding as numcodecs does it, see there).

use bytes::Bytes;
use serde_json::{Map, Value};
use zstd::zstd_safe;

use super::check_config;
use crate::codec::bytes_to_bytes::zstd::{self as core_zstd, ZstdCodec as CoreZstd};
use crate::codec::config::{bool_member, Member, Members};
use crate::codec::{BytesToBytesCodec, SizeBound};
use crate::error::Result;

#[derive(Debug)]
pub struct ZstdCodec {
    inner: CoreZstd,
}

/// numcodecs' `Zstd(level=0, checksum=False)`.
pub const DEFAULT_LEVEL: i64 = 0;
pub const DEFAULT_CHECKSUM: bool = false;

/// numcodecs' members of this codec, in its `get_config()` order.
pub const MEMBERS: &[&str] = &["level", "checksum"];

/// The members with their ranges: `level` any C int (numcodecs keeps it), `checksum`.
pub const TYPED_MEMBERS: &[Member] = &[
    Member::int("level", i32::MIN as i64, i32::MAX as i64),
    Member::bool("checksum"),
];

/// `level` (as given: numcodecs keeps it) and `checksum`.
fn parse(config: &Map<String, Value>) -> Result<(i64, bool)> {
    check_config("zstd", config, MEMBERS)?;
    let level = TYPED_MEMBERS[0]
        .get_int("numcodecs.zstd", config)?
        .unwrap_or(DEFAULT_LEVEL);
    let checksum = bool_member("numcodecs.zstd", config, "checksum")?.unwrap_or(DEFAULT_CHECKSUM);
    Ok((level, checksum))
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    let (level, checksum) = parse(config)?;
    Ok(vec![("level", level.into()), ("checksum", checksum.into())])
}

impl ZstdCodec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        let (level, checksum) = parse(config)?;
        // numcodecs clamps levels above the maximum; zstd clamps those below
        // its minimum.
        let level = level.clamp(-(1 << 17), i64::from(zstd_safe::max_c_level())) as i32;
        Ok(ZstdCodec {
            inner: CoreZstd::new(level, checksum),
        })
    }
}

impl BytesToBytesCodec for ZstdCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        self.inner.encode(decoded)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        self.inner.decode(encoded, bound)
    }

    fn decode_into(&self, encoded: Vec<u8>, out: &mut [u8]) -> Result<()> {
        self.inner.decode_into(encoded, out)
    }

    fn decode_stored(&self, encoded: Bytes, bound: SizeBound) -> Result<Vec<u8>> {
        self.inner.decode_stored(encoded, bound)
    }

    fn decode_stored_into(&self, encoded: Bytes, out: &mut [u8]) -> Result<()> {
        self.inner.decode_stored_into(encoded, out)
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        core_zstd::encoded_bound(decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{assert_robust, bytes_codec, compressor_input, hex};
    use crate::codec::tests::sample;
    use crate::codec::SizeBound::Unbounded;
    use serde_json::json;

    /// numcodecs.Zstd(level, checksum).encode(d).hex() (numcodecs bundles
    /// zstd 1.5.6, this build 1.5.7: outputs agree at these levels).
    const REFERENCE: [(i64, bool, &str); 10] = [
        (
            -1,
            false,
            "28b52ffd60f400450800c40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000200449c127bfd919102",
        ),
        (
            -1,
            true,
            "28b52ffd64f400450800c40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000200449c127bfd91910223afcdbb",
        ),
        (
            1,
            false,
            "28b52ffd60f400450800c40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000200449c127bfd919102",
        ),
        (
            1,
            true,
            "28b52ffd64f400450800c40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000200449c127bfd91910223afcdbb",
        ),
        (
            3,
            false,
            "28b52ffd60f400450800c40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000200449c127bfd919102",
        ),
        (
            3,
            true,
            "28b52ffd64f400450800c40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000200449c127bfd91910223afcdbb",
        ),
        (
            9,
            false,
            "28b52ffd60f400450800c40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000200449c127bfd919102",
        ),
        (
            9,
            true,
            "28b52ffd64f400450800c40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000200449c127bfd91910223afcdbb",
        ),
        (
            22,
            false,
            "28b52ffd60f4004d0800d40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000002004347e1bdfee84901",
        ),
        (
            22,
            true,
            "28b52ffd64f4004d0800d40f00070e151c232a31383f464d545b626970777e85\
         8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
         71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
         565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
         3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
         20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
         050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
         e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
         cad1d8dfe6edf4000002004347e1bdfee8490123afcdbb",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (level, checksum, enc) in REFERENCE {
            let c = bytes_codec("zstd", json!({"level": level, "checksum": checksum})).unwrap();
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), compressor_input());
            assert_eq!(
                c.encode(compressor_input()).unwrap(),
                hex(enc),
                "level {level}"
            );
        }
    }

    #[test]
    fn numcodecs_default_level_decodes_and_round_trips() {
        // numcodecs.Zstd().encode(d): level 0 (zstd's default, 3), whose
        // output differs between zstd 1.5.6 and 1.5.7.
        const ENC: &str = "28b52ffd60f400450800c40f00070e151c232a31383f464d545b626970777e85\
                           8c939aa1a8afb6bdc4cbd2d9e0e7eef501080f161d242b323940474e555c636a\
                           71787f868d949ba2a9b0b7bec5ccd3dae1e8eff6020910171e252c333a41484f\
                           565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7030a11181f262d34\
                           3b424950575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8040b1219\
                           20272e353c434a51585f666d747b828990979ea5acb3bac1c8cfd6dde4ebf2f9\
                           050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7de\
                           e5ecf3fa060d141b222930373e454c535a61686f767d848b9299a0a7aeb5bcc3\
                           cad1d8dfe6edf4000200449c127bfd919102";
        let c = bytes_codec("zstd", json!({})).unwrap();
        assert_eq!(c.decode(hex(ENC), Unbounded).unwrap(), compressor_input());
        let enc = c.encode(compressor_input()).unwrap();
        assert_eq!(c.decode(enc, Unbounded).unwrap(), compressor_input());
    }

    #[test]
    fn concatenated_and_streamed_frames() {
        let c = bytes_codec("zstd", json!({"level": 1})).unwrap();
        let mut two = c.encode(sample(100)).unwrap();
        two.extend(c.encode(sample(50)).unwrap());
        let mut expected = sample(100);
        expected.extend(sample(50));
        assert_eq!(c.decode(two.clone(), Unbounded).unwrap(), expected);
        let mut out = vec![0; 150];
        c.decode_into(two, &mut out).unwrap();
        assert_eq!(out, expected);

        let mut streamed = Vec::new();
        {
            let mut w = zstd::stream::Encoder::new(&mut streamed, 1).unwrap();
            std::io::Write::write_all(&mut w, &compressor_input()).unwrap();
            w.finish().unwrap();
        }
        assert_eq!(
            c.decode(streamed.clone(), Unbounded).unwrap(),
            compressor_input()
        );
        let mut out = vec![0; 500];
        c.decode_into(streamed, &mut out).unwrap();
        assert_eq!(out, compressor_input());
    }

    #[test]
    fn config_and_corrupt_input() {
        // Levels beyond the maximum are clamped as numcodecs does.
        assert!(bytes_codec("zstd", json!({"level": 100})).is_ok());
        assert!(bytes_codec("zstd", json!({"level": -200000})).is_ok());
        assert!(bytes_codec("zstd", json!({"level": 1.5})).is_err());
        assert!(bytes_codec("zstd", json!({"checksum": 1})).is_err());
        assert!(bytes_codec("zstd", json!({"cname": "x"})).is_err());
        let c = bytes_codec("zstd", json!({"level": 3, "checksum": true})).unwrap();
        let enc = c.encode(compressor_input()).unwrap();
        assert_robust(c.as_ref(), &enc, true);
        assert!(c.decode(Vec::new(), Unbounded).is_err());
        // A header declaring a huge size is refused before allocating.
        let mut bomb = hex("28b52ffd");
        bomb.extend_from_slice(&[0xc0]);
        bomb.extend_from_slice(&u64::MAX.to_le_bytes());
        bomb.extend_from_slice(&[1, 0, 0]);
        assert!(c.decode(bomb, Unbounded).is_err());
    }
}
