//! Table services: work that keeps a table healthy rather than adding rows, run by writers
//! before or after their commit as Java's write client runs them, or on request. Each is a
//! peer of the data write: it plans from the same timeline listing ([`super::pending`]),
//! builds files with the same builders and publishes through the same committer
//! ([`super::publish`]), and is crash-safe at every request the same way.
//!
//! - [`rollback`]: failed writes undone (Hudi's EAGER and LAZY failed-writes policies);
//! - [`mdt_compaction`]: the metadata table's compaction, when its delta commits are due;
//! - [`mdt_init`]: metadata-table partitions built on a table that lacks them;
//! - [`archive`]: both timelines' old instants moved to their LSM histories.

pub mod archive;
pub mod mdt_compaction;
pub mod mdt_init;
pub mod rollback;

use serde::Serialize;

use super::{Ctx, WriteConfig, WriteResult};

/// A table service that failed after the write it followed had committed: the write stands
/// (reported as committed), the service's next run picks up where this one stopped.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceError {
    pub service: &'static str,
    pub code: &'static str,
    pub message: String,
}

/// The services Java runs after a commit (`mayBeCleanAndArchive`), in its order.
pub(crate) async fn after_commit(table: &Ctx<'_>, options: &WriteConfig, result: &mut WriteResult) {
    match archive::after_commit(table, &options.archival, &options.concurrency).await {
        Ok(done) => result.archival = done,
        Err(e) => result.service_errors.push(ServiceError {
            service: "archive",
            code: e.code(),
            message: e.to_string(),
        }),
    }
}
