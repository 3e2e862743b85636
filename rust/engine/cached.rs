//! Reads and writes through the data cache (`cache.bytes` above 0): a chunk
//! cached at a generation is returned without reading the store while its
//! recheck mode says it is fresh ([`Recheck`]); otherwise the store is asked
//! whether it changed (a `stat` of a local file, a conditional `GET` with
//! `If-None-Match` whose 304 carries no body and needs no decoding, a `HEAD`
//! of a shard), and only a changed chunk is read and decoded again.
//!
//! Whole chunks of chains without partial decoding are cached under their
//! location; the parts of a chunk read in part (a shard's inner chunks) under
//! the chunk's location and their position, at the chunk's generation (see
//! [`crate::engine::fetch`]). A write through this process stores what it
//! wrote under the generation the write produced (encoded; decoded when first
//! read), and a merge that committed on the generation it read carries the
//! parts it left alone over to the new generation.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::buffer::Output;
use super::commit::Written;
use super::place::decode_region;
use super::region::ChunkRegion;
use super::ChunkTask;
use crate::cache::{part_key, CachedChunk, ChunkData, DataCache, Recheck};
use crate::codec::CodecChain;
use crate::error::{Error, Result};
use crate::store::{Generation, Store, Versioned};

/// Whether reads of `chain`'s chunks into `out` go through `cache` (it has
/// a budget, fixed-size elements are read into a buffer).
fn on(cache: &DataCache, chain: &CodecChain, out: &Output<'_>) -> bool {
    cache.budget() > 0 && matches!(out, Output::Fixed(_)) && !chain.spec().dtype.is_var_len()
}

/// Whether reads of `chain`'s whole chunks into `out` go through `cache`
/// (chains that decode in part cache their parts instead).
pub fn applies(cache: &DataCache, chain: &CodecChain, out: &Output<'_>) -> bool {
    on(cache, chain, out) && chain.partial().is_none()
}

/// How a read uses the cache for the parts of chunks read in part.
#[derive(Debug, Clone)]
pub struct ReadCache {
    pub cache: DataCache,
    pub recheck: Recheck,
    /// When the array was opened (recheck mode "open").
    pub opened: Instant,
}

impl ReadCache {
    /// For reads of `chain`'s chunks into `out` through `cache`, by an array
    /// opened at `opened`; `None` when the cache is off or the chain does not
    /// decode in part.
    pub fn for_parts(
        cache: &DataCache,
        chain: &CodecChain,
        out: &Output<'_>,
        opened: Instant,
    ) -> Option<Self> {
        (on(cache, chain, out) && chain.partial().is_some()).then(|| ReadCache {
            cache: cache.clone(),
            recheck: cache.recheck(),
            opened,
        })
    }

    /// Whether a chunk last checked at `checked` is used without a check now.
    pub fn fresh(&self, checked: Instant, now: Instant) -> bool {
        self.recheck.fresh(checked, self.opened, now)
    }
}

/// What to cache a piece under once it is decoded: its key, the generation
/// it was read at, and when that was last known to be current.
#[derive(Debug, Clone)]
pub struct Remember {
    pub cache: DataCache,
    pub key: String,
    pub generation: Generation,
    pub checked: Instant,
    /// The layout of the decoded piece ([`DataCache::layout`]).
    pub layout: u64,
}

/// Read `task` through the cache, for an array opened at `opened`; `decode`
/// decodes a whole chunk's stored bytes (where the caller's CPU work runs).
/// Whether the chunk exists.
pub async fn read<D, F>(
    cache: &DataCache,
    chain: &CodecChain,
    store: &dyn Store,
    task: &ChunkTask,
    out: Output<'_>,
    opened: Instant,
    decode: D,
) -> Result<bool>
where
    D: FnOnce(Bytes) -> F,
    F: Future<Output = Result<Vec<u8>>>,
{
    let location = store.location(&task.key);
    let now = Instant::now();
    let layout = cache.layout(chain.spec());
    let found = cache.chunk(&location).filter(|(_, hit)| hit.fits(layout));
    let (fetched, checked) = match found {
        Some((generation, hit)) if cache.recheck().fresh(hit.checked, opened, now) => {
            (cached_value(generation, hit.data), hit.checked)
        }
        Some((generation, hit)) => match store.get_if_changed(&task.key, &generation).await? {
            None => (cached_value(generation, hit.data), now),
            Some(changed) => (Fetched::Stored(changed), now),
        },
        None => (Fetched::Stored(store.get_versioned(&task.key).await?), now),
    };
    let (generation, data) = match fetched {
        Fetched::Decoded(generation, data) => (generation, data),
        Fetched::Stored(Versioned { value, generation }) => {
            let data = match value {
                Some(bytes) => ChunkData::Decoded(Arc::new(decode(bytes).await?)),
                None => ChunkData::Missing,
            };
            (generation, data)
        }
    };
    if generation != Generation::Unknown {
        let chunk = CachedChunk {
            data: data.clone(),
            checked,
            layout,
        };
        cache.remember(&location, generation, chunk);
    }
    place(chain, &task.region, decoded(&data)?, out)
}

/// A chunk to place: from the cache, or as the store gave it.
enum Fetched {
    Decoded(Generation, ChunkData),
    Stored(Versioned),
}

/// A cached entry as what to place: bytes this process wrote are decoded
/// like bytes from the store.
fn cached_value(generation: Generation, data: ChunkData) -> Fetched {
    match data {
        ChunkData::Encoded(bytes) => Fetched::Stored(Versioned {
            value: Some(bytes),
            generation,
        }),
        data => Fetched::Decoded(generation, data),
    }
}

