//! Python buffers and values as the core takes them: `bytes` without a copy,
//! numpy arrays as byte slices, variable-length items, and what a write is given.

use bytes::Bytes;
use numpy::npyffi::{self, npy_intp, NpyTypes, PY_ARRAY_API};
use numpy::{
    PyArrayDescr, PyArrayDescrMethods, PyReadonlyArray1, PyReadwriteArray1, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};

use super::to_py_err;
use crate::batch::Destination;
use crate::engine::Input;

/// A Python `bytes` object seen as [`Bytes`] without a copy: the object is
/// immutable and kept alive by the reference.
struct PyBytesOwner {
    _object: Py<PyBytes>,
    ptr: *const u8,
    len: usize,
}

// SAFETY: the pointer is into the immutable buffer of a `bytes` object that
// `_object` keeps alive; reading it needs no GIL, and dropping a `Py` without
// the GIL only defers the reference count's decrement (pyo3 queues it).
unsafe impl Send for PyBytesOwner {}

impl AsRef<[u8]> for PyBytesOwner {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: see the `Send` comment; `ptr` and `len` came from the object.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// Bytes from Python: `bytes` without a copy, any other object with the
/// buffer protocol copied once.
pub(super) fn bytes_of(item: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(b) = item.cast::<PyBytes>() {
        let data = b.as_bytes();
        return Ok(Bytes::from_owner(PyBytesOwner {
            ptr: data.as_ptr(),
            len: data.len(),
            _object: b.clone().unbind(),
        }));
    }
    Ok(Bytes::from(PyBuffer::<u8>::get(item)?.to_vec(item.py())?))
}

/// A list of encoded chunks: bytes, any object with the buffer protocol, or None.
pub(super) fn encoded_chunks(items: &Bound<'_, PyAny>) -> PyResult<Vec<Option<Bytes>>> {
    items
        .try_iter()?
        .map(|item| {
            let item = item?;
            if item.is_none() {
                Ok(None)
            } else {
                bytes_of(&item).map(Some)
            }
        })
        .collect()
}

/// The bytes of a uint8 output array (a C-contiguous view of the result).
pub(super) fn out_bytes<'a>(out: &'a mut PyReadwriteArray1<'_, u8>) -> PyResult<&'a mut [u8]> {
    out.as_slice_mut()
        .map_err(|_| PyValueError::new_err("output buffer must be contiguous"))
}

/// The bytes of a uint8 value array (a C-contiguous view of the data to write).
pub(super) fn value_bytes<'a>(value: &'a PyReadonlyArray1<'_, u8>) -> PyResult<&'a [u8]> {
    value
        .as_slice()
        .map_err(|_| PyValueError::new_err("value buffer must be contiguous"))
}

/// A list of str or bytes as their bytes.
pub(super) fn var_items(items: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    items
        .try_iter()?
        .map(|item| {
            let item = item?;
            if let Ok(s) = item.cast::<PyString>() {
                Ok(s.to_str()?.as_bytes().to_vec())
            } else if let Ok(b) = item.cast::<PyBytes>() {
                Ok(b.as_bytes().to_vec())
            } else {
                Err(PyTypeError::new_err(format!(
                    "variable-length values must be str or bytes, got {}",
                    item.get_type().name()?
                )))
            }
        })
        .collect()
}

/// Variable-length elements as a list of str (`utf8`) or bytes.
pub(super) fn var_list<'py>(
    py: Python<'py>,
    items: &[Vec<u8>],
    utf8: bool,
) -> PyResult<Bound<'py, PyList>> {
    let objects = items.iter().map(|b| -> PyResult<Bound<'py, PyAny>> {
        if utf8 {
            let s = std::str::from_utf8(b)
                .map_err(|e| PyValueError::new_err(format!("invalid UTF-8: {e}")))?;
            Ok(PyString::new(py, s).into_any())
        } else {
            Ok(PyBytes::new(py, b).into_any())
        }
    });
    PyList::new(py, objects.collect::<PyResult<Vec<_>>>()?)
}

/// The value of a write: a C-contiguous uint8 array (fixed-size elements), a
/// list of str/bytes (variable-length elements), or one element's bytes or
/// str broadcast to every selected element.
pub(super) enum Value<'py> {
    Fixed(PyReadonlyArray1<'py, u8>),
    Var(Vec<Vec<u8>>),
    Scalar(Vec<u8>),
}

