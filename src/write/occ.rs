//! Many writers on one table: Hudi's optimistic concurrency control under the
//! storage-based lock (docs/hudi-format.md §10.6), interoperable with Java writers configured
//! with `StorageBasedLockProvider` and `hoodie.cleaner.policy.failed.writes=LAZY`.
//!
//! A write takes the lock twice, briefly. First to look at the timeline as it is: failed
//! writes whose heartbeat expired are rolled back, a due metadata-table compaction runs,
//! the instant time is taken and the write's heartbeat (`.hoodie/.heartbeat/<instant>`,
//! an empty object touched every `hoodie.client.heartbeat.interval_in_ms`) starts. Then,
//! without the lock, it tags and writes its files as a single writer would, up to (not
//! including) its completed instants. Last, under the lock again: instants completed since
//! its snapshot are read and any that changed one of its file groups — or a table service
//! planned meanwhile — is a conflict (Java's `SimpleConcurrentFileWritesConflictResolution
//! Strategy`): the attempt is rolled back and the answer is `CONFLICT` naming that instant.
//! Otherwise the metadata table's delta commit and the data commit complete at times later
//! than everything listed, and the lock is released.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use arrow_array::RecordBatch;
use bytes::Bytes;

use super::lock::{LockConfig, TableLock, CLOCK_DRIFT_BUFFER_MS};
use super::pending::{self, Listing};
use super::services::{mdt_compaction, rollback};
use super::{
    check_writable, commit_prepared, files, prepare, publish, Ctx, WriteConfig, WriteResult,
};
use crate::error::{HudiError, Result};
use crate::metadata::table::METADATA_DIR;
use crate::storage::{join, Purpose, PutMode, Storage, StorageExt};
use crate::timeline::instant::action;
use crate::timeline::metadata::{decode_instant_file, CommitMetadata};

pub use crate::config::layout::HEARTBEAT_DIR;

fn heartbeat_path(instant: &str) -> String {
    join(HEARTBEAT_DIR, instant)
}

/// Java's heartbeat: an empty object rewritten in place; its modification time is the beat.
async fn beat(storage: &dyn Storage, instant: &str) -> Result<()> {
    storage
        .put(&heartbeat_path(instant), Bytes::new(), PutMode::Overwrite)
        .await
        .map(drop)
}

/// Last beat of every instant with a heartbeat (epoch ms, when the store tells).
async fn heartbeats(storage: &dyn Storage) -> Result<HashMap<String, Option<i64>>> {
    match storage.list(HEARTBEAT_DIR, false).await {
        Ok(listed) => Ok(listed
            .into_iter()
            .filter(|m| !m.is_dir)
            .map(|m| (m.name().to_string(), m.last_modified_ms))
            .collect()),
        Err(HudiError::NotFound { .. }) => Ok(HashMap::new()),
        Err(e) => Err(e),
    }
}

/// Whether the pending write `instant` has failed: no heartbeat (Java counts it as beaten
/// at 0), or its last beat is older than interval × tolerable misses. A store that lists
/// no modification time gives no proof of death: the write is spared.
fn heartbeat_expired(
    beats: &HashMap<String, Option<i64>>,
    instant: &str,
    now_ms: i64,
    config: &LockConfig,
) -> bool {
    match beats.get(instant) {
        None => true,
        Some(Some(last)) => now_ms - last > config.heartbeat_expiry_ms(),
        Some(None) => false,
    }
}

/// Runs `work` while beating the heartbeat of `instant` every interval (a future beside
/// it: a tokio timer natively, `setTimeout` in wasm).
async fn with_heartbeat<T>(
    storage: &dyn Storage,
    instant: &str,
    config: &LockConfig,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let every = Duration::from_millis(config.heartbeat_interval_ms);
    super::timer::beside(every, work, || async {
        // A missed beat is survivable (misses are tolerated); the next one tries again.
        let _ = beat(storage, instant).await;
        None
    })
    .await
}

