//! [`Table`]: the entry point. A Hudi table opened on a [`Storage`] — its meta client
//! (config, timeline, session caches) and its metadata table, opened on first use — with
//! every question a face asks of it: timeline, instants, file groups, plans and reads.
//! Each method delegates to the module that owns the noun.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};

use crate::error::{HudiError, Result};
use crate::file_group::view::FileSystemView;
use crate::meta_client::MetaClient;
use crate::metadata::{MetadataCache, MetadataTable};
use crate::read::cdc::{ChangeFeed, FeedPlan};
use crate::read::{Plan, ReadOptions, ReadResult, Scan};
use crate::snapshot::schema;
use crate::storage::mdt_cache::MdtFileCache;
use crate::storage::{IoSnapshot, Storage};
use crate::timeline::{CommitMetadata, Instant, Timeline};
use crate::write::{MdtInit, WriteOptions, WriteResult};

#[derive(Debug)]
pub struct Table {
    client: Arc<MetaClient>,
    metadata: MetadataCache,
}

impl Table {
    /// Opens the table whose base path is the root of `storage`: `hoodie.properties` and
    /// the active timeline, fetched concurrently (one round trip for the default layouts).
    pub async fn open(storage: Arc<dyn Storage>) -> Result<Table> {
        Self::open_with_cache(storage, None).await
    }

    /// Creates an empty table at the root of `storage` ([`crate::write::create`]) and opens it.
    pub async fn create(
        storage: Arc<dyn Storage>,
        table: &crate::write::create::NewTable,
    ) -> Result<Table> {
        crate::write::create::create_table(storage.as_ref(), table).await?;
        let created = Self::open(storage).await?;
        let settings = crate::metadata::config::MetadataConfig::parse(&table.options)?;
        match crate::write::services::mdt_init::initialize(created.client(), &settings, None)
            .await?
        {
            Some(_) => created.reopen().await,
            None => Ok(created),
        }
    }

    /// [`Table::open`], reading metadata-table files through `mdt_cache` when given: a cache
    /// that outlives this handle, so the next open of the table does not fetch again the
    /// MDT files that are still listed as they were.
    pub async fn open_with_cache(
        storage: Arc<dyn Storage>,
        mdt_cache: Option<Arc<MdtFileCache>>,
    ) -> Result<Table> {
        Self::open_with(storage, mdt_cache, false).await
    }

    /// [`Table::open_with_cache`]; with `prefetch_mdt` the metadata table's properties and
    /// files are asked for beside the table's own (see [`MetaClient::open_with`]): for a
    /// handle opened to query, which then plans one round trip sooner.
    pub async fn open_with(
        storage: Arc<dyn Storage>,
        mdt_cache: Option<Arc<MdtFileCache>>,
        prefetch_mdt: bool,
    ) -> Result<Table> {
        Ok(Table {
            client: Arc::new(
                MetaClient::open_with(
                    storage,
                    mdt_cache,
                    prefetch_mdt.then_some(crate::metadata::table::METADATA_DIR),
                )
                .await?,
            ),
            metadata: MetadataCache::default(),
        })
    }

    /// The table as it is now (after a write), sharing this handle's cache and counters.
    pub async fn reopen(&self) -> Result<Table> {
        Ok(Table {
            client: Arc::new(self.client.reopen().await?),
            metadata: MetadataCache::default(),
        })
    }

    pub fn client(&self) -> &Arc<MetaClient> {
        &self.client
    }

    pub fn config(&self) -> &crate::config::TableConfig {
        self.client.config()
    }

    pub fn storage(&self) -> &Arc<dyn Storage> {
        self.client.storage()
    }

