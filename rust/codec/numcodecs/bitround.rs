//! `numcodecs.bitround`: rounds float mantissas to `keepbits` bits (round
//! half to even on the bit pattern, Klöwer et al. 2021), which makes the data
//! more compressible. Decoding is the identity. The rounding is the registry
//! `bitround` codec's ([`crate::codec::array_to_array::bitround`]), wrapping on overflow as
//! numpy's unsigned arithmetic does.

use serde_json::{Map, Value};

use super::check_config;
use crate::codec::array_to_array::bitround::{mantissa_bits, BitroundCodec};
use crate::codec::config::Members;
use crate::codec::ChunkSpec;
use crate::dtype::DataKind;
use crate::error::{Error, Result};

const NAME: &str = "numcodecs.bitround";

/// numcodecs' `BitRound(keepbits)` members, in its `get_config()` order.
pub const MEMBERS: &[&str] = &["keepbits"];

/// `keepbits`, which numcodecs requires.
fn keepbits(config: &Map<String, Value>) -> Result<u32> {
    check_config("bitround", config, MEMBERS)?;
    crate::codec::array_to_array::bitround::keepbits(NAME, config)
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    Ok(vec![("keepbits", keepbits(config)?.into())])
}

/// The codec: the registry `bitround` codec's rounding, wrapping on overflow.
pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<BitroundCodec> {
    let keepbits = keepbits(config)?;
    let format = match (spec.dtype.kind, spec.dtype.size) {
        (DataKind::Float, 2) => "float16",
        (DataKind::Float, 4) => "float32",
        (DataKind::Float, 8) => "float64",
        _ => "",
    };
    let bits = mantissa_bits(format).ok_or_else(|| {
        Error::metadata(format!(
            "codec '{NAME}': only float arrays (16-64 bit) can be bit-rounded"
        ))
    })?;
    if keepbits > bits {
        return Err(Error::metadata(format!(
            "codec '{NAME}': keepbits {keepbits} is too large for a float with {bits} \
             mantissa bits"
        )));
    }
    Ok(BitroundCodec::wrapping(NAME, keepbits, bits, spec))
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
        array_codec("bitround", config, dtype, n)
    }

    /// (keepbits, chunk dtype, x.tobytes().hex(), BitRound(keepbits).encode(x).tobytes().hex())
    const REFERENCE: [(i64, &str, &str, &str); 11] = [
        (
            0,
            "float16",
            "003e48421994ff7b007c007e000066c1d3640200",
            "004000440094007c007c0080000000c000640000",
        ),
        (
            3,
            "float16",
            "003e48421994ff7b007c007e000066c1d3640200",
            "003e80420094007c007c007e000080c100650000",
        ),
        (
            9,
            "float16",
            "003e48421994ff7b007c007e000066c1d3640200",
            "003e48421894007c007c007e000066c1d4640200",
        ),
        (
            10,
            "float16",
            "003e48421994ff7b007c007e000066c1d3640200",
            "003e48421994ff7b007c007e000066c1d3640200",
        ),
        (
            0,
            "float32",
            "0000c03fdb0f49406f1283ba00e07f470000807f0000c07f00000000cdcc2cc0\
         2b529a4495bfd633",
            "0000004000008040000080ba000080470000807f0000008000000000000000c0\
         0000804400000034",
        ),
        (
            5,
            "float32",
            "0000c03fdb0f49406f1283ba00e07f470000807f0000c07f00000000cdcc2cc0\
         2b529a4495bfd633",
            "0000c03f00004840000084ba000080470000807f0000c07f0000000000002cc0\
         00009c440000d833",
        ),
        (
            22,
            "float32",
            "0000c03fdb0f49406f1283ba00e07f470000807f0000c07f00000000cdcc2cc0\
         2b529a4495bfd633",
            "0000c03fdc0f4940701283ba00e07f470000807f0000c07f00000000cccc2cc0\
         2c529a4494bfd633",
        ),
        (
            0,
            "float64",
            "000000000000f83f182d4454fb210940fca9f1d24d6250bf0000000000fcef40\
         000000000000f07f000000000000f87f00000000000000009a999999999905c0\
         adfa5c6d454a934048afbc9af2d77a3e",
            "0000000000000040000000000000104000000000000050bf000000000000f040\
         000000000000f07f0000000000000080000000000000000000000000000000c0\
         0000000000009040000000000000803e",
        ),
        (
            10,
            "float64",
            "000000000000f83f182d4454fb210940fca9f1d24d6250bf0000000000fcef40\
         000000000000f07f000000000000f87f00000000000000009a999999999905c0\
         adfa5c6d454a934048afbc9af2d77a3e",
            "000000000000f83f000000000020094000000000006450bf0000000000fcef40\
         000000000000f07f000000000000f87f000000000000000000000000009805c0\
         00000000004c93400000000000d87a3e",
        ),
        (
            51,
            "float64",
            "000000000000f83f182d4454fb210940fca9f1d24d6250bf0000000000fcef40\
         000000000000f07f000000000000f87f00000000000000009a999999999905c0\
         adfa5c6d454a934048afbc9af2d77a3e",
            "000000000000f83f182d4454fb210940fca9f1d24d6250bf0000000000fcef40\
         000000000000f07f000000000000f87f00000000000000009a999999999905c0\
         acfa5c6d454a934048afbc9af2d77a3e",
        ),
        (
            52,
            "float64",
            "000000000000f83f182d4454fb210940fca9f1d24d6250bf0000000000fcef40\
         000000000000f07f000000000000f87f00000000000000009a999999999905c0\
         adfa5c6d454a934048afbc9af2d77a3e",
            "000000000000f83f182d4454fb210940fca9f1d24d6250bf0000000000fcef40\
         000000000000f07f000000000000f87f00000000000000009a999999999905c0\
         adfa5c6d454a934048afbc9af2d77a3e",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (keepbits, dtype, x, enc) in REFERENCE {
            let (x, enc) = (hex(x), hex(enc));
            let n = x.len() / DataType::from_name(dtype).unwrap().size;
            let c = codec(json!({ "keepbits": keepbits }), dtype, n).unwrap();
            assert_eq!(c.encode(x).unwrap(), enc, "{keepbits} {dtype}");
            assert_eq!(c.decode(enc.clone(), Unbounded).unwrap(), enc);
        }
    }

    #[test]
    fn validation() {
        assert!(codec(json!({"keepbits": -1}), "float32", 2).is_err());
        assert!(codec(json!({"keepbits": 24}), "float32", 2).is_err());
        assert!(codec(json!({"keepbits": 11}), "float16", 2).is_err());
        assert!(codec(json!({"keepbits": 3}), "int32", 2).is_err());
        assert!(codec(json!({}), "float32", 2).is_err());
        let c = codec(json!({"keepbits": 23}), "float32", 2).unwrap();
        assert_eq!(c.encode(vec![1; 8]).unwrap(), vec![1; 8]);
        assert!(c.encode(vec![1; 7]).is_err());
    }
}