/// A test hook (native only): `HUDI_EDGE_TEST_PAUSE_IN_COMMIT_MS` holds the commit that
/// long inside the critical section, so the multi-writer tests can kill or stop a writer
/// while it holds the lock.
async fn test_pause_in_commit() {
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(ms) = std::env::var("HUDI_EDGE_TEST_PAUSE_IN_COMMIT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        super::timer::sleep(Duration::from_millis(ms)).await;
    }
}

/// The instants a write started from: completed ones and any known at all.
struct StartedFrom {
    completed: HashSet<String>,
    known: HashSet<String>,
}

impl StartedFrom {
    fn of(table: &Ctx<'_>) -> StartedFrom {
        let timeline = table.client.timeline();
        StartedFrom {
            completed: timeline
                .instants
                .iter()
                .filter(|i| i.is_completed())
                .map(|i| i.requested_time.clone())
                .collect(),
            known: timeline
                .instants
                .iter()
                .map(|i| i.requested_time.clone())
                .collect(),
        }
    }
}

fn conflict(path: impl Into<String>, detail: String) -> HudiError {
    HudiError::Conflict {
        path: path.into(),
        detail,
    }
}

/// Java's simple file-level conflict check against everything that happened since the
/// snapshot: completed writes (and compactions, replace commits) sharing a file group
/// with ours, or table services planned meanwhile. Also a commit that added columns this
/// write's schema lacks: committed after it, ours would become the table's schema and drop
/// them (a retry takes the new schema).
async fn check_conflicts(
    storage: &dyn Storage,
    listing: &Listing,
    started: &StartedFrom,
    touched: &BTreeSet<(String, String)>,
    (instant, schema): (&str, &str),
) -> Result<()> {
    for (t, a) in listing.pending_instants() {
        let service = [
            action::COMPACTION,
            action::LOG_COMPACTION,
            action::CLUSTERING,
            action::REPLACE_COMMIT,
        ]
        .contains(&a.as_str());
        if service && t != instant && !started.known.contains(&t) {
            return Err(conflict(
                t.clone(),
                format!(
                    "write conflict: a {a} was planned at instant {t} while this write ran \
                     (it may rewrite the file groups this write changes)"
                ),
            ));
        }
    }
    let since: Vec<(String, String, String)> = listing
        .completed()
        .into_iter()
        .filter(|(t, a, _)| {
            t != instant
                && !started.completed.contains(t)
                && [action::COMMIT, action::DELTA_COMMIT, action::REPLACE_COMMIT]
                    .contains(&a.as_str())
        })
        .collect();
    let reads = since
        .iter()
        .map(|(_, _, path)| commit_metadata(storage, path));
    let metadata = futures::future::try_join_all(reads).await?;
    // Compared by column names: writers spell the same schema differently, and a
    // compaction's may carry the meta fields.
    let columns = |text: &str| -> Option<Vec<String>> {
        let schema = crate::schema::arrow_schema_from_avro_text(text, "commit metadata").ok()?;
        let names = schema.fields().iter().map(|f| f.name());
        Some(
            names
                .filter(|n| !crate::schema::is_meta_column(n))
                .cloned()
                .collect(),
        )
    };
    let ours = columns(schema);
    // A column of theirs that ours lacks would leave the table's schema with this commit.
    let would_drop = |theirs: &str| match (columns(theirs), &ours) {
        (Some(theirs), Some(ours)) => theirs.iter().any(|c| !ours.contains(c)),
        _ => false,
    };
    for ((t, a, path), m) in since.iter().zip(&metadata) {
        if m.schema().is_some_and(would_drop) {
            return Err(conflict(
                path.clone(),
                format!(
                    "write conflict: instant {t} ({a}) completed while this write ran and \
                     added columns this write's schema lacks"
                ),
            ));
        }
        let theirs = m
            .write_stats()
            .filter_map(|(p, s)| Some((p, s.file_id.as_deref()?)))
            .chain(m.replaced_file_ids());
        // Bucket-index file groups are the same group when their bucket is (Java's
        // `BucketIndexConcurrentFileWritesConflictResolutionStrategy`): two writers may each
        // start a bucket with its own file id.
        let bucket = crate::write::bucket::bucket_of_file_id;
        let same = |p: &str, id: &str| {
            touched.iter().any(|(tp, tid)| {
                tp == p && (tid == id || bucket(tid).is_some_and(|b| bucket(id) == Some(b)))
            })
        };
        for (partition, file_id) in theirs {
            if same(partition, file_id) {
                return Err(conflict(
                    path.clone(),
                    format!(
                        "write conflict: instant {t} ({a}) completed while this write ran and \
                         changed file group {file_id} in partition {partition:?}, which this \
                         write changes too"
                    ),
                ));
            }
        }
    }
    Ok(())
}

