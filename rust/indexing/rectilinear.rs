//! Selections projected onto a grid whose chunk edges vary along a dimension
//! (a rectilinear grid). A regular grid keeps the closed-form projection of
//! the parent module; here each chunk is found by binary search over the
//! dimension's runs of edges, and only the chunks a selection touches are
//! visited.

use std::collections::BTreeMap;

use super::{
    c_strides, check_selection, DimChunk, DimSelection, Plan, PointGroup, Projection, Selection,
};
use crate::error::{Error, Result};
use crate::grid::{ChunkGrid, DimGrid};

/// The elements of chunk `c` inside `0..extent`, its offset and its edge.
fn chunk_bounds(dim: &DimGrid, c: u64, extent: u64) -> Result<(u64, u64, usize)> {
    let (lo, edge) = dim
        .chunk(c)
        .ok_or_else(|| Error::index(format!("chunk {c} is outside the grid")))?;
    let valid = edge.min(extent.saturating_sub(lo));
    let valid = usize::try_from(valid)
        .map_err(|_| Error::index(format!("chunk {c} does not fit in memory")))?;
    Ok((lo, edge, valid))
}

/// The chunk holding index `i` (in bounds) and `i`'s offset in it.
fn locate(dim: &DimGrid, i: u64) -> Result<(u64, u64)> {
    dim.locate(i)
        .ok_or_else(|| Error::index(format!("index {i} is past the chunk edges")))
}

/// The chunks a selection touches along one dimension of `dim`, in chunk
/// order (indices must be in bounds: see [`DimSelection`]).
pub fn project_dim_on(sel: &DimSelection, extent: u64, dim: &DimGrid) -> Result<Vec<DimChunk>> {
    if let DimGrid::Regular(step) = dim {
        let step = usize::try_from(*step)
            .map_err(|_| Error::index("the chunk edge does not fit in memory"))?;
        return Ok(super::project_dim(sel, extent, step));
    }
    let mut out = Vec::new();
    match sel {
        DimSelection::Slice { start, stop, step } => {
            if stop <= start {
                return Ok(out);
            }
            let mut p = *start;
            let mut d0 = 0usize;
            while p < *stop {
                let (c, _) = locate(dim, p)?;
                let (lo, edge, valid) = chunk_bounds(dim, c, extent)?;
                let hi = lo.saturating_add(edge).min(*stop);
                let n = (hi - p).div_ceil(*step);
                let src = (0..n).map(|k| (p - lo + k * step) as usize).collect();
                let n = n as usize;
                out.push(DimChunk::new(c, src, (d0..d0 + n).collect(), valid));
                d0 += n;
                match p.checked_add(n as u64 * step) {
                    Some(next) => p = next,
                    None => break,
                }
            }
        }
        DimSelection::Indices(idx) => {
            let mut by_chunk: BTreeMap<u64, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
            for (d, &i) in idx.iter().enumerate() {
                let (c, off) = locate(dim, i)?;
                let e = by_chunk.entry(c).or_default();
                e.0.push(off as usize);
                e.1.push(d);
            }
            for (c, (src, dst)) in by_chunk {
                let (_, _, valid) = chunk_bounds(dim, c, extent)?;
                out.push(DimChunk::new(c, src, dst, valid));
            }
        }
    }
    Ok(out)
}

impl Projection {
    /// [`Projection::new`] on any grid.
    pub fn on_grid(sel: &[DimSelection], shape: &[u64], grid: &ChunkGrid) -> Result<Self> {
        let dims = match grid {
            ChunkGrid::Regular(chunk_shape) => return Projection::new(sel, shape, chunk_shape),
            ChunkGrid::Rectilinear(dims) => dims,
        };
        check_selection(sel, shape, dims.len())?;
        let dims = sel
            .iter()
            .zip(shape)
            .zip(dims)
            .map(|((s, &e), g)| project_dim_on(s, e, g))
            .collect::<Result<_>>()?;
        Ok(Projection {
            dims,
            out_shape: sel.iter().map(DimSelection::len).collect(),
        })
    }
}

