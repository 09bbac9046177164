//! Merge-On-Read compaction of the data table, as Java's write client schedules and runs it
//! (docs/hudi-format.md §3.6, docs/writing.md "Compaction"): each planned file slice — base
//! file and log files — merged under Hudi's rules into a new Parquet base file of the same
//! file group, named with the compaction instant `C`.
//!
//! Scheduling writes the plan `C.compaction.requested` (one request: it is there or not).
//! Executing, from the plan whoever wrote it: an earlier attempt left inflight is rolled
//! back first (Java's `rollbackInflightCompaction`: a rollback instant removes its files and
//! its metadata-table delta commit, the plan stays); then `C.compaction.inflight` with the
//! markers of every file to write, the base files one file group at a time, the metadata
//! table's delta commit at `C` (files and column / partition stats of the new base files;
//! the record index is untouched, keys keep their file groups), and last `C_<t>.commit`
//! written create-if-absent: the commit point. Until then every reader ignores the new
//! files, and a crash at any request is finished by the next run.

mod schedule;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

pub use schedule::{due, CompactionConfig, Strategy, Trigger};

use super::rollback::{self, RolledBack};
use crate::base_file::writer::WrittenBaseFile;
use crate::config::TableType;
use crate::error::{malformed_by, HudiError, Result};
use crate::file_group::compaction::{
    plan_json, plan_operations, planned_file_groups, Operation, StatCounts,
};
use crate::file_group::FileSlice;
use crate::snapshot::Snapshot;
use crate::storage::{join, IoSnapshot, PutMode, Storage, StorageExt};
use crate::timeline::instant::action;
use crate::timeline::write::{encode_avro_instant, encode_commit_metadata, InstantSchema};
use crate::timeline::{CommitMetadata, WriteStat};
use crate::write::build::FileSchemas;
use crate::write::mdt::{self, FileEntry};
use crate::write::pending::list_timeline;
use crate::write::publish::{instant_floor, settle_all, time_after};
use crate::write::{files, Ctx, WriteConfig};

pub use schedule::{
    ASYNC, INLINE, LOG_SIZE_THRESHOLD, MAX_DELTA_COMMITS, MAX_DELTA_SECONDS, SCHEDULE_INLINE,
    STRATEGY, TARGET_IO, TRIGGER_STRATEGY,
};

/// One compaction executed and committed.
#[derive(Debug, Clone, Serialize)]
pub struct Compacted {
    pub instant: String,
    pub completion_time: String,
    /// Scheduled by this run (else a plan found pending: ours, or another writer's).
    pub scheduled_here: bool,
    /// An earlier attempt left inflight, rolled back before this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolled_back: Option<RolledBack>,
    pub file_groups: usize,
    pub log_files: usize,
    /// New base files, relative to the base path.
    pub files_written: Vec<String>,
    pub records_written: u64,
    pub bytes_written: u64,
    /// Requests of this compaction alone (reads of the slices included).
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

/// What a compaction run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompactionReport {
    /// Compactions committed, oldest first: pending plans before a new one.
    pub completed: Vec<Compacted>,
    /// A plan written and left for a later run (schedule only), by instant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<String>,
    /// Why no new plan was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_scheduled: Option<String>,
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

/// What a run is asked to do.
#[derive(Debug, Clone, Default)]
pub struct CompactRequest {
    /// Schedule a plan and leave it for a later run.
    pub schedule_only: bool,
    /// Execute this pending compaction only.
    pub instant: Option<String>,
}

impl CompactRequest {
    /// Write a new plan and leave it for a later run.
    pub fn schedule_only() -> CompactRequest {
        CompactRequest {
            schedule_only: true,
            instant: None,
        }
    }

    /// Execute pending compaction `instant` alone.
    pub fn execute(instant: impl Into<String>) -> CompactRequest {
        CompactRequest {
            schedule_only: false,
            instant: Some(instant.into()),
        }
    }
}

/// How a compaction or clustering run goes: which pending plans it executes and whether it
/// schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// After a write, as the settings say: pending plans first when executing (Java's
    /// `runAnyPendingCompactions`), a new plan when due.
    Inline { execute: bool },
    /// On request: pending plans and a new plan whatever the trigger (asking is the
    /// trigger), executed unless `schedule_only`.
    Asked { schedule_only: bool },
    /// On request: this pending plan alone.
    Only,
}

