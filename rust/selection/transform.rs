//! TensorStore index transforms as selections the core evaluates.
//!
//! A transform maps each position of its input domain (a box: an origin and a
//! shape) to one element of the array: every array dimension is a constant,
//! `offset + stride * input[k]`, or `offset + stride * index[input]` with an
//! index array broadcast over the input domain. The result (what a read gives,
//! what a write takes) has the input domain's shape, in C order.
//!
//! Where every array dimension is a constant or follows one input dimension
//! of its own with a nonzero stride, and every other input dimension has one
//! position, the selection is one per array dimension: [`Selection::Orthogonal`]
//! when the input dimensions come in the array's order, else
//! [`Selection::Laid`] with the buffer's step along each array dimension (a
//! transposed view is read straight into its result, nothing copied after).
//! A negative stride is a descending index list. Anything else (index arrays,
//! an input dimension used twice, broadcast input dimensions) is a list of
//! points.

use super::Normalized;
use crate::error::{Error, Result};
use crate::indexing::{c_strides, DimSelection, Selection};

/// How one array dimension's coordinate follows from an input position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputMap {
    /// `offset` everywhere.
    Constant(i64),
    /// `offset + stride * input[dim]`.
    Dim {
        offset: i64,
        stride: i64,
        dim: usize,
    },
    /// `offset + stride * index[input - origin]`: `index` has the input rank
    /// and `shape`, each dimension 1 (broadcast) or the input's extent; C order.
    Array {
        offset: i64,
        stride: i64,
        shape: Vec<usize>,
        index: Vec<i64>,
    },
}

fn overflow(j: usize) -> Error {
    Error::index(format!(
        "the view's coordinates along array dimension {j} overflow 64-bit integers"
    ))
}

/// `offset + stride * x`, or None where it overflows.
pub(super) fn checked_affine(offset: i64, stride: i64, x: i64) -> Option<i64> {
    stride.checked_mul(x)?.checked_add(offset)
}

fn affine(offset: i64, stride: i64, x: i64, j: usize) -> Result<i64> {
    checked_affine(offset, stride, x).ok_or_else(|| overflow(j))
}

impl OutputMap {
    /// The array coordinate at input position `pos` (counted from `origin`),
    /// or None where it overflows.
    pub(super) fn at(&self, origin: &[i64], pos: &[usize]) -> Option<i64> {
        match self {
            OutputMap::Constant(offset) => Some(*offset),
            &OutputMap::Dim {
                offset,
                stride,
                dim,
            } => checked_affine(offset, stride, origin[dim].checked_add(pos[dim] as i64)?),
            OutputMap::Array {
                offset,
                stride,
                shape,
                index,
            } => {
                let mut at = 0usize;
                for (&n, &x) in shape.iter().zip(pos) {
                    at = at * n + if n == 1 { 0 } else { x };
                }
                checked_affine(*offset, *stride, index[at])
            }
        }
    }
}

/// The lowest and highest coordinate of array dimension `j` the map selects
/// over a non-empty input domain.
pub(super) fn output_range(
    m: &OutputMap,
    origin: &[i64],
    input: &[usize],
    j: usize,
) -> Result<(i64, i64)> {
    let (a, b) = match m {
        OutputMap::Constant(offset) => (*offset, *offset),
        OutputMap::Dim {
            offset,
            stride,
            dim,
        } => {
            let last = i64::try_from(input[*dim] - 1)
                .ok()
                .and_then(|n| origin[*dim].checked_add(n))
                .ok_or_else(|| overflow(j))?;
            (
                affine(*offset, *stride, origin[*dim], j)?,
                affine(*offset, *stride, last, j)?,
            )
        }
        OutputMap::Array {
            offset,
            stride,
            index,
            ..
        } => {
            let lo = index.iter().copied().min().unwrap_or(0);
            let hi = index.iter().copied().max().unwrap_or(0);
            (
                affine(*offset, *stride, lo, j)?,
                affine(*offset, *stride, hi, j)?,
            )
        }
    };
    Ok((a.min(b), a.max(b)))
}

