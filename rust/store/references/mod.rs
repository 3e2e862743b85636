//! References (kerchunk, VirtualiZarr): a read-only store whose keys resolve
//! to inline bytes, to a whole object elsewhere, or to a byte range
//! `(url, offset, length)` of one (a chunk inside a netCDF4/HDF5, TIFF or
//! GRIB file). The referenced files are read through the stores zarrox
//! already has: a local directory, or an object store (S3, GCS, Azure, HTTP)
//! built from the URL and the `remote_options`, one per bucket or host.
//!
//! Chunks read together from one file are merged into fewer requests: the
//! ranges asked for at the same time (the engine keeps many chunk reads in
//! flight), and those asked for while a request to the file is in flight
//! (they wait for it: one round per file at a time), are gathered, sorted
//! and coalesced when the gap between them is under
//! [`ReferenceOptions::coalesce_gap`] (the target store's own gap by
//! default), each merged request at most [`ReferenceOptions::max_request`]
//! bytes.
//!
//! Kerchunk's JSON: version 0 (a plain object of key -> value) and version 1
//! (`{"version": 1, "templates": {...}, "gen": [...], "refs": {...}}`).
//! A value is text (`"base64:..."` for binary), `[url]` or
//! `[url, offset, length]`; `{{name}}` in a URL is a template.

pub mod records;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use async_trait::async_trait;
use base64::Engine as _;
use bytes::Bytes;
use futures::channel::oneshot;
use serde_json::Value;

use self::records::Records;
use super::{
    check_key, check_prefix, children, coalesce, slice_ranges, ByteRange, FilesystemStore, IoMode,
    OpenValue, Store,
};
use crate::error::{Error, Result};
use crate::fork;

/// What a key of a reference store resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// The value itself.
    Inline(Bytes),
    /// The whole object at a URL.
    Whole(String),
    /// `length` bytes from `offset` of the object at a URL.
    Range {
        url: String,
        offset: u64,
        length: u64,
    },
}

/// Where referenced files are and how requests to them are merged.
#[derive(Debug, Clone, Default)]
pub struct ReferenceOptions {
    /// The protocol of URLs written without one (`s3`, `gs`, ...; `None` or
    /// `file`: local paths), and the one `options` apply to.
    pub protocol: Option<String>,
    /// object_store configuration of the referenced object stores.
    pub options: Vec<(String, String)>,
    /// The configuration of the files whose URL starts with a prefix (the
    /// longest that matches; others have `options`): references spanning
    /// buckets or clouds with credentials of their own.
    pub prefixes: Vec<(String, Vec<(String, String)>)>,
    /// Ranges of one file closer than this are fetched in one request
    /// (`None`: the target store's own gap).
    pub coalesce_gap: Option<u64>,
    /// The largest merged request, in bytes (0: [`MAX_REQUEST`]).
    pub max_request: u64,
}

/// The largest merged request by default.
pub const MAX_REQUEST: u64 = 32 * 1024 * 1024;

/// Range requests waiting to be fetched from one file, by the process that
/// asked (a child forked mid-round finds its parent's round and starts anew:
/// no leader of that round runs in the child). A queue exists while its
/// leader serves it: one round of the file in flight at a time, each the
/// ranges that queued while the one before was fetched, merged.
struct Queue {
    pid: u32,
    waiting: Vec<Waiting>,
}

struct Waiting {
    offset: u64,
    length: u64,
    answer: oneshot::Sender<Result<Bytes>>,
}

type Target = (Arc<dyn Store>, String);

/// A read-only store of references.
pub struct ReferenceStore {
    name: String,
    refs: BTreeMap<String, Reference>,
    options: ReferenceOptions,
    /// Stores of referenced files, by bucket, host or directory.
    stores: Mutex<HashMap<String, Arc<dyn Store>>>,
    /// Range requests gathered per file URL, and whether one of them leads.
    queues: Mutex<HashMap<String, Queue>>,
    /// Chunk references loaded record by record (Parquet references).
    records: Option<Records>,
}

impl std::fmt::Debug for ReferenceStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReferenceStore({}, {} keys)", self.name, self.refs.len())
    }
}

impl ReferenceStore {
    /// A store of the references in `json` (kerchunk version 0 or 1); `name`
    /// (where they came from) names it in messages.
    pub fn from_json(name: &str, json: &str, options: ReferenceOptions) -> Result<Self> {
        Ok(Self::new(name, parse(json)?, options))
    }

    pub fn new(name: &str, refs: BTreeMap<String, Reference>, options: ReferenceOptions) -> Self {
        ReferenceStore {
            name: name.to_string(),
            refs,
            options,
            stores: Mutex::new(HashMap::new()),
            queues: Mutex::new(HashMap::new()),
            records: None,
        }
    }

    /// The store with chunk references that `records` load when read (keys
    /// of `refs` come first).
    pub fn with_records(mut self, records: Records) -> Self {
        self.records = Some(records);
        self
    }

    /// What `key` resolves to.
    async fn resolve(&self, key: &str) -> Result<Option<Reference>> {
        match (self.refs.get(key), &self.records) {
            (Some(r), _) => Ok(Some(r.clone())),
            (None, Some(records)) => records.resolve(key).await,
            (None, None) => Ok(None),
        }
    }

