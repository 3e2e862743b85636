//! A store in a zip archive, as zarr-python's `ZipStore` writes them: one
//! entry per key, stored uncompressed (deflated entries are read too).
//!
//! Reads are positioned reads of an entry's bytes, so a shard's inner chunks
//! are read by range. Writes append entries; [`Store::flush`] writes the
//! archive's central directory (the engine flushes after every write call,
//! the Python layer on `close`), and until then written values are read from
//! memory. A key written again is rewritten in place at the next flush by
//! copying the archive (zip archives cannot hold two current entries for a
//! name); readers of an archive with repeated names (zarr-python appends
//! them) see the last one, as Python's `zipfile` does.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::{check_key, check_prefix, children, ByteRange, HeldValue, OpenValue, Store};
use crate::error::{Error, Result};
use crate::fork;

/// Values written since the last flush are held in memory up to this many
/// bytes; past it the store flushes by itself.
const PENDING_LIMIT: usize = 64 * 1024 * 1024;

/// Where an entry's bytes are in the archive.
#[derive(Debug, Clone, Copy)]
struct Entry {
    data_start: u64,
    compressed: u64,
    size: u64,
    deflated: bool,
}

/// The archive as of the last flush: its file, for positioned reads, and its entries.
#[derive(Debug)]
struct Archive {
    file: File,
    entries: BTreeMap<String, Entry>,
}

#[derive(Debug, Default)]
struct Pending {
    /// Values written since the last flush.
    values: BTreeMap<String, Bytes>,
    /// Those of them already in the archive (written at the next flush by a rewrite).
    rewrites: BTreeSet<String>,
    bytes: usize,
    writer: Option<ZipWriter<File>>,
}

#[derive(Debug)]
pub struct ZipStore {
    path: PathBuf,
    writable: bool,
    archive: Mutex<Arc<Archive>>,
    pending: Mutex<Pending>,
}

fn zip_error(e: impl std::fmt::Display, what: &str, path: &Path) -> Error {
    Error::store(format!("{what} zip archive '{}': {e}", path.display()))
}

fn read_archive(path: &Path) -> Result<Archive> {
    let file = File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::new(
                crate::error::ErrorKind::NotFound,
                format!("no zip archive at '{}'", path.display()),
            )
        } else {
            zip_error(e, "cannot open", path)
        }
    })?;
    let file_len = file
        .metadata()
        .map_err(|e| zip_error(e, "cannot read", path))?
        .len();
    let mut zip = ZipArchive::new(file).map_err(|e| zip_error(e, "cannot read", path))?;
    let mut entries = BTreeMap::new();
    for i in 0..zip.len() {
        let f = zip
            .by_index_raw(i)
            .map_err(|e| zip_error(e, "cannot read", path))?;
        if f.is_dir() {
            continue;
        }
        let deflated = match f.compression() {
            CompressionMethod::Stored => false,
            CompressionMethod::Deflated => true,
            other => {
                return Err(Error::unsupported(format!(
                    "zip archive '{}': entry '{}' uses {other:?} compression; zarrox reads \
                     stored and deflated entries",
                    path.display(),
                    f.name().unwrap_or_default()
                )))
            }
        };
        let name = f
            .name()
            .map_err(|e| zip_error(e, "cannot read", path))?
            .into_owned();
        let entry = Entry {
            data_start: f
                .data_start()
                .ok_or_else(|| zip_error("entry without a data offset", "cannot read", path))?,
            compressed: f.compressed_size(),
            size: f.size(),
            deflated,
        };
        // A central directory may claim any size: an entry must lie inside the file
        // (and a stored one be as long as its size) before anything is allocated for it.
        let inside = entry
            .data_start
            .checked_add(entry.compressed)
            .is_some_and(|end| end <= file_len);
        // Deflate expands at most 1032:1, so a larger claimed size is a forged one.
        let possible = if deflated {
            entry.size <= entry.compressed.saturating_mul(1032).saturating_add(64)
        } else {
            entry.size == entry.compressed
        };
        if !inside || !possible {
            let claim = format!(
                "entry '{name}' claims {} bytes at offset {}, past the end of the \
                 {file_len}-byte file or impossible for its size {}",
                entry.compressed, entry.data_start, entry.size
            );
            return Err(zip_error(claim, "corrupt", path));
        }
        entries.insert(name, entry);
    }
    let file = zip.into_inner();
    Ok(Archive { file, entries })
}

fn write_empty_archive(path: &Path) -> Result<()> {
    let file = File::create(path).map_err(|e| zip_error(e, "cannot create", path))?;
    ZipWriter::new(file)
        .finish()
        .map_err(|e| zip_error(e, "cannot write", path))?;
    Ok(())
}

fn entry_options(len: usize) -> SimpleFileOptions {
    SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(len as u64 >= u32::MAX as u64)
}

