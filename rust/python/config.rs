//! PyO3 bindings of the codec and chunk key encoding configurations: the
//! Python metadata layer asks the Rust codecs for their members, allowed values
//! and defaults rather than restating them. JSON text crosses the boundary so
//! that member order (zarr-python's) is kept.

use pyo3::prelude::*;
use serde_json::{Map, Value};

use super::to_py_err;
use crate::codec::complete::{complete_config, numcodecs_members as members_of};
use crate::codec::config::members_json;
use crate::error::{Error, Result};
use crate::grid::ChunkKeyEncoding;

fn parse(text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::metadata(format!("invalid JSON: {e}")))
}

/// The complete configuration (JSON) of one codec (JSON: `{"name",
/// "configuration"}` or a name) for chunks of `item_size`-byte elements:
/// members checked, defaults filled in, in zarr-python's order.
#[pyfunction]
fn codec_configuration(codec: &str, item_size: usize) -> PyResult<String> {
    parse(codec)
        .and_then(|c| complete_config(&c, item_size))
        .map(|members| members_json(&members))
        .map_err(to_py_err)
}

/// The members numcodecs' `get_config()` gives for codec `id` (in its order,
/// without `"id"`), or `None` for a codec whose configuration the core does
/// not complete.
#[pyfunction]
fn numcodecs_members(id: &str) -> Option<Vec<&'static str>> {
    members_of(id).map(<[&str]>::to_vec)
}

/// The codec registry (JSON): per codec its name, kind, members (types,
/// ranges), numcodecs members and v2 id, nullable members, whether its
/// encoded size is fixed, how zarr-python writes it, TensorStore's members.
#[pyfunction]
fn codec_registry() -> String {
    crate::codec::registry::registry_json().to_string()
}

/// Python integers as `T`, or `None` where one is not (negative, too large).
fn ints<T: for<'a, 'py> FromPyObject<'a, 'py>>(values: &[Bound<'_, PyAny>]) -> Option<Vec<T>> {
    values.iter().map(|v| v.extract().ok()).collect()
}

/// The inner chunks per shard along each dimension, or None unless the inner
/// chunk shape has the shard's dimensions and divides it (the sharding
/// codec's rule).
#[pyfunction]
fn chunks_per_shard(
    shard_shape: Vec<Bound<'_, PyAny>>,
    inner_shape: Vec<Bound<'_, PyAny>>,
) -> Option<Vec<u128>> {
    crate::codec::array_to_bytes::sharding::chunks_per_shard(
        &ints(&shard_shape)?,
        &ints(&inner_shape)?,
    )
}

/// The complete v3 `chunk_key_encoding` (JSON) of a name and configuration
/// (JSON object): `{"name", "configuration": {"separator"}}`.
#[pyfunction]
fn chunk_key_encoding(name: &str, configuration: &str) -> PyResult<String> {
    let document = parse(configuration).and_then(|c| {
        let config: Map<String, Value> = match c {
            Value::Object(m) => m,
            other => {
                return Err(Error::metadata(format!(
                    "chunk_key_encoding.configuration: must be an object, got {other}"
                )))
            }
        };
        ChunkKeyEncoding::from_document(name, &config)
    });
    let members = document.map_err(to_py_err)?.document().unwrap_or_default();
    Ok(members_json(&members))
}

/// Add these functions to the `_core` module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(codec_configuration, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_key_encoding, m)?)?;
    m.add_function(wrap_pyfunction!(numcodecs_members, m)?)?;
    m.add_function(wrap_pyfunction!(codec_registry, m)?)?;
    m.add_function(wrap_pyfunction!(chunks_per_shard, m)?)?;
    Ok(())
}
