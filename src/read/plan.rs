//! Planning: from options to the exact file slices to read, with a count of files at each
//! pruning stage and the I/O the plan itself cost.

use std::collections::HashSet;
use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use serde::Serialize;

use super::{QueryType, ReadOptions};
use crate::config::TimelineTimezone;
use crate::error::{HudiError, Result};
use crate::expr::stats::may_match;
use crate::expr::Expr;
use crate::file_group::view::{self, DataFile, Skipped};
use crate::file_group::FileSlice;
use crate::metadata::skipping::{record_keys, without_partition_conjuncts, KeyLookup};
use crate::metadata::table::{COLUMN_STATS, FILES, PARTITION_STATS, RECORD_INDEX};
use crate::metadata::MetadataTable;
use crate::storage::IoSnapshot;
use crate::table::Table;
use crate::timeline::{compare_instant_times, Visibility};

#[derive(Debug, Clone, Default, Serialize)]
pub struct PlanStats {
    pub partitions_total: usize,
    pub partitions_after_pruning: usize,
    pub files_total: usize,
    pub files_after_partition_pruning: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_after_partition_stats: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_after_column_stats: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_after_record_index: Option<usize>,
    pub files_after_file_stats: usize,
    pub files_selected: usize,
    pub slices_total: usize,
    pub slices_selected: usize,
    /// "listing", "metadata_table" or "timeline".
    pub planning_source: String,
    /// Why the planning source was chosen, and anything notable about it.
    pub planning_notes: Vec<String>,
    /// Files on storage the view left out, with the reason (uncommitted, replaced ...).
    pub files_ignored: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<Skipped>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub query: QueryType,
    /// The instant the snapshot is taken at (requested time), when there is one.
    pub as_of: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub file_slices: Vec<FileSlice>,
    pub stats: PlanStats,
    pub io: IoSnapshot,
    /// Incremental: requested times of the commits in range.
    #[serde(skip)]
    pub incremental_commits: Option<HashSet<String>>,
    #[serde(skip)]
    pub read_schema: SchemaRef,
    #[serde(skip)]
    pub output_schema: SchemaRef,
    #[serde(skip)]
    pub visibility: Visibility,
}

fn count_files(slices: &[FileSlice], query: QueryType) -> usize {
    slices
        .iter()
        .map(|s| {
            s.base_file.iter().count()
                + if query == QueryType::ReadOptimized {
                    0
                } else {
                    s.log_files.len()
                }
        })
        .sum()
}

impl Plan {
    /// Columns a slice read must produce: the output, what filters read, and what the
    /// incremental filter reads.
    pub fn needed_columns(&self, filter: Option<&Expr>) -> Vec<String> {
        let mut cols: Vec<String> = self
            .output_schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        if let Some(f) = filter {
            cols.extend(f.columns().into_iter().map(str::to_string));
        }
        if self.incremental_commits.is_some() {
            cols.push(crate::schema::COMMIT_TIME.to_string());
        }
        cols.sort();
        cols.dedup();
        cols
    }

    /// The read schema restricted to `columns`, in table order.
    pub fn read_schema_for(&self, columns: &[String]) -> SchemaRef {
        let fields: Vec<_> = self
            .read_schema
            .fields()
            .iter()
            .filter(|f| columns.iter().any(|c| c == f.name()))
            .cloned()
            .collect();
        Arc::new(Schema::new(fields))
    }
}

/// Turns user time text into an instant time: instants pass through; ISO-8601 dates and
/// date-times become `yyyyMMddHHmmssSSS`. Times without an offset are read as the
/// timeline's own wall clock (as Hudi does); times with an offset are converted to UTC.
pub fn resolve_time(text: &str, tz: TimelineTimezone) -> Result<String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return match t.len() {
            14 | 17 => Ok(t.to_string()),
            8 => Ok(format!("{t}000000000")),
            _ => Err(HudiError::invalid(format!(
                "{t:?} is not an instant time (yyyyMMddHHmmss[SSS])"
            ))),
        };
    }
    let _ = tz;
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Ok(dt.with_timezone(&Utc).format("%Y%m%d%H%M%S%3f").to_string());
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(t, fmt) {
            return Ok(dt.format("%Y%m%d%H%M%S%3f").to_string());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(format!("{}000000000", d.format("%Y%m%d")));
    }
    Err(HudiError::invalid(format!(
        "cannot read {t:?} as an instant time or ISO-8601 date-time"
    )))
}

