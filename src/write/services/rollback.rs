//! Rolling back failed writes before a new one, as Hudi's single-writer default does
//! (`hoodie.cleaner.policy.failed.writes=EAGER`, docs/hudi-format.md §3.8, §10.6): every
//! pending commit / delta commit on the data timeline is undone by a rollback instant `r`
//! later than everything on both timelines. Table services (compaction, clustering,
//! replace commits, indexing) are never touched.
//!
//! Order, as Java 1.x (`BaseRollbackPlanActionExecutor`, `BaseRollbackActionExecutor`):
//! `r.rollback.requested` (the plan: files to delete, from the failed instant's markers,
//! else from a listing of files carrying its time), `r.rollback.inflight` (empty), the
//! deletes, the metadata table's own rollback of its delta commit of the same time (also at
//! `r`, planned by listing as Java's metadata writer does), the failed instant's inflight
//! and requested files, then `r_c.rollback` and last the marker directory.
//!
//! Every step is idempotent and a pending rollback is resumed with its own plan (Java
//! re-uses it too), so a rollback cut short at any request is finished by the next write.

use bytes::Bytes;
use serde::Serialize;

use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::file_group::{BaseFile, LogFile};
use crate::meta_client::MetaClient;
use crate::metadata::table::METADATA_DIR;
use crate::storage::{join, ObjectMeta, Purpose, PutMode, Storage, StorageExt};
use crate::timeline::instant::{action, State};
use crate::timeline::metadata::{
    decode_instant_file, InstantInfo, OrderedMap, RollbackMetadata, RollbackPartitionMetadata,
    RollbackPlan, RollbackRequest,
};
use crate::timeline::write::{
    encode_rollback_metadata, encode_rollback_plan, instant_file_name, new_instant_time,
};
use crate::write::files;
use crate::write::pending::{list_timeline, Listing};

/// `HoodieRollbackPlan.version` / `HoodieRollbackMetadata.version` Java 1.x writes.
const ROLLBACK_VERSION: i32 = 1;

/// One failed write undone.
#[derive(Debug, Clone, Serialize)]
pub struct RolledBack {
    /// The rollback instant (requested time) and its completion time.
    pub rollback_instant: String,
    pub completion_time: String,
    /// The failed instant and its action (`commit` / `deltacommit`).
    pub instant: String,
    pub action: String,
    /// Files the plan named, relative to the base path (absent ones count as deleted, as
    /// in Java).
    pub files_deleted: Vec<String>,
    /// Whether the metadata table had a delta commit of the failed instant to roll back.
    pub metadata_table: bool,
    /// A rollback left pending by an earlier run, finished with its own plan.
    pub resumed: bool,
}

/// Rolls back the pending writes (and pending rollbacks) requested at `times`, as the next
/// write would roll them back: a writer that gave up mid-write (an abort) undoes its own
/// instant at once instead of leaving it to the next writer. Other pending instants, which
/// may be a live writer's, are left alone.
pub async fn rollback_pending(client: &MetaClient, times: &[String]) -> Result<Vec<RolledBack>> {
    let objects = list_timeline(client).await?;
    let mut listing = Listing::of_timeline(client.config(), &objects);
    listing
        .files
        .retain(|(p, _)| times.contains(&p.requested_time));
    rollback_listed(client, listing).await
}

/// Rolls back every failed write of the table, as listed by [`list_timeline`]. Returns
/// what was undone (nothing when the timeline has no pending commit, delta commit or
/// rollback).
pub(crate) async fn rollback_listed(
    client: &MetaClient,
    timeline: Listing,
) -> Result<Vec<RolledBack>> {
    let config = client.config();
    let storage: &dyn Storage = client.storage().as_ref();
    let pending = timeline.pending();
    let rollbacks: Vec<&(String, String, bool)> = pending
        .iter()
        .filter(|(_, a, _)| a == action::ROLLBACK)
        .collect();
    let writes: Vec<&(String, String, bool)> = pending
        .iter()
        .filter(|(_, a, _)| a == action::COMMIT || a == action::DELTA_COMMIT)
        .collect();
    if rollbacks.is_empty() && writes.is_empty() {
        return Ok(Vec::new());
    }
    let mut done = Vec::new();
    // Rollbacks cut short first, each with its own plan.
    let mut targets: Vec<String> = Vec::new();
    for (r, _, _) in rollbacks {
        let path = join(
            &config.timeline_dir,
            &instant_file_name(r, action::ROLLBACK, State::Requested, None),
        );
        let plan = read_plan(storage, &path).await?;
        let target = plan.instant_to_rollback.clone().ok_or_else(|| {
            HudiError::corrupt(path.clone(), "a rollback plan without instantToRollback")
        })?;
        targets.push(target.commit_time.clone());
        done.push(execute(client, r, &target, &plan, true).await?);
    }
    // Then every pending write, newest first (Java's order).
    for (t, a, inflight) in writes.into_iter().rev() {
        if targets.contains(t) {
            continue;
        }
        // A write that never got past `requested` wrote nothing (Java plans nothing).
        done.push(start(client, t, a, *inflight).await?);
    }
    Ok(done)
}

