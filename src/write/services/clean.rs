//! Cleaning old file slices of the data table and of the metadata table, recorded as Apache
//! Hudi 1.1 records a clean (`CleanActionExecutor`, docs/hudi-format.md §10.8). What to delete
//! is decided by [`crate::clean`]; this reads what it needs and writes.
//!
//! Order: `t.clean.requested` (the plan: full paths), `t.clean.inflight` (empty), the deletes
//! (only base and log files the plan names inside the table; a file already gone is recorded
//! as a failed delete, as Java records it), the metadata table's delta commit at `t` (the
//! files' names deleted from `files`, their `column_stats` entries deleted), then
//! `t_<completion>.clean` written create-if-absent: the commit point. A clean left pending (a
//! crash, ours or Java's) is finished from its plan by the next clean before a new one is
//! planned; every step is idempotent.
//!
//! The metadata table's own clean (Java `HoodieBackedTableMetadataWriter.cleanIfNecessary`)
//! uses the data table's policy scaled ([`CleanConfig::for_metadata_table`]), only once three
//! instants completed after its last compaction; it writes no metadata of its own.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use serde::Serialize;

use crate::clean::{self, CleanConfig, LastClean, PartitionGroups, Protected};
use crate::error::{HudiError, Result};
use crate::file_group::view::{self, DataFile};
use crate::file_group::{BaseFile, LogFile};
use crate::meta_client::MetaClient;
use crate::metadata::delta::{build_clean_delta, MdtLayout};
use crate::metadata::table::METADATA_DIR;
use crate::storage::{join, IoSnapshot, PutMode, Storage, StorageExt};
use crate::timeline::instant::{action, State};
use crate::timeline::metadata::{
    decode_instant_file, CleanFileInfo, CleanMetadata, CleanPartitionMetadata, CleanerPlan,
    OrderedMap,
};
use crate::timeline::write::{
    encode_clean_metadata, encode_cleaner_plan, instant_file_name, new_instant_time,
};
use crate::timeline::Instant;
use crate::write::lock::{Concurrency, LockConfig, TableLock};
use crate::write::occ;
use crate::write::pending::Listing;
use crate::write::services::rollback::{absolute, RolledBack};
use crate::write::{files, mdt, Ctx};

