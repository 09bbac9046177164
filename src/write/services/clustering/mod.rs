//! Clustering, as Java's write client schedules and runs it (docs/hudi-format.md §3.5,
//! docs/writing.md "Clustering"): groups of small file slices of one partition rewritten —
//! merged as every reader merges them, optionally sorted — into new file groups, which
//! replace the old ones from the commit point on.
//!
//! Scheduling writes the plan `C.clustering.requested` (one request: it is there or not).
//! Executing, from the plan whoever wrote it: an earlier attempt left inflight is rolled
//! back first (a rollback instant removes its files and its metadata-table delta commit,
//! the plan stays); then `C.clustering.inflight` with the markers of every file to write,
//! the new base files group by group, the metadata table's delta commit at `C` (the new
//! files and their statistics, each moved key's new location in the record index), and last
//! `C_<t>.replacecommit` (`partitionToReplaceFileIds`) written create-if-absent: the commit
//! point. Until then every reader ignores the new files and still reads the old groups, so
//! a crash at any request is finished by the next run. The old groups' files stay for
//! readers in flight and time travel until the cleaner removes them.

mod schedule;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray};
use bytes::Bytes;
use serde::Serialize;

pub use schedule::{
    ClusteringConfig, ASYNC, ASYNC_MAX_COMMITS, INLINE, INLINE_MAX_COMMITS, MAX_BYTES_PER_GROUP,
    MAX_NUM_GROUPS, PRESERVE_METADATA, SCHEDULE_INLINE, SINGLE_GROUP, SMALL_FILE_LIMIT,
    SORT_COLUMNS, TARGET_FILE_MAX_BYTES,
};

use super::compaction::{
    busy_file_groups, check_pending, complete, file_schemas, locked, mdt_prefetch, planned_slices,
    refresh, resume, snapshot, start_inflight, Mode, Planned,
};
use super::rollback::{self, RolledBack};
use crate::error::{malformed_by, HudiError, Result};
use crate::file_group::clustering::{self as plan_format, ClusteringPlan};
use crate::metadata::delta::RecordIndexChange;
use crate::schema::{COMMIT_SEQNO, COMMIT_TIME, RECORD_KEY};
use crate::snapshot::Snapshot;
use crate::storage::{join, IoSnapshot, PutMode};
use crate::timeline::instant::action;
use crate::timeline::write::{encode_avro_instant, encode_replace_metadata, InstantSchema};
use crate::timeline::WriteStat;
use crate::write::build::FileSchemas;
use crate::write::mdt::FileEntry;
use crate::write::{files, Ctx, WriteConfig};

