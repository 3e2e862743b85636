//! Selections as users and zarr-python write them (integers, slices, index
//! arrays, boolean masks, an ellipsis), normalised once for every caller:
//!
//! - zarrox's own API: [`basic`], [`orthogonal`], [`coordinate`], [`mask`]
//!   and [`block`] selections of an array, with numpy's and zarr-python's
//!   rules (negative indices count from the end, slices are clamped, errors
//!   name the axis);
//! - zarr-python's codec pipeline: the selection inside one chunk and the
//!   matching selection of the output (or value) buffer become a
//!   [`ChunkRegion`] ([`zarr_region`]), or the region the caller spelled out
//!   itself ([`explicit_region`]).
//!
//! The Python layer only turns its objects into [`Key`]s (see `python/selection.rs`).

use crate::error::{Error, ErrorKind, Result};
use crate::grid::DimGrid;
use crate::indexing::{DimSelection, Selection};
use crate::region::ChunkRegion;

/// The integers of an index array, in C order: as numpy holds them, or
/// exact (an object array of Python integers past 64 bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ints {
    I64(Vec<i64>),
    U64(Vec<u64>),
    Wide(Vec<i128>),
}

impl Ints {
    pub fn len(&self) -> usize {
        match self {
            Ints::I64(v) => v.len(),
            Ints::U64(v) => v.len(),
            Ints::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> i128 {
        match self {
            Ints::I64(v) => i128::from(v[i]),
            Ints::U64(v) => i128::from(v[i]),
            Ints::Wide(v) => v[i],
        }
    }

    fn iter(&self) -> impl Iterator<Item = i128> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// What an index array holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayValues {
    Ints(Ints),
    Bools(Vec<bool>),
    /// Neither (floats, strings...): the data type's name, for messages.
    Other(String),
}

/// An index array (a numpy array, or a list numpy turned into one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexArray {
    pub shape: Vec<usize>,
    pub values: ArrayValues,
    /// Whether it was a numpy array (else a list).
    pub ndarray: bool,
}

impl IndexArray {
    fn ints(&self) -> Option<&Ints> {
        match &self.values {
            ArrayValues::Ints(v) => Some(v),
            _ => None,
        }
    }
    fn size(&self) -> usize {
        self.shape.iter().product()
    }
    fn dtype(&self) -> &str {
        match &self.values {
            ArrayValues::Ints(Ints::U64(_)) => "uint64",
            ArrayValues::Ints(Ints::I64(_)) => "int64",
            ArrayValues::Ints(Ints::Wide(_)) => "object",
            ArrayValues::Bools(_) => "bool",
            ArrayValues::Other(name) => name,
        }
    }
    fn type_name(&self) -> &str {
        if self.ndarray {
            "ndarray"
        } else {
            "list"
        }
    }
}

/// One entry of a selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// An integer (a Python or numpy integer; past `i128` saturated).
    Int(i128),
    /// A slice as written: `start:stop:step`, each possibly omitted.
    Slice {
        start: Option<i128>,
        stop: Option<i128>,
        step: Option<i128>,
    },
    /// An explicit `(start, stop, step)` range, taken as is (regions the
    /// caller spelled out; never clamped).
    Span {
        start: u64,
        stop: u64,
        step: u64,
    },
    Array(IndexArray),
    Ellipsis,
    /// `None` (numpy's new axis; in an explicit buffer region, "this chunk
    /// dimension has no buffer dimension").
    NewAxis,
    /// Anything else, by its type's name (`boolean`: a bool scalar).
    Other {
        type_name: String,
        boolean: bool,
    },
}

static FULL: Key = Key::Slice {
    start: None,
    stop: None,
    step: None,
};

impl Key {
    /// The integer a key stands for: an integer, or a 0-d integer array.
    fn as_int(&self) -> Option<i128> {
        match self {
            Key::Int(i) => Some(*i),
            Key::Array(a) if a.shape.is_empty() => a.ints().map(|v| v.get(0)),
            _ => None,
        }
    }

    fn type_name(&self) -> &str {
        match self {
            Key::Int(_) => "int",
            Key::Slice { .. } => "slice",
            Key::Span { .. } => "tuple",
            Key::Array(a) => a.type_name(),
            Key::Ellipsis => "ellipsis",
            Key::NewAxis => "NoneType",
            Key::Other { type_name, .. } => type_name,
        }
    }
}

