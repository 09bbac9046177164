//! When a table is due a clustering and which file slices the plan groups, as Java's
//! `ClusteringPlanActionExecutor` and `SparkSizeBasedClusteringPlanStrategy` (with
//! `PartitionAwareClusteringPlanStrategy`'s grouping) decide. Pure: the timeline, the
//! latest slices and the settings in, a decision and groups out.

use std::collections::{BTreeMap, HashSet};

use crate::error::{HudiError, Result};
use crate::file_group::clustering::Group;
use crate::file_group::compaction::Operation;
use crate::file_group::FileSlice;
use crate::timeline::instant::{action, compare_instant_times};
use crate::timeline::Timeline;

pub const INLINE: &str = "hoodie.clustering.inline";
pub const SCHEDULE_INLINE: &str = "hoodie.clustering.schedule.inline";
pub const ASYNC: &str = "hoodie.clustering.async.enabled";
pub const INLINE_MAX_COMMITS: &str = "hoodie.clustering.inline.max.commits";
pub const ASYNC_MAX_COMMITS: &str = "hoodie.clustering.async.max.commits";
pub const SMALL_FILE_LIMIT: &str = "hoodie.clustering.plan.strategy.small.file.limit";
pub const TARGET_FILE_MAX_BYTES: &str = "hoodie.clustering.plan.strategy.target.file.max.bytes";
pub const MAX_BYTES_PER_GROUP: &str = "hoodie.clustering.plan.strategy.max.bytes.per.group";
pub const MAX_NUM_GROUPS: &str = "hoodie.clustering.plan.strategy.max.num.groups";
pub const SORT_COLUMNS: &str = crate::file_group::clustering::SORT_COLUMNS;
pub const SINGLE_GROUP: &str = "hoodie.clustering.plan.strategy.single.group.clustering.enabled";
pub const PRESERVE_METADATA: &str = "hoodie.clustering.preserve.commit.metadata";

/// The clustering settings of one run, parsed once.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusteringConfig {
    /// Schedule and execute after a write's commit.
    pub inline: bool,
    /// Schedule after a write's commit, for another run (or Spark) to execute.
    pub schedule_inline: bool,
    /// Commits since the last clustering that trigger an inline one.
    pub inline_max_commits: usize,
    /// The same for a plan only scheduled (`hoodie.clustering.async.max.commits`).
    pub async_max_commits: usize,
    /// Slices whose base file is this size or larger are left alone.
    pub small_file_limit: u64,
    pub target_file_max_bytes: u64,
    pub max_bytes_per_group: u64,
    pub max_num_groups: usize,
    pub sort_columns: Vec<String>,
    /// A partition's last group may hold one slice (rewritten alone).
    pub single_group: bool,
    pub preserve_metadata: bool,
}

impl ClusteringConfig {
    /// The settings among `given` (Java's names and defaults).
    pub fn parse(given: &BTreeMap<String, String>) -> Result<ClusteringConfig> {
        let own = |k: &str| crate::config::option_value(given, k);
        let flag = |k: &str| crate::config::option_flag(given, k);
        let number = |k: &str, default: u64, min: u64| -> Result<u64> {
            own(k).map_or(Ok(default), |v| {
                v.parse::<u64>().ok().filter(|n| *n >= min).ok_or_else(|| {
                    HudiError::invalid(format!("{k}={v:?}: expected a whole number from {min}"))
                })
            })
        };
        let sort_columns = own(SORT_COLUMNS)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Ok(ClusteringConfig {
            inline: flag(INLINE)?.unwrap_or(false),
            schedule_inline: flag(SCHEDULE_INLINE)?.unwrap_or(false)
                || flag(ASYNC)?.unwrap_or(false),
            inline_max_commits: number(INLINE_MAX_COMMITS, 4, 1)? as usize,
            async_max_commits: number(ASYNC_MAX_COMMITS, 4, 1)? as usize,
            small_file_limit: number(SMALL_FILE_LIMIT, 300 << 20, 0)?,
            target_file_max_bytes: number(TARGET_FILE_MAX_BYTES, 1 << 30, 1)?,
            max_bytes_per_group: number(MAX_BYTES_PER_GROUP, 2 << 30, 1)?,
            max_num_groups: number(MAX_NUM_GROUPS, 30, 1)? as usize,
            sort_columns,
            single_group: flag(SINGLE_GROUP)?.unwrap_or(true),
            preserve_metadata: flag(PRESERVE_METADATA)?.unwrap_or(true),
        })
    }
}

