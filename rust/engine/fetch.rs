//! Fetching what a chunk's region needs, for every store: the whole encoded
//! chunk, or, when the codec chain can decode in part ([`PartialRead`]: a
//! sharding codec, possibly behind transposes), the chunk's part map (a
//! shard's index) and then only the byte ranges of the parts the region
//! touches, neighbours coalesced; parts that decode in part themselves are
//! read the same way. Which parts a region touches, where the map is and what
//! it says are the codecs' answers: nothing here knows how a codec lays its
//! parts out.
//!
//! What arrives is handed to a [`Sink`] as [`Piece`]s: encoded bytes, the
//! level of the chain that decodes them, and their region of the output.

use std::borrow::Cow;
use std::future::Future;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use rayon::prelude::*;

use super::cached::{ReadCache, Remember};
use super::region::ChunkRegion;
use crate::cache::{part_key, CachedChunk, ChunkData};
use crate::codec::{CodecChain, PartMap, PartialCodec};
use crate::error::{Error, ErrorKind, Result};
use crate::store::{slice_ranges, ByteRange, Generation, IoMode, OpenValue, Store};

/// Encoded bytes of a chunk read in part that a store that answers at once
/// reads in one call: a few parts, so that each thread holds little of a
/// chunk at a time.
pub const READ_BATCH_BYTES: u64 = 256 * 1024;

/// Encoded bytes of a chunk or of a part of one to decode into a region of
/// the output.
#[derive(Debug)]
pub struct Piece<'r> {
    /// The chain that decodes the bytes: 0 for the array's chain, `k + 1`
    /// for the part chain of the partial codec at level `k` (see [`chain_at`]).
    pub level: usize,
    pub region: Cow<'r, ChunkRegion>,
    /// `None`: the chunk is missing (or a part not stored): the fill value.
    pub bytes: Option<Bytes>,
    /// Which part this is, for error messages (`None` for a chunk).
    pub label: Option<String>,
    /// The decoded part, from the data cache (`bytes` is then unused).
    pub decoded: Option<Arc<Vec<u8>>>,
    /// Where the decoded piece goes in the data cache.
    pub remember: Option<Remember>,
}

/// Where fetched pieces go: decoded into the output at once, or kept.
pub trait Sink: Sync {
    fn emit<'r>(&self, pieces: Vec<Piece<'r>>) -> impl Future<Output = Result<()>> + Send;
}

/// The chain that decodes pieces of `level` (see [`Piece::level`]).
pub fn chain_at(top: &CodecChain, level: usize) -> Result<&CodecChain> {
    let mut chain = top;
    for _ in 0..level {
        chain = chain
            .partial()
            .ok_or_else(|| Error::value("internal error: no part chain at this level"))?
            .codec()
            .part_chain();
    }
    Ok(chain)
}

/// Where a chunk's encoded bytes are.
pub enum Origin<'s> {
    /// Under a key of a store.
    Store { store: &'s dyn Store, key: &'s str },
    /// In hand already (`None`: the chunk is missing).
    Held(Option<Bytes>),
}

/// A chunk's encoded bytes (or a range of them, for a nested part), read
/// whole or by range. Range reads of one chunk all see one version of it.
struct Source<'o, 's> {
    origin: &'o Origin<'s>,
    opened: &'o std::sync::OnceLock<Box<dyn OpenValue + 's>>,
    /// The range of the chunk's bytes this source is (a nested part).
    span: Option<Range<u64>>,
    /// How many bytes of the chunk its part map covers, once the map of the
    /// whole chunk is known (`u64::MAX` before): what a read of the whole
    /// chunk would cost.
    extent: &'o AtomicU64,
}

