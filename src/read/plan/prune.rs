//! Pruning stages, each keeping the file slices that may hold a matching row: partition
//! values, then the metadata table's indexes (record index, secondary indexes, partition
//! stats, column stats), then Parquet footers for the slices no index decided.

use std::collections::HashSet;

use arrow_array::Array;
use arrow_schema::Schema;

use super::{count_files, PlanStats};
use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::expr::{Expr, Op};
use crate::file_group::FileSlice;
use crate::meta_client::MetaClient;
use crate::metadata::secondary::literal_value;
use crate::metadata::skipping::{record_keys, without_partition_conjuncts, KeyLookup};
use crate::metadata::table::{COLUMN_STATS, FILES, PARTITION_STATS, RECORD_INDEX};
use crate::metadata::MetadataTable;
use crate::read::QueryType;
use crate::timeline::{compare_instant_times, Visibility};

/// Which metadata-table indexes a query can use, decided once per plan.
pub(super) struct Indexes {
    /// Whether data skipping applies at all (a filter, and skipping on).
    pub(super) active: bool,
    /// Record keys the filter pins, when the record index may answer (latest snapshot).
    key_lookup: Option<KeyLookup>,
    /// What statistics prune on once the record index answered (`None`: nothing left).
    stats_after_keys: Option<Expr>,
    /// What statistics prune on when the record index is not used.
    stats_alone: Option<Expr>,
    /// Partition stats describe the latest snapshot of a partitioned table only.
    partition_stats: bool,
    /// The filter pins record keys, but the table's record index cannot say where keys are
    /// ([`TableConfig::record_index_locates_keys`]).
    keys_not_indexed: bool,
    /// `=` / `in` conjuncts a secondary index may answer (latest snapshot only): column and
    /// the literals.
    value_lookups: Vec<(String, Vec<String>)>,
    /// Where the table's index definitions are.
    defs_path: String,
}

impl Indexes {
    pub(super) fn choose(
        filter: Option<&Expr>,
        query: QueryType,
        latest: bool,
        config: &TableConfig,
        schema: &Schema,
    ) -> Indexes {
        let Some(filter) = filter else {
            return Indexes {
                active: false,
                key_lookup: None,
                stats_after_keys: None,
                stats_alone: None,
                partition_stats: false,
                keys_not_indexed: false,
                value_lookups: Vec::new(),
                defs_path: String::new(),
            };
        };
        let pinned =
            record_keys(filter, config, schema).filter(|_| latest && query == QueryType::Snapshot);
        let usable = config.record_index_locates_keys();
        let keys_not_indexed = pinned.is_some() && !usable;
        let key_lookup = pinned.filter(|_| usable);
        let stats_alone = without_partition_conjuncts(filter, config);
        let stats_after_keys = match &key_lookup {
            Some(l) => l
                .rest
                .as_ref()
                .and_then(|rest| without_partition_conjuncts(rest, config)),
            None => stats_alone.clone(),
        };
        Indexes {
            active: true,
            key_lookup,
            stats_after_keys,
            stats_alone,
            partition_stats: latest && config.is_partitioned(),
            keys_not_indexed,
            value_lookups: match latest && query == QueryType::Snapshot {
                true => value_lookups(filter),
                false => Vec::new(),
            },
            defs_path: config
                .property("hoodie.table.index.defs.path")
                .unwrap_or(crate::config::layout::INDEX_DEFS_FILE)
                .to_string(),
        }
    }

    /// Whether [`Self::look_up_early`] will ask the record index.
    pub(super) fn looks_up_keys(&self, mdt: Option<&MetadataTable>) -> bool {
        self.active
            && self.key_lookup.is_some()
            && mdt.is_some_and(|m| m.has_partition(RECORD_INDEX))
    }

    /// Whether [`by_metadata_indexes`] will ask a statistics partition, once the record
    /// index answered `located`.
    pub(super) fn consults_stats(&self, mdt: &MetadataTable, located: &Located) -> bool {
        self.stats_filter(located).is_some()
            && ((self.partition_stats && mdt.has_partition(PARTITION_STATS))
                || mdt.has_partition(COLUMN_STATS))
    }

    /// What statistics prune on once the record index answered `located` (its answer, when
    /// it has one, leaves only the rest of the filter).
    fn stats_filter(&self, located: &Located) -> Option<&Expr> {
        let keys_answered = self.key_lookup.is_some() && matches!(located, Some(Ok(_)));
        if keys_answered {
            self.stats_after_keys.as_ref()
        } else {
            self.stats_alone.as_ref()
        }
    }