    /// The store of the file at `url` and the file's key in it (stores are
    /// made once per bucket, host or directory).
    fn target(&self, url: &str) -> Result<Target> {
        let protocol = self.options.protocol.as_deref();
        let (base, key) = split_url(url, protocol)?;
        let prefix = self.prefix_of(&full_url(url, protocol));
        let id = store_id(&base, prefix);
        let mut stores = fork::lock(&self.stores);
        if let Some(s) = stores.get(&id) {
            return Ok((Arc::clone(s), key));
        }
        let store = self.make_store(&base, prefix)?;
        stores.insert(id, Arc::clone(&store));
        Ok((store, key))
    }

    /// The longest of the options' prefixes that `url` starts with (at a
    /// `/`: `s3://b` is not a prefix of `s3://bb/f`).
    fn prefix_of(&self, url: &str) -> Option<usize> {
        self.options
            .prefixes
            .iter()
            .enumerate()
            .filter(|(_, (p, _))| {
                url.strip_prefix(p.as_str()).is_some_and(|rest| {
                    p.ends_with('/') || rest.is_empty() || rest.starts_with(['/', '?'])
                })
            })
            .max_by_key(|(_, (p, _))| p.len())
            .map(|(i, _)| i)
    }

    fn make_store(&self, base: &str, prefix: Option<usize>) -> Result<Arc<dyn Store>> {
        if let Some(dir) = base.strip_prefix("file://") {
            return Ok(Arc::new(FilesystemStore::new(dir)));
        }
        self.object_store(base, prefix)
    }

    #[cfg(feature = "object-stores")]
    fn object_store(&self, base: &str, prefix: Option<usize>) -> Result<Arc<dyn Store>> {
        let scheme = base.split("://").next().unwrap_or_default();
        let same = self
            .options
            .protocol
            .as_deref()
            .is_some_and(|p| family(p) == family(scheme));
        let mut options = match prefix {
            Some(i) => self.options.prefixes[i].1.clone(),
            None if same => self.options.options.clone(),
            None => Vec::new(),
        };
        if scheme == "http" && !options.iter().any(|(k, _)| k == "allow_http") {
            options.push(("allow_http".to_string(), "true".to_string()));
        }
        Ok(Arc::new(super::ObjectStore::from_url(base, options)?))
    }

    #[cfg(not(feature = "object-stores"))]
    fn object_store(&self, base: &str, _prefix: Option<usize>) -> Result<Arc<dyn Store>> {
        Err(Error::unsupported(format!(
            "'{base}': object stores are not built in"
        )))
    }

    fn gap(&self, store: &dyn Store) -> u64 {
        self.options
            .coalesce_gap
            .unwrap_or_else(|| store.coalesce_gap())
    }

    fn max_request(&self) -> u64 {
        match self.options.max_request {
            0 => MAX_REQUEST,
            n => n,
        }
    }

    /// `length` bytes from `offset` of the file at `url`, fetched with the
    /// other ranges of that file asked for at the same time.
    async fn read_range(&self, url: &str, offset: u64, length: u64) -> Result<Bytes> {
        let (answer, receiver) = oneshot::channel();
        let lead = {
            let mut queues = fork::lock(&self.queues);
            let pid = std::process::id();
            let waiting = Waiting {
                offset,
                length,
                answer,
            };
            match queues.get_mut(url) {
                // a leader serves this file: the range goes out with its next round
                Some(queue) if queue.pid == pid => {
                    queue.waiting.push(waiting);
                    false
                }
                // none (or one of the parent process, before a fork): lead
                _ => {
                    queues.insert(
                        url.to_string(),
                        Queue {
                            pid,
                            waiting: vec![waiting],
                        },
                    );
                    true
                }
            }
        };
        if lead {
            // The leader's first round waits for the ranges asked for at once
            // (the futures polled with it); then, round after round, it
            // fetches what queued while the round before was in flight, until
            // none is left. If this future is dropped first, the guard takes
            // the queue back: the reads waiting fetch their own ranges.
            let mut guard = Round {
                store: self,
                url,
                done: false,
            };
            YieldTwice(0).await;
            loop {
                let round = guard.next_round();
                if round.is_empty() {
                    break;
                }
                self.fetch_round(url, round).await;
            }
        }
        match receiver.await {
            Ok(got) => got,
            // the round's leader was dropped before it answered
            Err(_) => self.fetch(url, &[(offset, length)]).await?.remove(0),
        }
    }

    /// Fetch a round of ranges of `url`, merged, and answer each.
    async fn fetch_round(&self, url: &str, mut round: Vec<Waiting>) {
        round.sort_by_key(|w| (w.offset, w.length));
        let asked: Vec<(u64, u64)> = round.iter().map(|w| (w.offset, w.length)).collect();
        match self.fetch(url, &asked).await {
            Ok(parts) => {
                for (w, part) in round.into_iter().zip(parts) {
                    let _ = w.answer.send(part);
                }
            }
            Err(e) => {
                for w in round {
                    let _ = w.answer.send(Err(e.clone()));
                }
            }
        }
    }

