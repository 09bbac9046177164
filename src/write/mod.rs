//! Writing: small upserts, inserts and deletes committed as Apache Hudi commits (docs:
//! docs/hudi-format.md §10). Copy-On-Write rewrites the touched file groups' base files;
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
mod build;
mod cdc;
mod commit;
pub mod config;
pub mod create;
mod files;
mod input;
pub mod key;
pub mod limits;
pub mod lock;
pub(crate) mod mdt;
mod occ;
mod pending;
mod plan;
mod prepare;
mod publish;
mod secondary;
pub mod services;
pub(crate) mod tag;
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
use crate::snapshot::Snapshot;
use crate::storage::IoSnapshot;

pub use config::WriteConfig;
pub use input::align_input;
pub use key::KeyGen;
use prepare::{commit_prepared, prepare};
pub use services::clustering::{ClusterRequest, Clustered, ClusteringReport};
pub use services::compaction::{CompactRequest, Compacted, CompactionReport};
pub use services::mdt_compaction::MdtCompaction;
pub use services::mdt_init::MdtInit;
pub use services::rollback::{self, RolledBack};
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
    /// listed in `config::SETTINGS` (parsed into a [`WriteConfig`] when the write starts).
    pub options: BTreeMap<String, String>,
    /// Multi-writer: how many times a commit that lost a conflict is tried again.
    pub commit_retries: u32,
    /// Input columns the table lacks are added to its schema (nullable, after the others)
    /// instead of refused, as a Spark write of a wider DataFrame does. Off by default: an
    /// endpoint taking rows from elsewhere should not let them change the schema.
    pub add_columns: bool,
    /// The write ends at its commit point: the table services it would run after it
    /// (cleaning, archival, inline compaction and clustering), and a metadata-table
    /// compaction that has just come due before it, are left to a later
    /// [`services_after_write`] on the table as it is then.
    pub defer_services: bool,
}

