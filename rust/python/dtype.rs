//! PyO3 bindings of the core's data types: the Python data-type model asks the
//! core for the size it gives a data type rather than restating its table, so
//! that the two cannot drift (tests/test_dtypes_model.py compares them with
//! numpy's item sizes for every data type the Python registry knows).

use pyo3::prelude::*;
use serde_json::Value;

use super::to_py_err;
use crate::dtype::{DataType, FloatFormat};
use crate::error::Error;

/// The size in bytes of one element of a data type as the core takes it
/// (JSON: a core name such as `"int16"` or `"r24"`, or a fixed-size descriptor
/// `{"size", "swap", "floats"}`); 0 for the variable-length `string` and
/// `bytes`. Invalid or unknown types raise the core's errors.
#[pyfunction]
fn data_type_size(core_json: &str) -> PyResult<usize> {
    let value: Value = serde_json::from_str(core_json)
        .map_err(|e| to_py_err(Error::metadata(format!("invalid JSON: {e}"))))?;
    DataType::from_json(&value)
        .map(|dt| dt.size)
        .map_err(to_py_err)
}

/// The size in bytes of a float format the core compares NaN-aware in fill
/// values (a descriptor's `"floats"`: `float16`, `bfloat16`, `float32`,
/// `float64`).
#[pyfunction]
fn float_format_size(name: &str) -> PyResult<usize> {
    FloatFormat::from_name(name)
        .map(FloatFormat::size)
        .map_err(to_py_err)
}

/// Add these functions to the `_core` module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(data_type_size, m)?)?;
    m.add_function(wrap_pyfunction!(float_format_size, m)?)?;
    Ok(())
}
