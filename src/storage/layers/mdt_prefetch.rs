//! The metadata table's properties and files, asked for beside the data table's own when a
//! query is known to follow the open: the metadata table then opens without a round trip
//! of its own. Held answers are handed out until [`MdtOpenPrefetch::end`]; every call after
//! that goes to the store, so a later open (after a write) sees the table as it is then.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{HudiError, Result};
use crate::storage::{
    join, ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta, Purpose, PutMode, Storage,
    StorageExt,
};

/// What the speculative requests answered.
#[derive(Debug)]
struct Held {
    /// `None`: the store has no such object (a table without a metadata table).
    properties: Option<Bytes>,
    /// Every object under the metadata table's directory.
    files: Vec<ObjectMeta>,
}

#[derive(Debug)]
pub struct MdtOpenPrefetch {
    inner: Arc<dyn Storage>,
    dir: String,
    properties: String,
    held: Mutex<Option<Held>>,
}

impl MdtOpenPrefetch {
    /// `dir`: the metadata table's directory in `inner` (`.hoodie/metadata`); `properties`:
    /// its properties file, relative to `dir`.
    pub fn new(inner: Arc<dyn Storage>, dir: &str, properties: &str) -> Self {
        let dir = dir.trim_matches('/').to_string();
        MdtOpenPrefetch {
            properties: join(&dir, properties),
            inner,
            dir,
            held: Mutex::new(None),
        }
    }

    /// Sends the two requests (the properties and one recursive listing) and holds their
    /// answers. A failure holds nothing: the metadata table's open asks again.
    pub async fn fetch(&self) {
        let (properties, files) = futures::join!(
            self.inner.get(&self.properties, Purpose::Properties),
            self.inner.list(&self.dir, true),
        );
        let properties = match properties {
            Ok(bytes) => Some(bytes),
            Err(HudiError::NotFound { .. }) => None,
            Err(_) => return,
        };
        if let Ok(files) = files {
            *self.lock() = Some(Held { properties, files });
        }
    }

    /// Stops answering from what was fetched; whether anything was held.
    pub fn end(&self) -> bool {
        self.lock().take().is_some()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Held>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `list(prefix, recursive)` answered from the held listing, when it covers `prefix`.
    fn held_list(&self, prefix: &str, recursive: bool) -> Option<Vec<ObjectMeta>> {
        let prefix = prefix.trim_matches('/');
        let inside = prefix == self.dir || prefix.starts_with(&format!("{}/", self.dir));
        if !inside {
            return None;
        }
        let held = self.lock();
        let files = held.as_ref()?.files.iter();
        Some(crate::storage::memory::list_keys(
            files.map(|f| (f.path.as_str(), f.clone())),
            prefix,
            recursive,
        ))
    }
}

#[async_trait]
impl Storage for MdtOpenPrefetch {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched> {
        if path == self.properties && matches!(ranges, [ByteRange::Whole]) {
            if let Some(held) = self.lock().as_ref() {
                return match &held.properties {
                    Some(bytes) => Ok(Fetched::one(bytes.clone(), Some(bytes.len() as u64))),
                    None => Err(HudiError::NotFound { path: path.into() }),
                };
            }
        }
        self.inner.read(path, ranges, purpose).await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.inner.head(path).await
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        match self.held_list(prefix, recursive) {
            Some(listed) => Ok(listed),
            None => self.inner.list(prefix, recursive).await,
        }
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        self.inner.list_after(start_after).await
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        self.inner.put(path, data, mode).await
    }

    async fn delete(&self, path: &str) -> Result<()> {
        self.inner.delete(path).await
    }

    async fn delete_empty_dir(&self, dir: &str) -> Result<()> {
        self.inner.delete_empty_dir(dir).await
    }

    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        self.inner.get_versioned(path).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::{Instrumented, StorageExt};
    use futures::executor::block_on;

    const PROPS: &str = ".hoodie/hoodie.properties";

    fn store() -> MemoryStorage {
        let mem = MemoryStorage::new();
        for path in [
            ".hoodie/metadata/.hoodie/hoodie.properties",
            ".hoodie/metadata/.hoodie/timeline/1.deltacommit",
            ".hoodie/metadata/files/a.hfile",
            ".hoodie/metadata/files/.a.log.1",
            ".hoodie/hoodie.properties",
        ] {
            mem.insert(path, &b"x"[..], None);
        }
        mem
    }

    #[test]
    fn held_answers_match_the_store_and_cost_nothing_until_ended() {
        let mem = Arc::new(store());
        let counted = Instrumented::new(mem.clone());
        let stats = counted.stats();
        let p = MdtOpenPrefetch::new(Arc::new(counted), ".hoodie/metadata", PROPS);
        block_on(async {
            p.fetch().await;
            assert_eq!(stats.snapshot().requests, 2);
            for (prefix, recursive) in [
                (".hoodie/metadata/files", false),
                (".hoodie/metadata/.hoodie", false),
                (".hoodie/metadata/.hoodie/timeline", false),
                (".hoodie/metadata", true),
                (".hoodie/metadata/nothing", false),
            ] {
                let mut held = p.list(prefix, recursive).await.unwrap();
                let mut stored = mem.list(prefix, recursive).await.unwrap();
                held.sort_by(|a, b| a.path.cmp(&b.path));
                stored.sort_by(|a, b| a.path.cmp(&b.path));
                let paths = |v: &[ObjectMeta]| -> Vec<(String, bool)> {
                    v.iter().map(|m| (m.path.clone(), m.is_dir)).collect()
                };
                assert_eq!(paths(&held), paths(&stored), "{prefix}");
            }
            let props = ".hoodie/metadata/.hoodie/hoodie.properties";
            assert_eq!(p.get(props, Purpose::Properties).await.unwrap(), &b"x"[..]);
            assert_eq!(stats.snapshot().requests, 2, "answered from what was held");
            // Outside the metadata table, and after the end, the store answers.
            p.list(".hoodie", false).await.unwrap();
            assert!(p.end());
            p.list(".hoodie/metadata/files", false).await.unwrap();
            p.get(props, Purpose::Properties).await.unwrap();
            assert_eq!(stats.snapshot().requests, 5);
            assert!(!p.end());
        });
    }

    #[test]
    fn a_table_without_a_metadata_table_is_told_so_without_a_request() {
        let mem = MemoryStorage::new();
        mem.insert(".hoodie/hoodie.properties", &b"x"[..], None);
        let counted = Instrumented::new(Arc::new(mem));
        let stats = counted.stats();
        let p = MdtOpenPrefetch::new(Arc::new(counted), ".hoodie/metadata/", PROPS);
        block_on(async {
            p.fetch().await;
            let props = ".hoodie/metadata/.hoodie/hoodie.properties";
            let err = p.get(props, Purpose::Properties).await.unwrap_err();
            assert!(matches!(err, HudiError::NotFound { .. }), "{err}");
            assert!(p
                .list(".hoodie/metadata/files", false)
                .await
                .unwrap()
                .is_empty());
        });
        assert_eq!(stats.snapshot().requests, 2);
    }
}
