//! A store the caller reads and writes itself (a store written in Python):
//! every operation becomes a [`Request`] that the caller answers.
//!
//! An engine session over such a store polls its chunk futures; each one runs
//! until it waits for an answer. The session then hands the caller every
//! request made (one round: all of them can be fetched concurrently), takes
//! the answers, and polls again. Answers are kept in Rust, so each fetched
//! byte crosses from the caller once, however many rounds a read takes (a
//! shard's index, then its inner chunks).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use async_trait::async_trait;
use bytes::Bytes;

use super::{check_key, fit_range, ByteRange, IoMode, OpenValue, Store};
use crate::error::{Error, Result};
use crate::fork;

/// What a request asks the caller to do.
#[derive(Debug, Clone)]
pub enum Op {
    /// The value (`None`) or a byte range of it; answered with the bytes, or
    /// nothing when there is no value.
    Get(Option<ByteRange>),
    /// Store the bytes.
    Set(Bytes),
    /// Remove the key.
    Delete,
}

/// One operation for the caller.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: u64,
    pub key: String,
    pub op: Op,
}

/// A request's argument as the caller's side of the protocol spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg<'a> {
    /// No argument: a whole value's get, or a delete.
    None,
    /// Bytes `[offset, offset+length)` (to the end when `length` is None).
    Range { offset: u64, length: Option<u64> },
    /// The last `n` bytes.
    Suffix(u64),
    /// The bytes to store.
    Bytes(&'a [u8]),
}

impl Request {
    /// The request as the caller sees it: `(id, operation, key, argument)`,
    /// the operation `"get"`, `"set"` or `"delete"`.
    pub fn spelled(&self) -> (u64, &'static str, &str, Arg<'_>) {
        let (op, arg) = match &self.op {
            Op::Get(None) => ("get", Arg::None),
            Op::Get(Some(ByteRange::FromStart { offset, length })) => (
                "get",
                Arg::Range {
                    offset: *offset,
                    length: *length,
                },
            ),
            Op::Get(Some(ByteRange::Suffix(n))) => ("get", Arg::Suffix(*n)),
            Op::Set(bytes) => ("set", Arg::Bytes(bytes)),
            Op::Delete => ("delete", Arg::None),
        };
        (self.id, op, &self.key, arg)
    }
}

#[derive(Debug, Default)]
struct State {
    next: u64,
    /// Requests made and not yet handed out.
    new: Vec<Request>,
    /// Answers not yet taken, by request id.
    answers: HashMap<u64, Result<Option<Bytes>>>,
    /// Requests handed out and not yet answered, with the waker to call.
    waiting: HashMap<u64, Option<Waker>>,
}

/// The requests of one engine session (a store shared by sessions would mix
/// their rounds: each session makes its own).
#[derive(Debug, Default)]
pub struct CallerStore {
    /// Where keys are, for messages: the caller's description of its store.
    name: String,
    state: Mutex<State>,
}

impl CallerStore {
    pub fn new(name: impl Into<String>) -> Self {
        CallerStore {
            name: name.into(),
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> fork::Guarded<'_, State> {
        fork::lock(&self.state)
    }

    /// The requests made since the last call.
    pub fn take_requests(&self) -> Vec<Request> {
        let mut s = self.state();
        let new = std::mem::take(&mut s.new);
        for r in &new {
            s.waiting.entry(r.id).or_insert(None);
        }
        new
    }

    /// Whether requests were handed out and not answered.
    pub fn has_unanswered(&self) -> bool {
        !self.state().waiting.is_empty()
    }

    /// Answer request `id`: the bytes (for a get: `None` when there is no
    /// value; nothing for a set or delete), or the caller's error.
    pub fn answer(&self, id: u64, answer: Result<Option<Bytes>>) -> Result<()> {
        let mut s = self.state();
        let Some(waker) = s.waiting.remove(&id) else {
            return Err(Error::value(format!(
                "request {id} was not asked for or was answered already"
            )));
        };
        s.answers.insert(id, answer);
        drop(s);
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Answer the requests `ids` with `values` (one each, in order).
    pub fn answer_all(&self, ids: &[u64], values: Vec<Option<Bytes>>) -> Result<()> {
        if ids.len() != values.len() {
            return Err(Error::value("one value per request id"));
        }
        for (&id, v) in ids.iter().zip(values) {
            self.answer(id, Ok(v))?;
        }
        Ok(())
    }

    fn ask(&self, key: &str, op: Op) -> Answer<'_> {
        let mut s = self.state();
        let id = s.next;
        s.next += 1;
        s.new.push(Request {
            id,
            key: key.to_string(),
            op,
        });
        Answer { store: self, id }
    }
}

/// The answer to one request, once the caller has given it.
struct Answer<'a> {
    store: &'a CallerStore,
    id: u64,
}