/// One clustering executed and committed.
#[derive(Debug, Clone, Serialize)]
pub struct Clustered {
    pub instant: String,
    pub completion_time: String,
    /// Scheduled by this run (else a plan found pending: ours, or another writer's).
    pub scheduled_here: bool,
    /// An earlier attempt left inflight, rolled back before this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolled_back: Option<RolledBack>,
    pub groups: usize,
    /// File groups replaced, as `partition/fileId`.
    pub file_groups_replaced: Vec<String>,
    /// Bytes of the replaced slices' files (as listed when read).
    pub bytes_replaced: u64,
    /// New base files, relative to the base path.
    pub files_written: Vec<String>,
    pub records_written: u64,
    pub bytes_written: u64,
    /// Requests of this clustering alone (reads of the slices included).
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

/// What a clustering run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClusteringReport {
    /// Clusterings committed, oldest first: pending plans before a new one.
    pub completed: Vec<Clustered>,
    /// A plan written and left for a later run (schedule only), by instant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled: Option<String>,
    /// Why no new plan was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_scheduled: Option<String>,
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

/// What a clustering run is asked to do: the same choices as a compaction's.
pub type ClusterRequest = super::compaction::CompactRequest;

/// Clusters on request ([`crate::table::Table::cluster`]): a new plan over the small file
/// slices outside pending plans is scheduled, then it and the pending plans are executed.
/// Under the storage lock when `options` configure several writers.
pub async fn cluster(
    table: &Ctx<'_>,
    options: &WriteConfig,
    request: &ClusterRequest,
) -> Result<ClusteringReport> {
    crate::write::check_storage_writable(table.client.storage().as_ref())?;
    let mode = request.mode("clustering")?;
    locked(
        table,
        options,
        run(table, options, mode, request.instant.as_deref()),
    )
    .await
}

/// Table services after a write's commit point: the clustering the settings ask for
/// (`hoodie.clustering.inline`, or `hoodie.clustering.schedule.inline`). `None` when
/// nothing was due or pending.
pub(crate) async fn inline(
    table: &Ctx<'_>,
    options: &WriteConfig,
) -> Result<Option<ClusteringReport>> {
    let c = &options.clustering;
    if !(c.inline || c.schedule_inline) {
        return Ok(None);
    }
    // Judged on the timeline the write started from plus its own commit, without a
    // request; a run lists the timeline afresh and decides again.
    let timeline = table.client.timeline();
    let pending = c.inline && timeline.pending().any(|i| i.is_clustering());
    if !pending && schedule::due(&timeline, c, !c.inline, 1).is_err() {
        return Ok(None);
    }
    let mode = Mode::Inline { execute: c.inline };
    let r = locked(table, options, run(table, options, mode, None)).await?;
    Ok((!r.completed.is_empty() || r.scheduled.is_some()).then_some(r))
}

async fn run(
    table: &Ctx<'_>,
    options: &WriteConfig,
    mode: Mode,
    only: Option<&str>,
) -> Result<ClusteringReport> {
    let client = table.client;
    let started = (client.io(), files::now_ms());
    refresh(table).await?;
    crate::write::check_writable(table)?;
    let config = client.config();
    if config
        .metadata_partitions
        .iter()
        .any(|p| p == crate::metadata::table::RECORD_INDEX)
        && !config.populate_meta_fields
    {
        return Err(HudiError::unsupported_in(
            "clustering a table with a record index but no meta fields (keys are not stored)",
            ".hoodie/hoodie.properties",
        ));
    }
    let visibility = client.timeline().visibility_as_of(None);
    if let Some((_, origin)) =
        crate::snapshot::schema::latest_internal_schema(client, &visibility).await?
    {
        return Err(HudiError::unsupported_in(
            "clustering a table whose schema evolved on read (its columns have ids)",
            &origin,
        ));
    }
    let mut report = ClusteringReport::default();
    let mut pending: Vec<String> = (client.timeline().pending())
        .filter(|i| i.is_clustering())
        .map(|i| i.requested_time.clone())
        .collect();
    check_pending(&pending, only, "clustering")?;
    let mut new = None;
    match mode {
        // Spark's `run_clustering`: a new plan first (the groups pending plans hold are
        // left out of it), then every pending plan, oldest first.
        Mode::Asked { schedule_only } => {
            match plan_new(table, options).await? {
                Ok(t) => new = Some(t),
                Err(why) => report.not_scheduled = Some(why),
            }
            if schedule_only {
                report.scheduled = new.take();
                pending.clear();
            } else {
                pending.extend(new.clone());
            }
        }
        Mode::Only => pending.retain(|p| Some(p.as_str()) == only),
        // Java's inline clustering: pending plans first, then a new one when due.
        Mode::Inline { execute } => {
            if !execute {
                pending.clear();
            }
        }
    }
    for t in &pending {
        let here = new.as_deref() == Some(t.as_str());
        report
            .completed
            .push(execute(table, options, t, here).await?);
        refresh(table).await?;
    }
    if let Mode::Inline { execute: run_it } = mode {
        let due = schedule::due(&client.timeline(), &options.clustering, !run_it, 0);
        match due {
            Err(why) => report.not_scheduled = Some(why),
            Ok(()) => match plan_new(table, options).await? {
                Ok(t) if run_it => {
                    report
                        .completed
                        .push(execute(table, options, &t, true).await?);
                }
                Ok(t) => report.scheduled = Some(t),
                Err(why) => report.not_scheduled = Some(why),
            },
        }
    }
    report.io = client.io().since(&started.0);
    report.elapsed_ms = (files::now_ms() - started.1).max(0);
    Ok(report)
}

/// Writes a new plan over the small slices: `Ok(instant)`, or `Err(why not)`.
async fn plan_new(
    table: &Ctx<'_>,
    options: &WriteConfig,
) -> Result<std::result::Result<String, String>> {
    let client = table.client;
    let instant = crate::write::publish::new_instant(table).await?;
    let (snapshot, busy) =
        futures::future::try_join(snapshot(table), busy_file_groups(table)).await?;
    let c = &options.clustering;
    let groups = schedule::groups(snapshot.latest_slices(), &busy, c, options.max_file_size);
    if groups.is_empty() {
        return Ok(Err(format!(
            "no file slice under {} bytes to cluster",
            c.small_file_limit
        )));
    }
    let missing: Vec<&String> = (c.sort_columns.iter())
        .filter(|col| snapshot.schema.field_with_name(col).is_err())
        .collect();
    if !missing.is_empty() {
        return Err(HudiError::invalid(format!(
            "{SORT_COLUMNS}: no column {missing:?} in the table"
        )));
    }
    let plan = ClusteringPlan {
        groups,
        sort_columns: c.sort_columns.clone(),
        preserve_hoodie_metadata: c.preserve_metadata,
    };
    let location = client.storage().location();
    let absolute = |p: &str| rollback::absolute(&location, p);
    let bytes = encode_avro_instant(
        InstantSchema::RequestedReplaceMetadata,
        &plan_format::requested_json(&plan, options.max_file_size, &absolute),
    )?;
    let path = join(
        &client.config().timeline_dir,
        &format!("{instant}.clustering.requested"),
    );
    client
        .storage()
        .put(&path, Bytes::from(bytes), PutMode::Create)
        .await?;
    Ok(Ok(instant))
}

/// One group to rewrite: its slices as found, and the names of its new files.
struct GroupWork {
    partition: String,
    slices: Vec<Planned>,
    /// (file id, file name) of each new file group.
    outputs: Vec<(String, String)>,
}

/// Executes pending clustering `instant` from its plan and commits it.
async fn execute(
    table: &Ctx<'_>,
    options: &WriteConfig,
    instant: &str,
    scheduled_here: bool,
) -> Result<Clustered> {
    let client = table.client;
    let started = (client.io(), files::now_ms());
    let (rolled_back, requested, plan) = resume(table, instant, action::CLUSTERING).await?;
    let config = client.config();
    let plan = plan_format::parse_requested(&plan, &requested)?;
    let snapshot = Arc::new(snapshot(table).await?);
    let mut work = Vec::with_capacity(plan.groups.len());
    for g in &plan.groups {
        let ops = g.slices.iter().map(|s| (s.clone(), Vec::new())).collect();
        let slices = planned_slices(&snapshot, ops, &requested)?;
        let outputs = (0..g.output_file_groups)
            .map(|_| {
                let id = files::new_file_id()?;
                let name = files::base_file_name(&id, instant);
                Ok((id, name))
            })
            .collect::<Result<Vec<_>>>()?;
        work.push(GroupWork {
            partition: g.partition().to_string(),
            slices,
            outputs,
        });
    }
    for col in &plan.sort_columns {
        if snapshot.schema.field_with_name(col).is_err() {
            return Err(HudiError::corrupt(
                &requested,
                format!("the plan sorts by {col:?}, not a column of the table"),
            ));
        }
    }
    let (avro_schema, schemas) = file_schemas(table, &snapshot).await?;
    let touched: BTreeSet<String> = work.iter().map(|w| w.partition.clone()).collect();
    let mdt = mdt_prefetch(table, &snapshot, &touched).await?;

    // The inflight instant with the markers of every file it writes: a crash from here on
    // is rolled back by the next run from them.
    let names: Vec<String> = (work.iter())
        .flat_map(|w| w.outputs.iter().map(|(_, n)| join(&w.partition, n)))
        .collect();
    start_inflight(table, instant, action::CLUSTERING, (&names, "CREATE"), &[]).await?;

    let with_index =
        (config.metadata_partitions.iter()).any(|p| p == crate::metadata::table::RECORD_INDEX);
    let mut written: Vec<Written> = Vec::new();
    let mut record_index = Vec::new();
    for w in &work {
        let files = rewrite_group(table, &snapshot, &schemas, options, &plan, w, instant).await?;
        settle_all_puts(table, &files).await?;
        // What the commit needs of each file is kept; its rows and bytes go.
        for mut f in files {
            if with_index {
                record_index.extend(moved_keys(&f.rows, &w.partition, &f.file_id, instant)?);
            }
            f.rows = RecordBatch::new_empty(f.rows.schema());
            f.file.bytes = Bytes::new();
            written.push(f);
        }
    }

    let entries: Vec<FileEntry<'_>> = (written.iter())
        .map(|w| FileEntry {
            partition: &w.partition,
            file_name: &w.name,
            size: w.size,
            columns: &w.file.columns,
        })
        .collect();
    let mut replaced: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for w in &work {
        (replaced.entry(w.partition.clone()).or_default())
            .extend(w.slices.iter().map(|s| s.op.file_id.clone()));
    }
    let metadata = commit_metadata(&written, &replaced, &avro_schema);
    let encoded = encode_replace_metadata(&metadata, config.version)?;
    let completion = complete(
        table,
        mdt.as_ref(),
        instant,
        (&entries, record_index),
        (action::REPLACE_COMMIT, encoded),
    )
    .await?;

    Ok(Clustered {
        instant: instant.to_string(),
        completion_time: completion,
        scheduled_here,
        rolled_back,
        groups: work.len(),
        file_groups_replaced: (work.iter())
            .flat_map(|w| {
                w.slices
                    .iter()
                    .map(|s| join(&s.op.partition, &s.op.file_id))
            })
            .collect(),
        bytes_replaced: (work.iter())
            .flat_map(|w| w.slices.iter())
            .map(|s| s.op.base_file.as_ref().map_or(0, |b| b.1) + s.op.log_bytes())
            .sum(),
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

/// A new base file, its rows (for the record index) and its write stat.
struct Written {
    partition: String,
    file_id: String,
    name: String,
    size: u64,
    file: crate::base_file::writer::WrittenBaseFile,
    rows: RecordBatch,
    stat: WriteStat,
}

/// Rows a slice's merge held at once are at most about this many per batch.
const BATCH_ROWS: usize = 8192;

/// Reads a group's slices merged (deletes dropped, the latest version of each key kept),
/// sorts the rows by the plan's columns and splits them evenly over the group's new files.
async fn rewrite_group(
    table: &Ctx<'_>,
    snapshot: &Snapshot,
    schemas: &FileSchemas,
    options: &WriteConfig,
    plan: &ClusteringPlan,
    w: &GroupWork,
    instant: &str,
) -> Result<Vec<Written>> {
    let client = table.client;
    let started = files::now_ms();
    let reads = w.slices.iter().map(|p| {
        crate::merge::merged_slice_counted(
            client,
            &snapshot.schema,
            &snapshot.visibility,
            &p.slice,
            BATCH_ROWS,
            None,
        )
    });
    let batches: Vec<RecordBatch> = futures::future::try_join_all(reads)
        .await?
        .into_iter()
        .flat_map(|(rows, _)| rows)
        .collect();
    let rows =
        arrow_select::concat::concat_batches(&snapshot.schema, &batches).map_err(malformed_by)?;
    let rows = sorted(&rows, &plan.sort_columns)?;
    let n = rows.num_rows();
    let per_file = n.div_ceil(w.outputs.len()).max(1);
    let mut out = Vec::new();
    for (i, (file_id, name)) in w.outputs.iter().enumerate() {
        let offset = i * per_file;
        if offset >= n {
            break; // fewer rows than files: the rest are not written (nor committed)
        }
        let mut chunk = rows.slice(offset, per_file.min(n - offset));
        if !plan.preserve_hoodie_metadata {
            chunk = restamped(&chunk, instant, i)?;
        }
        let config = client.config();
        let batch =
            crate::write::build::in_base_file(&chunk, name, &w.partition, &schemas.base, config)?;
        let file =
            crate::write::build::base_file_bytes(&batch, &schemas.base_avro, &options.base_file)?;
        let bytes = file.bytes.len() as u64;
        let stat = plan_format::write_stat(
            &w.partition,
            file_id,
            &join(&w.partition, name),
            file.num_rows,
            bytes,
            (files::now_ms() - started).max(0),
        );
        out.push(Written {
            partition: w.partition.clone(),
            file_id: file_id.clone(),
            name: name.clone(),
            size: bytes,
            file,
            rows: chunk,
            stat,
        });
    }
    Ok(out)
}

async fn settle_all_puts(table: &Ctx<'_>, written: &[Written]) -> Result<()> {
    let storage = table.client.storage();
    // Overwritten: a rolled-back attempt's file of the same name is gone already, unless
    // its delete failed quietly.
    let paths: Vec<String> = written
        .iter()
        .map(|w| join(&w.partition, &w.name))
        .collect();
    crate::write::publish::settle_all(
        (written.iter().zip(&paths))
            .map(|(w, path)| storage.put(path, w.file.bytes.clone(), PutMode::Overwrite)),
    )
    .await?;
    Ok(())
}

/// `rows` ordered by `columns` (ascending, nulls first), stable.
fn sorted(rows: &RecordBatch, columns: &[String]) -> Result<RecordBatch> {
    if columns.is_empty() || rows.num_rows() < 2 {
        return Ok(rows.clone());
    }
    let keys = columns
        .iter()
        .map(|c| {
            let (i, _) = rows
                .schema()
                .column_with_name(c)
                .ok_or_else(|| HudiError::invalid(format!("{SORT_COLUMNS}: no column {c:?}")))?;
            Ok(arrow_ord::sort::SortColumn {
                values: rows.column(i).clone(),
                options: None,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let order = arrow_ord::sort::lexsort_to_indices(&keys, None).map_err(malformed_by)?;
    arrow_select::take::take_record_batch(rows, &order).map_err(malformed_by)
}

/// Rows with the clustering's own commit time and sequence numbers, as Java writes them
/// when the plan does not preserve the records' metadata.
fn restamped(rows: &RecordBatch, instant: &str, file_index: usize) -> Result<RecordBatch> {
    let schema = rows.schema();
    let mut columns = rows.columns().to_vec();
    let n = rows.num_rows();
    if let Some((i, _)) = schema.column_with_name(COMMIT_TIME) {
        columns[i] = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
            instant, n,
        )));
    }
    if let Some((i, _)) = schema.column_with_name(COMMIT_SEQNO) {
        columns[i] = Arc::new(StringArray::from_iter_values(
            (0..n).map(|r| format!("{instant}_{file_index}_{r}")),
        ));
    }
    RecordBatch::try_new(schema, columns).map_err(malformed_by)
}

/// The record index's new location of every key a file now holds.
fn moved_keys(
    rows: &RecordBatch,
    partition: &str,
    file_id: &str,
    instant: &str,
) -> Result<Vec<RecordIndexChange>> {
    let keys = rows
        .column_by_name(RECORD_KEY)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| {
            HudiError::invalid("clustering: the rows read carry no record keys".to_string())
        })?;
    Ok((0..keys.len())
        .filter(|i| keys.is_valid(*i))
        .map(|i| RecordIndexChange {
            record_key: keys.value(i).to_string(),
            partition: partition.to_string(),
            file_id: file_id.to_string(),
            instant: instant.to_string(),
            deleted: false,
        })
        .collect())
}

/// The completed clustering's metadata as Spark 1.1 writes it: write stats and replaced
/// file groups by partition, in Java's `HashMap` order.
fn commit_metadata(
    written: &[Written],
    replaced: &BTreeMap<String, Vec<String>>,
    schema: &str,
) -> crate::timeline::CommitMetadata {
    let mut by_partition: BTreeMap<&str, Vec<WriteStat>> = BTreeMap::new();
    for w in written {
        by_partition
            .entry(&w.partition)
            .or_default()
            .push(w.stat.clone());
    }
    let all: HashSet<&str> = (replaced.keys().map(String::as_str))
        .chain(by_partition.keys().copied())
        .collect();
    let mut names: Vec<&str> = all.into_iter().collect();
    names.sort_unstable();
    let order: Vec<String> = crate::hfile::writer::java_hash_map_order(&names)
        .into_iter()
        .map(|i| names[i].to_string())
        .collect();
    let stats = order
        .iter()
        .filter_map(|p| by_partition.remove(p.as_str()).map(|s| (p.clone(), s)))
        .collect();
    plan_format::commit_metadata(stats, replaced, &order, schema)
}
