//! The one batch layer both front doors feed: zarrox's arrays
//! ([`crate::array::ArrayCore`], which turns a selection into chunk tasks)
//! and zarr-python's codec pipeline ([`crate::pipeline::ChunkCodec`], which
//! turns the regions zarr-python projected into chunk tasks). A [`Batch`] is
//! those tasks with their codec chain, the shape of the buffer they read into
//! or write from, and the data cache; [`Batch::read`] and [`Batch::write`]
//! check what they are given and run the engine on whatever holds the chunks
//! ([`Chunks`]): a store Rust reads and writes, a store the caller serves
//! (reads become a [`ReadSession`], writes a [`PendingWrite`]), or encoded
//! chunks in hand.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;

use crate::cache::DataCache;
use crate::codec::CodecChain;
use crate::engine::session::ReadSession;
use crate::engine::{self, check_disjoint, ChunkRegion, ChunkTask, Input, OutView, Output};
use crate::error::{Error, Result};
use crate::store::{IoMode, Store};

/// Where a batch's chunks are.
pub enum Chunks<'a> {
    /// A store Rust reads and writes.
    Store(&'a dyn Store),
    /// A store the caller reads and writes itself (named in messages): a read
    /// becomes a [`ReadSession`], a write a [`PendingWrite`].
    Caller(&'a str),
    /// Encoded chunks in hand, one per task (`None`: missing): a read decodes
    /// them, a write encodes over them.
    Held(Vec<Option<Bytes>>),
}

/// Where a read puts the elements: a buffer of fixed-size elements (C order,
/// the batch's shape, native byte order), or a list of variable-length ones.
pub enum Destination<'a> {
    Buffer(&'a mut [u8]),
    List,
}

/// A buffer an awaitable read fills, owned by the read (and kept alive by
/// it) until the read ends: nobody else uses its bytes meanwhile.
pub trait OutBuffer: Send + 'static {
    fn bytes(&mut self) -> &mut [u8];
}

/// A buffer an awaitable write reads, kept alive by the write.
pub trait InBuffer: Send + Sync + 'static {
    fn bytes(&self) -> &[u8];
}

/// Where an awaitable read puts the elements (see [`Destination`]), owned.
pub enum OwnedDestination {
    Buffer(Box<dyn OutBuffer>),
    List,
}

impl OwnedDestination {
    fn borrow(&mut self) -> Destination<'_> {
        match self {
            OwnedDestination::Buffer(buf) => Destination::Buffer(buf.bytes()),
            OwnedDestination::List => Destination::List,
        }
    }
}

/// What an awaitable write takes elements from (see [`Input`]), owned.
pub enum OwnedInput {
    Buffer(Box<dyn InBuffer>),
    Var(Vec<Vec<u8>>),
    Scalar(Vec<u8>),
}

impl OwnedInput {
    fn input(&self) -> Input<'_> {
        match self {
            OwnedInput::Buffer(buf) => Input::Fixed(buf.bytes()),
            OwnedInput::Var(items) => Input::Var(items),
            OwnedInput::Scalar(one) => Input::Scalar(one),
        }
    }
}

/// What a read did.
pub enum ReadDone {
    /// Into the buffer: which chunks exist.
    Present(Vec<bool>),
    /// The variable-length elements (buffer order), and which chunks exist.
    Values(Vec<Vec<u8>>, Vec<bool>),
    /// For a store the caller serves: the session that reads it (which keeps
    /// a variable-length read's elements itself).
    Session(ReadSession),
}

/// What a write did.
pub enum WriteDone {
    Written,
    /// For a store the caller serves: the old chunks to fetch, then encode.
    Pending(PendingWrite),
    /// Over chunks in hand: the new encoded chunks (`None`: all fill value
    /// and empty chunks are not written, delete it).
    Encoded(Vec<Option<Bytes>>),
}

/// The chunk tasks of one read or write, with what running them takes.
#[derive(Debug)]
pub struct Batch {
    chain: Arc<CodecChain>,
    tasks: Vec<ChunkTask>,
    /// The shape of the buffer read into or the value written.
    shape: Vec<usize>,
    opened: Instant,
    cache: DataCache,
    write_empty: bool,
    /// Whether the regions came from the caller, and are checked: inside the
    /// buffer and, for a fixed-size output, disjoint.
    check_regions: bool,
    /// The array whose name errors carry.
    array: Option<String>,
}

