//! Codecs that append a 32-bit checksum of the bytes, little endian, and
//! check it on decode: the layout `crc32c`, numcodecs' `fletcher32` and
//! `jenkins_lookup3` share. Each says only how it sums
//! ([`TrailingChecksum`]); encoding, checking and the size rule are here.

use super::{BytesToBytesCodec, SizeBound};
use crate::error::{Error, Result};

/// A checksum appended to the bytes (4 bytes, little endian).
pub trait TrailingChecksum: Send + Sync + std::fmt::Debug {
    /// The codec's name, for messages.
    const NAME: &'static str;
    /// The checksum of `data`.
    fn sum(&self, data: &[u8]) -> u32;
}

impl<T: TrailingChecksum> BytesToBytesCodec for T {
    fn encode(&self, mut decoded: Vec<u8>) -> Result<Vec<u8>> {
        let sum = self.sum(&decoded);
        decoded.extend_from_slice(&sum.to_le_bytes());
        Ok(decoded)
    }

    fn decode(&self, mut encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        let name = T::NAME;
        let Some(n) = encoded.len().checked_sub(4) else {
            return Err(Error::corrupt(format!(
                "{name}: {} bytes is too short to hold a checksum",
                encoded.len()
            )));
        };
        let stored =
            u32::from_le_bytes([encoded[n], encoded[n + 1], encoded[n + 2], encoded[n + 3]]);
        let actual = self.sum(&encoded[..n]);
        if stored != actual {
            return Err(Error::checksum(format!(
                "{name} checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"
            )));
        }
        // The checksum first: it says more about a damaged chunk than its length.
        bound.check(name, n)?;
        encoded.truncate(n);
        Ok(encoded)
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded.plus(4)
    }
}
