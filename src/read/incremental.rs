//! Which commits an incremental query `(start, end]` returns, and which snapshot it reads
//! them from — as Hudi does.
//!
//! Bounds are completion times for table versions 8+ (Hudi 1.x) and requested times for
//! version 6. Records come from the file slices as of the range's end, filtered to the
//! commits in range. Hudi falls back to a full table scan (the latest snapshot filtered to
//! the commits in range) when it cannot read the range's files: for 1.x when the range
//! holds archived commits; for 0.x when the start is archived or files the range's commits
//! wrote are gone (cleaned). We do the same; the plan notes say so.

use std::collections::HashSet;

use crate::error::Result;
use crate::meta_client::MetaClient;
use crate::timeline::{compare_instant_times, Timeline, Visibility};

pub struct IncrementalRange {
    pub commits: HashSet<String>,
    pub visibility: Visibility,
    pub note: Option<String>,
}

/// The commits of `(start, end]` and the snapshot to read them from.
pub async fn range(
    client: &MetaClient,
    timeline: &Timeline,
    start: Option<&str>,
    end: Option<&str>,
) -> Result<IncrementalRange> {
    let by_completion = client.config().has_completion_times();
    let in_range: Vec<_> = timeline
        .completed_writes()
        .filter(|i| {
            let t = if by_completion {
                i.completion_time.as_deref().unwrap_or(&i.requested_time)
            } else {
                &i.requested_time
            };
            start.is_none_or(|s| compare_instant_times(t, s).is_gt())
                && end.is_none_or(|e| compare_instant_times(t, e).is_le())
        })
        .collect();
    let commits: HashSet<String> = in_range.iter().map(|i| i.requested_time.clone()).collect();

    let fallback = if by_completion {
        in_range
            .iter()
            .any(|i| i.archived)
            .then_some("the range holds archived commits")
    } else if in_range.iter().any(|i| i.archived) || start_archived(timeline, start) {
        Some("the start instant is archived")
    } else if range_files_missing(client, &in_range).await? {
        Some("files written in the range were cleaned")
    } else {
        None
    };
    if let Some(why) = fallback {
        return Ok(IncrementalRange {
                commits,
                visibility: timeline.visibility_as_of(None),
                note: Some(format!(
                    "incremental: {why}, so as Hudi does the latest snapshot is scanned for records of the range's commits"
                )),
            });
    }
    let visibility = match (end, by_completion) {
        (Some(e), true) => timeline.visibility_completed_by(e),
        (Some(e), false) => timeline.visibility_as_of(Some(e)),
        (None, _) => timeline.visibility_as_of(None),
    };
    Ok(IncrementalRange {
        commits,
        visibility,
        note: None,
    })
}

/// Whether any file the commits wrote is no longer on storage.
async fn range_files_missing(
    client: &MetaClient,
    commits: &[&crate::timeline::Instant],
) -> Result<bool> {
    if commits.is_empty() {
        return Ok(false);
    }
    let metas = client.commit_metadata_of(commits).await?;
    let written: Vec<String> = metas
        .iter()
        .flat_map(|m| {
            m.write_stats()
                .filter_map(|(_, s)| s.path.clone())
                .collect::<Vec<_>>()
        })
        .collect();
    if written.is_empty() {
        return Ok(false);
    }
    let present: HashSet<String> = crate::snapshot::listing::list_data_files(client)
        .await?
        .into_iter()
        .map(|(_, m)| m.path)
        .collect();
    Ok(written
        .iter()
        .any(|p| !present.contains(p.trim_start_matches('/'))))
}

/// 0.x `isBeforeTimelineStarts`: the start precedes the first active commit while older
/// commits were archived.
fn start_archived(timeline: &Timeline, start: Option<&str>) -> bool {
    let has_archived = timeline.completed_writes().any(|i| i.archived);
    let first_active = timeline.completed_writes().find(|i| !i.archived);
    has_archived
        && match (start, first_active) {
            (None, _) => true,
            (Some(s), Some(f)) => compare_instant_times(s, &f.requested_time).is_lt(),
            (Some(_), None) => true,
        }
}