impl Batch {
    /// `tasks` of chunks of `chain` (each task's own chain where it has one)
    /// over a buffer of `shape`, through `cache` (of an array opened at
    /// `opened`, what the cache's recheck mode "open" compares with). Empty
    /// chunks are not written, the regions are trusted, errors name no
    /// array: see the builder methods.
    pub fn new(
        chain: Arc<CodecChain>,
        tasks: Vec<ChunkTask>,
        shape: Vec<usize>,
        cache: DataCache,
        opened: Instant,
    ) -> Self {
        Batch {
            chain,
            tasks,
            shape,
            opened,
            cache,
            write_empty: false,
            check_regions: false,
            array: None,
        }
    }

    /// Chunks that end up all fill value are written (else deleted).
    pub fn write_empty(mut self, on: bool) -> Self {
        self.write_empty = on;
        self
    }

    /// The regions come from the caller: check them.
    pub fn checked(mut self) -> Self {
        self.check_regions = true;
        self
    }

    /// Errors name the array at `path`.
    pub fn in_array(mut self, path: &str) -> Self {
        self.array = Some(path.to_string());
        self
    }

    /// What names the batch's array in an error.
    fn at(&self) -> impl Fn(Error) -> Error + 'static {
        let array = self.array.clone();
        move |e| match &array {
            Some(path) => e.in_array(path),
            None => e,
        }
    }

    /// Elements in the buffer.
    fn elements(&self) -> Result<usize> {
        self.shape
            .iter()
            .try_fold(1usize, |a, &n| a.checked_mul(n))
            .ok_or_else(|| Error::value(format!("a buffer of shape {:?} is too large", self.shape)))
    }

    fn var_len(&self) -> bool {
        self.chain.spec().dtype.is_var_len()
    }

    /// Error unless `got` bytes (items, with `var`) are what the buffer needs.
    fn check_size(&self, what: &str, got: usize, var: bool) -> Result<()> {
        let n = self.elements()?;
        let (want, unit) = if var {
            (Some(n), "items")
        } else {
            (n.checked_mul(self.chain.spec().dtype.size), "bytes")
        };
        if Some(got) != want {
            return Err(Error::value(format!(
                "the {what} has {got} {unit}, shape {:?} needs {}",
                self.shape,
                want.map_or("more than can be addressed".to_string(), |w| w.to_string())
            )));
        }
        Ok(())
    }

    /// Error unless the data type's elements are of the kind given
    /// (variable-length ones in lists, fixed-size ones in buffers).
    fn check_kind(&self, list: bool) -> Result<()> {
        if self.var_len() != list {
            return Err(Error::value(if list {
                "fixed-size data is read into (written from) a buffer, not a list"
            } else {
                "variable-length data is read into (written from) a list, not a buffer"
            }));
        }
        Ok(())
    }

    /// Error unless the regions stay inside the buffer of `n` elements and,
    /// for a fixed-size output, write disjoint elements.
    fn check_output(&self, n: usize) -> Result<()> {
        if !self.check_regions {
            return Ok(());
        }
        if self.var_len() {
            return self.check_inside(n);
        }
        let regions: Vec<&ChunkRegion> = self.tasks.iter().map(|t| &t.region).collect();
        // A chunk read in part decodes its inner chunks on several threads: an
        // element named twice could be written by two at once.
        let in_part = self.chain.partial().is_some();
        check_disjoint(&regions, &self.chain.spec().shape, n, in_part)
    }

    /// Error unless every element the regions name is inside a buffer of `n`.
    fn check_inside(&self, n: usize) -> Result<()> {
        if !self.check_regions {
            return Ok(());
        }
        for t in &self.tasks {
            let mut outside = false;
            t.region
                .for_each_run(&self.chain.spec().shape, true, |_, o, k| {
                    outside |= o.checked_add(k).is_none_or(|end| end > n)
                });
            if outside {
                return Err(Error::index(format!(
                    "chunk '{}': the region reaches outside the buffer of {n} elements",
                    t.key
                )));
            }
        }
        Ok(())
    }

    /// Read the chunks into `into`.
    pub fn read(self, chunks: Chunks<'_>, into: Destination<'_>) -> Result<ReadDone> {
        let at = self.at();
        let list = matches!(into, Destination::List);
        let n = self.check_read(&into).map_err(&at)?;
        // a session keeps a list of its own
        let caller = matches!(chunks, Chunks::Caller(_));
        let out_list = Mutex::new(if list && !caller {
            vec![Vec::new(); n]
        } else {
            Vec::new()
        });
        let view;
        let out = match into {
            Destination::Buffer(buf) => {
                view = OutView::new(buf);
                Output::Fixed(&view)
            }
            Destination::List => Output::Var(&out_list),
        };
        let present = match chunks {
            Chunks::Store(store) => engine::read_since(
                &self.chain,
                store,
                &self.tasks,
                out,
                self.opened,
                &self.cache,
            ),
            Chunks::Caller(name) => {
                let session = ReadSession::new(self.chain, self.tasks, name);
                return Ok(ReadDone::Session(if list {
                    session.with_values(n)
                } else {
                    session
                }));
            }
            Chunks::Held(encoded) => {
                let present = encoded.iter().map(Option::is_some).collect();
                engine::decode(&self.chain, &self.tasks, encoded, out).map(|()| present)
            }
        }
        .map_err(at)?;
        Ok(if list {
            let values = out_list.into_inner().unwrap_or_else(|p| p.into_inner());
            ReadDone::Values(values, present)
        } else {
            ReadDone::Present(present)
        })
    }

    /// Check a read into `into`: the buffer's elements.
    fn check_read(&self, into: &Destination<'_>) -> Result<usize> {
        let n = self.elements()?;
        self.check_kind(matches!(into, Destination::List))?;
        if let Destination::Buffer(buf) = into {
            self.check_size("output buffer", buf.len(), false)?;
        }
        self.check_output(n)?;
        Ok(n)
    }

    /// Error unless `value` fits the batch: a buffer or list of its elements
    /// of the data type's kind, or one element.
    fn check_input(&self, value: &Input<'_>) -> Result<()> {
        let n = self.elements()?;
        match value {
            Input::Fixed(bytes) => {
                self.check_kind(false)?;
                self.check_size("value buffer", bytes.len(), false)?;
            }
            Input::Var(items) => {
                self.check_kind(true)?;
                self.check_size("value list", items.len(), true)?;
            }
            Input::Scalar(one) => {
                let dtype = self.chain.spec().dtype;
                if !dtype.is_var_len() && one.len() != dtype.size {
                    return Err(Error::value(format!(
                        "a scalar value has {} bytes, the data type has {}",
                        one.len(),
                        dtype.size
                    )));
                }
                return Ok(());
            }
        }
        self.check_inside(n)
    }

    /// Write `value` (a buffer of the batch's shape, its elements in a list,
    /// or one element written to every selected element, as numpy broadcasts
    /// a scalar) to the chunks.
    pub fn write(self, chunks: Chunks<'_>, value: Input<'_>) -> Result<WriteDone> {
        self.check_input(&value).map_err(self.at())?;
        match chunks {
            Chunks::Store(store) => engine::write_cached(
                &self.chain,
                store,
                &self.tasks,
                value,
                self.write_empty,
                &self.cache,
            )
            .map(|()| WriteDone::Written)
            .map_err(self.at()),
            Chunks::Caller(_) => {
                let needs = self
                    .tasks
                    .iter()
                    .map(|t| t.needs_old(t.chain(&self.chain)))
                    .collect();
                Ok(WriteDone::Pending(PendingWrite { batch: self, needs }))
            }
            Chunks::Held(old) => self.encode(old, value).map(WriteDone::Encoded),
        }
    }

    fn encode(&self, old: Vec<Option<Bytes>>, value: Input<'_>) -> Result<Vec<Option<Bytes>>> {
        engine::encode(&self.chain, &self.tasks, old, value, self.write_empty).map_err(self.at())
    }
}

