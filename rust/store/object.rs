//! Object stores (S3 and S3-compatible endpoints, GCS, Azure, HTTP) through
//! the `object_store` crate, on the I/O runtime.
//!
//! A store is a URL prefix (`s3://bucket/data.zarr`) and options. Requests are
//! retried with backoff on transient errors and time out as the options say.
//! A value opened for range reads pins the version (ETag) of its first
//! answer: later ranges are asked for that version only, and a value rewritten
//! in between is an error, never a mix of two versions.

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    BackoffConfig, GetOptions, GetRange, ObjectStore as Inner, ObjectStoreExt, PutMode, PutOptions,
    PutPayload, RetryConfig, UpdateVersion,
};

use super::{
    check_key, check_prefix, conditions_unsupported, fit_range, ignores_ranges, ranges_ignored,
    slice_ranges, ByteRange, Generation, IoMode, OpenValue, Store, Versioned,
};
use crate::error::{Error, ErrorKind, Result};
use crate::fork;

/// Builds the client: again in a forked child, whose copy of the parent's
/// connections belongs to a runtime that does not run there.
pub type Connect = Box<dyn Fn() -> Result<Arc<dyn Inner>> + Send + Sync>;

struct Client {
    pid: u32,
    inner: Arc<dyn Inner>,
}

pub struct ObjectStore {
    /// The URL of the store's root, without a trailing `/`.
    url: String,
    /// The root's path inside the object store.
    root: Path,
    read_only: bool,
    connect: Connect,
    client: Mutex<Client>,
    /// Whether the server honours conditional writes (asked once).
    conditional: std::sync::OnceLock<bool>,
}

impl fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStore")
            .field("url", &self.url)
            .finish()
    }
}

/// What kind of object store a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    S3,
    Gcs,
    Azure,
    Http,
}

fn scheme_of(url: &url::Url) -> Result<Scheme> {
    match url.scheme() {
        "s3" | "s3a" => Ok(Scheme::S3),
        "gs" | "gcs" => Ok(Scheme::Gcs),
        "az" | "azure" | "abfs" | "abfss" | "adl" => Ok(Scheme::Azure),
        "http" | "https" => Ok(Scheme::Http),
        other => Err(Error::value(format!(
            "unsupported object store URL scheme '{other}://' (s3, gs, az, abfs, http, https)"
        ))),
    }
}

/// Options that are zarrox's, not the object store builder's.
#[derive(Debug, Default)]
struct OwnOptions {
    max_retries: Option<usize>,
    retry_timeout: Option<Duration>,
    backoff_initial: Option<Duration>,
    backoff_max: Option<Duration>,
}

fn seconds(key: &str, value: &str) -> Result<Duration> {
    let secs: f64 = value
        .trim_end_matches('s')
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)
        .ok_or_else(|| {
            Error::value(format!(
                "storage option '{key}' must be a number of seconds, got '{value}'"
            ))
        })?;
    Ok(Duration::from_secs_f64(secs))
}

impl OwnOptions {
    /// Take zarrox's own options out of `options`.
    fn take(options: &mut Vec<(String, String)>) -> Result<Self> {
        let mut own = OwnOptions::default();
        let mut rest = Vec::with_capacity(options.len());
        for (k, v) in options.drain(..) {
            match k.to_ascii_lowercase().as_str() {
                "max_retries" => {
                    own.max_retries = Some(v.parse().map_err(|_| {
                        Error::value(format!(
                            "storage option 'max_retries' must be an integer, got '{v}'"
                        ))
                    })?)
                }
                "retry_timeout" => own.retry_timeout = Some(seconds(&k, &v)?),
                "backoff_initial" => own.backoff_initial = Some(seconds(&k, &v)?),
                "backoff_max" => own.backoff_max = Some(seconds(&k, &v)?),
                _ => rest.push((k, v)),
            }
        }
        *options = rest;
        Ok(own)
    }

    fn retry(&self) -> RetryConfig {
        let default = RetryConfig::default();
        RetryConfig {
            backoff: BackoffConfig {
                init_backoff: self.backoff_initial.unwrap_or(default.backoff.init_backoff),
                max_backoff: self.backoff_max.unwrap_or(default.backoff.max_backoff),
                base: default.backoff.base,
            },
            max_retries: self.max_retries.unwrap_or(default.max_retries),
            retry_timeout: self.retry_timeout.unwrap_or(default.retry_timeout),
        }
    }
}

