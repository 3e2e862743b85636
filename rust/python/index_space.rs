//! TensorStore's index space from Python: `Dim`, `IndexDomain`, `OutputMap`
//! and `IndexTransform` (see `selection/index_space.rs`), immutable, with
//! their JSON forms as Python objects and the selection a view reads and
//! writes.

use numpy::{PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyKeyError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PySlice, PyTuple};
use serde_json::Value;

use super::json::{rebuilt_from_json, to_py, to_value, FromJson};
use super::selection::SelectionHandle;
use super::to_py_err;
use crate::selection::index_space::{output_map_json, Domain, IndexTransform, Interval, Term, INF};
use crate::selection::OutputMap;

/// An index term of Python's: None, `...`, a slice or an integer.
fn term(item: &Bound<'_, PyAny>) -> PyResult<Term> {
    if item.is_none() {
        return Ok(Term::NewAxis);
    }
    if item.is_instance_of::<PyEllipsis>() {
        return Ok(Term::Ellipsis);
    }
    if let Ok(s) = item.cast::<PySlice>() {
        let part = |name: &str| -> PyResult<Option<i64>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                Ok(None)
            } else {
                v.extract().map(Some)
            }
        };
        return Ok(Term::Slice {
            start: part("start")?,
            stop: part("stop")?,
            step: part("step")?.unwrap_or(1),
        });
    }
    let type_name = item.get_type().name()?;
    let array_like = item.is_instance_of::<PyList>()
        || item.is_instance_of::<PyTuple>()
        || item.hasattr("__array__")? && !item.hasattr("__index__")?;
    if array_like || item.is_instance_of::<PyBool>() || type_name == "bool" {
        return Err(PyIndexError::new_err(format!(
            "index {}: index arrays and masks are not supported by zarrox views; read \
             through the array's oindex/vindex",
            item.repr()?
        )));
    }
    if item.is_instance_of::<PyInt>() || item.hasattr("__index__")? {
        return item.extract().map(Term::Index);
    }
    Err(PyIndexError::new_err(format!(
        "unsupported index {}",
        item.repr()?
    )))
}

// ---------------------------------------------------------------------------
// Dim
// ---------------------------------------------------------------------------

/// One dimension of a domain: `[inclusive_min, inclusive_max]`, each bound
/// possibly infinite and possibly implicit, and a label (`""`: none).
#[pyclass(
    module = "zarrox._core",
    name = "Dim",
    frozen,
    eq,
    hash,
    from_py_object
)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyDim(Interval);

/// `Dim`'s constructor arguments.
type DimArgs = (i64, i64, bool, bool, String);

#[pymethods]
impl PyDim {
    #[new]
    #[pyo3(signature = (inclusive_min, inclusive_max, implicit_lower=false, implicit_upper=false, label=String::new()))]
    fn new(
        inclusive_min: i64,
        inclusive_max: i64,
        implicit_lower: bool,
        implicit_upper: bool,
        label: String,
    ) -> PyResult<Self> {
        Interval::new(
            inclusive_min,
            inclusive_max,
            implicit_lower,
            implicit_upper,
            label,
        )
        .map(PyDim)
        .map_err(to_py_err)
    }

    #[getter]
    fn inclusive_min(&self) -> i64 {
        self.0.min
    }

    #[getter]
    fn inclusive_max(&self) -> i64 {
        self.0.max
    }

    #[getter]
    fn exclusive_max(&self) -> i64 {
        self.0.max + 1
    }

    #[getter]
    fn implicit_lower(&self) -> bool {
        self.0.implicit_lower
    }

    #[getter]
    fn implicit_upper(&self) -> bool {
        self.0.implicit_upper
    }

    #[getter]
    fn label(&self) -> &str {
        &self.0.label
    }

    #[getter]
    fn finite(&self) -> bool {
        self.0.finite()
    }

    #[getter]
    fn size(&self) -> PyResult<i64> {
        self.0.size().map_err(to_py_err)
    }

    /// The interval an index must lie in: implicit bounds do not constrain.
    #[getter]
    fn constraint(&self) -> (i64, i64) {
        self.0.constraint()
    }

    /// Moved by `delta` (infinite bounds stay).
    fn shifted(&self, delta: i64) -> PyResult<Self> {
        self.0.shifted(delta).map(PyDim).map_err(to_py_err)
    }

    /// With the upper bound `inclusive_max`.
    fn with_inclusive_max(&self, inclusive_max: i64) -> PyResult<Self> {
        let d = &self.0;
        let (lower, upper) = (d.implicit_lower, d.implicit_upper);
        let dim = Interval::new(d.min, inclusive_max, lower, upper, d.label.clone());
        dim.map(PyDim).map_err(to_py_err)
    }

