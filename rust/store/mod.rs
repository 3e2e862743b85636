//! Key-value stores: the [`Store`] trait and its drivers: a local directory,
//! memory, zip archives, object stores (S3, GCS, Azure, HTTP through the
//! `object_store` crate) and stores the caller reads itself (Python stores).
//!
//! Every operation is async, so that one engine drives every store. A store
//! also says how its requests are best scheduled ([`IoMode`]): a local disk
//! answers at once and is read from the worker threads that decode, an
//! object store is read with many requests in flight on the I/O runtime, and
//! a caller-driven store hands its requests out in rounds.

pub mod caller;
pub mod filesystem;
pub mod memory;
#[cfg(feature = "object-stores")]
pub mod object;
pub mod references;
pub mod runtime;
pub mod zip;

use std::fmt::Debug;

use async_trait::async_trait;
pub use bytes::Bytes;

use crate::error::{Error, Result};

pub use caller::CallerStore;
pub use filesystem::FilesystemStore;
pub use memory::MemoryStore;
#[cfg(feature = "object-stores")]
pub use object::ObjectStore;
pub use references::ReferenceStore;
pub use zip::ZipStore;

/// A byte range of a stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ByteRange {
    /// `length` bytes from `offset` (to the end when `None`).
    FromStart { offset: u64, length: Option<u64> },
    /// The last `n` bytes.
    Suffix(u64),
}

impl ByteRange {
    /// `length` bytes from `start` (to the end when `length` is None); a
    /// negative `start` with no length: the last `-start` bytes.
    pub fn from_signed(start: i64, length: Option<u64>) -> Result<Self> {
        match (start, length) {
            (s, None) if s < 0 => Ok(ByteRange::Suffix(s.unsigned_abs())),
            (s, _) if s < 0 => Err(Error::value("negative start with a length")),
            (s, length) => Ok(ByteRange::FromStart {
                offset: s as u64,
                length,
            }),
        }
    }

    /// `length` bytes from `offset`.
    pub fn span(offset: u64, length: u64) -> Self {
        ByteRange::FromStart {
            offset,
            length: Some(length),
        }
    }

    /// The `[start, end)` this range covers in a value of `size` bytes, or an
    /// error if it reaches past the end.
    pub fn resolve(&self, size: u64) -> Result<(u64, u64)> {
        let (start, end) = match *self {
            ByteRange::FromStart { offset, length } => (
                offset,
                match length {
                    None => size,
                    Some(l) => offset.checked_add(l).ok_or_else(|| too_far(size))?,
                },
            ),
            ByteRange::Suffix(n) => (size.checked_sub(n).ok_or_else(|| too_far(size))?, size),
        };
        if start > end || end > size {
            return Err(too_far(size));
        }
        Ok((start, end))
    }

    /// The number of bytes this range asks for, when that does not depend on
    /// the value's size.
    pub fn fixed_len(&self) -> Option<u64> {
        match *self {
            ByteRange::FromStart { length, .. } => length,
            ByteRange::Suffix(n) => Some(n),
        }
    }
}

fn too_far(size: u64) -> Error {
    Error::corrupt(format!(
        "byte range reaches past the end of a {size}-byte value"
    ))
}

/// `ranges` of `value`, each a view of it (no copy); an error if one reaches past its end.
pub fn slice_ranges(value: &Bytes, ranges: &[ByteRange]) -> Result<Vec<Bytes>> {
    ranges
        .iter()
        .map(|r| {
            let (s, e) = r.resolve(value.len() as u64)?;
            Ok(value.slice(s as usize..e as usize))
        })
        .collect()
}

