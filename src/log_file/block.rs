//! One log block: its type, header/footer metadata and where its content sits (docs:
//! docs/hudi-format.md §5.1–5.4). Content is either a zero-copy slice of bytes already fetched or a
//! byte range still in storage.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Result;
use crate::storage::ranged::read_exact_one;
use crate::storage::{Purpose, Storage};

/// Block type ordinals as written on disk (Java `HoodieLogBlockType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BlockType {
    Command,
    Delete,
    /// Never written; the reader's placeholder for damaged bytes.
    Corrupt,
    AvroData,
    HFileData,
    ParquetData,
    CdcData,
}

impl BlockType {
    pub fn from_ordinal(ordinal: i32) -> Option<BlockType> {
        Some(match ordinal {
            0 => BlockType::Command,
            1 => BlockType::Delete,
            2 => BlockType::Corrupt,
            3 => BlockType::AvroData,
            4 => BlockType::HFileData,
            5 => BlockType::ParquetData,
            6 => BlockType::CdcData,
            _ => return None,
        })
    }

    pub fn ordinal(self) -> i32 {
        self as i32
    }

    /// The Java enum constant (`HoodieLogBlockType`), as Hudi's own tools name the type.
    pub fn java_name(self) -> &'static str {
        match self {
            BlockType::Command => "COMMAND_BLOCK",
            BlockType::Delete => "DELETE_BLOCK",
            BlockType::Corrupt => "CORRUPT_BLOCK",
            BlockType::AvroData => "AVRO_DATA_BLOCK",
            BlockType::HFileData => "HFILE_DATA_BLOCK",
            BlockType::ParquetData => "PARQUET_DATA_BLOCK",
            BlockType::CdcData => "CDC_DATA_BLOCK",
        }
    }

    /// Data and delete blocks carry records; command and corrupt blocks do not.
    pub fn is_data(self) -> bool {
        matches!(
            self,
            BlockType::AvroData
                | BlockType::HFileData
                | BlockType::ParquetData
                | BlockType::CdcData
        )
    }
}

/// Header/footer keys (Java `HeaderMetadataType`); the ordinal is what is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum HeaderKey {
    InstantTime,
    TargetInstantTime,
    Schema,
    CommandBlockType,
    CompactedBlockTimes,
    RecordPositions,
    BlockIdentifier,
    IsPartial,
    BaseFileInstantTimeOfRecordPositions,
}

impl HeaderKey {
    pub const ALL: [HeaderKey; 9] = [
        HeaderKey::InstantTime,
        HeaderKey::TargetInstantTime,
        HeaderKey::Schema,
        HeaderKey::CommandBlockType,
        HeaderKey::CompactedBlockTimes,
        HeaderKey::RecordPositions,
        HeaderKey::BlockIdentifier,
        HeaderKey::IsPartial,
        HeaderKey::BaseFileInstantTimeOfRecordPositions,
    ];

    pub fn from_ordinal(ordinal: i32) -> Option<HeaderKey> {
        usize::try_from(ordinal)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    pub fn ordinal(self) -> i32 {
        self as i32
    }
}

/// A header or footer map. Keeps the on-disk entry order (Java iterates a `HashMap`, so the
/// order varies between files; a byte-exact rewrite needs it). A repeated key: the last wins.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct BlockMetadata {
    entries: Vec<(HeaderKey, String)>,
}