/// Whether a clustering is due after a write (Java's `createClusteringPlan` check):
/// completed commits, delta commits and replace commits after the last clustering reach
/// `inline_max_commits` (`async_max_commits` when only scheduling). `uncounted`: commits
/// the timeline does not show yet (a write's own). `Err` says why not.
pub fn due(
    timeline: &Timeline,
    config: &ClusteringConfig,
    schedule_only: bool,
    uncounted: usize,
) -> std::result::Result<(), String> {
    let active: Vec<_> = timeline.instants.iter().filter(|i| !i.archived).collect();
    let last = active
        .iter()
        .filter(|i| i.is_completed() && i.is_clustering())
        .map(|i| i.requested_time.as_str())
        .max_by(|a, b| compare_instant_times(a, b));
    let count = active
        .iter()
        .filter(|i| {
            i.is_completed()
                && matches!(
                    i.action.as_str(),
                    action::COMMIT | action::DELTA_COMMIT | action::REPLACE_COMMIT
                )
                && last.is_none_or(|l| compare_instant_times(&i.requested_time, l).is_gt())
        })
        .count()
        + uncounted;
    let max = if schedule_only {
        config.async_max_commits
    } else {
        config.inline_max_commits
    };
    if count >= max {
        return Ok(());
    }
    Err(format!(
        "{count} commits since {} (clusters at {max})",
        last.unwrap_or("the first")
    ))
}

