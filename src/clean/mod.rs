//! Cleaning: which old file slices a clean deletes, decided as Apache Hudi 1.1's cleaner
//! decides (`CleanPlanner`, `CleanerUtils`, `CleanPlanActionExecutor`; docs/hudi-format.md
//! §10.8). Sans-IO: it is handed the timeline, the file groups and what protects files, and
//! answers with the plan's content. The write side ([`crate::write::services::clean`]) reads
//! those, records the plan, deletes and commits.
//!
//! - the retain point (`earliestInstantToRetain`): with KEEP_LATEST_COMMITS the N-th last
//!   completed commit of the commits-and-compaction timeline, never later than its earliest
//!   pending instant; with KEEP_LATEST_BY_HOURS the first completed commit at or after now
//!   minus N hours (in the timeline's zone); none with KEEP_LATEST_FILE_VERSIONS;
//! - a slice is cleaned whole (base file and every log file, `.cdc` included) when its base
//!   instant is before the retain point, unless it is its group's latest, the last one before
//!   the retain point (KEEP_LATEST_COMMITS), savepointed, or needed by a pending compaction;
//! - replaced file groups are cleaned when replaced before the retain point (every one under
//!   KEEP_LATEST_FILE_VERSIONS).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::config::TimelineTimezone;
use crate::error::{HudiError, Result};
use crate::file_group::{FileGroup, FileSlice};
use crate::timeline::instant::{action, compare_instant_times, State};
use crate::timeline::metadata::ActionInstant;
use crate::timeline::Timeline;

pub const AUTOMATIC: &str = "hoodie.clean.automatic";
pub const POLICY: &str = "hoodie.clean.policy";
pub const POLICY_OLD: &str = "hoodie.cleaner.policy";
pub const COMMITS_RETAINED: &str = "hoodie.clean.commits.retained";
pub const COMMITS_RETAINED_OLD: &str = "hoodie.cleaner.commits.retained";
pub const FILE_VERSIONS_RETAINED: &str = "hoodie.clean.fileversions.retained";
pub const FILE_VERSIONS_RETAINED_OLD: &str = "hoodie.cleaner.fileversions.retained";
pub const HOURS_RETAINED: &str = "hoodie.clean.hours.retained";
pub const HOURS_RETAINED_OLD: &str = "hoodie.cleaner.hours.retained";
pub const TRIGGER_STRATEGY: &str = "hoodie.clean.trigger.strategy";
pub const MAX_COMMITS: &str = "hoodie.clean.trigger.max.commits";
pub const MAX_COMMITS_OLD: &str = "hoodie.clean.max.commits";
pub const INCREMENTAL: &str = "hoodie.clean.incremental.enabled";
pub const INCREMENTAL_OLD: &str = "hoodie.cleaner.incremental.mode";

/// Clean plans and metadata of version 2 (Java's latest).
pub const VERSION: i32 = 2;
/// Key of the plan's extra metadata listing savepoints (comma-separated).
pub const SAVEPOINTED_TIMESTAMPS: &str = "savepointed_timestamps";

/// (key, default, what it does) of every cleaning setting, for docs and `--help`.
pub const SETTINGS: &[(&str, &str, &str)] = &[
    (AUTOMATIC, "true", "clean after each successful write (and the metadata table's own clean when due)"),
    (POLICY, "KEEP_LATEST_COMMITS", "KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS (older name: hoodie.cleaner.policy; unset, inferred from the one retained setting given)"),
    (COMMITS_RETAINED, "10", "KEEP_LATEST_COMMITS: commits whose file slices stay readable (older name: hoodie.cleaner.commits.retained)"),
    (FILE_VERSIONS_RETAINED, "3", "KEEP_LATEST_FILE_VERSIONS: slices kept per file group (older name: hoodie.cleaner.fileversions.retained)"),
    (HOURS_RETAINED, "24", "KEEP_LATEST_BY_HOURS: hours of commits whose slices stay readable (older name: hoodie.cleaner.hours.retained)"),
    (TRIGGER_STRATEGY, "NUM_COMMITS", "when a clean is planned: NUM_COMMITS (the only strategy)"),
    (MAX_COMMITS, "1", "commits since the last clean before another is planned (older name: hoodie.clean.max.commits)"),
    (INCREMENTAL, "true", "scan only partitions written since the last clean's retain point (older name: hoodie.cleaner.incremental.mode)"),
];