/// Plans the rollback of pending instant `t` (requested as `pending_action`), writes the
/// plan at a fresh time and executes it; an instant without its inflight file wrote nothing.
async fn start(
    client: &MetaClient,
    t: &str,
    pending_action: &str,
    inflight: bool,
) -> Result<RolledBack> {
    let config = client.config();
    let storage: &dyn Storage = client.storage().as_ref();
    let target = InstantInfo {
        commit_time: t.to_string(),
        action: pending_action.to_string(),
    };
    let plan = RollbackPlan {
        instant_to_rollback: Some(target.clone()),
        rollback_requests: Some(if inflight {
            plan_requests(client, t).await?
        } else {
            Vec::new()
        }),
        version: Some(ROLLBACK_VERSION),
    };
    let r = fresh_time(storage, config).await?;
    storage
        .put(
            &join(
                &config.timeline_dir,
                &instant_file_name(&r, action::ROLLBACK, State::Requested, None),
            ),
            Bytes::from(encode_rollback_plan(&plan)?),
            PutMode::Create,
        )
        .await?;
    execute(client, &r, &target, &plan, false).await
}

/// Table services whose plan a rollback keeps (it reverts them to requested).
fn is_service(pending_action: &str) -> bool {
    matches!(
        pending_action,
        action::COMPACTION | action::LOG_COMPACTION | action::CLUSTERING
    )
}

/// Java's `rollbackInflightCompaction` (and its clustering twin) before a compaction or
/// clustering `t` (requested as `pending_action`) is executed again: the files
/// an earlier attempt wrote (by its markers, else by a listing of files carrying `t`) and
/// its metadata-table delta commit are rolled back with a rollback instant, and the
/// instant goes back to requested, its plan kept. A rollback of it left pending is finished
/// with its own plan. `None` when `t` was not inflight.
pub(crate) async fn rollback_inflight_service(
    client: &MetaClient,
    t: &str,
    pending_action: &str,
) -> Result<Option<RolledBack>> {
    let config = client.config();
    let storage: &dyn Storage = client.storage().as_ref();
    let listing = Listing::of_timeline(config, &list_timeline(client).await?);
    for (r, a, _) in listing.pending() {
        if a != action::ROLLBACK {
            continue;
        }
        let path = join(
            &config.timeline_dir,
            &instant_file_name(&r, action::ROLLBACK, State::Requested, None),
        );
        let plan = read_plan(storage, &path).await?;
        if let Some(target) = plan
            .instant_to_rollback
            .clone()
            .filter(|i| i.commit_time == t)
        {
            return execute(client, &r, &target, &plan, true).await.map(Some);
        }
    }
    if !listing.is_inflight(t) {
        return Ok(None);
    }
    start(client, t, pending_action, true).await.map(Some)
}

async fn read_plan(storage: &dyn Storage, path: &str) -> Result<RollbackPlan> {
    let bytes = storage.get(path, Purpose::Timeline).await?;
    RollbackPlan::from_json(decode_instant_file(&bytes, path)?, path)
}

/// A time later than every requested and completion time on the data and metadata
/// timelines.
async fn fresh_time(storage: &dyn Storage, config: &TableConfig) -> Result<String> {
    let data = Listing::load(storage, &config.timeline_dir).await?;
    let mdt = Listing::load(storage, &mdt_timeline_dir()).await?;
    let after: Vec<&str> = data.times().chain(mdt.times()).collect();
    new_instant_time(files::now_ms(), config.timezone, &after)
}

fn mdt_timeline_dir() -> String {
    join(METADATA_DIR, ".hoodie/timeline")
}

