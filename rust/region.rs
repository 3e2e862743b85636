//! The part of one chunk a read or write touches, and where those elements
//! are in the caller's buffer (the output of a read, the value of a write).
//!
//! Regions are owned (a task can outlive the selection it came from) and
//! cheap to clone: a dimension's part is shared by every chunk in its row of
//! the grid. A region can be split among a regular grid of parts of its
//! chunk and mapped through a transpose: what a codec that decodes in part
//! (see [`crate::codec::partial`]) does with it.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::indexing::{c_strides, for_each_run, DimChunk, DimSelection, Layout};

/// The elements of one chunk a task touches and their places in the buffer.
#[derive(Debug, Clone)]
pub enum ChunkRegion {
    /// The outer product of one part per chunk dimension. `buffer_shape` is
    /// the buffer's shape with a 1 inserted at each chunk dimension that has
    /// no buffer dimension (an integer index, which numpy drops);
    /// `buffer_strides` the buffer's step along each chunk dimension (C order
    /// over `buffer_shape`, unless the region was mapped through a transpose).
    Box {
        parts: Vec<Arc<DimChunk>>,
        buffer_shape: Vec<usize>,
        buffer_strides: Vec<usize>,
    },
    /// (flat index in the chunk, flat index in the buffer) pairs, in order.
    Points(Vec<(usize, usize)>),
    /// Selects nothing.
    Empty,
}

/// The indices a dimension selection stands for, each below `extent`.
/// `what` names the dimension in errors; it is called only when one is raised
/// (a batch expands thousands of selections, and formatting each name costs
/// more than the expansion).
fn expand(sel: &DimSelection, extent: usize, what: impl Fn() -> String) -> Result<Vec<usize>> {
    let out: Vec<usize> = match *sel {
        DimSelection::Slice { start, stop, step } => {
            if step == 0 {
                return Err(Error::index(format!(
                    "{}: slice step must be positive",
                    what()
                )));
            }
            // The first index the slice would reach at or past the end.
            let past_end = if start >= extent as u64 {
                Some(start)
            } else {
                (extent as u64 - start)
                    .div_ceil(step)
                    .checked_mul(step)
                    .and_then(|k| k.checked_add(start))
            };
            if let Some(bad) = past_end.filter(|&i| i < stop) {
                return Err(Error::index(format!(
                    "{}: index {bad} is out of bounds for length {extent}",
                    what()
                )));
            }
            (start..stop.max(start))
                .step_by(usize::try_from(step).unwrap_or(usize::MAX))
                .map(|i| i as usize)
                .collect()
        }
        DimSelection::Indices(ref v) => v
            .iter()
            .map(|&i| usize::try_from(i).unwrap_or(usize::MAX))
            .collect(),
    };
    if let Some(bad) = out.iter().find(|&&i| i >= extent) {
        return Err(Error::index(format!(
            "{}: index {bad} is out of bounds for length {extent}",
            what()
        )));
    }
    Ok(out)
}

impl ChunkRegion {
    /// A box over whole-buffer parts: `parts` (one per chunk dimension)
    /// placed in a C-order buffer of `buffer_shape` (one entry per chunk
    /// dimension).
    pub fn from_parts(parts: Vec<Arc<DimChunk>>, buffer_shape: Vec<usize>) -> Self {
        let buffer_strides = c_strides(&buffer_shape);
        Self::laid_out(parts, buffer_shape, buffer_strides)
    }

    /// A box over whole-buffer parts placed in a buffer of `buffer_shape`
    /// (one entry per chunk dimension) with `buffer_strides` (elements per
    /// step along each).
    pub fn laid_out(
        parts: Vec<Arc<DimChunk>>,
        buffer_shape: Vec<usize>,
        buffer_strides: Vec<usize>,
    ) -> Self {
        if parts.iter().any(|p| p.src.is_empty()) {
            return ChunkRegion::Empty;
        }
        ChunkRegion::Box {
            parts,
            buffer_shape,
            buffer_strides,
        }
    }

