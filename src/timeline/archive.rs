//! Archival to the LSM history (table versions 8 and 9), sans I/O: which completed instants
//! leave the active timeline (Java's `TimelineArchiverV2`, `ArchivalUtils`), the Parquet
//! file of `HoodieLSMTimelineInstant` rows they become, the manifest that makes it visible,
//! and which history files are merged into the next layer (`LSMTimelineWriter`). Format:
//! docs/hudi-format.md §3.5.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BinaryArray, Int32Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use serde_json::{json, Value};

use super::instant::{action, compare_instant_times, Instant, State};
use super::Timeline;
use crate::error::{HudiError, Result};

pub const AUTOMATIC: &str = "hoodie.archive.automatic";
pub const MIN_COMMITS: &str = "hoodie.keep.min.commits";
pub const MAX_COMMITS: &str = "hoodie.keep.max.commits";
pub const BEYOND_SAVEPOINT: &str = "hoodie.archive.beyond.savepoint";
pub const LSM_BATCH: &str = "hoodie.timeline.compaction.batch.size";

/// (key, default, what it does): for the writer's settings list and its docs.
pub const SETTINGS: &[(&str, &str, &str)] = &[
    (AUTOMATIC, "true", "archive the timeline after each write (the metadata table's too)"),
    (MIN_COMMITS, "20", "completed commits archival leaves on the active timeline (raised to what the cleaner still needs)"),
    (MAX_COMMITS, "30", "completed commits on the active timeline before archival runs"),
    (BEYOND_SAVEPOINT, "false", "archive past the first savepoint (the savepoint itself stays)"),
    (LSM_BATCH, "10", "history files of one layer merged into the next layer at once"),
];

/// Manifest versions the history keeps besides those a layer merge added (Java's constant).
const MANIFEST_VERSIONS_KEPT: usize = 3;
/// A layer merge stops adding files past this many bytes (Java's 1 GB target).
const LSM_MERGE_MAX_BYTES: u64 = 1 << 30;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivalConfig {
    pub automatic: bool,
    pub min_commits: usize,
    pub max_commits: usize,
    pub beyond_savepoint: bool,
    pub lsm_batch: usize,
}

impl Default for ArchivalConfig {
    fn default() -> Self {
        ArchivalConfig {
            automatic: true,
            min_commits: 20,
            max_commits: 30,
            beyond_savepoint: false,
            lsm_batch: 10,
        }
    }
}

impl ArchivalConfig {
    pub fn parse(options: &BTreeMap<String, String>) -> Result<ArchivalConfig> {
        let get = |k: &str| options.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
        let whole = |k: &str, default: usize, least: usize| -> Result<usize> {
            get(k).map_or(Ok(default), |v| {
                v.parse::<usize>()
                    .ok()
                    .filter(|n| *n >= least)
                    .ok_or_else(|| {
                        HudiError::invalid(format!(
                            "{k}={v:?}: expected a whole number from {least}"
                        ))
                    })
            })
        };
        let flag = |k: &str, default: bool| -> Result<bool> {
            match get(k) {
                None => Ok(default),
                Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
                Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
                Some(v) => Err(HudiError::invalid(format!(
                    "{k}={v:?}: expected one of true, false"
                ))),
            }
        };
        let d = ArchivalConfig::default();
        let config = ArchivalConfig {
            automatic: flag(AUTOMATIC, d.automatic)?,
            min_commits: whole(MIN_COMMITS, d.min_commits, 1)?,
            max_commits: whole(MAX_COMMITS, d.max_commits, 1)?,
            beyond_savepoint: flag(BEYOND_SAVEPOINT, d.beyond_savepoint)?,
            lsm_batch: whole(LSM_BATCH, d.lsm_batch, 2)?,
        };
        if config.max_commits <= config.min_commits {
            return Err(HudiError::invalid(format!(
                "{MAX_COMMITS}={} must be greater than {MIN_COMMITS}={}",
                config.max_commits, config.min_commits
            )));
        }
        Ok(config)
    }

    /// The metadata table's own archival: one more instant kept each way (Java's
    /// `HoodieMetadataWriteUtils`).
    pub fn for_metadata_table(&self) -> ArchivalConfig {
        ArchivalConfig {
            min_commits: self.min_commits + 1,
            max_commits: self.max_commits + 1,
            ..self.clone()
        }
    }
}