impl Plan {
    /// [`Plan::new`] on any grid: a regular grid takes the closed-form path.
    pub fn on_grid(sel: &Selection, shape: &[u64], grid: &ChunkGrid) -> Result<Plan> {
        let dims = match grid {
            ChunkGrid::Regular(chunk_shape) => return Plan::new(sel, shape, chunk_shape),
            ChunkGrid::Rectilinear(dims) => dims,
        };
        Plan::with(
            sel,
            shape,
            |d| Projection::on_grid(d, shape, grid),
            |flat| group_points_on(flat, shape, dims),
        )
    }
}

/// Points grouped by chunk on a rectilinear grid, in chunk order and in
/// selection order within a chunk: (chunk coordinates, (flat index in the
/// chunk, point number)).
fn group_points_on(flat: &[u64], shape: &[u64], dims: &[DimGrid]) -> Result<Vec<PointGroup>> {
    let ndim = shape.len();
    if ndim == 0 || dims.len() != ndim {
        return Err(Error::index("point selections need at least one dimension"));
    }
    if !flat.len().is_multiple_of(ndim) {
        return Err(Error::index(format!(
            "{} coordinates do not make points of {ndim} dimensions",
            flat.len()
        )));
    }
    let npoints = flat.len() / ndim;
    // Per point: its chunk's coordinates and its flat index in that chunk.
    let mut coords: Vec<u64> = Vec::with_capacity(flat.len());
    let mut inner: Vec<usize> = Vec::with_capacity(npoints);
    let (mut offs, mut edges) = (vec![0usize; ndim], vec![0usize; ndim]);
    for point in flat.chunks_exact(ndim) {
        for d in 0..ndim {
            let x = point[d];
            if x >= shape[d] {
                return Err(Error::index(format!(
                    "index {x} is out of bounds for axis {d} with size {}",
                    shape[d]
                )));
            }
            let (c, off) = locate(&dims[d], x)?;
            let (_, edge, _) = chunk_bounds(&dims[d], c, shape[d])?;
            coords.push(c);
            (offs[d], edges[d]) = (off as usize, edge as usize);
        }
        let strides = c_strides(&edges);
        inner.push(offs.iter().zip(&strides).map(|(o, s)| o * s).sum());
    }
    let key = |k: usize| &coords[k * ndim..(k + 1) * ndim];
    let mut order: Vec<usize> = (0..npoints).collect();
    order.sort_by(|&a, &b| key(a).cmp(key(b)));
    let mut groups: Vec<PointGroup> = Vec::new();
    for k in order {
        if groups.last().is_none_or(|g| g.0 != key(k)) {
            groups.push((key(k).to_vec(), Vec::new()));
        }
        if let Some(g) = groups.last_mut() {
            g.1.push((inner[k], k));
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexing::PlanKind;
    use serde_json::json;

    fn rect(v: serde_json::Value) -> DimGrid {
        DimGrid::from_json(&v).unwrap()
    }

    /// Every (output index, array index) pair a projection names.
    fn pairs(dim: &DimGrid, parts: &[DimChunk]) -> Vec<(usize, u64)> {
        let mut got = vec![];
        for c in parts {
            let (lo, _) = dim.chunk(c.chunk).unwrap();
            for (a, b) in c.src.iter().zip(&c.dst) {
                got.push((*b, lo + *a as u64));
            }
        }
        got.sort();
        got
    }

    #[test]
    fn slices_match_brute_force() {
        let dim = rect(json!([3, [1, 3], 5, [2, 2]]));
        let extent = 14; // edges sum to 15: the last chunk overhangs
        for start in 0..extent {
            for stop in start..=extent {
                for step in 1..6 {
                    let s = DimSelection::Slice { start, stop, step };
                    let got = project_dim_on(&s, extent, &dim).unwrap();
                    let want: Vec<_> = (start..stop).step_by(step as usize).enumerate().collect();
                    assert_eq!(pairs(&dim, &got), want, "{start} {stop} {step}");
                    let chunks: Vec<u64> = got.iter().map(|c| c.chunk).collect();
                    assert!(chunks.windows(2).all(|w| w[0] < w[1]));
                }
            }
        }
    }

    #[test]
    fn edge_chunks_cover_only_their_elements_in_bounds() {
        let dim = rect(json!([4, 4, 4]));
        let all = project_dim_on(
            &DimSelection::Slice {
                start: 0,
                stop: 10,
                step: 1,
            },
            10,
            &dim,
        )
        .unwrap();
        let covers: Vec<(bool, usize)> =
            all.iter().map(|c| (c.covers_chunk, c.src.len())).collect();
        assert_eq!(covers, vec![(true, 4), (true, 4), (true, 2)]);
    }

    #[test]
    fn indices_group_by_chunk() {
        let dim = rect(json!([2, 5, 1]));
        let got = project_dim_on(&DimSelection::Indices(vec![7, 0, 3, 6, 1]), 8, &dim).unwrap();
        let summary: Vec<_> = got
            .iter()
            .map(|c| (c.chunk, c.src.clone(), c.dst.clone()))
            .collect();
        assert_eq!(
            summary,
            vec![
                (0, vec![0, 1], vec![1, 4]),
                (1, vec![1, 4], vec![2, 3]),
                (2, vec![0], vec![0])
            ]
        );
    }

    #[test]
    fn huge_dimensions_visit_only_touched_chunks() {
        // 2^60 chunks of edge 1: a strided slice touches three of them.
        let dim = DimGrid::from_runs(&[(1, 1 << 60)]).unwrap();
        let s = DimSelection::Slice {
            start: 5,
            stop: 1 << 60,
            step: 1 << 59,
        };
        let got = project_dim_on(&s, 1 << 60, &dim).unwrap();
        assert_eq!(
            got.iter().map(|c| c.chunk).collect::<Vec<_>>(),
            vec![5, 5 + (1 << 59)]
        );
        let top = u64::MAX;
        let dim = DimGrid::from_runs(&[(top - 1, 1), (1, 1)]).unwrap();
        let s = DimSelection::Slice {
            start: top - 3,
            stop: top,
            step: 2,
        };
        let got = project_dim_on(&s, top, &dim).unwrap();
        assert_eq!(pairs(&dim, &got), vec![(0, top - 3), (1, top - 1)]);
    }

    #[test]
    fn points_use_their_own_chunk_shape() {
        let grid = ChunkGrid::rectilinear(&json!([[1, 3], [2, 2]]), &[4, 4]).unwrap();
        // (3, 3): chunk (1, 1) of shape 3x2, offset (2, 1): flat 5.
        let plan =
            Plan::on_grid(&Selection::Points(vec![3, 3, 0, 0, 2, 1]), &[4, 4], &grid).unwrap();
        let PlanKind::Points(groups) = plan.kind else {
            panic!("points")
        };
        assert_eq!(
            groups,
            vec![
                (vec![0, 0], vec![(0, 1)]),
                (vec![1, 0], vec![(3, 2)]),
                (vec![1, 1], vec![(5, 0)])
            ]
        );
        assert!(Plan::on_grid(&Selection::Points(vec![4, 0]), &[4, 4], &grid).is_err());
    }

    #[test]
    fn regular_grids_take_the_closed_form() {
        let sel = Selection::Orthogonal(vec![DimSelection::Slice {
            start: 1,
            stop: 9,
            step: 2,
        }]);
        let a = Plan::on_grid(&sel, &[10], &ChunkGrid::Regular(vec![3])).unwrap();
        let b = Plan::new(&sel, &[10], &[3]).unwrap();
        let (PlanKind::Box(a), PlanKind::Box(b)) = (a.kind, b.kind) else {
            panic!("boxes")
        };
        assert_eq!(a.dims, b.dims);
    }
}