    /// A box: one selection per chunk dimension, and per chunk dimension the
    /// buffer dimension's selection (buffer dimensions in order) or `None`
    /// where the chunk dimension has none (it must then select one element).
    pub fn boxed(
        chunk: &[DimSelection],
        buffer: &[Option<DimSelection>],
        chunk_shape: &[usize],
        buffer_shape: &[usize],
    ) -> Result<Self> {
        if chunk.len() != chunk_shape.len() || buffer.len() != chunk_shape.len() {
            return Err(Error::index(format!(
                "a chunk of {} dimensions needs {0} chunk and buffer selections, got {} and {}",
                chunk_shape.len(),
                chunk.len(),
                buffer.len()
            )));
        }
        let mapped = buffer.iter().filter(|b| b.is_some()).count();
        if mapped != buffer_shape.len() {
            return Err(Error::index(format!(
                "the selection maps {mapped} chunk dimensions to a buffer of {} dimensions",
                buffer_shape.len()
            )));
        }
        let mut parts = Vec::with_capacity(chunk.len());
        let mut shape = Vec::with_capacity(chunk.len());
        let mut next = buffer_shape.iter();
        let mut empty = false;
        for (d, ((c, b), &len)) in chunk.iter().zip(buffer).zip(chunk_shape).enumerate() {
            let src = expand(c, len, || format!("chunk dimension {d}"))?;
            let (dst, extent) = match b {
                Some(b) => {
                    let extent = next.next().copied().unwrap_or(0);
                    (
                        expand(b, extent, || {
                            format!("buffer dimension of chunk dimension {d}")
                        })?,
                        extent,
                    )
                }
                None if src.len() == 1 => (vec![0], 1),
                None => {
                    return Err(Error::index(format!(
                        "chunk dimension {d} selects {} elements but has no buffer dimension",
                        src.len()
                    )))
                }
            };
            if src.len() != dst.len() {
                return Err(Error::index(format!(
                    "chunk dimension {d} selects {} elements, its buffer dimension {}",
                    src.len(),
                    dst.len()
                )));
            }
            empty |= src.is_empty();
            parts.push(Arc::new(DimChunk::new(0, src, dst, len)));
            shape.push(extent);
        }
        if empty {
            return Ok(ChunkRegion::Empty);
        }
        Ok(Self::from_parts(parts, shape))
    }

    /// A box over the chunk alone, for writes of one value broadcast to every
    /// selected element (the buffer side mirrors the chunk side).
    pub fn chunk_only(chunk: &[DimSelection], chunk_shape: &[usize]) -> Result<Self> {
        let buffer: Vec<Option<DimSelection>> = chunk.iter().cloned().map(Some).collect();
        Self::boxed(chunk, &buffer, chunk_shape, chunk_shape)
    }

    /// Points: flat indices in the chunk and the matching flat indices in the
    /// buffer (`None`: mirror the chunk side, for broadcast writes).
    pub fn points(
        chunk: &[u64],
        buffer: Option<&[u64]>,
        chunk_shape: &[usize],
        buffer_shape: &[usize],
    ) -> Result<Self> {
        let n_chunk = checked_product(chunk_shape)?;
        let (buffer, n_buffer) = match buffer {
            Some(b) => (b, checked_product(buffer_shape)?),
            None => (chunk, n_chunk),
        };
        if chunk.len() != buffer.len() {
            return Err(Error::index(format!(
                "{} chunk points but {} buffer points",
                chunk.len(),
                buffer.len()
            )));
        }
        if chunk.is_empty() {
            return Ok(ChunkRegion::Empty);
        }
        let pairs = chunk
            .iter()
            .zip(buffer)
            .map(|(&c, &b)| match (usize::try_from(c), usize::try_from(b)) {
                (Ok(c), Ok(b)) if c < n_chunk && b < n_buffer => Ok((c, b)),
                _ => Err(Error::index(format!(
                    "point ({c}, {b}) is outside the chunk ({n_chunk} elements) or the buffer \
                     ({n_buffer} elements)"
                ))),
            })
            .collect::<Result<_>>()?;
        Ok(ChunkRegion::Points(pairs))
    }

