//! What a timeline folder holds right now, parsed from one listing: completed instants,
//! pending writes (failed ones, or a live writer's), rollbacks. Writers list the timeline
//! afresh before they decide anything (the handle's timeline may be stale), and roll back,
//! conflict-check and take new instant times from what this says.

use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::meta_client::MetaClient;
use crate::storage::{join, ObjectMeta, Storage};
use crate::timeline::instant::{action, parse_instant_file_name, InstantFileName, State};

/// A timeline directory's instant files, parsed.
pub(crate) struct Listing {
    pub(crate) dir: String,
    pub(crate) files: Vec<(InstantFileName, String)>,
}

impl Listing {
    pub(crate) async fn load(storage: &dyn Storage, dir: &str) -> Result<Listing> {
        Ok(Listing::of_objects(dir, &storage.list(dir, false).await?))
    }

    pub(crate) fn of_timeline(config: &TableConfig, objects: &[ObjectMeta]) -> Listing {
        Listing::of_objects(&config.timeline_dir, objects)
    }

    /// Another timeline folder's listing (the metadata table's).
    pub(crate) fn of_timeline_dir(dir: &str, objects: &[ObjectMeta]) -> Listing {
        Listing::of_objects(dir, objects)
    }

    pub(crate) fn of_objects(dir: &str, objects: &[ObjectMeta]) -> Listing {
        let files = objects
            .iter()
            .filter(|m| !m.is_dir)
            .filter_map(|m| parse_instant_file_name(m.name()).map(|p| (p, m.name().to_string())))
            .collect();
        Listing {
            dir: dir.to_string(),
            files,
        }
    }

    pub(crate) fn times(&self) -> impl Iterator<Item = &str> {
        self.files.iter().flat_map(|(p, _)| {
            std::iter::once(p.requested_time.as_str()).chain(p.completion_time.as_deref())
        })
    }

    /// Files of the instant requested at `time`, with their state.
    pub(crate) fn of(&self, time: &str) -> Vec<(&InstantFileName, String)> {
        self.files
            .iter()
            .filter(|(p, _)| p.requested_time == time)
            .map(|(p, n)| (p, join(&self.dir, n)))
            .collect()
    }

    pub(crate) fn is_completed(&self, time: &str) -> bool {
        self.of(time)
            .iter()
            .any(|(p, _)| p.state == State::Completed)
    }

    /// Whether a commit, delta commit or rollback was left pending (a failed write).
    pub(crate) fn has_failed_writes(&self) -> bool {
        self.pending().iter().any(|(_, a, _)| {
            a == action::ROLLBACK || a == action::COMMIT || a == action::DELTA_COMMIT
        })
    }

    /// Pending commits and delta commits (`(requested time, action)`), oldest first.
    pub(crate) fn pending_writes(&self) -> Vec<(String, String)> {
        self.pending()
            .into_iter()
            .filter(|(_, a, _)| a == action::COMMIT || a == action::DELTA_COMMIT)
            .map(|(t, a, _)| (t, a))
            .collect()
    }

    /// Leaves out of this listing the pending writes `keep` refuses, so a rollback of it
    /// spares them (live writers under the LAZY policy). Pending rollbacks stay.
    pub(crate) fn spare_writes(&mut self, keep: impl Fn(&str) -> bool) {
        let spared: Vec<String> = self
            .pending_writes()
            .into_iter()
            .filter(|(t, _)| !keep(t))
            .map(|(t, _)| t)
            .collect();
        self.files
            .retain(|(p, _)| !spared.contains(&p.requested_time));
    }

    /// Completed instants: (requested time, action, file path).
    pub(crate) fn completed(&self) -> Vec<(String, String, String)> {
        self.files
            .iter()
            .filter(|(p, _)| p.state == State::Completed)
            .map(|(p, n)| {
                (
                    p.requested_time.clone(),
                    p.action.clone(),
                    join(&self.dir, n),
                )
            })
            .collect()
    }

    /// Whether the instant requested at `time` has its inflight file (and no completed one).
    pub(crate) fn is_inflight(&self, time: &str) -> bool {
        self.pending()
            .iter()
            .any(|(t, _, inflight)| t == time && *inflight)
    }

