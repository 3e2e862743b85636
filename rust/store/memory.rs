//! An in-memory store. Values are shared, immutable buffers: a read hands out
//! the stored buffer itself (no copy), and a value opened for range reads is
//! one version by construction.

use std::collections::BTreeMap;
use std::sync::RwLock;

use async_trait::async_trait;
use bytes::Bytes;

use super::{check_key, check_prefix, children, HeldValue, OpenValue, ReadInto, Store};
use crate::error::{Error, Result};
use crate::fork::Section;

#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RwLock<BTreeMap<String, Bytes>>,
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
        Ok(map.get(key).cloned())
    }

    /// Every key and value, in key order (pickling a memory store copies it).
    pub fn items(&self) -> Result<Vec<(String, Bytes)>> {
        let _section = Section::enter();
        let map = self.map.read().map_err(|_| poisoned())?;
        Ok(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
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
        check_key(key)?;
        let _section = Section::enter();
        let mut map = self.map.write().map_err(|_| poisoned())?;
        map.insert(key.to_string(), value);
        Ok(())
    }

    async fn delete(&self, key: &str) -> Result<()> {
        check_key(key)?;
        let _section = Section::enter();
        self.map.write().map_err(|_| poisoned())?.remove(key);
        Ok(())
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
    }
}
