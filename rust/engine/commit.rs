//! Read-modify-write by optimistic concurrency (TensorStore's way): a write
//! that merges into an old chunk or shard reads it with its generation,
//! merges, and commits only if the stored value is still that generation;
//! when another writer committed first, it reads and merges again, after a
//! randomised backoff, until it commits or the retries run out (a
//! `WriteConflictError`). Writes that cover whole chunks need no condition.
//!
//! `io.conditional_writes` says when conditions are used: `auto` where the
//! store can check them (local files, memory, object stores whose server
//! honours them), `require` refuses stores that cannot, `off` writes
//! unconditionally (the last writer wins, as zarr-python does).

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::time::Duration;

use bytes::Bytes;

use super::place::encode_fill;
use crate::codec::CodecChain;
use crate::error::{Error, ErrorKind, Result};
use crate::store::{Generation, Store, Versioned};

/// When writes that merge into stored values are conditional.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionalWrites {
    /// Where the store can check conditions; elsewhere the last writer wins.
    Auto,
    /// Always; a store that cannot check them is an error.
    Require,
    /// Never: the last writer wins.
    Off,
}

impl ConditionalWrites {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(Self::Auto),
            "require" => Ok(Self::Require),
            "off" => Ok(Self::Off),
            other => Err(Error::value(format!(
                "io.conditional_writes must be 'auto', 'require' or 'off', got '{other}'"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Require => "require",
            Self::Off => "off",
        }
    }
}

static MODE: AtomicU8 = AtomicU8::new(0);

/// Merges of this process that lost a race and were tried again.
static RETRIES: AtomicU64 = AtomicU64::new(0);

/// How many merges of this process lost a race and were tried again (for
/// `benches/bench_many_writers.py`).
pub fn retries() -> u64 {
    RETRIES.load(Ordering::Relaxed)
}

/// Set the process-wide mode (`zarrox.config`'s `io.conditional_writes`).
pub fn set_mode(mode: ConditionalWrites) {
    let n = match mode {
        ConditionalWrites::Auto => 0,
        ConditionalWrites::Require => 1,
        ConditionalWrites::Off => 2,
    };
    MODE.store(n, Ordering::SeqCst);
}

pub fn mode() -> ConditionalWrites {
    match MODE.load(Ordering::SeqCst) {
        1 => ConditionalWrites::Require,
        2 => ConditionalWrites::Off,
        _ => ConditionalWrites::Auto,
    }
}

/// Whether writes to `store` that merge into stored values are conditional
/// under the current mode; an error where it is `require` and the store
/// cannot check conditions.
pub async fn conditional(store: &dyn Store, key: &str) -> Result<bool> {
    match mode() {
        ConditionalWrites::Off => Ok(false),
        ConditionalWrites::Auto => store.conditional_writes().await,
        ConditionalWrites::Require => {
            if store.conditional_writes().await? {
                Ok(true)
            } else {
                Err(Error::new(
                    ErrorKind::Conflict,
                    format!(
                        "'{}': io.conditional_writes is 'require', and this store cannot \
                         write on condition (no generations, or a server that ignores \
                         If-Match/If-None-Match); set it to 'auto' or 'off' to let the last \
                         writer win",
                        store.location(key)
                    ),
                ))
            }
        }
    }
}

/// How many times a merge is tried before the write gives up.
pub const MAX_ATTEMPTS: u32 = 100;

/// Randomised exponential backoff between attempts: 1 ms doubling up to
/// 100 ms, each wait drawn between half and all of that (also between reads
/// of a value that changed while it was read).
pub(crate) struct Backoff {
    attempt: u32,
    seed: u64,
}

impl Backoff {
    pub(crate) fn new(key: &str) -> Self {
        // Writers that collided once must not collide again in lockstep:
        // seed from the process, the time and the key.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let mut seed = nanos ^ (u64::from(std::process::id()) << 32);
        for b in key.bytes() {
            seed = seed.rotate_left(5) ^ u64::from(b);
        }
        Backoff { attempt: 0, seed }
    }

