//! The `scale_offset` codec of the zarr-extensions registry, as zarr-python 3.4
//! implements it: encoding is `(x - offset) * scale`, decoding `x / scale +
//! offset`, both in the arithmetic of the chunk's data type.
//!
//! - Integers: exact arithmetic; a result outside the data type's range is an
//!   error, and so is a decoded value that `scale` does not divide exactly
//!   (true division must give an integer).
//! - Floats: IEEE arithmetic in the data type (float16 rounds after each
//!   operation, as numpy computes it); overflow gives infinities, `x / 0` and
//!   `0 / 0` give infinities and NaN, never an error.
//!
//! The encoded chunk has the same type; its fill value is the encoded fill.
//! The core configuration holds `offset` and `scale` as core scalars (see
//! [`crate::codec::config::core_scalar`]).

use half::f16;
use serde_json::{Map, Value};

use crate::codec::config::{check_members, core_scalar, Members};
use crate::codec::numcodecs::numeric::{Num, Scalar};
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

const NAME: &str = "scale_offset";

/// The members of the stored configuration, in zarr-python's order.
const MEMBERS: &[&str] = &["offset", "scale"];

/// The stored configuration: `offset` (default 0) and `scale` (default 1), as
/// given (numbers or strings: values of the array's data type, which the
/// metadata layer parses into the core configuration's scalars).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_members(NAME, config, MEMBERS)?;
    let member = |key: &str, default: i64| config.get(key).cloned().unwrap_or(default.into());
    Ok(vec![
        ("offset", member("offset", 0)),
        ("scale", member("scale", 1)),
    ])
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Params {
    Int { offset: i128, scale: i128 },
    F16 { offset: f16, scale: f16 },
    F32 { offset: f32, scale: f32 },
    F64 { offset: f64, scale: f64 },
}

#[derive(Debug)]
pub struct ScaleOffsetCodec {
    num: Num,
    params: Params,
    encoded: ChunkSpec,
}

fn arr<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

/// `f` over each element of `data` seen as `$t` (native byte order).
macro_rules! map_floats {
    ($data:expr, $t:ty, $f:expr) => {{
        const N: usize = std::mem::size_of::<$t>();
        let f = $f;
        for elem in $data.chunks_exact_mut(N) {
            let x = <$t>::from_ne_bytes(arr(elem));
            let y: $t = f(x);
            elem.copy_from_slice(&y.to_ne_bytes());
        }
    }};
}

impl ScaleOffsetCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_members(NAME, config, MEMBERS)?;
        let num = Num::from_dtype(spec.dtype)
            .filter(|n| n.is_int() || n.is_float())
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "codec '{NAME}': only integer and float data types (int8-64, uint8-64, \
                     float16-64) can be scaled, not a data type of {} byte(s)",
                    spec.dtype.size
                ))
            })?;
        let member = |key: &str| -> Result<Vec<u8>> {
            let value = config
                .get(key)
                .ok_or_else(|| Error::metadata(format!("codec '{NAME}': '{key}' is required")))?;
            core_scalar(NAME, key, value, num)
        };
        let (offset, scale) = (member("offset")?, member("scale")?);
        let params = match num {
            Num::F16 => Params::F16 {
                offset: f16::from_ne_bytes(arr(&offset)),
                scale: f16::from_ne_bytes(arr(&scale)),
            },
            Num::F32 => Params::F32 {
                offset: f32::from_ne_bytes(arr(&offset)),
                scale: f32::from_ne_bytes(arr(&scale)),
            },
            Num::F64 => Params::F64 {
                offset: f64::from_ne_bytes(arr(&offset)),
                scale: f64::from_ne_bytes(arr(&scale)),
            },
            _ => Params::Int {
                offset: num.load(&offset).int(),
                scale: num.load(&scale).int(),
            },
        };
        let zero_scale = match params {
            Params::Int { scale, .. } => scale == 0,
            Params::F16 { scale, .. } => scale.to_f32() == 0.0,
            Params::F32 { scale, .. } => scale == 0.0,
            Params::F64 { scale, .. } => scale == 0.0,
        };
        if zero_scale {
            return Err(Error::metadata(format!(
                "codec '{NAME}': scale must be non-zero"
            )));
        }
        let mut codec = ScaleOffsetCodec {
            num,
            params,
            encoded: spec.clone(),
        };
        if spec.fill.len() == spec.dtype.size {
            let mut fill = spec.fill.clone();
            codec
                .encode_in_place(&mut fill)
                .map_err(|e| e.context("the fill value"))?;
            codec.encoded.fill = fill;
        }
        Ok(codec)
    }

    fn out_of_range(&self) -> Error {
        let (lo, hi) = self.num.int_range();
        Error::value(format!(
            "{NAME} produced a value outside the range of dtype {} [{lo}, {hi}]",
            self.num.name()
        ))
    }

    /// `(x - offset) * scale` for each element of `data`, in place.
    fn encode_in_place(&self, data: &mut [u8]) -> Result<()> {
        match self.params {
            Params::Int { offset, scale } => self.map_ints(data, |x| {
                (x - offset)
                    .checked_mul(scale)
                    .ok_or_else(|| self.out_of_range())
            })?,
            Params::F16 { offset, scale } => {
                let (o, s) = (offset.to_f32(), scale.to_f32());
                map_floats!(data, f16, |x: f16| h(h(x.to_f32() - o).to_f32() * s))
            }
            Params::F32 { offset, scale } => map_floats!(data, f32, |x| (x - offset) * scale),
            Params::F64 { offset, scale } => map_floats!(data, f64, |x| (x - offset) * scale),
        }
        Ok(())
    }

    /// Apply `f` to each integer element in place; an error when `f` fails or
    /// its result is outside the data type's range.
    fn map_ints(
        &self,
        data: &mut [u8],
        f: impl Fn(i128) -> std::result::Result<i128, Error>,
    ) -> Result<()> {
        let (lo, hi) = self.num.int_range();
        let size = self.num.size();
        for elem in data.chunks_exact_mut(size) {
            let y = f(self.num.load(elem).int())?;
            if !(lo..=hi).contains(&y) {
                return Err(self.out_of_range());
            }
            self.num.store(Scalar::Int(y), elem);
        }
        Ok(())
    }
}

