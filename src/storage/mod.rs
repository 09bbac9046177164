//! The one I/O seam of the engine. The core (timeline, file groups, log files, HFiles, the
//! metadata table, readers and writers) never touches a file system or network: it asks a
//! [`Storage`] for bytes by path relative to the table's base path, and is handed them.
//!
//! Implementations: [`memory::MemoryStorage`] (tests, bytes handed in from JS),
//! `local::LocalStorage` (native files), and the HTTP/S3 ones that live beside them. Every
//! implementation is wrapped in [`Instrumented`], which counts requests, bytes and dependent
//! round trips, so any read can report what it cost, and then in [`cache::Cached`], which
//! keeps immutable objects for the session so repeated reads cost nothing. Wrappers:
//! [`prefixed::Prefixed`] (a sub-directory as a root, e.g. the metadata table) and
//! `latency::Latency` (a fixed delay per request, for benchmarks).
//!
//! Remote tables: [`http::HttpStorage`] (plain HTTP(S) and presigned URLs, over `fetch` in
//! wasm — [`fetch`] — or reqwest natively) and [`object_store::ObjectStoreStorage`] (S3 via
//! object_store, both targets). [`listing`] answers `list` where a host has no list API.

/// The hints a wrapper passes through unchanged from the store it wraps (`self.inner`).
macro_rules! forward_store_hints {
    () => {
        fn has_suffix_range(&self) -> bool {
            self.inner.has_suffix_range()
        }

        fn lists_dot_files(&self) -> bool {
            self.inner.lists_dot_files()
        }

        fn warnings(&self) -> Vec<String> {
            self.inner.warnings()
        }

        fn list_local(
            &self,
            prefix: &str,
            recursive: bool,
        ) -> Option<Vec<$crate::storage::ObjectMeta>> {
            self.inner.list_local(prefix, recursive)
        }
    };
}

pub mod cache;
#[cfg(target_arch = "wasm32")]
pub mod fetch;
pub mod http;
#[cfg(not(target_arch = "wasm32"))]
pub mod latency;
pub mod listing;
#[cfg(not(target_arch = "wasm32"))]
pub mod local;
pub mod memory;
pub mod object_store;
pub mod path;
pub mod prefixed;

use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde::Serialize;

use crate::error::Result;

pub use prefixed::Prefixed;

/// What a listing or a `head` knows about one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectMeta {
    /// Path relative to the storage root, `/`-separated, no leading `/`.
    pub path: String,
    pub size: u64,
    /// Modification time in epoch milliseconds, when the store reports one.
    pub last_modified_ms: Option<i64>,
    pub etag: Option<String>,
    /// A "directory" (common prefix) in a non-recursive listing.
    pub is_dir: bool,
}

impl ObjectMeta {
    pub fn file(path: impl Into<String>, size: u64) -> Self {
        ObjectMeta {
            path: path.into(),
            size,
            last_modified_ms: None,
            etag: None,
            is_dir: false,
        }
    }

    /// Last path segment.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// How a `put` treats an existing object. Conditional modes are what make commits atomic on
/// object stores (`If-None-Match: *` / `If-Match: <etag>`); a failed condition is
/// `HudiError::Conflict`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutMode {
    Overwrite,
    Create,
    UpdateIfMatch(String),
}

#[async_trait]
pub trait Storage: Send + Sync + fmt::Debug {
    /// Where the root is, for messages (never carries credentials).
    fn location(&self) -> String;

    /// Bytes `range` of `path`; a range past the end is clamped to the object's end.
    async fn get_range(&self, path: &str, range: Range<u64>) -> Result<Bytes>;

    /// The whole object.
    async fn get(&self, path: &str) -> Result<Bytes>;

    /// The last `n` bytes and the object's total size. Stores with suffix ranges answer in
    /// one request; the default costs a `head` and a `get_range`.
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        let size = self.head(path).await?.size;
        let bytes = self.get_range(path, size.saturating_sub(n)..size).await?;
        Ok((bytes, size))
    }

    /// True when `get_tail` is one request (HTTP `Range: bytes=-n`, local files).
    fn has_suffix_range(&self) -> bool {
        false
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta>;

    /// Objects under the directory `prefix` ("" = root). Non-recursive listings also return
    /// sub-directories (`is_dir`).
    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>>;

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta>;

    async fn put_if_absent(&self, path: &str, data: Bytes) -> Result<ObjectMeta> {
        self.put(path, data, PutMode::Create).await
    }

    async fn delete(&self, path: &str) -> Result<()>;

    /// False when `list` cannot see names starting with a dot (a JSON directory index):
    /// Hudi log files are such names, so Merge-On-Read partitions must not be listed.
    fn lists_dot_files(&self) -> bool {
        true
    }

    /// What the store noticed and worked around (e.g. a server that ignores `Range`).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// A listing the store already holds (a loaded manifest), answered without a request;
    /// `None` when `list` would have to ask.
    fn list_local(&self, _prefix: &str, _recursive: bool) -> Option<Vec<ObjectMeta>> {
        None
    }
}

