//! Which metadata instants count, checked against the data timeline (docs/hudi-format.md §8.3):
//! the metadata table must be in sync with the data table's latest commit, and only blocks of
//! valid instants are merged (Java `getValidInstantTimestamps`).

use std::collections::HashSet;

use super::table::{INIT_INSTANT_PREFIX, METADATA_DIR};
use crate::config::{BaseFileFormat, KeyGeneratorType, TableConfig};
use crate::error::{HudiError, Result};
use crate::storage::join;
use crate::timeline::{action, compare_instant_times, State, Timeline, Visibility};

/// The metadata table must be what Hudi writes: MOR, HFile base files, its own key generator.
pub(super) fn check_config(c: &TableConfig) -> Result<()> {
    let ok = c.is_mor()
        && c.base_file_format == BaseFileFormat::Hfile
        && c.key_generator == KeyGeneratorType::HoodieTableMetadata;
    if ok {
        return Ok(());
    }
    Err(HudiError::corrupt(
        join(METADATA_DIR, crate::config::PROPERTIES_FILE),
        format!(
            "not a metadata table: {} with {:?} base files and key generator {:?}",
            c.table_type.as_str(),
            c.base_file_format,
            c.key_generator
        ),
    ))
}

/// The metadata table must know the data table's latest commit: a metadata delta commit of
/// the same instant, or an initialization that completed after it (or it was archived out of
/// the metadata timeline long ago). Otherwise it is behind and would miss files. (Java's
/// reader does not check; every writer, Java's and ours, completes the metadata delta
/// commit before the data commit, so a table listed data timeline first always passes.)
pub(super) fn check_in_sync(data: &Timeline, mdt: &Timeline) -> Result<()> {
    let Some(latest) = data.latest_completed_write() else {
        return Ok(());
    };
    let t = latest.requested_time.as_str();
    let has_delta_commit = mdt
        .get(t)
        .is_some_and(|i| i.is_completed() && i.action == action::DELTA_COMMIT);
    // The first initialization bootstraps `files` (later ones add other partitions).
    let completed_at = latest.completion_time.as_deref().unwrap_or(t);
    let files_init = mdt
        .completed()
        .find(|i| i.requested_time.starts_with(INIT_INSTANT_PREFIX));
    let initialized_after = files_init
        .and_then(|i| i.completion_time.as_deref())
        .is_some_and(|c| compare_instant_times(c, completed_at).is_gt());
    let archived = mdt
        .active_start()
        .is_some_and(|start| compare_instant_times(t, start).is_lt());
    if has_delta_commit || initialized_after || archived {
        return Ok(());
    }
    Err(HudiError::corrupt(
        join(METADATA_DIR, ".hoodie"),
        format!("the metadata table is behind the data table: no completed metadata delta commit for the latest data commit {t}"),
    ))
}

/// §8.3 (Java `HoodieTableMetadataUtil.getValidInstantTimestamps`), without rolled-back
/// instants (see the module docs).
pub(super) fn valid_instants(data: &Timeline, mdt: &Timeline) -> HashSet<String> {
    let pending_on_data: HashSet<&str> =
        data.pending().map(|i| i.requested_time.as_str()).collect();
    let mut valid: HashSet<String> = data.completed().map(|i| i.requested_time.clone()).collect();
    for i in mdt.completed() {
        let t = i.requested_time.as_str();
        let counts = match i.action.as_str() {
            action::DELTA_COMMIT => {
                !pending_on_data.contains(t) || t.starts_with(INIT_INSTANT_PREFIX)
            }
            action::ROLLBACK | action::RESTORE => true,
            _ => false,
        };
        if counts {
            valid.insert(t.to_string());
        }
    }
    valid
}

/// Metadata delta commits whose data instant is not completed. Ones older than the data
/// timeline's active start were archived there, not failed (Java `isBeforeTimelineStarts`):
/// writers that archive without cleaning the metadata table (hudi-rs 0.6) leave many.
pub(super) fn orphans(data: &Timeline, mdt: &Timeline) -> Vec<String> {
    let archived = |t: &str| {
        data.active_start()
            .is_some_and(|start| compare_instant_times(t, start).is_lt())
    };
    mdt.completed()
        .filter(|i| i.action == action::DELTA_COMMIT)
        .map(|i| i.requested_time.as_str())
        .filter(|t| !t.starts_with(INIT_INSTANT_PREFIX) && !archived(t))
        .filter(|t| !data.get(t).is_some_and(|d| d.is_completed()))
        .map(str::to_string)
        .collect()
}

/// Metadata instants whose files count: valid delta commits, and compactions (their base
/// files). Other completed instants are treated as not completed.
pub(super) fn visibility(mdt: &Timeline, valid: &HashSet<String>) -> Visibility {
    let mut t = mdt.clone();
    for i in t.instants.iter_mut().filter(|i| i.is_completed()) {
        let counts = match i.action.as_str() {
            action::COMMIT => true,
            action::DELTA_COMMIT => valid.contains(&i.requested_time),
            _ => false,
        };
        if !counts {
            i.state = State::Inflight;
        }
    }
    t.visibility_as_of(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeline(names: &[&str]) -> Timeline {
        crate::timeline::test_timeline(names)
    }

    #[test]
    fn metadata_commits_of_archived_data_instants_are_not_orphans() {
        // 001 was archived out of the data timeline; 005 failed after its metadata commit.
        let data = timeline(&["003_004.deltacommit", "005.deltacommit.inflight"]);
        let mdt = timeline(&[
            "00000000000000000_002.deltacommit",
            "001_002.deltacommit",
            "003_004.deltacommit",
            "005_006.deltacommit",
        ]);
        assert_eq!(orphans(&data, &mdt), ["005"]);
    }
}
