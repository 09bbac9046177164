//! A per-session cache of immutable objects, so a second read of the same instant file,
//! footer or column chunk costs no request. It sits *outside*
//! [`crate::storage::Instrumented`]: what it answers is not counted as I/O.
//!
//! Immutable here means Hudi never rewrites the name: completed instant files (timeline
//! names that start with a digit and are not `.requested` / `.inflight`), base files
//! (`.parquet`, `.hfile`, `.orc`), log files (`.log.` — appended only under table version 6,
//! where a cached prefix stays valid) and LSM history files. `hoodie.properties`, the
//! manifest, archive files and anything else go straight through.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::Result;
use crate::storage::{
    ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta, Purpose, PutMode, Storage,
};

/// Default bound on cached bytes. Smaller in wasm: linear memory never shrinks, so what a
/// session caches stays the module's high-water mark (a full scan fills any cache and gains
/// nothing from it), and an edge isolate has 128 MB in all.
#[cfg(not(target_arch = "wasm32"))]
pub const DEFAULT_CAPACITY: u64 = 64 * 1024 * 1024;
#[cfg(target_arch = "wasm32")]
pub const DEFAULT_CAPACITY: u64 = 16 * 1024 * 1024;

pub fn is_immutable(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.ends_with(".parquet") || name.ends_with(".hfile") || name.ends_with(".orc") {
        return true;
    }
    if name.starts_with('.') && name.contains(".log.") && !name.starts_with(".commits_.archive") {
        return true;
    }
    let in_timeline = path.starts_with(".hoodie/") || path.contains("/.hoodie/");
    in_timeline
        && name.starts_with(|c: char| c.is_ascii_digit())
        && name.contains('.')
        && !name.ends_with(".requested")
        && !name.ends_with(".inflight")
        && !name.ends_with(".tmp")
}

#[derive(Debug, Default)]
struct Entry {
    size: Option<u64>,
    meta: Option<ObjectMeta>,
    /// (start, bytes) pieces.
    pieces: Vec<(u64, Bytes)>,
}

impl Entry {
    fn find(&self, range: &Range<u64>) -> Option<Bytes> {
        let end = match self.size {
            Some(s) => range.end.min(s),
            None => range.end,
        };
        if range.start >= end {
            return self.size.map(|_| Bytes::new());
        }
        self.pieces.iter().find_map(|(start, b)| {
            let piece_end = start + b.len() as u64;
            (*start <= range.start && end <= piece_end)
                .then(|| b.slice((range.start - start) as usize..(end - start) as usize))
        })
    }
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<String, Entry>,
    order: VecDeque<String>,
    bytes: u64,
    hits: u64,
}

#[derive(Debug)]
pub struct Cached {
    inner: Arc<dyn Storage>,
    capacity: u64,
    state: Mutex<State>,
    /// Paths read around the cache while a [`PassThrough`] holds them (counted per holder).
    passing: Mutex<HashMap<String, usize>>,
}

/// Until dropped, reads of its paths are not kept ([`Cached::pass_through`]).
#[derive(Debug)]
pub struct PassThrough {
    cache: Arc<Cached>,
    paths: Vec<String>,
}

impl Drop for PassThrough {
    fn drop(&mut self) {
        let mut passing = self.cache.passing_lock();
        for p in &self.paths {
            if let Some(n) = passing.get_mut(p) {
                *n -= 1;
                if *n == 0 {
                    passing.remove(p);
                }
            }
        }
    }
}

