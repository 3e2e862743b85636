//! `numcodecs.packbits`: a bool chunk packed 8 elements per byte (most
//! significant bit first, `np.packbits`), after one header byte holding the
//! number of padding bits in the last byte. The encoded chunk is uint8 of
//! shape `[1 + ceil(n / 8)]`, as zarr-python's `resolve_metadata` reports.

use serde_json::{Map, Value};

use super::check_config;
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::dtype::{DataKind, DataType};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct PackBitsCodec {
    n: usize,
    encoded: ChunkSpec,
}

/// numcodecs' `PackBits()` has no members.
pub const MEMBERS: &[&str] = &[];

impl PackBitsCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_config("packbits", config, MEMBERS)?;
        if spec.dtype.kind != DataKind::Bool {
            return Err(Error::metadata(
                "codec 'numcodecs.packbits' requires the bool data type",
            ));
        }
        let n = spec.num_elements();
        Ok(PackBitsCodec {
            n,
            encoded: ChunkSpec {
                shape: vec![1 + n.div_ceil(8)],
                dtype: DataType {
                    kind: DataKind::UInt,
                    size: 1,
                },
                fill: vec![0],
            },
        })
    }
}

impl ArrayToArrayCodec for PackBitsCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.n)?;
        let mut out = crate::alloc::zeroed(self.encoded.nbytes())?;
        out[0] = ((8 - self.n % 8) % 8) as u8;
        for (byte, bits) in out[1..].iter_mut().zip(decoded.chunks(8)) {
            for (i, &b) in bits.iter().enumerate() {
                if b != 0 {
                    *byte |= 0x80 >> i;
                }
            }
        }
        Ok(out)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.encoded.nbytes())?;
        bound.check("numcodecs.packbits", self.n)?;
        let padded = usize::from(encoded[0]);
        let bits = (encoded.len() - 1) * 8;
        if bits.checked_sub(padded) != Some(self.n) {
            return Err(Error::corrupt(format!(
                "packbits: header says {padded} padding bits, which does not give the \
                 chunk's {} elements",
                self.n
            )));
        }
        let mut out = crate::alloc::with_capacity(self.n)?;
        out.extend((0..self.n).map(|i| (encoded[1 + i / 8] >> (7 - i % 8)) & 1));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{array_codec, hex};
    use crate::codec::tests::spec;
    use crate::codec::SizeBound::Unbounded;
    use crate::codec::{ArrayToArrayCodec, CodecChain};
    use crate::error::Result;
    use serde_json::json;

    fn codec(n: usize, dtype: &str) -> Result<Box<dyn ArrayToArrayCodec>> {
        array_codec("packbits", json!({}), dtype, n)
    }

    /// (x as bool bytes, PackBits().encode(x).tobytes().hex())
    const REFERENCE: [(&str, &str); 6] = [
        ("01", "0780"),
        ("00010100", "0460"),
        ("0101010000000101", "00e3"),
        ("010000010001010100", "079700"),
        ("0101010000000001010100000000000000", "07e1c000"),
        (
            "0100010100010100000100000001010101000100000100010101010100000000\
         0001000000000101010100010000000100000100010000000100000001010100",
            "00b647a5f043d1288e",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (x, enc) in REFERENCE {
            let (x, enc) = (hex(x), hex(enc));
            let c = codec(x.len(), "bool").unwrap();
            assert_eq!(c.encode(x.clone()).unwrap(), enc);
            assert_eq!(c.decode(enc, Unbounded).unwrap(), x);
        }
    }

    #[test]
    fn spec_header_and_errors() {
        let c = codec(4, "bool").unwrap();
        // numcodecs docstring: [True, False, False, True] -> [4, 144].
        assert_eq!(c.encode(vec![1, 0, 0, 1]).unwrap(), vec![4, 144]);
        assert_eq!(c.encoded_spec().shape, vec![2]);
        assert!(c.decode(vec![3, 144], Unbounded).is_err());
        assert!(c.decode(vec![4], Unbounded).is_err());
        assert!(c.decode(vec![255, 0], Unbounded).is_err());
        assert!(codec(4, "uint8").is_err());
        let c = codec(16, "bool").unwrap();
        assert_eq!(c.encoded_spec().shape, vec![3]);
        assert_eq!(c.encode(vec![1; 16]).unwrap(), vec![0, 255, 255]);
        // Through a chain: the bytes codec sees uint8 of the new shape.
        let s = spec(&[3, 3], "bool");
        let chain = CodecChain::from_json(
            &json!([{"name": "numcodecs.packbits"}, {"name": "bytes"}]),
            s,
        )
        .unwrap();
        let x = vec![1, 1, 0, 0, 1, 0, 1, 0, 1];
        let enc = chain.encode(x.clone()).unwrap();
        assert_eq!(enc, vec![7, 0b1100_1010, 0b1000_0000]);
        assert_eq!(chain.decode(enc).unwrap(), x);
    }
}
