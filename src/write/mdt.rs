//! The metadata table's delta commit for one data commit (docs/hudi-format.md §10.4): the
//! `files` listing of every file written, column stats of the indexed columns for each of
//! them, partition stats widened by them, and record-index entries for inserted, moved and
//! deleted keys. Built before the first request that changes storage; written after the
//! data files and completed before the data commit.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use crate::base_file::writer::ColumnRange;
use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::metadata::delta::{
    build_delta, widen_range, ColumnRangeInput, DataFileChange, MdtDeltaInput, MdtLayout,
    MdtLogFile, RecordIndexChange, SecondaryIndexChange,
};
use crate::metadata::keys::partition_stats_key;
use crate::metadata::records::MetadataPayload;
use crate::metadata::secondary::{secondary_index_defs, SecondaryIndexDef, SECONDARY_INDEX_PREFIX};
use crate::metadata::table::{METADATA_DIR, PARTITION_STATS};
use crate::metadata::{Lookup, MetadataTable};
use crate::storage::{join, Purpose, PutMode, Storage, StorageExt};
use crate::timeline::metadata::OrderedMap;
use crate::timeline::{CommitMetadata, WriteStat};

/// A written data file as the metadata table records it.
pub(crate) struct FileEntry<'a> {
    pub partition: &'a str,
    pub file_name: &'a str,
    pub size: u64,
    pub columns: &'a [ColumnRange],
}

/// The delta commit, ready to write.
pub(crate) struct MdtDelta {
    pub logs: Vec<MdtLogFile>,
    pub schema: String,
    pub partitions: Vec<String>,
}

/// Where the table's index definitions live.
pub(crate) fn index_defs_path(config: &TableConfig) -> &str {
    config
        .property("hoodie.table.index.defs.path")
        .unwrap_or(crate::config::layout::INDEX_DEFS_FILE)
}

/// The parsed index definition file, `None` when the table has none.
pub(crate) async fn read_index_defs(
    storage: &dyn Storage,
    config: &TableConfig,
) -> Result<Option<serde_json::Value>> {
    let path = index_defs_path(config);
    let bytes = match storage.get(path, Purpose::Other).await {
        Ok(b) => b,
        Err(HudiError::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| HudiError::corrupt_by(path, "bad JSON", e))
}

/// The secondary indexes among the table's complete MDT partitions (none: no request).
pub(crate) async fn secondary_indexes(
    storage: &dyn Storage,
    config: &TableConfig,
) -> Result<Vec<SecondaryIndexDef>> {
    let partitions = &config.metadata_partitions;
    if !partitions
        .iter()
        .any(|p| p.starts_with(SECONDARY_INDEX_PREFIX))
    {
        return Ok(Vec::new());
    }
    let defs = read_index_defs(storage, config).await?;
    secondary_index_defs(
        defs.as_ref(),
        partitions,
        index_defs_path(config),
        config.version,
    )
}

/// Columns the table's column-stats index covers (`.hoodie/.index_defs/index.json`), or
/// `None` for every column.
pub(crate) async fn indexed_columns(
    storage: &dyn Storage,
    config: &TableConfig,
) -> Result<Option<Vec<String>>> {
    let Some(json) = read_index_defs(storage, config).await? else {
        return Ok(None);
    };
    Ok(json
        .pointer("/indexDefinitions/column_stats/sourceFields")
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        }))
}

/// What the delta commit needs from storage, read before the rows are encoded and all at
/// once: the indexed columns, the metadata table's layout and schema, and the current
/// partition stats of the partitions the commit touches.
pub(crate) struct MdtPrefetch {
    indexed: Option<Vec<String>>,
    layout: MdtLayout,
    partition_stats: BTreeMap<String, MetadataPayload>,
    with_stats: bool,
    /// Partitions whose stats were looked up.
    covered: BTreeSet<String>,
    /// The secondary indexes the delta keeps in step.
    pub(crate) secondary: Vec<SecondaryIndexDef>,
}

