//! Planning a commit's change: which existing file groups take which updates, deletes and
//! inserts, and which inserts start new file groups (Copy-On-Write small-file packing as
//! Java's upsert partitioner does it). Pure: tagged rows in, a [`ChangePlan`] out.

use std::collections::{BTreeMap, BTreeSet};

use super::{KeyedRows, Operation, RecordCounts, Tagged};
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
    /// New keys put in this file group: Copy-On-Write small-file handling, or their bucket.
    pub inserts: Vec<RowAt>,
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

pub(crate) fn plan_changes(
    rows: &KeyedRows,
    tagged: &Tagged,
    operation: Operation,
    update_partition_path: bool,
    counts: &mut RecordCounts,
) -> ChangePlan {
    let mut plan = ChangePlan::default();
    for (key, partition, row) in &rows.rows {
        let location = tagged.locations.get(key);
        match (operation, location) {
            (Operation::Delete, Some(at)) => plan
                .groups
                .entry(at.clone())
                .or_default()
                .deletes
                .push((key.clone(), at.0.clone())),
            (Operation::Delete, None) => counts.delete_missing += 1,
            (_, Some(at)) if at.0 == *partition || !update_partition_path => plan
                .groups
                .entry(at.clone())
                .or_default()
                .updates
                .push((key.clone(), at.0.clone(), *row)),
            (_, Some(at)) => {
                // The key moves partition: deleted where it was, inserted where it goes.
                plan.moved.insert(key.clone());
                plan.groups
                    .entry(at.clone())
                    .or_default()
                    .deletes
                    .push((key.clone(), at.0.clone()));
                plan.inserts.entry(partition.clone()).or_default().push((
                    key.clone(),
                    partition.clone(),
                    *row,
                ));
            }
            (_, None) => plan.inserts.entry(partition.clone()).or_default().push((
                key.clone(),
                partition.clone(),
                *row,
            )),
        }
    }
    plan
}

/// Copy-On-Write small-file handling, as Java's upsert partitioner does it: new keys first
/// fill the partition's base files smaller than `hoodie.parquet.small.file.limit` (up to
/// `hoodie.parquet.max.file.size`, at an estimated record size), smallest first; only the
/// rest start new file groups. Without it every small commit would add a file group.
pub(crate) fn pack_small_files(
    plan: &mut ChangePlan,
    slices: &[FileSlice],
    options: &super::WriteConfig,
    average_record_bytes: Option<u64>,
) {
    let (small, max) = (options.small_file_limit, options.max_file_size);
    let record = average_record_bytes
        .filter(|b| *b > 0)
        .unwrap_or(options.record_size_estimate)
        .max(1);
    if small == 0 {
        return;
    }
    for (partition, rows) in plan.inserts.iter_mut() {
        let mut candidates: Vec<(u64, &FileSlice)> = slices
            .iter()
            .filter(|s| &s.partition == partition && s.log_files.is_empty())
            .filter_map(|s| s.base_file.as_ref().map(|b| (b.size, s)))
            .filter(|(size, _)| *size < small)
            .collect();
        candidates.sort_by_key(|(size, s)| (*size, s.file_id.clone()));
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
            plan.groups
                .entry((partition.clone(), slice.file_id.clone()))
                .or_default()
                .inserts
                .extend(packed);
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
