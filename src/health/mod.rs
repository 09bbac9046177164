//! A table's health at a glance: file sizes, the Merge-On-Read log backlog, pending and
//! failed writes, cleaning and archival lag, the storage lock, the metadata table, recent
//! write activity, and findings naming the service or setting that fixes each. Read from
//! the timeline, listings, instant files and the lock object only: no data block is read.
//! Each "is it due" question is asked of the service that decides it (compaction trigger,
//! cleaner retention, archiver, heartbeat expiry), never answered here again.
//!
//! [`discover`] finds every table under a prefix.

pub mod discover;
mod findings;

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use crate::clean::{self, PartitionGroups, Protected};
use crate::config::layout::{HEARTBEAT_DIR, LOCK_FILE, METADATA_DIR};
use crate::error::{HudiError, Result};
use crate::file_group::view::{self, DataFile, FileSystemView};
use crate::file_group::FileSlice;
use crate::meta_client::MetaClient;
use crate::storage::{IoSnapshot, Purpose, StorageExt};
use crate::timeline::time::instant_millis;
use crate::timeline::{action, compare_instant_times, Instant, Timeline};
use crate::write::WriteConfig;

pub use findings::{Finding, Severity};

/// Commit metadata read for write activity: the newest completed writes of the last week,
/// at most this many (one request each).
pub const ACTIVITY_MAX_COMMITS: usize = 100;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

macro_rules! wire {
    ($item:item) => {
        #[derive(Debug, Clone, Serialize)]
        #[cfg_attr(
            target_arch = "wasm32",
            derive(tsify_next::Tsify),
            serde(rename_all = "camelCase")
        )]
        $item
    };
}

wire! {
/// `health --json`, `t.health()`.
pub struct Health {
    pub table: String,
    pub location: String,
    pub table_type: String,
    pub version: u32,
    /// The clock the report was computed at (epoch ms; ages count from it).
    pub now_ms: i64,
    pub partitions: usize,
    /// Live file groups (replaced ones left out).
    pub file_groups: usize,
    pub replaced_file_groups: usize,
    /// Base files of the latest slices, and their bytes.
    pub base_files: usize,
    pub base_bytes: u64,
    /// `hoodie.parquet.small.file.limit` as the writer reads it.
    pub small_file_limit: u64,
    pub small_base_files: usize,
    /// `small_base_files / base_files` (0 without base files).
    pub small_base_share: f64,
    /// Largest partition's bytes over the median partition's (`None` below 2 partitions).
    pub partition_skew: Option<f64>,
    pub partition_sizes: Vec<PartitionSize>,
    /// Log files of the latest slices, and their bytes.
    pub log_files: usize,
    pub log_bytes: u64,
    pub slices_with_logs: usize,
    pub max_log_files_per_slice: usize,
    pub p50_log_files_per_slice: usize,
    pub max_log_bytes_per_slice: u64,
    pub p50_log_bytes_per_slice: u64,
    /// Merge-On-Read only.
    pub compaction: Option<CompactionHealth>,
    /// Instants not completed, oldest first.
    pub pending_instants: Vec<PendingInstant>,
    /// Pending writes whose writer is gone (heartbeat missing or expired).
    pub failed_writes: usize,
    /// Completed rollbacks on the active timeline.
    pub rollbacks: usize,
    /// Instants on the active timeline (any state).
    pub active_timeline_instants: usize,
    pub clean: CleanHealth,
    pub archival: ArchivalHealth,
    /// The storage-based lock object, when there is one.
    pub lock: Option<LockHealth>,
    pub metadata_table: MetadataTableHealth,
    pub activity: Activity,
    pub findings: Vec<Finding>,
    /// What could not be told, and why.
    pub notes: Vec<String>,
    /// Requests the report cost, by purpose.
    pub io: IoSnapshot,
}
}

wire! {
pub struct PartitionSize {
    pub partition: String,
    pub file_groups: usize,
    pub base_files: usize,
    pub bytes: u64,
    pub small_base_files: usize,
    pub log_files: usize,
}
}

