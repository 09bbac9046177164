//! A cache of metadata-table file content that outlives one table handle: a worker isolate
//! serving request after request opens the table each time, and without it re-reads the same
//! record-index HFile blocks and MDT log files on every open.
//!
//! [`MdtFileCache`] holds the bytes (bounded, least recently used evicted first); each handle
//! reads through its own [`MdtCached`] wrapper, which serves a file from the cache only while
//! that handle's latest listing of the file's directory shows it with the version the bytes
//! were stored under: the size, and the ETag (else the modification time) when the listing
//! reports one. A rewritten file (a v6 log file appended to, an object replaced) lists with
//! another version and is read again; a file the listing does not show is never served.
//! Only MDT partition files (`.hoodie/metadata/<partition>/…` HFiles and log files) are
//! kept: never timeline files, `hoodie.properties` or listings.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use serde::Serialize;

use crate::error::Result;
use crate::storage::cache::read_through;
use crate::storage::{
    ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta, Purpose, PutMode, Storage,
};

/// Default byte budget: the record index of the 1M-row bench table (10 base HFiles of
/// ~0.9 MB and their log files) fits, and an isolate's 128 MB keeps its headroom.
pub const DEFAULT_MDT_CACHE_BYTES: u64 = 16 * 1024 * 1024;

const MDT_DIR: &str = ".hoodie/metadata/";

/// A metadata-table partition's data file (base HFile or log file), not its timeline.
pub fn is_mdt_file(path: &str) -> bool {
    let Some(rest) = path.strip_prefix(MDT_DIR) else {
        return false;
    };
    let name = rest.rsplit('/').next().unwrap_or(rest);
    !rest.starts_with(".hoodie/")
        && rest.contains('/')
        && (name.ends_with(".hfile") || (name.starts_with('.') && name.contains(".log.")))
}

/// One version of an object: its size and the ETag (else the modification time) a listing
/// or a put reported.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    size: u64,
    tag: Option<String>,
}

impl Version {
    fn listed(m: &ObjectMeta) -> Version {
        let tag = etag(m)
            .map(|e| format!("etag {e}"))
            .or_else(|| m.last_modified_ms.map(|t| format!("modified {t}")));
        Version { size: m.size, tag }
    }

    /// What a put of `size` bytes created, when the store named it by ETag (a listing of
    /// the object then reports the same); else nothing a listing could be matched with.
    fn written(m: &ObjectMeta, size: u64) -> Option<Version> {
        etag(m).map(|e| Version {
            size,
            tag: Some(format!("etag {e}")),
        })
    }
}

/// An ETag without quotes or a weak marker (listings and headers quote it differently).
fn etag(m: &ObjectMeta) -> Option<&str> {
    m.etag
        .as_deref()
        .map(|e| e.trim_start_matches("W/").trim_matches('"'))
        .filter(|e| !e.is_empty())
}

#[derive(Debug)]
struct Entry {
    version: Version,
    /// (start, bytes) pieces, none inside another.
    pieces: Vec<(u64, Bytes)>,
    bytes: u64,
    used: u64,
}

impl Entry {
    fn find(&self, range: &Range<u64>) -> Option<Bytes> {
        if range.start >= range.end {
            return Some(Bytes::new());
        }
        self.pieces.iter().find_map(|(start, b)| {
            let end = start + b.len() as u64;
            (*start <= range.start && range.end <= end)
                .then(|| b.slice((range.start - start) as usize..(range.end - start) as usize))
        })
    }

    /// Adds a piece unless one held covers it; drops the held pieces it covers. The change
    /// in bytes held.
    fn add(&mut self, start: u64, bytes: Bytes) -> i64 {
        let end = start + bytes.len() as u64;
        if self.find(&(start..end)).is_some() {
            return 0;
        }
        let before = self.bytes;
        self.pieces
            .retain(|(s, b)| !(start <= *s && s + b.len() as u64 <= end));
        self.pieces.push((start, bytes));
        self.bytes = self.pieces.iter().map(|(_, b)| b.len() as u64).sum();
        self.bytes as i64 - before as i64
    }
}

