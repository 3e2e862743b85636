//! The `crc32c` codec: appends the CRC32C of the bytes, little endian.

use serde_json::{Map, Value};

use crate::codec::checksum::TrailingChecksum;
use crate::codec::config::check_members;
use crate::error::Result;

#[derive(Debug)]
pub struct Crc32cCodec;

impl Crc32cCodec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        check_members("crc32c", config, &[])?;
        Ok(Crc32cCodec)
    }
}

impl TrailingChecksum for Crc32cCodec {
    const NAME: &'static str = "crc32c";
    fn sum(&self, data: &[u8]) -> u32 {
        crc32c::crc32c(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::BytesToBytesCodec;
    use crate::codec::SizeBound::Unbounded;
    use crate::error::ErrorKind;

    #[test]
    fn known_vector() {
        // RFC 3720 B.4: 32 bytes of zeros have CRC32C 0x8a9136aa.
        let enc = Crc32cCodec.encode(vec![0u8; 32]).unwrap();
        assert_eq!(&enc[32..], &0x8a91_36aau32.to_le_bytes());
        assert_eq!(
            Crc32cCodec.decode(enc.clone(), Unbounded).unwrap(),
            vec![0u8; 32]
        );
        let mut bad = enc;
        bad[3] ^= 1;
        assert_eq!(
            Crc32cCodec.decode(bad, Unbounded).unwrap_err().kind,
            ErrorKind::Checksum
        );
        assert_eq!(
            Crc32cCodec.decode(vec![1, 2], Unbounded).unwrap_err().kind,
            ErrorKind::Corrupt
        );
    }
}