    /// The listing manifest of the table as its storage lists it now (which must be a store
    /// that can list), stamped `created_at` (the caller's clock: the wasm build has none of
    /// its own).
    pub async fn manifest(&self, created_at: String) -> Result<crate::storage::listing::Manifest> {
        let files = self.storage().list("", true).await?;
        let mut manifest = crate::storage::listing::Manifest::from_files(&files);
        manifest.table = Some(self.config().name.clone());
        manifest.table_version = Some(self.config().version);
        manifest.created_at = Some(created_at);
        manifest.latest_instant =
            (self.timeline().completed().last()).map(|i| i.requested_time.clone());
        Ok(manifest)
    }

    /// Requests, bytes and round trips since the table was opened.
    pub fn io(&self) -> IoSnapshot {
        self.client.io()
    }

    pub fn timeline(&self) -> Arc<Timeline> {
        self.client.timeline()
    }

    /// The timeline with the archived instants (v6 archive, v8+ LSM history), loaded once.
    pub async fn load_history(&self) -> Result<Arc<Timeline>> {
        self.client.load_history().await
    }

    pub async fn commit_metadata(&self, instant: &Instant) -> Result<Arc<CommitMetadata>> {
        self.client.commit_metadata(instant).await
    }

    /// The decoded content of an instant (archived or active).
    pub async fn instant_content(&self, instant: &Instant) -> Result<serde_json::Value> {
        self.client.instant_content(instant).await
    }

    /// The content of an instant found by requested time, the archive included.
    pub async fn instant(&self, requested_time: &str) -> Result<(Instant, serde_json::Value)> {
        let timeline = self.load_history().await?;
        let instant = timeline
            .get(requested_time)
            .ok_or_else(|| HudiError::NotFound {
                path: format!(
                    "instant {requested_time} on the timeline of {}",
                    self.storage().location()
                ),
            })?
            .clone();
        let content = self.instant_content(&instant).await?;
        Ok((instant, content))
    }

    /// File groups and slices as of an instant (latest when `None`), by listing.
    pub async fn file_system_view(&self, as_of: Option<&str>) -> Result<FileSystemView> {
        crate::snapshot::listing::file_system_view(&self.client, as_of).await
    }

    /// The metadata table; the first open also lists the MDT partitions in `prefetch`.
    pub async fn metadata_table(&self, prefetch: &[&str]) -> Result<Arc<MetadataTable>> {
        self.metadata.get(&self.client, prefetch).await
    }

    /// Which file slices a read needs, and why ([`crate::read::plan()`]).
    pub async fn plan(&self, options: &ReadOptions) -> Result<Plan> {
        // Boxed: a plan is a large future; callers need not carry it inline.
        Box::pin(crate::read::plan(&self.client, &self.metadata, options)).await
    }

    /// The rows of a plan, batch by batch ([`crate::read::scan`]).
    pub fn scan(&self, plan: Arc<Plan>, options: &ReadOptions) -> Scan {
        Scan::new(self.client.clone(), plan, options)
    }

    /// Rolls back the pending writes requested at `times`
    /// ([`crate::write::rollback::rollback_pending`]).
    pub async fn rollback_pending(
        &self,
        times: &[String],
    ) -> Result<Vec<crate::write::RolledBack>> {
        crate::write::rollback::rollback_pending(&self.client, times).await
    }

