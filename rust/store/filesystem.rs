//! A store in a local directory, laid out as the v3 filesystem store spec says:
//! key `a/b/c` is the file `<root>/a/b/c`. Writes go to a temporary file in the
//! same directory, then are renamed over the key, so readers never see a torn
//! value and a crash leaves the old value in place (its temporary file is not
//! a key, and [`FilesystemStore::remove_temporaries`] removes it). With
//! `fsync`, a write is on disk before it returns: the file and its directory
//! are synced, so a power loss keeps it too.
//!
//! Nothing is written, deleted or listed through a path that resolves outside
//! the root (a directory of the store that is a symbolic link to elsewhere):
//! that is an error for writes and deletes, and listings leave it out. Reads
//! follow links.

use std::fs;
use std::io::{self, ErrorKind, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use async_trait::async_trait;
use bytes::Bytes;

use super::{
    check_key, check_prefix, ByteRange, Generation, OpenValue, ReadInto, Store, Versioned,
};
use crate::error::{Error, Result};

/// Marks a temporary file; such files are never listed as keys.
pub const TMP_MARK: &str = ".zarrox-tmp-";

#[derive(Debug)]
pub struct FilesystemStore {
    root: PathBuf,
    fsync: bool,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FilesystemStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FilesystemStore {
            root: root.into(),
            fsync: false,
        }
    }

    /// Sync every written file and its directory before a write returns.
    pub fn with_fsync(mut self, fsync: bool) -> Self {
        self.fsync = fsync;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Error unless `path` (below the root) resolves inside the root: the
    /// nearest existing one of it and its ancestors is checked.
    fn contained(&self, path: &Path) -> Result<()> {
        self.check_contained(path).map(|_| ())
    }

    /// [`Self::contained`], and whether `path` was seen to exist on the way
    /// (false: it does not, or the check could not tell).
    fn check_contained(&self, path: &Path) -> Result<bool> {
        if let Some(exists) = self.no_links_below_root(path) {
            return Ok(exists);
        }
        let Ok(root) = self.root.canonicalize() else {
            return Ok(false); // no root yet: nothing below it exists to lead out
        };
        let mut existing = path;
        loop {
            match existing.symlink_metadata() {
                Ok(_) => break,
                Err(_) if existing != self.root => match existing.parent() {
                    Some(p) => existing = p,
                    None => return Ok(false),
                },
                Err(_) => return Ok(false),
            }
        }
        let resolved = existing
            .canonicalize()
            .unwrap_or_else(|_| existing.to_path_buf());
        if resolved.starts_with(&root) {
            return Ok(false);
        }
        Err(Error::store(format!(
            "'{}' resolves to '{}', outside the store's root '{}': refused",
            path.display(),
            resolved.display(),
            root.display()
        )))
    }

    /// `Some` when `path` is the root joined with plain names none of whose
    /// existing prefixes is a link: then it resolves inside the root, and the
    /// check costs one `lstat` per existing component (a write's chunk path
    /// would otherwise cost a `readlink` per component of root and path).
    /// `Some(true)` when every component exists (a writer need not create
    /// the directory), `None` when the walk cannot tell.
    fn no_links_below_root(&self, path: &Path) -> Option<bool> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let mut walked = self.root.clone();
        for part in rel.components() {
            let std::path::Component::Normal(name) = part else {
                return None;
            };
            walked.push(name);
            match walked.symlink_metadata() {
                Ok(m) if m.file_type().is_symlink() => return None,
                Ok(_) => {}
                Err(_) => return Some(false), // the rest does not exist yet
            }
        }
        Some(true)
    }

    /// Whether a directory entry of the store is a link that resolves outside
    /// the root (listings leave it out).
    fn leads_out(&self, entry: &fs::DirEntry) -> bool {
        entry.file_type().is_ok_and(|t| t.is_symlink()) && self.contained(&entry.path()).is_err()
    }

    /// Remove the temporary files of writers that died mid-write: those whose
    /// process is gone, and those older than `older_than` (a live writer's
    /// temporary lives for one write). Returns how many were removed.
    pub fn remove_temporaries(&self, older_than: std::time::Duration) -> Result<usize> {
        let mut removed = 0;
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            let entries = match fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(io_error(e, "cannot list", &dir)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| io_error(e, "cannot list", &dir))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let kind = entry
                    .file_type()
                    .map_err(|e| io_error(e, "cannot stat", &dir))?;
                if kind.is_dir() {
                    stack.push(entry.path());
                    continue;
                }
                let Some(at) = name.find(TMP_MARK) else {
                    continue;
                };
                let writer = name[at + TMP_MARK.len()..]
                    .split('-')
                    .next()
                    .and_then(|p| p.parse::<u32>().ok());
                let old = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_none_or(|age| age >= older_than);
                if old || writer.is_some_and(|pid| !process_alive(pid)) {
                    match fs::remove_file(entry.path()) {
                        Ok(()) => removed += 1,
                        Err(e) if is_missing(&e) => {}
                        Err(e) => return Err(io_error(e, "cannot delete", &entry.path())),
                    }
                }
            }
        }
        Ok(removed)
    }

    fn path(&self, key: &str) -> Result<PathBuf> {
        check_key(key)?;
        Ok(self.root.join(key))
    }

    fn get_sync(&self, key: &str) -> Result<Option<Bytes>> {
        let path = self.path(key)?;
        match fs::read(&path) {
            Ok(v) => Ok(Some(Bytes::from(v))),
            Err(e) if is_missing(&e) => Ok(None),
            Err(e) => Err(io_error(e, "cannot read", &path)),
        }
    }

    fn set_sync(&self, key: &str, value: &[u8]) -> Result<()> {
        self.write_sync(key, value, None, false).map(|_| ())
    }

    /// Write `value` under `key` through a temporary file renamed over it;
    /// with `expected`, only if the key's generation is still that (checked
    /// and renamed under the directory's lock): the generation of the file
    /// written (its identity: a rename keeps it; [`Generation::Unknown`]
    /// unless `identify`, which costs an `fstat`), `None` when the condition
    /// failed.
    fn write_sync(
        &self,
        key: &str,
        value: &[u8],
        expected: Option<&Generation>,
        identify: bool,
    ) -> Result<Option<Generation>> {
        let path = self.path(key)?;
        let dir = path.parent().unwrap_or(&self.root);
        if !self.check_contained(dir)? {
            fs::create_dir_all(dir).map_err(|e| io_error(e, "cannot create directory", dir))?;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(
            ".{name}{TMP_MARK}{}-{}",
            std::process::id(),
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let created = match fs::File::create(&tmp) {
            // The directory went away after the check (a delete of its last
            // chunk removes it): create it after all.
            Err(e) if is_missing(&e) => fs::create_dir_all(dir)
                .map_err(|e| io_error(e, "cannot create directory", dir))
                .and_then(|_| self.contained(dir))
                .map(|_| fs::File::create(&tmp))?,
            other => other,
        };
        let written = created.and_then(|mut f| {
            f.write_all(value)?;
            if self.fsync {
                f.sync_all()?;
            }
            if identify {
                f.metadata().map(|m| identity(&m))
            } else {
                Ok(Generation::Unknown)
            }
        });
        let discard = |e: Error| {
            let _ = fs::remove_file(&tmp);
            e
        };
        let written = written.map_err(|e| discard(io_error(e, "cannot write", &path)))?;
        // The check and the rename happen under the lock, so no other
        // conditional writer of this directory commits in between.
        let lock = match expected {
            None => None,
            Some(expected) => {
                let lock = DirLock::take(dir).map_err(discard)?;
                if generation_at(&path).map_err(discard)? != *expected {
                    let _ = fs::remove_file(&tmp);
                    return Ok(None);
                }
                Some(lock)
            }
        };
        fs::rename(&tmp, &path).map_err(|e| discard(io_error(e, "cannot write", &path)))?;
        drop(lock);
        if self.fsync {
            // The rename is durable once the directory is.
            fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| io_error(e, "cannot sync directory", dir))?;
        }
        Ok(Some(written))
    }

    /// The value under `key` and its generation, from one opened file (the
    /// identity is the file's, read by `fstat`, so it is the version read).
    fn get_versioned_sync(&self, key: &str) -> Result<Versioned> {
        let path = self.path(key)?;
        let file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if is_missing(&e) => {
                return Ok(Versioned {
                    value: None,
                    generation: Generation::Absent,
                })
            }
            Err(e) => return Err(io_error(e, "cannot open", &path)),
        };
        let meta = file
            .metadata()
            .map_err(|e| io_error(e, "cannot stat", &path))?;
        if meta.is_dir() {
            return Ok(Versioned {
                value: None,
                generation: Generation::Absent,
            });
        }
        let value =
            read_span(&file, 0, meta.len()).map_err(|e| io_error(e, "cannot read", &path))?;
        Ok(Versioned {
            value: Some(Bytes::from(value)),
            generation: identity(&meta),
        })
    }

    /// Remove `key` if its generation is still `expected` (under the
    /// directory's lock, as a conditional write).
    fn delete_if_sync(&self, key: &str, expected: &Generation) -> Result<bool> {
        if *expected == Generation::Unknown {
            return self.delete_sync(key).map(|_| true);
        }
        let path = self.path(key)?;
        let dir = path.parent().unwrap_or(&self.root);
        self.contained(dir)?;
        if *expected == Generation::Absent {
            return Ok(generation_at(&path)? == Generation::Absent);
        }
        let _lock = match DirLock::take(dir) {
            Ok(lock) => lock,
            // No directory: no value, so not the one expected.
            Err(_) if !dir.exists() => return Ok(false),
            Err(e) => return Err(e),
        };
        if generation_at(&path)? != *expected {
            return Ok(false);
        }
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) => Err(io_error(e, "cannot delete", &path)),
        }
    }

    fn delete_sync(&self, key: &str) -> Result<()> {
        let path = self.path(key)?;
        self.contained(path.parent().unwrap_or(&self.root))?;
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if is_missing(&e) => Ok(()),
            Err(e) => Err(io_error(e, "cannot delete", &path)),
        }
    }

    fn list_prefix_sync(&self, prefix: &str) -> Result<Vec<String>> {
        check_prefix(prefix)?;
        // Walk from the deepest directory the prefix names.
        let dir_part = match prefix.rfind('/') {
            Some(i) => &prefix[..=i],
            None => "",
        };
        let mut out = Vec::new();
        if self.contained(&self.root.join(dir_part)).is_err() {
            return Ok(out);
        }
        let mut stack = vec![dir_part.to_string()];
        while let Some(rel) = stack.pop() {
            let dir = self.root.join(&rel);
            let entries = match fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if is_missing(&e) => continue,
                Err(e) => return Err(io_error(e, "cannot list", &dir)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| io_error(e, "cannot list", &dir))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.contains(TMP_MARK) {
                    continue;
                }
                if self.leads_out(&entry) {
                    continue;
                }
                let key = format!("{rel}{name}");
                let is_dir = entry.path().is_dir();
                if is_dir {
                    let sub = format!("{key}/");
                    if sub.starts_with(prefix) || prefix.starts_with(&sub) {
                        stack.push(sub);
                    }
                } else if key.starts_with(prefix) {
                    out.push(key);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// A directory prefix (`""` or ending in `/`) removes the directory tree, so
    /// no empty directories are left behind; other prefixes remove matching keys.
    fn delete_prefix_sync(&self, prefix: &str) -> Result<()> {
        check_prefix(prefix)?;
        let Some(dir) = prefix
            .strip_suffix('/')
            .or((prefix.is_empty()).then_some(""))
        else {
            for key in self.list_prefix_sync(prefix)? {
                self.delete_sync(&key)?;
            }
            return Ok(());
        };
        let path = if dir.is_empty() {
            self.root.clone()
        } else {
            self.path(dir)?
        };
        self.contained(&path)?;
        let entries = match fs::read_dir(&path) {
            Ok(e) => e,
            Err(e) if is_missing(&e) => return Ok(()),
            Err(e) => return Err(io_error(e, "cannot list", &path)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| io_error(e, "cannot list", &path))?;
            let p = entry.path();
            let removed = if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            };
            match removed {
                Err(e) if !is_missing(&e) => return Err(io_error(e, "cannot delete", &p)),
                _ => {}
            }
        }
        if !dir.is_empty() {
            let _ = fs::remove_dir(&path);
        }
        Ok(())
    }

    fn list_dir_sync(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        check_prefix(prefix)?;
        let dir = self.root.join(prefix);
        if self.contained(&dir).is_err() {
            return Ok((vec![], vec![]));
        }
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if is_missing(&e) => return Ok((vec![], vec![])),
            Err(e) => return Err(io_error(e, "cannot list", &dir)),
        };
        let (mut keys, mut dirs) = (Vec::new(), Vec::new());
        for entry in entries {
            let entry = entry.map_err(|e| io_error(e, "cannot list", &dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains(TMP_MARK) || self.leads_out(&entry) {
                continue;
            }
            if entry.path().is_dir() {
                dirs.push(name);
            } else {
                keys.push(name);
            }
        }
        keys.sort();
        dirs.sort();
        Ok((keys, dirs))
    }
}

/// Whether a process with this id runs (or cannot be told apart from one).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

fn io_error(e: std::io::Error, what: &str, path: &Path) -> Error {
    Error::store(format!("{what} '{}': {e}", path.display()))
}

/// Read errors that mean "no value under this key".
fn is_missing(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::NotFound | ErrorKind::IsADirectory | ErrorKind::NotADirectory
    )
}

/// A file's generation: its identity, which every write changes (a write
/// renames a new file over the key, so the inode changes; the time and size
/// catch a writer that rewrites in place).
fn identity(meta: &fs::Metadata) -> Generation {
    use std::os::unix::fs::MetadataExt;
    let mtime_ns = i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec());
    Generation::Tag(format!(
        "{:x}.{:x}.{mtime_ns}.{}",
        meta.dev(),
        meta.ino(),
        meta.len()
    ))
}

