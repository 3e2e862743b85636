//! The rectilinear chunk grid from Python: `RectilinearGrid`, immutable, the
//! core's per-dimension edges (`grid::DimGrid`) with their `zarr.json` form and
//! the answers the metadata layer and arrays ask of it.

use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde_json::Value;

use super::json::{to_py, to_value};
use super::to_py_err;
use crate::error::{Error, Result};
use crate::grid::{ChunkGrid, DimGrid};

/// A rectilinear chunk grid (the `rectilinear` chunk grid extension of Zarr
/// v3): per dimension a step, or explicit edges kept as runs so that a
/// dimension of many equal chunks never expands.
#[pyclass(module = "zarrox._core", name = "RectilinearGrid", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyRectilinearGrid(Vec<DimGrid>);

impl PyRectilinearGrid {
    fn dim(&self, d: usize) -> PyResult<&DimGrid> {
        self.0.get(d).ok_or_else(|| {
            PyIndexError::new_err(format!("dimension {d} of a {}-d grid", self.0.len()))
        })
    }

    fn runs_json(&self) -> Value {
        self.0.iter().map(DimGrid::runs_json).collect()
    }
}

#[pymethods]
impl PyRectilinearGrid {
    /// Per dimension a step (an integer) or explicit edges: integers and
    /// `[edge, count]` runs, adjacent equal edges merged.
    #[new]
    fn new(chunk_shapes: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = to_value(chunk_shapes, "chunk_shapes")?;
        let items = value
            .as_array()
            .ok_or_else(|| Error::metadata(format!("chunk_shapes must be a list, got {value}")));
        let dims: Result<Vec<DimGrid>> =
            items.and_then(|items| items.iter().map(DimGrid::from_json).collect());
        dims.map(Self).map_err(to_py_err)
    }

    /// From steps and explicit edge lists (the constructor's forms).
    #[staticmethod]
    fn from_edges(dims: &Bound<'_, PyAny>) -> PyResult<Self> {
        Self::new(dims)
    }

    /// Per dimension a step (an integer) or its runs as `(edge, count)`
    /// pairs.
    #[getter]
    fn dims<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let dim = |g: &DimGrid| -> PyResult<Bound<'py, PyAny>> {
            Ok(match g {
                DimGrid::Regular(step) => step.into_pyobject(py)?.into_any(),
                DimGrid::Rectilinear { runs, .. } => {
                    PyTuple::new(py, runs.iter().map(|r| (r.edge, r.count)))?.into_any()
                }
            })
        };
        PyTuple::new(py, self.0.iter().map(dim).collect::<PyResult<Vec<_>>>()?)
    }

    /// A `rectilinear` grid's `configuration` from `zarr.json`, checked
    /// against the array's `shape`; a MetadataError starts with `prefix`.
    #[staticmethod]
    fn from_json(
        configuration: &Bound<'_, PyAny>,
        shape: Vec<u64>,
        prefix: &str,
    ) -> PyResult<Self> {
        let label = "chunk_grid.configuration";
        let grid = to_value(configuration, label)
            .map_err(|_| Error::metadata(format!("{label}: must be JSON")))
            .and_then(|cfg| ChunkGrid::rectilinear_configuration(&cfg, &shape));
        grid.map(|g| Self(g.dims())).map_err(|e| {
            to_py_err(Error {
                kind: e.kind,
                message: format!("{prefix}{}", e.message),
            })
        })
    }

    /// The `chunk_grid` member as zarr-python 3.4 writes it.
    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let shapes: Value = self.0.iter().map(DimGrid::document).collect();
        let configuration = PyDict::new(py);
        configuration.set_item("kind", "inline")?;
        configuration.set_item("chunk_shapes", to_py(py, &shapes)?)?;
        let grid = PyDict::new(py);
        grid.set_item("name", "rectilinear")?;
        grid.set_item("configuration", configuration)?;
        Ok(grid)
    }

    /// `chunk_shapes` as the core reads it (every run as a pair).
    fn core_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.runs_json())
    }

    /// Chunks along dimension `d` that hold elements of `0..extent`.
    fn nchunks(&self, d: usize, extent: u64) -> PyResult<u64> {
        Ok(self.dim(d)?.nchunks(extent))
    }

    /// Chunks along each dimension that hold elements of `shape`.
    fn grid_shape<'py>(&self, py: Python<'py>, shape: Vec<u64>) -> PyResult<Bound<'py, PyTuple>> {
        let counts = self.0.iter().zip(&shape).map(|(g, &s)| g.nchunks(s));
        PyTuple::new(py, counts)
    }

    /// Offset and edge of chunk `c` along dimension `d`.
    fn chunk(&self, d: usize, c: u64) -> PyResult<(u64, u64)> {
        self.dim(d)?.chunk(c).ok_or_else(|| {
            PyIndexError::new_err(format!("chunk {c} of dimension {d} is outside the grid"))
        })
    }

    /// The data sizes of dimension `d`'s chunks, clipped at `extent`.
    fn data_sizes<'py>(
        &self,
        py: Python<'py>,
        d: usize,
        extent: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let sizes = self.dim(d)?.data_sizes(extent).map_err(to_py_err)?;
        PyTuple::new(py, sizes)
    }

    /// The distinct edge lengths of dimension `d`, ascending.
    fn distinct_edges(&self, d: usize) -> PyResult<Vec<u64>> {
        Ok(self.dim(d)?.distinct_edges())
    }

    /// The shape of the first chunk.
    fn first_chunk_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.0.iter().map(DimGrid::first_edge))
    }

    /// The grid after a resize to `shape`, as zarr-python 3.4 adjusts it.
    fn resized(&self, shape: Vec<u64>) -> PyResult<Self> {
        let dims: Result<Vec<DimGrid>> = self
            .0
            .iter()
            .zip(&shape)
            .map(|(g, &s)| g.resized(s))
            .collect();
        dims.map(Self).map_err(to_py_err)
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let py = slf.py();
        Ok((
            slf.as_any().get_type().into_any(),
            (slf.get().core_json(py)?,),
        ))
    }

    fn __repr__(&self) -> String {
        format!("RectilinearGrid({})", self.runs_json())
    }
}

/// Add the class to the `_core` module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRectilinearGrid>()
}
