//! Archival of the data table's and the metadata table's timelines into their LSM histories
//! (Java's `TimelineArchiverV2` and `LSMTimelineWriter`), after a write or on request.
//! Decisions and bytes come from [`crate::timeline::archive`].
//!
//! Order, each step safe to crash after: the history file (invisible until a manifest names
//! it), the next `manifest_<N>`, `_version_` (the commit point: readers follow it), then the
//! archived instants' files deleted — pending files first, completed ones one at a time
//! oldest first, so the active timeline never has a hole. A crash before `_version_` leaves
//! the instants active; the next run writes the same file again. After it, an instant both
//! active and archived reads as active. History layers are merged and old manifests dropped
//! last.

use std::collections::HashSet;

use bytes::Bytes;
use serde::Serialize;

use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::meta_client::MetaClient;
use crate::metadata::table::METADATA_DIR;
use crate::storage::{join, IoSnapshot, ObjectMeta, Purpose, PutMode, Storage, StorageExt};
use crate::timeline::archive::{
    self, ArchivalConfig, ArchivalInputs, HistoryRow, Manifest, MetadataBarrier,
};
use crate::timeline::instant::{action, parse_instant_file_name, InstantFileName, State};
use crate::timeline::Timeline;
use crate::write::files;

/// What archival did to one timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineArchived {
    /// Requested times of the instants moved to the history, oldest first.
    pub instants: Vec<String>,
    /// The history file they went to, relative to the base path.
    pub history_file: String,
    /// History files written by merging a layer into the next.
    pub merged_into: Vec<String>,
    /// Timeline, manifest and history files deleted.
    pub files_deleted: usize,
}

/// One archival run: each timeline's part (`None` where nothing was due).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Archival {
    pub data_table: Option<TimelineArchived>,
    pub metadata_table: Option<TimelineArchived>,
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

impl Archival {
    pub fn archived_anything(&self) -> bool {
        self.data_table.is_some() || self.metadata_table.is_some()
    }
}

/// What archival needs of the write settings besides its own.
#[derive(Debug, Clone)]
pub struct ArchivalSettings {
    pub config: ArchivalConfig,
    pub compaction_delta_commits: Option<usize>,
    /// The cleaner's settings: archival never passes what it keeps.
    pub clean: crate::clean::CleanConfig,
    pub mdt_compaction_delta_commits: usize,
}

/// Archives both timelines where due (the data table's first: the metadata table's may only
/// go as far as the data table's active timeline reaches).
pub async fn archive(client: &MetaClient, settings: &ArchivalSettings) -> Result<Archival> {
    let (io, started) = (client.io(), files::now_ms());
    let storage = client.storage().as_ref();
    let config = client.config();
    let selected = select_both(client, settings).await?;
    let mut out = Archival::default();
    if !selected.data.is_empty() {
        out.data_table = Some(
            archive_timeline(
                storage,
                (&config.timeline_dir, &config.history_dir),
                crate::config::layout::MARKERS_DIR,
                &selected.data_objects,
                &selected.data,
                settings.config.lsm_batch,
            )
            .await?,
        );
    }
    if !selected.metadata_table.is_empty() {
        let mdt_timeline_dir = join(METADATA_DIR, ".hoodie/timeline");
        out.metadata_table = Some(
            archive_timeline(
                storage,
                (&mdt_timeline_dir, &join(&mdt_timeline_dir, "history")),
                &join(METADATA_DIR, crate::config::layout::MARKERS_DIR),
                &selected.mdt_objects,
                &selected.metadata_table,
                settings.config.lsm_batch,
            )
            .await?,
        );
    }
    out.io = client.io().since(&io);
    out.elapsed_ms = (files::now_ms() - started).max(0);
    Ok(out)
}

/// What an archival would move now, on each timeline (requested times, oldest first):
/// the archiver's own choice, with nothing written.
#[derive(Debug, Clone, Default)]
struct ArchivalDue {
    pub data: Vec<String>,
    pub metadata_table: Vec<String>,
    data_objects: Vec<ObjectMeta>,
    mdt_objects: Vec<ObjectMeta>,
}

