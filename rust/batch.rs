//! Batches of chunks whose selection a caller has already projected onto the
//! chunk grid: zarr-python's codec pipeline hands over, for each chunk, the
//! region inside the chunk and the matching region of its output (or input)
//! buffer. One call decodes or encodes the whole batch on the thread pool,
//! with the same per-chunk work as [`crate::array::ArrayCore`]: decode
//! straight into the buffer where a chunk maps to a contiguous run, read only
//! the needed inner chunks of a shard, never read a chunk a write covers.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Mutex;

use rayon::prelude::*;
use serde_json::Value;

use crate::array::{place_chunk, update_chunk_memo, FullChunkMemo, Input, Output, SharedOut};
use crate::codec::sharding::{InnerChunks, ShardingCodec};
use crate::codec::{ChunkSpec, CodecChain};
use crate::error::{Error, Result};
use crate::indexing::{c_strides, DimChunk, DimSelection, Region};
use crate::pool::{self, pool};
use crate::store::{slice_ranges, ByteRange, OpenValue, Store};

/// One chunk's part of a batch: which elements of the chunk, and where they
/// are in the buffer (the output of a read, the value of a write).
#[derive(Debug, Clone)]
pub enum ChunkRegion {
    /// The outer product of one part per chunk dimension. `buffer_shape` is
    /// the buffer's shape with a 1 inserted at each chunk dimension that has
    /// no buffer dimension (an integer index, which numpy drops).
    Box {
        parts: Vec<DimChunk>,
        buffer_shape: Vec<usize>,
    },
    /// (flat index in the chunk, flat index in the buffer) pairs, in order.
    Points(Vec<(usize, usize)>),
    /// Selects nothing.
    Empty,
}

/// The indices a dimension selection stands for, each below `extent`.
fn expand(sel: &DimSelection, extent: usize, what: &str) -> Result<Vec<usize>> {
    let out: Vec<usize> = match sel {
        DimSelection::Slice { start, stop, step } => {
            if *step == 0 {
                return Err(Error::index(format!("{what}: slice step must be positive")));
            }
            (*start..(*stop).max(*start))
                .step_by(*step as usize)
                .map(|i| i as usize)
                .collect()
        }
        DimSelection::Indices(v) => v.iter().map(|&i| i as usize).collect(),
    };
    if let Some(bad) = out.iter().find(|&&i| i >= extent) {
        return Err(Error::index(format!(
            "{what}: index {bad} is out of bounds for length {extent}"
        )));
    }
    Ok(out)
}

