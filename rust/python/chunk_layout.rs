//! TensorStore's chunk layout from Python: `ChunkGrid` and `ChunkLayout`
//! (see `selection/chunk_layout.rs`), immutable, with their JSON forms as
//! Python objects and the chunk shapes a new array gets.

use pyo3::prelude::*;
use serde_json::{Map, Value};

use super::json::{rebuilt_from_json, to_py, to_value, FromJson};
use super::to_py_err;
use crate::selection::chunk_layout::{ChunkLayout, Grid, Vector};

fn values<T: Clone>(v: &Option<Vector<T>>) -> Option<Vec<T>> {
    v.as_ref().map(|v| v.values.clone())
}

fn hard<T>(v: &Option<Vector<T>>) -> Option<Vec<bool>> {
    v.as_ref().map(|v| v.hard.clone())
}

/// A JSON object with `extra` members added.
fn with_members(mut obj: Map<String, Value>, extra: &[(&str, Value)]) -> Value {
    for (k, v) in extra {
        obj.insert(k.to_string(), v.clone());
    }
    Value::Object(obj)
}

// ---------------------------------------------------------------------------
// ChunkGrid
// ---------------------------------------------------------------------------

/// Constraints on one kind of chunk: `shape[i]` 0 is unconstrained, -1 the
/// whole extent of the domain; `aspect_ratio[i]` 0 is unconstrained.
#[pyclass(
    module = "zarrox._core",
    name = "ChunkGrid",
    frozen,
    eq,
    from_py_object
)]
#[derive(Clone, PartialEq)]
pub struct PyChunkGrid(Grid);

#[pymethods]
impl PyChunkGrid {
    #[staticmethod]
    #[pyo3(signature = (value, at="grid"))]
    fn from_json(value: &Bound<'_, PyAny>, at: &str) -> PyResult<Self> {
        Grid::from_json(&to_value(value, at)?, at)
            .map(PyChunkGrid)
            .map_err(to_py_err)
    }

    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &Value::Object(self.0.to_json()))
    }

    #[getter]
    fn shape(&self) -> Option<Vec<i64>> {
        values(&self.0.shape)
    }

    #[getter]
    fn shape_hard(&self) -> Option<Vec<bool>> {
        hard(&self.0.shape)
    }

    #[getter]
    fn aspect_ratio(&self) -> Option<Vec<f64>> {
        values(&self.0.aspect_ratio)
    }

    #[getter]
    fn aspect_ratio_hard(&self) -> Option<Vec<bool>> {
        hard(&self.0.aspect_ratio)
    }

    #[getter]
    fn elements(&self) -> Option<i64> {
        self.0.elements
    }

    #[getter]
    fn elements_hard(&self) -> bool {
        self.0.elements_hard
    }

    /// Whether no constraint is given.
    #[getter]
    fn empty(&self) -> bool {
        self.0 == Grid::default()
    }

    /// The hard-constrained sizes (0 where a dimension is soft or
    /// unconstrained), None without a shape.
    fn hard_shape(&self) -> Option<Vec<i64>> {
        self.0.hard_shape()
    }

    fn __repr__(&self) -> String {
        format!("ChunkGrid({})", Value::Object(self.0.to_json()))
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<FromJson<'py>> {
        rebuilt_from_json(slf, slf.get().to_json(slf.py())?)
    }
}

// ---------------------------------------------------------------------------
// ChunkLayout
// ---------------------------------------------------------------------------

/// TensorStore's `ChunkLayout` constraints. Each operation returns a new
/// layout.
#[pyclass(
    module = "zarrox._core",
    name = "ChunkLayout",
    frozen,
    eq,
    from_py_object
)]
#[derive(Clone, PartialEq)]
pub struct PyChunkLayout(ChunkLayout);

fn wrap(layout: crate::error::Result<ChunkLayout>) -> PyResult<PyChunkLayout> {
    layout.map(PyChunkLayout).map_err(to_py_err)
}

