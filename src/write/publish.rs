//! Publishing a commit whose files are built, in Hudi's order (docs/hudi-format.md §10.3–§10.5):
//! the requested instant, then markers with the inflight instant, then the data files with
//! the metadata table's delta commit, and last the completed instant written create-if-absent,
//! the one commit point. One path for every writer; the [`Committer`] says how the commit
//! point is reached: at once by a single writer, or later under the table lock by one of
//! several (optimistic concurrency), when the listing taken under the lock says what came in
//! between.

use bytes::Bytes;
use futures::FutureExt;

use super::build::NewFile;
use super::commit::SchemaOnRead;
use super::mdt::MdtInstant;
use super::{files, Ctx};
use crate::config::TableType;
use crate::error::{HudiError, Result};
use crate::metadata::MetadataTable;
use crate::storage::{join, PutMode, Storage};
use crate::timeline::instant::action;

/// How a commit reaches its commit point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Committer {
    /// Hudi's single writer: the metadata table's delta commit completes with the data files
    /// (it counts only once the data instant completes), and the data commit completes as
    /// soon as the timeline shows no other writer rolled this one back.
    SingleWriter,
    /// One of several writers: both completed instants wait for [`complete`] under the lock,
    /// at times after everything the lock holder listed.
    Optimistic,
}

/// The action a write commits: a delta commit on Merge-On-Read tables, else a commit.
pub(crate) fn write_action(config: &crate::config::TableConfig) -> &'static str {
    match config.table_type {
        TableType::MergeOnRead => action::DELTA_COMMIT,
        TableType::CopyOnWrite => action::COMMIT,
    }
}

/// A commit ready to publish: its files and instant files, built before any request.
pub(crate) struct ToPublish<'a> {
    pub instant: &'a str,
    pub requested: &'a Requested,
    pub files: &'a [NewFile],
    /// Partitions this commit creates (their `.hoodie_partition_metadata` goes first).
    pub new_partitions: Vec<String>,
    /// The commit metadata, encoded for the table version.
    pub encoded: Bytes,
    pub mdt: Option<MdtInstant>,
    pub schema_on_read: Option<&'a SchemaOnRead>,
    /// Marker files of completed commits, deleted beside the first writes.
    pub stale_markers: Vec<String>,
    /// Every time on both timelines as this writer saw them (completion times come later).
    pub floor: Vec<String>,
    /// Existing file groups (and new buckets) the commit changes: what conflicts with it.
    pub touched: std::collections::BTreeSet<(String, String)>,
}

/// A commit written up to its commit point: what [`complete`] needs.
pub(crate) struct Staged {
    committer: Committer,
    instant: String,
    /// The delta commit, when its completed instant is still to be written.
    mdt: Option<MdtInstant>,
    completed_prefix: String,
    action: &'static str,
    encoded: Bytes,
    floor: Vec<String>,
    /// Existing file groups this commit changes (its new ones have fresh ids).
    pub touched: std::collections::BTreeSet<(String, String)>,
}