impl ChunkRegion {
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
        for (d, ((c, b), &len)) in chunk.iter().zip(buffer).zip(chunk_shape).enumerate() {
            let src = expand(c, len, &format!("chunk dimension {d}"))?;
            let (dst, extent) = match b {
                Some(b) => {
                    let extent = next.next().copied().unwrap_or(0);
                    (
                        expand(
                            b,
                            extent,
                            &format!("buffer dimension of chunk dimension {d}"),
                        )?,
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
            if src.is_empty() {
                return Ok(ChunkRegion::Empty);
            }
            parts.push(DimChunk::new(0, src, dst, len));
            shape.push(extent);
        }
        Ok(ChunkRegion::Box {
            parts,
            buffer_shape: shape,
        })
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
        let n_chunk: usize = chunk_shape.iter().product();
        let (buffer, n_buffer) = match buffer {
            Some(b) => (b, buffer_shape.iter().product()),
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
            .map(|(&c, &b)| {
                if c as usize >= n_chunk || b as usize >= n_buffer {
                    Err(Error::index(format!(
                        "point ({c}, {b}) is outside the chunk ({n_chunk} elements) or the buffer \
                         ({n_buffer} elements)"
                    )))
                } else {
                    Ok((c as usize, b as usize))
                }
            })
            .collect::<Result<_>>()?;
        Ok(ChunkRegion::Points(pairs))
    }

    fn region(&self) -> Option<(Region<'_>, &[usize])> {
        match self {
            ChunkRegion::Box {
                parts,
                buffer_shape,
            } => Some((Region::Box(parts.iter().collect()), buffer_shape)),
            ChunkRegion::Points(pairs) => Some((Region::Points(pairs), &[])),
            ChunkRegion::Empty => None,
        }
    }

    /// Whether the region is every element of a chunk.
    fn covers_chunk(&self) -> bool {
        self.region().is_some_and(|(r, _)| r.covers_chunk())
    }

    /// The inner chunks of a shard this region touches: (position in the
    /// shard index, the region inside that inner chunk), in position order.
    fn split(&self, sh: &ShardingCodec, shard_shape: &[usize]) -> Vec<(usize, ChunkRegion)> {
        let inner = sh.inner_shape();
        match self {
            ChunkRegion::Empty => Vec::new(),
            ChunkRegion::Box {
                parts,
                buffer_shape,
            } => {
                // Per dimension, the parts grouped by inner chunk.
                let per_dim: Vec<Vec<DimChunk>> = parts
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
                            .map(|(c, (src, dst))| DimChunk::new(c as u64, src, dst, n))
                            .collect()
                    })
                    .collect();
                let mut combos: Vec<Vec<&DimChunk>> = vec![Vec::new()];
                for dim in &per_dim {
                    combos = combos
                        .iter()
                        .flat_map(|prefix| {
                            dim.iter().map(move |p| {
                                let mut next = prefix.clone();
                                next.push(p);
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
                            parts: parts.into_iter().cloned().collect(),
                            buffer_shape: buffer_shape.clone(),
                        };
                        (sh.inner_position(&coords), region)
                    })
                    .collect()
            }
            ChunkRegion::Points(pairs) => {
                let shard_strides = c_strides(shard_shape);
                let inner_strides = c_strides(inner);
                let mut groups: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
                for &(c, b) in pairs {
                    let mut rest = c;
                    let mut coords = Vec::with_capacity(inner.len());
                    let mut flat = 0;
                    for ((&stride, &n), &istride) in
                        shard_strides.iter().zip(inner).zip(&inner_strides)
                    {
                        let x = rest / stride;
                        rest %= stride;
                        coords.push(x / n);
                        flat += (x % n) * istride;
                    }
                    groups
                        .entry(sh.inner_position(&coords))
                        .or_default()
                        .push((flat, b));
                }
                groups
                    .into_iter()
                    .map(|(pos, pairs)| (pos, ChunkRegion::Points(pairs)))
                    .collect()
            }
        }
    }
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
/// elements (one element may repeat within one chunk, not across chunks):
/// the worker threads then write disjoint bytes (see `SharedOut`).
fn check_disjoint(regions: &[ChunkRegion], chunk_shape: &[usize], n: usize) -> Result<()> {
    match box_footprints(regions, n) {
        Some(rects) => check_disjoint_boxes(rects),
        None => check_disjoint_runs(regions, chunk_shape, n),
    }
}

/// Each non-empty region's footprint in the buffer as a half-open
/// hyper-rectangle (`[lo, hi)` per buffer dimension), when every region is a
/// box of unit-stride parts over the same buffer shape of `n` elements with
/// every footprint inside it; else None.
fn box_footprints(regions: &[ChunkRegion], n: usize) -> Option<Vec<Vec<(usize, usize)>>> {
    let mut shape: Option<&[usize]> = None;
    let mut rects = Vec::with_capacity(regions.len());
    for r in regions {
        let ChunkRegion::Box {
            parts,
            buffer_shape,
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
        if parts.len() != buffer_shape.len() || parts.iter().any(|p| !p.unit_stride) {
            return None;
        }
        if parts.iter().any(|p| p.dst.is_empty()) {
            continue;
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
fn check_disjoint_runs(regions: &[ChunkRegion], chunk_shape: &[usize], n: usize) -> Result<()> {
    let mut taken = vec![0u64; n.div_ceil(64)];
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for r in regions {
        let Some((region, buffer_shape)) = r.region() else {
            continue;
        };
        runs.clear();
        region.for_each_run(chunk_shape, buffer_shape, true, |_, t, k| runs.push((t, k)));
        for &(t, k) in &runs {
            if t.checked_add(k).is_none_or(|end| end > n) {
                return Err(Error::index(format!(
                    "a chunk's region reaches element {} of a buffer of {n}",
                    t.saturating_add(k)
                )));
            }
            if k > 0 && bit_words(t, k).any(|(w, m)| taken[w] & m != 0) {
                return Err(Error::index("the buffer regions of two chunks overlap"));
            }
        }
        for &(t, k) in runs.iter().filter(|(_, k)| *k > 0) {
            for (w, m) in bit_words(t, k) {
                taken[w] |= m;
            }
        }
    }
    Ok(())
}

/// A byte request for a caller that reads its own store (zarr-python's byte
/// getters): the whole value under the chunk's key, or a byte range of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    Whole,
    Range(ByteRange),
}

/// The requests fetched so far for one chunk, each with its answer (`None`:
/// the key does not exist).
pub type Answers = Vec<(Request, Option<Vec<u8>>)>;

/// A read-only store of one chunk key that answers from the bytes the caller
/// fetched and records every request it cannot answer yet, so that the
/// shard logic of [`ShardingCodec::fetch`] runs unchanged over a store that
/// only the caller can read.
#[derive(Debug)]
struct AnsweringStore<'a> {
    answers: &'a [(Request, Option<Vec<u8>>)],
    asked: Mutex<Vec<Request>>,
}

impl<'a> AnsweringStore<'a> {
    fn new(answers: &'a [(Request, Option<Vec<u8>>)]) -> Self {
        AnsweringStore {
            answers,
            asked: Mutex::new(Vec::new()),
        }
    }

    /// The key is known not to exist.
    fn missing(&self) -> bool {
        self.answers.iter().any(|(_, a)| a.is_none())
    }

    fn find(&self, request: Request) -> Option<&[u8]> {
        self.answers
            .iter()
            .find(|(r, _)| *r == request)
            .and_then(|(_, a)| a.as_deref())
    }

    fn ask(&self, request: Request) {
        let mut asked = self.asked.lock().unwrap_or_else(|p| p.into_inner());
        if !asked.contains(&request) {
            asked.push(request);
        }
    }

    fn asked(&self) -> Vec<Request> {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Store for AnsweringStore<'_> {
    fn get(&self, _key: &str) -> Result<Option<Vec<u8>>> {
        if self.missing() {
            return Ok(None);
        }
        match self.find(Request::Whole) {
            Some(bytes) => Ok(Some(bytes.to_vec())),
            None => {
                self.ask(Request::Whole);
                Ok(None)
            }
        }
    }

    fn get_ranges(&self, _key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        if self.missing() {
            return Ok(None);
        }
        if let Some(whole) = self.find(Request::Whole) {
            return slice_ranges(whole, ranges).map(Some);
        }
        let mut parts = Vec::with_capacity(ranges.len());
        for r in ranges {
            match self.find(Request::Range(*r)) {
                Some(bytes) => parts.push(bytes.to_vec()),
                None => self.ask(Request::Range(*r)),
            }
        }
        Ok((parts.len() == ranges.len()).then_some(parts))
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn OpenValue + '_>>> {
        if self.missing() {
            return Ok(None);
        }
        Ok(Some(Box::new(AnsweringValue {
            store: self,
            key: key.to_string(),
        })))
    }

    fn set(&self, _key: &str, _value: &[u8]) -> Result<()> {
        Err(Error::store(
            "internal error: the answering store is read-only",
        ))
    }

    fn delete(&self, _key: &str) -> Result<()> {
        Err(Error::store(
            "internal error: the answering store is read-only",
        ))
    }

    fn list_prefix(&self, _prefix: &str) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn list_dir(&self, _prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        Ok((Vec::new(), Vec::new()))
    }
}

/// A value of an [`AnsweringStore`]: a range read that was not answered yet
/// asks for it and fails (the caller, seeing requests, fetches and retries).
struct AnsweringValue<'s> {
    store: &'s AnsweringStore<'s>,
    key: String,
}

impl OpenValue for AnsweringValue<'_> {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
        self.store
            .get_ranges(&self.key, ranges)?
            .ok_or_else(|| Error::store("internal error: byte ranges not fetched yet"))
    }
}

/// Prefix errors with the chunk's key.
fn at(key: &str) -> impl Fn(Error) -> Error + '_ {
    move |e| e.context(format!("chunk '{key}'"))
}

/// The encoded bytes of one chunk to decode: all of it, or for a shard the
/// inner chunks at the wanted positions (`None` when the shard is missing).
enum Fetched {
    Whole(Option<Vec<u8>>),
    /// The inner chunks a region touches (position, region) and their bytes.
    Inner(Vec<(usize, ChunkRegion)>, Option<InnerChunks>),
}

/// A codec chain for chunks of one shape, data type and fill value, with the
/// batch read and write of chunks whose regions the caller gives.
#[derive(Debug)]
pub struct BatchCodec {
    chain: CodecChain,
}

impl BatchCodec {
    /// A chain from the v3 `codecs` JSON list (the core form) for chunks of `spec`.
    pub fn new(codecs: &Value, spec: ChunkSpec) -> Result<Self> {
        if spec.shape.contains(&0) {
            return Err(Error::metadata("chunk shape must be positive"));
        }
        if !spec.dtype.is_var_len() && spec.fill.len() != spec.dtype.size {
            return Err(Error::metadata(format!(
                "fill value has {} bytes, the data type has {}",
                spec.fill.len(),
                spec.dtype.size
            )));
        }
        Ok(BatchCodec {
            chain: CodecChain::from_json(codecs, spec)?,
        })
    }

    pub fn spec(&self) -> &ChunkSpec {
        self.chain.spec()
    }

    /// Whether chunks are shards whose inner chunks can be read one by one.
    pub fn is_sharded(&self) -> bool {
        self.chain.sharding().is_some()
    }

    /// Whether a batch is one chunk, or one inner chunk of one shard: it then
    /// runs on the calling thread, as a hop to the pool and back costs more
    /// than it saves.
    fn runs_inline(&self, regions: &[ChunkRegion]) -> bool {
        match (regions, self.chain.sharding()) {
            ([_], None) => true,
            ([r], Some(sh)) => r.split(sh, &self.spec().shape).len() <= 1,
            _ => false,
        }
    }

    fn check_output(&self, regions: &[ChunkRegion], out: &Output<'_>, n: usize) -> Result<()> {
        match out {
            Output::Fixed(_) => check_disjoint(regions, &self.spec().shape, n),
            Output::Var(_) => Ok(()),
        }
    }

    /// Fetch the chunks under `keys` from `store` and decode their regions
    /// into `out` (a buffer of `n` elements); the fill value where a chunk
    /// (or inner chunk) is missing. Returns which chunks were present.
    pub(crate) fn read(
        &self,
        store: &dyn Store,
        keys: &[String],
        regions: &[ChunkRegion],
        out: Output<'_>,
        n: usize,
    ) -> Result<Vec<bool>> {
        self.check_batch(keys.len(), regions.len())?;
        self.check_output(regions, &out, n)?;
        let one =
            |(key, region): (&String, &ChunkRegion)| self.read_and_place(store, key, region, out);
        if self.runs_inline(regions) {
            return keys.iter().zip(regions).map(one).collect();
        }
        pool()?.install(|| keys.par_iter().zip(regions.par_iter()).map(one).collect())
    }

    /// `fetch_and_place` for a store Rust reads itself: a shard's inner chunks
    /// are read in small batches as they are decoded (see
    /// `ShardingCodec::read_inner_batched`), never the whole shard at once.
    fn read_and_place(
        &self,
        store: &dyn Store,
        key: &str,
        region: &ChunkRegion,
        out: Output<'_>,
    ) -> Result<bool> {
        let Some(sh) = self.chain.sharding() else {
            return self.fetch_and_place(store, key, region, out);
        };
        if region.region().is_none() {
            return Ok(false);
        }
        let members = region.split(sh, &self.spec().shape);
        sh.read_members(store, key, &members, |inner_region, bytes| {
            let Some((ir, shape)) = inner_region.region() else {
                return Ok(());
            };
            place_chunk(sh.inner(), shape, &ir, bytes, out)
        })
        .map_err(at(key))
    }

    /// Fetch what one chunk's region needs from `store` (for a shard: the index,
    /// then only the inner chunks needed) and decode it into `out`.
    fn fetch_and_place(
        &self,
        store: &dyn Store,
        key: &str,
        region: &ChunkRegion,
        out: Output<'_>,
    ) -> Result<bool> {
        let fetched = match (self.chain.sharding(), region) {
            (_, ChunkRegion::Empty) => return Ok(false),
            (None, _) => Fetched::Whole(store.get(key).map_err(at(key))?),
            (Some(sh), _) => {
                let members = region.split(sh, &self.spec().shape);
                let wanted: Vec<usize> = members.iter().map(|(pos, _)| *pos).collect();
                let bytes = sh.fetch(store, key, &wanted).map_err(at(key))?;
                Fetched::Inner(members, bytes)
            }
        };
        self.place(key, fetched, region, out)
    }

    /// The byte requests each chunk's region still needs from a store the
    /// caller reads itself, given the `answers` fetched so far: the whole
    /// chunk; for a shard, its index first, then the byte ranges of the inner
    /// chunks needed (neighbours coalesced), or the whole shard when the
    /// region needs every inner chunk. Empty once the region can be decoded
    /// (`decode_answers`).
    pub fn requests(
        &self,
        keys: &[String],
        answers: &[Answers],
        regions: &[ChunkRegion],
    ) -> Result<Vec<Vec<Request>>> {
        self.check_batch(keys.len(), regions.len())?;
        self.check_batch(answers.len(), regions.len())?;
        keys.iter()
            .zip(answers)
            .zip(regions)
            .map(|((key, answers), region)| {
                if matches!(region, ChunkRegion::Empty) {
                    return Ok(Vec::new());
                }
                let store = AnsweringStore::new(answers);
                let result = match self.chain.sharding() {
                    None => store.get(key).map(|_| ()),
                    Some(sh) => {
                        let wanted: Vec<usize> = region
                            .split(sh, &self.spec().shape)
                            .iter()
                            .map(|(pos, _)| *pos)
                            .collect();
                        sh.fetch(&store, key, &wanted).map(|_| ())
                    }
                };
                let asked = store.asked();
                if asked.is_empty() {
                    result.map_err(at(key))?;
                }
                Ok(asked)
            })
            .collect()
    }

    /// Decode the regions from the bytes the caller fetched for `requests`
    /// (which must ask for nothing more); which chunks were present.
    pub(crate) fn decode_answers(
        &self,
        keys: &[String],
        answers: &[Answers],
        regions: &[ChunkRegion],
        out: Output<'_>,
        n: usize,
    ) -> Result<Vec<bool>> {
        self.check_batch(keys.len(), regions.len())?;
        self.check_batch(answers.len(), regions.len())?;
        self.check_output(regions, &out, n)?;
        let one = |((key, answers), region): ((&String, &Answers), &ChunkRegion)| {
            let store = AnsweringStore::new(answers);
            let present = self.fetch_and_place(&store, key, region, out)?;
            if !store.asked().is_empty() {
                return Err(at(key)(Error::value(
                    "internal error: bytes missing that the batch did not fetch",
                )));
            }
            Ok(present)
        };
        if self.runs_inline(regions) {
            return keys.iter().zip(answers).zip(regions).map(one).collect();
        }
        pool()?.install(|| {
            keys.par_iter()
                .zip(answers.par_iter())
                .zip(regions.par_iter())
                .map(one)
                .collect()
        })
    }

    /// Decode the given encoded chunks (`None`: missing, read as the fill
    /// value) into their regions of `out` (a buffer of `n` elements).
    pub(crate) fn decode(
        &self,
        keys: &[String],
        encoded: Vec<Option<Vec<u8>>>,
        regions: &[ChunkRegion],
        out: Output<'_>,
        n: usize,
    ) -> Result<()> {
        self.check_batch(keys.len(), regions.len())?;
        self.check_batch(encoded.len(), regions.len())?;
        self.check_output(regions, &out, n)?;
        let one = |((key, bytes), region): ((&String, Option<Vec<u8>>), &ChunkRegion)| {
            let fetched = match self.chain.sharding() {
                None => Fetched::Whole(bytes),
                Some(sh) => {
                    let members = region.split(sh, &self.spec().shape);
                    let inner = inner_chunks(sh, key, bytes, &members)?;
                    Fetched::Inner(members, inner)
                }
            };
            self.place(key, fetched, region, out).map(|_| ())
        };
        if self.runs_inline(regions) {
            return keys.iter().zip(encoded).zip(regions).try_for_each(one);
        }
        pool()?.install(|| {
            keys.par_iter()
                .zip(encoded.into_par_iter())
                .zip(regions.par_iter())
                .try_for_each(one)
        })
    }

    /// Decode one chunk's fetched bytes into its region; whether it was present.
    fn place(
        &self,
        key: &str,
        fetched: Fetched,
        region: &ChunkRegion,
        out: Output<'_>,
    ) -> Result<bool> {
        let Some((r, buffer_shape)) = region.region() else {
            return Ok(false);
        };
        match (fetched, self.chain.sharding()) {
            (Fetched::Whole(bytes), _) => {
                let present = bytes.is_some();
                place_chunk(&self.chain, buffer_shape, &r, bytes, out).map_err(at(key))?;
                Ok(present)
            }
            (Fetched::Inner(members, inner), Some(sh)) => {
                let present = inner.is_some();
                let chunks = inner.unwrap_or_else(|| InnerChunks::missing(members.len()));
                let one = |(i, (pos, inner_region)): (usize, &(usize, ChunkRegion))| {
                    let Some((ir, shape)) = inner_region.region() else {
                        return Ok(());
                    };
                    chunks
                        .take(i)
                        .and_then(|bytes| place_chunk(sh.inner(), shape, &ir, bytes, out))
                        .map_err(|e| e.context(format!("inner chunk {pos}")))
                        .map_err(at(key))
                };
                pool::try_for_each_indexed(&members, one)?;
                Ok(present)
            }
            (Fetched::Inner(..), None) => Err(Error::value("internal error: not a shard")),
        }
    }

    fn check_batch(&self, a: usize, b: usize) -> Result<()> {
        if a != b {
            return Err(Error::value(format!(
                "a batch needs one entry per chunk: got {a} and {b}"
            )));
        }
        Ok(())
    }

    fn check_input(&self, value: &Input<'_>, n: usize) -> Result<()> {
        let (got, want) = match value {
            Input::Fixed(bytes) => (bytes.len(), n * self.spec().dtype.size),
            Input::Var(items) => (items.len(), n),
            Input::Scalar(_) => return Ok(()),
        };
        if got != want {
            return Err(Error::value(format!(
                "the value buffer has {got} {}, its shape needs {want}",
                if matches!(value, Input::Var(_)) {
                    "items"
                } else {
                    "bytes"
                }
            )));
        }
        Ok(())
    }

    /// Write the regions of `value` (a buffer of `n` elements, or one scalar)
    /// over the existing encoded chunks (`None`: missing or not needed, the
    /// chunk starts as the fill value) and encode them. Returns the new bytes
    /// per chunk, `None` where the chunk is all fill value and empty chunks
    /// are not written (it should be deleted).
    pub fn encode(
        &self,
        keys: &[String],
        existing: Vec<Option<Vec<u8>>>,
        regions: &[ChunkRegion],
        value: Input<'_>,
        n: usize,
        write_empty: bool,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.check_batch(keys.len(), regions.len())?;
        self.check_batch(existing.len(), regions.len())?;
        self.check_input(&value, n)?;
        let memo = FullChunkMemo::new();
        pool()?.install(|| {
            keys.par_iter()
                .zip(existing.into_par_iter())
                .zip(regions.par_iter())
                .map(|((key, old), region)| {
                    self.update(key, old, region, value, write_empty, &memo)
                })
                .collect()
        })
    }

    /// Read-modify-write the chunks under `keys` in `store`: `complete` marks
    /// the chunks a region covers, which are not read first. A chunk that
    /// ends up all fill value is deleted unless `write_empty`.
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &self,
        store: &dyn Store,
        keys: &[String],
        complete: &[bool],
        regions: &[ChunkRegion],
        value: Input<'_>,
        n: usize,
        write_empty: bool,
    ) -> Result<()> {
        self.check_batch(keys.len(), regions.len())?;
        self.check_batch(complete.len(), regions.len())?;
        self.check_input(&value, n)?;
        let memo = FullChunkMemo::new();
        pool()?.install(|| {
            keys.par_iter()
                .zip(complete.par_iter())
                .zip(regions.par_iter())
                .try_for_each(|((key, &complete), region)| {
                    if matches!(region, ChunkRegion::Empty) {
                        return Ok(());
                    }
                    let old = if complete || region.covers_chunk() {
                        None
                    } else {
                        store.get(key).map_err(at(key))?
                    };
                    match self.update(key, old, region, value, write_empty, &memo)? {
                        Some(bytes) => store.set(key, &bytes),
                        None => store.delete(key),
                    }
                    .map_err(at(key))
                })
        })
    }

    /// One chunk's new encoded bytes (`None`: all fill value, not written).
    fn update(
        &self,
        key: &str,
        old: Option<Vec<u8>>,
        region: &ChunkRegion,
        value: Input<'_>,
        write_empty: bool,
        memo: &FullChunkMemo,
    ) -> Result<Option<Vec<u8>>> {
        let Some((r, buffer_shape)) = region.region() else {
            return Ok(old);
        };
        let Some(sh) = self.chain.sharding() else {
            let old = if region.covers_chunk() { None } else { old };
            return update_chunk_memo(memo, &self.chain, buffer_shape, &r, old, value, write_empty)
                .map(Cow::into_owned)
                .map_err(at(key));
        };
        let mut chunks: Vec<Option<Vec<u8>>> =
            crate::alloc::filled(None, sh.num_inner()).map_err(at(key))?;
        if let Some(old) = old {
            let index = sh.read_index(&old).map_err(at(key))?;
            for (slot, range) in chunks.iter_mut().zip(index) {
                *slot = range.map(|r| old[r.start as usize..r.end as usize].to_vec());
            }
        }
        let members = region.split(sh, &self.spec().shape);
        let updates: Vec<(usize, Option<Vec<u8>>)> = members
            .par_iter()
            .map(|(pos, inner_region)| {
                let Some((ir, shape)) = inner_region.region() else {
                    return Ok((*pos, chunks[*pos].clone()));
                };
                let existing = if ir.covers_chunk() {
                    None
                } else {
                    chunks[*pos].clone()
                };
                update_chunk_memo(memo, sh.inner(), shape, &ir, existing, value, write_empty)
                    .map(|new| (*pos, new.into_owned()))
                    .map_err(|e| e.context(format!("inner chunk {pos}")))
                    .map_err(at(key))
            })
            .collect::<Result<_>>()?;
        for (pos, new) in updates {
            chunks[pos] = new;
        }
        sh.assemble(&chunks).map_err(at(key))
    }
}

/// The wanted inner chunks (`members`) out of a whole shard's bytes.
fn inner_chunks(
    sh: &ShardingCodec,
    key: &str,
    shard: Option<Vec<u8>>,
    members: &[(usize, ChunkRegion)],
) -> Result<Option<InnerChunks>> {
    let Some(shard) = shard else {
        return Ok(None);
    };
    let wanted: Vec<usize> = members.iter().map(|(pos, _)| *pos).collect();
    sh.inner_chunks(shard, &wanted).map(Some).map_err(at(key))
}

/// Read into a fixed-size buffer: `out` holds `out.len() / elem` elements.
pub fn read_into(
    codec: &BatchCodec,
    store: &dyn Store,
    keys: &[String],
    regions: &[ChunkRegion],
    out: &mut [u8],
) -> Result<Vec<bool>> {
    let n = elements(codec, out.len())?;
    codec.read(store, keys, regions, Output::Fixed(SharedOut::new(out)), n)
}

/// Decode into a fixed-size buffer: `out` holds `out.len() / elem` elements.
pub fn decode_into(
    codec: &BatchCodec,
    keys: &[String],
    encoded: Vec<Option<Vec<u8>>>,
    regions: &[ChunkRegion],
    out: &mut [u8],
) -> Result<()> {
    let n = elements(codec, out.len())?;
    codec.decode(
        keys,
        encoded,
        regions,
        Output::Fixed(SharedOut::new(out)),
        n,
    )
}

/// Read variable-length elements: a list of `n` values (empty where nothing was read).
pub fn read_var(
    codec: &BatchCodec,
    store: &dyn Store,
    keys: &[String],
    regions: &[ChunkRegion],
    n: usize,
) -> Result<(Vec<Vec<u8>>, Vec<bool>)> {
    let list = Mutex::new(vec![Vec::new(); n]);
    let present = codec.read(store, keys, regions, Output::Var(&list), n)?;
    Ok((
        list.into_inner().unwrap_or_else(|p| p.into_inner()),
        present,
    ))
}

/// Decode from fetched answers into a fixed-size buffer (see `BatchCodec::requests`).
pub fn decode_answers_into(
    codec: &BatchCodec,
    keys: &[String],
    answers: &[Answers],
    regions: &[ChunkRegion],
    out: &mut [u8],
) -> Result<Vec<bool>> {
    let n = elements(codec, out.len())?;
    codec.decode_answers(
        keys,
        answers,
        regions,
        Output::Fixed(SharedOut::new(out)),
        n,
    )
}

/// Decode variable-length elements from fetched answers: a list of `n` values.
pub fn decode_answers_var(
    codec: &BatchCodec,
    keys: &[String],
    answers: &[Answers],
    regions: &[ChunkRegion],
    n: usize,
) -> Result<(Vec<Vec<u8>>, Vec<bool>)> {
    let list = Mutex::new(vec![Vec::new(); n]);
    let present = codec.decode_answers(keys, answers, regions, Output::Var(&list), n)?;
    Ok((
        list.into_inner().unwrap_or_else(|p| p.into_inner()),
        present,
    ))
}

/// Decode variable-length elements: a list of `n` values.
pub fn decode_var(
    codec: &BatchCodec,
    keys: &[String],
    encoded: Vec<Option<Vec<u8>>>,
    regions: &[ChunkRegion],
    n: usize,
) -> Result<Vec<Vec<u8>>> {
    let list = Mutex::new(vec![Vec::new(); n]);
    codec.decode(keys, encoded, regions, Output::Var(&list), n)?;
    Ok(list.into_inner().unwrap_or_else(|p| p.into_inner()))
}

fn elements(codec: &BatchCodec, len: usize) -> Result<usize> {
    let elem = codec.spec().dtype.size;
    if codec.spec().dtype.is_var_len() {
        return Err(Error::value(
            "variable-length data is read into a list, not a buffer",
        ));
    }
    if !len.is_multiple_of(elem) {
        return Err(Error::value(format!(
            "a buffer of {len} bytes does not hold whole {elem}-byte elements"
        )));
    }
    Ok(len / elem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;
    use crate::store::MemoryStore;
    use serde_json::json;

    fn sl(start: u64, stop: u64) -> DimSelection {
        DimSelection::Slice {
            start,
            stop,
            step: 1,
        }
    }

    fn u16s(v: &[u16]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    fn as_u16(b: &[u8]) -> Vec<u16> {
        b.chunks_exact(2)
            .map(|c| u16::from_ne_bytes([c[0], c[1]]))
            .collect()
    }

    /// uint16 chunks of `shape`, fill 7, with `codecs`.
    fn codec(shape: &[usize], codecs: Value) -> BatchCodec {
        let spec = ChunkSpec {
            shape: shape.to_vec(),
            dtype: DataType::from_name("uint16").unwrap(),
            fill: 7u16.to_ne_bytes().to_vec(),
        };
        BatchCodec::new(&codecs, spec).unwrap()
    }

    fn plain(shape: &[usize]) -> BatchCodec {
        codec(
            shape,
            json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]),
        )
    }

    fn sharded(shard: &[usize], inner: &[usize]) -> BatchCodec {
        codec(
            shard,
            json!([{"name": "sharding_indexed", "configuration": {
                "chunk_shape": inner,
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": "end"}}]),
        )
    }

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("c/{i}")).collect()
    }

    /// A whole 2x3 chunk into a 2x6 buffer at column `col`.
    fn block(col: u64) -> ChunkRegion {
        ChunkRegion::boxed(
            &[sl(0, 2), sl(0, 3)],
            &[Some(sl(0, 2)), Some(sl(col, col + 3))],
            &[2, 3],
            &[2, 6],
        )
        .unwrap()
    }

    #[test]
    fn encode_then_decode_regions_with_fill_for_missing_chunks() {
        let c = plain(&[2, 3]);
        let value = u16s(&[0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15]);
        let encoded = c
            .encode(
                &keys(2),
                vec![None, None],
                &[block(0), block(3)],
                Input::Fixed(&value),
                12,
                false,
            )
            .unwrap();
        let mut out = vec![0u8; 24];
        decode_into(
            &c,
            &keys(2),
            vec![encoded[1].clone(), None],
            &[block(0), block(3)],
            &mut out,
        )
        .unwrap();
        assert_eq!(as_u16(&out), vec![10, 11, 12, 7, 7, 7, 13, 14, 15, 7, 7, 7]);
        // A dropped dimension (an integer index): row 1 of chunk 0 into a 1-d buffer.
        let row = ChunkRegion::boxed(
            &[sl(1, 2), sl(0, 3)],
            &[None, Some(sl(0, 3))],
            &[2, 3],
            &[3],
        )
        .unwrap();
        let mut three = vec![0u8; 6];
        decode_into(&c, &keys(1), vec![encoded[0].clone()], &[row], &mut three).unwrap();
        assert_eq!(as_u16(&three), vec![3, 4, 5]);
        // Points, in any order, repeats allowed.
        let pts = ChunkRegion::points(&[5, 0, 5], Some(&[0, 1, 2]), &[2, 3], &[3]).unwrap();
        decode_into(&c, &keys(1), vec![encoded[0].clone()], &[pts], &mut three).unwrap();
        assert_eq!(as_u16(&three), vec![5, 0, 5]);
    }

    #[test]
    fn regions_are_checked() {
        let shape = [2usize, 3];
        assert!(ChunkRegion::boxed(
            &[sl(0, 3), sl(0, 3)],
            &[Some(sl(0, 3)), Some(sl(0, 3))],
            &shape,
            &[3, 3]
        )
        .is_err());
        assert!(ChunkRegion::boxed(
            &[sl(0, 2), sl(0, 3)],
            &[Some(sl(0, 2)), Some(sl(1, 4))],
            &shape,
            &[2, 3]
        )
        .is_err());
        assert!(ChunkRegion::boxed(
            &[sl(0, 2), sl(0, 3)],
            &[Some(sl(0, 2)), Some(sl(0, 2))],
            &shape,
            &[2, 3]
        )
        .is_err());
        assert!(
            ChunkRegion::boxed(&[sl(0, 2), sl(0, 3)], &[None, Some(sl(0, 3))], &shape, &[3])
                .is_err()
        );
        assert!(
            ChunkRegion::boxed(&[sl(0, 2), sl(0, 3)], &[Some(sl(0, 2))], &shape, &[2]).is_err()
        );
        assert!(ChunkRegion::points(&[6], Some(&[0]), &shape, &[1]).is_err());
        assert!(ChunkRegion::points(&[0], Some(&[1]), &shape, &[1]).is_err());
        assert!(ChunkRegion::points(&[0, 1], Some(&[0]), &shape, &[2]).is_err());
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
    fn box_regions_are_checked_as_rectangles() {
        let buffer = [4, 9];
        let grid: Vec<ChunkRegion> = (0..2)
            .flat_map(|i| (0..3).map(move |j| (i * 2, j * 3)))
            .map(|(r, c)| box_at((r, r + 2), (c, c + 3), &buffer))
            .collect();
        assert!(box_footprints(&grid, 36).is_some(), "the fast path applies");
        check_disjoint(&grid, &[2, 3], 36).unwrap();
        // A box shifted by one column overlaps its neighbour in one column only.
        let mut shifted = grid.clone();
        shifted.push(box_at((2, 4), (1, 4), &buffer));
        shifted.swap(0, 6);
        let err = check_disjoint(&shifted, &[2, 3], 36).unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Index);
        // Touching boxes (a shared edge, no shared element) are disjoint, in any order.
        let edge = [
            box_at((0, 2), (3, 6), &buffer),
            box_at((0, 2), (0, 3), &buffer),
        ];
        check_disjoint(&edge, &[2, 3], 36).unwrap();
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
            assert_eq!(
                check_disjoint(&regions, &[2, 3], 36).is_ok(),
                check_disjoint_runs(&regions, &[2, 3], 36).is_ok(),
                "{regions:?}"
            );
        }
    }

    #[test]
    fn overlapping_output_regions_are_refused() {
        let c = plain(&[2, 3]);
        let mut out = vec![0u8; 24];
        let err = decode_into(
            &c,
            &keys(2),
            vec![None, None],
            &[block(0), block(0)],
            &mut out,
        )
        .unwrap_err();
        assert_eq!(err.kind, crate::error::ErrorKind::Index);
        // Disjoint regions that share a bitmap word are fine.
        decode_into(
            &c,
            &keys(2),
            vec![None, None],
            &[block(0), block(3)],
            &mut out,
        )
        .unwrap();
        // The same element twice inside one chunk's region is allowed (numpy semantics).
        let pts = ChunkRegion::points(&[0, 1], Some(&[4, 4]), &[2, 3], &[2, 6]).unwrap();
        decode_into(&c, &keys(1), vec![None], &[pts], &mut out).unwrap();
        assert!(elements(&c, 5).is_err());
    }

    #[test]
    fn scalar_writes_and_empty_chunks() {
        let c = plain(&[2, 3]);
        let all = ChunkRegion::chunk_only(&[sl(0, 2), sl(0, 3)], &[2, 3]).unwrap();
        let nine = 9u16.to_ne_bytes();
        let enc = c
            .encode(
                &keys(1),
                vec![None],
                std::slice::from_ref(&all),
                Input::Scalar(&nine),
                0,
                false,
            )
            .unwrap();
        let mut out = vec![0u8; 12];
        let whole = ChunkRegion::boxed(
            &[sl(0, 2), sl(0, 3)],
            &[Some(sl(0, 2)), Some(sl(0, 3))],
            &[2, 3],
            &[2, 3],
        )
        .unwrap();
        decode_into(
            &c,
            &keys(1),
            enc.clone(),
            std::slice::from_ref(&whole),
            &mut out,
        )
        .unwrap();
        assert_eq!(as_u16(&out), vec![9; 6]);
        // Writing the fill value everywhere: the chunk is to be deleted, unless write_empty.
        let seven = 7u16.to_ne_bytes();
        let gone = c
            .encode(
                &keys(1),
                enc.clone(),
                std::slice::from_ref(&all),
                Input::Scalar(&seven),
                0,
                false,
            )
            .unwrap();
        assert_eq!(gone, vec![None]);
        let kept = c
            .encode(&keys(1), enc, &[all], Input::Scalar(&seven), 0, true)
            .unwrap();
        assert!(kept[0].is_some());
        assert!(c
            .encode(
                &keys(1),
                vec![None],
                &[whole],
                Input::Fixed(&[0; 4]),
                6,
                true
            )
            .is_err());
    }

    #[test]
    fn sharded_reads_and_partial_writes() {
        let store = MemoryStore::new();
        let c = sharded(&[4, 6], &[2, 3]);
        let value: Vec<u16> = (0..24).collect();
        let whole = |n: u64, m: u64| {
            ChunkRegion::boxed(
                &[sl(0, 4), sl(0, 6)],
                &[Some(sl(0, n)), Some(sl(0, m))],
                &[4, 6],
                &[n as usize, m as usize],
            )
            .unwrap()
        };
        c.write(
            &store,
            &keys(1),
            &[true],
            &[whole(4, 6)],
            Input::Fixed(&u16s(&value)),
            24,
            false,
        )
        .unwrap();
        // One element of inner chunk (1, 1): rows 2..4, columns 3..6.
        let one = ChunkRegion::boxed(
            &[sl(3, 4), sl(4, 5)],
            &[None, Some(sl(0, 1))],
            &[4, 6],
            &[1],
        )
        .unwrap();
        let mut out = vec![0u8; 2];
        let present = read_into(&c, &store, &keys(2), &[one.clone(), one.clone()], &mut out);
        assert!(present.is_err(), "overlapping regions");
        let present = read_into(
            &c,
            &store,
            &keys(2)[..1],
            std::slice::from_ref(&one),
            &mut out,
        )
        .unwrap();
        assert_eq!((present, as_u16(&out)), (vec![true], vec![22]));
        // A partial write keeps the other inner chunks; a missing shard reads as fill.
        c.write(
            &store,
            &keys(1),
            &[false],
            std::slice::from_ref(&one),
            Input::Scalar(&1u16.to_ne_bytes()),
            0,
            false,
        )
        .unwrap();
        let mut all = vec![0u8; 48];
        read_into(&c, &store, &keys(1), &[whole(4, 6)], &mut all).unwrap();
        let mut want = value.clone();
        want[22] = 1;
        assert_eq!(as_u16(&all), want);
        let mut missing = vec![0u8; 48];
        let present = read_into(
            &c,
            &store,
            &["nothing".to_string()],
            &[whole(4, 6)],
            &mut missing,
        )
        .unwrap();
        assert_eq!((present, as_u16(&missing)), (vec![false], vec![7; 24]));
        // Decoding the shard's bytes gives the same.
        let bytes = store.get("c/0").unwrap();
        let mut again = vec![0u8; 48];
        decode_into(&c, &keys(1), vec![bytes], &[whole(4, 6)], &mut again).unwrap();
        assert_eq!(again, all);
        // Writing the fill value over everything deletes the shard.
        c.write(
            &store,
            &keys(1),
            &[true],
            &[whole(4, 6)],
            Input::Scalar(&7u16.to_ne_bytes()),
            0,
            false,
        )
        .unwrap();
        assert!(store.get("c/0").unwrap().is_none());
    }

    #[test]
    fn sharded_points_split_by_inner_chunk() {
        let c = sharded(&[4, 6], &[2, 3]);
        let value: Vec<u16> = (100..124).collect();
        let all = ChunkRegion::chunk_only(&[sl(0, 4), sl(0, 6)], &[4, 6]).unwrap();
        let enc = c
            .encode(
                &keys(1),
                vec![None],
                &[all],
                Input::Fixed(&u16s(&value)),
                24,
                false,
            )
            .unwrap();
        // Points across all four inner chunks, out of order.
        let pts = ChunkRegion::points(&[23, 0, 9, 14], Some(&[0, 1, 2, 3]), &[4, 6], &[4]).unwrap();
        let mut out = vec![0u8; 8];
        decode_into(&c, &keys(1), enc, &[pts], &mut out).unwrap();
        assert_eq!(as_u16(&out), vec![123, 100, 109, 114]);
    }

    #[test]
    fn variable_length_strings() {
        let spec = ChunkSpec {
            shape: vec![3],
            dtype: DataType::from_name("string").unwrap(),
            fill: b"-".to_vec(),
        };
        let c = BatchCodec::new(
            &json!([{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}]),
            spec,
        )
        .unwrap();
        let region = |a: u64, b: u64| {
            ChunkRegion::boxed(
                &[sl(a, b)],
                &[Some(sl(0, b - a))],
                &[3],
                &[(b - a) as usize],
            )
            .unwrap()
        };
        let items = vec![b"x".to_vec(), "\u{e9}".as_bytes().to_vec()];
        let enc = c
            .encode(
                &keys(1),
                vec![None],
                &[region(1, 3)],
                Input::Var(&items),
                2,
                false,
            )
            .unwrap();
        let got = decode_var(&c, &keys(1), enc.clone(), &[region(0, 3)], 3).unwrap();
        assert_eq!(
            got,
            vec![b"-".to_vec(), b"x".to_vec(), "\u{e9}".as_bytes().to_vec()]
        );
        let star = c
            .encode(
                &keys(1),
                enc,
                &[region(0, 1)],
                Input::Scalar(b"*"),
                0,
                false,
            )
            .unwrap();
        let got = decode_var(&c, &keys(1), star, &[region(0, 2)], 2).unwrap();
        assert_eq!(got, vec![b"*".to_vec(), b"x".to_vec()]);
        let mut buf = vec![0u8; 6];
        assert!(decode_into(&c, &keys(1), vec![None], &[region(0, 3)], &mut buf).is_err());
    }
}