    fn __repr__(&self) -> String {
        self.0.to_string()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, DimArgs)> {
        let d = &slf.get().0;
        Ok((
            slf.get_type().into_any(),
            (
                d.min,
                d.max,
                d.implicit_lower,
                d.implicit_upper,
                d.label.clone(),
            ),
        ))
    }
}

// ---------------------------------------------------------------------------
// IndexDomain
// ---------------------------------------------------------------------------

/// A box of integer coordinates with optional labels (TensorStore's
/// `IndexDomain`).
#[pyclass(
    module = "zarrox._core",
    name = "IndexDomain",
    frozen,
    eq,
    from_py_object
)]
#[derive(Clone, PartialEq)]
pub struct PyDomain(Domain);

fn tuple_of<'py, T: IntoPyObject<'py> + Copy>(
    py: Python<'py>,
    d: &Domain,
    f: impl Fn(&Interval) -> T,
) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, d.dims.iter().map(f))
}

#[pymethods]
impl PyDomain {
    #[new]
    fn new(dims: Vec<PyDim>) -> PyResult<Self> {
        let dims = dims.into_iter().map(|d| d.0).collect();
        Domain::new(dims).map(PyDomain).map_err(to_py_err)
    }

    /// `[0, shape)` in each dimension.
    #[staticmethod]
    #[pyo3(signature = (shape, *, implicit_upper=false, labels=Vec::new()))]
    fn from_shape(shape: Vec<i64>, implicit_upper: bool, labels: Vec<String>) -> PyResult<Self> {
        Domain::from_shape(&shape, implicit_upper, &labels)
            .map(PyDomain)
            .map_err(to_py_err)
    }

    /// Zarr dimension names as domain labels (`""` for none) when the names
    /// given are unique, else no labels.
    #[staticmethod]
    fn labels_of(names: Option<Vec<Option<String>>>, rank: usize) -> Vec<String> {
        let labels: Vec<String> = names
            .unwrap_or_else(|| vec![None; rank])
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        let named: Vec<&String> = labels.iter().filter(|l| !l.is_empty()).collect();
        let unique: std::collections::HashSet<&&String> = named.iter().collect();
        if unique.len() == named.len() {
            labels
        } else {
            Vec::new()
        }
    }

    /// The domain both describe (TensorStore's `MergeIndexDomains`); either
    /// may be None.
    #[staticmethod]
    fn merge(a: Option<PyDomain>, b: Option<PyDomain>, at: &str) -> PyResult<Option<PyDomain>> {
        match (a, b) {
            (Some(a), Some(b)) => {
                a.0.merge(&b.0, at)
                    .map(|d| Some(PyDomain(d)))
                    .map_err(to_py_err)
            }
            (a, b) => Ok(a.or(b)),
        }
    }

    /// Parse an `IndexDomain` (`prefix=""`) or the input-domain members of an
    /// `IndexTransform` (`prefix="input_"`).
    #[staticmethod]
    #[pyo3(signature = (value, at="domain", *, prefix=""))]
    fn from_json(value: &Bound<'_, PyAny>, at: &str, prefix: &str) -> PyResult<Self> {
        Domain::from_json(&to_value(value, at)?, at, prefix)
            .map(PyDomain)
            .map_err(to_py_err)
    }

    #[pyo3(signature = (prefix=""))]
    fn to_json<'py>(&self, py: Python<'py>, prefix: &str) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &Value::Object(self.0.to_json(prefix)))
    }

    #[getter]
    fn rank(&self) -> usize {
        self.0.rank()
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.0.rank()
    }

    #[getter]
    fn dims<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.0.dims.iter().map(|d| PyDim(d.clone())))
    }

    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.0.dims.iter().map(|d| d.label.as_str()))
    }

    #[getter]
    fn inclusive_min<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple_of(py, &self.0, |d| d.min)
    }

    #[getter]
    fn origin<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple_of(py, &self.0, |d| d.min)
    }

    #[getter]
    fn exclusive_max<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple_of(py, &self.0, |d| d.max + 1)
    }

    #[getter]
    fn inclusive_max<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple_of(py, &self.0, |d| d.max)
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let sizes = self.0.dims.iter().map(Interval::size);
        let sizes = sizes.collect::<crate::error::Result<Vec<_>>>();
        PyTuple::new(py, sizes.map_err(to_py_err)?)
    }

    #[getter]
    fn implicit_lower_bounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple_of(py, &self.0, |d| d.implicit_lower)
    }

    #[getter]
    fn implicit_upper_bounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        tuple_of(py, &self.0, |d| d.implicit_upper)
    }

    #[getter]
    fn finite(&self) -> bool {
        self.0.dims.iter().all(Interval::finite)
    }

    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyDim> {
        if let Ok(label) = key.extract::<&str>() {
            let found = self.0.dims.iter().find(|d| d.label == label);
            return found
                .map(|d| PyDim(d.clone()))
                .ok_or_else(|| PyKeyError::new_err(label.to_string()));
        }
        let rank = self.0.rank() as i64;
        let k: i64 = key.extract()?;
        let k = if k < 0 { k + rank } else { k };
        if !(0..rank).contains(&k) {
            return Err(PyIndexError::new_err(format!(
                "dimension {k} is out of range for rank {rank}"
            )));
        }
        Ok(PyDim(self.0.dims[k as usize].clone()))
    }

    fn __len__(&self) -> usize {
        self.0.rank()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.dims(py)?.try_iter()?.into_any())
    }

    fn __repr__(&self) -> String {
        self.0.to_string()
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<FromJson<'py>> {
        rebuilt_from_json(slf, slf.get().to_json(slf.py(), "")?)
    }
}

