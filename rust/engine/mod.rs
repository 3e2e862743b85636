//! The engine: one read and one write path for both front doors (zarrox's
//! own API and zarr-python's codec pipeline) and every store.
//!
//! A front door turns a selection into [`ChunkTask`]s: a chunk's key and its
//! region (which elements of the chunk, and where they are in the caller's
//! buffer). The engine fetches what each task needs ([`fetch`]: the whole
//! chunk, or a shard's index and only the inner chunks needed) and decodes it
//! straight into the output ([`place`]); writes fetch the old chunk only when
//! the region does not cover it, encode, and store.
//!
//! How requests are scheduled depends on the store ([`IoMode`]):
//! - a store that answers at once (local disk, memory, zip) is read by the
//!   decoding threads, one chunk per thread at a time, decoding as it reads;
//! - an object store is read with many requests in flight on the I/O runtime
//!   (as many as [`crate::pool::io_concurrency`] says, independent of the
//!   number of threads), each arrival decoded on the worker pool;
//! - a store the caller reads itself gets its requests in rounds
//!   ([`session::ReadSession`]).

pub mod buffer;
pub mod cached;
pub mod commit;
pub mod fetch;
pub mod jobs;
pub mod place;
pub use crate::region;
pub mod session;

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use commit::store_chunk;
use futures::future::BoxFuture;
use futures::StreamExt;
use rayon::prelude::*;

use crate::cache::DataCache;
use crate::codec::CodecChain;
use crate::error::{Error, Result};
use crate::pool::{self, io_concurrency, pool};
use crate::store::{IoMode, ReadInto, Store};
pub use buffer::{Input, OutView, Output};
use fetch::{chain_at, read_chunk, read_chunk_consistent, Fetching, Origin, Piece, Sink};
pub use place::{decode_region, encode_region, ScalarMemo};
pub use region::{check_disjoint, ChunkRegion};

/// One chunk's part of a read or write.
#[derive(Debug, Clone)]
pub struct ChunkTask {
    /// The chunk's store key.
    pub key: String,
    pub region: ChunkRegion,
    /// For writes: the caller knows the region covers the chunk, so the old
    /// chunk is not read (also derived from the region where it can be).
    pub complete: bool,
    /// The chunk's own codec chain where chunks differ in shape (a
    /// rectilinear grid); `None`: the batch's chain.
    pub chain: Option<Arc<CodecChain>>,
}

impl ChunkTask {
    pub fn new(key: String, region: ChunkRegion) -> Self {
        ChunkTask {
            key,
            region,
            complete: false,
            chain: None,
        }
    }

    /// The codec chain of this task's chunk: its own, or the batch's.
    pub fn chain<'a>(&'a self, batch: &'a CodecChain) -> &'a CodecChain {
        self.chain.as_deref().unwrap_or(batch)
    }

    /// Whether a write of this task over a chunk of `chain` must read the
    /// old chunk first. As zarr-python: a chunk whose part inside the array
    /// the region covers is replaced without reading it (an edge chunk's
    /// cells past the array's end become the fill value), but a shard that a
    /// lone sharding codec updates inner chunk by inner chunk is read unless
    /// the region covers all of it, past the end included: the inner chunks
    /// there (which a shrinking resize leaves) are kept.
    pub fn needs_old(&self, chain: &CodecChain) -> bool {
        match (&self.region, chain.parts()) {
            (ChunkRegion::Empty, _) => false,
            (region, Some(_)) => !region.covers_full_chunk(&chain.spec().shape),
            (region, None) => !(self.complete || region.covers_chunk()),
        }
    }

    fn at(&self) -> impl Fn(Error) -> Error + '_ {
        move |e| e.context(format!("chunk '{}'", self.key))
    }
}

/// Where a task's CPU work (decoding, encoding) runs: on the thread that
/// runs the task (the decoding threads read stores that answer at once
/// themselves), or as a job on the worker pool (tasks of an object store run
/// on the I/O runtime).
#[derive(Clone, Copy)]
enum Worker<'s, 'env> {
    Here,
    Pool(Spawn<'s, 'env>),
}