/// How plans name files: absolute, like Java's (`/base/partition/file` for local tables,
/// `scheme://bucket/base/...` for object stores); relative when the store has no path.
pub(crate) fn absolute(location: &str, relative: &str) -> String {
    let base = match location.strip_prefix("file://") {
        Some(p) => p.to_string(),
        None if location.contains("://") && !location.ends_with("://") => location.to_string(),
        None => String::new(),
    };
    if base.is_empty() {
        relative.to_string()
    } else {
        format!("{}/{relative}", base.trim_end_matches('/'))
    }
}

/// The file a plan names, relative to `root`: its partition and file name (plans written
/// by another host carry that host's absolute paths). `None` for a name outside the table,
/// which no plan of this table can rightly ask to delete.
fn resolve(root: &str, partition: &str, named: &str) -> Option<String> {
    let name = named.rsplit('/').next().filter(|n| !n.is_empty())?;
    if name == "." || name == ".." {
        return None;
    }
    let inside = crate::storage::path::within_table(&join(partition, name), named).ok()?;
    Some(join(root, &inside))
}

/// Requests for the data files of the failed instant `t`: one per marker (Java's
/// `MarkerBasedRollbackStrategy`, v8+: base files and log files both deleted whole),
/// else one per file whose name carries `t` (`ListingBasedRollbackStrategy`).
async fn plan_requests(client: &MetaClient, t: &str) -> Result<Vec<RollbackRequest>> {
    let storage: &dyn Storage = client.storage().as_ref();
    let location = storage.location();
    let markers = marker_paths(storage, t).await?;
    if !markers.is_empty() {
        return Ok(marker_requests(&location, t, &markers));
    }
    let listed = storage.list("", true).await?;
    Ok(files_of_instant(&listed, t, "")
        .into_iter()
        .map(|(partition, relative)| listing_request(&location, partition, &relative))
        .collect())
}

/// One rollback request per data file a marker of the failed instant `t` names (paths
/// relative to the table). A marker naming a path outside the table (a peer's bug or a
/// planted file) names nothing this table could hold: deleting it is never ours to do, and
/// refusing would wedge every later write behind this rollback. Names that are no Hudi
/// data file are passed over likewise.
pub fn marker_requests(location: &str, t: &str, markers: &[String]) -> Vec<RollbackRequest> {
    let carried_by = crate::write::pending::marker_dir(t);
    let mut out = Vec::new();
    for marked in markers {
        let Ok(relative) = crate::storage::path::within_table(marked, &carried_by) else {
            continue;
        };
        let (partition, name) = relative.rsplit_once('/').unwrap_or(("", &relative));
        let file_id = BaseFile::parse(name, 0)
            .map(|b| b.file_id)
            .or_else(|| LogFile::parse(name, 0).map(|l| l.file_id));
        let Some(file_id) = file_id else {
            continue;
        };
        out.push(RollbackRequest {
            partition_path: partition.to_string(),
            file_id: Some(file_id),
            latest_base_instant: Some(t.to_string()),
            files_to_be_deleted: vec![absolute(location, &relative)],
            log_blocks_to_be_deleted: Some(OrderedMap::new()),
        });
    }
    out
}

/// The data files a timeline-server `MARKERS<n>` file names: one marker per line
/// (`<partition>/<file>.marker.<IOType>`), the suffix dropped.
pub fn markers_file_entries(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .filter_map(marked_file)
        .map(str::to_string)
        .collect()
}

fn marked_file(marker: &str) -> Option<&str> {
    marker.rsplit_once(".marker.").map(|(file, _)| file)
}

fn listing_request(location: &str, partition: String, relative: &str) -> RollbackRequest {
    RollbackRequest {
        partition_path: partition,
        file_id: Some(String::new()),
        latest_base_instant: Some(String::new()),
        files_to_be_deleted: vec![absolute(location, relative)],
        log_blocks_to_be_deleted: Some(OrderedMap::new()),
    }
}