impl<'o, 's> Source<'o, 's> {
    fn value(&self) -> Result<&'o (dyn OpenValue + 's)> {
        let Origin::Store { store, key } = self.origin else {
            return Err(Error::value("internal error: held bytes have no store"));
        };
        if let Some(v) = self.opened.get() {
            return Ok(v.as_ref());
        }
        let v = store.open(key)?;
        Ok(self.opened.get_or_init(|| v).as_ref())
    }

    /// `r` as a range of the whole chunk.
    fn absolute(&self, r: ByteRange) -> Result<ByteRange> {
        let Some(span) = &self.span else {
            return Ok(r);
        };
        let len = span.end - span.start;
        let (s, e) = r.resolve(len)?;
        Ok(ByteRange::span(span.start + s, e - s))
    }

    async fn read_all(&self) -> Result<Option<Bytes>> {
        match (self.origin, &self.span) {
            (Origin::Held(b), None) => Ok(b.clone()),
            (Origin::Store { store, key }, None) => store.get(key).await,
            (_, Some(span)) => {
                let r = ByteRange::span(span.start, span.end - span.start);
                Ok(self
                    .read_ranges(&[r], false)
                    .await?
                    .and_then(|mut v| v.pop()))
            }
        }
    }

    /// `ranges` of this source (`relative`: ranges of the span, else of the
    /// whole chunk).
    async fn read_ranges(
        &self,
        ranges: &[ByteRange],
        relative: bool,
    ) -> Result<Option<Vec<Bytes>>> {
        let ranges: Vec<ByteRange> = if relative {
            ranges
                .iter()
                .map(|r| self.absolute(*r))
                .collect::<Result<_>>()?
        } else {
            ranges.to_vec()
        };
        match self.origin {
            Origin::Held(None) => Ok(None),
            Origin::Held(Some(b)) => slice_ranges(b, &ranges).map(Some),
            Origin::Store { .. } => self.value()?.read_ranges(&ranges).await,
        }
    }

    /// Where this source's part map is cached: the chunk's location (and
    /// the span of a part nested in it); `None` for held bytes.
    fn map_key(&self) -> Option<String> {
        let Origin::Store { store, key } = self.origin else {
            return None;
        };
        let location = store.location(key);
        Some(match &self.span {
            None => location,
            Some(span) => format!("{location}\u{1f}{}..{}", span.start, span.end),
        })
    }

    /// The cached part map of this source, if there is one and the value is
    /// pinned to the generation it was read at (see [`OpenValue::pin`]).
    async fn cached_map(&self, key: &str) -> Result<Option<Arc<PartMap>>> {
        let Some((generation, map)) = crate::cache::part_map(key) else {
            return Ok(None);
        };
        Ok(self.value()?.pin(&generation).await?.then_some(map))
    }

    /// Cache `map`, read from this source, under the generation the read saw.
    fn remember_map(&self, key: &str, map: &Arc<PartMap>) {
        if let Some(generation) = self.generation() {
            if matches!(generation, Generation::Tag(_)) {
                crate::cache::remember_part_map(key, generation, Arc::clone(map));
            }
        }
    }

    /// The generation of the version this source's reads saw, once known.
    fn generation(&self) -> Option<Generation> {
        self.opened.get().and_then(|v| v.generation())
    }

    /// The whole value, with its generation when `versioned` (and the store
    /// can tell).
    async fn read_all_versioned(
        &self,
        versioned: bool,
    ) -> Result<(Option<Bytes>, Option<Generation>)> {
        match (self.origin, &self.span) {
            (Origin::Store { store, key }, None) if versioned => {
                let v = store.get_versioned(key).await?;
                Ok((v.value, Some(v.generation)))
            }
            _ => Ok((self.read_all().await?, None)),
        }
    }

    fn sub(&self, span: Range<u64>) -> Source<'o, 's> {
        let start = self.span.as_ref().map_or(0, |s| s.start);
        Source {
            origin: self.origin,
            opened: self.opened,
            span: Some(start + span.start..start + span.end),
            extent: self.extent,
        }
    }
}