fn unknown_option(key: &str, scheme: Scheme) -> Error {
    Error::value(format!(
        "unknown storage option '{key}' for a {scheme:?} store (see the object_store \
         crate's configuration keys, e.g. aws_endpoint, aws_region, google_service_account, \
         azure_storage_account_name, allow_http, timeout)"
    ))
}

/// Clients built, by what built them: building one costs milliseconds (the
/// HTTP client, its TLS roots), and opening the same store again, or a
/// replayed metadata operation (`zarrox/storage/replay.py`), would build it
/// again. Cleared when full; a forked child builds its own.
static CLIENTS: Mutex<Option<(u32, ClientsByKey)>> = Mutex::new(None);

type ClientsByKey = std::collections::HashMap<String, Arc<dyn Inner>>;

/// The most clients kept.
const CLIENTS_KEPT: usize = 64;

/// What a client is built from: the URL (for a web server, its host and
/// query), the options, and the environment variables the builders and the
/// HTTP client read (credentials, endpoints, proxies): a changed credential
/// in the environment builds a new client.
fn client_key(url: &url::Url, scheme: Scheme, options: &[(String, String)]) -> String {
    let base = client_url(url, scheme);
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| {
            let k = k.to_ascii_uppercase();
            [
                "AWS_",
                "GOOGLE_",
                "AZURE_",
                "HTTP_PROXY",
                "HTTPS_PROXY",
                "ALL_PROXY",
                "NO_PROXY",
            ]
            .iter()
            .any(|p| k.starts_with(p))
        })
        .collect();
    env.sort();
    format!("{base}\u{0}{options:?}\u{0}{env:?}")
}

/// A client for the bucket or container of `url`, with `options` (the
/// environment's credentials and settings first, then the options): one
/// built before from the same, or a new one.
fn build(url: &url::Url, options: &[(String, String)]) -> Result<Arc<dyn Inner>> {
    let key = client_key(url, scheme_of(url)?, options);
    let pid = std::process::id();
    {
        let clients = fork::lock(&CLIENTS);
        if let Some((owner, map)) = clients.as_ref() {
            if *owner == pid {
                if let Some(client) = map.get(&key) {
                    return Ok(Arc::clone(client));
                }
            }
        }
    }
    let client = build_new(url, options)?;
    let mut clients = fork::lock(&CLIENTS);
    let map = match clients.as_mut() {
        Some((owner, map)) if *owner == pid && map.len() < CLIENTS_KEPT => map,
        _ => &mut clients.insert((pid, Default::default())).1,
    };
    map.insert(key, Arc::clone(&client));
    Ok(client)
}

/// The URL a client is built from: a web server's host and the query every
/// request carries (a presigned or SAS URL's signature; the HTTP client
/// appends each key's path to it), else the URL (its builder takes the
/// bucket or container from it).
fn client_url(url: &url::Url, scheme: Scheme) -> String {
    match (scheme, url.query()) {
        (Scheme::Http, Some(query)) => format!("{}?{query}", &url[..url::Position::BeforePath]),
        (Scheme::Http, None) => url[..url::Position::BeforePath].to_string(),
        _ => url.to_string(),
    }
}

/// A client built now (see [`build`]).
fn build_new(url: &url::Url, options: &[(String, String)]) -> Result<Arc<dyn Inner>> {
    let scheme = scheme_of(url)?;
    let mut options = options.to_vec();
    let own = OwnOptions::take(&mut options)?;
    let bucket_url = client_url(url, scheme);
    let failed =
        |e: object_store::Error| Error::value(format!("cannot set up the store for '{url}': {e}"));
    macro_rules! configure {
        ($builder:expr, $key:ty) => {{
            let mut b = $builder
                .with_url(bucket_url.clone())
                .with_retry(own.retry());
            for (k, v) in &options {
                let key: $key = k
                    .to_ascii_lowercase()
                    .parse()
                    .map_err(|_| unknown_option(k, scheme))?;
                b = b.with_config(key, v.clone());
            }
            Arc::new(b.build().map_err(failed)?) as Arc<dyn Inner>
        }};
    }
    Ok(match scheme {
        Scheme::S3 => configure!(
            object_store::aws::AmazonS3Builder::from_env(),
            object_store::aws::AmazonS3ConfigKey
        ),
        Scheme::Gcs => configure!(
            object_store::gcp::GoogleCloudStorageBuilder::from_env(),
            object_store::gcp::GoogleConfigKey
        ),
        Scheme::Azure => configure!(
            object_store::azure::MicrosoftAzureBuilder::from_env(),
            object_store::azure::AzureConfigKey
        ),
        Scheme::Http => configure!(
            object_store::http::HttpBuilder::new(),
            object_store::ClientConfigKey
        ),
    })
}