    /// Whether a secondary index may narrow the plan: `=` / `in` conjuncts, and no record
    /// keys pinned (the record index answers those more exactly).
    fn asks_secondary(&self) -> bool {
        !self.value_lookups.is_empty() && self.key_lookup.is_none()
    }

    /// Whether `other` pins the same record keys (its record-index answer holds here).
    pub(super) fn same_key_lookup(&self, other: &Indexes) -> bool {
        self.key_lookup == other.key_lookup
    }

    /// The MDT partitions a plan may consult with `filter` (when skipping is on), known
    /// before the schema is, so that they are listed while the metadata table opens: the
    /// `files` partition, the record index when the filter names a record key field, the
    /// statistics when there is a filter.
    pub(super) fn partitions_for(filter: Option<&Expr>, config: &TableConfig) -> Vec<&'static str> {
        let mut out = vec![FILES];
        let Some(filter) = filter else { return out };
        let columns = filter.columns();
        let names_key = |c: &&str| {
            *c == crate::schema::RECORD_KEY || config.record_key_fields.iter().any(|k| k == c)
        };
        if columns.iter().any(names_key) && config.record_index_locates_keys() {
            out.push(RECORD_INDEX);
        }
        out.extend([PARTITION_STATS, COLUMN_STATS]);
        out
    }
}

/// A schema of the record key fields typed as strings: what [`Indexes::choose`] can take
/// before the table's schema is read (a key's literal is then the key's text).
pub(super) fn key_fields_as_text(config: &TableConfig) -> Schema {
    Schema::new(
        config
            .record_key_fields
            .iter()
            .map(|f| arrow_schema::Field::new(f, arrow_schema::DataType::Utf8, true))
            .collect::<Vec<_>>(),
    )
}

/// The record index's answer, looked up while the data files are being listed.
pub(super) type Located = Option<Result<HashSet<(String, String)>>>;

impl Indexes {
    /// What the indexes can do before the data files are known, run beside their listing:
    /// the record-index lookup, and opening the statistics partitions a lookup will consult
    /// (their tails and log files), so that the statistics lookups after the listing need
    /// only data blocks. Statistics are opened after a record-index answer only when it found
    /// a file group (else they would not be consulted). Errors of the opening are left for
    /// the lookups to report.
    pub(super) async fn look_up_early(&self, mdt: Option<&MetadataTable>) -> Located {
        let mdt = mdt.filter(|_| self.active)?;
        let lookup = async {
            match (self.key_lookup.as_ref()).filter(|_| mdt.has_partition(RECORD_INDEX)) {
                Some(lookup) => Some(mdt.locate_keys(&lookup.keys).await),
                None => None,
            }
        };
        // The index definitions a secondary-index stage needs, read beside (errors are left
        // for the stage to report).
        let definitions = async {
            if self.asks_secondary() && mdt.has_secondary_indexes() {
                let _ = mdt.secondary_indexes(&self.defs_path).await;
            }
        };
        let (located, ()) = futures::join!(lookup, definitions);
        let stats_filter = match &located {
            Some(Ok(groups)) if groups.is_empty() => None,
            Some(Ok(_)) => self.stats_after_keys.as_ref(),
            _ => self.stats_alone.as_ref(),
        };
        if stats_filter.is_some() {
            let partition_stats = self.partition_stats && mdt.has_partition(PARTITION_STATS);
            let opened = [
                (partition_stats, PARTITION_STATS),
                (mdt.has_partition(COLUMN_STATS), COLUMN_STATS),
            ];
            let opened = opened
                .into_iter()
                .filter(|(used, _)| *used)
                .map(|(_, p)| mdt.open_shards(p));
            let _ = futures::future::join_all(opened).await;
        }
        located
    }
}