/// The bytes `range` asked for out of what a store returned: exactly those,
/// or, when the store sent more (a static web server that ignores byte
/// ranges answers with the whole value), the range cut out of the whole value
/// (see [`ranges_ignored`]); an error when the value is shorter than asked
/// (an object store answers a range past the end with what there is).
/// `store` names the store (its location) for the warning.
pub fn fit_range(bytes: Bytes, range: &ByteRange, store: &str) -> Result<Bytes> {
    let got = bytes.len() as u64;
    match range.fixed_len() {
        Some(want) if want > got => Err(Error::corrupt(format!(
            "the store returned {got} bytes where {want} were asked for: the value is shorter"
        ))),
        Some(want) if want < got => {
            let (start, end) = range.resolve(got).map_err(|_| {
                Error::corrupt(format!(
                    "the store returned {got} bytes where {want} were asked for: not the \
                     range asked for, nor a whole value that holds it"
                ))
            })?;
            ranges_ignored(store);
            Ok(bytes.slice(start as usize..end as usize))
        }
        _ => Ok(bytes),
    }
}

/// Byte ranges of one value fetched as one request, and which of the ranges
/// asked for it holds (indices into the sorted list given to [`coalesce`]).
#[derive(Debug)]
pub struct Span {
    pub span: std::ops::Range<u64>,
    pub members: Vec<usize>,
}

/// Ranges (sorted by start) grouped into spans: neighbours closer than `gap`
/// bytes share one request, as long as the span stays within `limit` bytes
/// (consecutive ranges would otherwise become one huge request). The shard
/// reads of the engine and the reference store both merge their ranges here.
pub fn coalesce(
    sorted: impl IntoIterator<Item = std::ops::Range<u64>>,
    gap: u64,
    limit: Option<u64>,
) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    for (k, r) in sorted.into_iter().enumerate() {
        let fits = |g: &Span| limit.is_none_or(|l| r.end.max(g.span.end) - g.span.start <= l);
        match spans.last_mut() {
            Some(g) if r.start <= g.span.end.saturating_add(gap) && fits(g) => {
                g.span.end = g.span.end.max(r.end);
                g.members.push(k);
            }
            _ => spans.push(Span {
                span: r,
                members: vec![k],
            }),
        }
    }
    spans
}

/// The version of a stored value that a read saw: what a conditional write
/// compares against (TensorStore's storage generation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Generation {
    /// No value under the key.
    Absent,
    /// One version of a value: an object store's ETag and version, a local
    /// file's identity (device, inode, modification time in ns, size), a
    /// memory store's counter. Opaque; equal tags are the same version.
    Tag(String),
    /// The store cannot tell versions apart (a zip archive, a store served
    /// from Python): a write conditional on this is unconditional.
    Unknown,
}

impl Generation {
    /// The text form handed to Python and back: `absent`, `unknown`, `v:<tag>`.
    pub fn to_token(&self) -> String {
        match self {
            Generation::Absent => "absent".to_string(),
            Generation::Unknown => "unknown".to_string(),
            Generation::Tag(t) => format!("v:{t}"),
        }
    }

    pub fn from_token(token: &str) -> Result<Self> {
        match token {
            "absent" => Ok(Generation::Absent),
            "unknown" => Ok(Generation::Unknown),
            t => t
                .strip_prefix("v:")
                .map(|t| Generation::Tag(t.to_string()))
                .ok_or_else(|| Error::value(format!("not a store generation: '{token}'"))),
        }
    }
}

/// A value and the generation it was read at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    pub value: Option<Bytes>,
    pub generation: Generation,
}

/// Called once per store found to ignore byte ranges (the Python bindings
/// turn it into a warning).
static RANGES_IGNORED_HOOK: std::sync::OnceLock<fn(&str)> = std::sync::OnceLock::new();

/// The stores (by location) found to ignore byte ranges.
static IGNORING_RANGES: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Call `hook` with a store's location the first time that store is found to
/// ignore byte ranges.
pub fn on_ranges_ignored(hook: fn(&str)) {
    let _ = RANGES_IGNORED_HOOK.set(hook);
}

/// Note that the store at `store` ignores byte ranges (its ranges are cut out
/// of whole values from now on); the hook hears of it the first time.
pub fn ranges_ignored(store: &str) {
    let first = crate::fork::lock(&IGNORING_RANGES).insert(store.to_string());
    if first {
        if let Some(hook) = RANGES_IGNORED_HOOK.get() {
            hook(store);
        }
    }
}

/// Whether the store at `store` was found to ignore byte ranges.
pub fn ignores_ranges(store: &str) -> bool {
    crate::fork::lock(&IGNORING_RANGES).contains(store)
}

