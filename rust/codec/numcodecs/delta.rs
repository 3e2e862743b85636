//! `numcodecs.delta`: the first element, then the differences of adjacent
//! elements (computed in `dtype`, integers wrapping), stored as `astype`.
//! Decoding is numpy's `np.cumsum(enc, out=dec)`: the running sum is kept in
//! the promotion of `astype` and `dtype` and cast to `dtype` at each step.

use serde_json::{Map, Value};

use super::numeric::{Num, Scalar};
use super::{check_config, retyped_spec, TypePair};
use crate::codec::config::Members;
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct DeltaCodec {
    dtype: Num,
    astype: Num,
    decoded: ChunkSpec,
    encoded: ChunkSpec,
}

/// numcodecs' `Delta(dtype, astype=None)` members, in its order.
pub const MEMBERS: &[&str] = &["dtype", "astype"];

fn parse(config: &Map<String, Value>) -> Result<TypePair> {
    check_config("delta", config, MEMBERS)?;
    TypePair::parse("delta", config)
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    parse(config)?.members("delta")
}

impl DeltaCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        let (dtype, astype) = parse(config)?.nums("delta", spec)?;
        if dtype == Num::Bool || astype == Num::Bool {
            // numpy's diff of booleans is XOR and its cumsum is not: numcodecs
            // cannot decode what it encodes.
            return Err(Error::unsupported(
                "codec 'numcodecs.delta': bool data types are not supported",
            ));
        }
        let encoded = retyped_spec(spec, astype, |fill| {
            super::numeric::cast_one(fill, dtype, astype)
        });
        Ok(DeltaCodec {
            dtype,
            astype,
            decoded: spec.clone(),
            encoded,
        })
    }
}

