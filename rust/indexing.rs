//! Selections projected onto the chunk grid, and the copy between a chunk
//! buffer and the selection-shaped output (or input) buffer.
//!
//! A selection is orthogonal: one [`DimSelection`] per dimension. Projecting
//! it gives, per dimension, the chunks it touches and for each the pairs
//! (index inside the chunk, index in the output). A chunk's region is the
//! cartesian product of its dimensions' pairs.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::error::{Error, Result};

mod rectilinear;
pub use rectilinear::project_dim_on;

/// One dimension of a selection; indices must be in bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimSelection {
    /// `start, start+step, ...` below `stop` (step >= 1).
    Slice { start: u64, stop: u64, step: u64 },
    /// Explicit indices in output order (repeats and any order allowed).
    Indices(Vec<u64>),
}

/// Error unless a buffer of `shape` has an element count a buffer can hold
/// (so that products of its extents and offsets into it never wrap).
pub fn check_elements(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, &s| n.checked_mul(s))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| {
            Error::index(format!(
                "a selection of shape {shape:?} has more elements than a buffer can hold"
            ))
        })
}

impl DimSelection {
    /// The one index `i` (an integer index, its dimension kept with length 1).
    pub fn one(i: u64) -> Self {
        DimSelection::Slice {
            start: i,
            stop: i + 1,
            step: 1,
        }
    }