/// How the engine schedules a store's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoMode {
    /// Requests complete when they are made (local disk, memory, zip): the
    /// decoding threads make them, one chunk per thread at a time.
    Blocking,
    /// Requests take network round trips (object stores): many are kept in
    /// flight on the I/O runtime, independent of the decoding threads.
    Concurrent,
    /// The caller fetches the bytes (a store written in Python): requests are
    /// handed out in rounds (see [`caller`]).
    Caller,
}

/// What [`Store::read_into`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadInto {
    /// No value under the key.
    Missing,
    /// The value was read into the buffer.
    Read,
    /// The value has another size than the buffer, or the store cannot read
    /// into a buffer: nothing was read.
    NotRead,
}

/// One version of a stored value, opened for several range reads: each read
/// sees that version, even when the key is rewritten in between (a shard's
/// index and its inner chunks must come from the same shard). Opening does no
/// I/O; a missing value shows in the first read.
#[async_trait]
pub trait OpenValue: Send + Sync {
    /// Parts of the value (`None`: there is no value); an error if a range
    /// reaches past its end.
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>>;
    /// The generation of the version this value reads, once known (after a
    /// read or a [`OpenValue::pin`]); `None` where the store cannot tell
    /// versions apart (then nothing read from it is cached).
    fn generation(&self) -> Option<Generation> {
        None
    }
    /// Read only the version `expected` (a generation [`OpenValue::generation`]
    /// gave): whether the reads that follow are sure to see it. A value that
    /// can check at once (a local file: `fstat` of the opened file) says
    /// whether it is that version; one that checks on every read (an object:
    /// `If-Match`) takes it as its version, and its reads fail with
    /// [`crate::error::ErrorKind::Changed`] when the value is another version
    /// or gone. `false`: nothing is pinned (read as if nothing was known).
    async fn pin(&self, expected: &Generation) -> Result<bool> {
        let _ = expected;
        Ok(false)
    }
}

/// A value held in memory: one version by construction.
pub struct HeldValue(pub Option<Bytes>);

#[async_trait]
impl OpenValue for HeldValue {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        self.0.as_ref().map(|v| slice_ranges(v, ranges)).transpose()
    }
}