    /// Whether the region is every in-bounds element of the chunk (the part
    /// of an edge chunk past the array's end excluded).
    pub fn covers_chunk(&self) -> bool {
        match self {
            ChunkRegion::Box { parts, .. } => parts.iter().all(|p| p.covers_chunk),
            _ => false,
        }
    }

    /// Whether the region is every element of a chunk of `chunk_shape`, the
    /// part past the array's end included (so not an edge chunk).
    pub fn covers_full_chunk(&self, chunk_shape: &[usize]) -> bool {
        match self {
            ChunkRegion::Box { parts, .. } => parts
                .iter()
                .zip(chunk_shape)
                .all(|(p, &n)| p.covers_chunk && p.src.len() == n),
            _ => false,
        }
    }

    /// Visit runs of elements to copy: `f(from, to, n)` in elements, from a
    /// chunk of `chunk_shape` to the buffer when `to_output`, else from the
    /// buffer into the chunk.
    pub fn for_each_run(
        &self,
        chunk_shape: &[usize],
        to_output: bool,
        mut f: impl FnMut(usize, usize, usize),
    ) {
        match self {
            ChunkRegion::Box {
                parts,
                buffer_shape,
                buffer_strides,
            } => {
                let refs: Vec<&DimChunk> = parts.iter().map(|p| &**p).collect();
                let chunk = Layout::chunk(chunk_shape);
                let buffer = Layout::strided_selection(buffer_shape, buffer_strides);
                if to_output {
                    for_each_run(&refs, chunk, buffer, f)
                } else {
                    for_each_run(&refs, buffer, chunk, f)
                }
            }
            ChunkRegion::Points(pairs) => {
                for &(c, o) in pairs {
                    if to_output {
                        f(c, o, 1)
                    } else {
                        f(o, c, 1)
                    }
                }
            }
            ChunkRegion::Empty => {}
        }
    }

    /// Where a whole chunk of `chunk_shape` lands as one contiguous run of the
    /// buffer (an element offset), if it does.
    pub fn contiguous_offset(&self, chunk_shape: &[usize]) -> Option<usize> {
        let ChunkRegion::Box {
            parts,
            buffer_strides,
            ..
        } = self
        else {
            return None;
        };
        if !self.covers_full_chunk(chunk_shape) {
            return None;
        }
        // Row-major over exactly the chunk's extents, from the first part on.
        let mut want = 1usize;
        for (d, (p, &s)) in parts.iter().zip(buffer_strides).enumerate().rev() {
            if !p.unit_stride || (d > 0 && p.dst[0] != 0) || (s != want && p.src.len() > 1) {
                return None;
            }
            want = want.checked_mul(p.src.len())?;
        }
        Some(
            parts
                .iter()
                .zip(buffer_strides)
                .map(|(p, s)| p.dst[0] * s)
                .sum(),
        )
    }

    /// The region seen through a transpose: the encoded array's dimension `i`
    /// is the decoded array's dimension `order[i]`; `decoded_shape` is the
    /// chunk's shape before the transpose.
    pub fn transposed(&self, order: &[usize], decoded_shape: &[usize]) -> Self {
        match self {
            ChunkRegion::Box {
                parts,
                buffer_shape,
                buffer_strides,
            } => ChunkRegion::Box {
                parts: order.iter().map(|&d| Arc::clone(&parts[d])).collect(),
                buffer_shape: order.iter().map(|&d| buffer_shape[d]).collect(),
                buffer_strides: order.iter().map(|&d| buffer_strides[d]).collect(),
            },
            ChunkRegion::Points(pairs) => {
                let dec = c_strides(decoded_shape);
                let enc_shape: Vec<usize> = order.iter().map(|&d| decoded_shape[d]).collect();
                let enc = c_strides(&enc_shape);
                ChunkRegion::Points(
                    pairs
                        .iter()
                        .map(|&(c, b)| {
                            let mut flat = 0;
                            for (i, &d) in order.iter().enumerate() {
                                let x = (c / dec[d]) % decoded_shape[d];
                                flat += x * enc[i];
                            }
                            (flat, b)
                        })
                        .collect(),
                )
            }
            ChunkRegion::Empty => ChunkRegion::Empty,
        }
    }

