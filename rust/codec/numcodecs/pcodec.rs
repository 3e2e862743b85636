//! `numcodecs.pcodec`: the chunk's elements, flattened in C order, compressed
//! with pco's standalone format (what `pcodec.standalone.simple_compress`
//! writes; this is the same `pco` version, so the bytes are identical). An
//! array->bytes codec in zarr-python 3.4.
//!
//! numcodecs' configuration: `level` (0-12, default 8), `mode_spec` ("auto",
//! "classic"), `delta_spec` ("auto", "no_op", "none", "try_consecutive",
//! "try_lookback"), `paging_spec` ("equal_pages_up_to"),
//! `delta_encoding_order` (0-7, with "try_consecutive", or with "auto" as the
//! older spelling of it) and `equal_pages_up_to` (default 262144). As in
//! numcodecs, a configuration that cannot compress is an error when a chunk
//! is encoded, not when the array is opened: decoding needs none of it.
//!
//! Data types: (u)int16-64, float16-64; 8-bit integers decode but, as
//! numcodecs refuses them, do not encode.

use half::f16;
use pco::standalone::guarantee::file_size;
use pco::standalone::{simple_compress, DecompressorItem, FileDecompressor};
use pco::{ChunkConfig, DeltaSpec, ModeSpec, PagingSpec};
use serde_json::{Map, Value};