impl ArrayToArrayCodec for DeltaCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.decoded.nbytes())?;
        let (d, a) = (self.dtype, self.astype);
        let mut out = crate::alloc::zeroed(self.encoded.nbytes())?;
        let mut prev: Option<Scalar> = None;
        for (src, dst) in decoded
            .chunks_exact(d.size())
            .zip(out.chunks_exact_mut(a.size()))
        {
            let v = d.load(src);
            let diff = match prev {
                None => v,
                Some(p) => d.sub(v, p),
            };
            a.store(a.cast(diff), dst);
            prev = Some(v);
        }
        Ok(out)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.encoded.nbytes())?;
        bound.check("numcodecs.delta", self.decoded.nbytes())?;
        let (d, a) = (self.dtype, self.astype);
        let acc = a.promote(d);
        let mut out = crate::alloc::zeroed(self.decoded.nbytes())?;
        let mut sum: Option<Scalar> = None;
        for (src, dst) in encoded
            .chunks_exact(a.size())
            .zip(out.chunks_exact_mut(d.size()))
        {
            let v = acc.cast(a.load(src));
            let s = match sum {
                None => v,
                Some(s) => acc.add(s, v),
            };
            d.store(d.cast(s), dst);
            sum = Some(s);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{array_codec, hex};
    use crate::codec::ArrayToArrayCodec;
    use crate::codec::SizeBound::Unbounded;
    use crate::error::Result;
    use serde_json::{json, Value};

    fn codec(config: Value, dtype: &str, n: usize) -> Result<Box<dyn ArrayToArrayCodec>> {
        array_codec("delta", config, dtype, n)
    }

    /// (config, chunk dtype, x.tobytes().hex(), Delta(**config).encode(x).tobytes().hex()),
    /// all native (little-endian) byte order.
    const REFERENCE: [(&str, &str, &str, &str); 10] = [
        (
            r#"{"dtype":"<i4"}"#,
            "int32",
            "64000000660000005a000000fbffffffffffff7f000000800000000007000000",
            "6400000002000000f4ffffffa1ffffff04000080010000000000008007000000",
        ),
        (
            r#"{"dtype":"<u2","astype":"|u1"}"#,
            "uint16",
            "640064010200ffff",
            "64009efd",
        ),
        (
            r#"{"dtype":"<f8"}"#,
            "float64",
            "9a9999999999b93f000000000000d03f0000000000000cc09c7500883ce4377e\
         9c7500883ce437fe0000000000000040",
            "9a9999999999b93f333333333333c33f0000000000000ec09c7500883ce4377e\
         9c7500883ce447fe9c7500883ce4377e",
        ),
        (
            r#"{"dtype":"<f4","astype":"<i2"}"#,
            "float32",
            "9a99d93f9a993940666666c06666c842",
            "01000100faff6700",
        ),
        (
            r#"{"dtype":"<i4","astype":"<f4"}"#,
            "int32",
            "010000000200000001000001fbffffff",
            "0000803f0000803fffff7f4b030080cb",
        ),
        (
            r#"{"dtype":"<f2"}"#,
            "float16",
            "003e0068662e40c70068",
            "003efe6700e85ac70468",
        ),
        (
            r#"{"dtype":"<i8","astype":"<i2"}"#,
            "int64",
            "010000000000000005000000000000007011010000000000fdffffffffffffff\
         0000000000010000",
            "010004006b118dee0300",
        ),
        (
            r#"{"dtype":"<u8"}"#,
            "uint64",
            "ffffffffffffffff000000000000000000000000000000800500000000000000",
            "ffffffffffffffff010000000000000000000000000000800500000000000080",
        ),
        (
            r#"{"dtype":"<c16"}"#,
            "complex128",
            "000000000000f03f00000000000000400000000000000cc0000000000000d03f\
         000000205fa00242000000000000f0bf",
            "000000000000f03f000000000000004000000000000012c0000000000000fcbf\
         00001c205fa00242000000000000f4bf",
        ),
        (
            r#"{"dtype":"|i1","astype":"<f8"}"#,
            "int8",
            "807f0005",
            "00000000000060c0000000000000f0bf0000000000c05fc00000000000001440",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (config, dtype, x, enc) in REFERENCE {
            let config: Value = serde_json::from_str(config).unwrap();
            let (x, enc) = (hex(x), hex(enc));
            let n = x.len() / crate::dtype::DataType::from_name(dtype).unwrap().size;
            let c = codec(config.clone(), dtype, n).unwrap();
            assert_eq!(c.encode(x.clone()).unwrap(), enc, "encode {config}");
            assert_eq!(c.encoded_spec().nbytes(), enc.len());
        }
    }

    /// (config, chunk dtype, enc, Delta(**config).decode(enc).tobytes().hex())
    const DECODE_REFERENCE: [(&str, &str, &str, &str); 20] = [
        (
            r#"{"dtype":"<i4"}"#,
            "int32",
            "6400000002000000f4ffffffa1ffffff04000080010000000000008007000000",
            "64000000660000005a000000fbffffffffffff7f000000800000000007000000",
        ),
        (
            r#"{"dtype":"<u2","astype":"|u1"}"#,
            "uint16",
            "64009efd",
            "640064000201ff01",
        ),
        (
            r#"{"dtype":"<f8"}"#,
            "float64",
            "9a9999999999b93f333333333333c33f0000000000000ec09c7500883ce4377e\
         9c7500883ce447fe9c7500883ce4377e",
            "9a9999999999b93f000000000000d03f0000000000000cc09c7500883ce4377e\
         9c7500883ce437fe0000000000000000",
        ),
        (
            r#"{"dtype":"<f4","astype":"<i2"}"#,
            "float32",
            "01000100faff6700",
            "0000803f00000040000080c00000c642",
        ),
        (
            r#"{"dtype":"<i4","astype":"<f4"}"#,
            "int32",
            "0000803f0000803fffff7f4b030080cb",
            "010000000200000001000001fbffffff",
        ),
        (
            r#"{"dtype":"<f2"}"#,
            "float16",
            "003efe6700e85ac70468",
            "003e006800005ac70068",
        ),
        (
            r#"{"dtype":"<i8","astype":"<i2"}"#,
            "int64",
            "010004006b118dee0300",
            "010000000000000005000000000000007011000000000000fdffffffffffffff\
         0000000000000000",
        ),
        (
            r#"{"dtype":"<u8"}"#,
            "uint64",
            "ffffffffffffffff010000000000000000000000000000800500000000000080",
            "ffffffffffffffff000000000000000000000000000000800500000000000000",
        ),
        (
            r#"{"dtype":"<c16"}"#,
            "complex128",
            "000000000000f03f000000000000004000000000000012c0000000000000fcbf\
         00001c205fa00242000000000000f4bf",
            "000000000000f03f00000000000000400000000000000cc0000000000000d03f\
         000000205fa00242000000000000f0bf",
        ),
        (
            r#"{"dtype":"|i1","astype":"<f8"}"#,
            "int8",
            "00000000000060c0000000000000f0bf0000000000c05fc00000000000001440",
            "807f0005",
        ),
        (
            r#"{"dtype":"<f4","astype":"<i4"}"#,
            "float32",
            "00000001010000000100000001000000",
            "0000804b0000804b0100804b0200804b",
        ),
        (
            r#"{"dtype":"<f2","astype":"<i2"}"#,
            "float16",
            "0008010001000100",
            "0068006801680268",
        ),
        (
            r#"{"dtype":"<f2","astype":"|i1"}"#,
            "float16",
            "7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f",
            "f057f05bf45df05ff660f461f262f0637764f6647565f4657366f2667167f067\
         38687868b868f868",
        ),
        (
            r#"{"dtype":"<i8","astype":"<u8"}"#,
            "int64",
            "000000000000008000000000000000800100000000000000",
            "000000000000008000000000000000800000000000000080",
        ),
        (
            r#"{"dtype":"<u8","astype":"<i8"}"#,
            "uint64",
            "000000000000004000000000000000400000000000000040",
            "0000000000000040000000000000008000000000000000c0",
        ),
        (
            r#"{"dtype":"<i2","astype":"|i1"}"#,
            "int16",
            "786464",
            "7800dc004001",
        ),
        (
            r#"{"dtype":"<f4","astype":"<f8"}"#,
            "float32",
            "0000000000007041000000000000f03f000000000000f03f",
            "0000804b0000804b0100804b",
        ),
        (
            r#"{"dtype":"<f4"}"#,
            "float32",
            "0000804b0000803f0000803fcdcccc3d",
            "0000804b0000804b0000804b0000804b",
        ),
        (
            r#"{"dtype":"<f2"}"#,
            "float16",
            "0068003c003c003c",
            "0068006800680068",
        ),
        (
            r#"{"dtype":"<i4","astype":"<f4"}"#,
            "int32",
            "0000c03f00002040f9021550",
            "010000000400000000000080",
        ),
    ];

    #[test]
    fn decode_matches_numcodecs() {
        for (config, dtype, enc, dec) in DECODE_REFERENCE {
            let config: Value = serde_json::from_str(config).unwrap();
            let (enc, dec) = (hex(enc), hex(dec));
            let n = dec.len() / crate::dtype::DataType::from_name(dtype).unwrap().size;
            let c = codec(config.clone(), dtype, n).unwrap();
            assert_eq!(c.decode(enc, Unbounded).unwrap(), dec, "decode {config}");
        }
    }

    #[test]
    fn encoded_spec_and_validation() {
        let c = codec(json!({"dtype": "<i8", "astype": "<i2"}), "int64", 10).unwrap();
        let e = c.encoded_spec();
        assert_eq!(e.dtype, crate::dtype::DataType::from_name("int16").unwrap());
        assert_eq!((e.shape.clone(), e.nbytes()), (vec![10], 20));
        assert!(c.decode(vec![0; 19], Unbounded).is_err());
        assert!(c.encode(vec![0; 79]).is_err());
        // dtype defaults to the chunk's.
        let c = codec(json!({}), "float32", 3).unwrap();
        assert_eq!(c.encoded_spec().dtype.size, 4);
        assert!(codec(json!({"dtype": "<i4"}), "int16", 3).is_err());
        assert!(codec(json!({"dtype": "|b1"}), "bool", 3).is_err());
        assert!(codec(json!({"dtype": "<U4"}), "int32", 3).is_err());
        assert!(codec(json!({"dtype": 4}), "int32", 3).is_err());
        assert!(codec(json!({"dtype": "<i4", "typo": 1}), "int32", 3).is_err());
        assert!(codec(json!({}), "r16", 3).is_err());
    }

    #[test]
    fn round_trip_wrapping() {
        let c = codec(json!({"dtype": "|u1"}), "uint8", 4).unwrap();
        let enc = c.encode(vec![5, 3, 250, 0]).unwrap();
        assert_eq!(enc, vec![5, 254, 247, 6]);
        assert_eq!(c.decode(enc, Unbounded).unwrap(), vec![5, 3, 250, 0]);
    }
}
