//! One instant on the timeline and the file names that carry it (Hudi's `HoodieInstant`,
//! `InstantFileNameParserV1/V2`).

use std::cmp::Ordering;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Requested,
    Inflight,
    Completed,
}

impl State {
    pub fn as_str(&self) -> &'static str {
        match self {
            State::Requested => "requested",
            State::Inflight => "inflight",
            State::Completed => "completed",
        }
    }
}

/// Actions as they appear in file names.
pub mod action {
    pub const COMMIT: &str = "commit";
    pub const DELTA_COMMIT: &str = "deltacommit";
    pub const REPLACE_COMMIT: &str = "replacecommit";
    pub const CLUSTERING: &str = "clustering";
    pub const COMPACTION: &str = "compaction";
    pub const LOG_COMPACTION: &str = "logcompaction";
    pub const CLEAN: &str = "clean";
    pub const ROLLBACK: &str = "rollback";
    pub const SAVEPOINT: &str = "savepoint";
    pub const RESTORE: &str = "restore";
    pub const INDEXING: &str = "indexing";
    pub const SCHEMA_COMMIT: &str = "schemacommit";

    pub const ALL: &[&str] = &[
        COMMIT,
        DELTA_COMMIT,
        REPLACE_COMMIT,
        CLUSTERING,
        COMPACTION,
        LOG_COMPACTION,
        CLEAN,
        ROLLBACK,
        SAVEPOINT,
        RESTORE,
        INDEXING,
        SCHEMA_COMMIT,
    ];

    /// The action a pending action completes as.
    pub fn completed_as(pending: &str) -> &str {
        match pending {
            COMPACTION => COMMIT,
            CLUSTERING => REPLACE_COMMIT,
            LOG_COMPACTION => DELTA_COMMIT,
            other => other,
        }
    }

    /// Completed actions that change the data of the table.
    pub fn is_write(completed: &str) -> bool {
        matches!(completed, COMMIT | DELTA_COMMIT | REPLACE_COMMIT)
    }
}

/// An instant as found on storage. `action` is the action of its current state (a finished
/// compaction is a `commit`); `plan_action` keeps what it was requested as when that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Instant {
    pub requested_time: String,
    pub completion_time: Option<String>,
    pub action: String,
    pub plan_action: Option<String>,
    pub state: State,
    /// Where the completion time came from: the file name (v8+), the file's modification
    /// time (v6), or the archive entry.
    pub completion_source: Option<&'static str>,
    /// The file carrying the current state (relative to the base path); empty for archived.
    pub file: String,
    /// The `.requested` file, when present (plans live there).
    pub requested_file: Option<String>,
    pub archived: bool,
}

impl Instant {
    pub fn is_completed(&self) -> bool {
        self.state == State::Completed
    }

    /// The action the instant was requested as (`compaction` for a finished compaction).
    pub fn requested_action(&self) -> &str {
        self.plan_action.as_deref().unwrap_or(&self.action)
    }

    pub fn is_write(&self) -> bool {
        self.is_completed() && action::is_write(&self.action)
    }

    pub fn is_compaction(&self) -> bool {
        self.requested_action() == action::COMPACTION
    }

    pub fn is_clustering(&self) -> bool {
        self.requested_action() == action::CLUSTERING
    }
}

impl PartialOrd for Instant {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Instant {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_instant_times(&self.requested_time, &other.requested_time)
            .then(self.state.cmp(&other.state))
            .then(self.action.cmp(&other.action))
    }
}

/// Java compares 14-digit (second precision) instants as if suffixed with `999`.
pub fn compare_instant_times(a: &str, b: &str) -> Ordering {
    normalize_time(a).cmp(&normalize_time(b))
}

pub fn normalize_time(t: &str) -> std::borrow::Cow<'_, str> {
    if t.len() == 14 && t.bytes().all(|b| b.is_ascii_digit()) {
        std::borrow::Cow::Owned(format!("{t}999"))
    } else {
        std::borrow::Cow::Borrowed(t)
    }
}

/// One timeline file name, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstantFileName {
    pub requested_time: String,
    pub completion_time: Option<String>,
    pub action: String,
    pub state: State,
}

fn is_time(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Parses `<t>.<action>[.<state>]`, `<t>.inflight` and (layout 2) `<t>_<c>.<action>`.
/// Anything else (`hoodie.properties`, `.crc` files, directories) gives `None`.
pub fn parse_instant_file_name(name: &str) -> Option<InstantFileName> {
    if name.ends_with(".crc") {
        return None;
    }
    let mut parts = name.split('.');
    let times = parts.next()?;
    let second = parts.next()?;
    let third = parts.next();
    if parts.next().is_some() {
        return None;
    }
    let (requested, completion) = match times.split_once('_') {
        Some((r, c)) if is_time(r) && is_time(c) => (r, Some(c)),
        Some(_) => return None,
        None if is_time(times) => (times, None),
        None => return None,
    };
    let (action, state) = match (second, third) {
        ("inflight", None) => (action::COMMIT, State::Inflight),
        (a, None) => (a, State::Completed),
        (a, Some("requested")) => (a, State::Requested),
        (a, Some("inflight")) => (a, State::Inflight),
        _ => return None,
    };
    if !action::ALL.contains(&action) {
        return None;
    }
    if completion.is_some() && state != State::Completed {
        return None;
    }
    Some(InstantFileName {
        requested_time: requested.to_string(),
        completion_time: completion.map(str::to_string),
        action: action.to_string(),
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_layouts() {
        let c = parse_instant_file_name("20260307162434124_20260307162438653.commit").unwrap();
        assert_eq!(c.completion_time.as_deref(), Some("20260307162438653"));
        assert_eq!(c.state, State::Completed);
        let i = parse_instant_file_name("20260307162434124.inflight").unwrap();
        assert_eq!((i.action.as_str(), i.state), ("commit", State::Inflight));
        let r = parse_instant_file_name("20260307162618152.compaction.requested").unwrap();
        assert_eq!(
            (r.action.as_str(), r.state),
            ("compaction", State::Requested)
        );
        assert!(parse_instant_file_name("hoodie.properties").is_none());
        assert!(parse_instant_file_name("20260307162618152.commit.crc").is_none());
    }
}
