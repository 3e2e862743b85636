//! `numcodecs.crc32`, `numcodecs.adler32` and `numcodecs.crc32c`
//! (numcodecs/checksum32.py): a 4-byte little-endian checksum of the data,
//! placed before it (`location: "start"`, the default of crc32 and adler32) or
//! after it (`"end"`, the default of crc32c).

use serde_json::{Map, Value};

use super::check_config;
use crate::codec::config::{choice_member, Members};
use crate::codec::{BytesToBytesCodec, SizeBound};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Crc32,
    Adler32,
    Crc32c,
}

#[derive(Debug)]
pub struct Checksum32Codec {
    kind: Kind,
    at_start: bool,
}

/// zlib's adler32 of `data` (initial value 1).
pub(crate) fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    // The largest n with 255 n (n + 1) / 2 + (n + 1) (MOD - 1) < 2^32.
    const NMAX: usize = 5552;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(NMAX) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

/// numcodecs' `CRC32(location=None)` (and `Adler32`, `CRC32C`) members.
pub const MEMBERS: &[&str] = &["location"];

/// `location`, if given (numcodecs' default depends on the checksum).
fn location<'a>(id: &str, config: &'a Map<String, Value>) -> Result<Option<&'a str>> {
    check_config(id, config, MEMBERS)?;
    choice_member(
        &format!("numcodecs.{id}"),
        config,
        "location",
        &["start", "end"],
    )
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`:
/// `location` only when given.
pub fn complete_config(id: &str, config: &Map<String, Value>) -> Result<Members> {
    Checksum32Codec::from_config(id, config)?;
    Ok(location(id, config)?
        .map(|l| vec![("location", l.into())])
        .unwrap_or_default())
}

impl Checksum32Codec {
    pub fn from_config(id: &str, config: &Map<String, Value>) -> Result<Self> {
        let kind = match id {
            "crc32" => Kind::Crc32,
            "adler32" => Kind::Adler32,
            "crc32c" => Kind::Crc32c,
            other => {
                return Err(Error::unsupported(format!(
                    "unknown checksum codec 'numcodecs.{other}'"
                )))
            }
        };
        let default = if kind == Kind::Crc32c { "end" } else { "start" };
        let location = location(id, config)?.unwrap_or(default);
        Ok(Checksum32Codec {
            kind,
            at_start: location == "start",
        })
    }

    fn checksum(&self, data: &[u8]) -> u32 {
        match self.kind {
            Kind::Crc32 => {
                let mut crc = flate2::Crc::new();
                crc.update(data);
                crc.sum()
            }
            Kind::Adler32 => adler32(data),
            Kind::Crc32c => crc32c::crc32c(data),
        }
    }

    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Crc32 => "crc32",
            Kind::Adler32 => "adler32",
            Kind::Crc32c => "crc32c",
        }
    }
}

impl BytesToBytesCodec for Checksum32Codec {
    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        let sum = self.checksum(&decoded).to_le_bytes();
        let mut out = crate::alloc::with_capacity(decoded.len() + 4)?;
        if self.at_start {
            out.extend_from_slice(&sum);
            out.extend_from_slice(&decoded);
        } else {
            out.extend_from_slice(&decoded);
            out.extend_from_slice(&sum);
        }
        Ok(out)
    }

    fn decode(&self, mut encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        if encoded.len() < 4 {
            return Err(Error::corrupt(format!(
                "{}: {} bytes is too short to hold a 32-bit checksum",
                self.name(),
                encoded.len()
            )));
        }
        let (sum_at, payload) = if self.at_start {
            (0, 4..encoded.len())
        } else {
            (encoded.len() - 4, 0..encoded.len() - 4)
        };
        let stored = u32::from_le_bytes([
            encoded[sum_at],
            encoded[sum_at + 1],
            encoded[sum_at + 2],
            encoded[sum_at + 3],
        ]);
        let actual = self.checksum(&encoded[payload.clone()]);
        if stored != actual {
            return Err(Error::checksum(format!(
                "{} checksum mismatch: stored {stored:#010x}, computed {actual:#010x}",
                self.name()
            )));
        }
        bound.check(self.name(), payload.len())?;
        if self.at_start {
            encoded.drain(..4);
        } else {
            encoded.truncate(payload.end);
        }
        Ok(encoded)
    }

    fn encoded_bound(&self, decoded: SizeBound) -> SizeBound {
        decoded.plus(4)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{bytes_codec, hex};
    use crate::codec::tests::sample;
    use crate::codec::SizeBound::Unbounded;
    use crate::error::ErrorKind;
    use serde_json::{json, Value};

    /// (id, config, numcodecs.<Codec>(**config).encode(sample(20)).hex())
    const REFERENCE: [(&str, &str, &str); 6] = [
        (
            "crc32",
            r#"{}"#,
            "f332b98000070e151c232a31383f464d545b626970777e85",
        ),
        (
            "crc32",
            r#"{"location":"end"}"#,
            "00070e151c232a31383f464d545b626970777e85f332b980",
        ),
        (
            "adler32",
            r#"{}"#,
            "3305722400070e151c232a31383f464d545b626970777e85",
        ),
        (
            "adler32",
            r#"{"location":"end"}"#,
            "00070e151c232a31383f464d545b626970777e8533057224",
        ),
        (
            "crc32c",
            r#"{}"#,
            "00070e151c232a31383f464d545b626970777e8586a83208",
        ),
        (
            "crc32c",
            r#"{"location":"start"}"#,
            "86a8320800070e151c232a31383f464d545b626970777e85",
        ),
    ];

    #[test]
    fn matches_numcodecs() {
        for (id, config, enc) in REFERENCE {
            let config: Value = serde_json::from_str(config).unwrap();
            let c = bytes_codec(id, config).unwrap();
            assert_eq!(c.encode(sample(20)).unwrap(), hex(enc), "{id}");
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), sample(20));
        }
    }

    #[test]
    fn adler32_long_input() {
        // zlib.adler32(bytes(i * 7 % 251 for i in range(100000)))
        assert_eq!(super::adler32(&sample(100_000)), 1132184622);
        assert_eq!(super::adler32(b""), 1);
    }

    #[test]
    fn mismatch_and_short_input() {
        for id in ["crc32", "adler32", "crc32c"] {
            let c = bytes_codec(id, json!({})).unwrap();
            let enc = c.encode(sample(20)).unwrap();
            for i in 0..enc.len() {
                let mut bad = enc.clone();
                bad[i] ^= 0x10;
                assert_eq!(
                    c.decode(bad, Unbounded).unwrap_err().kind,
                    ErrorKind::Checksum,
                    "{id} {i}"
                );
            }
            for n in 0..4 {
                assert_eq!(
                    c.decode(enc[..n].to_vec(), Unbounded).unwrap_err().kind,
                    ErrorKind::Corrupt
                );
            }
            assert_eq!(
                c.decode(c.encode(Vec::new()).unwrap(), Unbounded).unwrap(),
                Vec::<u8>::new()
            );
        }
        assert!(bytes_codec("crc32", json!({"location": "middle"})).is_err());
        assert!(bytes_codec("adler32", json!({"location": 1})).is_err());
    }
}
