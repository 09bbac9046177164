//! Metadata-table compaction as Hudi 1.x runs it at the start of a write (docs/hudi-format.md
//! §3.6, §8.2): once the MDT has `hoodie.metadata.compact.max.delta.commits` delta commits
//! since its last compaction, each file group's latest slice (base HFile + log files) is
//! merged into a new base HFile named with a fresh compaction instant `C`:
//! `C.compaction.requested` (the plan), `C.compaction.inflight` (empty), the base files, and
//! `C_<completion>.commit` (`compacted: true`, `operationType: COMPACT`).
//!
//! This module decides, plans and builds the bytes; the writer does the requests.

use std::collections::{BTreeMap, HashSet};

use super::records::encode::RecordEncoder;
use super::records::MetadataPayload;
use super::table::Compacted;
use crate::error::Result;
pub use crate::file_group::compaction::{plan_operations, Operation};
use crate::file_group::FileSlice;
use crate::hfile::writer::DEFAULT_BLOCK_SIZE;
use crate::hfile::{HFileWriteOptions, HFileWriter};
use crate::timeline::instant::{action, compare_instant_times};
use crate::timeline::{CommitMetadata, Timeline, WriteStat};

/// Write option: delta commits between MDT compactions (Java `HoodieMetadataConfig`).
pub const MAX_DELTA_COMMITS_KEY: &str = "hoodie.metadata.compact.max.delta.commits";
pub const DEFAULT_MAX_DELTA_COMMITS: usize = 10;

/// Java's default max base file size (120 MiB): the plan's write estimate for a slice
/// without a base file.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 120 * 1024 * 1024;

/// The plan of `ops` (the MDT's write estimate for a slice without a base file is Java's
/// default max file size).
pub fn plan_json(ops: &[Operation]) -> serde_json::Value {
    crate::file_group::compaction::plan_json(ops, DEFAULT_MAX_FILE_SIZE)
}

/// What the writer does with the MDT before its own write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A compaction a crashed writer left pending: complete it first (Java runs pending MDT
    /// compactions before scheduling new ones).
    Complete(String),
    /// Schedule and run a compaction now.
    Compact,
    /// Nothing to do, and why.
    Skip(String),
}

/// Java `performTableServices`: complete pending compactions; then compact once the delta
/// commits since the last completed compaction (all states, as Java's
/// `getDeltaCommitsSinceLatestCompaction` counts them) reach `max_delta_commits`, unless the
/// data table has a pending instant at or before the MDT's latest delta commit (a compacted
/// base must hold only committed writes and nothing older may still be rolled back).
pub fn decide(data: &Timeline, mdt: &Timeline, max_delta_commits: usize) -> Decision {
    let active = || mdt.instants.iter().filter(|i| !i.archived);
    if let Some(p) = active().find(|i| !i.is_completed() && i.is_compaction()) {
        return Decision::Complete(p.requested_time.clone());
    }
    let last_compaction = active()
        .filter(|i| i.is_completed() && (i.is_compaction() || i.action == action::COMMIT))
        .map(|i| i.requested_time.as_str())
        .max_by(|a, b| compare_instant_times(a, b));
    let since = active()
        .filter(|i| i.requested_action() == action::DELTA_COMMIT)
        .filter(|i| {
            last_compaction.is_none_or(|c| compare_instant_times(&i.requested_time, c).is_gt())
        })
        .count();
    if since < max_delta_commits.max(1) {
        return Decision::Skip(format!(
            "{since} metadata delta commits since the last compaction (compacts at {max_delta_commits})"
        ));
    }
    let Some(latest) = active()
        .filter(|i| i.is_completed() && i.action == action::DELTA_COMMIT)
        .map(|i| i.requested_time.as_str())
        .max_by(|a, b| compare_instant_times(a, b))
    else {
        return Decision::Skip("no completed metadata delta commit".into());
    };
    if let Some(p) = data
        .pending()
        .find(|i| compare_instant_times(&i.requested_time, latest).is_le())
    {
        return Decision::Skip(format!(
            "data instant {} is pending (not after the metadata table's latest delta commit {latest})",
            p.requested_time
        ));
    }
    Decision::Compact
}

