//! Counting what passes through a store: requests (by verb and by purpose), bytes, dependent
//! round trips, and what the store worked around; [`Instrumented`] wraps any store with it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::storage::*;

/// Most warnings kept for a session.
const MAX_WARNINGS: usize = 32;

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
    /// The longest chain of requests, each begun after the one before it ended.
    deepest: AtomicU64,
    /// The deepest chain among the requests that have ended.
    ended_depth: AtomicU64,
    purpose_requests: [AtomicU64; Purpose::ALL.len()],
    purpose_bytes: [AtomicU64; Purpose::ALL.len()],
    warnings: Mutex<Vec<String>>,
}

/// Requests and bytes of one [`Purpose`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify_next::Tsify),
    serde(rename_all = "camelCase")
)]
pub struct PurposeIo {
    pub requests: u64,
    pub bytes: u64,
}

/// A point-in-time copy of [`IoStats`]; the difference of two is what an operation cost.
///
/// It crosses to JS as it is: the CLI prints it in snake_case, wasm hands it over in
/// camelCase with a generated TypeScript declaration.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify_next::Tsify),
    serde(rename_all = "camelCase")
)]
pub struct IoSnapshot {
    pub requests: u64,
    pub bytes: u64,
    pub gets: u64,
    pub heads: u64,
    pub lists: u64,
    pub puts: u64,
    pub deletes: u64,
    /// Dependent round trips: the longest chain of requests in which each began after the
    /// one before it had ended. Requests issued together share a link, however long any
    /// of them takes, and one answered but awaited later does not join the next link.
    pub round_trips: u64,
    /// The requests and bytes above by why they were made (purposes without any left out).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "Record<string, PurposeIo>", optional)
    )]
    pub by_purpose: BTreeMap<Purpose, PurposeIo>,
    /// What the stores noticed and worked around (e.g. a server that ignores `Range`).
    pub warnings: Vec<String>,
}

impl IoSnapshot {
    pub fn since(&self, earlier: &IoSnapshot) -> IoSnapshot {
        let by_purpose = self
            .by_purpose
            .iter()
            .filter_map(|(p, now)| {
                let before = earlier.by_purpose.get(p).copied().unwrap_or_default();
                let d = PurposeIo {
                    requests: now.requests - before.requests,
                    bytes: now.bytes - before.bytes,
                };
                (d != PurposeIo::default()).then_some((*p, d))
            })
            .collect();
        IoSnapshot {
            requests: self.requests - earlier.requests,
            bytes: self.bytes - earlier.bytes,
            gets: self.gets - earlier.gets,
            heads: self.heads - earlier.heads,
            lists: self.lists - earlier.lists,
            puts: self.puts - earlier.puts,
            deletes: self.deletes - earlier.deletes,
            round_trips: self.round_trips - earlier.round_trips,
            by_purpose,
            // Kept in the order noticed, so the later ones are the new ones.
            warnings: self.warnings[earlier.warnings.len().min(self.warnings.len())..].to_vec(),
        }
    }
}

/// Which counter a request adds to.
#[derive(Debug, Clone, Copy)]
enum Verb {
    Get,
    Head,
    List,
    Put,
    Delete,
}

impl IoStats {
    pub fn snapshot(&self) -> IoSnapshot {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let by_purpose = Purpose::ALL
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let io = PurposeIo {
                    requests: load(&self.purpose_requests[i]),
                    bytes: load(&self.purpose_bytes[i]),
                };
                (*p, io)
            })
            .filter(|(_, io)| *io != PurposeIo::default())
            .collect();
        IoSnapshot {
            requests: load(&self.requests),
            bytes: load(&self.bytes),
            gets: load(&self.gets),
            heads: load(&self.heads),
            lists: load(&self.lists),
            puts: load(&self.puts),
            deletes: load(&self.deletes),
            round_trips: load(&self.deepest),
            by_purpose,
            warnings: self.lock_warnings().clone(),
        }
    }

    fn lock_warnings(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.warnings.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn begin(&self, verb: Verb, purpose: Purpose) -> InFlight<'_> {
        let kind = match verb {
            Verb::Get => &self.gets,
            Verb::Head => &self.heads,
            Verb::List => &self.lists,
            Verb::Put => &self.puts,
            Verb::Delete => &self.deletes,
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        kind.fetch_add(1, Ordering::Relaxed);
        self.purpose_requests[purpose as usize].fetch_add(1, Ordering::Relaxed);
        let depth = self.ended_depth.load(Ordering::SeqCst) + 1;
        self.deepest.fetch_max(depth, Ordering::SeqCst);
        InFlight(self, depth)
    }

    fn add_bytes(&self, n: u64, purpose: Purpose) {
        self.bytes.fetch_add(n, Ordering::Relaxed);
        self.purpose_bytes[purpose as usize].fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn warn(&self, warnings: Vec<String>) {
        let mut kept = self.lock_warnings();
        for w in warnings {
            if kept.len() < MAX_WARNINGS && !kept.contains(&w) {
                kept.push(w);
            }
        }
    }
}

/// A request under way, and how deep in the chain it began.
struct InFlight<'a>(&'a IoStats, u64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.ended_depth.fetch_max(self.1, Ordering::SeqCst);
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

    async fn counted_head(&self, path: &str, purpose: Purpose) -> Result<ObjectMeta> {
        let _f = self.stats.begin(Verb::Head, purpose);
        self.inner.head(path).await
    }
}

