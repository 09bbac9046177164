//! Hudi's `HoodieTableMetaClient`: a table's storage, `hoodie.properties` and timeline,
//! loaded once, with session caches of immutable things (commit metadata, Parquet footers,
//! the schema history). Everything above it (the metadata table, merging, snapshots,
//! planning, the writer) starts here; what it loads is put together in
//! [`crate::snapshot`].

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::base_file::Footer;
use crate::config::{TableConfig, PROPERTIES_BACKUP, PROPERTIES_FILE};
use crate::error::{HudiError, Result};
use crate::storage::layers::mdt_prefetch::MdtOpenPrefetch;
use crate::storage::mdt_cache::{MdtCached, MdtFileCache};
use crate::storage::{Instrumented, IoSnapshot, IoStats, ObjectMeta, Purpose, Storage, StorageExt};
use crate::timeline::{history, CommitMetadata, Instant, Timeline};

/// Where tables of timeline layout 2 (table versions 8+) keep their instants by default.
const CURRENT_TIMELINE_DIR: &str = ".hoodie/timeline";

/// An InternalSchema history file's bytes and its path.
pub type SchemaHistory = (bytes::Bytes, String);

pub struct MetaClient {
    storage: Arc<dyn Storage>,
    /// The session cache `storage` reads through (none for a table nested in another).
    cache: Option<Arc<crate::storage::cache::Cached>>,
    io: Arc<IoStats>,
    config: TableConfig,
    timeline: Mutex<Arc<Timeline>>,
    /// Counts the listings the active timeline was replaced by (changed only with the
    /// timeline's lock held): what the metadata table opened against is matched by it.
    listing: AtomicU64,
    commit_metadata: Mutex<HashMap<String, Arc<CommitMetadata>>>,
    /// One read per instant at a time: planning asks for the same commit from tasks that
    /// run together (the schema, the listing), and the second waits for the first's answer.
    commit_reads: Mutex<HashMap<String, Arc<futures::lock::Mutex<()>>>>,
    footers: Mutex<HashMap<String, Footer>>,
    /// The footer length of the base file read last (or probed): where the next one's
    /// footer likely starts ([`crate::base_file::read_footer_and_data`]).
    footer_len_hint: Mutex<Option<u64>>,
    /// The InternalSchema history file (`.hoodie/.schema/`; `None` inside when the table has
    /// none) and the number of the timeline listing it was read under.
    schema_history: futures::lock::Mutex<Option<(u64, Option<SchemaHistory>)>>,
    /// The metadata table's files asked for beside the open (`storage` reads through it).
    mdt_prefetch: Option<Arc<MdtOpenPrefetch>>,
}

