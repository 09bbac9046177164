//! The change feed (CDC) of a table with `hoodie.table.cdc.enabled`, as Apache Hudi's Spark
//! query (`hoodie.datasource.query.incremental.format=cdc`) returns it: one row per changed
//! record with `op` (`i`, `u`, `d`), `ts_ms` (the commit's requested time) and the `before`
//! and `after` images as JSON strings (docs/hudi-services.md, "CDC").
//!
//! Each completed commit, delta commit or replace commit whose requested time falls in
//! `(start, end]` and whose operation changes data is split per file group it wrote, and each
//! split says where its changes come from ([`InferenceCase`]): CDC log files as written,
//! a base file inserted or deleted whole, a log file merged with the slice before it, or the
//! file groups a replace commit dropped. Compaction and clustering change nothing.

pub mod image;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use indexmap::IndexMap;
use serde::Serialize;

use super::{Plan, ReadOptions, Scan, ScanProgress};
use crate::error::{HudiError, Result};
use crate::file_group::view::{self, DataFile};
use crate::file_group::{BaseFile, FileSlice, LogFile};
use crate::log_file::BlockType;
use crate::meta_client::MetaClient;
use crate::schema::evolution::SchemaEvolution;
use crate::storage::IoSnapshot;
use crate::timeline::metadata::{CommitMetadata, WriteStat};
use crate::timeline::{action, compare_instant_times, Instant, Visibility};

/// `hoodie.table.cdc.supplemental.logging.mode`: what CDC log files keep besides the
/// operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SupplementalMode {
    OpKeyOnly,
    DataBefore,
    DataBeforeAfter,
}

impl SupplementalMode {
    pub const KEY: &'static str = "hoodie.table.cdc.supplemental.logging.mode";

    /// A mode by its Java name, case-insensitive.
    pub fn parse(name: &str) -> Option<SupplementalMode> {
        match name.trim().to_ascii_uppercase().as_str() {
            "OP_KEY_ONLY" => Some(SupplementalMode::OpKeyOnly),
            "DATA_BEFORE" => Some(SupplementalMode::DataBefore),
            "DATA_BEFORE_AFTER" => Some(SupplementalMode::DataBeforeAfter),
            _ => None,
        }
    }

    /// The table's mode (Hudi 0.13's `cdc_op_key`, `cdc_data_before…` names too).
    pub fn of(config: &crate::config::TableConfig) -> Result<SupplementalMode> {
        let Some(v) = config.property(Self::KEY) else {
            return Ok(SupplementalMode::DataBeforeAfter);
        };
        let upper = v.trim().to_ascii_uppercase();
        let name = match upper.strip_prefix("CDC_") {
            Some("OP_KEY") => "OP_KEY_ONLY",
            Some(rest) => rest,
            None => &upper,
        };
        Self::parse(name).ok_or_else(|| {
            HudiError::corrupt(
                ".hoodie/hoodie.properties",
                format!(
                    "unknown {} {v:?} (OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER)",
                    Self::KEY
                ),
            )
        })
    }
}

/// Where one commit's changes to one file group come from (Java's `HoodieCDCInferenceCase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InferenceCase {
    /// CDC log files the writer wrote.
    AsIs,
    /// A new base file: every record inserted.
    BaseFileInsert,
    /// A delete emptied the file group: every record of the previous base file deleted.
    BaseFileDelete,
    /// A log file, compared with the slice before it.
    LogFile,
    /// A file group a replace commit dropped: every record of its latest slice deleted.
    ReplaceCommit,
}

/// One commit's changes to one file group.
#[derive(Debug, Clone, Serialize)]
pub struct Split {
    pub instant: String,
    pub case: InferenceCase,
    pub partition: String,
    pub file_id: String,
    /// The files read for the changes (relative to the table): CDC log files, the base or
    /// log file written.
    pub files: Vec<String>,
    /// The slice before the commit, where the changes need it.
    pub before: Option<FileSlice>,
    /// The slice the commit wrote, where after images come from it.
    pub after: Option<FileSlice>,
}