/// The generation of the value at `path` now.
fn generation_at(path: &Path) -> Result<Generation> {
    match fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(identity(&m)),
        Ok(_) => Ok(Generation::Absent),
        Err(e) if is_missing(&e) => Ok(Generation::Absent),
        Err(e) => Err(io_error(e, "cannot stat", path)),
    }
}

/// An exclusive `flock` on a directory, held by conditional writers around
/// their check and rename. It needs no lock file (nothing that a listing of
/// the store could take for a key, nothing stale to clean up), the kernel
/// releases it when its holder dies, and readers never take it.
struct DirLock(fs::File);

impl DirLock {
    fn take(dir: &Path) -> Result<Self> {
        let file = fs::File::open(dir).map_err(|e| io_error(e, "cannot open directory", dir))?;
        file.lock()
            .map_err(|e| io_error(e, "cannot lock directory", dir))?;
        Ok(DirLock(file))
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Bytes `start..end` of `file` by positioned reads, into a buffer of exactly
/// that size (filled by the reads themselves, never zeroed first: `Read`'s
/// `read_to_end` zeroes a buffer's spare room before each read, which was
/// 1.4% of a sharded read-all).
fn read_span(file: &fs::File, start: u64, end: u64) -> io::Result<Vec<u8>> {
    let too_large = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_string());
    let len = usize::try_from(end - start).map_err(|_| too_large("range too large"))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(len)
        .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
    while buf.len() < len {
        let at = start + buf.len() as u64;
        let offset = libc::off_t::try_from(at).map_err(|_| too_large("offset too large"))?;
        let want = len - buf.len();
        let room = &mut buf.spare_capacity_mut()[..want];
        // SAFETY: `room` is the vector's own spare capacity, valid for writes
        // of `room.len()` bytes, and `pread` writes at most that many bytes
        // into it; the descriptor stays open for the call (borrowed from
        // `file`). Nothing reads `room` before the kernel has written it.
        let n = unsafe {
            libc::pread(
                file.as_raw_fd(),
                room.as_mut_ptr().cast(),
                room.len(),
                offset,
            )
        };
        match n {
            0 => break,
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() != ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            // SAFETY: the kernel initialised the first `n` bytes of the spare
            // capacity (`0 < n <= room.len()`), so they become part of the vector.
            n => unsafe { buf.set_len(buf.len() + n as usize) },
        }
    }
    if buf.len() != len {
        let got = buf.len();
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("{got} of {len} bytes at offset {start}: the file is shorter"),
        ));
    }
    Ok(buf)
}