/// How jobs reach the worker pool: a rayon scope (a blocking call, which
/// waits for its jobs before it returns), or the [`jobs::Jobs`] of an
/// awaitable read or write, which waits for its jobs when it is dropped.
#[derive(Clone, Copy)]
pub(crate) enum Spawn<'s, 'env> {
    Scope(&'s rayon::Scope<'env>),
    Jobs(&'s jobs::Jobs<'env>),
}

/// Run `f` as a job on the worker pool; its result arrives on the channel
/// (or the channel is closed, when the job panicked).
fn on_pool<'env, R: Send + 'env>(
    spawn: Spawn<'_, 'env>,
    f: impl FnOnce() -> R + Send + 'env,
) -> futures::channel::oneshot::Receiver<R> {
    let (tx, rx) = futures::channel::oneshot::channel();
    match spawn {
        Spawn::Scope(scope) => scope.spawn(move |_| {
            let _ = tx.send(f());
        }),
        Spawn::Jobs(jobs) => jobs.spawn(move || {
            let _ = tx.send(f());
        }),
    }
    rx
}

fn lost(_: futures::channel::oneshot::Canceled) -> Error {
    Error::value("internal error: a decoding job was lost")
}

/// Decode one piece into the output (and into the data cache, where it
/// goes there); errors name the inner chunk.
fn decode_piece(top: &CodecChain, p: Piece<'_>, out: Output<'_>) -> Result<()> {
    let chain = chain_at(top, p.level)?;
    let done = match (p.decoded, p.remember) {
        (Some(data), _) => cached::place(chain, &p.region, Some(&data), out).map(|_| ()),
        (None, Some(note)) => cached::decode_and_remember(chain, &p.region, p.bytes, note, out),
        (None, None) => decode_region(chain, &p.region, p.bytes, out),
    };
    done.map_err(|e| match &p.label {
        Some(l) => e.context(l),
        None => e,
    })
}

/// Decode pieces into the output, in parallel on the pool when there are several.
fn decode_pieces(top: &CodecChain, pieces: Vec<Piece<'_>>, out: Output<'_>) -> Result<()> {
    let one = |p: Piece<'_>| decode_piece(top, p, out);
    if pieces.len() <= 1 {
        return pieces.into_iter().try_for_each(one);
    }
    pool::install(|| pieces.into_par_iter().try_for_each(one))?
}

/// Pieces decoded into the output as they arrive, where `worker` says.
struct DecodeSink<'s, 'a> {
    top: &'a CodecChain,
    out: Output<'a>,
    worker: Worker<'s, 'a>,
}

impl Sink for DecodeSink<'_, '_> {
    fn emit<'r>(&self, pieces: Vec<Piece<'r>>) -> impl Future<Output = Result<()>> + Send {
        use futures::future::Either;
        let Worker::Pool(spawn) = self.worker else {
            return Either::Left(std::future::ready(decode_pieces(
                self.top, pieces, self.out,
            )));
        };
        // A job on the pool owns its pieces (their regions made owned), so it
        // can run while the task waits for it.
        let owned: Vec<Piece<'static>> = pieces.into_iter().map(Piece::into_owned).collect();
        let (top, out) = (self.top, self.out);
        let job = on_pool(spawn, move || decode_pieces(top, owned, out));
        Either::Right(async move { job.await.map_err(lost)? })
    }
}

impl Piece<'_> {
    fn into_owned(self) -> Piece<'static> {
        Piece {
            level: self.level,
            region: std::borrow::Cow::Owned(self.region.into_owned()),
            bytes: self.bytes,
            label: self.label,
            decoded: self.decoded,
            remember: self.remember,
        }
    }
}

/// Read `tasks` of chunks of `chain` from `store` into `out`; which chunks exist.
pub fn read(
    chain: &CodecChain,
    store: &dyn Store,
    tasks: &[ChunkTask],
    out: Output<'_>,
) -> Result<Vec<bool>> {
    let now = std::time::Instant::now();
    read_since(chain, store, tasks, out, now, &DataCache::process())
}

