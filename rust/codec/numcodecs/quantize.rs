//! `numcodecs.quantize`: keeps `digits` decimal digits of float data by
//! rounding to a power-of-two scale: `np.around(scale * x) / scale` in
//! `dtype`, stored as `astype`. Decoding only casts back (the filter is lossy).

use serde_json::{Map, Value};

use super::numeric::{cast_elements, map_elements, Num, PyScalar, Scalar};
use super::{check_config, retyped_spec, TypePair};
use crate::codec::config::int_member;
use crate::codec::config::Members;
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

const NAME: &str = "numcodecs.quantize";

#[derive(Debug)]
pub struct QuantizeCodec {
    dtype: Num,
    astype: Num,
    /// The scale as an element of `dtype`.
    scale: Scalar,
    decoded: ChunkSpec,
    encoded: ChunkSpec,
}

/// numcodecs' scale, `2.0 ** bits`, computed with the same libm calls as
/// Python (`pow`, `log10`, `log2`); `None` where Python raises.
fn scale_for(digits: i64) -> Option<f64> {
    let finite = |f: f64| f.is_finite().then_some(f);
    let precision = finite(10f64.powf(-(digits as f64)))?;
    if precision <= 0.0 {
        return None; // math.log10(0.0): ValueError
    }
    let exp = precision.log10();
    let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
    let bits = finite(10f64.powf(-exp))?.log2().ceil();
    finite(2f64.powf(bits))
}

/// numcodecs' `Quantize(digits, dtype, astype=None)` members, in its order.
pub const MEMBERS: &[&str] = &["digits", "dtype", "astype"];

/// `digits` (required) and the types.
fn parse(config: &Map<String, Value>) -> Result<(i64, TypePair)> {
    check_config("quantize", config, MEMBERS)?;
    let digits = int_member(NAME, config, "digits", i64::MIN, i64::MAX)?
        .ok_or_else(|| Error::metadata(format!("codec '{NAME}': 'digits' is required")))?;
    Ok((digits, TypePair::parse("quantize", config)?))
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    let (digits, types) = parse(config)?;
    let mut members = vec![("digits", digits.into())];
    members.extend(types.members("quantize")?);
    Ok(members)
}

impl QuantizeCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        let (digits, types) = parse(config)?;
        let (dtype, astype) = types.nums("quantize", spec)?;
        if !dtype.is_float() || !astype.is_float() {
            return Err(Error::metadata(format!(
                "codec '{NAME}': only floating point data types are supported"
            )));
        }
        let scale = scale_for(digits).ok_or_else(|| {
            Error::metadata(format!(
                "codec '{NAME}': digits {digits} gives no finite scale (Python raises)"
            ))
        })?;
        let scale = dtype.cast(PyScalar::Float(scale).into());
        let mut codec = QuantizeCodec {
            dtype,
            astype,
            scale,
            decoded: spec.clone(),
            encoded: spec.clone(),
        };
        let encoded = retyped_spec(spec, astype, |fill| {
            let mut out = vec![0u8; astype.size()];
            astype.store(codec.quantize(dtype.load(fill)), &mut out);
            out
        });
        codec.encoded = encoded;
        Ok(codec)
    }

    fn quantize(&self, x: Scalar) -> Scalar {
        let t = self.dtype;
        let v = t.rint(t.mul(self.scale, x));
        self.astype.cast(t.div(v, self.scale))
    }
}