impl Cached {
    pub fn new(inner: Arc<dyn Storage>, capacity: u64) -> Self {
        Cached {
            inner,
            capacity,
            state: Mutex::new(State::default()),
            passing: Mutex::new(HashMap::new()),
        }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Reads of `paths` are not kept until the answer drops: a scan of more than the cache
    /// holds evicts its own reads before it could repeat them (least recently used goes
    /// first), so keeping them would only hold memory (wasm's never shrinks).
    pub fn pass_through(self: &Arc<Self>, paths: Vec<String>) -> PassThrough {
        let mut passing = self.passing_lock();
        for p in &paths {
            *passing.entry(p.clone()).or_default() += 1;
        }
        drop(passing);
        PassThrough {
            cache: self.clone(),
            paths,
        }
    }

    fn passing_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.passing.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Requests answered from the cache so far.
    pub fn hits(&self) -> u64 {
        self.lock().hits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lookup(&self, path: &str, f: impl FnOnce(&Entry) -> Option<Bytes>) -> Option<Bytes> {
        if !is_immutable(path) {
            return None;
        }
        let mut s = self.lock();
        let hit = s.entries.get(path).and_then(f);
        if hit.is_some() {
            s.hits += 1;
        }
        hit
    }

    fn store(&self, path: &str, start: u64, bytes: &Bytes, size: Option<u64>) {
        if !is_immutable(path)
            || bytes.len() as u64 > self.capacity / 4
            || self.passing_lock().contains_key(path)
        {
            return;
        }
        let mut s = self.lock();
        let is_new = !s.entries.contains_key(path);
        if is_new {
            s.order.push_back(path.to_string());
        }
        let e = s.entries.entry(path.to_string()).or_default();
        if size.is_some() {
            e.size = size;
        }
        if !bytes.is_empty() {
            e.pieces.push((start, bytes.clone()));
        }
        s.bytes += bytes.len() as u64;
        while s.bytes > self.capacity {
            let Some(oldest) = s.order.pop_front() else {
                break;
            };
            if let Some(old) = s.entries.remove(&oldest) {
                s.bytes -= old.pieces.iter().map(|(_, b)| b.len() as u64).sum::<u64>();
            }
        }
    }

    fn known_size(&self, path: &str) -> Option<u64> {
        self.lock().entries.get(path).and_then(|e| e.size)
    }

    fn forget(&self, path: &str) {
        let mut s = self.lock();
        if let Some(old) = s.entries.remove(path) {
            s.bytes -= old.pieces.iter().map(|(_, b)| b.len() as u64).sum::<u64>();
            s.order.retain(|p| p != path);
        }
    }
}

#[async_trait]
impl Storage for Cached {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched> {
        let held = |r: &ByteRange| {
            self.lookup(path, |e| match r {
                ByteRange::Bounded(r) => e.find(r),
                other => e.find(&other.within(e.size?)),
            })
        };
        let keep = |r: &ByteRange, b: &Bytes, size: Option<u64>| match r {
            ByteRange::Bounded(r) => {
                // A short answer means the object ends there.
                let short = (b.len() as u64) < r.end.saturating_sub(r.start);
                let ends = short.then(|| r.start + b.len() as u64);
                self.store(path, r.start, b, ends.or(size));
            }
            _ => {
                if let Some(size) = size.filter(|s| b.len() as u64 <= *s) {
                    self.store(path, size - b.len() as u64, b, Some(size));
                }
            }
        };
        let mut fetched = read_through(&*self.inner, path, ranges, purpose, held, keep).await?;
        fetched.size = fetched.size.or(self.known_size(path));
        Ok(fetched)
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        if is_immutable(path) {
            let mut s = self.lock();
            let known = s.entries.get(path).and_then(|e| {
                e.meta
                    .clone()
                    .or_else(|| e.size.map(|size| ObjectMeta::file(path, size)))
            });
            if let Some(m) = known {
                s.hits += 1;
                return Ok(m);
            }
        }
        let m = self.inner.head(path).await?;
        if is_immutable(path) {
            self.store(path, 0, &Bytes::new(), Some(m.size));
            if let Some(e) = self.lock().entries.get_mut(path) {
                e.meta = Some(m.clone());
            }
        }
        Ok(m)
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        self.inner.list(prefix, recursive).await
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        self.inner.list_after(start_after).await
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        self.forget(path);
        self.inner.put(path, data, mode).await
    }

    async fn delete(&self, path: &str) -> Result<()> {
        self.forget(path);
        self.inner.delete(path).await
    }

    async fn delete_empty_dir(&self, dir: &str) -> Result<()> {
        self.inner.delete_empty_dir(dir).await
    }

    /// Never from the cache: a versioned read is for an object that changes (the lock).
    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        self.inner.get_versioned(path).await
    }
}

/// Answers each of `ranges` from `held` where it can, and the rest with one read of `inner`,
/// handing each fetched part to `keep` with its range and the object size that read
/// reported. The answer's `size` is that read's (none when nothing was fetched).
pub(crate) async fn read_through(
    inner: &dyn Storage,
    path: &str,
    ranges: &[ByteRange],
    purpose: Purpose,
    held: impl Fn(&ByteRange) -> Option<Bytes>,
    keep: impl Fn(&ByteRange, &Bytes, Option<u64>),
) -> Result<Fetched> {
    let mut parts: Vec<Option<Bytes>> = ranges.iter().map(held).collect();
    let missing: Vec<ByteRange> = ranges
        .iter()
        .zip(&parts)
        .filter(|(_, p)| p.is_none())
        .map(|(r, _)| r.clone())
        .collect();
    if missing.is_empty() {
        // Answered from memory: decoding follows at once, so requests issued just before
        // go out first.
        crate::storage::timer::let_requests_out().await;
        return Ok(Fetched {
            parts: parts.into_iter().flatten().collect(),
            size: None,
            warnings: Vec::new(),
        });
    }
    let fetched = inner.read(path, &missing, purpose).await?;
    let mut answers = fetched.parts.into_iter();
    for (r, part) in ranges.iter().zip(parts.iter_mut()) {
        if part.is_none() {
            let b = answers.next().unwrap_or_default();
            keep(r, &b, fetched.size);
            *part = Some(b);
        }
    }
    Ok(Fetched {
        parts: parts.into_iter().flatten().collect(),
        size: fetched.size,
        warnings: fetched.warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::{Instrumented, StorageExt};

    #[test]
    fn immutable_names() {
        assert!(is_immutable(".hoodie/timeline/1_2.commit"));
        assert!(is_immutable(".hoodie/20240101.deltacommit"));
        assert!(!is_immutable(".hoodie/20240101.deltacommit.inflight"));
        assert!(!is_immutable(".hoodie/20240101.commit.requested"));
        assert!(!is_immutable(".hoodie/hoodie.properties"));
        assert!(!is_immutable(".hoodie/hudi-edge-manifest.json"));
        assert!(!is_immutable(".hoodie/archived/.commits_.archive.1_1-0-1"));
        assert!(is_immutable("p/.f1_20240101.log.1_0-1-0"));
        assert!(is_immutable("p/f1_0-1-0_20240101.parquet"));
        assert!(is_immutable(
            ".hoodie/metadata/files/files-0000-0_0-1-0_1.hfile"
        ));
        assert!(!is_immutable("p/.hoodie_partition_metadata"));
    }

    #[test]
    fn paths_passing_through_are_read_but_not_kept() {
        futures::executor::block_on(async {
            let mem = MemoryStorage::new();
            mem.insert("p/a.parquet", vec![7u8; 64], None);
            let inst = Instrumented::new(Arc::new(mem));
            let stats = inst.stats();
            let c = Arc::new(Cached::new(Arc::new(inst), 1 << 20));
            let read = || c.get_range("p/a.parquet", 0..64, Purpose::ColumnChunk);
            let (one, two) = (
                c.pass_through(vec!["p/a.parquet".into()]),
                c.pass_through(vec!["p/a.parquet".into()]),
            );
            read().await.unwrap();
            drop(one);
            read().await.unwrap();
            assert_eq!(
                stats.snapshot().requests,
                2,
                "not kept while any holder lives"
            );
            drop(two);
            read().await.unwrap();
            read().await.unwrap();
            assert_eq!(stats.snapshot().requests, 3, "kept again once all are gone");
        });
    }

    #[test]
    fn repeated_reads_cost_nothing() {
        futures::executor::block_on(async {
            let mem = MemoryStorage::new();
            mem.insert("p/a.parquet", (0u8..=255).collect::<Vec<_>>(), None);
            mem.insert(".hoodie/hoodie.properties", b"x=1".to_vec(), None);
            let inst = Instrumented::new(Arc::new(mem));
            let stats = inst.stats();
            let c = Cached::new(Arc::new(inst), 1 << 20);
            let (footer, path) = (Purpose::Footer, "p/a.parquet");
            let first = c
                .read(path, &[ByteRange::Suffix(16)], footer)
                .await
                .unwrap();
            assert_eq!((first.parts[0].len(), first.size), (16, Some(256)));
            let again = c.read(path, &[ByteRange::Suffix(8)], footer).await.unwrap();
            assert_eq!(again.parts[0][..], (248u8..=255).collect::<Vec<_>>()[..]);
            assert_eq!(
                c.get_range("p/a.parquet", 250..300, Purpose::ColumnChunk)
                    .await
                    .unwrap()
                    .len(),
                6
            );
            assert_eq!(c.head("p/a.parquet").await.unwrap().size, 256);
            let before = stats.snapshot().requests;
            assert_eq!(
                c.get("p/a.parquet", Purpose::Other).await.unwrap().len(),
                256
            );
            assert_eq!(
                c.get_range("p/a.parquet", 10..20, Purpose::ColumnChunk)
                    .await
                    .unwrap()[0],
                10
            );
            assert_eq!(stats.snapshot().requests, before + 1);
            c.get(".hoodie/hoodie.properties", Purpose::Properties)
                .await
                .unwrap();
            c.get(".hoodie/hoodie.properties", Purpose::Properties)
                .await
                .unwrap();
            assert_eq!(stats.snapshot().requests, before + 3);
        });
    }
}
