//! `numcodecs.categorize`: stores each string of a fixed-size unicode chunk
//! (numpy `U<n>`: `n` UTF-32 code units) as its 1-based position in `labels`,
//! 0 for a string that is none of them, in the numeric type `astype`; decoding
//! gives each code's label back, and the empty string for 0 or an unknown code.
//!
//! numcodecs 0.16 (`Categorize.encode`/`decode`) loops over the labels with
//! `enc[buf == label] = i + 1` and `dec[enc == i + 1] = label`: a label repeated
//! takes the last position on encoding, a label longer than `n` characters
//! never matches (numpy compares the whole string) and decodes truncated to `n`
//! (numpy's assignment), and trailing NULs are not part of a numpy string.
//! Unlike the numeric filters, the labels' byte order is the one of `dtype`:
//! numcodecs writes the decoded strings in it and zarr views them as stored.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::numeric::{Num, Scalar};
use super::{check_config, dtype_member, dtype_num, required, retyped_spec};
use crate::codec::config::Members;
use crate::codec::{check_len, ArrayToArrayCodec, ChunkSpec, SizeBound};
use crate::error::{Error, Result};

/// numcodecs' `Categorize(labels, dtype, astype="u1")` members, in its order.
pub const MEMBERS: &[&str] = &["labels", "dtype", "astype"];
const NAME: &str = "numcodecs.categorize";

#[derive(Debug)]
pub struct CategorizeCodec {
    /// Element bytes of each label as stored (zero-padded), by position.
    labels: Vec<Vec<u8>>,
    /// Element bytes -> 1-based position of the last label equal to them.
    codes: HashMap<Vec<u8>, usize>,
    astype: Num,
    decoded: ChunkSpec,
    encoded: ChunkSpec,
}

struct Config {
    labels: Vec<String>,
    dtype: String,
    astype: Option<String>,
}

fn parse(config: &Map<String, Value>) -> Result<Config> {
    let id = "categorize";
    check_config(id, config, MEMBERS)?;
    let labels = match config.get("labels") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(Error::unsupported(format!(
                        "codec '{NAME}': labels must be strings (object labels need an object \
                         array), got {other}"
                    ))),
                })
                .collect::<Result<Vec<_>>>()?,
        ),
        Some(v) => {
            return Err(Error::metadata(format!(
                "codec '{NAME}': 'labels' must be an array of strings, got {v}"
            )))
        }
    };
    Ok(Config {
        labels: required(id, "labels", &labels)?,
        dtype: required(id, "dtype", &dtype_member(id, config, "dtype")?)?,
        astype: dtype_member(id, config, "astype")?,
    })
}

/// The configuration as numcodecs' `get_config()` gives it, without `"id"`.
pub fn complete_config(config: &Map<String, Value>, _item_size: usize) -> Result<Members> {
    let c = parse(config)?;
    Ok(vec![
        ("labels", Value::from(c.labels)),
        ("dtype", c.dtype.into()),
        ("astype", c.astype.unwrap_or_else(|| "|u1".into()).into()),
    ])
}

/// `(characters, big-endian)` of a numpy unicode type string (`"<U3"`, `">U3"`).
fn unicode_dtype(s: &str) -> Result<(usize, bool)> {
    let (big, body) = match s.as_bytes().first() {
        Some(b'>') => (true, &s[1..]),
        Some(b'<' | b'=' | b'|') => (false, &s[1..]),
        _ => (false, s),
    };
    let chars = body.strip_prefix('U').and_then(|n| n.parse::<usize>().ok());
    match chars {
        Some(n) if n > 0 => Ok((n, big)),
        _ => Err(Error::unsupported(format!(
            "codec '{NAME}': dtype '{s}' is not supported (a fixed-size unicode type such as \
             \"<U8\"; object labels need an object array)"
        ))),
    }
}

