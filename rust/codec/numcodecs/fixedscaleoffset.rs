//! `numcodecs.fixedscaleoffset`: `np.around((x - offset) * scale)` stored as
//! `astype`; decoded as `enc / scale + offset` cast to `dtype`.
//!
//! The arithmetic follows numpy 2 exactly: `offset` and `scale` are Python
//! scalars, so `int_array - python_int` stays in the integer type (wrapping,
//! and a scalar out of its range is an error), an integer array with a Python
//! float becomes float64, a float array keeps its precision (float16 computes
//! in float32 and rounds), and dividing integers gives float64.

use serde_json::{Map, Value};

use super::numeric::{Num, PyScalar, Scalar};
use super::{check_config, py_scalar_member, retyped_spec, TypePair};
use crate::codec::config::Members;
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct FixedScaleOffsetCodec {
    dtype: Num,
    astype: Num,
    /// Encoding: `x - offset` in `sub_type`, `* scale` in `mul_type`.
    sub_type: Num,
    offset_sub: Scalar,
    mul_type: Num,
    scale_mul: Scalar,
    /// Decoding: `enc / scale + offset` in `div_type` (a float type).
    div_type: Num,
    scale_div: Scalar,
    offset_div: Scalar,
    decoded: ChunkSpec,
    encoded: ChunkSpec,
}

/// numcodecs' `FixedScaleOffset(offset, scale, dtype, astype=None)` members,
/// in its `get_config()` order.
pub const MEMBERS: &[&str] = &["scale", "offset", "dtype", "astype"];