    /// The ranges `asked` (sorted by offset) of the file at `url`, neighbours
    /// merged into one request each.
    async fn fetch(&self, url: &str, asked: &[(u64, u64)]) -> Result<Vec<Result<Bytes>>> {
        let (store, key) = self.target(url)?;
        let ranges = asked.iter().map(|&(o, l)| o..o.saturating_add(l));
        let spans = coalesce(ranges, self.gap(store.as_ref()), Some(self.max_request()));
        let requests: Vec<ByteRange> = spans
            .iter()
            .map(|s| ByteRange::span(s.span.start, s.span.end - s.span.start))
            .collect();
        let got = store
            .get_ranges(&key, &requests)
            .await
            .map_err(|e| e.context(format!("reading referenced file '{url}'")))?
            .ok_or_else(|| Error::store(format!("referenced file '{url}' not found")))?;
        let mut parts = vec![None; asked.len()];
        for (span, buffer) in spans.iter().zip(got) {
            for &k in &span.members {
                let (offset, length) = asked[k];
                let at = (offset - span.span.start) as usize;
                let end = at.saturating_add(length as usize);
                parts[k] = Some(if end <= buffer.len() {
                    Ok(buffer.slice(at..end))
                } else {
                    Err(Error::corrupt(format!(
                        "referenced file '{url}' ends before bytes {offset}..{}",
                        offset.saturating_add(length)
                    )))
                });
            }
        }
        Ok(parts
            .into_iter()
            .map(|p| {
                p.unwrap_or_else(|| Err(Error::store("internal error: a range was not fetched")))
            })
            .collect())
    }

    fn read_only(&self, key: &str) -> Error {
        Error::store(format!(
            "cannot write '{}': a reference store is read-only",
            self.location(key)
        ))
    }
}

/// A leader's hold on its file's queue: the rounds it takes, and the queue
/// taken back when the leader is dropped early.
struct Round<'a> {
    store: &'a ReferenceStore,
    url: &'a str,
    /// The queue is gone: the leader ended it (a later queue of the same
    /// file is another leader's).
    done: bool,
}

impl Round<'_> {
    /// The ranges waiting now; none when the queue is empty, which then
    /// ends (in the same lock: a range asked for after it finds no queue and
    /// leads a new one).
    fn next_round(&mut self) -> Vec<Waiting> {
        let mut queues = fork::lock(&self.store.queues);
        let pid = std::process::id();
        match queues.get_mut(self.url) {
            Some(queue) if queue.pid == pid && !queue.waiting.is_empty() => {
                std::mem::take(&mut queue.waiting)
            }
            Some(queue) if queue.pid == pid => {
                queues.remove(self.url);
                self.done = true;
                Vec::new()
            }
            _ => {
                self.done = true;
                Vec::new()
            }
        }
    }
}

impl Drop for Round<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Dropping the senders tells the waiting reads to fetch themselves.
            fork::lock(&self.store.queues).remove(self.url);
        }
    }
}

/// Gives way twice to the futures polled alongside (so that the reads
/// started together join one round).
struct YieldTwice(u8);

impl Future for YieldTwice {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 >= 2 {
            return Poll::Ready(());
        }
        self.0 += 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The kind of object store a URL scheme names.
#[cfg(feature = "object-stores")]
fn family(scheme: &str) -> &str {
    match scheme {
        "s3" | "s3a" => "s3",
        "gs" | "gcs" => "gcs",
        "az" | "azure" | "abfs" | "abfss" | "adl" => "azure",
        "http" | "https" => "http",
        s => s,
    }
}

/// A referenced URL as (its store's base: `file://<directory>` or
/// `scheme://bucket-or-host`, the key of the file in that store). A URL
/// without a scheme has the `protocol`'s (a local path without one).
fn split_url(url: &str, protocol: Option<&str>) -> Result<(String, String)> {
    let bad = |why: &str| Error::value(format!("referenced URL '{url}': {why}"));
    let full = full_url(url, protocol);
    if let Some(path) = full.strip_prefix("file://") {
        let path = std::path::Path::new(path);
        let (Some(dir), Some(file)) = (path.parent(), path.file_name()) else {
            return Err(bad("not a file path"));
        };
        let dir = if dir.as_os_str().is_empty() {
            std::path::Path::new(".")
        } else {
            dir
        };
        let file = file.to_str().ok_or_else(|| bad("not UTF-8"))?;
        return Ok((format!("file://{}", dir.display()), file.to_string()));
    }
    let parsed = url::Url::parse(&full).map_err(|e| bad(&e.to_string()))?;
    let host = parsed.host_str().ok_or_else(|| bad("no bucket or host"))?;
    let scheme = parsed.scheme();
    // abfs[s]://<container>@<account>.dfs.core.windows.net/<path>: the
    // container is the user part
    let user = match parsed.username() {
        "" => String::new(),
        u => format!("{u}@"),
    };
    let mut base = match parsed.port() {
        Some(port) => format!("{scheme}://{user}{host}:{port}"),
        None => format!("{scheme}://{user}{host}"),
    };
    // A query (a presigned URL's signature, an Azure SAS token) goes with
    // every request to the file: files with different queries get stores
    // of their own. Elsewhere it would name something the store cannot ask
    // for (an object version): refused rather than dropped.
    if let Some(query) = parsed.query() {
        if !matches!(scheme, "http" | "https") {
            return Err(bad("a query is only read from http(s) URLs"));
        }
        base = format!("{base}?{query}");
    }
    let path = percent_encoding::percent_decode_str(parsed.path().trim_start_matches('/'))
        .decode_utf8()
        .map_err(|_| bad("not UTF-8"))?
        .into_owned();
    if path.is_empty() {
        return Err(bad("no object path"));
    }
    Ok((base, path))
}

/// The key of a referenced files' store: one per bucket (host, directory)
/// and the options it has.
fn store_id(base: &str, prefix: Option<usize>) -> String {
    match prefix {
        Some(i) => format!("{i} {base}"),
        None => format!("- {base}"),
    }
}

/// A referenced URL with its scheme: the `protocol`'s where it has none
/// (`file://` for a local path).
fn full_url(url: &str, protocol: Option<&str>) -> String {
    match (url.contains("://"), protocol) {
        (true, _) => url.to_string(),
        (false, Some(p)) if !matches!(p, "" | "file" | "local") => {
            format!("{p}://{}", url.trim_start_matches('/'))
        }
        (false, _) => format!("file://{url}"),
    }
}

/// One opened key: its value read once, ranges cut from it.
struct RefValue<'a> {
    store: &'a ReferenceStore,
    key: String,
}

