//! `numcodecs.base64`: the chunk as standard base64 text with padding
//! (`base64.standard_b64encode`). Decoding takes only that alphabet:
//! numcodecs' decoder also skips characters outside it, which here are a
//! corrupt chunk.

use ::base64::engine::general_purpose::STANDARD;
use ::base64::Engine as _;
use serde_json::{Map, Value};

use super::check_config;
use crate::codec::{BytesToBytesCodec, SizeBound};
use crate::error::{Error, Result};

const NAME: &str = "numcodecs.base64";

#[derive(Debug)]
pub struct Base64Codec;

/// numcodecs' `Base64()` has no members.
pub const MEMBERS: &[&str] = &[];

impl Base64Codec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        check_config("base64", config, MEMBERS)?;
        Ok(Base64Codec)
    }
}

/// The length of the base64 text of `n` bytes.
fn encoded_len(n: usize) -> Option<usize> {
    n.div_ceil(3).checked_mul(4)
}

impl BytesToBytesCodec for Base64Codec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        Ok(STANDARD.encode(decoded).into_bytes())
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        // (decoding gives fewer bytes than the text has: nothing to bound first)
        let decoded = STANDARD
            .decode(&encoded)
            .map_err(|e| Error::corrupt(format!("{NAME}: not base64 text: {e}")))?;
        bound.check(NAME, decoded.len())?;
        Ok(decoded)
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded.compressed(encoded_len)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::bytes_codec;
    use crate::codec::tests::sample;
    use crate::codec::SizeBound::{Exact, Unbounded};
    use crate::error::ErrorKind;
    use serde_json::json;

    /// (n, numcodecs.Base64().encode(sample(n)))
    const REFERENCE: [(usize, &str); 6] = [
        (0, ""),
        (1, "AA=="),
        (2, "AAc="),
        (3, "AAcO"),
        (4, "AAcOFQ=="),
        (10, "AAcOFRwjKjE4Pw=="),
    ];

    #[test]
    fn matches_numcodecs() {
        let c = bytes_codec("base64", json!({})).unwrap();
        for (n, text) in REFERENCE {
            assert_eq!(c.encode(sample(n)).unwrap(), text.as_bytes());
            assert_eq!(
                c.decode(text.as_bytes().to_vec(), Exact(n)).unwrap(),
                sample(n)
            );
        }
    }

    #[test]
    fn corrupt_text_and_sizes_are_errors() {
        let c = bytes_codec("base64", json!({})).unwrap();
        for bad in ["AA=A", "AAc", "AA\nAB", "****"] {
            let e = c.decode(bad.as_bytes().to_vec(), Unbounded).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Corrupt, "{bad}: {e}");
        }
        let e = c.decode(b"AAcOFQ==".to_vec(), Exact(3)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Corrupt, "{e}");
        assert!(bytes_codec("base64", json!({"x": 1})).is_err());
    }
}