/// Partition pruning on the values the partition paths encode.
pub(super) fn by_partition_values(
    slices: Vec<FileSlice>,
    filter: &Expr,
    config: &TableConfig,
    schema: &Schema,
) -> Result<Vec<FileSlice>> {
    let columns = filter.columns();
    if !config
        .partition_fields
        .iter()
        .any(|f| columns.contains(&f.as_str()))
    {
        return Ok(slices);
    }
    let mut partitions: Vec<&str> = slices.iter().map(|s| s.partition.as_str()).collect();
    partitions.sort();
    partitions.dedup();
    let Some(batch) = crate::keygen::partition_batch(&partitions, config, schema)? else {
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

/// What the metadata table's indexes kept.
pub(super) struct Pruned {
    pub(super) slices: Vec<FileSlice>,
    /// Per slice, whether an index decided it (so its footer need not be read).
    pub(super) decided: Vec<bool>,
    /// The share of their rows column statistics expect to match, for the slices where it
    /// is less than all (by partition and file id).
    pub(super) expected_share: SliceShares,
}

/// By (partition, file id).
pub type SliceShares = std::collections::HashMap<(String, String), f64>;

/// The record index, partition stats and column stats, in that order; an index that cannot
/// be read is skipped with a note.
pub(super) async fn by_metadata_indexes(
    mdt: &MetadataTable,
    mut slices: Vec<FileSlice>,
    indexes: &Indexes,
    located: Located,
    schema: &Schema,
    query: QueryType,
    stats: &mut PlanStats,
) -> Pruned {
    let rest = indexes.stats_filter(&located);
    if indexes.keys_not_indexed && mdt.has_partition(RECORD_INDEX) {
        stats.planning_notes.push(
            "record_index not used: the table does not populate meta fields, and Hudi leaves \
             its record index empty then"
                .to_string(),
        );
    }
    if let (Some(lookup), Some(located)) = (&indexes.key_lookup, located) {
        match located {
            Ok(groups) => {
                slices.retain(|s| groups.contains(&(s.partition.clone(), s.file_id.clone())));
                stats.files_after_record_index = Some(count_files(&slices, query));
                stats.planning_notes.push(format!(
                    "record_index: {} key(s) found in {} file group(s)",
                    lookup.keys.len(),
                    groups.len()
                ));
            }
            Err(e) => stats
                .planning_notes
                .push(format!("record_index not used: {e}")),
        }
    }
    if indexes.asks_secondary() && !slices.is_empty() {
        slices = by_secondary_indexes(mdt, slices, indexes, schema, query, stats).await;
    }
    // Exact answers (the record index, partition paths) leave nothing for statistics.
    let Some(filter) = rest else {
        let decided = vec![true; slices.len()];
        return Pruned::new(slices, decided);
    };
    if indexes.partition_stats && mdt.has_partition(PARTITION_STATS) {
        slices = by_partition_stats(mdt, slices, filter, schema, query, stats).await;
    }
    let undecided = vec![false; slices.len()];
    if slices.is_empty() || !mdt.has_partition(COLUMN_STATS) {
        return Pruned::new(slices, undecided);
    }
    match mdt.prune_slices(&slices, filter, schema).await {
        Ok(v) => {
            note_problems(stats, COLUMN_STATS, &v.problems);
            let before = slices.len();
            let mut out = Pruned::new(Vec::new(), Vec::new());
            for (((s, keep), unknown), share) in
                slices.into_iter().zip(v.keep).zip(v.unknown).zip(v.share)
            {
                if !keep {
                    continue;
                }
                if share < 1.0 {
                    out.expected_share
                        .insert((s.partition.clone(), s.file_id.clone()), share);
                }
                out.slices.push(s);
                out.decided.push(!unknown);
            }
            let slices = &out.slices;
            stats.files_after_column_stats = Some(count_files(slices, query));
            stats.planning_notes.push(format!(
                "column_stats: {} of {before} file slices may match on [{}]",
                slices.len(),
                filter.columns().join(", ")
            ));
            out
        }
        Err(e) => {
            stats
                .planning_notes
                .push(format!("column_stats not used: {e}"));
            Pruned::new(slices, undecided)
        }
    }
}

/// `=` / `in` conjuncts of `filter`: (column, literals).
fn value_lookups(filter: &Expr) -> Vec<(String, Vec<String>)> {
    match filter {
        Expr::Pred(p) if matches!(p.op, Op::Eq | Op::In) => {
            vec![(p.column.clone(), p.values.clone())]
        }
        Expr::And(parts) => parts.iter().flat_map(value_lookups).collect(),
        _ => Vec::new(),
    }
}

/// Secondary indexes: the record keys indexed under the filter's values, located by the
/// record index, keep their file groups. Each indexed conjunct narrows further; an index
/// that cannot be read is skipped with a note.
async fn by_secondary_indexes(
    mdt: &MetadataTable,
    mut slices: Vec<FileSlice>,
    indexes: &Indexes,
    schema: &Schema,
    query: QueryType,
    stats: &mut PlanStats,
) -> Vec<FileSlice> {
    let defs = match mdt.secondary_indexes(&indexes.defs_path).await {
        Ok(d) if d.is_empty() => return slices,
        Ok(d) => d,
        Err(e) => {
            let note = format!("secondary indexes not used: {e}");
            stats.planning_notes.push(note);
            return slices;
        }
    };
    if !mdt.has_partition(RECORD_INDEX) {
        stats.planning_notes.push(
            "secondary indexes not used: they name record keys, and the table has no \
             record_index to locate them"
                .to_string(),
        );
        return slices;
    }
    for (column, literals) in &indexes.value_lookups {
        let Some(def) = defs.iter().find(|d| &d.column == column) else {
            continue;
        };
        let Ok(field) = schema.field_with_name(column) else {
            continue;
        };
        let values: Option<Vec<Option<String>>> = (literals.iter())
            .map(|l| literal_value(l, field.data_type()).map(Some))
            .collect();
        let Some(values) = values else {
            continue;
        };
        let located = async {
            let keys = mdt.secondary_keys(def, &values).await?;
            let groups = match keys.is_empty() {
                true => Default::default(),
                false => mdt.locate_keys(&keys).await?,
            };
            Ok::<_, HudiError>((keys.len(), groups))
        };
        match located.await {
            Ok((keys, groups)) => {
                slices.retain(|s| groups.contains(&(s.partition.clone(), s.file_id.clone())));
                stats.files_after_secondary_index = Some(count_files(&slices, query));
                stats.planning_notes.push(format!(
                    "{}: {} value(s) of {column} name {keys} key(s) in {} file group(s)",
                    def.partition,
                    values.len(),
                    groups.len()
                ));
            }
            Err(e) => stats
                .planning_notes
                .push(format!("{} not used: {e}", def.partition)),
        }
    }
    slices
}

impl Pruned {
    fn new(slices: Vec<FileSlice>, decided: Vec<bool>) -> Pruned {
        Pruned {
            slices,
            decided,
            expected_share: SliceShares::new(),
        }
    }
}

/// `partition_stats`: drops the partitions whose statistics rule the filter out.
async fn by_partition_stats(
    mdt: &MetadataTable,
    mut slices: Vec<FileSlice>,
    filter: &Expr,
    schema: &Schema,
    query: QueryType,
    stats: &mut PlanStats,
) -> Vec<FileSlice> {
    let mut partitions: Vec<String> = slices.iter().map(|s| s.partition.clone()).collect();
    partitions.sort();
    partitions.dedup();
    match mdt.prune_partitions(&partitions, filter, schema).await {
        Ok(v) => {
            note_problems(stats, PARTITION_STATS, &v.problems);
            let keep: HashSet<&String> = partitions
                .iter()
                .zip(&v.keep)
                .filter_map(|(p, k)| k.then_some(p))
                .collect();
            slices.retain(|s| keep.contains(&s.partition));
            stats.files_after_partition_stats = Some(count_files(&slices, query));
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

/// Parquet-footer pruning of the slices no index decided (base-file-only slices).
pub(super) async fn by_footers(
    client: &MetaClient,
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
                let footer = client.footer(&path, s.base_size()).await?;
                Ok::<bool, HudiError>(
                    !crate::base_file::matching_row_groups(&footer, Some(filter)).is_empty(),
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

/// Incremental pruning: a slice whose files all completed at or before `start` cannot hold
/// a record committed after it.
pub(super) fn may_hold_changes_after(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse_filter;
    use arrow_schema::{DataType, Field};

    /// The record-index lookup that starts before the schema is read holds only where the
    /// schema would pin the same keys; otherwise the plan redoes it.
    #[test]
    fn a_lookup_chosen_before_the_schema_holds_where_the_schema_agrees() {
        let config = TableConfig::parse(
            "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=9\n\
             hoodie.table.recordkey.fields=id\nhoodie.table.keygenerator.type=SIMPLE\n",
            "p",
        )
        .unwrap();
        let typed = |ty: DataType| Schema::new(vec![Field::new("id", ty, true)]);
        let same = |filter: &str, ty: DataType| {
            let f = parse_filter(filter).unwrap();
            let choose = |schema: &Schema| {
                Indexes::choose(Some(&f), QueryType::Snapshot, true, &config, schema)
            };
            let provisional = choose(&key_fields_as_text(&config));
            assert!(provisional.key_lookup.is_some(), "{filter}");
            choose(&typed(ty)).same_key_lookup(&provisional)
        };
        assert!(same("id = 7", DataType::Int64));
        assert!(same("id in (1, 2) and id > 0", DataType::Int32));
        assert!(same("id = 007", DataType::Utf8));
        assert!(!same("id = 007", DataType::Int64), "the key's text is 7");
        assert!(!same("id = x", DataType::Int64), "no key to look up");
    }
}
