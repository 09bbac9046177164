//! The shapes that cross to JavaScript or are printed as JSON by the CLI: one type and one
//! name per concept. The CLI prints them in snake_case; on the wasm target the same names
//! are camelCase, and `tsify` writes their TypeScript declarations into the `.d.ts`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
#[cfg(target_arch = "wasm32")]
use tsify_next::Tsify;

use crate::config::TableConfig;
use crate::error::HudiError;
use crate::file_group::view::FileSystemView;
use crate::read::cdc::{ChangeFeed, FeedPlan};

/// A serde value enum's name (`COPY_ON_WRITE`, `EVENT_TIME_ORDERING` ...).
fn name_of<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

/// One instant of the timeline.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct Instant {
    pub requested_time: String,
    pub completion_time: Option<String>,
    /// The action of its current state (a finished compaction is a `commit`).
    pub action: String,
    /// What it was requested as (`compaction`, `clustering`, or the same as `action`).
    pub requested_action: String,
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "\"requested\" | \"inflight\" | \"completed\"")
    )]
    pub state: String,
    /// `file_name`, `file_modification_time` or `archive`. The package's public name
    /// (`completionSource`) is fixed by its API.
    #[cfg_attr(target_arch = "wasm32", serde(rename = "completionSource"))]
    pub completion_time_source: Option<String>,
    pub archived: bool,
    /// The timeline file carrying its current state ('' for archived instants).
    pub file: String,
    /// The write operation from the commit metadata, when it was read.
    pub operation: Option<String>,
}

impl From<&crate::timeline::Instant> for Instant {
    fn from(i: &crate::timeline::Instant) -> Self {
        Instant {
            requested_time: i.requested_time.clone(),
            completion_time: i.completion_time.clone(),
            action: i.action.clone(),
            requested_action: i.requested_action().to_string(),
            state: i.state.as_str().to_string(),
            completion_time_source: i.completion_source.map(str::to_string),
            archived: i.archived,
            file: i.file.clone(),
            operation: None,
        }
    }
}

/// `timeline --json`, `timeline()`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct Timeline {
    pub table: String,
    pub instants: Vec<Instant>,
}

/// `commit`: an instant and its content as Hudi wrote it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct InstantContent {
    pub instant: Instant,
    #[cfg_attr(target_arch = "wasm32", tsify(type = "unknown"))]
    pub content: Value,
}

/// The I/O of an operation or of the table since it was opened (by purpose, with what the
/// storage worked around): the core's own snapshot.
pub use crate::storage::{IoSnapshot, PurposeIo};

/// What a long operation has cost so far (`onProgress`): the read driver's own.
pub use crate::read::ScanProgress as Progress;

/// `write()`: what one write committed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct WriteResult {
    /// The commit's requested time.
    pub instant: String,
    pub completion_time: String,
    /// `commit` (Copy-On-Write) or `deltacommit` (Merge-On-Read).
    pub action: String,
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "\"upsert\" | \"insert\" | \"delete\"")
    )]
    pub operation: String,
    pub records: WriteRecords,
    /// Data files written, relative to the base path.
    pub files_written: Vec<String>,
    pub metadata_table: MetadataTableWrite,
    /// Failed writes rolled back first (their instants).
    pub rolled_back: Vec<String>,
    /// Tries the commit took (more than one when a lost conflict was retried).
    pub attempts: u32,
    /// What the write cost.
    pub io: IoSnapshot,
    /// Cleans run after the commit (the data table's, the metadata table's own).
    pub clean: Vec<CleanResult>,
    /// Services that failed after the commit (the commit stands).
    pub service_errors: Vec<ServiceError>,
    /// Archival run after the commit, when it moved anything.
    pub archival: Option<ArchiveResult>,
    /// Merge-On-Read compaction run after the commit, when one was due or pending.
    pub compaction: Option<CompactReport>,
    /// Clustering run after the commit, when one was due or pending.
    pub clustering: Option<ClusterReport>,
    /// Requests after the commit: deciding whether a service is due, and running it.
    pub services_io: IoSnapshot,
}

/// `runServices()`: the table services a write defers (`deferServices`), run on their own.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ServicesRun {
    /// Cleans (the data table's, the metadata table's own).
    pub clean: Vec<CleanResult>,
    /// Services that failed (their next run finishes what they left).
    pub service_errors: Vec<ServiceError>,
    /// Archival, when it moved anything.
    pub archival: Option<ArchiveResult>,
    /// Merge-On-Read compaction, when one was due or pending.
    pub compaction: Option<CompactReport>,
    /// Clustering, when one was due or pending.
    pub clustering: Option<ClusterReport>,
    /// Failed writes the clean rolled back first (their instants).
    pub rolled_back: Vec<String>,
    /// The metadata table's compaction (its instant), when a deferring write left it due.
    pub metadata_table_compaction: Option<String>,
    /// Requests: deciding whether each service is due, and running it.
    pub io: IoSnapshot,
}