impl CompactRequest {
    /// The run asked for (`service` names it in errors), refused before any request when
    /// the request contradicts itself.
    pub(super) fn mode(&self, service: &str) -> Result<Mode> {
        match (&self.instant, self.schedule_only) {
            (Some(_), true) => Err(HudiError::invalid(format!(
                "--instant executes a pending {service}; --schedule-only writes a new one"
            ))),
            (Some(_), false) => Ok(Mode::Only),
            (None, schedule_only) => Ok(Mode::Asked { schedule_only }),
        }
    }
}

/// Refuses a run of pending `service` plan `only` when no such plan is pending.
pub(super) fn check_pending(pending: &[String], only: Option<&str>, service: &str) -> Result<()> {
    match only {
        Some(t) if !pending.iter().any(|p| p == t) => Err(HudiError::invalid(format!(
            "no pending {service} at instant {t} (pending: {})",
            if pending.is_empty() {
                "none".into()
            } else {
                pending.join(", ")
            }
        ))),
        _ => Ok(()),
    }
}

/// Compacts on request ([`crate::table::Table::compact`]): pending plans are executed, then
/// a new plan over every file slice with log files is scheduled and executed. Under the
/// storage lock when `options` configure several writers.
pub async fn compact(
    table: &Ctx<'_>,
    options: &WriteConfig,
    request: &CompactRequest,
) -> Result<CompactionReport> {
    crate::write::check_storage_writable(table.client.storage().as_ref())?;
    let mode = request.mode("compaction")?;
    locked(
        table,
        options,
        run(table, options, mode, request.instant.as_deref()),
    )
    .await
}

/// Table services after a write's commit point: the compaction the settings ask for
/// (`hoodie.compact.inline`, on by default for Merge-On-Read tables, or
/// `hoodie.compact.schedule.inline`). `None` when nothing was due or pending.
pub(crate) async fn inline(
    table: &Ctx<'_>,
    options: &WriteConfig,
) -> Result<Option<CompactionReport>> {
    let c = &options.compaction;
    if table.client.config().table_type != TableType::MergeOnRead
        || !(c.inline || c.schedule_inline)
    {
        return Ok(None);
    }
    if !worth_a_look(table, c) {
        return Ok(None);
    }
    let mode = Mode::Inline { execute: c.inline };
    let r = locked(table, options, run(table, options, mode, None)).await?;
    Ok((!r.completed.is_empty() || r.scheduled.is_some()).then_some(r))
}

/// Whether a write's inline compaction has anything to do, judged without a request on the
/// timeline the write started from plus its own delta commit: a pending plan to execute, or
/// a new one due. (A run then lists the timeline afresh and decides again.)
fn worth_a_look(table: &Ctx<'_>, c: &CompactionConfig) -> bool {
    let timeline = table.client.timeline();
    if c.inline && timeline.pending().any(|i| i.is_compaction()) {
        return true;
    }
    time_after(table, &[]).is_ok_and(|now| schedule::due(&timeline, &now, c, 1).is_ok())
}

/// `work` under the table lock when several writers are configured (held throughout: the
/// plan is made, executed and committed against one timeline).
pub(super) async fn locked<T>(
    table: &Ctx<'_>,
    options: &WriteConfig,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let storage = table.client.storage().as_ref();
    options.concurrency.exclusive(storage, work).await
}

