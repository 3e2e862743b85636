//! Kerchunk's Parquet references, loaded record by record: a directory of
//! `.zmetadata` (the Zarr metadata, and `record_size`) and, per variable,
//! files `<var>/refs.<i>.parq` whose rows are the references of the chunks
//! `i * record_size ..` of that variable, numbered in C order over its chunk
//! grid (as fsspec's `LazyReferenceMapper` writes and reads them).
//!
//! A record file is fetched from the directory's store the first time one of
//! its chunks is read (or listed), decoded by a [`RecordDecoder`] (pyarrow,
//! in the Python build: no Parquet reader is compiled in), and kept: opening
//! a virtual dataset of millions of chunks reads none of them, and reading a
//! part of it reads only the records of that part.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::OnceCell;

use super::Reference;
use crate::error::{Error, Result};
use crate::fork;
use crate::store::Store;

/// Turns a record file's bytes into its rows' references.
pub trait RecordDecoder: Send + Sync {
    /// The first `rows` references of the record file `name` (`None`: a
    /// missing chunk, read as the fill value).
    fn decode(&self, name: &str, data: Bytes, rows: usize) -> Result<Vec<Option<Reference>>>;
}

/// The references of one record file.
type Record = Arc<Vec<Option<Reference>>>;

/// A record being loaded or loaded, by the process that began it (a child
/// forked mid-load starts it anew: the parent's load does not run there).
struct Slot {
    pid: u32,
    cell: Arc<OnceCell<Record>>,
}

/// The chunk references of the variables of a Parquet references directory.
pub struct Records {
    /// The directory's store (record files are `<field>/refs.<i>.parq`).
    store: Arc<dyn Store>,
    record_size: u64,
    /// Each variable's chunk grid (a scalar's: `[1]`).
    fields: BTreeMap<String, Vec<u64>>,
    decoder: Arc<dyn RecordDecoder>,
    loaded: Mutex<HashMap<(String, u64), Slot>>,
}

impl Records {
    pub fn new(
        store: Arc<dyn Store>,
        record_size: u64,
        fields: BTreeMap<String, Vec<u64>>,
        decoder: Arc<dyn RecordDecoder>,
    ) -> Result<Self> {
        if record_size == 0 {
            return Err(Error::value(
                "Parquet references: 'record_size' must be positive",
            ));
        }
        for (field, grid) in &fields {
            if grid.is_empty() || chunks_of(grid).is_none() {
                return Err(Error::value(format!(
                    "Parquet references: invalid chunk grid {grid:?} of '{field}'"
                )));
            }
        }
        Ok(Records {
            store,
            record_size,
            fields,
            decoder,
            loaded: Mutex::new(HashMap::new()),
        })
    }