fn bounds(message: String) -> Error {
    Error::new(ErrorKind::Bounds, message)
}

fn invalid(message: &str) -> Error {
    Error::new(ErrorKind::InvalidSelection, message)
}

/// A shape as Python writes a tuple: `(3,)`, `(2, 3)`, `()`.
fn py_tuple(shape: &[u64]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

// ----------------------------------------------------------------------------
// Slices and integers
// ----------------------------------------------------------------------------

/// `slice.indices(n)` for a positive step: `(start, stop, step)` with
/// `start <= stop <= n`.
fn clamp_forward(start: Option<i128>, stop: Option<i128>, step: i128, n: u64) -> (u64, u64, u64) {
    let n = i128::from(n);
    let at = |v: Option<i128>, default: i128| match v {
        None => default,
        Some(v) if v < 0 => (v + n).max(0),
        Some(v) => v.min(n),
    };
    let start = at(start, 0);
    let stop = at(stop, n).max(start);
    (
        start as u64,
        stop as u64,
        step.min(i128::from(u64::MAX)) as u64,
    )
}

/// A slice of an axis of `n` elements as zarrox reads it: steps of 1 and up.
fn forward_slice(
    start: Option<i128>,
    stop: Option<i128>,
    step: Option<i128>,
    n: u64,
) -> Result<DimSelection> {
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(Error::value("slice step cannot be zero")); // as numpy says
    }
    if step < 1 {
        return Err(Error::new(
            ErrorKind::NegativeStep,
            "only slices with step >= 1 are supported",
        ));
    }
    let (start, stop, step) = clamp_forward(start, stop, step, n);
    Ok(DimSelection::Slice { start, stop, step })
}

/// Index `i` of axis `dim` (of `n` elements), negative counting from the end.
fn axis_index(i: i128, n: u64, dim: usize) -> Result<u64> {
    let j = if i < 0 { i + i128::from(n) } else { i };
    if j < 0 || j >= i128::from(n) {
        return Err(bounds(format!(
            "index {i} is out of bounds for axis {dim} with size {n}"
        )));
    }
    Ok(j as u64)
}

/// The indices of an integer array along axis `dim` of `n` elements.
fn axis_indices(values: &Ints, n: u64, dim: usize) -> Result<Vec<u64>> {
    let mut out = crate::alloc::with_capacity(values.len())?;
    for_each_axis_index(values, n, dim, |_, i| out.push(i))?;
    Ok(out)
}

/// `put(position, index)` for each value of an integer array as an index
/// along axis `dim` of `n` elements (negative ones count from the end), in
/// order; a loop per integer type, for arrays of millions of points.
fn for_each_axis_index(
    values: &Ints,
    n: u64,
    dim: usize,
    mut put: impl FnMut(usize, u64),
) -> Result<()> {
    match values {
        Ints::I64(v) => {
            for (p, &i) in v.iter().enumerate() {
                put(p, axis_index(i128::from(i), n, dim)?);
            }
        }
        Ints::U64(v) => {
            for (p, &i) in v.iter().enumerate() {
                if i >= n {
                    return Err(bounds(format!(
                        "index {i} is out of bounds for axis {dim} with size {n}"
                    )));
                }
                put(p, i);
            }
        }
        Ints::Wide(v) => {
            for (p, &i) in v.iter().enumerate() {
                put(p, axis_index(i, n, dim)?);
            }
        }
    }
    Ok(())
}

// ----------------------------------------------------------------------------
// zarrox's own selections of an array
// ----------------------------------------------------------------------------

/// A selection of an array, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    pub selection: Selection,
    /// The shape of the buffer the core reads into or writes from.
    pub buffer_shape: Vec<usize>,
    /// The shape the user sees (integer-indexed dimensions dropped; the
    /// broadcast shape of a coordinate selection).
    pub result_shape: Vec<usize>,
}

