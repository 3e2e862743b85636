//! TensorStore's index space: index domains, index transforms and the
//! operations that build them (TensorStore's `IndexDomain`, `IndexTransform`
//! and dimension expressions), with their JSON forms.
//!
//! A domain is a box of integer coordinates, one [`Interval`] per dimension,
//! each bound possibly infinite ([`INF`]) and possibly implicit (a bound that
//! may change: the upper bounds of a zarr array, which resizing moves), each
//! dimension with an optional label. A transform maps its input domain to
//! array coordinates through one [`OutputMap`] per array dimension. Every
//! operation (NumPy-style indexing in domain coordinates, translating,
//! labelling, striding, reordering) builds the transform from a new domain to
//! the old one and composes; [`IndexTransform::selection`] turns the result
//! into the selection the core reads and writes.

use std::fmt;

use serde_json::{json, Map, Value};

use super::spec_json::{array, check_members, fail, integer, member, object};
use super::transform::{checked_affine, output_range, transform, OutputMap};
use super::Normalized;
use crate::error::{Error, Result};

/// TensorStore's bound for infinite indices: finite ones lie in (-INF, INF).
pub const INF: i64 = (1 << 62) - 1;

fn floor_div(a: i64, b: i64) -> i64 {
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    -floor_div(-a, b)
}

fn overflow() -> Error {
    Error::index("an index transform's coordinates overflow 64-bit integers")
}

/// `offset + stride * x`, checked.
fn affine(offset: i64, stride: i64, x: i64) -> Result<i64> {
    checked_affine(offset, stride, x).ok_or_else(overflow)
}

/// A bound: an integer, its infinite text (`"-inf"`, `"+inf"`), either in a
/// one-element list when implicit.
fn bound(value: &Value, at: &str, infinite: (i64, &str)) -> Result<(i64, bool)> {
    let (value, implicit) = match value {
        Value::Array(items) if items.len() == 1 => (&items[0], true),
        Value::Array(items) => {
            return Err(fail(
                at,
                format!(
                    "expected an array of length 1, got {} elements",
                    items.len()
                ),
            ))
        }
        v => (v, false),
    };
    if value.as_str() == Some(infinite.1) {
        return Ok((infinite.0, implicit));
    }
    Ok((integer(value, at, -INF + 1, INF - 1)?, implicit))
}

fn bound_json(value: i64, implicit: bool, infinite: i64, text: &str) -> Value {
    let v = if value == infinite {
        json!(text)
    } else {
        json!(value)
    };
    if implicit {
        json!([v])
    } else {
        v
    }
}

// ---------------------------------------------------------------------------
// Domains
// ---------------------------------------------------------------------------

/// One dimension of a domain: `[min, max]` (inclusive), each bound possibly
/// infinite and possibly implicit, and a label (`""`: none).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Interval {
    pub min: i64,
    pub max: i64,
    pub implicit_lower: bool,
    pub implicit_upper: bool,
    pub label: String,
}

impl Interval {
    /// An interval, checked: bounds within `[-INF, INF]`, at most one below
    /// the lower bound the upper (empty).
    pub fn new(
        min: i64,
        max: i64,
        implicit_lower: bool,
        implicit_upper: bool,
        label: String,
    ) -> Result<Interval> {
        if !(-INF..INF).contains(&min) || !(-INF..=INF).contains(&max) || max < min - 1 {
            return Err(Error::spec(format!(
                "[{min}, {max}] is not an interval of indices in [-{INF}, {INF}]"
            )));
        }
        Ok(Interval {
            min,
            max,
            implicit_lower,
            implicit_upper,
            label,
        })
    }

    pub fn finite(&self) -> bool {
        self.min != -INF && self.max != INF
    }

    /// The number of indices, for a finite interval.
    pub fn size(&self) -> Result<i64> {
        if !self.finite() {
            return Err(Error::spec(format!(
                "dimension {self} is unbounded: it has no size"
            )));
        }
        Ok((self.max - self.min + 1).max(0))
    }

    /// The interval an index must lie in: implicit bounds do not constrain.
    pub fn constraint(&self) -> (i64, i64) {
        (
            if self.implicit_lower { -INF } else { self.min },
            if self.implicit_upper { INF } else { self.max },
        )
    }

    /// Moved by `delta` (infinite bounds stay).
    pub fn shifted(&self, delta: i64) -> Result<Interval> {
        let shift = |v: i64| {
            if v.abs() == INF {
                Ok(v)
            } else {
                v.checked_add(delta)
                    .filter(|v| v.abs() < INF)
                    .ok_or_else(overflow)
            }
        };
        Ok(Interval {
            min: shift(self.min)?,
            max: shift(self.max)?,
            ..self.clone()
        })
    }

    /// The indices `i` with `stride * i` in this interval (TensorStore's
    /// `GetAffineTransformDomain` with offset 0).
    fn divided(&self, stride: i64) -> Interval {
        let (lo, hi) = (self.min, self.max);
        if stride > 0 {
            return Interval {
                min: if lo == -INF {
                    -INF
                } else {
                    ceil_div(lo, stride)
                },
                max: if hi == INF {
                    INF
                } else {
                    floor_div(hi, stride)
                },
                ..self.clone()
            };
        }
        let s = -stride;
        Interval {
            min: if hi == INF { -INF } else { ceil_div(-hi, s) },
            max: if lo == -INF { INF } else { floor_div(-lo, s) },
            implicit_lower: self.implicit_upper,
            implicit_upper: self.implicit_lower,
            label: self.label.clone(),
        }
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.label.is_empty() {
            write!(f, "\"{}\": ", self.label)?;
        }
        let star = |implicit: bool| if implicit { "*" } else { "" };
        if self.min == -INF {
            write!(f, "(-inf{}, ", star(self.implicit_lower))?;
        } else {
            write!(f, "[{}{}, ", self.min, star(self.implicit_lower))?;
        }
        if self.max == INF {
            write!(f, "+inf{})", star(self.implicit_upper))
        } else {
            write!(f, "{}{})", self.max + 1, star(self.implicit_upper))
        }
    }
}

/// The member `key` of a domain's JSON, a list of `rank` elements (the first
/// list given sets the rank).
fn take<'v>(
    obj: &'v Map<String, Value>,
    key: &str,
    at: &str,
    rank: &mut Option<usize>,
) -> Result<Option<&'v Vec<Value>>> {
    let Some(v) = obj.get(key) else {
        return Ok(None);
    };
    let items = array(v, &member(at, key))?;
    match *rank {
        None => *rank = Some(items.len()),
        Some(r) if r != items.len() => {
            return Err(fail(
                &member(at, key),
                format!("has {} elements, the rank is {r}", items.len()),
            ))
        }
        _ => {}
    }
    Ok(Some(items))
}