/// Where the table stands with respect to its metadata table, for the data table's archival.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataBarrier {
    /// No metadata table (or this is the metadata table).
    None,
    /// The metadata table has never compacted: nothing is archived.
    NeverCompacted,
    /// Requested time of the metadata table's latest completed compaction: only commits
    /// that completed before it may go.
    CompactedAt(String),
}

/// The facts one archival decision reads besides the active timeline.
#[derive(Debug, Clone)]
pub struct ArchivalInputs {
    pub config: ArchivalConfig,
    pub merge_on_read: bool,
    /// `hoodie.compact.inline.max.delta.commits` when compaction is triggered by a number of
    /// delta commits (NUM_COMMITS, NUM_AND_TIME): enough of them stay to trigger it.
    pub compaction_delta_commits: Option<usize>,
    /// The cleaner's earliest commit to retain as archival sees it (Java's
    /// `ArchivalUtils.getEarliestCommitToRetain`): the minimum rises to keep it active.
    pub clean_retain: Option<String>,
    pub metadata: MetadataBarrier,
    /// For the metadata table: the data table's earliest active commit or pending instant.
    pub data_table_bound: Option<String>,
    /// The last completed clean's retain point, for tables with replace commits: `Ok(t)` its
    /// plan's earliest instant to retain, `Err(clean time)` a plan without one.
    pub last_clean_retain: Option<std::result::Result<String, String>>,
}

fn is_commit_action(a: &str) -> bool {
    matches!(
        a,
        action::COMMIT | action::DELTA_COMMIT | action::REPLACE_COMMIT | action::CLUSTERING
    )
}

fn is_write_action(a: &str) -> bool {
    is_commit_action(a) || matches!(a, action::COMPACTION | action::LOG_COMPACTION)
}

fn active(timeline: &Timeline) -> impl Iterator<Item = &Instant> {
    timeline.instants.iter().filter(|i| !i.archived)
}

/// Completed commits, delta commits and replace commits (a compaction completes as a commit).
fn completed_commits(timeline: &Timeline) -> Vec<&Instant> {
    active(timeline)
        .filter(|i| i.is_completed() && is_commit_action(&i.action))
        .collect()
}

fn earlier<'a>(a: Option<&'a str>, b: Option<&'a str>) -> Option<&'a str> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if compare_instant_times(x, y).is_le() {
            x
        } else {
            y
        }),
        (x, y) => x.or(y),
    }
}

/// (min, max) commits to keep, the minimum raised so the cleaner's window stays active.
fn instants_to_keep(timeline: &Timeline, inputs: &ArchivalInputs) -> (usize, usize) {
    let (min, max) = (inputs.config.min_commits, inputs.config.max_commits);
    let Some(retain) = &inputs.clean_retain else {
        return (min, max);
    };
    let after = completed_commits(timeline)
        .iter()
        .filter(|i| compare_instant_times(&i.requested_time, retain).is_gt())
        .count();
    let needed = after + 2;
    if min < needed {
        (needed, needed + max - min)
    } else {
        (min, max)
    }
}

/// The instant enough delta commits are kept from for compaction to trigger (Java's
/// `CompactionUtils.getEarliestInstantToRetainForCompaction`).
fn compaction_retain_point(timeline: &Timeline, max_delta_commits: usize) -> Option<String> {
    let last_compaction = active(timeline)
        .filter(|i| i.is_completed() && i.action == action::COMMIT)
        .last();
    let deltas: Vec<&Instant> = active(timeline)
        .filter(|i| i.action == action::DELTA_COMMIT)
        .filter(|i| {
            last_compaction
                .is_none_or(|c| compare_instant_times(&i.requested_time, &c.requested_time).is_gt())
        })
        .collect();
    let anchor = last_compaction.or(deltas.first().copied())?;
    if deltas.len() < max_delta_commits {
        return Some(anchor.requested_time.clone());
    }
    Some(
        deltas[deltas.len() - max_delta_commits]
            .requested_time
            .clone(),
    )
}

/// The first replace commit the last clean may not have cleaned after (Java's
/// `ClusteringUtils.getEarliestInstantToRetainForClustering`).
fn clustering_retain_point(timeline: &Timeline, inputs: &ArchivalInputs) -> Option<String> {
    let mut replaces = active(timeline).filter(|i| {
        matches!(
            i.action.as_str(),
            action::REPLACE_COMMIT | action::CLUSTERING
        )
    });
    let bound = match &inputs.last_clean_retain {
        None => return replaces.next().map(|i| i.requested_time.clone()),
        Some(Ok(t)) | Some(Err(t)) => t,
    };
    replaces
        .find(|i| compare_instant_times(&i.requested_time, bound).is_ge())
        .map(|i| i.requested_time.clone())
}

