//! Reading codec configuration members with clear errors.

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// Error if `config` has a member not in `allowed`.
pub fn check_members(codec: &str, config: &Map<String, Value>, allowed: &[&str]) -> Result<()> {
    for key in config.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(Error::metadata(format!(
                "codec '{codec}': unknown configuration member '{key}'"
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
                    "codec '{codec}': '{key}' must be in [{min}, {max}], got {n}"
                )));
            }
            Ok(Some(n))
        }
    }
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