impl<'py> Value<'py> {
    pub(super) fn extract(value: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(b) = value.cast::<PyBytes>() {
            return Ok(Value::Scalar(b.as_bytes().to_vec()));
        }
        if let Ok(s) = value.cast::<PyString>() {
            return Ok(Value::Scalar(s.to_str()?.as_bytes().to_vec()));
        }
        if let Ok(arr) = value.extract::<PyReadonlyArray1<'py, u8>>() {
            value_bytes(&arr)?;
            return Ok(Value::Fixed(arr));
        }
        Ok(Value::Var(var_items(value)?))
    }

    pub(super) fn input(&self) -> PyResult<Input<'_>> {
        Ok(match self {
            Value::Fixed(arr) => Input::Fixed(value_bytes(arr)?),
            Value::Var(items) => Input::Var(items),
            Value::Scalar(one) => Input::Scalar(one),
        })
    }
}

/// Where a read puts the elements: `out`'s bytes, or (None) a list.
pub(super) fn destination<'a>(
    out: Option<&'a mut PyReadwriteArray1<'_, u8>>,
) -> PyResult<Destination<'a>> {
    Ok(match out {
        Some(out) => Destination::Buffer(out_bytes(out)?),
        None => Destination::List,
    })
}

/// Encoded chunks as a list of bytes, None where there are none.
pub(super) fn encoded_list<'py>(
    py: Python<'py>,
    chunks: &[Option<Bytes>],
) -> PyResult<Bound<'py, PyList>> {
    PyList::new(
        py,
        chunks
            .iter()
            .map(|e| e.as_ref().map(|b| PyBytes::new(py, b))),
    )
}

/// Write into `dst` the elements of an array of `shape` (`itemsize`-byte
/// elements) that `src` holds in Fortran order, in C order, on the worker
/// threads: numpy's `ascontiguousarray` of an F-ordered array. Given the
/// shape reversed, it makes a C-ordered array Fortran-ordered.
#[pyfunction]
pub(super) fn fortran_to_c(
    py: Python<'_>,
    src: PyReadonlyArray1<'_, u8>,
    mut dst: PyReadwriteArray1<'_, u8>,
    shape: Vec<usize>,
    itemsize: usize,
) -> PyResult<()> {
    let src = value_bytes(&src)?;
    let dst = out_bytes(&mut dst)?;
    py.detach(|| crate::order::fortran_to_c(src, dst, &shape, itemsize))
        .map_err(to_py_err)
}

/// A new C-contiguous numpy array of data type `dtype` and `shape`, its data
/// uninitialised (as `numpy.empty`'s): for a caller that writes every byte
/// before anyone sees it. A MemoryError when numpy cannot allocate it.
pub(super) fn new_array<'py>(
    py: Python<'py>,
    dtype: &Bound<'py, PyArrayDescr>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyUntypedArray>> {
    let mut dims = shape
        .iter()
        .map(|&n| npy_intp::try_from(n))
        .collect::<std::result::Result<Vec<npy_intp>, _>>()
        .map_err(|_| PyValueError::new_err("the selection is too large"))?;
    let ndim = std::ffi::c_int::try_from(dims.len())
        .map_err(|_| PyValueError::new_err("too many dimensions"))?;
    // SAFETY: numpy's array constructor with its own array type, a data type
    // reference it takes over (`into_dtype_ptr` hands one over), `ndim`
    // dimensions read from `dims` (alive for the call), and no strides, data
    // or base object: numpy allocates C-contiguous data. It returns a new
    // reference, or NULL with a Python error set.
    let made = unsafe {
        let array_type = npyffi::get_type_object(py, NpyTypes::PyArray_Type);
        let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            array_type,
            dtype.clone().into_dtype_ptr(),
            ndim,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    Ok(made.cast_into::<PyUntypedArray>()?)
}

/// Where the data of `array` starts.
pub(super) fn array_data(array: &Bound<'_, PyUntypedArray>) -> *mut u8 {
    // SAFETY: `array` is a live numpy array (the reference holds it); reading
    // its data pointer field, as rust-numpy's typed `data()` does, is a plain
    // field read through numpy's accessor.
    unsafe {
        (*npyffi::objects::_PyArray_GET_ITEM_DATA(array.as_array_ptr()))
            .data
            .cast()
    }
}