/// Hudi's cleaning policies (`HoodieCleaningPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    KeepLatestCommits,
    KeepLatestFileVersions,
    KeepLatestByHours,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::KeepLatestCommits => "KEEP_LATEST_COMMITS",
            Policy::KeepLatestFileVersions => "KEEP_LATEST_FILE_VERSIONS",
            Policy::KeepLatestByHours => "KEEP_LATEST_BY_HOURS",
        }
    }

    fn parse(v: &str) -> Option<Policy> {
        [
            Policy::KeepLatestCommits,
            Policy::KeepLatestFileVersions,
            Policy::KeepLatestByHours,
        ]
        .into_iter()
        .find(|p| p.name().eq_ignore_ascii_case(v))
    }
}

/// The cleaning settings of one write or clean, parsed once.
#[derive(Debug, Clone, PartialEq)]
pub struct CleanConfig {
    pub automatic: bool,
    pub policy: Policy,
    pub commits_retained: usize,
    pub file_versions_retained: usize,
    pub hours_retained: usize,
    pub max_commits: usize,
    pub incremental: bool,
}

impl Default for CleanConfig {
    fn default() -> Self {
        CleanConfig {
            automatic: true,
            policy: Policy::KeepLatestCommits,
            commits_retained: 10,
            file_versions_retained: 3,
            hours_retained: 24,
            max_commits: 1,
            incremental: true,
        }
    }
}

impl CleanConfig {
    /// Reads the cleaning keys of `given` (new names first, then Java's older ones); a bad
    /// value is `INVALID_ARGUMENT` naming the key.
    pub fn parse(given: &BTreeMap<String, String>) -> Result<CleanConfig> {
        let get = |keys: &[&'static str]| {
            keys.iter().find_map(|k| {
                let v = given.get(*k)?.trim();
                (!v.is_empty()).then(|| (*k, v.to_string()))
            })
        };
        let bad = |k: &str, v: &str, what: &str| {
            HudiError::invalid(format!("{k}={v:?}: expected {what}"))
        };
        let flag = |keys: &[&'static str], default: bool| -> Result<bool> {
            match get(keys) {
                None => Ok(default),
                Some((_, v)) if v.eq_ignore_ascii_case("true") => Ok(true),
                Some((_, v)) if v.eq_ignore_ascii_case("false") => Ok(false),
                Some((k, v)) => Err(bad(k, &v, "one of true, false")),
            }
        };
        let count = |keys: &[&'static str], default: usize, min: usize| -> Result<usize> {
            match get(keys) {
                None => Ok(default),
                Some((k, v)) => v
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n >= min)
                    .ok_or_else(|| bad(k, &v, &format!("a whole number of at least {min}"))),
            }
        };
        let d = CleanConfig::default();
        let commits = [COMMITS_RETAINED, COMMITS_RETAINED_OLD];
        let versions = [FILE_VERSIONS_RETAINED, FILE_VERSIONS_RETAINED_OLD];
        let hours = [HOURS_RETAINED, HOURS_RETAINED_OLD];
        let policy = match get(&[POLICY, POLICY_OLD]) {
            Some((k, v)) => Policy::parse(&v).ok_or_else(|| {
                bad(
                    k,
                    &v,
                    "one of KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, KEEP_LATEST_BY_HOURS",
                )
            })?,
            // Java infers the policy from the one retained setting given, if only one is.
            None => match (
                get(&commits).is_some(),
                get(&versions).is_some(),
                get(&hours).is_some(),
            ) {
                (false, true, false) => Policy::KeepLatestFileVersions,
                (false, false, true) => Policy::KeepLatestByHours,
                _ => Policy::KeepLatestCommits,
            },
        };
        if let Some((k, v)) = get(&[TRIGGER_STRATEGY]) {
            if !v.eq_ignore_ascii_case("NUM_COMMITS") {
                return Err(bad(k, &v, "NUM_COMMITS"));
            }
        }
        Ok(CleanConfig {
            automatic: flag(&[AUTOMATIC], d.automatic)?,
            policy,
            commits_retained: count(&commits, d.commits_retained, 0)?,
            file_versions_retained: count(&versions, d.file_versions_retained, 1)?,
            hours_retained: count(&hours, d.hours_retained, 0)?,
            max_commits: count(&[MAX_COMMITS, MAX_COMMITS_OLD], d.max_commits, 0)?,
            incremental: flag(&[INCREMENTAL, INCREMENTAL_OLD], d.incremental)?,
        })
    }

    /// The metadata table's cleaner (Java `HoodieMetadataWriteUtils`): the data table's policy,
    /// retaining max(20, 1.2 × commits), or 1.2 × versions / hours rounded up.
    pub fn for_metadata_table(&self) -> CleanConfig {
        let scaled = |n: usize| (n * 6).div_ceil(5);
        CleanConfig {
            automatic: true,
            policy: self.policy,
            commits_retained: 20.max(self.commits_retained * 6 / 5),
            file_versions_retained: scaled(self.file_versions_retained),
            hours_retained: scaled(self.hours_retained),
            max_commits: self.max_commits,
            incremental: self.incremental,
        }
    }
}

