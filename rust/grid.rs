//! The regular chunk grid and chunk key encodings.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::members::Members;

/// How chunk grid coordinates become store keys (v3 `chunk_key_encoding`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkKeyEncoding {
    /// `c/1/2` (or `c.1.2`); `c` for 0-d arrays.
    Default { separator: char },
    /// `1.2` (or `1/2`); `0` for 0-d arrays, as Zarr v2 does.
    V2 { separator: char },
    /// `c1/2` (or `c1.2`): the 2022 draft v3 layout, `c` joined to the first
    /// index; a 0-d array's chunk is `c` (the draft) or `c0` (what zarr-python
    /// 2.x wrote).
    DraftV3 { separator: char, zero_d_c0: bool },
}

impl ChunkKeyEncoding {
    /// Parse `{"name": "default"|"v2", "separator": "/"|"."}` (the core JSON form).
    pub fn from_json(v: &Value) -> Result<Self> {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::metadata("chunk_key_encoding needs a name"))?;
        let sep = separator(v.get("separator"))?;
        match name {
            "default" | "v2" => Self::named(name, sep),
            "draft_v3" => Ok(ChunkKeyEncoding::DraftV3 {
                separator: sep.unwrap_or('/'),
                zero_d_c0: match v.get("zero_d_key").and_then(Value::as_str) {
                    None | Some("c") => false,
                    Some("c0") => true,
                    Some(other) => {
                        return Err(Error::metadata(format!(
                            "draft_v3 zero_d_key must be 'c' or 'c0', got '{other}'"
                        )))
                    }
                },
            }),
            other => Err(Error::unsupported(format!(
                "unknown chunk_key_encoding '{other}'"
            ))),
        }
    }

    /// One of the encodings a v3 document names (`default`, `v2`), with its
    /// default separator (zarr-python's: `/` for `default`, `.` for `v2`) when
    /// `separator` is `None`.
    fn named(name: &str, separator: Option<char>) -> Result<Self> {
        match name {
            "default" => Ok(ChunkKeyEncoding::Default {
                separator: separator.unwrap_or('/'),
            }),
            "v2" => Ok(ChunkKeyEncoding::V2 {
                separator: separator.unwrap_or('.'),
            }),
            other => Err(Error::unsupported(format!(
                "unsupported chunk key encoding '{other}' (only 'default' and 'v2')"
            ))),
        }
    }

    /// Parse a v3 document's `chunk_key_encoding` name and configuration
    /// (`{"separator": "/"|"."}`, every member optional).
    pub fn from_document(name: &str, configuration: &Map<String, Value>) -> Result<Self> {
        if let Some(key) = configuration.keys().find(|k| k.as_str() != "separator") {
            return Err(Error::metadata(format!(
                "chunk_key_encoding.configuration: unknown member(s) ['{key}']"
            )));
        }
        // a document gives the separator or leaves it out: null is neither
        if configuration.get("separator") == Some(&Value::Null) {
            return Err(Error::metadata(
                "chunk_key_encoding.configuration.separator: must be \"/\" or \".\", got null",
            ));
        }
        Self::named(name, separator(configuration.get("separator"))?)
    }

    /// The v3 document's form, complete: `{"name": ..., "configuration":
    /// {"separator": ...}}` (`None` for the draft layout, which has none).
    pub fn document(&self) -> Option<Members> {
        let (name, separator) = match self {
            ChunkKeyEncoding::Default { separator } => ("default", separator),
            ChunkKeyEncoding::V2 { separator } => ("v2", separator),
            ChunkKeyEncoding::DraftV3 { .. } => return None,
        };
        Some(vec![
            ("name", name.into()),
            (
                "configuration",
                serde_json::json!({"separator": separator.to_string()}),
            ),
        ])
    }

    /// The key of the chunk at `coords`, relative to the array's node.
    pub fn encode(&self, coords: &[u64]) -> String {
        let (prefix, sep) = match self {
            ChunkKeyEncoding::Default { separator } => (Some("c"), *separator),
            ChunkKeyEncoding::V2 { separator } => (None, *separator),
            ChunkKeyEncoding::DraftV3 {
                separator,
                zero_d_c0,
            } => {
                if coords.is_empty() {
                    return if *zero_d_c0 { "c0" } else { "c" }.to_string();
                }
                let parts: Vec<String> = coords.iter().map(u64::to_string).collect();
                return format!("c{}", parts.join(&separator.to_string()));
            }
        };
        let mut key = String::with_capacity(2 + coords.len() * 4);
        if let Some(p) = prefix {
            key.push_str(p);
        } else if coords.is_empty() {
            key.push('0');
        }
        for (i, c) in coords.iter().enumerate() {
            if prefix.is_some() || i > 0 {
                key.push(sep);
            }
            key.push_str(&c.to_string());
        }
        key
    }
}