/// Lists both timelines and chooses what archival moves ([`select_listed`]), writing
/// nothing: `archive` runs it on the listings it then deletes from.
async fn select_both(client: &MetaClient, settings: &ArchivalSettings) -> Result<ArchivalDue> {
    let storage = client.storage().as_ref();
    let config = client.config();
    refuse_version_6(config)?;
    let has_mdt = !config.metadata_partitions.is_empty();
    let mdt_timeline_dir = join(METADATA_DIR, ".hoodie/timeline");
    let (data_objects, mdt_objects) =
        futures::future::try_join(storage.list(&config.timeline_dir, false), async {
            if has_mdt {
                storage.list(&mdt_timeline_dir, false).await
            } else {
                Ok(Vec::new())
            }
        })
        .await?;
    let data = Timeline::from_listing(&data_objects, config);
    let mdt = has_mdt
        .then(|| Timeline::from_listing(&mdt_objects, &mdt_config(config, &mdt_timeline_dir)));
    let (data, metadata_table) = select_listed(client, settings, &data, mdt.as_ref()).await?;
    Ok(ArchivalDue {
        data,
        metadata_table,
        data_objects,
        mdt_objects,
    })
}

/// What archival would move now from timelines already listed — the data table's, and the
/// metadata table's when it has one — as requested times, oldest first (data table, metadata
/// table): the archiver's own choice ([`archive::select`]), with nothing listed again. A
/// health report asks it of the timelines it holds; only the last clean's plan may be read.
pub async fn select_listed(
    client: &MetaClient,
    settings: &ArchivalSettings,
    data: &Timeline,
    mdt: Option<&Timeline>,
) -> Result<(Vec<String>, Vec<String>)> {
    let config = client.config();
    refuse_version_6(config)?;
    let barrier = match mdt {
        None => MetadataBarrier::None,
        Some(mdt) => match latest_compaction(mdt) {
            Some(t) => MetadataBarrier::CompactedAt(t),
            None => MetadataBarrier::NeverCompacted,
        },
    };
    let inputs = ArchivalInputs {
        config: settings.config.clone(),
        merge_on_read: config.table_type == crate::config::TableType::MergeOnRead,
        compaction_delta_commits: settings.compaction_delta_commits,
        clean_retain: clean_retain(data, &settings.clean, config.timezone),
        metadata: barrier,
        data_table_bound: None,
        last_clean_retain: last_clean_retain(client.storage().as_ref(), data).await?,
    };
    let chosen = archive::select(data, &inputs);
    let mut mdt_chosen = Vec::new();
    if let Some(mdt) = mdt {
        let remaining = without(data, &chosen);
        let mdt_inputs = ArchivalInputs {
            config: settings.config.for_metadata_table(),
            merge_on_read: true,
            compaction_delta_commits: Some(settings.mdt_compaction_delta_commits),
            clean_retain: clean_retain(mdt, &settings.clean.for_metadata_table(), config.timezone),
            metadata: MetadataBarrier::None,
            data_table_bound: archive::data_table_bound(&remaining),
            last_clean_retain: None,
        };
        mdt_chosen = archive::select(mdt, &mdt_inputs);
    }
    Ok((chosen, mdt_chosen))
}

fn refuse_version_6(config: &TableConfig) -> Result<()> {
    if config.timeline_layout_version < 2 {
        return Err(HudiError::unsupported_in(
            "archiving a table version 6 timeline (this engine writes the LSM history of \
             versions 8 and 9)",
            ".hoodie/hoodie.properties",
        ));
    }
    Ok(())
}

/// The cleaner's earliest commit to retain, its hours counted back from the latest commit
/// rather than now (Java's `ArchivalUtils`).
fn clean_retain(
    timeline: &Timeline,
    clean: &crate::clean::CleanConfig,
    tz: crate::config::TimelineTimezone,
) -> Option<String> {
    let latest = timeline
        .instants
        .iter()
        .rfind(|i| i.is_completed() && crate::clean::is_commit_like(i));
    let now = latest
        .and_then(|i| crate::timeline::time::instant_millis(&i.requested_time, tz))
        .unwrap_or_else(files::now_ms);
    crate::clean::earliest_commit_to_retain(timeline, clean, now, tz).map(|r| r.timestamp)
}

