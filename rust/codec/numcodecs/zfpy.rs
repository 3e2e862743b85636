//! `numcodecs.zfpy`: the chunk compressed with zfp, as `zfpy.compress_numpy`
//! writes it: a full zfp header (magic, field metadata with the type and the
//! shape as `nx, ny, nz, nw` = the C-order shape reversed, and the mode),
//! then the compressed blocks, padded to 64-bit words. An array->bytes codec
//! in zarr-python 3.4. zfp itself is `zfp-rs`, bit-identical to the C
//! library zfpy wraps.
//!
//! numcodecs' configuration: `mode` (zfpy's constants: 2 fixed-rate, 3
//! fixed-precision, 4 fixed-accuracy, the default) and the parameter of that
//! mode, `rate`, `precision` or `tolerance`; a negative parameter (the
//! default, -1) means reversible (lossless) compression. Other modes cannot
//! encode in numcodecs, and are an error here too when a chunk is encoded.
//! Decoding reads everything from the header, whatever the configuration.
//!
//! Data types: int32, int64, float32, float64; chunks of 1 to 4 dimensions
//! (decoding takes any shape with the chunk's number of elements, as
//! zarr-python reshapes what zfpy returns).

use serde_json::{Map, Value};
use zfp_rs::{
    ZfpBitStream, ZfpConfig, ZfpField, ZfpFieldMetadata, ZfpFieldMut, ZfpHeaderMask, ZfpScalarType,
    ZFP_MAX_BITS, ZFP_MAX_PREC, ZFP_MIN_EXP,
};