/// For the metadata table: the data table's earliest commit (any state) or pending instant
/// (Java's `TimelineUtils.getEarliestInstantForMetadataArchival`).
pub fn data_table_bound(data: &Timeline) -> Option<String> {
    let first_commit = active(data)
        .find(|i| is_commit_action(&i.action))
        .map(|i| i.requested_time.as_str());
    let first_pending = active(data)
        .find(|i| !i.is_completed())
        .map(|i| i.requested_time.as_str());
    earlier(first_commit, first_pending).map(str::to_string)
}

/// Requested times of the instants to archive, oldest first: completed commits beyond the
/// maximum (down to the minimum) before every retain point, then completed cleans and
/// rollbacks older than the last of them.
pub fn select(timeline: &Timeline, inputs: &ArchivalInputs) -> Vec<String> {
    let commits = completed_commits(timeline);
    let (min, max) = instants_to_keep(timeline, inputs);
    if commits.len() <= max {
        return Vec::new();
    }
    let mut bounds: Vec<String> = Vec::new();
    if let Some(p) = active(timeline).find(|i| !i.is_completed() && is_write_action(&i.action)) {
        let before = commits
            .iter()
            .rev()
            .find(|c| compare_instant_times(&c.requested_time, &p.requested_time).is_lt());
        bounds.push(
            before
                .map_or(&p.requested_time, |c| &c.requested_time)
                .clone(),
        );
    }
    if let (true, Some(n)) = (inputs.merge_on_read, inputs.compaction_delta_commits) {
        bounds.extend(compaction_retain_point(timeline, n));
    }
    bounds.extend(clustering_retain_point(timeline, inputs));
    match &inputs.metadata {
        MetadataBarrier::None => {}
        MetadataBarrier::NeverCompacted => return Vec::new(),
        MetadataBarrier::CompactedAt(t) => bounds.extend(
            commits
                .iter()
                .find(|c| {
                    c.completion_time
                        .as_deref()
                        .is_some_and(|ct| compare_instant_times(ct, t).is_gt())
                })
                .map(|c| c.requested_time.clone()),
        ),
    }
    bounds.extend(inputs.data_table_bound.clone());
    let retain = bounds
        .iter()
        .min_by(|a, b| compare_instant_times(a, b))
        .cloned();
    let savepoints: Vec<&str> = active(timeline)
        .filter(|i| i.is_completed() && i.action == action::SAVEPOINT)
        .map(|i| i.requested_time.as_str())
        .collect();
    let mut chosen: Vec<String> = commits
        .iter()
        .filter(|c| {
            let t = c.requested_time.as_str();
            if inputs.config.beyond_savepoint {
                !savepoints.contains(&t)
            } else {
                savepoints
                    .first()
                    .is_none_or(|s| compare_instant_times(t, s).is_lt())
            }
        })
        .filter(|c| {
            retain
                .as_deref()
                .is_none_or(|r| compare_instant_times(&c.requested_time, r).is_lt())
        })
        .take(commits.len().saturating_sub(min))
        .map(|c| c.requested_time.clone())
        .collect();
    if let Some(last) = chosen.last().cloned() {
        chosen.extend(
            active(timeline)
                .filter(|i| i.is_completed())
                .filter(|i| matches!(i.action.as_str(), action::CLEAN | action::ROLLBACK))
                .filter(|i| compare_instant_times(&i.requested_time, &last).is_lt())
                .map(|i| i.requested_time.clone()),
        );
    }
    chosen.sort_by(|a, b| compare_instant_times(a, b));
    chosen
}

/// One archived instant: a row of the LSM history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRow {
    pub instant_time: String,
    pub completion_time: Option<String>,
    /// The completed action (a compaction is a `commit`).
    pub action: String,
    /// The completed instant file's bytes (`None` when it is empty).
    pub metadata: Option<Bytes>,
    /// The plan: a clean's or compaction's requested file, a replace commit's requested or
    /// inflight file.
    pub plan: Option<Bytes>,
}