#[async_trait]
impl OpenValue for RefValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        let value = self.store.get(&self.key).await?;
        value.map(|v| slice_ranges(&v, ranges)).transpose()
    }
}

#[async_trait]
impl Store for ReferenceStore {
    fn io_mode(&self) -> IoMode {
        // the ranges of one round are gathered on the I/O runtime
        IoMode::Concurrent
    }

    fn location(&self, key: &str) -> String {
        let loaded = match self.refs.get(key) {
            Some(r) => Some(r.clone()),
            None => self.records.as_ref().and_then(|r| r.peek(key)),
        };
        match loaded.as_ref() {
            Some(Reference::Whole(url)) => format!("{url} (reference '{key}')"),
            Some(Reference::Range {
                url,
                offset,
                length,
            }) => format!("{url} bytes {offset}+{length} (reference '{key}')"),
            _ if key.is_empty() => format!("reference://{}", self.name),
            _ => format!("reference://{}/{key}", self.name),
        }
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        check_key(key)?;
        match self.resolve(key).await? {
            None => Ok(None),
            Some(Reference::Inline(b)) => Ok(Some(b)),
            Some(Reference::Whole(url)) => {
                let (store, file) = self.target(&url)?;
                store
                    .get(&file)
                    .await
                    .map_err(|e| e.context(format!("reference '{key}'")))?
                    .ok_or_else(|| {
                        Error::store(format!(
                            "reference '{key}': referenced file '{url}' not found"
                        ))
                    })
                    .map(Some)
            }
            Some(Reference::Range {
                url,
                offset,
                length,
            }) => self
                .read_range(&url, offset, length)
                .await
                .map(Some)
                .map_err(|e| e.context(format!("reference '{key}'"))),
        }
    }

    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        check_key(key)?;
        Ok(Box::new(RefValue {
            store: self,
            key: key.to_string(),
        }))
    }

    async fn set(&self, key: &str, _value: Bytes) -> Result<()> {
        Err(self.read_only(key))
    }

    async fn delete(&self, key: &str) -> Result<()> {
        Err(self.read_only(key))
    }

    async fn delete_prefix(&self, prefix: &str) -> Result<()> {
        Err(self.read_only(prefix))
    }

    fn supports_deletes(&self) -> bool {
        false
    }

    async fn exists(&self, key: &str) -> Result<bool> {
        check_key(key)?;
        Ok(self.resolve(key).await?.is_some())
    }

    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        check_prefix(prefix)?;
        let mut keys: Vec<String> = self
            .refs
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect();
        if let Some(records) = &self.records {
            // the chunk keys the records hold (loading them; `refs` wins)
            let chunks = records.keys(prefix).await?;
            keys.extend(chunks.into_iter().filter(|k| !self.refs.contains_key(k)));
            keys.sort();
        }
        Ok(keys)
    }

    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        Ok(children(prefix, self.list_prefix(prefix).await?))
    }
}

// -- kerchunk JSON --------------------------------------------------------------------------

/// The references of kerchunk JSON, version 0 or 1.
pub fn parse(json: &str) -> Result<BTreeMap<String, Reference>> {
    let doc: Value = serde_json::from_str(json)
        .map_err(|e| Error::value(format!("references are not valid JSON: {e}")))?;
    let Value::Object(doc) = doc else {
        return Err(Error::value("references must be a JSON object"));
    };
    let empty = serde_json::Map::new();
    let (refs, templates, gen) = match doc.get("version") {
        None => (&doc, &empty, None),
        Some(v) if v.as_u64() == Some(1) => {
            let refs = match doc.get("refs") {
                None => &empty,
                Some(Value::Object(r)) => r,
                Some(_) => return Err(Error::value("references: 'refs' must be an object")),
            };
            let templates = match doc.get("templates") {
                None | Some(Value::Null) => &empty,
                Some(Value::Object(t)) => t,
                Some(_) => return Err(Error::value("references: 'templates' must be an object")),
            };
            (refs, templates, doc.get("gen"))
        }
        Some(v) => {
            return Err(Error::unsupported(format!(
                "references of version {v} (versions 0 and 1 are read)"
            )))
        }
    };
    let mut templates_text = HashMap::new();
    for (name, value) in templates {
        let Value::String(text) = value else {
            return Err(Error::value(format!(
                "references: template '{name}' is not text"
            )));
        };
        templates_text.insert(name.as_str(), text.as_str());
    }
    let mut out = BTreeMap::new();
    for (key, value) in refs {
        let r = reference(key, value, &templates_text)?;
        check_key(key).map_err(|_| Error::value(format!("references: invalid key '{key}'")))?;
        out.insert(key.clone(), r);
    }
    if let Some(gen) = gen {
        generate(gen, &templates_text, &mut out)?;
    }
    Ok(out)
}