/// What the cache holds and did, for reports and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify_next::Tsify))]
pub struct MdtCacheStats {
    /// The byte budget.
    pub max_bytes: u64,
    /// Bytes held now, and in how many files.
    pub bytes: u64,
    pub files: u64,
    /// Reads answered from the cache (one per range), and reads of listed MDT files it
    /// could not answer.
    pub hits: u64,
    pub misses: u64,
    /// Bytes answered from the cache.
    pub hit_bytes: u64,
    /// Files a writer put into the cache as it wrote them.
    pub written: u64,
    /// Files dropped for the budget or because a listing showed another version.
    pub evicted: u64,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<String, Entry>,
    clock: u64,
    stats: MdtCacheStats,
}

/// The isolate-level store of MDT file bytes, shared by every handle opened with it. Keys are
/// the storage's location and the path, so one cache can serve several tables.
#[derive(Debug)]
pub struct MdtFileCache {
    state: Mutex<State>,
}

impl MdtFileCache {
    /// A cache holding at most `max_bytes` (0 holds nothing).
    pub fn new(max_bytes: u64) -> Self {
        let state = State {
            stats: MdtCacheStats {
                max_bytes,
                ..Default::default()
            },
            ..Default::default()
        };
        MdtFileCache {
            state: Mutex::new(state),
        }
    }

    pub fn stats(&self) -> MdtCacheStats {
        let s = self.lock();
        MdtCacheStats {
            files: s.entries.len() as u64,
            ..s.stats
        }
    }

    /// Drops everything held (the counters stay).
    pub fn clear(&self) {
        let mut s = self.lock();
        s.entries.clear();
        s.stats.bytes = 0;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn find(&self, key: &str, version: &Version, range: &Range<u64>) -> Option<Bytes> {
        let mut s = self.lock();
        s.clock += 1;
        let now = s.clock;
        let found = match s.entries.get_mut(key) {
            Some(e) if e.version == *version => {
                e.used = now;
                e.find(range)
            }
            Some(_) => {
                // The listing shows another version: what is held is of no use again.
                let old = s.entries.remove(key).expect("present");
                s.stats.bytes -= old.bytes;
                s.stats.evicted += 1;
                None
            }
            None => None,
        };
        match &found {
            Some(b) => {
                s.stats.hits += 1;
                s.stats.hit_bytes += b.len() as u64;
            }
            None => s.stats.misses += 1,
        }
        found
    }

    /// Keeps `bytes` of `key` at `start`; whether anything new was kept.
    fn store(&self, key: &str, version: &Version, start: u64, bytes: Bytes) -> bool {
        let mut s = self.lock();
        // One file may take a quarter of the budget: a big read never flushes the rest.
        if bytes.is_empty() || bytes.len() as u64 > s.stats.max_bytes / 4 {
            return false;
        }
        s.clock += 1;
        let now = s.clock;
        let entry = s.entries.entry(key.to_string()).or_insert_with(|| Entry {
            version: version.clone(),
            pieces: Vec::new(),
            bytes: 0,
            used: now,
        });
        let mut freed = 0;
        if entry.version != *version {
            freed = entry.bytes;
            *entry = Entry {
                version: version.clone(),
                pieces: Vec::new(),
                bytes: 0,
                used: now,
            };
        }
        entry.used = now;
        let grown = entry.add(start, bytes);
        s.stats.bytes = (s.stats.bytes - freed).saturating_add_signed(grown);
        if freed > 0 {
            s.stats.evicted += 1;
        }
        // Least recently used first; the piece just stored goes last of all.
        while s.stats.bytes > s.stats.max_bytes {
            let Some(oldest) = s
                .entries
                .iter()
                .filter(|(k, _)| k.as_str() != key)
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            let old = s.entries.remove(&oldest).expect("present");
            s.stats.bytes -= old.bytes;
            s.stats.evicted += 1;
        }
        grown > 0
    }
}

/// One handle's view of an [`MdtFileCache`]: a [`Storage`] wrapper that notes the versions
/// its listings report for MDT files, answers reads of those files from the cache, and
/// stores what it reads (and what it writes, when the store names the version by ETag).
#[derive(Debug)]
pub struct MdtCached {
    inner: Arc<dyn Storage>,
    cache: Arc<MdtFileCache>,
    location: String,
    /// MDT files by path, as this handle's latest listing of their directory showed them.
    listed: Mutex<HashMap<String, Version>>,
}

impl MdtCached {
    pub fn new(inner: Arc<dyn Storage>, cache: Arc<MdtFileCache>) -> Self {
        MdtCached {
            location: inner.location(),
            inner,
            cache,
            listed: Mutex::default(),
        }
    }

