//! Instants that left the active timeline: the v6 archive (`.hoodie/archived/`, Hudi log
//! files of `HoodieArchivedMetaEntry` records) and the v8+ LSM history
//! (`.hoodie/timeline/history/`: `_version_` names the live `manifest_<N>`, which lists the
//! Parquet files of `HoodieLSMTimelineInstant` rows; files not in the manifest are stale).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::instant::{action, Instant, State};
use super::metadata::decode_instant_file;
use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::storage::{join, Purpose, Storage, StorageExt};

/// Archived instants with their content.
pub async fn load(
    storage: &dyn Storage,
    config: &TableConfig,
) -> Result<Vec<(Instant, Option<serde_json::Value>)>> {
    if config.timeline_layout_version >= 2 {
        load_lsm(storage, &config.history_dir).await
    } else {
        load_v6_archive(storage, &config.archive_dir).await
    }
}

fn archived_instant(
    requested: String,
    completion: Option<String>,
    action: &str,
    state: State,
) -> Instant {
    Instant {
        requested_time: requested,
        completion_time: completion.clone(),
        action: action.to_string(),
        plan_action: None,
        state,
        completion_source: completion.map(|_| "archive"),
        file: String::new(),
        requested_file: None,
        archived: true,
    }
}

async fn load_v6_archive(
    storage: &dyn Storage,
    dir: &str,
) -> Result<Vec<(Instant, Option<serde_json::Value>)>> {
    let mut files: Vec<(u64, String, u64)> = storage
        .list(dir, false)
        .await?
        .into_iter()
        .filter(|m| !m.is_dir)
        .filter_map(|m| {
            let rest = m.name().strip_prefix(".commits_.archive.")?;
            let n: u64 = rest.split('_').next()?.parse().ok()?;
            Some((n, m.path.clone(), m.size))
        })
        .collect();
    files.sort();
    let read = files.iter().map(|(_, path, size)| {
        crate::log_file::archive::read_archive_file(storage, path, Some(*size))
    });
    let entries = futures::future::try_join_all(read).await?;
    // Several entries per instant (requested / inflight / completed in 0.x archives).
    let mut by_time: BTreeMap<String, (State, String, Option<serde_json::Value>)> = BTreeMap::new();
    for e in entries.into_iter().flatten() {
        let state = match e.action_state.as_deref() {
            Some("REQUESTED") => State::Requested,
            Some("INFLIGHT") => State::Inflight,
            _ => State::Completed,
        };
        let completed_action = action::completed_as(&e.action_type).to_string();
        let slot =
            by_time
                .entry(e.commit_time.clone())
                .or_insert((state, completed_action.clone(), None));
        if state >= slot.0 {
            slot.0 = state;
            slot.1 = if state == State::Completed {
                completed_action
            } else {
                e.action_type.clone()
            };
            if state == State::Completed && !e.metadata.is_null() {
                slot.2 = Some(e.metadata);
            }
        }
    }
    Ok(by_time
        .into_iter()
        .map(|(t, (state, act, content))| (archived_instant(t, None, &act, state), content))
        .collect())
}

#[derive(Deserialize)]
struct Manifest {
    files: Vec<ManifestFile>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ManifestFile {
    file_name: String,
    file_len: Option<u64>,
}

/// The live manifest version of an LSM history folder whose objects are `listed`: what
/// `_version_` says, or (as Java falls back when the pointer is missing or unreadable) the
/// newest `manifest_<N>` listed; `None` for an empty history.
pub(crate) async fn live_version(
    storage: &dyn Storage,
    dir: &str,
    listed: &[crate::storage::ObjectMeta],
) -> Result<Option<u64>> {
    let newest_listed = || {
        listed
            .iter()
            .filter_map(|m| m.name().strip_prefix("manifest_")?.parse::<u64>().ok())
            .max()
    };
    if !listed.iter().any(|m| m.name() == "_version_") {
        return Ok(newest_listed());
    }
    match storage.get(&join(dir, "_version_"), Purpose::History).await {
        Ok(b) => Ok(std::str::from_utf8(&b)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .or_else(newest_listed)),
        Err(HudiError::NotFound { .. }) => Ok(newest_listed()),
        Err(e) => Err(e),
    }
}

async fn current_manifest(storage: &dyn Storage, dir: &str) -> Result<Option<(String, Manifest)>> {
    let listing = storage.list(dir, false).await?;
    let Some(version) = live_version(storage, dir, &listing).await? else {
        return Ok(None);
    };
    let path = join(dir, &format!("manifest_{version}"));
    let bytes = storage.get(&path, Purpose::History).await?;
    let manifest: Manifest = serde_json::from_slice(&bytes)
        .map_err(|e| HudiError::corrupt_by(&path, "not an LSM timeline manifest", e))?;
    Ok(Some((path, manifest)))
}

async fn load_lsm(
    storage: &dyn Storage,
    dir: &str,
) -> Result<Vec<(Instant, Option<serde_json::Value>)>> {
    let Some((manifest_path, manifest)) = current_manifest(storage, dir).await? else {
        return Ok(Vec::new());
    };
    let manifest_path = manifest_path.as_str();
    let reads = manifest.files.iter().map(|f| async move {
        let path = join(
            dir,
            crate::storage::path::plain_name(&f.file_name, manifest_path)?,
        );
        let bytes = storage
            .get(&path, Purpose::History)
            .await
            .map_err(|e| match e {
                HudiError::NotFound { .. } => HudiError::corrupt(
                    manifest_path,
                    format!("lists {} which does not exist", f.file_name),
                ),
                other => other,
            })?;
        if let Some(len) = f.file_len {
            if len != bytes.len() as u64 {
                return Err(HudiError::corrupt(
                    &path,
                    format!("is {} bytes, manifest says {len}", bytes.len()),
                ));
            }
        }
        lsm_rows(bytes, &path)
    });
    let mut all: Vec<(Instant, Option<serde_json::Value>)> = futures::future::try_join_all(reads)
        .await?
        .into_iter()
        .flatten()
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all.dedup_by(|a, b| a.0.requested_time == b.0.requested_time);
    Ok(all)
}

fn lsm_rows(bytes: bytes::Bytes, path: &str) -> Result<Vec<(Instant, Option<serde_json::Value>)>> {
    let rows = super::archive::decode_history_file(bytes, path)?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let content = match &r.metadata {
            Some(bytes) => Some(decode_instant_file(
                bytes,
                &format!("{path} (instant {})", r.instant_time),
            )?),
            None => None,
        };
        out.push((
            archived_instant(
                r.instant_time,
                r.completion_time,
                &r.action,
                State::Completed,
            ),
            content,
        ));
    }
    Ok(out)
}
