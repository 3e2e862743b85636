//! The `bytes` codec: an array as its elements' bytes in a given byte order.

use serde_json::{Map, Value};

use super::config::{check_members, choice_member};
use super::{check_len, ArrayToBytesCodec, ChunkSpec};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct BytesCodec {
    /// Swap each unit of this many bytes (1: no swap).
    swap_unit: usize,
    nbytes: usize,
}

/// Reverse the byte order of each `unit`-byte group in place.
pub fn swap_bytes(data: &mut [u8], unit: usize) {
    if unit > 1 {
        for group in data.chunks_exact_mut(unit) {
            group.reverse();
        }
    }
}

impl BytesCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        check_members("bytes", config, &["endian"])?;
        let endian = choice_member("bytes", config, "endian", &["little", "big"])?;
        let unit = spec.dtype.swap_unit();
        let big = match endian {
            Some(e) => e == "big",
            None if unit > 1 => {
                return Err(Error::metadata(
                    "codec 'bytes': 'endian' is required for multi-byte data types",
                ))
            }
            None => false,
        };
        let native_big = cfg!(target_endian = "big");
        Ok(BytesCodec {
            swap_unit: if big != native_big { unit } else { 1 },
            nbytes: spec.nbytes(),
        })
    }
}

impl ArrayToBytesCodec for BytesCodec {
    fn encode(&self, mut decoded: Vec<u8>) -> Result<Vec<u8>> {
        swap_bytes(&mut decoded, self.swap_unit);
        Ok(decoded)
    }
    fn decode(&self, mut encoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.nbytes)?;
        swap_bytes(&mut encoded, self.swap_unit);
        Ok(encoded)
    }
    fn is_identity(&self) -> bool {
        self.swap_unit == 1
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec;
    use super::*;
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
        assert_eq!(c.decode(enc).unwrap(), data);
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
            .decode(vec![0; 5])
            .is_err());
    }
}
