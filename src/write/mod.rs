//! Writing: small upserts, inserts and deletes committed as Apache Hudi commits (docs:
//! hudi-format §10). Copy-On-Write rewrites the touched file groups' base files;
//! Merge-On-Read appends a log file (Avro data block and/or delete block) to the latest
//! slice. Inserts go to new file groups with Parquet base files. Table versions 8 and 9.
//!
//! The order of requests is what keeps every reader safe (§10.3): the requested instant
//! (beside tagging's reads, as Java requests before tagging), the inflight instant with
//! markers, the data files with the metadata table's delta commit (completed too: it
//! counts only once the data instant completes, §8.3), and last the completed instant,
//! written create-if-absent: the single commit point. Everything before it is invisible to
//! readers (they only trust completed instants), and bad input or a table this writer
//! cannot keep consistent is refused before the first request that changes storage.

pub mod avro_rows;
pub mod bucket;
mod commit;
pub mod config;
pub mod create;
mod files;
mod input;
pub mod key;
pub mod lock;
mod mdt;
mod mdt_compact;
mod occ;
pub mod rollback;
mod tag;
mod timer;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::RecordBatch;
use serde::Serialize;

use crate::config::{BaseFileFormat, TableType};
use crate::error::{HudiError, Result};
use crate::merge::MergeRule;
use crate::meta_client::MetaClient;
use crate::metadata::{MetadataCache, MetadataTable};
use crate::storage::IoSnapshot;

pub use config::WriteConfig;
pub use input::align_input;
pub use key::KeyGen;
pub use mdt_compact::MdtCompaction;
pub use rollback::RolledBack;
pub use timer::sleep;

/// What a write does with its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// Updates keys that exist, inserts the rest.
    Upsert,
    /// Inserts every row; a key that exists is updated (Hudi's default `insert` with
    /// de-duplication and an index).
    Insert,
    /// Deletes the keys; a key nowhere is counted, not an error.
    Delete,
}

impl Operation {
    pub fn parse(s: &str) -> Result<Operation> {
        match s.to_ascii_lowercase().as_str() {
            "upsert" => Ok(Operation::Upsert),
            "insert" => Ok(Operation::Insert),
            "delete" => Ok(Operation::Delete),
            other => Err(HudiError::invalid(format!(
                "unknown write operation {other:?} (upsert, insert, delete)"
            ))),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Operation::Upsert => "upsert",
            Operation::Insert => "insert",
            Operation::Delete => "delete",
        }
    }

    /// `operationType` in the commit metadata (Java's `WriteOperationType`).
    pub fn java_name(&self) -> &'static str {
        match self {
            Operation::Upsert => "UPSERT",
            Operation::Insert => "INSERT",
            Operation::Delete => "DELETE",
        }
    }
}

#[derive(Debug, Clone)]
pub struct WriteOptions {
    pub operation: Operation,
    /// Hudi write configs by their Java names (`hoodie.*`); the ones this writer reads are
    /// listed in the README.
    pub options: BTreeMap<String, String>,
    /// Multi-writer: how many times a commit that lost a conflict is tried again.
    pub commit_retries: u32,
    /// Input columns the table lacks are added to its schema (nullable, after the others)
    /// instead of refused, as a Spark write of a wider DataFrame does. Off by default: an
    /// endpoint taking rows from elsewhere should not let them change the schema.
    pub add_columns: bool,
}