/// [`read`] through `cache`, for an array opened at `opened` (what the
/// cache's recheck mode "open" compares with).
pub fn read_since(
    chain: &CodecChain,
    store: &dyn Store,
    tasks: &[ChunkTask],
    out: Output<'_>,
    opened: std::time::Instant,
    cache: &DataCache,
) -> Result<Vec<bool>> {
    let base = Fetching::for_store(Some(store));
    // Shards' inner chunks go through the data cache where it is on.
    let shards = |chain: &CodecChain| cached::ReadCache::for_parts(cache, chain, &out, opened);
    match store.io_mode() {
        IoMode::Blocking => run_blocking(tasks, |task| {
            let chain = task.chain(chain);
            let shards = shards(chain);
            let fetching = Fetching {
                cache: shards.as_ref(),
                ..base
            };
            if cached::applies(cache, chain, &out) {
                let decode = |b| std::future::ready(chain.decode_stored(b));
                return crate::store::now(cached::read(
                    cache, chain, store, task, out, opened, decode,
                ))?;
            }
            if let Some(present) = read_into_output(chain, store, task, out)? {
                return Ok(present);
            }
            let sink = DecodeSink {
                top: chain,
                out,
                worker: Worker::Here,
            };
            let (key, region, sleep) = (&task.key, &task.region, commit::sleep_here);
            let read = read_chunk_consistent(chain, store, key, region, fetching, &sink, sleep);
            crate::store::now(read)?
        }),
        IoMode::Concurrent => run_concurrent(tasks, |task, spawn| {
            read_one_concurrent(chain, store, task, out, opened, cache, spawn)
        }),
        IoMode::Caller => Err(Error::value(
            "internal error: a store the caller reads is read through a session",
        )),
    }
}

/// The future that reads `task` from an object store into `out` on the I/O
/// runtime, its decoding a job on the worker pool (`spawn`).
fn read_one_concurrent<'s, 't>(
    chain: &'t CodecChain,
    store: &'t dyn Store,
    task: &'t ChunkTask,
    out: Output<'t>,
    opened: std::time::Instant,
    cache: &'t DataCache,
    spawn: Spawn<'s, 't>,
) -> BoxFuture<'s, Result<bool>> {
    let base = Fetching::for_store(Some(store));
    let chain = task.chain(chain);
    let shards = cached::ReadCache::for_parts(cache, chain, &out, opened);
    let sink = DecodeSink {
        top: chain,
        out,
        worker: Worker::Pool(spawn),
    };
    Box::pin(async move {
        let fetching = Fetching {
            cache: shards.as_ref(),
            ..base
        };
        if cached::applies(cache, chain, &out) {
            let decode = |b| async move {
                on_pool(spawn, move || chain.decode_stored(b))
                    .await
                    .map_err(lost)?
            };
            return cached::read(cache, chain, store, task, out, opened, decode).await;
        }
        let (key, region, sleep) = (&task.key, &task.region, tokio::time::sleep);
        read_chunk_consistent(chain, store, key, region, fetching, &sink, sleep).await
    })
}

/// [`read_since`] from an object store as a future that runs on the I/O
/// runtime (no thread waits for the network); decoding runs on the worker
/// pool.
///
/// # Safety
/// The future must not be leaked (`mem::forget`) while what it borrows is
/// freed: its decoding jobs may still use that data, and only dropping the
/// future (or running it to its end) waits for them. Leaking the future with
/// the data it borrows (both owned by one outer future) is fine.
pub(crate) async unsafe fn read_concurrent(
    chain: &CodecChain,
    store: &dyn Store,
    tasks: &[ChunkTask],
    out: Output<'_>,
    opened: std::time::Instant,
    cache: &DataCache,
) -> Result<Vec<bool>> {
    // SAFETY: the caller's contract is this function's.
    unsafe {
        run_concurrent_async(tasks, |task, spawn| {
            read_one_concurrent(chain, store, task, out, opened, cache, spawn)
        })
    }
    .await
}

/// Decode chunks the caller already has (`encoded[i]` for `tasks[i]`;
/// `None`: missing, the fill value) into `out`.
pub fn decode(
    chain: &CodecChain,
    tasks: &[ChunkTask],
    encoded: Vec<Option<Bytes>>,
    out: Output<'_>,
) -> Result<()> {
    check_batch(tasks.len(), encoded.len())?;
    let origins: Vec<Origin<'_>> = encoded.into_iter().map(Origin::Held).collect();
    let indexed: Vec<(usize, &ChunkTask)> = tasks.iter().enumerate().collect();
    let fetching = Fetching::for_store(None);
    let one = |&(i, task): &(usize, &ChunkTask)| -> Result<bool> {
        let chain = task.chain(chain);
        let sink = DecodeSink {
            top: chain,
            out,
            worker: Worker::Here,
        };
        crate::store::now(read_chunk(
            chain,
            &origins[i],
            &task.region,
            fetching,
            &sink,
        ))
        .and_then(|r| r)
        .map_err(task.at())
    };
    if indexed.len() <= 1 {
        indexed.iter().map(one).collect::<Result<Vec<_>>>()?;
    } else {
        pool::install(|| indexed.par_iter().map(one).collect::<Result<Vec<_>>>())??;
    }
    Ok(())
}