wire! {
pub struct CompactionHealth {
    /// Delta commits after the last completed commit (the trigger's count).
    pub delta_commits_since_compaction: usize,
    /// `hoodie.compact.inline.max.delta.commits`.
    pub max_delta_commits: usize,
    /// The compaction trigger's answer now.
    pub due: bool,
    pub reason: Option<String>,
    /// Pending compaction plans.
    pub pending: Vec<PendingInstant>,
}
}

wire! {
pub struct PendingInstant {
    pub requested_time: String,
    /// What it was requested as (`compaction`, `clustering`, `deltacommit` …).
    pub action: String,
    pub state: String,
    /// Seconds since its requested time (`None` when that is not a date).
    pub age_secs: Option<i64>,
    /// Seconds since its writer's last heartbeat (`None`: no heartbeat file).
    pub heartbeat_age_secs: Option<i64>,
    /// A write whose writer is gone: rolled back by the next write.
    pub failed: bool,
}
}

wire! {
pub struct CleanHealth {
    pub policy: String,
    pub last_clean: Option<String>,
    pub last_clean_age_secs: Option<i64>,
    /// The cleaner's trigger (`hoodie.clean.trigger.max.commits`) says a clean is due.
    pub due: bool,
    pub earliest_commit_to_retain: Option<String>,
    /// Files, slices and bytes older than the cleaner's retention (what a clean deletes).
    pub files_beyond_retention: usize,
    pub slices_beyond_retention: usize,
    pub bytes_beyond_retention: u64,
    /// A clean requested or inflight.
    pub pending: bool,
}
}

wire! {
pub struct ArchivalHealth {
    /// `hoodie.keep.min.commits`, `hoodie.keep.max.commits`.
    pub keep_min_commits: usize,
    pub keep_max_commits: usize,
    /// Completed commits, delta commits and replace commits on the active timeline.
    pub active_commits: usize,
    /// What the archiver would move now (data table, metadata table).
    pub instants_to_archive: usize,
    pub metadata_table_instants_to_archive: usize,
    /// Newest file of the LSM history (epoch ms), when it tells.
    pub last_archival_ms: Option<i64>,
}
}

wire! {
pub struct LockHealth {
    pub owner: String,
    pub valid_until_ms: i64,
    pub expired: bool,
    /// Still excludes other writers.
    pub live: bool,
    /// Not released and past its validity: its owner died holding it.
    pub stale: bool,
}
}

wire! {
pub struct MetadataTableHealth {
    /// `.hoodie/metadata` is there (and opens).
    pub present: bool,
    /// Complete partitions (`hoodie.table.metadata.partitions`).
    pub partitions: Vec<String>,
    /// What the settings ask for (Spark's defaults unless `hoodie.metadata.*` say).
    pub configured: Vec<String>,
    pub missing: Vec<String>,
    /// Partitions being built (`hoodie.table.metadata.partitions.inflight`).
    pub building: Vec<String>,
    /// Completed data-table instants the metadata table has no delta commit of, after its
    /// initialisation: it is behind by these.
    pub lag_instants: usize,
    pub latest_instant: Option<String>,
    pub log_files: usize,
    pub max_log_files_per_slice: usize,
    /// Its own delta commits since its last compaction, and the compaction's trigger.
    pub delta_commits_since_compaction: usize,
    pub max_delta_commits: usize,
}
}

wire! {
pub struct Activity {
    /// Completed writes requested in the last day / week.
    pub commits_last_day: usize,
    pub commits_last_week: usize,
    /// From the commit metadata of the last week's writes (newest
    /// [`ACTIVITY_MAX_COMMITS`] read).
    pub commits_read: usize,
    pub rows_inserted: i64,
    pub rows_updated: i64,
    pub rows_deleted: i64,
    pub bytes_written: i64,
    /// The last 24 hours, oldest first (`hour_ms`: start of the hour, epoch ms).
    pub hourly: Vec<HourActivity>,
}
}

wire! {
pub struct HourActivity {
    pub hour_ms: i64,
    pub commits: usize,
    pub rows: i64,
    pub bytes: i64,
}
}

/// Everything one report reads, gathered before anything is decided.
struct Gathered {
    view: FileSystemView,
    replaced: HashMap<(String, String), String>,
    heartbeats: HashMap<String, Option<i64>>,
    lock: Option<LockHealth>,
    last_clean: Option<clean::LastClean>,
    mdt: Option<(Timeline, FileSystemView)>,
    history_newest: Option<i64>,
    compaction_plans: HashMap<(String, String), String>,
    activity: Vec<(Instant, std::sync::Arc<crate::timeline::CommitMetadata>)>,
}