/// One float16 operation as numpy computes it: in float32, rounded to float16
/// (exact: float32 has more than twice float16's precision).
fn h(x: f32) -> f16 {
    f16::from_f32(x)
}

impl ArrayToArrayCodec for ScaleOffsetCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, mut data: Vec<u8>) -> Result<Vec<u8>> {
        check_len(data.len(), self.encoded.nbytes())?;
        self.encode_in_place(&mut data)?;
        Ok(data)
    }

    fn decode(&self, mut data: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(data.len(), self.encoded.nbytes())?;
        bound.check(NAME, data.len())?;
        match self.params {
            Params::Int { offset, scale } => {
                // As zarr-python: every element must divide exactly before any is decoded.
                let size = self.num.size();
                let inexact = data
                    .chunks_exact(size)
                    .any(|e| self.num.load(e).int() % scale != 0);
                if inexact {
                    return Err(Error::value(format!(
                        "{NAME} decode produced a non-zero remainder when dividing by \
                         scale={scale}; the result is not exactly representable in dtype {}",
                        self.num.name()
                    )));
                }
                self.map_ints(&mut data, |x| Ok(x / scale + offset))?
            }
            Params::F16 { offset, scale } => {
                let (o, s) = (offset.to_f32(), scale.to_f32());
                map_floats!(data, f16, |x: f16| h(h(x.to_f32() / s).to_f32() + o))
            }
            Params::F32 { offset, scale } => map_floats!(data, f32, |x| x / scale + offset),
            Params::F64 { offset, scale } => map_floats!(data, f64, |x| x / scale + offset),
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::tests::spec;
    use crate::codec::CodecChain;
    use crate::error::ErrorKind;
    use serde_json::json;

    fn codec(dtype: &str, offset: Value, scale: Value, fill: &[u8]) -> Result<ScaleOffsetCodec> {
        let mut s = spec(&[4], dtype);
        s.fill = fill.to_vec();
        let cfg = json!({"offset": offset, "scale": scale});
        ScaleOffsetCodec::from_config(cfg.as_object().unwrap(), &s)
    }

    fn i16s(v: &[i16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn integers_encode_exactly_and_refuse_overflow() {
        let c = codec("int16", json!(1000), json!(3), &i16s(&[1000])).unwrap();
        assert_eq!(c.encoded_spec().fill, i16s(&[0]));
        let enc = c.encode(i16s(&[1000, 1001, 999, 11922])).unwrap();
        assert_eq!(enc, i16s(&[0, 3, -3, 32766]));
        assert_eq!(
            c.decode(enc, SizeBound::Unbounded).unwrap(),
            i16s(&[1000, 1001, 999, 11922])
        );
        let err = c.encode(i16s(&[1000, 1000, 1000, 11923])).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Value);
        assert!(err.message.contains("[-32768, 32767]"), "{}", err.message);
        // 4 is not a multiple of 3: true division would not give an integer.
        let err = c
            .decode(i16s(&[0, 3, 4, 6]), SizeBound::Unbounded)
            .unwrap_err();
        assert!(
            err.message.contains("non-zero remainder"),
            "{}",
            err.message
        );
        // A chunk of the wrong size is an error, not a panic.
        for bad in [vec![], vec![0; 7], vec![0; 9]] {
            assert!(c.decode(bad.clone(), SizeBound::Unbounded).is_err());
            assert!(c.encode(bad).is_err());
        }
        // Decoding can overflow too.
        let c = codec("int8", json!(100), json!(1), &[100]).unwrap();
        assert_eq!(
            c.decode(vec![27, 0, 0, 0], SizeBound::Unbounded).unwrap()[0] as i8,
            127
        );
        assert!(c.decode(vec![28, 0, 0, 0], SizeBound::Unbounded).is_err());
    }

    #[test]
    fn wide_integers_never_wrap() {
        let u64s = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
        let c = codec("uint64", json!(1), json!(2), &u64s(&[1])).unwrap();
        assert!(c.encode(u64s(&[u64::MAX, 1, 1, 1])).is_err());
        assert_eq!(
            c.encode(u64s(&[1 << 63, 1, 2, 3])).unwrap(),
            u64s(&[(1 << 64) - 2, 0, 2, 4].map(|x: u128| x as u64))
        );
        let i64s = |v: &[i64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
        let c = codec("int64", json!(-1), json!(i64::MAX), &i64s(&[-1])).unwrap();
        assert!(c.encode(i64s(&[i64::MAX, 0, 0, 0])).is_err());
        assert!(c.encode(i64s(&[1, -1, -1, -1])).is_err());
        assert_eq!(
            c.encode(i64s(&[0, -1, -1, -1])).unwrap(),
            i64s(&[i64::MAX, 0, 0, 0])
        );
    }

    #[test]
    fn floats_use_their_own_arithmetic() {
        let f32s = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_ne_bytes()).collect() };
        // offset 5, scale 0.1 (as float32: 0x3dcccccd)
        let c = codec(
            "float32",
            json!("0x40a00000"),
            json!("0x3dcccccd"),
            &f32s(&[f32::NAN]),
        )
        .unwrap();
        assert!(f32::from_ne_bytes(arr(&c.encoded_spec().fill)).is_nan());
        let x = [5.0f32, 15.0, f32::INFINITY, -1e38];
        let enc = c.encode(f32s(&x)).unwrap();
        let want: Vec<f32> = x.iter().map(|v| (v - 5.0) * 0.1f32).collect();
        assert_eq!(enc, f32s(&want));
        let dec = c.decode(enc, SizeBound::Unbounded).unwrap();
        let back: Vec<f32> = want.iter().map(|v| v / 0.1f32 + 5.0).collect();
        assert_eq!(dec, f32s(&back));
        // float16 rounds after each operation: (1000 - 0.3) * 3 in float16
        let f16s = |v: &[f32]| -> Vec<u8> {
            v.iter()
                .flat_map(|x| f16::from_f32(*x).to_ne_bytes())
                .collect()
        };
        let c = codec("float16", json!("0x34cd"), json!("0x4200"), &f16s(&[0.0])).unwrap();
        let enc = c.encode(f16s(&[1000.0, 0.0, 1.0, 65504.0])).unwrap();
        let step = f16::from_f32(1000.0 - f16::from_bits(0x34cd).to_f32());
        let first = f16::from_f32(step.to_f32() * 3.0);
        assert_eq!(&enc[..2], &first.to_ne_bytes());
        assert_eq!(
            &enc[6..],
            &f16::INFINITY.to_ne_bytes(),
            "overflow is infinity"
        );
    }

    #[test]
    fn configuration_is_checked() {
        assert!(
            codec("int8", json!(0), json!(0), &[0]).is_err(),
            "zero scale"
        );
        assert!(codec("float64", json!(0), json!("0x8000000000000000"), &[0; 8]).is_err());
        assert!(
            codec("int8", json!(200), json!(1), &[0]).is_err(),
            "out of range"
        );
        assert!(codec("int8", json!(1.5), json!(1), &[0]).is_err());
        assert!(codec("float32", json!(1.5), json!("0x3f800000"), &[0; 4]).is_err());
        assert!(codec("float32", json!("0x3f80"), json!("0x3f800000"), &[0; 4]).is_err());
        assert_eq!(
            codec("bool", json!(0), json!(1), &[0]).unwrap_err().kind,
            ErrorKind::Unsupported
        );
        // The fill value must encode.
        let err = codec("uint8", json!(10), json!(1), &[5]).unwrap_err();
        assert!(err.message.contains("fill value"), "{}", err.message);
        let mut s = spec(&[4], "int8");
        s.fill = vec![0];
        let cfg = json!({"offset": 0, "scale": 1, "extra": 1});
        assert!(ScaleOffsetCodec::from_config(cfg.as_object().unwrap(), &s).is_err());
    }

    #[test]
    fn in_a_chain() {
        let chain = CodecChain::from_json(
            &json!([{"name": "scale_offset", "configuration": {"offset": 10, "scale": 2}},
                    {"name": "bytes", "configuration": {"endian": "big"}}]),
            spec(&[3], "int32"),
        )
        .unwrap();
        let x: Vec<u8> = [10i32, 11, 12]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let enc = chain.encode(x.clone()).unwrap();
        assert_eq!(enc, [0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4]);
        assert_eq!(chain.decode(enc).unwrap(), x);
    }
}