/// Uncompressed chunks that land whole and contiguous in the output are read
/// from a store that answers at once straight into it: `Some(present)` when
/// that was done (or the chunk is missing and its region was filled).
fn read_into_output(
    chain: &CodecChain,
    store: &dyn Store,
    task: &ChunkTask,
    out: Output<'_>,
) -> Result<Option<bool>> {
    let Output::Fixed(view) = out else {
        return Ok(None);
    };
    if !chain.is_passthrough() {
        return Ok(None);
    }
    let spec = chain.spec();
    let Some(offset) = task.region.contiguous_offset(&spec.shape) else {
        return Ok(None);
    };
    // SAFETY: this chunk's output region is exactly these bytes, and the
    // regions of one read are disjoint (see `OutView`); the slice is gone
    // before anything else touches the region.
    let dst = unsafe { view.slice(offset * spec.dtype.size, spec.nbytes())? };
    match store.read_into(&task.key, dst)? {
        ReadInto::Read => Ok(Some(true)),
        ReadInto::Missing => {
            decode_region(chain, &task.region, None, out)?;
            Ok(Some(false))
        }
        // Another size (the normal path reports it) or a store that cannot.
        ReadInto::NotRead => Ok(None),
    }
}

/// Run `one` for every task on the decoding threads (on the calling thread
/// when there is one task: a hop to the pool costs more than it saves);
/// errors name the chunk.
fn run_blocking<T: Send>(
    tasks: &[ChunkTask],
    one: impl Fn(&ChunkTask) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let each = |task: &ChunkTask| one(task).map_err(task.at());
    if tasks.len() <= 1 {
        return tasks.iter().map(each).collect();
    }
    pool::install(|| tasks.par_iter().map(each).collect())?
}

/// Run the future `one` makes for every task on the I/O runtime, many in
/// flight at once; CPU work they hand to the pool runs on the worker pool.
/// Results in task order; errors name the chunk.
fn run_concurrent<'t, T, F>(tasks: &'t [ChunkTask], one: F) -> Result<Vec<T>>
where
    T: Send,
    F: for<'s> Fn(&'t ChunkTask, Spawn<'s, 't>) -> BoxFuture<'s, Result<T>> + Sync,
{
    let pool = pool()?;
    pool.in_place_scope(|scope| {
        crate::store::runtime::block_on(in_flight(tasks, |task| one(task, Spawn::Scope(scope))))?
    })
}

/// [`run_concurrent`] as a future, on whatever runtime polls it; its CPU
/// work runs as [`jobs::Jobs`] on the worker pool.
///
/// # Safety
/// As [`read_concurrent`]: the future is not leaked while what it borrows
/// for `'t` is freed.
async unsafe fn run_concurrent_async<'t, T, F>(tasks: &'t [ChunkTask], one: F) -> Result<Vec<T>>
where
    T: Send,
    F: for<'s> Fn(&'t ChunkTask, Spawn<'s, 't>) -> BoxFuture<'s, Result<T>> + Sync,
{
    // SAFETY: `jobs` is a local of this future, declared after everything its
    // jobs borrow (`tasks`, and what `one` captures, all borrowed for `'t`
    // from outside this future): it is dropped, and waits for every job it
    // started, when the future ends or is dropped, before the borrows end.
    // The one way around that, leaking this future, is ruled out by the
    // caller's contract.
    let jobs = unsafe { jobs::Jobs::new()? };
    in_flight(tasks, |task| one(task, Spawn::Jobs(&jobs))).await
}