impl ServicesRun {
    pub fn of(
        done: crate::write::services::AfterCommit,
        rolled_back: Vec<crate::write::RolledBack>,
    ) -> ServicesRun {
        ServicesRun {
            clean: done.clean.into_iter().map(CleanResult::from).collect(),
            service_errors: (done.errors.into_iter())
                .map(|e| ServiceError {
                    service: e.service.to_string(),
                    code: e.code.to_string(),
                    message: e.message,
                })
                .collect(),
            archival: done.archival.map(ArchiveResult::from),
            compaction: done.compaction.map(CompactReport::from),
            clustering: done.clustering.map(ClusterReport::from),
            rolled_back: rolled_back.into_iter().map(|b| b.instant).collect(),
            metadata_table_compaction: done.metadata_compaction.map(|c| c.instant),
            io: done.io,
        }
    }
}

/// A table service that failed after a commit.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ServiceError {
    pub service: String,
    pub code: String,
    pub message: String,
}

/// One compaction executed and committed (`compact()`, or after a write).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct CompactionResult {
    pub instant: String,
    pub completion_time: String,
    /// Scheduled by this run (else a plan found pending: ours, or another writer's).
    pub scheduled_here: bool,
    pub file_groups: usize,
    pub log_files: usize,
    /// New base files, relative to the base path.
    pub files_written: Vec<String>,
    pub records_written: u64,
    pub bytes_written: u64,
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

/// What `compact()` did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct CompactReport {
    /// Compactions committed, oldest first: pending plans before a new one.
    pub completed: Vec<CompactionResult>,
    /// A plan written and left for a later run (schedule only).
    pub scheduled: Option<String>,
    /// Why no new plan was written.
    pub not_scheduled: Option<String>,
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

impl From<crate::write::CompactionReport> for CompactReport {
    fn from(r: crate::write::CompactionReport) -> Self {
        CompactReport {
            completed: (r.completed.into_iter())
                .map(|c| CompactionResult {
                    instant: c.instant,
                    completion_time: c.completion_time,
                    scheduled_here: c.scheduled_here,
                    file_groups: c.file_groups,
                    log_files: c.log_files,
                    files_written: c.files_written,
                    records_written: c.records_written,
                    bytes_written: c.bytes_written,
                    io: c.io,
                    elapsed_ms: c.elapsed_ms,
                })
                .collect(),
            scheduled: r.scheduled,
            not_scheduled: r.not_scheduled,
            io: r.io,
            elapsed_ms: r.elapsed_ms,
        }
    }
}

/// One clustering executed and committed (`cluster()`, or after a write).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ClusteringResult {
    pub instant: String,
    pub completion_time: String,
    /// Scheduled by this run (else a plan found pending: ours, or another writer's).
    pub scheduled_here: bool,
    pub groups: usize,
    /// File groups replaced, as `partition/fileId`.
    pub file_groups_replaced: Vec<String>,
    pub bytes_replaced: u64,
    /// New base files, relative to the base path.
    pub files_written: Vec<String>,
    pub records_written: u64,
    pub bytes_written: u64,
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

/// What `cluster()` did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ClusterReport {
    /// Clusterings committed, oldest first.
    pub completed: Vec<ClusteringResult>,
    /// A plan written and left for a later run (schedule only).
    pub scheduled: Option<String>,
    /// Why no new plan was written.
    pub not_scheduled: Option<String>,
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

impl From<crate::write::ClusteringReport> for ClusterReport {
    fn from(r: crate::write::ClusteringReport) -> Self {
        let completed = (r.completed.into_iter())
            .map(|c| ClusteringResult {
                instant: c.instant,
                completion_time: c.completion_time,
                scheduled_here: c.scheduled_here,
                groups: c.groups,
                file_groups_replaced: c.file_groups_replaced,
                bytes_replaced: c.bytes_replaced,
                files_written: c.files_written,
                records_written: c.records_written,
                bytes_written: c.bytes_written,
                io: c.io,
                elapsed_ms: c.elapsed_ms,
            })
            .collect();
        ClusterReport {
            completed,
            scheduled: r.scheduled,
            not_scheduled: r.not_scheduled,
            io: r.io,
            elapsed_ms: r.elapsed_ms,
        }
    }
}

