//! When a Merge-On-Read table is due a compaction and which file slices the plan takes, as
//! Java's `ScheduleCompactionActionExecutor` and `HoodieCompactionPlanGenerator` with the
//! default `LogFileSizeBasedCompactionStrategy` decide (docs/hudi-format.md §3.6). Pure:
//! the timeline, the latest slices and the settings in, a decision and operations out.

use std::collections::{BTreeMap, HashSet};

use crate::error::{HudiError, Result};
use crate::file_group::compaction::Operation;
use crate::file_group::FileSlice;
use crate::timeline::instant::{action, compare_instant_times};
use crate::timeline::Timeline;

pub const INLINE: &str = "hoodie.compact.inline";
pub const SCHEDULE_INLINE: &str = "hoodie.compact.schedule.inline";
pub const ASYNC: &str = "hoodie.datasource.compaction.async.enable";
pub const MAX_DELTA_COMMITS: &str = "hoodie.compact.inline.max.delta.commits";
pub const MAX_DELTA_SECONDS: &str = "hoodie.compact.inline.max.delta.seconds";
pub const TRIGGER_STRATEGY: &str = "hoodie.compact.inline.trigger.strategy";
pub const STRATEGY: &str = "hoodie.compaction.strategy";
pub const TARGET_IO: &str = "hoodie.compaction.target.io";
pub const LOG_SIZE_THRESHOLD: &str = "hoodie.compaction.logfile.size.threshold";

/// Java's `CompactionTriggerStrategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Delta commits since the last compaction reach the maximum.
    NumCommits,
    /// The same, counted from the last compaction requested (pending ones included).
    NumCommitsAfterLastRequest,
    /// Seconds since the last compaction (or the first delta commit) reach the maximum.
    TimeElapsed,
    NumOrTime,
    NumAndTime,
}

const TRIGGERS: &[(&str, Trigger)] = &[
    ("NUM_COMMITS", Trigger::NumCommits),
    (
        "NUM_COMMITS_AFTER_LAST_REQUEST",
        Trigger::NumCommitsAfterLastRequest,
    ),
    ("TIME_ELAPSED", Trigger::TimeElapsed),
    ("NUM_OR_TIME", Trigger::NumOrTime),
    ("NUM_AND_TIME", Trigger::NumAndTime),
];

/// Which slices a plan takes and in which order (`hoodie.compaction.strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Largest logs first, bounded by `hoodie.compaction.target.io` (Java's default).
    LogFileSizeBased,
    /// Every slice with log files, as found.
    Unbounded,
}

const STRATEGIES: &[(&str, Strategy)] = &[
    (
        "LogFileSizeBasedCompactionStrategy",
        Strategy::LogFileSizeBased,
    ),
    ("UnBoundedCompactionStrategy", Strategy::Unbounded),
];

/// The compaction settings of one run, parsed once.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionConfig {
    /// Schedule and execute after a write's commit (Merge-On-Read tables).
    pub inline: bool,
    /// Schedule after a write's commit, for another run (or Spark) to execute.
    pub schedule_inline: bool,
    pub max_delta_commits: usize,
    pub max_delta_seconds: u64,
    pub trigger: Trigger,
    pub strategy: Strategy,
    /// Java's bound on the MiB a plan reads and writes.
    pub target_io_mb: u64,
    /// Slices with fewer log bytes are left out.
    pub log_size_threshold: u64,
}

impl CompactionConfig {
    /// The delta commits a count-based trigger (NUM_COMMITS, NUM_AND_TIME) waits for, which
    /// archival keeps on the timeline; `None` for the other triggers.
    pub fn delta_commits_trigger(&self) -> Option<usize> {
        matches!(self.trigger, Trigger::NumCommits | Trigger::NumAndTime)
            .then_some(self.max_delta_commits)
    }