/// An upper bound (inclusive) from the member `kind` (`shape`,
/// `inclusive_max` or `exclusive_max`) at `at`, over the lower bound `lo`.
fn upper_bound(kind: &str, item: &Value, lo: i64, at: &str) -> Result<(i64, bool)> {
    match kind {
        "shape" => {
            let (size, implicit) = bound(item, at, (INF, "+inf"))?;
            if size < 0 {
                return Err(fail(at, format!("a size must not be negative, got {size}")));
            }
            if lo == -INF {
                return Err(fail(at, "a size needs a finite lower bound"));
            }
            let hi = if size == INF { INF } else { lo + size - 1 };
            if hi >= INF {
                return Err(fail(at, format!("{lo} + {size} is out of range")));
            }
            Ok((hi, implicit))
        }
        "exclusive_max" => {
            let (v, implicit) = bound(item, at, (INF + 1, "+inf"))?;
            Ok((if v == INF + 1 { INF } else { v - 1 }, implicit))
        }
        _ => bound(item, at, (INF, "+inf")),
    }
}

const DOMAIN_KEYS: [&str; 6] = [
    "rank",
    "inclusive_min",
    "shape",
    "inclusive_max",
    "exclusive_max",
    "labels",
];

/// A box of integer coordinates with optional labels.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Domain {
    pub dims: Vec<Interval>,
}

fn check_labels(labels: &[&str], at: &str) -> Result<()> {
    let named: Vec<&str> = labels.iter().copied().filter(|l| !l.is_empty()).collect();
    let unique: std::collections::HashSet<&str> = named.iter().copied().collect();
    if unique.len() != named.len() {
        return Err(fail(
            at,
            format!("dimension labels {labels:?} are not unique"),
        ));
    }
    Ok(())
}

impl Domain {
    pub fn new(dims: Vec<Interval>) -> Result<Domain> {
        check_labels(
            &dims.iter().map(|d| d.label.as_str()).collect::<Vec<_>>(),
            "labels",
        )?;
        Ok(Domain { dims })
    }

    /// `[0, shape)` in each dimension.
    pub fn from_shape(shape: &[i64], implicit_upper: bool, labels: &[String]) -> Result<Domain> {
        if let Some(n) = shape.iter().find(|n| !(0..INF).contains(*n)) {
            return Err(Error::spec(format!("{n} is not a size of a dimension")));
        }
        if !labels.is_empty() && labels.len() != shape.len() {
            return Err(Error::spec(format!(
                "{} labels for {} dimensions",
                labels.len(),
                shape.len()
            )));
        }
        let dims = shape.iter().enumerate().map(|(i, &n)| Interval {
            min: 0,
            max: n - 1,
            implicit_lower: false,
            implicit_upper,
            label: labels.get(i).cloned().unwrap_or_default(),
        });
        Domain::new(dims.collect())
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The domain both describe (TensorStore's `MergeIndexDomains`): an
    /// infinite implicit bound takes the other's; any other pair of bounds
    /// must be equal, and labels too where both have one.
    pub fn merge(&self, other: &Domain, at: &str) -> Result<Domain> {
        if self.rank() != other.rank() {
            return Err(fail(
                at,
                format!(
                    "rank {} of {self} does not match rank {} of {other}",
                    self.rank(),
                    other.rank()
                ),
            ));
        }
        let mismatch = |i: usize, what: &str| {
            fail(
                at,
                format!("cannot merge {self} with {other}: dimension {i} {what} do not match"),
            )
        };
        let pick = |x: (i64, bool), y: (i64, bool), inf: i64, i: usize, what: &str| {
            if x.1 && x.0 == inf {
                Ok(y)
            } else if y.1 && y.0 == inf {
                Ok(x)
            } else if x.0 != y.0 {
                Err(mismatch(i, what))
            } else {
                Ok((x.0, x.1 && y.1))
            }
        };
        let mut dims = Vec::with_capacity(self.rank());
        for (i, (x, y)) in self.dims.iter().zip(&other.dims).enumerate() {
            if !x.label.is_empty() && !y.label.is_empty() && x.label != y.label {
                return Err(mismatch(i, "labels"));
            }
            let lo = pick(
                (x.min, x.implicit_lower),
                (y.min, y.implicit_lower),
                -INF,
                i,
                "lower bounds",
            )?;
            let hi = pick(
                (x.max, x.implicit_upper),
                (y.max, y.implicit_upper),
                INF,
                i,
                "upper bounds",
            )?;
            let label = if x.label.is_empty() {
                &y.label
            } else {
                &x.label
            };
            dims.push(Interval {
                min: lo.0,
                max: hi.0,
                implicit_lower: lo.1,
                implicit_upper: hi.1,
                label: label.clone(),
            });
        }
        Domain::new(dims)
    }

    /// Parse an `IndexDomain` (`prefix` `""`) or the input domain members of
    /// an `IndexTransform` (`prefix` `"input_"`).
    pub fn from_json(value: &Value, at: &str, prefix: &str) -> Result<Domain> {
        let obj = object(value, at)?;
        let key = |k: &str| format!("{prefix}{k}");
        if !DOMAIN_KEYS.iter().any(|k| obj.contains_key(&key(k))) {
            let keys: Vec<String> = DOMAIN_KEYS.iter().map(|k| key(k)).collect();
            return Err(fail(
                at,
                format!("expected at least one of the members {keys:?}"),
            ));
        }
        let rank = match obj.get(&key("rank")) {
            Some(v) => Some(integer(v, &member(at, &key("rank")), 0, 32)? as usize),
            None => None,
        };
        let uppers: Vec<&str> = ["shape", "inclusive_max", "exclusive_max"]
            .into_iter()
            .filter(|k| obj.contains_key(&key(k)))
            .collect();
        if uppers.len() > 1 {
            let names: Vec<String> = uppers.iter().map(|k| key(k)).collect();
            return Err(fail(at, format!("give at most one of {names:?}")));
        }
        let mut rank = rank;
        let lower = take(obj, &key("inclusive_min"), at, &mut rank)?;
        let upper_kind = uppers.first().copied();
        let upper = match upper_kind {
            Some(k) => take(obj, &key(k), at, &mut rank)?,
            None => None,
        };
        let labels = take(obj, &key("labels"), at, &mut rank)?;
        let rank = rank.unwrap_or(0);
        let at_item = |name: &str, i: usize| format!("{}[{i}]", member(at, &key(name)));
        let mut dims = Vec::with_capacity(rank);
        for i in 0..rank {
            let (lo, ilo) = match (lower, upper_kind) {
                (Some(items), _) => bound(&items[i], &at_item("inclusive_min", i), (-INF, "-inf"))?,
                (None, Some("shape")) => (0, false),
                _ => (-INF, true),
            };
            let (hi, ihi) = match (upper, upper_kind) {
                (Some(items), Some(kind)) => upper_bound(kind, &items[i], lo, &at_item(kind, i))?,
                _ => (INF, true),
            };
            let label = match labels {
                Some(items) => items[i]
                    .as_str()
                    .ok_or_else(|| {
                        fail(
                            &at_item("labels", i),
                            format!("expected a string, got {}", items[i]),
                        )
                    })?
                    .to_string(),
                None => String::new(),
            };
            if hi < lo - 1 {
                return Err(fail(
                    at,
                    format!(
                        "dimension {i}: upper bound {} is below lower bound {lo}",
                        hi + 1
                    ),
                ));
            }
            dims.push(Interval {
                min: lo,
                max: hi,
                implicit_lower: ilo,
                implicit_upper: ihi,
                label,
            });
        }
        let names: Vec<&str> = dims.iter().map(|d| d.label.as_str()).collect();
        check_labels(&names, &member(at, &key("labels")))?;
        Ok(Domain { dims })
    }

    pub fn to_json(&self, prefix: &str) -> Map<String, Value> {
        let mut out = Map::new();
        let d = &self.dims;
        if !d.iter().all(|d| d.implicit_lower && d.min == -INF) {
            let v = d
                .iter()
                .map(|d| bound_json(d.min, d.implicit_lower, -INF, "-inf"));
            out.insert(format!("{prefix}inclusive_min"), v.collect());
        }
        if !d.iter().all(|d| d.implicit_upper && d.max == INF) {
            let v = d
                .iter()
                .map(|d| bound_json(d.max + 1, d.implicit_upper, INF + 1, "+inf"));
            out.insert(format!("{prefix}exclusive_max"), v.collect());
        }
        if d.iter().any(|d| !d.label.is_empty()) {
            let v = d.iter().map(|d| json!(d.label));
            out.insert(format!("{prefix}labels"), v.collect());
        }
        if out.is_empty() {
            out.insert(format!("{prefix}rank"), json!(self.rank()));
        }
        out
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.dims.iter().map(ToString::to_string).collect();
        write!(f, "{{ {} }}", dims.join(", "))
    }
}

// ---------------------------------------------------------------------------
// Transforms
// ---------------------------------------------------------------------------

/// One NumPy-style index term, in domain coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    NewAxis,
    Ellipsis,
    Index(i64),
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
    },
}

