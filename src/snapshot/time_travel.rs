//! Time travel: the timeline a read as of an instant needs, and Hudi's checks before it.

use std::sync::Arc;

use crate::error::{HudiError, Result};
use crate::meta_client::MetaClient;
use crate::timeline::{compare_instant_times, Timeline};

/// The timeline a read reaching back to `earliest` (an instant time) needs: the active
/// one, with the archived history loaded when `earliest` is before it.
pub async fn timeline_reaching(
    client: &MetaClient,
    earliest: Option<&str>,
) -> Result<Arc<Timeline>> {
    let timeline = client.timeline();
    match (earliest, timeline.active_start()) {
        (Some(t), Some(active)) if compare_instant_times(t, active).is_lt() => {
            client.load_history().await
        }
        _ => Ok(timeline),
    }
}

/// The timeline of a snapshot as of `as_of` (an instant time; `asked` as the caller wrote
/// it), after Hudi's checks: the table had a commit by then, and nothing the read needs was
/// cleaned.
pub async fn timeline_as_of(
    client: &MetaClient,
    as_of: Option<&str>,
    asked: Option<&str>,
) -> Result<Arc<Timeline>> {
    let mut timeline = timeline_reaching(client, as_of).await?;
    let Some(t) = as_of else {
        return Ok(timeline);
    };
    // Before the first commit there is no table to read: saying so beats 0 rows, which look
    // like a table whose rows were all deleted (a time zone mix-up, typically).
    if timeline.completed_writes_as_of(Some(t)).next().is_none() {
        if !timeline.history_loaded && timeline.completed_writes().next().is_some() {
            timeline = client.load_history().await?;
        }
        if let Some(first) = timeline.completed_writes().next() {
            if timeline.completed_writes_as_of(Some(t)).next().is_none() {
                return Err(HudiError::invalid(format!(
                    "asOf {:?} (instant {t}) is before the table's first commit {}",
                    asked.unwrap_or(t),
                    first.requested_time
                )));
            }
        }
    }
    validate_time_travel(client, t).await?;
    Ok(timeline)
}

/// Hudi's checks before a time-travel read (`TimelineUtils.validateTimestampAsOf`): the
/// instant must precede every incomplete commit, and the cleaner must not have removed
/// the files it needs.
pub async fn validate_time_travel(client: &MetaClient, as_of: &str) -> Result<()> {
    use crate::timeline::{action, compare_instant_times};
    let timeline = client.timeline();
    let first_incomplete = timeline.pending().find(|i| {
        matches!(
            i.requested_action(),
            action::COMMIT | action::DELTA_COMMIT | action::REPLACE_COMMIT | action::COMPACTION
        )
    });
    if let Some(i) = first_incomplete {
        if compare_instant_times(as_of, &i.requested_time).is_ge() {
            return Err(HudiError::invalid(format!(
                "time travel's timestamp '{as_of}' must be earlier than the first incomplete commit timestamp '{}'",
                i.requested_time
            )));
        }
    }
    let Some(clean) = timeline
        .completed()
        .rfind(|i| i.action == action::CLEAN && !i.archived)
    else {
        return Ok(());
    };
    let content = client.instant_content(clean).await?;
    let retain = content
        .get("earliestCommitToRetain")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty());
    let (limit, message) = match retain {
        Some(r) => (r.to_string(), "the cleaner cleaned up the timestamp of interest; retain more commits with the cleaner for time travel to work"),
        None => match timeline.completed_writes().find(|i| !i.archived) {
            Some(first) => (first.requested_time.clone(), "commits before the active timeline were cleaned or archived"),
            None => return Ok(()),
        },
    };
    if compare_instant_times(&limit, as_of).is_gt() {
        return Err(HudiError::invalid(format!(
            "{message} (as of {as_of}, earliest retained {limit}, clean {})",
            clean.requested_time
        )));
    }
    Ok(())
}