/// A `separator` member: `/` or `.` (`None` when absent or null).
fn separator(value: Option<&Value>) -> Result<Option<char>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "/" => Ok(Some('/')),
        Some(Value::String(s)) if s == "." => Ok(Some('.')),
        Some(other) => Err(Error::metadata(format!(
            "chunk_key_encoding.configuration.separator: must be \"/\" or \".\", got {other}"
        ))),
    }
}

impl ChunkKeyEncoding {
    /// The grid coordinates a chunk key (relative to the array's node) names,
    /// or `None` if it is not a chunk key of an array of `ndim` dimensions.
    pub fn decode(&self, key: &str, ndim: usize) -> Option<Vec<u64>> {
        let (rest, sep) = match self {
            ChunkKeyEncoding::Default { separator } => {
                if key == "c" {
                    return (ndim == 0).then(Vec::new);
                }
                (key.strip_prefix('c')?.strip_prefix(*separator)?, *separator)
            }
            ChunkKeyEncoding::V2 { separator } => {
                if ndim == 0 {
                    return (key == "0").then(Vec::new);
                }
                (key, *separator)
            }
            ChunkKeyEncoding::DraftV3 {
                separator,
                zero_d_c0,
            } => {
                if ndim == 0 {
                    return (key == if *zero_d_c0 { "c0" } else { "c" }).then(Vec::new);
                }
                (key.strip_prefix('c')?, *separator)
            }
        };
        if ndim == 0 {
            return None;
        }
        let coords: Vec<u64> = rest
            .split(sep)
            .map(|p| {
                (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| p.parse().ok())
                    .flatten()
            })
            .collect::<Option<_>>()?;
        (coords.len() == ndim).then_some(coords)
    }
}

/// A run of chunks of one edge length along a rectilinear dimension.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Run {
    /// Array offset of the run's first chunk.
    pub start: u64,
    /// Grid index of the run's first chunk.
    pub first: u64,
    /// Edge length of every chunk of the run (>= 1).
    pub edge: u64,
    /// Number of chunks in the run (>= 1).
    pub count: u64,
}

/// The chunk edges along one dimension: a fixed step (a regular grid, or a
/// rectilinear dimension declared by one integer), or explicit edges kept as
/// runs so that a dimension of many equal chunks never expands in memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DimGrid {
    Regular(u64),
    Rectilinear {
        runs: Vec<Run>,
        /// Sum of all edges (>= the array's extent).
        total: u64,
    },
}

impl DimGrid {
    /// Explicit edges from (edge, count) pairs, adjacent equal edges merged;
    /// errors for zero edges or counts, no edges, or a sum past `u64`.
    pub fn from_runs(pairs: &[(u64, u64)]) -> Result<Self> {
        let mut runs: Vec<Run> = Vec::new();
        let (mut start, mut first) = (0u64, 0u64);
        for &(edge, count) in pairs {
            if edge == 0 || count == 0 {
                return Err(Error::metadata(format!(
                    "chunk edges and run lengths must be positive, got [{edge}, {count}]"
                )));
            }
            let span = edge
                .checked_mul(count)
                .and_then(|n| n.checked_add(start))
                .ok_or_else(|| Error::metadata("chunk edges sum past 2^64"))?;
            let chunks = first
                .checked_add(count)
                .ok_or_else(|| Error::metadata("more than 2^64 chunks"))?;
            match runs.last_mut() {
                Some(last) if last.edge == edge => last.count += count,
                _ => runs.push(Run {
                    start,
                    first,
                    edge,
                    count,
                }),
            }
            (start, first) = (span, chunks);
        }
        if runs.is_empty() {
            return Err(Error::metadata("a dimension needs at least one edge"));
        }
        Ok(DimGrid::Rectilinear { runs, total: start })
    }

