//! The `cast_value` codec of the zarr-extensions registry: converts each
//! element's value to another numeric data type on encode, and back on decode,
//! with a rounding mode, an out-of-range mode and explicit scalar maps.
//!
//! The per-element rules are those of `zarr-cast-value`, the crate behind
//! zarr-python 3.4's `cast-value-rs` backend, so zarrox casts exactly as
//! zarr-python does: scalar map first, NaN and infinities refused by integer
//! targets, rounding, then the range check (error, `clamp`, or `wrap` for
//! integer targets). The data types are zarr-python's: int8-64, uint8-64 and
//! float16-64, as source and as target.
//!
//! Core configuration: `data_type` (the target's name), `rounding`,
//! `out_of_range` (absent or null: out-of-range values are errors) and
//! `scalar_map` `{"encode": [[source, target], ...], "decode": [[target,
//! source], ...]}` with core scalars (see [`crate::codec::config::core_scalar`]),
//! already de-duplicated as zarr-python does.

use half::f16;
use serde_json::{Map, Value};
use zarr_cast_value::{
    CastError, CastFloat, CastInt, CastInto, FloatToFloatConfig, FloatToIntConfig,
    IntToFloatConfig, IntToIntConfig, MapEntry, OutOfRangeMode, RoundingMode,
};

use crate::codec::config::{check_members, core_scalar, Member, Members};
use crate::codec::numcodecs::numeric::Num;
use crate::codec::typed::{as_typed, with_typed_mut};
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::dtype::DataType;
use crate::error::{Error, Result};

const NAME: &str = "cast_value";

/// The rounding modes `rounding` takes.
pub const ROUNDING: [&str; 5] = [
    "nearest-even",
    "towards-zero",
    "towards-positive",
    "towards-negative",
    "nearest-away",
];

/// zarr-python's `CastValue(rounding="nearest-even")`.
pub const DEFAULT_ROUNDING: &str = "nearest-even";

/// What `out_of_range` takes; absent (or null): out-of-range values are an error.
pub const OUT_OF_RANGE: [&str; 2] = ["clamp", "wrap"];

/// The members whose values the codec alone rules: `rounding`, `out_of_range`
/// (`data_type` and `scalar_map` are checked against the data types).
pub const MEMBERS: &[Member] = &[
    Member::choice("rounding", &ROUNDING),
    Member::choice("out_of_range", &OUT_OF_RANGE),
];

/// The complete configuration of a `cast_value` codec: members checked,
/// `rounding` defaulted, `out_of_range` and `scalar_map` null when absent.
/// `data_type` and `scalar_map` are passed on as given: what they hold is
/// checked against the data types when the codec is built.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_members(
        NAME,
        config,
        &["data_type", "rounding", "out_of_range", "scalar_map"],
    )?;
    let data_type = config
        .get("data_type")
        .ok_or_else(|| Error::metadata(format!("codec '{NAME}': 'data_type' is required")))?;
    let rounding = MEMBERS[0]
        .get_choice(NAME, config)?
        .unwrap_or(DEFAULT_ROUNDING);
    let out_of_range = MEMBERS[1].get_choice(NAME, config)?;
    Ok(vec![
        ("data_type", data_type.clone()),
        ("rounding", rounding.into()),
        ("out_of_range", out_of_range.into()),
        (
            "scalar_map",
            config.get("scalar_map").cloned().unwrap_or(Value::Null),
        ),
    ])
}

/// Scalar map entries as native-order bytes of their source and target types.
type RawMap = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Debug)]
pub struct CastValueCodec {
    decoded: Num,
    encoded_num: Num,
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
    encode_map: RawMap,
    decode_map: RawMap,
    encoded: ChunkSpec,
    decoded_len: usize,
}

/// The numeric type of a data type, if `cast_value` takes it.
fn castable(dtype: DataType) -> Option<Num> {
    Num::from_dtype(dtype).filter(|n| n.is_int() || n.is_float())
}