impl BlockMetadata {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, key: HeaderKey, value: impl Into<String>) -> Self {
        self.insert(key, value);
        self
    }

    /// Appends an entry, or replaces the value of an existing key in place.
    pub fn insert(&mut self, key: HeaderKey, value: impl Into<String>) {
        let value = value.into();
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    pub fn get(&self, key: HeaderKey) -> Option<&str> {
        self.entries
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn entries(&self) -> &[(HeaderKey, String)] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Commands a command block can carry (Java `HoodieCommandBlockTypeEnum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CommandType {
    Rollback,
}

/// One block of a log file, in file order.
#[derive(Debug, Clone)]
pub struct LogBlock {
    pub block_type: BlockType,
    /// Offset of the block's `#HUDI#` magic in the file.
    pub offset: u64,
    /// Bytes the block occupies, magic and trailing length included. For a corrupt block:
    /// from its magic up to the next `#HUDI#` or the end of the file.
    pub len: u64,
    pub header: BlockMetadata,
    pub footer: BlockMetadata,
    /// Content position in the file (for a corrupt block: the bytes after its magic).
    pub content_range: Range<u64>,
    /// The content, when it was fetched together with the framing.
    pub(crate) content: Option<Bytes>,
    pub(crate) path: Arc<str>,
}

impl LogBlock {
    pub fn is_corrupt(&self) -> bool {
        self.block_type == BlockType::Corrupt
    }

    /// The log file the block belongs to.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The content when it was fetched with the block framing (no I/O needed).
    pub fn loaded_content(&self) -> Option<&Bytes> {
        self.content.as_ref()
    }

    /// The content bytes; fetches them with one ranged read when they were not loaded.
    pub async fn content(&self, storage: &dyn Storage) -> Result<Bytes> {
        if let Some(b) = &self.content {
            return Ok(b.clone());
        }
        let range = self.content_range.clone();
        read_exact_one(storage, &self.path, range, Purpose::LogBlock).await
    }

    /// `INSTANT_TIME`: the write (or rollback) that produced the block.
    pub fn instant_time(&self) -> Option<&str> {
        self.header.get(HeaderKey::InstantTime)
    }

    /// `TARGET_INSTANT_TIME`: the instant a rollback command voids.
    pub fn target_instant_time(&self) -> Option<&str> {
        self.header.get(HeaderKey::TargetInstantTime)
    }

    /// Writer schema (Avro JSON, meta fields included).
    pub fn schema(&self) -> Option<&str> {
        self.header.get(HeaderKey::Schema)
    }

    /// `COMMAND_BLOCK_TYPE` decoded; `None` when absent or not a known command.
    pub fn command_type(&self) -> Option<CommandType> {
        match self.header.get(HeaderKey::CommandBlockType)?.trim() {
            "0" => Some(CommandType::Rollback),
            _ => None,
        }
    }

    /// The instant a rollback command block voids.
    pub fn rollback_target(&self) -> Option<&str> {
        (self.block_type == BlockType::Command
            && self.command_type() == Some(CommandType::Rollback))
        .then(|| self.target_instant_time())
        .flatten()
    }

    /// `COMPACTED_BLOCK_TIMES`: instants a log-compaction block replaces.
    pub fn compacted_block_times(&self) -> Vec<&str> {
        self.header
            .get(HeaderKey::CompactedBlockTimes)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `IS_PARTIAL`: the block holds partial updates (its schema is a subset).
    pub fn is_partial(&self) -> bool {
        self.header
            .get(HeaderKey::IsPartial)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// `RECORD_POSITIONS`: Base64 of a portable Roaring64NavigableMap, undecoded.
    pub fn record_positions(&self) -> Option<&str> {
        self.header.get(HeaderKey::RecordPositions)
    }

    pub fn base_file_instant_time_of_record_positions(&self) -> Option<&str> {
        self.header
            .get(HeaderKey::BaseFileInstantTimeOfRecordPositions)
    }

    pub fn block_identifier(&self) -> Option<&str> {
        self.header.get(HeaderKey::BlockIdentifier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_round_trip() {
        for i in 0..7 {
            assert_eq!(BlockType::from_ordinal(i).unwrap().ordinal(), i);
        }
        assert_eq!(BlockType::from_ordinal(7), None);
        assert_eq!(BlockType::from_ordinal(-1), None);
        for i in 0..9 {
            assert_eq!(HeaderKey::from_ordinal(i).unwrap().ordinal(), i);
        }
        assert_eq!(HeaderKey::from_ordinal(9), None);
    }

    #[test]
    fn metadata_keeps_order_and_last_value_wins() {
        let mut m = BlockMetadata::new()
            .with(HeaderKey::Schema, "s")
            .with(HeaderKey::InstantTime, "1");
        m.insert(HeaderKey::Schema, "t");
        assert_eq!(m.entries()[0], (HeaderKey::Schema, "t".to_string()));
        assert_eq!(m.get(HeaderKey::InstantTime), Some("1"));
        assert_eq!(m.get(HeaderKey::IsPartial), None);
    }
}