/// A table config whose timeline folder is the metadata table's (the listing's paths).
fn mdt_config(data: &TableConfig, timeline_dir: &str) -> TableConfig {
    let mut c = data.clone();
    c.timeline_dir = timeline_dir.to_string();
    c
}

/// Requested time of the metadata table's latest completed compaction.
fn latest_compaction(mdt: &Timeline) -> Option<String> {
    mdt.instants
        .iter()
        .rfind(|i| i.is_completed() && i.action == action::COMMIT)
        .map(|i| i.requested_time.clone())
}

fn without(timeline: &Timeline, archived: &[String]) -> Timeline {
    let gone: HashSet<&str> = archived.iter().map(String::as_str).collect();
    Timeline {
        instants: (timeline.instants.iter())
            .filter(|i| !gone.contains(i.requested_time.as_str()))
            .cloned()
            .collect(),
        ..Timeline::default()
    }
}

/// The last completed clean's retain point, read only when replace commits make it matter.
async fn last_clean_retain(
    storage: &dyn Storage,
    timeline: &Timeline,
) -> Result<Option<std::result::Result<String, String>>> {
    let replaces = timeline.instants.iter().any(|i| {
        matches!(
            i.action.as_str(),
            action::REPLACE_COMMIT | action::CLUSTERING
        )
    });
    let clean = timeline
        .instants
        .iter()
        .rfind(|i| i.is_completed() && i.action == action::CLEAN);
    let (true, Some(clean)) = (replaces, clean) else {
        return Ok(None);
    };
    let Some(path) = &clean.requested_file else {
        return Ok(Some(Err(clean.requested_time.clone())));
    };
    let bytes = storage.get(path, Purpose::Timeline).await?;
    let plan = crate::timeline::metadata::decode_instant_file(&bytes, path)?;
    let retain = plan
        .pointer("/earliestInstantToRetain/timestamp")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.is_empty());
    Ok(Some(match retain {
        Some(t) => Ok(t.to_string()),
        None => Err(clean.requested_time.clone()),
    }))
}

/// The files of each chosen instant: (parsed name, path), requested and inflight first.
fn instant_files(
    timeline_dir: &str,
    objects: &[ObjectMeta],
    chosen: &[String],
) -> Vec<Vec<(InstantFileName, String)>> {
    let mut out: Vec<Vec<(InstantFileName, String)>> = vec![Vec::new(); chosen.len()];
    for o in objects.iter().filter(|o| !o.is_dir) {
        let Some(parsed) = parse_instant_file_name(o.name()) else {
            continue;
        };
        if let Some(slot) = chosen.iter().position(|t| *t == parsed.requested_time) {
            out[slot].push((parsed, join(timeline_dir, o.name())));
        }
    }
    for files in &mut out {
        files.sort_by_key(|(p, _)| p.state);
    }
    out
}

async fn non_empty(storage: &dyn Storage, path: &str) -> Result<Option<Bytes>> {
    let bytes = storage.get(path, Purpose::Timeline).await?;
    Ok((!bytes.is_empty()).then_some(bytes))
}

/// The history row of one instant from its files.
async fn history_row(
    storage: &dyn Storage,
    files: &[(InstantFileName, String)],
) -> Result<HistoryRow> {
    let Some((done, done_path)) = files.iter().find(|(p, _)| p.state == State::Completed) else {
        let which = files.first().map_or("", |(_, p)| p.as_str());
        return Err(HudiError::Conflict {
            path: which.to_string(),
            detail: "an instant chosen for archival is no longer completed (another \
                     archiver ran)"
                .to_string(),
        });
    };
    let requested_action = files
        .iter()
        .find(|(p, _)| p.state != State::Completed)
        .map_or(done.action.as_str(), |(p, _)| p.action.as_str());
    let mut plan = None;
    for state in archive::plan_source(requested_action) {
        if let Some((_, path)) = files.iter().find(|(p, _)| p.state == *state) {
            if let Some(bytes) = non_empty(storage, path).await? {
                plan = Some(bytes);
            }
        }
    }
    Ok(HistoryRow {
        instant_time: done.requested_time.clone(),
        completion_time: done.completion_time.clone(),
        action: done.action.clone(),
        metadata: non_empty(storage, done_path).await?,
        plan,
    })
}