impl WriteOptions {
    pub fn new(operation: Operation) -> WriteOptions {
        WriteOptions {
            operation,
            options: BTreeMap::new(),
            commit_retries: 0,
            add_columns: false,
            defer_services: false,
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
    /// Partitions built before the write (its options asked for ones the table lacked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initialized: Option<MdtInit>,
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
    /// Failed writes rolled back: before this one (Hudi's EAGER policy; with several
    /// writers, only writes whose heartbeat expired), or by its cleaner after it (a single
    /// writer under LAZY).
    pub rolled_back: Vec<RolledBack>,
    /// Tries it took (more than one when a conflict was retried, `commit_retries`).
    pub attempts: u32,
    pub io: IoSnapshot,
    /// Table services run after the commit point (their requests are not in `io`).
    pub services: services::AfterCommit,
}

/// Metadata-table partitions this writer keeps in step with the data.
pub const MAINTAINED_MDT_PARTITIONS: &[&str] = &[
    crate::metadata::table::FILES,
    crate::metadata::table::COLUMN_STATS,
    crate::metadata::table::PARTITION_STATS,
    crate::metadata::table::RECORD_INDEX,
];

/// Whether this writer keeps MDT partition `p` in step: the four above, and secondary
/// indexes (their definitions are checked when the commit reads them).
pub fn maintained_mdt_partition(p: &str) -> bool {
    MAINTAINED_MDT_PARTITIONS.contains(&p)
        || p.starts_with(crate::metadata::secondary::SECONDARY_INDEX_PREFIX)
}

/// Refuses, before any request that changes storage, tables this writer cannot write
/// exactly as Hudi would (docs/hudi-format.md §10.1).
pub fn check_writable(table: &Ctx<'_>) -> Result<()> {
    check_storage_writable(table.client.storage().as_ref())?;
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
        .find(|p| !maintained_mdt_partition(p))
    {
        return refuse(format!(
            "writing a table whose metadata table has the {unknown} partition \
             (this writer keeps files, column_stats, partition_stats, record_index and \
             secondary indexes in step; any other index would go stale)"
        ));
    }
    KeyGen::of(config)?;
    Ok(())
}

/// Refuses a storage that cannot take writes (before anything is read for the write).
pub fn check_storage_writable(storage: &dyn crate::storage::Storage) -> Result<()> {
    if storage.capabilities().writable {
        return Ok(());
    }
    Err(HudiError::unsupported_in(
        "writing to a read-only storage (plain HTTP(S), a .zip or files copied into \
         memory; open the table over S3 or a storage with put and delete)",
        storage.location(),
    ))
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
    options.input.check_batches(batches, "rows")?;
    if table
        .client
        .timeline()
        .instants
        .iter()
        .all(|i| !i.is_completed())
    {
        return Box::pin(write_into_new_table(table, batches, options)).await;
    }
    if options.metadata.asked()
        && !services::mdt_init::missing(table.client, &options.metadata).is_empty()
    {
        return Box::pin(write_after_init(table, batches, options)).await;
    }
    write_configured(table, batches, options).await
}

/// A table without a commit yet may still be being created: its creator lists the metadata
/// partitions it builds as being built until they are. The table is read afresh (waiting
/// for them, a while), so that the first writes keep the metadata table from its start.
async fn write_into_new_table(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteConfig,
) -> Result<WriteResult> {
    let mut fresh = table.client.reopen().await?;
    for _ in 0..CREATION_WAITS {
        let config = fresh.config();
        let created = fresh.timeline().instants.iter().any(|i| i.is_completed());
        if created || config.metadata_partitions_inflight.is_empty() {
            break;
        }
        sleep(std::time::Duration::from_millis(CREATION_WAIT_MS)).await;
        fresh = fresh.reopen().await?;
    }
    let fresh = Arc::new(fresh);
    let metadata = MetadataCache::default();
    let ctx = Ctx {
        client: &fresh,
        metadata: &metadata,
    };
    if !services::mdt_init::missing(&fresh, &options.metadata).is_empty() {
        return write_after_init(&ctx, batches, options).await;
    }
    write_configured(&ctx, batches, options).await
}

/// How long a first write waits for its table's creator to build the metadata table.
const CREATION_WAITS: u32 = 100;
const CREATION_WAIT_MS: u64 = 200;

/// Builds the metadata-table partitions the options ask for and the table lacks (under
/// the lock when several writers are configured, as Java initialises), then writes through
/// a handle that reads the table afresh. The caller's handle still shows the table as it
/// was: reopen it.
async fn write_after_init(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteConfig,
) -> Result<WriteResult> {
    // The write's own checks come after the build, on the table it leaves.
    check_storage_writable(table.client.storage().as_ref())?;
    let client = table.client;
    let init =
        services::mdt_init::initialize(client, &options.metadata, Some(options.hfile_block_size));
    let built = (options.concurrency)
        .exclusive(client.storage().as_ref(), init)
        .await?;
    let fresh = Arc::new(client.reopen().await?);
    let metadata = MetadataCache::default();
    let ctx = Ctx {
        client: &fresh,
        metadata: &metadata,
    };
    let mut result = write_configured(&ctx, batches, options).await?;
    result.metadata_table.initialized = built;
    Ok(result)
}

/// The write's commit, then the table services that follow it.
async fn write_configured(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteConfig,
) -> Result<WriteResult> {
    let mut result = Box::pin(write_committed(table, batches, options)).await?;
    if !options.defer_services {
        services::after_commit(table, options, &mut result).await;
    }
    Ok(result)
}

async fn write_committed(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteConfig,
) -> Result<WriteResult> {
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
        pending::list_timeline(client),
        pending::list_markers(client),
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
    let own = first.as_ref().ok().map(|p| format!("{}.", p.instant));
    let not_own =
        |o: &crate::storage::ObjectMeta| own.as_ref().is_none_or(|own| !o.name().starts_with(own));
    objects.retain(not_own);
    if !options.lazy_rollback
        && pending::Listing::of_timeline(client.config(), &objects).has_failed_writes()
    {
        objects = match pending::confirm_failed(client, objects).await {
            Ok(o) => o,
            Err(e) => {
                if let Ok(p) = &first {
                    p.requested.withdraw(storage).await;
                }
                return Err(e);
            }
        };
        objects.retain(not_own);
    }
    let listing = pending::Listing::of_timeline(client.config(), &objects);
    let stale = client.refresh_timeline(&objects);
    let stale_markers = pending::completed_markers(&listing, markers);
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
            compaction = services::mdt_compaction::compact_if_due(table, options).await?;
            if compaction.is_some() {
                table.metadata.clear();
            }
            prepare(table, batches, options, None).await?
        }
    };
    let outcome = commit_prepared(
        table,
        options,
        &mut prepared,
        stale_markers,
        publish::Committer::SingleWriter,
    )
    .await;
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

/// The table services a write runs after its commit (cleaning, archival, inline compaction
/// and clustering, as `options` configure them; each only when due), run on their own, the
/// metadata table's compaction first when due: for writes made with
/// [`WriteOptions::defer_services`]. Failed writes its clean rolled back are in the second
/// value.
pub async fn services_after_write(
    table: &Ctx<'_>,
    options: &WriteOptions,
) -> Result<(services::AfterCommit, Vec<RolledBack>)> {
    let options = &WriteConfig::new(options, table.client.config())?;
    check_writable(table)?;
    let before = table.client.io();
    // The metadata-table compaction a deferring write left due comes first, under the lock
    // with several writers, as a write runs it.
    let compact = services::mdt_compaction::compact_if_due(table, options);
    let storage = table.client.storage().as_ref();
    let compacted = options.concurrency.exclusive(storage, compact).await;
    let mut errors = Vec::new();
    let compacted = match compacted {
        Ok(c) => {
            if c.is_some() {
                table.metadata.clear();
            }
            c
        }
        Err(e) => {
            errors.push(services::ServiceError::of("metadata compaction", &e));
            None
        }
    };
    let (mut done, rolled_back) = services::run_after_commit(table, options).await;
    done.metadata_compaction = compacted;
    errors.append(&mut done.errors);
    done.errors = errors;
    done.io = table.client.io().since(&before);
    Ok((done, rolled_back))
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
            initialized: None,
        },
        rolled_back,
        attempts: 1,
        io,
        services: services::AfterCommit::default(),
    }
}

/// What a write reads the table through (the same handles [`crate::table::Table`] holds).
pub struct Ctx<'a> {
    pub client: &'a Arc<MetaClient>,
    pub metadata: &'a MetadataCache,
}

impl Ctx<'_> {
    /// The table's latest snapshot, as a write reads it.
    async fn snapshot(&self) -> Result<Snapshot> {
        let request = crate::snapshot::Request::latest(self.client);
        // Boxed: a snapshot is a large future, and writes nest it deeply.
        Box::pin(Snapshot::load(self.client, self.metadata, request)).await
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
    /// The snapshot the slices came from (read schema, visibility).
    pub snapshot: Option<Arc<Snapshot>>,
    /// File groups pending clustering plans hold (partition, file id): new keys are not
    /// packed into them (Java's partitioners leave them out of the small files too).
    pub clustering: std::collections::HashSet<(String, String)>,
}