async fn run(
    table: &Ctx<'_>,
    options: &WriteConfig,
    mode: Mode,
    only: Option<&str>,
) -> Result<CompactionReport> {
    let client = table.client;
    let started = (client.io(), files::now_ms());
    refresh(table).await?;
    let config = client.config();
    if config.table_type != TableType::MergeOnRead {
        return Err(HudiError::unsupported_in(
            "compacting a Copy-On-Write table (its commits write base files already)",
            ".hoodie/hoodie.properties",
        ));
    }
    crate::write::check_writable(table)?;
    // Refused before any request: a plan written here could not be executed here.
    let visibility = client.timeline().visibility_as_of(None);
    if let Some((_, origin)) =
        crate::snapshot::schema::latest_internal_schema(client, &visibility).await?
    {
        return Err(HudiError::unsupported_in(
            "compacting a table whose schema evolved on read (its columns have ids)",
            &origin,
        ));
    }
    let mut report = CompactionReport::default();
    let pending: Vec<String> = client
        .timeline()
        .pending()
        .filter(|i| i.is_compaction())
        .map(|i| i.requested_time.clone())
        .collect();
    let run_pending = match mode {
        Mode::Inline { execute } => execute,
        Mode::Asked { schedule_only } => !schedule_only,
        Mode::Only => true,
    };
    check_pending(&pending, only, "compaction")?;
    let targets: Vec<&String> = match only {
        Some(t) => pending.iter().filter(|p| *p == t).collect(),
        None if run_pending => pending.iter().collect(),
        None => Vec::new(),
    };
    for t in targets {
        report
            .completed
            .push(execute(table, options, t, false).await?);
        refresh(table).await?;
    }
    let (schedule, execute_new) = match mode {
        Mode::Inline { execute } => (true, execute),
        Mode::Asked { schedule_only } => (true, !schedule_only),
        Mode::Only => (false, false),
    };
    if schedule {
        let forced = matches!(mode, Mode::Asked { .. });
        match plan_new(table, options, forced).await? {
            Ok(instant) if execute_new => {
                report
                    .completed
                    .push(execute(table, options, &instant, true).await?);
            }
            Ok(instant) => report.scheduled = Some(instant),
            Err(why) => report.not_scheduled = Some(why),
        }
    }
    report.io = client.io().since(&started.0);
    report.elapsed_ms = (files::now_ms() - started.1).max(0);
    Ok(report)
}

/// The handle's timeline as storage has it now (the metadata table's cache goes with a
/// change).
pub(super) async fn refresh(table: &Ctx<'_>) -> Result<()> {
    let listed = list_timeline(table.client).await?;
    if table.client.refresh_timeline(&listed) {
        table.metadata.clear();
    }
    Ok(())
}

/// The table's latest snapshot: the slices a service plans from and reads.
pub(super) async fn snapshot(table: &Ctx<'_>) -> Result<Snapshot> {
    table.snapshot().await
}

/// Writes a new plan when due (or `forced`): `Ok(instant)`, or `Err(why not)`.
async fn plan_new(
    table: &Ctx<'_>,
    options: &WriteConfig,
    forced: bool,
) -> Result<std::result::Result<String, String>> {
    let client = table.client;
    let instant = crate::write::publish::new_instant(table).await?;
    if !forced {
        if let Err(why) = schedule::due(&client.timeline(), &instant, &options.compaction, 0) {
            return Ok(Err(why));
        }
    }
    let (snapshot, busy) =
        futures::future::try_join(snapshot(table), busy_file_groups(table)).await?;
    let ops = schedule::operations(
        snapshot.latest_slices(),
        &busy,
        &instant,
        &options.compaction,
        options.max_file_size,
    );
    if ops.is_empty() {
        return Ok(Err("no file slice has log files to compact".into()));
    }
    let bytes = encode_avro_instant(
        InstantSchema::CompactionPlan,
        &plan_json(&ops, options.max_file_size),
    )?;
    let path = join(
        &client.config().timeline_dir,
        &format!("{instant}.compaction.requested"),
    );
    client
        .storage()
        .put(&path, Bytes::from(bytes), PutMode::Create)
        .await?;
    Ok(Ok(instant))
}

/// File groups a pending compaction, log compaction or clustering works on: a new plan
/// leaves them out (Java allows one pending operation per file group).
pub(super) async fn busy_file_groups(table: &Ctx<'_>) -> Result<HashSet<(String, String)>> {
    let client = table.client;
    let timeline = client.timeline();
    let services = timeline.pending().filter(|i| {
        matches!(
            i.requested_action(),
            action::COMPACTION
                | action::LOG_COMPACTION
                | action::CLUSTERING
                | action::REPLACE_COMMIT
        )
    });
    let plans = futures::future::try_join_all(services.map(|i| client.instant_plan(i))).await?;
    Ok(plans
        .iter()
        .flatten()
        .flat_map(planned_file_groups)
        .collect())
}

/// One planned file group: its slice as the plan names it, sizes from the snapshot.
pub(super) struct Planned {
    pub op: Operation,
    pub slice: FileSlice,
}