impl CastValueCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_members(
            NAME,
            config,
            &["data_type", "rounding", "out_of_range", "scalar_map"],
        )?;
        let decoded = castable(spec.dtype).ok_or_else(|| {
            Error::unsupported(format!(
                "codec '{NAME}': only integer and float data types (int8-64, uint8-64, \
                 float16-64) can be cast, not a data type of {} byte(s)",
                spec.dtype.size
            ))
        })?;
        let target = config
            .get("data_type")
            .ok_or_else(|| Error::metadata(format!("codec '{NAME}': 'data_type' is required")))?;
        let encoded_num = target
            .as_str()
            .and_then(|n| DataType::from_name(n).ok())
            .and_then(castable)
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "codec '{NAME}': data_type {target} is not one of int8-64, uint8-64, \
                     float16-64"
                ))
            })?;
        let rounding = MEMBERS[0]
            .get_choice(NAME, config)?
            .unwrap_or(DEFAULT_ROUNDING)
            .parse::<RoundingMode>()
            .map_err(Error::metadata)?;
        let out_of_range = MEMBERS[1]
            .get_choice(NAME, config)?
            .map(|m| m.parse::<OutOfRangeMode>().map_err(Error::metadata))
            .transpose()?;
        if out_of_range == Some(OutOfRangeMode::Wrap) && !encoded_num.is_int() {
            return Err(Error::metadata(format!(
                "codec '{NAME}': out_of_range \"wrap\" is only valid for integer data types, \
                 not {}",
                encoded_num.name()
            )));
        }
        let (encode_map, decode_map) = match config.get("scalar_map") {
            None | Some(Value::Null) => (Vec::new(), Vec::new()),
            Some(Value::Object(m)) => {
                check_members(&format!("{NAME}' scalar_map '"), m, &["encode", "decode"])?;
                (
                    scalar_map(m.get("encode"), "encode", decoded, encoded_num)?,
                    scalar_map(m.get("decode"), "decode", encoded_num, decoded)?,
                )
            }
            Some(v) => {
                return Err(Error::metadata(format!(
                    "codec '{NAME}': scalar_map must be an object, got {v}"
                )))
            }
        };
        let mut codec = CastValueCodec {
            decoded,
            encoded_num,
            rounding,
            out_of_range,
            encode_map,
            decode_map,
            encoded: ChunkSpec {
                shape: spec.shape.clone(),
                dtype: encoded_num.dtype(),
                fill: vec![0; encoded_num.size()],
            },
            decoded_len: spec.nbytes(),
        };
        if spec.fill.len() == decoded.size() {
            codec.encoded.fill = codec
                .cast(&spec.fill, decoded, encoded_num, &codec.encode_map)
                .map_err(|e| e.context("the fill value"))?;
        }
        Ok(codec)
    }

    /// Cast `src` (elements of `from`) to elements of `to`.
    fn cast(&self, src: &[u8], from: Num, to: Num, map: &RawMap) -> Result<Vec<u8>> {
        let n = src.len() / from.size();
        let mut out = crate::alloc::zeroed(n * to.size())?;
        let opts = Opts {
            rounding: self.rounding,
            out_of_range: self.out_of_range,
            map,
        };
        cast_dispatch(src, &mut out, from, to, &opts).map_err(|e| {
            Error::value(format!("{NAME} from {} to {}: {e}", from.name(), to.name()))
        })?;
        Ok(out)
    }
}

/// One direction of a scalar map: `[[from, to], ...]` as native-order bytes.
fn scalar_map(entries: Option<&Value>, direction: &str, from: Num, to: Num) -> Result<RawMap> {
    let what = format!("scalar_map.{direction}");
    match entries {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|pair| match pair.as_array().map(Vec::as_slice) {
                Some([k, v]) => Ok((
                    core_scalar(NAME, &format!("{what} key"), k, from)?,
                    core_scalar(NAME, &format!("{what} value"), v, to)?,
                )),
                _ => Err(Error::metadata(format!(
                    "codec '{NAME}': {what} entries must be [key, value] pairs, got {pair}"
                ))),
            })
            .collect(),
        Some(v) => Err(Error::metadata(format!(
            "codec '{NAME}': {what} must be a list of [key, value] pairs, got {v}"
        ))),
    }
}

/// What a cast needs besides its types.
struct Opts<'a> {
    rounding: RoundingMode,
    out_of_range: Option<OutOfRangeMode>,
    map: &'a RawMap,
}

fn entries<S: bytemuck::Pod, D: bytemuck::Pod>(map: &RawMap) -> Vec<MapEntry<S, D>> {
    map.iter()
        .map(|(s, t)| MapEntry {
            src: bytemuck::pod_read_unaligned(s),
            tgt: bytemuck::pod_read_unaligned(t),
        })
        .collect()
}

