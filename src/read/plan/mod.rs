//! Planning: from options to the exact file slices to read, with a count of files at each
//! pruning stage and the I/O the plan itself cost.
//!
//! The stages, in order: resolve times and the visible instants ([`crate::timeline`]), the
//! snapshot ([`crate::snapshot`]: the schema, the data files from the metadata table's
//! `files` partition or a listing, the file-system view), then pruning (`prune`): partition values, the record index,
//! partition stats, column stats, and Parquet footers for what no index decided.

mod prune;
pub(crate) mod wire;

use std::collections::HashSet;
use std::sync::Arc;

use arrow_schema::{Schema, SchemaRef};
use serde::Serialize;

use super::{QueryType, ReadOptions};
use crate::error::{HudiError, Result};
use crate::expr::Expr;
use crate::file_group::view::Skipped;
use crate::file_group::FileSlice;
use crate::meta_client::MetaClient;
use crate::metadata::MetadataCache;
use crate::schema::evolution::SchemaEvolution;
use crate::snapshot::{time_travel, Request, Snapshot};
use crate::storage::IoSnapshot;
use crate::timeline::time::resolve_time;
use crate::timeline::Visibility;

/// Files at each pruning stage. Crosses to JS as it is (camelCase on wasm).
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify_next::Tsify),
    serde(rename_all = "camelCase")
)]
pub struct PlanStats {
    pub partitions_total: usize,
    pub partitions_after_pruning: usize,
    pub files_total: usize,
    pub files_after_partition_pruning: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub files_after_partition_stats: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub files_after_column_stats: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub files_after_record_index: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub files_after_secondary_index: Option<usize>,
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
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
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
    /// The share of their rows column statistics expect to match, for the slices where it
    /// is less than all: sizes the work of reading them, never prunes.
    #[serde(skip)]
    pub expected_share: prune::SliceShares,
    pub stats: PlanStats,
    pub io: IoSnapshot,
    /// The read options' filters, ANDed (built once, applied to every slice).
    #[serde(skip)]
    pub filter: Option<Expr>,
    /// Incremental: requested times of the commits in range.
    #[serde(skip)]
    pub incremental_commits: Option<HashSet<String>>,
    /// Merge-On-Read incremental ranges: base-file records take part in merging only when
    /// a commit of `incremental_commits` wrote them (Spark's required filter on
    /// `_hoodie_commit_time`, applied before merging: a record clustering or compaction
    /// carried into a file of the range keeps its older commit time and stays out).
    #[serde(skip)]
    pub base_records_in_range: bool,
    #[serde(skip)]
    pub read_schema: SchemaRef,
    #[serde(skip)]
    pub output_schema: SchemaRef,
    #[serde(skip)]
    pub visibility: Visibility,
    /// Partition columns show the values the partition path holds, as Spark shows them (its
    /// file index reads them from the path, not the file). Off for a writer's reads, which
    /// must carry a file's values over as they are.
    #[serde(skip)]
    pub partition_values_from_path: bool,
    /// Column ids of a table with schema evolution on read: files map their columns by id.
    #[serde(skip)]
    pub evolution: Option<Arc<SchemaEvolution>>,
}

impl Plan {
    /// A writer's read of `slices` as `snapshot` has them: every column of `schema` (the
    /// snapshot's, or one a write widened), no filter, and partition columns as the files
    /// hold them (a rewrite carries them over as they are).
    pub fn of_slices(snapshot: &Snapshot, slices: Vec<FileSlice>, schema: SchemaRef) -> Plan {
        Plan::of_slices_at(
            snapshot.visibility.clone(),
            snapshot.instant.clone(),
            snapshot.evolution.clone(),
            slices,
            schema,
        )
    }

