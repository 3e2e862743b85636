//! An in-memory store.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use super::{check_key, HeldValue, OpenValue, Store};
use crate::error::{Error, Result};

#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RwLock<BTreeMap<String, Arc<Vec<u8>>>>,
}

fn poisoned() -> Error {
    Error::store("memory store lock poisoned")
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Store for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        check_key(key)?;
        let map = self.map.read().map_err(|_| poisoned())?;
        Ok(map.get(key).map(|v| v.as_ref().clone()))
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn OpenValue + '_>>> {
        check_key(key)?;
        let map = self.map.read().map_err(|_| poisoned())?;
        Ok(map
            .get(key)
            .map(|v| Box::new(HeldValue(Arc::clone(v))) as Box<dyn OpenValue>))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        check_key(key)?;
        let mut map = self.map.write().map_err(|_| poisoned())?;
        map.insert(key.to_string(), Arc::new(value.to_vec()));
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<()> {
        check_key(key)?;
        self.map.write().map_err(|_| poisoned())?.remove(key);
        Ok(())
    }

    fn list_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        let map = self.map.read().map_err(|_| poisoned())?;
        Ok(map
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, _)| k.clone())
            .collect())
    }

    fn list_dir(&self, prefix: &str) -> Result<(Vec<String>, Vec<String>)> {
        let mut keys = Vec::new();
        let mut dirs: Vec<String> = Vec::new();
        for key in self.list_prefix(prefix)? {
            let rest = &key[prefix.len()..];
            match rest.split_once('/') {
                None => keys.push(rest.to_string()),
                Some((dir, _)) => {
                    if dirs.last().map(String::as_str) != Some(dir) {
                        dirs.push(dir.to_string());
                    }
                }
            }
        }
        dirs.dedup();
        Ok((keys, dirs))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_store_behaves() {
        super::super::tests::exercise(&super::MemoryStore::new());
    }
}