/// A store of byte values under `/`-separated keys.
#[async_trait]
pub trait Store: Send + Sync + Debug {
    /// How the engine schedules this store's requests.
    fn io_mode(&self) -> IoMode {
        IoMode::Blocking
    }
    /// Neighbouring byte ranges of one value closer than this many bytes are
    /// fetched in one request (a round trip costs more than the gap's bytes).
    fn coalesce_gap(&self) -> u64 {
        64 * 1024
    }
    /// Where `key` is, for error messages: a path or URL.
    fn location(&self, key: &str) -> String;
    /// The value under `key`, or `None` if there is none.
    async fn get(&self, key: &str) -> Result<Option<Bytes>>;
    /// `key` opened for range reads that all see one version of its value.
    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>>;
    /// Parts of the value under `key`, or `None` if there is none.
    async fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        self.open(key)?.read_ranges(ranges).await
    }
    /// Read the value under `key` straight into `out` when it is exactly
    /// `out.len()` bytes long (stores that answer at once; others say `NotRead`).
    fn read_into(&self, _key: &str, _out: &mut [u8]) -> Result<ReadInto> {
        Ok(ReadInto::NotRead)
    }
    /// Store `value` under `key`, atomically: a reader sees the old or the new value.
    async fn set(&self, key: &str, value: Bytes) -> Result<()>;
    /// Remove `key`; removing a missing key is not an error.
    async fn delete(&self, key: &str) -> Result<()>;
    /// Whether this store can tell versions apart and write on condition
    /// ([`Store::get_versioned`] gives tags, [`Store::set_if`] checks them).
    /// An object store asks its server once (a server or proxy may ignore
    /// the conditions).
    async fn conditional_writes(&self) -> Result<bool> {
        Ok(false)
    }
    /// The value under `key` and its generation ([`Generation::Unknown`]
    /// where the store cannot tell versions apart).
    async fn get_versioned(&self, key: &str) -> Result<Versioned> {
        Ok(Versioned {
            value: self.get(key).await?,
            generation: Generation::Unknown,
        })
    }
    /// The value under `key` and its generation if its generation is no
    /// longer `known`; `None` when it is still that version (a cached copy
    /// is current). Stores answer cheaply where they can: a local file's
    /// `stat`, an object store's conditional `GET` (`If-None-Match`: a 304
    /// without a body). [`Generation::Unknown`] is never current.
    async fn get_if_changed(&self, key: &str, known: &Generation) -> Result<Option<Versioned>> {
        let now = self.get_versioned(key).await?;
        let same = now.generation == *known && now.generation != Generation::Unknown;
        Ok((!same).then_some(now))
    }
    /// Store `value` under `key` if its generation is still `expected`
    /// ([`Generation::Absent`]: only if there is no value): `Ok(Some(g))`
    /// when written, `g` the generation of the value written
    /// ([`Generation::Unknown`] where the store cannot tell), `Ok(None)` when
    /// the condition failed (nothing written). [`Generation::Unknown`] writes
    /// unconditionally.
    async fn set_if(
        &self,
        key: &str,
        value: Bytes,
        expected: &Generation,
    ) -> Result<Option<Generation>> {
        match expected {
            Generation::Unknown => self
                .set(key, value)
                .await
                .map(|_| Some(Generation::Unknown)),
            _ => Err(conditions_unsupported(self.location(key))),
        }
    }
    /// The generation of the value under `key` now, asked cheaply and
    /// without its bytes (a `stat`, a `HEAD`); [`Generation::Unknown`] where
    /// the store cannot tell versions apart.
    async fn generation(&self, key: &str) -> Result<Generation> {
        let _ = key;
        Ok(Generation::Unknown)
    }
    /// Remove `key` if its generation is still `expected`; as [`Store::set_if`].
    /// Stores that cannot delete on condition say so in
    /// [`Store::conditional_deletes`] (the engine then writes instead).
    async fn delete_if(&self, key: &str, expected: &Generation) -> Result<bool> {
        match expected {
            Generation::Unknown => self.delete(key).await.map(|_| true),
            _ => Err(conditions_unsupported(self.location(key))),
        }
    }
    /// Whether [`Store::delete_if`] can check a generation (object stores
    /// have no conditional delete).
    fn conditional_deletes(&self) -> bool {
        false
    }
    /// Every key that starts with `prefix`, sorted.
    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>>;
    /// The immediate children of the directory `prefix` (`""` or ending in `/`):
    /// (names of keys, names of sub-directories), each sorted.
    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)>;
    /// Remove every key under `prefix`.
    async fn delete_prefix(&self, prefix: &str) -> Result<()> {
        for key in self.list_prefix(prefix).await? {
            self.delete(&key).await?;
        }
        Ok(())
    }
    /// Whether `key` holds a value.
    async fn exists(&self, key: &str) -> Result<bool> {
        Ok(self.get(key).await?.is_some())
    }
    /// Whether keys can be removed (a zip archive cannot: the engine then
    /// writes a chunk that became all fill value instead of deleting it).
    fn supports_deletes(&self) -> bool {
        true
    }
    /// The bytes of the values the store holds in this process's memory (an
    /// in-memory store: a transaction's staged writes count against its
    /// budget by it); `None` for a store that holds them elsewhere.
    fn bytes_in_memory(&self) -> Option<u64> {
        None
    }
    /// Make every write so far durable and visible to other readers of the
    /// store (a zip archive writes its directory); nothing to do for most.
    fn flush(&self) -> Result<()> {
        Ok(())
    }
}

/// A conditional write asked of a store that cannot check conditions.
pub fn conditions_unsupported(location: String) -> Error {
    Error::unsupported(format!(
        "'{location}': this store cannot write on condition (no generations)"
    ))
}

/// Every key of `store` with its value (to pickle an in-memory store).
pub fn items(store: &dyn Store) -> Result<Vec<(String, Bytes)>> {
    block_on(store, async {
        let mut items = Vec::new();
        for key in store.list_prefix("").await? {
            if let Some(v) = store.get(&key).await? {
                items.push((key, v));
            }
        }
        Ok(items)
    })?
}

