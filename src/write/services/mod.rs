//! Table services: work that keeps a table healthy rather than adding rows, run by writers
//! before or after their commit as Java's write client runs them, or on request. Each is a
//! peer of the data write: it plans from the same timeline listing ([`super::pending`]),
//! builds files with the same builders and publishes through the same committer
//! ([`super::publish`]), and is crash-safe at every request the same way.
//!
//! - [`rollback`]: failed writes undone (Hudi's EAGER and LAZY failed-writes policies);
//! - [`mdt_compaction`]: the metadata table's compaction, when its delta commits are due;
//! - [`mdt_init`]: metadata-table partitions built on a table that lacks them;
//! - [`archive`]: both timelines' old instants moved to their LSM histories;
//! - [`clean`]: old file slices deleted, of the data table and of the metadata table;
//! - [`compaction`]: Merge-On-Read compaction of the data table, after a write or on request;
//! - [`clustering`]: small file groups rewritten into new ones, after a write or on request.

pub mod archive;
pub mod clean;
pub mod clustering;
pub mod compaction;
pub mod mdt_compaction;
pub mod mdt_init;
pub mod rollback;

use serde::Serialize;

use super::lock::Concurrency;
use super::{Ctx, WriteConfig, WriteResult};
use crate::error::HudiError;
use crate::storage::IoSnapshot;

/// The table services a write ran after its commit point.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AfterCommit {
    /// Cleans (`hoodie.clean.automatic`): the data table's, and the metadata table's own
    /// when due.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clean: Vec<clean::Clean>,
    /// Timeline archival (`hoodie.archive.automatic`), when it moved anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archival: Option<archive::Archival>,
    /// Merge-On-Read compaction (`hoodie.compact.inline`, `hoodie.compact.schedule.inline`),
    /// when a plan was pending or due.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<compaction::CompactionReport>,
    /// Clustering (`hoodie.clustering.inline`, `hoodie.clustering.schedule.inline`), when a
    /// plan was pending or due.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clustering: Option<clustering::ClusteringReport>,
    /// The metadata table's compaction, run by [`crate::write::services_after_write`] when
    /// a deferring write left it due (a write runs it before itself otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata_compaction: Option<mdt_compaction::MdtCompaction>,
    /// Services that failed (the write itself is committed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ServiceError>,
    /// Their requests: deciding whether each is due, and running it (not in the write's).
    pub io: IoSnapshot,
}

/// A table service that failed after the write it followed had committed: the write stands
/// (reported as committed), the service's next run picks up where this one stopped.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceError {
    pub service: &'static str,
    pub code: &'static str,
    pub message: String,
}

impl ServiceError {
    pub(crate) fn of(service: &'static str, e: &HudiError) -> ServiceError {
        ServiceError {
            service,
            code: e.code(),
            message: e.to_string(),
        }
    }
}

/// The table services a write runs once committed, in Java's post-commit order
/// (`mayBeCleanAndArchive`, then inline compaction, then inline clustering). A service that fails is reported, not
/// raised: the write is committed, and the next run finishes what was cut short.
pub(crate) async fn after_commit(table: &Ctx<'_>, options: &WriteConfig, result: &mut WriteResult) {
    if result.instant.is_empty() {
        return; // nothing was committed
    }
    let (done, rolled_back) = run_after_commit(table, options).await;
    result.services = done;
    result.rolled_back.extend(rolled_back);
}

/// [`after_commit`]'s services, and the failed writes its clean rolled back first.
pub(crate) async fn run_after_commit(
    table: &Ctx<'_>,
    options: &WriteConfig,
) -> (AfterCommit, Vec<rollback::RolledBack>) {
    let before = table.client.io();
    let mut done = AfterCommit::default();
    let mut rolled_back = Vec::new();
    let clean = &options.clean;
    // A single writer under LAZY leaves failed writes to its automatic cleaner (Java's
    // clean rolls them back first); several writers roll dead ones back as each write starts.
    if clean.automatic && options.lazy_rollback && options.concurrency == Concurrency::SingleWriter
    {
        match clean::roll_back_failed_writes(table, &options.concurrency).await {
            Ok(rolled) => rolled_back = rolled,
            Err(e) => done.errors.push(ServiceError::of("rollback", &e)),
        }
    }
    match clean::run(table, clean, &options.concurrency, clean.automatic).await {
        Ok(cleans) => done.clean = cleans,
        Err(e) => done.errors.push(ServiceError::of("clean", &e)),
    }
    match archive::after_commit(table, &options.archival, &options.concurrency).await {
        Ok(archived) => done.archival = archived,
        Err(e) => done.errors.push(ServiceError::of("archive", &e)),
    }
    match compaction::inline(table, options).await {
        Ok(compacted) => done.compaction = compacted,
        Err(e) => done.errors.push(ServiceError::of("compaction", &e)),
    }
    match clustering::inline(table, options).await {
        Ok(clustered) => done.clustering = clustered,
        Err(e) => done.errors.push(ServiceError::of("clustering", &e)),
    }
    done.io = table.client.io().since(&before);
    (done, rolled_back)
}
