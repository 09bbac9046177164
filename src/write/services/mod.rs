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
//! - [`compaction`]: Merge-On-Read compaction of the data table, after a write or on request.

pub mod archive;
pub mod compaction;
pub mod mdt_compaction;
pub mod mdt_init;
pub mod rollback;

use serde::Serialize;

use super::{Ctx, WriteConfig, WriteResult};

/// The table services a write ran after its commit point.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AfterCommit {
    /// Timeline archival (`hoodie.archive.automatic`), when it moved anything or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archival: Option<archive::Archival>,
    /// Merge-On-Read compaction (`hoodie.compact.inline`, `hoodie.compact.schedule.inline`),
    /// when a plan was pending or due.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<compaction::CompactionReport>,
}

/// The table services a write runs once committed, in Java's post-commit order (cleaning
/// and archival, then inline compaction). A service that fails is reported in the result
/// (its report's `error`), not raised: the write is committed, and the next run finishes
/// what was cut short.
pub(crate) async fn after_commit(table: &Ctx<'_>, options: &WriteConfig, result: &mut WriteResult) {
    if result.instant.is_empty() {
        return; // nothing was committed
    }
    result.services.archival =
        archive::after_commit(table, &options.archival, &options.concurrency).await;
    result.services.compaction = compaction::inline(table, options).await;
}