/// A map from an input domain to array coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexTransform {
    pub domain: Domain,
    pub maps: Vec<OutputMap>,
}

fn unit(dim: usize) -> OutputMap {
    OutputMap::Dim {
        offset: 0,
        stride: 1,
        dim,
    }
}

impl IndexTransform {
    pub fn identity(domain: Domain) -> IndexTransform {
        let maps = (0..domain.rank()).map(unit).collect();
        IndexTransform { domain, maps }
    }

    /// A transform from `domain` with `maps`, checked: input dimensions in
    /// range, index arrays of the input rank that broadcast over the domain.
    pub fn new(domain: Domain, maps: Vec<OutputMap>) -> Result<IndexTransform> {
        for (j, m) in maps.iter().enumerate() {
            check_map(m, &domain, &format!("output[{j}]"))?;
        }
        Ok(IndexTransform { domain, maps })
    }

    pub fn input_rank(&self) -> usize {
        self.domain.rank()
    }

    pub fn is_identity_maps(&self) -> bool {
        self.maps.len() == self.input_rank()
            && self.maps.iter().enumerate().all(|(i, m)| *m == unit(i))
    }

    pub fn from_json(value: &Value, at: &str) -> Result<IndexTransform> {
        let obj = object(value, at)?;
        let mut allowed: Vec<String> = DOMAIN_KEYS.iter().map(|k| format!("input_{k}")).collect();
        allowed.push("output".into());
        check_members(obj, &allowed, at)?;
        let mut input = obj.clone();
        let output = input.remove("output");
        let domain = Domain::from_json(&Value::Object(input), at, "input_")?;
        let Some(output) = output else {
            return Ok(IndexTransform::identity(domain));
        };
        let at_output = member(at, "output");
        let maps = array(&output, &at_output)?
            .iter()
            .enumerate()
            .map(|(j, v)| output_map_from_json(v, &format!("{at_output}[{j}]"), &domain))
            .collect::<Result<Vec<_>>>()?;
        Ok(IndexTransform { domain, maps })
    }

    pub fn to_json(&self) -> Map<String, Value> {
        let mut out = self.domain.to_json("input_");
        if !self.is_identity_maps() {
            out.insert(
                "output".into(),
                self.maps.iter().map(output_map_json).collect(),
            );
        }
        out
    }

    /// `self` applied after `inner`: `inner`'s outputs are `self`'s inputs.
    pub fn compose(&self, inner: &IndexTransform) -> Result<IndexTransform> {
        if inner.maps.len() != self.input_rank() {
            return Err(Error::spec(format!(
                "cannot compose: the inner transform has output rank {}, the outer one input \
                 rank {}",
                inner.maps.len(),
                self.input_rank()
            )));
        }
        let mut maps = Vec::with_capacity(self.maps.len());
        for m in &self.maps {
            maps.push(match m {
                OutputMap::Constant(_) => m.clone(),
                &OutputMap::Dim {
                    offset,
                    stride,
                    dim,
                } => match &inner.maps[dim] {
                    &OutputMap::Constant(o) => OutputMap::Constant(affine(offset, stride, o)?),
                    &OutputMap::Dim {
                        offset: o,
                        stride: s,
                        dim: d,
                    } => OutputMap::Dim {
                        offset: affine(offset, stride, o)?,
                        stride: stride.checked_mul(s).ok_or_else(overflow)?,
                        dim: d,
                    },
                    OutputMap::Array {
                        offset: o,
                        stride: s,
                        shape,
                        index,
                    } => array_map(
                        affine(offset, stride, *o)?,
                        stride.checked_mul(*s).ok_or_else(overflow)?,
                        shape.clone(),
                        index.clone(),
                    )?,
                },
                OutputMap::Array {
                    offset,
                    stride,
                    shape,
                    index,
                } => {
                    let (shape, index) = self.gather(shape, index, inner)?;
                    array_map(*offset, *stride, shape, index)?
                }
            });
        }
        Ok(IndexTransform {
            domain: inner.domain.clone(),
            maps,
        })
    }