impl Archive {
    /// The whole value of `entry`, inflated if it is deflated.
    fn read(&self, entry: &Entry, path: &Path) -> Result<Bytes> {
        let raw = self.read_raw(entry.data_start, entry.compressed, path)?;
        if !entry.deflated {
            return Ok(raw);
        }
        let size = usize::try_from(entry.size)
            .map_err(|_| Error::memory(format!("cannot allocate {} bytes", entry.size)))?;
        let mut out = crate::alloc::with_capacity(size)?;
        flate2::read::DeflateDecoder::new(&raw[..])
            .take(entry.size)
            .read_to_end(&mut out)
            .map_err(|e| zip_error(e, "cannot inflate an entry of", path))?;
        if out.len() as u64 != entry.size {
            return Err(zip_error(
                "an entry is shorter than its size",
                "corrupt",
                path,
            ));
        }
        Ok(Bytes::from(out))
    }

    fn read_raw(&self, start: u64, len: u64, path: &Path) -> Result<Bytes> {
        let len = usize::try_from(len)
            .map_err(|_| Error::memory(format!("cannot allocate {len} bytes")))?;
        let mut buf = crate::alloc::zeroed(len)?;
        self.file
            .read_exact_at(&mut buf, start)
            .map_err(|e| zip_error(e, "cannot read", path))?;
        Ok(Bytes::from(buf))
    }
}

