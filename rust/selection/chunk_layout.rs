//! TensorStore's chunk layout: constraints on the read, write and codec
//! chunks of an array (TensorStore's `ChunkLayout`), their JSON form, and the
//! algorithm that turns them and a domain into the chunk shapes of a new
//! array.
//!
//! Write chunks are the stored objects (the zarr chunk grid, or the shards);
//! read chunks are the units that can be read alone (the inner chunks of a
//! shard). Each per-dimension constraint is *hard* (must hold) or *soft* (a
//! preference). A chunk size of 0 is unconstrained and -1 is the whole extent
//! of the domain (always soft, as in TensorStore); an aspect ratio of 0 is
//! unconstrained; unconstrained dimensions get a size from the aspect ratio
//! and the target number of elements ([`DEFAULT_CHUNK_ELEMENTS`] unless
//! given).

use serde_json::{Map, Number, Value};

use super::index_space::INF;
use super::spec_json::{array, check_members, fail, integer, member, non_negative_number, object};
use crate::error::Result;

/// The number of elements a chunk gets when no constraint says otherwise.
pub const DEFAULT_CHUNK_ELEMENTS: i64 = 1024 * 1024;
/// TensorStore's largest rank.
const MAX_RANK: i64 = 32;
/// How far from the size asked for a read chunk size is looked for that
/// divides the write chunk size.
const MAX_DIVISOR_DISTANCE: i64 = 1_000_000;

const GRID_MEMBERS: [&str; 6] = [
    "shape",
    "shape_soft_constraint",
    "aspect_ratio",
    "aspect_ratio_soft_constraint",
    "elements",
    "elements_soft_constraint",
];
const LAYOUT_MEMBERS: [&str; 9] = [
    "rank",
    "grid_origin",
    "grid_origin_soft_constraint",
    "inner_order",
    "inner_order_soft_constraint",
    "write_chunk",
    "read_chunk",
    "codec_chunk",
    "chunk",
];
const USAGES: [&str; 3] = ["write_chunk", "read_chunk", "codec_chunk"];

fn names(members: &[&str]) -> Vec<String> {
    members.iter().map(|m| m.to_string()).collect()
}

/// An element of a per-dimension constraint.
pub trait Element: Copy + PartialEq {
    /// The value that leaves a dimension unconstrained.
    const UNSET: Self;
    /// Whether the value is a soft constraint even when given as a hard one.
    fn always_soft(self) -> bool {
        false
    }
    fn json(self) -> Value;
    fn show(self) -> String;
}

/// A chunk size: 0 unconstrained, -1 the whole extent.
impl Element for i64 {
    const UNSET: Self = 0;
    fn always_soft(self) -> bool {
        self == -1
    }
    fn json(self) -> Value {
        Value::from(self)
    }
    fn show(self) -> String {
        self.to_string()
    }
}

/// An aspect ratio: 0 unconstrained.
impl Element for f64 {
    const UNSET: Self = 0.0;
    fn json(self) -> Value {
        Number::from_f64(self).map_or(Value::Null, Value::Number)
    }
    fn show(self) -> String {
        self.to_string()
    }
}

/// A grid origin: any index, None unconstrained.
impl Element for Option<i64> {
    const UNSET: Self = None;
    fn json(self) -> Value {
        self.map_or(Value::Null, Value::from)
    }
    fn show(self) -> String {
        self.map_or("null".to_string(), |v| v.to_string())
    }
}

/// One constraint per dimension, each hard or soft.
#[derive(Clone, Debug, PartialEq)]
pub struct Vector<T> {
    pub values: Vec<T>,
    pub hard: Vec<bool>,
}

impl<T: Element> Vector<T> {
    /// `values`, hard where `hard` and set (and not always soft).
    pub fn new(values: Vec<T>, hard: bool) -> Self {
        let hard = values
            .iter()
            .map(|v| hard && *v != T::UNSET && !v.always_soft())
            .collect();
        Vector { values, hard }
    }

    /// Merge `new` in (TensorStore's `MergeVectorInto`): a hard constraint
    /// replaces a soft one, a soft one fills only unset dimensions, and two
    /// hard ones must agree.
    fn merge(&mut self, new: &Vector<T>, at: &str) -> Result<()> {
        if self.values.len() != new.values.len() {
            return Err(fail(
                at,
                format!(
                    "has {} elements, but the rank is {}",
                    new.values.len(),
                    self.values.len()
                ),
            ));
        }
        for (i, (&x, &h)) in new.values.iter().zip(&new.hard).enumerate() {
            if h && self.hard[i] && self.values[i] != x {
                return Err(fail(
                    at,
                    format!(
                        "hard constraint {} for dimension {i} does not match the existing hard \
                         constraint {}",
                        x.show(),
                        self.values[i].show()
                    ),
                ));
            }
        }
        for (i, (&x, &h)) in new.values.iter().zip(&new.hard).enumerate() {
            if x != T::UNSET && (h || self.values[i] == T::UNSET) {
                self.values[i] = x;
                self.hard[i] |= h;
            }
        }
        Ok(())
    }