/// How a read schedules its byte ranges.
#[derive(Debug, Clone, Copy)]
pub struct Fetching<'c> {
    /// Neighbouring ranges closer than this are fetched as one.
    pub gap: u64,
    /// Stores that answer at once read a chunk's parts in batches of
    /// about this many bytes, each decoded as it arrives; others ask for every
    /// range at once (`None`).
    pub batch: Option<u64>,
    /// Whether (and how) parts of chunks read in part go through the data cache.
    pub cache: Option<&'c ReadCache>,
    /// Read each chunk whole, in one request, even where its chain decodes in
    /// part: one version of it by construction (see [`read_chunk_consistent`]).
    pub whole: bool,
}

impl Fetching<'static> {
    pub fn for_store(store: Option<&dyn Store>) -> Self {
        match store {
            Some(s) => Fetching {
                gap: s.coalesce_gap(),
                batch: (s.io_mode() == IoMode::Blocking).then_some(READ_BATCH_BYTES),
                cache: None,
                whole: false,
            },
            None => Fetching {
                gap: 0,
                batch: None,
                cache: None,
                whole: false,
            },
        }
    }
}

/// Fetch what `region` of the chunk at `origin` needs and hand it to `sink`;
/// whether the chunk exists.
pub async fn read_chunk<S: Sink>(
    chain: &CodecChain,
    origin: &Origin<'_>,
    region: &ChunkRegion,
    fetching: Fetching<'_>,
    sink: &S,
) -> Result<bool> {
    read_chunk_once(
        chain,
        origin,
        region,
        fetching,
        sink,
        &AtomicU64::new(u64::MAX),
    )
    .await
}

async fn read_chunk_once<S: Sink>(
    chain: &CodecChain,
    origin: &Origin<'_>,
    region: &ChunkRegion,
    fetching: Fetching<'_>,
    sink: &S,
    extent: &AtomicU64,
) -> Result<bool> {
    let opened = std::sync::OnceLock::new();
    let source = Source {
        origin,
        opened: &opened,
        span: None,
        extent,
    };
    read_level(
        chain,
        0,
        &source,
        Cow::Borrowed(region),
        None,
        fetching,
        sink,
    )
    .await
}

/// Range reads of a chunk that found it rewritten meanwhile (its part map
/// and its parts of two versions: [`ErrorKind::Changed`]) are made this many
/// times; then the chunk is read whole.
pub const RANGE_ATTEMPTS: u32 = 2;

/// [`read_chunk`] for a chunk that writers may rewrite while it is read.
/// Range reads of one version (a part map, then parts read on condition of
/// its generation) fail when the chunk changes in between; the read then
/// starts again after a randomised wait, and after [`RANGE_ATTEMPTS`] such
/// failures (or at the first, when the chunk is small enough that reading
/// it whole costs less than the two round trips of another try: at most
/// twice the coalescing gap) reads the whole chunk in one request, which is
/// one version by construction, and decodes from it. A steady writer can
/// then make a read cost a few requests more, never fail it, and never mix
/// two versions. `sleep` waits (the I/O runtime's timer, or the calling
/// thread for stores that answer at once).
pub async fn read_chunk_consistent<S, W, F>(
    chain: &CodecChain,
    store: &dyn Store,
    key: &str,
    region: &ChunkRegion,
    fetching: Fetching<'_>,
    sink: &S,
    sleep: W,
) -> Result<bool>
where
    S: Sink,
    W: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let origin = &Origin::Store { store, key };
    let extent = AtomicU64::new(u64::MAX);
    // Made at the first change: most reads see none.
    let mut backoff: Option<super::commit::Backoff> = None;
    let mut changed = 0;
    loop {
        let small = extent.load(Ordering::Relaxed) <= fetching.gap.saturating_mul(2);
        let whole = fetching.whole || changed >= RANGE_ATTEMPTS || (changed > 0 && small);
        let attempt = Fetching { whole, ..fetching };
        match read_chunk_once(chain, origin, region, attempt, sink, &extent).await {
            Err(e) if e.kind == ErrorKind::Changed && !whole => {
                changed += 1;
                let backoff = backoff.get_or_insert_with(|| super::commit::Backoff::new(key));
                match backoff.next() {
                    Some(wait) => sleep(wait).await,
                    None => return Err(e),
                }
            }
            done => return done,
        }
    }
}

