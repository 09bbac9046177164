//! The metadata table (`.hoodie/metadata`): files, column_stats, partition_stats,
//! record_index and secondary indexes (docs: hudi-format §8).
//!
//! [`keys`] computes record keys and their file groups, [`records`] decodes the Avro values
//! stored in MDT HFiles (base files and log blocks) into typed records, and [`merge`]
//! combines the versions of one key in commit order.

pub mod keys;
pub mod merge;
pub mod records;

#[cfg(test)]
mod tests;

pub use records::{
    BloomFilterEntry, ColumnStats, FilesEntry, MetadataPayload, MetadataRecord, RecordDecoder,
    RecordIndexEntry, SecondaryIndexEntry, StatValue,
};