    fn any_set(&self) -> bool {
        self.values.iter().any(|v| *v != T::UNSET)
    }

    /// The hard (or soft) constraints as JSON, null where there is none;
    /// None when there are none at all.
    fn to_json(&self, hard: bool) -> Option<Value> {
        let items: Vec<Value> = (self.values.iter().zip(&self.hard))
            .map(|(&v, &h)| {
                if h == hard && v != T::UNSET {
                    v.json()
                } else {
                    Value::Null
                }
            })
            .collect();
        items
            .iter()
            .any(|v| !v.is_null())
            .then_some(Value::Array(items))
    }

    /// Dimension `j` of the result is dimension `inv[j]` of this one.
    fn permuted(&self, inv: &[usize], at: &str) -> Result<Self> {
        let pick = |j: usize| {
            let k = inv[j];
            let v = self
                .values
                .get(k)
                .ok_or_else(|| rank_error(at, self.values.len(), inv.len()))?;
            Ok((*v, self.hard[k]))
        };
        let (values, hard) = (0..inv.len())
            .map(pick)
            .collect::<Result<(Vec<_>, Vec<_>)>>()?;
        Ok(Vector { values, hard })
    }
}

fn rank_error(at: &str, rank: usize, other: usize) -> crate::error::Error {
    fail(
        at,
        format!("has rank {rank}, but the transform has rank {other}"),
    )
}

fn merge_into<T: Element>(slot: &mut Option<Vector<T>>, new: &Vector<T>, at: &str) -> Result<()> {
    match slot {
        Some(old) => old.merge(new, at),
        None => {
            *slot = Some(new.clone());
            Ok(())
        }
    }
}

/// A JSON array of constraints (null: unconstrained) at `at`.
fn parse_vector<T: Element>(
    value: &Value,
    at: &str,
    hard: bool,
    element: impl Fn(&Value, &str) -> Result<T>,
) -> Result<Vector<T>> {
    let values = array(value, at)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if v.is_null() {
                Ok(T::UNSET)
            } else {
                element(v, &format!("{at}[{i}]"))
            }
        })
        .collect::<Result<Vec<T>>>()?;
    Ok(Vector::new(values, hard))
}

/// Constraints on one kind of chunk (TensorStore's `ChunkLayout::Grid`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    pub shape: Option<Vector<i64>>,
    pub aspect_ratio: Option<Vector<f64>>,
    pub elements: Option<i64>,
    pub elements_hard: bool,
}

impl Grid {
    /// A grid's JSON (`{"shape": ..., "aspect_ratio_soft_constraint": ...}`).
    pub fn from_json(value: &Value, at: &str) -> Result<Grid> {
        let obj = object(value, at)?;
        check_members(obj, &names(&GRID_MEMBERS), at)?;
        let mut grid = Grid::default();
        for (key, hard) in [("shape", true), ("shape_soft_constraint", false)] {
            if let Some(v) = obj.get(key) {
                let at = member(at, key);
                let size = |v: &Value, at: &str| integer(v, at, -1, i64::MAX);
                merge_into(&mut grid.shape, &parse_vector(v, &at, hard, size)?, &at)?;
            }
        }
        for (key, hard) in [
            ("aspect_ratio", true),
            ("aspect_ratio_soft_constraint", false),
        ] {
            if let Some(v) = obj.get(key) {
                let at = member(at, key);
                let ratios = parse_vector(v, &at, hard, non_negative_number)?;
                merge_into(&mut grid.aspect_ratio, &ratios, &at)?;
            }
        }
        for (key, hard) in [("elements", true), ("elements_soft_constraint", false)] {
            if let Some(v) = obj.get(key).filter(|v| !v.is_null()) {
                let at = member(at, key);
                grid.set_elements(integer(v, &at, 1, i64::MAX)?, hard, &at)?;
            }
        }
        Ok(grid)
    }

    fn set_elements(&mut self, n: i64, hard: bool, at: &str) -> Result<()> {
        if let Some(old) = self.elements {
            if !hard {
                return Ok(());
            }
            if self.elements_hard && old != n {
                return Err(fail(
                    at,
                    format!("{n} does not match the existing hard constraint {old}"),
                ));
            }
        }
        self.elements = Some(n);
        self.elements_hard |= hard;
        Ok(())
    }