    /// The settings among `given` (Java's names). Inline compaction is on unless
    /// `hoodie.compact.inline` says otherwise or `hoodie.datasource.compaction.async.enable`
    /// is given: Spark's datasource forces it on for batch writes to Merge-On-Read tables
    /// under the same rule.
    pub fn parse(given: &BTreeMap<String, String>) -> Result<CompactionConfig> {
        let own = |k: &str| crate::config::option_value(given, k);
        let flag = |k: &str| crate::config::option_flag(given, k);
        let number = |k: &str, default: u64, min: u64| -> Result<u64> {
            own(k).map_or(Ok(default), |v| {
                v.parse::<u64>().ok().filter(|n| *n >= min).ok_or_else(|| {
                    HudiError::invalid(format!("{k}={v:?}: expected a whole number from {min}"))
                })
            })
        };
        let named = |k: &str, names: &[&str]| -> Result<Option<usize>> {
            let Some(v) = own(k) else { return Ok(None) };
            // Java names strategies by class; the simple name is taken too.
            let simple = v.rsplit('.').next().unwrap_or(v);
            match names.iter().position(|n| n.eq_ignore_ascii_case(simple)) {
                Some(i) => Ok(Some(i)),
                None => Err(HudiError::invalid(format!(
                    "{k}={v:?}: expected one of {}",
                    names.join(", ")
                ))),
            }
        };
        let asynchronous = flag(ASYNC)?;
        let inline = match flag(INLINE)? {
            Some(b) => b,
            None => asynchronous.is_none(),
        };
        let trigger = named(TRIGGER_STRATEGY, &names_of(TRIGGERS))?
            .map_or(Trigger::NumCommits, |i| TRIGGERS[i].1);
        let strategy = named(STRATEGY, &names_of(STRATEGIES))?
            .map_or(Strategy::LogFileSizeBased, |i| STRATEGIES[i].1);
        Ok(CompactionConfig {
            inline,
            schedule_inline: flag(SCHEDULE_INLINE)?.unwrap_or(false),
            max_delta_commits: number(MAX_DELTA_COMMITS, 5, 1)? as usize,
            max_delta_seconds: number(MAX_DELTA_SECONDS, 3600, 0)?,
            trigger,
            strategy,
            target_io_mb: number(TARGET_IO, 500 * 1024, 0)?,
            log_size_threshold: number(LOG_SIZE_THRESHOLD, 0, 0)?,
        })
    }
}

