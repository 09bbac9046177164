//! Adds a fixed delay to every request, so that a local benchmark shows what request counts
//! cost against a remote object store (`hudi-edge --latency-ms 20 …`). Native only.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::Result;
use crate::storage::{
    needs_size, read_with_size, ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta, Purpose,
    PutMode, Storage,
};

#[derive(Debug, Clone)]
pub struct Latency {
    inner: Arc<dyn Storage>,
    delay: Duration,
}

impl Latency {
    pub fn new(inner: Arc<dyn Storage>, delay: Duration) -> Self {
        Latency { inner, delay }
    }

    async fn wait(&self) {
        tokio::time::sleep(self.delay).await;
    }
}

#[async_trait]
impl Storage for Latency {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched> {
        if needs_size(&*self.inner, ranges) {
            // Two dependent requests, two delays.
            return read_with_size(self, path, ranges, purpose, self.head(path)).await;
        }
        // The ranges travel concurrently: one delay.
        self.wait().await;
        self.inner.read(path, ranges, purpose).await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.wait().await;
        self.inner.head(path).await
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        self.wait().await;
        self.inner.list(prefix, recursive).await
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        self.wait().await;
        self.inner.list_after(start_after).await
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        self.wait().await;
        self.inner.put(path, data, mode).await
    }

    async fn delete(&self, path: &str) -> Result<()> {
        self.wait().await;
        self.inner.delete(path).await
    }

    async fn delete_empty_dir(&self, dir: &str) -> Result<()> {
        self.inner.delete_empty_dir(dir).await
    }

    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        self.wait().await;
        self.inner.get_versioned(path).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::StorageExt;

    #[tokio::test]
    async fn delays_each_request() {
        let mem = MemoryStorage::new();
        mem.insert("a", &b"xyz"[..], None);
        let s = Latency::new(Arc::new(mem), Duration::from_millis(20));
        let t = std::time::Instant::now();
        assert_eq!(
            s.get_range("a", 1..3, Purpose::Other).await.unwrap(),
            &b"yz"[..]
        );
        let tail = s.read("a", &[ByteRange::Suffix(1)], Purpose::Other);
        let tail = tail.await.unwrap();
        assert_eq!((&tail.parts[0][..], tail.size), (&b"z"[..], Some(3)));
        assert!(t.elapsed() >= Duration::from_millis(40));
    }
}