impl std::fmt::Debug for MetaClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetaClient")
            .field("location", &self.storage.location())
            .field("name", &self.config.name)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl MetaClient {
    /// Opens the table whose base path is the root of `storage`: `hoodie.properties` and
    /// the active timeline, fetched concurrently (one round trip for the default layouts).
    pub async fn open(storage: Arc<dyn Storage>) -> Result<MetaClient> {
        Self::open_with_cache(storage, None).await
    }

    /// [`MetaClient::open`], reading metadata-table files through `mdt_cache` (shared with
    /// other handles, e.g. every request of a worker isolate) when given.
    pub async fn open_with_cache(
        storage: Arc<dyn Storage>,
        mdt_cache: Option<Arc<MdtFileCache>>,
    ) -> Result<MetaClient> {
        Self::open_with(storage, mdt_cache, None).await
    }

    /// [`MetaClient::open_with_cache`]; with `prefetch_mdt` (the metadata table's
    /// directory), its properties and a recursive listing of it are asked for in the same
    /// round trip (two requests more, spent even when the table has none): a query planned
    /// from the metadata table then starts one round trip earlier.
    pub async fn open_with(
        storage: Arc<dyn Storage>,
        mdt_cache: Option<Arc<MdtFileCache>>,
        prefetch_mdt: Option<&str>,
    ) -> Result<MetaClient> {
        let instrumented = Instrumented::new(storage);
        let io = instrumented.stats();
        let mut counted: Arc<dyn Storage> = Arc::new(instrumented);
        // Outside the counters: what the shared cache answers costs no request.
        if let Some(cache) = mdt_cache {
            counted = Arc::new(MdtCached::new(counted, cache));
        }
        // Immutable objects are kept for the session, outside the counters: a repeated read
        // of an instant file, footer or column chunk costs no request.
        let cache = Arc::new(crate::storage::cache::Cached::new(
            counted,
            crate::storage::cache::DEFAULT_CAPACITY,
        ));
        let Some(mdt_dir) = prefetch_mdt else {
            return Self::open_counted(cache.clone(), Some(cache), io, None).await;
        };
        let prefetch = Arc::new(MdtOpenPrefetch::new(
            cache.clone(),
            mdt_dir,
            PROPERTIES_FILE,
        ));
        let (client, ()) = futures::join!(
            Self::open_counted(prefetch.clone(), Some(cache), io, Some(prefetch.clone())),
            prefetch.fetch(),
        );
        client
    }

    /// The same table opened again (properties and timeline re-read), on this one's
    /// storage, session cache and counters: how a handle sees its own writes.
    pub async fn reopen(&self) -> Result<MetaClient> {
        // What the first open prefetched is older than what this one lists.
        self.end_mdt_prefetch();
        let fresh = Self::open_counted(
            self.storage.clone(),
            self.cache.clone(),
            self.io.clone(),
            None,
        )
        .await?;
        fresh.keep_commit_metadata_of(self);
        Ok(fresh)
    }

    /// Takes over what `earlier` decoded of instants completed in both timelines from the
    /// same file: a handle reopened after every write would decode them all again (the
    /// small-file sizing reads the last ten). Only instants still on the timeline are kept,
    /// so a long-lived handle holds no more than its active timeline.
    fn keep_commit_metadata_of(&self, earlier: &MetaClient) {
        let (before, now) = (earlier.timeline(), self.timeline());
        let held = lock(&earlier.commit_metadata);
        if held.is_empty() {
            return;
        }
        let mut kept = lock(&self.commit_metadata);
        for instant in now.completed() {
            let same = before.get(&instant.requested_time).is_some_and(|b| {
                b.is_completed() && b.file == instant.file && !b.archived && !instant.archived
            });
            if let Some(meta) = held.get(&instant.requested_time).filter(|_| same) {
                kept.insert(instant.requested_time.clone(), meta.clone());
            }
        }
    }

    /// Opens a table inside another one's storage (the metadata table), sharing its
    /// counters and session cache instead of stacking a second pair.
    pub(crate) async fn open_nested(parent: &MetaClient, dir: &str) -> Result<MetaClient> {
        let storage = Arc::new(crate::storage::prefixed::Prefixed::new(
            parent.storage.clone(),
            dir,
        ));
        Self::open_counted(storage, None, parent.io.clone(), None).await
    }

    async fn open_counted(
        storage: Arc<dyn Storage>,
        cache: Option<Arc<crate::storage::cache::Cached>>,
        io: Arc<IoStats>,
        mdt_prefetch: Option<Arc<MdtOpenPrefetch>>,
    ) -> Result<MetaClient> {
        // The current layout's timeline is listed beside the properties; an older table's
        // (`.hoodie` itself) costs a second round trip instead of a request on every open.
        let (props, current_layout) = futures::join!(
            read_properties(&*storage),
            storage.list(CURRENT_TIMELINE_DIR, false),
        );
        let config = props?;
        let listing = if config.timeline_dir == CURRENT_TIMELINE_DIR {
            current_layout?
        } else {
            storage.list(&config.timeline_dir, false).await?
        };
        let timeline = Timeline::from_listing(&listing, &config);
        Ok(MetaClient {
            storage,
            cache,
            io,
            config,
            timeline: Mutex::new(Arc::new(timeline)),
            listing: AtomicU64::new(0),
            commit_metadata: Mutex::new(HashMap::new()),
            commit_reads: Mutex::new(HashMap::new()),
            footers: Mutex::new(HashMap::new()),
            footer_len_hint: Mutex::new(None),
            schema_history: futures::lock::Mutex::new(None),
            mdt_prefetch,
        })
    }

    /// Stops answering from what the open prefetched of the metadata table (once it is
    /// open, later listings must see it as it is then); whether anything was held.
    pub(crate) fn end_mdt_prefetch(&self) -> bool {
        self.mdt_prefetch.as_ref().is_some_and(|p| p.end())
    }

    /// Reads of `paths` (`bytes` in all) around the session cache while the answer lives,
    /// when they are more than it holds ([`crate::storage::cache::Cached::pass_through`]).
    pub fn around_cache(
        &self,
        paths: Vec<String>,
        bytes: u64,
    ) -> Option<crate::storage::cache::PassThrough> {
        let cache = self.cache.as_ref()?;
        (bytes > cache.capacity()).then(|| cache.pass_through(paths))
    }

    pub fn config(&self) -> &TableConfig {
        &self.config
    }

    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    pub fn io(&self) -> IoSnapshot {
        self.io.snapshot()
    }

    /// Records something a read noticed and worked around; it shows in `io().warnings`.
    pub fn warn(&self, message: String) {
        self.io.warn(vec![message]);
    }

    pub fn timeline(&self) -> Arc<Timeline> {
        lock(&self.timeline).clone()
    }

    /// The timeline with the number of the listing its active instants came from (archived
    /// instants loaded since do not change it).
    pub fn listed_timeline(&self) -> (Arc<Timeline>, u64) {
        let held = lock(&self.timeline);
        (held.clone(), self.listing.load(Ordering::SeqCst))
    }

    /// Takes the active timeline from a fresh listing of its directory; whether it differed
    /// from the one held (archived instants, when loaded, are kept).
    pub fn refresh_timeline(&self, listing: &[ObjectMeta]) -> bool {
        let fresh = Timeline::from_listing(listing, &self.config);
        let mut held = lock(&self.timeline);
        let active: Vec<&Instant> = held.instants.iter().filter(|i| !i.archived).collect();
        if active.len() == fresh.instants.len()
            && active.iter().zip(&fresh.instants).all(|(a, b)| *a == b)
        {
            return false;
        }
        let mut updated = fresh;
        if held.history_loaded {
            let mut archived: Vec<Instant> = held
                .instants
                .iter()
                .filter(|i| i.archived)
                .cloned()
                .collect();
            archived.append(&mut updated.instants);
            updated.instants = archived;
            updated.archived_content = held.archived_content.clone();
            updated.history_loaded = true;
        }
        *held = Arc::new(updated);
        self.listing.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// Lists the active timeline again (after this session changed it, e.g. a rollback).
    pub async fn reload_timeline(&self) -> Result<Arc<Timeline>> {
        let listing = self.storage.list(&self.config.timeline_dir, false).await?;
        let fresh = Arc::new(Timeline::from_listing(&listing, &self.config));
        let mut held = lock(&self.timeline);
        *held = fresh.clone();
        self.listing.fetch_add(1, Ordering::SeqCst);
        Ok(fresh)
    }

    /// Loads instants archived out of the active timeline (v6 archive, v8+ LSM history),
    /// once.
    pub async fn load_history(&self) -> Result<Arc<Timeline>> {
        let current = self.timeline();
        if current.history_loaded {
            return Ok(current);
        }
        let archived = history::load(&*self.storage, &self.config).await?;
        // Added to the timeline held now, not to `current`: a refresh that landed during the
        // load must not be undone.
        let mut held = lock(&self.timeline);
        if !held.history_loaded {
            let mut updated = (**held).clone();
            updated.add_archived(archived);
            *held = Arc::new(updated);
        }
        Ok(held.clone())
    }

    /// Commit metadata of a completed instant (cached: completed instants are immutable).
    pub async fn commit_metadata(&self, instant: &Instant) -> Result<Arc<CommitMetadata>> {
        let key = instant.requested_time.clone();
        if let Some(m) = lock(&self.commit_metadata).get(&key) {
            return Ok(m.clone());
        }
        let gate = lock(&self.commit_reads)
            .entry(key.clone())
            .or_default()
            .clone();
        let _reading = gate.lock().await;
        if let Some(m) = lock(&self.commit_metadata).get(&key) {
            return Ok(m.clone());
        }
        // Boxed: callers nest this future deeply (debug builds keep it on their stack).
        let json = Box::pin(self.instant_content(instant)).await?;
        let origin = if instant.archived {
            format!("archived instant {key}")
        } else {
            instant.file.clone()
        };
        let meta = Arc::new(CommitMetadata::from_json(json, &origin)?);
        lock(&self.commit_metadata).insert(key, meta.clone());
        Ok(meta)
    }

    /// The decoded content of an instant's current file (archived instants carry theirs).
    pub async fn instant_content(&self, instant: &Instant) -> Result<serde_json::Value> {
        if instant.archived {
            return self
                .timeline()
                .archived_content
                .get(&instant.requested_time)
                .cloned()
                .ok_or_else(|| HudiError::NotFound {
                    path: format!("archived instant {}", instant.requested_time),
                });
        }
        let bytes = self
            .storage
            .get(&instant.file, Purpose::CommitMetadata)
            .await?;
        crate::timeline::metadata::decode_instant_file(&bytes, &instant.file)
    }

    /// The plan stored in an instant's `.requested` file (compaction, clustering, ...).
    pub async fn instant_plan(&self, instant: &Instant) -> Result<Option<serde_json::Value>> {
        let Some(path) = &instant.requested_file else {
            return Ok(None);
        };
        let bytes = self.storage.get(path, Purpose::Timeline).await?;
        crate::timeline::metadata::decode_instant_file(&bytes, path).map(Some)
    }

    /// Commit metadata of many instants, fetched concurrently.
    pub async fn commit_metadata_of(
        &self,
        instants: &[&Instant],
    ) -> Result<Vec<Arc<CommitMetadata>>> {
        futures::future::try_join_all(instants.iter().map(|i| self.commit_metadata(i))).await
    }

    /// Parquet footer of a base file (cached).
    pub async fn footer(&self, path: &str, size: Option<u64>) -> Result<Footer> {
        self.footer_and_data(path, size, 0).await
    }

    /// [`Self::footer`], read with the data before it when that is at most `data_limit`
    /// bytes and the footer's head costs a request anyway (see
    /// [`crate::base_file::read_footer_and_data`]); the session keeps the footer alone.
    pub async fn footer_and_data(
        &self,
        path: &str,
        size: Option<u64>,
        data_limit: u64,
    ) -> Result<Footer> {
        if let Some(f) = lock(&self.footers).get(path) {
            return Ok(f.clone());
        }
        let hint = self.footer_len_hint();
        let footer =
            crate::base_file::read_footer_and_data(&*self.storage, path, size, data_limit, hint)
                .await?;
        *lock(&self.footer_len_hint) = Some(footer.footer_len);
        lock(&self.footers).insert(path.to_string(), footer.without_data());
        Ok(footer)
    }

    /// The footer length of the base file read (or probed) last: what a footer read fetches
    /// besides its head and tail when it knows it.
    pub(crate) fn footer_len_hint(&self) -> Option<u64> {
        *lock(&self.footer_len_hint)
    }

    /// Learns where base files' footers start before any is read, so the first footer
    /// reads fetch their heads with their tails: reads the last bytes of one of `base_files`
    /// (of median size; a session cache keeps them for its own footer read). Planning runs
    /// it beside an index lookup, in a round trip it waits for anyway. A hint only: a file
    /// that cannot tell is passed over without an error.
    pub async fn probe_footer_len(&self, base_files: impl IntoIterator<Item = (String, u64)>) {
        if self.footer_len_hint().is_some() {
            return;
        }
        let mut parquet: Vec<(String, u64)> = base_files
            .into_iter()
            .filter(|(path, size)| path.ends_with(".parquet") && *size >= 12)
            .collect();
        if parquet.is_empty() {
            return;
        }
        let mid = parquet.len() / 2;
        let (path, size) = parquet.select_nth_unstable_by_key(mid, |f| f.1).1.clone();
        let tail = crate::base_file::FOOTER_PREFETCH.min(size);
        let range = crate::storage::ByteRange::Bounded(size - tail..size);
        let Ok(fetched) = self.storage.read(&path, &[range], Purpose::Footer).await else {
            return;
        };
        let Some(end) = fetched.parts.first().filter(|b| b.len() as u64 == tail) else {
            return;
        };
        if let Ok(len) = crate::base_file::footer_len(end, size, true, &path) {
            lock(&self.footer_len_hint).get_or_insert(len);
        }
    }

    /// The newest InternalSchema history file of a completed write (it lists every version)
    /// and its path; read again only when the timeline was listed anew (an `ALTER TABLE`
    /// elsewhere adds a version).
    pub async fn schema_history(&self) -> Result<Option<SchemaHistory>> {
        let listing = self.listing.load(Ordering::SeqCst);
        let mut held = self.schema_history.lock().await;
        match &*held {
            Some((at, history)) if *at == listing => Ok(history.clone()),
            _ => {
                let history = self.read_schema_history().await?;
                *held = Some((listing, history.clone()));
                Ok(history)
            }
        }
    }

    /// The newest completed file of the InternalSchema history; it lists every version.
    async fn read_schema_history(&self) -> Result<Option<SchemaHistory>> {
        let dir = crate::schema::evolution::HISTORY_DIR;
        let listed = match self.storage.list(dir, false).await {
            Ok(l) => l,
            Err(HudiError::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        // A write that failed after its history file (Java writes it before completing the
        // commit) leaves one no reader may take, as Java's storage manager skips it.
        let timeline = self.timeline();
        let completed: HashSet<&str> = timeline
            .completed_writes()
            .map(|i| i.requested_time.as_str())
            .collect();
        let newest = listed
            .iter()
            .filter(|o| {
                let file = crate::schema::evolution::history_file_instant(&o.path);
                !o.is_dir && file.is_some_and(|(t, done)| done && completed.contains(t))
            })
            .max_by(|a, b| a.path.cmp(&b.path));
        let Some(file) = newest else {
            return Ok(None);
        };
        let bytes = self
            .storage
            .get(&file.path, Purpose::CommitMetadata)
            .await?;
        Ok(Some((bytes, file.path.clone())))
    }
}

async fn read_properties(storage: &dyn Storage) -> Result<TableConfig> {
    let (bytes, path) = match storage.get(PROPERTIES_FILE, Purpose::Properties).await {
        Ok(b) => (b, PROPERTIES_FILE),
        // Java's update protocol briefly leaves only the backup (HoodieTableConfig.modify).
        Err(HudiError::NotFound { .. }) => {
            match storage.get(PROPERTIES_BACKUP, Purpose::Properties).await {
                Ok(b) => (b, PROPERTIES_BACKUP),
                Err(HudiError::NotFound { .. }) => {
                    return Err(HudiError::NotFound {
                        path: format!(
                            "{}/{PROPERTIES_FILE} (not a Hudi table?)",
                            storage.location()
                        ),
                    })
                }
                Err(e) => return Err(e),
            }
        }
        Err(e) => return Err(e),
    };
    let text =
        std::str::from_utf8(&bytes).map_err(|_| HudiError::corrupt(path, "not UTF-8 text"))?;
    TableConfig::parse(text, path)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