/// The path of `url` inside its bucket (or below its host, for HTTP).
fn root_path(url: &url::Url, scheme: Scheme) -> Result<Path> {
    let raw = match scheme {
        // https://account.blob.core.windows.net/container/path
        Scheme::Azure if url.scheme().starts_with("http") => url
            .path()
            .trim_start_matches('/')
            .split_once('/')
            .map_or("", |(_, p)| p)
            .to_string(),
        _ => url.path().to_string(),
    };
    let decoded = percent_decode(&raw);
    let trimmed = decoded.trim_matches('/');
    Path::parse(trimmed).map_err(|e| Error::value(format!("invalid path in '{url}': {e}")))
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

impl ObjectStore {
    /// A store at `url` (`s3://bucket/prefix`, `gs://...`, `az://...`,
    /// `https://...`) with object_store configuration `options`.
    pub fn from_url(url: &str, options: Vec<(String, String)>) -> Result<Self> {
        let parsed =
            url::Url::parse(url).map_err(|e| Error::value(format!("invalid URL '{url}': {e}")))?;
        let scheme = scheme_of(&parsed)?;
        let root = root_path(&parsed, scheme)?;
        let inner = build(&parsed, &options)?;
        let connect: Connect = Box::new(move || build(&parsed, &options));
        Ok(Self::with_client(
            url.trim_end_matches('/').to_string(),
            root,
            scheme == Scheme::Http,
            inner,
            connect,
        ))
    }

    /// A store over a client built elsewhere (an obstore store), rooted at
    /// `root` inside it; `connect` builds the client again after a fork.
    pub fn from_client(
        url: String,
        root: &str,
        inner: Arc<dyn Inner>,
        connect: Connect,
    ) -> Result<Self> {
        let root = Path::parse(root.trim_matches('/'))
            .map_err(|e| Error::value(format!("invalid path '{root}': {e}")))?;
        let read_only = url.starts_with("http://") || url.starts_with("https://");
        Ok(Self::with_client(url, root, read_only, inner, connect))
    }

    fn with_client(
        url: String,
        root: Path,
        read_only: bool,
        inner: Arc<dyn Inner>,
        connect: Connect,
    ) -> Self {
        ObjectStore {
            url,
            root,
            read_only,
            connect,
            client: Mutex::new(Client {
                pid: std::process::id(),
                inner,
            }),
            conditional: std::sync::OnceLock::new(),
        }
    }

    /// The client of this process (built again in a forked child; the
    /// building, which may call into Python, happens outside the lock).
    fn client(&self) -> Result<Arc<dyn Inner>> {
        let pid = std::process::id();
        {
            let c = fork::lock(&self.client);
            if c.pid == pid {
                return Ok(Arc::clone(&c.inner));
            }
        }
        let inner = (self.connect)()?;
        let mut c = fork::lock(&self.client);
        if c.pid != pid {
            *c = Client {
                pid,
                inner: Arc::clone(&inner),
            };
        }
        Ok(Arc::clone(&c.inner))
    }

    /// A `HEAD` of `key` (at `path`): its metadata, `None` when there is no object.
    async fn head(&self, key: &str, path: &Path) -> Result<Option<object_store::ObjectMeta>> {
        match self.client()?.head(path).await {
            Ok(meta) => Ok(Some(meta)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(store_error(e, "HEAD", &self.location(key))),
        }
    }

    fn path(&self, key: &str) -> Result<Path> {
        check_key(key)?;
        self.join(key)
    }

    fn join(&self, rel: &str) -> Result<Path> {
        let rel = rel.trim_end_matches('/');
        let full = match (self.root.as_ref(), rel) {
            ("", r) => r.to_string(),
            (root, "") => root.to_string(),
            (root, r) => format!("{root}/{r}"),
        };
        Path::parse(&full).map_err(|e| Error::store(format!("invalid key '{rel}': {e}")))
    }

    /// `location` relative to the store's root.
    fn relative(&self, location: &Path) -> Option<String> {
        let loc = location.as_ref();
        match self.root.as_ref() {
            "" => Some(loc.to_string()),
            root => loc
                .strip_prefix(root)
                .and_then(|r| r.strip_prefix('/'))
                .map(str::to_string),
        }
    }

    fn refuse_write(&self, key: &str) -> Result<()> {
        if self.read_only {
            return Err(Error::store(format!(
                "cannot write '{}': HTTP stores are read-only",
                self.location(key)
            )));
        }
        Ok(())
    }

    /// The value under `key` and its generation, asked with `options`;
    /// `None` when the server answers 304 Not Modified (to an `If-None-Match`).
    async fn get_versioned_with(
        &self,
        key: &str,
        options: GetOptions,
    ) -> Result<Option<Versioned>> {
        let path = self.path(key)?;
        let location = self.location(key);
        match self.client()?.get_opts(&path, options).await {
            Ok(got) => {
                let generation =
                    object_generation(got.meta.e_tag.clone(), got.meta.version.clone());
                let value = got
                    .bytes()
                    .await
                    .map_err(|e| store_error(e, "GET", &location))?;
                Ok(Some(Versioned {
                    value: Some(value),
                    generation,
                }))
            }
            Err(object_store::Error::NotModified { .. }) => Ok(None),
            Err(e) if is_not_found(&e) => Ok(Some(Versioned {
                value: None,
                generation: Generation::Absent,
            })),
            Err(e) => Err(store_error(e, "GET", &location)),
        }
    }

    /// `value` put under `key` in `mode`: whether it was written (`false`:
    /// the mode's condition failed).
    /// Put `value` under `key` in `mode`: the generation written, `None`
    /// when the server refused the condition.
    async fn put_in_mode(
        &self,
        key: &str,
        value: Bytes,
        mode: PutMode,
    ) -> Result<Option<Generation>> {
        let path = self.path(key)?;
        let options = PutOptions {
            mode,
            ..PutOptions::default()
        };
        match self
            .client()?
            .put_opts(&path, PutPayload::from(value), options)
            .await
        {
            Ok(put) => Ok(Some(object_generation(put.e_tag, put.version))),
            Err(
                object_store::Error::Precondition { .. }
                | object_store::Error::AlreadyExists { .. },
            ) => Ok(None),
            Err(object_store::Error::NotImplemented { .. }) => {
                Err(conditions_unsupported(self.location(key)))
            }
            Err(e) => Err(store_error(e, "PUT", &self.location(key))),
        }
    }

    /// Ask the server whether it honours conditional writes, on a probe
    /// object of our own: a create over an existing object and an update of
    /// a version that does not exist must both be refused (a server, or a
    /// proxy, that drops the conditions writes them).
    async fn probe_conditional_writes(&self) -> Result<bool> {
        static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let key = format!(
            ".zarrox-probe-{}-{nanos:x}-{}",
            std::process::id(),
            PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        self.set(&key, Bytes::from_static(b"1")).await?;
        let honoured = async {
            let created = self
                .put_in_mode(&key, Bytes::from_static(b"2"), PutMode::Create)
                .await;
            if !matches!(created, Ok(None)) {
                return Ok::<_, Error>(false);
            }
            let stale = UpdateVersion {
                e_tag: Some("\"zarrox-no-such-version\"".to_string()),
                version: None,
            };
            let updated = self
                .put_in_mode(&key, Bytes::from_static(b"3"), PutMode::Update(stale))
                .await;
            Ok(matches!(updated, Ok(None)))
        }
        .await;
        self.delete(&key).await?;
        honoured
    }
}

/// A generation from an object's ETag and version (none: the server gives
/// neither, and versions cannot be told apart).
fn object_generation(e_tag: Option<String>, version: Option<String>) -> Generation {
    if e_tag.is_none() && version.is_none() {
        return Generation::Unknown;
    }
    Generation::Tag(format!(
        "{}\u{1f}{}",
        e_tag.unwrap_or_default(),
        version.unwrap_or_default()
    ))
}

/// The version a generation names, for a conditional put.
fn update_version(tag: &str) -> UpdateVersion {
    let (e_tag, version) = tag.split_once('\u{1f}').unwrap_or((tag, ""));
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    UpdateVersion {
        e_tag: some(e_tag),
        version: some(version),
    }
}

/// A store error naming the operation and the URL; its kind says whether
/// access was refused, the request timed out, or something else failed.
fn store_error(e: object_store::Error, op: &str, location: &str) -> Error {
    use object_store::Error as E;
    let kind = match &e {
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => ErrorKind::Permission,
        // A server that ignores Range (answers 200 with the whole body) says
        // NotSupported: a store failure, not a zarrox feature missing.
        E::NotImplemented { .. } => ErrorKind::Unsupported,
        _ if timed_out(&e) => ErrorKind::Timeout,
        _ if status_code(&e).is_some_and(|s| s == 401 || s == 403) => ErrorKind::Permission,
        _ => ErrorKind::Store,
    };
    Error::new(kind, format!("{op} {location}: {}", chain_text(&e)))
}

/// The error and its causes as one line.
fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::TimedOut {
                return true;
            }
        }
        let text = err.to_string().to_ascii_lowercase();
        if text.contains("timed out") || text.contains("timeout") && !text.contains("retry_timeout")
        {
            return true;
        }
        cur = err.source();
    }
    false
}

