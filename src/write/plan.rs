//! Planning a commit's change: which existing file groups take which updates, deletes and
//! inserts, and which inserts start new file groups (Copy-On-Write small-file packing as
//! Java's upsert partitioner does it). Pure: tagged rows in, a [`ChangePlan`] out.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{Operation, RecordCounts};
use crate::error::Result;
use crate::file_group::FileSlice;
use std::sync::Arc;

/// A record a commit writes: (key, partition path the record keeps, input row).
pub(crate) type RowAt = (String, String, usize);

/// Changes to one existing file group.
#[derive(Debug, Default)]
pub(crate) struct GroupChange {
    pub updates: Vec<RowAt>,
    /// (key, partition path).
    pub deletes: Vec<(String, String)>,
    /// New keys put in this file group: small-file handling, or their bucket.
    pub inserts: Vec<RowAt>,
    /// Merge-On-Read: the group's base file is rewritten with the changes (a small file
    /// taking new keys where the index cannot find keys in log files), not appended to.
    pub rewrite: bool,
}

#[derive(Debug, Default)]
pub(crate) struct ChangePlan {
    pub groups: BTreeMap<(String, String), GroupChange>,
    /// Rows to insert, by partition: (key, partition, input row).
    pub inserts: BTreeMap<String, Vec<RowAt>>,
    /// Keys that move partition (deleted where they were, inserted where they go).
    pub moved: BTreeSet<String>,
    /// Bucket index: new keys of a bucket that has no file group in their partition yet,
    /// by (partition, bucket).
    pub bucket_inserts: BTreeMap<(String, u32), Vec<RowAt>>,
}

/// Consumes the keyed rows and the tagged locations: the plan holds them from here on (a
/// write's largest per-row structures, not kept twice).
pub(crate) fn plan_changes(
    rows: Vec<RowAt>,
    mut locations: HashMap<String, (String, String)>,
    operation: Operation,
    update_partition_path: bool,
    counts: &mut RecordCounts,
) -> ChangePlan {
    let mut plan = ChangePlan::default();
    for (key, partition, row) in rows {
        let location = locations.remove(&key);
        match (operation, location) {
            (Operation::Delete, Some(at)) => {
                let partition = at.0.clone();
                plan.groups
                    .entry(at)
                    .or_default()
                    .deletes
                    .push((key, partition))
            }
            (Operation::Delete, None) => counts.delete_missing += 1,
            (_, Some(at)) if at.0 == partition || !update_partition_path => {
                let partition = at.0.clone();
                plan.groups
                    .entry(at)
                    .or_default()
                    .updates
                    .push((key, partition, row))
            }
            (_, Some(at)) => {
                // The key moves partition: deleted where it was, inserted where it goes.
                plan.moved.insert(key.clone());
                let old = at.0.clone();
                plan.groups
                    .entry(at)
                    .or_default()
                    .deletes
                    .push((key.clone(), old));
                plan.inserts
                    .entry(partition.clone())
                    .or_default()
                    .push((key, partition, row));
            }
            (_, None) => plan
                .inserts
                .entry(partition.clone())
                .or_default()
                .push((key, partition, row)),
        }
    }
    plan
}

/// Where a partition's new keys may go besides new file groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SmallFiles {
    /// Copy-On-Write: base files below the small-file limit are rewritten with them.
    CopyOnWrite,
    /// Merge-On-Read with an index that finds keys in log files (the record index): they
    /// are appended to the log of slices smaller than the maximum file size.
    LogIndexed,
    /// Merge-On-Read with an index that reads base files only: the smallest base file
    /// without log files below the limit is rewritten with them.
    BaseFilesOnly,
}

/// Small-file handling, as Java's upsert partitioners do it (`UpsertPartitioner`,
/// `SparkUpsertDeltaCommitPartitioner`): new keys first fill the partition's small file
/// slices (up to `hoodie.parquet.max.file.size`, at an estimated record size), smallest
/// first; only the rest start new file groups. Without it every small commit would add a
/// file group.
pub(crate) fn pack_small_files(
    plan: &mut ChangePlan,
    slices: &[FileSlice],
    options: &super::WriteConfig,
    average_record_bytes: Option<u64>,
    mode: SmallFiles,
) {
    let (small, max) = (options.small_file_limit, options.max_file_size);
    let record = average_record_bytes
        .filter(|b| *b > 0)
        .unwrap_or(options.record_size_estimate)
        .max(1);
    if small == 0 {
        return;
    }
    // Log bytes count at Java's `hoodie.logfile.to.parquet.compression.ratio`.
    let size_of = |s: &FileSlice| {
        let logs: u64 = s.log_files.iter().map(|l| l.size).sum();
        s.base_size().unwrap_or(0) + (logs as f64 * 0.35) as u64
    };
    for (partition, rows) in plan.inserts.iter_mut() {
        let in_partition = slices.iter().filter(|s| &s.partition == partition);
        let mut candidates: Vec<(u64, &FileSlice)> = match mode {
            SmallFiles::LogIndexed => in_partition
                .map(|s| (size_of(s), s))
                .filter(|(size, _)| *size < max)
                .collect(),
            SmallFiles::CopyOnWrite | SmallFiles::BaseFilesOnly => in_partition
                .filter(|s| s.log_files.is_empty())
                .filter_map(|s| s.base_size().map(|b| (b, s)))
                .filter(|(size, _)| *size < small)
                .collect(),
        };
        candidates.sort_by_key(|(size, s)| (*size, s.file_id.clone()));
        // `hoodie.merge.small.file.group.candidates.limit`: one base file is rewritten.
        if mode == SmallFiles::BaseFilesOnly {
            candidates.truncate(1);
        }
        for (size, slice) in candidates {
            if rows.is_empty() {
                break;
            }
            let room = (max.saturating_sub(size) / record) as usize;
            let take = room.min(rows.len());
            if take == 0 {
                continue;
            }
            let packed: Vec<_> = rows.drain(..take).collect();
            let change = plan
                .groups
                .entry((partition.clone(), slice.file_id.clone()))
                .or_default();
            change.inserts.extend(packed);
            change.rewrite = mode == SmallFiles::BaseFilesOnly;
        }
    }
    plan.inserts.retain(|_, rows| !rows.is_empty());
}

/// Java's record size estimate: bytes per record of the latest commit that wrote enough
/// (more than 70% of the small-file limit) to judge by; `None` falls back to the
/// configured estimate.
pub(crate) async fn average_record_bytes(
    client: &Arc<crate::meta_client::MetaClient>,
) -> Result<Option<u64>> {
    let timeline = client.timeline();
    // One round for all ten (the loop used to fetch them one after another).
    let recent: Vec<_> = timeline.completed_writes().rev().take(10).collect();
    for meta in client.commit_metadata_of(&recent).await? {
        let totals = meta.totals();
        if totals.bytes_written as f64 > 0.7 * 104_857_600.0 && totals.num_writes > 0 {
            return Ok(Some(
                (totals.bytes_written as u64).div_ceil(totals.num_writes as u64),
            ));
        }
    }
    Ok(None)
}