    /// An index array over this transform's input domain, evaluated at every
    /// input position of `inner`: its shape (an extent per input dimension of
    /// `inner`, 1 where it does not vary) and values in C order.
    fn gather(
        &self,
        shape: &[usize],
        index: &[i64],
        inner: &IndexTransform,
    ) -> Result<(Vec<usize>, Vec<i64>)> {
        let rank = inner.input_rank();
        let varying: Vec<usize> = (0..shape.len()).filter(|&k| shape[k] != 1).collect();
        let mut out_shape = vec![1usize; rank];
        for &k in &varying {
            let along: Vec<usize> = match &inner.maps[k] {
                OutputMap::Constant(_) => vec![],
                OutputMap::Dim { dim, .. } => vec![*dim],
                OutputMap::Array { shape, .. } => (0..rank).filter(|&i| shape[i] != 1).collect(),
            };
            for i in along {
                let n = inner.domain.dims[i].size().map_err(|_| {
                    Error::index(format!(
                        "an index array composed over the unbounded dimension {} of {}",
                        i, inner.domain
                    ))
                })?;
                out_shape[i] = n as usize;
            }
        }
        let total = out_shape.iter().try_fold(1usize, |n, &x| n.checked_mul(x));
        let total =
            total.ok_or_else(|| Error::memory("an index array overflows the address space"))?;
        let origin: Vec<i64> = inner.domain.dims.iter().map(|d| d.min).collect();
        let mut strides = vec![0usize; shape.len()];
        let mut step = 1;
        for k in (0..shape.len()).rev() {
            strides[k] = if shape[k] == 1 { 0 } else { step };
            step *= shape[k];
        }
        let mut values = crate::alloc::with_capacity(total)?;
        let mut pos = vec![0usize; rank];
        for _ in 0..total {
            let mut at = 0usize;
            for &k in &varying {
                let x = inner.maps[k].at(&origin, &pos).ok_or_else(overflow)?;
                let i = x
                    .checked_sub(self.domain.dims[k].min)
                    .and_then(|i| usize::try_from(i).ok())
                    .filter(|&i| i < shape[k])
                    .ok_or_else(|| {
                        Error::index(format!(
                            "index {x} is outside the domain {} of input dimension {k} of an \
                             index array",
                            self.domain.dims[k]
                        ))
                    })?;
                at += i * strides[k];
            }
            values.push(index[at]);
            for i in (0..rank).rev() {
                pos[i] += 1;
                if pos[i] < out_shape[i] {
                    break;
                }
                pos[i] = 0;
            }
        }
        Ok((out_shape, values))
    }

    /// For each input dimension, the array dimension it maps to with a unit
    /// stride, when the transform is such a one-to-one map (a permutation plus
    /// translations).
    pub fn permutation(&self) -> Option<Vec<usize>> {
        if self.maps.len() != self.input_rank() {
            return None;
        }
        let mut perm = vec![None; self.input_rank()];
        for (j, m) in self.maps.iter().enumerate() {
            match *m {
                OutputMap::Dim { stride: 1, dim, .. } if perm[dim].is_none() => perm[dim] = Some(j),
                _ => return None,
            }
        }
        perm.into_iter().collect()
    }

    /// The domain with its implicit bounds resolved against an array of
    /// `shape` (each takes the tightest bound the array dimensions it maps to
    /// allow): `[lo, hi]` per input dimension, all finite.
    pub fn bounds(&self, shape: &[u64]) -> Result<Vec<(i64, i64)>> {
        let mut out = Vec::with_capacity(self.input_rank());
        for (k, d) in self.domain.dims.iter().enumerate() {
            let found: Vec<(i64, i64)> = self
                .maps
                .iter()
                .zip(shape)
                .filter_map(|(m, &n)| match *m {
                    OutputMap::Dim {
                        offset,
                        stride,
                        dim,
                    } if dim == k && stride != 0 => Some(affine_bounds(offset, stride, n as i64)),
                    _ => None,
                })
                .collect();
            let mut lo = d.min;
            let mut hi = d.max;
            if d.implicit_lower && !found.is_empty() {
                lo = found.iter().map(|f| f.0).max().unwrap_or(lo);
            }
            if d.implicit_upper && !found.is_empty() {
                hi = found.iter().map(|f| f.1).min().unwrap_or(hi);
            }
            if lo == -INF || hi == INF {
                return Err(Error::index(format!(
                    "dimension {k} of the domain {} is unbounded",
                    self.domain
                )));
            }
            out.push((lo, hi));
        }
        let arrays = self
            .maps
            .iter()
            .any(|m| matches!(m, OutputMap::Array { .. }));
        if arrays {
            for (k, d) in self.domain.dims.iter().enumerate() {
                if (d.min, d.max) != out[k] {
                    return Err(Error::index(format!(
                        "a transform with index arrays needs explicit bounds: dimension {k} is {d}"
                    )));
                }
            }
        }
        Ok(out)
    }

    /// The selection of an array of `shape` this transform stands for, over
    /// its domain resolved against the shape (see [`transform`]).
    pub fn selection(&self, shape: &[u64], steps: Option<&[usize]>) -> Result<Normalized> {
        let bounds = self.bounds(shape)?;
        let origin: Vec<i64> = bounds.iter().map(|b| b.0).collect();
        let input: Vec<usize> = bounds
            .iter()
            .map(|&(lo, hi)| (hi - lo + 1).max(0) as usize)
            .collect();
        transform(shape, &origin, &input, &self.maps, steps)
    }

    /// The lowest and highest coordinate of each array dimension the
    /// transform selects in an array of `shape` (its resolved domain not
    /// empty).
    pub fn output_ranges(&self, shape: &[u64]) -> Result<Vec<(i64, i64)>> {
        let bounds = self.bounds(shape)?;
        let origin: Vec<i64> = bounds.iter().map(|b| b.0).collect();
        let input: Vec<usize> = bounds
            .iter()
            .map(|&(lo, hi)| (hi - lo + 1).max(0) as usize)
            .collect();
        if input.contains(&0) {
            return Err(Error::index("the view is empty: it selects no coordinates"));
        }
        let ranges = self.maps.iter().enumerate();
        ranges
            .map(|(j, m)| output_range(m, &origin, &input, j))
            .collect()
    }