/// What `archive()` moved from one timeline to its LSM history.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct TimelineArchived {
    /// Requested times, oldest first.
    pub instants: Vec<String>,
    /// The history file they went to, relative to the base path.
    pub history_file: String,
    /// History files written by merging a layer into the next.
    pub merged_into: Vec<String>,
    pub files_deleted: usize,
}

/// What `archive()` did: each timeline's part, `null` where nothing was due.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ArchiveResult {
    pub data_table: Option<TimelineArchived>,
    pub metadata_table: Option<TimelineArchived>,
    pub requests: u64,
    pub bytes: u64,
    pub elapsed_ms: i64,
}

impl From<crate::write::services::archive::Archival> for ArchiveResult {
    fn from(a: crate::write::services::archive::Archival) -> Self {
        let part = |t: Option<crate::write::services::archive::TimelineArchived>| {
            t.map(|t| TimelineArchived {
                instants: t.instants,
                history_file: t.history_file,
                merged_into: t.merged_into,
                files_deleted: t.files_deleted,
            })
        };
        ArchiveResult {
            data_table: part(a.data_table),
            metadata_table: part(a.metadata_table),
            requests: a.io.requests,
            bytes: a.io.bytes,
            elapsed_ms: a.elapsed_ms,
        }
    }
}

/// One clean that ran (`clean()`, or after a write).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct CleanResult {
    /// `data`, or `metadata` for the metadata table's own clean.
    #[cfg_attr(target_arch = "wasm32", tsify(type = "\"data\" | \"metadata\""))]
    pub table: String,
    pub instant: String,
    pub completion_time: String,
    /// It finished a clean an earlier run left pending.
    pub resumed: bool,
    pub policy: String,
    /// The retain point (empty under KEEP_LATEST_FILE_VERSIONS).
    pub earliest_commit_to_retain: String,
    pub files_deleted: u64,
    /// Planned files that were already gone.
    pub files_missing: u64,
    /// Bytes of the deleted files as listed when planned.
    pub bytes_freed: u64,
    pub partitions: u64,
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

impl From<crate::write::services::clean::Clean> for CleanResult {
    fn from(c: crate::write::services::clean::Clean) -> Self {
        CleanResult {
            table: c.table.to_string(),
            instant: c.instant,
            completion_time: c.completion_time,
            resumed: c.resumed,
            policy: c.policy,
            earliest_commit_to_retain: c.earliest_commit_to_retain,
            files_deleted: c.files_deleted as u64,
            files_missing: c.files_missing as u64,
            bytes_freed: c.bytes_freed,
            partitions: c.partitions as u64,
            io: c.io,
            elapsed_ms: c.elapsed_ms,
        }
    }
}

/// Rows a write inserted, updated and deleted.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct WriteRecords {
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    /// Deletes of keys the table does not hold (no-ops).
    pub delete_missing: u64,
    /// Input rows dropped because another row with the same key won.
    pub deduplicated: u64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct MetadataTableWrite {
    /// Metadata-table partitions that got records in this commit.
    pub partitions: Vec<String>,
    /// The metadata-table compaction instant run before the write, if any.
    pub compaction: Option<String>,
}

impl From<crate::write::WriteResult> for WriteResult {
    fn from(r: crate::write::WriteResult) -> Self {
        let c = r.records;
        let services = ServicesRun::of(r.services, Vec::new());
        WriteResult {
            instant: r.instant,
            completion_time: r.completion_time,
            action: r.action,
            operation: r.operation,
            records: WriteRecords {
                inserted: c.inserted,
                updated: c.updated,
                deleted: c.deleted,
                delete_missing: c.delete_missing,
                deduplicated: c.deduplicated,
            },
            files_written: r.files_written,
            metadata_table: MetadataTableWrite {
                partitions: r.metadata_table.partitions,
                compaction: r.metadata_table.compaction.map(|c| c.instant),
            },
            rolled_back: r.rolled_back.into_iter().map(|b| b.instant).collect(),
            attempts: r.attempts,
            io: r.io,
            clean: services.clean,
            service_errors: services.service_errors,
            archival: services.archival,
            compaction: services.compaction,
            clustering: services.clustering,
            services_io: services.io,
        }
    }
}

/// An error: its stable code, message and the object it concerns.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ErrorInfo {
    pub code: String,
    pub message: String,
    pub object: Option<String>,
}

impl From<&HudiError> for ErrorInfo {
    fn from(e: &HudiError) -> Self {
        ErrorInfo {
            code: e.code().to_string(),
            message: e.to_string(),
            object: e.object().map(str::to_string),
        }
    }
}

/// A file the file-system view left out, and why.
/// Files at each pruning stage, and the files the view left out: the core's own.
pub use crate::file_group::view::Skipped;
pub use crate::read::PlanStats;