/// The label of part `pos` of `codec` in a chunk (or part) labelled `parent`.
fn part_label(codec: &dyn PartialCodec, parent: &Option<String>, pos: usize) -> Option<String> {
    let name = codec.part_name(pos);
    Some(match parent {
        None => name,
        Some(p) => format!("{p}, {name}"),
    })
}

/// One level of a (possibly nested) chunk read; boxed, since it recurses.
fn read_level<'a, 'o: 'a, 's: 'o, S: Sink>(
    chain: &'a CodecChain,
    level: usize,
    source: &'a Source<'o, 's>,
    region: Cow<'a, ChunkRegion>,
    label: Option<String>,
    fetching: Fetching<'a>,
    sink: &'a S,
) -> BoxFuture<'a, Result<bool>> {
    Box::pin(async move {
        let Some(partial) = chain.partial() else {
            let bytes = source.read_all().await?;
            let present = bytes.is_some();
            sink.emit(vec![Piece {
                level,
                region,
                bytes,
                label,
                decoded: None,
                remember: None,
            }])
            .await?;
            return Ok(present);
        };
        let codec = partial.codec();
        let members = partial.parts_of(&region);
        if members.is_empty() {
            return Ok(false);
        }
        let nested = codec.part_chain().partial().is_some();
        // The data cache holds parts of chunks that are values of their own
        // (not nested in another chunk) and do not decode in part themselves.
        let caching = match fetching.cache {
            Some(rc) if source.span.is_none() && !nested => source.map_key().map(|k| (rc, k)),
            _ => None,
        };
        let now = std::time::Instant::now();
        let layout = caching
            .as_ref()
            .map_or(0, |(rc, _)| rc.cache.layout(codec.part_chain().spec()));
        // Where a decoded part is cached: read at `generation`,
        // known to be current at `checked`.
        let note_at = |pos: usize, generation: Option<&Generation>, checked| {
            let (rc, chunk) = caching.as_ref()?;
            let generation = generation.filter(|g| **g != Generation::Unknown)?;
            Some(Remember {
                cache: rc.cache.clone(),
                key: part_key(chunk, pos),
                generation: generation.clone(),
                checked,
                layout,
            })
        };
        // ... read now.
        let note = |pos: usize, generation: Option<&Generation>| note_at(pos, generation, now);
        let piece = |pos: usize, region: ChunkRegion, bytes: Option<Bytes>, remember| Piece {
            level: level + 1,
            region: Cow::Owned(region),
            bytes,
            label: part_label(codec, &label, pos),
            decoded: None,
            remember,
        };
        // A missing chunk: every member is the fill value.
        let missing = |members: Vec<(usize, ChunkRegion)>, generation: Option<&Generation>| {
            sink.emit(
                members
                    .into_iter()
                    .map(|(p, r)| piece(p, r, None, note(p, generation)))
                    .collect(),
            )
        };
        let mut members = members;
        let mut served = None;
        // A chunk read whole is read at one version: nothing from the cache,
        // whose parts may be of another.
        let whole_chunk = fetching.whole && source.span.is_none();
        if let (Some((rc, chunk)), false) = (&caching, whole_chunk) {
            let (hits, rest, present) =
                serve_cached(rc, source, chunk, members, layout, now).await?;
            if !hits.is_empty() {
                served = Some(present);
                let pieces = hits
                    .into_iter()
                    .map(|(pos, r, hit)| {
                        let mut p = piece(pos, r, None, None);
                        match hit.data {
                            ChunkData::Missing => {}
                            ChunkData::Decoded(d) => p.decoded = Some(d),
                            ChunkData::Encoded(b) => {
                                p.bytes = Some(b);
                                p.remember = note_at(pos, Some(&hit.generation), hit.checked);
                            }
                        }
                        p
                    })
                    .collect();
                sink.emit(pieces).await?;
            }
            members = rest;
            if members.is_empty() {
                return Ok(served.unwrap_or(false));
            }
        }
        if whole_chunk || members.len() == codec.num_parts() && fetching.batch.is_none() {
            // Every part from a store that does not batch (a remote one): the
            // whole chunk in one request. Stores that answer at once read it
            // in batches below, so that a thread holds a few parts of it at a
            // time, not all of it. A read asked to read whole reads so too.
            // Its generation where the data cache keeps its parts, and where
            // it was read whole after a change (its map is then cached for
            // the next read by range).
            let versioned = caching.is_some() || whole_chunk;
            let (whole, generation) = source.read_all_versioned(versioned).await?;
            let Some(whole) = whole else {
                missing(members, generation.as_ref()).await?;
                return Ok(false);
            };
            let map = Arc::new(codec.map_of(&whole)?);
            if let (Some(k), Some(g @ Generation::Tag(_))) = (source.map_key(), &generation) {
                crate::cache::remember_part_map(&k, g.clone(), Arc::clone(&map));
            }
            let pieces = members
                .into_iter()
                .map(|(p, r)| {
                    let bytes = map[p]
                        .as_ref()
                        .map(|rg| whole.slice(rg.start as usize..rg.end as usize));
                    piece(p, r, bytes, note(p, generation.as_ref()))
                })
                .collect();
            sink.emit(pieces).await?;
            return Ok(true);
        }
        // The map: from the cache when the chunk is still the version it was
        // read from (the reads below are conditional on it), else read.
        let map_key = source.map_key();
        let cached = match &map_key {
            Some(k) => source.cached_map(k).await?,
            None => None,
        };
        let from_cache = cached.is_some();
        let map = match cached {
            Some(map) => map,
            None => {
                let map_bytes = source.read_ranges(&[codec.map_range()], true).await?;
                let Some(mut map_bytes) = map_bytes else {
                    missing(members, source.generation().as_ref()).await?;
                    return Ok(served.unwrap_or(false));
                };
                let len = source.span.as_ref().map(|s| s.end - s.start);
                let map = Arc::new(
                    codec.decode_map(Vec::from(map_bytes.pop().unwrap_or_default()), len)?,
                );
                if let Some(k) = &map_key {
                    source.remember_map(k, &map);
                }
                map
            }
        };
        if source.span.is_none() {
            let covered = map.iter().flatten().map(|r| r.end).max().unwrap_or(0);
            source.extent.store(covered, Ordering::Relaxed);
        }
        // The generation the parts below are read at (the reads are
        // conditional on it, or from one opened file).
        let generation = caching.as_ref().and(source.generation());
        let generation = generation
            .as_ref()
            .filter(|g| matches!(g, Generation::Tag(_)));
        // A read conditional on a cached map's generation that finds the
        // chunk changed: the map is forgotten, and the read starts again.
        let forget = |e: Error| {
            if from_cache && e.kind == ErrorKind::Changed {
                if let Some(k) = &map_key {
                    crate::cache::forget_part_map(k);
                }
            }
            e
        };
        let mut empty = Vec::new();
        let mut direct: Vec<(usize, ChunkRegion, Range<u64>)> = Vec::new();
        let mut deeper: Vec<(usize, ChunkRegion, Range<u64>)> = Vec::new();
        for (pos, r) in members {
            match map.get(pos).cloned().flatten() {
                None => empty.push(piece(pos, r, None, note(pos, generation))),
                Some(rg) if nested && !r.covers_chunk() => deeper.push((pos, r, rg)),
                Some(rg) => direct.push((pos, r, rg)),
            }
        }
        if !empty.is_empty() {
            sink.emit(empty).await?;
        }
        // Parts read ahead into the cache, in the same requests.
        let ahead = match (&caching, generation, fetching.batch) {
            (Some((rc, chunk)), Some(_), None) => read_ahead(rc, chunk, &map, &direct),
            _ => Vec::new(),
        };
        let ahead_at: std::collections::HashSet<usize> = ahead.iter().map(|(p, _)| *p).collect();
        direct.extend(ahead.into_iter().map(|(p, rg)| (p, ChunkRegion::Empty, rg)));
        direct.sort_by_key(|(_, _, rg)| rg.start);
        let groups = coalesce(&direct, fetching.gap, fetching.batch);
        let batches = batches(&groups, fetching.batch);
        let direct = &direct;
        let (ahead_at, caching) = (&ahead_at, &caching);
        // The parts of `batch` as the fill value.
        let fill = |batch: &[Group]| {
            missing(
                batch
                    .iter()
                    .flat_map(|g| &g.members)
                    .filter(|&&k| !ahead_at.contains(&direct[k].0))
                    .map(|&k| (direct[k].0, direct[k].1.clone()))
                    .collect(),
                None,
            )
        };
        // Read one batch and decode it; false when the chunk has disappeared
        // since its map was read: as zarr-python does, the parts not read yet
        // are then the fill value.
        let one = for_batches(|batch| async move {
            let ranges: Vec<ByteRange> = batch
                .iter()
                .map(|g| ByteRange::span(g.span.start, g.span.end - g.span.start))
                .collect();
            let Some(buffers) = source.read_ranges(&ranges, true).await.map_err(forget)? else {
                fill(batch).await?;
                return Ok(false);
            };
            let mut pieces = Vec::new();
            for (group, buffer) in batch.iter().zip(buffers) {
                for &k in &group.members {
                    let (pos, ref r, ref rg) = direct[k];
                    let at = (rg.start - group.span.start) as usize;
                    let end = at + (rg.end - rg.start) as usize;
                    if end > buffer.len() {
                        return Err(Error::corrupt(format!(
                            "truncated: {} bytes {}..{} are missing",
                            codec.part_name(pos),
                            rg.start,
                            rg.end
                        )));
                    }
                    if ahead_at.contains(&pos) {
                        // Kept encoded (a copy: a slice would keep the whole
                        // buffer), decoded when it is read.
                        if let (Some((rc, chunk)), Some(g)) = (caching, generation) {
                            let entry = CachedChunk {
                                data: ChunkData::Encoded(Bytes::copy_from_slice(&buffer[at..end])),
                                checked: now,
                                layout: 0,
                            };
                            rc.cache.remember(&part_key(chunk, pos), g.clone(), entry);
                        }
                        continue;
                    }
                    let bytes = Some(buffer.slice(at..end));
                    pieces.push(piece(pos, r.clone(), bytes, note(pos, generation)));
                }
            }
            sink.emit(pieces).await?;
            Ok(true)
        });
        let present = if fetching.batch.is_some() && batches.len() > 1 {
            // A store that answers at once: the batches are tasks of the
            // pool, so threads with nothing else to do read and decode a
            // chunk's later batches while its thread decodes the first.
            crate::pool::install(|| {
                batches
                    .par_iter()
                    .map(|batch| crate::store::now(one(batch))?)
                    .try_reduce(|| true, |a, b| Ok(a && b))
            })??
        } else {
            let mut present = true;
            for batch in &batches {
                if present {
                    present = one(batch).await?;
                } else {
                    fill(batch).await?;
                }
            }
            present
        };
        if !present {
            let deeper = deeper.into_iter().map(|(pos, r, _)| (pos, r)).collect();
            missing(deeper, None).await?;
            return Ok(false);
        }
        let inner = codec.part_chain();
        let reads = deeper.into_iter().map(|(pos, r, rg)| {
            let label = part_label(codec, &label, pos);
            async move {
                let sub = source.sub(rg);
                read_level(inner, level + 1, &sub, Cow::Owned(r), label, fetching, sink)
                    .await
                    .map_err(forget)
            }
        });
        futures::future::try_join_all(reads).await?;
        Ok(true)
    })
}