use super::check_config;
use crate::codec::config::Members;
use crate::codec::numcodecs::numeric::Num;
use crate::codec::typed::{as_typed, with_typed_mut};
use crate::codec::{check_len, with_slack, ArrayToBytesCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

const NAME: &str = "numcodecs.zfpy";

/// zfpy's mode constants (zfp's `zfp_mode` enum).
const MODE_FIXED_RATE: i64 = 2;
const MODE_FIXED_PRECISION: i64 = 3;
const MODE_FIXED_ACCURACY: i64 = 4;
/// The default of `tolerance`, `rate` and `precision`: any negative value
/// means reversible compression.
const REVERSIBLE: i64 = -1;

/// numcodecs' `ZFPY()` members, in its `get_config()` order (which holds the
/// `compression_kwargs` its constructor derives from the mode).
pub const MEMBERS: &[&str] = &[
    "mode",
    "compression_kwargs",
    "tolerance",
    "rate",
    "precision",
];

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`:
/// the given members as given (as in numcodecs, their values are checked when
/// a chunk is encoded), numcodecs' defaults for the others, and
/// `compression_kwargs` as numcodecs derives it: the parameter of the mode
/// (none for a mode it cannot encode with; a given one is ignored, as there).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_config("zfpy", config, MEMBERS)?;
    let given = |key: &str, default: i64| config.get(key).cloned().unwrap_or(default.into());
    let mode = given("mode", MODE_FIXED_ACCURACY);
    let parameter = match mode.as_i64() {
        Some(MODE_FIXED_ACCURACY) => Some("tolerance"),
        Some(MODE_FIXED_RATE) => Some("rate"),
        Some(MODE_FIXED_PRECISION) => Some("precision"),
        _ => None,
    };
    let mut members = vec![("mode", mode)];
    if let Some(key) = parameter {
        let mut kwargs = Map::new();
        kwargs.insert(key.to_string(), given(key, REVERSIBLE));
        members.push(("compression_kwargs", Value::Object(kwargs)));
    }
    for key in ["tolerance", "rate", "precision"] {
        members.push((key, given(key, REVERSIBLE)));
    }
    Ok(members)
}

/// How chunks are compressed, as `zfpy.compress_numpy` picks it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Rate(f64),
    Precision(u32),
    Accuracy(f64),
    Reversible,
}

#[derive(Debug)]
pub struct ZfpyCodec {
    num: Num,
    scalar: ZfpScalarType,
    shape: Vec<usize>,
    /// The compression mode, or why numcodecs could not encode.
    mode: std::result::Result<Mode, Error>,
    nbytes: usize,
}

/// The mode numcodecs' `ZFPY(mode, tolerance, rate, precision)` compresses with.
fn mode_of(config: &Map<String, Value>) -> Result<Mode> {
    let number = |key: &str| -> Result<f64> {
        match config.get(key) {
            None => Ok(REVERSIBLE as f64),
            Some(v) => v.as_f64().ok_or_else(|| {
                Error::value(format!("codec '{NAME}': '{key}' must be a number, got {v}"))
            }),
        }
    };
    let mode = match config.get("mode") {
        None => MODE_FIXED_ACCURACY,
        Some(v) => v.as_i64().ok_or_else(|| {
            Error::value(format!(
                "codec '{NAME}': 'mode' must be an integer, got {v}"
            ))
        })?,
    };
    Ok(match mode {
        MODE_FIXED_ACCURACY => match number("tolerance")? {
            t if t >= 0.0 => Mode::Accuracy(t),
            _ => Mode::Reversible,
        },
        MODE_FIXED_RATE => match number("rate")? {
            r if r >= 0.0 => Mode::Rate(r),
            _ => Mode::Reversible,
        },
        MODE_FIXED_PRECISION => match config.get("precision") {
            None => Mode::Reversible,
            Some(v) => match v.as_i64() {
                Some(p) if p < 0 => Mode::Reversible,
                Some(p) => Mode::Precision(u32::try_from(p).unwrap_or(u32::MAX)),
                None => {
                    return Err(Error::value(format!(
                        "codec '{NAME}': 'precision' must be an integer, got {v}"
                    )))
                }
            },
        },
        other => {
            return Err(Error::value(format!(
                "codec '{NAME}': numcodecs cannot encode with zfpy mode {other} (only 2 \
                 fixed-rate, 3 fixed-precision and 4 fixed-accuracy)"
            )))
        }
    })
}

/// zfp's field dimensions (`nx` first) of a C-order shape of 1 to 4 dimensions.
fn zfp_dims(shape: &[usize]) -> Option<[usize; 4]> {
    if shape.is_empty() || shape.len() > 4 {
        return None;
    }
    let mut dims = [0; 4];
    for (d, &s) in dims.iter_mut().zip(shape.iter().rev()) {
        *d = s;
    }
    Some(dims)
}

/// Bits of a float block's header (sign and exponent): a fixed rate below it
/// is where zfp-rs and the C library zfpy wraps disagree (C's budget for the
/// block wraps around), so neither direction can match zfpy there.
fn block_header_bits(scalar: ZfpScalarType) -> u32 {
    match scalar {
        ZfpScalarType::F32 => 9,
        ZfpScalarType::F64 => 12,
        ZfpScalarType::I32 | ZfpScalarType::I64 => 0,
    }
}

fn below_header(scalar: ZfpScalarType, max_bits: u32) -> Error {
    Error::unsupported(format!(
        "{NAME}: a fixed rate of {max_bits} bits per block is below the {}-bit header of a \
         {scalar:?} block, where the zfp library zfpy wraps has undefined behaviour",
        block_header_bits(scalar)
    ))
}

fn zfp_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::corrupt(format!("{NAME}: {what}: {e}"))
}

/// `$body` with `$t` the Rust type of a zfp scalar type.
macro_rules! with_scalar {
    ($scalar:expr, $t:ident => $body:expr) => {
        match $scalar {
            ZfpScalarType::I32 => {
                type $t = i32;
                $body
            }
            ZfpScalarType::I64 => {
                type $t = i64;
                $body
            }
            ZfpScalarType::F32 => {
                type $t = f32;
                $body
            }
            ZfpScalarType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

impl ZfpyCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_config("zfpy", config, MEMBERS)?;
        let num = Num::from_dtype(spec.dtype);
        let scalar = match num {
            Some(Num::I32) => ZfpScalarType::I32,
            Some(Num::I64) => ZfpScalarType::I64,
            Some(Num::F32) => ZfpScalarType::F32,
            Some(Num::F64) => ZfpScalarType::F64,
            _ => {
                return Err(Error::unsupported(format!(
                    "codec '{NAME}' compresses int32, int64, float32 and float64 data, not a \
                     data type of {} byte(s)",
                    spec.dtype.size
                )))
            }
        };
        Ok(ZfpyCodec {
            num: num.unwrap_or(Num::F64),
            scalar,
            shape: spec.shape.clone(),
            mode: mode_of(config),
            nbytes: spec.nbytes(),
        })
    }

    /// The zfp stream parameters of `mode` for a field of `ndim` dimensions,
    /// as zfpy sets them (fixed rate without a data type: no minimum).
    fn stream_config(&self, ndim: usize) -> Result<ZfpConfig> {
        Ok(match self.mode.clone()? {
            Mode::Accuracy(t) => ZfpConfig::fixed_accuracy(t),
            Mode::Precision(p) => ZfpConfig::fixed_precision(p),
            Mode::Reversible => ZfpConfig::reversible(),
            Mode::Rate(rate) => {
                let values = (1u32 << (2 * ndim)) as f64;
                let bits = (values * rate + 0.5).floor();
                if !(1.0..=f64::from(ZFP_MAX_BITS)).contains(&bits) {
                    return Err(Error::value(format!(
                        "{NAME}: rate {rate} gives {bits} bits per block, outside 1..{ZFP_MAX_BITS}"
                    )));
                }
                if (bits as u32) < block_header_bits(self.scalar) {
                    return Err(below_header(self.scalar, bits as u32));
                }
                ZfpConfig::expert(bits as u32, bits as u32, ZFP_MAX_PREC, ZFP_MIN_EXP)
                    .map_err(|e| Error::value(format!("{NAME}: {e}")))?
            }
        })
    }
}

impl ArrayToBytesCodec for ZfpyCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.nbytes)?;
        let dims = zfp_dims(&self.shape).ok_or_else(|| {
            Error::value(format!(
                "{NAME}: zfp compresses arrays of 1 to 4 dimensions, not {}",
                self.shape.len()
            ))
        })?;
        let config = self.stream_config(self.shape.len())?;
        let failed = |e: &dyn std::fmt::Display| Error::value(format!("{NAME}: {e}"));
        let capacity = config
            .maximum_size(self.scalar, dims)
            .ok_or_else(|| failed(&"the chunk is too large"))?;
        let mut stream = ZfpBitStream::new(capacity).map_err(|e| failed(&e))?;
        let meta = ZfpFieldMetadata {
            scalar_type: self.scalar,
            dims,
        };
        stream
            .write_header(&config, &meta, ZfpHeaderMask::FULL)
            .map_err(|e| failed(&e))?;
        with_scalar!(self.scalar, T => {
            let data = as_typed::<T>(&decoded);
            let field = ZfpField::new(&data, dims).map_err(|e| failed(&e))?;
            stream.compress(&config, &field).map_err(|e| failed(&e))?;
        });
        stream.into_bytes().map_err(|e| failed(&e))
    }

    fn encoded_bound(&self) -> SizeBound {
        // zfp's largest stream for this chunk in the configured mode, header included.
        let worst = zfp_dims(&self.shape).and_then(|dims| {
            let config = self.stream_config(self.shape.len()).ok()?;
            config.maximum_size(self.scalar, dims)
        });
        SizeBound::Exact(self.nbytes).compressed(|_| with_slack(worst))
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        // The output is the chunk (never what the stream's header claims).
        bound.check(NAME, self.nbytes)?;
        // zfp writes whole 64-bit words: anything else was cut short.
        if !encoded.len().is_multiple_of(8) {
            return Err(Error::corrupt(format!(
                "{NAME}: {} bytes is not a whole number of 64-bit words",
                encoded.len()
            )));
        }
        let mut stream = ZfpBitStream::from_bytes(&encoded).map_err(|e| zfp_error("stream", e))?;
        let header = stream
            .read_header(ZfpHeaderMask::FULL)
            .map_err(|e| zfp_error("header", e))?;
        let (Some(meta), Some(config)) = (header.metadata, header.config) else {
            return Err(Error::corrupt(format!("{NAME}: incomplete header")));
        };
        if config.max_bits() < block_header_bits(meta.scalar_type) {
            return Err(below_header(meta.scalar_type, config.max_bits()));
        }
        if meta.scalar_type != self.scalar {
            return Err(Error::corrupt(format!(
                "{NAME}: the stream holds {:?} values, the chunk {}",
                meta.scalar_type,
                self.num.name()
            )));
        }
        let count = meta
            .dims
            .iter()
            .filter(|&&d| d > 0)
            .try_fold(1usize, |p, &d| p.checked_mul(d));
        if count != Some(self.nbytes / self.num.size()) {
            return Err(Error::corrupt(format!(
                "{NAME}: the stream holds an array of shape {:?} (x first), the chunk {:?}",
                meta.dims, self.shape
            )));
        }
        let mut out = crate::alloc::zeroed(self.nbytes)?;
        with_scalar!(self.scalar, T => with_typed_mut(&mut out, |dst: &mut [T]| -> Result<()> {
            let mut field = ZfpFieldMut::new(dst, meta.dims).map_err(|e| zfp_error("field", e))?;
            let end = stream
                .decompress(&config, &mut field)
                .map_err(|e| zfp_error("data", e))?;
            if end > encoded.len() {
                return Err(Error::corrupt(format!(
                    "{NAME}: the stream ends at byte {end}, past its {} bytes",
                    encoded.len()
                )));
            }
            Ok(())
        }))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{build_any, hex};
    use super::*;
    use crate::codec::tests::spec;
    use crate::codec::AnyCodec;
    use crate::error::ErrorKind;
    use serde_json::json;

    fn codec(config: Value, dtype: &str, shape: &[usize]) -> Result<Box<dyn ArrayToBytesCodec>> {
        match build_any("zfpy", config, &spec(shape, dtype))? {
            AnyCodec::ArrayToBytes(c) => Ok(c),
            _ => panic!("zfpy is an array->bytes codec"),
        }
    }

    fn le<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
        bytemuck::cast_slice(v).to_vec()
    }

    #[test]
    fn matches_zfpy() {
        // zfpy.compress_numpy(np.arange(10, dtype='f8')).hex() (reversible, zfpy 1.0.1)
        const ENC: &str = "7a66700593000000000000880570402540c23235c0c24219";
        let c = codec(json!({}), "float64", &[10]).unwrap();
        let x: Vec<f64> = (0..10).map(f64::from).collect();
        if cfg!(target_endian = "little") {
            assert_eq!(c.encode(le(&x)).unwrap(), hex(ENC));
            assert_eq!(c.decode(hex(ENC), SizeBound::Unbounded).unwrap(), le(&x));
        }
    }

    #[test]
    fn modes_round_trip_within_their_error() {
        let x: Vec<f32> = (0..6 * 7 * 5)
            .map(|i| (i as f32 * 0.05).sin() * 10.0)
            .collect();
        for (config, tolerance) in [
            (json!({"mode": 4, "tolerance": 0.01}), 0.01),
            (json!({"mode": 3, "precision": 20}), 0.01),
            (json!({"mode": 2, "rate": 16}), 0.1),
            (json!({"mode": 4}), 0.0),
            (
                json!({"mode": 2, "rate": -1, "compression_kwargs": null}),
                0.0,
            ),
        ] {
            let c = codec(config.clone(), "float32", &[6, 7, 5]).unwrap();
            let dec = c
                .decode(c.encode(le(&x)).unwrap(), SizeBound::Unbounded)
                .unwrap();
            let dec: &[f32] = bytemuck::cast_slice(&dec);
            let worst = x
                .iter()
                .zip(dec)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            assert!(worst <= tolerance, "{config}: error {worst}");
        }
        // Integers, 1 and 4 dimensions, reversible.
        for shape in [&[40][..], &[2, 5, 2, 2]] {
            let c = codec(json!({}), "int64", shape).unwrap();
            let x: Vec<i64> = (0..40).map(|i| i * i - 300).collect();
            assert_eq!(
                c.decode(c.encode(le(&x)).unwrap(), SizeBound::Unbounded)
                    .unwrap(),
                le(&x)
            );
        }
    }

    #[test]
    fn what_numcodecs_cannot_encode_is_an_error_on_encode() {
        let x = le(&[1.0f64; 4]);
        let ok = codec(json!({}), "float64", &[4])
            .unwrap()
            .encode(x.clone())
            .unwrap();
        for config in [
            json!({"mode": 5}),
            json!({"mode": 1}),
            json!({"mode": "4"}),
            json!({"mode": 3, "precision": 1.5}),
            json!({"mode": 2, "rate": 0.01}),
        ] {
            let c = codec(config.clone(), "float64", &[4]).unwrap();
            assert!(c.encode(x.clone()).is_err(), "{config}");
            assert_eq!(
                c.decode(ok.clone(), SizeBound::Unbounded).unwrap(),
                x,
                "{config}"
            );
        }
        assert!(codec(json!({}), "float64", &[1, 1, 1, 2, 2])
            .unwrap()
            .encode(le(&[0.0f64; 4]))
            .is_err());
        assert!(codec(json!({"tolerence": 1}), "float64", &[4]).is_err());
        assert_eq!(
            codec(json!({}), "uint16", &[4]).unwrap_err().kind,
            ErrorKind::Unsupported
        );
    }

    #[test]
    fn fixed_rates_below_a_float_block_header_are_refused() {
        // The first 24 bytes zfpy.compress_numpy(np.arange(4, dtype='f4'), rate=1) wrote
        // before it corrupted the heap: 4 bits per block, below the 9-bit header.
        const ENC: &str = "7a667005320000000000300003ed14000000000000000000";
        let c = codec(json!({"mode": 2, "rate": 1}), "float32", &[4]).unwrap();
        assert_eq!(
            c.encode(le(&[0f32; 4])).unwrap_err().kind,
            ErrorKind::Unsupported
        );
        assert_eq!(
            c.decode(hex(ENC), SizeBound::Unbounded).unwrap_err().kind,
            ErrorKind::Unsupported
        );
        let ints = codec(json!({"mode": 2, "rate": 1}), "int32", &[4]).unwrap();
        let x = le(&[1i32, 2, 3, 4]);
        assert_eq!(
            ints.decode(ints.encode(x.clone()).unwrap(), SizeBound::Unbounded)
                .unwrap()
                .len(),
            x.len()
        );
    }

    #[test]
    fn the_header_must_match_the_chunk() {
        let x: Vec<f64> = (0..12).map(f64::from).collect();
        let enc = codec(json!({}), "float64", &[3, 4])
            .unwrap()
            .encode(le(&x))
            .unwrap();
        // Same number of elements in another shape: read (zarr-python reshapes).
        assert_eq!(
            codec(json!({}), "float64", &[12])
                .unwrap()
                .decode(enc.clone(), SizeBound::Unbounded)
                .unwrap(),
            le(&x)
        );
        for (dtype, shape) in [
            ("float64", &[13][..]),
            ("int64", &[3, 4]),
            ("float32", &[3, 4]),
        ] {
            let err = codec(json!({}), dtype, shape)
                .unwrap()
                .decode(enc.clone(), SizeBound::Unbounded)
                .unwrap_err();
            assert_eq!(err.kind, ErrorKind::Corrupt, "{dtype} {shape:?}");
        }
        let c = codec(json!({}), "float64", &[3, 4]).unwrap();
        assert!(c.decode(enc.clone(), SizeBound::AtMost(95)).is_err());
        assert!(c.encoded_bound().limit() >= enc.len());
        for cut in [0, 3, 8, 12, 16, enc.len() - 8, enc.len() - 1] {
            assert!(
                c.decode(enc[..cut].to_vec(), SizeBound::Unbounded).is_err(),
                "cut {cut}"
            );
        }
        for i in 0..enc.len() {
            let mut g = enc.clone();
            g[i] ^= 0xa5;
            let _ = c.decode(g, SizeBound::Unbounded);
        }
    }
}