/// Run one store operation to completion from synchronous code (the Python
/// layer's metadata reads and writes): on the I/O runtime for object stores,
/// on the calling thread for stores that answer at once.
pub fn block_on<T>(store: &dyn Store, op: impl std::future::Future<Output = T>) -> Result<T> {
    match store.io_mode() {
        IoMode::Concurrent => runtime::block_on(op),
        IoMode::Blocking | IoMode::Caller => now(op),
    }
}

/// The output of a future of a store that answers at once, from one poll.
///
/// Not an executor's `block_on`: a decoding thread that waits inside a nested
/// parallel loop may steal another chunk's work and poll its future on the
/// same thread, which an executor refuses (it panics when entered twice).
/// These futures never wait, so one poll finishes them; one that would wait
/// is an error, never a hang.
pub fn now<F: std::future::Future>(fut: F) -> Result<F::Output> {
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Ok(v),
        std::task::Poll::Pending => Err(Error::store(
            "internal error: a store that answers at once has to wait",
        )),
    }
}

/// Reject keys that could escape the store or are malformed.
pub fn check_key(key: &str) -> Result<()> {
    if key.is_empty()
        || key.starts_with('/')
        || key
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
        || key.contains('\\')
        || key.contains('\0')
    {
        return Err(Error::store(format!("invalid store key '{key}'")));
    }
    Ok(())
}

/// Reject list prefixes that could escape the store: `""` or a key-like
/// prefix (a trailing `/` allowed).
pub fn check_prefix(prefix: &str) -> Result<()> {
    let trimmed = prefix.strip_suffix('/').unwrap_or(prefix);
    if trimmed.is_empty() && prefix.len() <= 1 && !prefix.starts_with('/') {
        return Ok(());
    }
    check_key(trimmed).map_err(|_| Error::store(format!("invalid store prefix '{prefix}'")))
}

