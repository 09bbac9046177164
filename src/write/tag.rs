//! Tagging (docs/hudi-format.md §10.2): which file group holds each incoming key. The
//! metadata table's `record_index` answers directly when the table has it; otherwise the
//! latest slices of the touched partitions are read for their keys, after the base files'
//! footer key ranges have ruled most of them out. Reads go through the snapshot reader, so
//! log files (updates and deletes) count exactly as every reader sees them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::stream::{self, StreamExt, TryStreamExt};

use super::{Ctx, KeyedRows, Tagged, WriteConfig};
use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::file_group::FileSlice;
use crate::metadata::records::MetadataPayload;
use crate::metadata::table::RECORD_INDEX;
use crate::metadata::Lookup;
use crate::read::{Plan, ReadOptions, Scan};
use crate::schema::RECORD_KEY;
use crate::snapshot::Snapshot;

/// Whether keys are unique across partitions: Hudi's record index is global; the simple
/// and bloom indexes are not unless asked (`hoodie.index.type=GLOBAL_*`).
pub(crate) fn is_global(config: &TableConfig, options: &WriteConfig) -> bool {
    match options.index_type {
        Some(t) => t.is_global(),
        None => has_record_index(config),
    }
}

fn has_record_index(config: &TableConfig) -> bool {
    config.metadata_partitions.iter().any(|p| p == RECORD_INDEX)
}

pub(crate) async fn tag(table: &Ctx<'_>, rows: &KeyedRows, global: bool) -> Result<Tagged> {
    // With a record index, the index lookup and the snapshot's loading run together.
    let index_lookup = async {
        // Where the index cannot say, key columns are read (as Hudi's global simple index).
        let config = table.client.config();
        if !has_record_index(config) || !config.record_index_locates_keys() {
            return Ok(None);
        }
        let keys: Vec<String> = rows.rows.iter().map(|(k, _, _)| k.clone()).collect();
        let mdt = table.metadata_table(&[]).await?;
        mdt.lookup(RECORD_INDEX, Lookup::Keys(&keys))
            .await
            .map(Some)
    };
    let (snapshot, indexed) = futures::future::try_join(table.snapshot(), index_lookup).await?;
    let snapshot = Arc::new(snapshot);
    let mut tagged = Tagged::default();
    let slices: BTreeMap<(String, String), &FileSlice> = snapshot
        .latest_slices()
        .map(|s| ((s.partition.clone(), s.file_id.clone()), s))
        .collect();
    let wanted_partitions: BTreeSet<&str> = rows.rows.iter().map(|(_, p, _)| p.as_str()).collect();

    if let Some(found) = indexed {
        if let Some(problem) = found.problems.first() {
            return Err(HudiError::corrupt(
                ".hoodie/metadata/record_index",
                problem.clone(),
            ));
        }
        for (key, payload) in found.values {
            let MetadataPayload::RecordIndex(entry) = payload else {
                continue;
            };
            let at = (entry.partition.clone(), entry.file_id.clone());
            let Some(slice) = slices.get(&at) else {
                return Err(HudiError::corrupt(
                    ".hoodie/metadata/record_index",
                    format!(
                        "key {key:?} is indexed in file group {} of partition {:?}, which the table's latest snapshot does not have",
                        entry.file_id, entry.partition
                    ),
                ));
            };
            tagged.slices.insert(at.clone(), (*slice).clone());
            tagged.locations.insert(key, at);
        }
    } else {
        let by_partition = keys_by_partition(rows);
        let candidates: Vec<&FileSlice> = snapshot
            .latest_slices()
            .filter(|s| global || wanted_partitions.contains(s.partition.as_str()))
            .collect();
        let client = table.client.clone();
        // Footers of every candidate at once: one round trip, not one per file.
        let verdicts: Vec<bool> = stream::iter(candidates.iter())
            .map(|slice| may_hold_keys(&client, slice, &by_partition, global))
            .buffered(16)
            .try_collect()
            .await?;
        let keep: Vec<FileSlice> = candidates
            .iter()
            .zip(verdicts)
            .filter(|(_, keep)| *keep)
            .map(|(s, _)| (*s).clone())
            .collect();
        let wanted: BTreeSet<&str> = rows.rows.iter().map(|(k, _, _)| k.as_str()).collect();
        let found: Vec<(FileSlice, Vec<String>)> = stream::iter(keep)
            .map(|slice| {
                let snapshot = snapshot.clone();
                let client = client.clone();
                async move {
                    let keys = slice_keys(client, &snapshot, &slice).await?;
                    Ok::<_, HudiError>((slice, keys))
                }
            })
            .buffer_unordered(8)
            .try_collect()
            .await?;
        for (slice, keys) in found {
            let at = (slice.partition.clone(), slice.file_id.clone());
            let mut used = false;
            for key in keys.into_iter().filter(|k| wanted.contains(k.as_str())) {
                if let Some(previous) = tagged.locations.insert(key.clone(), at.clone()) {
                    if global && previous != at {
                        return Err(HudiError::corrupt(
                            slice.base_path().unwrap_or_default(),
                            format!(
                                "key {key:?} is in two file groups ({} and {})",
                                previous.1, at.1
                            ),
                        ));
                    }
                }
                used = true;
            }
            if used {
                tagged.slices.insert(at, slice);
            }
        }
        // A non-global index matches a key only in the row's own partition.
        if !global {
            let partition_of: BTreeMap<&str, &str> = rows
                .rows
                .iter()
                .map(|(k, p, _)| (k.as_str(), p.as_str()))
                .collect();
            tagged
                .locations
                .retain(|k, (p, _)| partition_of.get(k.as_str()) == Some(&p.as_str()));
        }
    }
    tagged.snapshot = Some(snapshot);
    Ok(tagged)
}