/// (partition, path) of every base or log file written by instant `t` among `listed`
/// (paths relative to the storage root; partitions relative to `root`).
fn files_of_instant(listed: &[ObjectMeta], t: &str, root: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = listed
        .iter()
        .filter(|m| !m.is_dir)
        // The data table's files are outside `.hoodie`; the metadata table's inside it.
        .filter(|m| !root.is_empty() || !m.path.starts_with(".hoodie/"))
        .filter(|m| {
            BaseFile::parse(m.name(), 0).is_some_and(|b| b.instant == t)
                || LogFile::parse(m.name(), 0).is_some_and(|l| l.instant == t)
        })
        .map(|m| {
            let inside = m
                .path
                .strip_prefix(root)
                .unwrap_or(&m.path)
                .trim_start_matches('/');
            let partition = inside.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
            (partition.to_string(), m.path.clone())
        })
        .collect();
    out.sort();
    out
}

/// Data files the failed instant's markers name, relative to the base path. Direct
/// markers are files `<partition>/<file>.marker.<IOType>`; timeline-server markers are
/// listed inside `MARKERS<n>` files (`MARKERS.type` says which).
async fn marker_paths(storage: &dyn Storage, t: &str) -> Result<Vec<String>> {
    let dir = crate::write::pending::marker_dir(t);
    let listed = storage.list(&dir, true).await?;
    let mut out: Vec<String> = Vec::new();
    let server_based = listed.iter().any(|m| m.name() == "MARKERS.type");
    for m in listed.iter().filter(|m| !m.is_dir) {
        let inside = m
            .path
            .strip_prefix(&dir)
            .unwrap_or(&m.path)
            .trim_start_matches('/');
        if server_based && m.name().starts_with("MARKERS") && m.name() != "MARKERS.type" {
            let bytes = storage.get(&m.path, Purpose::Other).await?;
            out.extend(markers_file_entries(&bytes));
        } else if let Some(file) = marked_file(inside) {
            out.push(file.to_string());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Deletes what a plan names (relative to `root`); an absent file counts as deleted.
async fn delete_planned(
    storage: &dyn Storage,
    root: &str,
    plan: &RollbackPlan,
) -> Result<(Vec<String>, OrderedMap<RollbackPartitionMetadata>)> {
    let mut deleted = Vec::new();
    let mut by_partition: OrderedMap<RollbackPartitionMetadata> = OrderedMap::new();
    for request in plan.rollback_requests.iter().flatten() {
        // v8+ log files belong to one instant: a log file named for rollback is deleted
        // whole (Java 1.0 marker plans put them here).
        let named = request.files_to_be_deleted.iter().chain(
            request
                .log_blocks_to_be_deleted
                .iter()
                .flat_map(|m| m.keys()),
        );
        let entry = by_partition
            .entry(request.partition_path.clone())
            .or_insert_with(|| RollbackPartitionMetadata {
                partition_path: request.partition_path.clone(),
                rollback_log_files: Some(OrderedMap::new()),
                log_files_from_failed_commit: Some(OrderedMap::new()),
                ..RollbackPartitionMetadata::default()
            });
        for file in named {
            let Some(path) = resolve(root, &request.partition_path, file) else {
                continue;
            };
            match storage.delete(&path).await {
                Ok(()) | Err(HudiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
            entry.success_delete_files.push(file.clone());
            deleted.push(path);
        }
    }
    Ok((deleted, by_partition))
}

fn rollback_metadata(
    r: &str,
    target: &InstantInfo,
    started_ms: i64,
    partitions: OrderedMap<RollbackPartitionMetadata>,
) -> RollbackMetadata {
    let total: usize = partitions
        .values()
        .map(|p| p.success_delete_files.len())
        .sum();
    RollbackMetadata {
        start_rollback_time: r.to_string(),
        time_taken_in_millis: (files::now_ms() - started_ms).max(0),
        total_files_deleted: i32::try_from(total).unwrap_or(i32::MAX),
        commits_rollback: vec![target.commit_time.clone()],
        partition_metadata: partitions,
        version: Some(ROLLBACK_VERSION),
        instants_rollback: vec![target.clone()],
    }
}

/// Deletes the pending files of instant `t` in `listing` (inflight before requested, as
/// Java's `deleteInflightAndRequestedInstant`). A table service's plan stays: its rollback
/// only reverts it to requested, for the next run to execute again (Java's
/// `revertCompactionInflightToRequested`).
async fn delete_pending_instant(
    storage: &dyn Storage,
    listing: &Listing,
    target: &InstantInfo,
) -> Result<()> {
    let t = &target.commit_time;
    let keep_plan = is_service(&target.action);
    let mut files = listing.of(t);
    files.sort_by_key(|(p, _)| std::cmp::Reverse(p.state));
    for (p, path) in files {
        if p.state == State::Completed || (keep_plan && p.state == State::Requested) {
            continue;
        }
        match storage.delete(&path).await {
            Ok(()) | Err(HudiError::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

async fn put_inflight(storage: &dyn Storage, dir: &str, r: &str) -> Result<()> {
    let path = join(
        dir,
        &instant_file_name(r, action::ROLLBACK, State::Inflight, None),
    );
    match storage.put(&path, Bytes::new(), PutMode::Create).await {
        // Already there: a resumed rollback.
        Ok(_) | Err(HudiError::Conflict { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

async fn execute(
    client: &MetaClient,
    r: &str,
    target: &InstantInfo,
    plan: &RollbackPlan,
    resumed: bool,
) -> Result<RolledBack> {
    let config = client.config();
    let storage: &dyn Storage = client.storage().as_ref();
    let started = files::now_ms();
    let t = &target.commit_time;
    put_inflight(storage, &config.timeline_dir, r).await?;
    let (deleted, partitions) = delete_planned(storage, "", plan).await?;
    let metadata_table = if config.metadata_partitions.is_empty() {
        false
    } else {
        rollback_in_metadata_table(storage, config, r, target).await?
    };
    let timeline = Listing::load(storage, &config.timeline_dir).await?;
    delete_pending_instant(storage, &timeline, target).await?;
    let meta = rollback_metadata(r, target, started, partitions);
    let completion = fresh_time(storage, config).await?;
    storage
        .put(
            &join(
                &config.timeline_dir,
                &instant_file_name(r, action::ROLLBACK, State::Completed, Some(&completion)),
            ),
            Bytes::from(encode_rollback_metadata(&meta)?),
            PutMode::Create,
        )
        .await?;
    // Markers are bookkeeping: Java deletes them quietly after the rollback completes.
    if let Ok(markers) = storage
        .list(&crate::write::pending::marker_dir(t), true)
        .await
    {
        for m in markers.iter().filter(|m| !m.is_dir) {
            let _ = storage.delete(&m.path).await;
        }
    }
    let _ = storage
        .delete_empty_dir(&crate::write::pending::marker_dir(t))
        .await;
    delete_schema_history_of(client, t).await;
    Ok(RolledBack {
        rollback_instant: r.to_string(),
        completion_time: completion,
        instant: t.clone(),
        action: target.action.clone(),
        files_deleted: deleted,
        metadata_table,
        resumed,
    })
}

/// The InternalSchema history files a failed write `t` left on a table whose schema
/// evolved on read (readers skip them; Java's next writer deletes them as residue), quietly.
async fn delete_schema_history_of(client: &MetaClient, t: &str) {
    let visibility = client.timeline().visibility_as_of(None);
    if !matches!(
        crate::snapshot::schema::latest_internal_schema(client, &visibility).await,
        Ok(Some(_))
    ) {
        return;
    }
    let dir = crate::schema::evolution::HISTORY_DIR;
    let Ok(listed) = client.storage().list(dir, false).await else {
        return;
    };
    for o in listed.iter().filter(|o| !o.is_dir) {
        let file = crate::schema::evolution::history_file_instant(&o.path);
        if file.is_some_and(|(instant, _)| instant == t) {
            let _ = client.storage().delete(&o.path).await;
        }
    }
}

/// Java 1.x (`HoodieBackedTableMetadataWriter.update(HoodieRollbackMetadata)`): when the
/// metadata table has a delta commit of the failed instant (in any state), its own write
/// client rolls it back with a rollback instant of the same time `r`; the `files`
/// partition gets no records for it. The metadata table writes without markers, so the
/// plan lists its partitions for files carrying the instant. Returns whether it had one.
async fn rollback_in_metadata_table(
    storage: &dyn Storage,
    config: &TableConfig,
    r: &str,
    target: &InstantInfo,
) -> Result<bool> {
    let dir = mdt_timeline_dir();
    let timeline = Listing::load(storage, &dir).await?;
    let t = &target.commit_time;
    if timeline.is_completed(r) {
        return Ok(true);
    }
    let requested = join(
        &dir,
        &instant_file_name(r, action::ROLLBACK, State::Requested, None),
    );
    let pending_rollback = timeline
        .of(r)
        .iter()
        .any(|(p, _)| p.action == action::ROLLBACK);
    let delta = timeline.of(t);
    let plan = if pending_rollback {
        read_plan(storage, &requested).await?
    } else {
        if !delta.iter().any(|(p, _)| p.action == action::DELTA_COMMIT) {
            return Ok(false);
        }
        let mdt_target = InstantInfo {
            commit_time: t.clone(),
            action: action::DELTA_COMMIT.to_string(),
        };
        let location = storage.location();
        let mut requests = Vec::new();
        let partitions = storage.list(METADATA_DIR, false).await?;
        for p in partitions
            .iter()
            .filter(|m| m.is_dir && m.name() != ".hoodie" && !m.name().is_empty())
        {
            let listed = storage.list(&p.path, false).await?;
            for (partition, path) in files_of_instant(&listed, t, METADATA_DIR) {
                requests.push(listing_request(&location, partition, &path));
            }
        }
        let plan = RollbackPlan {
            instant_to_rollback: Some(mdt_target),
            rollback_requests: Some(requests),
            version: Some(ROLLBACK_VERSION),
        };
        storage
            .put(
                &requested,
                Bytes::from(encode_rollback_plan(&plan)?),
                PutMode::Create,
            )
            .await?;
        plan
    };
    let started = files::now_ms();
    put_inflight(storage, &dir, r).await?;
    // A completed delta commit is first un-published (Java's `revertToInflight`).
    for (p, path) in &delta {
        if p.state == State::Completed && p.action == action::DELTA_COMMIT {
            storage.delete(path).await?;
        }
    }
    let (_, partitions) = delete_planned(storage, METADATA_DIR, &plan).await?;
    let mdt_target = plan.instant_to_rollback.clone().unwrap_or(InstantInfo {
        commit_time: t.clone(),
        action: action::DELTA_COMMIT.to_string(),
    });
    let timeline = Listing::load(storage, &dir).await?;
    delete_pending_instant(storage, &timeline, &mdt_target).await?;
    let meta = rollback_metadata(r, &mdt_target, started, partitions);
    let completion = fresh_time(storage, config).await?;
    storage
        .put(
            &join(
                &dir,
                &instant_file_name(r, action::ROLLBACK, State::Completed, Some(&completion)),
            ),
            Bytes::from(encode_rollback_metadata(&meta)?),
            PutMode::Create,
        )
        .await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_paths_round_trip_through_any_base() {
        assert_eq!(
            absolute("file:///data/t", "p/a_0-0-0_1.parquet"),
            "/data/t/p/a_0-0-0_1.parquet"
        );
        assert_eq!(absolute("s3://b/t/", "x.parquet"), "s3://b/t/x.parquet");
        assert_eq!(absolute("memory://", "x.parquet"), "x.parquet");
        // A Java plan's absolute path resolves by partition and name.
        assert_eq!(
            resolve("", "2024/01", "/opt/wh/t/2024/01/f_1-2-3_9.parquet").as_deref(),
            Some("2024/01/f_1-2-3_9.parquet")
        );
        assert_eq!(
            resolve(
                METADATA_DIR,
                "files",
                "/x/.hoodie/metadata/files/.files-0000-0_9.log.1_0-1-2"
            )
            .as_deref(),
            Some(".hoodie/metadata/files/.files-0000-0_9.log.1_0-1-2")
        );
        assert_eq!(resolve("", "p", "/x/.."), None);
    }

    #[test]
    fn lists_only_files_of_the_instant() {
        let listed = vec![
            ObjectMeta::file("p/a_0-0-0_5.parquet", 1),
            ObjectMeta::file("p/a_0-0-0_4.parquet", 1),
            ObjectMeta::file("p/.b_5.log.1_0-0-0", 1),
            ObjectMeta::file("p/.hoodie_partition_metadata", 1),
            ObjectMeta::file(".hoodie/metadata/files/.files-0000-0_5.log.1_0-0-0", 1),
            ObjectMeta::file("c_0-0-0_5.parquet", 1),
        ];
        let got = files_of_instant(&listed, "5", "");
        assert_eq!(
            got,
            vec![
                ("".to_string(), "c_0-0-0_5.parquet".to_string()),
                ("p".to_string(), "p/.b_5.log.1_0-0-0".to_string()),
                ("p".to_string(), "p/a_0-0-0_5.parquet".to_string()),
            ]
        );
        let mdt = files_of_instant(&listed[4..5], "5", METADATA_DIR);
        assert_eq!(mdt[0].0, "files");
    }
}