    /// `other`'s constraints merged in.
    pub fn merge(&mut self, other: &Grid, at: &str) -> Result<()> {
        if let Some(shape) = &other.shape {
            merge_into(&mut self.shape, shape, &member(at, "shape"))?;
        }
        if let Some(ratio) = &other.aspect_ratio {
            merge_into(&mut self.aspect_ratio, ratio, &member(at, "aspect_ratio"))?;
        }
        if let Some(n) = other.elements {
            self.set_elements(n, other.elements_hard, &member(at, "elements"))?;
        }
        Ok(())
    }

    pub fn to_json(&self) -> Map<String, Value> {
        let mut out = Map::new();
        if let Some(shape) = &self.shape {
            put(&mut out, "shape", shape.to_json(true));
            put(&mut out, "shape_soft_constraint", shape.to_json(false));
        }
        if let Some(ratio) = &self.aspect_ratio {
            put(&mut out, "aspect_ratio", ratio.to_json(true));
            put(
                &mut out,
                "aspect_ratio_soft_constraint",
                ratio.to_json(false),
            );
        }
        if let Some(n) = self.elements {
            let key = if self.elements_hard {
                "elements"
            } else {
                "elements_soft_constraint"
            };
            out.insert(key.to_string(), Value::from(n));
        }
        out
    }

    /// The hard-constrained sizes (0 where a dimension is soft or
    /// unconstrained), None without a shape.
    pub fn hard_shape(&self) -> Option<Vec<i64>> {
        let shape = self.shape.as_ref()?;
        let sizes = shape.values.iter().zip(&shape.hard);
        Some(sizes.map(|(&s, &h)| if h { s } else { 0 }).collect())
    }

    /// The ranks its shape and aspect ratio imply.
    fn ranks(&self) -> Vec<usize> {
        let shape = self.shape.as_ref().map(|v| v.values.len());
        shape
            .into_iter()
            .chain(self.aspect_ratio.as_ref().map(|v| v.values.len()))
            .collect()
    }

    fn rank_dependent_set(&self) -> bool {
        self.shape.as_ref().is_some_and(Vector::any_set)
            || self.aspect_ratio.as_ref().is_some_and(Vector::any_set)
    }

    fn permuted(&self, inv: &[usize], at: &str) -> Result<Grid> {
        Ok(Grid {
            shape: self
                .shape
                .as_ref()
                .map(|v| v.permuted(inv, at))
                .transpose()?,
            aspect_ratio: self
                .aspect_ratio
                .as_ref()
                .map(|v| v.permuted(inv, at))
                .transpose()?,
            ..self.clone()
        })
    }

    /// This grid, its shape `write`'s where it has none.
    fn or_shape_of(&self, write: &Grid) -> Grid {
        if self.shape.is_some() || write.shape.is_none() {
            return self.clone();
        }
        Grid {
            shape: write.shape.clone(),
            ..self.clone()
        }
    }
}

fn put(out: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        out.insert(key.to_string(), v);
    }
}

/// TensorStore's `ChunkLayout` constraints.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkLayout {
    pub rank: Option<usize>,
    pub grid_origin: Option<Vector<Option<i64>>>,
    pub inner_order: Option<Vec<usize>>,
    pub inner_order_hard: bool,
    pub write_chunk: Grid,
    pub read_chunk: Grid,
    pub codec_chunk: Grid,
}

impl ChunkLayout {
    /// A chunk layout's JSON, its members' paths under `at`.
    pub fn from_json(value: &Value, at: &str) -> Result<ChunkLayout> {
        let obj = object(value, at)?;
        check_members(obj, &names(&LAYOUT_MEMBERS), at)?;
        let mut layout = ChunkLayout::default();
        if let Some(v) = obj.get("rank") {
            let rank = integer(v, &member(at, "rank"), 0, MAX_RANK)?;
            layout.set_rank(rank as usize, at)?;
        }
        for (key, hard) in [
            ("grid_origin", true),
            ("grid_origin_soft_constraint", false),
        ] {
            if let Some(v) = obj.get(key) {
                let at = member(at, key);
                let index = |v: &Value, at: &str| integer(v, at, -INF + 1, INF - 1).map(Some);
                let origin = parse_vector(v, &at, hard, index)?;
                layout.set_rank(origin.values.len(), &at)?;
                merge_into(&mut layout.grid_origin, &origin, &at)?;
            }
        }
        for (key, hard) in [
            ("inner_order", true),
            ("inner_order_soft_constraint", false),
        ] {
            if let Some(v) = obj.get(key) {
                let at = member(at, key);
                let order = parse_permutation(v, &at)?;
                layout.set_rank(order.len(), &at)?;
                layout.set_inner_order(order, hard, &at)?;
            }
        }
        for key in ["chunk", "write_chunk", "read_chunk", "codec_chunk"] {
            if let Some(v) = obj.get(key) {
                let at = member(at, key);
                let grid = Grid::from_json(v, &at)?;
                for rank in grid.ranks() {
                    layout.set_rank(rank, &at)?;
                }
                layout.set_grid(key, &grid, &at)?;
            }
        }
        Ok(layout)
    }