    /// This region with every axis reversed, chunk and buffer alike, for a
    /// buffer that is Fortran-ordered: the region of the chunk's reversed
    /// view (a chain that began by reversing every axis, without that
    /// transpose) that puts the same elements in the same memory, a C-ordered
    /// box over the reversed buffer, so that each chunk's bytes are placed in
    /// contiguous runs as they are. `None` for points (their buffer indices
    /// are flat C-order ones) and for a box whose buffer steps are not C
    /// order over its buffer's shape (a broadcast value, a region already
    /// mapped through a transpose).
    pub fn reversed_for_fortran(&self) -> Option<ChunkRegion> {
        match self {
            ChunkRegion::Empty => Some(ChunkRegion::Empty),
            ChunkRegion::Points(_) => None,
            ChunkRegion::Box {
                parts,
                buffer_shape,
                buffer_strides,
            } => {
                if *buffer_strides != c_strides(buffer_shape) {
                    return None;
                }
                // In a Fortran-ordered buffer, dimension i steps by the product
                // of the extents before it: C order over the reversed shape.
                let shape: Vec<usize> = buffer_shape.iter().rev().copied().collect();
                Some(ChunkRegion::Box {
                    parts: parts.iter().rev().cloned().collect(),
                    buffer_strides: c_strides(&shape),
                    buffer_shape: shape,
                })
            }
        }
    }

    /// The parts of a regular grid over the chunk (parts of shape `part`,
    /// the chunk of shape `chunk`) this region touches: (the part's position
    /// by `position` of its grid coordinates, the region inside that part),
    /// in position order for a box, by position for points.
    pub fn split_grid(
        &self,
        part: &[usize],
        chunk: &[usize],
        position: impl Fn(&[usize]) -> usize,
    ) -> Vec<(usize, ChunkRegion)> {
        let inner = part;
        match self {
            ChunkRegion::Empty => Vec::new(),
            ChunkRegion::Box {
                parts,
                buffer_shape,
                buffer_strides,
            } => {
                // Per dimension, the parts grouped by inner chunk.
                let per_dim: Vec<Vec<Arc<DimChunk>>> = parts
                    .iter()
                    .zip(inner)
                    .map(|(p, &n)| {
                        let mut groups: BTreeMap<usize, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
                        for (&s, &d) in p.src.iter().zip(&p.dst) {
                            let g = groups.entry(s / n).or_default();
                            g.0.push(s % n);
                            g.1.push(d);
                        }
                        groups
                            .into_iter()
                            .map(|(c, (src, dst))| Arc::new(DimChunk::new(c as u64, src, dst, n)))
                            .collect()
                    })
                    .collect();
                let mut combos: Vec<Vec<Arc<DimChunk>>> = vec![Vec::new()];
                for dim in &per_dim {
                    combos = combos
                        .iter()
                        .flat_map(|prefix| {
                            dim.iter().map(move |p| {
                                let mut next = prefix.clone();
                                next.push(Arc::clone(p));
                                next
                            })
                        })
                        .collect();
                }
                combos
                    .into_iter()
                    .map(|parts| {
                        let coords: Vec<usize> = parts.iter().map(|p| p.chunk as usize).collect();
                        let region = ChunkRegion::Box {
                            parts,
                            buffer_shape: buffer_shape.clone(),
                            buffer_strides: buffer_strides.clone(),
                        };
                        (position(&coords), region)
                    })
                    .collect()
            }
            ChunkRegion::Points(pairs) => {
                let chunk_strides = c_strides(chunk);
                let inner_strides = c_strides(inner);
                let mut groups: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
                for &(c, b) in pairs {
                    let mut rest = c;
                    let mut coords = Vec::with_capacity(inner.len());
                    let mut flat = 0;
                    for ((&stride, &n), &istride) in
                        chunk_strides.iter().zip(inner).zip(&inner_strides)
                    {
                        let x = rest / stride;
                        rest %= stride;
                        coords.push(x / n);
                        flat += (x % n) * istride;
                    }
                    groups.entry(position(&coords)).or_default().push((flat, b));
                }
                groups
                    .into_iter()
                    .map(|(pos, pairs)| (pos, ChunkRegion::Points(pairs)))
                    .collect()
            }
        }
    }
}

