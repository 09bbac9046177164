//! The file-system view by listing, and the checks before a time-travel read.

use super::*;

impl MetaClient {
    /// Hudi's checks before a time-travel read (`TimelineUtils.validateTimestampAsOf`): the
    /// instant must precede every incomplete commit, and the cleaner must not have removed
    /// the files it needs.
    pub async fn validate_time_travel(&self, as_of: &str) -> Result<()> {
        use crate::timeline::{action, compare_instant_times};
        let timeline = self.timeline();
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
        let content = self.instant_content(clean).await?;
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

    /// A listing must hold every file the newest visible commit wrote: otherwise the view
    /// would silently fall back to older file versions. (Replaced groups and cleaned older
    /// versions are fine; a missing file of the latest commit means damage.)
    pub async fn check_latest_commit_files(
        &self,
        visibility: &Visibility,
        listed: &[crate::file_group::view::DataFile],
    ) -> Result<()> {
        let timeline = self.timeline();
        let Some(latest) = timeline
            .completed_writes()
            .rev()
            .find(|i| visibility.is_committed(&i.requested_time))
        else {
            return Ok(());
        };
        let meta = self.commit_metadata(latest).await?;
        let present: HashSet<String> = listed
            .iter()
            .map(|f| crate::storage::join(&f.partition, &f.name))
            .collect();
        for (_, stat) in meta.write_stats() {
            let Some(path) = stat.path.as_deref().map(|p| p.trim_start_matches('/')) else {
                continue;
            };
            if !path.is_empty() && !present.contains(path) {
                return Err(HudiError::NotFound {
                    path: format!(
                        "{path} (written by commit {}, listed in {})",
                        latest.requested_time, latest.file
                    ),
                });
            }
        }
        Ok(())
    }

    /// File groups and slices as of an instant (latest when `None`), by listing.
    pub async fn file_system_view(
        &self,
        as_of: Option<&str>,
    ) -> Result<crate::file_group::view::FileSystemView> {
        let as_of = as_of
            .map(|t| crate::timeline::time::resolve_time(t, self.config.timezone))
            .transpose()?;
        let visibility = self.timeline().visibility_as_of(as_of.as_deref());
        // The replacecommits' metadata is read beside the listings: one round trip fewer.
        let (listed, replaced) = futures::try_join!(
            self.list_data_files(),
            self.replaced_file_groups(&visibility)
        )?;
        let files = listed
            .into_iter()
            .map(|(partition, m)| crate::file_group::view::DataFile {
                name: m.name().to_string(),
                partition,
                size: m.size,
            });
        Ok(crate::file_group::view::build(
            files,
            &visibility,
            &self.config,
            &replaced,
        ))
    }
}