/// The futures `one` makes for `tasks`, at most [`io_concurrency`] in flight;
/// results in task order, errors naming the chunk. (A loop over
/// `FuturesUnordered` rather than a stream adaptor with a closure: the
/// compiler can then tell that an awaitable read's future is `Send`.)
async fn in_flight<'t, 's, T>(
    tasks: &'t [ChunkTask],
    one: impl Fn(&'t ChunkTask) -> BoxFuture<'s, Result<T>>,
) -> Result<Vec<T>>
where
    't: 's,
{
    let limit = io_concurrency().max(1);
    let mut waiting = tasks.iter().enumerate();
    let mut running = futures::stream::FuturesUnordered::new();
    let mut results: Vec<(usize, T)> = Vec::with_capacity(tasks.len());
    loop {
        while running.len() < limit {
            let Some((i, task)) = waiting.next() else {
                break;
            };
            running.push(numbered(i, task, one(task)));
        }
        match running.next().await {
            Some(done) => results.push(done?),
            None => break,
        }
    }
    results.sort_unstable_by_key(|(i, _)| *i);
    Ok(results.into_iter().map(|(_, v)| v).collect())
}

/// `fut`'s value with its task's number, or its error naming the chunk.
async fn numbered<T>(
    i: usize,
    task: &ChunkTask,
    fut: BoxFuture<'_, Result<T>>,
) -> Result<(usize, T)> {
    match fut.await {
        Ok(v) => Ok((i, v)),
        Err(e) => Err(task.at()(e)),
    }
}

/// Write `value`'s regions (`tasks`) over the chunks of `chain` in `store`:
/// old chunks are read only where a region does not cover its chunk; a chunk
/// that ends up all fill value is deleted unless `write_empty`.
pub fn write(
    chain: &CodecChain,
    store: &dyn Store,
    tasks: &[ChunkTask],
    value: Input<'_>,
    write_empty: bool,
) -> Result<()> {
    write_cached(
        chain,
        store,
        tasks,
        value,
        write_empty,
        &DataCache::process(),
    )
}

/// [`write`] through `cache`: it holds what each task wrote.
pub fn write_cached(
    chain: &CodecChain,
    store: &dyn Store,
    tasks: &[ChunkTask],
    value: Input<'_>,
    write_empty: bool,
    cache: &DataCache,
) -> Result<()> {
    let memo = ScalarMemo::default();
    // Writes ask for the generations they produce only for a cache to keep.
    let versioned = cache.budget() > 0;
    // The data cache holds what each task wrote, or forgets the chunk when
    // the write failed.
    let settle = |chain: &CodecChain, task: &ChunkTask, written: Result<commit::Written>| {
        settle_in_cache(cache, store, chain, task, written)
    };
    match store.io_mode() {
        IoMode::Blocking => {
            run_blocking(tasks, |task| {
                if matches!(task.region, ChunkRegion::Empty) {
                    return Ok(());
                }
                let chain = task.chain(chain);
                let region = &task.region;
                let merge = |old| {
                    std::future::ready(encode_region(chain, region, old, value, write_empty, &memo))
                };
                let written = if task.needs_old(chain) {
                    crate::store::now(commit::read_modify_write(
                        chain,
                        store,
                        &task.key,
                        merge,
                        commit::sleep_here,
                        versioned,
                    ))
                    .and_then(|w| w)
                } else {
                    encode_region(chain, region, None, value, write_empty, &memo).and_then(|new| {
                        crate::store::now(store_chunk(chain, store, &task.key, new, versioned))
                            .and_then(|w| w)
                    })
                };
                settle(chain, task, written)
            })?;
        }
        IoMode::Concurrent => {
            let settle = &settle;
            run_concurrent(tasks, |task, spawn| {
                write_one_concurrent(
                    chain,
                    store,
                    task,
                    value,
                    write_empty,
                    &memo,
                    versioned,
                    settle,
                    spawn,
                )
            })?;
        }
        IoMode::Caller => {
            return Err(Error::value(
                "internal error: a store the caller writes gets encoded chunks",
            ))
        }
    }
    store.flush()
}

/// The data cache holds what `task` wrote, or forgets the chunk when the
/// write failed; the write's result without what it wrote.
fn settle_in_cache(
    cache: &DataCache,
    store: &dyn Store,
    chain: &CodecChain,
    task: &ChunkTask,
    written: Result<commit::Written>,
) -> Result<()> {
    match &written {
        Ok(w) => cached::wrote(cache, chain, store, task, w),
        Err(_) => cached::forget(cache, chain, store, &task.key),
    }
    written.map(|_| ())
}

/// What a write tells the data cache once a chunk is stored (or failed).
type Settle<'a> =
    dyn Fn(&CodecChain, &ChunkTask, Result<commit::Written>) -> Result<()> + Sync + 'a;

/// The future that writes `task` of `value` to an object store on the I/O
/// runtime, its encoding a job on the worker pool (`spawn`); `settle` tells
/// the data cache what it wrote.
#[allow(clippy::too_many_arguments)]
fn write_one_concurrent<'s, 't>(
    chain: &'t CodecChain,
    store: &'t dyn Store,
    task: &'t ChunkTask,
    value: Input<'t>,
    write_empty: bool,
    memo: &'t ScalarMemo,
    versioned: bool,
    settle: &'t Settle<'t>,
    spawn: Spawn<'s, 't>,
) -> BoxFuture<'s, Result<()>> {
    Box::pin(async move {
        if matches!(task.region, ChunkRegion::Empty) {
            return Ok(());
        }
        let chain = task.chain(chain);
        let region = &task.region;
        let merge = |old| async move {
            on_pool(spawn, move || {
                encode_region(chain, region, old, value, write_empty, memo)
            })
            .await
            .map_err(lost)?
        };
        let written = if task.needs_old(chain) {
            commit::read_modify_write(
                chain,
                store,
                &task.key,
                merge,
                tokio::time::sleep,
                versioned,
            )
            .await
        } else {
            match merge(None).await {
                Ok(new) => store_chunk(chain, store, &task.key, new, versioned).await,
                Err(e) => Err(e),
            }
        };
        settle(chain, task, written)
    })
}