fn checked_product(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |a, &n| a.checked_mul(n))
        .ok_or_else(|| Error::index(format!("shape {shape:?} has too many elements")))
}

/// The words of a bitmap that bits `[t, t + k)` (k > 0) fall in, with the mask of each.
fn bit_words(t: usize, k: usize) -> impl Iterator<Item = (usize, u64)> {
    let (first, last) = (t / 64, (t + k - 1) / 64);
    (first..=last).map(move |w| {
        let lo = if w == first { t % 64 } else { 0 };
        let hi = if w == last { (t + k - 1) % 64 } else { 63 };
        let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << lo);
        (w, mask)
    })
}

/// Error unless the regions write disjoint elements of a buffer of `n`
/// elements (one element may repeat within one chunk, not across chunks),
/// so that the decoding threads write disjoint bytes; and unless every
/// element written is inside the buffer.
///
/// `unique`: no element may repeat at all, not even within one chunk's region
/// (for chunks read in part, whose inner chunks decode on different threads).
pub fn check_disjoint(
    regions: &[&ChunkRegion],
    chunk_shape: &[usize],
    n: usize,
    unique: bool,
) -> Result<()> {
    match box_footprints(regions, n) {
        // Unit-stride boxes never repeat an element within a region.
        Some(rects) => check_disjoint_boxes(rects),
        None => check_disjoint_runs(regions, chunk_shape, n, unique),
    }
}

/// Each non-empty region's footprint in the buffer as a half-open
/// hyper-rectangle (`[lo, hi)` per buffer dimension), when every region is a
/// C-order box of unit-stride parts over the same buffer shape of `n`
/// elements with every footprint inside it; else None.
fn box_footprints(regions: &[&ChunkRegion], n: usize) -> Option<Vec<Vec<(usize, usize)>>> {
    let mut shape: Option<&[usize]> = None;
    let mut rects = Vec::with_capacity(regions.len());
    for r in regions {
        let ChunkRegion::Box {
            parts,
            buffer_shape,
            buffer_strides,
        } = r
        else {
            if matches!(r, ChunkRegion::Empty) {
                continue;
            }
            return None;
        };
        match shape {
            None if buffer_shape.iter().product::<usize>() == n => shape = Some(buffer_shape),
            Some(s) if s == buffer_shape.as_slice() => {}
            _ => return None,
        }
        if *buffer_strides != c_strides(buffer_shape)
            || parts.len() != buffer_shape.len()
            || parts.iter().any(|p| !p.unit_stride)
        {
            return None;
        }
        let rect: Vec<(usize, usize)> = parts
            .iter()
            .map(|p| (p.dst[0], p.dst[0] + p.dst.len()))
            .collect();
        if rect.iter().zip(buffer_shape).any(|(&(_, hi), &e)| hi > e) {
            return None;
        }
        rects.push(rect);
    }
    Some(rects)
}

/// Error if two of the hyper-rectangles intersect: a sweep along the
/// dimension whose lower bounds are most spread.
fn check_disjoint_boxes(mut rects: Vec<Vec<(usize, usize)>>) -> Result<()> {
    let Some(ndim) = rects.first().map(Vec::len) else {
        return Ok(());
    };
    let mut dim = 0;
    let mut most = 0;
    for d in 0..ndim {
        let mut los: Vec<usize> = rects.iter().map(|r| r[d].0).collect();
        los.sort_unstable();
        los.dedup();
        if los.len() > most {
            (dim, most) = (d, los.len());
        }
    }
    rects.sort_unstable_by_key(|r| r[dim].0);
    for (i, a) in rects.iter().enumerate() {
        for b in rects[i + 1..].iter().take_while(|b| b[dim].0 < a[dim].1) {
            if a.iter().zip(b).all(|(x, y)| x.0 < y.1 && y.0 < x.1) {
                return Err(Error::index("the buffer regions of two chunks overlap"));
            }
        }
    }
    Ok(())
}

