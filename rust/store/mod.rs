//! Key-value stores: the [`Store`] trait, a local directory and memory.

pub mod filesystem;
pub mod memory;

use std::fmt::Debug;
use std::sync::Arc;

use crate::error::{Error, Result};

pub use filesystem::FilesystemStore;
pub use memory::MemoryStore;

/// A byte range of a stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteRange {
    /// `length` bytes from `offset` (to the end when `None`).
    FromStart { offset: u64, length: Option<u64> },
    /// The last `n` bytes.
    Suffix(u64),
}

impl ByteRange {
    /// The `[start, end)` this range covers in a value of `size` bytes, or an
    /// error if it reaches past the end.
    pub fn resolve(&self, size: u64) -> Result<(u64, u64)> {
        let (start, end) = match *self {
            ByteRange::FromStart { offset, length } => {
                (offset, length.map_or(size, |l| offset.saturating_add(l)))
            }
            ByteRange::Suffix(n) => (size.checked_sub(n).ok_or_else(|| too_far(size))?, size),
        };
        if start > end || end > size {
            return Err(too_far(size));
        }
        Ok((start, end))
    }
}

fn too_far(size: u64) -> Error {
    Error::corrupt(format!(
        "byte range reaches past the end of a {size}-byte value"
    ))
}

/// What [`Store::read_into`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadInto {
    /// No value under the key.
    Missing,
    /// The value was read into the buffer.
    Read,
    /// The value has another size than the buffer; nothing was read.
    OtherSize,
}

/// `ranges` of `value`, each copied out; an error if one reaches past its end.
pub fn slice_ranges(value: &[u8], ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
    ranges
        .iter()
        .map(|r| {
            let (s, e) = r.resolve(value.len() as u64)?;
            Ok(value[s as usize..e as usize].to_vec())
        })
        .collect()
}

/// One version of a stored value, opened for several range reads: each read
/// sees that version, even when the key is rewritten in between (a shard's
/// index and its inner chunks must come from the same shard).
pub trait OpenValue: Send + Sync {
    /// Parts of the value; an error if a range reaches past its end.
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>>;
}

/// A value held in memory, as [`Store::open`] gives by default.
pub struct HeldValue(pub Arc<Vec<u8>>);

impl OpenValue for HeldValue {
    fn read_ranges(&self, ranges: &[ByteRange]) -> Result<Vec<Vec<u8>>> {
        slice_ranges(&self.0, ranges)
    }
}