    /// The transform from `domain` to this one's input through `inner`.
    fn then(&self, domain: Vec<Interval>, inner: Vec<OutputMap>) -> Result<IndexTransform> {
        self.compose(&IndexTransform {
            domain: Domain::new(domain)?,
            maps: inner,
        })
    }

    /// NumPy-style index `terms` applied to the `selected` input dimensions,
    /// in order; unselected dimensions keep their place. New axes only where
    /// `selected` is every dimension in order (`allow_newaxis`). Returns the
    /// transform and the selected dimensions that remain, at their new
    /// positions.
    pub fn index(
        &self,
        terms: &[Term],
        selected: &[usize],
        allow_newaxis: bool,
    ) -> Result<(IndexTransform, Vec<usize>)> {
        let old = &self.domain.dims;
        let mut replaced: Vec<Option<Replacement>> = vec![None; old.len()];
        // old dimension, or None for a new axis, in the new order
        let mut order: Vec<Option<usize>> = Vec::new();
        let mut pos = 0;
        for t in expand_terms(terms, selected.len())? {
            if t == Term::NewAxis {
                if !allow_newaxis {
                    return Err(Error::index(
                        "newaxis is not supported in a dimension expression",
                    ));
                }
                order.push(None);
                continue;
            }
            let k = selected[pos];
            pos += 1;
            replaced[k] = Some(Replacement::of(&old[k], k, &t)?);
            order.push(Some(k));
        }
        if !allow_newaxis {
            order = (0..old.len()).map(Some).collect();
        }
        let mut dims = Vec::new();
        let mut inner = vec![OutputMap::Constant(0); old.len()];
        let mut position = vec![None; old.len()];
        for j in order {
            let Some(j) = j else {
                dims.push(new_axis());
                continue;
            };
            match &replaced[j] {
                Some(Replacement::Fixed(i)) => inner[j] = OutputMap::Constant(*i),
                kept => {
                    let (dim, offset, stride) = match kept {
                        Some(Replacement::Sliced(new, offset, stride)) => {
                            (new.clone(), *offset, *stride)
                        }
                        _ => (old[j].clone(), 0, 1),
                    };
                    position[j] = Some(dims.len());
                    inner[j] = OutputMap::Dim {
                        offset,
                        stride,
                        dim: dims.len(),
                    };
                    dims.push(dim);
                }
            }
        }
        let kept = selected.iter().filter_map(|&k| position[k]).collect();
        Ok((self.then(dims, inner)?, kept))
    }

    /// Translate the `dims` to start at `values` (`to`), or by `values`;
    /// `None` leaves a dimension as it is.
    pub fn translate(
        &self,
        dims: &[usize],
        values: &[Option<i64>],
        to: bool,
    ) -> Result<IndexTransform> {
        let mut new = self.domain.dims.clone();
        let mut inner: Vec<OutputMap> = (0..new.len()).map(unit).collect();
        for (&k, v) in dims.iter().zip(values) {
            let Some(v) = *v else { continue };
            if v.unsigned_abs() >= INF as u64 {
                return Err(Error::index(format!("{v} is out of range")));
            }
            let d = &self.domain.dims[k];
            let delta = if to {
                if d.min == -INF {
                    return Err(Error::index(format!(
                        "translate_to: dimension {k} {d} is not bounded below"
                    )));
                }
                v.checked_sub(d.min).ok_or_else(overflow)?
            } else {
                v
            };
            new[k] = d.shifted(delta)?;
            inner[k] = OutputMap::Dim {
                offset: delta.checked_neg().ok_or_else(overflow)?,
                stride: 1,
                dim: k,
            };
        }
        self.then(new, inner)
    }

    pub fn label(&self, dims: &[usize], names: &[String]) -> Result<IndexTransform> {
        let mut new = self.domain.dims.clone();
        for (&k, name) in dims.iter().zip(names) {
            new[k].label = name.clone();
        }
        let domain = Domain::new(new).map_err(|e| Error::index(e.message))?;
        Ok(IndexTransform {
            domain,
            maps: self.maps.clone(),
        })
    }

    pub fn stride(&self, dims: &[usize], strides: &[i64]) -> Result<IndexTransform> {
        let mut new = self.domain.dims.clone();
        let mut inner: Vec<OutputMap> = (0..new.len()).map(unit).collect();
        for (&k, &s) in dims.iter().zip(strides) {
            if s == 0 {
                return Err(Error::index("stride must not be zero"));
            }
            if s.unsigned_abs() >= INF as u64 {
                return Err(Error::index(format!("stride {s} is out of range")));
            }
            new[k] = new[k].divided(s);
            inner[k] = OutputMap::Dim {
                offset: 0,
                stride: s,
                dim: k,
            };
        }
        self.then(new, inner)
    }

    /// New input dimension `i` is old input dimension `perm[i]`.
    pub fn reorder(&self, perm: &[usize]) -> Result<IndexTransform> {
        let rank = self.input_rank();
        let mut sorted = perm.to_vec();
        sorted.sort_unstable();
        if sorted != (0..rank).collect::<Vec<_>>() {
            return Err(Error::index(format!(
                "transpose: {perm:?} is not a permutation of the dimensions"
            )));
        }
        let dims = perm.iter().map(|&p| self.domain.dims[p].clone()).collect();
        let mut inner = vec![OutputMap::Constant(0); rank];
        for (i, &p) in perm.iter().enumerate() {
            inner[p] = unit(i);
        }
        self.then(dims, inner)
    }

    /// Move the `dims` to the positions `targets` (negative: from the end),
    /// the others keeping their order (TensorStore's `transpose[...]` of a
    /// dimension expression). Returns the targets, normalized.
    pub fn move_dims(
        &self,
        dims: &[usize],
        targets: &[i64],
    ) -> Result<(IndexTransform, Vec<usize>)> {
        let rank = self.input_rank() as i64;
        let tgt: Vec<i64> = targets
            .iter()
            .map(|&t| if t < 0 { t + rank } else { t })
            .collect();
        let mut unique = tgt.clone();
        unique.sort_unstable();
        unique.dedup();
        if tgt.len() != dims.len()
            || unique.len() != tgt.len()
            || tgt.iter().any(|t| !(0..rank).contains(t))
        {
            return Err(Error::index(format!(
                "transpose: invalid target dimensions {tgt:?} for rank {rank}"
            )));
        }
        let tgt: Vec<usize> = tgt.into_iter().map(|t| t as usize).collect();
        let mut perm = vec![None; rank as usize];
        for (&k, &t) in dims.iter().zip(&tgt) {
            perm[t] = Some(k);
        }
        let mut rest = (0..rank as usize).filter(|k| !dims.contains(k));
        let order: Vec<usize> = perm
            .into_iter()
            .map(|p| p.or_else(|| rest.next()).unwrap_or(0))
            .collect();
        Ok((self.reorder(&order)?, tgt))
    }
}