// ---------------------------------------------------------------------------
// OutputMap
// ---------------------------------------------------------------------------

/// How one array coordinate follows from the input coordinates: `offset`
/// (constant), `offset + stride * input[input_dimension]`, or `offset +
/// stride * index_array[input - origin]`.
#[pyclass(
    module = "zarrox._core",
    name = "OutputMap",
    frozen,
    eq,
    from_py_object
)]
#[derive(Clone, PartialEq)]
pub struct PyOutputMap(OutputMap);

#[pymethods]
impl PyOutputMap {
    #[new]
    #[pyo3(signature = (offset=0, stride=1, input_dimension=None, index_array=None))]
    fn new(
        offset: i64,
        stride: i64,
        input_dimension: Option<usize>,
        index_array: Option<PyReadonlyArrayDyn<'_, i64>>,
    ) -> Self {
        PyOutputMap(match (input_dimension, index_array) {
            (Some(dim), _) => OutputMap::Dim {
                offset,
                stride,
                dim,
            },
            (None, Some(arr)) => OutputMap::Array {
                offset,
                stride,
                shape: arr.shape().to_vec(),
                index: arr.as_array().iter().copied().collect(),
            },
            (None, None) => OutputMap::Constant(offset),
        })
    }

    #[getter]
    fn offset(&self) -> i64 {
        match &self.0 {
            OutputMap::Constant(o) => *o,
            OutputMap::Dim { offset, .. } | OutputMap::Array { offset, .. } => *offset,
        }
    }

    #[getter]
    fn stride(&self) -> i64 {
        match &self.0 {
            OutputMap::Constant(_) => 1,
            OutputMap::Dim { stride, .. } | OutputMap::Array { stride, .. } => *stride,
        }
    }

    #[getter]
    fn input_dimension(&self) -> Option<usize> {
        match &self.0 {
            OutputMap::Dim { dim, .. } => Some(*dim),
            _ => None,
        }
    }

    /// The index array (int64, the input rank; extent 1 broadcasts), or None.
    #[getter]
    fn index_array<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let OutputMap::Array { shape, index, .. } = &self.0 else {
            return Ok(None);
        };
        let flat = numpy::PyArray1::from_slice(py, index);
        Ok(Some(flat.reshape(shape.clone())?.into_any()))
    }

    #[getter]
    fn is_constant(&self) -> bool {
        matches!(self.0, OutputMap::Constant(_))
    }

    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &output_map_json(&self.0))
    }

    fn __repr__(&self) -> String {
        format!("OutputMap({})", output_map_json(&self.0))
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}

// ---------------------------------------------------------------------------
// IndexTransform
// ---------------------------------------------------------------------------

/// A map from an input domain to array coordinates (TensorStore's
/// `IndexTransform`). Each operation returns a new transform.
#[pyclass(module = "zarrox._core", name = "IndexTransform", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyTransform(IndexTransform);

type Transformed = (PyTransform, Vec<usize>);

fn wrap(t: crate::error::Result<IndexTransform>) -> PyResult<PyTransform> {
    t.map(PyTransform).map_err(to_py_err)
}

#[pymethods]
impl PyTransform {
    /// The transform from `domain` through `output` (one map per array
    /// dimension; the identity when None).
    #[new]
    #[pyo3(signature = (domain, output=None))]
    fn new(domain: PyDomain, output: Option<Vec<PyOutputMap>>) -> PyResult<Self> {
        match output {
            None => Ok(PyTransform(IndexTransform::identity(domain.0))),
            Some(maps) => wrap(IndexTransform::new(
                domain.0,
                maps.into_iter().map(|m| m.0).collect(),
            )),
        }
    }

    #[staticmethod]
    fn identity(domain: PyDomain) -> Self {
        PyTransform(IndexTransform::identity(domain.0))
    }

