//! The metadata table (`.hoodie/metadata`): files, column_stats, partition_stats,
//! record_index and secondary indexes (docs: hudi-format §8).
//!
//! [`keys`] computes record keys and their file groups, [`records`] decodes the Avro values
//! stored in MDT HFiles (base files and log blocks) into typed records, and [`merge`]
//! combines the versions of one key in commit order. [`table::MetadataTable`] reads the
//! metadata table as a Hudi table of its own (timeline, valid instants, sharded file
//! groups, base HFile + log blocks) and answers key, prefix and full lookups;
//! [`skipping`] turns its indexes into pruning decisions, with [`stats`] converting
//! statistics to typed Arrow arrays.

pub mod keys;
mod log_blocks;
pub mod merge;
pub mod records;
pub mod skipping;
pub mod stats;
pub mod table;

#[cfg(test)]
mod damage_tests;
#[cfg(test)]
mod tests;

pub use records::{
    BloomFilterEntry, ColumnStats, FilesEntry, MetadataPayload, MetadataRecord, RecordDecoder,
    RecordIndexEntry, SecondaryIndexEntry, StatValue,
};
pub use skipping::Verdicts;
pub use table::{Lookup, MetadataTable, Records};