/// `label` as one element of `chars` UTF-32 code units, truncated and
/// zero-padded, and whether it fits whole (trailing NULs aside).
fn element(label: &str, chars: usize, big: bool) -> (Vec<u8>, bool) {
    let units: Vec<u32> = label
        .trim_end_matches('\0')
        .chars()
        .map(u32::from)
        .collect();
    let mut out = vec![0u8; 4 * chars];
    for (slot, &u) in out.chunks_exact_mut(4).zip(&units) {
        slot.copy_from_slice(&if big {
            u.to_be_bytes()
        } else {
            u.to_le_bytes()
        });
    }
    (out, units.len() <= chars)
}

/// A loaded code as a position (numpy's `enc == i + 1` on any numeric type).
fn position(v: Scalar) -> Option<i128> {
    let whole = |f: f64| (f.fract() == 0.0 && f.is_finite()).then_some(f as i128);
    match v {
        Scalar::Int(i) => Some(i),
        Scalar::Float(f) => whole(f),
        Scalar::Complex(re, 0.0) => whole(re),
        Scalar::Complex(..) => None,
    }
}

impl CategorizeCodec {
    pub fn from_config(config: &Map<String, Value>, spec: &ChunkSpec) -> Result<Self> {
        let c = parse(config)?;
        let (chars, big) = unicode_dtype(&c.dtype)?;
        if 4 * chars != spec.dtype.size {
            return Err(Error::metadata(format!(
                "codec '{NAME}': dtype '{}' has {} bytes per element but the chunk's data type \
                 has {}",
                c.dtype,
                4 * chars,
                spec.dtype.size
            )));
        }
        let astype = dtype_num("categorize", "astype", c.astype.as_deref(), Some(Num::U8))?;
        let mut labels = Vec::with_capacity(c.labels.len());
        let mut codes = HashMap::new();
        for (i, label) in c.labels.iter().enumerate() {
            let (bytes, fits) = element(label, chars, big);
            if fits {
                codes.insert(bytes.clone(), i + 1);
            }
            labels.push(bytes);
        }
        let encoded = retyped_spec(spec, astype, |fill| {
            encode_elements(&codes, spec.dtype.size, astype, fill)
        });
        Ok(CategorizeCodec {
            labels,
            codes,
            astype,
            decoded: spec.clone(),
            encoded,
        })
    }
}

/// Each `item`-byte element of `decoded` as its code in `codes` (0 when it has
/// none), stored as `num`.
fn encode_elements(
    codes: &HashMap<Vec<u8>, usize>,
    item: usize,
    num: Num,
    decoded: &[u8],
) -> Vec<u8> {
    let mut out = vec![0u8; decoded.len() / item * num.size()];
    for (value, slot) in decoded
        .chunks_exact(item)
        .zip(out.chunks_exact_mut(num.size()))
    {
        let code = codes.get(value).copied().unwrap_or(0);
        num.store(num.cast(Scalar::Int(code as i128)), slot);
    }
    out
}

impl ArrayToArrayCodec for CategorizeCodec {
    fn encoded_spec(&self) -> &ChunkSpec {
        &self.encoded
    }

    fn encode(&self, decoded: Vec<u8>) -> Result<Vec<u8>> {
        check_len(decoded.len(), self.decoded.nbytes())?;
        Ok(encode_elements(
            &self.codes,
            self.decoded.dtype.size,
            self.astype,
            &decoded,
        ))
    }

