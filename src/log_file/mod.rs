//! The Hudi log format: `#HUDI#`-framed blocks (docs/hudi-format.md §5).
//!
//! * [`mod@format`] walks the block framing sans-IO and recovers from damage the way Java's
//!   `HoodieLogFileReader` does (CORRUPT blocks); [`read_log_file`] drives it over
//!   [`Storage`]: small files in one request, large files by ranged reads with block contents
//!   fetched only when asked for.
//! * [`LogBlock`] exposes the header (instant, rollback target, schema, …) and the content;
//!   [`delete`], [`data`] decode delete, Avro and Parquet block contents (HFile contents go
//!   to [`crate::hfile`]).
//! * [`writer`] serializes blocks byte-for-byte as Java does; [`archive`] reads the v6
//!   archived timeline, which is log files of `HoodieArchivedMetaEntry` records.

pub mod archive;
pub mod block;
pub mod data;
pub mod delete;
pub mod format;
pub mod reader;
pub mod writer;

#[cfg(test)]
mod corruption_tests;
#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
pub(crate) mod test_util;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

pub use block::{BlockMetadata, BlockType, CommandType, HeaderKey, LogBlock};
pub use delete::DeleteRecord;
pub use format::parse_log_bytes;
pub use reader::{read_log_file, read_log_file_with, LogFileBlocks, LogReadOptions};

use crate::error::{HudiError, Result};
use crate::storage::Storage;

impl LogBlock {
    /// Records of a delete block.
    pub async fn delete_records(&self, storage: &dyn Storage) -> Result<Vec<DeleteRecord>> {
        self.expect(&[BlockType::Delete])?;
        delete::decode_delete_block(&self.content(storage).await?, self.path())
    }

    /// Records of an Avro (or CDC) data block as one batch of `target` — the table's current
    /// schema, which may be newer than the block's — or of the block's own schema.
    pub async fn avro_batch(
        &self,
        storage: &dyn Storage,
        target: Option<SchemaRef>,
    ) -> Result<RecordBatch> {
        self.expect(&[BlockType::AvroData, BlockType::CdcData])?;
        let schema = self
            .schema()
            .ok_or_else(|| HudiError::corrupt(self.path(), "Avro data block without a schema"))?;
        data::decode_avro_block(self.content(storage).await?, schema, target, self.path())
    }

    /// Records of a Parquet data block.
    pub async fn parquet_batches(&self, storage: &dyn Storage) -> Result<Vec<RecordBatch>> {
        self.expect(&[BlockType::ParquetData])?;
        data::decode_parquet_block(self.content(storage).await?, self.path())
    }

    fn expect(&self, types: &[BlockType]) -> Result<()> {
        if types.contains(&self.block_type) {
            return Ok(());
        }
        Err(HudiError::invalid(format!(
            "{:?} block at offset {} of {} is not a {types:?} block",
            self.block_type,
            self.offset,
            self.path()
        )))
    }
}
