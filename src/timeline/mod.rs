//! The timeline: every instant of a table, active and archived, in requested-time order
//! (Hudi's `HoodieActiveTimeline`, `HoodieArchivedTimeline`, v8+ `LSMTimeline`).
//!
//! Building it from a listing is pure ([`Timeline::from_listing`]); loading the archive or
//! the LSM history needs storage and lives in [`history`].

pub mod archive;
pub mod history;
pub mod instant;
pub mod metadata;
pub mod time;
pub mod write;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;

pub use instant::{action, compare_instant_times, Instant, State};
pub use metadata::{CommitMetadata, WriteStat};

use crate::config::TableConfig;
use crate::storage::{join, ObjectMeta};

#[derive(Debug, Clone, Default, Serialize)]
pub struct Timeline {
    /// Sorted by requested time. Archived instants (when loaded) come first.
    pub instants: Vec<Instant>,
    /// Content of archived instants, by requested time: archives carry it inline.
    #[serde(skip)]
    pub archived_content: HashMap<String, serde_json::Value>,
    /// Whether the archive / LSM history was loaded (it is on demand).
    pub history_loaded: bool,
}

/// Formats epoch milliseconds as a Hudi instant time (UTC).
pub fn instant_time_from_millis(ms: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp_millis(ms).map(|d| d.format("%Y%m%d%H%M%S%3f").to_string())
}

impl Timeline {
    /// Builds the active timeline from the objects listed in the timeline directory.
    pub fn from_listing(files: &[ObjectMeta], config: &TableConfig) -> Timeline {
        let mut by_time: BTreeMap<String, Vec<(instant::InstantFileName, &ObjectMeta)>> =
            BTreeMap::new();
        for f in files.iter().filter(|f| !f.is_dir) {
            if let Some(parsed) = instant::parse_instant_file_name(f.name()) {
                by_time
                    .entry(parsed.requested_time.clone())
                    .or_default()
                    .push((parsed, f));
            }
        }
        let mut instants = Vec::with_capacity(by_time.len());
        for (requested_time, mut entries) in by_time {
            entries.sort_by_key(|(p, _)| p.state);
            let requested_file = entries
                .iter()
                .find(|(p, _)| p.state == State::Requested)
                .map(|(_, m)| join(&config.timeline_dir, m.name()));
            let pending_action = entries
                .iter()
                .find(|(p, _)| p.state != State::Completed)
                .map(|(p, _)| p.action.clone());
            let Some((last, meta)) = entries.last() else {
                continue;
            };
            let (completion_time, completion_source) = match (&last.completion_time, last.state) {
                (Some(c), _) => (Some(c.clone()), Some("file_name")),
                (None, State::Completed) => {
                    match meta.last_modified_ms.and_then(instant_time_from_millis) {
                        Some(c) => (Some(c), Some("file_modification_time")),
                        None => (None, None),
                    }
                }
                _ => (None, None),
            };
            let plan_action =
                pending_action.filter(|p| p != &last.action && last.state == State::Completed);
            instants.push(Instant {
                requested_time,
                completion_time,
                action: last.action.clone(),
                plan_action,
                state: last.state,
                completion_source,
                file: join(&config.timeline_dir, meta.name()),
                requested_file,
                archived: false,
            });
        }
        instants.sort();
        Timeline {
            instants,
            archived_content: HashMap::new(),
            history_loaded: false,
        }
    }

    /// Adds archived instants (never replacing an active one).
    pub fn add_archived(&mut self, archived: Vec<(Instant, Option<serde_json::Value>)>) {
        let active: std::collections::HashSet<String> = self
            .instants
            .iter()
            .map(|i| i.requested_time.clone())
            .collect();
        for (inst, content) in archived {
            if active.contains(&inst.requested_time) {
                continue;
            }
            if let Some(c) = content {
                self.archived_content.insert(inst.requested_time.clone(), c);
            }
            self.instants.push(inst);
        }
        self.instants.sort();
        self.history_loaded = true;
    }

    pub fn completed(&self) -> impl DoubleEndedIterator<Item = &Instant> {
        self.instants.iter().filter(|i| i.is_completed())
    }

    /// Completed commits, delta commits and replace commits (compaction and clustering
    /// included): the instants that carry data.
    pub fn completed_writes(&self) -> impl DoubleEndedIterator<Item = &Instant> {
        self.instants.iter().filter(|i| i.is_write())
    }

    pub fn completed_writes_as_of<'a>(
        &'a self,
        as_of: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Instant> + 'a {
        self.completed_writes().filter(move |i| {
            as_of.is_none_or(|t| compare_instant_times(&i.requested_time, t).is_le())
        })
    }

    pub fn latest_completed_write(&self) -> Option<&Instant> {
        self.completed_writes().last()
    }

    pub fn get(&self, requested_time: &str) -> Option<&Instant> {
        self.instants
            .iter()
            .find(|i| i.requested_time == requested_time)
    }

    /// Completed write with this requested time.
    pub fn completed_write(&self, requested_time: &str) -> Option<&Instant> {
        self.get(requested_time).filter(|i| i.is_write())
    }

    pub fn pending(&self) -> impl Iterator<Item = &Instant> {
        self.instants.iter().filter(|i| !i.is_completed())
    }

    /// The earliest instant of the active timeline: Java treats anything older as completed
    /// and archived.
    pub fn active_start(&self) -> Option<&str> {
        self.instants
            .iter()
            .find(|i| !i.archived)
            .map(|i| i.requested_time.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.instants.is_empty()
    }
}