    /// Hard constraints (zarr metadata's): the rank, grid origin, inner order
    /// and write and read chunk shapes, each if given.
    pub fn hard(
        rank: Option<usize>,
        grid_origin: Option<Vec<i64>>,
        inner_order: Option<Vec<i64>>,
        write_shape: Option<Vec<i64>>,
        read_shape: Option<Vec<i64>>,
    ) -> Result<ChunkLayout> {
        let mut obj = Map::new();
        if let Some(rank) = rank {
            obj.insert("rank".to_string(), Value::from(rank));
        }
        if let Some(origin) = grid_origin {
            obj.insert("grid_origin".to_string(), Value::from(origin));
        }
        if let Some(order) = inner_order {
            obj.insert("inner_order".to_string(), Value::from(order));
        }
        for (key, shape) in [("write_chunk", write_shape), ("read_chunk", read_shape)] {
            if let Some(shape) = shape {
                let grid = Map::from_iter([("shape".to_string(), Value::from(shape))]);
                obj.insert(key.to_string(), Value::Object(grid));
            }
        }
        ChunkLayout::from_json(&Value::Object(obj), "chunk_layout")
    }

    fn set_rank(&mut self, rank: usize, at: &str) -> Result<()> {
        match self.rank {
            Some(have) if have != rank => Err(fail(
                at,
                format!("has rank {rank}, but the chunk layout has rank {have}"),
            )),
            _ => {
                self.rank = Some(rank);
                Ok(())
            }
        }
    }

    /// TensorStore's `SetInnerOrderInternal`: a soft order only where there
    /// is none, a hard one over a soft one, two hard ones must agree.
    fn set_inner_order(&mut self, order: Vec<usize>, hard: bool, at: &str) -> Result<()> {
        if let Some(have) = &self.inner_order {
            if !hard {
                return Ok(());
            }
            if self.inner_order_hard {
                if *have != order {
                    return Err(fail(
                        at,
                        format!("{order:?} does not match the existing hard constraint {have:?}"),
                    ));
                }
                return Ok(());
            }
        }
        self.inner_order = Some(order);
        self.inner_order_hard = hard;
        Ok(())
    }

    /// Merge `grid` into the grid `key` names; `"chunk"` constrains the
    /// write and read chunks, and the codec chunks' aspect ratio.
    fn set_grid(&mut self, key: &str, grid: &Grid, at: &str) -> Result<()> {
        match key {
            "chunk" => {
                self.write_chunk.merge(grid, at)?;
                self.read_chunk.merge(grid, at)?;
                let ratio = Grid {
                    aspect_ratio: grid.aspect_ratio.clone(),
                    ..Grid::default()
                };
                self.codec_chunk.merge(&ratio, at)
            }
            "write_chunk" => self.write_chunk.merge(grid, at),
            "read_chunk" => self.read_chunk.merge(grid, at),
            _ => self.codec_chunk.merge(grid, at),
        }
    }

    pub fn grid(&self, key: &str) -> &Grid {
        match key {
            "write_chunk" => &self.write_chunk,
            "read_chunk" => &self.read_chunk,
            _ => &self.codec_chunk,
        }
    }

    /// This layout with `other`'s constraints merged in.
    pub fn merge(&self, other: &ChunkLayout, at: &str) -> Result<ChunkLayout> {
        let mut out = self.clone();
        if let Some(rank) = other.rank {
            out.set_rank(rank, at)?;
        }
        if let Some(origin) = &other.grid_origin {
            merge_into(&mut out.grid_origin, origin, &member(at, "grid_origin"))?;
        }
        if let Some(order) = &other.inner_order {
            out.set_inner_order(
                order.clone(),
                other.inner_order_hard,
                &member(at, "inner_order"),
            )?;
        }
        for key in USAGES {
            out.set_grid(key, other.grid(key), &member(at, key))?;
        }
        Ok(out)
    }

