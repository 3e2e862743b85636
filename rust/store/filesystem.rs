//! A store in a local directory, laid out as the v3 filesystem store spec says:
//! key `a/b/c` is the file `<root>/a/b/c`. Writes go to a temporary file in the
//! same directory, then are renamed over the key, so readers never see a torn
//! value and a crash leaves the old value in place.

use std::fs;
use std::io::{self, ErrorKind, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use async_trait::async_trait;
use bytes::Bytes;

use super::{check_key, check_prefix, ByteRange, OpenValue, ReadInto, Store};
use crate::error::{Error, Result};

/// Marks a temporary file; such files are never listed as keys.
pub const TMP_MARK: &str = ".zarrox-tmp-";

#[derive(Debug)]
pub struct FilesystemStore {
    root: PathBuf,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FilesystemStore {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FilesystemStore { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
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
        let path = self.path(key)?;
        let dir = path.parent().unwrap_or(&self.root);
        fs::create_dir_all(dir).map_err(|e| io_error(e, "cannot create directory", dir))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(
            ".{name}{TMP_MARK}{}-{}",
            std::process::id(),
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::File::create(&tmp).and_then(|mut f| f.write_all(value));
        if let Err(e) = written.and_then(|_| fs::rename(&tmp, &path)) {
            let _ = fs::remove_file(&tmp);
            return Err(io_error(e, "cannot write", &path));
        }
        Ok(())
    }

    fn delete_sync(&self, key: &str) -> Result<()> {
        let path = self.path(key)?;
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
                let key = format!("{rel}{name}");
                let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
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
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if is_missing(&e) => return Ok((vec![], vec![])),
            Err(e) => return Err(io_error(e, "cannot list", &dir)),
        };
        let (mut keys, mut dirs) = (Vec::new(), Vec::new());
        for entry in entries {
            let entry = entry.map_err(|e| io_error(e, "cannot list", &dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains(TMP_MARK) {
                continue;
            }
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
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

/// Bytes `start..end` of `file` by positioned reads, into a buffer of exactly
/// that size (filled by the reads themselves, never zeroed first).
fn read_span(file: &fs::File, start: u64, end: u64) -> io::Result<Vec<u8>> {
    let len = end - start;
    let mut buf = Vec::new();
    buf.try_reserve_exact(len as usize)
        .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
    let got = Read::take(PositionedReader { file, pos: start }, len).read_to_end(&mut buf)?;
    if got as u64 != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("{got} of {len} bytes at offset {start}: the file is shorter"),
        ));
    }
    Ok(buf)
}

/// `Read` by positioned reads from `pos` on: no shared file cursor, so many
/// threads read one opened file at once.
struct PositionedReader<'a> {
    file: &'a fs::File,
    pos: u64,
}

impl Read for PositionedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// A key opened for range reads: the file is opened at the first read, and
/// every later read reads that file (that version of the value), even if a
/// writer renames a new one over its key meanwhile.
struct OpenFile {
    path: PathBuf,
    /// The file and its size; `None`: no value under the key.
    file: OnceLock<Option<(fs::File, u64)>>,
}

impl OpenFile {
    fn opened(&self) -> Result<Option<&(fs::File, u64)>> {
        if let Some(f) = self.file.get() {
            return Ok(f.as_ref());
        }
        let opened = match fs::File::open(&self.path) {
            Ok(f) => {
                let size = f
                    .metadata()
                    .map_err(|e| io_error(e, "cannot stat", &self.path))?
                    .len();
                Some((f, size))
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
        let Some((file, size)) = self.opened()? else {
            return Ok(None);
        };
        ranges
            .iter()
            .map(|r| {
                let (s, e) = r.resolve(*size)?;
                read_span(file, s, e)
                    .map(Bytes::from)
                    .map_err(|e| io_error(e, "cannot read", &self.path))
            })
            .collect::<Result<_>>()
            .map(Some)
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