    fn key(&self, path: &str) -> String {
        format!("{}\n{path}", self.location)
    }

    fn listed(&self) -> std::sync::MutexGuard<'_, HashMap<String, Version>> {
        self.listed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a listing of `prefix` as the truth for the MDT files under it: those it no
    /// longer shows are forgotten, the others noted with their version.
    fn note_listing(&self, prefix: &str, recursive: bool, objects: &[ObjectMeta]) {
        let dir = prefix.trim_end_matches('/');
        let under = |path: &str| match path.rsplit_once('/') {
            Some((parent, _)) if recursive => {
                dir.is_empty() || parent == dir || parent.starts_with(&format!("{dir}/"))
            }
            Some((parent, _)) => parent == dir,
            None => dir.is_empty(),
        };
        let mut listed = self.listed();
        listed.retain(|path, _| !under(path));
        for m in objects.iter().filter(|m| !m.is_dir && is_mdt_file(&m.path)) {
            listed.insert(m.path.clone(), Version::listed(m));
        }
    }
}

#[async_trait]
impl Storage for MdtCached {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched> {
        let listed = self.listed().get(path).cloned();
        let Some(version) = listed.filter(|_| is_mdt_file(path)) else {
            return self.inner.read(path, ranges, purpose).await;
        };
        let key = self.key(path);
        let size = version.size;
        let held = |r: &ByteRange| self.cache.find(&key, &version, &r.within(size));
        let keep = |r: &ByteRange, b: &Bytes, read_size: Option<u64>| {
            // Bytes of an object whose size is not the listed one are not of that version.
            let want = r.within(size);
            if read_size.is_none_or(|s| s == size) && b.len() as u64 == want.end - want.start {
                self.cache.store(&key, &version, want.start, b.clone());
            }
        };
        let mut fetched = read_through(&*self.inner, path, ranges, purpose, held, keep).await?;
        fetched.size = fetched.size.or(Some(size));
        Ok(fetched)
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.inner.head(path).await
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        let objects = self.inner.list(prefix, recursive).await?;
        self.note_listing(prefix, recursive, &objects);
        Ok(objects)
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        self.inner.list_after(start_after).await
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let meta = self.inner.put(path, data.clone(), mode).await?;
        if is_mdt_file(path) {
            if let Some(v) = Version::written(&meta, data.len() as u64) {
                if self.cache.store(&self.key(path), &v, 0, data) {
                    self.cache.lock().stats.written += 1;
                }
            }
        }
        Ok(meta)
    }