/// The HTTP status an error carries in its text, if any ("... 403 Forbidden").
fn status_code(e: &(dyn std::error::Error + 'static)) -> Option<u16> {
    let text = chain_text(e);
    let lower = text.to_ascii_lowercase();
    let at = lower.find("status")?;
    lower[at..]
        .split(|c: char| !c.is_ascii_digit())
        .find(|s| s.len() == 3)
        .and_then(|s| s.parse().ok())
}

/// Whether `e` says the server answered a ranged GET with the whole value
/// (object_store's HTTP client: `RangeNotSupported`; the others: a response
/// that is not partial).
fn ignored_range(e: &object_store::Error) -> bool {
    let text = chain_text(e);
    text.contains("Range request not supported") || text.contains("non-partial response")
}

fn is_not_found(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::NotFound { .. })
}

fn get_range(r: &ByteRange) -> GetRange {
    match *r {
        ByteRange::FromStart {
            offset,
            length: Some(l),
        } => GetRange::Bounded(offset..offset.saturating_add(l)),
        ByteRange::FromStart {
            offset,
            length: None,
        } => GetRange::Offset(offset),
        ByteRange::Suffix(n) => GetRange::Suffix(n),
    }
}

/// A value opened for range reads; the version (ETag) of its first answer is
/// the one every later range is read from.
struct ObjectValue<'a> {
    store: &'a ObjectStore,
    key: String,
    path: Path,
    /// `None` until the first answer; then that answer's ETag (if the server
    /// gives one).
    version: Mutex<Option<Option<String>>>,
}