/// Which commits and files a change feed reads.
#[derive(Debug, Clone)]
pub struct FeedPlan {
    pub mode: SupplementalMode,
    /// Requested times of the range's commits that changed data, oldest first.
    pub instants: Vec<String>,
    pub splits: Vec<Split>,
    /// The table schema images are read with.
    pub schema: SchemaRef,
    pub evolution: Option<Arc<SchemaEvolution>>,
    /// What planning cost.
    pub io: IoSnapshot,
}

/// Rows of a change feed and what they cost.
#[derive(Debug, Clone)]
pub struct ChangeFeed {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    pub plan: FeedPlan,
    /// What reading the rows cost (planning's is in `plan.io`).
    pub io: IoSnapshot,
}

impl ChangeFeed {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// The change feed's columns: four nullable strings, as Spark returns them.
pub fn feed_schema() -> SchemaRef {
    let string = |n: &str| Field::new(n, DataType::Utf8, true);
    Arc::new(Schema::new(vec![
        string("op"),
        string("ts_ms"),
        string("before"),
        string("after"),
    ]))
}

/// Operations whose commits change data (Java's `WriteOperationType.yieldChanges`).
fn yields_changes(operation: &str) -> bool {
    matches!(
        operation.to_ascii_uppercase().as_str(),
        "INSERT"
            | "UPSERT"
            | "UPSERT_PREPPED"
            | "DELETE"
            | "DELETE_PREPPED"
            | "BULK_INSERT"
            | "DELETE_PARTITION"
            | "INSERT_OVERWRITE"
            | "INSERT_OVERWRITE_TABLE"
            | "BOOTSTRAP"
    )
}

fn is_delete(operation: &str) -> bool {
    matches!(
        operation.to_ascii_uppercase().as_str(),
        "DELETE" | "DELETE_PREPPED"
    )
}

/// The commits of `(start, end]` (requested times, as Hudi 1.1 compares them) that changed
/// data, oldest first, with their metadata.
async fn commits_in_range(
    client: &MetaClient,
    start: Option<&str>,
    end: Option<&str>,
) -> Result<Vec<(Instant, Arc<CommitMetadata>)>> {
    let mut timeline = client.timeline();
    if let Some(s) = start {
        let before_active = timeline
            .active_start()
            .is_some_and(|first| compare_instant_times(s, first).is_lt());
        if before_active {
            timeline = client.load_history().await?;
        }
        let archived_after = (timeline.completed().filter(|i| i.archived))
            .map(|i| i.requested_time.as_str())
            .max_by(|a, b| compare_instant_times(a, b));
        if let Some(last) = archived_after.filter(|t| compare_instant_times(t, s).is_gt()) {
            return Err(HudiError::invalid(format!(
                "the change feed starts at {s}, but instants up to {last} are archived: a change-feed query must start inside the active timeline"
            )));
        }
    }
    let wanted: Vec<&Instant> = timeline
        .completed()
        .filter(|i| {
            matches!(
                i.action.as_str(),
                action::COMMIT | action::DELTA_COMMIT | action::REPLACE_COMMIT | action::CLUSTERING
            )
        })
        .filter(|i| {
            let t = i.requested_time.as_str();
            start.is_none_or(|s| compare_instant_times(t, s).is_gt())
                && end.is_none_or(|e| compare_instant_times(t, e).is_le())
        })
        .collect();
    let metas = client.commit_metadata_of(&wanted).await?;
    Ok(wanted
        .into_iter()
        .cloned()
        .zip(metas)
        .filter(|(_, m)| m.operation_type.as_deref().is_some_and(yields_changes))
        .collect())
}

/// Files of the partitions a range touched, by file group.
#[derive(Default)]
struct GroupFiles {
    by_group: HashMap<(String, String), Vec<DataFile>>,
}

impl GroupFiles {
    async fn list(client: &MetaClient, partitions: &BTreeSet<String>) -> Result<GroupFiles> {
        let storage = client.storage();
        if !storage.capabilities().lists_dot_files
            && client.config().table_type == crate::config::TableType::MergeOnRead
        {
            // Log files are dot-files: a listing without them would drop every change they hold.
            return Err(HudiError::unsupported_in(
                "the change feed of a Merge-On-Read table through a directory index that hides dot-files (log files); write a listing manifest (.hoodie/hudi-edge-manifest.json) or use an S3 listing",
                storage.location(),
            ));
        }
        let listed = futures::future::try_join_all(
            partitions
                .iter()
                .map(|p| async move { Ok::<_, HudiError>((p, storage.list(p, false).await?)) }),
        )
        .await?;
        let mut out = GroupFiles::default();
        for (partition, objects) in listed {
            for m in objects.into_iter().filter(|m| !m.is_dir) {
                let name = m.name().to_string();
                let file_id = match (
                    BaseFile::parse(&name, m.size),
                    LogFile::parse(&name, m.size),
                ) {
                    (Some(b), _) => b.file_id,
                    (None, Some(l)) if !l.cdc => l.file_id,
                    _ => continue,
                };
                out.by_group
                    .entry((partition.clone(), file_id))
                    .or_default()
                    .push(DataFile {
                        partition: partition.clone(),
                        name,
                        size: m.size,
                    });
            }
        }
        Ok(out)
    }

