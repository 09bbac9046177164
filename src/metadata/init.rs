//! Building metadata-table partitions from scratch, as Java's metadata writer initialises
//! them (docs/hudi-format.md §8.12): which file groups a partition gets, the records it
//! starts with (from a listing of the data table and its live keys), and one delta commit
//! per partition holding, per file group, an empty log file and a base HFile.
//!
//! Sans-IO: the caller lists, reads footers and keys, and writes what this returns.

use std::collections::{BTreeMap, BTreeSet};

use super::delta::{all_partitions, column_stats_record, instant_millis, WRITE_TOKEN};
use super::keys::{
    column_stats_key, file_group_index, partition_id, partition_stats_key, ALL_PARTITIONS_KEY,
};
use super::records::encode::RecordEncoder;
use super::records::{FilesEntry, MetadataPayload, RecordIndexEntry};
use super::table::{COLUMN_STATS, FILES, PARTITION_STATS, RECORD_INDEX};
use crate::base_file::writer::ColumnRange;
use crate::config::TimelineTimezone;
use crate::error::{HudiError, Result};
use crate::log_file::writer::delete_block;
use crate::storage::join;
use crate::timeline::metadata::OrderedMap;
use crate::timeline::{CommitMetadata, WriteStat};

/// Java's `SOLO_COMMIT_TIMESTAMP`: the base time of a table with no completed instant.
pub const SOLO_COMMIT_TIME: &str = "00000000000000";

/// The partitions this writer builds, in the order Java initialises them.
pub const BUILDABLE: [&str; 4] = [FILES, COLUMN_STATS, RECORD_INDEX, PARTITION_STATS];

/// The record schema Apache Hudi 1.1 writes into a new metadata table (its
/// `HoodieMetadataRecord`, as found in the MDT files Spark 1.1.1 writes).
pub const RECORD_SCHEMA: &str = include_str!("records/hoodie_metadata_record.avsc");