#[pymethods]
impl PyChunkLayout {
    /// A layout of hard constraints (zarr metadata's), each if given.
    #[new]
    #[pyo3(signature = (rank=None, *, grid_origin=None, inner_order=None, write_chunk_shape=None, read_chunk_shape=None))]
    fn new(
        rank: Option<usize>,
        grid_origin: Option<Vec<i64>>,
        inner_order: Option<Vec<i64>>,
        write_chunk_shape: Option<Vec<i64>>,
        read_chunk_shape: Option<Vec<i64>>,
    ) -> PyResult<Self> {
        wrap(ChunkLayout::hard(
            rank,
            grid_origin,
            inner_order,
            write_chunk_shape,
            read_chunk_shape,
        ))
    }

    #[staticmethod]
    #[pyo3(signature = (value, at="chunk_layout"))]
    fn from_json(value: &Bound<'_, PyAny>, at: &str) -> PyResult<Self> {
        wrap(ChunkLayout::from_json(&to_value(value, at)?, at))
    }

    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &Value::Object(self.0.to_json()))
    }

    /// This layout with `other`'s constraints merged in.
    #[pyo3(signature = (other, at="chunk_layout"))]
    fn merge(&self, other: &PyChunkLayout, at: &str) -> PyResult<Self> {
        wrap(self.0.merge(&other.0, at))
    }

    /// The layout in the coordinates of the array under a view: dimension
    /// `k` of the view is dimension `perm[k]` of the array, whose coordinates
    /// are the view's plus `offsets`.
    #[pyo3(signature = (perm, offsets, at="chunk_layout"))]
    fn permuted(&self, perm: Vec<usize>, offsets: Vec<i64>, at: &str) -> PyResult<Self> {
        wrap(self.0.permuted(&perm, &offsets, at))
    }

    /// (read chunk shape, write chunk shape) for a new array of
    /// `domain_shape`; with `read_is_write` the read chunks take the write
    /// chunks' shape where they have none.
    #[pyo3(signature = (domain_shape, read_is_write=false))]
    fn choose_read_write_chunk_shapes(
        &self,
        domain_shape: Vec<i64>,
        read_is_write: bool,
    ) -> PyResult<(Vec<i64>, Vec<i64>)> {
        (self.0)
            .choose_read_write_chunk_shapes(&domain_shape, read_is_write, "chunk_layout")
            .map_err(to_py_err)
    }

    /// One chunk shape that serves as both read and write chunk (zarr v2).
    fn choose_chunk_shape(&self, domain_shape: Vec<i64>) -> PyResult<Vec<i64>> {
        self.0.choose_chunk_shape(&domain_shape).map_err(to_py_err)
    }

    #[getter]
    fn rank(&self) -> Option<usize> {
        self.0.rank
    }

    /// The grid origin, None where a dimension has none.
    #[getter]
    fn grid_origin(&self) -> Option<Vec<Option<i64>>> {
        values(&self.0.grid_origin)
    }

    #[getter]
    fn grid_origin_hard(&self) -> Option<Vec<bool>> {
        hard(&self.0.grid_origin)
    }

    #[getter]
    fn inner_order(&self) -> Option<Vec<usize>> {
        self.0.inner_order.clone()
    }

    #[getter]
    fn inner_order_hard(&self) -> bool {
        self.0.inner_order_hard
    }

    #[getter]
    fn write_chunk(&self) -> PyChunkGrid {
        PyChunkGrid(self.0.write_chunk.clone())
    }

    #[getter]
    fn read_chunk(&self) -> PyChunkGrid {
        PyChunkGrid(self.0.read_chunk.clone())
    }

    #[getter]
    fn codec_chunk(&self) -> PyChunkGrid {
        PyChunkGrid(self.0.codec_chunk.clone())
    }

    fn __repr__(&self) -> String {
        format!("ChunkLayout({})", Value::Object(self.0.to_json()))
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    /// Rebuilt from its JSON with its rank (which the JSON leaves out where
    /// other members imply it).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<FromJson<'py>> {
        let layout = &slf.get().0;
        let rank: Vec<(&str, Value)> = layout
            .rank
            .map(|r| ("rank", Value::from(r)))
            .into_iter()
            .collect();
        rebuilt_from_json(
            slf,
            to_py(slf.py(), &with_members(layout.to_json(), &rank))?,
        )
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyChunkGrid>()?;
    m.add_class::<PyChunkLayout>()?;
    Ok(())
}
