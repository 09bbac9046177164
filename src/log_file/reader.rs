//! Reading a log file's blocks over [`Storage`]: small files in one request, large files by
//! ranged reads of the block framing, with contents left in storage until asked for.

use std::ops::Range;

use super::block::{BlockType, LogBlock};
use super::format::{Scanner, Step};
use crate::error::Result;
use crate::storage::ranged::read_exact_one;
use crate::storage::{Purpose, Storage, StorageExt};

/// How [`read_log_file_with`] fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogReadOptions {
    /// Files up to this size are fetched whole, in one request.
    pub whole_file_threshold: u64,
    /// Minimum size of each ranged read when walking a larger file; a block header (with its
    /// schema) and the next block's framing usually fit in one.
    pub read_ahead: u64,
    /// What the reads are counted as (log files also hold the archived timeline and the
    /// metadata table's records).
    pub purpose: Purpose,
}

impl Default for LogReadOptions {
    fn default() -> Self {
        LogReadOptions {
            whole_file_threshold: 8 << 20,
            read_ahead: 64 << 10,
            purpose: Purpose::LogBlock,
        }
    }
}

/// The blocks of one log file, in file order.
#[derive(Debug, Clone)]
pub struct LogFileBlocks {
    pub path: String,
    pub size: u64,
    pub blocks: Vec<LogBlock>,
}

impl LogFileBlocks {
    pub fn corrupt_block_count(&self) -> usize {
        self.blocks.iter().filter(|b| b.is_corrupt()).count()
    }

    /// Blocks that are not corrupt (readers skip corrupt ones, docs/hudi-format.md §6.4).
    pub fn valid_blocks(&self) -> impl Iterator<Item = &LogBlock> {
        self.blocks.iter().filter(|b| !b.is_corrupt())
    }

    pub fn of_type(&self, t: BlockType) -> impl Iterator<Item = &LogBlock> {
        self.blocks.iter().filter(move |b| b.block_type == t)
    }
}

/// Reads the block structure of `path`: one request for files up to 8 MiB; larger files are
/// walked with ranged reads (about one per block) and their big contents stay in storage
/// until [`LogBlock::content`] asks. Without `size` (from a listing) the first request asks
/// for 8 MiB + 1 bytes, and a file that fills it costs a `head` more.
///
/// [`LogBlock::content`]: super::LogBlock::content
pub async fn read_log_file(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
) -> Result<LogFileBlocks> {
    read_log_file_with(storage, path, size, LogReadOptions::default()).await
}

pub async fn read_log_file_with(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
    opts: LogReadOptions,
) -> Result<LogFileBlocks> {
    let mut scanner = open(storage, path, size, &opts).await?;
    let mut blocks = Vec::new();
    loop {
        match scanner.next_step()? {
            Step::Block(b) => blocks.push(b),
            Step::End => break,
            Step::Need(r) => {
                let r = widen(r, opts.read_ahead, scanner.size());
                let bytes = read_exact_one(storage, path, r.clone(), opts.purpose).await?;
                scanner.feed(r.start, bytes);
            }
        }
    }
    Ok(LogFileBlocks {
        path: path.to_string(),
        size: scanner.size(),
        blocks,
    })
}

/// A scanner primed with the whole file when it is small, or knowing the size when it is not.
async fn open(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
    opts: &LogReadOptions,
) -> Result<Scanner> {
    let threshold = opts.whole_file_threshold;
    let (size, first) = match size {
        Some(s) if s <= threshold => {
            let all = storage.get(path, opts.purpose).await?;
            (all.len() as u64, Some(all))
        }
        Some(s) => (s, None),
        None => {
            // One request answers for small files; a full window means "large".
            let head = storage
                .get_range(path, 0..threshold + 1, opts.purpose)
                .await?;
            if head.len() as u64 <= threshold {
                (head.len() as u64, Some(head))
            } else {
                (storage.head(path).await?.size, Some(head))
            }
        }
    };
    let mut scanner = Scanner::new(path, size);
    if let Some(bytes) = first {
        scanner.feed(0, bytes);
    }
    Ok(scanner)
}

fn widen(r: Range<u64>, read_ahead: u64, size: u64) -> Range<u64> {
    r.start..r.end.max(r.start + read_ahead).min(size)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::avro::binary::write_bytes;
    use crate::log_file::delete::DeleteRecord;
    use crate::log_file::test_util::block_on;
    use crate::log_file::writer::{avro_data_block, delete_block};
    use crate::storage::memory::MemoryStorage;
    use crate::storage::Instrumented;
    use crate::value::Value;

    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[{"name":"k","type":"string"}]}"#;

    fn big_block(instant: &str, rows: usize) -> Vec<u8> {
        let datums: Vec<Vec<u8>> = (0..rows)
            .map(|i| {
                let mut d = Vec::new();
                write_bytes(&mut d, format!("key-{i:010}-{}", "x".repeat(40)).as_bytes());
                d
            })
            .collect();
        avro_data_block(instant, SCHEMA, datums.iter().map(Vec::as_slice)).unwrap()
    }

    #[test]
    fn large_files_leave_big_contents_in_storage() {
        let del = DeleteRecord {
            record_key: Some("key-0000000001".into()),
            partition_path: None,
            ordering: Value::Null,
        };
        let file = [
            big_block("001", 5_000),
            big_block("002", 5_000),
            delete_block("003", None, &[del]).unwrap(),
        ]
        .concat();
        let memory = Arc::new(MemoryStorage::new());
        memory.insert("big.log", file.clone(), None);
        let storage = Instrumented::new(memory);
        let opts = LogReadOptions {
            whole_file_threshold: 64 << 10,
            ..Default::default()
        };
        let before = storage.stats().snapshot();
        let read = block_on(read_log_file_with(
            &storage,
            "big.log",
            Some(file.len() as u64),
            opts,
        ));
        let read = read.unwrap();
        let cost = storage.stats().snapshot().since(&before);
        // Header of block 1; its tail with block 2's header; block 2's tail with block 3.
        assert_eq!(cost.requests, 3);
        assert!(
            cost.bytes < 200 << 10,
            "read {} bytes of {}",
            cost.bytes,
            file.len()
        );
        let types: Vec<_> = read.blocks.iter().map(|b| b.block_type).collect();
        assert_eq!(
            types,
            [BlockType::AvroData, BlockType::AvroData, BlockType::Delete]
        );
        assert!(read.blocks[0].loaded_content().is_none());
        assert!(read.blocks[2].loaded_content().is_some());

        let batch = block_on(read.blocks[1].avro_batch(&storage, None)).unwrap();
        assert_eq!(batch.num_rows(), 5_000);
        let deletes = block_on(read.blocks[2].delete_records(&storage)).unwrap();
        assert_eq!(deletes[0].record_key.as_deref(), Some("key-0000000001"));
    }

    #[test]
    fn a_listed_size_larger_than_the_object_is_an_error() {
        let storage = MemoryStorage::new();
        storage.insert("f.log", big_block("001", 10), None);
        let opts = LogReadOptions {
            whole_file_threshold: 0,
            read_ahead: 16,
            ..Default::default()
        };
        let err = block_on(read_log_file_with(&storage, "f.log", Some(1 << 20), opts)).unwrap_err();
        assert_eq!((err.code(), err.object()), ("CORRUPT", Some("f.log")));
    }
}