    fn size_of(&self, partition: &str, name: &str) -> u64 {
        let file_id = match (BaseFile::parse(name, 0), LogFile::parse(name, 0)) {
            (Some(b), _) => b.file_id,
            (None, Some(l)) => l.file_id,
            _ => return 0,
        };
        (self
            .by_group
            .get(&(partition.to_string(), file_id))
            .into_iter()
            .flatten())
        .find(|f| f.name == name)
        .map_or(0, |f| f.size)
    }

    /// The slice of exactly these files, as of `visibility`.
    fn slice(
        &self,
        client: &MetaClient,
        visibility: &Visibility,
        partition: &str,
        names: &[&str],
    ) -> Option<FileSlice> {
        let files = names.iter().map(|n| DataFile {
            partition: partition.to_string(),
            name: n.to_string(),
            size: self.size_of(partition, n),
        });
        let view = view::build(files, visibility, client.config(), &HashSet::new());
        let latest = view.latest_slices().next().cloned();
        latest
    }

    /// The latest slice of a file group (a replaced one included).
    fn latest_slice(
        &self,
        client: &MetaClient,
        visibility: &Visibility,
        partition: &str,
        file_id: &str,
    ) -> Option<FileSlice> {
        let files = self
            .by_group
            .get(&(partition.to_string(), file_id.to_string()))?;
        let view = view::build(
            files.iter().cloned(),
            visibility,
            client.config(),
            &HashSet::new(),
        );
        let latest = view.latest_slices().next().cloned();
        latest
    }