    async fn delete(&self, path: &str) -> Result<()> {
        self.listed().remove(path);
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

    const LOG: &str = ".hoodie/metadata/record_index/.record-index-0000-0_1.log.1_0-1-1";
    const BASE: &str = ".hoodie/metadata/record_index/record-index-0000-0_0-1-1_1.hfile";

    #[test]
    fn mdt_files_only() {
        assert!(is_mdt_file(LOG));
        assert!(is_mdt_file(BASE));
        assert!(!is_mdt_file(
            ".hoodie/metadata/.hoodie/timeline/1_2.deltacommit"
        ));
        assert!(!is_mdt_file(".hoodie/metadata/.hoodie/hoodie.properties"));
        assert!(!is_mdt_file(
            ".hoodie/metadata/files/.hoodie_partition_metadata"
        ));
        assert!(!is_mdt_file("p/.f1_20240101.log.1_0-1-0"));
        assert!(!is_mdt_file("p/f1_0-1-0_20240101.parquet"));
    }

    /// A store holding one MDT log and one base file, and a cache of `max` bytes.
    fn setup(max: u64) -> (Arc<MemoryStorage>, Arc<MdtFileCache>) {
        let mem = Arc::new(MemoryStorage::new());
        mem.insert(LOG, b"version one".to_vec(), Some(1));
        mem.insert(BASE, (0u8..200).collect::<Vec<_>>(), Some(1));
        (mem, Arc::new(MdtFileCache::new(max)))
    }

    /// A handle's view of `cache` over `mem`, with the counters of its requests.
    fn handle(
        mem: &Arc<MemoryStorage>,
        cache: &Arc<MdtFileCache>,
    ) -> (MdtCached, Arc<crate::storage::IoStats>) {
        let counted = Instrumented::new(mem.clone());
        let stats = counted.stats();
        (MdtCached::new(Arc::new(counted), cache.clone()), stats)
    }

    const DIR: &str = ".hoodie/metadata/record_index";

    #[test]
    fn a_second_handle_reads_listed_files_from_the_cache() {
        let (mem, cache) = setup(1 << 20);
        futures::executor::block_on(async {
            let (first, io) = handle(&mem, &cache);
            // Not listed by this handle: straight through, nothing kept.
            first.get(LOG, Purpose::MdtDataBlock).await.unwrap();
            assert_eq!(cache.stats().bytes, 0);
            first.list(DIR, false).await.unwrap();
            assert_eq!(
                &first.get(LOG, Purpose::MdtDataBlock).await.unwrap()[..],
                b"version one"
            );
            first
                .get_range(BASE, 10..20, Purpose::MdtDataBlock)
                .await
                .unwrap();
            first
                .read(BASE, &[ByteRange::Suffix(50)], Purpose::MdtIndexBlock)
                .await
                .unwrap();
            assert_eq!(io.snapshot().gets, 4);

            let (second, io) = handle(&mem, &cache);
            second.list(DIR, false).await.unwrap();
            assert_eq!(
                &second.get(LOG, Purpose::MdtDataBlock).await.unwrap()[..],
                b"version one"
            );
            let f = second
                .read(
                    BASE,
                    &[ByteRange::Bounded(12..18), ByteRange::Suffix(10)],
                    Purpose::MdtDataBlock,
                )
                .await
                .unwrap();
            assert_eq!(&f.parts[0][..], &[12, 13, 14, 15, 16, 17]);
            assert_eq!(&f.parts[1][..], &(190u8..200).collect::<Vec<_>>()[..]);
            assert_eq!(f.size, Some(200));
            assert_eq!(io.snapshot().gets, 0, "all from the cache");
            // Bytes not held yet are fetched, and kept.
            second
                .get_range(BASE, 30..40, Purpose::MdtDataBlock)
                .await
                .unwrap();
            assert_eq!(io.snapshot().gets, 1);
            assert_eq!(cache.stats().hits, 3);
        });
    }

    #[test]
    fn a_rewritten_or_unlisted_file_is_read_again() {
        let (mem, cache) = setup(1 << 20);
        futures::executor::block_on(async {
            let (first, _) = handle(&mem, &cache);
            first.list(DIR, false).await.unwrap();
            first.get(LOG, Purpose::MdtDataBlock).await.unwrap();

            // Appended to (another size): the next listing shows it, the new bytes are read.
            mem.insert(LOG, b"version one, appended".to_vec(), Some(1));
            let (second, io) = handle(&mem, &cache);
            second.list(DIR, false).await.unwrap();
            assert_eq!(
                &second.get(LOG, Purpose::MdtDataBlock).await.unwrap()[..],
                b"version one, appended"
            );
            assert_eq!(io.snapshot().gets, 1);

            // Replaced with the same size (another ETag): read again.
            mem.insert(LOG, b"version TWO, appended".to_vec(), Some(2));
            let (third, io) = handle(&mem, &cache);
            third.list(DIR, false).await.unwrap();
            assert_eq!(
                &third.get(LOG, Purpose::MdtDataBlock).await.unwrap()[..],
                b"version TWO, appended"
            );
            assert_eq!(io.snapshot().gets, 1);

            // Deleted: a listing without it means it is never answered from the cache.
            mem.delete(LOG).await.unwrap();
            third.list(DIR, false).await.unwrap();
            assert!(third.get(LOG, Purpose::MdtDataBlock).await.is_err());
            // A handle that never listed it reads through as well.
            let (fourth, _) = handle(&mem, &cache);
            assert!(fourth.get(LOG, Purpose::MdtDataBlock).await.is_err());

            // What a writer puts is kept, and served once a listing shows that version.
            let new_log = ".hoodie/metadata/record_index/.record-index-0000-0_2.log.1_0-1-1";
            fourth
                .put(new_log, Bytes::from_static(b"written"), PutMode::Create)
                .await
                .unwrap();
            assert_eq!(cache.stats().written, 1);
            let (fifth, io) = handle(&mem, &cache);
            fifth.list(DIR, false).await.unwrap();
            assert_eq!(
                &fifth.get(new_log, Purpose::MdtDataBlock).await.unwrap()[..],
                b"written"
            );
            assert_eq!(io.snapshot().gets, 0);
        });
    }

    #[test]
    fn the_budget_evicts_the_least_recently_used() {
        let (mem, cache) = setup(400);
        futures::executor::block_on(async {
            let (h, io) = handle(&mem, &cache);
            h.list(DIR, false).await.unwrap();
            h.get_range(BASE, 0..100, Purpose::MdtDataBlock)
                .await
                .unwrap();
            h.get(LOG, Purpose::MdtDataBlock).await.unwrap();
            // Over a quarter of the budget: never kept.
            h.get(BASE, Purpose::MdtDataBlock).await.unwrap();
            assert_eq!(cache.stats().bytes, 100 + 11);
            h.get(LOG, Purpose::MdtDataBlock).await.unwrap();
            // Over the budget: the base (least recently used) goes.
            let big = ".hoodie/metadata/files/files-0000-0_0-1-1_1.hfile";
            mem.insert(big, vec![7u8; 100], Some(1));
            let other = ".hoodie/metadata/files/files-0001-0_0-1-1_1.hfile";
            mem.insert(other, vec![8u8; 100], Some(1));
            let yet = ".hoodie/metadata/files/files-0002-0_0-1-1_1.hfile";
            mem.insert(yet, vec![9u8; 100], Some(1));
            h.list(".hoodie/metadata/files", false).await.unwrap();
            for p in [big, other, yet] {
                h.get(p, Purpose::MdtDataBlock).await.unwrap();
            }
            let s = cache.stats();
            assert!(s.bytes <= 400, "{s:?}");
            assert_eq!(s.evicted, 1, "{s:?}");
            let before = io.snapshot().gets;
            h.get(LOG, Purpose::MdtDataBlock).await.unwrap();
            assert_eq!(io.snapshot().gets, before, "the log was used last: kept");
            h.get_range(BASE, 0..100, Purpose::MdtDataBlock)
                .await
                .unwrap();
            assert_eq!(io.snapshot().gets, before + 1, "the base was evicted");
            // A budget of 0 holds nothing.
            let none = Arc::new(MdtFileCache::new(0));
            let (h, _) = handle(&mem, &none);
            h.list(DIR, false).await.unwrap();
            h.get(LOG, Purpose::MdtDataBlock).await.unwrap();
            assert_eq!(none.stats().bytes, 0);
        });
    }
}