/// The operations for the latest slices of every MDT file group; slices without log files
/// have nothing to compact (Java's plan generator leaves them out too).
pub fn operations<'a>(slices: impl IntoIterator<Item = &'a FileSlice>) -> Vec<Operation> {
    slices
        .into_iter()
        .filter(|s| !s.log_files.is_empty())
        .map(Operation::of)
        .collect()
}

/// What a slice's merge read from its log files (the write stat reports it).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LogCounts {
    pub log_records: u64,
    pub log_blocks: u64,
}

/// A file group's latest slice merged in memory: what the new base file holds, and what was
/// read (the reference for the streaming merge compaction runs).
#[derive(Debug, Default)]
pub struct MergedSlice {
    pub records: BTreeMap<String, MetadataPayload>,
    /// Keys the old base file held (updates vs inserts in the write stat).
    pub base_keys: HashSet<String>,
    pub log_records: u64,
    pub log_blocks: u64,
}

impl MergedSlice {
    pub fn counts(&self) -> LogCounts {
        LogCounts {
            log_records: self.log_records,
            log_blocks: self.log_blocks,
        }
    }
}

/// Whether a merged record is a delete that compaction drops (Java's payload reports
/// these records as deleted).
fn is_tombstone(p: &MetadataPayload) -> bool {
    match p {
        MetadataPayload::ColumnStats(c) | MetadataPayload::PartitionStats(c) => c.is_deleted,
        MetadataPayload::SecondaryIndex(s) => s.is_deleted,
        _ => false,
    }
}

/// Write token of the compaction's base files: `<task>-0-<task>` by operation index (Java:
/// partition id - stage id - attempt id).
pub fn write_token(index: usize) -> String {
    format!("{index}-0-{index}")
}

/// `<fileId>_<token>_<instant>.hfile`.
pub fn base_file_name(file_id: &str, token: &str, instant: &str) -> String {
    format!("{file_id}_{token}_{instant}.hfile")
}

/// A compacted base file's bytes and the records it holds.
pub struct BaseFileBytes {
    pub bytes: Vec<u8>,
    pub written: u64,
    pub inserts: u64,
    pub updates: u64,
}

/// The new base HFile `name` built record by record: every live record, keys ascending,
/// values encoded with the table's record schema (`_hoodie_file_name` = `name`, as Java
/// fills it); file info `schema`, `minRecordKey`, `maxRecordKey` as Java writes them.
pub struct BaseFileBuilder<'a> {
    enc: &'a RecordEncoder,
    name: &'a str,
    hfile: HFileWriter,
    first: Option<Vec<u8>>,
    last: Vec<u8>,
    inserts: u64,
    updates: u64,
}

impl<'a> BaseFileBuilder<'a> {
    /// Data blocks of at most `block_size` uncompressed bytes (Hudi's default is
    /// [`crate::hfile::writer::DEFAULT_BLOCK_SIZE`]).
    pub fn new(
        enc: &'a RecordEncoder,
        name: &'a str,
        create_time_ms: i64,
        block_size: usize,
    ) -> Self {
        BaseFileBuilder {
            enc,
            name,
            hfile: HFileWriter::new(HFileWriteOptions {
                create_time_ms,
                block_size,
                ..HFileWriteOptions::default()
            }),
            first: None,
            last: Vec::new(),
            inserts: 0,
            updates: 0,
        }
    }

    /// Adds the merged record of `key` (keys must come ascending); `from_base` says whether
    /// the old base file held the key (an update, else an insert). Deletes are dropped.
    pub fn push(&mut self, key: &str, payload: &MetadataPayload, from_base: bool) -> Result<()> {
        if is_tombstone(payload) {
            return Ok(());
        }
        let value = self.enc.encode_in_base_file(payload, self.name)?;
        self.append(key, &value, from_base)
    }

