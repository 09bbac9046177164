//! Table services: work that keeps a table healthy rather than adding rows, run by writers
//! before or after their commit as Java's write client runs them, or on request. Each is a
//! peer of the data write: it plans from the same timeline listing ([`super::pending`]),
//! builds files with the same builders and publishes through the same committer
//! ([`super::publish`]), and is crash-safe at every request the same way.
//!
//! - [`rollback`]: failed writes undone (Hudi's EAGER and LAZY failed-writes policies);
//! - [`mdt_compaction`]: the metadata table's compaction, when its delta commits are due;
//! - [`mdt_init`]: metadata-table partitions built on a table that lacks them;
//! - [`clean`]: old file slices deleted, of the data table and of the metadata table.

pub mod clean;
pub mod mdt_compaction;
pub mod mdt_init;
pub mod rollback;

use serde::Serialize;

use super::{Ctx, WriteConfig, WriteResult};

/// Table services a write ran after its commit.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AfterCommit {
    /// Cleans that ran (the data table's when `hoodie.clean.automatic`, the metadata table's
    /// own when due).
    pub clean: Vec<clean::Clean>,
    /// A service that failed after the commit: the commit stands, and this says why the
    /// service did not finish (the next write or clean finishes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ServiceError>,
}

/// A table service's failure, reported beside the commit it followed.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceError {
    pub service: &'static str,
    pub code: &'static str,
    pub message: String,
}

/// What runs once a write committed, as Java's post-commit `mayBeCleanAndArchive` runs it.
/// A failure here never turns the committed write into an error: it is reported in
/// [`WriteResult::services`].
pub(crate) async fn after_commit(table: &Ctx<'_>, options: &WriteConfig, result: &mut WriteResult) {
    let clean = &options.clean;
    match clean::run(table, clean, &options.concurrency, clean.automatic).await {
        Ok(done) => result.services.clean = done,
        Err(e) => {
            result.services.error = Some(ServiceError {
                service: "clean",
                code: e.code(),
                message: e.to_string(),
            })
        }
    }
}