impl Table {
    pub async fn plan(&self, options: &ReadOptions) -> Result<Plan> {
        let before = self.io();
        let config = self.config();
        let tz = config.timezone;
        let as_of = options
            .as_of
            .as_deref()
            .map(|t| resolve_time(t, tz))
            .transpose()?;
        let start = options
            .start
            .as_deref()
            .map(|t| resolve_time(t, tz))
            .transpose()?;
        let end = options
            .end
            .as_deref()
            .map(|t| resolve_time(t, tz))
            .transpose()?;
        if options.query == QueryType::Incremental {
            if as_of.is_some() {
                return Err(HudiError::invalid(
                    "incremental queries take --start/--end, not --as-of",
                ));
            }
            // As Hudi's IncrementalRelation: rows carry no commit time to select by.
            if !config.populate_meta_fields {
                return Err(HudiError::unsupported(
                    "incremental queries on a table whose meta fields are disabled (hoodie.populate.meta.fields=false)",
                ));
            }
        }

        let mut timeline = self.timeline();
        let earliest_asked = if options.query == QueryType::Incremental {
            start.as_deref()
        } else {
            as_of.as_deref()
        };
        if let (Some(t), Some(active)) = (earliest_asked, timeline.active_start()) {
            if compare_instant_times(t, active).is_lt() {
                timeline = self.load_history().await?;
            }
        }

        if let (Some(t), QueryType::Snapshot | QueryType::ReadOptimized) = (&as_of, options.query) {
            self.validate_time_travel(t).await?;
        }
        let mut notes = Vec::new();
        let mut incremental_commits = None;
        let visibility = match options.query {
            QueryType::Incremental => {
                let range = self
                    .incremental_range(&timeline, start.as_deref(), end.as_deref())
                    .await?;
                notes.extend(range.note);
                incremental_commits = Some(range.commits);
                range.visibility
            }
            _ => timeline.visibility_as_of(as_of.as_deref()),
        };
        let resolved_as_of = match options.query {
            QueryType::Incremental => None,
            _ => timeline
                .completed_writes_as_of(as_of.as_deref())
                .last()
                .map(|i| i.requested_time.clone()),
        };

        let read_schema = self.read_schema(&visibility).await?;
        let output_schema = match &options.columns {
            None => read_schema.clone(),
            Some(cols) => {
                let mut fields = Vec::with_capacity(cols.len());
                for c in cols {
                    let f = read_schema.field_with_name(c).map_err(|_| {
                        HudiError::invalid(format!(
                            "unknown column {c:?} (table columns: {})",
                            column_list(&read_schema)
                        ))
                    })?;
                    fields.push(f.clone());
                }
                Arc::new(Schema::new(fields))
            }
        };
        let filter = options.filter();
        if let Some(f) = &filter {
            for c in f.columns() {
                if read_schema.field_with_name(c).is_err() {
                    return Err(HudiError::invalid(format!(
                        "unknown column {c:?} in filter {f} (table columns: {})",
                        column_list(&read_schema)
                    )));
                }
            }
        }

        let mut stats = PlanStats {
            planning_notes: notes,
            ..Default::default()
        };
        let indexes = indexes_to_use(filter.as_ref(), options, self.config(), &read_schema);
        let (files, mdt) = self
            .plan_files(options, &visibility, &indexes, &mut stats)
            .await?;
        let replaced = self.replaced_file_groups(&visibility).await?;
        let fs_view = view::build(files, &visibility, config, &replaced);
        stats.files_ignored = fs_view.skipped.len();
        stats.ignored = fs_view.skipped.clone();

        let mut slices: Vec<FileSlice> = fs_view.latest_slices().cloned().collect();
        if options.query == QueryType::ReadOptimized {
            slices.retain(|s| s.base_file.is_some());
            for s in &mut slices {
                s.log_files.clear();
            }
        }
        if let (QueryType::Incremental, Some(start)) = (options.query, &start) {
            slices.retain(|s| {
                slice_may_hold_changes_after(s, start, &visibility, config.has_completion_times())
            });
        }
        stats.slices_total = slices.len();
        stats.files_total = count_files(&slices, options.query);
        let partitions: Vec<&str> = {
            let mut p: Vec<&str> = slices.iter().map(|s| s.partition.as_str()).collect();
            p.dedup();
            p
        };
        stats.partitions_total = partitions.len();

        if let Some(f) = &filter {
            slices = prune_partitions(slices, f, self, &read_schema)?;
        }
        stats.files_after_partition_pruning = count_files(&slices, options.query);
        stats.partitions_after_pruning = {
            let mut p: Vec<&str> = slices.iter().map(|s| s.partition.as_str()).collect();
            p.dedup();
            p.len()
        };

        // Slices the metadata table's column stats decided need no footer.
        let mut decided = vec![false; slices.len()];
        if let (Some(f), Some(mdt), true) = (&filter, &mdt, options.data_skipping) {
            let latest = as_of.is_none() && options.query != QueryType::Incremental;
            let scope = Scope {
                filter: f,
                schema: &read_schema,
                query: options.query,
                latest,
            };
            (slices, decided) = self
                .skip_with_metadata(mdt, slices, &scope, &mut stats)
                .await;
        }
        if let Some(f) = &filter {
            slices = self
                .prune_by_file_stats(slices, &decided, f, options.query)
                .await?;
        }
        stats.files_after_file_stats = count_files(&slices, options.query);
        stats.files_selected = stats.files_after_file_stats;
        stats.slices_selected = slices.len();

        Ok(Plan {
            query: options.query,
            as_of: resolved_as_of,
            start,
            end,
            file_slices: slices,
            stats,
            io: self.io().since(&before),
            incremental_commits,
            read_schema,
            output_schema,
            visibility,
        })
    }