/// Read-ahead stops at this many bytes of parts per request.
const READ_AHEAD_BYTES: u64 = 4 << 20;

/// The parts to read ahead, with the `needed` ones (sorted by nothing in
/// particular), from a chunk of an object store read in part through the
/// cache: where this read continues the previous read of the chunk in its
/// map's order, the parts that follow it, twice as many as last time
/// (up to [`crate::cache::MAX_READ_AHEAD`] and [`READ_AHEAD_BYTES`], and an
/// eighth of the cache's budget), that are stored and not cached yet. A scan
/// part after part (a shard's inner chunks) then takes a few requests per
/// chunk instead of one per part; reads that jump about read nothing ahead.
fn read_ahead(
    rc: &ReadCache,
    chunk: &str,
    map: &PartMap,
    needed: &[(usize, ChunkRegion, Range<u64>)],
) -> Vec<(usize, Range<u64>)> {
    let (Some(first), Some(last)) = (
        needed.iter().map(|n| n.0).min(),
        needed.iter().map(|n| n.0).max(),
    ) else {
        return Vec::new();
    };
    let window = crate::cache::read_ahead_window(chunk, first, last);
    let limit = READ_AHEAD_BYTES.min(rc.cache.budget() as u64 / 8);
    let mut bytes = 0u64;
    let mut ahead = Vec::new();
    for pos in last + 1..(last + 1 + window).min(map.len()) {
        let Some(Some(rg)) = map.get(pos) else {
            continue;
        };
        bytes += rg.end - rg.start;
        if bytes > limit {
            break;
        }
        if !rc.cache.holds(&part_key(chunk, pos)) {
            ahead.push((pos, rg.clone()));
        }
    }
    ahead
}