fn float_to_int<S, D>(src: &[u8], out: &mut [u8], o: &Opts) -> std::result::Result<(), CastError>
where
    S: CastFloat + CastInto<D> + bytemuck::Pod + 'static,
    D: CastInt + bytemuck::Pod + 'static,
{
    let config = FloatToIntConfig {
        map_entries: entries(o.map),
        rounding: o.rounding,
        out_of_range: o.out_of_range,
    };
    let src = as_typed::<S>(src);
    with_typed_mut(out, |dst: &mut [D]| {
        zarr_cast_value::convert_slice_float_to_int(&src, dst, &config)
    })
}

fn int_to_int<S, D>(src: &[u8], out: &mut [u8], o: &Opts) -> std::result::Result<(), CastError>
where
    S: CastInt + CastInto<D> + bytemuck::Pod,
    D: CastInt + bytemuck::Pod,
{
    let config = IntToIntConfig {
        map_entries: entries(o.map),
        out_of_range: o.out_of_range,
    };
    let src = as_typed::<S>(src);
    with_typed_mut(out, |dst: &mut [D]| {
        zarr_cast_value::convert_slice_int_to_int(&src, dst, &config)
    })
}

fn float_to_float<S, D>(src: &[u8], out: &mut [u8], o: &Opts) -> std::result::Result<(), CastError>
where
    S: CastFloat + CastInto<D> + bytemuck::Pod + 'static,
    D: CastFloat + bytemuck::Pod + 'static,
{
    let config = FloatToFloatConfig {
        map_entries: entries(o.map),
        rounding: o.rounding,
        out_of_range: o.out_of_range,
    };
    let src = as_typed::<S>(src);
    with_typed_mut(out, |dst: &mut [D]| {
        zarr_cast_value::convert_slice_float_to_float(&src, dst, &config)
    })
}

fn int_to_float<S, D>(src: &[u8], out: &mut [u8], o: &Opts) -> std::result::Result<(), CastError>
where
    S: CastInt + CastInto<D> + bytemuck::Pod,
    D: CastFloat + bytemuck::Pod,
{
    let config = IntToFloatConfig {
        map_entries: entries(o.map),
        rounding: o.rounding,
        out_of_range: o.out_of_range,
    };
    let src = as_typed::<S>(src);
    with_typed_mut(out, |dst: &mut [D]| {
        zarr_cast_value::convert_slice_int_to_float(&src, dst, &config)
    })
}

/// `$f::<$s, target>` for the target type `$to` among `[$($n => $t),*]`.
macro_rules! to_target {
    ($f:ident, $s:ty, $to:expr, $args:expr, [$($n:ident => $t:ty),*]) => {
        match $to {
            $(Num::$n => $f::<$s, $t>($args.0, $args.1, $args.2),)*
            _ => unreachable!("cast_value types are checked when the codec is built"),
        }
    };
}

/// Cast `src` (elements of `from`) into `out` (elements of `to`).
fn cast_dispatch(
    src: &[u8],
    out: &mut [u8],
    from: Num,
    to: Num,
    opts: &Opts,
) -> std::result::Result<(), CastError> {
    let a = (src, out, opts);
    macro_rules! ints {
        ($f:ident, $s:ty) => {
            to_target!($f, $s, to, a, [I8 => i8, I16 => i16, I32 => i32, I64 => i64,
                                       U8 => u8, U16 => u16, U32 => u32, U64 => u64])
        };
    }
    macro_rules! floats {
        ($f:ident, $s:ty) => {
            to_target!($f, $s, to, a, [F16 => f16, F32 => f32, F64 => f64])
        };
    }
    match (from, to.is_float()) {
        (Num::I8, false) => ints!(int_to_int, i8),
        (Num::I16, false) => ints!(int_to_int, i16),
        (Num::I32, false) => ints!(int_to_int, i32),
        (Num::I64, false) => ints!(int_to_int, i64),
        (Num::U8, false) => ints!(int_to_int, u8),
        (Num::U16, false) => ints!(int_to_int, u16),
        (Num::U32, false) => ints!(int_to_int, u32),
        (Num::U64, false) => ints!(int_to_int, u64),
        (Num::I8, true) => floats!(int_to_float, i8),
        (Num::I16, true) => floats!(int_to_float, i16),
        (Num::I32, true) => floats!(int_to_float, i32),
        (Num::I64, true) => floats!(int_to_float, i64),
        (Num::U8, true) => floats!(int_to_float, u8),
        (Num::U16, true) => floats!(int_to_float, u16),
        (Num::U32, true) => floats!(int_to_float, u32),
        (Num::U64, true) => floats!(int_to_float, u64),
        (Num::F16, false) => ints!(float_to_int, f16),
        (Num::F32, false) => ints!(float_to_int, f32),
        (Num::F64, false) => ints!(float_to_int, f64),
        (Num::F16, true) => floats!(float_to_float, f16),
        (Num::F32, true) => floats!(float_to_float, f32),
        (Num::F64, true) => floats!(float_to_float, f64),
        _ => unreachable!("cast_value types are checked when the codec is built"),
    }
}

