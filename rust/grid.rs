//! The regular chunk grid and chunk key encodings.

use serde_json::Value;

use crate::error::{Error, Result};

/// How chunk grid coordinates become store keys (v3 `chunk_key_encoding`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkKeyEncoding {
    /// `c/1/2` (or `c.1.2`); `c` for 0-d arrays.
    Default { separator: char },
    /// `1.2` (or `1/2`); `0` for 0-d arrays, as Zarr v2 does.
    V2 { separator: char },
    /// `c1/2` (or `c1.2`): the 2022 draft v3 layout, `c` joined to the first
    /// index; a 0-d array's chunk is `c` (the draft) or `c0` (what zarr-python
    /// 2.x wrote).
    DraftV3 { separator: char, zero_d_c0: bool },
}

impl ChunkKeyEncoding {
    /// Parse `{"name": "default"|"v2", "separator": "/"|"."}` (the core JSON form).
    pub fn from_json(v: &Value) -> Result<Self> {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::metadata("chunk_key_encoding needs a name"))?;
        let sep = match v.get("separator") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s == "/" => Some('/'),
            Some(Value::String(s)) if s == "." => Some('.'),
            Some(other) => {
                return Err(Error::metadata(format!(
                    "chunk_key_encoding separator must be '/' or '.', got {other}"
                )))
            }
        };
        match name {
            "default" => Ok(ChunkKeyEncoding::Default {
                separator: sep.unwrap_or('/'),
            }),
            "v2" => Ok(ChunkKeyEncoding::V2 {
                separator: sep.unwrap_or('.'),
            }),
            "draft_v3" => Ok(ChunkKeyEncoding::DraftV3 {
                separator: sep.unwrap_or('/'),
                zero_d_c0: match v.get("zero_d_key").and_then(Value::as_str) {
                    None | Some("c") => false,
                    Some("c0") => true,
                    Some(other) => {
                        return Err(Error::metadata(format!(
                            "draft_v3 zero_d_key must be 'c' or 'c0', got '{other}'"
                        )))
                    }
                },
            }),
            other => Err(Error::unsupported(format!(
                "unknown chunk_key_encoding '{other}'"
            ))),
        }
    }

    /// The key of the chunk at `coords`, relative to the array's node.
    pub fn encode(&self, coords: &[u64]) -> String {
        let (prefix, sep) = match self {
            ChunkKeyEncoding::Default { separator } => (Some("c"), *separator),
            ChunkKeyEncoding::V2 { separator } => (None, *separator),
            ChunkKeyEncoding::DraftV3 {
                separator,
                zero_d_c0,
            } => {
                if coords.is_empty() {
                    return if *zero_d_c0 { "c0" } else { "c" }.to_string();
                }
                let parts: Vec<String> = coords.iter().map(u64::to_string).collect();
                return format!("c{}", parts.join(&separator.to_string()));
            }
        };
        let mut key = String::with_capacity(2 + coords.len() * 4);
        if let Some(p) = prefix {
            key.push_str(p);
        } else if coords.is_empty() {
            key.push('0');
        }
        for (i, c) in coords.iter().enumerate() {
            if prefix.is_some() || i > 0 {
                key.push(sep);
            }
            key.push_str(&c.to_string());
        }
        key
    }
}

impl ChunkKeyEncoding {
    /// The grid coordinates a chunk key (relative to the array's node) names,
    /// or `None` if it is not a chunk key of an array of `ndim` dimensions.
    pub fn decode(&self, key: &str, ndim: usize) -> Option<Vec<u64>> {
        let (rest, sep) = match self {
            ChunkKeyEncoding::Default { separator } => {
                if key == "c" {
                    return (ndim == 0).then(Vec::new);
                }
                (key.strip_prefix('c')?.strip_prefix(*separator)?, *separator)
            }
            ChunkKeyEncoding::V2 { separator } => {
                if ndim == 0 {
                    return (key == "0").then(Vec::new);
                }
                (key, *separator)
            }
            ChunkKeyEncoding::DraftV3 {
                separator,
                zero_d_c0,
            } => {
                if ndim == 0 {
                    return (key == if *zero_d_c0 { "c0" } else { "c" }).then(Vec::new);
                }
                (key.strip_prefix('c')?, *separator)
            }
        };
        if ndim == 0 {
            return None;
        }
        let coords: Vec<u64> = rest
            .split(sep)
            .map(|p| {
                (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| p.parse().ok())
                    .flatten()
            })
            .collect::<Option<_>>()?;
        (coords.len() == ndim).then_some(coords)
    }
}