/// Check the maps against the input domain: one per array dimension, input
/// dimensions in range, index arrays shaped to broadcast over the input.
fn check_maps(maps: &[OutputMap], shape: &[u64], input: &[usize]) -> Result<()> {
    if maps.len() != shape.len() {
        return Err(Error::index(format!(
            "a transform onto an array of {} dimensions needs {0} output maps, got {}",
            shape.len(),
            maps.len()
        )));
    }
    for (j, m) in maps.iter().enumerate() {
        match m {
            OutputMap::Constant(_) => {}
            OutputMap::Dim { dim, .. } if *dim >= input.len() => {
                return Err(Error::index(format!(
                    "output map {j} names input dimension {dim} of a domain of rank {}",
                    input.len()
                )))
            }
            OutputMap::Dim { .. } => {}
            OutputMap::Array {
                shape: s, index, ..
            } => {
                let fits = s.len() == input.len()
                    && s.iter().zip(input).all(|(&a, &n)| a == 1 || a == n)
                    && s.iter().product::<usize>() == index.len();
                if !fits {
                    return Err(Error::index(format!(
                        "output map {j}: an index array of shape {s:?} and {} values does \
                         not broadcast over the input domain's shape {input:?}",
                        index.len()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The selection of an array of `shape` that a transform with input domain
/// `origin` + `input` (shape) and `maps` (one per array dimension) stands for;
/// its result and buffer have the input domain's shape. `steps`: the buffer's
/// step along each input dimension in elements (a value written as it lies
/// in memory, e.g. a transposed numpy array), C order when `None`; a
/// selection of points needs a buffer that is one block in some dimension
/// order (its points are listed in that order).
pub fn transform(
    shape: &[u64],
    origin: &[i64],
    input: &[usize],
    maps: &[OutputMap],
    steps: Option<&[usize]>,
) -> Result<Normalized> {
    if origin.len() != input.len() {
        return Err(Error::index(format!(
            "an input domain of {} origins and {} extents",
            origin.len(),
            input.len()
        )));
    }
    check_maps(maps, shape, input)?;
    let c_order = c_strides(input);
    let steps = match steps {
        Some(s) if s.len() != input.len() => {
            return Err(Error::index(format!(
                "{} buffer steps for an input domain of rank {}",
                s.len(),
                input.len()
            )))
        }
        Some(s) => s,
        None => &c_order,
    };
    let normalized = |selection| Normalized {
        selection,
        buffer_shape: input.to_vec(),
        result_shape: input.to_vec(),
    };
    if input.contains(&0) {
        let none = DimSelection::Slice {
            start: 0,
            stop: 0,
            step: 1,
        };
        return Ok(normalized(Selection::Orthogonal(vec![none; shape.len()])));
    }
    for (j, (m, &n)) in maps.iter().zip(shape).enumerate() {
        let (lo, hi) = output_range(m, origin, input, j)?;
        if lo < 0 || u64::try_from(hi).ok().is_none_or(|hi| hi >= n) {
            return Err(Error::index(format!(
                "the view selects indices [{lo}, {}) of array dimension {j}, which has \
                 bounds [0, {n})",
                i128::from(hi) + 1
            )));
        }
    }
    match per_dimension(maps, origin, input, steps) {
        Some((dims, strides)) => {
            let lens: Vec<usize> = dims.iter().map(DimSelection::len).collect();
            let c = c_strides(&lens);
            let in_order = lens
                .iter()
                .zip(&c)
                .zip(&strides)
                .all(|((&n, a), b)| n < 2 || a == b);
            Ok(normalized(if in_order {
                Selection::Orthogonal(dims)
            } else {
                Selection::Laid { dims, strides }
            }))
        }
        None => {
            let order = memory_order(steps, input).ok_or_else(|| {
                Error::index(
                    "a transform read or written as points needs a buffer that is one block \
                     in some dimension order",
                )
            })?;
            Ok(normalized(Selection::Points(points(
                maps, origin, input, &order,
            )?)))
        }
    }
}

/// One selection per array dimension and the buffer's step along each, when
/// the transform has that form (see the module's documentation).
fn per_dimension(
    maps: &[OutputMap],
    origin: &[i64],
    input: &[usize],
    steps: &[usize],
) -> Option<(Vec<DimSelection>, Vec<usize>)> {
    let mut used = vec![false; input.len()];
    let mut dims = Vec::with_capacity(maps.len());
    let mut strides = Vec::with_capacity(maps.len());
    for m in maps {
        // the range was checked: every coordinate is in [0, shape)
        let (offset, stride, k) = match *m {
            OutputMap::Constant(offset) => {
                dims.push(DimSelection::one(offset as u64));
                strides.push(0);
                continue;
            }
            OutputMap::Dim {
                offset,
                stride,
                dim,
            } if stride != 0 && !used[dim] => (offset, stride, dim),
            _ => return None,
        };
        used[k] = true;
        let n = input[k];
        let first = (offset + stride * origin[k]) as u64;
        dims.push(if stride > 0 {
            DimSelection::Slice {
                start: first,
                stop: first + stride as u64 * (n as u64 - 1) + 1,
                step: stride as u64,
            }
        } else {
            let step = stride.unsigned_abs();
            DimSelection::Indices((0..n as u64).map(|x| first - step * x).collect())
        });
        strides.push(steps[k]);
    }
    let broadcast = used.iter().zip(input).any(|(&u, &n)| !u && n > 1);
    (!broadcast).then_some((dims, strides))
}

/// The input dimensions, outermost first, in which a buffer with `steps` is
/// one C-ordered block (dimensions of extent 1 step anyhow), or `None`.
fn memory_order(steps: &[usize], input: &[usize]) -> Option<Vec<usize>> {
    let mut order: Vec<usize> = (0..input.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(steps[k]));
    let mut want = 1usize;
    for &k in order.iter().rev() {
        if input[k] > 1 && steps[k] != want {
            return None;
        }
        want = want.checked_mul(input[k])?;
    }
    Some(order)
}

/// The array coordinates of every input position (`ndim` per position), the
/// positions in the order a buffer laid out in `order` (outermost input
/// dimension first) holds them.
fn points(
    maps: &[OutputMap],
    origin: &[i64],
    input: &[usize],
    order: &[usize],
) -> Result<Vec<u64>> {
    let npoints = input.iter().try_fold(1usize, |n, &x| n.checked_mul(x));
    let ndim = maps.len();
    if ndim == 0 {
        return Err(Error::index(
            "a transform that broadcasts over a 0-dimensional array: read the element and \
             broadcast it",
        ));
    }
    let size = npoints.and_then(|n| n.checked_mul(ndim));
    let size =
        size.ok_or_else(|| Error::memory("a transform's points overflow the address space"))?;
    let npoints = size / ndim;
    let mut out = crate::alloc::filled(0u64, size)?;
    let mut pos = vec![0usize; input.len()];
    for p in 0..npoints {
        for (j, m) in maps.iter().enumerate() {
            let v = m.at(origin, &pos).ok_or_else(|| overflow(j))?;
            // in [0, shape): checked with the ranges
            out[p * ndim + j] = v as u64;
        }
        // the next position, in memory order
        for &k in order.iter().rev() {
            pos[k] += 1;
            if pos[k] < input[k] {
                break;
            }
            pos[k] = 0;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(offset: i64, stride: i64, dim: usize) -> OutputMap {
        OutputMap::Dim {
            offset,
            stride,
            dim,
        }
    }

    #[test]
    fn identity_is_orthogonal() {
        let n = transform(
            &[4, 5],
            &[0, 0],
            &[4, 5],
            &[dim(0, 1, 0), dim(0, 1, 1)],
            None,
        )
        .unwrap();
        assert_eq!(
            n.selection,
            Selection::Orthogonal(vec![
                DimSelection::Slice {
                    start: 0,
                    stop: 4,
                    step: 1
                },
                DimSelection::Slice {
                    start: 0,
                    stop: 5,
                    step: 1
                },
            ])
        );
        assert_eq!(n.result_shape, vec![4, 5]);
    }

    #[test]
    fn transpose_is_laid_out_by_strides() {
        // input (j, i) -> array (i, j): array dimension 0 steps by 1 in the buffer
        let n = transform(
            &[4, 5],
            &[0, 0],
            &[5, 4],
            &[dim(0, 1, 1), dim(0, 1, 0)],
            None,
        )
        .unwrap();
        let Selection::Laid { strides, .. } = &n.selection else {
            panic!("{n:?}")
        };
        assert_eq!(strides, &vec![1, 4]);
        assert_eq!(n.buffer_shape, vec![5, 4]);
    }

    #[test]
    fn negative_stride_and_origin() {
        // input x in [10, 13) -> array 12 - x: 2, 1, 0
        let n = transform(&[3], &[10], &[3], &[dim(12, -1, 0)], None).unwrap();
        assert_eq!(
            n.selection,
            Selection::Orthogonal(vec![DimSelection::Indices(vec![2, 1, 0])])
        );
    }

    #[test]
    fn constants_keep_the_input_shape() {
        let n = transform(
            &[4, 5],
            &[0],
            &[5],
            &[OutputMap::Constant(2), dim(0, 1, 0)],
            None,
        )
        .unwrap();
        assert_eq!(n.buffer_shape, vec![5]);
        assert!(matches!(n.selection, Selection::Orthogonal(_)));
    }

    #[test]
    fn index_arrays_are_points() {
        // input (a, b) of shape (2, 3): array0 = index[a], array1 = b
        let maps = [
            OutputMap::Array {
                offset: 0,
                stride: 1,
                shape: vec![2, 1],
                index: vec![3, 1],
            },
            dim(0, 1, 1),
        ];
        let n = transform(&[4, 3], &[0, 0], &[2, 3], &maps, None).unwrap();
        assert_eq!(
            n.selection,
            Selection::Points(vec![3, 0, 3, 1, 3, 2, 1, 0, 1, 1, 1, 2])
        );
    }

    #[test]
    fn a_diagonal_and_broadcasts_are_points() {
        let n = transform(&[3, 3], &[0], &[3], &[dim(0, 1, 0), dim(0, 1, 0)], None).unwrap();
        assert_eq!(n.selection, Selection::Points(vec![0, 0, 1, 1, 2, 2]));
        let n = transform(&[3], &[0, 0], &[2, 3], &[dim(0, 1, 1)], None).unwrap();
        assert_eq!(n.selection, Selection::Points(vec![0, 1, 2, 0, 1, 2]));
    }

    #[test]
    fn out_of_bounds_and_bad_maps_are_errors() {
        let e = transform(&[4], &[0], &[5], &[dim(0, 1, 0)], None).unwrap_err();
        assert!(
            e.to_string()
                .contains("indices [0, 5) of array dimension 0"),
            "{e}"
        );
        let e = transform(&[4], &[0], &[2], &[dim(i64::MAX, 2, 0)], None).unwrap_err();
        assert!(e.to_string().contains("overflow"), "{e}");
        assert!(transform(&[4], &[0], &[2], &[dim(0, 1, 3)], None).is_err());
        assert!(transform(&[4, 4], &[0], &[2], &[dim(0, 1, 0)], None).is_err());
        let bad = OutputMap::Array {
            offset: 0,
            stride: 1,
            shape: vec![3],
            index: vec![0, 1, 2],
        };
        assert!(transform(&[4], &[0], &[2], &[bad], None).is_err());
    }

    #[test]
    fn a_buffer_in_array_order_is_orthogonal() {
        // input (j, i) -> array (i, j), the buffer laid out (i, j): a transposed
        // numpy value written as it lies
        let maps = [dim(0, 1, 1), dim(0, 1, 0)];
        let n = transform(&[4, 5], &[0, 0], &[5, 4], &maps, Some(&[1, 5])).unwrap();
        assert!(matches!(n.selection, Selection::Orthogonal(_)), "{n:?}");
        // points are listed in the buffer's memory order: input (a, b) of shape
        // (2, 3) -> array (a, b, b), the buffer laid out (b, a)
        let diagonal = [dim(0, 1, 0), dim(0, 1, 1), dim(0, 1, 1)];
        let n = transform(&[4, 4, 4], &[0, 0], &[2, 3], &diagonal, Some(&[1, 2])).unwrap();
        assert_eq!(
            n.selection,
            Selection::Points(vec![0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 2, 2, 1, 2, 2])
        );
        // a buffer with gaps is not one block
        assert!(transform(&[4, 4, 4], &[0, 0], &[2, 3], &diagonal, Some(&[1, 4])).is_err());
    }

    #[test]
    fn points_past_memory_are_an_error() {
        // stride 0: every input position is array index 0, 2^50 points
        let e = transform(&[4], &[0], &[1 << 50], &[dim(0, 0, 0)], None).unwrap_err();
        assert_eq!(e.kind, crate::error::ErrorKind::Memory, "{e}");
        let e = transform(&[4], &[0, 0], &[1 << 40, 1 << 40], &[dim(0, 0, 0)], None);
        assert!(e.is_err());
    }

    #[test]
    fn empty_domains_select_nothing() {
        let n = transform(&[4], &[0], &[0], &[dim(100, 1, 0)], None).unwrap();
        assert_eq!(n.result_shape, vec![0]);
    }
}