/// The plan's groups (Java's size-based plan strategy): per partition, the latest slices
/// not in a pending compaction, log compaction or clustering whose base file (none counts
/// 0) is under the small-file limit, largest first (a slice without a base file counts as
/// `max_file_size`), packed into groups of at most `max_bytes_per_group`, each written as
/// ceil(size / target) new file groups; at most `max_num_groups` in all.
pub fn groups<'a>(
    slices: impl IntoIterator<Item = &'a FileSlice>,
    busy: &HashSet<(String, String)>,
    config: &ClusteringConfig,
    max_file_size: u64,
) -> Vec<Group> {
    let mut by_partition: BTreeMap<&str, Vec<&FileSlice>> = BTreeMap::new();
    for s in slices {
        let size = s.base_file.as_ref().map_or(0, |b| b.size);
        if size < config.small_file_limit
            && !busy.contains(&(s.partition.clone(), s.file_id.clone()))
        {
            by_partition.entry(&s.partition).or_default().push(s);
        }
    }
    let size = |s: &FileSlice| s.base_file.as_ref().map_or(max_file_size, |b| b.size);
    let outputs = |bytes: u64| bytes.div_ceil(config.target_file_max_bytes).max(1) as usize;
    let mut out = Vec::new();
    for (_, mut slices) in by_partition {
        slices.sort_by_key(|s| std::cmp::Reverse(size(s)));
        let mut groups: Vec<Group> = Vec::new();
        let mut current: Vec<Operation> = Vec::new();
        let mut bytes = 0u64;
        for s in slices {
            let n = size(s);
            if bytes + n > config.max_bytes_per_group && !current.is_empty() {
                groups.push(Group {
                    slices: std::mem::take(&mut current),
                    output_file_groups: outputs(bytes),
                });
                bytes = 0;
                if groups.len() >= config.max_num_groups {
                    break;
                }
            }
            current.push(Operation::of(s));
            bytes += n;
        }
        let single_ok = config.single_group || !config.sort_columns.is_empty();
        if groups.len() < config.max_num_groups
            && (current.len() > 1 || (current.len() == 1 && single_ok))
        {
            groups.push(Group {
                slices: current,
                output_file_groups: outputs(bytes),
            });
        }
        out.extend(groups);
    }
    out.truncate(config.max_num_groups);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_group::{BaseFile, LogFile};

    fn config(pairs: &[(&str, &str)]) -> ClusteringConfig {
        let map = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ClusteringConfig::parse(&map).unwrap()
    }

    fn slice(partition: &str, id: &str, base: Option<u64>, log: bool) -> FileSlice {
        FileSlice {
            partition: partition.into(),
            file_id: id.into(),
            base_instant: "100".into(),
            base_file: base.and_then(|n| BaseFile::parse(&format!("{id}_0-0-0_100.parquet"), n)),
            log_files: if log {
                vec![LogFile::parse(&format!(".{id}_100.log.1_0-0-0"), 7).unwrap()]
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    fn defaults_are_java_s() {
        let c = config(&[]);
        assert!(!c.inline && !c.schedule_inline);
        assert_eq!((c.inline_max_commits, c.max_num_groups), (4, 30));
        assert_eq!(
            (
                c.small_file_limit,
                c.target_file_max_bytes,
                c.max_bytes_per_group
            ),
            (300 << 20, 1 << 30, 2 << 30)
        );
        assert!(c.single_group && c.preserve_metadata && c.sort_columns.is_empty());
        assert_eq!(config(&[(SORT_COLUMNS, "a, b")]).sort_columns, ["a", "b"]);
        let bad = [(INLINE_MAX_COMMITS.to_string(), "0".to_string())].into();
        assert!(ClusteringConfig::parse(&bad).is_err());
    }

    #[test]
    fn counts_commits_since_the_last_clustering() {
        let c = config(&[]);
        let mut names: Vec<String> = (0..3)
            .map(|i| format!("2026010100000{i}000_2026010100000{i}001.commit"))
            .collect();
        let t = |n: &Vec<String>| {
            crate::timeline::test_timeline(&n.iter().map(String::as_str).collect::<Vec<_>>())
        };
        assert!(due(&t(&names), &c, false, 0).is_err());
        assert!(due(&t(&names), &c, false, 1).is_ok());
        names.push("20260101000004000.clustering.requested".into());
        names.push("20260101000004000_20260101000004001.replacecommit".into());
        assert_eq!(
            due(&t(&names), &c, false, 1).unwrap_err(),
            "1 commits since 20260101000004000 (clusters at 4)"
        );
    }

    #[test]
    fn groups_small_slices_by_partition_largest_first() {
        let mb = 1u64 << 20;
        let slices = [
            slice("a", "1", Some(10 * mb), false),
            slice("a", "2", Some(400 * mb), false), // not small
            slice("a", "3", Some(20 * mb), true),
            slice("a", "4", None, true), // logs only: counts as a whole file
            slice("b", "5", Some(mb), false),
            slice("c", "6", Some(mb), false),
        ];
        let busy: HashSet<_> = [("c".to_string(), "6".to_string())].into();
        let g = groups(&slices, &busy, &config(&[]), 120 * mb);
        let ids: Vec<Vec<&str>> = g
            .iter()
            .map(|g| g.slices.iter().map(|s| s.file_id.as_str()).collect())
            .collect();
        assert_eq!(ids, [vec!["4", "3", "1"], vec!["5"]]);
        assert_eq!(g[0].output_file_groups, 1);
        let tight = config(&[
            (MAX_BYTES_PER_GROUP, &(125 * mb).to_string()),
            (TARGET_FILE_MAX_BYTES, &(50 * mb).to_string()),
        ]);
        let g = groups(&slices, &busy, &tight, 120 * mb);
        let sizes: Vec<(usize, usize)> = g
            .iter()
            .map(|g| (g.slices.len(), g.output_file_groups))
            .collect();
        assert_eq!(sizes, [(1, 3), (2, 1), (1, 1)]);
        let single_off = config(&[(SINGLE_GROUP, "false"), (MAX_NUM_GROUPS, "1")]);
        assert_eq!(groups(&slices, &busy, &single_off, 120 * mb).len(), 1);
    }
}
