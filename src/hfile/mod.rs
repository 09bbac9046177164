//! HBase HFile v3 reader, as Hudi writes it for the metadata table (docs/hudi-format.md §7).
//!
//! Both writers Hudi uses are read: HBase's (Hudi 0.x/1.0: CRC32C checksums, full KeyValue
//! index keys, possibly multi-level indexes) and Hudi 1.1's own (NULL checksums, row-only
//! index keys). Payloads may be uncompressed or GZ; other codecs are `Unsupported`.
//! CRC32 and CRC32C checksums are checked but, as in Hudi's own reader, never fail a read:
//! [`HFileReader::checksums`] says what they said (hudi-rs 0.6 declares CRC32C and stores
//! zeros). Damage is caught by block magic, sizes, decompression and key order.
//!
//! Sans-IO: [`HFileReader::open`] reads through [`crate::storage::Storage`] and
//! [`HFileReader::from_bytes`] reads an HFile already in memory (an MDT log block). Keys are
//! returned as the row bytes (the MDT record key), values as zero-copy [`bytes::Bytes`].

mod block;
mod bytes_reader;
mod checksum;
mod data;
mod file_info;
mod gzip;
mod index;
mod proto;
mod reader;
mod trailer;
pub mod writer;
#[cfg(test)]
mod writer_tests;

#[cfg(test)]
mod hudi_multilevel_tests;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;

pub use block::Codec;
pub use checksum::ChecksumReport;
pub use data::Cell;
pub use file_info::FileInfo;
pub use reader::{BlockRun, HFileReader, OpenOptions};
pub use trailer::{Trailer, TRAILER_SIZE};
pub use writer::{write_hfile, write_hfile_with, ChecksumKind, HFileWriteOptions, HFileWriter};