    /// A rollback (in any state) requested after `time`.
    pub(crate) fn rollback_after(&self, time: &str) -> Option<&str> {
        self.files
            .iter()
            .find(|(p, _)| p.action == action::ROLLBACK && p.requested_time.as_str() > time)
            .map(|(p, _)| p.requested_time.as_str())
    }

    /// Pending instants of any action: (requested time, action).
    pub(crate) fn pending_instants(&self) -> Vec<(String, String)> {
        self.pending().into_iter().map(|(t, a, _)| (t, a)).collect()
    }

    /// Every requested and completion time in the listing.
    pub(crate) fn all_times(&self) -> Vec<String> {
        self.times().map(str::to_string).collect()
    }

    /// Instants with no completed file: (requested time, pending action, has inflight).
    pub(crate) fn pending(&self) -> Vec<(String, String, bool)> {
        let mut out: Vec<(String, String, bool)> = Vec::new();
        for (p, _) in &self.files {
            if self.is_completed(&p.requested_time) {
                continue;
            }
            match out.iter_mut().find(|(t, _, _)| *t == p.requested_time) {
                Some(entry) => entry.2 |= p.state == State::Inflight,
                None => out.push((
                    p.requested_time.clone(),
                    p.action.clone(),
                    p.state == State::Inflight,
                )),
            }
        }
        out.sort();
        out
    }
}

/// The timeline folder as it is now (a read only: it can go beside the write's other first
/// reads); [`Listing::of_timeline`] parses it for rollbacks.
/// How long a writer waits before listing again a timeline that shows failed writes, on a
/// store whose listings may lag ([`crate::storage::Capabilities::listing_lags`]).
pub(crate) const CONFIRM_FAILED_MS: u64 = 2000;

/// The timeline listed again a moment later, where the store's listings may lag: a write
/// that completed an instant ago may not show as completed in `objects` yet, and rolling it
/// back as failed would delete an acknowledged commit. (`objects` as they are elsewhere.)
pub(crate) async fn confirm_failed(
    client: &MetaClient,
    objects: Vec<ObjectMeta>,
) -> Result<Vec<ObjectMeta>> {
    if !client.storage().capabilities().listing_lags {
        return Ok(objects);
    }
    crate::storage::timer::sleep(std::time::Duration::from_millis(CONFIRM_FAILED_MS)).await;
    list_timeline(client).await
}

pub(crate) async fn list_timeline(client: &MetaClient) -> Result<Vec<ObjectMeta>> {
    client
        .storage()
        .list(&client.config().timeline_dir, false)
        .await
}

/// Everything under `.hoodie/.temp` (markers), for [`completed_markers`].
pub(crate) async fn list_markers(client: &MetaClient) -> Result<Vec<ObjectMeta>> {
    match client
        .storage()
        .list(crate::config::layout::MARKERS_DIR, true)
        .await
    {
        Ok(listed) => Ok(listed),
        Err(HudiError::NotFound { .. }) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Marker files of instants that completed. Java deletes a commit's markers after it
/// completes (and its archiver sweeps any left); a commit here leaves them to the next
/// write, which deletes them beside its own first writes instead of spending a round trip.
pub(crate) fn completed_markers(listing: &Listing, markers: Vec<ObjectMeta>) -> Vec<String> {
    markers
        .into_iter()
        .filter(|m| !m.is_dir)
        .filter(|m| marker_instant(&m.path).is_some_and(|t| listing.is_completed(t)))
        .map(|m| m.path)
        .collect()
}

/// The instant a marker path (`.hoodie/.temp/<instant>/…`) belongs to.
pub(crate) fn marker_instant(path: &str) -> Option<&str> {
    (path.strip_prefix(crate::config::layout::MARKERS_DIR))
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|rest| rest.split('/').next())
}

/// An instant's marker directory (`.hoodie/.temp/<instant>`).
pub(crate) fn marker_dir(instant: &str) -> String {
    format!("{}/{instant}", crate::config::layout::MARKERS_DIR)
}