impl Future for Answer<'_> {
    type Output = Result<Option<Bytes>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = self.store.state();
        if let Some(answer) = s.answers.remove(&self.id) {
            return Poll::Ready(answer);
        }
        if let Some(w) = s.waiting.get_mut(&self.id) {
            *w = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// A value read range by range through the caller (no version can be pinned:
/// the caller's store decides what each read sees).
struct CallerValue<'a> {
    store: &'a CallerStore,
    key: String,
}

#[async_trait]
impl OpenValue for CallerValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        let asked: Vec<Answer<'_>> = ranges
            .iter()
            .map(|r| self.store.ask(&self.key, Op::Get(Some(*r))))
            .collect();
        let answers = futures::future::join_all(asked).await;
        let mut parts = Vec::with_capacity(ranges.len());
        for (r, a) in ranges.iter().zip(answers) {
            match a? {
                Some(bytes) => parts.push(
                    fit_range(bytes, r, &self.store.location(""))
                        .map_err(|e| e.context(self.store.location(&self.key)))?,
                ),
                None => return Ok(None),
            }
        }
        Ok(Some(parts))
    }
}

#[async_trait]
impl Store for CallerStore {
    fn io_mode(&self) -> IoMode {
        IoMode::Caller
    }

    fn location(&self, key: &str) -> String {
        if self.name.is_empty() {
            key.to_string()
        } else {
            format!("{}/{key}", self.name.trim_end_matches('/'))
        }
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        check_key(key)?;
        self.ask(key, Op::Get(None)).await
    }

    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        check_key(key)?;
        Ok(Box::new(CallerValue {
            store: self,
            key: key.to_string(),
        }))
    }

    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        check_key(key)?;
        self.ask(key, Op::Set(value)).await.map(|_| ())
    }

    async fn delete(&self, key: &str) -> Result<()> {
        check_key(key)?;
        self.ask(key, Op::Delete).await.map(|_| ())
    }

    async fn list_prefix(&self, _prefix: &str) -> Result<Vec<String>> {
        Err(Error::unsupported(
            "internal error: a caller-driven store is not listed by the engine",
        ))
    }

    async fn list_dir(&self, _prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        Err(Error::unsupported(
            "internal error: a caller-driven store is not listed by the engine",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::task::noop_waker;

    fn poll<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
        let w = noop_waker();
        Pin::new(f).poll(&mut Context::from_waker(&w))
    }

    #[test]
    fn requests_wait_for_answers() {
        let s = CallerStore::new("mem://x");
        let mut get = Box::pin(s.get("a/b"));
        assert!(poll(&mut get).is_pending());
        let asked = s.take_requests();
        assert_eq!(asked.len(), 1);
        assert!(matches!(asked[0].op, Op::Get(None)));
        assert!(poll(&mut get).is_pending());
        s.answer(asked[0].id, Ok(Some(Bytes::from_static(b"v"))))
            .unwrap();
        assert!(s.answer(asked[0].id, Ok(None)).is_err(), "answered twice");
        match poll(&mut get) {
            Poll::Ready(Ok(Some(b))) => assert_eq!(b, &b"v"[..]),
            other => panic!("{other:?}"),
        }
        // A range answered short is an error naming the key.
        let v = s.open("k").unwrap();
        let mut read = Box::pin(async move { v.read_ranges(&[ByteRange::span(0, 4)]).await });
        assert!(poll(&mut read).is_pending());
        let asked = s.take_requests();
        s.answer(asked[0].id, Ok(Some(Bytes::from_static(b"ab"))))
            .unwrap();
        match poll(&mut read) {
            Poll::Ready(Err(e)) => assert!(e.message.contains("mem://x/k"), "{e}"),
            _ => panic!("expected an error"),
        }
        assert!(!s.has_unanswered());
    }
}