fn decoded(data: &ChunkData) -> Result<Option<&[u8]>> {
    match data {
        ChunkData::Missing => Ok(None),
        ChunkData::Decoded(d) => Ok(Some(d.as_slice())),
        ChunkData::Encoded(_) => Err(Error::value(
            "internal error: encoded cache entries are decoded before they are placed",
        )),
    }
}

/// Decode a piece's bytes (`None`: the fill value), cache the result as
/// `note` says, and place `region` of it into the output.
pub fn decode_and_remember(
    chain: &CodecChain,
    region: &ChunkRegion,
    encoded: Option<Bytes>,
    note: Remember,
    out: Output<'_>,
) -> Result<()> {
    let data = match encoded {
        Some(bytes) => ChunkData::Decoded(Arc::new(chain.decode_stored(bytes)?)),
        None => ChunkData::Missing,
    };
    let chunk = CachedChunk {
        data: data.clone(),
        checked: note.checked,
        layout: note.layout,
    };
    note.cache.remember(&note.key, note.generation, chunk);
    place(chain, region, decoded(&data)?, out).map(|_| ())
}

/// Copy `region` out of a decoded chunk (`None`: the fill value) into the
/// output; whether the chunk exists.
pub fn place(
    chain: &CodecChain,
    region: &ChunkRegion,
    data: Option<&[u8]>,
    out: Output<'_>,
) -> Result<bool> {
    let Some(data) = data else {
        decode_region(chain, region, None, out)?;
        return Ok(false);
    };
    let Output::Fixed(view) = out else {
        return Err(Error::value(
            "internal error: cached chunks are placed into fixed-size outputs",
        ));
    };
    let spec = chain.spec();
    let elem = spec.dtype.size;
    if data.len() != spec.nbytes() {
        return Err(Error::corrupt(format!(
            "a cached chunk has {} bytes, its decoded size is {}",
            data.len(),
            spec.nbytes()
        )));
    }
    let mut result = Ok(());
    region.for_each_run(&spec.shape, true, |f, t, n| {
        if result.is_ok() {
            result = view.write(t * elem, &data[f * elem..(f + n) * elem]);
        }
    });
    result.map(|_| true)
}

/// After `task` wrote `written` over a chunk of `chain`: the cache holds
/// what was written, under the generation it was written at (nothing, where
/// the store cannot tell generations).
pub fn wrote(
    cache: &DataCache,
    chain: &CodecChain,
    store: &dyn Store,
    task: &ChunkTask,
    written: &Written,
) {
    if cache.budget() == 0 || chain.spec().dtype.is_var_len() {
        return;
    }
    let location = store.location(&task.key);
    let now = Instant::now();
    // Encoded bytes fit every reader: no layout.
    let entry = |value: Option<Bytes>| CachedChunk {
        data: value.map_or(ChunkData::Missing, ChunkData::Encoded),
        checked: now,
        layout: 0,
    };
    let known = written.generation != Generation::Unknown;
    let Some(partial) = chain.partial() else {
        if known {
            cache.remember(
                &location,
                written.generation.clone(),
                entry(written.value.clone()),
            );
        } else {
            cache.forget(&location);
        }
        return;
    };
    let codec = partial.codec();
    // Parts are cached where the read path caches them: parts of a chain
    // with no array->array codec that do not decode in part themselves.
    let simple = partial.direct() && codec.part_chain().partial().is_none();
    let map = match &written.value {
        Some(whole) if known && simple => codec.map_of(whole).ok(),
        None if known && simple => Some(vec![None; codec.num_parts()]),
        _ => None,
    };
    let Some(map) = map else {
        forget_parts(cache, &location, codec.num_parts());
        return;
    };
    let mut touched = vec![false; codec.num_parts()];
    for (pos, _) in partial.parts_of(&task.region) {
        let Some(slot) = touched.get_mut(pos) else {
            continue;
        };
        *slot = true;
        // A copy: a slice would keep the whole chunk alive while the cache
        // counts only the part.
        let bytes = match (&written.value, map.get(pos).cloned().flatten()) {
            (Some(whole), Some(r)) => whole
                .get(r.start as usize..r.end as usize)
                .map(Bytes::copy_from_slice),
            _ => None,
        };
        cache.remember(
            &part_key(&location, pos),
            written.generation.clone(),
            entry(bytes),
        );
    }
    for (pos, touched) in touched.into_iter().enumerate() {
        let key = part_key(&location, pos);
        match (&written.merged_from, touched) {
            (_, true) => {}
            (Some(from), false) => cache.retag(&key, from, written.generation.clone()),
            // An unconditional write of part of a chunk: what it left alone
            // is whatever the store held, not known here.
            (None, false) => cache.forget(&key),
        }
    }
}

/// Forget what the cache holds of the chunk at `key` of `chain` (a write
/// that failed: what the store holds now is not known).
pub fn forget(cache: &DataCache, chain: &CodecChain, store: &dyn Store, key: &str) {
    if cache.budget() == 0 {
        return;
    }
    let location = store.location(key);
    match chain.partial() {
        None => cache.forget(&location),
        Some(partial) => forget_parts(cache, &location, partial.codec().num_parts()),
    }
}

fn forget_parts(cache: &DataCache, location: &str, n: usize) {
    for pos in 0..n {
        cache.forget(&part_key(location, pos));
    }
}