    /// The wait before the next attempt, or `None` when none is left.
    pub(crate) fn next(&mut self) -> Option<Duration> {
        self.attempt += 1;
        if self.attempt >= MAX_ATTEMPTS {
            return None;
        }
        // xorshift64*
        self.seed ^= self.seed >> 12;
        self.seed ^= self.seed << 25;
        self.seed ^= self.seed >> 27;
        let r = self.seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let cap_us = (1000u64 << self.attempt.min(7)).min(100_000);
        Some(Duration::from_micros(cap_us / 2 + r % (cap_us / 2 + 1)))
    }
}

/// A wait for stores that answer at once: the calling thread sleeps.
pub fn sleep_here(d: Duration) -> std::future::Ready<()> {
    std::thread::sleep(d);
    std::future::ready(())
}

/// What a write left under a chunk's key.
#[derive(Debug, Clone)]
pub struct Written {
    /// The chunk's new encoded bytes; `None`: all fill value (deleted, left
    /// missing, or written as a fill chunk where the store cannot delete).
    pub value: Option<Bytes>,
    /// The generation of what is stored now ([`Generation::Unknown`] where
    /// the store cannot tell).
    pub generation: Generation,
    /// The generation the write merged into, when it committed on it; `None`
    /// for an unconditional write.
    pub merged_from: Option<Generation>,
}

/// Merge into the value under `key` and store the result: `merge` turns the
/// old encoded value (`None`: missing) into the new one (`None`: all fill
/// value, to delete). Conditional where [`conditional`] says, re-reading and
/// merging again on conflict; `sleep` waits between attempts. `versioned`:
/// an unconditional write asks the store for the generation it wrote (see
/// [`store_chunk`]).
pub async fn read_modify_write<M, MF, S, SF>(
    chain: &CodecChain,
    store: &dyn Store,
    key: &str,
    merge: M,
    sleep: S,
    versioned: bool,
) -> Result<Written>
where
    M: Fn(Option<Bytes>) -> MF,
    MF: Future<Output = Result<Option<Bytes>>>,
    S: Fn(Duration) -> SF,
    SF: Future<Output = ()>,
{
    if !conditional(store, key).await? {
        let old = store.get(key).await?;
        let new = merge(old).await?;
        return store_chunk(chain, store, key, new, versioned).await;
    }
    let mut backoff = Backoff::new(key);
    loop {
        let Versioned { value, generation } = store.get_versioned(key).await?;
        let new = merge(value).await?;
        if let Some(now) = commit(chain, store, key, new.clone(), &generation).await? {
            return Ok(Written {
                value: new,
                generation: now,
                merged_from: Some(generation),
            });
        }
        RETRIES.fetch_add(1, Ordering::Relaxed);
        match backoff.next() {
            Some(wait) => sleep(wait).await,
            None => {
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!(
                        "'{}' was changed by other writers each time this write merged into \
                         it ({MAX_ATTEMPTS} attempts); nothing was written",
                        store.location(key)
                    ),
                ))
            }
        }
    }
}

/// Store a merge's result if the value is still `expected`: the generation
/// stored, `None` when the condition failed. An all-fill result deletes the
/// chunk where the store can delete on condition, and is written as a fill
/// chunk where it cannot (an object store), so that the commit stays
/// conditional.
async fn commit(
    chain: &CodecChain,
    store: &dyn Store,
    key: &str,
    new: Option<Bytes>,
    expected: &Generation,
) -> Result<Option<Generation>> {
    match new {
        Some(bytes) => store.set_if(key, bytes, expected).await,
        // Missing before and all fill now: nothing to store.
        None if *expected == Generation::Absent => Ok(Some(Generation::Absent)),
        None if store.supports_deletes() && store.conditional_deletes() => Ok(store
            .delete_if(key, expected)
            .await?
            .then_some(Generation::Absent)),
        None => store.set_if(key, encode_fill(chain)?, expected).await,
    }
}

/// Store a chunk's new bytes unconditionally; `None`: the chunk is all fill
/// value and is deleted (or, where the store cannot delete, written as such
/// if it exists). With `versioned`, the generation written is asked for (a
/// data cache keeps the chunk under it); without, it is not (a local file's
/// `fstat` costs a tenth of a small chunk's write) and is unknown.
pub async fn store_chunk(
    chain: &CodecChain,
    store: &dyn Store,
    key: &str,
    new: Option<Bytes>,
    versioned: bool,
) -> Result<Written> {
    let generation = match &new {
        Some(bytes) if versioned => {
            store
                .set_if(key, bytes.clone(), &Generation::Unknown)
                .await?
        }
        Some(bytes) => {
            store.set(key, bytes.clone()).await?;
            Some(Generation::Unknown)
        }
        None if store.supports_deletes() => {
            store.delete(key).await?;
            Some(Generation::Absent)
        }
        None if store.exists(key).await? => {
            store
                .set_if(key, encode_fill(chain)?, &Generation::Unknown)
                .await?
        }
        None => Some(Generation::Absent),
    };
    Ok(Written {
        value: new,
        generation: generation.unwrap_or(Generation::Unknown),
        merged_from: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_backoff_is_bounded_and_grows() {
        for m in ["auto", "require", "off"] {
            assert_eq!(ConditionalWrites::parse(m).unwrap().name(), m);
        }
        let err = ConditionalWrites::parse("yes").unwrap_err();
        assert!(err.message.contains("'auto', 'require' or 'off'"), "{err}");
        let mut b = Backoff::new("a/c/0");
        let waits: Vec<Duration> = std::iter::from_fn(|| b.next()).collect();
        assert_eq!(waits.len() as u32, MAX_ATTEMPTS - 1);
        assert!(waits[0] >= Duration::from_millis(1) && waits[0] <= Duration::from_millis(2));
        assert!(waits
            .iter()
            .all(|w| *w >= Duration::from_micros(500) && *w <= Duration::from_millis(100)));
        assert!(waits[20] >= Duration::from_millis(50));
    }
}