/// A key opened for range reads: the file is opened at the first read, and
/// every later read reads that file (that version of the value), even if a
/// writer renames a new one over its key meanwhile.
struct OpenFile {
    path: PathBuf,
    /// The file and what `fstat` said of it when it was opened (its size and
    /// identity); `None`: no value under the key.
    file: OnceLock<Option<(fs::File, fs::Metadata)>>,
}

impl OpenFile {
    fn opened(&self) -> Result<Option<&(fs::File, fs::Metadata)>> {
        if let Some(f) = self.file.get() {
            return Ok(f.as_ref());
        }
        let opened = match fs::File::open(&self.path) {
            Ok(f) => {
                let meta = f
                    .metadata()
                    .map_err(|e| io_error(e, "cannot stat", &self.path))?;
                Some((f, meta))
            }
            Err(e) if is_missing(&e) => None,
            Err(e) => return Err(io_error(e, "cannot open", &self.path)),
        };
        Ok(self.file.get_or_init(|| opened).as_ref())
    }
}

#[async_trait]
impl OpenValue for OpenFile {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        let Some((file, meta)) = self.opened()? else {
            return Ok(None);
        };
        let size = meta.len();
        ranges
            .iter()
            .map(|r| {
                let (s, e) = r.resolve(size)?;
                read_span(file, s, e)
                    .map(Bytes::from)
                    .map_err(|e| io_error(e, "cannot read", &self.path))
            })
            .collect::<Result<_>>()
            .map(Some)
    }

    fn generation(&self) -> Option<Generation> {
        match self.file.get()? {
            Some((_, meta)) => Some(identity(meta)),
            None => Some(Generation::Absent),
        }
    }

    /// The `fstat` of the opened file (opened now if it was not) says whether
    /// it is the version `expected`; either way, every read reads that file.
    async fn pin(&self, expected: &Generation) -> Result<bool> {
        Ok(match (self.opened()?, expected) {
            (Some((_, meta)), Generation::Tag(_)) => identity(meta) == *expected,
            _ => false,
        })
    }
}