impl ZipStore {
    /// Open the archive at `path`: mode `r` (read only; it must exist), `w`
    /// (a new, empty archive, replacing any file there), `a` (read and write;
    /// created if missing) or `x` (a new archive; an error if one exists).
    pub fn open(path: impl Into<PathBuf>, mode: &str) -> Result<Self> {
        let path = path.into();
        let writable = match mode {
            "r" => false,
            "w" => {
                write_empty_archive(&path)?;
                true
            }
            "a" => {
                if !path.exists() {
                    write_empty_archive(&path)?;
                }
                true
            }
            "x" => {
                if path.exists() {
                    return Err(Error::store(format!(
                        "zip archive '{}' already exists (mode 'x')",
                        path.display()
                    )));
                }
                write_empty_archive(&path)?;
                true
            }
            other => {
                return Err(Error::value(format!(
                    "zip store mode must be 'r', 'w', 'a' or 'x', got '{other}'"
                )))
            }
        };
        let archive = read_archive(&path)?;
        Ok(ZipStore {
            path,
            writable,
            archive: Mutex::new(Arc::new(archive)),
            pending: Mutex::new(Pending::default()),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn archive(&self) -> Arc<Archive> {
        Arc::clone(&fork::lock(&self.archive))
    }

    fn pending(&self) -> fork::Guarded<'_, Pending> {
        fork::lock(&self.pending)
    }

    fn value(&self, key: &str) -> Result<Option<Bytes>> {
        check_key(key)?;
        if let Some(v) = self.pending().values.get(key) {
            return Ok(Some(v.clone()));
        }
        let archive = self.archive();
        archive
            .entries
            .get(key)
            .map(|e| archive.read(e, &self.path))
            .transpose()
    }

    /// All keys: the archive's and those written since.
    fn keys(&self) -> Vec<String> {
        let mut keys: BTreeSet<String> = self.archive().entries.keys().cloned().collect();
        keys.extend(self.pending().values.keys().cloned());
        keys.into_iter().collect()
    }

    fn set_sync(&self, key: &str, value: Bytes) -> Result<()> {
        check_key(key)?;
        if !self.writable {
            return Err(Error::store(format!(
                "cannot write '{key}': zip archive '{}' is open read-only",
                self.path.display()
            )));
        }
        let over_limit = {
            let mut p = self.pending();
            let known = self.archive().entries.contains_key(key) || p.values.contains_key(key);
            if known {
                p.rewrites.insert(key.to_string());
            } else {
                if p.writer.is_none() {
                    let file = OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&self.path)
                        .map_err(|e| zip_error(e, "cannot open", &self.path))?;
                    p.writer = Some(
                        ZipWriter::new_append(file)
                            .map_err(|e| zip_error(e, "cannot append to", &self.path))?,
                    );
                }
                let w = p
                    .writer
                    .as_mut()
                    .ok_or_else(|| Error::store("no zip writer"))?;
                w.start_file(key, entry_options(value.len()))
                    .and_then(|()| std::io::Write::write_all(w, &value).map_err(Into::into))
                    .map_err(|e| zip_error(e, "cannot write to", &self.path))?;
            }
            p.bytes += value.len();
            p.values.insert(key.to_string(), value);
            p.bytes > PENDING_LIMIT
        };
        if over_limit {
            self.flush()?;
        }
        Ok(())
    }

    /// Copy the archive with `rewrites` replaced by their pending values, and
    /// rename the copy over it.
    fn rewrite(&self, pending: &Pending) -> Result<()> {
        let tmp = self
            .path
            .with_extension(format!("zip.zarrox-tmp-{}", std::process::id()));
        let result = (|| -> Result<()> {
            let mut src = ZipArchive::new(
                File::open(&self.path).map_err(|e| zip_error(e, "cannot open", &self.path))?,
            )
            .map_err(|e| zip_error(e, "cannot read", &self.path))?;
            let out = File::create(&tmp).map_err(|e| zip_error(e, "cannot create", &tmp))?;
            let mut w = ZipWriter::new(out);
            for i in 0..src.len() {
                let f = src
                    .by_index_raw(i)
                    .map_err(|e| zip_error(e, "cannot read", &self.path))?;
                let name = f.name().map(|n| n.into_owned()).unwrap_or_default();
                if pending.rewrites.contains(&name) {
                    continue;
                }
                w.raw_copy_file(f)
                    .map_err(|e| zip_error(e, "cannot copy", &self.path))?;
            }
            for key in &pending.rewrites {
                let value = &pending.values[key];
                w.start_file(key, entry_options(value.len()))
                    .and_then(|()| std::io::Write::write_all(&mut w, value).map_err(Into::into))
                    .map_err(|e| zip_error(e, "cannot write", &tmp))?;
            }
            w.finish().map_err(|e| zip_error(e, "cannot write", &tmp))?;
            fs::rename(&tmp, &self.path).map_err(|e| zip_error(e, "cannot replace", &self.path))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

#[async_trait]
impl Store for ZipStore {
    fn location(&self, key: &str) -> String {
        format!("zip://{}!/{key}", self.path.display())
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.value(key)
    }

    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        check_key(key)?;
        if let Some(v) = self.pending().values.get(key) {
            return Ok(Box::new(HeldValue(Some(v.clone()))));
        }
        let archive = self.archive();
        match archive.entries.get(key).copied() {
            None => Ok(Box::new(HeldValue(None))),
            Some(e) if e.deflated => Ok(Box::new(HeldValue(Some(archive.read(&e, &self.path)?)))),
            Some(entry) => Ok(Box::new(StoredEntry {
                archive,
                entry,
                path: &self.path,
            })),
        }
    }

    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.set_sync(key, value)
    }

    async fn delete(&self, key: &str) -> Result<()> {
        check_key(key)?;
        if self.archive().entries.contains_key(key) || self.pending().values.contains_key(key) {
            return Err(Error::unsupported(format!(
                "cannot delete '{key}': zip archives cannot remove entries ('{}')",
                self.path.display()
            )));
        }
        Ok(())
    }

    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        check_prefix(prefix)?;
        Ok(self
            .keys()
            .into_iter()
            .filter(|k| k.starts_with(prefix))
            .collect())
    }

    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        Ok(children(prefix, self.list_prefix(prefix).await?))
    }

    fn supports_deletes(&self) -> bool {
        false
    }

    fn flush(&self) -> Result<()> {
        let mut p = self.pending();
        if p.values.is_empty() {
            return Ok(());
        }
        if let Some(w) = p.writer.take() {
            w.finish()
                .map_err(|e| zip_error(e, "cannot finish", &self.path))?;
        }
        if !p.rewrites.is_empty() {
            self.rewrite(&p)?;
        }
        let fresh = read_archive(&self.path)?;
        *fork::lock(&self.archive) = Arc::new(fresh);
        *p = Pending::default();
        Ok(())
    }
}

impl Drop for ZipStore {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// An uncompressed entry of the archive as of a flush, read by positioned reads.
struct StoredEntry<'a> {
    archive: Arc<Archive>,
    entry: Entry,
    path: &'a Path,
}

#[async_trait]
impl OpenValue for StoredEntry<'_> {
    async fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Option<Vec<Bytes>>> {
        ranges
            .iter()
            .map(|r| {
                let (s, e) = r.resolve(self.entry.size)?;
                self.archive
                    .read_raw(self.entry.data_start + s, e - s, self.path)
            })
            .collect::<Result<_>>()
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("zarrox-zip-{name}-{}.zip", std::process::id()))
    }

    #[test]
    fn zip_store_behaves_except_for_deletes() {
        let p = temp("behave");
        let s = ZipStore::open(&p, "w").unwrap();
        block_on(async {
            s.set("a/b", Bytes::from_static(b"hello")).await.unwrap();
            s.set("a/c/d", Bytes::from_static(b"x")).await.unwrap();
            assert_eq!(s.get("a/b").await.unwrap().unwrap(), &b"hello"[..]);
            s.flush().unwrap();
            assert_eq!(s.get("a/b").await.unwrap().unwrap(), &b"hello"[..]);
            // Rewriting a key replaces it.
            s.set("a/b", Bytes::from_static(b"world!")).await.unwrap();
            assert_eq!(s.get("a/b").await.unwrap().unwrap(), &b"world!"[..]);
            s.flush().unwrap();
            let r = s
                .get_ranges("a/b", &[ByteRange::span(1, 2), ByteRange::Suffix(2)])
                .await
                .unwrap()
                .unwrap();
            assert_eq!(
                r,
                vec![Bytes::from_static(b"or"), Bytes::from_static(b"d!")]
            );
            assert!(s.get_ranges("a/b", &[ByteRange::Suffix(9)]).await.is_err());
            assert_eq!(s.list_prefix("a/").await.unwrap(), vec!["a/b", "a/c/d"]);
            assert_eq!(
                s.list_dir("a/").await.unwrap(),
                (vec!["b".to_string()], vec!["c".to_string()])
            );
            assert!(s.delete("a/b").await.is_err());
            s.delete("missing").await.unwrap();
            assert!(s.set("../x", Bytes::new()).await.is_err());
        });
        drop(s);
        // Reopened read-only, the archive has one entry per key.
        let r = ZipStore::open(&p, "r").unwrap();
        assert_eq!(block_on(r.get("a/b")).unwrap().unwrap(), &b"world!"[..]);
        assert!(block_on(r.set("k", Bytes::new())).is_err());
        let names: Vec<String> = ZipArchive::new(File::open(&p).unwrap())
            .unwrap()
            .file_names()
            .map(|n| n.unwrap().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        fs::remove_file(&p).unwrap();
        assert!(ZipStore::open(&p, "r").is_err());
        assert!(ZipStore::open(&p, "q").is_err());
    }

    #[test]
    fn entries_written_by_another_writer_are_read_deflated_or_stored() {
        let p = temp("foreign");
        {
            let mut w = ZipWriter::new(File::create(&p).unwrap());
            w.start_file(
                "s",
                SimpleFileOptions::default().compression_method(CompressionMethod::Stored),
            )
            .unwrap();
            std::io::Write::write_all(&mut w, b"stored bytes").unwrap();
            w.finish().unwrap();
        }
        let s = ZipStore::open(&p, "r").unwrap();
        assert_eq!(block_on(s.get("s")).unwrap().unwrap(), &b"stored bytes"[..]);
        assert_eq!(
            block_on(s.get_ranges("s", &[ByteRange::span(7, 5)]))
                .unwrap()
                .unwrap(),
            vec![Bytes::from_static(b"bytes")]
        );
        fs::remove_file(&p).unwrap();
    }

    /// An archive of one entry whose central directory claims `compressed` (or its
    /// real compressed size) and `size`.
    fn forged(method: CompressionMethod, compressed: Option<u32>, size: u32) -> PathBuf {
        let p = temp("forged");
        let mut w = ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = SimpleFileOptions::default().compression_method(method);
        w.start_file("k", options).unwrap();
        std::io::Write::write_all(&mut w, b"some bytes, some bytes").unwrap();
        let mut raw = w.finish().unwrap().into_inner();
        let at = raw
            .windows(4)
            .position(|w| w == [0x50, 0x4b, 0x01, 0x02])
            .unwrap();
        if let Some(c) = compressed {
            raw[at + 20..at + 24].copy_from_slice(&c.to_le_bytes());
        }
        raw[at + 24..at + 28].copy_from_slice(&size.to_le_bytes());
        fs::write(&p, raw).unwrap();
        p
    }

    #[test]
    fn entries_claiming_impossible_extents_are_corrupt_not_allocated() {
        use crate::error::ErrorKind;
        for (method, compressed, size) in [
            (CompressionMethod::Stored, Some(0x7fff_fff0), 0x7fff_fff0),
            (CompressionMethod::Stored, None, 5),
            (CompressionMethod::Deflated, Some(0xffff_0000), 22),
            (CompressionMethod::Deflated, None, 0xffff_fff0),
        ] {
            let p = forged(method, compressed, size);
            let err = ZipStore::open(&p, "r").unwrap_err();
            assert_eq!(err.kind, ErrorKind::Store, "{}", err.message);
            assert!(
                err.message.starts_with("corrupt zip archive"),
                "{}",
                err.message
            );
            assert!(err.message.contains("entry 'k' claims"), "{}", err.message);
            fs::remove_file(&p).unwrap();
        }
        // The real sizes read back.
        for method in [CompressionMethod::Stored, CompressionMethod::Deflated] {
            let p = forged(method, None, 22);
            let s = ZipStore::open(&p, "r").unwrap();
            let got = block_on(s.get("k")).unwrap().unwrap();
            assert_eq!(got, &b"some bytes, some bytes"[..]);
            fs::remove_file(&p).unwrap();
        }
    }
}
