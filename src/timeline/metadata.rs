//! Contents of instant files: commit metadata (JSON in v6, Avro container files in v8+),
//! replace metadata, plans. All are decoded to JSON values first, so both encodings share
//! one typed view.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::error::{HudiError, Result};

/// Decodes any instant file to JSON: Avro container (one record), JSON, or empty (`{}`).
pub fn decode_instant_file(bytes: &[u8], path: &str) -> Result<serde_json::Value> {
    let trimmed = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|i| &bytes[i..])
        .unwrap_or(&[]);
    if trimmed.is_empty() {
        return Ok(serde_json::Value::Object(Default::default()));
    }
    if bytes.starts_with(crate::avro::container::MAGIC) {
        let mut values = crate::avro::container::read_json(bytes).map_err(|e| e.in_file(path))?;
        return match values.len() {
            0 => Ok(serde_json::Value::Object(Default::default())),
            _ => Ok(values.swap_remove(0)),
        };
    }
    if trimmed[0] == b'{' {
        return serde_json::from_slice(trimmed)
            .map_err(|e| HudiError::corrupt_by(path, "bad JSON", e));
    }
    Err(HudiError::corrupt(
        path,
        "neither an Avro container file nor JSON",
    ))
}

/// Ordered like the file: Java writes maps in its hash order, and a re-encoded instant keeps it.
pub type OrderedMap<V> = IndexMap<String, V>;

/// `HoodieWriteStat` (and v6's `HoodieDeltaWriteStat`): every field Java writes, so that
/// decoding and re-encoding an instant loses nothing. Keys Java adds that are not modelled
/// (e.g. v6 `recordsStats`) are kept in `other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WriteStat {
    pub file_id: Option<String>,
    pub path: Option<String>,
    pub prev_commit: Option<String>,
    pub num_writes: Option<i64>,
    pub num_deletes: Option<i64>,
    pub num_update_writes: Option<i64>,
    pub num_inserts: Option<i64>,
    pub total_write_bytes: Option<i64>,
    pub total_write_errors: Option<i64>,
    pub partition_path: Option<String>,
    pub total_log_records: Option<i64>,
    pub total_log_files: Option<i64>,
    pub total_updated_records_compacted: Option<i64>,
    pub total_log_blocks: Option<i64>,
    pub total_corrupt_log_block: Option<i64>,
    pub total_rollback_blocks: Option<i64>,
    pub file_size_in_bytes: Option<i64>,
    pub log_version: Option<i64>,
    pub log_offset: Option<i64>,
    pub base_file: Option<String>,
    pub log_files: Option<Vec<String>>,
    pub cdc_stats: Option<OrderedMap<i64>>,
    pub prev_base_file: Option<String>,
    pub min_event_time: Option<i64>,
    pub max_event_time: Option<i64>,
    pub runtime_stats: Option<RuntimeStats>,
    pub total_log_files_compacted: Option<i64>,
    pub total_log_read_time_ms: Option<i64>,
    pub total_log_size_compacted: Option<i64>,
    pub temp_path: Option<String>,
    pub num_updates: Option<i64>,
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// `HoodieRuntimeStats` (milliseconds).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeStats {
    pub total_scan_time: Option<i64>,
    pub total_create_time: Option<i64>,
    pub total_upsert_time: Option<i64>,
}

impl WriteStat {
    /// File name without its partition directory.
    pub fn file_name(&self) -> Option<&str> {
        self.path
            .as_deref()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
    }
}

/// `HoodieCommitMetadata` / `HoodieReplaceCommitMetadata`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CommitMetadata {
    pub partition_to_write_stats: Option<OrderedMap<Option<Vec<WriteStat>>>>,
    pub partition_to_replace_file_ids: Option<OrderedMap<Option<Vec<String>>>>,
    pub compacted: Option<bool>,
    pub extra_metadata: Option<OrderedMap<Option<String>>>,
    /// Avro only (`["int","null"]`, default 1); v6 JSON has none.
    pub version: Option<i32>,
    pub operation_type: Option<String>,
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

