//! `numcodecs.astype`: stores the chunk cast to `encode_dtype`
//! (`ndarray.astype` semantics) and casts back to `decode_dtype` on reading.

use serde_json::{Map, Value};

use super::numeric::{cast_elements, cast_one, Num};
use super::{
    check_config, check_decoded_size, dtype_member, dtype_num, required, retyped_spec, spec_num,
};
use crate::codec::config::Members;
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::Result;

#[derive(Debug)]
pub struct AsTypeCodec {
    encode_dtype: Num,
    decode_dtype: Num,
    decoded: ChunkSpec,
    encoded: ChunkSpec,
}

/// numcodecs' `AsType(encode_dtype, decode_dtype)` members, in its order.
pub const MEMBERS: &[&str] = &["encode_dtype", "decode_dtype"];

/// `encode_dtype` and `decode_dtype`, as given.
fn parse(config: &Map<String, Value>) -> Result<(Option<String>, Option<String>)> {
    check_config("astype", config, MEMBERS)?;
    Ok((
        dtype_member("astype", config, "encode_dtype")?,
        dtype_member("astype", config, "decode_dtype")?,
    ))
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`:
/// both types are required there.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    let (encode, decode) = parse(config)?;
    Ok(vec![
        (
            "encode_dtype",
            required("astype", "encode_dtype", &encode)?.into(),
        ),
        (
            "decode_dtype",
            required("astype", "decode_dtype", &decode)?.into(),
        ),
    ])
}

impl AsTypeCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        let (encode, decode) = parse(config)?;
        let encode_dtype = dtype_num("astype", "encode_dtype", encode.as_deref(), None)?;
        let decode_dtype = dtype_num("astype", "decode_dtype", decode.as_deref(), spec_num(spec))?;
        check_decoded_size("astype", "decode_dtype", decode_dtype, spec)?;
        let encoded = retyped_spec(spec, encode_dtype, |fill| {
            cast_one(fill, decode_dtype, encode_dtype)
        });
        Ok(AsTypeCodec {
            encode_dtype,
            decode_dtype,
            decoded: spec.clone(),
            encoded,
        })
    }
}

impl ArrayToArrayCodec for AsTypeCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.decoded.nbytes())?;
        cast_elements(&decoded, self.decode_dtype, self.encode_dtype)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.encoded.nbytes())?;
        bound.check("numcodecs.astype", self.decoded.nbytes())?;
        cast_elements(&encoded, self.encode_dtype, self.decode_dtype)
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
        array_codec("astype", config, dtype, n)
    }

    /// (config, chunk dtype, x.tobytes().hex(), AsType(**config).encode(x).tobytes().hex(),
    ///  AsType(**config).decode(that).tobytes().hex())
    const REFERENCE: [(&str, &str, &str, &str, &str); 14] = [
        (
            r#"{"encode_dtype":"<f4","decode_dtype":"<f8"}"#,
            "float64",
            "9a9999999999b93fa55cc3f129633d4800000000000004c0000000f0ffffef47",
            "cdcccc3d0000807f000020c00000807f",
            "000000a09999b93f000000000000f07f00000000000004c0000000000000f07f",
        ),
        (
            r#"{"encode_dtype":"|u1","decode_dtype":"<i2"}"#,
            "int16",
            "2c01ffffff000700",
            "2cffff07",
            "2c00ff00ff000700",
        ),
        (
            r#"{"encode_dtype":"<i4","decode_dtype":"<f8"}"#,
            "float64",
            "666666666666fe3f666666666666febf000000205fa002420000000000000440\
         000000000000f87f000000000000f0ff",
            "01000000ffffffff00000080020000000000008000000080",
            "000000000000f03f000000000000f0bf000000000000e0c10000000000000040\
         000000000000e0c1000000000000e0c1",
        ),
        (
            r#"{"encode_dtype":"<f2","decode_dtype":"<f4"}"#,
            "float32",
            "00f07f4777cc2b32cdcccc3d000040c000ef7f47",
            "007c0000662e00c2ff7b",
            "0000807f0000000000c0cc3d000040c000e07f47",
        ),
        (
            r#"{"encode_dtype":"|b1","decode_dtype":"<f8"}"#,
            "float64",
            "00000000000000000000000000000080000000000000e03f000000000000f87f",
            "00000101",
            "00000000000000000000000000000000000000000000f03f000000000000f03f",
        ),
        (
            r#"{"encode_dtype":"<u8","decode_dtype":"<f4"}"#,
            "float32",
            "000080bfd9cc795f5ed0324f0000c07f0000807f",
            "ffffffffffffffff0000000000d9ccf9005ed0b2000000000000000000000080\
         0000000000000000",
            "0000805fd9cc795f5ed0324f0000005f00000000",
        ),
        (
            r#"{"encode_dtype":"<c8","decode_dtype":"<f8"}"#,
            "float64",
            "000000000000f83f00000000000000c09a9999999999b93f",
            "0000c03f00000000000000c000000000cdcccc3d00000000",
            "000000000000f83f00000000000000c0000000a09999b93f",
        ),
        (
            r#"{"encode_dtype":"<f8","decode_dtype":"<u8"}"#,
            "uint64",
            "ffffffffffffffff01000000000020000300000000000000",
            "000000000000f04300000000000040430000000000000840",
            "000000000000000000000000000020000300000000000000",
        ),
        (
            r#"{"encode_dtype":"<f4","decode_dtype":"<i8"}"#,
            "int64",
            "0100000100000000ffffff7fffffffff0000000000010040",
            "0000804b000000cf0200805e",
            "000000010000000000000080ffffffff0000000000010040",
        ),
        (
            r#"{"encode_dtype":"|i1","decode_dtype":"<f4"}"#,
            "float32",
            "00409643004096c3f9021550666666bf",
            "2cd40000",
            "00003042000030c20000000000000000",
        ),
        (
            r#"{"encode_dtype":"<u4","decode_dtype":"<f8"}"#,
            "float64",
            "000000205fa00242000000205fa002c2000000000000f87f000000000000f07f\
         000000c00b5ae6419a99999999990dc0",
            "00000000000000800000008000000000005ed0b2fdffffff",
            "0000000000000000000000000000e041000000000000e0410000000000000000\
         000000c00b5ae6410000a0ffffffef41",
        ),
        (
            r#"{"encode_dtype":"<f8","decode_dtype":"<c16"}"#,
            "complex128",
            "000000000000f83f00000000000000400000000000000080000000000000f0bf",
            "000000000000f83f0000000000000080",
            "000000000000f83f000000000000000000000000000000800000000000000000",
        ),
        (
            r#"{"encode_dtype":"<i2","decode_dtype":"|b1"}"#,
            "bool",
            "010001",
            "010000000100",
            "010001",
        ),
        (
            r#"{"encode_dtype":"<f2","decode_dtype":"<i4"}"#,
            "int32",
            "0108000070110100fdffffffefff0000",
            "0068007c00c2ff7b",
            "0008000000000080fdffffffe0ff0000",
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
    fn encoded_spec_and_validation() {
        let c = codec(
            json!({"encode_dtype": "<f4", "decode_dtype": "<f8"}),
            "float64",
            3,
        )
        .unwrap();
        assert_eq!(
            c.encoded_spec().dtype,
            DataType::from_name("float32").unwrap()
        );
        assert_eq!(c.encoded_spec().fill, vec![0; 4]);
        assert!(c.decode(vec![0; 11], Unbounded).is_err());
        assert!(codec(json!({"decode_dtype": "<f8"}), "float64", 3).is_err());
        assert!(codec(
            json!({"encode_dtype": "<f4", "decode_dtype": "<f4"}),
            "float64",
            3
        )
        .is_err());
        // decode_dtype defaults to the chunk's.
        let c = codec(json!({"encode_dtype": "|u1"}), "int16", 2).unwrap();
        assert_eq!(
            c.encode([300i16.to_ne_bytes(), (-1i16).to_ne_bytes()].concat())
                .unwrap(),
            vec![44, 255]
        );
    }
}