    /// The table schema visible to a query: the newest visible commit's writer schema,
    /// else the schema the table was created with; with meta columns when populated.
    pub async fn read_schema(&self, visibility: &Visibility) -> Result<SchemaRef> {
        let timeline = self.timeline();
        let mut data: Option<Schema> = None;
        for instant in timeline
            .completed_writes()
            .rev()
            .filter(|i| visibility.is_committed(&i.requested_time))
        {
            let meta = self.commit_metadata(instant).await?;
            if let Some(text) = meta.schema() {
                let origin = if instant.archived {
                    instant.requested_time.clone()
                } else {
                    instant.file.clone()
                };
                data = Some(crate::schema::arrow_schema_from_avro_text(text, &origin)?);
                break;
            }
        }
        let data = match data {
            Some(d) => d,
            None => match self.config().property("hoodie.table.create.schema") {
                Some(text) if !text.trim().is_empty() => {
                    crate::schema::arrow_schema_from_avro_text(
                        text,
                        crate::config::PROPERTIES_FILE,
                    )?
                }
                _ => Schema::empty(),
            },
        };
        Ok(if self.config().populate_meta_fields {
            super::align::nullable(&crate::schema::with_meta_columns(&data))
        } else {
            super::align::nullable(&data)
        })
    }

    /// Parquet-footer pruning of the slices the metadata table did not decide.
    async fn prune_by_file_stats(
        &self,
        slices: Vec<FileSlice>,
        decided: &[bool],
        filter: &Expr,
        query: QueryType,
    ) -> Result<Vec<FileSlice>> {
        let checks = slices.iter().enumerate().map(|(i, s)| async move {
            let prunable = (query == QueryType::ReadOptimized || s.log_files.is_empty())
                && !decided.get(i).copied().unwrap_or(false);
            match (prunable, s.base_path()) {
                (true, Some(path)) => {
                    let footer = self.footer(&path).await?;
                    Ok::<bool, HudiError>(
                        !super::parquet::matching_row_groups(&footer, Some(filter)).is_empty(),
                    )
                }
                _ => Ok(true),
            }
        });
        let keep = futures::future::try_join_all(checks).await?;
        Ok(slices
            .into_iter()
            .zip(keep)
            .filter_map(|(s, k)| k.then_some(s))
            .collect())
    }
}