impl CommitMetadata {
    pub fn from_json(v: serde_json::Value, path: &str) -> Result<Self> {
        serde_json::from_value(v).map_err(|e| HudiError::corrupt_by(path, "not commit metadata", e))
    }

    pub fn write_stats(&self) -> impl Iterator<Item = (&str, &WriteStat)> {
        self.partition_to_write_stats
            .iter()
            .flat_map(|m| m.iter())
            .flat_map(|(p, stats)| stats.iter().flatten().map(move |s| (p.as_str(), s)))
    }

    pub fn replaced_file_ids(&self) -> impl Iterator<Item = (&str, &str)> {
        self.partition_to_replace_file_ids
            .iter()
            .flat_map(|m| m.iter())
            .flat_map(|(p, ids)| {
                ids.iter()
                    .flatten()
                    .map(move |id| (p.as_str(), id.as_str()))
            })
    }

    pub fn schema(&self) -> Option<&str> {
        self.extra("schema")
    }

    /// A non-empty `extraMetadata` value.
    pub fn extra(&self, key: &str) -> Option<&str> {
        self.extra_metadata
            .as_ref()?
            .get(key)?
            .as_deref()
            .filter(|s| !s.trim().is_empty())
    }

    pub fn partitions(&self) -> Vec<&str> {
        let mut p: Vec<&str> = self
            .partition_to_write_stats
            .iter()
            .flat_map(|m| m.keys().map(String::as_str))
            .collect();
        p.extend(
            self.partition_to_replace_file_ids
                .iter()
                .flat_map(|m| m.keys().map(String::as_str)),
        );
        p.sort();
        p.dedup();
        p
    }

    pub fn totals(&self) -> WriteTotals {
        let mut t = WriteTotals::default();
        for (_, s) in self.write_stats() {
            // Counts come from the file: a hostile one must not overflow the sums.
            let add =
                |total: &mut i64, v: Option<i64>| *total = total.saturating_add(v.unwrap_or(0));
            t.files += 1;
            add(&mut t.num_writes, s.num_writes);
            add(&mut t.num_inserts, s.num_inserts);
            add(&mut t.num_update_writes, s.num_update_writes);
            add(&mut t.num_deletes, s.num_deletes);
            add(&mut t.bytes_written, s.total_write_bytes);
        }
        t
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WriteTotals {
    pub files: i64,
    pub num_writes: i64,
    pub num_inserts: i64,
    pub num_update_writes: i64,
    pub num_deletes: i64,
    pub bytes_written: i64,
}

/// `HoodieInstantInfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct InstantInfo {
    pub commit_time: String,
    pub action: String,
}

/// `HoodieRollbackPlan` (the content of `<t>.rollback.requested`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RollbackPlan {
    pub instant_to_rollback: Option<InstantInfo>,
    /// Capitalised in the Avro schema.
    #[serde(rename = "RollbackRequests")]
    pub rollback_requests: Option<Vec<RollbackRequest>>,
    pub version: Option<i32>,
}

/// `HoodieRollbackRequest`: what to delete in one file group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RollbackRequest {
    pub partition_path: String,
    pub file_id: Option<String>,
    pub latest_base_instant: Option<String>,
    pub files_to_be_deleted: Vec<String>,
    pub log_blocks_to_be_deleted: Option<OrderedMap<i64>>,
}

/// `HoodieRollbackMetadata` (the content of a completed rollback).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RollbackMetadata {
    pub start_rollback_time: String,
    pub time_taken_in_millis: i64,
    pub total_files_deleted: i32,
    pub commits_rollback: Vec<String>,
    pub partition_metadata: OrderedMap<RollbackPartitionMetadata>,
    pub version: Option<i32>,
    pub instants_rollback: Vec<InstantInfo>,
}