/// Joins a directory and a name into a storage path.
pub fn join(dir: &str, name: &str) -> String {
    let dir = dir.trim_end_matches('/');
    if dir.is_empty() {
        name.trim_start_matches('/').to_string()
    } else {
        format!("{dir}/{}", name.trim_start_matches('/'))
    }
}

/// Request and byte counters. Cheap to clone (shared).
#[derive(Debug, Default)]
pub struct IoStats {
    requests: AtomicU64,
    bytes: AtomicU64,
    gets: AtomicU64,
    heads: AtomicU64,
    lists: AtomicU64,
    puts: AtomicU64,
    deletes: AtomicU64,
    round_trips: AtomicU64,
    in_flight: AtomicU64,
}

/// A point-in-time copy of [`IoStats`]; the difference of two is what an operation cost.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IoSnapshot {
    pub requests: u64,
    pub bytes: u64,
    pub gets: u64,
    pub heads: u64,
    pub lists: u64,
    pub puts: u64,
    pub deletes: u64,
    /// Phases in which at least one request was in flight; requests issued concurrently
    /// share one. This is the number of dependent round trips an operation needed.
    pub round_trips: u64,
}

impl IoSnapshot {
    pub fn since(&self, earlier: &IoSnapshot) -> IoSnapshot {
        IoSnapshot {
            requests: self.requests - earlier.requests,
            bytes: self.bytes - earlier.bytes,
            gets: self.gets - earlier.gets,
            heads: self.heads - earlier.heads,
            lists: self.lists - earlier.lists,
            puts: self.puts - earlier.puts,
            deletes: self.deletes - earlier.deletes,
            round_trips: self.round_trips - earlier.round_trips,
        }
    }
}

impl IoStats {
    pub fn snapshot(&self) -> IoSnapshot {
        IoSnapshot {
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            gets: self.gets.load(Ordering::Relaxed),
            heads: self.heads.load(Ordering::Relaxed),
            lists: self.lists.load(Ordering::Relaxed),
            puts: self.puts.load(Ordering::Relaxed),
            deletes: self.deletes.load(Ordering::Relaxed),
            round_trips: self.round_trips.load(Ordering::Relaxed),
        }
    }

    fn begin(&self, kind: &AtomicU64) -> InFlight<'_> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        kind.fetch_add(1, Ordering::Relaxed);
        if self.in_flight.fetch_add(1, Ordering::SeqCst) == 0 {
            self.round_trips.fetch_add(1, Ordering::Relaxed);
        }
        InFlight(self)
    }

    fn add_bytes(&self, n: u64) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
    }
}

struct InFlight<'a>(&'a IoStats);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Wraps any storage and counts what passes through it.
#[derive(Debug, Clone)]
pub struct Instrumented {
    inner: Arc<dyn Storage>,
    stats: Arc<IoStats>,
}

impl Instrumented {
    pub fn new(inner: Arc<dyn Storage>) -> Self {
        Instrumented {
            inner,
            stats: Arc::new(IoStats::default()),
        }
    }

    pub fn stats(&self) -> Arc<IoStats> {
        self.stats.clone()
    }

    pub fn inner(&self) -> &Arc<dyn Storage> {
        &self.inner
    }
}

#[async_trait]
impl Storage for Instrumented {
    fn location(&self) -> String {
        self.inner.location()
    }

    async fn get_range(&self, path: &str, range: Range<u64>) -> Result<Bytes> {
        let _f = self.stats.begin(&self.stats.gets);
        let b = self.inner.get_range(path, range).await?;
        self.stats.add_bytes(b.len() as u64);
        Ok(b)
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        let _f = self.stats.begin(&self.stats.gets);
        let b = self.inner.get(path).await?;
        self.stats.add_bytes(b.len() as u64);
        Ok(b)
    }

    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        if !self.inner.has_suffix_range() {
            // Two counted requests: a head for the size, then the range.
            let size = self.head(path).await?.size;
            let b = self.get_range(path, size.saturating_sub(n)..size).await?;
            return Ok((b, size));
        }
        let _f = self.stats.begin(&self.stats.gets);
        let (b, size) = self.inner.get_tail(path, n).await?;
        self.stats.add_bytes(b.len() as u64);
        Ok((b, size))
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let _f = self.stats.begin(&self.stats.heads);
        self.inner.head(path).await
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        if let Some(known) = self.inner.list_local(prefix, recursive) {
            return Ok(known); // no request, no round trip
        }
        let _f = self.stats.begin(&self.stats.lists);
        self.inner.list(prefix, recursive).await
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let _f = self.stats.begin(&self.stats.puts);
        self.stats.add_bytes(data.len() as u64);
        self.inner.put(path, data, mode).await
    }

    async fn delete(&self, path: &str) -> Result<()> {
        let _f = self.stats.begin(&self.stats.deletes);
        self.inner.delete(path).await
    }

    forward_store_hints!();
}