    /// A plan of `slices` read with the instants of `visibility` (the change feed reads
    /// each commit's slices as of that commit).
    pub fn of_slices_at(
        visibility: Visibility,
        as_of: Option<String>,
        evolution: Option<Arc<SchemaEvolution>>,
        slices: Vec<FileSlice>,
        schema: SchemaRef,
    ) -> Plan {
        Plan {
            query: QueryType::Snapshot,
            as_of,
            start: None,
            end: None,
            file_slices: slices,
            expected_share: prune::SliceShares::new(),
            stats: PlanStats::default(),
            io: IoSnapshot::default(),
            filter: None,
            incremental_commits: None,
            base_records_in_range: false,
            output_schema: schema.clone(),
            read_schema: schema,
            visibility,
            partition_values_from_path: false,
            evolution,
        }
    }

    /// The share of `slice`'s rows column statistics expect to match, where less than all.
    pub fn expected_share_of(&self, slice: &FileSlice) -> Option<f64> {
        if self.expected_share.is_empty() {
            return None;
        }
        let key = (slice.partition.clone(), slice.file_id.clone());
        self.expected_share.get(&key).copied()
    }

    /// Columns a slice read must produce: the output, what the filter reads, and what the
    /// incremental filter reads.
    pub fn needed_columns(&self) -> Vec<String> {
        let mut cols: Vec<String> = self
            .output_schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        if let Some(f) = &self.filter {
            cols.extend(f.columns().into_iter().map(str::to_string));
        }
        if self.incremental_commits.is_some() {
            cols.push(crate::schema::COMMIT_TIME.to_string());
        }
        cols.sort();
        cols.dedup();
        cols
    }
}

/// Files a query reads from these slices (read-optimized queries read no log files).
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

fn count_partitions(slices: &[FileSlice]) -> usize {
    let mut p: Vec<&str> = slices.iter().map(|s| s.partition.as_str()).collect();
    p.sort_unstable();
    p.dedup();
    p.len()
}

/// Resolved query times, in instant-time form.
struct Times {
    as_of: Option<String>,
    start: Option<String>,
    end: Option<String>,
}

fn resolve_times(client: &MetaClient, options: &ReadOptions) -> Result<Times> {
    let tz = client.config().timezone;
    let resolve = |t: &Option<String>| t.as_deref().map(|t| resolve_time(t, tz)).transpose();
    let times = Times {
        as_of: resolve(&options.as_of)?,
        start: resolve(&options.start)?,
        end: resolve(&options.end)?,
    };
    if options.query == QueryType::Incremental {
        if times.as_of.is_some() {
            return Err(HudiError::invalid(
                "incremental queries take a start and an end, not an as-of time",
            ));
        }
        // As Hudi's IncrementalRelation: rows carry no commit time to select by.
        if !client.config().populate_meta_fields {
            return Err(HudiError::unsupported(
                "incremental queries on a table whose meta fields are disabled (hoodie.populate.meta.fields=false)",
            ));
        }
    }
    Ok(times)
}