/// `HoodieRollbackPartitionMetadata`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RollbackPartitionMetadata {
    pub partition_path: String,
    pub success_delete_files: Vec<String>,
    pub failed_delete_files: Vec<String>,
    pub rollback_log_files: Option<OrderedMap<i64>>,
    pub log_files_from_failed_commit: Option<OrderedMap<i64>>,
}

/// `HoodieActionInstant`: an instant as a clean plan names it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ActionInstant {
    pub timestamp: String,
    pub action: String,
    /// `COMPLETED`, `INFLIGHT`, `REQUESTED` (Java's enum names).
    pub state: String,
}

/// `HoodieCleanFileInfo`: one file a clean plan deletes, by full path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CleanFileInfo {
    pub file_path: Option<String>,
    pub is_bootstrap_base_file: Option<bool>,
}

/// `HoodieCleanerPlan` (the content of `<t>.clean.requested`), version 2.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CleanerPlan {
    pub earliest_instant_to_retain: Option<ActionInstant>,
    pub last_completed_commit_timestamp: String,
    pub policy: String,
    /// Version 1's file names; Java writes an empty map in version 2.
    pub files_to_be_deleted_per_partition: Option<OrderedMap<Vec<String>>>,
    pub version: Option<i32>,
    pub file_paths_to_be_deleted_per_partition: Option<OrderedMap<Vec<CleanFileInfo>>>,
    pub partitions_to_be_deleted: Option<Vec<String>>,
    pub extra_metadata: Option<OrderedMap<String>>,
}

/// `HoodieCleanMetadata` (the content of a completed clean), version 2.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CleanMetadata {
    pub start_clean_time: String,
    pub time_taken_in_millis: i64,
    pub total_files_deleted: i32,
    pub earliest_commit_to_retain: String,
    pub last_completed_commit_timestamp: String,
    pub partition_metadata: OrderedMap<CleanPartitionMetadata>,
    pub version: Option<i32>,
    pub bootstrap_partition_metadata: Option<OrderedMap<CleanPartitionMetadata>>,
    pub extra_metadata: Option<OrderedMap<String>>,
}

/// `HoodieCleanPartitionMetadata`: file names (not paths) per partition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CleanPartitionMetadata {
    pub partition_path: String,
    pub policy: String,
    pub delete_path_patterns: Vec<String>,
    pub success_delete_files: Vec<String>,
    pub failed_delete_files: Vec<String>,
    pub is_partition_deleted: Option<bool>,
}

impl CleanerPlan {
    pub fn from_json(v: serde_json::Value, path: &str) -> Result<Self> {
        serde_json::from_value(v).map_err(|e| HudiError::corrupt_by(path, "not a cleaner plan", e))
    }
}

impl CleanMetadata {
    pub fn from_json(v: serde_json::Value, path: &str) -> Result<Self> {
        serde_json::from_value(v).map_err(|e| HudiError::corrupt_by(path, "not clean metadata", e))
    }
}

impl RollbackPlan {
    pub fn from_json(v: serde_json::Value, path: &str) -> Result<Self> {
        serde_json::from_value(v).map_err(|e| HudiError::corrupt_by(path, "not a rollback plan", e))
    }
}

impl RollbackMetadata {
    pub fn from_json(v: serde_json::Value, path: &str) -> Result<Self> {
        serde_json::from_value(v)
            .map_err(|e| HudiError::corrupt_by(path, "not rollback metadata", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_saturate_instead_of_overflowing() {
        let stat = serde_json::json!({"fileId": "f", "numWrites": i64::MAX, "numDeletes": -1});
        let json = serde_json::json!({"partitionToWriteStats": {"p": [stat.clone(), stat]}});
        let t = CommitMetadata::from_json(json, "x.commit")
            .unwrap()
            .totals();
        assert_eq!((t.files, t.num_writes, t.num_deletes), (2, i64::MAX, -2));
    }
}