impl ArrayToArrayCodec for CastValueCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.decoded_len)?;
        self.cast(&decoded, self.decoded, self.encoded_num, &self.encode_map)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.encoded.nbytes())?;
        bound.check(NAME, self.decoded_len)?;
        self.cast(&encoded, self.encoded_num, self.decoded, &self.decode_map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::tests::spec;
    use crate::codec::CodecChain;
    use crate::error::ErrorKind;
    use serde_json::json;

    fn codec(dtype: &str, fill: &[u8], config: Value) -> Result<CastValueCodec> {
        let mut s = spec(&[4], dtype);
        s.fill = fill.to_vec();
        CastValueCodec::from_config(config.as_object().unwrap(), &s)
    }

    fn f64s(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    const NAN64: &str = "0x7ff8000000000000";

    #[test]
    fn float_to_uint8_with_nan_mapped_both_ways() {
        let c = codec(
            "float64",
            &f64s(&[f64::NAN]),
            json!({"data_type": "uint8",
                   "scalar_map": {"encode": [[NAN64, 0]], "decode": [[0, NAN64]]}}),
        )
        .unwrap();
        assert_eq!(c.encoded_spec().fill, vec![0]);
        assert_eq!(
            c.encoded_spec().dtype,
            DataType::from_name("uint8").unwrap()
        );
        let enc = c.encode(f64s(&[f64::NAN, 1.5, 2.5, 254.6])).unwrap();
        assert_eq!(enc, vec![0, 2, 2, 255], "nearest-even rounding");
        let dec = c.decode(enc, SizeBound::Unbounded).unwrap();
        let back: Vec<f64> = dec
            .chunks_exact(8)
            .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
            .collect();
        assert!(back[0].is_nan());
        assert_eq!(&back[1..], &[2.0, 2.0, 255.0]);
        // 256 is out of range and NaN has no integer without the map.
        let err = c.encode(f64s(&[0.0, 0.0, 0.0, 255.6])).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Value);
        assert!(err.message.contains("out of range"), "{}", err.message);
        // The decoded chunk must fit the bound; chunks of the wrong size are errors.
        assert!(c.decode(vec![0; 4], SizeBound::Exact(31)).is_err());
        for n in [0, 3, 5, 31, 33] {
            assert!(
                c.decode(vec![0; n], SizeBound::Unbounded).is_err(),
                "decode {n}"
            );
            assert!(c.encode(vec![0; n]).is_err(), "encode {n}");
        }
        let plain = codec("float64", &f64s(&[0.0]), json!({"data_type": "uint8"})).unwrap();
        assert!(plain.encode(f64s(&[f64::NAN, 0.0, 0.0, 0.0])).is_err());
    }

    #[test]
    fn rounding_and_out_of_range_modes() {
        let x = f64s(&[-2.5, -0.5, 0.5, 300.7]);
        for (rounding, oor, want) in [
            ("towards-zero", "clamp", [-2i8, 0, 0, 127]),
            ("towards-positive", "clamp", [-2, 0, 1, 127]),
            ("towards-negative", "clamp", [-3, -1, 0, 127]),
            ("nearest-away", "clamp", [-3, -1, 1, 127]),
            ("nearest-even", "clamp", [-2, 0, 0, 127]),
            ("towards-zero", "wrap", [-2, 0, 0, 44]),
        ] {
            let c = codec(
                "float64",
                &f64s(&[0.0]),
                json!({"data_type": "int8", "rounding": rounding, "out_of_range": oor}),
            )
            .unwrap();
            let got: Vec<i8> = c
                .encode(x.clone())
                .unwrap()
                .iter()
                .map(|&b| b as i8)
                .collect();
            assert_eq!(got, want, "{rounding} {oor}");
        }
        // Integer to integer: wrap is modulo 2^8, clamp saturates.
        let u16s: Vec<u8> = [0u16, 255, 256, 65535]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let wrap = codec(
            "uint16",
            &[0, 0],
            json!({"data_type": "uint8", "out_of_range": "wrap"}),
        )
        .unwrap();
        assert_eq!(wrap.encode(u16s.clone()).unwrap(), vec![0, 255, 0, 255]);
        let clamp = codec(
            "uint16",
            &[0, 0],
            json!({"data_type": "int8", "out_of_range": "clamp"}),
        )
        .unwrap();
        assert_eq!(clamp.encode(u16s).unwrap(), vec![0, 127, 127, 127]);
    }

    #[test]
    fn float16_and_wide_integers() {
        let c = codec(
            "int64",
            &[0; 8],
            json!({"data_type": "float16", "out_of_range": "clamp"}),
        )
        .unwrap();
        let x: Vec<u8> = [1i64, 2049, 70000, -70000]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let got: Vec<f32> = c
            .encode(x)
            .unwrap()
            .chunks_exact(2)
            .map(|b| f16::from_ne_bytes([b[0], b[1]]).to_f32())
            .collect();
        assert_eq!(got, vec![1.0, 2048.0, f32::INFINITY, f32::NEG_INFINITY]);
        let strict = codec("int64", &[0; 8], json!({"data_type": "float16"})).unwrap();
        let x: Vec<u8> = [70000i64, 0, 0, 0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert!(strict.encode(x).is_err());
    }

    #[test]
    fn configuration_is_checked() {
        let bad = |cfg: Value| codec("float32", &[0; 4], cfg).unwrap_err();
        assert_eq!(bad(json!({})).kind, ErrorKind::Metadata);
        assert_eq!(
            bad(json!({"data_type": "bool"})).kind,
            ErrorKind::Unsupported
        );
        assert_eq!(
            bad(json!({"data_type": "complex64"})).kind,
            ErrorKind::Unsupported
        );
        assert!(bad(json!({"data_type": "float16", "out_of_range": "wrap"}))
            .message
            .contains("only valid for integer"));
        assert!(bad(json!({"data_type": "int8", "rounding": "up"}))
            .message
            .contains("rounding"));
        assert!(
            bad(json!({"data_type": "int8", "scalar_map": {"encode": [[0, 0]]}}))
                .message
                .contains("encode key")
        );
        assert!(
            bad(json!({"data_type": "int8", "scalar_map": {"both": []}}))
                .message
                .contains("both")
        );
        assert!(bad(json!({"data_type": "int8", "x": 1}))
            .message
            .contains("'x'"));
        // The fill value must cast.
        let err = codec(
            "float32",
            &f32::NAN.to_ne_bytes(),
            json!({"data_type": "int8"}),
        )
        .unwrap_err();
        assert!(err.message.contains("fill value"), "{}", err.message);
        assert_eq!(
            codec("bool", &[0], json!({"data_type": "int8"}))
                .unwrap_err()
                .kind,
            ErrorKind::Unsupported
        );
    }

    #[test]
    fn in_a_chain_with_scale_offset() {
        let chain = CodecChain::from_json(
            &json!([
                {"name": "scale_offset", "configuration": {"offset": "0xc024000000000000",
                                                           "scale": "0x3fb999999999999a"}},
                {"name": "cast_value", "configuration": {"data_type": "uint8",
                    "scalar_map": {"encode": [[NAN64, 0]], "decode": [[0, NAN64]]}}},
                {"name": "bytes"}
            ]),
            ChunkSpec {
                fill: f64s(&[f64::NAN]),
                ..spec(&[4], "float64")
            },
        )
        .unwrap();
        let enc = chain.encode(f64s(&[f64::NAN, 0.0, 100.0, 2540.0])).unwrap();
        assert_eq!(enc, vec![0, 1, 11, 255]);
        let dec = chain.decode(enc).unwrap();
        assert!(f64::from_ne_bytes(dec[..8].try_into().unwrap()).is_nan());
        assert_eq!(&dec[8..], &f64s(&[0.0, 100.0, 2540.0])[..]);
    }
}