/// Number of chunks along each dimension of a regular grid (none along a
/// dimension whose chunk extent is 0, which metadata validation refuses).
pub fn grid_shape(shape: &[u64], chunk_shape: &[usize]) -> Vec<u64> {
    shape
        .iter()
        .zip(chunk_shape)
        .map(|(&s, &c)| if c == 0 { 0 } else { s.div_ceil(c as u64) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys() {
        let d = ChunkKeyEncoding::from_json(&json!({"name": "default"})).unwrap();
        assert_eq!(d.encode(&[1, 23, 0]), "c/1/23/0");
        assert_eq!(d.encode(&[]), "c");
        let d = ChunkKeyEncoding::from_json(&json!({"name": "default", "separator": "."})).unwrap();
        assert_eq!(d.encode(&[4, 5]), "c.4.5");
        let v = ChunkKeyEncoding::from_json(&json!({"name": "v2"})).unwrap();
        assert_eq!(v.encode(&[4, 5]), "4.5");
        assert_eq!(v.encode(&[]), "0");
        let v = ChunkKeyEncoding::from_json(&json!({"name": "v2", "separator": "/"})).unwrap();
        assert_eq!(v.encode(&[4, 5]), "4/5");
        assert!(ChunkKeyEncoding::from_json(&json!({"name": "v2", "separator": "-"})).is_err());
        assert!(ChunkKeyEncoding::from_json(&json!({"name": "x"})).is_err());
    }

    #[test]
    fn keys_decode() {
        let d = ChunkKeyEncoding::Default { separator: '/' };
        assert_eq!(d.decode("c/1/23/0", 3), Some(vec![1, 23, 0]));
        assert_eq!(d.decode("c/1/23", 3), None);
        assert_eq!(d.decode("zarr.json", 1), None);
        assert_eq!(d.decode("c", 0), Some(vec![]));
        assert_eq!(d.decode("c/x", 1), None);
        assert_eq!(d.decode("c/-1", 1), None);
        let draft = ChunkKeyEncoding::from_json(&json!({"name": "draft_v3"})).unwrap();
        assert_eq!(draft.encode(&[1, 0]), "c1/0");
        assert_eq!(draft.encode(&[]), "c");
        assert_eq!(draft.decode("c1/0", 2), Some(vec![1, 0]));
        assert_eq!(draft.decode("c/1/0", 2), None);
        let zarr2 =
            ChunkKeyEncoding::from_json(&json!({"name": "draft_v3", "zero_d_key": "c0"})).unwrap();
        assert_eq!(
            (zarr2.encode(&[]), zarr2.decode("c0", 0)),
            ("c0".into(), Some(vec![]))
        );
        assert_eq!(zarr2.encode(&[2, 3]), "c2/3");
        assert!(
            ChunkKeyEncoding::from_json(&json!({"name": "draft_v3", "zero_d_key": "x"})).is_err()
        );
        let v = ChunkKeyEncoding::V2 { separator: '.' };
        assert_eq!(v.decode("4.5", 2), Some(vec![4, 5]));
        assert_eq!(v.decode(".zarray", 2), None);
        assert_eq!(v.decode("0", 0), Some(vec![]));
        for coords in [vec![0u64, 7, 12], vec![3, 0, 0]] {
            for enc in [
                d.clone(),
                v.clone(),
                ChunkKeyEncoding::V2 { separator: '/' },
            ] {
                assert_eq!(enc.decode(&enc.encode(&coords), 3), Some(coords.clone()));
            }
        }
    }

    #[test]
    fn grid() {
        assert_eq!(grid_shape(&[10, 0, 7], &[3, 4, 7]), vec![4, 0, 1]);
        assert_eq!(grid_shape(&[u64::MAX, 5], &[2, 0]), vec![1 << 63, 0]);
    }
}