/// One value of `refs`.
fn reference(key: &str, value: &Value, templates: &HashMap<&str, &str>) -> Result<Reference> {
    let bad = |why: &str| Error::value(format!("reference '{key}': {why}"));
    match value {
        Value::String(text) => match text.strip_prefix("base64:") {
            Some(b64) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map(|b| Reference::Inline(Bytes::from(b)))
                .map_err(|e| bad(&format!("invalid base64: {e}"))),
            None => Ok(Reference::Inline(Bytes::from(text.clone().into_bytes()))),
        },
        // a JSON document written as an object rather than as text
        Value::Object(_) => Ok(Reference::Inline(Bytes::from(value.to_string()))),
        Value::Array(parts) => {
            let url = match parts.first() {
                Some(Value::String(u)) if !u.is_empty() => {
                    render(u, templates, &[]).map_err(|e| bad(&e))?
                }
                _ => return Err(bad("the first item must be a URL")),
            };
            let number = |v: &Value, what: &str| {
                v.as_u64()
                    .ok_or_else(|| bad(&format!("the {what} must be a non-negative integer")))
            };
            match parts.as_slice() {
                [_] => Ok(Reference::Whole(url)),
                [_, offset, length] => Ok(Reference::Range {
                    url,
                    offset: number(offset, "offset")?,
                    length: number(length, "length")?,
                }),
                _ => Err(bad("a list must be [url] or [url, offset, length]")),
            }
        }
        _ => Err(bad("must be text, [url] or [url, offset, length]")),
    }
}

/// `text` with each `{{ name }}` replaced by the template `name`, or by the
/// value of an expression over the variables `vars` (the `gen` section).
fn render(
    text: &str,
    templates: &HashMap<&str, &str>,
    vars: &[(&str, i64)],
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("unclosed '{{{{' in '{text}'"))?;
        let expr = after[..end].trim();
        match templates.get(expr) {
            Some(t) => out.push_str(t),
            None => out.push_str(&eval(expr, vars)?.to_string()),
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The `gen` section: keys generated over the product of dimensions.
fn generate(
    gen: &Value,
    templates: &HashMap<&str, &str>,
    out: &mut BTreeMap<String, Reference>,
) -> Result<()> {
    let Value::Array(items) = gen else {
        return Err(Error::value("references: 'gen' must be a list"));
    };
    for (n, item) in items.iter().enumerate() {
        let bad = |why: String| Error::value(format!("references: gen[{n}]: {why}"));
        let text = |field: &str| -> Result<Option<String>> {
            match item.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(Value::Number(v)) => Ok(Some(v.to_string())),
                Some(_) => Err(bad(format!("'{field}' must be text or a number"))),
            }
        };
        let (Some(key), Some(url)) = (text("key")?, text("url")?) else {
            return Err(bad("'key' and 'url' are required".into()));
        };
        let (offset, length) = (text("offset")?, text("length")?);
        let Some(Value::Object(dims)) = item.get("dimensions") else {
            return Err(bad("'dimensions' must be an object".into()));
        };
        let mut axes: Vec<(&str, Vec<i64>)> = Vec::new();
        for (name, dim) in dims {
            axes.push((
                name.as_str(),
                dimension(dim).map_err(|e| bad(format!("{name}: {e}")))?,
            ));
        }
        let total: usize = axes.iter().map(|(_, v)| v.len()).product();
        if total > 100_000_000 {
            return Err(bad(format!("{total} keys are too many")));
        }
        for flat in 0..total {
            let mut vars = Vec::with_capacity(axes.len());
            let mut rem = flat;
            for (name, values) in axes.iter().rev() {
                vars.push((*name, values[rem % values.len()]));
                rem /= values.len();
            }
            vars.reverse();
            let r = |t: &str| render(t, templates, &vars).map_err(&bad);
            let k = r(&key)?;
            let u = r(&url)?;
            let number = |t: &Option<String>, what: &str| -> Result<Option<u64>> {
                t.as_ref()
                    .map(|t| {
                        r(t)?.trim().parse::<u64>().map_err(|_| {
                            bad(format!(
                                "key '{k}': the {what} is not a non-negative integer"
                            ))
                        })
                    })
                    .transpose()
            };
            let value = match (number(&offset, "offset")?, number(&length, "length")?) {
                (Some(offset), Some(length)) => Reference::Range {
                    url: u,
                    offset,
                    length,
                },
                (None, None) => Reference::Whole(u),
                _ => return Err(bad("'offset' and 'length' go together".into())),
            };
            check_key(&k).map_err(|_| bad(format!("invalid key '{k}'")))?;
            out.insert(k, value);
        }
    }
    Ok(())
}

/// A `gen` dimension: a list of integers or `{start, stop, step}` (a range).
fn dimension(dim: &Value) -> std::result::Result<Vec<i64>, String> {
    match dim {
        Value::Array(values) => values
            .iter()
            .map(|v| {
                v.as_i64()
                    .ok_or_else(|| "values must be integers".to_string())
            })
            .collect(),
        Value::Object(o) => {
            let get = |k: &str, d: i64| match o.get(k) {
                None => Ok(d),
                Some(v) => v
                    .as_i64()
                    .ok_or_else(|| format!("'{k}' must be an integer")),
            };
            let (start, stop, step) = (get("start", 0)?, get("stop", 0)?, get("step", 1)?);
            if step <= 0 {
                return Err("'step' must be positive".into());
            }
            if stop.saturating_sub(start) / step > 100_000_000 {
                return Err("too many values".into());
            }
            Ok((start..stop).step_by(step as usize).collect())
        }
        _ => Err("must be a list or {start, stop, step}".into()),
    }
}