/// The plan of a read: which file slices, after every pruning stage the options allow.
pub async fn plan(
    client: &MetaClient,
    metadata: &MetadataCache,
    options: &ReadOptions,
) -> Result<Plan> {
    let before = client.io();
    let config = client.config();
    let Times { as_of, start, end } = resolve_times(client, options)?;
    let timeline = match options.query {
        QueryType::Incremental => time_travel::timeline_reaching(client, start.as_deref()).await?,
        _ => {
            let asked = options.as_of.as_deref();
            time_travel::timeline_as_of(client, as_of.as_deref(), asked).await?
        }
    };

    let mut notes = Vec::new();
    let mut incremental_commits = None;
    let mut files_in_range = false;
    let visibility = match options.query {
        QueryType::Incremental => {
            let range =
                super::incremental::range(client, &timeline, start.as_deref(), end.as_deref())
                    .await?;
            // Without a fallback, a Merge-On-Read range is read from the files its commits
            // wrote alone (below).
            files_in_range =
                range.note.is_none() && config.table_type == crate::config::TableType::MergeOnRead;
            notes.extend(range.note);
            incremental_commits = Some(range.commits);
            range.visibility
        }
        _ => timeline.visibility_as_of(as_of.as_deref()),
    };
    // Incremental reads come in the latest schema, whatever the range's end (Spark's
    // incremental relation): a column added since shows as null, and on a table whose
    // schema evolved on read older files map by column id.
    let schema_at = (options.query == QueryType::Incremental && end.is_some())
        .then(|| timeline.visibility_as_of(None));

    let filter = crate::expr::conjunction(&options.filters);
    // Statistics describe files' values; partition columns read from the path (as Spark
    // reads them) are pruned by the path alone.
    let stats_filter = filter.as_ref().and_then(|f| stats_filter(f, config));
    let skipping_filter = stats_filter.as_ref().filter(|_| options.data_skipping);
    let latest = as_of.is_none() && options.query != QueryType::Incremental;
    // The index partitions the filter might consult are listed with the metadata table's
    // open. The lookups that do not need the data files follow the open without waiting
    // for the schema: they take the record key field for a string, and are redone in the
    // rare case the schema reads the filter's keys otherwise (an integer key written `007`).
    let prefetch = prune::Indexes::partitions_for(skipping_filter, config);
    let provisional = prune::Indexes::choose(
        skipping_filter,
        options.query,
        latest,
        config,
        &prune::key_fields_as_text(config),
    );
    let request = Request {
        timeline,
        visibility,
        use_metadata_table: options.use_metadata_table,
        prefetch: &prefetch,
        schema_at,
    };
    // A record-index lookup takes a round trip after the data files are known (its data
    // block): the footer probe goes in it.
    let early_lookups = |mdt: Option<Arc<crate::metadata::MetadataTable>>| {
        let probe = provisional.looks_up_keys(mdt.as_deref());
        let provisional = &provisional;
        (probe, async move {
            let located = provisional.look_up_early(mdt.as_deref()).await;
            (mdt, located)
        })
    };
    let (snapshot, (early_mdt, located)) =
        Snapshot::load_with(client, metadata, request, early_lookups).await?;
    let read_schema = snapshot.schema.clone();
    let evolution = snapshot.evolution.clone();
    let mut stats = PlanStats {
        planning_source: snapshot.source.kind.clone(),
        planning_notes: notes,
        ..Default::default()
    };
    stats
        .planning_notes
        .extend(snapshot.source.notes.iter().cloned());
    let resolved_as_of = match options.query {
        QueryType::Incremental => None,
        _ => snapshot.instant.clone(),
    };
    // Statistics recorded under a name that meant another column (schema evolution on
    // read: renamed, dropped and re-added) prune nothing.
    let unstable = evolution
        .as_ref()
        .map(|e| e.unstable_columns())
        .unwrap_or_default();
    let stats_filter = match unstable.is_empty() {
        true => stats_filter,
        false => stats_filter.and_then(|f| f.without_columns(&unstable)),
    };
    let skipping_filter = stats_filter.as_ref().filter(|_| options.data_skipping);
    let output_schema = output_schema(&read_schema, options.columns.as_deref())?;
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

    let indexes =
        prune::Indexes::choose(skipping_filter, options.query, latest, config, &read_schema);
    let located = if indexes.same_key_lookup(&provisional) {
        located
    } else {
        indexes.look_up_early(early_mdt.as_deref()).await
    };
    let mdt = snapshot.metadata_table.clone();
    stats.files_ignored = snapshot.view.skipped.len();
    stats.ignored = snapshot.view.skipped.clone();
    let mut visibility = snapshot.visibility.clone();

    let mut slices: Vec<FileSlice> = snapshot.latest_slices().cloned().collect();
    if options.query == QueryType::ReadOptimized {
        slices.retain(|s| s.base_file.is_some());
        for s in &mut slices {
            s.log_files.clear();
        }
    }
    if let (QueryType::Incremental, Some(start)) = (options.query, &start) {
        slices.retain(|s| {
            prune::may_hold_changes_after(s, start, &visibility, config.has_completion_times())
        });
    }
    let mut base_records_in_range = false;
    if let (true, Some(commits)) = (files_in_range, &incremental_commits) {
        // Spark's incremental relation builds its file slices from the files the range's
        // commits wrote and reads log blocks of those commits alone: a base file written
        // before the range is not merged in, so an update that lost to it on the ordering
        // field is a change of the range and shows.
        for s in &mut slices {
            if (s.base_file.as_ref()).is_some_and(|b| !commits.contains(&b.instant)) {
                s.base_file = None;
            }
        }
        slices.retain(|s| s.base_file.is_some() || !s.log_files.is_empty());
        visibility = visibility.only(commits);
        base_records_in_range = true;
    }
    stats.slices_total = slices.len();
    stats.files_total = count_files(&slices, options.query);
    stats.partitions_total = count_partitions(&slices);

    if let Some(f) = &filter {
        slices = prune::by_partition_values(slices, f, config, &read_schema)?;
    }
    stats.files_after_partition_pruning = count_files(&slices, options.query);
    stats.partitions_after_pruning = count_partitions(&slices);

    // Slices an index decided (so their footers need not be read).
    let mut decided = vec![false; slices.len()];
    let mut expected_share = prune::SliceShares::new();
    if let (Some(mdt), true) = (&mdt, indexes.active) {
        // Statistics lookups take a round trip (their data blocks): the footer probe goes in
        // it, unless a record-index lookup had one.
        let probe = (!slices.is_empty() && indexes.consults_stats(mdt, &located)).then(|| {
            let base_files: Vec<(String, u64)> = slices
                .iter()
                .filter_map(|s| Some((s.base_path()?, s.base_size()?)))
                .collect();
            client.probe_footer_len(base_files)
        });
        let pruning = prune::by_metadata_indexes(
            mdt,
            slices,
            &indexes,
            located,
            &read_schema,
            options.query,
            &mut stats,
        );
        let pruned = match probe {
            Some(probe) => futures::join!(pruning, probe).0,
            None => pruning.await,
        };
        (slices, decided, expected_share) = (pruned.slices, pruned.decided, pruned.expected_share);
    }
    if let Some(f) = &stats_filter {
        slices = prune::by_footers(client, slices, &decided, f, options.query).await?;
    }
    if let Some(mdt) = &mdt {
        stats.planning_notes.extend(mdt.checksum_notes());
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
        expected_share,
        stats,
        io: client.io().since(&before),
        filter,
        incremental_commits,
        base_records_in_range,
        read_schema,
        output_schema,
        visibility,
        partition_values_from_path: true,
        evolution,
    })
}

/// `filter` for statistics (metadata-table indexes, Parquet footers): without its predicates
/// on partition columns whose values reads take from the partition path. (A plan also drops
/// columns whose name changed meaning, [`crate::schema::evolution`].)
pub fn stats_filter(filter: &Expr, config: &crate::config::TableConfig) -> Option<Expr> {
    if !config.is_partitioned() || !crate::keygen::values_in_path(config) {
        return Some(filter.clone());
    }
    filter.without_columns(&config.partition_fields)
}

/// The columns asked for, in the order asked, typed as the table has them.
fn output_schema(read_schema: &SchemaRef, columns: Option<&[String]>) -> Result<SchemaRef> {
    let Some(columns) = columns else {
        return Ok(read_schema.clone());
    };
    let mut fields = Vec::with_capacity(columns.len());
    for c in columns {
        let f = read_schema.field_with_name(c).map_err(|_| {
            HudiError::invalid(format!(
                "unknown column {c:?} (table columns: {})",
                column_list(read_schema)
            ))
        })?;
        fields.push(f.clone());
    }
    Ok(Arc::new(Schema::new(fields)))
}

fn column_list(schema: &Schema) -> String {
    schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