fn names_of<T>(all: &[(&'static str, T)]) -> Vec<&'static str> {
    all.iter().map(|(n, _)| *n).collect()
}

/// Whether a compaction at `instant` is due (Java's `needCompact`): delta commits (in any
/// state) after the last completed commit or replace commit of the active timeline — or,
/// for NUM_COMMITS_AFTER_LAST_REQUEST, after the last compaction requested — and the
/// seconds from that instant (the first delta commit when there is none) to `instant`.
/// `uncounted`: delta commits the timeline does not show yet (a write's own, just
/// committed). `Err` says why not.
pub fn due(
    timeline: &Timeline,
    instant: &str,
    config: &CompactionConfig,
    uncounted: usize,
) -> std::result::Result<(), String> {
    let active: Vec<_> = timeline.instants.iter().filter(|i| !i.archived).collect();
    let deltas: Vec<&str> = active
        .iter()
        .filter(|i| i.requested_action() == action::DELTA_COMMIT)
        .map(|i| i.requested_time.as_str())
        .collect();
    let latest = |pick: &dyn Fn(&crate::timeline::Instant) -> bool| {
        active
            .iter()
            .filter(|i| pick(i))
            .map(|i| i.requested_time.as_str())
            .max_by(|a, b| compare_instant_times(a, b))
    };
    let last_compaction = latest(&|i| {
        i.is_completed() && (i.action == action::COMMIT || i.action == action::REPLACE_COMMIT)
    });
    let since = |after: Option<&str>| -> (usize, Option<String>) {
        match after {
            Some(c) => (
                deltas
                    .iter()
                    .filter(|t| compare_instant_times(t, c).is_gt())
                    .count(),
                Some(c.to_string()),
            ),
            None => (deltas.len(), deltas.first().map(|t| t.to_string())),
        }
    };
    let (count, from) = match config.trigger {
        Trigger::NumCommitsAfterLastRequest => {
            let requested = latest(&|i| !i.is_completed() && i.is_compaction());
            since(requested.or(last_compaction))
        }
        _ => since(last_compaction),
    };
    let Some(from) = from.or_else(|| (uncounted > 0).then(|| instant.to_string())) else {
        return Err("no delta commit yet".into());
    };
    let count = count + uncounted;
    let by_count = count >= config.max_delta_commits;
    let elapsed = seconds_between(&from, instant);
    let by_time = elapsed.is_some_and(|s| s >= config.max_delta_seconds as i64);
    let ok = match config.trigger {
        Trigger::NumCommits | Trigger::NumCommitsAfterLastRequest => by_count,
        Trigger::TimeElapsed => by_time,
        Trigger::NumOrTime => by_count || by_time,
        Trigger::NumAndTime => by_count && by_time,
    };
    if ok {
        return Ok(());
    }
    Err(format!(
        "{count} delta commits and {}s since {from} (compacts at {} delta commits{})",
        elapsed.unwrap_or(0),
        config.max_delta_commits,
        match config.trigger {
            Trigger::NumCommits | Trigger::NumCommitsAfterLastRequest => String::new(),
            _ => format!(" / {}s", config.max_delta_seconds),
        }
    ))
}

/// Seconds from instant `a` to instant `b` (same zone, so the difference holds).
fn seconds_between(a: &str, b: &str) -> Option<i64> {
    let parse = |t: &str| {
        let t = crate::timeline::instant::normalize_time(t);
        chrono::NaiveDateTime::parse_from_str(t.get(..14)?, "%Y%m%d%H%M%S").ok()
    };
    Some((parse(b)? - parse(a)?).num_seconds())
}

/// The plan's operations (Java's `generateCompactionPlan`): the latest slices that have log
/// files, leaving out file groups a pending compaction, log compaction or clustering works
/// on, and log files whose delta commit did not complete before `instant` (a write still in
/// flight when the plan is made; its file joins the next slice); ordered and bounded by the
/// strategy.
pub fn operations<'a>(
    slices: impl IntoIterator<Item = &'a FileSlice>,
    busy: &HashSet<(String, String)>,
    instant: &str,
    config: &CompactionConfig,
    max_file_size: u64,
) -> Vec<Operation> {
    let mut ops: Vec<Operation> = slices
        .into_iter()
        .filter(|s| !busy.contains(&(s.partition.clone(), s.file_id.clone())))
        .filter_map(|s| {
            let mut slice = s.clone();
            slice.log_files.retain(|l| {
                let done = l.completion_time.as_deref().unwrap_or(&l.instant);
                compare_instant_times(done, instant).is_lt()
            });
            (!slice.log_files.is_empty()).then(|| Operation::of(&slice))
        })
        .collect();
    if config.strategy == Strategy::Unbounded {
        return ops;
    }
    ops.retain(|op| op.log_bytes() >= config.log_size_threshold);
    // Largest logs first (a stable sort: ties keep the partition order).
    ops.sort_by_key(|op| std::cmp::Reverse(op.log_bytes()));
    // Java's bounded IO: operations are taken until the bound is reached, the one that
    // reaches it included.
    let mut left = config.target_io_mb as i64;
    let mut taken = Vec::with_capacity(ops.len());
    for op in ops {
        let (read, write) = op.io_mb(max_file_size);
        left -= (read + write) as i64;
        taken.push(op);
        if left <= 0 {
            break;
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_group::{BaseFile, LogFile};

    fn timeline(names: &[&str]) -> Timeline {
        crate::timeline::test_timeline(names)
    }

    fn config(pairs: &[(&str, &str)]) -> CompactionConfig {
        let map = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        CompactionConfig::parse(&map).unwrap()
    }

    fn delta(t: u64, done: bool) -> Vec<String> {
        if done {
            vec![format!("{t}_{}.deltacommit", t + 1)]
        } else {
            vec![format!("{t}.deltacommit.inflight")]
        }
    }

    #[test]
    fn defaults_follow_spark_s_datasource() {
        let c = config(&[]);
        assert!(c.inline && !c.schedule_inline);
        assert_eq!((c.max_delta_commits, c.max_delta_seconds), (5, 3600));
        assert_eq!(
            (c.trigger, c.strategy),
            (Trigger::NumCommits, Strategy::LogFileSizeBased)
        );
        assert_eq!(c.target_io_mb, 512_000);
        // Asking for async compaction leaves it to another job, as Spark's writer does.
        assert!(!config(&[(ASYNC, "true")]).inline);
        assert!(!config(&[(ASYNC, "false")]).inline);
        assert!(config(&[(ASYNC, "true"), (INLINE, "true")]).inline);
        assert_eq!(
            config(&[(
                STRATEGY,
                "org.apache.hudi.table.action.compact.strategy.UnBoundedCompactionStrategy"
            )])
            .strategy,
            Strategy::Unbounded
        );
        for (k, v) in [
            (INLINE, "yes"),
            (TRIGGER_STRATEGY, "SOMETIMES"),
            (MAX_DELTA_COMMITS, "0"),
            (STRATEGY, "DayBasedCompactionStrategy"),
        ] {
            let map = [(k.to_string(), v.to_string())].into();
            let e = CompactionConfig::parse(&map).unwrap_err();
            assert!(e.to_string().contains(k), "{e}");
        }
    }

    #[test]
    fn counts_delta_commits_since_the_last_compaction() {
        let mut names: Vec<String> = (0..4)
            .flat_map(|i| delta(20260101000000000 + i * 10, true))
            .collect();
        let refs = |n: &Vec<String>| -> Vec<String> { n.clone() };
        let t = |n: &Vec<String>| timeline(&refs(n).iter().map(String::as_str).collect::<Vec<_>>());
        let at = "20260101000001000";
        let c = config(&[]);
        assert!(due(&t(&names), at, &c, 0).is_err());
        // A write's own delta commit, not on the timeline it started from, counts.
        assert!(due(&t(&names), at, &c, 1).is_ok());
        let every = config(&[(MAX_DELTA_COMMITS, "1")]);
        assert!(due(&timeline(&[]), at, &every, 1).is_ok());
        // A pending delta commit counts too (Java's delta-commit timeline has every state).
        names.extend(delta(20260101000000040, false));
        assert!(due(&t(&names), at, &c, 0).is_ok());
        // A completed compaction starts the count again; a pending one does not.
        names.push("20260101000000045.compaction.requested".into());
        assert!(due(&t(&names), at, &c, 0).is_ok());
        let after_request = config(&[(TRIGGER_STRATEGY, "NUM_COMMITS_AFTER_LAST_REQUEST")]);
        assert!(due(&t(&names), at, &after_request, 0).is_err());
        names.push("20260101000000045_20260101000000046.commit".into());
        assert!(due(&t(&names), at, &c, 0).is_err());
        names.extend(delta(20260101000000050, true));
        assert_eq!(
            due(&t(&names), at, &c, 0).unwrap_err(),
            "1 delta commits and 1s since 20260101000000045 (compacts at 5 delta commits)"
        );
        // Time: an hour after the last compaction, in whole seconds (as Java counts).
        let timed = config(&[(TRIGGER_STRATEGY, "TIME_ELAPSED")]);
        assert!(due(&t(&names), "20260101005959999", &timed, 0).is_err());
        assert!(due(&t(&names), "20260101010000045", &timed, 0).is_ok());
        let both = config(&[(TRIGGER_STRATEGY, "NUM_AND_TIME"), (MAX_DELTA_COMMITS, "1")]);
        assert!(due(&t(&names), "20260101000000999", &both, 0).is_err());
        assert!(due(&t(&names), "20260101010000045", &both, 0).is_ok());
        let either = config(&[(TRIGGER_STRATEGY, "NUM_OR_TIME"), (MAX_DELTA_COMMITS, "1")]);
        assert!(due(&t(&names), "20260101000000999", &either, 0).is_ok());
        assert!(due(&timeline(&[]), at, &c, 0).is_err());
    }

    fn slice(id: &str, logs: &[(u64, u64, Option<&str>)]) -> FileSlice {
        FileSlice {
            partition: "p".into(),
            file_id: id.into(),
            base_instant: "100".into(),
            base_file: BaseFile::parse(&format!("{id}_0-0-0_100.parquet"), 10),
            log_files: logs
                .iter()
                .map(|(t, size, done)| {
                    let mut l = LogFile::parse(&format!(".{id}_{t}.log.1_0-0-0"), *size).unwrap();
                    l.completion_time = done.map(str::to_string);
                    l
                })
                .collect(),
        }
    }

    #[test]
    fn takes_slices_with_logs_completed_before_the_instant_largest_first() {
        let slices = [
            slice("a-0", &[(200, 10, Some("201"))]),
            slice("b-0", &[(200, 30, Some("201")), (300, 5, Some("400"))]),
            slice("c-0", &[]),
            slice("d-0", &[(300, 50, Some("400"))]),
            slice("e-0", &[(200, 99, Some("201"))]),
        ];
        let busy: HashSet<_> = [("p".to_string(), "e-0".to_string())].into();
        let ops = operations(&slices, &busy, "350", &config(&[]), 120 << 20);
        let ids: Vec<&str> = ops.iter().map(|o| o.file_id.as_str()).collect();
        assert_eq!(ids, ["b-0", "a-0"]);
        assert_eq!(
            ops[0].log_files.len(),
            1,
            "the log completed after the plan waits"
        );
        // Tiny files are 0 MiB of IO: a bound of 0 still takes the first slice.
        let one = operations(
            &slices,
            &busy,
            "350",
            &config(&[(TARGET_IO, "0")]),
            120 << 20,
        );
        assert_eq!(one.len(), 1);
        let threshold = operations(
            &slices,
            &busy,
            "350",
            &config(&[(LOG_SIZE_THRESHOLD, "20")]),
            120 << 20,
        );
        assert_eq!(threshold.len(), 1);
        let all = operations(
            &slices,
            &HashSet::new(),
            "500",
            &config(&[(STRATEGY, "UnBoundedCompactionStrategy")]),
            120 << 20,
        );
        let ids: Vec<&str> = all.iter().map(|o| o.file_id.as_str()).collect();
        assert_eq!(ids, ["a-0", "b-0", "d-0", "e-0"]);
    }
}