impl ObjectValue<'_> {
    fn changed(&self) -> Error {
        Error::new(
            ErrorKind::Changed,
            format!(
                "{} changed while it was being read; read it again",
                self.store.location(&self.key)
            ),
        )
    }
}

impl ObjectValue<'_> {
    /// `ranges` cut out of the whole value, fetched once (a store that
    /// ignores byte ranges); the version pinned as a range read pins it.
    async fn read_whole(
        &self,
        client: &Arc<dyn Inner>,
        ranges: &[ByteRange],
        location: &str,
    ) -> Result<Option<Vec<Bytes>>> {
        let pinned = fork::lock(&self.version).clone();
        let options = GetOptions {
            if_match: pinned.clone().flatten(),
            ..GetOptions::default()
        };
        let got = match client.get_opts(&self.path, options).await {
            Ok(got) => got,
            Err(e) if is_not_found(&e) && pinned.is_none() => return Ok(None),
            Err(e) if is_not_found(&e) => return Err(self.changed()),
            Err(object_store::Error::Precondition { .. }) => return Err(self.changed()),
            Err(e) => return Err(store_error(e, "GET", location)),
        };
        let etag = got.meta.e_tag.clone();
        if let Some(Some(v)) = &pinned {
            if etag.as_ref().is_some_and(|e| e != v) {
                return Err(self.changed());
            }
        }
        let bytes = got
            .bytes()
            .await
            .map_err(|e| store_error(e, "GET", location))?;
        let parts =
            slice_ranges(&bytes, ranges).map_err(|e| e.context(format!("GET {location}")))?;
        *fork::lock(&self.version) = Some(etag);
        Ok(Some(parts))
    }
}