/// What the metadata-table indexes prune for.
struct Scope<'a> {
    filter: &'a Expr,
    schema: &'a Schema,
    query: QueryType,
    /// The latest snapshot (not time travel, not incremental): what partition stats and the
    /// record index describe.
    latest: bool,
}

/// At most this many index problems are spelled out in the plan notes.
const MAX_PROBLEM_NOTES: usize = 3;

fn note_problems(stats: &mut PlanStats, index: &str, problems: &[String]) {
    for p in problems.iter().take(MAX_PROBLEM_NOTES) {
        stats.planning_notes.push(format!("{index}: {p}"));
    }
    if problems.len() > MAX_PROBLEM_NOTES {
        stats.planning_notes.push(format!(
            "{index}: … and {} more records ignored",
            problems.len() - MAX_PROBLEM_NOTES
        ));
    }
}

fn distinct_partitions(slices: &[FileSlice]) -> Vec<String> {
    let mut p: Vec<String> = slices.iter().map(|s| s.partition.clone()).collect();
    p.sort();
    p.dedup();
    p
}

impl Table {
    /// The data files to plan from: the metadata table's `files` partition when it can be
    /// used, else a listing; the notes say which and why.
    async fn plan_files(
        &self,
        options: &ReadOptions,
        visibility: &Visibility,
        indexes: &[&str],
        stats: &mut PlanStats,
    ) -> Result<(Vec<DataFile>, Option<Arc<MetadataTable>>)> {
        if visibility.instants().next().is_none() {
            stats.planning_source = "timeline".into();
            stats
                .planning_notes
                .push("no completed commit is visible: nothing to read".into());
            return Ok((Vec::new(), None));
        }
        let reason = match self.metadata_for_planning(options, indexes).await {
            Ok(mdt) => match self.files_from_metadata(&mdt, visibility).await {
                Ok(Ok(files)) => {
                    stats.planning_source = "metadata_table".into();
                    stats.planning_notes.push(format!(
                        "data files from the metadata table's files partition (latest valid metadata instant {}): no listing of data partitions",
                        mdt.latest_instant().unwrap_or_default()
                    ));
                    if !mdt.orphan_instants().is_empty() {
                        stats.planning_notes.push(format!(
                            "metadata delta commit(s) {} have no completed data instant: their files are not committed data",
                            mdt.orphan_instants().join(", ")
                        ));
                    }
                    return Ok((files, Some(mdt)));
                }
                Ok(Err(missing)) => missing,
                Err(e) => format!("the metadata table's files partition cannot be read ({e})"),
            },
            Err(reason) => reason,
        };
        stats.planning_source = "listing".into();
        stats
            .planning_notes
            .push(format!("listing storage: {reason}"));
        let files: Vec<DataFile> = self
            .list_data_files()
            .await?
            .into_iter()
            .map(|(partition, m)| DataFile {
                name: m.name().to_string(),
                partition,
                size: m.size,
            })
            .collect();
        self.check_latest_commit_files(visibility, &files).await?;
        Ok((files, None))
    }

    /// Every partition's files from the `files` partition, or why they cannot be trusted:
    /// like a listing, they must hold every file the newest visible commit wrote.
    async fn files_from_metadata(
        &self,
        mdt: &MetadataTable,
        visibility: &Visibility,
    ) -> Result<std::result::Result<Vec<DataFile>, String>> {
        let partitions = mdt.all_partitions().await?;
        let files = mdt.files(&partitions).await?;
        match self.check_latest_commit_files(visibility, &files).await {
            Ok(()) => Ok(Ok(files)),
            Err(HudiError::NotFound { path }) => Ok(Err(format!(
                "the metadata table's files partition misses {path}"
            ))),
            Err(e) => Err(e),
        }
    }

    /// The metadata table when the options and the table allow planning with it, else why not.
    async fn metadata_for_planning(
        &self,
        options: &ReadOptions,
        indexes: &[&str],
    ) -> std::result::Result<Arc<MetadataTable>, String> {
        let config = self.config();
        if !options.use_metadata_table {
            return Err("the metadata table is turned off by the read options".into());
        }
        if !config.metadata_files_available() {
            return Err(
                "the table has no complete metadata `files` partition (hoodie.table.metadata.partitions)"
                    .into(),
            );
        }
        if config.version < 8 {
            return Err(format!(
                "metadata tables of table version {} (0.x layout) are not read",
                config.version
            ));
        }
        let mut prefetch = vec![FILES];
        prefetch.extend_from_slice(indexes);
        self.metadata_table(&prefetch).await.map_err(|e| match e {
            HudiError::NotFound { path } => format!("no metadata table ({path} not found)"),
            other => format!("the metadata table is unusable ({other})"),
        })
    }

