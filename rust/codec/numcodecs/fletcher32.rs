//! `numcodecs.fletcher32`: the HDF5/netCDF Fletcher-32 checksum (16-bit
//! big-endian words, an odd last byte as the high byte of a word), appended as
//! 4 little-endian bytes.

use serde_json::{Map, Value};

use super::check_config;
use crate::codec::checksum::TrailingChecksum;
use crate::error::Result;

#[derive(Debug)]
pub struct Fletcher32Codec;

/// numcodecs' `Fletcher32()` has no members.
pub const MEMBERS: &[&str] = &[];

impl Fletcher32Codec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        check_config("fletcher32", config, MEMBERS)?;
        Ok(Fletcher32Codec)
    }
}

/// numcodecs' `_fletcher32` (H5checksum.c `H5_checksum_fletcher32`).
pub(crate) fn fletcher32(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let words = data.chunks_exact(2);
    let odd = words.remainder();
    // Folded every 360 words, as in C (where the sums wrap like here).
    let mut words = words.peekable();
    while words.peek().is_some() {
        for w in words.by_ref().take(360) {
            sum1 = sum1.wrapping_add((u32::from(w[0]) << 8) | u32::from(w[1]));
            sum2 = sum2.wrapping_add(sum1);
        }
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    if let [last] = odd {
        sum1 = sum1.wrapping_add(u32::from(*last) << 8);
        sum2 = sum2.wrapping_add(sum1);
        sum1 = (sum1 & 0xffff) + (sum1 >> 16);
        sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
    (sum2 << 16) | sum1
}

impl TrailingChecksum for Fletcher32Codec {
    const NAME: &'static str = "fletcher32";
    fn sum(&self, data: &[u8]) -> u32 {
        fletcher32(data)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bytes_codec, hex};
    use crate::codec::tests::sample;
    use crate::codec::SizeBound::Unbounded;
    use crate::error::ErrorKind;
    use serde_json::json;

    /// (n, numcodecs.Fletcher32().encode(sample(n)).hex()): odd, even and
    /// longer-than-360-words inputs.
    const REFERENCE: [(usize, &str); 5] = [
        (1, "0000000000"),
        (2, "000707000700"),
        (
            33,
            "00070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9\
         e0077714d0",
        ),
        (1000, "3846e07f"),
        (100001, "f46326a0"),
    ];

    #[test]
    fn matches_numcodecs() {
        let c = bytes_codec("fletcher32", json!({})).unwrap();
        for (n, enc) in REFERENCE {
            let enc = if n > 64 {
                [sample(n), hex(enc)].concat()
            } else {
                hex(enc)
            };
            assert_eq!(c.encode(sample(n)).unwrap(), enc, "{n}");
            assert_eq!(c.decode(enc, Unbounded).unwrap(), sample(n));
        }
    }

    #[test]
    fn mismatch_and_short_input() {
        let c = bytes_codec("fletcher32", json!({})).unwrap();
        let enc = c.encode(sample(33)).unwrap();
        let mut bad = enc.clone();
        bad[5] ^= 1;
        assert_eq!(
            c.decode(bad, Unbounded).unwrap_err().kind,
            ErrorKind::Checksum
        );
        assert_eq!(
            c.decode(vec![1, 2, 3], Unbounded).unwrap_err().kind,
            ErrorKind::Corrupt
        );
        assert!(bytes_codec("fletcher32", json!({"location": "end"})).is_err());
    }
}
