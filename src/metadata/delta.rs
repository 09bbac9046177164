//! The metadata-table side of one data-table write (docs/hudi-format.md §8.2, §8.5–8.9,
//! §10.4): the log files of the MDT delta commit that has the data instant's time.
//!
//! Each touched MDT file group gets one new log file `.<fileId>_<instant>.log.<v>_<token>`
//! holding an HFILE_DATA block of the records routed to it (cells sorted by key, Avro values
//! with an empty `key` field) and, for record-index deletes, a DELETE block — the shapes
//! Hudi 1.x writes. The caller writes the files and the MDT timeline entries.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Local, NaiveDateTime, TimeZone, Utc};

use super::keys::{
    column_stats_key, file_group_index, partition_id, partition_stats_key, ALL_PARTITIONS_KEY,
};
use super::records::encode::RecordEncoder;
use super::records::{
    ColumnStats, FilesEntry, MetadataPayload, RecordIndexEntry, SecondaryIndexEntry,
};
use super::table::{MetadataTable, COLUMN_STATS, FILES, PARTITION_STATS, RECORD_INDEX};
use crate::config::TimelineTimezone;
use crate::error::{HudiError, Result};
use crate::hfile::write_hfile;
use crate::log_file::block::{BlockMetadata, BlockType, HeaderKey};
use crate::log_file::delete::DeleteRecord;
use crate::log_file::writer::{delete_block, encode_block};
use crate::storage::join;
use crate::value::Value;

/// Write token of the MDT log files this writer creates (one task, one attempt).
pub const WRITE_TOKEN: &str = "0-0-0";

/// Statistics of one column in one file (or, for partition stats, one partition). Mirrors
/// `base_file::writer::ColumnRange`.
/// Column ranges as the base-file writer reports them.
pub use crate::base_file::writer::ColumnRange as ColumnRangeInput;

/// A data file the instant wrote (or, with `deleted`, removed).
#[derive(Debug, Clone, PartialEq)]
pub struct DataFileChange {
    /// Data-table partition path, `""` when non-partitioned.
    pub partition: String,
    /// Bare file name (base or log file).
    pub file_name: String,
    pub size: u64,
    pub deleted: bool,
    /// Column statistics for `column_stats`; may be empty.
    pub columns: Vec<ColumnRangeInput>,
}

/// A secondary-index entry `<value>$<record key>` added or (with `deleted`) removed.
#[derive(Debug, Clone, PartialEq)]
pub struct SecondaryIndexChange {
    /// MDT partition, `secondary_index_<name>`.
    pub partition: String,
    /// The key hashed to pick the entry's file group (V1: the entry's key; V2: `<value>$`).
    pub shard_key: String,
    /// `<esc(value)>$<esc(record key)>`.
    pub key: String,
    pub deleted: bool,
}

/// A record key's new location (or, with `deleted`, its removal from the record index).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordIndexChange {
    pub record_key: String,
    pub partition: String,
    pub file_id: String,
    /// Instant that wrote the record (`yyyyMMddHHmmssSSS`).
    pub instant: String,
    pub deleted: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct MdtDeltaInput {
    /// The data-table instant; the MDT delta commit has the same time.
    pub instant: String,
    pub files: Vec<DataFileChange>,
    pub record_index: Vec<RecordIndexChange>,
    /// Recomputed statistics of each touched partition.
    pub partition_stats: Vec<(String, Vec<ColumnRangeInput>)>,
    /// Entries of the secondary indexes.
    pub secondary_index: Vec<SecondaryIndexChange>,
}

/// One MDT log file to write.
#[derive(Debug, Clone, PartialEq)]
pub struct MdtLogFile {
    /// MDT partition, e.g. `files`.
    pub partition: String,
    /// MDT file group, e.g. `files-0000-0`.
    pub file_id: String,
    /// Relative to `.hoodie/metadata`, e.g. `files/.files-0000-0_<t>.log.1_0-0-0`.
    pub path: String,
    pub log_version: u32,
    pub bytes: Vec<u8>,
    /// Records written (data records plus delete entries).
    pub num_records: u64,
    pub num_deletes: u64,
}