    /// [`Self::push`] of a record as the streaming merge hands it over.
    pub fn push_compacted(
        &mut self,
        key: &str,
        record: Compacted<'_>,
        from_base: bool,
    ) -> Result<()> {
        match record {
            Compacted::Merged(payload) => self.push(key, payload, from_base),
            Compacted::Unchanged(value) => {
                let value = self.enc.rebase_value(value, self.name)?;
                self.append(key, &value, from_base)
            }
        }
    }

    fn append(&mut self, key: &str, value: &[u8], from_base: bool) -> Result<()> {
        self.hfile.append(key.as_bytes(), value)?;
        if from_base {
            self.updates += 1;
        } else {
            self.inserts += 1;
        }
        if self.first.is_none() {
            self.first = Some(key.as_bytes().to_vec());
        }
        self.last.clear();
        self.last.extend_from_slice(key.as_bytes());
        Ok(())
    }

    /// The schema string whose base-file values may be copied into this file (meta
    /// fields rewritten): `schema`, unless its file name is not a leading meta field.
    pub fn copies_values_of<'s>(&self, schema: &'s str) -> Option<&'s str> {
        self.enc.rebases_values().then_some(schema)
    }

    pub fn finish(self, schema: &str) -> Result<BaseFileBytes> {
        let written = self.hfile.len();
        let last = self.last;
        let bytes = self.hfile.finish(&[
            ("schema", schema.as_bytes().to_vec()),
            ("minRecordKey", self.first.unwrap_or_default()),
            ("maxRecordKey", last),
        ])?;
        Ok(BaseFileBytes {
            bytes,
            written,
            inserts: self.inserts,
            updates: self.updates,
        })
    }
}

/// [`BaseFileBuilder`] over a slice merged in memory.
pub fn base_file(
    enc: &RecordEncoder,
    schema: &str,
    name: &str,
    merged: &MergedSlice,
    create_time_ms: i64,
) -> Result<BaseFileBytes> {
    let mut b = BaseFileBuilder::new(enc, name, create_time_ms, DEFAULT_BLOCK_SIZE);
    for (key, payload) in &merged.records {
        b.push(key, payload, merged.base_keys.contains(key))?;
    }
    b.finish(schema)
}

/// The write stat of one compacted file group, in the shape of Java's compaction stats.
pub fn write_stat(
    op: &Operation,
    path: &str,
    file: &BaseFileBytes,
    counts: LogCounts,
    read_ms: i64,
) -> WriteStat {
    let counts = crate::file_group::compaction::StatCounts {
        written: file.written,
        updates: file.updates,
        inserts: file.inserts,
        log_records: counts.log_records,
        log_blocks: counts.log_blocks,
        records_compacted: file.written,
        bytes: file.bytes.len() as u64,
        read_ms,
        total_ms: read_ms,
        ..Default::default()
    };
    crate::file_group::compaction::write_stat(op, path, &counts)
}

/// The completed compaction's metadata: write stats by MDT partition (in Java's order),
/// `compacted`, the record schema, `operationType: COMPACT`.
pub fn commit_metadata(stats: Vec<WriteStat>, schema: &str) -> CommitMetadata {
    let mut by_partition: BTreeMap<String, Vec<WriteStat>> = BTreeMap::new();
    for s in stats {
        by_partition
            .entry(s.partition_path.clone().unwrap_or_default())
            .or_default()
            .push(s);
    }
    // The order Java's compaction commit shows (fixture `v9_txns_simple_meta`; readers do
    // not depend on it), other partitions after.
    const ORDER: [&str; 4] = ["record_index", "files", "partition_stats", "column_stats"];
    let mut ordered: Vec<(String, Vec<WriteStat>)> = by_partition.into_iter().collect();
    ordered.sort_by_key(|(n, _)| ORDER.iter().position(|o| o == n).unwrap_or(ORDER.len()));
    crate::file_group::compaction::commit_metadata(ordered, schema)
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;
