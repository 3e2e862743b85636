//! The benchmarks' floors: what reading and writing a whole array cannot be
//! much faster than (every stored chunk decoded on the pool with nothing
//! placed anywhere; every chunk encoded again with nothing stored). Used by
//! `benches/run_all.py` and `zarrox bench`, through `_core.decode_stored_chunks`
//! and `_core.encode_floor`; no read or write path goes through here.

use std::sync::Arc;

use rayon::prelude::*;

use crate::array::ArrayCore;
use crate::codec::CodecChain;
use crate::error::{Error, Result};
use crate::pool::{self, pool};
use crate::store;

/// Fetch and decode every stored chunk on the pool (the inner chunks of
/// shards one by one) and hand each to `each` with the chain of the chunk
/// it came from (of the shard, for an inner chunk); the results in no
/// particular order.
fn map_stored_chunks<T: Send>(
    a: &ArrayCore,
    each: impl Fn(&Arc<CodecChain>, Vec<u8>) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let store = a.rust_store()?;
    let keys = a.stored_chunks()?;
    let one = |(key, coords): &(String, Vec<u64>)| -> Result<Vec<T>> {
        let at = |e: Error| e.context(format!("chunk '{key}'"));
        let chain = a.chain_of(coords).map_err(at)?;
        let Some(encoded) = store::block_on(store, store.get(key))?.map_err(at)? else {
            return Ok(Vec::new());
        };
        match chain.parts() {
            None => {
                let decoded = chain.decode_stored(encoded).map_err(at)?;
                Ok(vec![each(&chain, decoded).map_err(at)?])
            }
            Some(codec) => {
                let map = codec.map_of(&encoded).map_err(at)?;
                map.par_iter()
                    .flatten()
                    .map(|r| {
                        let bytes = encoded.slice(r.start as usize..r.end as usize);
                        let decoded = codec.part_chain().decode_stored(bytes).map_err(at)?;
                        each(&chain, decoded).map_err(at)
                    })
                    .collect()
            }
        }
    };
    let per_key: Vec<Vec<T>> = pool::install(|| keys.par_iter().map(one).collect::<Result<_>>())??;
    Ok(per_key.into_iter().flatten().collect())
}

/// The decode floor: fetch and decode every stored chunk on the pool with
/// no scattering into an output (the inner chunks of shards one by one).
/// Returns (chunks decoded, decoded bytes); read-all cannot be much faster.
pub fn decode_stored_chunks(a: &ArrayCore) -> Result<(usize, usize)> {
    let sizes = map_stored_chunks(a, |_, decoded| Ok(decoded.len()))?;
    Ok((sizes.len(), sizes.iter().sum()))
}

/// The compression floor: every stored chunk (inner chunk of a shard)
/// decoded once, then encoded again with its chain on the pool `repeat`
/// times, nothing gathered, assembled or stored. Returns (chunks, encoded
/// bytes of one pass, seconds of each pass); write-all cannot be much
/// faster.
pub fn encode_floor(a: &ArrayCore, repeat: usize) -> Result<(usize, usize, Vec<f64>)> {
    let chunks = map_stored_chunks(a, |chain, decoded| Ok((Arc::clone(chain), decoded)))?;
    let pool = pool()?;
    let mut seconds = Vec::with_capacity(repeat);
    let mut encoded = 0;
    for _ in 0..repeat {
        let start = std::time::Instant::now();
        let sizes: Vec<usize> = pool.install(|| {
            chunks
                .par_iter()
                .map(|(chain, decoded)| {
                    let chain = chain.parts().map_or(&**chain, |p| p.part_chain());
                    chain.encode(decoded.clone()).map(|e| e.len())
                })
                .collect::<Result<_>>()
        })?;
        seconds.push(start.elapsed().as_secs_f64());
        encoded = sizes.iter().sum();
    }
    Ok((chunks.len(), encoded, seconds))
}