/// What building a delta needs to know about the metadata table.
#[derive(Debug, Clone)]
pub struct MdtLayout {
    /// `HoodieMetadataRecord` schema JSON, exactly as the table's MDT files carry it.
    pub schema: String,
    /// MDT partition → its file group ids in shard order.
    pub file_groups: BTreeMap<String, Vec<String>>,
    /// Names of the files already in each MDT partition directory.
    pub existing: BTreeMap<String, BTreeSet<String>>,
    /// Zone instants are read in (`hoodie.table.timeline.timezone` of the data table), for
    /// the record index's epoch-millisecond instant times.
    pub timezone: TimelineTimezone,
}

impl MdtLayout {
    /// Reads the schema, the file groups and directory listing of `partitions`.
    pub async fn load(
        mdt: &MetadataTable,
        partitions: &[&str],
        timezone: TimelineTimezone,
    ) -> Result<MdtLayout> {
        // The schema and every partition's shards and listing, concurrently.
        let per_partition = futures::future::try_join_all(partitions.iter().map(|p| async move {
            let (shards, listing) = mdt.listed_shards(p).await?;
            let ids: Vec<String> = shards.iter().map(|s| s.file_id.clone()).collect();
            let names: BTreeSet<String> = listing
                .iter()
                .filter(|m| !m.is_dir)
                .map(|m| m.name().to_string())
                .collect();
            Ok::<_, HudiError>((p.to_string(), ids, names))
        }));
        let (schema, per_partition) =
            futures::future::try_join(mdt.record_schema(), per_partition).await?;
        let mut file_groups = BTreeMap::new();
        let mut existing = BTreeMap::new();
        for (p, ids, names) in per_partition {
            file_groups.insert(p.clone(), ids);
            existing.insert(p, names);
        }
        Ok(MdtLayout {
            schema,
            file_groups,
            existing,
            timezone,
        })
    }
}

/// The MDT log files for `input`, over the maintained MDT `partitions` (which must include
/// `files`): reads the layout of `mdt`, then [`build_delta`].
pub async fn plan_delta(
    mdt: &MetadataTable,
    input: &MdtDeltaInput,
    partitions: &[&str],
    timezone: TimelineTimezone,
) -> Result<Vec<MdtLogFile>> {
    let layout = MdtLayout::load(mdt, partitions, timezone).await?;
    build_delta(&layout, input)
}

/// Records and deletes bound for one file group.
#[derive(Default)]
struct Group {
    cells: BTreeMap<String, Vec<u8>>,
    deletes: Vec<String>,
}