    /// The variable, record and row of a chunk key (`<field>/i.j.k`); `None`
    /// when `key` is not a chunk of a variable.
    fn locate<'k>(&self, key: &'k str) -> Option<(&'k str, u64, usize)> {
        let (field, chunk) = key.rsplit_once('/')?;
        let grid = self.fields.get(field)?;
        let mut index = 0u64;
        let mut parts = chunk.split('.');
        for &n in grid {
            let i: u64 = parts.next()?.parse().ok()?;
            if i >= n {
                return None;
            }
            index = index * n + i;
        }
        if parts.next().is_some() {
            return None;
        }
        let row = (index % self.record_size) as usize;
        Some((field, index / self.record_size, row))
    }

    /// The rows record `record` of `field` has.
    fn rows(&self, field: &str, record: u64) -> usize {
        let total = self
            .fields
            .get(field)
            .and_then(|g| chunks_of(g))
            .unwrap_or(0);
        total
            .saturating_sub(record * self.record_size)
            .min(self.record_size) as usize
    }

    /// Record `record` of `field`, loaded once (concurrent readers wait for
    /// the first).
    async fn record(&self, field: &str, record: u64) -> Result<Record> {
        let cell = {
            let mut loaded = fork::lock(&self.loaded);
            let pid = std::process::id();
            let slot = loaded
                .entry((field.to_string(), record))
                .or_insert_with(|| Slot {
                    pid,
                    cell: Arc::new(OnceCell::new()),
                });
            if slot.pid != pid && !slot.cell.initialized() {
                *slot = Slot {
                    pid,
                    cell: Arc::new(OnceCell::new()),
                };
            }
            Arc::clone(&slot.cell)
        };
        cell.get_or_try_init(|| self.load(field, record))
            .await
            .cloned()
    }

    async fn load(&self, field: &str, record: u64) -> Result<Record> {
        let name = format!("{field}/refs.{record}.parq");
        let rows = self.rows(field, record);
        let Some(data) = self.store.get(&name).await? else {
            // as fsspec: an absent record's chunks are missing
            return Ok(Arc::new(vec![None; rows]));
        };
        let decoder = Arc::clone(&self.decoder);
        let location = self.store.location(&name);
        let named = location.clone();
        let decode = move || decoder.decode(&named, data, rows);
        // The decoder may take a while (and, in Python, the interpreter's
        // lock): off the I/O runtime's threads when on one.
        let got = match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle
                .spawn_blocking(decode)
                .await
                .map_err(|e| Error::store(format!("decoding '{name}' failed: {e}")))??,
            Err(_) => decode()?,
        };
        if got.len() < rows {
            return Err(Error::value(format!(
                "{location}: {} rows, record {record} of '{field}' needs {rows}",
                got.len()
            )));
        }
        Ok(Arc::new(got))
    }

    /// Whether `key` is a chunk key of a variable of these records.
    pub fn covers(&self, key: &str) -> bool {
        self.locate(key).is_some()
    }

    /// What a chunk key resolves to (`None`: missing, or not a chunk key).
    pub async fn resolve(&self, key: &str) -> Result<Option<Reference>> {
        let Some((field, record, row)) = self.locate(key) else {
            return Ok(None);
        };
        Ok(self
            .record(field, record)
            .await?
            .get(row)
            .cloned()
            .flatten())
    }

    /// What a chunk key resolves to, if its record is loaded already.
    pub fn peek(&self, key: &str) -> Option<Reference> {
        let (field, record, row) = self.locate(key)?;
        let loaded = fork::lock(&self.loaded);
        let slot = loaded.get(&(field.to_string(), record))?;
        slot.cell.get()?.get(row).cloned().flatten()
    }

    /// The chunk keys under `prefix` that have references (their records
    /// loaded, all of them at once), sorted.
    pub async fn keys(&self, prefix: &str) -> Result<Vec<String>> {
        let mut wanted = Vec::new();
        for (field, grid) in &self.fields {
            let dir = format!("{field}/");
            if !(dir.starts_with(prefix) || prefix.starts_with(&dir)) {
                continue;
            }
            let total = chunks_of(grid).unwrap_or(0);
            for record in 0..total.div_ceil(self.record_size) {
                wanted.push((field.as_str(), grid, record));
            }
        }
        let records = futures::future::try_join_all(
            wanted
                .iter()
                .map(|&(field, _, record)| self.record(field, record)),
        )
        .await?;
        let mut keys = Vec::new();
        for ((field, grid, record), rows) in wanted.into_iter().zip(records) {
            for (row, r) in rows.iter().enumerate() {
                if r.is_none() {
                    continue;
                }
                let key = format!(
                    "{field}/{}",
                    chunk_key(grid, record * self.record_size + row as u64)
                );
                if key.starts_with(prefix) {
                    keys.push(key);
                }
            }
        }
        keys.sort();
        Ok(keys)
    }
}

/// The number of chunks of a grid (`None` on overflow).
fn chunks_of(grid: &[u64]) -> Option<u64> {
    grid.iter().try_fold(1u64, |n, &g| n.checked_mul(g))
}