/// Which of an instant's files carries its plan, by the action it was requested as.
pub fn plan_source(requested_action: &str) -> &'static [State] {
    match requested_action {
        action::CLEAN | action::COMPACTION | action::LOG_COMPACTION => &[State::Requested],
        // The inflight file's content wins when it has any (Java's order).
        action::REPLACE_COMMIT | action::CLUSTERING => &[State::Requested, State::Inflight],
        _ => &[],
    }
}

pub const LSM_INSTANT_SCHEMA: &str = r#"{"type":"record","name":"HoodieLSMTimelineInstant","namespace":"org.apache.hudi.avro.model","fields":[{"name":"instantTime","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},{"name":"completionTime","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},{"name":"action","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},{"name":"metadata","type":["null","bytes"],"default":null},{"name":"plan","type":["null","bytes"],"default":null},{"name":"version","type":"int","default":1}]}"#;

/// Java's `LSM_TIMELINE_INSTANT_VERSION_1`.
const ROW_VERSION: i32 = 1;

/// The history file of `rows`, as Java's archiver writes it (gzip, parquet-avro footer).
pub fn encode_history_file(rows: &[HistoryRow]) -> Result<Bytes> {
    let text = |f: fn(&HistoryRow) -> Option<&str>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<StringArray>())
    };
    let binary = |f: fn(&HistoryRow) -> Option<&[u8]>| -> ArrayRef {
        Arc::new(rows.iter().map(f).collect::<BinaryArray>())
    };
    let schema = Schema::new(vec![
        Field::new("instantTime", DataType::Utf8, true),
        Field::new("completionTime", DataType::Utf8, true),
        Field::new("action", DataType::Utf8, true),
        Field::new("metadata", DataType::Binary, true),
        Field::new("plan", DataType::Binary, true),
        Field::new("version", DataType::Int32, false),
    ]);
    let columns = vec![
        text(|r| Some(&r.instant_time)),
        text(|r| r.completion_time.as_deref()),
        text(|r| Some(&r.action)),
        binary(|r| r.metadata.as_deref()),
        binary(|r| r.plan.as_deref()),
        Arc::new(Int32Array::from(vec![ROW_VERSION; rows.len()])) as ArrayRef,
    ];
    let batch = RecordBatch::try_new(Arc::new(schema), columns)
        .map_err(|e| HudiError::invalid(format!("LSM history rows: {e}")))?;
    crate::base_file::writer::write_avro_parquet(&batch, LSM_INSTANT_SCHEMA, "gzip")
}

/// The rows of a history file (through our footer and page checks, as every Parquet file
/// from a table).
pub fn decode_history_file(bytes: Bytes, path: &str) -> Result<Vec<HistoryRow>> {
    let mut out = Vec::new();
    for batch in crate::base_file::decode_in_memory(bytes, path, "bad LSM timeline file")? {
        let column = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| HudiError::corrupt(path, format!("no column {name}")))
        };
        let text = |name: &str| -> Result<StringArray> {
            let s = crate::cast::cast(column(name)?.as_ref(), &DataType::Utf8, true)
                .map_err(|e| HudiError::corrupt(path, e))?;
            Ok(s.as_string::<i32>().clone())
        };
        let binary = |name: &str| -> Result<Option<BinaryArray>> {
            let Some(col) = batch.column_by_name(name) else {
                return Ok(None);
            };
            let b = crate::cast::cast(col.as_ref(), &DataType::Binary, true).map_err(|_| {
                HudiError::corrupt(path, format!("{name} column is {}", col.data_type()))
            })?;
            Ok(Some(b.as_binary::<i32>().clone()))
        };
        let (times, completions, actions) = (
            text("instantTime")?,
            text("completionTime")?,
            text("action")?,
        );
        let (metadata, plan) = (binary("metadata")?, binary("plan")?);
        let bytes_at = |col: &Option<BinaryArray>, row: usize| {
            col.as_ref()
                .filter(|c| c.is_valid(row))
                .map(|c| Bytes::copy_from_slice(c.value(row)))
        };
        for row in 0..batch.num_rows() {
            let (true, true) = (times.is_valid(row), actions.is_valid(row)) else {
                return Err(HudiError::corrupt(
                    path,
                    format!("row {row} has no instant time or action"),
                ));
            };
            out.push(HistoryRow {
                instant_time: times.value(row).to_string(),
                completion_time: completions
                    .is_valid(row)
                    .then(|| completions.value(row).to_string()),
                action: actions.value(row).to_string(),
                metadata: bytes_at(&metadata, row),
                plan: bytes_at(&plan, row),
            });
        }
    }
    Ok(out)
}