/// The MDT log files for `input` on the file groups of `layout` (partitions absent from
/// `layout.file_groups` are not maintained and get nothing).
pub fn build_delta<'a>(layout: &'a MdtLayout, input: &MdtDeltaInput) -> Result<Vec<MdtLogFile>> {
    check_instant(&input.instant)?;
    if !layout.file_groups.contains_key(FILES) {
        return Err(HudiError::invalid(
            "the metadata table's `files` partition must be maintained",
        ));
    }
    let enc = RecordEncoder::new(&layout.schema)?;
    // (MDT partition, shard) → records.
    let mut groups: BTreeMap<(&'a str, usize), Group> = BTreeMap::new();
    let mut put = |partition: &'static str, key: String, value: Vec<u8>| -> Result<()> {
        let Some(ids) = layout.file_groups.get(partition) else {
            return Ok(());
        };
        let shard = file_group_index(&key, ids.len());
        let g = groups.entry((partition, shard)).or_default();
        if g.cells.insert(key.clone(), value).is_some() {
            return Err(HudiError::invalid(format!(
                "two {partition} records for key {key:?} in one delta"
            )));
        }
        Ok(())
    };

    // files: every touched partition, and per partition the files written.
    let mut by_partition: BTreeMap<&str, Vec<FilesEntry>> = BTreeMap::new();
    for f in &input.files {
        if f.file_name.is_empty() || f.file_name.contains('/') {
            return Err(HudiError::invalid(format!(
                "data file name {:?} must be a bare file name",
                f.file_name
            )));
        }
        let entries = by_partition.entry(partition_id(&f.partition)).or_default();
        if entries.iter().any(|e| e.name == f.file_name) {
            return Err(HudiError::invalid(format!(
                "file {:?} listed twice in partition {:?}",
                f.file_name, f.partition
            )));
        }
        entries.push(FilesEntry {
            name: f.file_name.clone(),
            size: if f.deleted { 0 } else { to_i64(f.size)? },
            is_deleted: f.deleted,
        });
    }
    if !by_partition.is_empty() {
        put(
            FILES,
            ALL_PARTITIONS_KEY.to_string(),
            enc.encode(&all_partitions(by_partition.keys().copied()))?,
        )?;
        for (p, entries) in by_partition {
            put(
                FILES,
                p.to_string(),
                enc.encode(&MetadataPayload::Files(entries))?,
            )?;
        }
    }

    // column_stats: one record per file and column.
    for f in &input.files {
        for c in &f.columns {
            let stats = column_stats_record(c, &f.file_name, f.deleted, false)?;
            let key = column_stats_key(&c.column, &f.partition, &f.file_name);
            put(
                COLUMN_STATS,
                key,
                enc.encode(&MetadataPayload::ColumnStats(stats))?,
            )?;
        }
    }

    // partition_stats: tight bounds over the partition's latest slices.
    for (p, columns) in &input.partition_stats {
        for c in columns {
            let stats = column_stats_record(c, partition_id(p), false, true)?;
            let key = partition_stats_key(&c.column, p);
            put(
                PARTITION_STATS,
                key,
                enc.encode(&MetadataPayload::PartitionStats(stats))?,
            )?;
        }
    }

    // record_index: inserts as records, deletes as DELETE block entries.
    let mut deletes = Vec::new();
    for r in &input.record_index {
        let Some(ids) = layout.file_groups.get(RECORD_INDEX) else {
            break;
        };
        if r.record_key.is_empty() {
            return Err(HudiError::invalid("empty record key in the record index"));
        }
        if r.deleted {
            deletes.push((
                file_group_index(&r.record_key, ids.len()),
                r.record_key.clone(),
            ));
            continue;
        }
        let entry = RecordIndexEntry {
            partition: r.partition.clone(),
            file_id: r.file_id.clone(),
            instant_time_ms: Some(instant_millis(&r.instant, layout.timezone)?),
            position: None,
        };
        put(
            RECORD_INDEX,
            r.record_key.clone(),
            enc.encode(&MetadataPayload::RecordIndex(entry))?,
        )?;
    }

    for (shard, key) in deletes {
        groups
            .entry((RECORD_INDEX, shard))
            .or_default()
            .deletes
            .push(key);
    }

    // Secondary indexes: new entries as records, removed ones in the DELETE block (as
    // Spark's writer leaves them).
    for c in &input.secondary_index {
        let Some((partition, ids)) = layout.file_groups.get_key_value(&c.partition) else {
            continue;
        };
        let g = groups
            .entry((
                partition.as_str(),
                file_group_index(&c.shard_key, ids.len()),
            ))
            .or_default();
        if c.deleted {
            g.deletes.push(c.key.clone());
        } else {
            let value = enc.encode(&MetadataPayload::SecondaryIndex(SecondaryIndexEntry {
                is_deleted: false,
            }))?;
            g.cells.insert(c.key.clone(), value);
        }
    }
    log_files(layout, &input.instant, groups)
}