use super::check_config;
use crate::codec::config::Members;
use crate::codec::numcodecs::numeric::Num;
use crate::codec::typed::{as_typed, with_typed_mut};
use crate::codec::{check_len, with_slack, ArrayToBytesCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

const NAME: &str = "numcodecs.pcodec";
const DEFAULT_LEVEL: i64 = 8;
const DEFAULT_MODE_SPEC: &str = "auto";
const DEFAULT_DELTA_SPEC: &str = "auto";
const DEFAULT_PAGING_SPEC: &str = "equal_pages_up_to";
const DEFAULT_MAX_PAGE_N: i64 = 262_144;

/// numcodecs' `PCodec()` members, in its `get_config()` order.
pub const MEMBERS: &[&str] = &[
    "level",
    "mode_spec",
    "delta_spec",
    "paging_spec",
    "delta_encoding_order",
    "equal_pages_up_to",
];

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`:
/// the given members as given (as in numcodecs, their values are checked when
/// a chunk is encoded), numcodecs' defaults for the others.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_config("pcodec", config, MEMBERS)?;
    let defaults: [Value; 6] = [
        DEFAULT_LEVEL.into(),
        DEFAULT_MODE_SPEC.into(),
        DEFAULT_DELTA_SPEC.into(),
        DEFAULT_PAGING_SPEC.into(),
        Value::Null,
        DEFAULT_MAX_PAGE_N.into(),
    ];
    Ok(MEMBERS
        .iter()
        .zip(defaults)
        .map(|(&key, default)| (key, config.get(key).cloned().unwrap_or(default)))
        .collect())
}

#[derive(Debug)]
pub struct PcodecCodec {
    num: Num,
    /// What encoding uses, or why the configuration cannot encode.
    config: std::result::Result<ChunkConfig, Error>,
    nbytes: usize,
}

/// The chunk config numcodecs' `PCodec._get_chunk_config` builds.
fn chunk_config(config: &Map<String, Value>) -> Result<ChunkConfig> {
    let int = |key: &str, default: i64| -> Result<i64> {
        match config.get(key) {
            None => Ok(default),
            Some(v) => v.as_i64().ok_or_else(|| {
                Error::value(format!(
                    "codec '{NAME}': '{key}' must be an integer, got {v}"
                ))
            }),
        }
    };
    let text = |key: &str, default: &'static str| -> Result<String> {
        match config.get(key) {
            None => Ok(default.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(Error::value(format!(
                "codec '{NAME}': '{key}' must be a string, got {v}"
            ))),
        }
    };
    let level = int("level", DEFAULT_LEVEL)?;
    let mode_spec = match text("mode_spec", DEFAULT_MODE_SPEC)?.as_str() {
        "auto" => ModeSpec::Auto,
        "classic" => ModeSpec::Classic,
        other => {
            return Err(Error::value(format!(
                "codec '{NAME}': mode_spec {other} is not supported"
            )))
        }
    };
    let order = match config.get("delta_encoding_order") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|o| usize::try_from(o).ok())
                .ok_or_else(|| {
                    Error::value(format!(
                        "codec '{NAME}': delta_encoding_order must be a non-negative integer, \
                         got {v}"
                    ))
                })?,
        ),
    };
    let delta = text("delta_spec", DEFAULT_DELTA_SPEC)?;
    let delta_spec = match (delta.as_str(), order) {
        ("auto" | "try_consecutive", Some(order)) => DeltaSpec::TryConsecutive(order),
        (_, Some(_)) => {
            return Err(Error::value(format!(
                "codec '{NAME}': delta_encoding_order can only be set for delta_spec \
                 'try_consecutive'"
            )))
        }
        ("auto", None) => DeltaSpec::Auto,
        ("none" | "no_op", None) => DeltaSpec::NoOp,
        ("try_lookback", None) => DeltaSpec::TryLookback,
        ("try_consecutive", None) => {
            return Err(Error::value(format!(
                "codec '{NAME}': delta_spec 'try_consecutive' needs a delta_encoding_order"
            )))
        }
        (other, None) => {
            return Err(Error::value(format!(
                "codec '{NAME}': delta_spec {other} is not supported"
            )))
        }
    };
    let paging_spec = match text("paging_spec", DEFAULT_PAGING_SPEC)?.as_str() {
        "equal_pages_up_to" => {
            let n = int("equal_pages_up_to", DEFAULT_MAX_PAGE_N)?;
            PagingSpec::EqualPagesUpTo(usize::try_from(n).ok().filter(|&n| n > 0).ok_or_else(
                || {
                    Error::value(format!(
                        "codec '{NAME}': equal_pages_up_to must be positive, got {n}"
                    ))
                },
            )?)
        }
        other => {
            return Err(Error::value(format!(
                "codec '{NAME}': paging_spec {other} is not supported"
            )))
        }
    };
    let level = usize::try_from(level).map_err(|_| {
        Error::value(format!(
            "codec '{NAME}': level must be from 0 to 12, got {level}"
        ))
    })?;
    Ok(ChunkConfig::default()
        .with_compression_level(level)
        .with_mode_spec(mode_spec)
        .with_delta_spec(delta_spec)
        .with_paging_spec(paging_spec))
}

fn pco_error(e: pco::errors::PcoError) -> Error {
    Error::corrupt(format!("{NAME}: {e}"))
}

/// Decode a standalone pco file of `T`s into `out`, which it must fill exactly.
fn decompress_into<T: pco::data_types::Number>(src: &[u8], out: &mut [T]) -> Result<()> {
    let (file, mut rest) = FileDecompressor::new(src).map_err(pco_error)?;
    let total = out.len();
    let mut filled: usize = 0;
    loop {
        match file.chunk_decompressor::<T, _>(rest).map_err(pco_error)? {
            DecompressorItem::EndOfData(_) => break,
            DecompressorItem::Chunk(mut chunk) => {
                let n = chunk.n();
                let dst = out
                    .get_mut(filled..filled.saturating_add(n))
                    .ok_or_else(|| {
                        Error::corrupt(format!(
                            "{NAME}: the stream holds more than the {total} numbers of the chunk"
                        ))
                    })?;
                let progress = chunk.read(dst).map_err(pco_error)?;
                if progress.n_processed != n || !progress.finished {
                    return Err(Error::corrupt(format!("{NAME}: a page ended early")));
                }
                filled += n;
                rest = chunk.into_src();
            }
        }
    }
    if filled != out.len() {
        return Err(Error::corrupt(format!(
            "{NAME}: the stream holds {filled} numbers, the chunk {}",
            out.len()
        )));
    }
    Ok(())
}

/// `$body` with `$t` the Rust type of `$num` (a pco number type).
macro_rules! with_number {
    ($num:expr, $t:ident => $body:expr) => {
        match $num {
            Num::U8 => {
                type $t = u8;
                $body
            }
            Num::I8 => {
                type $t = i8;
                $body
            }
            Num::U16 => {
                type $t = u16;
                $body
            }
            Num::I16 => {
                type $t = i16;
                $body
            }
            Num::U32 => {
                type $t = u32;
                $body
            }
            Num::I32 => {
                type $t = i32;
                $body
            }
            Num::U64 => {
                type $t = u64;
                $body
            }
            Num::I64 => {
                type $t = i64;
                $body
            }
            Num::F16 => {
                type $t = f16;
                $body
            }
            Num::F32 => {
                type $t = f32;
                $body
            }
            _ => {
                type $t = f64;
                $body
            }
        }
    };
}

impl PcodecCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_config("pcodec", config, MEMBERS)?;
        let num = Num::from_dtype(spec.dtype)
            .filter(|n| n.is_int() || n.is_float())
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "codec '{NAME}' compresses (u)int16-64 and float16-64 data, not a data \
                     type of {} byte(s)",
                    spec.dtype.size
                ))
            })?;
        Ok(PcodecCodec {
            num,
            config: chunk_config(config),
            nbytes: spec.nbytes(),
        })
    }
}

impl ArrayToBytesCodec for PcodecCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.nbytes)?;
        let config = self.config.clone()?;
        if self.num.size() == 1 {
            return Err(Error::value(format!(
                "{NAME}: numcodecs does not compress 8-bit data with pco"
            )));
        }
        with_number!(self.num, T => simple_compress(&as_typed::<T>(&decoded), &config))
            .map_err(|e| Error::value(format!("{NAME}: {e}")))
    }

    fn encoded_bound(&self) -> SizeBound {
        // pco's own guarantee for this many numbers in the configured pages (the pages
        // are in the array's metadata, so every writer of it uses them), plus slack.
        let Ok(config) = &self.config else {
            return SizeBound::Unbounded;
        };
        let n = self.nbytes / self.num.size();
        let worst = match self.num.size() {
            1 => file_size::<u8>(n, &config.paging_spec),
            2 => file_size::<u16>(n, &config.paging_spec),
            4 => file_size::<u32>(n, &config.paging_spec),
            _ => file_size::<u64>(n, &config.paging_spec),
        };
        SizeBound::Exact(self.nbytes).compressed(|_| with_slack(worst.ok()))
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        // The output is the chunk (never what a stream's header claims).
        bound.check(NAME, self.nbytes)?;
        let mut out = crate::alloc::zeroed(self.nbytes)?;
        with_number!(self.num, T => with_typed_mut(&mut out, |dst: &mut [T]| {
            decompress_into(&encoded, dst)
        }))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{build_any, hex};
    use super::*;
    use crate::codec::tests::spec;
    use crate::codec::{AnyCodec, CodecChain};
    use crate::error::ErrorKind;
    use serde_json::json;

    fn codec(config: Value, dtype: &str, n: usize) -> Result<Box<dyn ArrayToBytesCodec>> {
        match build_any("pcodec", config, &spec(&[n], dtype))? {
            AnyCodec::ArrayToBytes(c) => Ok(c),
            _ => panic!("pcodec is an array->bytes codec"),
        }
    }

    fn le<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
        bytemuck::cast_slice(v).to_vec()
    }

    /// numcodecs.PCodec().encode(np.arange(5, dtype=...)).hex() (pcodec 1.1.0)
    const REFERENCE: [(&str, &str); 3] = [
        ("uint16", "70636f2103004201040107040000001000000018884600"),
        (
            "int32",
            "70636f2103004201040103040000001000000000001c00884600",
        ),
        (
            "float64",
            "70636f210300420104010604000000220000000000000000001020000000000000fcaf0da802000000\
             00000000000000000010000000000000060000000000000200",
        ),
    ];

    #[test]
    fn matches_numcodecs_both_ways() {
        for (dtype, enc) in REFERENCE {
            let c = codec(json!({}), dtype, 5).unwrap();
            let x = match dtype {
                "uint16" => le(&[0u16, 1, 2, 3, 4]),
                "int32" => le(&[0i32, 1, 2, 3, 4]),
                _ => le(&[0f64, 1.0, 2.0, 3.0, 4.0]),
            };
            if cfg!(target_endian = "little") {
                assert_eq!(c.encode(x.clone()).unwrap(), hex(enc), "{dtype}");
            }
            assert_eq!(
                c.decode(hex(enc), SizeBound::Unbounded).unwrap(),
                x,
                "{dtype}"
            );
        }
    }

    #[test]
    fn every_config_round_trips() {
        let x: Vec<f32> = (0..3000).map(|i| (i as f32 * 0.37).sin() * 100.0).collect();
        for config in [
            json!({"level": 0}),
            json!({"level": 12, "mode_spec": "classic"}),
            json!({"delta_spec": "no_op"}),
            json!({"delta_spec": "none"}),
            json!({"delta_spec": "try_lookback"}),
            json!({"delta_spec": "try_consecutive", "delta_encoding_order": 2}),
            json!({"delta_spec": "auto", "delta_encoding_order": 1}),
            json!({"paging_spec": "equal_pages_up_to", "equal_pages_up_to": 700}),
            json!({"id": "pcodec", "level": 3, "delta_encoding_order": null}),
        ] {
            let c = codec(config.clone(), "float32", 3000).unwrap();
            let enc = c.encode(le(&x)).unwrap();
            assert_eq!(
                c.decode(enc, SizeBound::Unbounded).unwrap(),
                le(&x),
                "{config}"
            );
        }
    }

    #[test]
    fn bad_configs_fail_on_encode_only() {
        let good = codec(json!({}), "int64", 4)
            .unwrap()
            .encode(le(&[1i64, 2, 3, 4]))
            .unwrap();
        for config in [
            json!({"level": 13}),
            json!({"level": -1}),
            json!({"mode_spec": "try_dict"}),
            json!({"delta_spec": "no_op", "delta_encoding_order": 1}),
            json!({"delta_spec": "try_consecutive"}),
            json!({"delta_spec": "try_consecutive", "delta_encoding_order": 8}),
            json!({"paging_spec": "exact"}),
            json!({"equal_pages_up_to": 0}),
        ] {
            let c = codec(config.clone(), "int64", 4).unwrap();
            assert!(c.encode(le(&[1i64, 2, 3, 4])).is_err(), "{config}");
            assert_eq!(
                c.decode(good.clone(), SizeBound::Unbounded).unwrap(),
                le(&[1i64, 2, 3, 4])
            );
        }
        assert!(codec(json!({"levle": 1}), "int64", 4).is_err());
        assert_eq!(
            codec(json!({}), "bool", 4).unwrap_err().kind,
            ErrorKind::Unsupported
        );
        assert!(codec(json!({}), "uint8", 4)
            .unwrap()
            .encode(vec![1; 4])
            .is_err());
    }

    #[test]
    fn wrong_sizes_types_and_corruption_are_errors() {
        let c = codec(json!({}), "uint32", 100).unwrap();
        let x: Vec<u32> = (0..100).map(|i| i * 7919 % 1000).collect();
        let enc = c.encode(le(&x)).unwrap();
        assert_eq!(c.decode(enc.clone(), SizeBound::Unbounded).unwrap(), le(&x));
        // The chunk's size bounds the output; the encoding stays within its own bound.
        assert!(c.decode(enc.clone(), SizeBound::Exact(399)).is_err());
        assert!(c.decode(enc.clone(), SizeBound::AtMost(399)).is_err());
        assert!(c.encoded_bound().limit() >= enc.len());
        // Fewer or more numbers than the chunk holds, another number type.
        let shorter = codec(json!({}), "uint32", 99).unwrap();
        assert_eq!(
            shorter
                .decode(enc.clone(), SizeBound::Unbounded)
                .unwrap_err()
                .kind,
            ErrorKind::Corrupt
        );
        let longer = codec(json!({}), "uint32", 101).unwrap();
        assert_eq!(
            longer
                .decode(enc.clone(), SizeBound::Unbounded)
                .unwrap_err()
                .kind,
            ErrorKind::Corrupt
        );
        let other = codec(json!({}), "int32", 100).unwrap();
        assert_eq!(
            other
                .decode(enc.clone(), SizeBound::Unbounded)
                .unwrap_err()
                .kind,
            ErrorKind::Corrupt
        );
        for cut in [0, 1, 4, enc.len() / 2, enc.len() - 1] {
            assert!(
                c.decode(enc[..cut].to_vec(), SizeBound::Unbounded).is_err(),
                "cut {cut}"
            );
        }
        for i in 0..enc.len() {
            let mut g = enc.clone();
            g[i] ^= 0x5a;
            let _ = c.decode(g, SizeBound::Unbounded);
        }
    }

    #[test]
    fn in_a_chain_after_a_filter() {
        let chain = CodecChain::from_json(
            &json!([{"name": "numcodecs.pcodec", "configuration": {"level": 4}},
                    {"name": "crc32c"}]),
            spec(&[8, 8], "int16"),
        )
        .unwrap();
        let x: Vec<i16> = (0..64).map(|i| i * 3 - 90).collect();
        assert_eq!(chain.decode(chain.encode(le(&x)).unwrap()).unwrap(), le(&x));
    }
}