    fn decode(&self, encoded: Vec<u8>, bound: SizeBound) -> Result<Vec<u8>> {
        check_len(encoded.len(), self.encoded.nbytes())?;
        bound.check(NAME, self.decoded.nbytes())?;
        let (item, num) = (self.decoded.dtype.size, self.astype);
        let mut out = vec![0u8; self.decoded.nbytes()];
        for (code, slot) in encoded
            .chunks_exact(num.size())
            .zip(out.chunks_exact_mut(item))
        {
            let label = position(num.load(code))
                .and_then(|p| usize::try_from(p).ok())
                .and_then(|p| p.checked_sub(1))
                .and_then(|p| self.labels.get(p));
            if let Some(label) = label {
                slot.copy_from_slice(label);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{array_codec, hex};
    use crate::codec::SizeBound::Unbounded;
    use crate::error::ErrorKind;
    use serde_json::json;

    /// numcodecs 0.15.2, `c = Categorize(**config)`, `x = np.array(values, dtype)`:
    /// (config, elements, x.tobytes().hex(), c.encode(x).tobytes().hex(),
    ///  c.decode(c.encode(x)).tobytes().hex())
    #[test]
    fn matches_numcodecs() {
        let cases = [
            (
                // ["a", "ccc", "bb", "zz", ""]: "zz" is no label
                json!({"labels": ["a", "bb", "ccc"], "dtype": "<U3", "astype": "|u1"}),
                5,
                "6100000000000000000000006300000063000000630000006200000062000000000000007a00\
                 00007a00000000000000000000000000000000000000",
                "0103020000",
                "61000000000000000000000063000000630000006300000062000000620000000000000000\
                 0000000000000000000000000000000000000000000000",
            ),
            (
                // ["é", "x", "yy", "xé"], big-endian: "é" repeated takes the last position,
                // "yyy" is longer than 2 characters
                json!({"labels": ["é", "x", "é", "yyy"], "dtype": ">U2", "astype": "<u2"}),
                4,
                "000000e9000000000000007800000000000000790000007900000078000000e9",
                "0300020000000000",
                "000000e900000000000000780000000000000000000000000000000000000000",
            ),
            (
                // ["", "q😀", "r"]: the empty label matches the empty string
                json!({"labels": ["", "q\u{1F600}"], "dtype": "<U2", "astype": "<i4"}),
                3,
                "00000000000000007100000000f601007200000000000000",
                "010000000200000000000000",
                "00000000000000007100000000f601000000000000000000",
            ),
            (
                // ["b", "a", "c"], codes as floats
                json!({"labels": ["a", "b"], "dtype": "<U1", "astype": "<f4"}),
                3,
                "620000006100000063000000",
                "000000400000803f00000000",
                "620000006100000000000000",
            ),
        ];
        for (config, n, x, enc, dec) in cases {
            let dtype = format!("r{}", hex(x).len() / n * 8);
            let c = array_codec("categorize", config, &dtype, n).unwrap();
            assert_eq!(c.encode(hex(x)).unwrap(), hex(enc));
            assert_eq!(c.decode(hex(enc), Unbounded).unwrap(), hex(dec));
        }
    }

    #[test]
    fn unknown_codes_decode_to_the_empty_string() {
        // numcodecs: Categorize(["a", "b"], "<U1").decode(np.array([0, 3, 2, 255], "u1"))
        let c = array_codec(
            "categorize",
            json!({"labels": ["a", "b"], "dtype": "<U1"}),
            "r32",
            4,
        )
        .unwrap();
        assert_eq!(
            c.decode(hex("000302ff"), Unbounded).unwrap(),
            hex("00000000000000006200000000000000")
        );
    }

    #[test]
    fn bad_configurations_are_errors() {
        let err = |config, dtype| array_codec("categorize", config, dtype, 2).unwrap_err();
        let e = err(json!({"labels": ["a"], "dtype": "<U2"}), "r32");
        assert!(e.to_string().contains("has 8 bytes per element"), "{e}");
        let e = err(json!({"labels": [1], "dtype": "<U1"}), "r32");
        assert_eq!(e.kind, ErrorKind::Unsupported, "{e}");
        let e = err(json!({"labels": ["a"], "dtype": "|O"}), "r32");
        assert!(e.to_string().contains("'|O' is not supported"), "{e}");
        let e = err(json!({"dtype": "<U1"}), "r32");
        assert!(e.to_string().contains("'labels' is required"), "{e}");
    }
}
