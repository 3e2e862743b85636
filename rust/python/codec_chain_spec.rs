//! TensorStore's partial zarr v3 codec chains from Python: `CodecChainSpec`
//! (see `codec/chain_spec.rs`), immutable, with its JSON form as Python
//! objects, and the stored codecs as TensorStore reports them.

use pyo3::prelude::*;

use super::json::{rebuilt_from_json, to_py, to_value, FromJson};
use super::to_py_err;
use crate::codec::chain_spec::{with_index_location, ChainSpec, Chunks};

/// A decoded layout as Python takes it: (storage order of elements, read
/// chunk shape, whether read chunks are whole chunks).
type Layout = (Option<Vec<usize>>, Option<Vec<u64>>, bool);

/// A partial codec chain (`metadata.codecs`, `schema.codec.codecs`).
#[pyclass(
    module = "zarrox._core",
    name = "CodecChainSpec",
    frozen,
    eq,
    from_py_object
)]
#[derive(Clone, PartialEq, Default)]
pub struct PyCodecChainSpec(ChainSpec);

#[pymethods]
impl PyCodecChainSpec {
    /// The empty chain.
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// The chain `value` at `at`; `complete` (stored metadata) requires its
    /// array -> bytes codec.
    #[staticmethod]
    #[pyo3(signature = (value, at="codecs", complete=false))]
    fn from_json(value: &Bound<'_, PyAny>, at: &str, complete: bool) -> PyResult<Self> {
        ChainSpec::parse(&to_value(value, at)?, at, complete)
            .map(PyCodecChainSpec)
            .map_err(to_py_err)
    }

    /// The chain of the schema's `codec` member (`{"driver", "codecs"}`) of
    /// the schema at `at`; None when it gives none.
    #[staticmethod]
    #[pyo3(signature = (codec, at="schema"))]
    fn from_schema_codec(codec: Option<&Bound<'_, PyAny>>, at: &str) -> PyResult<Option<Self>> {
        let Some(codec) = codec else {
            return Ok(None);
        };
        let chain = ChainSpec::from_schema_codec(&to_value(codec, at)?, at).map_err(to_py_err)?;
        Ok(chain.map(PyCodecChainSpec))
    }

    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.0.to_json())
    }

    /// Whether the array -> bytes codec is `sharding_indexed`.
    #[getter]
    fn has_sharding(&self) -> bool {
        self.0.sharding().is_some()
    }

    /// The chain both describe (a SpecMismatchError where they differ):
    /// `strict` (opening) matches codecs one to one, otherwise a chain may
    /// describe the inner chunks of the other's sharding codec.
    #[pyo3(signature = (other, at, strict, rank=None))]
    fn merge(&self, other: &Self, at: &str, strict: bool, rank: Option<usize>) -> PyResult<Self> {
        self.0
            .merge(&other.0, at, strict, rank)
            .map(PyCodecChainSpec)
            .map_err(to_py_err)
    }

    /// What the chain says of the chunks it decodes for `rank` dimensions:
    /// (storage order of elements, read chunk shape, whether read chunks are
    /// whole chunks).
    fn decoded_layout(&self, rank: usize) -> PyResult<Layout> {
        let layout = self.0.decoded_layout(rank).map_err(to_py_err)?;
        Ok((
            layout.inner_order,
            layout.read_chunk_shape,
            layout.read_is_whole_chunk,
        ))
    }

    /// The `codecs` TensorStore writes for a new array of chunks of
    /// `chunk_shape` and `item_size`-byte elements, read in chunks of
    /// `read_chunk_shape` (sharding added where they differ), its elements
    /// stored in `inner_order`.
    #[pyo3(signature = (item_size, chunk_shape, read_chunk_shape, inner_order=None))]
    fn resolve_new<'py>(
        &self,
        py: Python<'py>,
        item_size: usize,
        chunk_shape: Vec<u64>,
        read_chunk_shape: Vec<u64>,
        inner_order: Option<Vec<usize>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let chunks = Chunks {
            item_size,
            shape: &chunk_shape,
            inner_order: inner_order.as_deref(),
            read_shape: Some(&read_chunk_shape),
        };
        let codecs = self.0.resolve_new(chunks).map_err(to_py_err)?;
        to_py(py, &serde_json::Value::from(codecs))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<FromJson<'py>> {
        rebuilt_from_json(slf, slf.get().to_json(slf.py())?)
    }

    fn __repr__(&self) -> String {
        format!("CodecChainSpec({})", self.0.to_json())
    }
}

/// Stored `codecs` as TensorStore reports them in a schema: a sharding codec
/// states its (default) `index_location`.
#[pyfunction]
fn codecs_with_index_location<'py>(
    py: Python<'py>,
    codecs: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    to_py(py, &with_index_location(&to_value(codecs, "codecs")?))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCodecChainSpec>()?;
    m.add_function(wrap_pyfunction!(codecs_with_index_location, m)?)?;
    Ok(())
}
