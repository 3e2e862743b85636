//! JSON between Python objects and `serde_json` values, for what the core
//! parses and writes as JSON (TensorStore-style specs).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use super::to_py_err;
use crate::error::Error;

/// How deep a JSON value may nest: serde_json's own limit when it parses
/// text. A Python object may nest deeper (or contain itself); converting it
/// recursively would overflow the stack, so past this depth it is an error.
const MAX_DEPTH: usize = 128;

/// A Python JSON value (dicts, lists, tuples, strings, numbers, booleans,
/// None; numpy scalars and arrays as their Python values) as a serde value.
/// Values nested deeper than [`MAX_DEPTH`] (and self-containing ones) raise.
pub(super) fn to_value(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<Value> {
    nested_value(obj, at, 0)
}

/// An error where `depth` is past [`MAX_DEPTH`].
pub(super) fn check_depth(at: &str, depth: usize) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Err(to_py_err(Error::spec(format!(
            "{at}: JSON nested more than {MAX_DEPTH} levels deep"
        ))));
    }
    Ok(())
}

fn nested_value(obj: &Bound<'_, PyAny>, at: &str, depth: usize) -> PyResult<Value> {
    check_depth(at, depth)?;
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if obj.is_instance_of::<PyBool>() || obj.get_type().name()? == "bool" {
        return Ok(Value::Bool(obj.is_truthy()?));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_string()));
    }
    if obj.is_instance_of::<PyFloat>() {
        let v: f64 = obj.extract()?;
        return Ok(Number::from_f64(v).map_or(Value::Null, Value::Number));
    }
    if obj.is_instance_of::<PyInt>() || obj.hasattr("__index__")? {
        if let Ok(v) = obj.extract::<i64>() {
            return Ok(Value::from(v));
        }
        if let Ok(v) = obj.extract::<u64>() {
            return Ok(Value::from(v));
        }
        // past 64 bits: a number no member accepts
        return Ok(Number::from_f64(f64::MAX).map_or(Value::Null, Value::Number));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut out = Map::new();
        for (k, v) in d.iter() {
            let key = k.cast::<PyString>().map_err(|_| {
                to_py_err(Error::spec(format!(
                    "{at}: a JSON object's keys are strings, got {}",
                    k.repr().map(|r| r.to_string()).unwrap_or_default()
                )))
            })?;
            out.insert(key.to_str()?.to_string(), nested_value(&v, at, depth + 1)?);
        }
        return Ok(Value::Object(out));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj.try_iter()?;
        return items
            .map(|item| nested_value(&item?, at, depth + 1))
            .collect::<PyResult<Vec<_>>>()
            .map(Value::Array);
    }
    if obj.hasattr("tolist")? {
        return nested_value(&obj.call_method0("tolist")?, at, depth + 1);
    }
    Err(to_py_err(Error::spec(format!(
        "{at}: expected JSON, got {}",
        obj.repr()?
    ))))
}

/// A serde value as a Python object.
pub(super) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.into_pyobject(py)?.into_any(),
            None => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|v| to_py(py, v))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(map) => {
            let d = PyDict::new(py);
            for (k, v) in map {
                d.set_item(k, to_py(py, v)?)?;
            }
            d.into_any()
        }
    })
}

/// What `__reduce__` gives for an immutable class rebuilt from its JSON:
/// `cls.from_json(json)`.
pub(super) type FromJson<'py> = (Bound<'py, PyAny>, (Bound<'py, PyAny>,));

/// `__reduce__` of `slf`, whose JSON is `json`, rebuilt by its class's
/// `from_json`.
pub(super) fn rebuilt_from_json<'py, T: pyo3::PyClass>(
    slf: &Bound<'py, T>,
    json: Bound<'py, PyAny>,
) -> PyResult<FromJson<'py>> {
    Ok((slf.as_any().get_type().getattr("from_json")?, (json,)))
}
