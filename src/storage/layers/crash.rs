//! A process that dies mid-write, for crash tests: the k-th request that changes storage
//! (a `put` or a `delete`) and every one after it fail with an I/O error and change
//! nothing. Reads keep working, as a reader in another process would see the store.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{HudiError, Result};
use crate::storage::{
    ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta, Purpose, PutMode, Storage,
};

#[derive(Debug)]
pub struct CrashAfter {
    inner: Arc<dyn Storage>,
    /// 1-based index of the first mutating request that fails; `u64::MAX` never.
    fail_from: AtomicU64,
    mutations: AtomicU64,
    /// Admitted mutating requests dropped before the inner store answered.
    abandoned: AtomicU64,
}

impl CrashAfter {
    pub fn new(inner: Arc<dyn Storage>, fail_from: u64) -> Self {
        CrashAfter {
            inner,
            fail_from: AtomicU64::new(fail_from),
            mutations: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
        }
    }

    /// Mutating requests asked so far (failed ones included).
    pub fn mutations(&self) -> u64 {
        self.mutations.load(Ordering::SeqCst)
    }

    /// Mutating requests whose caller stopped waiting for them: their outcome is unknown
    /// to it, and a local put on the blocking pool still lands after it returned (racing
    /// its next read, rollback or retry).
    pub fn abandoned(&self) -> u64 {
        self.abandoned.load(Ordering::SeqCst)
    }

    /// Whether the "process" has died.
    pub fn crashed(&self) -> bool {
        self.mutations() >= self.fail_from.load(Ordering::SeqCst)
    }

    fn admit(&self, path: &str) -> Result<()> {
        let n = self.mutations.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.fail_from.load(Ordering::SeqCst) {
            return Err(HudiError::io(
                path,
                format!("crashed at mutating request {n}"),
            ));
        }
        Ok(())
    }
}

/// Alive while a request waits for the inner store; dropped with an unfinished future, it
/// counts the request as abandoned (a finished request forgets it).
struct Running<'a>(&'a AtomicU64);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Storage for CrashAfter {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched> {
        self.inner.read(path, ranges, purpose).await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.inner.head(path).await
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        self.inner.list(prefix, recursive).await
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        self.inner.list_after(start_after).await
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        self.admit(path)?;
        let running = Running(&self.abandoned);
        let answer = self.inner.put(path, data, mode).await;
        std::mem::forget(running);
        answer
    }

    async fn delete(&self, path: &str) -> Result<()> {
        self.admit(path)?;
        let running = Running(&self.abandoned);
        let answer = self.inner.delete(path).await;
        std::mem::forget(running);
        answer
    }

    async fn delete_empty_dir(&self, dir: &str) -> Result<()> {
        self.admit(dir)?;
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
    use crate::storage::StorageExt;

    #[test]
    fn fails_from_the_kth_mutation_on() {
        let mem = Arc::new(MemoryStorage::new());
        let s = CrashAfter::new(mem.clone(), 2);
        futures::executor::block_on(async {
            s.put("a", Bytes::from_static(b"1"), PutMode::Create)
                .await
                .unwrap();
            assert!(s.delete("a").await.is_err());
            assert!(s.put("b", Bytes::new(), PutMode::Create).await.is_err());
            // Reads still work and the failed requests changed nothing.
            assert_eq!(&s.get("a", Purpose::Other).await.unwrap()[..], b"1");
            assert!(s.get("b", Purpose::Other).await.is_err());
        });
        assert_eq!((s.mutations(), s.crashed()), (3, true));
    }
}