/// The value of an integer expression of `gen` (jinja's arithmetic: `+ - *
/// // / %`, parentheses, integers and variables).
fn eval(expr: &str, vars: &[(&str, i64)]) -> std::result::Result<i64, String> {
    let tokens = tokenize(expr)?;
    let mut p = Parser {
        tokens: &tokens,
        at: 0,
        vars,
        depth: 0,
    };
    let v = p.sum()?;
    if p.at != tokens.len() {
        return Err(format!("cannot evaluate '{{{{{expr}}}}}'"));
    }
    Ok(v)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(i64),
    Name(String),
    Op(&'static str),
}

fn tokenize(expr: &str) -> std::result::Result<Vec<Token>, String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            out.push(Token::Num(
                text.parse()
                    .map_err(|_| format!("number too large in '{expr}'"))?,
            ));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else {
            let op = match (c, chars.get(i + 1)) {
                ('/', Some('/')) => "//",
                ('+', _) => "+",
                ('-', _) => "-",
                ('*', _) => "*",
                ('/', _) => "/",
                ('%', _) => "%",
                ('(', _) => "(",
                (')', _) => ")",
                _ => return Err(format!("unknown template or expression '{{{{{expr}}}}}'")),
            };
            i += op.len();
            out.push(Token::Op(op));
        }
    }
    Ok(out)
}

struct Parser<'t, 'v> {
    tokens: &'t [Token],
    at: usize,
    vars: &'v [(&'v str, i64)],
    depth: usize,
}