/// Awaitable reads and writes: futures that own the batch, the store and
/// the buffer, for the I/O runtime to run. An object store is read and
/// written with no thread waiting for the network (decoding and encoding on
/// the worker pool); a store that answers at once is read by the blocking
/// engine call as one job on the worker pool. Dropping the future cancels
/// what has not started: requests in flight are dropped, a job not yet
/// running does nothing, and the jobs running are waited for (they use the
/// buffer), so that the buffer is released only once nothing touches it.
impl Batch {
    /// The grid-free description of each chunk's part of the batch.
    pub fn tasks(&self) -> &[ChunkTask] {
        &self.tasks
    }

    /// [`Batch::read`] from `store` as a future.
    pub fn read_async(
        self,
        store: Arc<dyn Store>,
        mut into: OwnedDestination,
    ) -> BoxFuture<'static, Result<ReadDone>> {
        Box::pin(async move {
            match store.io_mode() {
                IoMode::Concurrent => {
                    let into = into.borrow();
                    // SAFETY: this future owns the batch, the store and the
                    // buffer that the read borrows, declared before the read's
                    // future, which is dropped first; leaking this future
                    // leaks them with it.
                    unsafe { self.read_concurrent(store.as_ref(), into) }.await
                }
                IoMode::Blocking => {
                    on_worker(move || self.read(Chunks::Store(store.as_ref()), into.borrow())).await
                }
                IoMode::Caller => Err(caller_store()),
            }
        })
    }

    /// [`Batch::read`] from an object store as a future.
    ///
    /// # Safety
    /// See [`engine::read_concurrent`].
    async unsafe fn read_concurrent(
        self,
        store: &dyn Store,
        into: Destination<'_>,
    ) -> Result<ReadDone> {
        let at = self.at();
        let list = matches!(into, Destination::List);
        let n = self.check_read(&into).map_err(&at)?;
        let out_list = Mutex::new(if list {
            vec![Vec::new(); n]
        } else {
            Vec::new()
        });
        let view;
        let out = match into {
            Destination::Buffer(buf) => {
                view = OutView::new(buf);
                Output::Fixed(&view)
            }
            Destination::List => Output::Var(&out_list),
        };
        let (chain, tasks, cache) = (&self.chain, &self.tasks, &self.cache);
        // SAFETY: the caller's contract; `out_list` and `view` are declared
        // before the read's future, so they outlive its jobs.
        let present =
            unsafe { engine::read_concurrent(chain, store, tasks, out, self.opened, cache) }
                .await
                .map_err(at)?;
        Ok(if list {
            let values = out_list.into_inner().unwrap_or_else(|p| p.into_inner());
            ReadDone::Values(values, present)
        } else {
            ReadDone::Present(present)
        })
    }

    /// [`Batch::write`] to `store` as a future. Cancelled part way, the
    /// chunks already stored stay written (each chunk is stored whole or not
    /// at all).
    pub fn write_async(
        self,
        store: Arc<dyn Store>,
        value: OwnedInput,
    ) -> BoxFuture<'static, Result<WriteDone>> {
        Box::pin(async move {
            match store.io_mode() {
                IoMode::Concurrent => {
                    let input = value.input();
                    self.check_input(&input).map_err(self.at())?;
                    let (chain, tasks, cache) = (&self.chain, &self.tasks, &self.cache);
                    // SAFETY: as in `read_async`: this future owns all the
                    // write borrows, declared before the write's future.
                    unsafe {
                        engine::write_concurrent(
                            chain,
                            store.as_ref(),
                            tasks,
                            input,
                            self.write_empty,
                            cache,
                        )
                    }
                    .await
                    .map(|()| WriteDone::Written)
                    .map_err(self.at())
                }
                IoMode::Blocking => {
                    on_worker(move || self.write(Chunks::Store(store.as_ref()), value.input()))
                        .await
                }
                IoMode::Caller => Err(caller_store()),
            }
        })
    }
}