/// The plan of pending compaction `instant`, each operation's files found among the latest
/// slices (a plan naming a file the table no longer has is refused, naming it).
pub(super) fn planned_slices(
    snapshot: &Snapshot,
    ops: Vec<(Operation, Vec<String>)>,
    origin: &str,
) -> Result<Vec<Planned>> {
    let latest: HashMap<(&str, &str), &FileSlice> = (snapshot.latest_slices())
        .map(|s| ((s.partition.as_str(), s.file_id.as_str()), s))
        .collect();
    let mut out = Vec::with_capacity(ops.len());
    for (mut op, _) in ops {
        let missing = |name: &str| {
            HudiError::corrupt(
                origin,
                format!(
                    "the plan names {}, which file group {} does not hold now",
                    join(&op.partition, name),
                    op.file_id
                ),
            )
        };
        let Some(current) = latest.get(&(op.partition.as_str(), op.file_id.as_str())) else {
            return Err(missing(op.base_file.as_ref().map_or("its files", |b| &b.0)));
        };
        let base_file = match &op.base_file {
            Some((name, _)) => Some(
                (current.base_file.as_ref())
                    .filter(|b| &b.name == name)
                    .cloned()
                    .ok_or_else(|| missing(name))?,
            ),
            None => None,
        };
        let mut log_files = Vec::with_capacity(op.log_files.len());
        for (name, _) in &op.log_files {
            let found = (current.log_files.iter()).find(|l| &l.name == name);
            log_files.push(found.cloned().ok_or_else(|| missing(name))?);
        }
        // The slice's order (by completion time), whatever the plan's.
        log_files.sort_by(|a, b| a.log_order(b));
        op.base_file = base_file.as_ref().map(|b| (b.name.clone(), b.size));
        op.log_files = log_files.iter().map(|l| (l.name.clone(), l.size)).collect();
        let slice = FileSlice {
            partition: op.partition.clone(),
            file_id: op.file_id.clone(),
            base_instant: op.base_instant.clone(),
            base_file,
            log_files,
        };
        out.push(Planned { op, slice });
    }
    Ok(out)
}

/// Executes pending compaction `instant` from its plan and commits it.
async fn execute(
    table: &Ctx<'_>,
    options: &WriteConfig,
    instant: &str,
    scheduled_here: bool,
) -> Result<Compacted> {
    let client = table.client;
    let started = (client.io(), files::now_ms());
    let (rolled_back, requested, plan) = resume(table, instant, action::COMPACTION).await?;
    let config = client.config();
    let plan_ops = plan_operations(&plan, &requested)?;
    let snapshot = Arc::new(snapshot(table).await?);
    let planned = planned_slices(&snapshot, plan_ops, &requested)?;
    let (avro_schema, schemas) = file_schemas(table, &snapshot).await?;
    let touched: BTreeSet<String> = planned.iter().map(|p| p.op.partition.clone()).collect();
    let mdt = mdt_prefetch(table, &snapshot, &touched).await?;

    // The inflight instant with the markers of every file it writes: a crash from here on
    // is rolled back by the next run from them.
    let names: Vec<String> = (planned.iter())
        .map(|p| {
            join(
                &p.op.partition,
                &files::base_file_name(&p.op.file_id, instant),
            )
        })
        .collect();
    // A table with a change feed gets a CDC log file beside each new base file, as Java's
    // compaction writes one (marked up front: a crash leaves nothing unmarked).
    let cdc_names: Vec<String> = match schemas.cdc {
        Some(_) => (planned.iter())
            .map(|p| {
                join(
                    &p.op.partition,
                    &crate::write::cdc::file_name(&p.op.file_id, instant),
                )
            })
            .collect(),
        None => Vec::new(),
    };
    start_inflight(
        table,
        instant,
        action::COMPACTION,
        (&names, "MERGE"),
        &cdc_names,
    )
    .await?;

    let written = write_base_files(table, &snapshot, &schemas, options, &planned, instant).await?;

    let cdc_names: Vec<(String, String)> = (written.iter())
        .flat_map(|w| w.cdc.iter())
        .map(|(path, _)| {
            let (p, n) = path.rsplit_once('/').unwrap_or(("", path));
            (p.to_string(), n.to_string())
        })
        .collect();
    let entries: Vec<FileEntry<'_>> = (written.iter())
        .map(|w| FileEntry {
            partition: &w.partition,
            file_name: &w.name,
            size: w.size,
            columns: &w.file.columns,
        })
        .chain(
            (written.iter().flat_map(|w| w.cdc.iter()))
                .zip(&cdc_names)
                .map(|((_, size), (p, n))| FileEntry {
                    partition: p,
                    file_name: n,
                    size: *size,
                    columns: &[],
                }),
        )
        .collect();
    let metadata = commit_metadata(&written, &avro_schema);
    let encoded = encode_commit_metadata(&metadata, config.version)?;
    let completion = complete(
        table,
        mdt.as_ref(),
        instant,
        (&entries, Vec::new()),
        (action::COMMIT, encoded),
    )
    .await?;

    Ok(Compacted {
        instant: instant.to_string(),
        completion_time: completion,
        scheduled_here,
        rolled_back,
        file_groups: planned.len(),
        log_files: planned.iter().map(|p| p.op.log_files.len()).sum(),
        files_written: written
            .iter()
            .map(|w| join(&w.partition, &w.name))
            .collect(),
        records_written: written.iter().map(|w| w.file.num_rows).sum(),
        bytes_written: written.iter().map(|w| w.size).sum(),
        io: client.io().since(&started.0),
        elapsed_ms: (files::now_ms() - started.1).max(0),
    })
}

