//! Reads from a store the caller reads itself (a store written in Python), in
//! rounds: [`ReadSession::step`] runs every chunk's read until it waits for
//! bytes, decodes what has arrived into the output, and returns the requests
//! made; the caller fetches them all (concurrently) and answers each with
//! [`ReadSession::answer`]; then the next step. Fetched bytes stay in Rust,
//! so each crosses from the caller once, however many rounds a read takes (a
//! shard's index first, then its inner chunks, then theirs when nested).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use rayon::prelude::*;

use super::fetch::{read_chunk, Fetching, Origin, Piece, Sink};
use super::{decode_piece, ChunkTask, Output};
use crate::codec::CodecChain;
use crate::error::{Error, Result};
use crate::pool;
use crate::store::caller::{CallerStore, Request};

/// Pieces kept until the step that decodes them (the output is only at hand
/// during a step), with the task each belongs to.
type Collected = Arc<Mutex<Vec<(usize, Piece<'static>)>>>;

/// One task's sink: its pieces go to the session's collection.
struct CollectSink {
    pieces: Collected,
    task: usize,
}

impl Sink for CollectSink {
    fn emit<'r>(&self, pieces: Vec<Piece<'r>>) -> impl Future<Output = Result<()>> + Send {
        let owned = pieces.into_iter().map(|p| (self.task, p.into_owned()));
        self.pieces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(owned);
        std::future::ready(Ok(()))
    }
}

/// One chunk's read: running, or done (whether the chunk exists).
enum ChunkRead {
    Running(BoxFuture<'static, Result<bool>>),
    Done(bool),
}

/// A read of chunks from a store the caller reads.
pub struct ReadSession {
    chain: Arc<CodecChain>,
    /// Per task, its own chain where chunks differ in shape.
    own_chains: Vec<Option<Arc<CodecChain>>>,
    store: Arc<CallerStore>,
    pieces: Collected,
    keys: Vec<String>,
    reads: Vec<ChunkRead>,
    /// The elements of a variable-length read, which the session keeps
    /// (see [`ReadSession::with_values`]).
    values: Option<Mutex<Vec<Vec<u8>>>>,
}

impl ReadSession {
    /// A read of `tasks`; `store_name` says where keys are, for messages.
    pub fn new(chain: Arc<CodecChain>, tasks: Vec<ChunkTask>, store_name: &str) -> Self {
        let store = Arc::new(CallerStore::new(store_name));
        let pieces = Collected::default();
        let fetching = Fetching::for_store(Some(store.as_ref()));
        let keys = tasks.iter().map(|t| t.key.clone()).collect();
        let own_chains = tasks.iter().map(|t| t.chain.clone()).collect();
        let reads = tasks
            .into_iter()
            .enumerate()
            .map(|(i, task)| {
                let chain = task.chain.clone().unwrap_or_else(|| Arc::clone(&chain));
                let store = Arc::clone(&store);
                let sink = CollectSink {
                    pieces: Arc::clone(&pieces),
                    task: i,
                };
                let read = async move {
                    let origin = Origin::Store {
                        store: store.as_ref(),
                        key: &task.key,
                    };
                    read_chunk(&chain, &origin, &task.region, fetching, &sink)
                        .await
                        .map_err(task.at())
                };
                ChunkRead::Running(Box::pin(read))
            })
            .collect();
        ReadSession {
            chain,
            own_chains,
            store,
            pieces,
            keys,
            reads,
            values: None,
        }
    }

    /// The session keeps the `n` elements of a variable-length read itself:
    /// [`ReadSession::step_values`] fills them, [`ReadSession::values`] hands
    /// them over.
    pub fn with_values(mut self, n: usize) -> Self {
        self.values = Some(Mutex::new(vec![Vec::new(); n]));
        self
    }

    /// [`ReadSession::step`] into the elements the session keeps.
    pub fn step_values(&mut self) -> Result<Vec<Request>> {
        let Some(list) = self.values.take() else {
            return Err(Error::value(
                "a fixed-size read has its values in the output array",
            ));
        };
        let requests = self.step(Output::Var(&list));
        self.values = Some(list);
        requests
    }

    /// The elements of a variable-length read (once done).
    pub fn values(&self) -> Result<Vec<Vec<u8>>> {
        match &self.values {
            Some(list) => Ok(list.lock().unwrap_or_else(|p| p.into_inner()).clone()),
            None => Err(Error::value(
                "a fixed-size read has its values in the output array",
            )),
        }
    }

    /// Answer the requests `ids` with the bytes fetched (`None`: no value).
    pub fn answer_all(&self, ids: &[u64], values: Vec<Option<Bytes>>) -> Result<()> {
        self.store.answer_all(ids, values)
    }

    /// Run every unfinished chunk read until it waits for bytes, decode what
    /// arrived into `out`, and return the requests made (none: done).
    pub fn step(&mut self, out: Output<'_>) -> Result<Vec<Request>> {
        let poll_one = |read: &mut ChunkRead| -> Result<()> {
            let ChunkRead::Running(fut) = read else {
                return Ok(());
            };
            let waker = futures::task::noop_waker();
            match Pin::new(fut).poll(&mut Context::from_waker(&waker)) {
                Poll::Ready(Ok(present)) => *read = ChunkRead::Done(present),
                Poll::Ready(Err(e)) => return Err(e),
                Poll::Pending => {}
            }
            Ok(())
        };
        if self.reads.len() <= 1 {
            self.reads.iter_mut().try_for_each(poll_one)?;
        } else {
            pool::install(|| self.reads.par_iter_mut().try_for_each(poll_one))??;
        }
        let pieces = std::mem::take(&mut *self.pieces.lock().unwrap_or_else(|p| p.into_inner()));
        let (chain, keys, own) = (self.chain.as_ref(), &self.keys, &self.own_chains);
        let one = |(task, piece): (usize, Piece<'static>)| {
            decode_piece(own[task].as_deref().unwrap_or(chain), piece, out)
                .map_err(|e| e.context(format!("chunk '{}'", keys[task])))
        };
        if pieces.len() <= 1 {
            pieces.into_iter().try_for_each(one)?;
        } else {
            pool::install(|| pieces.into_par_iter().try_for_each(one))??;
        }
        let requests = self.store.take_requests();
        if requests.is_empty() && !self.done() && !self.store.has_unanswered() {
            return Err(crate::error::Error::value(
                "internal error: a chunk read waits for nothing",
            ));
        }
        Ok(requests)
    }

    /// Answer request `id` with the bytes fetched (`None`: no value), or the
    /// caller's error.
    pub fn answer(&self, id: u64, answer: Result<Option<Bytes>>) -> Result<()> {
        self.store.answer(id, answer)
    }

    /// Whether every chunk read has finished.
    pub fn done(&self) -> bool {
        self.reads.iter().all(|r| matches!(r, ChunkRead::Done(_)))
    }

    /// Which chunks exist (once done).
    pub fn present(&self) -> Vec<bool> {
        self.reads
            .iter()
            .map(|r| matches!(r, ChunkRead::Done(true)))
            .collect()
    }
}
