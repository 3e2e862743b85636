//! An in-memory store. Values are shared, immutable buffers: a read hands out
//! the stored buffer itself (no copy), and a value opened for range reads is
//! one version by construction.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

use async_trait::async_trait;
use bytes::Bytes;

use super::{
    check_key, check_prefix, children, Generation, HeldValue, OpenValue, ReadInto, Store, Versioned,
};
use crate::error::{Error, Result};
use crate::fork::Section;

/// Each value with the number of the write that stored it (its generation).
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RwLock<BTreeMap<String, (Bytes, u64)>>,
    /// The bytes of the values in `map` (changed under its write lock).
    bytes: AtomicU64,
}

/// Numbers writes across every memory store, so that a value written again
/// never gets an earlier value's generation back.
static WRITES: AtomicU64 = AtomicU64::new(1);

fn generation_of(entry: Option<&(Bytes, u64)>) -> Generation {
    match entry {
        Some((_, n)) => Generation::Tag(n.to_string()),
        None => Generation::Absent,
    }
}

fn poisoned() -> Error {
    Error::store("memory store lock poisoned")
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn value(&self, key: &str) -> Result<Option<Bytes>> {
        check_key(key)?;
        let _section = Section::enter();
        let map = self.map.read().map_err(|_| poisoned())?;
        Ok(map.get(key).map(|(v, _)| v.clone()))
    }

    /// Every key and value, in key order (pickling a memory store copies it).
    pub fn items(&self) -> Result<Vec<(String, Bytes)>> {
        let _section = Section::enter();
        let map = self.map.read().map_err(|_| poisoned())?;
        Ok(map
            .iter()
            .map(|(k, (v, _))| (k.clone(), v.clone()))
            .collect())
    }
}

#[async_trait]
impl Store for MemoryStore {
    fn location(&self, key: &str) -> String {
        format!("memory://{key}")
    }

    async fn get(&self, key: &str) -> Result<Option<Bytes>> {
        self.value(key)
    }

    fn open<'a>(&'a self, key: &str) -> Result<Box<dyn OpenValue + 'a>> {
        Ok(Box::new(HeldValue(self.value(key)?)))
    }

    fn read_into(&self, key: &str, out: &mut [u8]) -> Result<ReadInto> {
        Ok(match self.value(key)? {
            None => ReadInto::Missing,
            Some(v) if v.len() == out.len() => {
                out.copy_from_slice(&v);
                ReadInto::Read
            }
            Some(_) => ReadInto::NotRead,
        })
    }

    async fn set(&self, key: &str, value: Bytes) -> Result<()> {
        self.set_if(key, value, &Generation::Unknown)
            .await
            .map(|_| ())
    }

    async fn delete(&self, key: &str) -> Result<()> {
        self.delete_if(key, &Generation::Unknown).await.map(|_| ())
    }

    async fn conditional_writes(&self) -> Result<bool> {
        Ok(true)
    }

    fn bytes_in_memory(&self) -> Option<u64> {
        Some(self.bytes.load(Ordering::Relaxed))
    }

    fn conditional_deletes(&self) -> bool {
        true
    }

    async fn get_versioned(&self, key: &str) -> Result<Versioned> {
        check_key(key)?;
        let _section = Section::enter();
        let map = self.map.read().map_err(|_| poisoned())?;
        let entry = map.get(key);
        Ok(Versioned {
            value: entry.map(|(v, _)| v.clone()),
            generation: generation_of(entry),
        })
    }

    async fn set_if(
        &self,
        key: &str,
        value: Bytes,
        expected: &Generation,
    ) -> Result<Option<Generation>> {
        check_key(key)?;
        let _section = Section::enter();
        let mut map = self.map.write().map_err(|_| poisoned())?;
        if *expected != Generation::Unknown && generation_of(map.get(key)) != *expected {
            return Ok(None);
        }
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let added = value.len() as u64;
        if let Some((old, _)) = map.insert(key.to_string(), (value, n)) {
            self.bytes.fetch_sub(old.len() as u64, Ordering::Relaxed);
        }
        self.bytes.fetch_add(added, Ordering::Relaxed);
        Ok(Some(generation_of(map.get(key))))
    }

    async fn generation(&self, key: &str) -> Result<Generation> {
        check_key(key)?;
        let _section = Section::enter();
        let map = self.map.read().map_err(|_| poisoned())?;
        Ok(generation_of(map.get(key)))
    }

    async fn delete_if(&self, key: &str, expected: &Generation) -> Result<bool> {
        check_key(key)?;
        let _section = Section::enter();
        let mut map = self.map.write().map_err(|_| poisoned())?;
        if *expected != Generation::Unknown && generation_of(map.get(key)) != *expected {
            return Ok(false);
        }
        if let Some((old, _)) = map.remove(key) {
            self.bytes.fetch_sub(old.len() as u64, Ordering::Relaxed);
        }
        Ok(true)
    }

    async fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        check_prefix(prefix)?;
        let _section = Section::enter();
        let map = self.map.read().map_err(|_| poisoned())?;
        Ok(map
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect())
    }

    async fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        Ok(children(prefix, self.list_prefix(prefix).await?))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_store_behaves() {
        let s = super::MemoryStore::new();
        super::super::tests::exercise(&s);
        super::super::tests::exercise_read_into(&s);
        super::super::tests::exercise_conditional(&s);
    }

    #[test]
    fn bytes_in_memory_follow_writes_overwrites_and_deletes() {
        use super::super::{Generation, Store};
        use bytes::Bytes;
        let s = super::MemoryStore::new();
        assert_eq!(s.bytes_in_memory(), Some(0));
        crate::store::now(s.set("a", Bytes::from_static(b"12345")))
            .unwrap()
            .unwrap();
        crate::store::now(s.set("b", Bytes::from_static(b"123")))
            .unwrap()
            .unwrap();
        assert_eq!(s.bytes_in_memory(), Some(8));
        crate::store::now(s.set("a", Bytes::from_static(b"1")))
            .unwrap()
            .unwrap();
        assert_eq!(s.bytes_in_memory(), Some(4));
        // a conditional write that fails changes nothing
        let stale = Generation::Tag("0".into());
        let failed = crate::store::now(s.set_if("b", Bytes::from_static(b"1234567"), &stale));
        assert_eq!(failed.unwrap().unwrap(), None);
        assert_eq!(s.bytes_in_memory(), Some(4));
        crate::store::now(s.delete("b")).unwrap().unwrap();
        crate::store::now(s.delete("missing")).unwrap().unwrap();
        assert_eq!(s.bytes_in_memory(), Some(1));
    }
}