#[async_trait]
impl OpenValue for ObjectValue<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        if ranges.is_empty() {
            let meta = self.store.head(&self.key, &self.path).await?;
            return Ok(meta.map(|_| Vec::new()));
        }
        let client = self.store.client()?;
        let location = self.store.location(&self.key);
        let store = self.store.location("");
        if ignores_ranges(&store) {
            return self.read_whole(&client, ranges, &location).await;
        }
        let pinned = fork::lock(&self.version).clone();
        let requests = ranges.iter().map(|r| {
            let options = GetOptions {
                range: Some(get_range(r)),
                if_match: pinned.clone().flatten(),
                ..GetOptions::default()
            };
            let client = Arc::clone(&client);
            let path = self.path.clone();
            async move {
                let got = client.get_opts(&path, options).await?;
                let etag = got.meta.e_tag.clone();
                let bytes = got.bytes().await?;
                Ok::<_, object_store::Error>((etag, bytes))
            }
        });
        let answers = futures::future::join_all(requests).await;
        let mut parts = Vec::with_capacity(ranges.len());
        let mut missing = 0;
        let mut version: Option<Option<String>> = pinned.clone();
        for (r, answer) in ranges.iter().zip(answers) {
            match answer {
                Ok((etag, bytes)) => {
                    match &version {
                        None => version = Some(etag),
                        Some(v) if *v != etag && v.is_some() && etag.is_some() => {
                            return Err(self.changed())
                        }
                        Some(_) => {}
                    }
                    parts.push(
                        fit_range(bytes, r, &store)
                            .map_err(|e| e.context(format!("GET {location}")))?,
                    );
                }
                Err(e) if is_not_found(&e) => missing += 1,
                // a static web server that ignores byte ranges (object_store
                // drops its whole answer): cut the ranges out of the value
                Err(e) if ignored_range(&e) => {
                    ranges_ignored(&store);
                    return self.read_whole(&client, ranges, &location).await;
                }
                Err(object_store::Error::Precondition { .. }) => return Err(self.changed()),
                Err(e) => return Err(store_error(e, "GET", &location)),
            }
        }
        if missing == ranges.len() && pinned.is_none() {
            return Ok(None);
        }
        if missing > 0 {
            return Err(self.changed());
        }
        *fork::lock(&self.version) = version;
        Ok(Some(parts))
    }

    fn generation(&self) -> Option<Generation> {
        match &*fork::lock(&self.version) {
            Some(Some(etag)) => Some(object_generation(Some(etag.clone()), None)),
            _ => None,
        }
    }

    /// Every later range read asks for the ETag of `expected` (`If-Match`):
    /// a value rewritten or deleted since is [`ErrorKind::Changed`] (412 or
    /// 404), never a read of another version. No request is made here.
    async fn pin(&self, expected: &Generation) -> Result<bool> {
        let Generation::Tag(tag) = expected else {
            return Ok(false);
        };
        let Some(etag) = update_version(tag).e_tag else {
            return Ok(false);
        };
        let mut version = fork::lock(&self.version);
        Ok(match &*version {
            None => {
                *version = Some(Some(etag));
                true
            }
            Some(Some(pinned)) => *pinned == etag,
            Some(None) => false,
        })
    }
}

#[async_trait]
impl Store for ObjectStore {
    fn io_mode(&self) -> IoMode {
        IoMode::Concurrent
    }

    fn coalesce_gap(&self) -> u64 {
        // A round trip of tens of milliseconds costs more than a megabyte.
        1024 * 1024
    }