/// Whether an instant belongs to the commits-and-compaction timeline (Java
/// `getCommitsAndCompactionTimeline`): writes, replace commits, compactions, clustering.
pub fn is_commit_like(i: &crate::timeline::Instant) -> bool {
    matches!(
        i.requested_action(),
        action::COMMIT
            | action::DELTA_COMMIT
            | action::REPLACE_COMMIT
            | action::CLUSTERING
            | action::COMPACTION
            | action::LOG_COMPACTION
    )
}

/// Completed commits (Java `getCompletedCommitsTimeline`), oldest first.
fn completed_commits(timeline: &Timeline) -> Vec<&crate::timeline::Instant> {
    timeline
        .instants
        .iter()
        .filter(|i| !i.archived && i.is_completed() && is_commit_like(i))
        .collect()
}

/// What the last completed clean recorded (for the trigger and incremental mode).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LastClean {
    pub earliest_commit_to_retain: String,
    pub last_completed_commit: String,
    pub savepointed: Vec<String>,
}

/// Java's NUM_COMMITS trigger: completed commits after the last clean's last completed
/// commit (all of them without a clean) reach `max_commits`.
pub fn needs_cleaning(timeline: &Timeline, last: Option<&LastClean>, max_commits: usize) -> bool {
    let commits = completed_commits(timeline);
    let since = match last {
        Some(l) => commits
            .iter()
            .filter(|i| compare_instant_times(&i.requested_time, &l.last_completed_commit).is_gt())
            .count(),
        None => commits.len(),
    };
    since >= max_commits
}

/// Java's `CleanerUtils.getEarliestCommitToRetain`; `now_ms` is the wall clock.
pub fn earliest_commit_to_retain(
    timeline: &Timeline,
    config: &CleanConfig,
    now_ms: i64,
    tz: TimelineTimezone,
) -> Option<ActionInstant> {
    let completed = completed_commits(timeline);
    let retain = |i: &crate::timeline::Instant| ActionInstant {
        timestamp: i.requested_time.clone(),
        action: i.action.clone(),
        state: "COMPLETED".into(),
    };
    match config.policy {
        Policy::KeepLatestCommits if completed.len() > config.commits_retained => {
            let nth = completed[completed.len() - config.commits_retained];
            let pending = timeline
                .instants
                .iter()
                .find(|i| !i.archived && !i.is_completed() && is_commit_like(i));
            match pending {
                Some(p)
                    if compare_instant_times(&nth.requested_time, &p.requested_time).is_gt() =>
                {
                    completed
                        .iter()
                        .rev()
                        .find(|i| {
                            compare_instant_times(&i.requested_time, &p.requested_time).is_lt()
                        })
                        .map(|i| retain(i))
                }
                _ => Some(retain(nth)),
            }
        }
        Policy::KeepLatestByHours => {
            let hours = i64::try_from(config.hours_retained).unwrap_or(i64::MAX / 4);
            let at = now_ms.saturating_sub(hours.saturating_mul(3_600_000));
            let limit = format_instant(at, tz)?;
            completed
                .iter()
                .find(|i| compare_instant_times(&i.requested_time, &limit).is_ge())
                .map(|i| retain(i))
        }
        _ => None,
    }
}