/// Pending `pending_action` `instant` made ready to execute: an earlier attempt left
/// inflight rolled back (the handle's timeline refreshed after it), then its plan read.
/// Returns the rollback, the plan's path and the plan.
pub(super) async fn resume(
    table: &Ctx<'_>,
    instant: &str,
    pending_action: &str,
) -> Result<(Option<RolledBack>, String, serde_json::Value)> {
    let client = table.client;
    let rolled_back = rollback::rollback_inflight_service(client, instant, pending_action).await?;
    if rolled_back.is_some() {
        refresh(table).await?;
    }
    let requested = join(
        &client.config().timeline_dir,
        &format!("{instant}.{pending_action}.requested"),
    );
    let bytes = (client.storage())
        .get(&requested, crate::storage::Purpose::Timeline)
        .await?;
    let plan = crate::timeline::metadata::decode_instant_file(&bytes, &requested)?;
    Ok((rolled_back, requested, plan))
}

/// The table's Avro schema and the schemas its base files are written with.
pub(super) async fn file_schemas(
    table: &Ctx<'_>,
    snapshot: &Snapshot,
) -> Result<(String, FileSchemas)> {
    let client = table.client;
    let (avro_schema, schema_origin) =
        crate::snapshot::schema::table_avro_schema(client, &snapshot.visibility)
            .await?
            .ok_or_else(|| {
                HudiError::unsupported_in("rewriting a table with no schema", ".hoodie")
            })?;
    let schemas = FileSchemas::new(client.config(), snapshot.schema.clone(), &avro_schema)
        .map_err(|e| match e {
            HudiError::InvalidArgument(why) => HudiError::corrupt(schema_origin.clone(), why),
            other => other,
        })?;
    Ok((avro_schema, schemas))
}

/// The metadata table's reads for a service's delta commit over `touched` partitions,
/// before the first request that changes anything (`None` without a metadata table).
pub(super) async fn mdt_prefetch(
    table: &Ctx<'_>,
    snapshot: &Snapshot,
    touched: &BTreeSet<String>,
) -> Result<Option<mdt::MdtPrefetch>> {
    let config = table.client.config();
    if config.metadata_partitions.is_empty() {
        return Ok(None);
    }
    let mdt = table.metadata_table(&[]).await?;
    let columns: Vec<String> = (snapshot.schema.fields().iter())
        .map(|f| f.name().clone())
        .collect();
    let storage = table.client.storage().as_ref();
    mdt::prefetch(storage, &mdt, config, touched, Some(&columns))
        .await
        .map(Some)
}