/// The live manifest: its version (0 when there is none) and content.
async fn live_manifest(
    storage: &dyn Storage,
    listed: &[ObjectMeta],
    dir: &str,
) -> Result<(u64, Manifest)> {
    let version = crate::timeline::history::live_version(storage, dir, listed).await?;
    let Some(version) = version else {
        return Ok((0, Manifest::default()));
    };
    let path = join(dir, &format!("manifest_{version}"));
    let bytes = storage.get(&path, Purpose::History).await?;
    Ok((version, Manifest::parse(&bytes, &path)?))
}

/// Writes `manifest` as the next version and points `_version_` at it (an overwrite: one
/// atomic PUT where Java deletes and recreates, so readers never miss the pointer).
async fn publish_manifest(
    storage: &dyn Storage,
    dir: &str,
    version: u64,
    manifest: &Manifest,
) -> Result<()> {
    let path = join(dir, &format!("manifest_{version}"));
    storage
        .put(&path, Bytes::from(manifest.to_json()), PutMode::Overwrite)
        .await?;
    storage
        .put(
            &join(dir, "_version_"),
            Bytes::from(version.to_string()),
            PutMode::Overwrite,
        )
        .await?;
    Ok(())
}

async fn list_history(storage: &dyn Storage, dir: &str) -> Result<Vec<ObjectMeta>> {
    match storage.list(dir, false).await {
        Ok(listed) => Ok(listed),
        Err(HudiError::NotFound { .. }) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

async fn archive_timeline(
    storage: &dyn Storage,
    (timeline_dir, history_dir): (&str, &str),
    markers_dir: &str,
    objects: &[ObjectMeta],
    chosen: &[String],
    lsm_batch: usize,
) -> Result<TimelineArchived> {
    let files = instant_files(timeline_dir, objects, chosen);
    let rows = futures::future::try_join_all(files.iter().map(|f| history_row(storage, f))).await?;
    let (first, last) = match (chosen.first(), chosen.last()) {
        (Some(f), Some(l)) => (f, l),
        _ => return Err(HudiError::invalid("archiving no instants")),
    };
    let name = archive::history_file_name(first, last, 0);
    let listed = list_history(storage, history_dir).await?;
    let (mut version, mut manifest) = live_manifest(storage, &listed, history_dir).await?;
    if !manifest.contains(&name) {
        let bytes = archive::encode_history_file(&rows)?;
        let len = bytes.len() as u64;
        storage
            .put(&join(history_dir, &name), bytes, PutMode::Overwrite)
            .await?;
        manifest.files.push((name.clone(), len));
        version += 1;
        publish_manifest(storage, history_dir, version, &manifest).await?;
    }
    let mut deleted = 0;
    // Pending files first, at once; then completed ones oldest first, one at a time.
    let pending: Vec<&String> = (files.iter().flatten())
        .filter(|(p, _)| p.state != State::Completed)
        .map(|(_, path)| path)
        .collect();
    futures::future::try_join_all(pending.iter().map(|p| storage.delete(p))).await?;
    deleted += pending.len();
    for (_, path) in files
        .iter()
        .flatten()
        .filter(|(p, _)| p.state == State::Completed)
    {
        storage.delete(path).await?;
        deleted += 1;
    }
    // The archived instants' marker directories, emptied by the writes after them, go too
    // (Java's archiver deletes any left); stores without directories send nothing.
    for t in chosen {
        storage.delete_empty_dir(&join(markers_dir, t)).await?;
    }
    let mut merged_into = Vec::new();
    let mut layer = 0;
    while let Some(inputs) = manifest.merge_candidates(layer, lsm_batch) {
        let Some(merged) = archive::merged_file_name(&inputs) else {
            break;
        };
        let reads = inputs.iter().map(|(n, _)| async move {
            let path = join(history_dir, n);
            let bytes = storage.get(&path, Purpose::History).await?;
            archive::decode_history_file(bytes, &path)
        });
        let rows: Vec<HistoryRow> = futures::future::try_join_all(reads)
            .await?
            .into_iter()
            .flatten()
            .collect();
        let bytes = archive::encode_history_file(&rows)?;
        let len = bytes.len() as u64;
        storage
            .put(&join(history_dir, &merged), bytes, PutMode::Overwrite)
            .await?;
        let gone: HashSet<&String> = inputs.iter().map(|(n, _)| n).collect();
        manifest.files.retain(|(n, _)| !gone.contains(n));
        manifest.files.push((merged.clone(), len));
        version += 1;
        publish_manifest(storage, history_dir, version, &manifest).await?;
        merged_into.push(join(history_dir, &merged));
        layer += 1;
    }
    deleted +=
        drop_old_versions(storage, history_dir, version, &manifest, merged_into.len()).await?;
    Ok(TimelineArchived {
        instants: chosen.to_vec(),
        history_file: join(history_dir, &name),
        merged_into,
        files_deleted: deleted,
    })
}

/// Deletes manifests older than the kept versions, then history files none of the kept
/// manifests names.
async fn drop_old_versions(
    storage: &dyn Storage,
    dir: &str,
    live: u64,
    live_manifest: &Manifest,
    merges: usize,
) -> Result<usize> {
    let listed = list_history(storage, dir).await?;
    let versions: Vec<u64> = listed
        .iter()
        .filter_map(|m| m.name().strip_prefix("manifest_")?.parse::<u64>().ok())
        .collect();
    let dropped = archive::manifest_versions_to_drop(versions.clone(), merges);
    if dropped.is_empty() {
        return Ok(0);
    }
    let kept: Vec<u64> = versions
        .into_iter()
        .filter(|v| !dropped.contains(v))
        .collect();
    let reads = kept.iter().filter(|v| **v != live).map(|v| async move {
        let path = join(dir, &format!("manifest_{v}"));
        let bytes = storage.get(&path, Purpose::History).await?;
        Manifest::parse(&bytes, &path)
    });
    let mut named: HashSet<String> = futures::future::try_join_all(reads)
        .await?
        .into_iter()
        .flat_map(|m| m.files.into_iter().map(|(n, _)| n))
        .collect();
    named.extend(live_manifest.files.iter().map(|(n, _)| n.clone()));
    let manifests: Vec<String> = dropped
        .iter()
        .map(|v| join(dir, &format!("manifest_{v}")))
        .collect();
    futures::future::try_join_all(manifests.iter().map(|p| storage.delete(p))).await?;
    let stale: Vec<String> = listed
        .iter()
        .filter(|m| archive::parse_history_file_name(m.name()).is_some())
        .filter(|m| !named.contains(m.name()))
        .map(|m| m.path.clone())
        .collect();
    futures::future::try_join_all(stale.iter().map(|p| storage.delete(p))).await?;
    Ok(manifests.len() + stale.len())
}

/// Archives after a write when `hoodie.archive.automatic` is on (Java's post-commit
/// archival); under optimistic concurrency inside the storage lock. The timelines the write
/// read tell first whether either can be due: most writes make no request for it.
pub(crate) async fn after_commit(
    table: &crate::write::Ctx<'_>,
    settings: &ArchivalSettings,
    concurrency: &crate::write::lock::Concurrency,
) -> Result<Option<Archival>> {
    let client = table.client;
    if !settings.config.automatic || client.config().timeline_layout_version < 2 {
        return Ok(None);
    }
    if !may_be_due(table, &settings.config) {
        return Ok(None);
    }
    let run = archive(client, settings);
    let done = concurrency
        .exclusive(client.storage().as_ref(), run)
        .await?;
    Ok(done.archived_anything().then_some(done))
}

/// Whether archival may have anything to do: more completed commits than the maximum on
/// either timeline as the write saw them, counting what the write added (its commit, and on
/// the metadata table its delta commit and a compaction). Unknown counts as maybe.
fn may_be_due(table: &crate::write::Ctx<'_>, config: &ArchivalConfig) -> bool {
    let commits = |t: &Timeline| {
        t.instants
            .iter()
            .filter(|i| i.is_completed() && action::is_write(&i.action))
            .count()
    };
    if commits(&table.client.timeline()) + 1 > config.max_commits {
        return true;
    }
    if table.client.config().metadata_partitions.is_empty() {
        return false;
    }
    match table.metadata.cached() {
        Some(mdt) => commits(&mdt.mdt_timeline()) + 2 > config.for_metadata_table().max_commits,
        None => true,
    }
}