/// A store of byte values under `/`-separated keys.
pub trait Store: Send + Sync + Debug {
    /// The value under `key`, or `None` if there is none.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// The value under `key` opened for range reads that all see one version
    /// of it, or `None` if there is none. By default the whole value, fetched once.
    fn open(&self, key: &str) -> Result<Option<Box<dyn OpenValue + '_>>> {
        Ok(self
            .get(key)?
            .map(|v| Box::new(HeldValue(Arc::new(v))) as Box<dyn OpenValue>))
    }
    /// Parts of the value under `key`, or `None` if there is none.
    fn get_ranges(&self, key: &str, ranges: &[ByteRange]) -> Result<Option<Vec<Vec<u8>>>> {
        self.open(key)?.map(|v| v.read_ranges(ranges)).transpose()
    }
    /// Read the value under `key` straight into `out` when it is exactly
    /// `out.len()` bytes long.
    fn read_into(&self, key: &str, out: &mut [u8]) -> Result<ReadInto> {
        match self.get(key)? {
            None => Ok(ReadInto::Missing),
            Some(v) if v.len() == out.len() => {
                out.copy_from_slice(&v);
                Ok(ReadInto::Read)
            }
            Some(_) => Ok(ReadInto::OtherSize),
        }
    }
    /// Store `value` under `key`, atomically: a reader sees the old or the new value.
    fn set(&self, key: &str, value: &[u8]) -> Result<()>;
    /// Remove `key`; removing a missing key is not an error.
    fn delete(&self, key: &str) -> Result<()>;
    /// Every key that starts with `prefix`, sorted.
    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>>;
    /// The immediate children of the directory `prefix` (`""` or ending in `/`):
    /// (names of keys, names of sub-directories), each sorted.
    fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)>;
    /// Remove every key under `prefix`.
    fn delete_prefix(&self, prefix: &str) -> Result<()> {
        for key in self.list_prefix(prefix)? {
            self.delete(&key)?;
        }
        Ok(())
    }
    /// Whether `key` holds a value.
    fn exists(&self, key: &str) -> Result<bool> {
        Ok(self.get(key)?.is_some())
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The behaviour every store must have.
    pub fn exercise(store: &dyn Store) {
        assert_eq!(store.get("a/b").unwrap(), None);
        store.set("a/b", b"hello").unwrap();
        store.set("a/c/d", b"x").unwrap();
        store.set("zarr.json", b"{}").unwrap();
        assert_eq!(store.get("a/b").unwrap().unwrap(), b"hello");
        store.set("a/b", b"world!").unwrap();
        assert_eq!(store.get("a/b").unwrap().unwrap(), b"world!");
        let r = store
            .get_ranges(
                "a/b",
                &[
                    ByteRange::FromStart {
                        offset: 1,
                        length: Some(2),
                    },
                    ByteRange::Suffix(2),
                    ByteRange::FromStart {
                        offset: 4,
                        length: None,
                    },
                ],
            )
            .unwrap()
            .unwrap();
        assert_eq!(r, vec![b"or".to_vec(), b"d!".to_vec(), b"d!".to_vec()]);
        assert!(store.get_ranges("a/b", &[ByteRange::Suffix(7)]).is_err());
        assert!(store
            .get_ranges(
                "a/b",
                &[ByteRange::FromStart {
                    offset: 3,
                    length: Some(9)
                }]
            )
            .is_err());
        assert_eq!(
            store.get_ranges("nope", &[ByteRange::Suffix(1)]).unwrap(),
            None
        );
        assert!(store.open("nope").unwrap().is_none());
        // An opened value keeps reading the version it opened, in any order,
        // while the key is rewritten.
        let opened = store.open("a/b").unwrap().unwrap();
        store.set("a/b", b"WORLD?").unwrap();
        let suffix = opened.read_ranges(&[ByteRange::Suffix(3)]).unwrap();
        let from_start = ByteRange::FromStart {
            offset: 0,
            length: Some(3),
        };
        let start = opened.read_ranges(&[from_start, from_start]).unwrap();
        assert_eq!(suffix, vec![b"ld!".to_vec()]);
        assert_eq!(start, vec![b"wor".to_vec(), b"wor".to_vec()]);
        assert!(opened.read_ranges(&[ByteRange::Suffix(7)]).is_err());
        drop(opened);
        assert_eq!(store.get("a/b").unwrap().unwrap(), b"WORLD?");
        store.set("a/b", b"world!").unwrap();
        assert_eq!(store.list_prefix("a/").unwrap(), vec!["a/b", "a/c/d"]);
        assert_eq!(
            store.list_dir("").unwrap(),
            (vec!["zarr.json".to_string()], vec!["a".to_string()])
        );
        assert_eq!(
            store.list_dir("a/").unwrap(),
            (vec!["b".to_string()], vec!["c".to_string()])
        );
        assert!(store.exists("a/c/d").unwrap());
        let mut buf = [0u8; 6];
        assert_eq!(store.read_into("a/b", &mut buf).unwrap(), ReadInto::Read);
        assert_eq!(&buf, b"world!");
        assert_eq!(
            store.read_into("a/b", &mut [0u8; 5]).unwrap(),
            ReadInto::OtherSize
        );
        assert_eq!(
            store.read_into("a/zz", &mut buf).unwrap(),
            ReadInto::Missing
        );
        store.delete("a/b").unwrap();
        store.delete("a/b").unwrap();
        assert_eq!(store.get("a/b").unwrap(), None);
        store.delete_prefix("a/").unwrap();
        assert!(store.list_prefix("a/").unwrap().is_empty());
        assert!(store.set("../x", b"").is_err());
        assert!(store.set("/x", b"").is_err());
        assert!(store.get("a//b").is_err());
    }
}