fn format_instant(ms: i64, tz: TimelineTimezone) -> Option<String> {
    use chrono::{Local, TimeZone, Utc};
    let utc = Utc.timestamp_millis_opt(ms).single()?;
    Some(match tz {
        TimelineTimezone::Utc => utc.format("%Y%m%d%H%M%S%3f").to_string(),
        TimelineTimezone::Local => utc
            .with_timezone(&Local)
            .format("%Y%m%d%H%M%S%3f")
            .to_string(),
    })
}

/// Requested time of the last completed commit (the plan's `lastCompletedCommitTimestamp`).
pub fn last_completed_commit(timeline: &Timeline) -> String {
    completed_commits(timeline)
        .last()
        .map(|i| i.requested_time.clone())
        .unwrap_or_default()
}

/// Partitions a clean scans: `None` for every partition (full scan), else those written by
/// completed commits at or after the last clean's retain point and before the new one
/// (Java's incremental mode). `partitions_of` gives an instant's partitions from its
/// metadata (written and replaced).
pub fn incremental_range<'t>(
    timeline: &'t Timeline,
    config: &CleanConfig,
    last: Option<&LastClean>,
    retain: Option<&ActionInstant>,
    savepoints: &[String],
) -> Option<Vec<&'t crate::timeline::Instant>> {
    if !config.incremental || config.policy == Policy::KeepLatestFileVersions {
        return None;
    }
    let (last, retain) = (last?, retain?);
    let from = &last.earliest_commit_to_retain;
    let first = timeline
        .instants
        .iter()
        .find(|i| !i.archived && action::is_write(action::completed_as(i.requested_action())))?;
    if from.is_empty() || compare_instant_times(from, &first.requested_time).is_lt() {
        return None;
    }
    // A savepoint removed since the last clean: its files may be cleanable anywhere.
    if last.savepointed.iter().any(|s| !savepoints.contains(s)) {
        return None;
    }
    Some(
        completed_commits(timeline)
            .into_iter()
            .filter(|i| {
                compare_instant_times(&i.requested_time, from).is_ge()
                    && compare_instant_times(&i.requested_time, &retain.timestamp).is_lt()
            })
            .collect(),
    )
}

/// What keeps files that would otherwise be cleaned.
#[derive(Debug, Clone, Default)]
pub struct Protected {
    /// File names listed by savepoints.
    pub savepointed_files: HashSet<String>,
    /// (partition, file id) → base instant of a pending compaction or log compaction.
    pub pending_compaction: HashMap<(String, String), String>,
}

impl Protected {
    fn savepointed(&self, slice: &FileSlice) -> bool {
        slice
            .file_names()
            .any(|n| self.savepointed_files.contains(n))
    }

    fn needed_by_compaction(&self, slice: &FileSlice) -> bool {
        self.pending_compaction
            .get(&(slice.partition.clone(), slice.file_id.clone()))
            .is_some_and(|base| compare_instant_times(&slice.base_instant, base).is_ge())
    }

    fn in_compaction(&self, group: &FileGroup) -> bool {
        self.pending_compaction
            .contains_key(&(group.partition.clone(), group.file_id.clone()))
    }
}