#[async_trait]
impl Store for FilesystemStore {
    fn location(&self, key: &str) -> String {
        self.root.join(key).display().to_string()
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.get_sync(key)
    }

    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(OpenFile {
            path: self.path(key)?,
            file: OnceLock::new(),
        }))
    }

    fn read_into(&self, key: &str, out: &mut [u8]) -> Result<ReadInto> {
        let path = self.path(key)?;
        let file = match fs::File::open(&path) {
            Ok(f) => f,
            Err(e) if is_missing(&e) => return Ok(ReadInto::Missing),
            Err(e) => return Err(io_error(e, "cannot open", &path)),
        };
        let size = file
            .metadata()
            .map_err(|e| io_error(e, "cannot stat", &path))?
            .len();
        if size != out.len() as u64 {
            return Ok(ReadInto::NotRead);
        }
        file.read_exact_at(out, 0)
            .map_err(|e| io_error(e, "cannot read", &path))?;
        Ok(ReadInto::Read)
    }

    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.set_sync(key, &value)
    }

    async fn conditional_writes(&self) -> Result<bool> {
        Ok(true)
    }

    fn conditional_deletes(&self) -> bool {
        true
    }

    async fn get_versioned(&self, key: &str) -> Result<Versioned> {
        self.get_versioned_sync(key)
    }

    /// A `stat` of the file; the value is read only when it changed.
    async fn get_if_changed(&self, key: &str, known: &Generation) -> Result<Option<Versioned>> {
        if *known != Generation::Unknown && generation_at(&self.path(key)?)? == *known {
            return Ok(None);
        }
        self.get_versioned_sync(key).map(Some)
    }

    async fn set_if(
        &self,
        key: &str,
        value: Bytes,
        expected: &Generation,
    ) -> Result<Option<Generation>> {
        let condition = (*expected != Generation::Unknown).then_some(expected);
        self.write_sync(key, &value, condition, true)
    }

    async fn generation(&self, key: &str) -> Result<Generation> {
        generation_at(&self.path(key)?)
    }

    async fn delete_if(&self, key: &str, expected: &Generation) -> Result<bool> {
        self.delete_if_sync(key, expected)
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.delete_sync(key)
    }

    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        self.list_prefix_sync(prefix)
    }

    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        self.list_dir_sync(prefix)
    }

    async fn delete_prefix(&self, prefix: &str) -> Result<()> {
        self.delete_prefix_sync(prefix)
    }

    async fn exists(&self, key: &str) -> Result<bool> {
        let path = self.path(key)?;
        Ok(path.is_file())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    fn tempdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("zarrox-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn filesystem_store_behaves() {
        let d = tempdir("fs");
        let s = FilesystemStore::new(&d);
        super::super::tests::exercise(&s);
        super::super::tests::exercise_read_into(&s);
        super::super::tests::exercise_conditional(&s);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn spans_are_read_whole_and_a_short_file_is_an_error() {
        let d = tempdir("spans");
        fs::create_dir_all(&d).unwrap();
        let path = d.join("f");
        // Larger than one page and than typical pipe/readahead sizes.
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        fs::write(&path, &data).unwrap();
        let file = fs::File::open(&path).unwrap();
        for (s, e) in [(0, 0), (0, 1), (5, 4101), (1, 2_999_999), (0, 3_000_000)] {
            let got = read_span(&file, s, e).unwrap();
            assert_eq!(got, &data[s as usize..e as usize]);
            assert_eq!(got.capacity(), (e - s) as usize);
        }
        let err = read_span(&file, 2_999_000, 3_000_010).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("1000 of 1010 bytes"), "{err}");
        assert!(read_span(&file, u64::MAX - 1, u64::MAX).is_err());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn deleting_a_directory_prefix_leaves_no_empty_directories() {
        let d = tempdir("delprefix");
        let s = FilesystemStore::new(&d);
        s.set_sync("g/a/c/0/0", b"1").unwrap();
        s.set_sync("g/zarr.json", b"{}").unwrap();
        s.set_sync("other", b"2").unwrap();
        block_on(s.delete_prefix("g/")).unwrap();
        assert!(!d.join("g").exists());
        assert_eq!(block_on(s.list_prefix("")).unwrap(), vec!["other"]);
        block_on(s.delete_prefix("")).unwrap();
        assert!(d.exists() && fs::read_dir(&d).unwrap().next().is_none());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn nothing_is_written_deleted_or_listed_through_a_link_out_of_the_root() {
        let d = tempdir("links");
        let outside = tempdir("links-outside");
        fs::create_dir_all(outside.join("keep")).unwrap();
        fs::write(outside.join("keep/data"), b"precious").unwrap();
        let s = FilesystemStore::new(&d);
        s.set_sync("g/zarr.json", b"{}").unwrap();
        std::os::unix::fs::symlink(outside.join("keep"), d.join("g/arr")).unwrap();
        // Reads follow the link; writes, deletes and listings do not.
        assert_eq!(s.get_sync("g/arr/data").unwrap().unwrap(), &b"precious"[..]);
        let err = s.set_sync("g/arr/c/0", b"x").unwrap_err();
        assert!(err.message.contains("outside the store's root"), "{err}");
        assert!(s.delete_sync("g/arr/data").is_err());
        assert!(block_on(s.delete_prefix("g/arr/")).is_err());
        assert_eq!(block_on(s.list_prefix("")).unwrap(), vec!["g/zarr.json"]);
        assert_eq!(
            block_on(s.list_prefix("g/arr/")).unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(
            block_on(s.list_dir("g/")).unwrap(),
            (vec!["zarr.json".to_string()], vec![])
        );
        // Deleting the group removes the link, not what it points to.
        block_on(s.delete_prefix("g/")).unwrap();
        assert_eq!(fs::read(outside.join("keep/data")).unwrap(), b"precious");
        // A link that stays inside the root is a directory like any other.
        s.set_sync("real/a", b"1").unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("alias")).unwrap();
        s.set_sync("alias/b", b"2").unwrap();
        assert_eq!(
            block_on(s.list_prefix("")).unwrap(),
            vec!["alias/a", "alias/b", "real/a", "real/b"]
        );
        fs::remove_dir_all(&d).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn temporaries_of_dead_writers_are_removed_others_kept() {
        let d = tempdir("temporaries");
        let s = FilesystemStore::new(&d).with_fsync(true);
        s.set_sync("a/b", b"1").unwrap();
        let dead = d.join(format!("a/.b{TMP_MARK}{}-7", i32::MAX));
        let live = d.join(format!("a/.c{TMP_MARK}{}-8", std::process::id()));
        fs::write(&dead, b"junk").unwrap();
        fs::write(&live, b"in flight").unwrap();
        let hour = std::time::Duration::from_secs(3600);
        assert_eq!(s.remove_temporaries(hour).unwrap(), 1);
        assert!(!dead.exists() && live.exists());
        assert_eq!(s.remove_temporaries(std::time::Duration::ZERO).unwrap(), 1);
        assert!(!live.exists());
        assert_eq!(s.get_sync("a/b").unwrap().unwrap(), &b"1"[..]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn writes_leave_no_temporary_files() {
        let d = tempdir("tmp");
        let s = FilesystemStore::new(&d);
        s.set_sync("x/y", b"1").unwrap();
        s.set_sync("x/y", b"2").unwrap();
        let names: Vec<_> = fs::read_dir(d.join("x"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("y")]);
        // A stale temporary file (a crashed writer) is not a key.
        fs::write(d.join("x").join(format!(".y{TMP_MARK}1-1")), b"junk").unwrap();
        assert_eq!(block_on(s.list_prefix("")).unwrap(), vec!["x/y"]);
        assert_eq!(block_on(s.list_dir("x/")).unwrap().0, vec!["y"]);
        fs::remove_dir_all(&d).unwrap();
    }
}
