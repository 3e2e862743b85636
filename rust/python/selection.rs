//! Selections from Python: user keys converted to the core's `Key`s, and
//! zarr-python's per-chunk selections and caller-spelled regions.

use numpy::{PyArrayDescrMethods, PyReadonlyArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyEllipsis, PyInt, PyList, PySlice, PyString, PyTuple};

use super::to_py_err;
use crate::engine::ChunkRegion;
use crate::grid::DimGrid;
use crate::selection::{self, ArrayValues, Explicit, IndexArray, Ints, Key, Normalized};

/// A Python integer as an `i128`, saturated past its range.
fn wide_int(item: &Bound<'_, PyAny>) -> PyResult<i128> {
    // Most indices fit an i64, whose conversion is one C call; the i128 one
    // (abi3 has no fast path) costs several Python operations.
    if let Ok(i) = item.extract::<i64>() {
        return Ok(i.into());
    }
    match item.extract::<i128>() {
        Ok(i) => Ok(i),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(item.py()) => {
            Ok(if item.lt(0)? { i128::MIN } else { i128::MAX })
        }
        Err(e) => Err(e),
    }
}

/// A slice's `start`, `stop` or `step`: None, or an integer (`__index__`).
fn slice_part(s: &Bound<'_, PySlice>, name: &Bound<'_, PyString>) -> PyResult<Option<i128>> {
    let v = s.getattr(name)?;
    if v.is_none() {
        return Ok(None);
    }
    if v.cast::<PyBool>().is_err() {
        if let Ok(i) = wide_int(&v) {
            return Ok(Some(i));
        }
    }
    Err(PyTypeError::new_err(
        "slice indices must be integers or None or have an __index__ method",
    ))
}

/// A numpy array's values: integers (as int64 or uint64), booleans, exact
/// Python integers (an object array), or the name of any other data type.
fn index_array(arr: &Bound<'_, PyUntypedArray>, ndarray: bool) -> PyResult<IndexArray> {
    let shape = arr.shape().to_vec();
    let np = arr.py().import("numpy")?;
    let as_type = |name: &str| -> PyResult<Bound<'_, PyAny>> {
        let kwargs = PyDict::new(arr.py());
        kwargs.set_item("copy", false)?;
        arr.call_method("astype", (np.getattr(name)?,), Some(&kwargs))
    };
    let values = match arr.dtype().kind() {
        b'b' => ArrayValues::Bools(c_order_values(arr.extract()?)),
        b'i' => ArrayValues::Ints(Ints::I64(c_order_values(as_type("int64")?.extract()?))),
        b'u' => ArrayValues::Ints(Ints::U64(c_order_values(as_type("uint64")?.extract()?))),
        b'O' => match exact_ints(arr)? {
            Some(v) => ArrayValues::Ints(Ints::Wide(v)),
            None => ArrayValues::Other("object".into()),
        },
        _ => ArrayValues::Other(arr.getattr("dtype")?.str()?.to_string()),
    };
    Ok(IndexArray {
        shape,
        values,
        ndarray,
    })
}

/// An array's elements in C order: one copy of the buffer when it is
/// C-contiguous (index arrays of millions of points), else element by element.
fn c_order_values<T: numpy::Element + Copy>(arr: PyReadonlyArrayDyn<'_, T>) -> Vec<T> {
    // `as_slice` also takes a Fortran-contiguous buffer, whose order is not C's.
    if arr.is_c_contiguous() {
        if let Ok(values) = arr.as_slice() {
            return values.to_vec();
        }
    }
    arr.as_array().iter().copied().collect()
}