/// What indexing does to one selected dimension: a slice (the new dimension,
/// and `old = offset + stride * new`) or one index.
#[derive(Debug, Clone)]
enum Replacement {
    Sliced(Interval, i64, i64),
    Fixed(i64),
}

impl Replacement {
    /// The term `t` (a slice or an index) applied to dimension `k`, `d`.
    fn of(d: &Interval, k: usize, t: &Term) -> Result<Replacement> {
        match *t {
            Term::Slice { start, stop, step } => {
                let (new, offset) = strided_slice(d, start, stop, step)?;
                Ok(Replacement::Sliced(new, offset, step))
            }
            Term::Index(i) => {
                let (lo, hi) = d.constraint();
                if !(lo..=hi).contains(&i) {
                    return Err(Error::index(format!(
                        "index {i} is outside the bounds {d} of dimension {k}"
                    )));
                }
                Ok(Replacement::Fixed(i))
            }
            Term::NewAxis | Term::Ellipsis => {
                Err(Error::index(format!("{t:?} does not index a dimension")))
            }
        }
    }
}

/// A new axis: `[0, 1)`, both bounds implicit.
fn new_axis() -> Interval {
    Interval {
        min: 0,
        max: 0,
        implicit_lower: true,
        implicit_upper: true,
        label: String::new(),
    }
}