    /// The base file of a group written at `instant`.
    fn base_file_at(&self, partition: &str, file_id: &str, instant: &str) -> Option<&DataFile> {
        self.by_group
            .get(&(partition.to_string(), file_id.to_string()))?
            .iter()
            .find(|f| BaseFile::parse(&f.name, f.size).is_some_and(|b| b.instant == instant))
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The splits of a range, by file group and instant (Java's `HoodieCDCExtractor`).
async fn extract(
    client: &MetaClient,
    commits: &[(Instant, Arc<CommitMetadata>)],
    mode: SupplementalMode,
) -> Result<Vec<Split>> {
    let partitions: BTreeSet<String> = commits
        .iter()
        .flat_map(|(_, m)| {
            (m.write_stats().map(|(p, _)| p.to_string()))
                .chain(m.replaced_file_ids().map(|(p, _)| p.to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    let files = GroupFiles::list(client, &partitions).await?;
    let timeline = client.timeline();
    let everything = timeline.visibility_as_of(None);
    let mut splits = Vec::new();
    for (instant, meta) in commits {
        let operation = meta.operation_type.as_deref().unwrap_or_default();
        let at = timeline.visibility_as_of(Some(&instant.requested_time));
        for (partition, stat) in meta.write_stats() {
            splits.push(split_of_write(
                client, &files, &at, instant, partition, stat, operation, mode,
            )?);
        }
        for (partition, file_id) in meta.replaced_file_ids() {
            let latest = files.latest_slice(client, &everything, partition, file_id);
            if let Some(slice) = latest {
                splits.push(Split {
                    instant: instant.requested_time.clone(),
                    case: InferenceCase::ReplaceCommit,
                    partition: partition.to_string(),
                    file_id: file_id.to_string(),
                    files: Vec::new(),
                    before: Some(slice),
                    after: None,
                });
            }
        }
    }
    splits.sort_by(|a, b| {
        compare_instant_times(&a.instant, &b.instant)
            .then_with(|| a.partition.cmp(&b.partition))
            .then_with(|| a.file_id.cmp(&b.file_id))
    });
    Ok(splits)
}

#[allow(clippy::too_many_arguments)]
fn split_of_write(
    client: &MetaClient,
    files: &GroupFiles,
    at: &Visibility,
    instant: &Instant,
    partition: &str,
    stat: &WriteStat,
    operation: &str,
    mode: SupplementalMode,
) -> Result<Split> {
    let file_id = stat.file_id.clone().unwrap_or_default();
    let path = stat.path.clone().unwrap_or_default();
    let name = file_name(&path);
    let prev_commit = stat.prev_commit.as_deref().filter(|c| *c != "null");
    let split = |case, files: Vec<String>, before, after| Split {
        instant: instant.requested_time.clone(),
        case,
        partition: partition.to_string(),
        file_id: file_id.clone(),
        files,
        before,
        after,
    };
    let previous_base = || -> Result<FileSlice> {
        let base = prev_commit
            .and_then(|c| files.base_file_at(partition, &file_id, c))
            .ok_or_else(|| {
                HudiError::NotFound {
                    path: format!(
                        "the base file of file group {file_id} in {partition:?} written at {} (the version commit {} changed; cleaned?)",
                        prev_commit.unwrap_or("?"),
                        instant.requested_time
                    ),
                }
            })?;
        files
            .slice(client, at, partition, &[base.name.as_str()])
            .ok_or_else(|| HudiError::invalid(format!("no slice of {}", base.name)))
    };
    let cdc_files: Vec<String> = (stat.cdc_stats.iter().flat_map(|m| m.keys()))
        .map(|p| p.trim_start_matches('/').to_string())
        .collect();
    if !cdc_files.is_empty() {
        if mode == SupplementalMode::DataBeforeAfter {
            return Ok(split(InferenceCase::AsIs, cdc_files, None, None));
        }
        let after = files.slice(client, at, partition, &[name]);
        let before = match mode {
            SupplementalMode::OpKeyOnly => Some(previous_base()?),
            _ => None,
        };
        return Ok(split(InferenceCase::AsIs, cdc_files, before, after));
    }
    if BaseFile::parse(name, 0).is_some() {
        let (writes, deletes) = (stat.num_writes.unwrap_or(0), stat.num_deletes.unwrap_or(0));
        if is_delete(operation) && writes == 0 && deletes != 0 {
            let before = previous_base()?;
            return Ok(split(
                InferenceCase::BaseFileDelete,
                Vec::new(),
                Some(before),
                None,
            ));
        }
        if stat.num_update_writes.unwrap_or(0) == 0 && writes == stat.num_inserts.unwrap_or(0) {
            let after = files.slice(client, at, partition, &[name]);
            return Ok(split(
                InferenceCase::BaseFileInsert,
                vec![path.clone()],
                None,
                after,
            ));
        }
        return Err(HudiError::corrupt(
            instant.file.clone(),
            format!(
                "base file {path} changed records but the commit names no CDC log file for it (cdcStats)"
            ),
        ));
    }
    // A log file: the slice before it comes from the delta commit's own write stat.
    let before_names: Vec<&str> = (stat.base_file.as_deref().filter(|b| !b.is_empty()))
        .into_iter()
        .chain(
            (stat.log_files.iter().flatten())
                .map(String::as_str)
                .filter(|l| *l != name),
        )
        .collect();
    let before = (!before_names.is_empty())
        .then(|| files.slice(client, at, partition, &before_names))
        .flatten();
    let mut after_names = before_names.clone();
    after_names.push(name);
    let after = files.slice(client, at, partition, &after_names);
    Ok(split(InferenceCase::LogFile, vec![path], before, after))
}

/// One record of a slice: its image as Spark shows it and an exact form to compare.
struct Row {
    image: String,
    exact: String,
}

/// What every split of a feed reads with.
struct Reader {
    client: Arc<MetaClient>,
    schema: SchemaRef,
    evolution: Option<Arc<SchemaEvolution>>,
}

impl Reader {
    async fn rows(
        &self,
        slice: &FileSlice,
        visibility: &Visibility,
    ) -> Result<Arc<IndexMap<String, Row>>> {
        let plan = Plan::of_slices_at(
            visibility.clone(),
            visibility.upper_bound().map(str::to_string),
            self.evolution.clone(),
            vec![slice.clone()],
            self.schema.clone(),
        );
        let mut scan = Scan::new(self.client.clone(), Arc::new(plan), &ReadOptions::default());
        let batches = Scan::collect(&mut scan).await?;
        let mut rows = IndexMap::new();
        for batch in batches {
            let keys = batch
                .column_by_name(crate::schema::RECORD_KEY)
                .map(|c| c.as_string::<i32>().clone())
                .ok_or_else(|| {
                    HudiError::unsupported("the change feed of a table without meta fields")
                })?;
            let columns = StructArray::from(batch);
            for i in 0..columns.len() {
                rows.insert(
                    keys.value(i).to_string(),
                    Row {
                        image: image::spark_json(&columns, i),
                        exact: image::avro_json(&columns, i, &HashMap::new()),
                    },
                );
            }
        }
        Ok(Arc::new(rows))
    }
}

/// Builds the four columns of a feed.
struct FeedBuilder {
    op: StringBuilder,
    ts: StringBuilder,
    before: StringBuilder,
    after: StringBuilder,
}

impl FeedBuilder {
    fn new() -> Self {
        FeedBuilder {
            op: StringBuilder::new(),
            ts: StringBuilder::new(),
            before: StringBuilder::new(),
            after: StringBuilder::new(),
        }
    }

    fn push(&mut self, op: &str, ts: &str, before: Option<&str>, after: Option<&str>) {
        self.op.append_value(op);
        self.ts.append_value(ts);
        self.before.append_option(before);
        self.after.append_option(after);
    }

    fn finish(mut self) -> Result<RecordBatch> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.op.finish()),
            Arc::new(self.ts.finish()),
            Arc::new(self.before.finish()),
            Arc::new(self.after.finish()),
        ];
        RecordBatch::try_new(feed_schema(), columns).map_err(crate::error::malformed_by)
    }
}

/// Which commits of `(start, end]` changed which file groups, and where each change is read.
pub async fn plan(client: &MetaClient, start: Option<&str>, end: Option<&str>) -> Result<FeedPlan> {
    let config = client.config();
    if !config.cdc_enabled {
        return Err(HudiError::unsupported_in(
            "a change-feed query on a table without change data capture (hoodie.table.cdc.enabled is not true); an incremental query returns the records the range's commits wrote",
            client.storage().location(),
        ));
    }
    let io_start = client.io();
    let mode = SupplementalMode::of(config)?;
    let everything = client.timeline().visibility_as_of(None);
    let (schema, evolution, commits) = futures::try_join!(
        crate::snapshot::schema::table_schema(client, &everything),
        crate::snapshot::schema::schema_evolution(client, &everything),
        commits_in_range(client, start, end)
    )?;
    let splits = extract(client, &commits, mode).await?;
    Ok(FeedPlan {
        mode,
        instants: commits
            .iter()
            .map(|(i, _)| i.requested_time.clone())
            .collect(),
        splits,
        schema,
        evolution,
        io: client.io().since(&io_start),
    })
}

/// The rows of a planned change feed.
pub async fn read(client: &Arc<MetaClient>, plan: FeedPlan) -> Result<ChangeFeed> {
    ChangeScan::new(client.clone(), Arc::new(plan))
        .into_feed(|_| {})
        .await
}

/// A planned change feed read split by split: one batch per file-group change that has rows,
/// in the plan's order, [`SPLITS_AT_ONCE`] read ahead. Cancelling is dropping it.
pub struct ChangeScan {
    batches: BoxStream<'static, Result<RecordBatch>>,
    plan: Arc<FeedPlan>,
    client: Arc<MetaClient>,
    started: IoSnapshot,
    splits_done: Arc<AtomicUsize>,
}

impl ChangeScan {
    pub fn new(client: Arc<MetaClient>, plan: Arc<FeedPlan>) -> ChangeScan {
        let reader = Arc::new(Reader {
            client: client.clone(),
            schema: plan.schema.clone(),
            evolution: plan.evolution.clone(),
        });
        let splits_done = Arc::new(AtomicUsize::new(0));
        let (for_splits, done) = (plan.clone(), splits_done.clone());
        let batches = futures::stream::iter(0..plan.splits.len())
            .map(move |i| {
                let (reader, plan, done) = (reader.clone(), for_splits.clone(), done.clone());
                async move {
                    let mut out = FeedBuilder::new();
                    feed_split(&reader, &plan.splits[i], plan.mode, &mut out).await?;
                    done.fetch_add(1, Ordering::Relaxed);
                    out.finish()
                }
            })
            .buffered(SPLITS_AT_ONCE)
            .try_filter(|batch| std::future::ready(batch.num_rows() > 0))
            .boxed();
        ChangeScan {
            batches,
            plan,
            started: client.io(),
            client,
            splits_done,
        }
    }

    /// The next split's rows, or `None` at the end.
    pub async fn next(&mut self) -> Option<Result<RecordBatch>> {
        self.batches.next().await
    }

    /// Requests and bytes since planning started, and file-group changes read of those
    /// planned. Cheap; callable between batches.
    pub fn progress(&self) -> ScanProgress {
        let read = self.io();
        ScanProgress {
            requests: self.plan.io.requests + read.requests,
            bytes: self.plan.io.bytes + read.bytes,
            files_done: self.splits_done.load(Ordering::Relaxed),
            files_total: self.plan.splits.len(),
        }
    }

    /// Every remaining row, `progress` told after each split's rows.
    pub async fn into_feed(mut self, mut progress: impl FnMut(ScanProgress)) -> Result<ChangeFeed> {
        let mut batches = Vec::new();
        progress(self.progress());
        while let Some(batch) = self.next().await {
            batches.push(batch?);
            progress(self.progress());
        }
        progress(self.progress());
        let io = self.io();
        // The finished stream lets go of its share of the plan, so it moves out uncopied.
        drop(self.batches);
        Ok(ChangeFeed {
            schema: feed_schema(),
            batches,
            plan: Arc::unwrap_or_clone(self.plan),
            io,
        })
    }

    /// I/O of reading the rows so far (planning's is in the plan).
    pub fn io(&self) -> IoSnapshot {
        self.client.io().since(&self.started)
    }
}

/// File-group changes read at once: each is a few dependent requests (the slice before, the
/// files of the commit), so a feed of many takes about as many round trips as its longest.
const SPLITS_AT_ONCE: usize = 8;

async fn feed_split(
    reader: &Reader,
    split: &Split,
    mode: SupplementalMode,
    out: &mut FeedBuilder,
) -> Result<()> {
    let ts = split.instant.as_str();
    let timeline = reader.client.timeline();
    let at = timeline.visibility_as_of(Some(ts));
    match split.case {
        InferenceCase::BaseFileInsert => {
            if let Some(after) = &split.after {
                for row in reader.rows(after, &at).await?.values() {
                    out.push("i", ts, None, Some(&row.image));
                }
            }
        }
        InferenceCase::BaseFileDelete | InferenceCase::ReplaceCommit => {
            if let Some(before) = &split.before {
                let everything = timeline.visibility_as_of(None);
                let visibility = match split.case {
                    InferenceCase::ReplaceCommit => &everything,
                    _ => &at,
                };
                for row in reader.rows(before, visibility).await?.values() {
                    out.push("d", ts, Some(&row.image), None);
                }
            }
        }
        InferenceCase::LogFile => {
            let Some(after_slice) = &split.after else {
                return Ok(());
            };
            // The slices before and after the log file are read together.
            let before = async {
                match &split.before {
                    Some(b) => reader.rows(b, &at).await,
                    None => Ok(Arc::new(IndexMap::new())),
                }
            };
            let (before, after) = futures::try_join!(before, reader.rows(after_slice, &at))?;
            for (key, row) in before.iter() {
                match after.get(key) {
                    None => out.push("d", ts, Some(&row.image), None),
                    Some(now) if now.exact != row.exact => {
                        out.push("u", ts, Some(&row.image), Some(&now.image))
                    }
                    Some(_) => {}
                }
            }
            for (key, row) in after.iter() {
                if !before.contains_key(key) {
                    out.push("i", ts, None, Some(&row.image));
                }
            }
        }
        InferenceCase::AsIs => {
            let read = |slice: &Option<FileSlice>| {
                let slice = slice.clone();
                let at = at.clone();
                async move {
                    match slice {
                        Some(s) => reader.rows(&s, &at).await.map(Some),
                        None => Ok(None),
                    }
                }
            };
            let (before, after) = futures::try_join!(read(&split.before), read(&split.after))?;
            let image_of = |rows: &Option<Arc<IndexMap<String, Row>>>, key: &str| {
                rows.as_ref()
                    .and_then(|r| r.get(key))
                    .map(|r| r.image.clone())
            };
            for path in &split.files {
                for record in cdc_records(&reader.client, path).await? {
                    let (before_image, after_image) = match mode {
                        SupplementalMode::DataBeforeAfter => (record.before, record.after),
                        SupplementalMode::DataBefore => {
                            let after = match record.op.as_str() {
                                "d" => None,
                                _ => image_of(&after, &record.key),
                            };
                            (record.before, after)
                        }
                        SupplementalMode::OpKeyOnly => match record.op.as_str() {
                            "i" => (None, image_of(&after, &record.key)),
                            "u" => (
                                image_of(&before, &record.key),
                                image_of(&after, &record.key),
                            ),
                            _ => (image_of(&before, &record.key), None),
                        },
                    };
                    out.push(
                        &record.op,
                        ts,
                        before_image.as_deref(),
                        after_image.as_deref(),
                    );
                }
            }
        }
    }
    Ok(())
}

/// One record of a CDC log file.
struct CdcRecord {
    op: String,
    key: String,
    before: Option<String>,
    after: Option<String>,
}

/// The records of a CDC log file's CDC blocks (Avro, the schema each block's header gives).
async fn cdc_records(client: &MetaClient, path: &str) -> Result<Vec<CdcRecord>> {
    let storage = client.storage().as_ref();
    let log = crate::log_file::read_log_file(storage, path, None).await?;
    let mut out = Vec::new();
    for block in &log.blocks {
        if block.block_type != BlockType::CdcData {
            continue;
        }
        let batch = block.avro_batch(storage, None).await?;
        let schema: serde_json::Value = (block.schema())
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        // The images' record schema (a nullable union's record branch).
        let image_schema = |name: &str| -> serde_json::Value {
            let field = (schema["fields"].as_array().into_iter().flatten())
                .find(|f| f["name"] == name)
                .map(|f| f["type"].clone())
                .unwrap_or_default();
            match field {
                serde_json::Value::Array(branches) => branches
                    .into_iter()
                    .find(|b| b["type"] == "record")
                    .unwrap_or_default(),
                t => t,
            }
        };
        let fixed_before = image::fixed_decimals(&image_schema("before"));
        // `after` names the record type `before` defined (one image schema).
        let after_schema = image_schema("after");
        let fixed_after = match after_schema["type"] == "record" {
            true => image::fixed_decimals(&after_schema),
            false => fixed_before.clone(),
        };
        let string = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_string_opt::<i32>().cloned())
        };
        let ops = string("op")
            .ok_or_else(|| HudiError::corrupt(path, "a CDC block without an `op` string column"))?;
        let keys = string("record_key");
        let image = |name: &str| batch.column_by_name(name).map(|c| c.as_struct().clone());
        let (before, after) = (image("before"), image("after"));
        for i in 0..batch.num_rows() {
            // Spark prints a missing image as Avro prints null: the string "null".
            let shown = |s: &Option<StructArray>, fixed: &HashMap<String, usize>| {
                s.as_ref().map(|s| image::avro_json(s, i, fixed))
            };
            out.push(CdcRecord {
                op: ops.value(i).to_string(),
                key: keys
                    .as_ref()
                    .filter(|k| !k.is_null(i))
                    .map(|k| k.value(i).to_string())
                    .unwrap_or_default(),
                before: shown(&before, &fixed_before),
                after: shown(&after, &fixed_after),
            });
        }
    }
    Ok(out)
}

/// Change-feed rows by operation.
pub fn counts(feed: &ChangeFeed) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for batch in &feed.batches {
        let ops = batch.column(0).as_string::<i32>();
        for i in 0..ops.len() {
            *out.entry(ops.value(i).to_string()).or_default() += 1;
        }
    }
    out
}