/// The elements of an array (C order) as exact integers, if all are integers.
fn exact_ints(arr: &Bound<'_, PyAny>) -> PyResult<Option<Vec<i128>>> {
    let mut out = Vec::new();
    for x in arr.getattr("flat")?.try_iter()? {
        let x = x?;
        if x.cast::<PyBool>().is_ok() || numpy_bool(&x) {
            return Ok(None);
        }
        match wide_int(&x) {
            Ok(i) => out.push(i),
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// A list as numpy reads it as an index array. numpy turns lists holding
/// integers past int64 (indices into dimensions of up to 2**64 - 1) into
/// floats or objects; those keep their exact values.
fn list_array(list: &Bound<'_, PyAny>) -> PyResult<IndexArray> {
    let np = list.py().import("numpy")?;
    let arr = np.call_method1("asarray", (list,))?;
    let arr = arr.cast::<PyUntypedArray>()?;
    if !arr.is_empty() && matches!(arr.dtype().kind(), b'f' | b'O') {
        let kwargs = PyDict::new(list.py());
        kwargs.set_item("dtype", "object")?;
        let exact = np.call_method("asarray", (list,), Some(&kwargs))?;
        if let Some(v) = exact_ints(&exact)? {
            return Ok(IndexArray {
                shape: arr.shape().to_vec(),
                values: ArrayValues::Ints(Ints::Wide(v)),
                ndarray: false,
            });
        }
    }
    index_array(arr, false)
}

fn numpy_bool(item: &Bound<'_, PyAny>) -> bool {
    let t = item.get_type();
    let numpy = t
        .module()
        .is_ok_and(|m| m.to_str().is_ok_and(|m| m.starts_with("numpy")));
    numpy
        && t.name()
            .is_ok_and(|n| matches!(n.to_str(), Ok("bool" | "bool_")))
}

/// One entry of a selection (`spans`: a tuple is an explicit `(start, stop,
/// step)` range).
pub(super) fn key(item: &Bound<'_, PyAny>, spans: bool) -> PyResult<Key> {
    let py = item.py();
    if let Ok(s) = item.cast::<PySlice>() {
        return Ok(Key::Slice {
            start: slice_part(s, intern!(py, "start"))?,
            stop: slice_part(s, intern!(py, "stop"))?,
            step: slice_part(s, intern!(py, "step"))?,
        });
    }
    if item.cast::<PyInt>().is_ok() && item.cast::<PyBool>().is_err() {
        return Ok(Key::Int(wide_int(item)?));
    }
    if item.cast::<PyBool>().is_ok() || numpy_bool(item) {
        return Ok(Key::Other {
            type_name: item.get_type().name()?.to_string(),
            boolean: true,
        });
    }
    if let Ok(arr) = item.cast::<PyUntypedArray>() {
        return index_array(arr, true).map(Key::Array);
    }
    if item.cast::<PyList>().is_ok() {
        return list_array(item).map(Key::Array);
    }
    if item.is(PyEllipsis::get(py)) {
        return Ok(Key::Ellipsis);
    }
    if item.is_none() {
        return Ok(Key::NewAxis);
    }
    if spans {
        if let Ok((start, stop, step)) = item.extract::<(u64, u64, u64)>() {
            return Ok(Key::Span { start, stop, step });
        }
    }
    if let Ok(i) = wide_int(item) {
        return Ok(Key::Int(i)); // numpy integers, anything with __index__
    }
    Ok(Key::Other {
        type_name: item.get_type().name()?.to_string(),
        boolean: false,
    })
}

/// A selection's entries: a tuple's items, or the one object.
pub(super) fn keys(selection: &Bound<'_, PyAny>, spans: bool) -> PyResult<Vec<Key>> {
    match selection.cast::<PyTuple>() {
        Ok(t) => t.iter().map(|i| key(&i, spans)).collect(),
        Err(_) => Ok(vec![key(selection, spans)?]),
    }
}

/// A selection of Python integers, slices and Ellipses only (the one-call
/// read's; numpy integers and anything else take the caller's general path).
pub(super) fn plain_keys(selection: &Bound<'_, PyAny>) -> Option<Vec<Key>> {
    let plain = |i: &Bound<'_, PyAny>| {
        i.cast::<PySlice>().is_ok()
            || i.is(PyEllipsis::get(i.py()))
            || (i.cast::<PyInt>().is_ok() && i.cast::<PyBool>().is_err())
    };
    match selection.cast::<PyTuple>() {
        Ok(t) if t.iter().all(|i| plain(&i)) => keys(selection, false).ok(),
        Err(_) if plain(selection) => keys(selection, false).ok(),
        _ => None,
    }
}

/// A normalised selection of an array (see `selection.rs`).
#[pyclass(module = "zarrox._core", name = "Selection", frozen)]
pub struct SelectionHandle {
    pub(super) inner: Normalized,
}

fn normalized(
    py: Python<'_>,
    keys: Vec<Key>,
    f: impl FnOnce(&[Key]) -> crate::error::Result<Normalized> + Send,
) -> PyResult<SelectionHandle> {
    let inner = py.detach(|| f(&keys)).map_err(to_py_err)?;
    Ok(SelectionHandle { inner })
}

#[pymethods]
impl SelectionHandle {
    /// Integers, slices with positive steps, and one Ellipsis.
    #[staticmethod]
    fn basic(py: Python<'_>, selection: &Bound<'_, PyAny>, shape: Vec<u64>) -> PyResult<Self> {
        normalized(py, keys(selection, false)?, |k| selection::basic(k, &shape))
    }

    /// Basic selection plus, per dimension, integer arrays or boolean masks.
    #[staticmethod]
    fn orthogonal(py: Python<'_>, selection: &Bound<'_, PyAny>, shape: Vec<u64>) -> PyResult<Self> {
        normalized(py, keys(selection, false)?, |k| {
            selection::orthogonal(k, &shape)
        })
    }

    /// One integer (array) per dimension, broadcast together.
    #[staticmethod]
    fn coordinate(py: Python<'_>, selection: &Bound<'_, PyAny>, shape: Vec<u64>) -> PyResult<Self> {
        normalized(py, keys(selection, false)?, |k| {
            selection::coordinate(k, &shape)
        })
    }

    /// One boolean array of the array's shape.
    #[staticmethod]
    fn mask(py: Python<'_>, selection: &Bound<'_, PyAny>, shape: Vec<u64>) -> PyResult<Self> {
        normalized(py, keys(selection, false)?, |k| selection::mask(k, &shape))
    }

    /// Whole blocks of a grid: per dimension a chunk length, or a list of
    /// `[edge, count]` runs (a rectilinear dimension).
    #[staticmethod]
    fn block(
        py: Python<'_>,
        selection: &Bound<'_, PyAny>,
        shape: Vec<u64>,
        grid: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let grid = grid
            .try_iter()?
            .map(|d| {
                let d = d?;
                match d.extract::<u64>() {
                    Ok(step) => Ok(DimGrid::Regular(step.max(1))),
                    Err(_) => {
                        let runs = d.extract::<Vec<[u64; 2]>>()?;
                        let runs: Vec<(u64, u64)> = runs.iter().map(|&[e, n]| (e, n)).collect();
                        DimGrid::from_runs(&runs).map_err(to_py_err)
                    }
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        normalized(py, keys(selection, false)?, |k| {
            selection::block(k, &shape, &grid)
        })
    }

    /// The shape of the buffer the core reads into or writes from.
    #[getter]
    fn buffer_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.buffer_shape)
    }

    /// Whether the selection is one per dimension (their outer product),
    /// rather than a list of points.
    #[getter]
    fn is_orthogonal(&self) -> bool {
        matches!(
            self.inner.selection,
            crate::indexing::Selection::Orthogonal(_)
        )
    }

    /// The shape the user sees.
    #[getter]
    fn result_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.inner.result_shape)
    }
}

/// One side of a region the caller spells out: a list (tuple) of per
/// dimension entries, or a 1-d array of flat indices.
fn explicit(item: &Bound<'_, PyAny>) -> PyResult<Explicit> {
    if item.cast::<PyList>().is_ok() || item.cast::<PyTuple>().is_ok() {
        let keys = item
            .try_iter()?
            .map(|k| key(&k?, true))
            .collect::<PyResult<_>>()?;
        return Ok(Explicit::Dims(keys));
    }
    let arr = item.cast::<PyUntypedArray>()?;
    match index_array(arr, true)?.values {
        ArrayValues::Ints(v) if arr.ndim() == 1 => Ok(Explicit::Flat(v)),
        _ => Err(PyTypeError::new_err("flat indices are a 1-d integer array")),
    }
}

/// How a batch's selections are written: regions spelled out (see
/// `selection::explicit_region`), or zarr-python's chunk and buffer
/// selections (`selection::zarr_region`), with the dimensions the buffer
/// drops and the function mapping what only numpy's general indexing can
/// (`generic(chunk, buffer, chunk_shape, buffer_shape, drop_axes, writing)`
/// -> flat chunk indices, flat buffer indices or None).
pub(super) struct Zarr<'a, 'py> {
    pub(super) drop_axes: Vec<usize>,
    pub(super) generic: Option<&'a Bound<'py, PyAny>>,
    pub(super) writing: bool,
}

/// One chunk's region.
pub(super) fn region(
    chunk: &Bound<'_, PyAny>,
    buffer: &Bound<'_, PyAny>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
    zarr: Option<&Zarr<'_, '_>>,
) -> PyResult<ChunkRegion> {
    let Some(z) = zarr else {
        let buf = if buffer.is_none() {
            None
        } else {
            Some(explicit(buffer)?)
        };
        return selection::explicit_region(
            &explicit(chunk)?,
            buf.as_ref(),
            chunk_shape,
            buffer_shape,
        )
        .map_err(to_py_err);
    };
    let ckeys = keys(chunk, false)?;
    let bkeys = if buffer.is_none() {
        None
    } else {
        Some(keys(buffer, false)?)
    };
    let got = selection::zarr_region(
        &ckeys,
        bkeys.as_deref(),
        chunk_shape,
        buffer_shape,
        &z.drop_axes,
        z.writing,
    )
    .map_err(to_py_err)?;
    if let Some(r) = got {
        return Ok(r);
    }
    let Some(generic) = z.generic else {
        return Err(PyIndexError::new_err(
            "this selection needs numpy's general indexing, and no function for it was given",
        ));
    };
    let (c, b): (Bound<'_, PyAny>, Bound<'_, PyAny>) = generic
        .call1((
            chunk,
            buffer,
            chunk_shape.to_vec(),
            buffer_shape.to_vec(),
            z.drop_axes.clone(),
            z.writing,
        ))?
        .extract()?;
    let b = if b.is_none() {
        None
    } else {
        Some(explicit(&b)?)
    };
    selection::explicit_region(&explicit(&c)?, b.as_ref(), chunk_shape, buffer_shape)
        .map_err(to_py_err)
}

/// The regions of a batch (`buffers` None: writes of one broadcast value).
pub(super) fn chunk_regions(
    chunks: &Bound<'_, PyAny>,
    buffers: &Bound<'_, PyAny>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
    zarr: Option<&Zarr<'_, '_>>,
) -> PyResult<Vec<ChunkRegion>> {
    let chunks: Vec<Bound<'_, PyAny>> = chunks.try_iter()?.collect::<PyResult<_>>()?;
    if buffers.is_none() {
        return chunks
            .iter()
            .map(|c| region(c, buffers, chunk_shape, buffer_shape, zarr))
            .collect();
    }
    let buffers: Vec<Bound<'_, PyAny>> = buffers.try_iter()?.collect::<PyResult<_>>()?;
    if chunks.len() != buffers.len() {
        return Err(PyValueError::new_err(format!(
            "{} chunk selections but {} buffer selections",
            chunks.len(),
            buffers.len()
        )));
    }
    chunks
        .iter()
        .zip(&buffers)
        .map(|(c, b)| region(c, b, chunk_shape, buffer_shape, zarr))
        .collect()
}