    /// The JSON TensorStore writes: `rank` only where no other member
    /// implies it.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut out = Map::new();
        if let Some(origin) = &self.grid_origin {
            put(&mut out, "grid_origin", origin.to_json(true));
            put(
                &mut out,
                "grid_origin_soft_constraint",
                origin.to_json(false),
            );
        }
        if let Some(order) = &self.inner_order {
            let key = if self.inner_order_hard {
                "inner_order"
            } else {
                "inner_order_soft_constraint"
            };
            out.insert(key.to_string(), Value::from(order.clone()));
        }
        for key in USAGES {
            let grid = self.grid(key).to_json();
            if !grid.is_empty() {
                out.insert(key.to_string(), Value::Object(grid));
            }
        }
        let implied = self.inner_order.is_some()
            || self.grid_origin.as_ref().is_some_and(Vector::any_set)
            || USAGES.iter().any(|k| self.grid(k).rank_dependent_set());
        if let (Some(rank), false) = (self.rank, implied) {
            out.insert("rank".to_string(), Value::from(rank));
        }
        out
    }

    /// The layout of a view in the coordinates of the array under it:
    /// dimension `k` of the view is dimension `perm[k]` of the array, whose
    /// coordinates are the view's plus `offsets` (one per array dimension).
    pub fn permuted(&self, perm: &[usize], offsets: &[i64], at: &str) -> Result<ChunkLayout> {
        let n = perm.len();
        let mut inv = vec![usize::MAX; n];
        for (k, &j) in perm.iter().enumerate() {
            if j >= n || inv[j] != usize::MAX {
                return Err(fail(at, format!("{perm:?} is not a permutation")));
            }
            inv[j] = k;
        }
        if let Some(rank) = self.rank.filter(|&r| r != n) {
            return Err(rank_error(at, rank, n));
        }
        let inner_order = match &self.inner_order {
            Some(order) => Some(
                (order.iter())
                    .map(|&k| {
                        perm.get(k)
                            .copied()
                            .ok_or_else(|| rank_error(at, order.len(), n))
                    })
                    .collect::<Result<Vec<usize>>>()?,
            ),
            None => None,
        };
        let mut out = ChunkLayout {
            rank: self.rank,
            inner_order,
            inner_order_hard: self.inner_order_hard,
            write_chunk: self.write_chunk.permuted(&inv, at)?,
            read_chunk: self.read_chunk.permuted(&inv, at)?,
            codec_chunk: self.codec_chunk.permuted(&inv, at)?,
            grid_origin: None,
        };
        if let Some(origin) = &self.grid_origin {
            let mut moved = origin.permuted(&inv, at)?;
            for (v, offset) in moved.values.iter_mut().zip(offsets) {
                if let Some(x) = v {
                    *x = x
                        .checked_add(*offset)
                        .filter(|x| (-INF + 1..INF).contains(x))
                        .ok_or_else(|| fail(at, "the grid origin overflows the index range"))?;
                }
            }
            out.grid_origin = Some(moved);
        }
        Ok(out)
    }

    /// (read chunk shape, write chunk shape) for a new array of
    /// `domain_shape`: every write chunk is a whole number of read chunks.
    /// With `read_is_write` (a zarr v3 chain without sharding) the read
    /// chunks take the write chunks' shape constraints where they have none.
    pub fn choose_read_write_chunk_shapes(
        &self,
        domain_shape: &[i64],
        read_is_write: bool,
        at: &str,
    ) -> Result<(Vec<i64>, Vec<i64>)> {
        let read = if read_is_write {
            self.read_chunk.or_shape_of(&self.write_chunk)
        } else {
            self.read_chunk.clone()
        };
        choose_read_write(&read, &self.write_chunk, domain_shape, at)
    }

    /// One chunk shape that serves as both read and write chunk (zarr v2).
    pub fn choose_chunk_shape(&self, domain_shape: &[i64]) -> Result<Vec<i64>> {
        let mut combined = self.read_chunk.clone();
        combined.merge(&self.write_chunk, "chunk_layout.write_chunk")?;
        let (mut shape, _) = initial_shape(&combined, domain_shape, "chunk_layout")?;
        complete(
            &combined,
            domain_shape,
            &mut shape,
            |_, s| s,
            "chunk_layout",
        )?;
        Ok(shape)
    }
}

/// An `inner_order` member: a permutation of the dimensions.
fn parse_permutation(value: &Value, at: &str) -> Result<Vec<usize>> {
    let order = array(value, at)?
        .iter()
        .enumerate()
        .map(|(i, v)| integer(v, &format!("{at}[{i}]"), i64::MIN, i64::MAX))
        .collect::<Result<Vec<i64>>>()?;
    let mut sorted = order.clone();
    sorted.sort_unstable();
    if sorted.iter().enumerate().any(|(i, &v)| v != i as i64) {
        return Err(fail(at, format!("{order:?} is not a permutation")));
    }
    Ok(order.into_iter().map(|v| v as usize).collect())
}