/// A file slice a plan reads (paths relative to the base path).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct PlannedSlice {
    pub partition: String,
    pub file_id: String,
    pub base_instant: String,
    pub base_file: Option<String>,
    pub log_files: Vec<String>,
}

/// `plan --json`, `plan()`: the file slices a read selects, and why.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct Plan {
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "\"snapshot\" | \"read_optimized\" | \"incremental\"")
    )]
    pub query: String,
    pub as_of: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub file_slices: Vec<PlannedSlice>,
    pub stats: PlanStats,
    /// What planning cost.
    pub io: IoSnapshot,
}

impl From<&crate::read::Plan> for Plan {
    fn from(plan: &crate::read::Plan) -> Self {
        Plan {
            query: name_of(&plan.query),
            as_of: plan.as_of.clone(),
            start: plan.start.clone(),
            end: plan.end.clone(),
            file_slices: plan
                .file_slices
                .iter()
                .map(|s| PlannedSlice {
                    partition: s.partition.clone(),
                    file_id: s.file_id.clone(),
                    base_instant: s.base_instant.clone(),
                    base_file: s.base_path(),
                    log_files: s.log_paths(),
                })
                .collect(),
            stats: plan.stats.clone(),
            io: plan.io.clone(),
        }
    }
}

/// `read --stats`: what a read cost.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ReadStats {
    pub rows: usize,
    pub stats: PlanStats,
    pub plan_io: IoSnapshot,
    pub read_io: IoSnapshot,
    pub total_io: IoSnapshot,
}

/// A table's properties and size (`info()`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct TableInfo {
    pub name: String,
    pub database: Option<String>,
    /// `COPY_ON_WRITE` or `MERGE_ON_READ`. The package's public name (`type`) is fixed by
    /// its API.
    #[cfg_attr(target_arch = "wasm32", serde(rename = "type"))]
    pub table_type: String,
    pub version: u32,
    pub base_file_format: String,
    pub record_key_fields: Vec<String>,
    pub partition_fields: Vec<String>,
    pub ordering_fields: Vec<String>,
    pub key_generator: Option<String>,
    pub hive_style_partitioning: bool,
    pub populate_meta_fields: bool,
    pub merge_mode: Option<String>,
    /// Partitions in the latest snapshot.
    pub partition_count: usize,
    /// File groups in the latest snapshot.
    pub file_group_count: usize,
    /// Bytes of the latest file slices.
    pub total_bytes: u64,
    pub metadata_partitions: Vec<String>,
    pub metadata_partitions_inflight: Vec<String>,
    pub timezone: Option<String>,
    pub properties: BTreeMap<String, String>,
}