/// `check_disjoint` for any regions: marks every element in a bitmap.
fn check_disjoint_runs(
    regions: &[&ChunkRegion],
    chunk_shape: &[usize],
    n: usize,
    unique: bool,
) -> Result<()> {
    let mut taken = vec![0u64; n.div_ceil(64)];
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mark = |taken: &mut [u64], runs: &[(usize, usize)]| -> Result<()> {
        for &(t, k) in runs.iter().filter(|(_, k)| *k > 0) {
            if bit_words(t, k).any(|(w, m)| taken[w] & m != 0) {
                return Err(Error::index(if unique {
                    "a buffer element is read twice from a chunk read in part"
                } else {
                    "the buffer regions of two chunks overlap"
                }));
            }
            if unique {
                for (w, m) in bit_words(t, k) {
                    taken[w] |= m;
                }
            }
        }
        Ok(())
    };
    for r in regions {
        runs.clear();
        let mut outside = false;
        r.for_each_run(chunk_shape, true, |_, t, k| {
            outside |= t.checked_add(k).is_none_or(|end| end > n);
            runs.push((t, k));
        });
        if outside {
            return Err(Error::index(format!(
                "a chunk's region reaches outside the buffer of {n} elements"
            )));
        }
        // Unique: every run is checked and marked in turn, so a repeat within
        // the region is caught; else the region is checked whole, then marked.
        mark(&mut taken, &runs)?;
        if !unique {
            for &(t, k) in runs.iter().filter(|(_, k)| *k > 0) {
                for (w, m) in bit_words(t, k) {
                    taken[w] |= m;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sl(start: u64, stop: u64) -> DimSelection {
        DimSelection::Slice {
            start,
            stop,
            step: 1,
        }
    }

    /// A 2-d box region of chunk shape [2, 3] at buffer rows/columns `r`, `c`
    /// of a [rows, cols] buffer.
    fn box_at(r: (u64, u64), c: (u64, u64), buffer: &[usize]) -> ChunkRegion {
        ChunkRegion::boxed(
            &[sl(0, r.1 - r.0), sl(0, c.1 - c.0)],
            &[Some(sl(r.0, r.1)), Some(sl(c.0, c.1))],
            &[2, 3],
            buffer,
        )
        .unwrap()
    }

    #[test]
    fn regions_are_checked() {
        let shape = [2usize, 3];
        let bad = [
            ChunkRegion::boxed(
                &[sl(0, 3), sl(0, 3)],
                &[Some(sl(0, 3)), Some(sl(0, 3))],
                &shape,
                &[3, 3],
            ),
            ChunkRegion::boxed(
                &[sl(0, 2), sl(0, 3)],
                &[Some(sl(0, 2)), Some(sl(1, 4))],
                &shape,
                &[2, 3],
            ),
            ChunkRegion::boxed(
                &[sl(0, 2), sl(0, 3)],
                &[Some(sl(0, 2)), Some(sl(0, 2))],
                &shape,
                &[2, 3],
            ),
            ChunkRegion::boxed(&[sl(0, 2), sl(0, 3)], &[None, Some(sl(0, 3))], &shape, &[3]),
            ChunkRegion::boxed(&[sl(0, 2), sl(0, 3)], &[Some(sl(0, 2))], &shape, &[2]),
            ChunkRegion::points(&[6], Some(&[0]), &shape, &[1]),
            ChunkRegion::points(&[0], Some(&[1]), &shape, &[1]),
            ChunkRegion::points(&[0, 1], Some(&[0]), &shape, &[2]),
            ChunkRegion::points(&[u64::MAX], Some(&[0]), &shape, &[1]),
        ];
        for (i, r) in bad.iter().enumerate() {
            assert!(r.is_err(), "case {i}: {r:?}");
        }
        assert!(matches!(
            ChunkRegion::boxed(
                &[sl(1, 1), sl(0, 3)],
                &[Some(sl(0, 0)), Some(sl(0, 3))],
                &shape,
                &[0, 3]
            ),
            Ok(ChunkRegion::Empty)
        ));
    }

    #[test]
    fn box_regions_are_checked_as_rectangles() {
        let buffer = [4, 9];
        let grid: Vec<ChunkRegion> = (0..2)
            .flat_map(|i| (0..3).map(move |j| (i * 2, j * 3)))
            .map(|(r, c)| box_at((r, r + 2), (c, c + 3), &buffer))
            .collect();
        let refs: Vec<&ChunkRegion> = grid.iter().collect();
        assert!(box_footprints(&refs, 36).is_some(), "the fast path applies");
        check_disjoint(&refs, &[2, 3], 36, false).unwrap();
        // A box shifted by one column overlaps its neighbour in one column only.
        let mut shifted = grid.clone();
        shifted.push(box_at((2, 4), (1, 4), &buffer));
        shifted.swap(0, 6);
        let refs: Vec<&ChunkRegion> = shifted.iter().collect();
        let err = check_disjoint(&refs, &[2, 3], 36, false).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Index);
        // Touching boxes (a shared edge, no shared element) are disjoint, in any order.
        let edge = [
            box_at((0, 2), (3, 6), &buffer),
            box_at((0, 2), (0, 3), &buffer),
        ];
        check_disjoint(&edge.iter().collect::<Vec<_>>(), &[2, 3], 36, false).unwrap();
        // The fast path and the bitmap agree on random layouts.
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..500 {
            let regions: Vec<ChunkRegion> = (0..3)
                .map(|_| {
                    let (r, c) = (next(3), next(7));
                    box_at((r, r + 1 + next(2)), (c, c + 1 + next(3)), &buffer)
                })
                .collect();
            let refs: Vec<&ChunkRegion> = regions.iter().collect();
            assert_eq!(
                check_disjoint(&refs, &[2, 3], 36, false).is_ok(),
                check_disjoint_runs(&refs, &[2, 3], 36, false).is_ok(),
                "{regions:?}"
            );
        }
        // Points past the buffer's end are refused.
        let p = ChunkRegion::Points(vec![(0, 40)]);
        assert!(check_disjoint(&[&p], &[2, 3], 36, false).is_err());
        // A repeat within one region: allowed, unless every element must be unique.
        let twice = ChunkRegion::Points(vec![(0, 4), (1, 4)]);
        check_disjoint(&[&twice], &[2, 3], 36, false).unwrap();
        assert!(check_disjoint(&[&twice], &[2, 3], 36, true).is_err());
    }

    #[test]
    fn transposed_regions_address_the_same_buffer_elements() {
        // A 2x3 chunk, read whole into a 2x3 buffer, seen through order [1, 0].
        let r = box_at((0, 2), (0, 3), &[2, 3]);
        let t = r.transposed(&[1, 0], &[2, 3]);
        let mut direct = Vec::new();
        r.for_each_run(&[2, 3], true, |f, t, n| {
            direct.extend((0..n).map(|k| (f + k, t + k)))
        });
        let mut through = Vec::new();
        t.for_each_run(&[3, 2], true, |f, t, n| {
            through.extend((0..n).map(|k| (f + k, t + k)))
        });
        // Decoded element (i, j) is encoded element (j, i): both reach buffer (i, j).
        let to_enc = |f: usize| (f % 3) * 2 + f / 3;
        let mut mapped: Vec<(usize, usize)> = direct.iter().map(|&(f, t)| (to_enc(f), t)).collect();
        mapped.sort_unstable();
        through.sort_unstable();
        assert_eq!(mapped, through);
        let p = ChunkRegion::Points(vec![(1, 0), (5, 1)]).transposed(&[1, 0], &[2, 3]);
        match p {
            ChunkRegion::Points(v) => assert_eq!(v, vec![(2, 0), (5, 1)]),
            other => panic!("{other:?}"),
        }
        assert_eq!(r.contiguous_offset(&[2, 3]), Some(0));
        assert_eq!(t.contiguous_offset(&[3, 2]), None);
    }
}