/// `<min instant>_<max instant>_<layer>.parquet`.
pub fn history_file_name(min: &str, max: &str, layer: u32) -> String {
    format!("{min}_{max}_{layer}.parquet")
}

/// (min instant, max instant, layer) of a history file name.
pub fn parse_history_file_name(name: &str) -> Option<(&str, &str, u32)> {
    let stem = name.strip_suffix(".parquet")?;
    let mut parts = stem.split('_');
    let (min, max, layer) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (parts.next().is_none() && digits(min) && digits(max) && layer.len() == 1)
        .then(|| Some((min, max, layer.parse().ok()?)))
        .flatten()
}

/// A manifest: the history files a snapshot of the LSM timeline is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    pub files: Vec<(String, u64)>,
}

impl Manifest {
    pub fn parse(bytes: &[u8], path: &str) -> Result<Manifest> {
        let v: Value = serde_json::from_slice(bytes)
            .map_err(|e| HudiError::corrupt_by(path, "not an LSM timeline manifest", e))?;
        let files = v
            .get("files")
            .and_then(Value::as_array)
            .ok_or_else(|| HudiError::corrupt(path, "LSM timeline manifest has no files"))?;
        let files = files
            .iter()
            .map(|f| {
                let name = f.get("fileName").and_then(Value::as_str);
                let len = f.get("fileLen").and_then(Value::as_u64);
                match (name, len) {
                    (Some(n), Some(l)) => Ok((n.to_string(), l)),
                    _ => Err(HudiError::corrupt(path, format!("bad manifest entry {f}"))),
                }
            })
            .collect::<Result<_>>()?;
        Ok(Manifest { files })
    }

    /// Jackson's pretty JSON, as Java writes it.
    pub fn to_json(&self) -> String {
        let files: Vec<Value> = (self.files.iter())
            .map(|(n, l)| json!({"fileName": n, "fileLen": l}))
            .collect();
        super::write::java_pretty_json(&json!({ "files": files }))
    }

    pub fn contains(&self, name: &str) -> bool {
        self.files.iter().any(|(n, _)| n == name)
    }

    /// The files of `layer` to merge into the next layer: the oldest consecutive run of at
    /// most `batch` files (and about 1 GB), when the layer holds at least `batch`; `None`
    /// when there is nothing to merge.
    pub fn merge_candidates(&self, layer: u32, batch: usize) -> Option<Vec<(String, u64)>> {
        let mut files: Vec<&(String, u64)> = (self.files.iter())
            .filter(|(n, _)| parse_history_file_name(n).is_some_and(|(_, _, l)| l == layer))
            .collect();
        if files.len() < batch {
            return None;
        }
        fn span(n: &str) -> Option<(&str, &str)> {
            parse_history_file_name(n).map(|(min, max, _)| (min, max))
        }
        files.sort_by(|a, b| span(&a.0).cmp(&span(&b.0)));
        let mut chosen: Vec<(String, u64)> = Vec::new();
        let mut total = 0u64;
        for (name, len) in files {
            total += len;
            chosen.push((name.clone(), *len));
            if chosen.len() >= batch {
                break;
            }
            if total > LSM_MERGE_MAX_BYTES {
                if chosen.len() < 2 {
                    chosen.clear();
                    total = 0;
                } else {
                    break;
                }
            }
        }
        (chosen.len() >= 2).then_some(chosen)
    }
}

/// The next layer's file name for `files` (their overall min and max instants).
pub fn merged_file_name(files: &[(String, u64)]) -> Option<String> {
    let parsed: Vec<(&str, &str, u32)> = files
        .iter()
        .filter_map(|(n, _)| parse_history_file_name(n))
        .collect();
    let min = parsed.iter().map(|p| p.0).min()?;
    let max = parsed.iter().map(|p| p.1).max()?;
    Some(history_file_name(min, max, parsed.first()?.2 + 1))
}

/// Manifest versions to delete and how many are kept: the newest
/// `MANIFEST_VERSIONS_KEPT + merges` stay.
pub fn manifest_versions_to_drop(mut versions: Vec<u64>, merges: usize) -> Vec<u64> {
    versions.sort_unstable_by(|a, b| b.cmp(a));
    versions.split_off((MANIFEST_VERSIONS_KEPT + merges).min(versions.len()))
}

#[cfg(test)]
#[path = "archive_tests.rs"]
mod tests;
