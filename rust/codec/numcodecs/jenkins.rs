//! `numcodecs.jenkins_lookup3`: Bob Jenkins' lookup3 `hashlittle` (the HDF5
//! variant) of the data, appended as 4 little-endian bytes. `initval` seeds the
//! hash; `prefix` (bytes hashed before the data) may be given as a list of
//! byte values.

use serde_json::{Map, Value};

use super::check_config;
use crate::codec::checksum::TrailingChecksum;
use crate::codec::config::{Member, Members};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct JenkinsLookup3Codec {
    initval: u32,
    prefix: Vec<u8>,
}

/// numcodecs' `JenkinsLookup3(initval=0, prefix=None)` members, in its order.
pub const MEMBERS: &[&str] = &["initval", "prefix"];

/// The members with their ranges: `initval` a 32-bit unsigned integer.
pub const TYPED_MEMBERS: &[Member] = &[Member::int("initval", 0, u32::MAX as i64)];

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`
/// (`prefix` as given).
pub fn complete_config(config: &Map<String, Value>) -> Result<Members> {
    let codec = JenkinsLookup3Codec::from_config(config)?;
    let prefix = config.get("prefix").cloned().unwrap_or(Value::Null);
    Ok(vec![("initval", codec.initval.into()), ("prefix", prefix)])
}

impl JenkinsLookup3Codec {
    pub fn from_config(config: &Map<String, Value>) -> Result<Self> {
        check_config("jenkins_lookup3", config, MEMBERS)?;
        let name = "numcodecs.jenkins_lookup3";
        let initval = TYPED_MEMBERS[0].get_int(name, config)?.unwrap_or(0);
        let prefix = match config.get("prefix") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_u64()
                        .filter(|&b| b < 256)
                        .map(|b| b as u8)
                        .ok_or_else(|| {
                            Error::metadata(format!(
                                "codec '{name}': 'prefix' must hold byte values, got {v}"
                            ))
                        })
                })
                .collect::<Result<_>>()?,
            Some(v) => {
                return Err(Error::metadata(format!(
                    "codec '{name}': 'prefix' must be a list of bytes or null, got {v}"
                )))
            }
        };
        Ok(JenkinsLookup3Codec {
            initval: initval as u32,
            prefix,
        })
    }

    fn hash(&self, data: &[u8]) -> u32 {
        if self.prefix.is_empty() {
            lookup3(data, self.initval)
        } else {
            lookup3(&[self.prefix.as_slice(), data].concat(), self.initval)
        }
    }
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

fn final_mix(mut a: u32, mut b: u32, mut c: u32) -> u32 {
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// `hashlittle(data, initval)` as numcodecs' `jenkins_lookup3`.
pub(crate) fn lookup3(data: &[u8], initval: u32) -> u32 {
    let init = 0xdead_beefu32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    if data.is_empty() {
        return c;
    }
    let word = |k: &[u8]| {
        let mut w = [0u8; 4];
        w[..k.len()].copy_from_slice(k);
        u32::from_le_bytes(w)
    };
    let mut k = data;
    // All but the last block (1 to 12 bytes).
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    a = a.wrapping_add(word(&k[..k.len().min(4)]));
    if k.len() > 4 {
        b = b.wrapping_add(word(&k[4..k.len().min(8)]));
    }
    if k.len() > 8 {
        c = c.wrapping_add(word(&k[8..]));
    }
    final_mix(a, b, c)
}

impl TrailingChecksum for JenkinsLookup3Codec {
    const NAME: &'static str = "jenkins_lookup3";
    fn sum(&self, data: &[u8]) -> u32 {
        self.hash(data)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::bytes_codec;
    use crate::codec::tests::sample;
    use crate::codec::SizeBound::Unbounded;
    use crate::error::ErrorKind;
    use serde_json::{json, Value};

    /// (config, n, numcodecs.JenkinsLookup3(**config).encode(sample(n))[-4:].hex())
    const REFERENCE: [(&str, usize, &str); 10] = [
        (r#"{}"#, 0, "efbeadde"),
        (r#"{}"#, 1, "4b41a98b"),
        (r#"{}"#, 5, "3e10fe27"),
        (r#"{}"#, 12, "6bfb1446"),
        (r#"{}"#, 13, "5103609c"),
        (r#"{}"#, 24, "43ba28ec"),
        (r#"{}"#, 100, "c87c954c"),
        (r#"{"initval":7}"#, 30, "288299d4"),
        (r#"{"initval":4294967295}"#, 11, "76a4e471"),
        (r#"{"prefix":[1,2,3]}"#, 10, "f5c9014e"),
    ];

    #[test]
    fn matches_numcodecs() {
        for (config, n, sum) in REFERENCE {
            let config: Value = serde_json::from_str(config).unwrap();
            let c = bytes_codec("jenkins_lookup3", config.clone()).unwrap();
            let enc = c.encode(sample(n)).unwrap();
            assert_eq!(
                &enc[n..],
                super::super::tests::hex(sum).as_slice(),
                "{config} {n}"
            );
            assert_eq!(c.decode(enc, Unbounded).unwrap(), sample(n));
        }
    }

    #[test]
    fn mismatch_and_config() {
        let c = bytes_codec("jenkins_lookup3", json!({"initval": 7})).unwrap();
        let mut enc = c.encode(sample(30)).unwrap();
        enc[0] ^= 1;
        assert_eq!(
            c.decode(enc, Unbounded).unwrap_err().kind,
            ErrorKind::Checksum
        );
        assert_eq!(
            c.decode(vec![0; 3], Unbounded).unwrap_err().kind,
            ErrorKind::Corrupt
        );
        assert!(bytes_codec("jenkins_lookup3", json!({"initval": -1})).is_err());
        assert!(bytes_codec("jenkins_lookup3", json!({"prefix": "ab"})).is_err());
        assert!(bytes_codec("jenkins_lookup3", json!({"prefix": [1, 256]})).is_err());
    }
}