// ---------------------------------------------------------------------------
// Choosing chunk shapes
// ---------------------------------------------------------------------------

/// The constrained sizes of `grid` (0: unconstrained, -1 resolved to the
/// extent) and which are hard.
fn initial_shape(grid: &Grid, domain: &[i64], at: &str) -> Result<(Vec<i64>, Vec<bool>)> {
    let rank = domain.len();
    let Some(shape) = &grid.shape else {
        return Ok((vec![0; rank], vec![false; rank]));
    };
    if shape.values.len() != rank {
        return Err(fail(
            at,
            format!(
                "has rank {}, but the domain has rank {rank}",
                shape.values.len()
            ),
        ));
    }
    let sizes = shape.values.iter().zip(domain);
    let sizes = sizes
        .map(|(&s, &d)| if s == -1 { d.max(1) } else { s })
        .collect();
    Ok((sizes, shape.hard.clone()))
}

fn choose_read_write(
    read: &Grid,
    write: &Grid,
    domain: &[i64],
    at: &str,
) -> Result<(Vec<i64>, Vec<i64>)> {
    let (mut write_shape, write_hard) = initial_shape(write, domain, &member(at, "write_chunk"))?;
    let (mut read_shape, read_hard) = initial_shape(read, domain, &member(at, "read_chunk"))?;
    for i in 0..domain.len() {
        let (r, w) = (read_shape[i], write_shape[i]);
        if r <= 0 || w <= 0 || w % r == 0 {
            continue;
        }
        if read_hard[i] && write_hard[i] {
            return Err(fail(
                at,
                format!(
                    "incompatible chunk size constraints for dimension {i}: read size of {r}, \
                     write size of {w}"
                ),
            ));
        }
        if read_hard[i] {
            write_shape[i] = nearest_multiple(r, w);
        } else {
            read_shape[i] = nearest_divisor(w, r);
        }
    }
    let map_read = |i: usize, size: i64| match write_shape[i] {
        w if w > 0 => nearest_divisor(w, size),
        _ => size,
    };
    complete(
        read,
        domain,
        &mut read_shape,
        map_read,
        &member(at, "read_chunk"),
    )?;
    let map_write = |i: usize, size: i64| nearest_multiple(read_shape[i], size);
    complete(
        write,
        domain,
        &mut write_shape,
        map_write,
        &member(at, "write_chunk"),
    )?;
    Ok((read_shape, write_shape))
}

/// Fill the unconstrained (0) sizes of `shape` from the grid's aspect ratio
/// and target number of elements.
fn complete(
    grid: &Grid,
    domain: &[i64],
    shape: &mut [i64],
    map_size: impl Fn(usize, i64) -> i64,
    at: &str,
) -> Result<()> {
    if shape.iter().all(|&s| s != 0) {
        return Ok(());
    }
    let rank = shape.len();
    let mut ratio = vec![1.0; rank];
    if let Some(given) = &grid.aspect_ratio {
        if given.values.len() != rank {
            return Err(fail(
                at,
                format!(
                    "aspect_ratio has rank {}, the domain {rank}",
                    given.values.len()
                ),
            ));
        }
        ratio = given
            .values
            .iter()
            .map(|&r| if r == 0.0 { 1.0 } else { r })
            .collect();
    }
    let target = grid.elements.unwrap_or(DEFAULT_CHUNK_ELEMENTS);
    choose_from_aspect_ratio(&ratio, shape, target, domain, map_size);
    Ok(())
}

/// TensorStore's `ChooseChunkSizeFromAspectRatio`: the unconstrained sizes
/// proportional to `aspect_ratio`, scaled (a binary search over the factor,
/// in the same double arithmetic) so that the chunk has about `target`
/// elements, at most `target` unless no factor reaches it exactly.
fn choose_from_aspect_ratio(
    aspect_ratio: &[f64],
    shape: &mut [i64],
    target: i64,
    domain: &[i64],
    map_size: impl Fn(usize, i64) -> i64,
) {
    let rank = shape.len();
    let max_chunk: Vec<f64> = (domain.iter())
        .map(|&d| (target as f64).min((d as f64).max(1.0)).min(2f64.powi(62)))
        .collect();
    let fixed = shape.to_vec();
    let chunk_size = |i: usize, factor: f64| -> i64 {
        if fixed[i] != 0 {
            return fixed[i];
        }
        map_size(
            i,
            ((aspect_ratio[i] * factor).min(max_chunk[i]) as i64).max(1),
        )
    };
    let total = |factor: f64| -> i64 {
        (0..rank)
            .try_fold(1i64, |n, i| n.checked_mul(chunk_size(i, factor)))
            .unwrap_or(i64::MAX)
    };
    let mut min_increment = f64::INFINITY;
    let mut max_factor: f64 = 0.0;
    for i in (0..rank).filter(|&i| fixed[i] == 0) {
        min_increment = min_increment.min(1.0 / aspect_ratio[i]);
        max_factor = max_factor.max(max_chunk[i] / aspect_ratio[i]);
    }
    min_increment /= 2.0;
    max_factor *= 2.0;
    let mut min_factor = min_increment;
    let mut max_elements = total(max_factor);
    while min_factor + min_increment < max_factor {
        let mid = min_factor + (max_factor - min_factor) / 2.0;
        if mid <= min_factor || mid >= max_factor {
            break; // no double between them: the search cannot narrow further
        }
        let mid_elements = total(mid);
        if mid_elements >= target {
            (max_factor, max_elements) = (mid, mid_elements);
        }
        if mid_elements <= target {
            min_factor = mid;
        }
    }
    // TensorStore 0.1.86 (the version the tests compare against) takes the
    // larger factor only where it hits the target exactly
    let factor = if max_elements == target {
        max_factor
    } else {
        min_factor
    };
    let sizes: Vec<i64> = (0..rank).map(|i| chunk_size(i, factor)).collect();
    shape.copy_from_slice(&sizes);
}

