//! Hudi's `HoodieTableMetaClient`: a table's storage, `hoodie.properties` and timeline,
//! loaded once, with session caches of immutable things (commit metadata, Parquet footers).
//! Everything above it (the metadata table, merging, planning, the writer) starts here.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arrow_schema::{Schema, SchemaRef};

use crate::base_file::Footer;
use crate::config::{TableConfig, PROPERTIES_BACKUP, PROPERTIES_FILE};
use crate::error::{HudiError, Result};
use crate::schema::align;
use crate::storage::layers::mdt_prefetch::MdtOpenPrefetch;
use crate::storage::mdt_cache::{MdtCached, MdtFileCache};
use crate::storage::{Instrumented, IoSnapshot, IoStats, ObjectMeta, Purpose, Storage, StorageExt};
use crate::timeline::{history, CommitMetadata, Instant, Timeline, Visibility};

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
        Self::open_counted(
            self.storage.clone(),
            self.cache.clone(),
            self.io.clone(),
            None,
        )
        .await
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

    /// File groups replaced (insert overwrite, clustering) by replace commits visible to a query.
    pub async fn replaced_file_groups(
        &self,
        visibility: &Visibility,
    ) -> Result<HashSet<(String, String)>> {
        let timeline = self.timeline();
        let replaces: Vec<&Instant> = timeline
            .completed_writes()
            .filter(|i| {
                i.action == crate::timeline::action::REPLACE_COMMIT
                    && visibility.is_committed(&i.requested_time)
            })
            .collect();
        let metas = self.commit_metadata_of(&replaces).await?;
        Ok(metas
            .iter()
            .flat_map(|m| {
                m.replaced_file_ids()
                    .map(|(p, f)| (p.to_string(), f.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect())
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

    /// The writer schema (Avro JSON, without meta fields) visible at `visibility`, and the
    /// file it came from: the newest visible commit's, else the one the table was created
    /// with (Hudi's `TableSchemaResolver`).
    pub async fn table_avro_schema(
        &self,
        visibility: &Visibility,
    ) -> Result<Option<(String, String)>> {
        if let Some((meta, origin)) = self.schema_commit(visibility).await? {
            let text = meta.schema().unwrap_or_default();
            return Ok(Some((text.to_string(), origin)));
        }
        Ok(self
            .config
            .property("hoodie.table.create.schema")
            .filter(|t| !t.trim().is_empty())
            .map(|t| (t.to_string(), PROPERTIES_FILE.to_string())))
    }

    /// Schema evolution on read at `visibility` (column ids): `None` for tables written
    /// without it, the common case, found in the commit [`Self::table_avro_schema`] reads.
    pub async fn schema_evolution(
        &self,
        visibility: &Visibility,
    ) -> Result<Option<Arc<crate::schema::evolution::SchemaEvolution>>> {
        use crate::schema::evolution::SchemaEvolution;
        let Some((text, origin)) = self.latest_internal_schema(visibility).await? else {
            return Ok(None);
        };
        let history = self.schema_history().await?;
        let history = history
            .as_ref()
            .map(|(bytes, path)| (bytes.as_ref(), path.as_str()));
        Ok(Some(Arc::new(SchemaEvolution::new(
            &text, &origin, history,
        )?)))
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

    /// `latest_schema` (InternalSchema JSON) of the commit the schema at `visibility` comes
    /// from, and that commit's file: present when it was written with schema evolution on.
    pub async fn latest_internal_schema(
        &self,
        visibility: &Visibility,
    ) -> Result<Option<(String, String)>> {
        let Some((meta, origin)) = self.schema_commit(visibility).await? else {
            return Ok(None);
        };
        let key = crate::schema::evolution::LATEST_SCHEMA_KEY;
        Ok(meta.extra(key).map(|s| (s.to_string(), origin)))
    }

    /// The newest commit visible at `visibility` whose metadata holds a schema, and where it
    /// came from (its file; an archived one's instant).
    async fn schema_commit(
        &self,
        visibility: &Visibility,
    ) -> Result<Option<(Arc<CommitMetadata>, String)>> {
        let timeline = self.timeline();
        for instant in timeline
            .completed_writes()
            .rev()
            .filter(|i| visibility.is_committed(&i.requested_time))
        {
            let meta = self.commit_metadata(instant).await?;
            if meta.schema().is_some() {
                let origin = if instant.archived {
                    instant.requested_time.clone()
                } else {
                    instant.file.clone()
                };
                return Ok(Some((meta, origin)));
            }
        }
        Ok(None)
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

    /// The table schema visible at `visibility` as Arrow: [`Self::table_avro_schema`], with
    /// the meta columns when they are populated. Every column is nullable.
    pub async fn table_schema(&self, visibility: &Visibility) -> Result<SchemaRef> {
        let data = match self.table_avro_schema(visibility).await? {
            Some((text, origin)) => crate::schema::arrow_schema_from_avro_text(&text, &origin)?,
            None => Schema::empty(),
        };
        Ok(self.read_schema_of(data))
    }

    /// The schema reads see for writer schema `data`: partition columns a table does not
    /// store appended, the meta columns when populated, every column nullable.
    pub fn read_schema_of(&self, mut data: Schema) -> SchemaRef {
        if self.config.drop_partition_columns {
            // Not stored, so not in the writer's schema.
            data = crate::schema::with_partition_columns(
                &data,
                &self.config.partition_fields,
                crate::schema::partition_column_as_string,
            );
        }
        if self.config.populate_meta_fields {
            align::nullable(&crate::schema::with_meta_columns(&data))
        } else {
            align::nullable(&data)
        }
    }

    /// Every data file under the table's partitions, by directory listing. Where the store
    /// can start a listing past a key (S3 `start-after`), one listing past `.hoodie/` covers
    /// every directory that sorts after it, beside the root's own listing (root files, and
    /// directories that sort before `.hoodie`, listed next). Hive-style partition
    /// directories all start with a field name, which sorts after `.hoodie/`: that one
    /// listing is all. When it stops at its first page, the directories from the last one
    /// it reached are listed one by one and concurrently, as on stores that cannot skip.
    pub async fn list_data_files(&self) -> Result<Vec<(String, ObjectMeta)>> {
        if !self.storage.capabilities().lists_dot_files
            && self.config.table_type == crate::config::TableType::MergeOnRead
        {
            // A JSON directory index hides log files (`.<fileId>_<instant>.log.*`): listing
            // would silently drop every update since the last compaction.
            return Err(HudiError::unsupported_in(
                "listing partitions of a Merge-On-Read table through a directory index that hides dot-files (log files); \
                 write a listing manifest (.hoodie/hudi-edge-manifest.json), use an S3 listing, or plan from the metadata table",
                self.storage.location(),
            ));
        }
        // `.hoodie0` sorts right after every `.hoodie/…` key ('0' follows '/').
        const PAST_HOODIE: &str = ".hoodie0";
        let top_dir = |path: &str| path.split_once('/').map(|(d, _)| d.to_string());
        let capabilities = self.storage.capabilities();
        let skips_ahead = capabilities.lists_after || capabilities.listing.is_some();
        let hive_only = self.config.is_partitioned() && self.config.hive_style_partitioning;
        let (mut root, mut after) = (None, None);
        if skips_ahead && hive_only {
            after = self.storage.list_after(PAST_HOODIE).await?;
        } else if skips_ahead {
            let (r, a) = futures::try_join!(
                self.storage.list("", false),
                self.storage.list_after(PAST_HOODIE)
            )?;
            (root, after) = (Some(r), a);
        }
        // Directories from `relist_from` on (all, without a listing past `.hoodie/`) and
        // those before `.hoodie` are listed one by one.
        let mut relist_from = Some(String::new());
        let mut files = Vec::new();
        if let Some(after) = after {
            // The last directory a first page reached may go on in the next page.
            let last = || after.objects.iter().map(|m| m.path.as_str()).max();
            relist_from = (!after.complete).then(|| last().and_then(top_dir).unwrap_or_default());
            files = after
                .objects
                .into_iter()
                .filter(|m| match top_dir(&m.path) {
                    Some(d) => {
                        !d.starts_with(".hoodie")
                            && relist_from.as_ref().is_none_or(|from| d < *from)
                    }
                    None => false,
                })
                .collect();
        }
        let root = match root {
            Some(r) => r,
            // Hudi writes no data at the root of a partitioned table.
            None if relist_from.is_none() => Vec::new(),
            None => self.storage.list("", false).await?,
        };
        let mut out: Vec<(String, ObjectMeta)> = root
            .iter()
            .filter(|m| !m.is_dir)
            .map(|m| (String::new(), m.clone()))
            .collect();
        let dirs: Vec<&ObjectMeta> = root
            .iter()
            .filter(|m| m.is_dir && !m.name().starts_with(".hoodie"))
            .filter(|m| {
                let d = m.path.as_str();
                d < PAST_HOODIE || relist_from.as_deref().is_some_and(|from| d >= from)
            })
            .collect();
        let listed =
            futures::future::try_join_all(dirs.iter().map(|d| self.storage.list(&d.path, true)))
                .await?;
        files.extend(listed.into_iter().flatten().filter(|m| !m.is_dir));
        for m in files {
            let partition = match m.path.rfind('/') {
                Some(i) => m.path[..i].to_string(),
                None => String::new(),
            };
            out.push((partition, m));
        }
        Ok(out)
    }

    /// Hudi's checks before a time-travel read (`TimelineUtils.validateTimestampAsOf`): the
    /// instant must precede every incomplete commit, and the cleaner must not have removed
    /// the files it needs.
    pub async fn validate_time_travel(&self, as_of: &str) -> Result<()> {
        use crate::timeline::{action, compare_instant_times};
        let timeline = self.timeline();
        let first_incomplete = timeline.pending().find(|i| {
            matches!(
                i.requested_action(),
                action::COMMIT | action::DELTA_COMMIT | action::REPLACE_COMMIT | action::COMPACTION
            )
        });
        if let Some(i) = first_incomplete {
            if compare_instant_times(as_of, &i.requested_time).is_ge() {
                return Err(HudiError::invalid(format!(
                    "time travel's timestamp '{as_of}' must be earlier than the first incomplete commit timestamp '{}'",
                    i.requested_time
                )));
            }
        }
        let Some(clean) = timeline
            .completed()
            .rfind(|i| i.action == action::CLEAN && !i.archived)
        else {
            return Ok(());
        };
        let content = self.instant_content(clean).await?;
        let retain = content
            .get("earliestCommitToRetain")
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty());
        let (limit, message) = match retain {
            Some(r) => (r.to_string(), "the cleaner cleaned up the timestamp of interest; retain more commits with the cleaner for time travel to work"),
            None => match timeline.completed_writes().find(|i| !i.archived) {
                Some(first) => (first.requested_time.clone(), "commits before the active timeline were cleaned or archived"),
                None => return Ok(()),
            },
        };
        if compare_instant_times(&limit, as_of).is_gt() {
            return Err(HudiError::invalid(format!(
                "{message} (as of {as_of}, earliest retained {limit}, clean {})",
                clean.requested_time
            )));
        }
        Ok(())
    }

    /// A listing must hold every file the newest visible commit wrote: otherwise the view
    /// would silently fall back to older file versions. (Replaced groups and cleaned older
    /// versions are fine; a missing file of the latest commit means damage.)
    pub async fn check_latest_commit_files(
        &self,
        visibility: &Visibility,
        listed: &[crate::file_group::view::DataFile],
    ) -> Result<()> {
        let timeline = self.timeline();
        let Some(latest) = timeline
            .completed_writes()
            .rev()
            .find(|i| visibility.is_committed(&i.requested_time))
        else {
            return Ok(());
        };
        let meta = self.commit_metadata(latest).await?;
        let present: HashSet<String> = listed
            .iter()
            .map(|f| crate::storage::join(&f.partition, &f.name))
            .collect();
        for (_, stat) in meta.write_stats() {
            let Some(path) = stat.path.as_deref().map(|p| p.trim_start_matches('/')) else {
                continue;
            };
            if !path.is_empty() && !present.contains(path) {
                return Err(HudiError::NotFound {
                    path: format!(
                        "{path} (written by commit {}, listed in {})",
                        latest.requested_time, latest.file
                    ),
                });
            }
        }
        Ok(())
    }

    /// File groups and slices as of an instant (latest when `None`), by listing.
    pub async fn file_system_view(
        &self,
        as_of: Option<&str>,
    ) -> Result<crate::file_group::view::FileSystemView> {
        let as_of = as_of
            .map(|t| crate::timeline::time::resolve_time(t, self.config.timezone))
            .transpose()?;
        let visibility = self.timeline().visibility_as_of(as_of.as_deref());
        // The replacecommits' metadata is read beside the listings: one round trip fewer.
        let (listed, replaced) = futures::try_join!(
            self.list_data_files(),
            self.replaced_file_groups(&visibility)
        )?;
        let files = listed
            .into_iter()
            .map(|(partition, m)| crate::file_group::view::DataFile {
                name: m.name().to_string(),
                partition,
                size: m.size,
            });
        Ok(crate::file_group::view::build(
            files,
            &visibility,
            &self.config,
            &replaced,
        ))
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
mod tests {
    use super::*;
    use crate::storage::memory::MemoryStorage;

    /// Data files as `partition/name`, and the listing requests they took.
    fn listed(storage: MemoryStorage, properties: &str) -> (Vec<String>, u64) {
        storage.insert(PROPERTIES_FILE, properties.to_string(), None);
        futures::executor::block_on(async {
            let client = MetaClient::open(Arc::new(storage)).await.unwrap();
            let before = client.io().requests;
            let mut files: Vec<String> = client
                .list_data_files()
                .await
                .unwrap()
                .into_iter()
                .map(|(p, m)| format!("{p}|{}", m.path))
                .collect();
            files.sort();
            (files, client.io().requests - before)
        })
    }

    fn table(paths: &[&str]) -> (MemoryStorage, MemoryStorage) {
        let (skipping, by_directory) = (
            MemoryStorage::new(),
            MemoryStorage::new().without_list_after(),
        );
        for p in paths {
            skipping.insert(p, "x", None);
            by_directory.insert(p, "x", None);
        }
        (skipping, by_directory)
    }

    const TIMELINE: &str = ".hoodie/timeline/20240101000000000_20240101000000001.commit";
    const MDT: &str = ".hoodie/metadata/files/.files-0000-0_00000000000000000.log.1_0-0-0";

    #[test]
    fn commit_metadata_asked_for_together_is_read_once() {
        let storage = MemoryStorage::new();
        storage.insert(
            PROPERTIES_FILE,
            "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=9\n",
            None,
        );
        storage.insert(TIMELINE, r#"{"partitionToWriteStats":{}}"#, None);
        // Reads yield once, so that the two asks are in flight together.
        let yielding = crate::hfile::test_support::Yielding(Arc::new(storage));
        futures::executor::block_on(async {
            let client = MetaClient::open(Arc::new(yielding)).await.unwrap();
            let timeline = client.timeline();
            let instant = timeline.instants.first().unwrap();
            let before = client.io().requests;
            let (a, b) = futures::join!(
                client.commit_metadata(instant),
                client.commit_metadata(instant)
            );
            assert!(Arc::ptr_eq(&a.unwrap(), &b.unwrap()));
            assert_eq!(client.io().requests - before, 1);
        });
    }

    #[test]
    fn a_listing_past_hoodie_finds_what_directory_listings_find() {
        // Value partitions may sort before `.hoodie` ("-1") or after it; a non-partitioned
        // table keeps log files at the root; `.hoodie*` directories hold no data.
        let paths = [
            TIMELINE,
            MDT,
            "-1/a.parquet",
            "-1/.a_20240101000000000.log.1_0-1-1",
            "2024/01/b.parquet",
            "zz/c.parquet",
            ".0d_20240101000000000.log.1_0-1-1",
            "e.parquet",
            ".hoodie_backup/f.parquet",
        ];
        let properties =
            "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n\
                          hoodie.table.partition.fields=v\n";
        let (skipping, by_directory) = table(&paths);
        let (fast, fast_requests) = listed(skipping, properties);
        let (slow, slow_requests) = listed(by_directory, properties);
        assert_eq!(fast, slow);
        assert_eq!(fast.len(), 6, "{fast:?}");
        // The root and the listing past `.hoodie/` together, then "-1" (it sorts before).
        assert_eq!(fast_requests, 3);
        assert_eq!(slow_requests, 4);
    }

    #[test]
    fn hive_style_partitions_take_one_listing() {
        let paths = [
            TIMELINE,
            MDT,
            "region=eu/a.parquet",
            "region=eu/.a_20240101000000000.log.1_0-1-1",
            "region=us/day=1/b.parquet",
        ];
        let properties = "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n\
                          hoodie.table.partition.fields=region\nhoodie.datasource.write.hive_style_partitioning=true\n";
        let (skipping, by_directory) = table(&paths);
        let (fast, fast_requests) = listed(skipping, properties);
        let (slow, slow_requests) = listed(by_directory, properties);
        assert_eq!(fast, slow);
        assert_eq!(
            fast,
            [
                "region=eu|region=eu/.a_20240101000000000.log.1_0-1-1",
                "region=eu|region=eu/a.parquet",
                "region=us/day=1|region=us/day=1/b.parquet"
            ]
        );
        assert_eq!((fast_requests, slow_requests), (1, 3));
    }

    #[test]
    fn a_first_page_that_stops_inside_a_partition_leaves_the_rest_to_directory_listings() {
        let mut paths = vec![TIMELINE.to_string(), MDT.to_string()];
        for region in ["eu", "us", "zz"] {
            for i in 0..4 {
                paths.push(format!("region={region}/{i}.parquet"));
            }
        }
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let properties = "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n\
                          hoodie.table.partition.fields=region\nhoodie.datasource.write.hive_style_partitioning=true\n";
        let (_, by_directory) = table(&paths);
        let (slow, _) = listed(by_directory, properties);
        assert_eq!(slow.len(), 12);
        // Pages of 6 keys end inside region=us: the page, the root, then us and zz.
        let (skipping, _) = table(&paths);
        let (paged, requests) = listed(skipping.with_pages_after(6), properties);
        assert_eq!(paged, slow);
        assert_eq!(requests, 4);
    }
}