/// `terms` checked (one ellipsis at most, indices in range, no more than
/// `n` that consume a dimension) with the ellipsis, or the end, filled with
/// full slices up to `n` consuming terms.
fn expand_terms(terms: &[Term], n: usize) -> Result<Vec<Term>> {
    if terms.iter().filter(|t| **t == Term::Ellipsis).count() > 1 {
        return Err(Error::index(
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let bounded = |v: &Option<i64>| v.is_none_or(|v| (-INF..=INF).contains(&v));
    for t in terms {
        let fits = match t {
            Term::Index(i) => (-INF..=INF).contains(i),
            Term::Slice { start, stop, step } => {
                bounded(start) && bounded(stop) && step.unsigned_abs() < INF as u64
            }
            _ => true,
        };
        if !fits {
            return Err(Error::index(format!(
                "{t:?}: indices lie in [-{INF}, {INF}]"
            )));
        }
    }
    let consuming = terms
        .iter()
        .filter(|t| !matches!(t, Term::NewAxis | Term::Ellipsis))
        .count();
    if consuming > n {
        return Err(Error::index(format!(
            "too many indices: {consuming} given for {n} dimension(s)"
        )));
    }
    let full = Term::Slice {
        start: None,
        stop: None,
        step: 1,
    };
    let fill = vec![full; n - consuming];
    Ok(match terms.iter().position(|t| *t == Term::Ellipsis) {
        Some(i) => [&terms[..i], &fill[..], &terms[i + 1..]].concat(),
        None => [terms, &fill[..]].concat(),
    })
}

/// An index array map made by composing: a constant where the array holds one
/// value, as TensorStore makes it.
fn array_map(offset: i64, stride: i64, shape: Vec<usize>, index: Vec<i64>) -> Result<OutputMap> {
    Ok(match index[..] {
        [one] => OutputMap::Constant(affine(offset, stride, one)?),
        _ => OutputMap::Array {
            offset,
            stride,
            shape,
            index,
        },
    })
}

/// The inputs `x` with `offset + stride * x` in `[0, n)`: (lowest, highest).
fn affine_bounds(offset: i64, stride: i64, n: i64) -> (i64, i64) {
    let (mut lo, mut hi) = (-offset, n - 1 - offset);
    if stride < 0 {
        std::mem::swap(&mut lo, &mut hi);
    }
    (ceil_div(lo, stride), floor_div(hi, stride))
}

/// TensorStore's half-open strided slice of `d`: the new dimension and the
/// offset with `old = offset + step * new`.
fn strided_slice(
    d: &Interval,
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
) -> Result<(Interval, i64)> {
    if step == 0 {
        return Err(Error::index("slice step must not be zero"));
    }
    let (lo_c, hi_c) = d.constraint();
    // a bound given is explicit; a bound left out is the dimension's own
    let mut ilo = d.implicit_lower && start.is_none();
    let mut ihi = d.implicit_upper && stop.is_none();
    let (first, last) = if step > 0 {
        (d.min, d.max)
    } else {
        (d.max, d.min)
    };
    let start = start.unwrap_or(first);
    let inclusive_stop = stop.map_or(last, |s| s - step.signum());
    if step.abs() != 1 && start.abs() == INF {
        return Err(Error::index(format!(
            "slicing with step {step} needs a finite start index"
        )));
    }
    let (amin, amax) = if step > 0 {
        (start, inclusive_stop)
    } else {
        std::mem::swap(&mut ilo, &mut ihi);
        (inclusive_stop, start)
    };
    let text = |v: Option<i64>| v.map_or("None".to_string(), |v| v.to_string());
    if amax < amin - 1 {
        return Err(Error::index(format!(
            "slice [{start}:{}:{step}] of {d} has a negative size",
            text(stop)
        )));
    }
    if amax >= amin && (amin < lo_c || amax > hi_c) {
        return Err(Error::index(format!(
            "slice interval [{amin}, {}) is not contained within {d}",
            amax + 1
        )));
    }
    // C++ division truncates; an infinite start stays infinite
    let new_start = if start.abs() != INF {
        start / step
    } else {
        floor_div(start, step)
    };
    let new_hi = if inclusive_stop.abs() == INF {
        INF
    } else {
        new_start + ceil_div(amax - amin + 1, step.abs()) - 1
    };
    let new = Interval {
        min: new_start,
        max: new_hi,
        implicit_lower: ilo,
        implicit_upper: ihi,
        label: d.label.clone(),
    };
    let offset = new_start
        .checked_mul(step)
        .and_then(|v| start.checked_sub(v))
        .ok_or_else(overflow)?;
    Ok((new, offset))
}

/// Check one output map against its input domain.
fn check_map(m: &OutputMap, domain: &Domain, at: &str) -> Result<()> {
    let (offset, stride) = match m {
        OutputMap::Constant(o) => (*o, 1),
        OutputMap::Dim { offset, stride, .. } | OutputMap::Array { offset, stride, .. } => {
            (*offset, *stride)
        }
    };
    if offset.unsigned_abs() >= INF as u64 || stride.unsigned_abs() >= INF as u64 {
        return Err(fail(
            at,
            format!("offset {offset} and stride {stride} must lie in (-{INF}, {INF})"),
        ));
    }
    match m {
        OutputMap::Constant(_) => Ok(()),
        OutputMap::Dim { dim, .. } if *dim >= domain.rank() => Err(fail(
            &member(at, "input_dimension"),
            format!(
                "expected an integer in the range [0, {}], got {dim}",
                domain.rank() as i64 - 1
            ),
        )),
        OutputMap::Dim { .. } => Ok(()),
        OutputMap::Array { shape, index, .. } => {
            let at = member(at, "index_array");
            if shape.len() != domain.rank() {
                return Err(fail(
                    &at,
                    format!(
                        "has rank {}, the input rank is {}",
                        shape.len(),
                        domain.rank()
                    ),
                ));
            }
            for (i, (&n, d)) in shape.iter().zip(&domain.dims).enumerate() {
                if n != 1 && (!d.finite() || d.size().ok() != Some(n as i64)) {
                    return Err(fail(
                        &at,
                        format!("dimension {i} has size {n}, the input domain has {d}"),
                    ));
                }
            }
            if shape.iter().product::<usize>() != index.len() {
                return Err(fail(&at, "its values do not fill its shape"));
            }
            Ok(())
        }
    }
}

/// A nested JSON array of integers: its shape and values in C order.
fn nested_ints(value: &Value, at: &str) -> Result<(Vec<usize>, Vec<i64>)> {
    let bad = || fail(at, "expected a nested array of integers");
    let mut shape = Vec::new();
    let mut probe = value;
    while let Value::Array(items) = probe {
        shape.push(items.len());
        match items.first() {
            Some(first) => probe = first,
            None => break,
        }
    }
    let mut values = Vec::new();
    fn walk(v: &Value, shape: &[usize], out: &mut Vec<i64>) -> bool {
        match (v, shape.split_first()) {
            (Value::Array(items), Some((&n, rest))) => {
                items.len() == n && items.iter().all(|x| walk(x, rest, out))
            }
            (v, None) => match v.as_i64() {
                Some(i) => {
                    out.push(i);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }
    if !walk(value, &shape, &mut values) {
        return Err(bad());
    }
    Ok((shape, values))
}

fn output_map_from_json(value: &Value, at: &str, domain: &Domain) -> Result<OutputMap> {
    let obj = object(value, at)?;
    let names = ["offset", "stride", "input_dimension", "index_array"];
    check_members(obj, &names.map(String::from), at)?;
    let int = |name: &str, default: i64| match obj.get(name) {
        Some(v) => integer(v, &member(at, name), -INF + 1, INF - 1),
        None => Ok(default),
    };
    let offset = int("offset", 0)?;
    let (by_dim, by_array) = (obj.get("input_dimension"), obj.get("index_array"));
    if by_dim.is_some() && by_array.is_some() {
        return Err(fail(
            at,
            "give at most one of \"input_dimension\" and \"index_array\"",
        ));
    }
    if obj.contains_key("stride") && by_dim.is_none() && by_array.is_none() {
        return Err(fail(
            at,
            "\"stride\" needs \"input_dimension\" or \"index_array\"",
        ));
    }
    let stride = int("stride", 1)?;
    let m = if let Some(v) = by_dim {
        let hi = domain.rank() as i64 - 1;
        let dim = integer(v, &member(at, "input_dimension"), 0, hi)? as usize;
        OutputMap::Dim {
            offset,
            stride,
            dim,
        }
    } else if let Some(v) = by_array {
        let (shape, index) = nested_ints(v, &member(at, "index_array"))?;
        OutputMap::Array {
            offset,
            stride,
            shape,
            index,
        }
    } else {
        OutputMap::Constant(offset)
    };
    check_map(&m, domain, at)?;
    Ok(m)
}

/// An index array's values as nested JSON arrays.
pub fn nested_json(shape: &[usize], values: &[i64]) -> Value {
    match shape.split_first() {
        None => json!(values.first().copied().unwrap_or(0)),
        Some((&n, rest)) => {
            let each: usize = rest.iter().product();
            (0..n)
                .map(|i| nested_json(rest, &values[i * each..(i + 1) * each]))
                .collect()
        }
    }
}

pub fn output_map_json(m: &OutputMap) -> Value {
    let mut out = Map::new();
    let (offset, stride) = match m {
        OutputMap::Constant(o) => (*o, 1),
        OutputMap::Dim { offset, stride, .. } | OutputMap::Array { offset, stride, .. } => {
            (*offset, *stride)
        }
    };
    if offset != 0 {
        out.insert("offset".into(), json!(offset));
    }
    if stride != 1 && !matches!(m, OutputMap::Constant(_)) {
        out.insert("stride".into(), json!(stride));
    }
    match m {
        OutputMap::Constant(_) => {}
        OutputMap::Dim { dim, .. } => {
            out.insert("input_dimension".into(), json!(dim));
        }
        OutputMap::Array { shape, index, .. } => {
            out.insert("index_array".into(), nested_json(shape, index));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domain(shape: &[i64]) -> Domain {
        Domain::from_shape(shape, true, &[]).unwrap()
    }

    fn slice(start: Option<i64>, stop: Option<i64>, step: i64) -> Term {
        Term::Slice { start, stop, step }
    }

    #[test]
    fn json_round_trips() {
        let text = r#"{"input_inclusive_min": [1, ["-inf"]], "input_exclusive_max": [[5], "+inf"],
            "input_labels": ["x", ""],
            "output": [{"offset": 3, "stride": 2, "input_dimension": 1}, {"offset": 7},
                       {"index_array": [[1], [2], [3], [4]], "stride": -1}]}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        let t = IndexTransform::from_json(&value, "transform").unwrap();
        assert_eq!(t.domain.to_string(), "{ \"x\": [1, 5*), (-inf*, +inf) }");
        let back = Value::Object(t.to_json());
        assert_eq!(IndexTransform::from_json(&back, "t").unwrap(), t);
        assert_eq!(
            back["output"][2]["index_array"],
            json!([[1], [2], [3], [4]])
        );
    }

    #[test]
    fn json_errors_name_the_member() {
        let bad = |text: &str| {
            let value: Value = serde_json::from_str(text).unwrap();
            IndexTransform::from_json(&value, "transform")
                .unwrap_err()
                .message
        };
        assert!(
            bad(r#"{"input_shape": [2], "output": [{"input_dimension": 1}]}"#).starts_with(
                "transform.output[0].input_dimension: expected an integer in the range [0, 0]"
            )
        );
        assert!(
            bad(r#"{"input_shape": [2], "output": [{"index_array": [1, 2, 3]}]}"#)
                .contains("dimension 0 has size 3")
        );
        assert!(
            bad(r#"{"input_shape": [2], "output": [{"index_array": [[1], 2]}]}"#)
                .contains("nested array of integers")
        );
        assert!(bad(r#"{"input_shape": [-1]}"#).contains("must not be negative"));
        assert!(bad(r#"{"input_labels": ["a", "a"]}"#).contains("not unique"));
        assert!(bad(r#"{"shape": [1]}"#).contains("unknown member(s) 'shape'"));
    }

    #[test]
    fn slicing_follows_tensorstore() {
        let t = IndexTransform::identity(domain(&[10]));
        let (s, kept) = t.index(&[slice(Some(1), Some(8), 3)], &[0], true).unwrap();
        assert_eq!(kept, vec![0]);
        // 1, 4, 7 -> new coordinates 0, 1, 2 (1 / 3 truncates to 0)
        assert_eq!(s.domain.dims[0].min, 0);
        assert_eq!(s.domain.dims[0].max, 2);
        assert_eq!(
            s.maps,
            vec![OutputMap::Dim {
                offset: 1,
                stride: 3,
                dim: 0
            }]
        );
        let (r, _) = t.index(&[slice(Some(8), Some(1), -3)], &[0], true).unwrap();
        // 8, 5, 2 -> -2, -1, 0 (8 / -3 truncates to -2)
        assert_eq!((r.domain.dims[0].min, r.domain.dims[0].max), (-2, 0));
        let explicit = IndexTransform::identity(Domain::from_shape(&[10], false, &[]).unwrap());
        let e = explicit.index(&[Term::Index(10)], &[0], true).unwrap_err();
        assert!(e.message.contains("outside the bounds"), "{e}");
        // an implicit upper bound does not constrain
        let t = IndexTransform::identity(domain(&[4]));
        assert!(t.index(&[slice(Some(2), Some(9), 1)], &[0], true).is_ok());
    }

    #[test]
    fn index_keeps_the_selected_dimensions_that_remain() {
        let t = IndexTransform::identity(domain(&[4, 5, 6]));
        let (s, kept) = t
            .index(&[Term::Ellipsis, Term::Index(2)], &[0, 2], false)
            .unwrap();
        assert_eq!(kept, vec![0]);
        assert_eq!(s.maps[2], OutputMap::Constant(2));
        let (n, _) = t
            .index(&[Term::NewAxis, Term::Index(1)], &[0, 1, 2], true)
            .unwrap();
        assert_eq!(n.input_rank(), 3);
    }

    #[test]
    fn operations_compose() {
        let t = IndexTransform::identity(domain(&[4, 5]));
        let moved = t.translate(&[0, 1], &[Some(10), None], true).unwrap();
        assert_eq!(moved.domain.dims[0].min, 10);
        assert_eq!(
            moved.maps[0],
            OutputMap::Dim {
                offset: -10,
                stride: 1,
                dim: 0
            }
        );
        let (swapped, tgt) = moved.move_dims(&[1], &[0]).unwrap();
        assert_eq!(tgt, vec![0]);
        assert_eq!(swapped.permutation(), Some(vec![1, 0]));
        let strided = t.stride(&[1], &[-2]).unwrap();
        assert_eq!(
            (strided.domain.dims[1].min, strided.domain.dims[1].max),
            (-2, 0)
        );
        assert!(t.label(&[0, 1], &["a".into(), "a".into()]).is_err());
        assert!(t.reorder(&[0, 0]).is_err());
    }

    #[test]
    fn index_arrays_compose_by_gathering() {
        // outer: input x in [0, 4) -> array index[x]; inner: x = 3 - y, y in [0, 4)
        let outer = IndexTransform::new(
            Domain::from_shape(&[4], false, &[]).unwrap(),
            vec![OutputMap::Array {
                offset: 0,
                stride: 1,
                shape: vec![4],
                index: vec![10, 11, 12, 13],
            }],
        )
        .unwrap();
        let reversed = outer.index(&[slice(None, None, -1)], &[0], true).unwrap().0;
        match &reversed.maps[0] {
            OutputMap::Array { index, .. } => assert_eq!(index, &vec![13, 12, 11, 10]),
            m => panic!("{m:?}"),
        }
        // one value left is a constant, as TensorStore makes it
        let one = outer.index(&[Term::Index(2)], &[0], true).unwrap().0;
        assert_eq!(one.maps[0], OutputMap::Constant(12));
    }

    #[test]
    fn out_of_range_input_is_an_error_not_a_panic() {
        let t = IndexTransform::identity(domain(&[4]));
        assert!(t.index(&[Term::Index(i64::MIN)], &[0], true).is_err());
        let wide = slice(Some(i64::MIN), Some(i64::MAX), i64::MIN);
        assert!(t.index(&[wide], &[0], true).is_err());
        assert!(t.stride(&[0], &[i64::MIN]).is_err());
        assert!(t.translate(&[0], &[Some(i64::MIN)], false).is_err());
        assert!(Domain::from_shape(&[i64::MIN], false, &[]).is_err());
        assert!(Interval::new(5, 2, false, false, String::new()).is_err());
        let huge = OutputMap::Dim {
            offset: i64::MIN,
            stride: 1,
            dim: 0,
        };
        assert!(IndexTransform::new(domain(&[4]), vec![huge]).is_err());
    }

    #[test]
    fn bounds_resolve_implicit_bounds() {
        let t = IndexTransform::identity(domain(&[4, 5]));
        assert_eq!(t.bounds(&[6, 2]).unwrap(), vec![(0, 5), (0, 1)]);
        let unbounded = IndexTransform::identity(Domain {
            dims: vec![Interval {
                min: 0,
                max: INF,
                implicit_lower: false,
                implicit_upper: false,
                label: String::new(),
            }],
        });
        assert!(unbounded.bounds(&[3]).is_err());
    }

    #[test]
    fn merging_domains() {
        let a = domain(&[4]);
        let b = Domain::from_shape(&[4], false, &["x".into()]).unwrap();
        let m = a.merge(&b, "domain").unwrap();
        assert_eq!(m.dims[0].label, "x");
        assert!(!m.dims[0].implicit_upper);
        assert!(a.merge(&domain(&[5]), "domain").is_err());
    }
}
