//! Reads through the decoded-chunk cache (`cache.bytes` above 0): a chunk
//! cached at a generation is returned without reading the store while its
//! recheck mode says it is fresh ([`Recheck`]); otherwise the store is asked
//! whether it changed (a `stat` of a local file, a conditional `GET` with
//! `If-None-Match` whose 304 carries no body and needs no decoding), and
//! only a changed chunk is read and decoded again.
//!
//! Whole chunks of chains without partial decoding are cached (a sharded
//! array's shards are read in part, with their indexes cached instead).

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::buffer::Output;
use super::place::decode_region;
use super::ChunkTask;
use crate::cache::{self, CachedChunk};
use crate::codec::CodecChain;
use crate::error::{Error, Result};
use crate::store::{Generation, Store, Versioned};

/// Whether reads of `chain`'s chunks into `out` go through the chunk cache.
pub fn applies(chain: &CodecChain, out: &Output<'_>) -> bool {
    cache::chunk_budget() > 0
        && matches!(out, Output::Fixed(_))
        && chain.partial().is_none()
        && !chain.spec().dtype.is_var_len()
}

/// Read `task` through the cache, for an array opened at `opened`; `decode`
/// decodes a whole chunk's stored bytes (where the caller's CPU work runs).
/// Whether the chunk exists.
pub async fn read<D, F>(
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
    let fetched = match cache::chunk(&location) {
        Some((_, hit)) if cache::chunk_recheck().fresh(hit.checked, opened, now) => {
            return place(chain, task, hit.data.as_deref().map(Vec::as_slice), out);
        }
        Some((generation, hit)) => match store.get_if_changed(&task.key, &generation).await? {
            None => {
                let data = hit.data.clone();
                cache::remember_chunk(
                    &location,
                    generation,
                    CachedChunk {
                        checked: now,
                        ..hit
                    },
                );
                return place(chain, task, data.as_deref().map(Vec::as_slice), out);
            }
            Some(changed) => changed,
        },
        None => store.get_versioned(&task.key).await?,
    };
    let Versioned { value, generation } = fetched;
    let data = match value {
        Some(bytes) => Some(Arc::new(decode(bytes).await?)),
        None => None,
    };
    if generation != Generation::Unknown {
        let chunk = CachedChunk {
            data: data.clone(),
            checked: now,
        };
        cache::remember_chunk(&location, generation, chunk);
    }
    place(chain, task, data.as_deref().map(Vec::as_slice), out)
}

/// Copy the task's region out of a decoded chunk (`None`: the fill value)
/// into the output; whether the chunk exists.
fn place(
    chain: &CodecChain,
    task: &ChunkTask,
    data: Option<&[u8]>,
    out: Output<'_>,
) -> Result<bool> {
    let Some(data) = data else {
        decode_region(chain, &task.region, None, out)?;
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
    task.region.for_each_run(&spec.shape, true, |f, t, n| {
        if result.is_ok() {
            result = view.write(t * elem, &data[f * elem..(f + n) * elem]);
        }
    });
    result.map(|_| true)
}