/// `<instant>.<action>.inflight` with the markers (of `kind`, `MERGE` or `CREATE`) of every
/// file the service writes, `names` relative to the table.
pub(super) async fn start_inflight(
    table: &Ctx<'_>,
    instant: &str,
    pending_action: &str,
    (names, kind): (&[String], &str),
    appended: &[String],
) -> Result<()> {
    let config = table.client.config();
    let storage = table.client.storage();
    let marker_dir = crate::write::pending::marker_dir(instant);
    let marker_lines: String = (names.iter())
        .map(|n| format!("{n}.marker.{kind}\n"))
        .chain(appended.iter().map(|n| format!("{n}.marker.APPEND\n")))
        .collect();
    let inflight = join(
        &config.timeline_dir,
        &format!("{instant}.{pending_action}.inflight"),
    );
    settle_all([
        storage.put(&inflight, Bytes::new(), PutMode::Create),
        storage.put(
            &format!("{marker_dir}/MARKERS.type"),
            Bytes::from_static(b"TIMELINE_SERVER_BASED"),
            PutMode::Overwrite,
        ),
        storage.put(
            &format!("{marker_dir}/MARKERS0"),
            Bytes::from(marker_lines),
            PutMode::Overwrite,
        ),
    ])
    .await
    .map_err(|e| match e {
        HudiError::Conflict { path, .. } => HudiError::Conflict {
            path,
            detail: format!("{pending_action} {instant} is being executed by another run"),
        },
        other => other,
    })?;
    Ok(())
}