/// Computes the health of the table `client` opened, under the write settings `options`
/// (`hoodie.*`; Java's defaults otherwise), as of the clock `now_ms`.
pub async fn health(
    client: &MetaClient,
    options: &BTreeMap<String, String>,
    now_ms: i64,
) -> Result<Health> {
    let io = client.io();
    let config = client.config();
    let mut given = crate::write::WriteOptions::new(crate::write::Operation::Upsert);
    given.options = options.clone();
    let settings = WriteConfig::new(&given, config)?;
    let timeline = client.timeline();
    let mut notes = Vec::new();
    let gathered = gather(client, &timeline, now_ms, &mut notes).await?;
    let tz = config.timezone;
    let age = |t: &str| instant_millis(t, tz).map(|ms| (now_ms - ms) / 1000);

    // File sizes and the log backlog, from the latest slices of live groups.
    let live: Vec<&crate::file_group::FileGroup> = gathered
        .view
        .groups
        .iter()
        .filter(|g| {
            !gathered
                .replaced
                .contains_key(&(g.partition.clone(), g.file_id.clone()))
        })
        .collect();
    let latest: Vec<&FileSlice> = live.iter().filter_map(|g| g.latest_slice()).collect();
    let small_limit = settings.small_file_limit;
    let mut by_partition: BTreeMap<String, PartitionSize> = BTreeMap::new();
    for s in &latest {
        let p = by_partition
            .entry(s.partition.clone())
            .or_insert_with(|| PartitionSize {
                partition: s.partition.clone(),
                file_groups: 0,
                base_files: 0,
                bytes: 0,
                small_base_files: 0,
                log_files: 0,
            });
        p.file_groups += 1;
        if let Some(b) = &s.base_file {
            p.base_files += 1;
            p.bytes += b.size;
            p.small_base_files += usize::from(b.size < small_limit);
        }
        p.log_files += s.log_files.len();
        p.bytes += s.log_files.iter().map(|l| l.size).sum::<u64>();
    }
    let partition_sizes: Vec<PartitionSize> = by_partition.into_values().collect();
    let base_files = partition_sizes.iter().map(|p| p.base_files).sum::<usize>();
    let small_base_files = partition_sizes.iter().map(|p| p.small_base_files).sum();
    let base_bytes = latest
        .iter()
        .filter_map(|s| s.base_file.as_ref())
        .map(|b| b.size)
        .sum();
    let log_counts: Vec<usize> = latest.iter().map(|s| s.log_files.len()).collect();
    let log_sizes: Vec<u64> = latest
        .iter()
        .map(|s| s.log_files.iter().map(|l| l.size).sum())
        .collect();
    let with_logs = |v: &[usize]| v.iter().copied().filter(|n| *n > 0).collect::<Vec<_>>();
    let log_counts_nz = with_logs(&log_counts);
    let log_sizes_nz: Vec<u64> = log_sizes.iter().copied().filter(|n| *n > 0).collect();

    // Pending instants, their writers' heartbeats, and which writes failed.
    let expiry = match &settings.concurrency {
        crate::write::lock::Concurrency::Optimistic(l) => l.heartbeat_expiry_ms(),
        crate::write::lock::Concurrency::SingleWriter => {
            crate::write::lock::LockConfig::default().heartbeat_expiry_ms()
        }
    };
    let pending_instants: Vec<PendingInstant> = timeline
        .pending()
        .filter(|i| !i.archived)
        .map(|i| {
            let beat = gathered.heartbeats.get(&i.requested_time).copied();
            let heartbeat_age_secs = beat.flatten().map(|ms| (now_ms - ms) / 1000);
            let is_write = matches!(
                i.requested_action(),
                action::COMMIT | action::DELTA_COMMIT | action::REPLACE_COMMIT
            );
            // Java's rule (HoodieHeartbeatClient): no heartbeat, or one older than the
            // tolerated misses, is a writer that is gone.
            let gone = match beat {
                None | Some(None) => true,
                Some(Some(last)) => now_ms - last > expiry,
            };
            PendingInstant {
                requested_time: i.requested_time.clone(),
                action: i.requested_action().to_string(),
                state: i.state.as_str().to_string(),
                age_secs: age(&i.requested_time),
                heartbeat_age_secs,
                failed: is_write && gone,
            }
        })
        .collect();
    let failed_writes = pending_instants.iter().filter(|p| p.failed).count();
    let active: Vec<&Instant> = timeline.instants.iter().filter(|i| !i.archived).collect();
    let rollbacks = active
        .iter()
        .filter(|i| i.is_completed() && i.action == action::ROLLBACK)
        .count();

    // Compaction: the trigger decides.
    let now_instant = crate::timeline::write::new_instant_time(now_ms, tz, &[])?;
    let compaction = config.is_mor().then(|| {
        let c = &settings.compaction;
        let last = active
            .iter()
            .filter(|i| {
                i.is_completed()
                    && (i.action == action::COMMIT || i.action == action::REPLACE_COMMIT)
            })
            .map(|i| i.requested_time.as_str())
            .max_by(|a, b| compare_instant_times(a, b));
        let deltas = active
            .iter()
            .filter(|i| i.requested_action() == action::DELTA_COMMIT)
            .filter(|i| last.is_none_or(|l| compare_instant_times(&i.requested_time, l).is_gt()))
            .count();
        let due = crate::write::services::compaction::due(&timeline, &now_instant, c, 0);
        CompactionHealth {
            delta_commits_since_compaction: deltas,
            max_delta_commits: c.max_delta_commits,
            due: due.is_ok(),
            reason: due.err(),
            pending: pending_instants
                .iter()
                .filter(|p| p.action == action::COMPACTION || p.action == action::LOG_COMPACTION)
                .cloned()
                .collect(),
        }
    });

    let clean = clean_health(client, &settings.clean, &gathered, now_ms, &age)?;
    let archival = archival_health(client, &settings, &gathered, &mut notes).await;
    let metadata_table = metadata_health(config, &settings, &timeline, &gathered);
    let activity = activity(&gathered.activity, tz, now_ms);

    let mut health = Health {
        table: config.name.clone(),
        location: client.storage().location(),
        table_type: config.table_type.as_str().to_string(),
        version: config.version,
        now_ms,
        partitions: partition_sizes.len(),
        file_groups: live.len(),
        replaced_file_groups: gathered.view.groups.len() - live.len(),
        base_files,
        base_bytes,
        small_file_limit: small_limit,
        small_base_files,
        small_base_share: if base_files == 0 {
            0.0
        } else {
            small_base_files as f64 / base_files as f64
        },
        partition_skew: skew(&partition_sizes),
        partition_sizes,
        log_files: log_counts.iter().sum(),
        log_bytes: log_sizes.iter().sum(),
        slices_with_logs: log_counts_nz.len(),
        max_log_files_per_slice: log_counts.iter().copied().max().unwrap_or(0),
        p50_log_files_per_slice: median(&log_counts_nz).unwrap_or(0),
        max_log_bytes_per_slice: log_sizes.iter().copied().max().unwrap_or(0),
        p50_log_bytes_per_slice: median(&log_sizes_nz).unwrap_or(0),
        compaction,
        pending_instants,
        failed_writes,
        rollbacks,
        active_timeline_instants: active.len(),
        clean,
        archival,
        lock: gathered.lock.clone(),
        metadata_table,
        activity,
        findings: Vec::new(),
        notes,
        io: IoSnapshot::default(),
    };
    health.findings = findings::of(&health, config);
    health.io = client.io().since(&io);
    Ok(health)
}