/// The keys with their Ellipsis replaced by full slices and full slices
/// appended, one per dimension.
fn expand_ellipsis(keys: &[Key], ndim: usize) -> Result<Vec<&Key>> {
    let ellipses = keys.iter().filter(|k| **k == Key::Ellipsis).count();
    if ellipses > 1 {
        return Err(Error::index(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let mut out: Vec<&Key> = Vec::with_capacity(ndim.max(keys.len()));
    for k in keys {
        if *k == Key::Ellipsis {
            let fill = ndim.saturating_sub(keys.len() - 1);
            out.extend(std::iter::repeat_n(&FULL, fill));
        } else {
            out.push(k);
        }
    }
    if out.len() > ndim {
        return Err(Error::index(format!(
            "too many indices for array: array is {ndim}-dimensional, but {} were indexed",
            out.len()
        )));
    }
    out.resize(ndim, &FULL);
    Ok(out)
}

fn unsupported(k: &Key) -> Error {
    Error::index(format!(
        "only integers, slices (`:`), ellipsis (`...`) and integer or boolean arrays are \
         valid indices, got {}",
        k.type_name()
    ))
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Integers, slices (positive steps) and one Ellipsis; `arrays`: per
/// dimension also integer arrays and boolean masks (orthogonal indexing).
fn outer(keys: &[Key], shape: &[u64], arrays: bool) -> Result<Normalized> {
    let keys = expand_ellipsis(keys, shape.len())?;
    let mut dims = Vec::with_capacity(shape.len());
    let mut buffer_shape = Vec::with_capacity(shape.len());
    let mut result_shape = Vec::with_capacity(shape.len());
    for (dim, (k, &n)) in keys.into_iter().zip(shape).enumerate() {
        if let Some(i) = k.as_int() {
            let i = axis_index(i, n, dim)?;
            dims.push(DimSelection::one(i));
            buffer_shape.push(1);
            continue;
        }
        let d = match k {
            Key::Slice { start, stop, step } => forward_slice(*start, *stop, *step, n)?,
            Key::Array(a) if arrays => DimSelection::Indices(index_array(a, n, dim)?),
            _ => return Err(unsupported(k)),
        };
        buffer_shape.push(d.len());
        result_shape.push(d.len());
        dims.push(d);
    }
    Ok(Normalized {
        selection: Selection::Orthogonal(dims),
        buffer_shape,
        result_shape,
    })
}

/// One dimension's integer array or boolean mask as indices.
fn index_array(a: &IndexArray, n: u64, dim: usize) -> Result<Vec<u64>> {
    if a.shape.len() != 1 {
        return Err(Error::index(format!(
            "index arrays must be 1-dimensional (axis {dim})"
        )));
    }
    match &a.values {
        ArrayValues::Bools(mask) => {
            if mask.len() as u64 != n {
                return Err(Error::index(format!(
                    "boolean index of length {} does not match axis {dim} of size {n}",
                    mask.len()
                )));
            }
            Ok((0..mask.len() as u64)
                .filter(|&i| mask[i as usize])
                .collect())
        }
        _ if a.size() == 0 => Ok(Vec::new()),
        ArrayValues::Ints(v) => axis_indices(v, n, dim),
        ArrayValues::Other(dtype) => Err(Error::index(format!(
            "arrays used as indices must be of integer or boolean type, got {dtype}"
        ))),
    }
}

/// A basic selection: integers, slices with positive steps, one Ellipsis.
pub fn basic(keys: &[Key], shape: &[u64]) -> Result<Normalized> {
    outer(keys, shape, false)
}

/// A basic selection plus, per dimension, integer arrays (any order,
/// repeats) or boolean masks: the outer product of the dimensions.
pub fn orthogonal(keys: &[Key], shape: &[u64]) -> Result<Normalized> {
    outer(keys, shape, true)
}

/// The shape `shapes` broadcast to (numpy's rules), or a message.
fn broadcast_shape(shapes: &[&[usize]]) -> std::result::Result<Vec<usize>, String> {
    let nd = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; nd];
    for (arg, s) in shapes.iter().enumerate() {
        for (j, &x) in s.iter().enumerate() {
            let o = &mut out[nd - s.len() + j];
            if *o == 1 {
                *o = x;
            } else if x != 1 && x != *o {
                return Err(format!(
                    "shape mismatch: objects cannot be broadcast to a single shape.  Mismatch \
                     is between arg 0 with shape {} and arg {arg} with shape {}",
                    py_tuple(&shapes[0].iter().map(|&v| v as u64).collect::<Vec<_>>()),
                    py_tuple(&s.iter().map(|&v| v as u64).collect::<Vec<_>>()),
                ));
            }
        }
    }
    Ok(out)
}

/// The flat positions (C order) in an array of `shape` that each element
/// of its broadcast to `target` reads.
fn broadcast_positions(shape: &[usize], target: &[usize]) -> Vec<usize> {
    let off = target.len() - shape.len();
    let mut strides = vec![0usize; target.len()];
    let mut s = 1;
    for j in (0..shape.len()).rev() {
        strides[off + j] = if shape[j] == 1 { 0 } else { s };
        s *= shape[j];
    }
    let total: usize = target.iter().product();
    let mut out = Vec::with_capacity(total);
    let mut pos = vec![0usize; target.len()];
    for _ in 0..total {
        out.push(pos.iter().zip(&strides).map(|(p, s)| p * s).sum());
        for d in (0..target.len()).rev() {
            pos[d] += 1;
            if pos[d] < target[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    out
}

/// One integer (array) per dimension, broadcast together (numpy's advanced
/// indexing): the result has the broadcast shape, one element per point.
/// As in zarr-python, an integer is an array of length 1.
pub fn coordinate(keys: &[Key], shape: &[u64]) -> Result<Normalized> {
    if shape.is_empty() {
        return Err(Error::index(
            "coordinate selection is not possible on a 0-dimensional array",
        ));
    }
    if keys.len() != shape.len() {
        return Err(Error::index(format!(
            "coordinate selection needs one index array per dimension ({}), got {}",
            shape.len(),
            keys.len()
        )));
    }
    let mut arrays: Vec<IndexArray> = Vec::with_capacity(keys.len());
    for k in keys {
        match k {
            Key::Slice { .. } | Key::Ellipsis | Key::Other { boolean: true, .. } => {
                return Err(invalid(
                    "coordinate selections take integer arrays only; use oindex for slices",
                ))
            }
            Key::Array(a) if a.ndarray && matches!(a.values, ArrayValues::Bools(_)) => {
                return Err(invalid(
                    "boolean arrays in a coordinate selection: use a mask selection",
                ))
            }
            Key::Int(i) => arrays.push(IndexArray {
                shape: vec![1],
                values: ArrayValues::Ints(Ints::Wide(vec![*i])),
                ndarray: false,
            }),
            Key::Array(a) => arrays.push(a.clone()),
            other => arrays.push(IndexArray {
                shape: Vec::new(),
                values: ArrayValues::Other(other.type_name().to_string()),
                ndarray: false,
            }),
        }
    }
    let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.shape.as_slice()).collect();
    let result_shape = broadcast_shape(&shapes).map_err(|e| {
        Error::index(format!(
            "coordinate arrays could not be broadcast together: {e}"
        ))
    })?;
    let k: usize = result_shape.iter().product();
    let mut points = vec![0u64; k * shape.len()];
    for (dim, (a, &n)) in arrays.iter().zip(shape).enumerate() {
        if k == 0 {
            continue;
        }
        let values = match &a.values {
            ArrayValues::Ints(v) => v,
            _ => {
                return Err(Error::index(format!(
                    "coordinate selections need integer arrays, got {} for axis {dim}",
                    a.dtype()
                )))
            }
        };
        let ndim = shape.len();
        if a.shape == result_shape && values.len() == k {
            // no broadcasting (the common case): straight into the points
            for_each_axis_index(values, n, dim, |p, i| points[p * ndim + dim] = i)?;
            continue;
        }
        let idx = axis_indices(values, n, dim)?;
        for (p, src) in broadcast_positions(&a.shape, &result_shape)
            .into_iter()
            .enumerate()
        {
            points[p * ndim + dim] = idx[src];
        }
    }
    Ok(Normalized {
        selection: Selection::Points(points),
        buffer_shape: vec![k],
        result_shape,
    })
}

/// A boolean array of the array's shape; the result is 1-d, in C order.
pub fn mask(keys: &[Key], shape: &[u64]) -> Result<Normalized> {
    let m = match keys {
        [Key::Array(a)]
            if matches!(a.values, ArrayValues::Bools(_))
                && a.shape.iter().map(|&v| v as u64).eq(shape.iter().copied()) =>
        {
            match &a.values {
                ArrayValues::Bools(m) => m,
                _ => unreachable!("checked above"),
            }
        }
        _ => {
            return Err(Error::index(format!(
                "a mask selection is one boolean array of shape {}",
                py_tuple(shape)
            )))
        }
    };
    if shape.is_empty() {
        return Err(Error::index(
            "mask selection is not possible on a 0-dimensional array",
        ));
    }
    let mut points = Vec::new();
    let mut pos = vec![0u64; shape.len()];
    for &selected in m {
        if selected {
            points.extend_from_slice(&pos);
        }
        for d in (0..shape.len()).rev() {
            pos[d] += 1;
            if pos[d] < shape[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    let k = points.len() / shape.len();
    Ok(Normalized {
        selection: Selection::Points(points),
        buffer_shape: vec![k],
        result_shape: vec![k],
    })
}

/// Whole blocks (chunks of `grid`, one [`DimGrid`] per dimension) by block
/// index: integers keep their dimension; slices of blocks with step 1.
pub fn block(keys: &[Key], shape: &[u64], grid: &[DimGrid]) -> Result<Normalized> {
    if grid.len() != shape.len() {
        return Err(Error::index(format!(
            "a grid of {} dimensions for an array of {}",
            grid.len(),
            shape.len()
        )));
    }
    let keys = expand_ellipsis(keys, shape.len())?;
    let mut dims = Vec::with_capacity(shape.len());
    let mut lens = Vec::with_capacity(shape.len());
    for (dim, ((k, &n), g)) in keys.into_iter().zip(shape).zip(grid).enumerate() {
        let nb = g.nchunks(n);
        // where block `b` starts (the extent past the last block)
        let offset = |b: u64| -> u64 {
            if b >= nb {
                return n;
            }
            g.chunk(b).map_or(n, |(start, _)| start.min(n))
        };
        let (first, last) = if let Some(b) = k.as_int() {
            let j = if b < 0 { b + i128::from(nb) } else { b };
            if j < 0 || j >= i128::from(nb) {
                return Err(bounds(format!(
                    "block index {b} is out of bounds for axis {dim} with {nb} blocks"
                )));
            }
            (j as u64, j as u64 + 1)
        } else if let Key::Slice { start, stop, step } = k {
            match step {
                Some(0) => return Err(Error::value("slice step cannot be zero")),
                None | Some(1) => {}
                Some(_) => {
                    return Err(Error::index(
                        "block selections support slices with step 1 only",
                    ))
                }
            }
            let (first, last, _) = clamp_forward(*start, *stop, 1, nb);
            (first, last)
        } else {
            return Err(Error::index(format!(
                "block selections take integers and slices, got {}",
                k.type_name()
            )));
        };
        let (start, stop) = (offset(first), offset(last));
        let d = DimSelection::Slice {
            start,
            stop: stop.max(start),
            step: 1,
        };
        lens.push(d.len());
        dims.push(d);
    }
    Ok(Normalized {
        selection: Selection::Orthogonal(dims),
        buffer_shape: lens.clone(),
        result_shape: lens,
    })
}

// ----------------------------------------------------------------------------
// zarr-python's per-chunk selections
// ----------------------------------------------------------------------------

/// zarr-python's form of a selection of `nd` dimensions: the first Ellipsis
/// as full slices, full slices appended.
fn pad(keys: &[Key], nd: usize) -> Vec<&Key> {
    let mut out: Vec<&Key> = Vec::with_capacity(nd.max(keys.len()));
    let mut expanded = false;
    for k in keys {
        if *k == Key::Ellipsis && !expanded {
            expanded = true;
            let fill = (nd + 1).saturating_sub(keys.len());
            out.extend(std::iter::repeat_n(&FULL, fill));
        } else {
            out.push(k);
        }
    }
    if out.len() < nd {
        out.resize(nd, &FULL);
    }
    out
}

/// Per dimension `(start, stop, step)` and whether numpy keeps the
/// dimension, for integers and forward slices; None for anything else.
fn zarr_basic(sel: &[&Key], shape: &[usize]) -> Result<Option<(Vec<DimSelection>, Vec<bool>)>> {
    if sel.len() != shape.len() {
        return Ok(None);
    }
    let mut dims = Vec::with_capacity(sel.len());
    let mut kept = Vec::with_capacity(sel.len());
    for (k, &n) in sel.iter().zip(shape) {
        let n64 = n as u64;
        if let Key::Slice { start, stop, step } = k {
            let step = step.unwrap_or(1);
            if step < 1 {
                return Ok(None);
            }
            let (start, stop, step) = clamp_forward(*start, *stop, step, n64);
            dims.push(DimSelection::Slice { start, stop, step });
            kept.push(true);
        } else if let Some(i) = k.as_int() {
            let j = if i < 0 { i + i128::from(n64) } else { i };
            if j < 0 || j >= i128::from(n64) {
                return Err(Error::index(format!(
                    "index {i} is out of bounds for length {n}"
                )));
            }
            dims.push(DimSelection::Slice {
                start: j as u64,
                stop: j as u64 + 1,
                step: 1,
            });
            kept.push(false);
        } else {
            return Ok(None);
        }
    }
    Ok(Some((dims, kept)))
}

/// Integers of an array along an axis of `n`: negative ones counted once from
/// `n`; one still negative is an index error with the message `negative(j)`.
fn wrapped(values: &Ints, n: usize, negative: impl Fn(i128) -> String) -> Result<Vec<u64>> {
    if let Ints::U64(v) = values {
        return Ok(v.clone());
    }
    values
        .iter()
        .map(|i| {
            let j = if i < 0 { i + n as i128 } else { i };
            u64::try_from(j).map_err(|_| Error::index(negative(j)))
        })
        .collect()
}

/// Per-dimension indices for an `np.ix_`-style selection (every dimension an
/// integer array, of length 1 along every axis but its own), or None.
fn zarr_outer(sel: &[&Key], shape: &[usize]) -> Result<Option<Vec<DimSelection>>> {
    let nd = shape.len();
    if sel.len() != nd || nd == 0 {
        return Ok(None);
    }
    let mut dims = Vec::with_capacity(nd);
    for (k, (key, &n)) in sel.iter().zip(shape).enumerate() {
        let Key::Array(a) = key else { return Ok(None) };
        let Some(values @ (Ints::I64(_) | Ints::U64(_))) = a.ints() else {
            return Ok(None);
        };
        if a.shape.len() != nd || a.shape.iter().enumerate().any(|(j, &x)| j != k && x != 1) {
            return Ok(None);
        }
        dims.push(DimSelection::Indices(wrapped(values, n, |j| {
            format!("index {j} is out of bounds for length {n}")
        })?));
    }
    Ok(Some(dims))
}

/// Flat indices for a coordinate selection (one 1-d integer array per
/// dimension, of equal lengths), or for a 1-d buffer selected by a slice or
/// an index array; None for anything else.
fn zarr_points(sel: &[Key], shape: &[usize]) -> Result<Option<Vec<u64>>> {
    let nd = shape.len();
    fn one_d_ints(k: &Key) -> Option<&Ints> {
        match k {
            Key::Array(a) if a.shape.len() == 1 => match a.ints() {
                Some(v @ (Ints::I64(_) | Ints::U64(_))) => Some(v),
                _ => None,
            },
            _ => None,
        }
    }
    if nd == 1 && sel.len() == 1 {
        if let Key::Slice { start, stop, step } = &sel[0] {
            let step = step.unwrap_or(1);
            if step < 1 {
                return Ok(None);
            }
            let (start, stop, step) = clamp_forward(*start, *stop, step, shape[0] as u64);
            return Ok(Some((start..stop).step_by(to_usize(step)).collect()));
        }
        if let Some(v) = one_d_ints(&sel[0]) {
            return wrapped(v, shape[0], negative_flat).map(Some);
        }
    }
    if nd == 0 || sel.len() != nd {
        return Ok(None);
    }
    let Some(cols) = sel.iter().map(one_d_ints).collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    let k = cols[0].len();
    if cols.iter().any(|c| c.len() != k) {
        return Ok(None);
    }
    let mut out = vec![0u64; k];
    for (col, &n) in cols.iter().zip(shape) {
        for (o, i) in out.iter_mut().zip(col.iter()) {
            let j = if i < 0 { i + n as i128 } else { i };
            if j < 0 || j >= n as i128 {
                return Err(Error::value("invalid entry in coordinates array"));
            }
            *o = *o * n as u64 + j as u64;
        }
    }
    Ok(Some(out))
}

/// Flat indices, negative ones counting from the end of `n` (once).
fn repeat(d: &DimSelection, n: usize) -> DimSelection {
    let first = match d {
        DimSelection::Slice { start, .. } => *start,
        DimSelection::Indices(v) => v.first().copied().unwrap_or(0),
    };
    DimSelection::Indices(vec![first; n])
}

/// The region of one chunk of zarr-python's codec pipeline: `chunk` selects
/// in the chunk, `buffer` in the output (reading: `buf[buffer] =
/// chunk[chunk].squeeze(drop_axes)`) or the value (writing: `chunk[chunk] =
/// buf[buffer]` with new axes at `drop_axes`); `buffer` None: a write of one
/// value to every selected element. None where only numpy's general
/// indexing (broadcasting, mixed arrays and slices) can say which elements
/// meet: the caller maps those itself.
pub fn zarr_region(
    chunk: &[Key],
    buffer: Option<&[Key]>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
    drop_axes: &[usize],
    writing: bool,
) -> Result<Option<ChunkRegion>> {
    let nd = chunk_shape.len();
    let csel = pad(chunk, nd);
    let (mut cdims, kept) = match zarr_basic(&csel, chunk_shape)? {
        Some(b) => b,
        None => match zarr_outer(&csel, chunk_shape)? {
            Some(o) => (o, vec![true; nd]),
            None => {
                return zarr_points_region(
                    chunk,
                    buffer,
                    chunk_shape,
                    buffer_shape,
                    drop_axes,
                    writing,
                )
            }
        },
    };
    let Some(buffer) = buffer else {
        return ChunkRegion::chunk_only(&cdims, chunk_shape).map(Some);
    };
    let value_dims: Vec<usize> = (0..nd)
        .filter(|&d| kept[d])
        .enumerate()
        .filter(|(i, _)| !drop_axes.contains(i))
        .map(|(_, d)| d)
        .collect();
    let bsel = pad(buffer, buffer_shape.len());
    let bdims = match zarr_basic(&bsel, buffer_shape)? {
        Some((_, bkept)) if !bkept.iter().all(|&k| k) => return Ok(None),
        Some((b, _)) => b,
        None => match zarr_outer(&bsel, buffer_shape)? {
            Some(b) => b,
            None => return Ok(None),
        },
    };
    if value_dims.len() != bdims.len() {
        return Ok(None);
    }
    let mut buf_for_chunk: Vec<Option<DimSelection>> = vec![None; nd];
    for (&d, mut b) in value_dims.iter().zip(bdims) {
        let (lc, lb) = (cdims[d].len(), b.len());
        if lc != lb {
            if !writing && lc == 1 {
                cdims[d] = repeat(&cdims[d], lb);
            } else if writing && lb == 1 {
                b = repeat(&b, lc);
            } else {
                return Ok(None);
            }
        }
        buf_for_chunk[d] = Some(b);
    }
    ChunkRegion::boxed(&cdims, &buf_for_chunk, chunk_shape, buffer_shape).map(Some)
}

fn zarr_points_region(
    chunk: &[Key],
    buffer: Option<&[Key]>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
    drop_axes: &[usize],
    writing: bool,
) -> Result<Option<ChunkRegion>> {
    let Some(mut c) = zarr_points(chunk, chunk_shape)? else {
        return Ok(None);
    };
    let Some(buffer) = buffer else {
        return ChunkRegion::points(&c, None, chunk_shape, chunk_shape).map(Some);
    };
    let Some(mut b) = zarr_points(buffer, buffer_shape)? else {
        return Ok(None);
    };
    if !drop_axes.is_empty() {
        return Ok(None);
    }
    if c.len() != b.len() {
        if !writing && c.len() == 1 {
            c = vec![c[0]; b.len()];
        } else if writing && b.len() == 1 {
            b = vec![b[0]; c.len()];
        } else {
            return Ok(None);
        }
    }
    ChunkRegion::points(&c, Some(&b), chunk_shape, buffer_shape).map(Some)
}

// ----------------------------------------------------------------------------
// Regions the caller spells out
// ----------------------------------------------------------------------------

/// One side of a region the caller spells out: one key per dimension, or
/// flat indices (points).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Explicit {
    Dims(Vec<Key>),
    Flat(Ints),
}

/// One dimension of an explicit region within `extent`: a `(start, stop,
/// step)` span, a slice (positive step), an integer, or a 1-d integer
/// array (negative indices count from the end, as in numpy).
fn explicit_dim(k: &Key, extent: usize) -> Result<DimSelection> {
    let wrap = |i: i128| -> Result<u64> {
        let j = if i < 0 { i + extent as i128 } else { i };
        u64::try_from(j)
            .map_err(|_| Error::index(format!("index {i} is out of bounds for length {extent}")))
    };
    match k {
        Key::Span { start, stop, step } => Ok(DimSelection::Slice {
            start: *start,
            stop: *stop,
            step: *step,
        }),
        Key::Slice { start, stop, step } => {
            let step = step.unwrap_or(1);
            if step < 1 {
                return Err(Error::index("only slices with step >= 1 are supported"));
            }
            let (start, stop, step) = clamp_forward(*start, *stop, step, extent as u64);
            Ok(DimSelection::Slice { start, stop, step })
        }
        Key::Array(a) if a.shape.len() == 1 && a.ints().is_some() => {
            let v = a.ints().map_or(Ok(Vec::new()), |v| match v {
                Ints::U64(v) => Ok(v.clone()),
                v => v.iter().map(wrap).collect(),
            })?;
            Ok(DimSelection::Indices(v))
        }
        Key::Int(i) => {
            let i = wrap(*i)?;
            Ok(DimSelection::Slice {
                start: i,
                stop: i.saturating_add(1),
                step: 1,
            })
        }
        other => Err(Error::new(
            ErrorKind::Type,
            format!(
                "a dimension of a batch selection is (start, stop, step), a slice, an integer \
                 or an integer array, got {}",
                other.type_name()
            ),
        )),
    }
}

fn negative_flat(_: i128) -> String {
    "negative flat index".to_string()
}

/// Flat indices the caller spells out: taken as they are, never counted from
/// the end.
fn explicit_flat(values: &Ints) -> Result<Vec<u64>> {
    wrapped(values, 0, negative_flat)
}

/// A region the caller spells out: `chunk` one key per chunk dimension, or
/// flat chunk indices; `buffer` likewise (per chunk dimension the next
/// buffer dimension's key, or [`Key::NewAxis`] where the chunk dimension
/// has none), or None for a write of one broadcast value.
pub fn explicit_region(
    chunk: &Explicit,
    buffer: Option<&Explicit>,
    chunk_shape: &[usize],
    buffer_shape: &[usize],
) -> Result<ChunkRegion> {
    match chunk {
        Explicit::Dims(keys) => {
            let dims = keys
                .iter()
                .zip(chunk_shape.iter().chain(std::iter::repeat(&0)))
                .map(|(k, &extent)| explicit_dim(k, extent))
                .collect::<Result<Vec<_>>>()?;
            let Some(buffer) = buffer else {
                return ChunkRegion::chunk_only(&dims, chunk_shape);
            };
            let Explicit::Dims(bkeys) = buffer else {
                return Err(Error::index(
                    "a chunk selected by dimensions needs a buffer selected by dimensions",
                ));
            };
            let mut extents = buffer_shape.iter();
            let bufs = bkeys
                .iter()
                .map(|k| match k {
                    Key::NewAxis => Ok(None),
                    k => explicit_dim(k, extents.next().copied().unwrap_or(0)).map(Some),
                })
                .collect::<Result<Vec<_>>>()?;
            ChunkRegion::boxed(&dims, &bufs, chunk_shape, buffer_shape)
        }
        Explicit::Flat(points) => {
            let points = explicit_flat(points)?;
            let buf = match buffer {
                None => None,
                Some(Explicit::Flat(b)) => Some(explicit_flat(b)?),
                Some(Explicit::Dims(_)) => {
                    return Err(Error::index(
                        "a chunk selected by points needs a buffer selected by points",
                    ))
                }
            };
            ChunkRegion::points(&points, buf.as_deref(), chunk_shape, buffer_shape)
        }
    }
}

pub mod chunk_layout;
pub mod index_space;
pub mod spec_json;
mod transform;
pub use transform::{transform, OutputMap};

#[cfg(test)]
mod tests;