/// The metadata table's delta commit at the service's instant (its new files, their
/// statistics, `record_index` changes), then the commit point: `<instant>_<t>.<action>`
/// holding `encoded`, written create-if-absent. Returns the completion time.
pub(super) async fn complete(
    table: &Ctx<'_>,
    prefetch: Option<&mdt::MdtPrefetch>,
    instant: &str,
    (entries, record_index): (
        &[FileEntry<'_>],
        Vec<crate::metadata::delta::RecordIndexChange>,
    ),
    (completed_action, encoded): (&str, Vec<u8>),
) -> Result<String> {
    let config = table.client.config();
    let storage = table.client.storage();
    let mut floor = instant_floor(table).await?;
    floor.push(instant.to_string());
    if let Some(prefetch) = prefetch {
        // Compaction and clustering keep every key's values: no secondary-index entries (as Java).
        let delta = mdt::build(prefetch, config, instant, entries, record_index, Vec::new())?;
        let prepared = mdt::prepare(config, &delta, instant)?;
        prepared.request(storage.as_ref()).await?;
        settle_all((prepared.pending_puts()).map(|(p, b)| storage.put(p, b, PutMode::Create)))
            .await?;
        let t = time_after(table, &floor)?;
        floor.push(t.clone());
        let (path, bytes) = prepared.completed(&t);
        storage.put(&path, bytes, PutMode::Create).await?;
    }
    let completion = time_after(table, &floor)?;
    let done = join(
        &config.timeline_dir,
        &format!("{instant}_{completion}.{completed_action}"),
    );
    storage
        .put(&done, Bytes::from(encoded), PutMode::Create)
        .await?;
    Ok(completion)
}

/// A new base file and its write stat.
struct Written {
    partition: String,
    name: String,
    /// Its bytes are dropped once written (`size` keeps their length): a compaction holds
    /// one file group's file at a time, not the whole table's.
    file: WrittenBaseFile,
    size: u64,
    stat: WriteStat,
    /// The CDC log file beside it (tables with a change feed): path and size, once written.
    cdc: Option<(String, u64)>,
}

/// Rows a slice's merge held at once are at most about this many per batch.
const BATCH_ROWS: usize = 8192;

/// Merges each planned slice into its new base file and writes it, one file group at a
/// time (a file group's rows are freed once written; the next one's merge overlaps the
/// previous one's PUT).
async fn write_base_files(
    table: &Ctx<'_>,
    snapshot: &Snapshot,
    schemas: &FileSchemas,
    options: &WriteConfig,
    planned: &[Planned],
    instant: &str,
) -> Result<Vec<Written>> {
    let client = table.client;
    let storage: &Arc<dyn Storage> = client.storage();
    let config = client.config();
    let put = |file: Option<(String, Bytes)>| async move {
        if let Some((path, bytes)) = file {
            // Overwritten: a rolled-back attempt's file of the same name is gone already,
            // unless its delete failed quietly.
            storage.put(&path, bytes, PutMode::Overwrite).await?;
        }
        Ok::<_, HudiError>(())
    };
    let mut out = Vec::with_capacity(planned.len());
    let mut unwritten: Option<(String, Bytes)> = None;
    for p in planned {
        let build = async {
            let started = files::now_ms();
            let (rows, stats) = crate::merge::merged_slice_counted(
                client,
                &snapshot.schema,
                &snapshot.visibility,
                &p.slice,
                BATCH_ROWS,
                None,
            )
            .await?;
            let read_ms = (files::now_ms() - started).max(0);
            let name = files::base_file_name(&p.op.file_id, instant);
            let rows = arrow_select::concat::concat_batches(&snapshot.schema, &rows)
                .map_err(malformed_by)?;
            let batch = crate::write::build::in_base_file(
                &rows,
                &name,
                &p.op.partition,
                &schemas.base,
                config,
            )?;
            let file = crate::write::build::base_file_bytes(
                &batch,
                &schemas.base_avro,
                &options.base_file,
            )?;
            let cdc = match &schemas.cdc {
                Some(w) => {
                    let base_only = FileSlice {
                        log_files: Vec::new(),
                        ..p.slice.clone()
                    };
                    let (old, _) = crate::merge::merged_slice_counted(
                        client,
                        &snapshot.schema,
                        &snapshot.visibility,
                        &base_only,
                        BATCH_ROWS,
                        None,
                    )
                    .await?;
                    let old = arrow_select::concat::concat_batches(&snapshot.schema, &old)
                        .map_err(malformed_by)?;
                    let changes = crate::write::cdc::compacted(&old, &rows)?;
                    let at = (instant, p.op.partition.as_str(), p.op.file_id.as_str());
                    w.file(at, &changes.as_changes(), &old, &rows)?
                }
                None => None,
            };
            let total_ms = (files::now_ms() - started).max(0);
            let mut stat = write_stat(&p.op, &name, &file, &stats, (read_ms, total_ms));
            stat.cdc_stats = (cdc.as_ref())
                .map(|c| std::iter::once((c.path.clone(), c.bytes.len() as i64)).collect());
            Ok::<_, HudiError>((p.op.partition.clone(), name, file, stat, cdc))
        };
        let (previous, built) = futures::join!(put(unwritten.take()), build);
        previous?;
        let (partition, name, mut file, stat, cdc) = built?;
        let cdc = match cdc {
            Some(c) => {
                let size = c.bytes.len() as u64;
                put(Some((c.path.clone(), c.bytes))).await?;
                Some((c.path, size))
            }
            None => None,
        };
        let bytes = std::mem::take(&mut file.bytes);
        let size = bytes.len() as u64;
        unwritten = Some((join(&partition, &name), bytes));
        out.push(Written {
            partition,
            name,
            file,
            size,
            stat,
            cdc,
        });
    }
    put(unwritten).await?;
    Ok(out)
}

/// The write stat of one compacted file group, in the shape Spark 1.1 writes it.
fn write_stat(
    op: &Operation,
    name: &str,
    file: &WrittenBaseFile,
    stats: &crate::merge::LogScanStats,
    (read_ms, total_ms): (i64, i64),
) -> WriteStat {
    let n = |x: usize| x as u64;
    let counts = StatCounts {
        written: file.num_rows,
        updates: n(stats.base_updated),
        deletes: n(stats.base_deleted),
        inserts: n(stats.log_only),
        log_records: n(stats.records + stats.deletes),
        log_blocks: n(stats.blocks),
        corrupt_blocks: n(stats.corrupt_blocks),
        rollback_blocks: n(stats.rolled_back_blocks),
        records_compacted: n(stats.base_updated + stats.base_deleted + stats.log_only),
        bytes: file.bytes.len() as u64,
        read_ms,
        total_ms,
    };
    crate::file_group::compaction::write_stat(op, &join(&op.partition, name), &counts)
}

/// The completed compaction's metadata as Spark 1.1 writes it: write stats by partition
/// (in Java's `HashMap` order), `compacted`, the table's schema, `operationType: COMPACT`.
fn commit_metadata(written: &[Written], schema: &str) -> CommitMetadata {
    let mut by_partition: BTreeMap<&str, Vec<WriteStat>> = BTreeMap::new();
    for w in written {
        by_partition
            .entry(&w.partition)
            .or_default()
            .push(w.stat.clone());
    }
    let names: Vec<&str> = by_partition.keys().copied().collect();
    let ordered = crate::hfile::writer::java_hash_map_order(&names)
        .into_iter()
        .map(|i| {
            let stats = by_partition.remove(names[i]).unwrap_or_default();
            (names[i].to_string(), stats)
        })
        .collect();
    crate::file_group::compaction::commit_metadata(ordered, schema)
}
