//! The `crc32c` codec: appends the CRC32C of the bytes, little endian.

use serde_json::{Map, Value};

use super::config::check_members;
use super::BytesToBytesCodec;
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct Crc32cCodec;

impl Crc32cCodec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        check_members("crc32c", config, &[])?;
        Ok(Crc32cCodec)
    }
}

impl BytesToBytesCodec for Crc32cCodec {
    fn fixed_size_overhead(&self) -> Option<usize> {
        Some(4)
    }

    fn encode(&self, mut decoded: Vec<u8>) -> Result<Vec<u8>> {
        let sum = crc32c::crc32c(&decoded);
        decoded.extend_from_slice(&sum.to_le_bytes());
        Ok(decoded)
    }

    fn decode(&self, mut encoded: Vec<u8>) -> Result<Vec<u8>> {
        if encoded.len() < 4 {
            return Err(Error::corrupt(format!(
                "crc32c: {} bytes is too short to hold a checksum",
                encoded.len()
            )));
        }
        let n = encoded.len() - 4;
        let stored =
            u32::from_le_bytes([encoded[n], encoded[n + 1], encoded[n + 2], encoded[n + 3]]);
        let actual = crc32c::crc32c(&encoded[..n]);
        if stored != actual {
            return Err(Error::checksum(format!(
                "crc32c checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"
            )));
        }
        encoded.truncate(n);
        Ok(encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn known_vector() {
        // RFC 3720 B.4: 32 bytes of zeros have CRC32C 0x8a9136aa.
        let enc = Crc32cCodec.encode(vec![0u8; 32]).unwrap();
        assert_eq!(&enc[32..], &0x8a91_36aau32.to_le_bytes());
        assert_eq!(Crc32cCodec.decode(enc.clone()).unwrap(), vec![0u8; 32]);
        let mut bad = enc;
        bad[3] ^= 1;
        assert_eq!(
            Crc32cCodec.decode(bad).unwrap_err().kind,
            ErrorKind::Checksum
        );
        assert_eq!(
            Crc32cCodec.decode(vec![1, 2]).unwrap_err().kind,
            ErrorKind::Corrupt
        );
    }
}
