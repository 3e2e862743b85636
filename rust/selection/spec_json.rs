//! The members of TensorStore-style JSON specs, checked with errors that name
//! the member (`"transform.output[1].stride: expected an integer, got ..."`),
//! raised as `zarrox.errors.SpecError`.

use std::fmt;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A spec error at member `at` (`"spec"` at the top).
pub fn fail(at: &str, message: impl fmt::Display) -> Error {
    Error::spec(format!(
        "{}: {message}",
        if at.is_empty() { "spec" } else { at }
    ))
}

/// The path of member `name` of the value at `at`.
pub fn member(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_string()
    } else {
        format!("{at}.{name}")
    }
}

/// The value at `at`, a JSON object.
pub fn object<'a>(value: &'a Value, at: &str) -> Result<&'a Map<String, Value>> {
    value
        .as_object()
        .ok_or_else(|| fail(at, format!("expected a JSON object, got {value}")))
}

/// The value at `at`, a JSON array.
pub fn array<'a>(value: &'a Value, at: &str) -> Result<&'a Vec<Value>> {
    value
        .as_array()
        .ok_or_else(|| fail(at, format!("expected a JSON array, got {value}")))
}

/// The value at `at`, an integer in `[lo, hi]`.
pub fn integer(value: &Value, at: &str, lo: i64, hi: i64) -> Result<i64> {
    let Some(n) = value.as_number().filter(|n| !n.is_f64()) else {
        return Err(fail(at, format!("expected an integer, got {value}")));
    };
    match n.as_i64().filter(|v| (lo..=hi).contains(v)) {
        Some(v) => Ok(v),
        None => {
            // no bound is written as TensorStore's infinities
            let lo = if lo == i64::MIN {
                "-inf".into()
            } else {
                lo.to_string()
            };
            let hi = if hi == i64::MAX {
                "+inf".into()
            } else {
                hi.to_string()
            };
            Err(fail(
                at,
                format!("expected an integer in the range [{lo}, {hi}], got {n}"),
            ))
        }
    }
}

/// Fail on members of `obj` not in `allowed` (TensorStore rejects them).
pub fn check_members(obj: &Map<String, Value>, allowed: &[String], at: &str) -> Result<()> {
    let extra: Vec<String> = obj
        .keys()
        .filter(|k| !allowed.contains(k))
        .map(|k| format!("'{k}'"))
        .collect();
    if extra.is_empty() {
        return Ok(());
    }
    let allowed: Vec<String> = allowed.iter().map(|k| format!("'{k}'")).collect();
    Err(fail(
        at,
        format!(
            "unknown member(s) {}; expected only [{}]",
            extra.join(", "),
            allowed.join(", ")
        ),
    ))
}

/// The value at `at`, a non-negative number (an integer or a float).
pub fn non_negative_number(value: &Value, at: &str) -> Result<f64> {
    match value.as_f64() {
        Some(v) if v >= 0.0 => Ok(v),
        _ => Err(fail(
            at,
            format!("expected a non-negative number, got {value}"),
        )),
    }
}