/// `i.j.k` of the chunk numbered `index` in C order over `grid`.
fn chunk_key(grid: &[u64], mut index: u64) -> String {
    let mut parts = vec![0u64; grid.len()];
    for (part, &n) in parts.iter_mut().zip(grid).rev() {
        *part = index % n;
        index /= n;
    }
    parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Record files of text: one line per row, `-` a missing chunk.
    struct Lines(AtomicUsize);

    impl RecordDecoder for Lines {
        fn decode(&self, name: &str, data: Bytes, rows: usize) -> Result<Vec<Option<Reference>>> {
            self.0.fetch_add(1, Ordering::Relaxed);
            let text = std::str::from_utf8(&data).map_err(|_| Error::value(name.to_string()))?;
            Ok(text
                .lines()
                .take(rows)
                .map(|l| (l != "-").then(|| Reference::Inline(Bytes::from(l.to_string()))))
                .collect())
        }
    }

    fn records(files: &[(&str, &str)]) -> (Records, Arc<Lines>) {
        let store = Arc::new(MemoryStore::default());
        for (name, text) in files {
            futures::executor::block_on(store.set(name, Bytes::from(text.to_string()))).unwrap();
        }
        let decoder = Arc::new(Lines(AtomicUsize::new(0)));
        let fields = BTreeMap::from([("v".to_string(), vec![2, 3]), ("s".to_string(), vec![1])]);
        let r = Records::new(store, 4, fields, decoder.clone()).unwrap();
        (r, decoder)
    }

    #[test]
    fn chunks_resolve_record_by_record() {
        let (r, decoder) = records(&[
            ("v/refs.0.parq", "a\n-\nc\nd\n"),
            ("v/refs.1.parq", "e\nf\n"),
            ("s/refs.0.parq", "scalar\n"),
        ]);
        let text = |x: Option<Reference>| match x {
            Some(Reference::Inline(b)) => Some(String::from_utf8(b.to_vec()).unwrap()),
            None => None,
            other => panic!("{other:?}"),
        };
        futures::executor::block_on(async {
            assert_eq!(
                text(r.resolve("v/0.0").await.unwrap()).as_deref(),
                Some("a")
            );
            assert_eq!(text(r.resolve("v/0.1").await.unwrap()), None);
            assert_eq!(
                text(r.resolve("v/1.0").await.unwrap()).as_deref(),
                Some("d")
            );
            assert_eq!(decoder.0.load(Ordering::Relaxed), 1, "one record loaded");
            assert_eq!(text(r.peek("v/0.2")).as_deref(), Some("c"));
            assert_eq!(r.peek("v/1.2"), None, "record 1 not loaded yet");
            assert_eq!(
                text(r.resolve("v/1.2").await.unwrap()).as_deref(),
                Some("f")
            );
            assert_eq!(
                text(r.resolve("s/0").await.unwrap()).as_deref(),
                Some("scalar")
            );
            for not_a_chunk in ["v/2.0", "v/0", "v/0.0.0", "v/x.0", "w/0.0", ".zmetadata"] {
                assert!(!r.covers(not_a_chunk), "{not_a_chunk}");
                assert_eq!(r.resolve(not_a_chunk).await.unwrap(), None);
            }
            assert_eq!(decoder.0.load(Ordering::Relaxed), 3);
            assert_eq!(
                r.keys("v/").await.unwrap(),
                vec!["v/0.0", "v/0.2", "v/1.0", "v/1.1", "v/1.2"]
            );
            assert_eq!(r.keys("").await.unwrap().len(), 6);
            assert_eq!(decoder.0.load(Ordering::Relaxed), 3, "records are kept");
        });
    }

    #[test]
    fn absent_and_short_records() {
        let (r, _) = records(&[("v/refs.0.parq", "a\nb\n")]);
        futures::executor::block_on(async {
            // record 0 has 2 rows of the 4 it needs: an error naming the file
            let e = r.resolve("v/0.0").await.unwrap_err().to_string();
            assert!(e.contains("v/refs.0.parq") && e.contains("needs 4"), "{e}");
            // record 1 is absent: its chunks are missing
            assert_eq!(r.resolve("v/1.1").await.unwrap(), None);
        });
        let store: Arc<dyn Store> = Arc::new(MemoryStore::default());
        let decoder = Arc::new(Lines(AtomicUsize::new(0)));
        let grid = BTreeMap::from([("v".to_string(), vec![u64::MAX, 4])]);
        assert!(Records::new(store.clone(), 1, grid, decoder.clone()).is_err());
        assert!(Records::new(store, 0, BTreeMap::new(), decoder).is_err());
    }

    #[test]
    fn chunk_keys_in_c_order() {
        assert_eq!(chunk_key(&[2, 3], 4), "1.1");
        assert_eq!(chunk_key(&[1], 0), "0");
        assert_eq!(chunk_key(&[2, 3, 5], 29), "1.2.4");
    }
}