async fn commit_metadata(storage: &dyn Storage, path: &str) -> Result<CommitMetadata> {
    let bytes = storage.get(path, Purpose::CommitMetadata).await?;
    CommitMetadata::from_json(decode_instant_file(&bytes, path)?, path)
}

/// Failed writes rolled back, the live spared: every pending write whose heartbeat expired
/// (Java's LAZY failed-writes policy), with its heartbeat, and expired heartbeats no pending
/// instant owns. The caller holds the table lock when several writers may run.
pub(crate) async fn roll_back_dead_writes(
    table: &Ctx<'_>,
    config: &LockConfig,
) -> Result<Vec<rollback::RolledBack>> {
    let client = table.client;
    let storage: &dyn Storage = client.storage().as_ref();
    let (mut objects, beats) =
        futures::future::try_join(pending::list_timeline(client), heartbeats(storage)).await?;
    let now = files::now_ms();
    let dead = |listing: &Listing| {
        (listing.pending_instants().into_iter())
            .any(|(t, _)| heartbeat_expired(&beats, &t, now, config))
    };
    if dead(&Listing::of_timeline(client.config(), &objects)) {
        objects = pending::confirm_failed(client, objects).await?;
    }
    if client.refresh_timeline(&objects) {
        table.metadata.clear();
    }
    let mut listing = Listing::of_timeline(client.config(), &objects);
    let pending: HashSet<String> = listing
        .pending_instants()
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    listing.spare_writes(|t| heartbeat_expired(&beats, t, now, config));
    let rolled_back = rollback::rollback_listed(client, listing).await?;
    for r in &rolled_back {
        let _ = storage.delete(&heartbeat_path(&r.instant)).await;
    }
    // Heartbeats a dead writer left with no pending instant: it died after taking
    // its instant time but before requesting it, or after committing but before
    // deleting the heartbeat. Expired, they belong to no live write.
    for t in beats.keys().filter(|t| !pending.contains(*t)) {
        if heartbeat_expired(&beats, t, now, config) {
            let _ = storage.delete(&heartbeat_path(t)).await;
        }
    }
    if !rolled_back.is_empty() {
        client.reload_timeline().await?;
        table.metadata.clear();
    }
    Ok(rolled_back)
}