    /// The record index, partition stats and column stats, in that order; an index that
    /// cannot be read is skipped with a note. Returns the slices left and, for each, whether
    /// an index decided it (so its footer need not be read).
    async fn skip_with_metadata(
        &self,
        mdt: &MetadataTable,
        mut slices: Vec<FileSlice>,
        scope: &Scope<'_>,
        stats: &mut PlanStats,
    ) -> (Vec<FileSlice>, Vec<bool>) {
        let mut used_index = None;
        if scope.latest && scope.query == QueryType::Snapshot && mdt.has_partition(RECORD_INDEX) {
            if let Some(lookup) = record_keys(scope.filter, self.config(), scope.schema) {
                match mdt.locate_keys(&lookup.keys).await {
                    Ok(groups) => {
                        slices
                            .retain(|s| groups.contains(&(s.partition.clone(), s.file_id.clone())));
                        stats.files_after_record_index = Some(count_files(&slices, scope.query));
                        stats.planning_notes.push(format!(
                            "record_index: {} key(s) found in {} file group(s)",
                            lookup.keys.len(),
                            groups.len()
                        ));
                        used_index = Some(lookup);
                    }
                    Err(e) => stats
                        .planning_notes
                        .push(format!("record_index not used: {e}")),
                }
            }
        }
        // Exact answers (the record index, partition paths) leave nothing for statistics.
        let Some(filter) = stats_filter(scope.filter, used_index.as_ref(), self.config()) else {
            let decided = vec![true; slices.len()];
            return (slices, decided);
        };
        if scope.latest && self.config().is_partitioned() && mdt.has_partition(PARTITION_STATS) {
            slices = self
                .skip_partitions(mdt, slices, &filter, scope, stats)
                .await;
        }
        let mut decided = vec![false; slices.len()];
        if slices.is_empty() || !mdt.has_partition(COLUMN_STATS) {
            return (slices, decided);
        }
        match mdt.prune_slices(&slices, &filter, scope.schema).await {
            Ok(v) => {
                note_problems(stats, COLUMN_STATS, &v.problems);
                let before = slices.len();
                let verdicts = slices.into_iter().zip(v.keep).zip(v.unknown);
                (slices, decided) = verdicts
                    .filter_map(|((s, keep), unknown)| keep.then_some((s, !unknown)))
                    .unzip();
                stats.files_after_column_stats = Some(count_files(&slices, scope.query));
                stats.planning_notes.push(format!(
                    "column_stats: {} of {before} file slices may match on [{}]",
                    slices.len(),
                    filter.columns().join(", ")
                ));
            }
            Err(e) => stats
                .planning_notes
                .push(format!("column_stats not used: {e}")),
        }
        (slices, decided)
    }

    /// `partition_stats`: drops the partitions whose statistics rule the filter out.
    async fn skip_partitions(
        &self,
        mdt: &MetadataTable,
        mut slices: Vec<FileSlice>,
        filter: &Expr,
        scope: &Scope<'_>,
        stats: &mut PlanStats,
    ) -> Vec<FileSlice> {
        let partitions = distinct_partitions(&slices);
        match mdt
            .prune_partitions(&partitions, filter, scope.schema)
            .await
        {
            Ok(v) => {
                note_problems(stats, PARTITION_STATS, &v.problems);
                let keep: HashSet<&String> = partitions
                    .iter()
                    .zip(&v.keep)
                    .filter_map(|(p, k)| k.then_some(p))
                    .collect();
                slices.retain(|s| keep.contains(&s.partition));
                stats.files_after_partition_stats = Some(count_files(&slices, scope.query));
                stats.planning_notes.push(format!(
                    "partition_stats: {} of {} partitions may match on [{}]",
                    keep.len(),
                    partitions.len(),
                    filter.columns().join(", ")
                ));
            }
            Err(e) => stats
                .planning_notes
                .push(format!("partition_stats not used: {e}")),
        }
        slices
    }
}