    /// The write path's view of this handle.
    fn write_ctx(&self) -> crate::write::Ctx<'_> {
        crate::write::Ctx {
            client: &self.client,
            metadata: &self.metadata,
        }
    }

    /// A table service's settings: `options` read as a write's configs.
    fn service_config(
        &self,
        options: &BTreeMap<String, String>,
    ) -> Result<crate::write::WriteConfig> {
        let mut given = WriteOptions::new(crate::write::Operation::Upsert);
        given.options = options.clone();
        crate::write::WriteConfig::new(&given, self.config())
    }

    /// Commits `batches` as one upsert, insert or delete ([`crate::write`]).
    pub async fn write(
        &self,
        batches: &[RecordBatch],
        options: &WriteOptions,
    ) -> Result<WriteResult> {
        let context = self.write_ctx();
        // Boxed: a write is a large future; callers need not carry it inline.
        Box::pin(crate::write::write(&context, batches, options)).await
    }

    /// The table services a write runs after its commit, on their own (for writes made with
    /// `defer_services`): cleaning, archival, inline compaction and clustering as `options`
    /// configure them, each only when due. A service that fails is reported in the answer's
    /// `errors`, as after a write. This handle may then be behind: reopen it.
    pub async fn services_after_write(
        &self,
        options: &BTreeMap<String, String>,
    ) -> Result<(
        crate::write::services::AfterCommit,
        Vec<crate::write::RolledBack>,
    )> {
        let context = self.write_ctx();
        let mut write = WriteOptions::new(crate::write::Operation::Upsert);
        write.options = options.clone();
        Box::pin(crate::write::services_after_write(&context, &write)).await
    }

    /// Builds the metadata-table `partitions` (none named: Spark's defaults) and those
    /// `options` ask for (`hoodie.metadata.*`) that the table lacks; under the table lock when the options
    /// configure several writers. `None` when none was missing. This handle still shows
    /// the table as it was: reopen it.
    pub async fn index(
        &self,
        partitions: &[String],
        options: &BTreeMap<String, String>,
    ) -> Result<Option<MdtInit>> {
        crate::write::check_storage_writable(self.storage().as_ref())?;
        let options = crate::metadata::config::asking_for(partitions, options)?;
        let settings = crate::metadata::config::MetadataConfig::parse(&options)?;
        let init = crate::write::services::mdt_init::initialize(&self.client, &settings, None);
        self.under_lock_if_several_writers(&options, init).await
    }

    /// Runs `work` under the table lock when `options` configure several writers.
    async fn under_lock_if_several_writers<T>(
        &self,
        options: &BTreeMap<String, String>,
        work: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        crate::write::lock::concurrency(options)?
            .exclusive(self.storage().as_ref(), work)
            .await
    }

    /// Builds the secondary index `secondary_index_<name>` on `column` (as Spark's `CREATE
    /// INDEX name ON t (column)`; the table needs a record index); under the table lock when
    /// `options` configure several writers. `None` when the table already has it.
    pub async fn index_secondary(
        &self,
        column: &str,
        name: &str,
        options: &BTreeMap<String, String>,
    ) -> Result<Option<MdtInit>> {
        crate::write::check_storage_writable(self.storage().as_ref())?;
        let init = crate::write::services::mdt_init::initialize_secondary(
            &self.client,
            column,
            name,
            None,
        );
        self.under_lock_if_several_writers(options, init).await
    }

    /// Moves old instants of the timeline and the metadata table's timeline to their LSM
    /// histories where due, as Java's archiver (`hoodie.keep.min.commits` and the other
    /// settings in `options`; under the table lock when they configure several writers).
    pub async fn archive(
        &self,
        options: &BTreeMap<String, String>,
    ) -> Result<crate::write::services::archive::Archival> {
        crate::write::check_storage_writable(self.storage().as_ref())?;
        let config = self.service_config(options)?;
        let run = crate::write::services::archive::archive(&self.client, &config.archival);
        match &config.concurrency {
            crate::write::lock::Concurrency::SingleWriter => run.await,
            crate::write::lock::Concurrency::Optimistic(lock) => {
                let storage = self.storage().as_ref();
                crate::write::lock::TableLock::new(storage, lock.clone())?
                    .run(run)
                    .await
            }
        }
    }

    /// Compacts a Merge-On-Read table ([`crate::write::services::compaction`]): pending
    /// plans (or the one `request` names) are executed, then a new plan over every file
    /// slice with log files is scheduled and, unless `request` says schedule only,
    /// executed. `options` are write configs (`hoodie.compaction.*`, the lock's). This
    /// handle still shows the table as it was: reopen it.
    pub async fn compact(
        &self,
        request: &crate::write::CompactRequest,
        options: &BTreeMap<String, String>,
    ) -> Result<crate::write::CompactionReport> {
        let config = self.service_config(options)?;
        let context = self.write_ctx();
        Box::pin(crate::write::services::compaction::compact(
            &context, &config, request,
        ))
        .await
    }

    /// Clusters the table ([`crate::write::services::clustering`]): pending plans (or the
    /// one `request` names) are executed, then a new plan over the small file slices is
    /// scheduled and, unless `request` says schedule only, executed. `options` are write
    /// configs (`hoodie.clustering.*`, the lock's). This handle still shows the table as it
    /// was: reopen it.
    pub async fn cluster(
        &self,
        request: &crate::write::ClusterRequest,
        options: &BTreeMap<String, String>,
    ) -> Result<crate::write::ClusteringReport> {
        let config = self.service_config(options)?;
        let context = self.write_ctx();
        Box::pin(crate::write::services::clustering::cluster(
            &context, &config, request,
        ))
        .await
    }

    /// Cleans the table as Apache Hudi 1.1 does (`hoodie.clean.*` options; Java's defaults
    /// otherwise): finishes a clean left pending, or plans one when due, deletes the old file
    /// slices it names and commits it; then the metadata table's own clean when due. Under
    /// the table lock when the options configure several writers. Empty when nothing was due.
    pub async fn clean(
        &self,
        options: &BTreeMap<String, String>,
    ) -> Result<Vec<crate::write::services::clean::Clean>> {
        Ok(self.clean_reporting_rollbacks(options).await?.cleans)
    }

    /// [`Table::clean`], and what it rolled back first: under Hudi's LAZY failed-writes
    /// policy (`hoodie.cleaner.policy.failed.writes=LAZY`, or several writers) the cleaner
    /// rolls back the pending writes whose heartbeat expired, as Java's does.
    pub async fn clean_reporting_rollbacks(
        &self,
        options: &BTreeMap<String, String>,
    ) -> Result<crate::write::services::clean::Cleaned> {
        use crate::write::services::clean;
        let context = self.write_ctx();
        crate::write::check_writable(&context)?;
        let config = crate::clean::CleanConfig::parse(options)?;
        let concurrency = crate::write::lock::concurrency(options)?;
        let rolled_back = match crate::write::config::lazy_rollback(options, &concurrency)? {
            true => Box::pin(clean::roll_back_failed_writes(&context, &concurrency)).await?,
            false => Vec::new(),
        };
        let cleans = Box::pin(clean::run(&context, &config, &concurrency, true)).await?;
        Ok(clean::Cleaned {
            rolled_back,
            cleans,
        })
    }

    /// The table's health as of `now_ms` (the caller's clock) under the write settings
    /// `options` ([`crate::health`]): no data block is read.
    pub async fn health(
        &self,
        options: &BTreeMap<String, String>,
        now_ms: i64,
    ) -> Result<crate::health::Health> {
        crate::health::health(&self.client, options, now_ms).await
    }

    /// Runs the table service that fixes each warning or critical finding of `report` that
    /// names one, in [`crate::health::FIX_ORDER`], each on the table as the one before left it. A
    /// read-only storage is refused before any request; a service that fails is reported
    /// and the others still run. This handle still shows the table as it was: reopen it.
    pub async fn fix(
        &self,
        report: &crate::health::Health,
        options: &BTreeMap<String, String>,
    ) -> Result<Vec<crate::health::FixOutcome>> {
        crate::write::check_storage_writable(self.storage().as_ref())?;
        let mut out = Vec::new();
        for service in crate::health::FIX_ORDER {
            let Some(finding) = report
                .findings
                .iter()
                // Info findings describe; only warnings and worse call for a service.
                .find(|f| {
                    f.service.as_deref() == Some(*service)
                        && f.severity >= crate::health::Severity::Warning
                })
            else {
                continue;
            };
            let table = self.reopen().await?;
            let done = Box::pin(table.run_fix(service, report, options)).await;
            out.push(crate::health::FixOutcome {
                code: finding.code.clone(),
                service: service.to_string(),
                ok: done.is_ok(),
                error: done.as_ref().err().map(|e| e.to_string()),
                result: done.unwrap_or(serde_json::Value::Null),
            });
        }
        Ok(out)
    }

    /// One service of [`Table::fix`], its report as JSON.
    async fn run_fix(
        &self,
        service: &str,
        report: &crate::health::Health,
        options: &BTreeMap<String, String>,
    ) -> Result<serde_json::Value> {
        let json = |v: &dyn erased::Json| v.json();
        match service {
            "rollback" => {
                let times: Vec<String> = (report.pending_instants.iter())
                    .filter(|p| p.failed)
                    .map(|p| p.requested_time.clone())
                    .collect();
                Ok(json(&self.rollback_pending(&times).await?))
            }
            "lock" => {
                // Taking the lock over (its validity passed) and releasing it leaves it free.
                let config = match crate::write::lock::concurrency(options)? {
                    crate::write::lock::Concurrency::Optimistic(c) => c,
                    crate::write::lock::Concurrency::SingleWriter => Default::default(),
                };
                let lock = crate::write::lock::TableLock::new(self.storage().as_ref(), config)?;
                lock.acquire().await?;
                lock.release().await?;
                Ok(serde_json::json!({ "owner": lock.owner(), "released": true }))
            }
            "compact" => Ok(json(
                &self
                    .compact(&crate::write::CompactRequest::default(), options)
                    .await?,
            )),
            "cluster" => Ok(json(
                &self
                    .cluster(&crate::write::ClusterRequest::default(), options)
                    .await?,
            )),
            "clean" => Ok(json(&self.clean_reporting_rollbacks(options).await?)),
            "archive" => Ok(json(&self.archive(options).await?)),
            "index" => Ok(json(&self.index(&[], options).await?)),
            other => Err(HudiError::invalid(format!("no table service {other:?}"))),
        }
    }

    /// The latest writer schema's data columns as Arrow (no meta columns, nullability as
    /// written), or `None` while the table has no schema yet.
    pub async fn data_schema(&self) -> Result<Option<Schema>> {
        let visibility = self.client.timeline().visibility_as_of(None);
        let Some((avro, origin)) = schema::table_avro_schema(&self.client, &visibility).await?
        else {
            return Ok(None);
        };
        crate::schema::arrow_schema_from_avro_text(&avro, &origin).map(Some)
    }

    /// [`Table::data_schema`], for checking rows before a write: on a writable storage the
    /// metadata table is opened beside it, as the write will read it next (one round trip
    /// fewer; its failures are left for the write to report).
    pub async fn schema_for_write(&self) -> Result<Option<Schema>> {
        let config = self.client.config();
        let warm_metadata = async {
            if self.storage().capabilities().writable && !config.metadata_partitions.is_empty() {
                let _ = self
                    .metadata_table(&config.metadata_partition_names())
                    .await;
            }
        };
        let (schema, ()) = futures::future::join(self.data_schema(), warm_metadata).await;
        schema
    }

    /// Decodes an input against the table's latest schema as reads see it (an input may be
    /// a read's output: meta columns when populated, partition columns the files do not
    /// store, every column nullable; only those when the table has no schema yet) and
    /// commits it ([`Table::write`]). The metadata table opens beside the schema's read
    /// (cached for the write). A read-only storage is refused before any request.
    pub async fn write_input<F>(&self, decode: F, options: &WriteOptions) -> Result<WriteResult>
    where
        F: FnOnce(&SchemaRef) -> Result<Vec<RecordBatch>>,
    {
        self.check_write(options)?;
        let open_metadata = async {
            if self.client.config().metadata_partitions.is_empty() {
                Ok(())
            } else {
                self.metadata_table(&[]).await.map(drop)
            }
        };
        let visibility = self.client.timeline().visibility_as_of(None);
        let (schema, ()) = futures::future::try_join(
            schema::table_schema(&self.client, &visibility),
            open_metadata,
        )
        .await?;
        let batches = one_batch(decode(&schema)?);
        self.write(&batches, options).await
    }

    /// Retypes an input by the table's data columns ([`Table::data_schema`]; `None` while
    /// the table has no schema yet) and commits it ([`Table::write`]): for rows already
    /// typed by their producer, where only the data columns' types matter. Nothing else is
    /// read beside the schema. A read-only storage is refused before any request.
    pub async fn write_retyped<F>(&self, retype: F, options: &WriteOptions) -> Result<WriteResult>
    where
        F: FnOnce(Option<&Schema>) -> Result<Vec<RecordBatch>>,
    {
        self.check_write(options)?;
        let schema = self.data_schema().await?;
        let batches = one_batch(retype(schema.as_ref())?);
        self.write(&batches, options).await
    }

    /// What a write refuses before any request, in its order (its options, then a
    /// read-only storage): nothing is read or decoded for a write that cannot happen.
    fn check_write(&self, options: &WriteOptions) -> Result<()> {
        crate::write::WriteConfig::new(options, self.client.config())?;
        crate::write::check_storage_writable(self.storage().as_ref())
    }

    /// Which commits requested in `(start, end]` (instants or ISO-8601 times; all when
    /// absent) changed which file groups, and where each change is read
    /// ([`crate::read::cdc`]).
    pub async fn plan_changes(&self, start: Option<&str>, end: Option<&str>) -> Result<FeedPlan> {
        let tz = self.config().timezone;
        // Digits compare as instant times however short (`0` starts at the beginning).
        let resolve = |t: Option<&str>| {
            t.map(|t| match t.bytes().all(|b| b.is_ascii_digit()) {
                true => Ok(t.to_string()),
                false => crate::timeline::time::resolve_time(t, tz),
            })
            .transpose()
        };
        let (start, end) = (resolve(start)?, resolve(end)?);
        Box::pin(crate::read::cdc::plan(
            &self.client,
            start.as_deref(),
            end.as_deref(),
        ))
        .await
    }

    /// The rows of a change-feed plan, split by split as they are read.
    pub fn scan_changes(&self, plan: Arc<FeedPlan>) -> crate::read::cdc::ChangeScan {
        crate::read::cdc::ChangeScan::new(self.client.clone(), plan)
    }

    /// The change feed of `(start, end]` as Spark's CDC query returns it.
    pub async fn changes(&self, start: Option<&str>, end: Option<&str>) -> Result<ChangeFeed> {
        let plan = self.plan_changes(start, end).await?;
        Box::pin(crate::read::cdc::read(&self.client, plan)).await
    }

    /// Plans and reads every row.
    pub async fn read(&self, options: &ReadOptions) -> Result<ReadResult> {
        let plan = Arc::new(self.plan(options).await?);
        let mut scan = self.scan(plan.clone(), options);
        let batches = scan.collect().await?;
        let (schema, io) = (scan.schema(), scan.io());
        drop(scan);
        Ok(ReadResult {
            schema,
            batches,
            io,
            plan: Arc::unwrap_or_clone(plan),
        })
    }
}

/// Service reports as JSON, whatever their type.
mod erased {
    pub trait Json {
        fn json(&self) -> serde_json::Value;
    }

    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
        }
    }
}

/// An input's batches as one, the pieces let go: the write works on one batch, and the
/// pieces would otherwise be held beside it for the whole write. Left as they are when they
/// do not combine (the write then says why).
fn one_batch(batches: Vec<RecordBatch>) -> Vec<RecordBatch> {
    let [first, rest @ ..] = batches.as_slice() else {
        return batches;
    };
    if rest.is_empty() || rest.iter().any(|b| b.schema() != first.schema()) {
        return batches;
    }
    match arrow_select::concat::concat_batches(&first.schema(), &batches) {
        Ok(one) => vec![one],
        Err(_) => batches,
    }
}