/// One partition's file groups as the cleaner sees them.
#[derive(Debug, Clone, Default)]
pub struct PartitionGroups {
    /// Live file groups (slices oldest first, as the file-system view builds them).
    pub groups: Vec<FileGroup>,
    /// Replaced file groups with the requested time of the replace commit.
    pub replaced: Vec<(FileGroup, String)>,
}

/// What one partition's clean deletes: file names, and whether the partition goes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartitionClean {
    pub files: Vec<String>,
    pub delete_partition: bool,
}

/// The files of `partition` to clean (Java `CleanPlanner.getDeletePaths`). `commits` is the
/// number of completed commits, `retain` the retain point. Names come base file first, then
/// log files, newest slice first (Java's order).
pub fn files_to_clean(
    partition: &PartitionGroups,
    config: &CleanConfig,
    retain: Option<&ActionInstant>,
    commits: usize,
    protected: &Protected,
) -> PartitionClean {
    let mut files = Vec::new();
    let mut push = |s: &FileSlice| files.extend(s.file_names().map(str::to_string));
    let delete_partition;
    match config.policy {
        Policy::KeepLatestFileVersions => {
            for (g, _) in &partition.replaced {
                for s in g.slices.iter().rev().filter(|s| !protected.savepointed(s)) {
                    push(s);
                }
            }
            for g in &partition.groups {
                let mut keep = config.file_versions_retained;
                if protected.in_compaction(g) {
                    keep = keep.saturating_sub(1);
                }
                let candidates = g
                    .slices
                    .iter()
                    .rev()
                    .filter(|s| !protected.needed_by_compaction(s));
                for s in candidates.skip(keep) {
                    if !protected.savepointed(s) {
                        push(s);
                    }
                }
            }
            delete_partition = partition.groups.is_empty();
        }
        Policy::KeepLatestCommits | Policy::KeepLatestByHours => {
            let retained = match config.policy {
                Policy::KeepLatestCommits => config.commits_retained,
                _ => 0,
            };
            let Some(retain) = retain.filter(|_| commits > retained) else {
                return PartitionClean::default();
            };
            let before = |t: &str| compare_instant_times(t, &retain.timestamp).is_lt();
            for (g, replaced_at) in &partition.replaced {
                if before(replaced_at) {
                    for s in g.slices.iter().rev().filter(|s| !protected.savepointed(s)) {
                        push(s);
                    }
                }
            }
            for g in &partition.groups {
                let Some(latest) = g.slices.last() else {
                    continue;
                };
                let last_before = g
                    .slices
                    .iter()
                    .rev()
                    .find(|s| before(&s.base_instant))
                    .map(|s| s.base_instant.as_str());
                for s in g.slices.iter().rev() {
                    if protected.savepointed(s) || s.base_instant == latest.base_instant {
                        continue;
                    }
                    if config.policy == Policy::KeepLatestCommits
                        && Some(s.base_instant.as_str()) == last_before
                    {
                        continue;
                    }
                    if !protected.needed_by_compaction(s) && before(&s.base_instant) {
                        push(s);
                    }
                }
            }
            let replaced_later = partition.replaced.iter().any(|(_, t)| !before(t));
            delete_partition = partition.groups.is_empty() && !replaced_later;
        }
    }
    PartitionClean {
        files,
        delete_partition,
    }
}

/// The timeline as it stood at `t`: instants requested before it, those completed after it
/// pending again.
fn as_of(timeline: &Timeline, t: &str) -> Timeline {
    let instants = timeline
        .instants
        .iter()
        .filter(|i| compare_instant_times(&i.requested_time, t).is_lt())
        .map(|i| {
            let later = i
                .completion_time
                .as_deref()
                .is_none_or(|c| compare_instant_times(c, t).is_gt());
            let mut i = i.clone();
            if i.is_completed() && later {
                i.state = State::Inflight;
                i.completion_time = None;
            }
            i
        })
        .collect();
    Timeline {
        instants,
        ..Timeline::default()
    }
}