/// One optimistic attempt (the caller retries on `CONFLICT`).
pub(crate) async fn write(
    table: &Ctx<'_>,
    batches: &[RecordBatch],
    options: &WriteConfig,
    config: &LockConfig,
) -> Result<WriteResult> {
    check_writable(table)?;
    let client = table.client;
    let storage: &dyn Storage = client.storage().as_ref();
    let started = client.io();
    let lock = TableLock::new(storage, config.clone())?;

    // Under the lock: the timeline as it is, dead writes rolled back, the metadata table
    // compacted when due, the instant time taken and its heartbeat started (before its
    // requested file, so no other writer ever sees the instant without a live heartbeat).
    let (instant, rolled_back, compaction) = lock
        .run(async {
            let rolled_back = roll_back_dead_writes(table, config).await?;
            let compaction = mdt_compaction::compact_if_due(table, options).await?;
            if compaction.is_some() {
                table.metadata.clear();
            }
            let instant = publish::new_instant(table).await?;
            beat(storage, &instant).await?;
            Ok((instant, rolled_back, compaction))
        })
        .await?;

    let outcome = with_heartbeat(storage, &instant, config, async {
        let started = StartedFrom::of(table);
        let mut prepared = prepare(table, batches, options, Some(instant.clone())).await?;
        let staged = match commit_prepared(
            table,
            options,
            &mut prepared,
            Vec::new(),
            publish::Committer::Optimistic,
        )
        .await
        {
            Ok(s) => s,
            Err(e) => {
                prepared.requested.withdraw(storage).await;
                return Err(e);
            }
        };
        let (mut counts, mut outcome) = staged;
        let Some(staged) = outcome.staged.take() else {
            return Ok((counts, outcome)); // nothing to commit (deletes of absent keys)
        };
        // Under the lock: conflicts, then the commit point.
        let completion = lock
            .run(async {
                let mdt_listing = async {
                    if client.config().metadata_partitions.is_empty() {
                        return Ok(Vec::new());
                    }
                    storage
                        .list(&join(METADATA_DIR, ".hoodie/timeline"), false)
                        .await
                };
                let (objects, mdt_objects) =
                    futures::future::try_join(pending::list_timeline(client), mdt_listing).await?;
                let listing = Listing::of_timeline(client.config(), &objects);
                if !listing
                    .pending_instants()
                    .iter()
                    .any(|(t, _)| *t == instant)
                {
                    return Err(conflict(
                        instant.clone(),
                        format!(
                            "instant {instant} was rolled back by another writer while this \
                             write ran (its heartbeat had expired)"
                        ),
                    ));
                }
                if let Err(e) = check_conflicts(
                    storage,
                    &listing,
                    &started,
                    &staged.touched,
                    (&instant, &prepared.avro_schema),
                )
                .await
                {
                    // Our attempt goes now, under the same lock.
                    let mut ours = listing;
                    ours.spare_writes(|t| t == instant);
                    rollback::rollback_listed(client, ours).await?;
                    return Err(e);
                }
                test_pause_in_commit().await;
                if !lock.holds(CLOCK_DRIFT_BUFFER_MS) {
                    return Err(conflict(
                        super::lock::LOCK_FILE,
                        "the table lock's lease ran out before the commit point (this writer \
                         was paused or too slow); nothing was committed"
                            .into(),
                    ));
                }
                let mut seen = listing.all_times();
                seen.extend(
                    Listing::of_timeline_dir(&join(METADATA_DIR, ".hoodie/timeline"), &mdt_objects)
                        .all_times(),
                );
                // The lease is renewed (a conditional PUT) as late as it can be: a lock file
                // another writer rewrote meanwhile, breaking the protocol, fails it, and the
                // commit point is not reached.
                let still_held = async {
                    match lock.renew().await? {
                        true => Ok(()),
                        false => Err(conflict(
                            super::lock::LOCK_FILE,
                            "the table lock file was rewritten by another writer while this \
                             one held it; nothing was committed"
                                .into(),
                        )),
                    }
                };
                publish::complete_checked(table, &staged, &seen, still_held).await
            })
            .await?;
        outcome.completion_time = completion;
        counts.deduplicated = prepared.rows.deduplicated;
        Ok((counts, outcome))
    })
    .await;
    // The heartbeat ends with the write, committed or not: a failed attempt left pending is
    // then at once a failed write for the next writer to roll back.
    let _ = storage.delete(&heartbeat_path(&instant)).await;
    let io = client.io().since(&started);
    Ok(super::write_result(
        options,
        outcome?,
        (compaction, rolled_back),
        io,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeats_expire_after_interval_times_misses() {
        let config = LockConfig::default(); // 60 s × 2
        let beats: HashMap<String, Option<i64>> =
            [("1".to_string(), Some(1_000_000)), ("2".to_string(), None)].into();
        assert!(!heartbeat_expired(
            &beats,
            "1",
            1_000_000 + 120_000,
            &config
        ));
        assert!(heartbeat_expired(&beats, "1", 1_000_000 + 120_001, &config));
        // No heartbeat at all: failed (Java reads its last beat as 0).
        assert!(heartbeat_expired(&beats, "3", 0, &config));
        // A store without modification times proves nothing: spared.
        assert!(!heartbeat_expired(&beats, "2", i64::MAX, &config));
    }
}