impl WriteOptions {
    pub fn new(operation: Operation) -> WriteOptions {
        WriteOptions {
            operation,
            options: BTreeMap::new(),
            commit_retries: 0,
            add_columns: false,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct RecordCounts {
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    /// Deletes of keys the table does not hold (no-ops).
    pub delete_missing: u64,
    /// Input rows dropped because another row of the batch had the same key and won.
    pub deduplicated: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct MetadataTableWrite {
    /// Metadata-table partitions that got records in this commit.
    pub partitions: Vec<String>,
    /// The metadata-table compaction run before the write, if one was due (or pending).
    pub compaction: Option<MdtCompaction>,
}

/// What one write committed.
#[derive(Debug, Clone, Serialize)]
pub struct WriteResult {
    pub instant: String,
    pub completion_time: String,
    pub action: String,
    pub operation: String,
    pub records: RecordCounts,
    /// Data files written, relative to the base path.
    pub files_written: Vec<String>,
    pub metadata_table: MetadataTableWrite,
    /// Failed writes rolled back before this one (Hudi's EAGER policy; under LAZY, only
    /// writes whose heartbeat expired).
    pub rolled_back: Vec<RolledBack>,
    /// Tries it took (more than one when a conflict was retried, `commit_retries`).
    pub attempts: u32,
    pub io: IoSnapshot,
}

/// Metadata-table partitions this writer keeps in step with the data.
pub const MAINTAINED_MDT_PARTITIONS: &[&str] = &[
    crate::metadata::table::FILES,
    crate::metadata::table::COLUMN_STATS,
    crate::metadata::table::PARTITION_STATS,
    crate::metadata::table::RECORD_INDEX,
];

/// Refuses, before any request that changes storage, tables this writer cannot write
/// exactly as Hudi would (hudi-format §10.1).
pub fn check_writable(table: &Ctx<'_>) -> Result<()> {
    let storage = table.client.storage();
    if !storage.capabilities().writable {
        return Err(HudiError::unsupported_in(
            "writing to a read-only storage (plain HTTP(S), a .zip or files copied into \
             memory; open the table over S3 or a storage with put and delete)",
            storage.location(),
        ));
    }
    let config = table.client.config();
    let refuse = |what: String| Err(HudiError::unsupported_in(what, ".hoodie/hoodie.properties"));
    if !matches!(config.version, 8 | 9) {
        return refuse(format!(
            "writing table version {} (this writer commits to versions 8 and 9)",
            config.version
        ));
    }
    if config.timeline_layout_version != 2 {
        return refuse(format!(
            "writing a table with timeline layout {}",
            config.timeline_layout_version
        ));
    }
    if config.base_file_format != BaseFileFormat::Parquet
        || config
            .property("hoodie.table.base.file.format")
            .is_some_and(|f| !f.eq_ignore_ascii_case("parquet"))
    {
        return refuse("writing base files other than Parquet".into());
    }
    if config.cdc_enabled {
        return refuse(
            "writing a table with change data capture on (hoodie.table.cdc.enabled)".into(),
        );
    }
    match MergeRule::of(config)? {
        MergeRule::EventTime | MergeRule::CommitTime => {}
        MergeRule::LegacyOverwrite => {
            return refuse("writing with the v6 overwrite payload".into())
        }
    }
    if config
        .property("hoodie.table.log.file.format")
        .is_some_and(|f| !f.eq_ignore_ascii_case("avro"))
        && config.table_type == TableType::MergeOnRead
    {
        return refuse("log blocks other than Avro".into());
    }
    if !config.metadata_partitions_inflight.is_empty() {
        return refuse(format!(
            "writing while metadata-table partitions are being built ({})",
            config.metadata_partitions_inflight.join(", ")
        ));
    }
    if let Some(unknown) = config
        .metadata_partitions
        .iter()
        .find(|p| !MAINTAINED_MDT_PARTITIONS.contains(&p.as_str()))
    {
        return refuse(format!(
            "writing a table whose metadata table has the {unknown} partition \
             (this writer keeps files, column_stats, partition_stats and record_index in step; \
             any other index would go stale)"
        ));
    }
    KeyGen::of(config)?;
    Ok(())
}

/// Writes `batches` into the table as one commit: as the only writer (Hudi's default), or
/// beside others under the storage-based lock when the options say
/// `hoodie.write.concurrency.mode=optimistic_concurrency_control`; a commit that loses a
/// conflict is tried again on the new snapshot up to `commit_retries` times.
pub async fn write(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteOptions,
) -> Result<WriteResult> {
    // Parsed once, before any request: a bad setting changes nothing.
    let options = &WriteConfig::new(options, table.client.config())?;
    match &options.concurrency {
        lock::Concurrency::SingleWriter => write_single(table, batches, options).await,
        lock::Concurrency::Optimistic(config) => {
            let mut attempt = 0;
            loop {
                match occ::write(table, batches, options, config).await {
                    Err(HudiError::Conflict { .. }) if attempt < options.commit_retries => {
                        attempt += 1;
                        table.client.reload_timeline().await?;
                        table.metadata.clear();
                    }
                    outcome => {
                        return outcome.map(|mut r| {
                            r.attempts = attempt + 1;
                            r
                        })
                    }
                }
            }
        }
    }
}

/// One writer: Hudi's single-writer commit.
async fn write_single(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteConfig,
) -> Result<WriteResult> {
    check_writable(table)?;
    let client = table.client;
    let storage = client.storage().as_ref();
    let started = client.io();
    // The first round, in the usual case all of it at once: the timeline as it is now and
    // earlier commits' markers, beside everything this handle can do from the timeline it
    // holds — the schema, the input checked against it, the requested instant, tagging and
    // the metadata table's reads. That is kept when the fresh timeline is the held one and
    // nothing needs rolling back or compacting; otherwise the instant is withdrawn and it
    // is all done again on the fresh timeline.
    let listing = futures::future::try_join(
        rollback::list_timeline(client),
        rollback::list_markers(client),
    );
    let (listed, first) =
        futures::future::join(listing, prepare(table, batches, options, None)).await;
    let (mut objects, markers) = match listed {
        Ok(l) => l,
        Err(e) => {
            if let Ok(p) = &first {
                p.requested.withdraw(storage).await;
            }
            return Err(e);
        }
    };
    // The listing may already show this write's own requested instant.
    if let Ok(p) = &first {
        let own = format!("{}.", p.instant);
        objects.retain(|o| !o.name().starts_with(&own));
    }
    let listing = rollback::Listing::of_timeline(client.config(), &objects);
    let stale = client.refresh_timeline(&objects);
    let stale_markers = rollback::completed_markers(&listing, markers);
    let lazy = options.lazy_rollback;
    let failed_writes = !lazy && listing.has_failed_writes();
    let mut compaction = None;
    let mut rolled_back = Vec::new();
    let mut prepared = match first {
        Ok(p) if !stale && !failed_writes && !p.compaction_due => p,
        first => {
            match first {
                Ok(p) => p.requested.withdraw(storage).await,
                // Refused on the timeline this handle held: the same refusal, unless the
                // table moved on since.
                Err(e) if !stale => return Err(e),
                Err(_) => {}
            }
            if stale {
                table.metadata.clear();
            }
            // Failed writes are rolled back first (Java's default single-writer EAGER
            // policy). Under LAZY (multi-writer) a pending instant may be a live writer's:
            // left alone (readers ignore it).
            if failed_writes {
                rolled_back = rollback::rollback_listed(client, listing).await?;
                client.reload_timeline().await?;
                table.metadata.clear();
            }
            // The metadata table is compacted (or a pending compaction completed) before
            // this write reads it, as Java's table services run before the write's own
            // metadata-table update.
            compaction = mdt_compact::compact_if_due(table, options).await?;
            if compaction.is_some() {
                table.metadata.clear();
            }
            prepare(table, batches, options, None).await?
        }
    };
    let outcome = commit_prepared(table, options, &mut prepared, stale_markers, false).await;
    let done = match outcome {
        Ok(done) => done,
        Err(e) => {
            prepared.requested.withdraw(storage).await;
            return Err(e);
        }
    };
    let io = client.io().since(&started);
    Ok(write_result(options, done, (compaction, rolled_back), io))
}

/// The answer for a committed write: the planner's counts completed by the commit's.
/// `before`: what ran ahead of the commit (a metadata-table compaction, rollbacks).
fn write_result(
    options: &WriteConfig,
    (mut counts, outcome): (RecordCounts, commit::Outcome),
    (compaction, rolled_back): (Option<MdtCompaction>, Vec<RolledBack>),
    io: IoSnapshot,
) -> WriteResult {
    counts.inserted = outcome.inserted;
    counts.updated = outcome.updated;
    counts.deleted = outcome.deleted;
    counts.delete_missing += outcome.delete_missing;
    WriteResult {
        instant: outcome.instant,
        completion_time: outcome.completion_time,
        action: outcome.action,
        operation: options.operation.as_str().to_string(),
        records: counts,
        files_written: outcome.files_written,
        metadata_table: MetadataTableWrite {
            partitions: outcome.mdt_partitions,
            compaction,
        },
        rolled_back,
        attempts: 1,
        io,
    }
}

/// What a write works out before its first data file: the rows checked and keyed, the
/// instant (requested beside tagging when that is safe), where each key is, and the
/// metadata table's reads for the delta commit.
struct Prepared {
    avro_schema: String,
    schema_on_read: Option<commit::SchemaOnRead>,
    input: RecordBatch,
    rows: KeyedRows,
    tagged: Tagged,
    mdt_prefetch: Option<mdt::MdtPrefetch>,
    instant: String,
    requested: commit::Requested,
    rule: MergeRule,
    /// The metadata table is due a compaction (this write must not go ahead of it).
    compaction_due: bool,
}

/// Prepares a write on the timeline the table holds now, at `instant` when the time was
/// already taken (under the table lock), else at a new one.
async fn prepare(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteConfig,
    instant: Option<String>,
) -> Result<Prepared> {
    let client = table.client;
    let config = client.config();
    let visibility = client.timeline().visibility_as_of(None);
    // The metadata table's partitions are listed with its open: the delta commit's layout
    // and the lookups' shards both come from those listings.
    let open_mdt = async {
        if config.metadata_partitions.is_empty() {
            Ok(())
        } else {
            table
                .metadata_table(&config.metadata_partition_names())
                .await
                .map(drop)
        }
    };
    let (schema, ()) =
        futures::future::try_join(client.table_avro_schema(&visibility), open_mdt).await?;
    let (avro_schema, schema_origin) = schema.ok_or_else(|| {
        HudiError::unsupported_in("writing a table with no schema yet", ".hoodie")
    })?;
    // Java's writer carries the column ids forward in every commit and in `.hoodie/.schema/`;
    // a commit without them would leave its readers and writers mapping columns wrongly.
    // (Cached: the commit the schema came from.)
    let schema_on_read = match client.latest_internal_schema(&visibility).await? {
        None => None,
        Some((latest_schema, origin)) => {
            let Some((history, _)) = client.schema_history().await? else {
                return Err(HudiError::unsupported_in(
                    "writing a table whose commits carry column ids (latest_schema) but \
                     whose .hoodie/.schema/ holds no history of a completed write",
                    &origin,
                ));
            };
            Some(commit::SchemaOnRead {
                latest_schema,
                history,
            })
        }
    };
    let mut data_schema = crate::schema::arrow_schema_from_avro_text(&avro_schema, &schema_origin)?;
    // A delete writes no columns: nothing to add.
    let (avro_schema, wider) = if options.add_columns && options.operation != Operation::Delete {
        add_columns(
            client,
            batches,
            avro_schema,
            &schema_origin,
            &mut data_schema,
        )?
    } else {
        (avro_schema, None)
    };
    if wider.is_some() && schema_on_read.is_some() {
        // A new column takes a new id and a new history version; Spark SQL's
        // `ALTER TABLE … ADD COLUMNS` makes them.
        return Err(HudiError::unsupported_in(
            "adding columns to a table whose schema evolved on read (its columns have ids); \
             add them with ALTER TABLE … ADD COLUMNS in Apache Hudi Spark first",
            &schema_origin,
        ));
    }
    let keygen = KeyGen::of(config)?;
    let rule = MergeRule::of(config)?;
    // Input: aligned to the table schema, keyed, de-duplicated (before any request that
    // changes storage).
    // A table that does not store its partition columns still takes them as input, typed
    // as given: they make the partition path, as Java's key generator reads them, and stay
    // out of files.
    let input_schema = if config.drop_partition_columns {
        crate::schema::with_partition_columns(&data_schema, &config.partition_fields, |name| {
            batches
                .iter()
                .find_map(|b| b.schema().field_with_name(name).ok().cloned())
                .unwrap_or_else(|| crate::schema::partition_column_as_string(name))
        })
    } else {
        data_schema.clone()
    };
    let input = input::align_input(batches, &input_schema, config, options.operation)?;
    let rows = input::keyed_rows(&input, &keygen, config, rule)?;
    let compaction_due = mdt_compact::is_due(table, options).await?;
    let global = tag::is_global(config, options);
    // The metadata table's reads for the delta commit (index definitions, layout, the
    // rows' partition stats) beside tagging: independent chains of round trips.
    let row_partitions: std::collections::BTreeSet<String> =
        rows.rows.iter().map(|(_, p, _)| p.clone()).collect();
    let mdt_reads = async {
        if config.metadata_partitions.is_empty() {
            return Ok(None);
        }
        let mdt = table.metadata_table(&[]).await?;
        let storage = client.storage().as_ref();
        mdt::prefetch(storage, &mdt, config, &row_partitions, None)
            .await
            .map(Some)
    };
    // The instant is taken now and, as Java requests it before tagging, its requested file
    // goes beside tagging's reads — unless the write may yet change nothing (deletes of
    // absent keys), be refused for a pending clustering plan, or wait for a compaction.
    let instant = match instant {
        Some(t) => t,
        None => commit::new_instant(table).await?,
    };
    let early = !compaction_due && early_request(client, options);
    let requested = commit::Requested::new(config, &instant, early);
    let reads = async {
        // Not cut short by a failure: the requested put must have settled before a
        // withdrawal looks at it.
        // Polled in this order: the requests go out before tagging's CPU (a lookup in
        // cached metadata decodes without waiting).
        let (put, mdt_prefetch, tagged) = futures::future::join3(
            requested.put_early(client.storage().as_ref()),
            mdt_reads,
            tag::tag(table, &rows, global),
        )
        .await;
        put?;
        let (tagged, mdt_prefetch) = (tagged?, mdt_prefetch?);
        tag::check_pending_clustering(table, &tagged).await?;
        Ok::<_, HudiError>((tagged, mdt_prefetch))
    };
    let (mut tagged, mdt_prefetch) = match reads.await {
        Ok(r) => r,
        Err(e) => {
            requested.withdraw(client.storage().as_ref()).await;
            return Err(e);
        }
    };
    if let (Some(read_schema), Some(plan)) = (wider, tagged.plan.as_mut()) {
        // The commit reads and writes rows through the snapshot plan's schema.
        Arc::make_mut(plan).read_schema = read_schema;
    }
    Ok(Prepared {
        avro_schema,
        schema_on_read,
        input,
        rows,
        tagged,
        mdt_prefetch,
        instant,
        requested,
        rule,
        compaction_due,
    })
}

/// The table's schema widened by the input's new columns, as Avro text (this commit's
/// writer schema), as Arrow data columns (into `data_schema`) and as the read schema with
/// meta columns; `None` when the input adds nothing.
fn add_columns(
    client: &MetaClient,
    batches: &[RecordBatch],
    avro_schema: String,
    origin: &str,
    data_schema: &mut arrow_schema::Schema,
) -> Result<(String, Option<arrow_schema::SchemaRef>)> {
    let added = input::added_columns(batches, data_schema, client.config())?;
    if added.is_empty() {
        return Ok((avro_schema, None));
    }
    let table: serde_json::Value = serde_json::from_str(&avro_schema)
        .map_err(|e| HudiError::corrupt_by(origin, "the table's Avro schema", e))?;
    // A column the input cannot add is the input's fault.
    let wider = crate::schema::to_avro::with_added_fields(&table, &added)
        .map_err(|e| match e {
            HudiError::InvalidArgument(why) => HudiError::invalid_input(why),
            other => other,
        })?
        .to_string();
    *data_schema = crate::schema::arrow_schema_from_avro_text(&wider, origin)?;
    let read_schema = client.read_schema_of(data_schema.clone());
    Ok((wider, Some(read_schema)))
}

/// Plans the file groups' changes and commits them.
async fn commit_prepared(
    table: &Ctx<'_>,
    options: &WriteConfig,
    prepared: &mut Prepared,
    stale_markers: Vec<String>,
    defer_publish: bool,
) -> Result<(RecordCounts, commit::Outcome)> {
    let client = table.client;
    let config = client.config();
    let mut counts = RecordCounts {
        deduplicated: prepared.rows.deduplicated,
        ..RecordCounts::default()
    };
    let update_partition = options.update_partition_path;
    let tagged = &prepared.tagged;
    let mut plan = commit::plan_changes(
        &prepared.rows,
        tagged,
        options.operation,
        update_partition,
        &mut counts,
    );
    let slices = tagged
        .plan
        .as_ref()
        .map(|p| p.file_slices.as_slice())
        .unwrap_or(&[]);
    match bucket::layout(config, &options.bucket, options.index_type, slices)? {
        Some(buckets) => bucket::route(&mut plan, slices, &buckets)?,
        None if config.table_type == TableType::CopyOnWrite => {
            let average = commit::average_record_bytes(client).await?;
            commit::pack_small_files(&mut plan, slices, options, average);
        }
        None => {}
    }
    let outcome = commit::commit(
        table,
        commit::Inputs {
            input: &prepared.input,
            avro_schema: &prepared.avro_schema,
            schema_on_read: prepared.schema_on_read.as_ref(),
            plan,
            operation: options.operation,
            rule: prepared.rule,
            base_file: options.base_file.clone(),
            snapshot: tagged
                .plan
                .clone()
                .ok_or_else(|| HudiError::invalid("tagging produced no snapshot"))?,
            mdt_prefetch: prepared.mdt_prefetch.take(),
            instant: prepared.instant.clone(),
            requested: &prepared.requested,
            stale_markers,
            defer_publish,
        },
    )
    .await?;
    Ok((counts, outcome))
}

/// Whether the requested instant may go out beside tagging: not when the write may turn
/// out to change nothing (deletes of absent keys) or to be refused (a pending clustering
/// plan), which must leave storage untouched.
fn early_request(client: &MetaClient, options: &WriteConfig) -> bool {
    options.operation != Operation::Delete
        && !client.timeline().pending().any(|i| {
            let action = i.requested_action();
            action == crate::timeline::action::CLUSTERING
                || action == crate::timeline::action::REPLACE_COMMIT
        })
}

/// What a write reads the table through (the same handles [`crate::table::Table`] holds).
pub struct Ctx<'a> {
    pub client: &'a Arc<MetaClient>,
    pub metadata: &'a MetadataCache,
}

impl Ctx<'_> {
    async fn plan(&self, options: &crate::read::ReadOptions) -> Result<crate::read::Plan> {
        // Boxed: a plan is a large future, and writes nest it deeply.
        Box::pin(crate::read::plan(self.client, self.metadata, options)).await
    }

    async fn metadata_table(&self, prefetch: &[&str]) -> Result<Arc<MetadataTable>> {
        self.metadata.get(self.client, prefetch).await
    }
}

/// Rows of the input by record key, after de-duplication.
#[derive(Debug)]
pub(crate) struct KeyedRows {
    /// (record key, partition path, row in the aligned input).
    pub rows: Vec<(String, String, usize)>,
    pub deduplicated: u64,
}

/// Where tagging found each key: (partition, file id) by record key.
#[derive(Debug, Default)]
pub(crate) struct Tagged {
    pub locations: HashMap<String, (String, String)>,
    /// The latest slice of each file group that holds an incoming key.
    pub slices: BTreeMap<(String, String), crate::file_group::FileSlice>,
    /// The snapshot plan the slices came from (read schema, visibility).
    pub plan: Option<Arc<crate::read::Plan>>,
}