/// [`write_cached`] to an object store as a future that runs on the I/O
/// runtime; encoding runs on the worker pool.
///
/// # Safety
/// As [`read_concurrent`]: the future is not leaked while what it borrows is
/// freed.
pub(crate) async unsafe fn write_concurrent(
    chain: &CodecChain,
    store: &dyn Store,
    tasks: &[ChunkTask],
    value: Input<'_>,
    write_empty: bool,
    cache: &DataCache,
) -> Result<()> {
    let memo = ScalarMemo::default();
    let versioned = cache.budget() > 0;
    let settle = |chain: &CodecChain, task: &ChunkTask, written: Result<commit::Written>| {
        settle_in_cache(cache, store, chain, task, written)
    };
    // SAFETY: the caller's contract is this function's; `memo` and `settle`
    // are declared before the future that borrows them, so they outlive its
    // jobs (see `run_concurrent_async`).
    unsafe {
        run_concurrent_async(tasks, |task, spawn| {
            write_one_concurrent(
                chain,
                store,
                task,
                value,
                write_empty,
                &memo,
                versioned,
                &settle,
                spawn,
            )
        })
    }
    .await?;
    // Only a zip archive (a store that answers at once) does anything here.
    store.flush()
}

/// For a store the caller writes itself: encode `tasks` of `value` over the
/// old chunks the caller fetched (`old[i]`, `None` where missing or not
/// needed, see [`ChunkTask::needs_old`]). The new bytes per chunk, `None`
/// where the chunk is all fill value and `write_empty` is false (to delete).
pub fn encode(
    chain: &CodecChain,
    tasks: &[ChunkTask],
    old: Vec<Option<Bytes>>,
    value: Input<'_>,
    write_empty: bool,
) -> Result<Vec<Option<Bytes>>> {
    check_batch(tasks.len(), old.len())?;
    let memo = ScalarMemo::default();
    let work: Vec<(&ChunkTask, Option<Bytes>)> = tasks.iter().zip(old).collect();
    let one = |(task, old): (&ChunkTask, Option<Bytes>)| {
        let chain = task.chain(chain);
        let old = if task.needs_old(chain) { old } else { None };
        encode_region(chain, &task.region, old, value, write_empty, &memo).map_err(task.at())
    };
    if work.len() <= 1 {
        return work.into_iter().map(one).collect();
    }
    pool::install(|| work.into_par_iter().map(one).collect())?
}

/// Error unless two per-chunk lists of a batch have one entry per chunk each.
pub(crate) fn check_batch(a: usize, b: usize) -> Result<()> {
    if a != b {
        return Err(Error::value(format!(
            "a batch needs one entry per chunk: got {a} and {b}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