#[async_trait]
impl Storage for Instrumented {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched> {
        if needs_size(&*self.inner, ranges) {
            let head = self.counted_head(path, purpose);
            return read_with_size(self, path, ranges, purpose, head).await;
        }
        // One request per range, all in flight together.
        let _f: Vec<InFlight> = ranges
            .iter()
            .map(|_| self.stats.begin(Verb::Get, purpose))
            .collect();
        let mut fetched = self.inner.read(path, ranges, purpose).await?;
        let n = fetched.parts.iter().map(|b| b.len() as u64).sum();
        self.stats.add_bytes(n, purpose);
        self.stats.warn(std::mem::take(&mut fetched.warnings));
        Ok(fetched)
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.counted_head(path, Purpose::Other).await
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        if let Some(held) = self.inner.capabilities().listing {
            return Ok(held.list(prefix, recursive)); // no request, no round trip
        }
        let _f = self.stats.begin(Verb::List, Purpose::Listing);
        self.inner.list(prefix, recursive).await
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<crate::storage::ListedAfter>> {
        let capabilities = self.inner.capabilities();
        if let Some(held) = capabilities.listing {
            return Ok(Some(crate::storage::ListedAfter::new(
                held.list("", true),
                start_after,
                true,
            )));
        }
        if !capabilities.lists_after {
            return Ok(None);
        }
        let _f = self.stats.begin(Verb::List, Purpose::Listing);
        self.inner.list_after(start_after).await
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let _f = self.stats.begin(Verb::Put, Purpose::Other);
        self.stats.add_bytes(data.len() as u64, Purpose::Other);
        self.inner.put(path, data, mode).await
    }

    async fn delete(&self, path: &str) -> Result<()> {
        let _f = self.stats.begin(Verb::Delete, Purpose::Other);
        self.inner.delete(path).await
    }

    /// No request on stores without directories, so not counted.
    async fn delete_empty_dir(&self, dir: &str) -> Result<()> {
        self.inner.delete_empty_dir(dir).await
    }

    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        let _f = self.stats.begin(Verb::Get, Purpose::Other);
        let (bytes, meta) = self.inner.get_versioned(path).await?;
        self.stats.add_bytes(bytes.len() as u64, Purpose::Other);
        Ok((bytes, meta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round trips are the longest chain of requests each begun after the previous ended:
    /// a straggler does not merge two links, and requests issued together share one.
    #[test]
    fn round_trips_count_the_longest_chain_of_dependent_requests() {
        let stats = IoStats::default();
        let (get, purpose) = (Verb::Get, Purpose::Other);
        let a = stats.begin(get, purpose);
        let straggler = stats.begin(get, purpose);
        drop(a);
        let b = stats.begin(get, purpose); // after a: link 2, while the straggler runs
        let b2 = stats.begin(get, purpose);
        drop((b, b2));
        let c = stats.begin(get, purpose); // after b: link 3
        drop(straggler); // ended at link 1: no longer chain
        drop(c);
        assert_eq!(stats.snapshot().round_trips, 3);
        let before = stats.snapshot();
        drop(stats.begin(get, purpose));
        let io = stats.snapshot().since(&before);
        assert_eq!((io.requests, io.round_trips), (1, 1));
    }
}
