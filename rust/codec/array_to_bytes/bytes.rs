//! The `bytes` codec: an array as its elements' bytes in a given byte order.

use serde_json::{Map, Value};

use crate::codec::config::{check_members, keys, Member, Members};
use crate::codec::{ArrayToBytesCodec, ChunkSpec, SizeBound};
use crate::dtype::DataType;
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct BytesCodec {
    /// The data type, when stored byte order differs from native.
    swap: Option<DataType>,
    nbytes: usize,
}

/// The byte orders `endian` takes.
pub const ENDIANS: [&str; 2] = ["little", "big"];

/// The configuration's members: `endian`.
pub const MEMBERS: &[Member] = &[Member::choice("endian", &ENDIANS)];

/// zarr-python's `BytesCodec(endian="little")`. Data types without a byte order
/// (one-byte, raw bits, byte strings) need none, and zarr-python leaves it out
/// for them: the metadata layer knows which those are.
pub const DEFAULT_ENDIAN: &str = "little";

/// The complete configuration: `endian` checked, [`DEFAULT_ENDIAN`] when absent.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    check_members("bytes", config, &keys(MEMBERS))?;
    let endian = MEMBERS[0]
        .get_choice("bytes", config)?
        .unwrap_or(DEFAULT_ENDIAN);
    Ok(vec![("endian", endian.into())])
}

impl BytesCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_members("bytes", config, &keys(MEMBERS))?;
        if spec.dtype.is_var_len() {
            return Err(Error::metadata(
                "codec 'bytes' cannot encode a variable-length data type (use vlen-utf8 or vlen-bytes)",
            ));
        }
        let endian = MEMBERS[0].get_choice("bytes", config)?;
        let swaps = spec.dtype.needs_swap();
        let big = match endian {
            Some(e) => e == "big",
            None if swaps => {
                return Err(Error::metadata(
                    "codec 'bytes': 'endian' is required for multi-byte data types",
                ))
            }
            None => false,
        };
        let native_big = cfg!(target_endian = "big");
        Ok(BytesCodec {
            swap: (swaps && big != native_big).then_some(spec.dtype),
            nbytes: spec.nbytes(),
        })
    }
}

impl ArrayToBytesCodec for BytesCodec {
    fn encode(&self, mut decoded: Vec<u8>) -> Result<Vec<u8>> {
        if let Some(dtype) = self.swap {
            dtype.swap_bytes(&mut decoded);
        }
        Ok(decoded)
    }
    fn decode(&self, mut encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        bound.check("bytes", encoded.len())?;
        SizeBound::Exact(self.nbytes).check("bytes", encoded.len())?;
        if let Some(dtype) = self.swap {
            dtype.swap_bytes(&mut encoded);
        }
        Ok(encoded)
    }
    fn encoded_bound(&self) -> SizeBound {
        SizeBound::Exact(self.nbytes)
    }
    fn is_identity(&self) -> bool {
        self.swap.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::tests::spec;
    use serde_json::json;

    fn codec(endian: Value, dtype: &str, n: usize) -> Result<BytesCodec> {
        let cfg = match endian {
            Value::Null => Map::new(),
            e => json!({ "endian": e }).as_object().unwrap().clone(),
        };
        BytesCodec::from_config(&cfg, &spec(&[n], dtype))
    }

    #[test]
    fn big_endian_swaps_each_element() {
        let c = codec(json!("big"), "uint32", 2).unwrap();
        let data = [1u32.to_ne_bytes(), 0x0102_0304u32.to_ne_bytes()].concat();
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(enc, [[0, 0, 0, 1], [1, 2, 3, 4]].concat());
        assert_eq!(c.decode(enc, SizeBound::Exact(8)).unwrap(), data);
    }

    #[test]
    fn complex_swaps_halves() {
        let c = codec(json!("big"), "complex64", 1).unwrap();
        let data = [1.5f32.to_ne_bytes(), (-2.0f32).to_ne_bytes()].concat();
        let enc = c.encode(data.clone()).unwrap();
        assert_eq!(&enc[..4], &1.5f32.to_be_bytes());
        assert_eq!(&enc[4..], &(-2.0f32).to_be_bytes());
    }

    #[test]
    fn endian_rules() {
        assert!(codec(json!("little"), "int16", 3).unwrap().is_identity());
        assert!(codec(Value::Null, "uint8", 3).unwrap().is_identity());
        assert!(codec(Value::Null, "int16", 3).is_err());
        assert!(codec(json!("middle"), "int16", 3).is_err());
        assert!(codec(json!("little"), "int16", 3)
            .unwrap()
            .decode(vec![0; 5], SizeBound::Exact(6))
            .is_err());
    }
}