/// `offset` and `scale` (both required) and the types.
fn parse(config: &Map<String, Value>) -> Result<(PyScalar, PyScalar, TypePair)> {
    check_config("fixedscaleoffset", config, MEMBERS)?;
    let offset = py_scalar_member("fixedscaleoffset", config, "offset")?;
    let scale = py_scalar_member("fixedscaleoffset", config, "scale")?;
    Ok((offset, scale, TypePair::parse("fixedscaleoffset", config)?))
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`
/// (`scale` and `offset` as given: an integer or a float).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    let (_, _, types) = parse(config)?;
    let mut members = vec![
        ("scale", config["scale"].clone()),
        ("offset", config["offset"].clone()),
    ];
    members.extend(types.members("fixedscaleoffset")?);
    Ok(members)
}

impl FixedScaleOffsetCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        const NAME: &str = "numcodecs.fixedscaleoffset";
        let (offset, scale, types) = parse(config)?;
        let (dtype, astype) = types.nums("fixedscaleoffset", spec)?;
        for t in [dtype, astype] {
            if !(t.is_int() || t.is_float()) {
                return Err(Error::unsupported(format!(
                    "codec '{NAME}': only integer and float data types are supported, got {t:?}"
                )));
            }
        }
        let weak = |t: Num, p: PyScalar, what: &str| {
            t.weak(p).ok_or_else(|| {
                Error::metadata(format!(
                    "codec '{NAME}': {what} {p:?} is out of bounds for {t:?} (numpy raises \
                     OverflowError)"
                ))
            })
        };
        let sub_type = dtype.with_py(offset);
        let offset_sub = weak(sub_type, offset, "offset")?;
        let mul_type = sub_type.with_py(scale);
        let scale_mul = weak(mul_type, scale, "scale")?;
        let div_type = if astype.is_int() { Num::F64 } else { astype };
        let scale_div = weak(div_type, scale, "scale")?;
        let offset_div = weak(div_type, offset, "offset")?;
        let mut codec = FixedScaleOffsetCodec {
            dtype,
            astype,
            sub_type,
            offset_sub,
            mul_type,
            scale_mul,
            div_type,
            scale_div,
            offset_div,
            decoded: spec.clone(),
            encoded: spec.clone(),
        };
        let encoded = retyped_spec(spec, astype, |fill| {
            let mut out = vec![0u8; astype.size()];
            astype.store(codec.encode_one(dtype.load(fill)), &mut out);
            out
        });
        codec.encoded = encoded;
        Ok(codec)
    }

    fn encode_one(&self, x: Scalar) -> Scalar {
        let v = self.sub_type.sub(self.sub_type.cast(x), self.offset_sub);
        let v = self.mul_type.mul(self.mul_type.cast(v), self.scale_mul);
        self.astype.cast(self.mul_type.rint(v))
    }

    fn decode_one(&self, e: Scalar) -> Scalar {
        let t = self.div_type;
        let v = t.div(t.cast(e), self.scale_div);
        self.dtype.cast(t.add(v, self.offset_div))
    }
}

impl ArrayToArrayCodec for FixedScaleOffsetCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.decoded.nbytes())?;
        super::numeric::map_elements(&decoded, self.dtype, self.astype, |x| self.encode_one(x))
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.encoded.nbytes())?;
        bound.check("numcodecs.fixedscaleoffset", self.decoded.nbytes())?;
        super::numeric::map_elements(&encoded, self.astype, self.dtype, |e| self.decode_one(e))
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
        array_codec("fixedscaleoffset", config, dtype, n)
    }

    /// (config, chunk dtype, x.tobytes().hex(), c.encode(x).tobytes().hex(),
    ///  c.decode(c.encode(x)).tobytes().hex()) with c = FixedScaleOffset(**config)
    const REFERENCE: [(&str, &str, &str, &str, &str); 12] = [
        (
            r#"{"offset":1000,"scale":10,"dtype":"<f8","astype":"|u1"}"#,
            "float64",
            "0000000000408f408ee3388ee3408f401cc7711cc7418f40abaaaaaaaa428f40\
         398ee3388e438f40c7711cc771448f405555555555458f40e4388ee338468f40\
         721cc7711c478f400000000000488f40",
            "0001020304060708090a",
            "0000000000408f40cdcccccccc408f409a99999999418f406666666666428f40\
         3333333333438f40cdcccccccc448f409a99999999458f406666666666468f40\
         3333333333478f400000000000488f40",
        ),
        (
            r#"{"offset":1000,"scale":1000,"dtype":"<f8","astype":"<u2"}"#,
            "float64",
            "0000000000408f408ee3388ee3408f401cc7711cc7418f40abaaaaaaaa428f40\
         398ee3388e438f40c7711cc771448f405555555555458f40e4388ee338468f40\
         721cc7711c478f400000000000488f40",
            "00006f00de004d01bc012c029b020a037903e803",
            "0000000000408f40d9cef753e3408f40b29defa7c6418f408b6ce7fba9428f40\
         643bdf4f8d438f409cc420b072448f407593180456458f404e62105839468f40\
         273108ac1c478f400000000000488f40",
        ),
        (
            r#"{"offset":0,"scale":1,"dtype":"<f4","astype":"<i2"}"#,
            "float32",
            "0000803f00002040000060400000c84200007f43",
            "0100020004006400ff00",
            "0000803f00000040000080400000c84200007f43",
        ),
        (
            r#"{"offset":1,"scale":3,"dtype":"<i4","astype":"<i2"}"#,
            "int32",
            "0100000002000000030000006400000078000000ffffff7f",
            "00000300060029016501faff",
            "0100000002000000030000006400000078000000ffffffff",
        ),
        (
            r#"{"offset":0.5,"scale":3,"dtype":"<i4","astype":"<i2"}"#,
            "int32",
            "0100000002000000030000006400000078000000",
            "0200040008002a016601",
            "0100000001000000030000006300000077000000",
        ),
        (
            r#"{"offset":1,"scale":0.1,"dtype":"<i2"}"#,
            "int16",
            "010002000300640078000080",
            "0000000000000a000c00cd0c",
            "010001000100650079000380",
        ),
        (
            r#"{"offset":1,"scale":3,"dtype":"<f2","astype":"|i1"}"#,
            "float16",
            "003c004100434056f85b",
            "00040829fa",
            "003cab405543554b00bc",
        ),
        (
            r#"{"offset":1,"scale":10,"dtype":"<f4"}"#,
            "float32",
            "0000803f00002040000060400000c842cd8c7f43",
            "00000000000070410000c8410080774400201f45",
            "0000803f00002040000060400000c8429a997f43",
        ),
        (
            r#"{"offset":0.1,"scale":1000.0,"dtype":"<f4","astype":"<u2"}"#,
            "float32",
            "24b9fc3d0000003f0000204133338342",
            "17009001ac26dcff",
            "6de7fb3d0000003f0000204133338342",
        ),
        (
            r#"{"offset":-5,"scale":2,"dtype":"<i8","astype":"<f4"}"#,
            "int64",
            "0100000000000000f9ffffffffffffff0300000000010000",
            "00004041000080c000000054",
            "0100000000000000f9ffffffffffffff0000000000010000",
        ),
        (
            r#"{"offset":0,"scale":7,"dtype":"<u1"}"#,
            "uint8",
            "00012425ff",
            "0007fc03f9",
            "0001240023",
        ),
        (
            r#"{"offset":2.5,"scale":0.5,"dtype":"<f2","astype":"<f2"}"#,
            "float16",
            "003c004100434056f8db",
            "00bc00000000205208d8",
            "0038004100414856fcdb",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (config, dtype, x, enc, dec) in REFERENCE {
            let config: Value = serde_json::from_str(config).unwrap();
            let (x, enc, dec) = (hex(x), hex(enc), hex(dec));
            let n = x.len() / DataType::from_name(dtype).unwrap().size;
            let c = codec(config.clone(), dtype, n).unwrap();
            assert_eq!(c.encode(x).unwrap(), enc, "encode {config}");
            assert_eq!(c.decode(enc, Unbounded).unwrap(), dec, "decode {config}");
        }
    }

    #[test]
    fn validation() {
        // Python ints out of the integer dtype's range (numpy OverflowError).
        assert!(codec(
            json!({"offset": 1000, "scale": 3, "dtype": "|i1"}),
            "int8",
            2
        )
        .is_err());
        assert!(codec(
            json!({"offset": -1, "scale": 3, "dtype": "|u1"}),
            "uint8",
            2
        )
        .is_err());
        assert!(codec(
            json!({"offset": 1, "scale": 1000, "dtype": "|u1"}),
            "uint8",
            2
        )
        .is_err());
        // ... but fine once a float is involved.
        assert!(codec(
            json!({"offset": 1000.0, "scale": 3, "dtype": "|i1"}),
            "int8",
            2
        )
        .is_ok());
        assert!(codec(json!({"scale": 3, "dtype": "<f8"}), "float64", 2).is_err());
        assert!(codec(json!({"offset": "1", "scale": 3}), "float64", 2).is_err());
        assert!(codec(
            json!({"offset": 1, "scale": 3, "astype": "<c8"}),
            "float64",
            2
        )
        .is_err());
        assert!(codec(json!({"offset": 1, "scale": 3}), "bool", 2).is_err());
        let c = codec(
            json!({"offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}),
            "float64",
            2,
        )
        .unwrap();
        assert_eq!(
            c.encoded_spec().dtype,
            DataType::from_name("uint8").unwrap()
        );
        assert!(c.decode(vec![0; 3], Unbounded).is_err());
    }
}
