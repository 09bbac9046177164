//! The file-system view: which file groups and slices exist as of an instant (Hudi's
//! `HoodieTableFileSystemView`). Pure: it is handed the data files (from a listing, the
//! metadata table or the timeline) and the timeline, and decides.
//!
//! Rules (docs/hudi-format.md §2.7, §4.5):
//! - a base file counts only when the instant that wrote it completed (as of the query);
//! - v8+ log files likewise, and they join the slice with the greatest base instant at or
//!   before the completion time of the delta commit that wrote them;
//! - v6 log files join the slice of the base instant in their name (or the nearest earlier
//!   one when that slice has no committed base, e.g. a pending compaction); their blocks
//!   are filtered by instant time when read;
//! - replaced file groups (insert overwrite, clustering) are dropped.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::{BaseFile, FileGroup, FileSlice, LogFile};
use crate::config::TableConfig;
use crate::timeline::Visibility;

/// A data file as found by whatever planned the read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    pub partition: String,
    pub name: String,
    pub size: u64,
}

/// A file left out of the view, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify_next::Tsify),
    serde(rename_all = "camelCase")
)]
pub struct Skipped {
    pub path: String,
    pub reason: &'static str,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FileSystemView {
    /// Sorted by partition, then file id. Replaced groups are not here.
    pub groups: Vec<FileGroup>,
    pub skipped: Vec<Skipped>,
    pub replaced_groups: usize,
}

impl FileSystemView {
    pub fn latest_slices(&self) -> impl Iterator<Item = &FileSlice> {
        self.groups.iter().filter_map(|g| g.latest_slice())
    }

    pub fn partitions(&self) -> Vec<&str> {
        let mut p: Vec<&str> = self.groups.iter().map(|g| g.partition.as_str()).collect();
        p.dedup();
        p
    }
}

pub fn build(
    files: impl IntoIterator<Item = DataFile>,
    visibility: &Visibility,
    config: &TableConfig,
    replaced: &HashSet<(String, String)>,
) -> FileSystemView {
    let is_committed = |t: &str| visibility.completion_of(t);
    let layout2 = config.has_completion_times();

    let mut bases: BTreeMap<(String, String), Vec<BaseFile>> = BTreeMap::new();
    let mut logs: BTreeMap<(String, String), Vec<LogFile>> = BTreeMap::new();
    let mut skipped = Vec::new();
    for f in files {
        // Only skipped files need their path (a table has thousands of files).
        let path = || crate::storage::join(&f.partition, &f.name);
        if let Some(b) = BaseFile::parse(&f.name, f.size) {
            if is_committed(&b.instant).is_some() {
                bases
                    .entry((f.partition, b.file_id.clone()))
                    .or_default()
                    .push(b);
            } else {
                skipped.push(Skipped {
                    path: path(),
                    reason: "written by an instant that is not completed (as of the query)",
                });
            }
        } else if let Some(mut l) = LogFile::parse(&f.name, f.size) {
            if l.cdc {
                skipped.push(Skipped {
                    path: path(),
                    reason: "CDC log file",
                });
                continue;
            }
            if layout2 {
                match is_committed(&l.instant) {
                    Some(c) => l.completion_time = c.or_else(|| Some(l.instant.clone())),
                    None => {
                        skipped.push(Skipped {
                            path: path(),
                            reason:
                                "written by a delta commit that is not completed (as of the query)",
                        });
                        continue;
                    }
                }
            } else if visibility.is_after_upper_bound(&l.instant) {
                skipped.push(Skipped {
                    path: path(),
                    reason: "log of a file slice newer than the query instant",
                });
                continue;
            }
            logs.entry((f.partition, l.file_id.clone()))
                .or_default()
                .push(l);
        }
    }

    let mut keys: Vec<(String, String)> = bases.keys().chain(logs.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    let mut groups = Vec::new();
    let mut replaced_groups = 0;
    for key in keys {
        if replaced.contains(&key) {
            replaced_groups += 1;
            continue;
        }
        let (partition, file_id) = key.clone();
        let mut slices: BTreeMap<String, FileSlice> = BTreeMap::new();
        for b in bases.remove(&key).unwrap_or_default() {
            let slice = slices
                .entry(b.instant.clone())
                .or_insert_with(|| FileSlice {
                    partition: partition.clone(),
                    file_id: file_id.clone(),
                    base_instant: b.instant.clone(),
                    base_file: None,
                    log_files: Vec::new(),
                });
            // Two committed base files for one instant can only differ by write token
            // (task retries); the larger token is the later attempt.
            if slice
                .base_file
                .as_ref()
                .is_none_or(|old| old.write_token < b.write_token)
            {
                slice.base_file = Some(b);
            }
        }
        let mut group_logs = logs.remove(&key).unwrap_or_default();
        group_logs.sort_by(|a, b| a.log_order(b));
        for l in group_logs {
            let position = if layout2 {
                l.completion_time
                    .clone()
                    .unwrap_or_else(|| l.instant.clone())
            } else {
                l.instant.clone()
            };
            let target = slices
                .range(..=position.clone())
                .next_back()
                .map(|(k, _)| k.clone())
                .unwrap_or_else(|| l.instant.clone());
            slices
                .entry(target.clone())
                .or_insert_with(|| FileSlice {
                    partition: partition.clone(),
                    file_id: file_id.clone(),
                    base_instant: target,
                    base_file: None,
                    log_files: Vec::new(),
                })
                .log_files
                .push(l);
        }
        groups.push(FileGroup {
            partition,
            file_id,
            slices: slices.into_values().collect(),
        });
    }
    FileSystemView {
        groups,
        skipped,
        replaced_groups,
    }
}