    /// Number of output elements along this dimension (saturating at
    /// `usize::MAX`, which no buffer holds: see [`check_elements`]).
    pub fn len(&self) -> usize {
        match self {
            DimSelection::Slice { start, stop, step } => {
                if stop > start && *step > 0 {
                    usize::try_from((stop - start).div_ceil(*step)).unwrap_or(usize::MAX)
                } else {
                    0
                }
            }
            DimSelection::Indices(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check(&self, dim: usize, extent: u64) -> Result<()> {
        match self {
            DimSelection::Slice { start, stop, step } => {
                if *step == 0 {
                    return Err(Error::index(format!(
                        "dimension {dim}: slice step must be positive"
                    )));
                }
                if stop > start && *stop > extent {
                    return Err(Error::index(format!(
                        "dimension {dim}: slice stop {stop} is out of bounds for length {extent}"
                    )));
                }
            }
            DimSelection::Indices(v) => {
                if let Some(bad) = v.iter().find(|&&i| i >= extent) {
                    return Err(Error::index(format!(
                        "dimension {dim}: index {bad} is out of bounds for length {extent}"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The part of one chunk that a selection touches along one dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimChunk {
    /// Chunk coordinate along this dimension.
    pub chunk: u64,
    /// Indices inside the chunk.
    pub src: Vec<usize>,
    /// Matching indices in the selection-shaped buffer.
    pub dst: Vec<usize>,
    /// Both `src` and `dst` are runs of consecutive integers.
    pub unit_stride: bool,
    /// `src` is exactly `0..chunk_len` (the whole in-bounds extent of the chunk).
    pub covers_chunk: bool,
}

fn consecutive(v: &[usize]) -> bool {
    v.windows(2).all(|w| w[1] == w[0] + 1)
}

impl DimChunk {
    /// A part whose `src` covers the chunk when it is exactly `0..valid_len`.
    pub fn new(chunk: u64, src: Vec<usize>, dst: Vec<usize>, valid_len: usize) -> Self {
        let unit_stride = consecutive(&src) && consecutive(&dst);
        let covers_chunk = unit_stride && src.len() == valid_len && src.first() == Some(&0);
        DimChunk {
            chunk,
            src,
            dst,
            unit_stride,
            covers_chunk,
        }
    }
}

/// The chunks a selection touches along one dimension, in chunk order.
/// Offsets are computed so that none wraps, the last chunk of an extent near
/// 2^64 included (its end may lie past `u64::MAX`); the work is proportional
/// to the selected elements and chunks, not to the chunks a strided slice
/// steps over.
pub fn project_dim(sel: &DimSelection, extent: u64, chunk_len: usize) -> Vec<DimChunk> {
    let cl = chunk_len as u64;
    // Elements of chunk `c` inside the extent (`c * cl <= index < extent`).
    let valid = |c: u64| ((extent - c * cl).min(cl)) as usize;
    match sel {
        DimSelection::Slice { start, stop, step } => {
            let mut out = Vec::new();
            if stop <= start {
                return out;
            }
            let n = sel.len() as u64;
            if *step >= cl {
                // At most one element per chunk: visit the elements.
                for k in 0..n {
                    let i = start + k * step;
                    let (c, at) = (i / cl, (i % cl) as usize);
                    out.push(DimChunk::new(c, vec![at], vec![k as usize], valid(c)));
                }
                return out;
            }
            let last = start + (n - 1) * step;
            for c in start / cl..=last / cl {
                let lo = c * cl;
                // The chunk's end, or the slice's stop when that comes first
                // (the end of the grid's last chunk may not fit 64 bits).
                let hi = lo.checked_add(cl).map_or(*stop, |end| end.min(*stop));
                let first = if *start >= lo {
                    *start
                } else {
                    // The first element at or after `lo`; `step < cl`, so it
                    // is below `lo + cl`.
                    start + (lo - start).div_ceil(*step) * step
                };
                if first >= hi {
                    continue;
                }
                let n = ((hi - first).div_ceil(*step)) as usize;
                let src = (0..n)
                    .map(|k| (first - lo + k as u64 * step) as usize)
                    .collect();
                let d0 = ((first - start) / step) as usize;
                out.push(DimChunk::new(c, src, (d0..d0 + n).collect(), valid(c)));
            }
            out
        }
        DimSelection::Indices(idx) => {
            let mut by_chunk: BTreeMap<u64, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
            for (d, &i) in idx.iter().enumerate() {
                let e = by_chunk.entry(i / cl).or_default();
                e.0.push((i % cl) as usize);
                e.1.push(d);
            }
            by_chunk
                .into_iter()
                .map(|(c, (src, dst))| DimChunk::new(c, src, dst, valid(c)))
                .collect()
        }
    }
}

/// The parts that map a dense block of `shape` (chunk side) onto the region
/// starting at `origin` of a larger buffer (selection side).
pub fn block_parts(origin: &[usize], shape: &[usize]) -> Vec<DimChunk> {
    origin
        .iter()
        .zip(shape)
        .map(|(&o, &n)| DimChunk {
            chunk: 0,
            src: (0..n).collect(),
            dst: (o..o + n).collect(),
            unit_stride: true,
            covers_chunk: true,
        })
        .collect()
}

/// A selection projected onto the grid.
#[derive(Debug)]
pub struct Projection {
    /// Per dimension, the chunks touched.
    pub dims: Vec<Vec<DimChunk>>,
    /// Shape of the selection-shaped buffer.
    pub out_shape: Vec<usize>,
}

/// Error unless `sel` has one in-bounds selection per dimension of `shape`
/// and the grid has `grid_ndim` dimensions too.
pub(crate) fn check_selection(sel: &[DimSelection], shape: &[u64], grid_ndim: usize) -> Result<()> {
    if sel.len() != shape.len() || grid_ndim != shape.len() {
        return Err(Error::index(format!(
            "selection has {} dimensions, array has {}",
            sel.len(),
            shape.len()
        )));
    }
    for (d, s) in sel.iter().enumerate() {
        s.check(d, shape[d])?;
    }
    Ok(())
}

impl Projection {
    pub fn new(sel: &[DimSelection], shape: &[u64], chunk_shape: &[usize]) -> Result<Self> {
        check_selection(sel, shape, sel.len())?;
        let out_shape: Vec<usize> = sel.iter().map(DimSelection::len).collect();
        check_elements(&out_shape)?;
        let dims = sel
            .iter()
            .zip(shape)
            .zip(chunk_shape)
            .map(|((s, &e), &c)| project_dim(s, e, c))
            .collect();
        Ok(Projection { dims, out_shape })
    }

    /// Every touched chunk, as one index into each dimension's list.
    pub fn chunks(&self) -> Vec<Vec<usize>> {
        if self.out_shape.contains(&0) {
            return Vec::new();
        }
        let mut all = vec![Vec::with_capacity(self.dims.len())];
        for d in &self.dims {
            let mut next = Vec::with_capacity(all.len() * d.len());
            for prefix in &all {
                for i in 0..d.len() {
                    let mut p = prefix.clone();
                    p.push(i);
                    next.push(p);
                }
            }
            all = next;
        }
        all
    }

    /// The per-dimension parts of one chunk.
    pub fn parts(&self, which: &[usize]) -> Vec<&DimChunk> {
        self.dims.iter().zip(which).map(|(d, &i)| &d[i]).collect()
    }
}

/// A selection of array elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// One selection per dimension; the result is their outer product.
    Orthogonal(Vec<DimSelection>),
    /// Points given by `ndim` coordinates each, flattened; the result is 1-d,
    /// one element per point, in the order given (repeats allowed).
    Points(Vec<u64>),
    /// One selection per dimension, as `Orthogonal`, whose buffer is laid out
    /// with `strides` (elements per step along each array dimension) rather
    /// than in C order over the array's dimensions: a TensorStore view whose
    /// dimensions come in another order (see `selection::transform`).
    Laid {
        dims: Vec<DimSelection>,
        strides: Vec<usize>,
    },
}

impl Selection {
    /// The same selection of the array with its dimensions reversed; `None`
    /// for points, whose result is one-dimensional whatever the order.
    pub fn reversed(&self) -> Option<Selection> {
        match self {
            Selection::Orthogonal(dims) => {
                Some(Selection::Orthogonal(dims.iter().rev().cloned().collect()))
            }
            Selection::Points(_) | Selection::Laid { .. } => None,
        }
    }

    /// The buffer's steps along each array dimension where they are not C
    /// order over the selection's shape.
    pub fn buffer_strides(&self) -> Option<&[usize]> {
        match self {
            Selection::Laid { strides, .. } => Some(strides),
            _ => None,
        }
    }
}

/// One chunk's part of a selection.
#[derive(Debug, Clone)]
pub enum Region<'a> {
    /// The outer product of per-dimension parts.
    Box(Vec<&'a DimChunk>),
    /// (flat index in the chunk, flat index in the output) pairs, in output order.
    Points(&'a [(usize, usize)]),
}

impl Region<'_> {
    /// Whether the region is every in-bounds element of the chunk.
    pub fn covers_chunk(&self) -> bool {
        match self {
            Region::Box(parts) => parts.iter().all(|p| p.covers_chunk),
            Region::Points(_) => false,
        }
    }

    /// Whether the region is every element of a chunk of `chunk_shape`, the
    /// parts past the array's end included (so not an edge chunk).
    pub fn covers_full_chunk(&self, chunk_shape: &[usize]) -> bool {
        match self {
            Region::Box(parts) => parts
                .iter()
                .zip(chunk_shape)
                .all(|(p, &n)| p.covers_chunk && p.src.len() == n),
            Region::Points(_) => false,
        }
    }

    /// Visit runs of elements to copy: `f(from, to, n)` in elements, from the
    /// chunk to the output when `to_output`, else from the output-shaped value
    /// into the chunk.
    pub fn for_each_run(
        &self,
        chunk_shape: &[usize],
        out_shape: &[usize],
        to_output: bool,
        mut f: impl FnMut(usize, usize, usize),
    ) {
        let (chunk, sel) = (Layout::chunk(chunk_shape), Layout::selection(out_shape));
        match self {
            Region::Box(parts) if to_output => for_each_run(parts, chunk, sel, f),
            Region::Box(parts) => for_each_run(parts, sel, chunk, f),
            Region::Points(pairs) => {
                for &(c, o) in pairs.iter() {
                    if to_output {
                        f(c, o, 1)
                    } else {
                        f(o, c, 1)
                    }
                }
            }
        }
    }
}

/// A selection projected onto a chunk grid, ready to be split into chunk work.
#[derive(Debug)]
pub struct Plan {
    /// Shape of the selection-shaped buffer.
    pub out_shape: Vec<usize>,
    pub kind: PlanKind,
}

/// The points inside one chunk: its grid coordinates and (flat index in the
/// chunk, flat index in the output) pairs.
pub type PointGroup = (Vec<u64>, Vec<(usize, usize)>);

/// The chunks of a plan: per-dimension parts whose outer product are the
/// chunks' regions, or points grouped by chunk.
#[derive(Debug)]
pub enum PlanKind {
    Box(Projection),
    Points(Vec<PointGroup>),
}

impl Plan {
    pub fn new(sel: &Selection, shape: &[u64], chunk_shape: &[usize]) -> Result<Plan> {
        Plan::with(
            sel,
            shape,
            |dims| Projection::new(dims, shape, chunk_shape),
            |flat| group_points(flat, shape, chunk_shape),
        )
    }

    /// A plan from a selection, given how a grid projects boxes and groups
    /// points (the grouping refuses 0-d arrays, so points divide by `ndim`).
    fn with(
        sel: &Selection,
        shape: &[u64],
        project: impl FnOnce(&[DimSelection]) -> Result<Projection>,
        group: impl FnOnce(&[u64]) -> Result<Vec<PointGroup>>,
    ) -> Result<Plan> {
        match sel {
            Selection::Orthogonal(dims) | Selection::Laid { dims, .. } => {
                let proj = project(dims)?;
                Ok(Plan {
                    out_shape: proj.out_shape.clone(),
                    kind: PlanKind::Box(proj),
                })
            }
            Selection::Points(flat) => {
                let groups = group(flat)?;
                Ok(Plan {
                    out_shape: vec![flat.len() / shape.len()],
                    kind: PlanKind::Points(groups),
                })
            }
        }
    }

    /// Every touched chunk: its grid coordinates and its region.
    pub fn work(&self) -> Vec<(Vec<u64>, Region<'_>)> {
        match &self.kind {
            PlanKind::Box(proj) => proj
                .chunks()
                .iter()
                .map(|which| {
                    let parts = proj.parts(which);
                    (parts.iter().map(|p| p.chunk).collect(), Region::Box(parts))
                })
                .collect(),
            PlanKind::Points(groups) => groups
                .iter()
                .map(|(coords, pairs)| (coords.clone(), Region::Points(pairs)))
                .collect(),
        }
    }
}

/// Points grouped by chunk: (chunk coordinates, (flat index in chunk, point number)).
fn group_points(flat: &[u64], shape: &[u64], chunk_shape: &[usize]) -> Result<Vec<PointGroup>> {
    let ndim = shape.len();
    if ndim == 0 {
        return Err(Error::index("point selections need at least one dimension"));
    }
    if !flat.len().is_multiple_of(ndim) {
        return Err(Error::index(format!(
            "{} coordinates do not make points of {ndim} dimensions",
            flat.len()
        )));
    }
    let grid: Vec<u64> = shape
        .iter()
        .zip(chunk_shape)
        .map(|(&s, &c)| s.div_ceil(c as u64).max(1))
        .collect();
    let strides = c_strides(chunk_shape);
    let npoints = flat.len() / ndim;
    let chunk_of = |k: usize| {
        flat[k * ndim..(k + 1) * ndim]
            .iter()
            .zip(chunk_shape)
            .map(|(&x, &c)| x / c as u64)
    };
    // Point numbers are ordered by chunk (C order of chunk coordinates), in
    // selection order within a chunk: by a linear chunk id while the grid's
    // chunk count fits 128 bits, else by the coordinates themselves (an id
    // computed past 128 bits would wrap and merge distinct chunks).
    let fits = grid
        .iter()
        .try_fold(1u128, |n, &g| n.checked_mul(u128::from(g)))
        .is_some();
    // One pass: per point, the flat index in its chunk and (where it fits)
    // its chunk's id, one division per coordinate.
    let mut inner = Vec::with_capacity(npoints);
    let mut ids: Vec<u128> = Vec::with_capacity(if fits { npoints } else { 0 });
    for point in flat.chunks_exact(ndim) {
        let (mut at, mut id) = (0usize, 0u128);
        for d in 0..ndim {
            let x = point[d];
            if x >= shape[d] {
                return Err(Error::index(format!(
                    "index {x} is out of bounds for axis {d} with size {}",
                    shape[d]
                )));
            }
            let c = chunk_shape[d] as u64;
            let q = x / c;
            at += (x - q * c) as usize * strides[d];
            if fits {
                id = id * u128::from(grid[d]) + u128::from(q);
            }
        }
        inner.push(at);
        if fits {
            ids.push(id);
        }
    }
    if !fits {
        let mut order: Vec<usize> = (0..npoints).collect();
        order.sort_by(|&a, &b| chunk_of(a).cmp(chunk_of(b)));
        let mut groups: Vec<PointGroup> = Vec::new();
        let mut last: Option<usize> = None;
        for k in order {
            if !last.is_some_and(|l| chunk_of(l).eq(chunk_of(k))) {
                groups.push((chunk_of(k).collect(), Vec::new()));
            }
            last = Some(k);
            if let Some(g) = groups.last_mut() {
                g.1.push((inner[k], k));
            }
        }
        return Ok(groups);
    }
    let (pairs, runs) = sort_by_chunk(&ids, &inner, &grid);
    Ok(runs
        .into_iter()
        .map(|(id, run)| (chunk_coords(id, &grid), pairs[run].to_vec()))
        .collect())
}

/// A chunk's grid coordinates from its linear id (C order over `grid`).
fn chunk_coords(mut id: u128, grid: &[u64]) -> Vec<u64> {
    let mut coords = vec![0u64; grid.len()];
    for (c, &g) in coords.iter_mut().zip(grid).rev() {
        let g = u128::from(g);
        // below `g`, so it fits the grid's u64
        *c = (id % g) as u64;
        id /= g;
    }
    coords
}

/// Points as (flat index in chunk, point number) ordered by chunk, and per
/// touched chunk its linear id and its run of them.
type SortedPoints = (Vec<(usize, usize)>, Vec<(u128, Range<usize>)>);

/// The points `(inner[k], k)` ordered by chunk id (`ids[k]`, below the
/// product of `grid`), in ascending point number within a chunk, and per
/// touched chunk its id and its run of them. A counting sort when the grid is
/// not much larger than the number of points (the common case: many points,
/// few chunks): one pass reads the points in order and scatters them to
/// their chunk's run (the random accesses are writes, which do not wait on
/// memory); else a stable comparison sort.
fn sort_by_chunk(ids: &[u128], inner: &[usize], grid: &[u64]) -> SortedPoints {
    let n = ids.len();
    let nchunks = grid
        .iter()
        .try_fold(1usize, |acc, &g| acc.checked_mul(usize::try_from(g).ok()?));
    match nchunks {
        Some(nchunks) if nchunks <= 2 * n.max(4096) => {
            let mut start = vec![0usize; nchunks + 1];
            for &id in ids {
                start[id as usize + 1] += 1;
            }
            for i in 1..start.len() {
                start[i] += start[i - 1];
            }
            let runs: Vec<(u128, Range<usize>)> = start
                .windows(2)
                .enumerate()
                .filter(|(_, w)| w[0] < w[1])
                .map(|(id, w)| (id as u128, w[0]..w[1]))
                .collect();
            let mut pairs = vec![(0usize, 0usize); n];
            for (k, (&id, &at)) in ids.iter().zip(inner).enumerate() {
                let slot = &mut start[id as usize];
                pairs[*slot] = (at, k);
                *slot += 1;
            }
            (pairs, runs)
        }
        _ => {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&k| ids[k]);
            let mut runs: Vec<(u128, Range<usize>)> = Vec::new();
            for (i, &k) in order.iter().enumerate() {
                match runs.last_mut() {
                    Some((id, run)) if *id == ids[k] => run.end = i + 1,
                    _ => runs.push((ids[k], i..i + 1)),
                }
            }
            let pairs = order.into_iter().map(|k| (inner[k], k)).collect();
            (pairs, runs)
        }
    }
}

/// C-order strides in elements.
pub fn c_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Which side of a [`DimChunk`] a buffer is indexed by.
#[derive(Clone, Copy, Debug)]
pub enum Side {
    /// The chunk buffer (`src` indices).
    Chunk,
    /// The selection-shaped buffer (`dst` indices).
    Selection,
}

/// A buffer's shape and which side of the projection indexes it; its
/// strides are C order unless given (a region seen through a transpose).
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    pub shape: &'a [usize],
    pub side: Side,
    pub strides: Option<&'a [usize]>,
}

impl<'a> Layout<'a> {
    /// A chunk buffer of `shape`.
    pub fn chunk(shape: &'a [usize]) -> Self {
        Layout {
            shape,
            side: Side::Chunk,
            strides: None,
        }
    }
    /// A selection-shaped buffer of `shape`.
    pub fn selection(shape: &'a [usize]) -> Self {
        Layout {
            shape,
            side: Side::Selection,
            strides: None,
        }
    }

    /// A selection-shaped buffer with the given strides (elements per step
    /// along each dimension).
    pub fn strided_selection(shape: &'a [usize], strides: &'a [usize]) -> Self {
        Layout {
            shape,
            side: Side::Selection,
            strides: Some(strides),
        }
    }

    /// The buffer's strides in elements.
    fn strides(&self) -> Vec<usize> {
        match self.strides {
            Some(s) => s.to_vec(),
            None => c_strides(self.shape),
        }
    }
}

fn side_indices(part: &DimChunk, side: Side) -> &[usize] {
    match side {
        Side::Chunk => &part.src,
        Side::Selection => &part.dst,
    }
}

/// Element offsets (in elements) that `parts` select from a buffer of `shape`,
/// visited in the same order for both sides; calls `run(from, to, n)` for each
/// innermost run of `n` elements that are consecutive on both sides.
pub fn for_each_run(
    parts: &[&DimChunk],
    from: Layout<'_>,
    to: Layout<'_>,
    mut run: impl FnMut(usize, usize, usize),
) {
    let (from_side, to_side) = (from.side, to.side);
    let n = parts.len();
    if n == 0 {
        run(0, 0, 1);
        return;
    }
    let fs = from.strides();
    let ts = to.strides();
    if fs[n - 1] != 1 || ts[n - 1] != 1 {
        // The innermost dimension is not contiguous on both sides (a region
        // seen through a transpose): no runs, element by element.
        return for_each_element(parts, (&fs, from_side), (&ts, to_side), run);
    }
    if n > 1 && parts.iter().all(|p| p.unit_stride) {
        return for_each_run_boxes(parts, from, to, run);
    }
    let last = parts[n - 1];
    let (fi, ti) = (side_indices(last, from_side), side_indices(last, to_side));
    let mut pos = vec![0usize; n - 1];
    loop {
        let mut fbase = 0;
        let mut tbase = 0;
        for d in 0..n - 1 {
            fbase += side_indices(parts[d], from_side)[pos[d]] * fs[d];
            tbase += side_indices(parts[d], to_side)[pos[d]] * ts[d];
        }
        if last.unit_stride {
            run(fbase + fi[0], tbase + ti[0], fi.len());
        } else {
            for (a, b) in fi.iter().zip(ti) {
                run(fbase + a, tbase + b, 1);
            }
        }
        if !advance(&mut pos, parts) {
            return;
        }
    }
}

/// Step the odometer `pos` over the first `pos.len()` dimensions of `parts`
/// (the last one fastest); false once every position was visited.
fn advance(pos: &mut [usize], parts: &[&DimChunk]) -> bool {
    for d in (0..pos.len()).rev() {
        pos[d] += 1;
        if pos[d] < parts[d].src.len() {
            return true;
        }
        pos[d] = 0;
    }
    false
}

/// `for_each_run` one element at a time, for any strides.
fn for_each_element(
    parts: &[&DimChunk],
    (fs, from_side): (&[usize], Side),
    (ts, to_side): (&[usize], Side),
    mut run: impl FnMut(usize, usize, usize),
) {
    if parts.iter().any(|p| p.src.is_empty()) {
        return;
    }
    let mut pos = vec![0usize; parts.len()];
    loop {
        let (mut f, mut t) = (0, 0);
        for (d, p) in parts.iter().enumerate() {
            f += side_indices(p, from_side)[pos[d]] * fs[d];
            t += side_indices(p, to_side)[pos[d]] * ts[d];
        }
        run(f, t, 1);
        if !advance(&mut pos, parts) {
            return;
        }
    }
}

/// `for_each_run` when every dimension is a range on both sides: rows are
/// visited with offsets updated incrementally, no index lookups.
fn for_each_run_boxes(
    parts: &[&DimChunk],
    from: Layout<'_>,
    to: Layout<'_>,
    mut run: impl FnMut(usize, usize, usize),
) {
    let n = parts.len();
    let fs = from.strides();
    let ts = to.strides();
    let start = |p: &DimChunk, side: Side| side_indices(p, side)[0];
    let mut fbase: usize = parts
        .iter()
        .zip(&fs)
        .map(|(p, s)| start(p, from.side) * s)
        .sum();
    let mut tbase: usize = parts
        .iter()
        .zip(&ts)
        .map(|(p, s)| start(p, to.side) * s)
        .sum();
    let lens: Vec<usize> = parts.iter().map(|p| p.src.len()).collect();
    let row = lens[n - 1];
    // Rows along dimension n - 2 in a tight loop; an odometer over the others.
    let (rows, fstep, tstep) = (lens[n - 2], fs[n - 2], ts[n - 2]);
    let mut pos = vec![0usize; n - 1];
    loop {
        let (mut f, mut t) = (fbase, tbase);
        for _ in 0..rows {
            run(f, t, row);
            f += fstep;
            t += tstep;
        }
        // Advance the odometer over the dimensions before n - 2.
        let mut d = n - 2;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            pos[d] += 1;
            if pos[d] < lens[d] {
                fbase += fs[d];
                tbase += ts[d];
                break;
            }
            fbase -= fs[d] * (lens[d] - 1);
            tbase -= ts[d] * (lens[d] - 1);
            pos[d] = 0;
        }
    }
}

/// Copy the selected elements between two buffers laid out as given.
pub fn copy_selected(
    parts: &[&DimChunk],
    from: &[u8],
    from_layout: Layout<'_>,
    to: &mut [u8],
    to_layout: Layout<'_>,
    elem: usize,
) {
    for_each_run(parts, from_layout, to_layout, |f, t, n| {
        copy_run(
            &mut to[t * elem..(t + n) * elem],
            &from[f * elem..(f + n) * elem],
        );
    });
}

/// Where [`put_run`] puts a run of bytes: over a slice of the same length
/// (`[u8]`), or appended (`Vec<u8>`).
trait RunSink {
    /// Take `src`, whose length is known at compile time; false if it does not fit.
    fn put_fixed<const N: usize>(&mut self, src: &[u8; N]) -> bool;
    /// Take `src`, of any length.
    fn put(&mut self, src: &[u8]);
}

impl RunSink for [u8] {
    #[inline(always)]
    fn put_fixed<const N: usize>(&mut self, src: &[u8; N]) -> bool {
        match <&mut [u8; N]>::try_from(self) {
            Ok(d) => {
                *d = *src;
                true
            }
            Err(_) => false,
        }
    }
    #[inline(always)]
    fn put(&mut self, src: &[u8]) {
        self.copy_from_slice(src);
    }
}

impl RunSink for Vec<u8> {
    #[inline(always)]
    fn put_fixed<const N: usize>(&mut self, src: &[u8; N]) -> bool {
        self.extend_from_slice(src);
        true
    }
    #[inline(always)]
    fn put(&mut self, src: &[u8]) {
        self.extend_from_slice(src);
    }
}

/// Put one run of a chunk copy into `sink`: the common small lengths as
/// fixed-size copies the compiler inlines, instead of a `memcpy` call per run.
#[inline(always)]
fn put_run<S: RunSink + ?Sized>(sink: &mut S, src: &[u8]) {
    #[inline(always)]
    fn fixed<S: RunSink + ?Sized, const N: usize>(sink: &mut S, src: &[u8]) -> bool {
        <&[u8; N]>::try_from(src).is_ok_and(|s| sink.put_fixed(s))
    }
    let done = match src.len() {
        16 => fixed::<S, 16>(sink, src),
        32 => fixed::<S, 32>(sink, src),
        64 => fixed::<S, 64>(sink, src),
        128 => fixed::<S, 128>(sink, src),
        256 => fixed::<S, 256>(sink, src),
        _ => false,
    };
    if !done {
        sink.put(src);
    }
}

/// `dst.copy_from_slice(src)` for the short runs chunk copies are made of.
#[inline(always)]
pub fn copy_run(dst: &mut [u8], src: &[u8]) {
    put_run(dst, src);
}

/// `dst.extend_from_slice(src)` for the short runs chunk copies are made of.
#[inline(always)]
pub fn extend_run(dst: &mut Vec<u8>, src: &[u8]) {
    put_run(dst, src);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sl(start: u64, stop: u64, step: u64) -> DimSelection {
        DimSelection::Slice { start, stop, step }
    }

    #[test]
    fn points_are_ordered_by_chunk_then_selection_order_on_both_paths() {
        // A small grid takes the counting sort, a huge one the comparison sort.
        for grid in [vec![3u64, 4], vec![1 << 20, 1 << 20]] {
            let nchunks: u128 = grid.iter().map(|&g| g as u128).product();
            let mut state = 12345u64;
            let ids: Vec<u128> = (0..500)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    // few distinct chunks, so that chunks repeat
                    ((state >> 33) % 7) as u128 * (nchunks / 7)
                })
                .collect();
            let inner: Vec<usize> = (0..ids.len()).map(|k| 1000 + k * 3).collect();
            let (pairs, runs) = sort_by_chunk(&ids, &inner, &grid);
            let mut order: Vec<usize> = (0..ids.len()).collect();
            order.sort_by_key(|&k| (ids[k], k));
            let want: Vec<(usize, usize)> = order.iter().map(|&k| (inner[k], k)).collect();
            assert_eq!(pairs, want, "grid {grid:?}");
            // one run per distinct id, ascending, covering the pairs exactly
            let mut distinct: Vec<u128> = ids.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(runs.iter().map(|r| r.0).collect::<Vec<_>>(), distinct);
            let mut next = 0;
            for (id, run) in &runs {
                assert_eq!(run.start, next);
                assert!(pairs[run.clone()].iter().all(|&(_, k)| ids[k] == *id));
                next = run.end;
            }
            assert_eq!(next, ids.len());
        }
        assert_eq!(sort_by_chunk(&[], &[], &[0]), (vec![], vec![]));
    }

    #[test]
    fn chunk_coords_invert_the_c_order_id() {
        let grid = [3u64, 5, 7];
        for id in 0..105u128 {
            let c = chunk_coords(id, &grid);
            assert_eq!(u128::from((c[0] * 5 + c[1]) * 7 + c[2]), id);
        }
        let big = [u64::MAX, u64::MAX];
        let id = u128::from(u64::MAX - 1) * u128::from(u64::MAX) + 5;
        assert_eq!(chunk_coords(id, &big), vec![u64::MAX - 1, 5]);
    }

    fn summary(p: &[DimChunk]) -> Vec<(u64, Vec<usize>, Vec<usize>, bool)> {
        p.iter()
            .map(|c| (c.chunk, c.src.clone(), c.dst.clone(), c.covers_chunk))
            .collect()
    }

    #[test]
    fn projections_at_the_end_of_a_2_to_the_64_extent() {
        let end = u64::MAX;
        // Chunks of 2: the grid's last chunk, 2^63 - 1, would end at 2^64.
        let last = (1u64 << 63) - 1;
        assert_eq!(
            summary(&project_dim(&sl(end - 3, end, 1), end, 2)),
            [
                (last - 1, vec![0, 1], vec![0, 1], true),
                (last, vec![0], vec![2], true)
            ]
        );
        // Chunks of 2^62: the last 8 elements are in chunk 3.
        let p = project_dim(&sl(end - 8, end, 1), end, 1 << 62);
        let lo = (1usize << 62) - 9;
        assert_eq!(
            summary(&p),
            [(3, (lo..lo + 8).collect(), (0..8).collect(), false)]
        );
        assert_eq!(
            summary(&project_dim(
                &DimSelection::Indices(vec![end - 1, 0]),
                end,
                2
            )),
            [(0, vec![0], vec![1], false), (last, vec![0], vec![0], true)]
        );
        // Steps of at least a chunk visit the selected elements, not every
        // chunk in between (2^61 of them here).
        let p = project_dim(&sl(1, end, 1 << 62), end, 2);
        assert_eq!(
            summary(&p),
            (0..4u64)
                .map(|k| ((k << 61), vec![1], vec![k as usize], false))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn selections_with_more_elements_than_a_buffer_are_refused() {
        let huge = sl(0, u64::MAX, 1);
        assert_eq!(
            Projection::new(&[huge.clone(), huge], &[u64::MAX; 2], &[2, 2])
                .unwrap_err()
                .kind,
            crate::error::ErrorKind::Index
        );
        assert!(check_elements(&[1 << 31, 1 << 31]).is_ok());
        assert!(check_elements(&[1 << 32, 1 << 32]).is_err());
    }

    #[test]
    fn points_in_a_grid_of_more_than_2_to_the_128_chunks_keep_their_chunks() {
        // Linear ids of a 3-d grid of 2^62 chunks per dimension wrap at 128
        // bits: (0, 0, 0) and (64, 0, 0) would share id 0.
        let shape = [u64::MAX; 3];
        let flat = [0, 0, 0, 64, 0, 0, 0, 0, 1, 1 << 63, 5, u64::MAX - 1];
        let groups = group_points(&flat, &shape, &[4, 4, 4]).unwrap();
        assert_eq!(
            groups,
            [
                (vec![0, 0, 0], vec![(0, 0), (1, 2)]),
                (vec![16, 0, 0], vec![(0, 1)]),
                (vec![1 << 61, 1, (u64::MAX - 1) / 4], vec![(4 + 2, 3)]),
            ]
        );
    }

    #[test]
    fn run_copies_match_copy_from_slice_at_every_length() {
        let src: Vec<u8> = (0..300u32).map(|i| (i * 31 % 251) as u8).collect();
        for n in 0..=300 {
            let mut want = vec![7u8; n];
            want.copy_from_slice(&src[..n]);
            let mut got = vec![7u8; n];
            copy_run(&mut got, &src[..n]);
            assert_eq!(got, want, "copy_run, {n} bytes");
            let mut grown = vec![1u8, 2];
            extend_run(&mut grown, &src[..n]);
            assert_eq!(&grown[..2], &[1, 2]);
            assert_eq!(&grown[2..], &want[..], "extend_run, {n} bytes");
        }
    }

    #[test]
    fn full_chunk_cover_excludes_edge_chunks_and_partial_regions() {
        // Extent 10 in chunks of 4: chunks 0 and 1 are whole, chunk 2 holds 2.
        let all = project_dim(&sl(0, 10, 1), 10, 4);
        let covered: Vec<bool> = all
            .iter()
            .map(|d| Region::Box(vec![d]).covers_full_chunk(&[4]))
            .collect();
        assert_eq!(covered, vec![true, true, false]);
        assert!(all[2].covers_chunk, "the edge chunk is covered in bounds");
        let part = project_dim(&sl(1, 10, 1), 10, 4);
        assert!(!Region::Box(vec![&part[0]]).covers_full_chunk(&[4]));
        let strided = project_dim(&sl(0, 8, 2), 8, 4);
        assert!(!Region::Box(vec![&strided[0]]).covers_full_chunk(&[4]));
        let two_d = Region::Box(vec![&all[0], &all[2]]);
        assert!(!two_d.covers_full_chunk(&[4, 4]));
        assert!(Region::Box(vec![&all[0], &all[1]]).covers_full_chunk(&[4, 4]));
        assert!(!Region::Points(&[(0, 0)]).covers_full_chunk(&[1]));
    }

    #[test]
    fn slice_projection() {
        let p = project_dim(&sl(3, 17, 1), 20, 5);
        assert_eq!(
            p.iter().map(|c| c.chunk).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        assert_eq!(p[0].src, vec![3, 4]);
        assert_eq!(p[0].dst, vec![0, 1]);
        assert!(p[1].covers_chunk && !p[0].covers_chunk);
        assert_eq!(p[3].src, vec![0, 1]);
        assert_eq!(p[3].dst, vec![12, 13]);
    }

    #[test]
    fn strided_projection_matches_brute_force() {
        for extent in [1u64, 7, 20, 33] {
            for chunk in [1usize, 3, 5, 8] {
                for start in 0..extent {
                    for stop in start..=extent {
                        for step in 1..5 {
                            let s = sl(start, stop, step);
                            let mut got = vec![];
                            for c in project_dim(&s, extent, chunk) {
                                for (a, b) in c.src.iter().zip(&c.dst) {
                                    got.push((*b, c.chunk * chunk as u64 + *a as u64));
                                }
                            }
                            got.sort();
                            let want: Vec<_> =
                                (start..stop).step_by(step as usize).enumerate().collect();
                            assert_eq!(got, want, "{extent} {chunk} {start} {stop} {step}");
                            assert_eq!(s.len(), want.len());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn index_projection_groups_by_chunk() {
        let p = project_dim(&DimSelection::Indices(vec![9, 0, 4, 9, 5]), 10, 5);
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].chunk, &p[0].src, &p[0].dst),
            (0, &vec![0, 4], &vec![1, 2])
        );
        assert_eq!(
            (p[1].chunk, &p[1].src, &p[1].dst),
            (1, &vec![4, 4, 0], &vec![0, 3, 4])
        );
        assert!(!p[1].unit_stride);
    }

    #[test]
    fn bounds_are_checked() {
        assert!(Projection::new(&[sl(0, 11, 1)], &[10], &[5]).is_err());
        assert!(Projection::new(&[DimSelection::Indices(vec![10])], &[10], &[5]).is_err());
        assert!(Projection::new(&[sl(0, 1, 0)], &[10], &[5]).is_err());
        assert!(Projection::new(&[sl(0, 1, 1)], &[10, 2], &[5, 2]).is_err());
        assert!(Projection::new(&[sl(5, 5, 1)], &[3], &[5]).is_ok());
    }

    #[test]
    fn copy_2d_region() {
        // 4x4 array, chunks 2x2, select rows 1..4, cols 0..3 step 2.
        let p = Projection::new(&[sl(1, 4, 1), sl(0, 3, 2)], &[4, 4], &[2, 2]).unwrap();
        assert_eq!(p.out_shape, vec![3, 2]);
        let mut out = vec![0u8; 6];
        for which in p.chunks() {
            let parts = p.parts(&which);
            let (r, c) = (parts[0].chunk as u8, parts[1].chunk as u8);
            // Chunk (r, c) holds the value 10*row + col of the full array.
            let chunk: Vec<u8> = (0..4)
                .map(|i| 10 * (2 * r + i / 2) + (2 * c + i % 2))
                .collect();
            copy_selected(
                &parts,
                &chunk,
                Layout::chunk(&[2, 2]),
                &mut out,
                Layout::selection(&p.out_shape),
                1,
            );
        }
        assert_eq!(out, vec![10, 12, 20, 22, 30, 32]);
    }

    #[test]
    fn points_group_by_chunk_in_output_order() {
        let sel = Selection::Points(vec![5, 1, 0, 0, 5, 0, 1, 3]);
        let plan = Plan::new(&sel, &[6, 4], &[4, 2]).unwrap();
        assert_eq!(plan.out_shape, vec![4]);
        let work = plan.work();
        let summary: Vec<_> = work
            .iter()
            .map(|(c, r)| match r {
                Region::Points(p) => (c.clone(), p.to_vec()),
                Region::Box(_) => unreachable!(),
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (vec![0, 0], vec![(0, 1)]),
                (vec![0, 1], vec![(3, 3)]),
                (vec![1, 0], vec![(3, 0), (2, 2)]),
            ]
        );
        assert!(Plan::new(&Selection::Points(vec![6, 0]), &[6, 4], &[4, 2]).is_err());
        assert!(Plan::new(&Selection::Points(vec![1]), &[6, 4], &[4, 2]).is_err());
        assert!(Plan::new(&Selection::Points(vec![]), &[], &[]).is_err());
    }

    #[test]
    fn box_fast_path_visits_the_same_runs_as_the_general_path() {
        let p = Projection::new(
            &[sl(1, 7, 1), sl(2, 9, 1), sl(0, 5, 1)],
            &[8, 9, 5],
            &[4, 4, 3],
        )
        .unwrap();
        for which in p.chunks() {
            let parts = p.parts(&which);
            let (c, o) = (Layout::chunk(&[4, 4, 3]), Layout::selection(&p.out_shape));
            let mut fast = Vec::new();
            for_each_run(&parts, c, o, |f, t, n| fast.push((f, t, n)));
            // The general path: force it by visiting element by element.
            let mut slow = Vec::new();
            let one_by_one: Vec<DimChunk> = parts
                .iter()
                .map(|d| DimChunk {
                    unit_stride: false,
                    ..(*d).clone()
                })
                .collect();
            let refs: Vec<&DimChunk> = one_by_one.iter().collect();
            for_each_run(&refs, c, o, |f, t, n| slow.push((f, t, n)));
            let expand = |runs: &[(usize, usize, usize)]| -> Vec<(usize, usize)> {
                runs.iter()
                    .flat_map(|&(f, t, n)| (0..n).map(move |k| (f + k, t + k)))
                    .collect()
            };
            assert_eq!(expand(&fast), expand(&slow));
        }
    }
}