/// The delta commit of a clean (Java `HoodieTableMetadataUtil.convertMetadataToRecords` for
/// `HoodieCleanMetadata`): in `files`, each partition's deleted file names (a partition the
/// clean deleted gets a delete entry instead, and is marked deleted in the partition list);
/// in `column_stats`, a delete entry for every deleted file and indexed column. Partition
/// stats and the record index are left as they are, as Java leaves them.
pub fn build_clean_delta(
    layout: &MdtLayout,
    instant: &str,
    deleted: &BTreeMap<String, Vec<String>>,
    deleted_partitions: &[String],
    columns: &[String],
) -> Result<Vec<MdtLogFile>> {
    check_instant(instant)?;
    let enc = RecordEncoder::new(&layout.schema)?;
    let mut groups: BTreeMap<(&'static str, usize), Group> = BTreeMap::new();
    let shard_of = |partition: &'static str, key: &str| {
        let n = layout.file_groups.get(partition).map(Vec::len)?;
        Some((partition, file_group_index(key, n)))
    };
    for (partition, names) in deleted {
        let key = partition_id(partition).to_string();
        if deleted_partitions.contains(partition) {
            if let Some(at) = shard_of(FILES, &key) {
                groups.entry(at).or_default().deletes.push(key);
            }
            continue;
        }
        let entries = file_entries(names.iter().map(String::as_str), true);
        let value = enc.encode(&MetadataPayload::Files(entries))?;
        if let Some(at) = shard_of(FILES, &key) {
            groups.entry(at).or_default().cells.insert(key, value);
        }
    }
    if !deleted_partitions.is_empty() {
        let entries = file_entries(deleted_partitions.iter().map(|p| partition_id(p)), true);
        let value = enc.encode(&MetadataPayload::AllPartitions(entries))?;
        if let Some(at) = shard_of(FILES, ALL_PARTITIONS_KEY) {
            let cells = &mut groups.entry(at).or_default().cells;
            cells.insert(ALL_PARTITIONS_KEY.to_string(), value);
        }
    }
    for (partition, names) in deleted {
        for name in names {
            for c in columns {
                let key = column_stats_key(c, partition, name);
                if let Some(at) = shard_of(COLUMN_STATS, &key) {
                    groups.entry(at).or_default().deletes.push(key);
                }
            }
        }
    }
    log_files(layout, instant, groups)
}

/// One log file per file group with records: an HFILE_DATA block of its records, then a
/// DELETE block of its deleted keys (their MDT partition as the partition path).
fn log_files(
    layout: &MdtLayout,
    instant: &str,
    groups: BTreeMap<(&str, usize), Group>,
) -> Result<Vec<MdtLogFile>> {
    let mut out = Vec::new();
    for ((partition, shard), g) in groups {
        let file_id = layout
            .file_groups
            .get(partition)
            .and_then(|ids| ids.get(shard))
            .ok_or_else(|| HudiError::invalid(format!("no file group {shard} in {partition}")))?;
        if g.deletes.iter().any(|k| g.cells.contains_key(k)) {
            return Err(HudiError::invalid(
                "a record key both inserted and deleted in one delta",
            ));
        }
        let mut bytes = Vec::new();
        if !g.cells.is_empty() {
            let cells: Vec<(Vec<u8>, Vec<u8>)> = g
                .cells
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.clone()))
                .collect();
            let hfile = write_hfile(&cells, &[("schema", layout.schema.as_bytes().to_vec())])?;
            // Header order as in most fixture blocks (Java iterates a hash map).
            let header = BlockMetadata::new()
                .with(HeaderKey::Schema, &layout.schema)
                .with(HeaderKey::InstantTime, instant);
            bytes.extend(encode_block(
                BlockType::HFileData,
                &header,
                &hfile,
                &BlockMetadata::new(),
            )?);
        }
        let mut keys = g.deletes.clone();
        keys.sort();
        keys.dedup();
        if !keys.is_empty() {
            let records: Vec<DeleteRecord> = keys
                .iter()
                .map(|k| DeleteRecord {
                    record_key: Some(k.clone()),
                    partition_path: Some(partition.to_string()),
                    ordering: Value::Int(0),
                })
                .collect();
            bytes.extend(delete_block(instant, Some(&layout.schema), &records)?);
        }
        let num_deletes = keys.len() as u64;
        let version = next_version(layout.existing.get(partition), file_id, instant);
        let name = format!(".{file_id}_{instant}.log.{version}_{WRITE_TOKEN}");
        out.push(MdtLogFile {
            partition: partition.to_string(),
            file_id: file_id.clone(),
            path: join(partition, &name),
            log_version: version,
            bytes,
            num_records: g.cells.len() as u64 + num_deletes,
            num_deletes,
        });
    }
    Ok(out)
}