/// A cached part served: its data, the generation it is of, and when that
/// was last known to be the chunk's current generation.
struct Hit {
    data: ChunkData,
    generation: Generation,
    checked: std::time::Instant,
}

/// The members of the chunk cached under `chunk` that the data cache
/// answers: entries fresh by the recheck mode, and entries at the chunk's
/// current generation, asked once (a `stat`, a `HEAD`: no body) when some
/// entry needs a check; the value is then pinned to that generation, so that
/// the members left to read are read at it. The hits, the members left, and
/// whether the chunk exists by what the hits say.
#[allow(clippy::type_complexity)]
async fn serve_cached(
    rc: &ReadCache,
    source: &Source<'_, '_>,
    chunk: &str,
    members: Vec<(usize, ChunkRegion)>,
    layout: u64,
    now: std::time::Instant,
) -> Result<(
    Vec<(usize, ChunkRegion, Hit)>,
    Vec<(usize, ChunkRegion)>,
    bool,
)> {
    let found: Vec<_> = members
        .iter()
        .map(|(pos, _)| {
            let entry = rc.cache.chunk(&part_key(chunk, *pos));
            entry.filter(|(_, c)| c.fits(layout))
        })
        .collect();
    if found.iter().all(Option::is_none) {
        return Ok((Vec::new(), members, false));
    }
    let check = found
        .iter()
        .flatten()
        .any(|(_, c)| !rc.fresh(c.checked, now));
    let current = match (check, source.origin) {
        (true, Origin::Store { store, key }) => {
            let current = store.generation(key).await?;
            if matches!(current, Generation::Tag(_)) {
                source.value()?.pin(&current).await?;
            }
            Some(current)
        }
        _ => None,
    };
    let mut hits = Vec::new();
    let mut rest = Vec::new();
    let mut present = false;
    for ((pos, region), entry) in members.into_iter().zip(found) {
        let Some((generation, cached)) = entry else {
            rest.push((pos, region));
            continue;
        };
        let checked = if rc.fresh(cached.checked, now) {
            cached.checked
        } else if current.as_ref() == Some(&generation) {
            let again = CachedChunk {
                data: cached.data.clone(),
                checked: now,
                layout: cached.layout,
            };
            rc.cache
                .remember(&part_key(chunk, pos), generation.clone(), again);
            now
        } else {
            rest.push((pos, region));
            continue;
        };
        present |= generation != Generation::Absent;
        let hit = Hit {
            data: cached.data,
            generation,
            checked,
        };
        hits.push((pos, region, hit));
    }
    Ok((hits, rest, present))
}