    fn location(&self, key: &str) -> String {
        if key.is_empty() {
            return self.url.clone();
        }
        // the key's path goes before a query the URL carries
        match self.url.split_once('?') {
            Some((base, query)) => format!("{}/{key}?{query}", base.trim_end_matches('/')),
            None => format!("{}/{key}", self.url),
        }
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        let path = self.path(key)?;
        let client = self.client()?;
        let location = self.location(key);
        match client.get_opts(&path, GetOptions::default()).await {
            Ok(got) => got
                .bytes()
                .await
                .map(Some)
                .map_err(|e| store_error(e, "GET", &location)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(store_error(e, "GET", &location)),
        }
    }

    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(ObjectValue {
            store: self,
            key: key.to_string(),
            path: self.path(key)?,
            version: Mutex::new(None),
        }))
    }

    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.refuse_write(key)?;
        let path = self.path(key)?;
        self.client()?
            .put(&path, PutPayload::from(value))
            .await
            .map(|_| ())
            .map_err(|e| store_error(e, "PUT", &self.location(key)))
    }

    async fn conditional_writes(&self) -> Result<bool> {
        if self.read_only {
            return Ok(false);
        }
        if let Some(known) = self.conditional.get() {
            return Ok(*known);
        }
        let honoured = self.probe_conditional_writes().await?;
        Ok(*self.conditional.get_or_init(|| honoured))
    }

    async fn get_versioned(&self, key: &str) -> Result<Versioned> {
        self.get_versioned_with(key, GetOptions::default())
            .await?
            .ok_or_else(|| {
                Error::store(format!(
                    "GET {}: 304 Not Modified to an unconditional request",
                    self.location(key)
                ))
            })
    }

    /// A conditional `GET` (`If-None-Match` with the known ETag): a 304
    /// carries no body.
    async fn get_if_changed(&self, key: &str, known: &Generation) -> Result<Option<Versioned>> {
        let e_tag = match known {
            Generation::Tag(tag) => update_version(tag).e_tag,
            _ => None,
        };
        let Some(e_tag) = e_tag else {
            let now = self.get_versioned(key).await?;
            let same = now.generation == *known && *known == Generation::Absent;
            return Ok((!same).then_some(now));
        };
        let options = GetOptions {
            if_none_match: Some(e_tag),
            ..GetOptions::default()
        };
        self.get_versioned_with(key, options).await
    }

    async fn set_if(
        &self,
        key: &str,
        value: Bytes,
        expected: &Generation,
    ) -> Result<Option<Generation>> {
        self.refuse_write(key)?;
        match expected {
            Generation::Unknown => self.put_in_mode(key, value, PutMode::Overwrite).await,
            Generation::Absent => self.put_in_mode(key, value, PutMode::Create).await,
            Generation::Tag(tag) => {
                self.put_in_mode(key, value, PutMode::Update(update_version(tag)))
                    .await
            }
        }
    }

    /// A `HEAD` of the object: its ETag and version, no body.
    async fn generation(&self, key: &str) -> Result<Generation> {
        Ok(match self.head(key, &self.path(key)?).await? {
            Some(meta) => object_generation(meta.e_tag, meta.version),
            None => Generation::Absent,
        })
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.refuse_write(key)?;
        let path = self.path(key)?;
        match self.client()?.delete(&path).await {
            Ok(()) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(store_error(e, "DELETE", &self.location(key))),
        }
    }

    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        check_prefix(prefix)?;
        let dir = match prefix.rfind('/') {
            Some(i) => &prefix[..i],
            None => "",
        };
        let base = self.join(dir)?;
        let listed: Vec<object_store::ObjectMeta> = self
            .client()?
            .list(Some(&base))
            .try_collect()
            .await
            .map_err(|e| store_error(e, "LIST", &self.location(prefix)))?;
        let mut keys: Vec<String> = listed
            .iter()
            .filter_map(|m| self.relative(&m.location))
            .filter(|k| k.starts_with(prefix))
            .collect();
        keys.sort();
        Ok(keys)
    }

    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        check_prefix(prefix)?;
        let base = self.join(prefix)?;
        let listed = self
            .client()?
            .list_with_delimiter(Some(&base))
            .await
            .map_err(|e| store_error(e, "LIST", &self.location(prefix)))?;
        let name = |p: &Path| p.filename().map(str::to_string);
        let mut keys: Vec<String> = listed
            .objects
            .iter()
            .filter_map(|m| name(&m.location))
            .collect();
        let mut dirs: Vec<String> = listed.common_prefixes.iter().filter_map(name).collect();
        keys.sort();
        dirs.sort();
        Ok((keys, dirs))
    }

    async fn delete_prefix(&self, prefix: &str) -> Result<()> {
        self.refuse_write(prefix)?;
        let keys = self.list_prefix(prefix).await?;
        let paths = keys
            .iter()
            .map(|k| self.path(k))
            .collect::<Result<Vec<_>>>()?;
        let client = self.client()?;
        let deleted: Vec<Result<Path>> = client
            .delete_stream(futures::stream::iter(paths.into_iter().map(Ok)).boxed())
            .map(|r| match r {
                Ok(p) => Ok(p),
                Err(e) if is_not_found(&e) => Ok(Path::default()),
                Err(e) => Err(store_error(e, "DELETE", &self.location(prefix))),
            })
            .collect()
            .await;
        deleted.into_iter().try_for_each(|r| r.map(|_| ()))
    }

    async fn exists(&self, key: &str) -> Result<bool> {
        Ok(self.head(key, &self.path(key)?).await?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_built_once_per_url_and_options() {
        let url = |u: &str| url::Url::parse(u).unwrap();
        let opts = |region: &str| vec![("aws_region".to_string(), region.to_string())];
        let a = build(&url("s3://cached-bucket/x"), &opts("eu-west-1")).unwrap();
        let b = build(&url("s3://cached-bucket/x"), &opts("eu-west-1")).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "the same URL and options: one client");
        let c = build(&url("s3://cached-bucket/x"), &opts("us-east-1")).unwrap();
        assert!(!Arc::ptr_eq(&a, &c), "other options: another client");
        let d = build(&url("s3://other-bucket/x"), &opts("eu-west-1")).unwrap();
        assert!(!Arc::ptr_eq(&a, &d), "another bucket: another client");
        let h1 = build(&url("http://127.0.0.1:9/d/a.zarr?sig=1"), &[]).unwrap();
        let h2 = build(&url("http://127.0.0.1:9/e/b.zarr?sig=1"), &[]).unwrap();
        let h3 = build(&url("http://127.0.0.1:9/d/a.zarr?sig=2"), &[]).unwrap();
        assert!(
            Arc::ptr_eq(&h1, &h2),
            "a web server's client serves every path"
        );
        assert!(!Arc::ptr_eq(&h1, &h3), "another query: another client");
    }

    #[test]
    fn urls_and_options() {
        let s = ObjectStore::from_url(
            "s3://bucket/data/x.zarr/",
            vec![
                ("aws_endpoint".into(), "http://127.0.0.1:1".into()),
                ("aws_access_key_id".into(), "k".into()),
                ("aws_secret_access_key".into(), "s".into()),
                ("aws_region".into(), "us-east-1".into()),
                ("allow_http".into(), "true".into()),
                ("max_retries".into(), "0".into()),
                ("timeout".into(), "1s".into()),
            ],
        )
        .unwrap();
        assert_eq!(s.location("c/0"), "s3://bucket/data/x.zarr/c/0");
        assert_eq!(s.path("c/0").unwrap().as_ref(), "data/x.zarr/c/0");
        assert_eq!(
            s.relative(&Path::from("data/x.zarr/zarr.json")).as_deref(),
            Some("zarr.json")
        );
        assert!(s.path("../x").is_err());
        let err = ObjectStore::from_url("s3://b/x", vec![("nope".into(), "1".into())]).unwrap_err();
        assert!(
            err.message.contains("unknown storage option 'nope'"),
            "{err}"
        );
        assert!(ObjectStore::from_url("ftp://b/x", vec![]).is_err());
        let h = ObjectStore::from_url("http://127.0.0.1:1/a%20b/x.zarr", vec![]).unwrap();
        assert_eq!(
            h.path("zarr.json").unwrap().as_ref(),
            "a b/x.zarr/zarr.json"
        );
        let err = futures::executor::block_on(h.set("k", Bytes::new())).unwrap_err();
        assert!(err.message.contains("read-only"), "{err}");
    }

    #[test]
    fn connection_refused_is_a_store_error_naming_the_url() {
        let s = ObjectStore::from_url(
            "s3://bucket/x.zarr",
            vec![
                ("aws_endpoint".into(), "http://127.0.0.1:9".into()),
                ("aws_access_key_id".into(), "k".into()),
                ("aws_secret_access_key".into(), "s".into()),
                ("allow_http".into(), "true".into()),
                ("max_retries".into(), "0".into()),
            ],
        )
        .unwrap();
        let err = crate::store::runtime::block_on(s.get("zarr.json"))
            .unwrap()
            .unwrap_err();
        assert!(
            err.message.starts_with("GET s3://bucket/x.zarr/zarr.json"),
            "{err}"
        );
    }
}