impl Parser<'_, '_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.tokens.get(self.at) {
            Some(Token::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn sum(&mut self) -> std::result::Result<i64, String> {
        let mut v = self.product()?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.at += 1;
            let r = self.product()?;
            v = if op == "+" {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or("overflow")?;
        }
        Ok(v)
    }

    fn product(&mut self) -> std::result::Result<i64, String> {
        let mut v = self.unary()?;
        while let Some(op @ ("*" | "/" | "//" | "%")) = self.peek_op() {
            self.at += 1;
            let r = self.unary()?;
            v = match op {
                "*" => v.checked_mul(r),
                "%" => v.checked_rem_euclid(r),
                _ => v.checked_div_euclid(r),
            }
            .ok_or("division by zero or overflow")?;
        }
        Ok(v)
    }

    fn unary(&mut self) -> std::result::Result<i64, String> {
        self.depth += 1;
        if self.depth > 64 {
            return Err("expression nested too deep".into());
        }
        let v = match self.tokens.get(self.at).cloned() {
            Some(Token::Op("-")) => {
                self.at += 1;
                self.unary()?.checked_neg().ok_or("overflow")?
            }
            Some(Token::Op("(")) => {
                self.at += 1;
                let v = self.sum()?;
                if self.peek_op() != Some(")") {
                    return Err("unclosed '('".into());
                }
                self.at += 1;
                v
            }
            Some(Token::Num(n)) => {
                self.at += 1;
                n
            }
            Some(Token::Name(name)) => {
                self.at += 1;
                self.vars
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| format!("unknown template or variable '{name}'"))?
            }
            _ => return Err("incomplete expression".into()),
        };
        self.depth -= 1;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::block_on;

    fn store_over(dir: &std::path::Path, json: &str) -> ReferenceStore {
        let _ = dir;
        ReferenceStore::from_json("test", json, ReferenceOptions::default()).unwrap()
    }

    #[test]
    fn version_0_and_1() {
        let dir = std::env::temp_dir().join(format!("zarrox-refs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("data.bin");
        std::fs::write(&file, b"0123456789abcdef").unwrap();
        let f = file.display();
        let v0 = format!(
            r#"{{".zgroup": "{{\"zarr_format\": 2}}", "a/0": ["{f}", 2, 3],
                "a/1": ["file://{f}", 10, 4], "b": "base64:aGk=", "c": ["{f}"]}}"#
        );
        let s = store_over(&dir, &v0);
        block_on(&s, async {
            assert_eq!(
                s.get(".zgroup").await.unwrap().unwrap(),
                "{\"zarr_format\": 2}"
            );
            // read together: one round, two ranges 5 bytes apart
            let (a, b) = futures::join!(s.get("a/0"), s.get("a/1"));
            assert_eq!(a.unwrap().unwrap(), "234");
            assert_eq!(b.unwrap().unwrap(), "abcd");
            assert_eq!(s.get("b").await.unwrap().unwrap(), "hi");
            assert_eq!(s.get("c").await.unwrap().unwrap().len(), 16);
            assert_eq!(s.get("zz").await.unwrap(), None);
            assert_eq!(s.list_prefix("a/").await.unwrap(), vec!["a/0", "a/1"]);
            assert_eq!(
                s.list_dir("").await.unwrap(),
                (
                    vec![".zgroup".to_string(), "b".into(), "c".into()],
                    vec!["a".to_string()]
                )
            );
            let e = s.set("a/0", Bytes::new()).await.unwrap_err();
            assert!(e.to_string().contains("read-only"), "{e}");
            assert!(s.delete("a/0").await.is_err());
            let r = s
                .get_ranges("a/1", &[ByteRange::span(1, 2)])
                .await
                .unwrap()
                .unwrap();
            assert_eq!(r, vec![Bytes::from_static(b"bc")]);
        })
        .unwrap();
        let v1 = format!(
            r#"{{"version": 1, "templates": {{"u": "{f}"}},
                "refs": {{"x": ["{{{{u}}}}", 0, 2]}},
                "gen": [{{"key": "g/{{{{i}}}}", "url": "{{{{ u }}}}",
                          "offset": "{{{{i * 4 + 1}}}}", "length": "2",
                          "dimensions": {{"i": {{"stop": 3}}}}}}]}}"#
        );
        let s = store_over(&dir, &v1);
        block_on(&s, async {
            assert_eq!(s.get("x").await.unwrap().unwrap(), "01");
            assert_eq!(s.get("g/0").await.unwrap().unwrap(), "12");
            assert_eq!(s.get("g/2").await.unwrap().unwrap(), "9a");
            assert_eq!(s.list_prefix("g/").await.unwrap().len(), 3);
            // past the end of the file: an error naming the key
            let e = ReferenceStore::from_json(
                "t",
                &format!(r#"{{"k": ["{f}", 10, 100]}}"#),
                ReferenceOptions::default(),
            )
            .unwrap();
            let err = e.get("k").await.unwrap_err().to_string();
            assert!(err.contains("'k'"), "{err}");
        })
        .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A memory store that counts the ranges asked of it, and records how
    /// many each read asked for; with a gate, its next ranged read waits
    /// until the test opens the gate.
    #[derive(Debug, Default)]
    struct Counting {
        inner: crate::store::MemoryStore,
        ranges: std::sync::atomic::AtomicUsize,
        reads: Mutex<Vec<usize>>,
        gate: Mutex<Option<oneshot::Receiver<()>>>,
    }

    #[async_trait]
    impl Store for Counting {
        fn location(&self, key: &str) -> String {
            self.inner.location(key)
        }
        async fn get(&self, key: &str) -> Result<Option<Bytes>> {
            self.inner.get(key).await
        }
        fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
            self.inner.open(key)
        }
        async fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
            let counted = std::sync::atomic::Ordering::Relaxed;
            self.ranges.fetch_add(ranges.len(), counted);
            self.reads.lock().unwrap().push(ranges.len());
            let gate = self.gate.lock().unwrap().take();
            if let Some(gate) = gate {
                gate.await.unwrap();
            }
            self.inner.get_ranges(key, ranges).await
        }
        async fn set(&self, key: &str, value: Bytes) -> Result<()> {
            self.inner.set(key, value).await
        }
        async fn delete(&self, key: &str) -> Result<()> {
            self.inner.delete(key).await
        }
        async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
            self.inner.list_prefix(prefix).await
        }
        async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
            self.inner.list_dir(prefix).await
        }
    }

    /// A store of 8 references to 8-byte ranges of `s3://b/f` (10 bytes apart),
    /// the file in a counting memory store.
    fn counted(gap: Option<u64>) -> (ReferenceStore, Arc<Counting>) {
        let refs = (0..8u64)
            .map(|i| {
                let r = Reference::Range {
                    url: "s3://b/f".into(),
                    offset: i * 10,
                    length: 8,
                };
                (format!("a/{i}"), r)
            })
            .collect();
        let options = ReferenceOptions {
            coalesce_gap: gap,
            ..ReferenceOptions::default()
        };
        let store = ReferenceStore::new("t", refs, options);
        let file = Arc::new(Counting::default());
        let bytes: Vec<u8> = (0..100u8).collect();
        futures::executor::block_on(file.inner.set("f", Bytes::from(bytes))).unwrap();
        let target: Arc<dyn Store> = file.clone();
        fork::lock(&store.stores).insert(store_id("s3://b", None), target);
        (store, file)
    }

    #[test]
    fn reads_made_together_are_one_request() {
        let want = |i: u8| Bytes::from((i * 10..i * 10 + 8).collect::<Vec<u8>>());
        for (gap, requests) in [(None, 1), (Some(1), 8)] {
            let (s, file) = counted(gap);
            let keys: Vec<String> = (0..8).map(|i| format!("a/{i}")).collect();
            let got = futures::executor::block_on(futures::future::join_all(
                keys.iter().map(|k| s.get(k)),
            ));
            for (i, g) in got.into_iter().enumerate() {
                assert_eq!(g.unwrap().unwrap(), want(i as u8));
            }
            let ranges = file.ranges.load(std::sync::atomic::Ordering::Relaxed);
            assert_eq!(ranges, requests, "gap {gap:?}");
        }
        // The first read of a round dropped before it fetched: the others
        // fetch their own ranges, never wait for it.
        let (s, _) = counted(None);
        futures::executor::block_on(async {
            let mut lead = Box::pin(s.get("a/0"));
            assert!(futures::poll!(lead.as_mut()).is_pending());
            let mut follow = Box::pin(s.get("a/3"));
            assert!(futures::poll!(follow.as_mut()).is_pending());
            drop(lead);
            assert_eq!(follow.await.unwrap().unwrap(), want(3));
            assert_eq!(s.get("a/1").await.unwrap().unwrap(), want(1));
        });
    }

    #[test]
    fn ranges_asked_while_a_round_is_in_flight_go_out_in_the_next_one() {
        let want = |i: u8| Bytes::from((i * 10..i * 10 + 8).collect::<Vec<u8>>());
        let (s, file) = counted(None);
        let (open_gate, gate) = oneshot::channel();
        *file.gate.lock().unwrap() = Some(gate);
        futures::executor::block_on(async {
            // the first read leads: its round (one range) is held at the store
            let mut first = Box::pin(s.get("a/0"));
            for _ in 0..4 {
                assert!(futures::poll!(first.as_mut()).is_pending());
            }
            assert_eq!(*file.reads.lock().unwrap(), vec![1]);
            // six more reads of the file, one after another (each polled as
            // long as a leader waits for company), while that round is in
            // flight: they queue for the next round
            let keys: Vec<String> = (1..7).map(|i| format!("a/{i}")).collect();
            let mut later: Vec<_> = keys.iter().map(|k| Box::pin(s.get(k))).collect();
            for read in &mut later {
                for _ in 0..4 {
                    assert!(futures::poll!(read.as_mut()).is_pending());
                }
            }
            assert_eq!(*file.reads.lock().unwrap(), vec![1], "none went out alone");
            open_gate.send(()).unwrap();
            assert_eq!(first.await.unwrap().unwrap(), want(0));
            let got = futures::future::join_all(later).await;
            for (i, g) in got.into_iter().enumerate() {
                assert_eq!(g.unwrap().unwrap(), want(i as u8 + 1));
            }
            // the leader's second round: all six in one merged request
            assert_eq!(*file.reads.lock().unwrap(), vec![1, 1]);
            // the queue ended with the rounds: a later read leads a new one
            assert_eq!(s.get("a/7").await.unwrap().unwrap(), want(7));
            assert_eq!(*file.reads.lock().unwrap(), vec![1, 1, 1]);
            assert!(fork::lock(&s.queues).is_empty());
        });
    }

    #[test]
    fn merged_ranges() {
        let spans = coalesce([0..10, 12..20, 100..110, 2000..2010], 50, Some(1000));
        let got: Vec<_> = spans.iter().map(|s| s.span.clone()).collect();
        assert_eq!(got, vec![0..20, 100..110, 2000..2010]);
    }

    #[test]
    fn bad_references_name_the_key() {
        for (json, needle) in [
            ("[1]", "JSON object"),
            ("{", "not valid JSON"),
            (r#"{"a": 3}"#, "'a'"),
            (r#"{"a": ["u", 1]}"#, "'a'"),
            (r#"{"a": ["u", -1, 2]}"#, "offset"),
            (r#"{"a": "base64:!!"}"#, "base64"),
            (r#"{"../a": "x"}"#, "invalid key"),
            (r#"{"version": 2}"#, "version"),
            (r#"{"version": 1, "refs": {"a": ["{{v}}"]}}"#, "'v'"),
            (r#"{"version": 1, "refs": {"a": ["{{v"]}}"#, "unclosed"),
            (
                r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 2, "step": 0}}}]}"#,
                "step",
            ),
            (
                r#"{"version": 1, "gen": [{"key": "k", "url": "u", "offset": "{{1//0}}", "length": "1", "dimensions": {"i": [1]}}]}"#,
                "division",
            ),
        ] {
            let e = parse(json).unwrap_err().to_string();
            assert!(e.contains(needle), "{json}: {e}");
        }
        assert_eq!(eval("-(2 + 3) * 4 // 3 % 5", &[]).unwrap(), 3);
        assert_eq!(eval("i*10", &[("i", 7)]).unwrap(), 70);
        assert!(eval(&"(".repeat(1000), &[]).is_err());
    }

    #[test]
    fn the_longest_prefix_gives_the_options() {
        let options = ReferenceOptions {
            prefixes: vec![
                ("s3://b".into(), vec![("k".into(), "1".into())]),
                ("s3://b/deep/".into(), vec![("k".into(), "2".into())]),
                ("gs://".into(), vec![]),
            ],
            ..ReferenceOptions::default()
        };
        let s = ReferenceStore::new("t", BTreeMap::new(), options);
        assert_eq!(s.prefix_of("s3://b/f.nc"), Some(0));
        assert_eq!(s.prefix_of("s3://b/deep/f.nc"), Some(1));
        assert_eq!(s.prefix_of("s3://bb/f.nc"), None);
        assert_eq!(s.prefix_of("gs://x/f.nc"), Some(2));
        assert_eq!(s.prefix_of("http://h/f.nc"), None);
    }

    #[test]
    fn urls_split_into_store_and_key() {
        let s = |u: &str, p: Option<&str>| split_url(u, p).unwrap();
        assert_eq!(s("s3://b/x/y.nc", None), ("s3://b".into(), "x/y.nc".into()));
        assert_eq!(s("b/y.nc", Some("s3")), ("s3://b".into(), "y.nc".into()));
        assert_eq!(
            s("http://h:8000/a%20b.nc", None),
            ("http://h:8000".into(), "a b.nc".into())
        );
        assert_eq!(s("/d/f.nc", None), ("file:///d".into(), "f.nc".into()));
        assert_eq!(
            s("/d/f.nc", Some("file")),
            ("file:///d".into(), "f.nc".into())
        );
        assert!(split_url("s3://b", None).is_err());
        assert_eq!(
            s("https://h/d/f.nc?sig=a%2Fb&e=1", None),
            ("https://h?sig=a%2Fb&e=1".into(), "d/f.nc".into())
        );
        let e = split_url("s3://b/f.nc?versionId=3", None).unwrap_err();
        assert!(e.to_string().contains("only read from http(s)"), "{e}");
        assert_eq!(
            s("abfs://c@acct.dfs.core.windows.net/d/f.nc", None),
            ("abfs://c@acct.dfs.core.windows.net".into(), "d/f.nc".into())
        );
        assert_eq!(
            s("c/d/f.nc", Some("az")),
            ("az://c".into(), "d/f.nc".into())
        );
        assert_eq!(s("gs://b/f.nc", None), ("gs://b".into(), "f.nc".into()));
    }
}
