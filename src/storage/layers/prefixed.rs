//! A directory of another storage seen as a root: the metadata table is a Hudi table under
//! `<table>/.hoodie/metadata`. Requests go through the parent storage, so a parent wrapped in
//! [`crate::storage::Instrumented`] counts them; errors name the path from the parent's root.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::Result;
use crate::storage::{
    join, ByteRange, Capabilities, Fetched, ObjectMeta, Purpose, PutMode, Storage,
};

#[derive(Debug, Clone)]
pub struct Prefixed {
    inner: Arc<dyn Storage>,
    prefix: String,
}

impl Prefixed {
    /// `prefix` is a directory of `inner`, e.g. `.hoodie/metadata`.
    pub fn new(inner: Arc<dyn Storage>, prefix: &str) -> Self {
        Prefixed {
            inner,
            prefix: prefix.trim_matches('/').to_string(),
        }
    }

    fn full(&self, path: &str) -> String {
        join(&self.prefix, path)
    }

    /// A listed path relative to this root again.
    fn strip(&self, mut meta: ObjectMeta) -> ObjectMeta {
        let rest = meta.path.strip_prefix(&self.prefix);
        if let Some(rest) = rest.and_then(|r| r.strip_prefix('/')) {
            meta.path = rest.to_string();
        }
        meta
    }
}

#[async_trait]
impl Storage for Prefixed {
    fn location(&self) -> String {
        format!(
            "{}/{}",
            self.inner.location().trim_end_matches('/'),
            self.prefix
        )
    }

    fn capabilities(&self) -> Capabilities {
        // A held listing has the parent's paths; `list` answers through the parent instead.
        Capabilities {
            listing: None,
            lists_after: false,
            ..self.inner.capabilities()
        }
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched> {
        self.inner.read(&self.full(path), ranges, purpose).await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        Ok(self.strip(self.inner.head(&self.full(path)).await?))
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        let listed = self.inner.list(&self.full(prefix), recursive).await?;
        Ok(listed.into_iter().map(|m| self.strip(m)).collect())
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        Ok(self.strip(self.inner.put(&self.full(path), data, mode).await?))
    }

    async fn delete(&self, path: &str) -> Result<()> {
        self.inner.delete(&self.full(path)).await
    }

    async fn delete_empty_dir(&self, dir: &str) -> Result<()> {
        self.inner.delete_empty_dir(&self.full(dir)).await
    }

    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        let (bytes, meta) = self.inner.get_versioned(&self.full(path)).await?;
        Ok((bytes, self.strip(meta)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::{Instrumented, StorageExt};
    use futures::executor::block_on;

    #[test]
    fn maps_paths_and_shares_counters() {
        let mem = MemoryStorage::new();
        mem.insert(".hoodie/metadata/files/a.hfile", &b"abc"[..], None);
        mem.insert(".hoodie/hoodie.properties", &b"x"[..], None);
        let parent = Instrumented::new(Arc::new(mem));
        let stats = parent.stats();
        let sub = Prefixed::new(Arc::new(parent), ".hoodie/metadata/");
        block_on(async {
            assert_eq!(
                sub.get("files/a.hfile", Purpose::Other).await.unwrap(),
                &b"abc"[..]
            );
            let listed = sub.list("files", false).await.unwrap();
            assert_eq!(listed.len(), 1);
            assert_eq!(listed[0].path, "files/a.hfile");
            assert_eq!(
                sub.head("files/a.hfile").await.unwrap().path,
                "files/a.hfile"
            );
            let err = sub.get("nope", Purpose::Other).await.unwrap_err();
            assert_eq!(err.object(), Some(".hoodie/metadata/nope"));
        });
        assert_eq!(stats.snapshot().requests, 4);
        assert!(sub.location().ends_with("/.hoodie/metadata"));
    }
}