/// `f` as it is: this ties its argument to one lifetime, that of the batches
/// (a closure returning a future that borrows its argument cannot name it).
fn for_batches<'g, F, T>(f: F) -> F
where
    F: Fn(&'g [Group]) -> T,
{
    f
}

/// Byte ranges fetched as one request, and the parts in it (indices into
/// the sorted part list).
type Group = crate::store::Span;

/// Parts (sorted by offset) grouped into spans (see [`crate::store::coalesce`]).
fn coalesce(
    sorted: &[(usize, ChunkRegion, Range<u64>)],
    gap: u64,
    limit: Option<u64>,
) -> Vec<Group> {
    crate::store::coalesce(sorted.iter().map(|(_, _, r)| r.clone()), gap, limit)
}

/// Groups in consecutive batches of about `limit` bytes each (a batch holds
/// at least one group); one batch of everything when there is no limit.
fn batches(groups: &[Group], limit: Option<u64>) -> Vec<&[Group]> {
    let Some(limit) = limit else {
        return if groups.is_empty() {
            Vec::new()
        } else {
            vec![groups]
        };
    };
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (k, g) in groups.iter().enumerate() {
        let len = g.span.end - g.span.start;
        if k > start && bytes + len > limit {
            out.push(&groups[start..k]);
            (start, bytes) = (k, 0);
        }
        bytes += len;
    }
    if start < groups.len() {
        out.push(&groups[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(spans: &[Range<u64>]) -> Vec<Group> {
        spans
            .iter()
            .map(|s| Group {
                span: s.clone(),
                members: vec![0],
            })
            .collect()
    }

    #[test]
    fn coalescing_and_batches() {
        let r = |a: u64, b: u64| (0usize, ChunkRegion::Empty, a..b);
        let sorted = [r(0, 10), r(12, 20), r(100, 110), r(110, 120)];
        let spans = |gap, limit| -> Vec<Range<u64>> {
            coalesce(&sorted, gap, limit)
                .iter()
                .map(|g| g.span.clone())
                .collect()
        };
        assert_eq!(spans(5, None), vec![0..20, 100..120]);
        assert_eq!(spans(0, None).len(), 3, "touching ranges still merge");
        assert_eq!(
            spans(1000, Some(50)),
            vec![0..20, 100..120],
            "no span beyond the limit"
        );
        assert_eq!(spans(1000, None), vec![0..120]);
        assert_eq!(spans(5, Some(15)), vec![0..10, 12..20, 100..110, 110..120]);
        let g = groups(&[0..10, 10..20, 20..50, 50..55, 55..60]);
        let lens = |limit| -> Vec<usize> { batches(&g, limit).iter().map(|b| b.len()).collect() };
        assert_eq!(
            lens(Some(20)),
            vec![2, 1, 2],
            "a range larger than the limit is a batch"
        );
        assert_eq!(lens(Some(1000)), vec![5]);
        assert_eq!(lens(Some(0)), vec![1, 1, 1, 1, 1]);
        assert_eq!(lens(None), vec![5]);
        assert!(batches(&[], Some(10)).is_empty());
        assert!(batches(&[], None).is_empty());
    }
}