/// Reads what [`build`] needs. Run beside tagging, `touched` are the input rows'
/// partitions and `all_columns` may be unknown yet (`None`): then a table without index
/// definitions gets its stats in [`MdtPrefetch::top_up`].
pub(crate) async fn prefetch(
    storage: &dyn Storage,
    mdt: &MetadataTable,
    config: &TableConfig,
    touched: &BTreeSet<String>,
    all_columns: Option<&[String]>,
) -> Result<MdtPrefetch> {
    let partitions: Vec<&str> = config
        .metadata_partitions
        .iter()
        .map(String::as_str)
        .collect();
    let with_stats = partitions.contains(&PARTITION_STATS);
    let stats = async {
        if !with_stats {
            return Ok((None, BTreeMap::new(), BTreeSet::new()));
        }
        let indexed = indexed_columns(storage, config).await?;
        let Some(columns) = indexed.as_deref().or(all_columns) else {
            return Ok((indexed, BTreeMap::new(), BTreeSet::new()));
        };
        let found = lookup_stats(mdt, touched.iter(), columns).await?;
        Ok::<_, HudiError>((indexed, found, touched.clone()))
    };
    let indexed_only = async {
        if with_stats {
            Ok(None)
        } else {
            indexed_columns(storage, config).await
        }
    };
    let ((indexed_stats, partition_stats, covered), indexed_plain, layout, secondary) =
        futures::future::try_join4(
            stats,
            indexed_only,
            MdtLayout::load(mdt, &partitions, config.timezone),
            secondary_indexes(storage, config),
        )
        .await?;
    Ok(MdtPrefetch {
        indexed: indexed_stats.or(indexed_plain),
        layout,
        partition_stats,
        with_stats,
        covered,
        secondary,
    })
}

async fn lookup_stats<'a>(
    mdt: &MetadataTable,
    partitions: impl Iterator<Item = &'a String>,
    columns: &[String],
) -> Result<BTreeMap<String, MetadataPayload>> {
    let keys: Vec<String> = partitions
        .flat_map(|p| columns.iter().map(move |c| partition_stats_key(c, p)))
        .collect();
    Ok(mdt
        .lookup(PARTITION_STATS, Lookup::Keys(&keys))
        .await?
        .values)
}

impl MdtPrefetch {
    /// Looks up the stats of touched partitions the prefetch did not cover (a key tagged in
    /// another partition than its row's); no request when there are none.
    pub(crate) async fn top_up(
        &mut self,
        mdt: &MetadataTable,
        touched: &BTreeSet<String>,
        all_columns: &[String],
    ) -> Result<()> {
        let missing: BTreeSet<String> = touched.difference(&self.covered).cloned().collect();
        if !self.with_stats || missing.is_empty() {
            return Ok(());
        }
        let columns = self.indexed.as_deref().unwrap_or(all_columns);
        let found = lookup_stats(mdt, missing.iter(), columns).await?;
        self.partition_stats.extend(found);
        self.covered.extend(missing);
        Ok(())
    }
}