/// The lower median of `v` (unsorted).
fn median<T: Copy + Ord>(v: &[T]) -> Option<T> {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len().saturating_sub(1) / 2).copied()
}

fn skew(partitions: &[PartitionSize]) -> Option<f64> {
    if partitions.len() < 2 {
        return None;
    }
    let sizes: Vec<u64> = partitions.iter().map(|p| p.bytes).collect();
    let (max, mid) = (sizes.iter().copied().max()?, median(&sizes)?);
    (mid > 0).then(|| max as f64 / mid as f64)
}

/// Every read of a report, issued together (one or two round trips).
async fn gather(
    client: &MetaClient,
    timeline: &Timeline,
    now_ms: i64,
    notes: &mut Vec<String>,
) -> Result<Gathered> {
    let config = client.config();
    let storage = client.storage().clone();
    let active = || timeline.instants.iter().filter(|i| !i.archived);
    let replaces: Vec<&Instant> = active()
        .filter(|i| i.is_completed() && i.action == action::REPLACE_COMMIT)
        .collect();
    let last_clean = active().rfind(|i| i.is_completed() && i.action == action::CLEAN);
    let compactions: Vec<&Instant> = active()
        .filter(|i| {
            !i.is_completed()
                && matches!(
                    i.requested_action(),
                    action::COMPACTION | action::LOG_COMPACTION
                )
        })
        .collect();
    let tz = config.timezone;
    let week_ago = now_ms - 7 * DAY_MS;
    let mut recent: Vec<&Instant> = active()
        .filter(|i| i.is_completed() && i.is_write())
        .filter(|i| instant_millis(&i.requested_time, tz).is_some_and(|ms| ms >= week_ago))
        .collect();
    recent = recent.split_off(recent.len().saturating_sub(ACTIVITY_MAX_COMMITS));
    let has_mdt = !config.metadata_partitions.is_empty();

    let files = crate::snapshot::listing::list_data_files(client);
    let replaced = client.commit_metadata_of(&replaces);
    let beats = async {
        match storage.list(HEARTBEAT_DIR, false).await {
            Ok(l) => Ok(l),
            Err(HudiError::NotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    };
    let lock = async {
        match storage.get(LOCK_FILE, Purpose::Other).await {
            Ok(b) => crate::write::lock::LockData::parse(&b, LOCK_FILE).map(Some),
            Err(HudiError::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    };
    let clean_meta = async {
        match last_clean {
            Some(i) => client.instant_content(i).await.map(|c| Some((i, c))),
            None => Ok(None),
        }
    };
    let plans = futures::future::try_join_all(compactions.iter().map(|i| client.instant_plan(i)));
    let mdt = async {
        if !has_mdt {
            return Ok(None);
        }
        let mdt = MetaClient::open_nested(client, METADATA_DIR).await?;
        let view = crate::snapshot::listing::file_system_view(&mdt, None).await;
        Ok::<_, HudiError>(Some((mdt.timeline(), view)))
    };
    let history = async {
        if config.timeline_layout_version < 2 {
            return Ok(Vec::new());
        }
        match storage.list(&config.history_dir, false).await {
            Ok(l) => Ok(l),
            Err(HudiError::NotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    };
    let activity = client.commit_metadata_of(&recent);
    let (files, replaced, beats, lock, clean_meta, plans, mdt, history, activity) =
        futures::join!(files, replaced, beats, lock, clean_meta, plans, mdt, history, activity);

    let files = files?;
    let visibility = timeline.visibility_as_of(None);
    let data_files = files.into_iter().map(|(partition, m)| DataFile {
        name: m.name().to_string(),
        partition,
        size: m.size,
    });
    let view = view::build(data_files, &visibility, config, &HashSet::new());
    let mut replaced_at = HashMap::new();
    for (i, m) in replaces.iter().zip(replaced?) {
        for (p, f) in m.replaced_file_ids() {
            replaced_at.insert((p.to_string(), f.to_string()), i.requested_time.clone());
        }
    }
    let heartbeats = beats?
        .into_iter()
        .filter(|m| !m.is_dir)
        .map(|m| (m.name().to_string(), m.last_modified_ms))
        .collect();
    let lock = lock?.map(|l| LockHealth {
        live: l.is_live(now_ms),
        stale: !l.expired && !l.is_live(now_ms),
        owner: l.owner,
        valid_until_ms: l.valid_until,
        expired: l.expired,
    });
    let last_clean = match clean_meta? {
        Some((i, content)) if !content.as_object().is_some_and(|o| o.is_empty()) => {
            let meta = crate::timeline::metadata::CleanMetadata::from_json(content, &i.file)?;
            Some(clean::LastClean {
                earliest_commit_to_retain: meta.earliest_commit_to_retain,
                last_completed_commit: meta.last_completed_commit_timestamp,
                savepointed: Vec::new(),
            })
        }
        _ => None,
    };
    let mut compaction_plans = HashMap::new();
    for plan in plans?.into_iter().flatten() {
        let ops = plan.get("operations").and_then(|v| v.as_array());
        for op in ops.into_iter().flatten() {
            let field = |k: &str| op.get(k).and_then(|v| v.as_str()).map(str::to_string);
            if let (Some(p), Some(f), Some(b)) = (
                field("partitionPath"),
                field("fileId"),
                field("baseInstantTime"),
            ) {
                compaction_plans.insert((p, f), b);
            }
        }
    }
    let mdt = match mdt {
        Ok(Some((t, Ok(v)))) => Some((t.as_ref().clone(), v)),
        Ok(Some((t, Err(e)))) => {
            notes.push(format!("metadata table's files not listed: {e}"));
            Some((t.as_ref().clone(), FileSystemView::default()))
        }
        Ok(None) => None,
        Err(HudiError::NotFound { .. }) => None,
        Err(e) => {
            notes.push(format!("metadata table not opened: {e}"));
            None
        }
    };
    let history_newest = history?
        .iter()
        .filter(|m| !m.is_dir)
        .filter_map(|m| m.last_modified_ms)
        .max();
    Ok(Gathered {
        view,
        replaced: replaced_at,
        heartbeats,
        lock,
        last_clean,
        mdt,
        history_newest,
        compaction_plans,
        activity: recent.into_iter().cloned().zip(activity?).collect(),
    })
}

/// The cleaner's own rules over the listed slices: its trigger, its retain point and the
/// files it would delete per partition (savepoints are not read: a table with savepoints
/// may show files they keep).
fn clean_health(
    client: &MetaClient,
    config: &clean::CleanConfig,
    gathered: &Gathered,
    now_ms: i64,
    age: &dyn Fn(&str) -> Option<i64>,
) -> Result<CleanHealth> {
    let timeline = client.timeline();
    let tz = client.config().timezone;
    let active = || timeline.instants.iter().filter(|i| !i.archived);
    let last = active()
        .filter(|i| i.is_completed() && i.action == action::CLEAN)
        .map(|i| i.requested_time.clone())
        .next_back();
    let pending = active().any(|i| !i.is_completed() && i.action == action::CLEAN);
    let due = clean::needs_cleaning(&timeline, gathered.last_clean.as_ref(), config.max_commits);
    let retain = clean::earliest_commit_to_retain(&timeline, config, now_ms, tz);
    let commits = active()
        .filter(|i| i.is_completed() && clean::is_commit_like(i))
        .count();
    let protected = Protected {
        savepointed_files: HashSet::new(),
        pending_compaction: gathered.compaction_plans.clone(),
    };
    let mut partitions: BTreeMap<&str, PartitionGroups> = BTreeMap::new();
    for g in &gathered.view.groups {
        let entry = partitions.entry(&g.partition).or_default();
        match gathered
            .replaced
            .get(&(g.partition.clone(), g.file_id.clone()))
        {
            Some(t) => entry.replaced.push((g.clone(), t.clone())),
            None => entry.groups.push(g.clone()),
        }
    }
    let (mut files, mut slices, mut bytes) = (0, 0, 0);
    let sizes: HashMap<(&str, &str), u64> = gathered
        .view
        .groups
        .iter()
        .flat_map(|g| g.slices.iter())
        .flat_map(|s| {
            let base = s.base_file.iter().map(|b| (b.name.as_str(), b.size));
            let logs = s.log_files.iter().map(|l| (l.name.as_str(), l.size));
            base.chain(logs)
                .map(|(n, size)| ((s.partition.as_str(), n), size))
                .collect::<Vec<_>>()
        })
        .collect();
    let slice_of: HashMap<(&str, &str), (&str, &str)> = gathered
        .view
        .groups
        .iter()
        .flat_map(|g| g.slices.iter())
        .flat_map(|s| {
            s.file_names()
                .map(|n| {
                    (
                        (s.partition.as_str(), n),
                        (s.file_id.as_str(), s.base_instant.as_str()),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    if due {
        for (partition, groups) in &partitions {
            let found = clean::files_to_clean(groups, config, retain.as_ref(), commits, &protected);
            let mut seen = HashSet::new();
            for name in &found.files {
                files += 1;
                bytes += sizes
                    .get(&(*partition, name.as_str()))
                    .copied()
                    .unwrap_or(0);
                if let Some(s) = slice_of.get(&(*partition, name.as_str())) {
                    seen.insert(*s);
                }
            }
            slices += seen.len();
        }
    }
    Ok(CleanHealth {
        policy: config.policy.name().to_string(),
        last_clean_age_secs: last.as_deref().and_then(age),
        last_clean: last,
        due,
        earliest_commit_to_retain: retain.map(|r| r.timestamp),
        files_beyond_retention: files,
        slices_beyond_retention: slices,
        bytes_beyond_retention: bytes,
        pending,
    })
}

/// The archiver's own choice of what to move now.
async fn archival_health(
    client: &MetaClient,
    settings: &WriteConfig,
    gathered: &Gathered,
    notes: &mut Vec<String>,
) -> ArchivalHealth {
    let timeline = client.timeline();
    let active_commits = timeline
        .instants
        .iter()
        .filter(|i| !i.archived && i.is_completed() && action::is_write(&i.action))
        .count();
    let a = &settings.archival.config;
    let (mut data, mut mdt) = (0, 0);
    let has_mdt = !client.config().metadata_partitions.is_empty();
    let mdt_timeline = gathered.mdt.as_ref().map(|(t, _)| t);
    if client.config().timeline_layout_version < 2 {
        notes.push("archival not planned: a table version 6 timeline".into());
    } else if has_mdt && mdt_timeline.is_none() {
        notes.push("archival not planned: the metadata table's timeline is not listed".into());
    } else {
        // The timelines this report already holds, not listed again (archived instants a
        // handle may have loaded are none of the archiver's input).
        let active = Timeline {
            instants: timeline
                .instants
                .iter()
                .filter(|i| !i.archived)
                .cloned()
                .collect(),
            ..Timeline::default()
        };
        let archival = &settings.archival;
        match crate::write::services::archive::select_listed(
            client,
            archival,
            &active,
            mdt_timeline,
        )
        .await
        {
            Ok((d, m)) => (data, mdt) = (d.len(), m.len()),
            Err(e) => notes.push(format!("archival not planned: {e}")),
        }
    }
    ArchivalHealth {
        keep_min_commits: a.min_commits,
        keep_max_commits: a.max_commits,
        active_commits,
        instants_to_archive: data,
        metadata_table_instants_to_archive: mdt,
        last_archival_ms: gathered.history_newest,
    }
}

fn metadata_health(
    config: &crate::config::TableConfig,
    settings: &WriteConfig,
    data: &Timeline,
    gathered: &Gathered,
) -> MetadataTableHealth {
    // Unless the settings say, Spark's defaults: a metadata table is kept.
    let mut asked = settings.metadata.clone();
    asked.enable.get_or_insert(true);
    let configured: Vec<String> = asked
        .partitions(config.is_partitioned())
        .into_iter()
        .map(str::to_string)
        .collect();
    let missing = configured
        .iter()
        .filter(|p| !config.metadata_partitions.contains(p))
        .cloned()
        .collect();
    let mut out = MetadataTableHealth {
        present: gathered.mdt.is_some(),
        partitions: config.metadata_partitions.clone(),
        configured,
        missing,
        building: config.metadata_partitions_inflight.clone(),
        lag_instants: 0,
        latest_instant: None,
        log_files: 0,
        max_log_files_per_slice: 0,
        delta_commits_since_compaction: 0,
        max_delta_commits: settings.mdt_max_delta_commits,
    };
    let Some((mdt, view)) = &gathered.mdt else {
        return out;
    };
    out.lag_instants = lag(data, mdt);
    out.latest_instant = mdt
        .completed()
        .filter(|i| i.action == action::DELTA_COMMIT)
        .map(|i| i.requested_time.clone())
        .max_by(|a, b| compare_instant_times(a, b));
    let counts: Vec<usize> = view.latest_slices().map(|s| s.log_files.len()).collect();
    out.log_files = counts.iter().sum();
    out.max_log_files_per_slice = counts.iter().copied().max().unwrap_or(0);
    out.delta_commits_since_compaction = crate::clean::instants_since_compaction(mdt)
        .unwrap_or_else(|| {
            mdt.completed()
                .filter(|i| i.action == action::DELTA_COMMIT)
                .count()
        });
    out
}

/// Completed data-table instants the metadata table should hold a delta commit of (writes,
/// compactions and cleans after its first initialisation completed) and does not. A
/// rollback is left out: the metadata table records one only when it had the failed write.
pub fn lag(data: &Timeline, mdt: &Timeline) -> usize {
    const INIT: &str = "00000000000000";
    let Some(init) = mdt
        .completed()
        .filter(|i| i.requested_time.starts_with(INIT))
        .filter_map(|i| i.completion_time.as_deref())
        .min_by(|a, b| compare_instant_times(a, b))
    else {
        return 0;
    };
    let synced: HashSet<&str> = mdt
        .completed()
        .filter(|i| i.action == action::DELTA_COMMIT)
        .map(|i| i.requested_time.as_str())
        .collect();
    let mdt_start = mdt.active_start();
    data.completed()
        .filter(|i| !i.archived)
        .filter(|i| {
            matches!(
                i.action.as_str(),
                action::COMMIT | action::DELTA_COMMIT | action::REPLACE_COMMIT | action::CLEAN
            )
        })
        .filter(|i| {
            // Written before the initialisation completed: the build read it.
            let done = i.completion_time.as_deref().unwrap_or(&i.requested_time);
            compare_instant_times(done, init).is_gt()
        })
        .filter(|i| mdt_start.is_none_or(|s| compare_instant_times(&i.requested_time, s).is_ge()))
        .filter(|i| !synced.contains(i.requested_time.as_str()))
        .count()
}

fn activity(
    commits: &[(Instant, std::sync::Arc<crate::timeline::CommitMetadata>)],
    tz: crate::config::TimelineTimezone,
    now_ms: i64,
) -> Activity {
    let current_hour = now_ms - now_ms.rem_euclid(HOUR_MS);
    let first_hour = current_hour - 23 * HOUR_MS;
    let mut hourly: Vec<HourActivity> = (0..24)
        .map(|h| HourActivity {
            hour_ms: first_hour + h * HOUR_MS,
            commits: 0,
            rows: 0,
            bytes: 0,
        })
        .collect();
    let mut out = Activity {
        commits_last_day: 0,
        commits_last_week: 0,
        commits_read: commits.len(),
        rows_inserted: 0,
        rows_updated: 0,
        rows_deleted: 0,
        bytes_written: 0,
        hourly: Vec::new(),
    };
    for (i, meta) in commits {
        let Some(ms) = instant_millis(&i.requested_time, tz) else {
            continue;
        };
        out.commits_last_week += 1;
        let (mut rows, mut bytes) = (0, 0);
        for (_, s) in meta.write_stats() {
            let inserts = s.num_inserts.unwrap_or(0);
            let updates = s.num_update_writes.unwrap_or(0);
            let deletes = s.num_deletes.unwrap_or(0);
            out.rows_inserted += inserts;
            out.rows_updated += updates;
            out.rows_deleted += deletes;
            rows += inserts + updates + deletes;
            bytes += s.total_write_bytes.unwrap_or(0);
        }
        out.bytes_written += bytes;
        if ms >= now_ms - DAY_MS {
            out.commits_last_day += 1;
        }
        if ms >= first_hour {
            if let Some(h) = hourly.get_mut(((ms - first_hour) / HOUR_MS) as usize) {
                h.commits += 1;
                h.rows += rows;
                h.bytes += bytes;
            }
        }
    }
    out.hourly = hourly;
    out
}

wire! {
/// One fix `health --fix` ran: the finding, the service, and what it did or why it failed.
pub struct FixOutcome {
    pub code: String,
    pub service: String,
    pub ok: bool,
    /// The service's own report.
    #[cfg_attr(target_arch = "wasm32", tsify(type = "unknown"))]
    pub result: serde_json::Value,
    pub error: Option<String>,
}
}

/// The order fixes run in: failed writes first (every service refuses or rolls them back
/// first), the lock before anything that takes it, compaction before the cleaner that
/// removes what it replaced, archival after both, the metadata table last (it reads the
/// table as the others leave it).
pub const FIX_ORDER: &[&str] = &[
    "rollback", "lock", "compact", "cluster", "clean", "archive", "index",
];
