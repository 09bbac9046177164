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

/// A table service that failed after the write it followed had committed: the write stands
/// (reported as committed), the service's next run picks up where this one stopped.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceError {
    pub service: &'static str,
    pub code: &'static str,
    pub message: String,
}

/// The services Java runs after a commit (`mayBeCleanAndArchive`), in its order: the clean
/// (`hoodie.clean.automatic`; the metadata table's own clean when due, as Java's metadata
/// writer runs it).
pub(crate) async fn after_commit(table: &Ctx<'_>, options: &WriteConfig, result: &mut WriteResult) {
    let before = table.client.io();
    let clean = &options.clean;
    match clean::run(table, clean, &options.concurrency, clean.automatic).await {
        Ok(done) => result.clean = done,
        Err(e) => result.service_errors.push(ServiceError {
            service: "clean",
            code: e.code(),
            message: e.to_string(),
        }),
    }
    result.services_io = table.client.io().since(&before);
}