/// Writes everything of a commit but its commit point, in Hudi's order: the requested
/// instant (unless it went out beside tagging), then markers, new partitions' metadata, the
/// metadata table's requested instant and the inflight instant in one round, then the data
/// files with the metadata table's inflight instant and log files (and, for a single writer,
/// its completed instant) in the next. Nothing here is visible to readers until the
/// completed instants.
pub(crate) async fn stage(
    table: &Ctx<'_>,
    commit: ToPublish<'_>,
    committer: Committer,
) -> Result<Staged> {
    let client = table.client;
    let config = client.config();
    let storage: &dyn Storage = client.storage().as_ref();
    let instant = commit.instant;
    let action = write_action(config);
    let mut floor = commit.floor;
    let timeline_dir = &config.timeline_dir;
    let inflight = if action == action::DELTA_COMMIT {
        join(timeline_dir, &format!("{instant}.deltacommit.inflight"))
    } else {
        join(timeline_dir, &format!("{instant}.inflight"))
    };
    commit.requested.put(storage).await?;
    // Timeline-server markers (Java's default layout under Spark): every marker as a line
    // of one `MARKERS0` file, beside `MARKERS.type`; two puts and two deletes whatever the
    // number of files, not one of each per file.
    let marker_dir = super::pending::marker_dir(instant);
    let marker_lines: String = (commit.files.iter())
        .flat_map(|f| {
            std::iter::once(format!("{}.marker.{}\n", f.path, f.marker))
                .chain((f.cdc.iter()).map(|c| format!("{}.marker.APPEND\n", c.path)))
        })
        .collect();
    let markers: Vec<(String, Bytes)> = vec![
        (
            format!("{marker_dir}/MARKERS.type"),
            Bytes::from_static(b"TIMELINE_SERVER_BASED"),
        ),
        (format!("{marker_dir}/MARKERS0"), Bytes::from(marker_lines)),
    ];
    let partition_files: Vec<(String, Bytes)> = (commit.new_partitions.iter())
        .map(|p| {
            (
                join(p, crate::config::layout::PARTITION_METADATA),
                Bytes::from(files::partition_metadata(instant, p)),
            )
        })
        .collect();
    let marker_puts = markers.iter().map(|(m, bytes)| {
        storage
            .put(m, bytes.clone(), PutMode::Create)
            .map(|r| r.map(drop))
            .boxed()
    });
    let partition_puts = partition_files.iter().map(|(path, bytes)| {
        async move {
            // Another writer may have created the partition meanwhile: same content.
            match storage.put(path, bytes.clone(), PutMode::Create).await {
                Ok(_) | Err(HudiError::Conflict { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        }
        .boxed()
    });
    let mdt_request = commit.mdt.iter().map(|m| m.request(storage).boxed());
    // The inflight instant goes with them: a crash that leaves markers without it is rolled
    // back as a requested-only instant (its marker directory goes with it). Java writes the
    // inflight with the plan's stats; ours are final already.
    let inflight_put = std::iter::once(
        storage
            .put(&inflight, commit.encoded.clone(), PutMode::Create)
            .map(|r| r.map(drop))
            .boxed(),
    );
    // Earlier commits' markers go with this round, each instant's directory after its
    // markers (bookkeeping: a failure to delete one is not a failed commit).
    let stale_deletes =
        markers_by_instant(&commit.stale_markers)
            .into_iter()
            .map(|(dir, markers)| {
                async move {
                    let deletes = markers.iter().map(|m| storage.delete(m));
                    let gone = futures::future::join_all(deletes).await;
                    if gone.iter().all(Result::is_ok) {
                        let _ = storage.delete_empty_dir(&dir).await;
                    }
                    // A lost delete leaves a marker the next write deletes.
                    match gone.into_iter().find_map(Result::err) {
                        None | Some(HudiError::NotFound { .. }) | Some(HudiError::Io { .. }) => {
                            Ok(())
                        }
                        Some(e) => Err(e),
                    }
                }
                .boxed()
            });
    commit.requested.advance();
    settle_all(
        inflight_put
            .chain(marker_puts)
            .chain(partition_puts)
            .chain(mdt_request)
            .chain(stale_deletes),
    )
    .await?;
    // A single writer completes the metadata table's delta commit with the data files and
    // its own log files: a metadata delta commit counts only once the data table completes
    // the same instant (§8.3), so until then every reader leaves it out, and a rollback
    // removes it as it would an inflight one.
    let mdt_completed = match (&commit.mdt, committer) {
        (Some(m), Committer::SingleWriter) => {
            let t = time_after(table, &floor)?;
            floor.push(t.clone());
            Some(m.completed(&t))
        }
        _ => None,
    };
    // The history goes with the data files: Java writes it before the commit completes,
    // and readers skip it until then.
    let history_files = match commit.schema_on_read {
        Some(s) => {
            let at = time_after(table, &floor)?;
            floor.push(at.clone());
            let dir = crate::schema::evolution::HISTORY_DIR;
            vec![
                (
                    format!("{dir}{instant}.schemacommit.requested"),
                    Bytes::new(),
                ),
                (
                    format!("{dir}{instant}.schemacommit.inflight"),
                    Bytes::new(),
                ),
                (
                    format!("{dir}{instant}_{at}.schemacommit"),
                    s.history.clone(),
                ),
            ]
        }
        None => Vec::new(),
    };
    let data_puts = (commit.files.iter())
        .flat_map(|f| {
            std::iter::once((f.path.as_str(), f.bytes.clone()))
                .chain((f.cdc.iter()).map(|c| (c.path.as_str(), c.bytes.clone())))
        })
        .chain(history_files.iter().map(|(p, b)| (p.as_str(), b.clone())))
        .chain(commit.mdt.iter().flat_map(|m| m.pending_puts()))
        .chain(mdt_completed.iter().map(|(p, b)| (p.as_str(), b.clone())));
    settle_all(data_puts.map(|(path, bytes)| storage.put(path, bytes, PutMode::Create))).await?;
    Ok(Staged {
        committer,
        instant: instant.to_string(),
        mdt: if mdt_completed.is_some() {
            None
        } else {
            commit.mdt
        },
        completed_prefix: join(timeline_dir, instant),
        action,
        encoded: commit.encoded,
        floor,
        touched: commit.touched,
    })
}

/// The commit point: the metadata table's delta commit if still pending, then the data
/// commit, each at a time later than `seen` (under the lock: every time on both timelines as
/// listed there) and everything the commit saw before. Returns the completion time.
pub(crate) async fn complete(table: &Ctx<'_>, staged: &Staged, seen: &[String]) -> Result<String> {
    complete_checked(table, staged, seen, async { Ok(()) }).await
}

/// [`complete`], with `check` run beside the metadata table's completion (no round trip of
/// its own where the table has one): when it fails, the data commit is not completed, and
/// the write is left as a crash there would leave it, for a rollback.
pub(crate) async fn complete_checked(
    table: &Ctx<'_>,
    staged: &Staged,
    seen: &[String],
    check: impl std::future::Future<Output = Result<()>>,
) -> Result<String> {
    let storage = table.client.storage().as_ref();
    let mut floor = staged.floor.clone();
    floor.extend(seen.iter().cloned());
    if staged.committer == Committer::SingleWriter {
        still_ours(table, &staged.instant).await?;
    }
    if let Some(m) = &staged.mdt {
        let t = time_after(table, &floor)?;
        floor.push(t.clone());
        let (path, bytes) = m.completed(&t);
        let (put, checked) = futures::join!(storage.put(&path, bytes, PutMode::Create), check);
        put?;
        checked?;
    } else {
        check.await?;
    }
    let completion = time_after(table, &floor)?;
    let completed = format!("{}_{completion}.{}", staged.completed_prefix, staged.action);
    storage
        .put(&completed, staged.encoded.clone(), PutMode::Create)
        .await?;
    Ok(completion)
}

/// The requested instant file: written beside tagging (as Java requests an instant before
/// tagging) or as the commit's first request, and withdrawn when the write fails before
/// anything else was written.
pub(crate) struct Requested {
    path: String,
    early: bool,
    /// 0: not written; 1: written, nothing after it; 2: later requests went out.
    state: std::sync::atomic::AtomicU8,
}

impl Requested {
    pub fn new(config: &crate::config::TableConfig, instant: &str, early: bool) -> Requested {
        let action = write_action(config);
        Requested {
            path: join(
                &config.timeline_dir,
                &format!("{instant}.{action}.requested"),
            ),
            early,
            state: Default::default(),
        }
    }

    pub async fn put_early(&self, storage: &dyn Storage) -> Result<()> {
        if self.early {
            self.put(storage).await?;
        }
        Ok(())
    }

    async fn put(&self, storage: &dyn Storage) -> Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.state.load(SeqCst) == 0 {
            storage
                .put(&self.path, Bytes::new(), PutMode::Create)
                .await?;
            self.state.store(1, SeqCst);
        }
        Ok(())
    }

    fn advance(&self) {
        self.state.store(2, std::sync::atomic::Ordering::SeqCst);
    }

    /// Deletes the requested file if nothing followed it (best effort: a write that cannot
    /// delete it leaves a requested-only instant, which the next write rolls back).
    pub async fn withdraw(&self, storage: &dyn Storage) {
        if self.state.load(std::sync::atomic::Ordering::SeqCst) == 1 {
            let _ = storage.delete(&self.path).await;
        }
    }
}

/// Runs `requests` together and answers with the first failure only once every one has
/// finished: a write that returns leaves nothing of its own in flight (a local put on the
/// blocking pool would otherwise land after the caller's next read, rollback or retry).
pub(crate) async fn settle_all<T>(
    requests: impl IntoIterator<Item = impl std::future::Future<Output = Result<T>>>,
) -> Result<Vec<T>> {
    futures::future::join_all(requests)
        .await
        .into_iter()
        .collect()
}

/// A new instant time, later than every time on the data and metadata timelines.
pub(crate) async fn new_instant(table: &Ctx<'_>) -> Result<String> {
    time_after(table, &instant_floor(table).await?)
}

/// Every requested and completion time on the data and metadata timelines.
pub(crate) async fn instant_floor(table: &Ctx<'_>) -> Result<Vec<String>> {
    if table.client.config().metadata_partitions.is_empty() {
        return Ok(data_times(table));
    }
    Ok(all_times(table, &*table.metadata_table(&[]).await?))
}

/// Every requested and completion time on both timelines (a new time goes after them).
pub(crate) fn all_times(table: &Ctx<'_>, mdt: &MetadataTable) -> Vec<String> {
    let mut out = mdt.timeline_times();
    out.extend(data_times(table));
    out
}

fn data_times(table: &Ctx<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for i in &table.client.timeline().instants {
        out.push(i.requested_time.clone());
        out.extend(i.completion_time.clone());
    }
    out
}

/// A time now, later than every one of `times`.
pub(crate) fn time_after(table: &Ctx<'_>, times: &[String]) -> Result<String> {
    let refs: Vec<&str> = times.iter().map(String::as_str).collect();
    crate::timeline::write::new_instant_time(files::now_ms(), table.client.config().timezone, &refs)
}

/// Hudi's single writer is alone by contract. Were another writer to run anyway, it would
/// roll this write back as a failed one, deleting its files, and completing it then would
/// leave a commit naming deleted files. So the timeline is listed once more before the
/// commit point: this instant's inflight gone, or a rollback newer than it, is a CONFLICT.
/// (It narrows the race to this one request; several writers take the lock instead.)
async fn still_ours(table: &Ctx<'_>, instant: &str) -> Result<()> {
    let mut listed = super::pending::list_timeline(table.client).await?;
    // A rollback leaves its own instant. An inflight missing without one is more likely a
    // store whose listings lag its writes: asked again a few times before it counts.
    for wait_ms in [250, 500, 1000] {
        let listing = super::pending::Listing::of_timeline(table.client.config(), &listed);
        if listing.is_inflight(instant) || listing.rollback_after(instant).is_some() {
            break;
        }
        super::timer::sleep(std::time::Duration::from_millis(wait_ms)).await;
        listed = super::pending::list_timeline(table.client).await?;
    }
    let listing = super::pending::Listing::of_timeline(table.client.config(), &listed);
    let rollback = listing.rollback_after(instant);
    let why = match (listing.is_inflight(instant), rollback) {
        (_, Some(r)) => format!(
            "another writer's rollback {r} started while this write ran (a single-writer \
             table has one writer at a time; several need Hudi's multi-writer settings)"
        ),
        (false, None) => "this write's inflight instant is gone: another writer rolled it \
             back (a single-writer table has one writer at a time)"
            .to_string(),
        (true, None) => return Ok(()),
    };
    Err(HudiError::Conflict {
        path: rollback.unwrap_or(instant).to_string(),
        detail: why,
    })
}

/// Marker paths grouped by their instant's marker directory (`.hoodie/.temp/<instant>`).
fn markers_by_instant(markers: &[String]) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut out = std::collections::BTreeMap::<String, Vec<String>>::new();
    for m in markers {
        if let Some(instant) = super::pending::marker_instant(m) {
            let dir = super::pending::marker_dir(instant);
            out.entry(dir).or_default().push(m.clone());
        }
    }
    out
}