    /// One dimension of a rectilinear `chunk_shapes`: an integer step, or a
    /// list of edges and `[edge, count]` run-length pairs.
    pub fn from_json(v: &Value) -> Result<Self> {
        let positive = |x: &Value| -> Result<u64> {
            x.as_u64().filter(|&n| n > 0).ok_or_else(|| {
                Error::metadata(format!("chunk edges must be positive integers, got {x}"))
            })
        };
        match v {
            Value::Array(items) => {
                let pairs = items
                    .iter()
                    .map(|item| match item {
                        Value::Array(pair) if pair.len() == 2 => {
                            Ok((positive(&pair[0])?, positive(&pair[1])?))
                        }
                        Value::Array(_) => Err(Error::metadata(format!(
                            "a run-length entry is [edge, count], got {item}"
                        ))),
                        _ => Ok((positive(item)?, 1)),
                    })
                    .collect::<Result<Vec<_>>>()?;
                Self::from_runs(&pairs)
            }
            _ => Ok(DimGrid::Regular(positive(v)?)),
        }
    }

    /// The run holding chunk `c` (explicit edges only; `c` below the number of chunks).
    fn run_of_chunk(runs: &[Run], c: u64) -> Option<&Run> {
        let i = runs.partition_point(|r| r.first <= c).checked_sub(1)?;
        let r = &runs[i];
        (c - r.first < r.count).then_some(r)
    }

    /// The chunk holding array index `i` and `i`'s offset in it; `None` past
    /// the last edge.
    pub fn locate(&self, i: u64) -> Option<(u64, u64)> {
        match self {
            DimGrid::Regular(step) => Some((i / step, i % step)),
            DimGrid::Rectilinear { runs, total } => {
                if i >= *total {
                    return None;
                }
                let r = &runs[runs.partition_point(|r| r.start <= i) - 1];
                let k = (i - r.start) / r.edge;
                Some((r.first + k, (i - r.start) % r.edge))
            }
        }
    }

    /// Array offset and edge length of chunk `c`; `None` past the last edge
    /// (or past `u64` offsets).
    pub fn chunk(&self, c: u64) -> Option<(u64, u64)> {
        match self {
            DimGrid::Regular(step) => Some((c.checked_mul(*step)?, *step)),
            DimGrid::Rectilinear { runs, .. } => {
                let r = Self::run_of_chunk(runs, c)?;
                Some((r.start + (c - r.first) * r.edge, r.edge))
            }
        }
    }

    /// Number of chunks holding elements of `0..extent`.
    pub fn nchunks(&self, extent: u64) -> u64 {
        if extent == 0 {
            return 0;
        }
        self.locate(extent - 1).map_or_else(
            || match self {
                DimGrid::Rectilinear { runs, .. } => runs.last().map_or(0, |r| r.first + r.count),
                DimGrid::Regular(_) => 0,
            },
            |(c, _)| c + 1,
        )
    }

    /// Error unless the edges reach `extent`.
    pub fn check_covers(&self, extent: u64) -> Result<()> {
        match self {
            DimGrid::Rectilinear { total, .. } if *total < extent => Err(Error::metadata(format!(
                "chunk edges sum to {total}, below the extent {extent}"
            ))),
            _ => Ok(()),
        }
    }

    /// The edge of the first chunk.
    pub fn first_edge(&self) -> u64 {
        match self {
            DimGrid::Regular(step) => *step,
            DimGrid::Rectilinear { runs, .. } => runs.first().map_or(0, |r| r.edge),
        }
    }

