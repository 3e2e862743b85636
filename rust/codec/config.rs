//! Reading codec configuration members with clear errors.

use serde_json::{Map, Value};

use super::numcodecs::numeric::{Num, Scalar};
use crate::error::{Error, Result};

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

/// A complete codec configuration: its members in the order zarr-python writes
/// them (`serde_json::Map` sorts its keys).
pub type Members = Vec<(&'static str, Value)>;

/// `members` as a JSON object, in their order.
pub fn members_json(members: &[(&str, Value)]) -> String {
    let items: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{v}", Value::from(*k)))
        .collect();
    format!("{{{}}}", items.join(","))
}