pub fn column_stats_record(
    c: &ColumnRangeInput,
    file_name: &str,
    deleted: bool,
    tight: bool,
) -> Result<ColumnStats> {
    let bound = |v: &Option<Value>| v.clone().filter(|v| *v != Value::Null);
    Ok(ColumnStats {
        file_name: file_name.to_string(),
        column_name: c.column.clone(),
        min: bound(&c.min),
        max: bound(&c.max),
        null_count: Some(to_i64(c.null_count)?),
        value_count: Some(to_i64(c.value_count)?),
        total_size: Some(to_i64(c.total_size)?),
        total_uncompressed_size: Some(to_i64(c.total_uncompressed_size)?),
        is_deleted: deleted,
        is_tight_bound: tight,
        value_type: None,
    })
}

/// Widens `acc` to cover `other`: the lower minimum, the higher maximum (nulls ignored),
/// counts and sizes added.
pub fn widen_range(acc: &mut ColumnRangeInput, other: &ColumnRangeInput) {
    let pick = |a: &Option<Value>, b: &Option<Value>, want_less: bool| -> Option<Value> {
        match (
            a.as_ref().filter(|v| !matches!(v, Value::Null)),
            b.as_ref().filter(|v| !matches!(v, Value::Null)),
        ) {
            (Some(x), Some(y)) => {
                let less = y.compare_utf16(x).is_some_and(|o| o.is_lt());
                let greater = y.compare_utf16(x).is_some_and(|o| o.is_gt());
                Some(if (want_less && less) || (!want_less && greater) {
                    y.clone()
                } else {
                    x.clone()
                })
            }
            (Some(x), None) => Some(x.clone()),
            (None, y) => y.cloned(),
        }
    };
    acc.min = pick(&acc.min, &other.min, true);
    acc.max = pick(&acc.max, &other.max, false);
    acc.null_count += other.null_count;
    acc.value_count += other.value_count;
    acc.total_size += other.total_size;
    acc.total_uncompressed_size += other.total_uncompressed_size;
}

/// The `files` record listing `partitions` (their ids: `.` for a non-partitioned table).
pub fn all_partitions<'a>(partitions: impl IntoIterator<Item = &'a str>) -> MetadataPayload {
    MetadataPayload::AllPartitions(file_entries(partitions, false))
}

/// Entries of size 0 for `names`: live partitions, or (`deleted`) tombstones.
fn file_entries<'a>(names: impl IntoIterator<Item = &'a str>, deleted: bool) -> Vec<FilesEntry> {
    names
        .into_iter()
        .map(|n| FilesEntry {
            name: n.to_string(),
            size: 0,
            is_deleted: deleted,
        })
        .collect()
}

fn to_i64(v: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| HudiError::invalid(format!("{v} does not fit an Avro long")))
}

/// Version 1 unless a log file of this file group and instant already exists (a retried
/// write): then one past the highest, as Java rolls over instead of appending.
fn next_version(existing: Option<&BTreeSet<String>>, file_id: &str, instant: &str) -> u32 {
    let prefix = format!(".{file_id}_{instant}.log.");
    existing
        .into_iter()
        .flatten()
        .filter_map(|n| n.strip_prefix(&prefix))
        .filter_map(|rest| rest.split('_').next()?.parse::<u32>().ok())
        .max()
        .map_or(1, |v| v.saturating_add(1))
}

fn check_instant(instant: &str) -> Result<()> {
    if instant.len() == 17 && instant.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(());
    }
    Err(HudiError::invalid(format!(
        "{instant:?} is not an instant time (yyyyMMddHHmmssSSS)"
    )))
}

/// Epoch milliseconds of an instant read in the timeline's zone (Java
/// `parseDateFromInstantTime`); 14-digit instants have no milliseconds.
pub fn instant_millis(instant: &str, tz: TimelineTimezone) -> Result<i64> {
    let bad = || HudiError::invalid(format!("{instant:?} is not an instant time"));
    let text = match instant.len() {
        17 => instant.to_string(),
        14 => format!("{instant}000"),
        _ => return Err(bad()),
    };
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let naive = NaiveDateTime::parse_from_str(&text, "%Y%m%d%H%M%S%3f").map_err(|_| bad())?;
    let dt = match tz {
        TimelineTimezone::Utc => Utc.from_utc_datetime(&naive).timestamp_millis(),
        TimelineTimezone::Local => Local
            .from_local_datetime(&naive)
            .earliest()
            .ok_or_else(bad)?
            .timestamp_millis(),
    };
    Ok(dt)
}