/// The divisor of `dividend` nearest `target` (the smaller one on a tie),
/// within [`MAX_DIVISOR_DISTANCE`]; else `dividend`.
fn nearest_divisor(dividend: i64, target: i64) -> i64 {
    if target >= dividend {
        return dividend;
    }
    if target > 0 && dividend % target == 0 {
        return target;
    }
    for offset in 1..MAX_DIVISOR_DISTANCE {
        if target > offset && dividend % (target - offset) == 0 {
            return target - offset;
        }
        match target.checked_add(offset) {
            Some(up) if up > 0 && dividend % up == 0 => return up,
            _ => {}
        }
    }
    dividend
}

/// The multiple of `divisor` nearest `target` (the smaller one on a tie),
/// at least `divisor`.
fn nearest_multiple(divisor: i64, target: i64) -> i64 {
    if target < divisor || divisor <= 0 {
        return divisor;
    }
    let lower = target / divisor * divisor;
    let upper = lower.saturating_add(divisor);
    if target - lower <= upper - target {
        lower
    } else {
        upper
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layout(value: Value) -> ChunkLayout {
        ChunkLayout::from_json(&value, "chunk_layout").unwrap()
    }

    fn error(value: Value) -> String {
        ChunkLayout::from_json(&value, "chunk_layout")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn json_is_tensorstore_s() {
        let cases = [
            (
                json!({"grid_origin_soft_constraint": [1, 2]}),
                json!({"grid_origin_soft_constraint": [1, 2]}),
            ),
            (
                json!({"grid_origin": [1, null], "grid_origin_soft_constraint": [5, 2]}),
                json!({"grid_origin": [1, null], "grid_origin_soft_constraint": [null, 2]}),
            ),
            (
                json!({"rank": 2, "write_chunk": {"elements": 100}}),
                json!({"rank": 2, "write_chunk": {"elements": 100}}),
            ),
            (
                json!({"chunk": {"aspect_ratio": [1, 2]}}),
                json!({"write_chunk": {"aspect_ratio": [1.0, 2.0]}, "read_chunk": {"aspect_ratio": [1.0, 2.0]},
                       "codec_chunk": {"aspect_ratio": [1.0, 2.0]}}),
            ),
            (
                json!({"read_chunk": {"shape": [-1, 3], "shape_soft_constraint": [7, 8]}}),
                json!({"read_chunk": {"shape": [null, 3], "shape_soft_constraint": [-1, null]}}),
            ),
            (
                json!({"inner_order_soft_constraint": [1, 0], "inner_order": [0, 1]}),
                json!({"inner_order": [0, 1]}),
            ),
            (
                json!({"write_chunk": {"elements_soft_constraint": 5, "elements": 7}}),
                json!({"write_chunk": {"elements": 7}}),
            ),
            (json!({"rank": 3}), json!({"rank": 3})),
        ];
        for (given, want) in cases {
            assert_eq!(
                Value::Object(layout(given.clone()).to_json()),
                want,
                "{given}"
            );
        }
    }

    #[test]
    fn merging_keeps_hard_constraints() {
        let a = layout(
            json!({"write_chunk": {"shape_soft_constraint": [4, 5]}, "grid_origin_soft_constraint": [3, 3]}),
        );
        let b = layout(json!({"write_chunk": {"shape": [8, null]}, "grid_origin": [0, null]}));
        let merged = a.merge(&b, "chunk_layout").unwrap();
        assert_eq!(
            Value::Object(merged.to_json()),
            json!({"grid_origin": [0, null], "grid_origin_soft_constraint": [null, 3],
                   "write_chunk": {"shape": [8, null], "shape_soft_constraint": [null, 5]}})
        );
        let c = layout(json!({"write_chunk": {"shape": [9, null]}}));
        let e = merged.merge(&c, "chunk_layout").unwrap_err().to_string();
        assert!(
            e.contains("chunk_layout.write_chunk.shape: hard constraint 9 for dimension 0"),
            "{e}"
        );
        let d = layout(json!({"inner_order": [1, 0]}));
        let e = d
            .merge(&layout(json!({"inner_order": [0, 1]})), "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.inner_order: [0, 1] does not match"), "{e}");
    }

    #[test]
    fn errors_name_the_member() {
        assert!(error(json!({"rank": 2, "grid_origin": [1, 2, 3]}))
            .contains("chunk_layout.grid_origin: has rank 3"));
        assert!(error(json!({"inner_order": [0, 0]}))
            .contains("chunk_layout.inner_order: [0, 0] is not a permutation"));
        assert!(error(json!({"write_chunk": {"shape": [1, -2]}}))
            .contains("chunk_layout.write_chunk.shape[1]"));
        assert!(error(json!({"read_chunk": {"aspect_ratio": [true]}}))
            .contains("read_chunk.aspect_ratio[0]: expected a non-negative number"));
        assert!(error(json!({"codec_chunk": {"elements": 0}})).contains("codec_chunk.elements"));
        assert!(error(json!({"chunks": {}})).contains("unknown member(s) 'chunks'"));
        assert!(error(json!([])).contains("chunk_layout: expected a JSON object"));
    }

    #[test]
    fn chooses_tensorstore_s_shapes() {
        let l = layout(json!({}));
        assert_eq!(l.choose_chunk_shape(&[100, 100]).unwrap(), vec![100, 100]);
        assert_eq!(
            l.choose_chunk_shape(&[10000, 10000]).unwrap(),
            vec![1024, 1024]
        );
        let l = layout(json!({"write_chunk": {"elements": 1000, "aspect_ratio": [1, 2, 0]}}));
        let shape = l.choose_chunk_shape(&[1000, 1000, 1000]).unwrap();
        assert_eq!(shape, vec![7, 15, 7]);
        let l = layout(
            json!({"write_chunk": {"shape": [100, -1]}, "read_chunk": {"shape_soft_constraint": [30, 0], "elements": 300}}),
        );
        let (read, write) = l
            .choose_read_write_chunk_shapes(&[1000, 7], false, "chunk_layout")
            .unwrap();
        assert_eq!((read, write), (vec![25, 7], vec![100, 7]));
        let l = layout(json!({"write_chunk": {"shape": [100]}, "read_chunk": {"shape": [30]}}));
        let e = l
            .choose_read_write_chunk_shapes(&[1000], false, "chunk_layout")
            .unwrap_err();
        assert!(e
            .to_string()
            .contains("incompatible chunk size constraints for dimension 0"));
        let l = layout(json!({"write_chunk": {"shape": [100]}}));
        let shapes = l
            .choose_read_write_chunk_shapes(&[1000], true, "chunk_layout")
            .unwrap();
        assert_eq!(shapes, (vec![100], vec![100]));
    }

    #[test]
    fn extreme_constraints_end() {
        let l = layout(
            json!({"write_chunk": {"aspect_ratio": [1e-300, 1e300, 1], "elements": 9_000_000_000_000_000_000i64}}),
        );
        let shape = l.choose_chunk_shape(&[i64::MAX, 0, 5]).unwrap();
        assert!(shape.iter().all(|&s| s >= 1));
        assert_eq!(nearest_divisor(i64::MAX, i64::MAX - 5), i64::MAX);
        assert_eq!(nearest_multiple(7, i64::MAX), i64::MAX / 7 * 7);
    }

    #[test]
    fn permuting_moves_every_constraint() {
        let l = layout(json!({"grid_origin": [1, 2], "inner_order": [1, 0],
                              "write_chunk": {"shape": [3, 4], "aspect_ratio_soft_constraint": [5, 6]}}));
        let p = l.permuted(&[1, 0], &[10, 20], "options").unwrap();
        assert_eq!(
            Value::Object(p.to_json()),
            json!({"grid_origin": [12, 21], "inner_order": [0, 1],
                   "write_chunk": {"shape": [4, 3], "aspect_ratio_soft_constraint": [6.0, 5.0]}})
        );
        assert!(l.permuted(&[0, 0], &[0, 0], "options").is_err());
        assert!(l.permuted(&[0], &[0], "options").is_err());
    }
}