/// What a read needs to know rows' record keys: the meta column, or the key fields of a
/// table without meta fields.
fn key_columns(config: &TableConfig) -> Vec<String> {
    if config.populate_meta_fields {
        vec![RECORD_KEY.to_string()]
    } else {
        config.record_key_fields.clone()
    }
}

fn keys_by_partition(rows: &KeyedRows) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (k, p, _) in &rows.rows {
        out.entry(p.as_str()).or_default().push(k.as_str());
    }
    out
}

/// Whether a slice can hold any of the keys: a base file alone is ruled out by its footer's
/// min/max record keys and bloom filter (Hudi's bloom index); slices with log files are
/// always read.
async fn may_hold_keys(
    client: &Arc<crate::meta_client::MetaClient>,
    slice: &FileSlice,
    by_partition: &BTreeMap<&str, Vec<&str>>,
    global: bool,
) -> Result<bool> {
    let Some(path) = slice.base_path() else {
        return Ok(true);
    };
    if !slice.log_files.is_empty() {
        return Ok(true);
    }
    let footer = client.footer(&path, slice.base_size()).await?;
    let (Some(min), Some(max)) = (
        footer.key_value("hoodie_min_record_key"),
        footer.key_value("hoodie_max_record_key"),
    ) else {
        return Ok(true);
    };
    let bloom = match footer.key_value(crate::index::bloom::FOOTER_KEY) {
        Some(text) => Some(crate::index::BloomFilter::from_footer(
            text,
            footer.key_value(crate::index::bloom::TYPE_CODE_KEY),
            &path,
        )?),
        None => None,
    };
    // Java compares keys as UTF-16 strings; the ranges are checked the same way.
    let candidate = |k: &&str| {
        let after_min = k.encode_utf16().cmp(min.encode_utf16()).is_ge();
        let before_max = k.encode_utf16().cmp(max.encode_utf16()).is_le();
        after_min && before_max && bloom.as_ref().is_none_or(|b| b.might_contain(k))
    };
    let any = |keys: &Vec<&str>| keys.iter().any(candidate);
    Ok(if global {
        by_partition.values().any(any)
    } else {
        by_partition.get(slice.partition.as_str()).is_some_and(any)
    })
}

/// The record keys a slice holds as of the snapshot (merged with its log files).
pub(crate) async fn slice_keys(
    client: Arc<crate::meta_client::MetaClient>,
    snapshot: &Snapshot,
    slice: &FileSlice,
) -> Result<Vec<String>> {
    let columns = key_columns(client.config());
    let options = ReadOptions {
        columns: Some(columns.clone()),
        ..ReadOptions::default()
    };
    let mut one = Plan::of_slices(snapshot, vec![slice.clone()], snapshot.schema.clone());
    let keys_only = (columns.iter())
        .map(|c| snapshot.schema.field_with_name(c).cloned())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| HudiError::invalid(format!("the table's record key fields: {e}")))?;
    one.output_schema = Arc::new(arrow_schema::Schema::new(keys_only));
    // Keys read as every reader reads them (a partition column's value from the path).
    one.partition_values_from_path = true;
    let mut scan = Scan::new(client.clone(), Arc::new(one), &options);
    let path = slice.base_path().unwrap_or_default();
    let mut keys = Vec::new();
    while let Some(batch) = scan.next().await {
        keys.extend(super::key::stored_keys(&batch?, client.config(), &path)?);
    }
    Ok(keys)
}

/// File groups under a pending clustering plan are not written (`CONFLICT` naming the plan);
/// they are noted in `tagged` for small-file packing to leave alone.
pub(crate) async fn check_pending_clustering(table: &Ctx<'_>, tagged: &mut Tagged) -> Result<()> {
    let client = table.client;
    let timeline = client.timeline();
    for instant in timeline.pending() {
        let action = instant.requested_action();
        if action != crate::timeline::action::CLUSTERING
            && action != crate::timeline::action::REPLACE_COMMIT
        {
            continue;
        }
        let Some(plan) = client.instant_plan(instant).await? else {
            continue;
        };
        let groups = plan
            .pointer("/clusteringPlan/inputGroups")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten();
        for group in groups {
            for slice in group
                .get("slices")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
            {
                let file_id = slice
                    .get("fileId")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                let partition = slice
                    .get("partitionPath")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                let group = (partition.to_string(), file_id.to_string());
                if tagged.slices.contains_key(&group) {
                    return Err(HudiError::Conflict {
                        path: instant.requested_file.clone().unwrap_or_else(|| instant.file.clone()),
                        detail: format!(
                            "file group {file_id} in partition {partition:?} is being clustered by pending instant {}",
                            instant.requested_time
                        ),
                    });
                }
                tagged.clustering.insert(group);
            }
        }
    }
    Ok(())
}