/// Split the sorted keys under `prefix` into the immediate children (keys,
/// sub-directories), each sorted and without repeats.
pub fn children(
    prefix: &str,
    keys: impl IntoIterator<Item = String>,
) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    for key in keys {
        let Some(rest) = key.strip_prefix(prefix) else {
            continue;
        };
        match rest.split_once('/') {
            Some((dir, _)) if dirs.last().map(String::as_str) != Some(dir) => {
                dirs.push(dir.to_string());
            }
            Some(_) => {}
            None if !rest.is_empty() => names.push(rest.to_string()),
            None => {}
        }
    }
    names.sort();
    dirs.sort();
    dirs.dedup();
    (names, dirs)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn fit_range_cuts_a_range_out_of_a_whole_value() {
        let whole = Bytes::from_static(b"0123456789");
        let short = Bytes::from_static(b"234");
        assert_eq!(
            fit_range(short, &ByteRange::span(2, 3), "a").unwrap(),
            "234"
        );
        let cut = fit_range(whole.clone(), &ByteRange::span(2, 3), "test://ignores").unwrap();
        assert_eq!(cut, "234");
        assert!(ignores_ranges("test://ignores"));
        assert!(!ignores_ranges("test://other"));
        assert_eq!(
            fit_range(whole.clone(), &ByteRange::Suffix(4), "s").unwrap(),
            "6789"
        );
        let e = fit_range(Bytes::from_static(b"01"), &ByteRange::span(0, 3), "s").unwrap_err();
        assert!(e.to_string().contains("the value is shorter"), "{e}");
        let e = fit_range(whole, &ByteRange::span(8, 3), "s").unwrap_err();
        assert!(e.to_string().contains("nor a whole value"), "{e}");
    }

    fn run<T>(store: &dyn Store, f: impl std::future::Future<Output = T>) -> T {
        block_on(store, f).unwrap()
    }

    /// The behaviour every store must have.
    pub fn exercise(store: &dyn Store) {
        let b = |s: &[u8]| Bytes::copy_from_slice(s);
        run(store, async {
            assert_eq!(store.get("a/b").await.unwrap(), None);
            store.set("a/b", b(b"hello")).await.unwrap();
            store.set("a/c/d", b(b"x")).await.unwrap();
            store.set("zarr.json", b(b"{}")).await.unwrap();
            assert_eq!(store.get("a/b").await.unwrap().unwrap(), b"hello"[..]);
            store.set("a/b", b(b"world!")).await.unwrap();
            assert_eq!(store.get("a/b").await.unwrap().unwrap(), b"world!"[..]);
            let r = store
                .get_ranges(
                    "a/b",
                    &[
                        ByteRange::span(1, 2),
                        ByteRange::Suffix(2),
                        ByteRange::FromStart {
                            offset: 4,
                            length: None,
                        },
                    ],
                )
                .await
                .unwrap()
                .unwrap();
            assert_eq!(r, vec![b(b"or"), b(b"d!"), b(b"d!")]);
            assert!(store
                .get_ranges("a/b", &[ByteRange::Suffix(7)])
                .await
                .is_err());
            assert!(store
                .get_ranges("a/b", &[ByteRange::span(3, 9)])
                .await
                .is_err());
            assert_eq!(
                store
                    .get_ranges("nope", &[ByteRange::Suffix(1)])
                    .await
                    .unwrap(),
                None
            );
            let missing = store.open("nope").unwrap();
            assert!(missing.read_ranges(&[]).await.unwrap().is_none());
            // An opened value keeps reading the version it opened, in any order,
            // while the key is rewritten (once it has been read).
            let opened = store.open("a/b").unwrap();
            let suffix = opened.read_ranges(&[ByteRange::Suffix(3)]).await.unwrap();
            store.set("a/b", b(b"WORLD?")).await.unwrap();
            let from_start = ByteRange::span(0, 3);
            let start = opened.read_ranges(&[from_start, from_start]).await;
            assert_eq!(suffix, Some(vec![b(b"ld!")]));
            match start {
                Ok(start) => assert_eq!(start, Some(vec![b(b"wor"), b(b"wor")])),
                // A store that cannot keep a version must refuse, never mix.
                Err(e) => assert_eq!(e.kind, crate::error::ErrorKind::Store, "{e}"),
            }
            assert!(opened.read_ranges(&[ByteRange::Suffix(7)]).await.is_err());
            drop(opened);
            assert_eq!(store.get("a/b").await.unwrap().unwrap(), b"WORLD?"[..]);
            store.set("a/b", b(b"world!")).await.unwrap();
            assert_eq!(store.list_prefix("a/").await.unwrap(), vec!["a/b", "a/c/d"]);
            assert_eq!(
                store.list_dir("").await.unwrap(),
                (vec!["zarr.json".to_string()], vec!["a".to_string()])
            );
            assert_eq!(
                store.list_dir("a/").await.unwrap(),
                (vec!["b".to_string()], vec!["c".to_string()])
            );
            assert!(store.exists("a/c/d").await.unwrap());
            store.delete("a/b").await.unwrap();
            store.delete("a/b").await.unwrap();
            assert_eq!(store.get("a/b").await.unwrap(), None);
            store.delete_prefix("a/").await.unwrap();
            assert!(store.list_prefix("a/").await.unwrap().is_empty());
            assert!(store.set("../x", b(b"")).await.is_err());
            assert!(store.set("/x", b(b"")).await.is_err());
            assert!(store.get("a//b").await.is_err());
            assert!(store.list_prefix("../").await.is_err());
            assert!(store.list_dir("/").await.is_err());
        });
    }

    /// Generations and conditional writes, for stores that have them.
    pub fn exercise_conditional(store: &dyn Store) {
        let b = |s: &[u8]| Bytes::copy_from_slice(s);
        run(store, async {
            assert!(store.conditional_writes().await.unwrap());
            assert!(store.conditional_deletes());
            let missing = store.get_versioned("k/x").await.unwrap();
            assert_eq!(missing.value, None);
            assert_eq!(missing.generation, Generation::Absent);
            let written = store
                .set_if("k/x", b(b"1"), &Generation::Absent)
                .await
                .unwrap();
            assert!(store
                .set_if("k/x", b(b"2"), &Generation::Absent)
                .await
                .unwrap()
                .is_none());
            let first = store.get_versioned("k/x").await.unwrap();
            assert_eq!(first.value.as_deref(), Some(&b"1"[..]));
            assert!(matches!(first.generation, Generation::Tag(_)));
            assert_eq!(
                written,
                Some(first.generation.clone()),
                "a write gives its generation"
            );
            assert_eq!(store.generation("k/x").await.unwrap(), first.generation);
            // An unconditional rewrite of the same size is a new generation.
            store.set("k/x", b(b"3")).await.unwrap();
            let third = store.get_versioned("k/x").await.unwrap();
            assert_ne!(first.generation, third.generation);
            assert!(store
                .set_if("k/x", b(b"4"), &first.generation)
                .await
                .unwrap()
                .is_none());
            assert_eq!(store.get("k/x").await.unwrap().unwrap(), b"3"[..]);
            let written = store
                .set_if("k/x", b(b"5"), &third.generation)
                .await
                .unwrap();
            let fifth = store.get_versioned("k/x").await.unwrap();
            assert_eq!(written, Some(fifth.generation.clone()));
            assert_eq!(fifth.value.as_deref(), Some(&b"5"[..]));
            assert!(!store.delete_if("k/x", &third.generation).await.unwrap());
            assert!(store.get("k/x").await.unwrap().is_some());
            assert!(store.delete_if("k/x", &fifth.generation).await.unwrap());
            assert_eq!(store.get("k/x").await.unwrap(), None);
            assert_eq!(store.generation("k/x").await.unwrap(), Generation::Absent);
            assert!(!store.delete_if("k/x", &fifth.generation).await.unwrap());
            assert!(store.delete_if("k/x", &Generation::Absent).await.unwrap());
            // Unknown: unconditional.
            let written = store
                .set_if("k/x", b(b"6"), &Generation::Unknown)
                .await
                .unwrap();
            assert_eq!(written, Some(store.generation("k/x").await.unwrap()));
            assert!(store.delete_if("k/x", &Generation::Unknown).await.unwrap());
            let token = fifth.generation.to_token();
            assert_eq!(Generation::from_token(&token).unwrap(), fifth.generation);
        });
    }

    /// `read_into` for stores that answer at once.
    pub fn exercise_read_into(store: &dyn Store) {
        run(store, store.set("k", Bytes::from_static(b"world!"))).unwrap();
        let mut buf = [0u8; 6];
        assert_eq!(store.read_into("k", &mut buf).unwrap(), ReadInto::Read);
        assert_eq!(&buf, b"world!");
        assert_eq!(
            store.read_into("k", &mut [0u8; 5]).unwrap(),
            ReadInto::NotRead
        );
        assert_eq!(store.read_into("zz", &mut buf).unwrap(), ReadInto::Missing);
        run(store, store.delete("k")).unwrap();
    }

    #[test]
    fn generation_tokens() {
        for g in [
            Generation::Absent,
            Generation::Unknown,
            Generation::Tag("\"etag\"\u{1f}7".into()),
        ] {
            assert_eq!(Generation::from_token(&g.to_token()).unwrap(), g);
        }
        assert!(Generation::from_token("what").is_err());
    }

    #[test]
    fn ranges_and_prefixes() {
        assert_eq!(ByteRange::span(2, 3).resolve(10).unwrap(), (2, 5));
        assert!(ByteRange::span(u64::MAX, 3).resolve(10).is_err());
        assert!(ByteRange::Suffix(11).resolve(10).is_err());
        check_prefix("").unwrap();
        check_prefix("a/").unwrap();
        check_prefix("a/b").unwrap();
        for bad in ["/", "../", "a/../", "/a", "a//"] {
            assert!(check_prefix(bad).is_err(), "{bad}");
        }
        let keys = ["a/b", "a/c/d", "a/c/e", "b"].map(String::from);
        assert_eq!(
            children("a/", keys.clone()),
            (vec!["b".to_string()], vec!["c".to_string()])
        );
        assert_eq!(
            children("", keys),
            (vec!["b".to_string()], vec!["a".to_string()])
        );
    }
}