/// [`RECORD_SCHEMA`] with the five meta fields first: the schema Java's base HFiles carry
/// (the MDT writes them without populating meta fields, so they stay null).
pub fn base_file_schema() -> String {
    const META: [&str; 5] = [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ];
    let fields: Vec<String> = META
        .iter()
        .map(|n| format!(r#"{{"name":"{n}","type":["null","string"],"doc":"","default":null}},"#))
        .collect();
    RECORD_SCHEMA.replacen(
        r#""fields":["#,
        &format!(r#""fields":[{}"#, fields.concat()),
        1,
    )
}

/// File-group sizing (Java `HoodieMetadataConfig` defaults).
#[derive(Debug, Clone)]
pub struct Sizing {
    pub column_stats: usize,
    pub partition_stats: usize,
    pub record_index_min: usize,
    pub record_index_max: usize,
    pub record_index_growth: f64,
    pub record_index_max_file_group_bytes: u64,
}

impl Default for Sizing {
    fn default() -> Self {
        Sizing {
            column_stats: 2,
            partition_stats: 1,
            record_index_min: 10,
            record_index_max: 10_000,
            record_index_growth: 2.0,
            record_index_max_file_group_bytes: 1 << 30,
        }
    }
}

/// Java's assumed size of one record-index entry, for sizing.
const RECORD_INDEX_ENTRY_BYTES: u64 = 48;

impl Sizing {
    /// How many file groups `partition` starts with, holding `records` records.
    pub fn file_groups(&self, partition: &str, records: u64) -> usize {
        match partition {
            COLUMN_STATS => self.column_stats.max(1),
            PARTITION_STATS => self.partition_stats.max(1),
            RECORD_INDEX => {
                let (min, max) = (self.record_index_min, self.record_index_max);
                if min == max && min > 0 {
                    return min;
                }
                let per_group =
                    (self.record_index_max_file_group_bytes / RECORD_INDEX_ENTRY_BYTES).max(1);
                let wanted = (records as f64 * self.record_index_growth).ceil() as u64;
                let groups = wanted.div_ceil(per_group) as usize;
                groups.clamp(min.max(1), max.max(min.max(1)))
            }
            _ => 1,
        }
    }
}

/// File ids of a partition's file groups: `<prefix><%04d>-0`.
pub fn file_group_ids(partition: &str, count: usize) -> Vec<String> {
    let prefix = match partition {
        FILES => "files-".to_string(),
        COLUMN_STATS => "col-stats-".to_string(),
        PARTITION_STATS => "partition-stats-".to_string(),
        RECORD_INDEX => "record-index-".to_string(),
        "bloom_filters" => "bloom-filters-".to_string(),
        other => format!("{}-", other.replace('_', "-")),
    };
    (0..count).map(|i| format!("{prefix}{i:04}-0")).collect()
}

/// The first instant of `00000000000000000`, `…001`, … not in `taken` (Java pads the
/// solo commit time plus n milliseconds to 17 digits, as it is not a date).
pub fn init_instant(taken: &BTreeSet<String>) -> String {
    (0u64..)
        .map(|n| format!("{n:017}"))
        .find(|t| !taken.contains(t))
        .unwrap_or_default()
}

/// A data file the new partitions record, with the column ranges of its indexed columns.
#[derive(Debug, Clone)]
pub struct DataFile {
    pub partition: String,
    pub name: String,
    pub size: u64,
    pub columns: Vec<ColumnRange>,
}

/// A live record key and the file group holding it.
#[derive(Debug, Clone)]
pub struct LiveKey {
    pub key: String,
    pub partition: String,
    pub file_id: String,
    /// The base instant of the slice holding it.
    pub instant: String,
}

/// What a data table holds as of the base time.
#[derive(Debug, Clone, Default)]
pub struct Contents {
    /// Every partition path, including ones without files.
    pub partitions: Vec<String>,
    pub files: Vec<DataFile>,
    pub keys: Vec<LiveKey>,
}

/// The records a new `partition` starts with, by key. The record index takes the live
/// keys out of `data` (they are its records' keys; nothing else needs them).
pub fn records(
    partition: &str,
    data: &mut Contents,
    timezone: TimelineTimezone,
) -> Result<BTreeMap<String, MetadataPayload>> {
    let mut out = BTreeMap::new();
    match partition {
        FILES => {
            let mut by_partition: BTreeMap<&str, Vec<FilesEntry>> = data
                .partitions
                .iter()
                .map(|p| (partition_id(p), Vec::new()))
                .collect();
            for f in &data.files {
                by_partition
                    .entry(partition_id(&f.partition))
                    .or_default()
                    .push(FilesEntry {
                        name: f.name.clone(),
                        size: to_i64(f.size)?,
                        is_deleted: false,
                    });
            }
            out.insert(
                ALL_PARTITIONS_KEY.to_string(),
                all_partitions(by_partition.keys().copied()),
            );
            for (p, entries) in by_partition {
                out.insert(p.to_string(), MetadataPayload::Files(entries));
            }
        }
        COLUMN_STATS => {
            for f in &data.files {
                for c in &f.columns {
                    let stats = column_stats_record(c, &f.name, false, false)?;
                    out.insert(
                        column_stats_key(&c.column, &f.partition, &f.name),
                        MetadataPayload::ColumnStats(stats),
                    );
                }
            }
        }
        PARTITION_STATS => {
            let mut by_partition: BTreeMap<&str, BTreeMap<&str, ColumnRange>> = BTreeMap::new();
            for f in &data.files {
                let columns = by_partition.entry(f.partition.as_str()).or_default();
                for c in &f.columns {
                    columns
                        .entry(c.column.as_str())
                        .and_modify(|acc| super::delta::widen_range(acc, c))
                        .or_insert_with(|| c.clone());
                }
            }
            for (p, columns) in by_partition {
                for c in columns.values() {
                    let stats = column_stats_record(c, partition_id(p), false, true)?;
                    out.insert(
                        partition_stats_key(&c.column, p),
                        MetadataPayload::PartitionStats(stats),
                    );
                }
            }
        }
        RECORD_INDEX => {
            for k in std::mem::take(&mut data.keys) {
                let entry = RecordIndexEntry {
                    partition: k.partition,
                    file_id: k.file_id,
                    instant_time_ms: Some(instant_millis(&k.instant, timezone)?),
                    position: None,
                };
                if let Some(MetadataPayload::RecordIndex(other)) =
                    out.insert(k.key.clone(), MetadataPayload::RecordIndex(entry))
                {
                    return Err(HudiError::invalid(format!(
                        "record key {:?} is live in two file groups ({} and another); a record \
                         index needs keys unique across the table",
                        k.key, other.file_id
                    )));
                }
            }
        }
        other => {
            return Err(HudiError::unsupported(format!(
                "building the metadata table's {other} partition"
            )))
        }
    }
    Ok(out)
}

/// One partition's initial delta commit: its files (paths under `.hoodie/metadata`) and
/// the completed instant's metadata.
pub struct PartitionCommit {
    pub partition: String,
    pub instant: String,
    pub file_groups: usize,
    pub files: Vec<(String, Vec<u8>)>,
    pub metadata: CommitMetadata,
}

/// Builds `partition`'s file groups holding `records`, committed at `instant`.
pub fn build_partition(
    partition: &str,
    records: &BTreeMap<String, MetadataPayload>,
    file_groups: usize,
    instant: &str,
    create_time_ms: i64,
    block_size: usize,
) -> Result<PartitionCommit> {
    let by_key = |key: &str| key.to_string();
    let (at, ms) = (instant, create_time_ms);
    build_partition_sharded(partition, records, file_groups, at, ms, block_size, &by_key)
}

/// [`build_partition`] with each record's file group picked by the hash of `shard_key(key)`
/// (a V2 secondary index hashes `<value>$`).
pub fn build_partition_sharded(
    partition: &str,
    records: &BTreeMap<String, MetadataPayload>,
    file_groups: usize,
    instant: &str,
    create_time_ms: i64,
    block_size: usize,
    shard_key: &dyn Fn(&str) -> String,
) -> Result<PartitionCommit> {
    let base_schema = base_file_schema();
    let enc = RecordEncoder::new(&base_schema)?;
    let ids = file_group_ids(partition, file_groups);
    let mut shards: Vec<Vec<(&str, &MetadataPayload)>> = vec![Vec::new(); ids.len()];
    for (key, payload) in records {
        shards[file_group_index(&shard_key(key), ids.len())].push((key, payload));
    }
    let mut files = Vec::new();
    let mut stats = Vec::new();
    for (index, (file_id, shard)) in ids.iter().zip(&shards).enumerate() {
        // Every file group starts with a log file holding an empty delete block, so it
        // exists (and has a slice) before its first record.
        let log_name = format!(".{file_id}_{instant}.log.1_{WRITE_TOKEN}");
        let log = delete_block(instant, None, &[])?;
        files.push((join(partition, &log_name), log));
        if shard.is_empty() {
            continue;
        }
        let token = super::compact::write_token(index);
        let name = super::compact::base_file_name(file_id, &token, instant);
        let mut builder =
            super::compact::BaseFileBuilder::new(&enc, &name, create_time_ms, block_size);
        for (key, payload) in shard {
            builder.push(key, payload, false)?;
        }
        let written = builder.finish(&base_schema)?;
        let path = join(partition, &name);
        let size = written.bytes.len() as i64;
        stats.push(WriteStat {
            file_id: Some(file_id.clone()),
            path: Some(path.clone()),
            prev_commit: Some("null".into()),
            num_writes: Some(written.written as i64),
            num_deletes: Some(0),
            num_update_writes: Some(0),
            num_inserts: Some(written.written as i64),
            total_write_bytes: Some(size),
            total_write_errors: Some(0),
            partition_path: Some(partition.to_string()),
            file_size_in_bytes: Some(size),
            ..WriteStat::default()
        });
        files.push((path, written.bytes));
    }
    let mut by_partition: OrderedMap<Option<Vec<WriteStat>>> = OrderedMap::new();
    by_partition.insert(partition.to_string(), Some(stats));
    let metadata = CommitMetadata {
        partition_to_write_stats: Some(by_partition),
        compacted: Some(false),
        extra_metadata: Some(OrderedMap::from([(
            "schema".to_string(),
            Some(RECORD_SCHEMA.to_string()),
        )])),
        operation_type: Some("BULK_INSERT".into()),
        ..CommitMetadata::default()
    };
    Ok(PartitionCommit {
        partition: partition.to_string(),
        instant: instant.to_string(),
        file_groups: ids.len(),
        files,
        metadata,
    })
}

/// The metadata table's `hoodie.properties` for a data table named `table_name` at
/// `version`, as Java writes it (saved under `comment`).
pub fn properties_text(table_name: &str, version: u32, comment: &str) -> String {
    let name = format!("{table_name}_metadata");
    let checksum = crate::config::crc32(format!(".{name}").as_bytes()).to_string();
    let version = version.to_string();
    let entries: BTreeMap<&str, &str> = BTreeMap::from([
        (
            "hoodie.compaction.payload.class",
            "org.apache.hudi.metadata.HoodieMetadataPayload",
        ),
        ("hoodie.table.initial.version", version.as_str()),
        ("hoodie.table.keygenerator.type", "HOODIE_TABLE_METADATA"),
        ("hoodie.table.type", "MERGE_ON_READ"),
        ("hoodie.archivelog.folder", "history"),
        ("hoodie.timeline.layout.version", "2"),
        ("hoodie.timeline.history.path", "history"),
        ("hoodie.table.checksum", checksum.as_str()),
        ("hoodie.datasource.write.drop.partition.columns", "false"),
        (
            "hoodie.record.merge.strategy.id",
            "00000000-0000-0000-0000-000000000000",
        ),
        ("hoodie.table.recordkey.fields", "key"),
        ("hoodie.table.name", name.as_str()),
        ("hoodie.timeline.path", "timeline"),
        ("hoodie.populate.meta.fields", "false"),
        ("hoodie.table.base.file.format", "HFILE"),
        ("hoodie.record.merge.mode", "CUSTOM"),
        ("hoodie.table.version", version.as_str()),
    ]);
    crate::config::properties::store(comment, entries)
}

/// The data table's properties with `partition` completed in `hoodie.table.metadata.partitions`
/// (sorted, and no longer in `….inflight`), and the index definitions' path when given.
pub fn with_completed_partition(
    properties: &BTreeMap<String, String>,
    partition: &str,
    index_defs_path: Option<&str>,
) -> BTreeMap<String, String> {
    const DONE: &str = "hoodie.table.metadata.partitions";
    const INFLIGHT: &str = "hoodie.table.metadata.partitions.inflight";
    let list = |k: &str| -> BTreeSet<String> {
        properties
            .get(k)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut done = list(DONE);
    let mut inflight = list(INFLIGHT);
    done.insert(partition.to_string());
    inflight.remove(partition);
    let mut out = properties.clone();
    out.insert(DONE.into(), done.into_iter().collect::<Vec<_>>().join(","));
    out.insert(
        INFLIGHT.into(),
        inflight.into_iter().collect::<Vec<_>>().join(","),
    );
    if let Some(path) = index_defs_path {
        out.insert("hoodie.table.index.defs.path".into(), path.into());
    }
    out
}

/// The index definition Java records for `partition` in `.hoodie/.index_defs/index.json`
/// (`column_stats` over `columns`, `record_index`), if it records one.
pub fn index_definition(partition: &str, columns: &[String]) -> Option<serde_json::Value> {
    match partition {
        COLUMN_STATS => Some(serde_json::json!({
            "indexName": COLUMN_STATS,
            "indexType": COLUMN_STATS,
            "indexFunction": COLUMN_STATS,
            "sourceFields": columns,
            "indexOptions": {},
            "version": "V2",
        })),
        RECORD_INDEX => Some(serde_json::json!({
            "indexName": RECORD_INDEX,
            "indexType": RECORD_INDEX,
            "indexFunction": "",
            "sourceFields": [],
            "indexOptions": {"isPartitioned": "false"},
            "version": "V1",
        })),
        _ => None,
    }
}

/// `existing` index definitions (the file's bytes, if any) with `definition` set for
/// `partition`; the others kept as they are.
pub fn with_index_definition(
    existing: Option<&[u8]>,
    partition: &str,
    definition: serde_json::Value,
    path: &str,
) -> Result<String> {
    let mut json: serde_json::Value = match existing {
        Some(bytes) => {
            serde_json::from_slice(bytes).map_err(|e| HudiError::corrupt_by(path, "bad JSON", e))?
        }
        None => serde_json::json!({}),
    };
    let defs = json
        .as_object_mut()
        .ok_or_else(|| HudiError::corrupt(path, "not a JSON object"))?
        .entry("indexDefinitions")
        .or_insert_with(|| serde_json::json!({}));
    let defs = defs
        .as_object_mut()
        .ok_or_else(|| HudiError::corrupt(path, "indexDefinitions is not an object"))?;
    defs.insert(partition.to_string(), definition);
    serde_json::to_string_pretty(&json).map_err(|e| HudiError::invalid(e.to_string()))
}

fn to_i64(v: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| HudiError::invalid(format!("{v} does not fit an Avro long")))
}

#[cfg(test)]
#[path = "init_tests.rs"]
mod tests;