    /// The data sizes of the chunks holding elements of `0..extent`: their
    /// edges, the last clipped at `extent` (dask's `chunks` convention).
    pub fn data_sizes(&self, extent: u64) -> Result<Vec<u64>> {
        let n = self.nchunks(extent);
        let mut sizes = crate::alloc::with_capacity(
            usize::try_from(n).map_err(|_| Error::memory(format!("{n} chunks")))?,
        )?;
        for c in 0..n {
            let (start, edge) = self
                .chunk(c)
                .ok_or_else(|| Error::index(format!("chunk {c} is outside the grid")))?;
            sizes.push(edge.min(extent.saturating_sub(start)));
        }
        Ok(sizes)
    }

    /// The dimension after a resize to `extent`, as zarr-python 3.4 adjusts
    /// it: a step stays; explicit edges get one new chunk covering the growth
    /// past their sum, and stay as they are when the array shrinks.
    pub fn resized(&self, extent: u64) -> Result<Self> {
        match self {
            DimGrid::Rectilinear { runs, total } if extent > *total => {
                let mut pairs: Vec<(u64, u64)> = runs.iter().map(|r| (r.edge, r.count)).collect();
                pairs.push((extent - total, 1));
                Self::from_runs(&pairs)
            }
            _ => Ok(self.clone()),
        }
    }

    /// The dimension as zarr-python 3.4 writes it in `chunk_shapes`: a step
    /// as an integer; explicit edges run-length encoded where that makes the
    /// list shorter (`[edge, count]` for a run, a bare edge for one chunk).
    pub fn document(&self) -> Value {
        match self {
            DimGrid::Regular(step) => Value::from(*step),
            DimGrid::Rectilinear { runs, .. } => {
                // adjacent equal edges are one run: a run of one is a bare edge
                let entry = |r: &Run| match r.count {
                    1 => Value::from(r.edge),
                    n => Value::from(vec![r.edge, n]),
                };
                Value::Array(runs.iter().map(entry).collect())
            }
        }
    }

    /// The dimension as [`ChunkGrid::rectilinear`] reads it: a step, or every
    /// run as an `[edge, count]` pair.
    pub fn runs_json(&self) -> Value {
        match self {
            DimGrid::Regular(step) => Value::from(*step),
            DimGrid::Rectilinear { runs, .. } => runs
                .iter()
                .map(|r| Value::from(vec![r.edge, r.count]))
                .collect(),
        }
    }

    /// The distinct edge lengths (one for a regular dimension).
    pub fn distinct_edges(&self) -> Vec<u64> {
        match self {
            DimGrid::Regular(step) => vec![*step],
            DimGrid::Rectilinear { runs, .. } => {
                let mut e: Vec<u64> = runs.iter().map(|r| r.edge).collect();
                e.sort_unstable();
                e.dedup();
                e
            }
        }
    }
}

/// A chunk grid: regular (one chunk shape) or rectilinear (per dimension a
/// [`DimGrid`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkGrid {
    Regular(Vec<usize>),
    Rectilinear(Vec<DimGrid>),
}

