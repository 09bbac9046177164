//! Adds a fixed delay to every request, so that a local benchmark shows what request counts
//! cost against a remote object store (`hudi-edge --latency-ms 20 …`). Native only.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use super::{ObjectMeta, PutMode, Storage};
use crate::error::Result;

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

    async fn get_range(&self, path: &str, range: Range<u64>) -> Result<Bytes> {
        self.wait().await;
        self.inner.get_range(path, range).await
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        self.wait().await;
        self.inner.get(path).await
    }

    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        if !self.inner.has_suffix_range() {
            // Two requests, two delays (the default method calls head and get_range).
            let size = self.head(path).await?.size;
            let bytes = self.get_range(path, size.saturating_sub(n)..size).await?;
            return Ok((bytes, size));
        }
        self.wait().await;
        self.inner.get_tail(path, n).await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.wait().await;
        self.inner.head(path).await
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        self.wait().await;
        self.inner.list(prefix, recursive).await
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        self.wait().await;
        self.inner.put(path, data, mode).await
    }

    async fn delete(&self, path: &str) -> Result<()> {
        self.wait().await;
        self.inner.delete(path).await
    }

    forward_store_hints!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;

    #[tokio::test]
    async fn delays_each_request() {
        let mem = MemoryStorage::new();
        mem.insert("a", &b"xyz"[..], None);
        let s = Latency::new(Arc::new(mem), Duration::from_millis(20));
        let t = std::time::Instant::now();
        assert_eq!(s.get_range("a", 1..3).await.unwrap(), &b"yz"[..]);
        let (tail, size) = s.get_tail("a", 1).await.unwrap();
        assert_eq!((&tail[..], size), (&b"z"[..], 3));
        assert!(t.elapsed() >= Duration::from_millis(40));
    }
}
