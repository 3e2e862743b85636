//! `numcodecs.shuffle`: byte shuffle (byte `j` of element `i` goes to
//! `j * count + i`), numcodecs' `Shuffle(elementsize)`. Without an
//! `elementsize`, zarr-python uses the chunk's element size, and so does this.

use serde_json::{Map, Value};

use super::check_config;
use crate::codec::config::{Member, Members};
use crate::codec::{BytesToBytesCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct ShuffleCodec {
    elementsize: usize,
}

/// numcodecs' `Shuffle(elementsize=4)` members, in its `get_config()` order.
pub const MEMBERS: &[&str] = &["elementsize"];

/// The members with their ranges: `elementsize` any C int.
pub const TYPED_MEMBERS: &[Member] =
    &[Member::int("elementsize", i32::MIN as i64, i32::MAX as i64)];

/// numcodecs' default element size. A v3 `numcodecs.shuffle` without one
/// shuffles the chunk's elements (zarr-python's `numcodecs.zarr3` fills in
/// the item size), a v2 filter without one numcodecs' 4.
pub const DEFAULT_ELEMENTSIZE: i64 = 4;

fn elementsize(config: &Map<String, Value>) -> Result<Option<i64>> {
    check_config("shuffle", config, MEMBERS)?;
    TYPED_MEMBERS[0].get_int("numcodecs.shuffle", config)
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    let size = elementsize(config)?.unwrap_or(DEFAULT_ELEMENTSIZE);
    Ok(vec![("elementsize", size.into())])
}

impl ShuffleCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        let elementsize = elementsize(config)?.unwrap_or(spec.dtype.size as i64);
        // numcodecs copies the data unchanged for element sizes <= 1.
        Ok(ShuffleCodec {
            elementsize: elementsize.max(1) as usize,
        })
    }

    fn check(&self, len: usize) -> Result<()> {
        if !len.is_multiple_of(self.elementsize) {
            return Err(Error::corrupt(format!(
                "shuffle: {len} bytes is not a multiple of the element size {}",
                self.elementsize
            )));
        }
        Ok(())
    }
}

impl BytesToBytesCodec for ShuffleCodec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let es = self.elementsize;
        if es == 1 {
            return Ok(decoded);
        }
        self.check(decoded.len())
            .map_err(|e| Error::value(e.message))?;
        let count = decoded.len() / es;
        let mut out = crate::alloc::zeroed(decoded.len())?;
        for (i, elem) in decoded.chunks_exact(es).enumerate() {
            for (j, &b) in elem.iter().enumerate() {
                out[j * count + i] = b;
            }
        }
        Ok(out)
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        // A shuffle keeps the size: the output is the input's.
        bound.check("shuffle", encoded.len())?;
        let es = self.elementsize;
        if es == 1 {
            return Ok(encoded);
        }
        self.check(encoded.len())?;
        let count = encoded.len() / es;
        let mut out = crate::alloc::zeroed(encoded.len())?;
        for (j, plane) in encoded.chunks_exact(count.max(1)).enumerate().take(es) {
            for (i, &b) in plane.iter().enumerate() {
                out[i * es + j] = b;
            }
        }
        Ok(out)
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{build_any, hex};
    use crate::codec::tests::{sample, spec};
    use crate::codec::SizeBound::Unbounded;
    use crate::codec::{AnyCodec, BytesToBytesCodec};
    use serde_json::{json, Value};

    fn codec(config: Value, dtype: &str) -> crate::error::Result<Box<dyn BytesToBytesCodec>> {
        match build_any("shuffle", config, &spec(&[4], dtype))? {
            AnyCodec::BytesToBytes(c) => Ok(c),
            _ => unreachable!(),
        }
    }

    /// numcodecs.Shuffle(elementsize).encode(d).hex(), d = sample(24).
    const REFERENCE: [(i64, &str); 4] = [
        (2, "000e1c2a38465462707e8c9a071523313f4d5b69778593a1"),
        (3, "00152a3f54697e93071c31465b70859a0e23384d62778ca1"),
        (4, "001c3854708c07233f5b77930e2a46627e9a15314d6985a1"),
        (8, "003870073f770e467e154d851c548c235b932a629a3169a1"),
    ];

    #[test]
    fn matches_numcodecs() {
        for (es, enc) in REFERENCE {
            let c = codec(json!({ "elementsize": es }), "uint8").unwrap();
            assert_eq!(c.encode(sample(24)).unwrap(), hex(enc), "{es}");
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), sample(24));
        }
    }

    #[test]
    fn default_element_size_is_the_chunks() {
        let by_dtype = codec(json!({}), "float64").unwrap();
        let explicit = codec(json!({"elementsize": 8}), "uint8").unwrap();
        assert_eq!(
            by_dtype.encode(sample(24)).unwrap(),
            explicit.encode(sample(24)).unwrap()
        );
        let noop = codec(json!({"elementsize": 0}), "float64").unwrap();
        assert_eq!(noop.encode(sample(5)).unwrap(), sample(5));
    }

    #[test]
    fn length_must_be_a_multiple() {
        let c = codec(json!({"elementsize": 4}), "uint8").unwrap();
        assert!(c.encode(sample(6)).is_err());
        assert!(c.decode(sample(6), Unbounded).is_err());
        assert_eq!(c.decode(Vec::new(), Unbounded).unwrap(), Vec::<u8>::new());
        assert!(codec(json!({"elementsize": "4"}), "uint8").is_err());
    }
}