/// One clean that ran (or was finished).
#[derive(Debug, Clone, Serialize)]
pub struct Clean {
    /// `data` or `metadata` (the metadata table's own clean).
    pub table: &'static str,
    pub instant: String,
    pub completion_time: String,
    /// It finished a clean left pending by an earlier run (ours or Java's).
    pub resumed: bool,
    pub policy: String,
    pub earliest_commit_to_retain: String,
    pub files_deleted: usize,
    /// Planned files that were already gone (Java records them as failed deletes).
    pub files_missing: usize,
    /// Bytes of the deleted files, as listed when planned (unknown for a resumed plan: 0).
    pub bytes_freed: u64,
    pub partitions: usize,
    /// Requests of this clean alone.
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

/// A clean run: failed writes it rolled back first (LAZY policy), then the cleans.
#[derive(Debug, Clone, Serialize)]
pub struct Cleaned {
    pub rolled_back: Vec<RolledBack>,
    pub cleans: Vec<Clean>,
}

/// Failed writes rolled back before a clean under Hudi's LAZY failed-writes policy (Java's
/// cleaner runs `rollbackFailedWrites` first): pending writes whose heartbeat expired, under
/// the table lock when several writers run. A timeline with no pending write costs one
/// listing and takes no lock.
pub async fn roll_back_failed_writes(
    table: &Ctx<'_>,
    concurrency: &Concurrency,
) -> Result<Vec<RolledBack>> {
    let client = table.client;
    let objects = crate::write::pending::list_timeline(client).await?;
    if Listing::of_timeline(client.config(), &objects)
        .pending_writes()
        .is_empty()
    {
        return Ok(Vec::new());
    }
    match concurrency {
        // One writer: no heartbeat settings of its own, Java's defaults.
        Concurrency::SingleWriter => {
            occ::roll_back_dead_writes(table, &LockConfig::default()).await
        }
        Concurrency::Optimistic(c) => {
            let lock = TableLock::new(client.storage().as_ref(), c.clone())?;
            lock.run(occ::roll_back_dead_writes(table, c)).await
        }
    }
}

/// Cleans the data table when due (or finishes a pending clean) and then the metadata table
/// (when due). `data` false skips the data table (automatic cleaning off: the metadata
/// table's clean still runs, as Java's metadata writer runs it regardless). Under
/// optimistic concurrency a clean is planned without the table lock, as Java plans one, and
/// recorded, executed and committed under it; nothing due takes no lock.
pub async fn run(
    table: &Ctx<'_>,
    config: &CleanConfig,
    concurrency: &Concurrency,
    data: bool,
) -> Result<Vec<Clean>> {
    // The metadata table's timeline as the handle holds it, when it does: enough to tell
    // that its clean has nothing to do without opening it.
    let held = table.metadata.cached().map(|m| m.mdt_timeline());
    let lock = match concurrency {
        Concurrency::SingleWriter => None,
        Concurrency::Optimistic(c) => {
            Some(TableLock::new(table.client.storage().as_ref(), c.clone())?)
        }
    };
    let mut done = Vec::new();
    if data {
        done.extend(clean_data(table, config, lock.as_ref()).await?);
    }
    let mdt_config = config.for_metadata_table();
    let idle = held.as_ref().is_some_and(|t| {
        let tz = table.client.config().timezone;
        !clean::metadata_table_may_clean(t, &mdt_config, files::now_ms(), tz)
    });
    if !table.client.config().metadata_partitions.is_empty() && !idle {
        let mdt = clean_metadata_table(table, config);
        done.extend(match &lock {
            None => mdt.await?,
            Some(lock) => lock.run(mdt).await?,
        });
    }
    Ok(done)
}

/// What a clean works on: the data table (with a metadata table to keep in step) or the
/// metadata table itself (`client` its own, `table` the data table's).
struct Target<'a> {
    name: &'static str,
    client: &'a MetaClient,
    table: &'a Ctx<'a>,
    /// The data table itself (else its metadata table).
    is_data: bool,
}

async fn clean_data(
    table: &Ctx<'_>,
    config: &CleanConfig,
    lock: Option<&TableLock<'_>>,
) -> Result<Option<Clean>> {
    let client = table.client;
    let objects = crate::write::pending::list_timeline(client).await?;
    client.refresh_timeline(&objects);
    let target = Target {
        name: "data",
        client,
        table,
        is_data: true,
    };
    let done = match lock {
        None => clean_target(&target, config).await,
        Some(lock) => clean_locked(&target, config, lock).await,
    };
    if !matches!(done, Ok(None)) {
        table.metadata.clear();
    }
    done
}

/// [`clean_target`] with the work planned first and done under `lock`, unless another
/// writer's clean started or finished meanwhile (then that one stands; the next run plans
/// again).
async fn clean_locked(
    target: &Target<'_>,
    config: &CleanConfig,
    lock: &TableLock<'_>,
) -> Result<Option<Clean>> {
    let client = target.client;
    let (io, started) = (client.io(), files::now_ms());
    let Some(work) = prepare(target, config).await? else {
        return Ok(None);
    };
    let seen = cleans(&client.timeline());
    let done = lock
        .run(async {
            let objects = crate::write::pending::list_timeline(client).await?;
            client.refresh_timeline(&objects);
            if cleans(&client.timeline()) != seen {
                return Ok(None);
            }
            perform(target, work).await.map(Some)
        })
        .await?;
    Ok(done.map(|d| finished(d, client, &io, started)))
}

/// The clean instants of a timeline and their states.
fn cleans(timeline: &crate::timeline::Timeline) -> Vec<(String, State)> {
    timeline
        .instants
        .iter()
        .filter(|i| i.requested_action() == action::CLEAN)
        .map(|i| (i.requested_time.clone(), i.state))
        .collect()
}

