//! Reading codec configuration members with clear errors.

use serde_json::{Map, Value};

use super::numcodecs::numeric::{Num, Scalar};
use crate::error::{Error, Result};
pub use crate::members::{members_json, Members};

/// Error if `config` has a member not in `allowed`.
pub fn check_members(codec: &str, config: &Map<String, Value>, allowed: &[&str]) -> Result<()> {
    for key in config.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(Error::metadata(format!(
                "codec '{codec}': unknown member '{key}' in its configuration"
            )));
        }
    }
    Ok(())
}

/// What a configuration member holds, with its allowed values: the one
/// statement of a member's rule, read by the codec's parser and published by
/// the registry (`super::registry`) to the Python layer and the TensorStore
/// options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberType {
    /// An integer within `[min, max]`.
    Int {
        min: i64,
        max: i64,
    },
    Bool,
    /// One of `choices`; `unsupported` are named by the specification but
    /// not implemented (an `Unsupported` error rather than a `Metadata` one).
    Choice {
        choices: &'static [&'static str],
        unsupported: &'static [&'static str],
    },
    /// A permutation of the dimensions (`transpose`'s `order`; `"C"`/`"F"` too).
    Order,
    /// A list of positive integers (a chunk shape).
    Shape,
    /// A codec chain (a list of codecs).
    Chain,
}

/// One member of a codec's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub key: &'static str,
    pub ty: MemberType,
    /// Whether a configuration must give it.
    pub required: bool,
}

impl Member {
    pub const fn int(key: &'static str, min: i64, max: i64) -> Member {
        Member {
            key,
            ty: MemberType::Int { min, max },
            required: false,
        }
    }
    pub const fn bool(key: &'static str) -> Member {
        Member {
            key,
            ty: MemberType::Bool,
            required: false,
        }
    }
    pub const fn choice(key: &'static str, choices: &'static [&'static str]) -> Member {
        Member {
            key,
            ty: MemberType::Choice {
                choices,
                unsupported: &[],
            },
            required: false,
        }
    }
    pub const fn of(key: &'static str, ty: MemberType) -> Member {
        Member {
            key,
            ty,
            required: false,
        }
    }
    pub const fn required(self) -> Member {
        Member {
            required: true,
            ..self
        }
    }

    /// This integer member of `config` (codec `codec`), checked against its range.
    pub fn get_int(&self, codec: &str, config: &Map<String, Value>) -> Result<Option<i64>> {
        let (min, max) = match self.ty {
            MemberType::Int { min, max } => (min, max),
            _ => (i64::MIN, i64::MAX),
        };
        int_member(codec, config, self.key, min, max)
    }

    /// This choice member of `config` as one of its `'static` choices: an
    /// `Unsupported` error for a choice named but not implemented.
    pub fn get_choice(
        &self,
        codec: &str,
        config: &Map<String, Value>,
    ) -> Result<Option<&'static str>> {
        let MemberType::Choice {
            choices,
            unsupported,
        } = self.ty
        else {
            return Ok(None);
        };
        if let Some(s) = config.get(self.key).and_then(Value::as_str) {
            if unsupported.contains(&s) {
                return Err(Error::unsupported(format!(
                    "codec '{codec}': {} '{s}' is not supported",
                    self.key
                )));
            }
        }
        let given = choice_member(codec, config, self.key, choices)?;
        Ok(given.and_then(|c| choices.iter().find(|&&n| n == c).copied()))
    }

    /// The member's description, as JSON (what the Python layer reads).
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("key".into(), self.key.into());
        out.insert("required".into(), self.required.into());
        let ty = match self.ty {
            MemberType::Int { min, max } => {
                out.insert("min".into(), min.into());
                out.insert("max".into(), max.into());
                "int"
            }
            MemberType::Bool => "bool",
            MemberType::Choice {
                choices,
                unsupported,
            } => {
                out.insert("choices".into(), choices.into());
                out.insert("unsupported".into(), unsupported.into());
                "choice"
            }
            MemberType::Order => "order",
            MemberType::Shape => "shape",
            MemberType::Chain => "chain",
        };
        out.insert("type".into(), ty.into());
        Value::Object(out)
    }
}

/// The keys of `members`, in their order.
pub fn keys(members: &[Member]) -> Vec<&'static str> {
    members.iter().map(|m| m.key).collect()
}

/// An optional integer member within `[min, max]`.
pub fn int_member(
    codec: &str,
    config: &Map<String, Value>,
    key: &str,
    min: i64,
    max: i64,
) -> Result<Option<i64>> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            let n = v.as_i64().ok_or_else(|| {
                Error::metadata(format!(
                    "codec '{codec}': '{key}' must be an integer, got {v}"
                ))
            })?;
            if n < min || n > max {
                return Err(Error::metadata(format!(
                    "codec '{codec}': '{key}' must be an integer from {min} to {max}, got {n}"
                )));
            }
            Ok(Some(n))
        }
    }
}

/// One scalar of a numeric data type in a codec's core configuration (what the
/// Python metadata layer hands the core after parsing the stored JSON the way
/// zarr-python does): integers as JSON integers, floats as the hex string of
/// their bits (`"0x3c00"` for float16 1.0, `2 * size` digits). Returns the
/// element's native-order bytes.
pub(crate) fn core_scalar(codec: &str, what: &str, value: &Value, num: Num) -> Result<Vec<u8>> {
    let bad = || {
        Error::metadata(format!(
            "codec '{codec}': {what} must be a {} scalar (an integer, or a float's bits as \
             \"0x...\"), got {value}",
            num.name()
        ))
    };
    let mut out = vec![0u8; num.size()];
    if num.is_int() {
        let v = match value {
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .ok_or_else(bad)?,
            _ => return Err(bad()),
        };
        let (lo, hi) = num.int_range();
        if !(lo..=hi).contains(&v) {
            return Err(Error::metadata(format!(
                "codec '{codec}': {what} {v} is out of range for {} [{lo}, {hi}]",
                num.name()
            )));
        }
        num.store(Scalar::Int(v), &mut out);
        return Ok(out);
    }
    if !num.is_float() {
        return Err(bad());
    }
    let digits = value
        .as_str()
        .and_then(|s| s.strip_prefix("0x"))
        .filter(|d| d.len() == 2 * num.size())
        .ok_or_else(bad)?;
    let bits = u64::from_str_radix(digits, 16).map_err(|_| bad())?;
    match num.size() {
        2 => out.copy_from_slice(&(bits as u16).to_ne_bytes()),
        4 => out.copy_from_slice(&(bits as u32).to_ne_bytes()),
        _ => out.copy_from_slice(&bits.to_ne_bytes()),
    }
    Ok(out)
}

/// An optional boolean member.
pub fn bool_member(codec: &str, config: &Map<String, Value>, key: &str) -> Result<Option<bool>> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => Err(Error::metadata(format!(
            "codec '{codec}': '{key}' must be a boolean, got {v}"
        ))),
    }
}

/// An optional string member that must be one of `choices`.
pub fn choice_member<'a>(
    codec: &str,
    config: &'a Map<String, Value>,
    key: &str,
    choices: &[&str],
) -> Result<Option<&'a str>> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if choices.contains(&s.as_str()) => Ok(Some(s)),
        Some(v) => Err(Error::metadata(format!(
            "codec '{codec}': '{key}' must be one of {choices:?}, got {v}"
        ))),
    }
}