/// The delta commit's log files (no I/O: everything came with [`prefetch`]).
pub(crate) fn build(
    prefetch: &MdtPrefetch,
    config: &TableConfig,
    instant: &str,
    files: &[FileEntry<'_>],
    record_index: Vec<RecordIndexChange>,
    secondary_index: Vec<SecondaryIndexChange>,
) -> Result<MdtDelta> {
    let partitions: Vec<&str> = config
        .metadata_partitions
        .iter()
        .map(String::as_str)
        .collect();
    let indexed = prefetch.indexed.as_deref();
    let wanted = |c: &str| indexed.is_none_or(|cols| cols.iter().any(|x| x == c));
    let changes: Vec<DataFileChange> = files
        .iter()
        .map(|f| DataFileChange {
            partition: f.partition.to_string(),
            file_name: f.file_name.to_string(),
            size: f.size,
            deleted: false,
            columns: f
                .columns
                .iter()
                .filter(|c| wanted(&c.column))
                .cloned()
                .collect(),
        })
        .collect();
    let partition_stats = if partitions.contains(&PARTITION_STATS) {
        widened_partition_stats(&prefetch.partition_stats, &changes)
    } else {
        Vec::new()
    };
    let input = MdtDeltaInput {
        instant: instant.to_string(),
        files: changes,
        record_index,
        partition_stats,
        secondary_index,
    };
    let logs = build_delta(&prefetch.layout, &input)?;
    let mut touched: Vec<String> = logs.iter().map(|l| l.partition.clone()).collect();
    touched.sort();
    touched.dedup();
    Ok(MdtDelta {
        logs,
        schema: prefetch.layout.schema.clone(),
        partitions: touched,
    })
}

/// Each touched partition's stats widened by the new files' ranges (never narrowed: a
/// rewritten file's old values may still be in an older slice readers can time-travel to).
fn widened_partition_stats(
    existing: &BTreeMap<String, MetadataPayload>,
    changes: &[DataFileChange],
) -> Vec<(String, Vec<ColumnRangeInput>)> {
    let mut by_partition: BTreeMap<&str, BTreeMap<&str, ColumnRangeInput>> = BTreeMap::new();
    for f in changes {
        let columns = by_partition.entry(f.partition.as_str()).or_default();
        for c in &f.columns {
            columns
                .entry(c.column.as_str())
                .and_modify(|acc| widen_range(acc, c))
                .or_insert_with(|| c.clone());
        }
    }
    let mut out = Vec::new();
    for (partition, mut columns) in by_partition {
        for (column, acc) in columns.iter_mut() {
            if let Some(MetadataPayload::PartitionStats(old)) =
                existing.get(&partition_stats_key(column, partition))
            {
                if !old.is_deleted {
                    widen_range(
                        acc,
                        &ColumnRangeInput {
                            column: column.to_string(),
                            min: old.min.clone(),
                            max: old.max.clone(),
                            null_count: old.null_count.unwrap_or(0).max(0) as u64,
                            value_count: old.value_count.unwrap_or(0).max(0) as u64,
                            total_size: old.total_size.unwrap_or(0).max(0) as u64,
                            total_uncompressed_size: old.total_uncompressed_size.unwrap_or(0).max(0)
                                as u64,
                        },
                    );
                }
            }
        }
        out.push((partition.to_string(), columns.into_values().collect()));
    }
    out
}

/// The delta commit's instant files and what they hold.
pub(crate) struct MdtInstant {
    requested: String,
    inflight: (String, Bytes),
    logs: Vec<(String, Bytes)>,
    completed_prefix: String,
    completed: Bytes,
}

/// Encodes the delta commit for `instant`.
pub(crate) fn prepare(config: &TableConfig, delta: &MdtDelta, instant: &str) -> Result<MdtInstant> {
    let timeline = join(METADATA_DIR, ".hoodie/timeline");
    let mut stats: OrderedMap<Option<Vec<WriteStat>>> = OrderedMap::new();
    for log in &delta.logs {
        let name = log.path.rsplit('/').next().unwrap_or(&log.path).to_string();
        let size = log.bytes.len() as i64;
        stats
            .entry(log.partition.clone())
            .or_insert_with(|| Some(Vec::new()))
            .get_or_insert_with(Vec::new)
            .push(WriteStat {
                file_id: Some(log.file_id.clone()),
                path: Some(log.path.clone()),
                prev_commit: Some(instant.to_string()),
                num_writes: Some(log.num_records as i64),
                num_deletes: Some(log.num_deletes as i64),
                num_update_writes: Some(log.num_records as i64),
                num_inserts: Some(0),
                total_write_bytes: Some(size),
                total_write_errors: Some(0),
                partition_path: Some(log.partition.clone()),
                file_size_in_bytes: Some(size),
                log_version: Some(log.log_version as i64),
                log_offset: Some(0),
                base_file: Some(String::new()),
                log_files: Some(vec![name]),
                ..WriteStat::default()
            });
    }
    let planned = CommitMetadata {
        partition_to_write_stats: Some(OrderedMap::new()),
        compacted: Some(false),
        extra_metadata: Some(OrderedMap::new()),
        operation_type: Some("UPSERT_PREPPED".into()),
        ..CommitMetadata::default()
    };
    let done = CommitMetadata {
        partition_to_write_stats: Some(stats),
        extra_metadata: Some(OrderedMap::from([(
            "schema".to_string(),
            Some(delta.schema.clone()),
        )])),
        ..planned.clone()
    };
    let encode =
        |m: &CommitMetadata| crate::timeline::write::encode_commit_metadata(m, config.version);
    Ok(MdtInstant {
        requested: join(&timeline, &format!("{instant}.deltacommit.requested")),
        inflight: (
            join(&timeline, &format!("{instant}.deltacommit.inflight")),
            Bytes::from(encode(&planned)?),
        ),
        logs: delta
            .logs
            .iter()
            .map(|l| (join(METADATA_DIR, &l.path), Bytes::from(l.bytes.clone())))
            .collect(),
        completed_prefix: join(&timeline, instant),
        completed: Bytes::from(encode(&done)?),
    })
}

impl MdtInstant {
    /// The requested instant (written with the data commit's markers).
    pub(crate) async fn request(&self, storage: &dyn Storage) -> Result<()> {
        storage
            .put(&self.requested, Bytes::new(), PutMode::Create)
            .await
            .map(drop)
    }

    /// The inflight instant and the log files (written with the data files).
    pub(crate) fn pending_puts(&self) -> impl Iterator<Item = (&str, Bytes)> {
        std::iter::once((self.inflight.0.as_str(), self.inflight.1.clone()))
            .chain(self.logs.iter().map(|(p, b)| (p.as_str(), b.clone())))
    }

    /// The completed instant of the delta commit at `completion` (written before the data
    /// commit's, §10.4).
    pub(crate) fn completed(&self, completion: &str) -> (String, Bytes) {
        let path = format!("{}_{completion}.deltacommit", self.completed_prefix);
        (path, self.completed.clone())
    }
}