impl ArrayToArrayCodec for QuantizeCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.decoded.nbytes())?;
        map_elements(&decoded, self.dtype, self.astype, |x| self.quantize(x))
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.encoded.nbytes())?;
        bound.check("numcodecs.quantize", self.decoded.nbytes())?;
        cast_elements(&encoded, self.astype, self.dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{array_codec, hex};
    use crate::codec::ArrayToArrayCodec;
    use crate::codec::SizeBound::Unbounded;
    use crate::dtype::DataType;
    use crate::error::Result;
    use serde_json::{json, Value};

    fn codec(config: Value, dtype: &str, n: usize) -> Result<Box<dyn ArrayToArrayCodec>> {
        array_codec("quantize", config, dtype, n)
    }

    /// (config, chunk dtype, x.tobytes().hex(), Quantize(**config).encode(x).tobytes().hex())
    const REFERENCE: [(&str, &str, &str, &str); 9] = [
        (
            r#"{"digits":1,"dtype":"<f8"}"#,
            "float64",
            "00000000000000001cc7711cc771bc3f1cc7711cc771cc3f555555555555d53f\
         1cc7711cc771dc3f721cc7711cc7e13f555555555555e53f388ee3388ee3e83f\
         1cc7711cc771ec3f000000000000f03f",
            "0000000000000000000000000000c03f000000000000d03f000000000000d43f\
         000000000000dc3f000000000000e23f000000000000e63f000000000000e83f\
         000000000000ec3f000000000000f03f",
        ),
        (
            r#"{"digits":2,"dtype":"<f8"}"#,
            "float64",
            "00000000000000001cc7711cc771bc3f1cc7711cc771cc3f555555555555d53f\
         1cc7711cc771dc3f721cc7711cc7e13f555555555555e53f388ee3388ee3e83f\
         1cc7711cc771ec3f000000000000f03f",
            "0000000000000000000000000000bc3f000000000000cc3f000000000080d53f\
         000000000080dc3f0000000000c0e13f000000000040e53f000000000000e93f\
         000000000080ec3f000000000000f03f",
        ),
        (
            r#"{"digits":3,"dtype":"<f4"}"#,
            "float32",
            "6de7fb3debbe334104c3b24149d3054210453242d7b65e424f94854233cd9b42\
         1606b242fa3ec842",
            "0000fc3d00c0334100c4b24100d305420045324200b75e428094854200cd9b42\
         0006b242003fc842",
        ),
        (
            r#"{"digits":2,"dtype":"<f8","astype":"<f4"}"#,
            "float64",
            "0000000000000000388ee3388ee3e83f388ee3388ee3f83faaaaaaaaaaaa0240\
         388ee3388ee30840c8711cc7711c0f40aaaaaaaaaaaa1240711cc7711cc71540\
         388ee3388ee318400000000000001c40",
            "000000000000483f0000c73f008015400000474000007940004095400040ae40\
         0000c7400000e040",
        ),
        (
            r#"{"digits":1,"dtype":"<f2"}"#,
            "float16",
            "662e48354b568dc5",
            "003000354b5690c5",
        ),
        (
            r#"{"digits":0,"dtype":"<f8"}"#,
            "float64",
            "00000000000004400000000000000c40000000000000e0bf9c7500883ce4377e",
            "0000000000000040000000000000104000000000000000809c7500883ce4377e",
        ),
        (
            r#"{"digits":-1,"dtype":"<f8"}"#,
            "float64",
            "9a9999999999284000000000000031409a99999999d95ec0",
            "000000000000304000000000000030400000000000005ec0",
        ),
        (
            r#"{"digits":10,"dtype":"<f8"}"#,
            "float64",
            "182d4454fb2109406957148b0abf0540956479e17ffda5bd",
            "00004454fb2109400000148b0abf05400000000000000080",
        ),
        (
            r#"{"digits":6,"dtype":"<f4","astype":"<f2"}"#,
            "float32",
            "db0f494040b888476f12833a",
            "4842007c1914",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (config, dtype, x, enc) in REFERENCE {
            let config: Value = serde_json::from_str(config).unwrap();
            let (x, enc) = (hex(x), hex(enc));
            let n = x.len() / DataType::from_name(dtype).unwrap().size;
            let c = codec(config.clone(), dtype, n).unwrap();
            assert_eq!(c.encode(x).unwrap(), enc, "encode {config}");
            let dec = c.decode(enc.clone(), Unbounded).unwrap();
            assert_eq!(dec.len(), n * DataType::from_name(dtype).unwrap().size);
        }
    }

    #[test]
    fn scales() {
        // The scale numcodecs computes for each digits value, and where Python
        // raises (OverflowError at 308, math domain error at 324).
        for (digits, scale) in [
            (1, 16.0),
            (2, 128.0),
            (3, 1024.0),
            (0, 1.0),
            (-1, 0.125),
            (-5, 1.52587890625e-05),
            (10, 17179869184.0),
            (15, 1125899906842624.0),
            (307, 1.1235582092889474e+307),
        ] {
            assert_eq!(super::scale_for(digits), Some(scale), "{digits}");
        }
        for digits in [308, 323, 324, 400, -400] {
            assert_eq!(super::scale_for(digits), None, "{digits}");
        }
    }

    #[test]
    fn validation() {
        assert!(codec(json!({"digits": 2}), "int32", 2).is_err());
        assert!(codec(json!({"digits": 2, "astype": "<i4"}), "float32", 2).is_err());
        assert!(codec(json!({"dtype": "<f4"}), "float32", 2).is_err());
        assert!(codec(json!({"digits": 400}), "float64", 2).is_err());
        let c = codec(json!({"digits": 2, "astype": "<f2"}), "float64", 2).unwrap();
        assert_eq!(
            c.encoded_spec().dtype,
            DataType::from_name("float16").unwrap()
        );
        assert!(c.decode(vec![0; 3], Unbounded).is_err());
    }
}