/// Which instants a query may see, and when each completed. Built from the timeline for a
/// snapshot, a time-travel instant, or an incremental range; used by the file-system view
/// (which files count) and by log readers (which blocks count).
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Visibility {
    committed: HashMap<String, Option<String>>,
    /// Instants older than this were archived before the timeline was read: Java treats
    /// them as completed (`containsOrBeforeTimelineStarts`).
    archived_before: Option<String>,
    /// Requested-time upper bound (time travel); `None` = everything completed.
    upper: Option<String>,
}

impl Visibility {
    /// Completion time (or the instant itself when unknown) of a visible completed write.
    pub fn completion_of(&self, instant: &str) -> Option<Option<String>> {
        if let Some(c) = self.committed.get(instant) {
            return Some(c.clone());
        }
        match &self.archived_before {
            Some(start)
                if compare_instant_times(instant, start).is_lt()
                    && !self.is_after_upper_bound(instant) =>
            {
                Some(Some(instant.to_string()))
            }
            _ => None,
        }
    }

    /// The writes of `instants` alone, as they are here (an incremental range's).
    pub fn only(&self, instants: &std::collections::HashSet<String>) -> Visibility {
        Visibility {
            committed: (self.committed.iter())
                .filter(|(i, _)| instants.contains(*i))
                .map(|(i, c)| (i.clone(), c.clone()))
                .collect(),
            archived_before: None,
            upper: self.upper.clone(),
        }
    }

    pub fn is_committed(&self, instant: &str) -> bool {
        self.completion_of(instant).is_some()
    }

    pub fn is_after_upper_bound(&self, instant: &str) -> bool {
        self.upper
            .as_deref()
            .is_some_and(|u| compare_instant_times(instant, u).is_gt())
    }

    pub fn upper_bound(&self) -> Option<&str> {
        self.upper.as_deref()
    }

    /// The instant the read is as of: the time-travel bound, else the latest visible write.
    /// Hudi's log scanners skip blocks (command blocks too) written after it.
    pub fn reads_as_of(&self) -> Option<&str> {
        self.upper.as_deref().or_else(|| {
            self.committed
                .keys()
                .max_by(|a, b| compare_instant_times(a, b))
                .map(String::as_str)
        })
    }

    /// Requested times of the visible completed writes.
    pub fn instants(&self) -> impl Iterator<Item = &str> {
        self.committed.keys().map(String::as_str)
    }
}

impl Timeline {
    /// Completed writes with a requested time at or before `as_of` (all when `None`).
    pub fn visibility_as_of(&self, as_of: Option<&str>) -> Visibility {
        Visibility {
            committed: self
                .completed_writes_as_of(as_of)
                .map(|i| (i.requested_time.clone(), i.completion_time.clone()))
                .collect(),
            archived_before: if self.history_loaded {
                None
            } else {
                self.active_start().map(str::to_string)
            },
            upper: as_of.map(str::to_string),
        }
    }

    /// Completed writes that completed at or before `end` (v8+ incremental upper bound).
    pub fn visibility_completed_by(&self, end: &str) -> Visibility {
        let committed: HashMap<String, Option<String>> = self
            .completed_writes()
            .filter(|i| i.completion_time.as_deref().unwrap_or(&i.requested_time) <= end)
            .map(|i| (i.requested_time.clone(), i.completion_time.clone()))
            .collect();
        let upper = committed.keys().max().cloned();
        Visibility {
            committed,
            archived_before: if self.history_loaded {
                None
            } else {
                self.active_start().map(str::to_string)
            },
            upper,
        }
    }
}

/// A Merge-On-Read table's timeline of these instant file names (unit tests).
#[cfg(test)]
pub(crate) fn test_timeline(names: &[&str]) -> Timeline {
    let cfg = crate::config::TableConfig::parse(
        "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n",
        "p",
    )
    .unwrap();
    let files: Vec<ObjectMeta> = names
        .iter()
        .map(|n| ObjectMeta::file(format!(".hoodie/timeline/{n}"), 1))
        .collect();
    Timeline::from_listing(&files, &cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_states_and_keeps_plan_action() {
        let cfg = crate::config::TableConfig::parse(
            "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n",
            "p",
        )
        .unwrap();
        let files: Vec<ObjectMeta> = [
            "20260307162618152.compaction.requested",
            "20260307162618152.compaction.inflight",
            "20260307162618152_20260307162619230.commit",
            "20260307162620509.deltacommit.requested",
        ]
        .iter()
        .map(|n| ObjectMeta::file(format!(".hoodie/timeline/{n}"), 1))
        .collect();
        let tl = Timeline::from_listing(&files, &cfg);
        assert_eq!(tl.instants.len(), 2);
        let c = &tl.instants[0];
        assert_eq!(
            (c.action.as_str(), c.plan_action.as_deref(), c.state),
            ("commit", Some("compaction"), State::Completed)
        );
        assert_eq!(c.completion_time.as_deref(), Some("20260307162619230"));
        assert_eq!(tl.instants[1].state, State::Requested);
    }
}