impl TableInfo {
    pub fn new(c: &TableConfig, latest: &FileSystemView) -> Self {
        TableInfo {
            name: c.name.clone(),
            database: c.database.clone(),
            table_type: name_of(&c.table_type),
            version: c.version,
            base_file_format: name_of(&c.base_file_format),
            record_key_fields: c.record_key_fields.clone(),
            partition_fields: c.partition_fields.clone(),
            ordering_fields: c.ordering_fields.clone(),
            key_generator: Some(name_of(&c.key_generator)),
            hive_style_partitioning: c.hive_style_partitioning,
            populate_meta_fields: c.populate_meta_fields,
            merge_mode: Some(name_of(&c.merge_mode)),
            partition_count: latest.partitions().len(),
            file_group_count: latest.groups.len(),
            total_bytes: latest.latest_slices().map(|s| s.total_size()).sum(),
            metadata_partitions: c.metadata_partitions.clone(),
            metadata_partitions_inflight: c.metadata_partitions_inflight.clone(),
            timezone: Some(name_of(&c.timezone)),
            properties: c.properties.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct BaseFile {
    pub name: String,
    pub size: u64,
    pub instant: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct LogFile {
    pub name: String,
    pub size: u64,
    pub instant: String,
    pub version: u32,
    pub completion_time: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct FileSlice {
    pub base_instant: String,
    pub base_file: Option<BaseFile>,
    pub log_files: Vec<LogFile>,
    /// Base plus logs.
    pub size: u64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct FileGroup {
    pub file_id: String,
    /// Oldest first; the last one is the latest.
    pub slices: Vec<FileSlice>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct PartitionLayout {
    pub partition: String,
    pub file_groups: Vec<FileGroup>,
}

/// `fileGroups()`: partitions → file groups → file slices.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct FileLayout {
    pub partitions: Vec<PartitionLayout>,
    /// File groups replaced by clustering / insert overwrite and no longer visible.
    pub replaced_groups: usize,
    /// Files on storage the view left out, and why.
    pub skipped: Vec<Skipped>,
}

impl From<&FileSystemView> for FileLayout {
    fn from(v: &FileSystemView) -> Self {
        let mut partitions: Vec<PartitionLayout> = Vec::new();
        for g in &v.groups {
            let group = FileGroup {
                file_id: g.file_id.clone(),
                slices: g.slices.iter().map(slice_layout).collect(),
            };
            match partitions.last_mut() {
                Some(p) if p.partition == g.partition => p.file_groups.push(group),
                _ => partitions.push(PartitionLayout {
                    partition: g.partition.clone(),
                    file_groups: vec![group],
                }),
            }
        }
        FileLayout {
            partitions,
            replaced_groups: v.replaced_groups,
            skipped: v.skipped.clone(),
        }
    }
}

fn slice_layout(s: &crate::file_group::FileSlice) -> FileSlice {
    FileSlice {
        base_instant: s.base_instant.clone(),
        base_file: s.base_file.as_ref().map(|b| BaseFile {
            name: b.name.clone(),
            size: b.size,
            instant: b.instant.clone(),
        }),
        log_files: s
            .log_files
            .iter()
            .map(|l| LogFile {
                name: l.name.clone(),
                size: l.size,
                instant: l.instant.clone(),
                version: l.version,
                completion_time: l.completion_time.clone(),
            })
            .collect(),
        size: s.total_size(),
    }
}

/// `health --json`, `t.health()`; `health --fix`, `t.fix()`; `tables --json`, `discover()`.
pub use crate::health::discover::{DiscoveredTable, Discovery};
pub use crate::health::{Finding, FixOutcome, Health, Severity};

/// `read --query cdc --stats`: what a change-feed read returned and cost.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ChangeStats {
    pub rows: usize,
    /// Rows by operation (`i`, `u`, `d`).
    pub operations: BTreeMap<String, usize>,
    pub instants: usize,
    /// File-group changes read, by where they came from (`AS_IS`, `LOG_FILE`, …).
    pub splits: BTreeMap<String, usize>,
    pub plan_io: IoSnapshot,
    pub read_io: IoSnapshot,
}

impl From<&ChangeFeed> for ChangeStats {
    fn from(feed: &ChangeFeed) -> Self {
        let mut splits = BTreeMap::new();
        for s in &feed.plan.splits {
            *splits.entry(case_name(s.case)).or_default() += 1;
        }
        ChangeStats {
            rows: feed.num_rows(),
            operations: crate::read::cdc::counts(feed),
            instants: feed.plan.instants.len(),
            splits,
            plan_io: feed.plan.io.clone(),
            read_io: feed.io.clone(),
        }
    }
}

fn case_name(case: crate::read::cdc::InferenceCase) -> String {
    serde_json::to_value(case)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `plan --query cdc`: which files serve which commit of a change feed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ChangePlan {
    /// `hoodie.table.cdc.supplemental.logging.mode`.
    pub mode: String,
    /// Requested times of the range's commits that changed data, oldest first.
    pub instants: Vec<String>,
    pub splits: Vec<ChangeSplit>,
    pub io: IoSnapshot,
}

/// One commit's changes to one file group, and the files they are read from.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ChangeSplit {
    pub instant: String,
    /// `AS_IS` (CDC log files), `BASE_FILE_INSERT`, `BASE_FILE_DELETE`, `LOG_FILE`
    /// (merged with the slice before) or `REPLACE_COMMIT`.
    pub case: String,
    pub partition: String,
    pub file_id: String,
    pub files: Vec<String>,
    /// The slice before the commit (base file, then log files), where read.
    pub before: Vec<String>,
    /// The slice after the commit, where read.
    pub after: Vec<String>,
}

impl From<&FeedPlan> for ChangePlan {
    fn from(feed: &FeedPlan) -> Self {
        let files = |s: &Option<crate::file_group::FileSlice>| {
            s.as_ref()
                .map(|s| s.base_path().into_iter().chain(s.log_paths()).collect())
                .unwrap_or_default()
        };
        ChangePlan {
            mode: serde_json::to_value(feed.mode)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            instants: feed.instants.clone(),
            splits: (feed.splits.iter())
                .map(|s| ChangeSplit {
                    instant: s.instant.clone(),
                    case: case_name(s.case),
                    partition: s.partition.clone(),
                    file_id: s.file_id.clone(),
                    files: s.files.clone(),
                    before: files(&s.before),
                    after: files(&s.after),
                })
                .collect(),
            io: feed.io.clone(),
        }
    }
}