/// Whether the metadata table's clean can delete anything, from its timeline alone: its file
/// groups are compacted all at once, so their slices start at its initialisations
/// (`00000000000000…` delta commits) and compactions. A slice becomes cleanable when the
/// retain point passes the next such start, so a clean has work once two starts precede the
/// retain point and (after an earlier clean) a start lies between that clean's retain point
/// and the new one. A pending clean is work too. A timeline missing its newest instants (a
/// handle's, before its own commit) only delays the answer to the next write.
pub fn metadata_table_may_clean(
    timeline: &Timeline,
    config: &CleanConfig,
    now_ms: i64,
    tz: TimelineTimezone,
) -> bool {
    let active = || timeline.instants.iter().filter(|i| !i.archived);
    if active().any(|i| !i.is_completed() && i.requested_action() == action::CLEAN) {
        return true;
    }
    if config.policy == Policy::KeepLatestFileVersions {
        return true;
    }
    let Some(retain) = earliest_commit_to_retain(timeline, config, now_ms, tz) else {
        return false;
    };
    // One start for the initialisations: each file group has one of them.
    let init = active()
        .filter(|i| i.is_completed() && i.action == action::DELTA_COMMIT)
        .map(|i| i.requested_time.as_str())
        .find(|t| t.starts_with(INIT_PREFIX));
    let compactions = active()
        .filter(|i| i.is_completed() && i.is_compaction())
        .map(|i| i.requested_time.as_str());
    let starts: Vec<&str> = init.into_iter().chain(compactions).collect();
    // Three instants after the last compaction first (as the clean itself waits; the
    // timeline may lack the write's own delta commit: one is granted).
    if instants_since_compaction(timeline).is_some_and(|n| n + 1 < METADATA_CLEAN_WAIT) {
        return false;
    }
    let before = |t: &str, limit: &str| compare_instant_times(t, limit).is_lt();
    if starts
        .iter()
        .filter(|s| before(s, &retain.timestamp))
        .count()
        < 2
    {
        return false;
    }
    let Some(last) = active()
        .filter(|i| i.is_completed() && i.action == action::CLEAN)
        .map(|i| i.requested_time.as_str())
        .max_by(|a, b| compare_instant_times(a, b))
    else {
        return true;
    };
    match earliest_commit_to_retain(&as_of(timeline, last), config, now_ms, tz) {
        None => true,
        Some(previous) => starts
            .iter()
            .any(|s| !before(s, &previous.timestamp) && before(s, &retain.timestamp)),
    }
}

/// Instants the metadata table's clean waits for after a compaction (Java's
/// `cleanIfNecessary`): readers that opened the slices the compaction replaced still find
/// them.
pub const METADATA_CLEAN_WAIT: usize = 3;

/// Completed instants after the last completed compaction (commit or replace commit, Java's
/// `getCommitAndReplaceTimeline`), when there was one.
pub fn instants_since_compaction(timeline: &Timeline) -> Option<usize> {
    let active = || {
        timeline
            .instants
            .iter()
            .filter(|i| !i.archived && i.is_completed())
    };
    let last = active()
        .filter(|i| i.action == action::COMMIT || i.action == action::REPLACE_COMMIT)
        .map(|i| i.requested_time.as_str())
        .max_by(|a, b| compare_instant_times(a, b))?;
    Some(
        active()
            .filter(|i| compare_instant_times(&i.requested_time, last).is_gt())
            .count(),
    )
}

/// Requested times of the metadata table's initialisation delta commits begin with this.
const INIT_PREFIX: &str = "00000000000000";

/// Completed-instant state name as Java writes it in `HoodieActionInstant`.
pub fn state_name(state: State) -> &'static str {
    match state {
        State::Requested => "REQUESTED",
        State::Inflight => "INFLIGHT",
        State::Completed => "COMPLETED",
    }
}

/// Partitions named by a set of instants' metadata, sorted.
pub fn sorted(partitions: impl IntoIterator<Item = String>) -> Vec<String> {
    partitions
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

#[cfg(test)]
mod tests;