/// The MDT index partitions a filtered read will consult (their listings are fetched while
/// the metadata table opens): the record index when the filter pins record keys, the
/// statistics indexes when anything else is left to prune on.
fn indexes_to_use(
    filter: Option<&Expr>,
    options: &ReadOptions,
    config: &crate::config::TableConfig,
    schema: &Schema,
) -> Vec<&'static str> {
    let Some(filter) = filter.filter(|_| options.data_skipping) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let latest = options.as_of.is_none() && options.query != QueryType::Incremental;
    let lookup = record_keys(filter, config, schema);
    let use_record_index = latest && options.query == QueryType::Snapshot && lookup.is_some();
    if use_record_index {
        out.push(RECORD_INDEX);
    }
    let lookup = lookup.filter(|_| use_record_index);
    if stats_filter(filter, lookup.as_ref(), config).is_some() {
        if latest && config.is_partitioned() {
            out.push(PARTITION_STATS);
        }
        out.push(COLUMN_STATS);
    }
    out
}

/// What the statistics indexes still prune on, after what partition paths and the record
/// index (when it was used) answer exactly.
fn stats_filter(
    filter: &Expr,
    key_lookup: Option<&KeyLookup>,
    config: &crate::config::TableConfig,
) -> Option<Expr> {
    let rest = match key_lookup {
        Some(l) => l.rest.clone()?,
        None => filter.clone(),
    };
    without_partition_conjuncts(&rest, config)
}

fn column_list(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn prune_partitions(
    slices: Vec<FileSlice>,
    filter: &Expr,
    table: &Table,
    schema: &Schema,
) -> Result<Vec<FileSlice>> {
    let mut partitions: Vec<&str> = slices.iter().map(|s| s.partition.as_str()).collect();
    partitions.sort();
    partitions.dedup();
    let Some(batch) = crate::keygen::partition_batch(&partitions, table.config(), schema)? else {
        return Ok(slices);
    };
    let Some(mask) = filter.evaluate_partial(&batch)? else {
        return Ok(slices);
    };
    let keep: HashSet<String> = partitions
        .iter()
        .enumerate()
        .filter(|(i, _)| mask.is_null(*i) || mask.value(*i))
        .map(|(_, p)| p.to_string())
        .collect();
    Ok(slices
        .into_iter()
        .filter(|s| keep.contains(&s.partition))
        .collect())
}

use arrow_array::Array;

/// Incremental pruning: a slice whose files all completed at or before `start` cannot hold
/// a record committed after it.
fn slice_may_hold_changes_after(
    s: &FileSlice,
    start: &str,
    visibility: &Visibility,
    by_completion: bool,
) -> bool {
    let after = |instant: &str| {
        let t = if by_completion {
            visibility
                .completion_of(instant)
                .flatten()
                .unwrap_or_else(|| instant.to_string())
        } else {
            instant.to_string()
        };
        compare_instant_times(&t, start).is_gt()
    };
    // v6 log files are named by their slice's base instant but may hold later blocks.
    (!by_completion && !s.log_files.is_empty())
        || s.base_file.as_ref().is_some_and(|b| after(&b.instant))
        || s.log_files.iter().any(|l| after(&l.instant))
}

/// Used by stats-based pruning in other stages.
pub fn keep_flags(filter: &Expr, source: &dyn crate::expr::stats::StatsSource) -> Vec<bool> {
    may_match(filter, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_times() {
        let tz = TimelineTimezone::Local;
        assert_eq!(
            resolve_time("20260307162434124", tz).unwrap(),
            "20260307162434124"
        );
        assert_eq!(
            resolve_time("2026-03-07 16:24:34.124", tz).unwrap(),
            "20260307162434124"
        );
        assert_eq!(
            resolve_time("2026-03-07T16:24:34Z", tz).unwrap(),
            "20260307162434000"
        );
        assert_eq!(resolve_time("2026-03-07", tz).unwrap(), "20260307000000000");
        assert!(resolve_time("yesterday", tz).is_err());
    }
}