fn caller_store() -> Error {
    Error::value("internal error: a store the caller serves has no awaitable reads and writes")
}

/// `f` as one job on the worker pool, awaited; not run at all when the
/// future is dropped before the job starts. A panic is an error.
async fn on_worker<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    let (tx, rx) = futures::channel::oneshot::channel();
    crate::pool::pool()?.spawn(move || {
        if tx.is_canceled() {
            return; // the awaiting task was cancelled before this started
        }
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .unwrap_or_else(|_| Err(Error::value("internal error: a read or write panicked")));
        let _ = tx.send(done);
    });
    rx.await
        .map_err(|_| Error::value("internal error: a read or write was lost"))?
}

/// A write to a store the caller serves: it fetches the old chunks
/// [`needs`](Self::needs) names, then [`encode`](Self::encode) gives the new
/// ones.
#[derive(Debug)]
pub struct PendingWrite {
    batch: Batch,
    needs: Vec<bool>,
}

impl PendingWrite {
    /// The chunks' keys.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.batch.tasks.iter().map(|t| t.key.as_str())
    }

    /// Per chunk, whether its old bytes are needed ([`ChunkTask::needs_old`]).
    pub fn needs(&self) -> &[bool] {
        &self.needs
    }

    /// The new bytes of the chunks (`None`: delete) after writing `value`
    /// over the `old` ones (`None` where missing or not needed).
    pub fn encode(&self, old: Vec<Option<Bytes>>, value: Input<'_>) -> Result<Vec<Option<Bytes>>> {
        self.batch.check_input(&value).map_err(self.batch.at())?;
        self.batch.encode(old, value)
    }
}

/// A memory order: C (row-major) or F (column-major).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryOrder {
    C,
    F,
}

impl MemoryOrder {
    /// `"C"` or `"F"`.
    pub fn parse(order: &str) -> Result<Self> {
        match order {
            "C" => Ok(MemoryOrder::C),
            "F" => Ok(MemoryOrder::F),
            other => Err(Error::value(format!(
                "memory order must be \"C\" or \"F\", got {other:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests;