impl ChunkGrid {
    /// A rectilinear grid from its `chunk_shapes` JSON, checked against the
    /// array's shape (one entry per dimension, edges reaching each extent,
    /// every edge addressable in memory).
    pub fn rectilinear(chunk_shapes: &Value, shape: &[u64]) -> Result<Self> {
        let items = chunk_shapes
            .as_array()
            .ok_or_else(|| Error::metadata("chunk_shapes must be a list"))?;
        if items.len() != shape.len() {
            return Err(Error::metadata(format!(
                "chunk_shapes has {} dimensions, the shape has {}",
                items.len(),
                shape.len()
            )));
        }
        let dims = items
            .iter()
            .zip(shape)
            .enumerate()
            .map(|(d, (v, &extent))| {
                let dim = DimGrid::from_json(v)
                    .and_then(|g| g.check_covers(extent).map(|_| g))
                    .map_err(|e| e.context(format!("chunk_shapes dimension {d}")))?;
                if dim
                    .distinct_edges()
                    .iter()
                    .any(|&e| usize::try_from(e).is_err())
                {
                    return Err(Error::metadata(format!(
                        "chunk_shapes dimension {d}: an edge does not fit in memory"
                    )));
                }
                Ok(dim)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ChunkGrid::Rectilinear(dims))
    }

    /// A `rectilinear` chunk grid's `configuration` as `zarr.json` holds it
    /// (`{"kind": "inline", "chunk_shapes": [...]}`), checked against the
    /// array's shape as [`ChunkGrid::rectilinear`] checks its `chunk_shapes`.
    pub fn rectilinear_configuration(configuration: &Value, shape: &[u64]) -> Result<Self> {
        let label = "chunk_grid.configuration";
        let cfg = configuration.as_object().ok_or_else(|| {
            Error::metadata(format!("{label}: must be an object, got {configuration}"))
        })?;
        let unknown: Vec<&String> = cfg
            .keys()
            .filter(|k| !matches!(k.as_str(), "kind" | "chunk_shapes"))
            .collect();
        if !unknown.is_empty() {
            return Err(Error::metadata(format!(
                "{label}: unknown member(s) {unknown:?}"
            )));
        }
        match cfg.get("kind") {
            Some(Value::String(kind)) if kind == "inline" => {}
            other => {
                return Err(Error::metadata(format!(
                    "{label}.kind: only 'inline' is supported, got {}",
                    other.unwrap_or(&Value::Null)
                )))
            }
        }
        let chunk_shapes = cfg.get("chunk_shapes").unwrap_or(&Value::Null);
        Self::rectilinear(chunk_shapes, shape).map_err(|e| e.context(label))
    }

    pub fn ndim(&self) -> usize {
        match self {
            ChunkGrid::Regular(c) => c.len(),
            ChunkGrid::Rectilinear(d) => d.len(),
        }
    }

    /// The grid with its dimensions in reverse order.
    pub fn reversed(&self) -> ChunkGrid {
        match self {
            ChunkGrid::Regular(c) => ChunkGrid::Regular(c.iter().rev().copied().collect()),
            ChunkGrid::Rectilinear(d) => ChunkGrid::Rectilinear(d.iter().rev().cloned().collect()),
        }
    }

    /// The dimension grids (a regular grid's steps as [`DimGrid::Regular`]).
    pub fn dims(&self) -> Vec<DimGrid> {
        match self {
            ChunkGrid::Regular(c) => c.iter().map(|&n| DimGrid::Regular(n as u64)).collect(),
            ChunkGrid::Rectilinear(d) => d.clone(),
        }
    }

    /// The shape (codec shape: edges past the array's end included) of the
    /// chunk at `coords`; an index error outside the grid.
    pub fn chunk_shape(&self, coords: &[u64]) -> Result<Vec<usize>> {
        match self {
            ChunkGrid::Regular(c) => Ok(c.clone()),
            ChunkGrid::Rectilinear(dims) => dims
                .iter()
                .zip(coords)
                .map(|(g, &c)| {
                    g.chunk(c)
                        .and_then(|(_, e)| usize::try_from(e).ok())
                        .ok_or_else(|| {
                            Error::index(format!("chunk {coords:?} is outside the grid"))
                        })
                })
                .collect(),
        }
    }

    /// Number of chunks along each dimension holding elements of `shape`.
    pub fn grid_shape(&self, shape: &[u64]) -> Vec<u64> {
        match self {
            ChunkGrid::Regular(c) => grid_shape(shape, c),
            ChunkGrid::Rectilinear(dims) => {
                dims.iter().zip(shape).map(|(g, &s)| g.nchunks(s)).collect()
            }
        }
    }
}

/// Number of chunks along each dimension of a regular grid (none along a
/// dimension whose chunk extent is 0, which metadata validation refuses).
pub fn grid_shape(shape: &[u64], chunk_shape: &[usize]) -> Vec<u64> {
    shape
        .iter()
        .zip(chunk_shape)
        .map(|(&s, &c)| if c == 0 { 0 } else { s.div_ceil(c as u64) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    #[test]
    fn keys() {
        let d = ChunkKeyEncoding::from_json(&json!({"name": "default"})).unwrap();
        assert_eq!(d.encode(&[1, 23, 0]), "c/1/23/0");
        assert_eq!(d.encode(&[]), "c");
        let d = ChunkKeyEncoding::from_json(&json!({"name": "default", "separator": "."})).unwrap();
        assert_eq!(d.encode(&[4, 5]), "c.4.5");
        let v = ChunkKeyEncoding::from_json(&json!({"name": "v2"})).unwrap();
        assert_eq!(v.encode(&[4, 5]), "4.5");
        assert_eq!(v.encode(&[]), "0");
        let v = ChunkKeyEncoding::from_json(&json!({"name": "v2", "separator": "/"})).unwrap();
        assert_eq!(v.encode(&[4, 5]), "4/5");
        assert!(ChunkKeyEncoding::from_json(&json!({"name": "v2", "separator": "-"})).is_err());
        assert!(ChunkKeyEncoding::from_json(&json!({"name": "x"})).is_err());
    }

    #[test]
    fn document_form_fills_zarr_pythons_separators() {
        use crate::members::members_json;
        let doc = |name: &str, cfg: Value| {
            let e = ChunkKeyEncoding::from_document(name, cfg.as_object().unwrap())?;
            Ok::<_, Error>(members_json(&e.document().unwrap()))
        };
        assert_eq!(
            doc("default", json!({})).unwrap(),
            r#"{"name":"default","configuration":{"separator":"/"}}"#
        );
        assert_eq!(
            doc("v2", json!({})).unwrap(),
            r#"{"name":"v2","configuration":{"separator":"."}}"#
        );
        assert_eq!(
            doc("v2", json!({"separator": "/"})).unwrap(),
            r#"{"name":"v2","configuration":{"separator":"/"}}"#
        );
        use crate::error::ErrorKind::{Metadata, Unsupported};
        assert_eq!(doc("suffix", json!({})).unwrap_err().kind, Unsupported);
        assert_eq!(doc("draft_v3", json!({})).unwrap_err().kind, Unsupported);
        assert_eq!(
            doc("default", json!({"separator": "-"})).unwrap_err().kind,
            Metadata
        );
        assert_eq!(
            doc("default", json!({"sep": "/"})).unwrap_err().kind,
            Metadata
        );
        assert_eq!(
            doc("v2", json!({"separator": null})).unwrap_err().kind,
            Metadata
        );
    }

    #[test]
    fn keys_decode() {
        let d = ChunkKeyEncoding::Default { separator: '/' };
        assert_eq!(d.decode("c/1/23/0", 3), Some(vec![1, 23, 0]));
        assert_eq!(d.decode("c/1/23", 3), None);
        assert_eq!(d.decode("zarr.json", 1), None);
        assert_eq!(d.decode("c", 0), Some(vec![]));
        assert_eq!(d.decode("c/x", 1), None);
        assert_eq!(d.decode("c/-1", 1), None);
        let draft = ChunkKeyEncoding::from_json(&json!({"name": "draft_v3"})).unwrap();
        assert_eq!(draft.encode(&[1, 0]), "c1/0");
        assert_eq!(draft.encode(&[]), "c");
        assert_eq!(draft.decode("c1/0", 2), Some(vec![1, 0]));
        assert_eq!(draft.decode("c/1/0", 2), None);
        let zarr2 =
            ChunkKeyEncoding::from_json(&json!({"name": "draft_v3", "zero_d_key": "c0"})).unwrap();
        assert_eq!(
            (zarr2.encode(&[]), zarr2.decode("c0", 0)),
            ("c0".into(), Some(vec![]))
        );
        assert_eq!(zarr2.encode(&[2, 3]), "c2/3");
        assert!(
            ChunkKeyEncoding::from_json(&json!({"name": "draft_v3", "zero_d_key": "x"})).is_err()
        );
        let v = ChunkKeyEncoding::V2 { separator: '.' };
        assert_eq!(v.decode("4.5", 2), Some(vec![4, 5]));
        assert_eq!(v.decode(".zarray", 2), None);
        assert_eq!(v.decode("0", 0), Some(vec![]));
        for coords in [vec![0u64, 7, 12], vec![3, 0, 0]] {
            for enc in [
                d.clone(),
                v.clone(),
                ChunkKeyEncoding::V2 { separator: '/' },
            ] {
                assert_eq!(enc.decode(&enc.encode(&coords), 3), Some(coords.clone()));
            }
        }
    }

    #[test]
    fn run_length_edges_expand_and_merge() {
        let d = DimGrid::from_json(&json!([[2, 3], 2, 5, [5, 2], 1])).unwrap();
        let DimGrid::Rectilinear { runs, total } = &d else {
            panic!("rectilinear")
        };
        assert_eq!(*total, 24);
        // 2,2,2,2 then 5,5,5 then 1: adjacent equal edges merge into runs.
        let summary: Vec<_> = runs
            .iter()
            .map(|r| (r.start, r.first, r.edge, r.count))
            .collect();
        assert_eq!(summary, vec![(0, 0, 2, 4), (8, 4, 5, 3), (23, 7, 1, 1)]);
        let edges: Vec<_> = (0..8).map(|c| d.chunk(c).unwrap()).collect();
        assert_eq!(
            edges,
            vec![
                (0, 2),
                (2, 2),
                (4, 2),
                (6, 2),
                (8, 5),
                (13, 5),
                (18, 5),
                (23, 1)
            ]
        );
        assert_eq!(d.chunk(8), None);
        for i in 0..24 {
            let (c, off) = d.locate(i).unwrap();
            let (lo, e) = d.chunk(c).unwrap();
            assert!(lo + off == i && off < e, "{i}");
        }
        assert_eq!(d.locate(24), None);
        assert_eq!(d.distinct_edges(), vec![1, 2, 5]);
        assert_eq!(DimGrid::from_json(&json!(4)).unwrap(), DimGrid::Regular(4));
    }

    #[test]
    fn chunks_counted_up_to_the_extent() {
        let d = DimGrid::from_json(&json!([4, 4, 4, 4])).unwrap();
        let counts: Vec<u64> = [0, 1, 4, 5, 8, 9, 16]
            .iter()
            .map(|&e| d.nchunks(e))
            .collect();
        assert_eq!(counts, vec![0, 1, 1, 2, 2, 3, 4]);
        assert_eq!(DimGrid::Regular(3).nchunks(10), 4);
        assert!(d.check_covers(16).is_ok() && d.check_covers(17).is_err());
    }

    #[test]
    fn bad_edges_are_metadata_errors() {
        for bad in [
            json!([]),
            json!([0]),
            json!([-1]),
            json!([2.5]),
            json!(0),
            json!([[2]]),
            json!([[2, 0]]),
            json!([[0, 2]]),
            json!([[1, 2, 3]]),
            json!(["4"]),
            json!([[u64::MAX, 2]]),
            json!([u64::MAX, 1]),
        ] {
            let e = DimGrid::from_json(&bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Metadata, "{bad}");
        }
        let shape = [10u64, 10];
        assert!(ChunkGrid::rectilinear(&json!([[5, 4]]), &shape).is_err());
        let e = ChunkGrid::rectilinear(&json!([[5, 4], 2]), &shape).unwrap_err();
        assert!(e.to_string().contains("dimension 0"), "{e}");
        assert!(ChunkGrid::rectilinear(&json!([[5, 5], 2]), &shape).is_ok());
    }

    #[test]
    fn bounds_near_two_to_the_64() {
        let top = u64::MAX;
        // One chunk per index up to 2^64 - 1: never expanded.
        let d = DimGrid::from_runs(&[(1, top)]).unwrap();
        assert_eq!(d.locate(top - 1), Some((top - 1, 0)));
        assert_eq!(d.chunk(top - 1), Some((top - 1, 1)));
        assert_eq!(d.chunk(top), None);
        assert_eq!(d.nchunks(top), top);
        let d = DimGrid::from_runs(&[(top - 10, 1), (5, 2)]).unwrap();
        assert_eq!(d.locate(top - 1), Some((2, 4)));
        assert!(DimGrid::from_runs(&[(top - 10, 1), (6, 2)]).is_err());
        assert!(DimGrid::from_runs(&[(1, top), (1, 1)]).is_err());
        assert_eq!(DimGrid::Regular(3).chunk(top), None);
        let g = ChunkGrid::rectilinear(&json!([[[1, top]]]), &[top]).unwrap();
        assert_eq!(g.grid_shape(&[top]), vec![top]);
        assert!(g.chunk_shape(&[top]).is_err());
    }

    #[test]
    fn document_form_run_length_encodes_only_repeated_edges() {
        let d = DimGrid::from_json(&json!([3, 3, [2, 2], 5])).unwrap();
        assert_eq!(d.document(), json!([[3, 2], [2, 2], 5]));
        assert_eq!(d.runs_json(), json!([[3, 2], [2, 2], [5, 1]]));
        let singles = DimGrid::from_json(&json!([1, 2, 3])).unwrap();
        assert_eq!(singles.document(), json!([1, 2, 3]));
        assert_eq!(DimGrid::Regular(4).document(), json!(4));
        assert_eq!(DimGrid::from_json(&d.runs_json()).unwrap(), d);
    }

    #[test]
    fn data_sizes_clip_and_resize_grows_one_chunk() {
        let d = DimGrid::from_json(&json!([4, 4, 2])).unwrap();
        assert_eq!(d.data_sizes(9).unwrap(), vec![4, 4, 1]);
        assert_eq!(d.data_sizes(0).unwrap(), Vec::<u64>::new());
        assert_eq!(DimGrid::Regular(4).data_sizes(10).unwrap(), vec![4, 4, 2]);
        assert_eq!(d.first_edge(), 4);
        assert_eq!(d.resized(13).unwrap().document(), json!([[4, 2], 2, 3]));
        assert_eq!(d.resized(5).unwrap(), d);
        assert_eq!(
            DimGrid::Regular(4).resized(100).unwrap(),
            DimGrid::Regular(4)
        );
    }

    #[test]
    fn configuration_names_its_members() {
        let ok = json!({"kind": "inline", "chunk_shapes": [[2, 3], 4]});
        let g = ChunkGrid::rectilinear_configuration(&ok, &[5, 8]).unwrap();
        assert_eq!(g.grid_shape(&[5, 8]), vec![2, 2]);
        for (cfg, shape, want) in [
            (
                json!([]),
                vec![1],
                "chunk_grid.configuration: must be an object",
            ),
            (
                json!({"kind": "inline", "chunk_shapes": [1], "x": 1}),
                vec![1],
                "unknown member(s) [\"x\"]",
            ),
            (
                json!({"kind": "external", "chunk_shapes": [1]}),
                vec![1],
                "configuration.kind: only 'inline'",
            ),
            (
                json!({"kind": "inline"}),
                vec![1],
                "chunk_shapes must be a list",
            ),
            (
                json!({"kind": "inline", "chunk_shapes": [[4]]}),
                vec![5],
                "below the extent 5",
            ),
            (
                json!({"kind": "inline", "chunk_shapes": [[]]}),
                vec![0],
                "at least one edge",
            ),
        ] {
            let e = ChunkGrid::rectilinear_configuration(&cfg, &shape).unwrap_err();
            assert_eq!(e.kind, ErrorKind::Metadata, "{cfg}");
            assert!(e.message.contains(want), "{cfg}: {}", e.message);
        }
    }

    #[test]
    fn grid() {
        assert_eq!(grid_shape(&[10, 0, 7], &[3, 4, 7]), vec![4, 0, 1]);
        assert_eq!(grid_shape(&[u64::MAX, 5], &[2, 0]), vec![1 << 63, 0]);
    }
}