async fn clean_metadata_table(table: &Ctx<'_>, config: &CleanConfig) -> Result<Option<Clean>> {
    let mdt = MetaClient::open_nested(table.client, METADATA_DIR).await?;
    let timeline = mdt.timeline();
    // A pending clean was planned past the wait after a compaction: finished at once (it
    // deletes nothing newer than it planned).
    let pending = timeline
        .pending()
        .any(|i| i.requested_action() == action::CLEAN);
    let waiting =
        clean::instants_since_compaction(&timeline).is_some_and(|n| n < clean::METADATA_CLEAN_WAIT);
    if waiting && !pending {
        return Ok(None);
    }
    let target = Target {
        name: "metadata",
        client: &mdt,
        table,
        is_data: false,
    };
    let done = clean_target(&target, &config.for_metadata_table()).await;
    if !matches!(done, Ok(None)) {
        table.metadata.clear();
    }
    done
}

/// Finishes a pending clean, else plans one when due and runs it.
async fn clean_target(target: &Target<'_>, config: &CleanConfig) -> Result<Option<Clean>> {
    let client = target.client;
    let (io, started) = (client.io(), files::now_ms());
    let Some(work) = prepare(target, config).await? else {
        return Ok(None);
    };
    let done = perform(target, work).await?;
    Ok(Some(finished(done, client, &io, started)))
}

/// A clean's requests and time since `io` and `started`.
fn finished(mut done: Clean, client: &MetaClient, io: &IoSnapshot, started: i64) -> Clean {
    done.io = client.io().since(io);
    done.elapsed_ms = (files::now_ms() - started).max(0);
    done
}

/// What a clean is to do: finish a pending one from its plan, or record and run a new plan.
enum Work {
    Resume(String, CleanerPlan),
    New(CleanerPlan, Sizes),
}

/// A pending clean's plan, else a new plan when one is due (no request that changes storage).
async fn prepare(target: &Target<'_>, config: &CleanConfig) -> Result<Option<Work>> {
    let client = target.client;
    let timeline = client.timeline();
    let pending = timeline
        .pending()
        .find(|i| i.requested_action() == action::CLEAN)
        .cloned();
    Ok(match pending {
        Some(p) => read_plan(client, &p)
            .await?
            .map(|plan| Work::Resume(p.requested_time.clone(), plan)),
        None => plan(target, config)
            .await?
            .map(|(plan, sizes)| Work::New(plan, sizes)),
    })
}

async fn perform(target: &Target<'_>, work: Work) -> Result<Clean> {
    match work {
        Work::Resume(t, plan) => execute(target, &t, &plan, &HashMap::new(), true).await,
        Work::New(plan, sizes) => {
            let client = target.client;
            let t = fresh_time(target.table).await?;
            let path = instant_path(client, &t, State::Requested, None);
            let bytes = Bytes::from(encode_cleaner_plan(&plan)?);
            client.storage().put(&path, bytes, PutMode::Create).await?;
            execute(target, &t, &plan, &sizes, false).await
        }
    }
}

fn instant_path(client: &MetaClient, t: &str, state: State, completion: Option<&str>) -> String {
    join(
        &client.config().timeline_dir,
        &instant_file_name(t, action::CLEAN, state, completion),
    )
}