    #[staticmethod]
    #[pyo3(signature = (value, at="transform"))]
    fn from_json(value: &Bound<'_, PyAny>, at: &str) -> PyResult<Self> {
        wrap(IndexTransform::from_json(&to_value(value, at)?, at))
    }

    fn to_json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &Value::Object(self.0.to_json()))
    }

    #[getter]
    fn domain(&self) -> PyDomain {
        PyDomain(self.0.domain.clone())
    }

    #[getter]
    fn output<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.0.maps.iter().map(|m| PyOutputMap(m.clone())))
    }

    #[getter]
    fn is_identity_maps(&self) -> bool {
        self.0.is_identity_maps()
    }

    #[getter]
    fn input_rank(&self) -> usize {
        self.0.input_rank()
    }

    #[getter]
    fn output_rank(&self) -> usize {
        self.0.maps.len()
    }

    /// `self` applied after `inner`: `inner`'s outputs are `self`'s inputs.
    fn compose(&self, inner: &PyTransform) -> PyResult<Self> {
        wrap(self.0.compose(&inner.0))
    }

    /// For each input dimension, the array dimension it maps to with a unit
    /// stride, when the transform is such a one-to-one map; else None.
    fn permutation(&self) -> Option<Vec<usize>> {
        self.0.permutation()
    }

    /// NumPy-style index `terms` (integers in domain coordinates, slices,
    /// `...`, None where `allow_newaxis`) applied to the `selected` input
    /// dimensions; returns the transform and the selected dimensions that
    /// remain, at their new positions.
    fn index(
        &self,
        terms: &Bound<'_, PyTuple>,
        selected: Vec<usize>,
        allow_newaxis: bool,
    ) -> PyResult<Transformed> {
        let terms = terms
            .iter()
            .map(|t| term(&t))
            .collect::<PyResult<Vec<_>>>()?;
        let (t, kept) = self
            .0
            .index(&terms, &selected, allow_newaxis)
            .map_err(to_py_err)?;
        Ok((PyTransform(t), kept))
    }

    /// The `dims` translated to start at `values` (`to`), or by `values`
    /// (None: left as they are).
    fn translate(&self, dims: Vec<usize>, values: Vec<Option<i64>>, to: bool) -> PyResult<Self> {
        wrap(self.0.translate(&dims, &values, to))
    }

    fn label(&self, dims: Vec<usize>, names: Vec<String>) -> PyResult<Self> {
        wrap(self.0.label(&dims, &names))
    }

    fn stride(&self, dims: Vec<usize>, strides: Vec<i64>) -> PyResult<Self> {
        wrap(self.0.stride(&dims, &strides))
    }

    /// New input dimension `i` is old input dimension `perm[i]`.
    fn reorder(&self, perm: Vec<usize>) -> PyResult<Self> {
        wrap(self.0.reorder(&perm))
    }

    /// The `dims` moved to `targets`; returns the targets, normalized.
    fn move_dims(&self, dims: Vec<usize>, targets: Vec<i64>) -> PyResult<Transformed> {
        let (t, tgt) = self.0.move_dims(&dims, &targets).map_err(to_py_err)?;
        Ok((PyTransform(t), tgt))
    }

    /// The domain's `(lowest, highest)` index per dimension, implicit bounds
    /// resolved against an array of `shape`.
    fn bounds(&self, shape: Vec<u64>) -> PyResult<Vec<(i64, i64)>> {
        self.0.bounds(&shape).map_err(to_py_err)
    }

    /// The lowest and highest coordinate of each array dimension the
    /// transform selects in an array of `shape` (its domain not empty).
    fn output_ranges(&self, shape: Vec<u64>) -> PyResult<Vec<(i64, i64)>> {
        self.0.output_ranges(&shape).map_err(to_py_err)
    }

    /// The selection of an array of `shape` the transform stands for; its
    /// buffer has the resolved domain's shape, C-ordered or with `steps`
    /// (elements per input dimension).
    #[pyo3(signature = (shape, steps=None))]
    fn selection(
        &self,
        py: Python<'_>,
        shape: Vec<u64>,
        steps: Option<Vec<usize>>,
    ) -> PyResult<SelectionHandle> {
        let inner = py
            .detach(|| self.0.selection(&shape, steps.as_deref()))
            .map_err(to_py_err)?;
        Ok(SelectionHandle { inner })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("IndexTransform({})", self.to_json(py)?.repr()?))
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

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDim>()?;
    m.add_class::<PyDomain>()?;
    m.add_class::<PyOutputMap>()?;
    m.add_class::<PyTransform>()?;
    m.add("INDEX_INF", INF)?;
    Ok(())
}
