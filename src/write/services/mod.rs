//! Table services: work that keeps a table healthy rather than adding rows, run by writers
//! before or after their commit as Java's write client runs them, or on request. Each is a
//! peer of the data write: it plans from the same timeline listing ([`super::pending`]),
//! builds files with the same builders and publishes through the same committer
//! ([`super::publish`]), and is crash-safe at every request the same way.
//!
//! - [`rollback`]: failed writes undone (Hudi's EAGER and LAZY failed-writes policies);
//! - [`mdt_compaction`]: the metadata table's compaction, when its delta commits are due;
//! - [`mdt_init`]: metadata-table partitions built on a table that lacks them.

pub mod mdt_compaction;
pub mod mdt_init;
pub mod rollback;