/// The plan of a pending clean; `None` (and the pending files removed, as Java repairs
/// them) when its requested file is empty.
async fn read_plan(client: &MetaClient, pending: &Instant) -> Result<Option<CleanerPlan>> {
    let storage = client.storage();
    let path = instant_path(client, &pending.requested_time, State::Requested, None);
    let bytes = storage
        .get(&path, crate::storage::Purpose::Timeline)
        .await?;
    if bytes.is_empty() {
        let inflight = instant_path(client, &pending.requested_time, State::Inflight, None);
        for p in [inflight, path] {
            match storage.delete(&p).await {
                Ok(()) | Err(HudiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        return Ok(None);
    }
    CleanerPlan::from_json(decode_instant_file(&bytes, &path)?, &path).map(Some)
}

/// A time later than every time on the data and metadata timelines, as listed now.
async fn fresh_time(table: &Ctx<'_>) -> Result<String> {
    let config = table.client.config();
    let storage: &dyn Storage = table.client.storage().as_ref();
    let mut times = Listing::load(storage, &config.timeline_dir)
        .await?
        .all_times();
    if !config.metadata_partitions.is_empty() {
        let dir = join(METADATA_DIR, ".hoodie/timeline");
        times.extend(Listing::load(storage, &dir).await?.all_times());
    }
    let refs: Vec<&str> = times.iter().map(String::as_str).collect();
    new_instant_time(files::now_ms(), config.timezone, &refs)
}

/// The last completed clean's retain point, last commit and savepoints.
async fn last_clean(client: &MetaClient) -> Result<Option<LastClean>> {
    let timeline = client.timeline();
    let Some(last) = timeline
        .completed()
        .rfind(|i| i.action == action::CLEAN && !i.archived)
    else {
        return Ok(None);
    };
    let content = client.instant_content(last).await?;
    // An empty clean file (Java writes none, but repairs them) says nothing.
    if content.as_object().is_some_and(|o| o.is_empty()) {
        return Ok(None);
    }
    let meta = CleanMetadata::from_json(content, &last.file)?;
    let savepointed = meta
        .extra_metadata
        .as_ref()
        .and_then(|m| m.get(clean::SAVEPOINTED_TIMESTAMPS))
        .map(|s| {
            s.split(',')
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(LastClean {
        earliest_commit_to_retain: meta.earliest_commit_to_retain,
        last_completed_commit: meta.last_completed_commit_timestamp,
        savepointed,
    }))
}

/// Savepoints (requested times) and the file names they keep.
async fn savepoints(client: &MetaClient) -> Result<(Vec<String>, Protected)> {
    let timeline = client.timeline();
    let mut protected = Protected::default();
    let mut times = Vec::new();
    for i in timeline
        .completed()
        .filter(|i| i.action == action::SAVEPOINT && !i.archived)
    {
        times.push(i.requested_time.clone());
        let content = client.instant_content(i).await?;
        let partitions = content.get("partitionMetadata").and_then(|v| v.as_object());
        for p in partitions.into_iter().flat_map(|m| m.values()) {
            let names = p.get("savepointDataFile").and_then(|v| v.as_array());
            for n in names.into_iter().flatten().filter_map(|v| v.as_str()) {
                let name = n.rsplit('/').next().unwrap_or(n);
                protected.savepointed_files.insert(name.to_string());
            }
        }
    }
    Ok((times, protected))
}

/// File groups pending compactions and log compactions read, by their base instant.
async fn pending_compactions(client: &MetaClient, protected: &mut Protected) -> Result<()> {
    let timeline = client.timeline();
    for i in timeline.pending().filter(|i| {
        matches!(
            i.requested_action(),
            action::COMPACTION | action::LOG_COMPACTION
        )
    }) {
        let Some(plan) = client.instant_plan(i).await? else {
            continue;
        };
        let ops = plan.get("operations").and_then(|v| v.as_array());
        for op in ops.into_iter().flatten() {
            let field = |k: &str| op.get(k).and_then(|v| v.as_str()).map(str::to_string);
            if let (Some(p), Some(f), Some(b)) = (
                field("partitionPath"),
                field("fileId"),
                field("baseInstantTime"),
            ) {
                protected.pending_compaction.insert((p, f), b);
            }
        }
    }
    Ok(())
}

/// The data files of `partitions` (every partition when `None`): from the metadata table's
/// `files` partition when the data table has one, else by listing.
async fn data_files(
    target: &Target<'_>,
    partitions: Option<&[String]>,
    by_versions: bool,
) -> Result<Vec<DataFile>> {
    if target.is_data {
        let table = target.table;
        if table.client.config().metadata_files_available() {
            // The handle's metadata table as it opened it (before a write's own commit, after
            // it): its listing lacks at most the newest slices, and those a clean by commits
            // or hours never deletes (the newest slice stays, and the one before it is either
            // the last before the retain point or after it). Versions are counted afresh.
            let held = (table.metadata.cached())
                .filter(|m| !by_versions && only_writes_since(&table.client.timeline(), m));
            let mdt = match held {
                Some(m) => m,
                None => table.metadata_table(&[]).await?,
            };
            let all = match partitions {
                Some(p) => p.to_vec(),
                None => mdt.all_partitions().await?,
            };
            return mdt.files(&all).await;
        }
    }
    let listed = crate::snapshot::listing::list_data_files(target.client).await?;
    Ok(listed
        .into_iter()
        .filter(|(p, _)| partitions.is_none_or(|want| want.contains(p)))
        .map(|(partition, m)| DataFile {
            name: m.name().to_string(),
            partition,
            size: m.size,
        })
        .collect())
}

/// Whether every data instant completed after what `mdt` knows is a plain write (no clean,
/// compaction or replace commit that would make its listing more than a few slices behind).
fn only_writes_since(
    timeline: &crate::timeline::Timeline,
    mdt: &crate::metadata::MetadataTable,
) -> bool {
    let Some(known) = mdt.latest_instant() else {
        return false;
    };
    timeline
        .completed()
        .filter(|i| crate::timeline::compare_instant_times(&i.requested_time, &known).is_gt())
        .all(|i| {
            matches!(i.action.as_str(), action::COMMIT | action::DELTA_COMMIT)
                && i.requested_action() == i.action
        })
}

/// Replaced file groups by the completed replace commit (requested time) that replaced them.
async fn replaced_groups(client: &MetaClient) -> Result<HashMap<(String, String), String>> {
    let timeline = client.timeline();
    let replaces: Vec<&Instant> = timeline
        .completed_writes()
        .filter(|i| i.action == action::REPLACE_COMMIT && !i.archived)
        .collect();
    let metas = client.commit_metadata_of(&replaces).await?;
    let mut out = HashMap::new();
    for (i, m) in replaces.iter().zip(metas) {
        for (p, f) in m.replaced_file_ids() {
            out.insert((p.to_string(), f.to_string()), i.requested_time.clone());
        }
    }
    Ok(out)
}

/// Partitions written (or replaced) by `instants`.
async fn partitions_of(client: &MetaClient, instants: &[&Instant]) -> Result<Vec<String>> {
    let metas = client.commit_metadata_of(instants).await?;
    Ok(clean::sorted(metas.iter().flat_map(|m| {
        let written = m.write_stats().map(|(p, _)| p.to_string());
        let replaced = m.replaced_file_ids().map(|(p, _)| p.to_string());
        written.chain(replaced).collect::<Vec<_>>()
    })))
}

/// Sizes of the files a plan deletes, by (partition, name).
type Sizes = HashMap<(String, String), u64>;

/// Java's `CleanPlanActionExecutor.requestClean`: `None` when not due or nothing to delete.
async fn plan(target: &Target<'_>, config: &CleanConfig) -> Result<Option<(CleanerPlan, Sizes)>> {
    let client = target.client;
    let timeline = client.timeline();
    let last = last_clean(client).await?;
    if !clean::needs_cleaning(&timeline, last.as_ref(), config.max_commits) {
        return Ok(None);
    }
    let retain = clean::earliest_commit_to_retain(
        &timeline,
        config,
        files::now_ms(),
        client.config().timezone,
    );
    if retain.is_none() && config.policy != clean::Policy::KeepLatestFileVersions {
        return Ok(None);
    }
    // Savepoints only count on a partitioned data table (Java's planner).
    let (savepoint_times, mut protected) = if target.is_data && client.config().is_partitioned() {
        savepoints(client).await?
    } else {
        (Vec::new(), Protected::default())
    };
    pending_compactions(client, &mut protected).await?;
    let scan = clean::incremental_range(
        &timeline,
        config,
        last.as_ref(),
        retain.as_ref(),
        &savepoint_times,
    );
    let partitions = match &scan {
        Some(instants) => Some(partitions_of(client, instants).await?),
        None => None,
    };
    if partitions.as_ref().is_some_and(|p| p.is_empty()) {
        return Ok(None);
    }
    let (files, replaced) = futures::try_join!(
        data_files(
            target,
            partitions.as_deref(),
            config.policy == clean::Policy::KeepLatestFileVersions
        ),
        replaced_groups(client)
    )?;
    let sizes: Sizes = files
        .iter()
        .map(|f| ((f.partition.clone(), f.name.clone()), f.size))
        .collect();
    let mut by_partition: BTreeMap<String, PartitionGroups> = BTreeMap::new();
    if let Some(p) = &partitions {
        for name in p {
            by_partition.entry(name.clone()).or_default();
        }
    }
    // CDC log files go with the base file written beside them (same file group and instant):
    // the view leaves them out of slices, the clean deletes them with their slice.
    let mut cdc_files: HashMap<(String, String, String), Vec<String>> = HashMap::new();
    for f in &files {
        if let Some(l) = LogFile::parse(&f.name, f.size).filter(|l| l.cdc) {
            cdc_files
                .entry((f.partition.clone(), l.file_id, l.instant))
                .or_default()
                .push(f.name.clone());
        }
    }
    let visibility = timeline.visibility_as_of(None);
    let fs_view = view::build(files, &visibility, client.config(), &Default::default());
    for g in fs_view.groups {
        let entry = by_partition.entry(g.partition.clone()).or_default();
        match replaced.get(&(g.partition.clone(), g.file_id.clone())) {
            Some(t) => entry.replaced.push((g, t.clone())),
            None => entry.groups.push(g),
        }
    }
    let commits = timeline
        .completed()
        .filter(|i| !i.archived && clean::is_commit_like(i))
        .count();
    let location = client.storage().location();
    let mut to_delete: OrderedMap<Vec<CleanFileInfo>> = OrderedMap::new();
    let mut partitions_to_delete = Vec::new();
    let partitioned = target.is_data && client.config().is_partitioned();
    for (partition, groups) in &by_partition {
        let found = clean::files_to_clean(groups, config, retain.as_ref(), commits, &protected);
        if found.delete_partition && partitioned && !partition.is_empty() {
            partitions_to_delete.push(partition.clone());
        }
        if found.files.is_empty() {
            continue;
        }
        let with_cdc: Vec<&String> = (found.files.iter())
            .flat_map(|name| {
                let cdc = BaseFile::parse(name, 0)
                    .and_then(|b| cdc_files.get(&(partition.clone(), b.file_id, b.instant)));
                std::iter::once(name).chain(cdc.into_iter().flatten())
            })
            .collect();
        let infos = with_cdc
            .into_iter()
            .map(|name| CleanFileInfo {
                file_path: Some(absolute(&location, &join(partition, name))),
                is_bootstrap_base_file: Some(false),
            })
            .collect();
        to_delete.insert(partition.clone(), infos);
    }
    if to_delete.values().all(Vec::is_empty) {
        return Ok(None);
    }
    let mut extra = OrderedMap::new();
    if !savepoint_times.is_empty() {
        extra.insert(
            clean::SAVEPOINTED_TIMESTAMPS.to_string(),
            savepoint_times.join(","),
        );
    }
    let plan = CleanerPlan {
        earliest_instant_to_retain: retain,
        last_completed_commit_timestamp: clean::last_completed_commit(&timeline),
        policy: config.policy.name().to_string(),
        files_to_be_deleted_per_partition: Some(OrderedMap::new()),
        version: Some(clean::VERSION),
        file_paths_to_be_deleted_per_partition: Some(to_delete),
        partitions_to_be_deleted: Some(partitions_to_delete),
        extra_metadata: Some(extra),
    };
    Ok(Some((plan, sizes)))
}

/// Deletes of one clean in flight at once (the storage may bound them lower).
const CONCURRENT_DELETES: usize = 32;

/// Whether `name` is a base or log file (the only files a clean deletes).
fn is_data_file(name: &str) -> bool {
    BaseFile::parse(name, 0).is_some() || LogFile::parse(name, 0).is_some()
}

/// Runs plan `plan` of clean `t`: inflight, deletes, the metadata table's delta commit, the
/// completed instant.
async fn execute(
    target: &Target<'_>,
    t: &str,
    plan: &CleanerPlan,
    sizes: &Sizes,
    resumed: bool,
) -> Result<Clean> {
    let client = target.client;
    let storage: &dyn Storage = client.storage().as_ref();
    let started = files::now_ms();
    let requested = instant_path(client, t, State::Requested, None);
    let inflight = instant_path(client, t, State::Inflight, None);
    match storage.put(&inflight, Bytes::new(), PutMode::Create).await {
        Ok(_) | Err(HudiError::Conflict { .. }) => {}
        Err(e) => return Err(e),
    }
    let policy = plan.policy.clone();
    let mut partitions: OrderedMap<CleanPartitionMetadata> = OrderedMap::new();
    let (mut deleted, mut missing, mut bytes) = (0usize, 0usize, 0u64);
    // (partition, its directory, file name) of each file the plan deletes.
    let mut doomed: Vec<(String, String, String)> = Vec::new();
    for (partition, infos) in plan.file_paths_to_be_deleted_per_partition.iter().flatten() {
        let inside = crate::storage::path::within_table(partition, &requested)?;
        if inside.starts_with(".hoodie") && target.is_data {
            return Err(HudiError::corrupt(
                &requested,
                format!("a clean of partition {partition:?} inside .hoodie"),
            ));
        }
        let entry = partitions
            .entry(partition.clone())
            .or_insert_with(|| CleanPartitionMetadata {
                partition_path: partition.clone(),
                policy: policy.clone(),
                ..Default::default()
            });
        for info in infos {
            let Some(full) = info.file_path.as_deref() else {
                continue;
            };
            // A bootstrap source file lives outside the table: never ours to delete.
            if info.is_bootstrap_base_file == Some(true) {
                return Err(HudiError::unsupported_in(
                    format!("a clean plan deleting the bootstrap base file {full}"),
                    requested.clone(),
                ));
            }
            let name = full.rsplit('/').next().unwrap_or(full);
            let name = crate::storage::path::plain_name(name, &requested)?;
            if !is_data_file(name) {
                return Err(HudiError::corrupt(
                    &requested,
                    format!("the plan deletes {full:?}, which is not a base or log file"),
                ));
            }
            entry.delete_path_patterns.push(name.to_string());
            doomed.push((partition.clone(), inside.clone(), name.to_string()));
        }
    }
    // Every name checked before the first delete; the deletes then go out together (a
    // clean of a busy table deletes hundreds of files: one round trip each, in turn, took
    // minutes on an object store).
    let outcomes: Vec<Result<()>> = futures::stream::iter(doomed.iter())
        .map(|(_, inside, name)| {
            let path = join(inside, name);
            async move { storage.delete(&path).await }
        })
        .buffered(CONCURRENT_DELETES)
        .collect()
        .await;
    for ((partition, _, name), outcome) in doomed.into_iter().zip(outcomes) {
        let Some(entry) = partitions.get_mut(&partition) else {
            continue; // each was entered above
        };
        match outcome {
            Ok(()) => {
                deleted += 1;
                bytes += sizes.get(&(partition, name.clone())).copied().unwrap_or(0);
                entry.success_delete_files.push(name);
            }
            Err(HudiError::NotFound { .. }) => {
                missing += 1;
                entry.failed_delete_files.push(name);
            }
            Err(e) => return Err(e),
        }
    }
    let to_drop = plan.partitions_to_be_deleted.clone().unwrap_or_default();
    for partition in &to_drop {
        let inside = crate::storage::path::within_table(partition, &requested)?;
        if inside.is_empty() || inside.starts_with(".hoodie") {
            continue;
        }
        // An empty partition's last objects (its partition metadata file).
        for m in storage.list(&inside, true).await.unwrap_or_default() {
            if !m.is_dir {
                let _ = storage.delete(&m.path).await;
            }
        }
    }
    for p in partitions.values_mut() {
        p.is_partition_deleted = Some(to_drop.contains(&p.partition_path));
    }
    let meta = CleanMetadata {
        start_clean_time: t.to_string(),
        time_taken_in_millis: (files::now_ms() - started).max(0),
        total_files_deleted: i32::try_from(deleted).unwrap_or(i32::MAX),
        earliest_commit_to_retain: plan
            .earliest_instant_to_retain
            .as_ref()
            .map(|i| i.timestamp.clone())
            .unwrap_or_default(),
        last_completed_commit_timestamp: plan.last_completed_commit_timestamp.clone(),
        partition_metadata: partitions,
        version: Some(clean::VERSION),
        bootstrap_partition_metadata: Some(OrderedMap::new()),
        extra_metadata: Some(plan.extra_metadata.clone().unwrap_or_default()),
    };
    if target.is_data && !client.config().metadata_partitions.is_empty() {
        metadata_table_update(target.table, t, &meta, &to_drop).await?;
    }
    let completion = fresh_time(target.table).await?;
    let done = instant_path(client, t, State::Completed, Some(&completion));
    storage
        .put(
            &done,
            Bytes::from(encode_clean_metadata(&meta)?),
            PutMode::Create,
        )
        .await?;
    Ok(Clean {
        table: target.name,
        instant: t.to_string(),
        completion_time: completion,
        resumed,
        policy,
        earliest_commit_to_retain: meta.earliest_commit_to_retain,
        files_deleted: deleted,
        files_missing: missing,
        bytes_freed: bytes,
        partitions: meta.partition_metadata.len(),
        io: IoSnapshot::default(),
        elapsed_ms: 0,
    })
}

/// The metadata table's delta commit of clean `t` (Java `update(HoodieCleanMetadata)`):
/// requested, inflight, its log files, completed. Skipped when already completed (a resumed
/// clean); log files a cut-short attempt left are replaced.
async fn metadata_table_update(
    table: &Ctx<'_>,
    t: &str,
    meta: &CleanMetadata,
    deleted_partitions: &[String],
) -> Result<()> {
    let client = table.client;
    let storage: &Arc<dyn Storage> = client.storage();
    let dir = join(METADATA_DIR, ".hoodie/timeline");
    let timeline = Listing::load(storage.as_ref(), &dir).await?;
    if timeline.is_completed(t) {
        return Ok(());
    }
    let config = client.config();
    // Opened afresh: its listings must show every log file of `t` a cut-short attempt left.
    table.metadata.clear();
    let mdt = table.metadata_table(&[]).await?;
    let partitions: Vec<&str> = config
        .metadata_partitions
        .iter()
        .map(String::as_str)
        .collect();
    let layout = MdtLayout::load(&mdt, &partitions, config.timezone).await?;
    // A cut-short attempt's log files of `t` go first (they would count once `t` completes).
    let own = format!("_{t}.log.");
    for (partition, names) in &layout.existing {
        for n in names.iter().filter(|n| n.contains(&own)) {
            match storage
                .delete(&join(METADATA_DIR, &join(partition, n)))
                .await
            {
                Ok(()) | Err(HudiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    let layout = MdtLayout {
        existing: Default::default(),
        ..layout
    };
    let columns = if config
        .metadata_partitions
        .iter()
        .any(|p| p == "column_stats")
    {
        match mdt::indexed_columns(storage.as_ref(), config).await? {
            Some(c) => c,
            None => {
                let visibility = client.timeline().visibility_as_of(None);
                let schema = crate::snapshot::schema::table_schema(client, &visibility).await?;
                schema.fields().iter().map(|f| f.name().clone()).collect()
            }
        }
    } else {
        Vec::new()
    };
    let deleted: BTreeMap<String, Vec<String>> = meta
        .partition_metadata
        .iter()
        .map(|(p, m)| (p.clone(), m.delete_path_patterns.clone()))
        .collect();
    let logs = build_clean_delta(&layout, t, &deleted, deleted_partitions, &columns)?;
    let mut touched: Vec<String> = logs.iter().map(|l| l.partition.clone()).collect();
    touched.dedup();
    let delta = mdt::MdtDelta {
        logs,
        schema: layout.schema.clone(),
        partitions: touched,
    };
    let instant = mdt::prepare(config, &delta, t)?;
    match instant.request(storage.as_ref()).await {
        Ok(()) | Err(HudiError::Conflict { .. }) => {}
        Err(e) => return Err(e),
    }
    for (path, bytes) in instant.pending_puts() {
        storage.put(path, bytes, PutMode::Overwrite).await?;
    }
    let mut times = timeline.all_times();
    times.extend(
        Listing::load(storage.as_ref(), &client.config().timeline_dir)
            .await?
            .all_times(),
    );
    let refs: Vec<&str> = times.iter().map(String::as_str).collect();
    let completion = new_instant_time(files::now_ms(), config.timezone, &refs)?;
    let (path, bytes) = instant.completed(&completion);
    storage.put(&path, bytes, PutMode::Create).await?;
    Ok(())
}
